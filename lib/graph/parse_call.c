/* parse_call.c - the graph IR reader's actions for functions that are
 * called (grammar/glow.y; docs/GraphIR.md, "Functions and calls"): the
 * signature of a module function, the function literal
 * `let %f = fn(%a : T) -> R { ... }`, and the callee of `Call(@f, ...)`.
 *
 * A signature's parameters are read by the region actions (parse_region.c:
 * glow_p_region_param) straight into the function, whose leading RegionArg
 * nodes they are; its result types are the statement type vector, which
 * glow_p_func_begin clears.
 *
 * A function literal is an Fn statement whose parameters come before its
 * result types in the text, while its node needs the result types to be
 * built: the parameters wait in fnparams (names copied, the reader lets go
 * of the text behind it), then the node is built as any statement with
 * regions (glow_p_node), its region 'body' opened (glow_p_region_begin) and
 * the parameters created in it. The old spelling `Fn() : R body(...) {`
 * is an ordinary statement with a region and still reads.
 *
 * Callees: `@f` as the first operand of a Call is the name of the module
 * function called, kept as the Call's callee attribute. Functions may be
 * defined after their callers, so the names are checked when the whole
 * module has been read, each at its token: parse.c calls the hook
 * calls_end this file installs (the reader's shell knows nothing of
 * calls, as of the forms: no circle of files).
 */
#include "glow.tab.h"

#include "graph/graph.h"
#include "graph/region.h"
#include "support/suggest.h"
#include "support/util.h"

#include <string.h>

static void calls_end(struct glow_parser *p, bool check);

void glow_p_func_sig(struct glow_parser *p)
{
	if (!p->f)
		return;
	bool bad = false;
	for (size_t i = 0; i < p->tys.len; i++)
		bad |= !p->tys.data[i]; /* reported by the type's action */
	/* with a bad result type the function still has a signature, so that
	 * its calls report nothing more (the module is not built) */
	func_set_sig(p->f, p->tys.data, bad ? 0u : (unsigned)p->tys.len);
}

void glow_p_fn_begin(struct glow_parser *p, struct loc loc)
{
	p->fn_loc = loc;
	p->calls_end = calls_end; /* frees fnparams */
	vec_clear(&p->fnparams);
}

void glow_p_fn_param(struct glow_parser *p, const struct tp_span *name, struct loc loc, const struct type *t)
{
	size_t len;
	const char *k = tp_span_key(&p->r, name, &len);
	for (size_t i = 0; i < p->fnparams.len; i++)
		if (p->fnparams.data[i].name.len == len && memcmp(p->fnparams.data[i].name.s, k, len) == 0) {
			char b[80];
			glow_p_error(p, loc, "redefinition of '%s'", tp_span_name(name, '%', b, sizeof b));
			diag_note(p->r.d, p->fnparams.data[i].loc, "previous definition is here");
			return;
		}
	struct glow_fnparam fp = {{arena_memdup(&p->m->arena, k, len), (uint32_t)len, 0}, loc, t};
	vec_push(&p->fnparams, fp);
}

void glow_p_fn_sig(struct glow_parser *p, struct loc lbrace)
{
	p->kind = NK_Fn;
	p->kind_loc = p->fn_loc;
	p->has_types = true;
	p->has_pred = p->has_lowered = false;
	glow_p_node(p, lbrace);
	static const struct tp_span body = {"body", 4, 0};
	glow_p_region_begin(p, &body, lbrace);
	for (size_t i = 0; i < p->fnparams.len; i++) {
		const struct glow_fnparam *fp = &p->fnparams.data[i];
		glow_p_region_param(p, &fp->name, fp->loc, fp->t);
	}
	vec_clear(&p->fnparams);
}

void glow_p_fn_bad(struct glow_parser *p, struct loc fn)
{
	glow_p_recovered(p);
	glow_p_fn_begin(p, fn);
	p->bad = true;
	vec_clear(&p->tys);
	glow_p_fn_sig(p, fn);
}

void glow_p_fn_end(struct glow_parser *p)
{
	glow_p_region_end(p);
	glow_p_regions_end(p, true);
}

/* Call(@f, args...): a global name as the first operand of a Call names
 * the function called; it becomes the callee attribute (no operand). */
static bool take_callee(struct glow_parser *p, const struct tp_span *name, struct loc loc)
{
	if (p->kind != NK_Call || p->ops.len)
		return false;
	int slot = node_attr_slot(NK_Call, AN_callee);
	for (size_t i = 0; i < p->attrs.len; i++)
		if (p->attrs.data[i].idx == slot)
			return false; /* the callee is named: an argument */
	struct glow_pattr a = {slot, loc, {0}};
	a.u.s = *name;
	vec_push(&p->attrs, a);
	struct glow_callref ref = {arena_strdup(&p->m->arena, tp_span_cstr(&p->r, name)), loc};
	vec_push(&p->callrefs, ref);
	p->calls_end = calls_end;
	return true;
}

struct glow_val glow_p_global_operand(struct glow_parser *p, const struct tp_span *name, struct loc loc)
{
	if (take_callee(p, name, loc)) {
		struct glow_val v = {NULL, GLOW_CALLEE, loc};
		return v;
	}
	return glow_p_global(p, name, loc);
}

/* "; did you mean '@g'?" for an unknown function name, or "". */
static const char *near_func(const struct module *m, const char *name, char *buf, size_t size)
{
	struct suggest sg;
	suggest_init(&sg, name, strlen(name));
	for (size_t i = 0; i < m->nfuncs; i++)
		suggest_offer(&sg, m->funcs[i]->name, strlen(m->funcs[i]->name));
	if (!sg.best)
		return "";
	snprintf(buf, size, "; did you mean '@%s'?", sg.best);
	return buf;
}

/* The callees named in the text, now that every function is known. */
static void calls_check(struct glow_parser *p)
{
	for (size_t i = 0; i < p->callrefs.len; i++) {
		const struct glow_callref *c = &p->callrefs.data[i];
		struct func *f = module_find_func(p->m, c->name);
		char b[128];
		struct node *g = f ? NULL : module_find_global(p->m, c->name);
		if (g) {
			glow_p_error(p, c->loc, "'@%s' is a %s, not a function: a Call's first operand '@name' names the "
					       "module function it calls",
				     c->name, g->kind == NK_Placeholder ? "placeholder" : "constant");
		} else if (!f) {
			glow_p_error(p, c->loc, "call of undefined function '@%s'%s", c->name,
				     near_func(p->m, c->name, b, sizeof b));
		} else if (!f->has_sig) {
			glow_p_error(p, c->loc,
				     "function '@%s' has no signature and cannot be called: declare its parameters and "
				     "results ('func @%s(%%a : type, ...) -> type {')",
				     c->name, c->name);
			diag_note(p->r.d, f->loc, "defined here");
		}
	}
}

static void calls_end(struct glow_parser *p, bool check)
{
	if (check)
		calls_check(p);
	vec_free(&p->callrefs);
	vec_free(&p->fnparams);
}
