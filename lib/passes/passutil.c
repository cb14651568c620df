/* passutil.c - helpers shared by the graph rewriting passes (passutil.h).
 *
 * Element access goes through doubles: every float, float16 and bfloat16
 * value and every integer up to 2^53 is exact in a double, which is all the
 * passes need (they fold splats and rescale float weights). Wider integers
 * are only compared, never rewritten through pu_store.
 */
#include "passes/passutil.h"
#include "passes/pass.h"
#include "passes/kindfacts.h"
#include "support/fp16.h"
#include "support/scalar.h"
#include "support/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Permutations                                                        */

bool pu_perm_is_identity(const int64_t *s, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (s[i] != (int64_t)i)
			return false;
	return true;
}

void pu_perm_inverse(const int64_t *s, unsigned n, int64_t *inv)
{
	for (unsigned i = 0; i < n; i++)
		inv[s[i]] = (int64_t)i;
}

void pu_perm_compose(const int64_t *inner, const int64_t *outer, unsigned n, int64_t *out)
{
	for (unsigned i = 0; i < n; i++)
		out[i] = inner[outer[i]];
}

const struct type *pu_transposed_type(struct type_ctx *tc, const struct type *t, const int64_t *s)
{
	uint64_t dims[GLOW_MAX_RANK];
	for (unsigned i = 0; i < t->rank; i++)
		dims[i] = t->dims[s[i]];
	return type_with_dims(tc, t, dims, t->rank);
}

/* ------------------------------------------------------------------ */
/* Elements                                                            */

/* One element of C type T at p, read without alignment (memcpy) as a
 * double, or v stored there as a T: the step every case of pu_load and
 * pu_store shares, so the byte copy is written once. */
#define PU_LOAD_AS(T)                          \
	do {                                   \
		T x_;                          \
		memcpy(&x_, p, sizeof x_);     \
		return (double)x_;             \
	} while (0)
#define PU_STORE_AS(T, v)                      \
	do {                                   \
		T x_ = (T)(v);                 \
		memcpy(p, &x_, sizeof x_);     \
		return;                        \
	} while (0)

double pu_load(const struct type *t, const uint8_t *data, uint64_t i)
{
	enum elem_kind k = (enum elem_kind)t->elem;
	const uint8_t *p = data + i * elem_size(k);
	switch (k) {
	case EK_FLOAT: PU_LOAD_AS(float);
	case EK_FLOAT16:
	case EK_BFLOAT16: {
		uint16_t h;
		memcpy(&h, p, 2);
		return k == EK_FLOAT16 ? half_to_float(h) : bf16_to_float(h);
	}
	case EK_QI8: return (int8_t)p[0];
	case EK_QUI8:
	case EK_BOOL: return p[0];
	case EK_QI16: PU_LOAD_AS(int16_t);
	case EK_QI32:
	case EK_I32:
	case EK_INDEX32: PU_LOAD_AS(int32_t);
	case EK_I64:
	case EK_INDEX64: PU_LOAD_AS(int64_t);
	case EK_F8E4M3FN:
	case EK_F8E4M3FNUZ:
	case EK_F8E5M2:
	case EK_F8E5M2FNUZ: return sc_f82f(p[0], elem_f8_format(k));
	case EK_I4: return (int8_t)p[0];
	case EK_U4: return p[0];
	case EK_F4E2M1: return sc_f42f(p[0]);
	case EK_F8E8M0: return sc_e8m02f(p[0]);
	case EK_COUNT: break;
	}
	unreachable("bad element kind");
}

