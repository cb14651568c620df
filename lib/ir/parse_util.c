/* parse_util.c - helpers the pieces of the .gir reader share (parse.c,
 * parse_type.c, parse_legacy.c): kept below them all, so that the pieces
 * call down into this file and parse.c calls the pieces, never back.
 */
#include "gir.tab.h"
#include "ir/ir.h"
#include "ir/parse.h"
#include "support/arena.h"
#include "support/hashmap.h"
#include "support/textparse.h"

#include <string.h>

struct loc gir_p_loc_at(const struct gir_parser *p, const char *c) { return tp_loc_at(&p->r, c); }

/* Equal lists share one copy through a small cache of the lists set lately. */
void gir_p_set_ints(struct gir_parser *p, struct ir_instr *in, unsigned idx, const int64_t *v, uint32_t n)
{
	union attr_val *av = &in->attrs[idx];
	if (n == 0) {
		av->ints.v = NULL;
		av->ints.n = 0;
		return;
	}
	uint64_t h = hash_bytes(v, n * sizeof(*v));
	struct gir_ints *c = &p->ints_cache[h % 16];
	if (c->n != n || memcmp(c->v, v, n * sizeof(*v)) != 0) {
		c->v = arena_memdup(&p->m->arena, v, n * sizeof(*v));
		c->n = n;
	}
	av->ints.v = (int64_t *)(uintptr_t)c->v;
	av->ints.n = n;
}
