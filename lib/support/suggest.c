/* suggest.c - see suggest.h. */
#include "suggest.h"

#include <ctype.h>
#include <stdlib.h>

/* longer names are never suggested (and the rows below stay on the stack) */
#define SUGGEST_MAX 128

unsigned suggest_distance(const char *a, size_t na, const char *b, size_t nb, unsigned limit)
{
	if (na > SUGGEST_MAX || nb > SUGGEST_MAX)
		return limit + 1;
	if ((na > nb ? na - nb : nb - na) > limit)
		return limit + 1;
	/* three rows of the dynamic program: i-2, i-1, i */
	unsigned r0[SUGGEST_MAX + 1], r1[SUGGEST_MAX + 1], r2[SUGGEST_MAX + 1];
	unsigned *pp = r0, *prev = r1, *cur = r2;
	for (size_t j = 0; j <= nb; j++)
		prev[j] = (unsigned)j;
	for (size_t i = 1; i <= na; i++) {
		cur[0] = (unsigned)i;
		unsigned rowmin = cur[0];
		int ca = tolower((unsigned char)a[i - 1]);
		for (size_t j = 1; j <= nb; j++) {
			int cb = tolower((unsigned char)b[j - 1]);
			unsigned v = prev[j - 1] + (ca != cb);
			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && pp[j - 2] + 1 < v)
				v = pp[j - 2] + 1;
			cur[j] = v;
			if (v < rowmin)
				rowmin = v;
		}
		if (rowmin > limit)
			return limit + 1;
		unsigned *t = pp;
		pp = prev;
		prev = cur;
		cur = t;
	}
	return prev[nb] > limit ? limit + 1 : prev[nb];
}

void suggest_init(struct suggest *s, const char *word, size_t len)
{
	s->word = word;
	s->len = len;
	s->best = NULL;
	s->best_len = 0;
	unsigned limit = (unsigned)(len / 3);
	s->best_dist = (limit ? limit : 1) + 1; /* anything closer than this */
}

void suggest_offer(struct suggest *s, const char *cand, size_t len)
{
	if (len == s->len) {
		size_t k = 0;
		while (k < len && cand[k] == s->word[k])
			k++;
		if (k == len)
			return; /* the word itself is no suggestion */
	}
	unsigned d = suggest_distance(s->word, s->len, cand, len, s->best_dist - 1);
	if (d < s->best_dist) {
		s->best = cand;
		s->best_len = len;
		s->best_dist = d;
	}
}