void pu_store(const struct type *t, uint8_t *data, uint64_t i, double v)
{
	enum elem_kind k = (enum elem_kind)t->elem;
	uint8_t *p = data + i * elem_size(k);
	switch (k) {
	case EK_FLOAT: PU_STORE_AS(float, v);
	case EK_FLOAT16:
	case EK_BFLOAT16:
		PU_STORE_AS(uint16_t, k == EK_FLOAT16 ? float_to_half((float)v) : float_to_bf16((float)v));
	case EK_QI8: p[0] = (uint8_t)(int8_t)v; return;
	case EK_QUI8:
	case EK_BOOL: p[0] = (uint8_t)v; return;
	case EK_QI16: PU_STORE_AS(int16_t, v);
	case EK_QI32:
	case EK_I32:
	case EK_INDEX32: PU_STORE_AS(int32_t, v);
	case EK_I64:
	case EK_INDEX64: PU_STORE_AS(int64_t, v);
	case EK_F8E4M3FN:
	case EK_F8E4M3FNUZ:
	case EK_F8E5M2:
	case EK_F8E5M2FNUZ: p[0] = sc_f2f8((float)v, elem_f8_format(k), 1); return;
	case EK_I4: p[0] = (uint8_t)sc_f2i4(v, 1); return;
	case EK_U4: p[0] = (uint8_t)sc_f2i4(v, 0); return;
	case EK_F4E2M1: p[0] = sc_f2f4((float)v); return;
	case EK_F8E8M0: p[0] = sc_f2e8m0((float)v, 1, SC_E8M0_UP); return;
	case EK_COUNT: break;
	}
	unreachable("bad element kind");
}

#undef PU_LOAD_AS
#undef PU_STORE_AS

void pu_quant_limits(enum elem_kind k, double *qmin, double *qmax)
{
	switch (k) {
	case EK_QUI8: *qmin = 0, *qmax = 255; break;
	case EK_QI16: *qmin = -32768, *qmax = 32767; break;
	case EK_QI32: *qmin = -2147483648.0, *qmax = 2147483647.0; break;
	default: *qmin = -128, *qmax = 127; break;
	}
}

bool pu_representable(enum elem_kind k, double v)
{
	switch (elem_class(k)) {
	case EC_F: {
		if (isnan(v))
			return true;
		float f = (float)v;
		if ((double)f != v)
			return false;
		if (k == EK_FLOAT16)
			return (double)half_to_float(float_to_half(f)) == v;
		if (k == EK_BFLOAT16)
			return (double)bf16_to_float(float_to_bf16(f)) == v;
		return true;
	}
	case EC_I:
	case EC_X: {
		bool wide = elem_size(k) == 8;
		double lo = wide ? -9007199254740992.0 : -2147483648.0;
		double hi = wide ? 9007199254740992.0 : 2147483647.0;
		return v == floor(v) && v >= lo && v <= hi;
	}
	case EC_B: return v == 0 || v == 1;
	case EC_Q:
	case EC_S: return false;
	}
	return false;
}

/* ------------------------------------------------------------------ */
/* Splats                                                              */

static bool same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

bool pu_splat_of(struct module *m, struct value v, double *x)
{
	struct node *n = v.node;
	const struct type *t = val_type(v);
	if (elem_is_quantized((enum elem_kind)t->elem))
		return false;
	if (pk_has(n->kind, PK_SPLAT_MOVES))
		return pu_splat_of(m, op_val(n, 0), x);
	switch (n->kind) {
	case NK_Splat: *x = node_float(n, AN_value); return true;
	case NK_Constant: {
		struct constant *c = as_constant(n);
		if (c->init == INIT_ZERO) {
			*x = 0;
			return true;
		}
		if (c->init == INIT_SPLAT) {
			*x = elem_is_float((enum elem_kind)t->elem) ? c->splat_f : (double)c->splat_i;
			/* through the element kind, as the payload would hold it */
			if (elem_is_float((enum elem_kind)t->elem) && !pu_representable((enum elem_kind)t->elem, *x))
				return false;
			return true;
		}
		if (c->init != INIT_DENSE || !c->data)
			return false;
		uint64_t cnt = type_numel(t);
		if (cnt == 0)
			return false;
		size_t es = elem_size((enum elem_kind)t->elem);
		for (uint64_t i = 1; i < cnt; i++)
			if (memcmp(c->data, c->data + i * es, es) != 0)
				return false;
		*x = pu_load(t, c->data, 0);
		return true;
	}
	default: return false;
	}
}

