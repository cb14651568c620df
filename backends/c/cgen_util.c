/* cgen_util.c - what the C backend's emitters share below the bundle:
 * the C spelling of element kinds and float literals, the constants blob
 * (a weight's bytes, raw copies on first use), the place of every buffer
 * in the three regions (the recorded plan, a training bundle's shared
 * layout or the fallback plan cgen.c makes), whether two buffers overlap,
 * and the instruction stream seen past the kinds that emit nothing.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/c/cgen.h"
#include "backends/interpreter/interp.h"
#include "support/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cg_ctype(unsigned elem)
{
	switch ((enum elem_kind)elem) {
	case EK_FLOAT: return "float";
	case EK_I32: case EK_INDEX32: return "int32_t";
	case EK_I64: case EK_INDEX64: return "int64_t";
	case EK_BOOL: return "uint8_t";
	default: return NULL;
	}
}

const char *cg_flit(char *buf, double v)
{
	if (v != v)
		snprintf(buf, 40, "NAN");
	else if (v > 3.5e38 || v < -3.5e38)
		snprintf(buf, 40, "%sINFINITY", v < 0 ? "-" : "");
	else
		snprintf(buf, 40, "%#.9gf", v);
	return buf;
}

size_t cg_blob_add(struct cg *g, const void *p, size_t n)
{
	size_t off = (g->blob_len + CG_ALIGN - 1) / CG_ALIGN * CG_ALIGN;
	g->blob = xgrow(g->blob, &g->blob_cap, off + n + 1, 1);
	memset(g->blob + g->blob_len, 0, off - g->blob_len);
	if (p)
		memcpy(g->blob + off, p, n);
	else
		memset(g->blob + off, 0, n);
	g->blob_len = off + n;
	return off;
}

uint8_t *cg_weight_data(struct cg *g, struct ir_weight *w)
{
	uint64_t n = type_bytes(w->v.type);
	/* the size is the program's (a splat needs no bytes in the file) */
	uint8_t *p = n < SIZE_MAX ? malloc((size_t)n + 1) : NULL;
	glow_big_pages(p, (size_t)n);
	if (!p) {
		diag_error(g->d, w->v.loc, "cannot allocate the contents of %%%s: %" PRIu64 " bytes", w->v.name, n);
		g->errors++;
		return NULL;
	}
	if (interp_weight_init(g->f->mod, w, p, g->d) != 0) {
		free(p);
		g->errors++;
		return NULL;
	}
	return p;
}

/* The blob offset of constant w as it is, copying it in on first use. */
static uint64_t raw_offset(struct cg *g, struct ir_weight *w)
{
	void *s = ptrmap_get(&g->raw, w);
	if (s)
		return (uint64_t)(uintptr_t)s - 1;
	uint8_t *p = cg_weight_data(g, w);
	size_t off = cg_blob_add(g, p, p ? (size_t)type_bytes(w->v.type) : 0);
	free(p);
	u64map_put(&g->raw, (uint64_t)(uintptr_t)w, (void *)(uintptr_t)(off + 1));
	return off;
}

uint64_t cg_plan_offset(struct cg *g, struct ir_value *root)
{
	struct ir_weight *sw = g->shared_mut ? ir_as_weight(root) : NULL;
	if (sw) { /* a training bundle's mutable region: one layout for every function */
		void *s = ptrmap_get(g->shared_mut, sw);
		if (!s)
			unreachable("a mutable weight outside the training bundle's layout");
		return (uint64_t)(uintptr_t)s - 1;
	}
	if (g->f->plan.present) {
		struct ir_weight *w = ir_as_weight(root);
		return (uint64_t)(w ? w->offset : ir_as_instr(root)->offset);
	}
	void *s = ptrmap_get(&g->plan, root);
	return s ? (uint64_t)(uintptr_t)s - 1 : 0;
}

