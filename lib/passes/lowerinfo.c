/* lowerinfo.c - the lowered-info map's records of the lowering driver
 * (lowerinfo.h, lowering.c's lower_function). Only the values that take
 * over an output of the lowered node are recorded, not a rule's
 * intermediate values (their names, "<node>.<suffix>", tell where they come
 * from, and no output of the user's graph holds their values), and only
 * when the value is a node the rule made: an existing value a rule reuses
 * (an identity's input) is a value of the user's graph itself.
 */
#include "passes/lowerinfo.h"
#include "graph/lowered.h"

void lower_info_before(struct lower_info *li, struct func *f, struct node *n, struct node *next)
{
	const struct lowered_entry *own = lowered_get(f->mod, n);
	li->origin = own ? own->name : NULL;
	li->origin_res = own ? own->res : 0;
	li->prev = n->prev;
	li->next = next;
	li->nres = n->nres < LOWER_INFO_MAXRES ? n->nres : LOWER_INFO_MAXRES;
	for (unsigned r = 0; r < li->nres; r++)
		li->user[r] = NULL;
	for (const struct use *u = n->uses; u; u = u->next)
		if (u->res < li->nres && !li->user[u->res]) {
			li->user[u->res] = use_user(u);
			li->slot[u->res] = u->idx;
		}
}

/* Whether x lies in the part of f from `from` up to `to` (exclusive). */
static bool li_made(const struct node *from, const struct node *to, const struct node *x)
{
	for (const struct node *c = from; c && c != to; c = c->next)
		if (c == x)
			return true;
	return false;
}

void lower_info_after(const struct lower_info *li, struct func *f, const struct node *n)
{
	struct module *m = f->mod;
	const struct node *from = li->prev ? li->prev->next : f->first;
	for (unsigned r = 0; r < li->nres; r++) {
		const struct node *u = li->user[r];
		if (!u || (u->bits & NODE_ERASED))
			continue;
		struct value v = op_val(u, li->slot[r]);
		if (v.res != 0 || v.node == n || !li_made(from, li->next, v.node))
			continue;
		if (li->origin && r == 0)
			lowered_set(m, v.node, li->origin, li->origin_res);
		else if (n->name)
			lowered_set(m, v.node, n->name, r);
	}
}