bool pu_is_splat(struct module *m, struct value v, double x)
{
	double y;
	return pu_splat_of(m, v, &y) && same_bits(x, y);
}

/* ------------------------------------------------------------------ */
/* Creating IR                                                         */

struct node *pu_new_splat(struct func *f, const struct type *t, double x, struct node *before, const char *base)
{
	struct node *n = node_create1(f, NK_Splat, base, NULL, 0, t, before, before ? before->loc : LOC_NONE);
	node_set_float(f->mod, n, AN_value, x);
	return n;
}

struct node *pu_new_transpose(struct func *f, struct value v, const int64_t *s, struct node *before,
			      const char *base)
{
	const struct type *t = pu_transposed_type(f->mod->types, val_type(v), s);
	struct node *n = node_create1(f, NK_Transpose, base, &v, 1, t, before, before ? before->loc : LOC_NONE);
	node_set_ints(f->mod, n, AN_shuffle, s, val_type(v)->rank);
	return n;
}

struct node *pu_new_reshape(struct func *f, struct value v, const struct type *t, struct node *before,
			    const char *base)
{
	return node_create1(f, NK_Reshape, base, &v, 1, t, before, before ? before->loc : LOC_NONE);
}

struct constant *pu_new_constant(struct module *m, const struct type *t, const void *data, const char *base)
{
	struct constant *c = module_add_constant(m, module_fresh_name(m, base), t, LOC_NONE);
	glow_assert(c);
	constant_set_data(m, c, data);
	return c;
}

const uint8_t *pu_constant_data(struct module *m, struct constant *c, struct diag *d)
{
	return constant_data(m, c, d);
}

void pu_replace(struct func *f, struct node *n, struct value v)
{
	if (n->nres == 1 && v.res == 0 && v.node != n && !node_is_storage(v.node)) {
		node_replace(f, n, v.node);
		return;
	}
	value_replace_all_uses(node_val(n, 0), v);
	if (!node_has_uses(n))
		node_erase(f, n);
}

struct node *pu_replace_new(struct func *f, struct node *n, unsigned kind, const struct value *ops, unsigned nops)
{
	struct node *r = node_create1(f, kind, n->name, ops, nops, node_type(n), n, n->loc);
	pu_replace(f, n, node_val(r, 0));
	return r;
}

bool pu_fold_each(struct func *f, struct pass_ctx *ctx, unsigned k1, unsigned k2,
		  bool (*fold)(struct func *, struct node *), const char *stat)
{
	uint64_t folded = 0;
	func_for_each_safe(f, n, next) {
		if ((n->kind == k1 || n->kind == k2) && fold(f, n))
			folded++;
	}
	pass_stat(ctx, stat, folded);
	return folded != 0;
}

bool pu_rewrite_funcs(struct module *m, struct u64map *per_func,
		      bool (*rewrite)(void *arg, struct func *f, struct node *n), void *arg)
{
	for (size_t fi = 0; fi < m->nfuncs; fi++) {
		struct func *f = m->funcs[fi];
		bool ok = true;
		u64map_init(per_func);
		func_for_each_safe(f, n, next) {
			if (!rewrite(arg, f, n)) {
				ok = false;
				break;
			}
		}
		u64map_free(per_func);
		if (!ok)
			return false;
	}
	return true;
}

