/* suggest.h - "did you mean" for unknown names (options, passes, node kinds,
 * attributes): the candidate closest to a misspelt word by edit distance.
 *
 *   struct suggest s;
 *   suggest_init(&s, word, len);
 *   for each candidate: suggest_offer(&s, name, strlen(name));
 *   if (s.best) ... "did you mean '%s'?", s.best
 *
 * The distance is Damerau-Levenshtein (a swap of two neighbours counts as
 * one edit), case-insensitive; a candidate is kept only when the distance is
 * at most a third of the word's length (at least 1), so unrelated names are
 * never suggested. Ties keep the first candidate offered.
 */
#ifndef GLOW_SUPPORT_SUGGEST_H
#define GLOW_SUPPORT_SUGGEST_H

#include <stddef.h>

struct suggest {
	const char *word;
	size_t len;
	const char *best; /* NULL: nothing close enough */
	size_t best_len;
	unsigned best_dist;
};

void suggest_init(struct suggest *s, const char *word, size_t len);
void suggest_offer(struct suggest *s, const char *cand, size_t len);
/* The distance between two strings, capped at limit + 1 (for tests). */
unsigned suggest_distance(const char *a, size_t na, const char *b, size_t nb, unsigned limit);

#endif