int cg_place(struct cg *g, struct ir_value *v, struct cg_place *p)
{
	uint64_t off = 0;
	struct ir_value *root = ir_value_root(v, &off);
	if (!root)
		unreachable("operand without a root buffer in a verified function");
	p->root = root;
	p->len = type_bytes(v->type);
	struct ir_weight *w = ir_as_weight(root);
	if (w && w->is_const) {
		p->region = 'C';
		p->off = raw_offset(g, w) + off;
	} else {
		p->region = w ? 'W' : 'A';
		p->off = cg_plan_offset(g, root) + off;
	}
	return 0;
}

const char *cg_ptr(struct cg *g, struct ir_value *v, const char *ctype, char *buf, size_t size)
{
	struct cg_place p;
	cg_place(g, v, &p);
	snprintf(buf, size, "((%s%s *)(%c + %" PRIu64 "))", p.region == 'C' ? "const " : "", ctype, p.region,
		 p.off);
	return buf;
}

/* Root and byte range without touching the blob. */
static void span(struct cg *g, struct ir_value *v, struct ir_value **root, uint64_t *lo, uint64_t *hi)
{
	uint64_t off = 0;
	*root = ir_value_root(v, &off);
	struct ir_weight *w = *root ? ir_as_weight(*root) : NULL;
	uint64_t base = (w && w->is_const) || !*root ? 0 : cg_plan_offset(g, *root);
	*lo = base + off;
	*hi = *lo + type_bytes(v->type);
}

/* Two roots in one region: activations may share memory through the plan. */
static bool same_memory(struct ir_value *a, struct ir_value *b)
{
	if (a == b)
		return true;
	struct ir_weight *wa = ir_as_weight(a), *wb = ir_as_weight(b);
	if (!wa && !wb)
		return true; /* both activations */
	if (wa && wb)
		return !wa->is_const && !wb->is_const;
	return false;
}

bool cg_overlap(struct cg *g, struct ir_value *a, struct ir_value *b)
{
	struct ir_value *ra, *rb;
	uint64_t la, ha, lb, hb;
	span(g, a, &ra, &la, &ha);
	span(g, b, &rb, &lb, &hb);
	if (!ra || !rb || !same_memory(ra, rb))
		return false;
	if (ra != rb && ir_as_weight(ra) && ir_as_weight(rb) && !g->f->plan.present)
		return false;
	return la < hb && lb < ha;
}

bool cg_same(struct cg *g, struct ir_value *a, struct ir_value *b)
{
	struct ir_value *ra, *rb;
	uint64_t la, ha, lb, hb;
	span(g, a, &ra, &la, &ha);
	span(g, b, &rb, &lb, &hb);
	return ra && rb && same_memory(ra, rb) && la == lb && ha == hb;
}

struct ir_instr *cg_next_real(struct ir_instr *in)
{
	for (in = in->next; in; in = in->next)
		if (!cg_emits_nothing(in->kind))
			return in;
	return NULL;
}

bool cg_read_later(struct cg *g, struct ir_instr *after, struct ir_value *v)
{
	struct ir_value *root = ir_value_root(v, NULL);
	if (!root || ir_as_weight(root))
		return true;
	/* deallocated already (a fused group whose last member comes after
	 * the dealloc of an inner result): nothing reads it after `after`,
	 * whatever later reuses its memory */
	for (struct ir_instr *in = after; root->vkind == IV_ALLOC && in && &in->v != root; in = in->prev)
		if (in->kind == IK_dealloc && ir_value_root(in->ops[0].val, NULL) == root)
			return false;
	for (struct ir_instr *in = after->next; in; in = in->next) {
		if (in->kind == IK_dealloc && ir_value_root(in->ops[0].val, NULL) == root)
			return false;
		if (cg_emits_nothing(in->kind))
			continue;
		if (instr_is_block(in->kind))
			return true; /* a loop may read it again, an if's other block may */
		for (unsigned i = 0; i < in->nops; i++) {
			if (!cg_overlap(g, in->ops[i].val, v))
				continue;
			if (in->ops[i].qual != IQ_OUT)
				return true;
		}
	}
	return false;
}