void pu_transpose_data(const struct type *t, const uint8_t *data, const int64_t *s, uint8_t *out)
{
	unsigned r = t->rank;
	size_t es = elem_size((enum elem_kind)t->elem);
	uint64_t cnt = type_numel(t);
	if (cnt == 0)
		return;
	/* strides of the input, then the input stride of each output dimension */
	uint64_t in_stride[GLOW_MAX_RANK], st[GLOW_MAX_RANK], od[GLOW_MAX_RANK], idx[GLOW_MAX_RANK] = {0};
	uint64_t acc = 1;
	for (unsigned i = r; i-- > 0;) {
		in_stride[i] = acc;
		acc *= t->dims[i];
	}
	for (unsigned i = 0; i < r; i++) {
		st[i] = in_stride[s[i]];
		od[i] = t->dims[s[i]];
	}
	uint64_t src = 0;
	for (uint64_t o = 0; o < cnt; o++) {
		memcpy(out + o * es, data + src * es, es);
		/* odometer over the output index, tracking the input offset */
		for (unsigned i = r; i-- > 0;) {
			idx[i]++;
			src += st[i];
			if (idx[i] < od[i])
				break;
			src -= st[i] * idx[i];
			idx[i] = 0;
		}
	}
}

double *pu_batchnorm_coeffs(struct module *m, struct node *n, struct diag *d)
{
	const uint8_t *data[4];
	const struct type *t[4];
	for (unsigned i = 0; i < 4; i++) {
		struct constant *c = as_constant(n->ops[1 + i].def);
		if (!c || !elem_is_float((enum elem_kind)c->n.types[0]->elem))
			return NULL;
		t[i] = c->n.types[0];
		if (!(data[i] = constant_data(m, c, d)))
			return NULL;
	}
	uint64_t ch = t[0]->dims[0];
	double eps = node_float(n, AN_epsilon);
	double *co = xmalloc(2 * (ch ? ch : 1) * sizeof(double));
	for (uint64_t c = 0; c < ch; c++) {
		double mul = pu_load(t[0], data[0], c) / sqrt(pu_load(t[3], data[3], c) + eps);
		co[c] = mul;
		co[ch + c] = pu_load(t[1], data[1], c) - pu_load(t[2], data[2], c) * mul;
	}
	return co;
}

struct constant *pu_rewrite_target(struct module *m, struct constant *old)
{
	if (node_num_uses(&old->n, -1) == 1)
		return old;
	struct constant *c = module_add_constant(m, module_fresh_name(m, old->n.name), node_type(&old->n), LOC_NONE);
	glow_assert(c);
	return c;
}

void pu_make_splat(struct constant *c, double v)
{
	if (c->data && c->init != INIT_DENSE)
		free(c->data);
	c->data = NULL;
	c->init = INIT_SPLAT;
	c->splat_f = (double)(float)v;
}

bool pu_all_equal(const double *v, uint64_t n)
{
	for (uint64_t i = 1; i < n; i++)
		if (v[i] != v[0])
			return false;
	return true;
}

void pu_each_batchnorm(struct func *f, bool (*want)(const struct node *n),
		       bool (*use)(struct func *f, struct node *n, const double *co, uint64_t ch, void *arg), void *arg,
		       struct diag *d)
{
	func_for_each_safe(f, n, next) {
		if (n->kind != NK_BatchNormalization || node_has_pred(n) || !want(n))
			continue;
		double *co = pu_batchnorm_coeffs(f->mod, n, d);
		if (!co) {
			if (d->nerrors)
				break;
			continue;
		}
		bool go_on = use(f, n, co, op_type(n, 1)->dims[0], arg);
		free(co);
		if (!go_on)
			break;
	}
}

void pu_rename_const_twins(struct module *m, const struct u64map *twins)
{
	for (size_t i = 0; i < twins->cap; i++) {
		struct constant *c = (struct constant *)(uintptr_t)twins->tab[i].key, *nc = twins->tab[i].val;
		if (!nc || node_has_uses(&c->n))
			continue;
		const char *name = c->n.name;
		module_erase_global(m, &c->n);
		bool ok = module_rename_global(m, &nc->n, name);
		glow_assert(ok);
	}
}
