/* parse.h - the pieces of the .gir reader (parse.c) kept in their own
 * files: the name scope (parse_scope.c), TYPE token decoding
 * (parse_type.c) and the legacy spellings (parse_legacy.c). Private to lib/ir; struct gir_parser and struct gir_scope
 * come from the grammar (gir.tab.h). */
#ifndef GLOW_IR_PARSE_H
#define GLOW_IR_PARSE_H

#include "gir.tab.h"
#include "ir/ir.h"

#include <stddef.h>
#include <stdint.h>

/* Helpers of parse_util.c, below every piece. */
/* The location of byte c of the parser's buffer. */
struct loc gir_p_loc_at(const struct gir_parser *p, const char *c);

/* Decodes a TYPE token into an interned type; NULL after reporting. */
const struct type *gir_p_type(struct gir_parser *p, const struct tp_span *sp);

/* Sets integer-list attribute idx of in to a copy of v[0..n) (equal lists
 * set lately share one copy). */
void gir_p_set_ints(struct gir_parser *p, struct ir_instr *in, unsigned idx, const int64_t *v, uint32_t n);

/* ---- the legacy spellings (parse_legacy.c, Legacy.def) ---- */

/* Checks Legacy.def against Instrs.def once; an internal error names a bad
 * row. */
void gir_legacy_check(void);
/* The kind a legacy `written modifier` names (the modifier in p->mod when
 * p->has_mod); -2 when `kind` is no legacy spelling (look it up in
 * Instrs.def), -1 after reporting. */
int gir_legacy_kind(struct gir_parser *p, const struct tp_span *kind, struct loc kloc);
/* Applies the positional list in p->pos to in, marking the attributes it
 * sets in set; false after reporting. */
bool gir_legacy_positional(struct gir_parser *p, struct ir_instr *in, bool *set);

/* Frees the table and empties s. */
void gir_scope_free(struct gir_scope *s);
/* Room for n entries without a rehash. */
void gir_scope_reserve(struct gir_scope *s, size_t n);
/* Adds v (its name hashed to h; not yet in the scope). */
void gir_scope_add(struct gir_scope *s, struct ir_value *v, uint64_t h);
/* The value defined under a name (key, len, hash); NULL if none, or if its
 * definition was erased after an error. */
struct ir_value *gir_scope_find(const struct gir_scope *s, const char *k, size_t len, uint64_t h);

#endif
