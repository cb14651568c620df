/* parse_region.c - the graph IR reader's actions for control-flow regions
 * (grammar/glow.y: regions_opt; docs/GraphIR.md, "Control flow").
 *
 * The statement that owns regions is built first (glow_p_node), with its
 * regions empty; each region's parameters and statements are then read
 * into that region through the builder, as any function body is. A frame
 * per open statement remembers its scope and the region expected next; a
 * statement that failed still has a frame (owner NULL) so its regions are
 * read, into nothing, without cascading errors.
 *
 * Scope: names are unique in a module function and its regions together
 * (one table), so a name found by the ordinary look-up may still be out of
 * scope: a node of a region that has ended (its names go to a set when the
 * region closes) or the owner of an open region (its own result inside
 * itself). Those are the two checks of glow_p_scope_check; everything else
 * a look-up finds is in scope, because the text is read in order.
 */
#include "glow.tab.h"

#include "graph/graph.h"
#include "graph/region.h"
#include "support/util.h"

#include <string.h>

/* The innermost frame, NULL if none is open. */
static struct glow_region_frame *top_frame(struct glow_parser *p)
{
	return p->frames.len ? &p->frames.data[p->frames.len - 1] : NULL;
}

void glow_p_region_begin(struct glow_parser *p, const struct tp_span *kw, struct loc loc)
{
	char w[16];
	snprintf(w, sizeof w, "%.*s", (int)kw->len, kw->s);
	if (!p->frame_pushed) {
		/* a region after a statement whose kind has none */
		if (p->stmt_node)
			glow_p_error(p, loc, "%s has no regions: '%s' is not allowed here",
				     node_kind_name(p->stmt_node->kind), w);
		else if (p->kind >= 0 && p->f)
			glow_p_error(p, loc, "%s has no regions: '%s' is not allowed here", node_kind_name((unsigned)p->kind),
				     w);
		struct glow_region_frame fr = {NULL, -1, p->f, 0, loc};
		vec_push(&p->frames, fr);
		p->frame_pushed = true;
	}
	struct glow_region_frame *fr = top_frame(p);
	struct func *r = NULL;
	if (fr->kind >= 0) {
		const char *want = region_name((unsigned)fr->kind, fr->next);
		const char *kn = node_kind_name((unsigned)fr->kind);
		if (!want)
			glow_p_error(p, loc, "%s has %u region%s; unexpected '%s'", kn,
				     region_count_of_kind((unsigned)fr->kind),
				     region_count_of_kind((unsigned)fr->kind) == 1 ? "" : "s", w);
		else if (strcmp(want, w) != 0)
			glow_p_error(p, loc, "expected region '%s' of %s, got '%s'", want, kn, w);
		else if (fr->owner)
			r = node_region(fr->owner, fr->next);
		fr->kind = want && strcmp(want, w) == 0 ? fr->kind : -1;
		fr->next++;
	}
	p->f = r;
}

void glow_p_region_param(struct glow_parser *p, const struct tp_span *name, struct loc loc, const struct type *t)
{
	if (!p->f)
		return;
	size_t len;
	const char *k = tp_span_key(&p->r, name, &len);
	uint64_t h = hash_bytes(k, len);
	struct node *prev = func_find_hashed(p->f, k, len, h);
	if (prev) {
		char b[80];
		glow_p_error(p, loc, "redefinition of '%s'", tp_span_name(name, '%', b, sizeof b));
		diag_note(p->r.d, prev->loc, "previous definition is here");
		return;
	}
	if (!t) {
		tp_poison(&p->r, &p->lpoison, &p->m->arena, name);
		return;
	}
	const struct type *ty = t;
	struct node *n = node_create_named(p->f, NK_RegionArg, k, len, h, NULL, 0, (struct value){NULL, 0}, &ty, 1, loc);
	/* parameters come first: a statement cannot precede them in the text */
	glow_assert(n && (!n->prev || n->prev->kind == NK_RegionArg));
}

/* The names of region r's nodes (and, already there, of its regions') go
 * out of scope. */
static void close_names(struct glow_parser *p, struct func *r)
{
	for (struct node *n = r->first; n; n = n->next)
		if (n->name) {
			strmap_put(&p->closed, n->name, strlen(n->name), n);
			p->any_closed = true;
		}
}

void glow_p_region_end(struct glow_parser *p)
{
	struct glow_region_frame *fr = top_frame(p);
	glow_assert(fr);
	if (p->f)
		close_names(p, p->f);
	p->f = fr->outer;
	p->frame_pushed = true;
}

void glow_p_regions_end(struct glow_parser *p, bool any)
{
	struct glow_region_frame *fr = top_frame(p);
	glow_assert(fr && p->frame_pushed);
	if (fr->kind >= 0) {
		unsigned want = region_count_of_kind((unsigned)fr->kind);
		const char *kn = node_kind_name((unsigned)fr->kind);
		if (fr->next < want) {
			const char *missing = region_name((unsigned)fr->kind, fr->next);
			if (!any)
				glow_p_error(p, fr->kind_loc, "%s needs its region%s: '%s'%s%s%s", kn, want == 1 ? "" : "s",
					     region_name((unsigned)fr->kind, 0), want > 1 ? " and '" : "",
					     want > 1 ? region_name((unsigned)fr->kind, 1) : "", want > 1 ? "'" : "");
			else
				glow_p_error(p, fr->kind_loc, "%s is missing its '%s' region", kn, missing);
		}
	}
	p->frames.len--;
	p->frame_pushed = false;
	p->stmt_node = fr->owner;
}

bool glow_p_scope_check(struct glow_parser *p, struct node *n, const struct tp_span *name, struct loc loc)
{
	char b[80];
	if (p->any_closed && strmap_get(&p->closed, n->name) == n) {
		glow_p_error(p, loc, "'%s' is out of scope: it is defined in a region that has ended",
			     tp_span_name(name, '%', b, sizeof b));
		diag_note(p->r.d, n->loc, "defined here");
		return false;
	}
	for (size_t i = 0; i < p->frames.len; i++)
		if (p->frames.data[i].owner == n) {
			glow_p_error(p, loc, "'%s' is used inside its own region", tp_span_name(name, '%', b, sizeof b));
			return false;
		}
	return true;
}

void glow_p_regions_free(struct glow_parser *p)
{
	vec_free(&p->frames);
	if (p->any_closed)
		strmap_free(&p->closed);
	memset(&p->closed, 0, sizeof p->closed);
	p->any_closed = false;
	p->frame_pushed = false;
	p->stmt_node = NULL;
}
