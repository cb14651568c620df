/* tensor.c - see tensor.h. */
#define _POSIX_C_SOURCE 200809L
#include "tensor/tensor.h"
#include "support/fp16.h"
#include "support/scalar.h"
#include "support/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- elements ---- */

/* Kinds whose elements are real numbers held in a float format: float,
 * float16, bfloat16, the float8 kinds, float4e2m1 and float8e8m0. */
static bool real_kind(enum elem_kind k) { return elem_is_float(k) || elem_is_float_bits(k); }

/* Elements are read with memcpy: output buffers of a backend are aligned,
 * but a tensor may also sit at any offset of a file buffer. */
int64_t tensor_stored_int(const struct type *t, const void *p, uint64_t i)
{
	enum elem_kind k = (enum elem_kind)t->elem;
	glow_assert(!elem_is_float(k));
	const uint8_t *b = (const uint8_t *)p + i * elem_size(k);
	/* the unsigned kinds are the one-byte qui8, bool, u4 and the float
	 * formats held as bits; the others are two's complement of their size */
	switch (elem_size(k)) {
	case 1:
		return k == EK_QUI8 || k == EK_BOOL || k == EK_U4 || elem_is_float_bits(k) ? (int64_t)b[0]
											   : (int64_t)(int8_t)b[0];
	case 2: { int16_t x; memcpy(&x, b, 2); return x; }
	case 4: { int32_t x; memcpy(&x, b, 4); return x; }
	default: { int64_t x; memcpy(&x, b, 8); return x; }
	}
}

/* Element bits wherever the element sits (memcpy: no alignment assumed). */
static float get_f32(const uint8_t *b) { float f; memcpy(&f, b, 4); return f; }
static void set_f32(uint8_t *b, float v) { memcpy(b, &v, 4); }
static uint16_t load16(const uint8_t *b) { uint16_t h; memcpy(&h, b, 2); return h; }
static void store16(uint8_t *b, uint16_t h) { memcpy(b, &h, 2); }
static float get_f16(const uint8_t *b) { return half_to_float(load16(b)); }
static void set_f16(uint8_t *b, float v) { store16(b, float_to_half(v)); }
static float get_bf16(const uint8_t *b) { return bf16_to_float(load16(b)); }
static void set_bf16(uint8_t *b, float v) { store16(b, float_to_bf16(v)); }
/* float8: round to nearest even, saturating (ONNX's Cast default) */
#define F8_IO(K, F)                                                                  \
	static float get_##K(const uint8_t *b) { return sc_f82f(b[0], F); }          \
	static void set_##K(uint8_t *b, float v) { b[0] = sc_f2f8(v, F, 1); }
F8_IO(e4m3fn, SC_F8_E4M3FN)
F8_IO(e4m3fnuz, SC_F8_E4M3FNUZ)
F8_IO(e5m2, SC_F8_E5M2)
F8_IO(e5m2fnuz, SC_F8_E5M2FNUZ)
#undef F8_IO
/* float4e2m1 (round to nearest even, saturating) and float8e8m0 (ONNX's
 * Cast defaults: saturating, rounding up) */
static float get_f4e2m1(const uint8_t *b) { return sc_f42f(b[0]); }
static void set_f4e2m1(uint8_t *b, float v) { b[0] = sc_f2f4(v); }
static float get_f8e8m0(const uint8_t *b) { return sc_e8m02f(b[0]); }
static void set_f8e8m0(uint8_t *b, float v) { b[0] = sc_f2e8m0(v, 1, SC_E8M0_UP); }

/* The float kinds' conversions, by element kind: how a float value goes
 * in and out of its storage. */
static const struct float_io {
	float (*get)(const uint8_t *b);
	void (*set)(uint8_t *b, float v);
} float_io[EK_COUNT] = {
	[EK_FLOAT] = {get_f32, set_f32},
	[EK_FLOAT16] = {get_f16, set_f16},
	[EK_BFLOAT16] = {get_bf16, set_bf16},
	[EK_F8E4M3FN] = {get_e4m3fn, set_e4m3fn},
	[EK_F8E4M3FNUZ] = {get_e4m3fnuz, set_e4m3fnuz},
	[EK_F8E5M2] = {get_e5m2, set_e5m2},
	[EK_F8E5M2FNUZ] = {get_e5m2fnuz, set_e5m2fnuz},
	[EK_F4E2M1] = {get_f4e2m1, set_f4e2m1},
	[EK_F8E8M0] = {get_f8e8m0, set_f8e8m0},
};

/* Every float kind has its conversions (the ELEM table of support/types.h
 * may gain one): checked on first use, naming the kind. */
static const struct float_io *float_io_of(enum elem_kind k)
{
	const struct float_io *f = &float_io[k];
	if (!f->get)
		glow_unreachable_at(__FILE__, __LINE__, elem_name(k));
	return f;
}

double tensor_real(const struct type *t, const void *p, uint64_t i)
{
	enum elem_kind k = (enum elem_kind)t->elem;
	if (elem_is_quantized(k))
		return (double)t->scale * ((double)tensor_stored_int(t, p, i) - (double)t->offset);
	glow_assert(real_kind(k));
	return float_io_of(k)->get((const uint8_t *)p + i * elem_size(k));
}

void tensor_set_real(const struct type *t, void *p, uint64_t i, double v)
{
	enum elem_kind k = (enum elem_kind)t->elem;
	glow_assert(real_kind(k));
	float_io_of(k)->set((uint8_t *)p + i * elem_size(k), (float)v);
}

void tensor_print_elem(struct ostream *o, const struct type *t, const void *p, uint64_t i)
{
	enum elem_kind k = (enum elem_kind)t->elem;
	char buf[64];
	if (real_kind(k)) {
		format_float(buf, sizeof buf, (float)tensor_real(t, p, i));
		os_puts(o, buf);
	} else if (k == EK_BOOL)
		os_puts(o, tensor_stored_int(t, p, i) ? "true" : "false");
	else
		os_i64(o, tensor_stored_int(t, p, i));
}

void tensor_elem_str(const struct type *t, const void *p, uint64_t i, char *buf, size_t size)
{
	struct ostream o;
	ostream_mem(&o);
	tensor_print_elem(&o, t, p, i);
	snprintf(buf, size, "%s", ostream_cstr(&o));
	ostream_abort(&o);
}

void tensor_index_str(const struct type *t, uint64_t e, char *buf, size_t size)
{
	uint64_t idx[GLOW_MAX_RANK];
	for (unsigned i = t->rank; i-- > 0;) {
		idx[i] = t->dims[i] ? e % t->dims[i] : 0;
		e = t->dims[i] ? e / t->dims[i] : 0;
	}
	int n = snprintf(buf, size, "[");
	for (unsigned i = 0; i < t->rank && n > 0 && (size_t)n < size; i++)
		n += snprintf(buf + n, size - (size_t)n, "%s%" PRIu64, i ? ", " : "", idx[i]);
	if (n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "]");
}

/* ---- printing ---- */

/* The real value of element i in the float format of -print. */
static void print_real(struct ostream *o, const struct type *t, const void *p, uint64_t i)
{
	char buf[48];
	format_double(buf, sizeof buf, tensor_real(t, p, i));
	os_puts(o, buf);
}

/* The sub-tensor of axis `axis` starting at flat element `base`; along an
 * axis longer than twice the edge items a summary prints only the edges. */
static void print_block(struct ostream *o, const struct type *t, const void *p, unsigned axis, uint64_t base,
			bool summary, bool real)
{
	if (axis == t->rank) {
		if (real)
			print_real(o, t, p, base);
		else
			tensor_print_elem(o, t, p, base);
		return;
	}
	uint64_t n = t->dims[axis], stride = 1;
	for (unsigned i = axis + 1; i < t->rank; i++)
		stride *= t->dims[i];
	os_putc(o, '[');
	for (uint64_t i = 0; i < n; i++) {
		if (i)
			os_puts(o, ", ");
		if (summary && n > 2 * TENSOR_EDGE_ITEMS && i == TENSOR_EDGE_ITEMS) {
			os_puts(o, "...");
			i = n - TENSOR_EDGE_ITEMS - 1;
			continue;
		}
		print_block(o, t, p, axis + 1, base + i * stride, summary, real);
	}
	os_putc(o, ']');
}

static void print_values(struct ostream *o, const struct type *t, const void *p, bool full, bool real)
{
	uint64_t n = type_numel(t);
	if (n == 0) {
		/* no element to walk to: the brackets of every axis */
		for (unsigned i = 0; i < t->rank; i++)
			os_putc(o, '[');
		for (unsigned i = 0; i < t->rank; i++)
			os_putc(o, ']');
	} else {
		print_block(o, t, p, 0, 0, !full && n > TENSOR_SUMMARY_THRESHOLD, real);
	}
	os_putc(o, '\n');
}

void tensor_print(struct ostream *o, const char *name, const struct type *t, const void *p, bool full)
{
	os_printf(o, "%s: ", name);
	type_print(o, t);
	os_puts(o, " = ");
	print_values(o, t, p, full, false);
	if (elem_is_quantized((enum elem_kind)t->elem)) {
		os_printf(o, "%s: real = ", name);
		print_values(o, t, p, full, true);
	}
}

/* ---- comparison ---- */

int tensor_tol_parse(struct tensor_tol *t, struct diag *d)
{
	const char *s[2] = {t->rtol_s, t->atol_s}, *names[2] = {"rtol", "atol"};
	double *out[2] = {&t->rtol, &t->atol}, def[2] = {TENSOR_RTOL_DEFAULT, TENSOR_ATOL_DEFAULT};
	for (int i = 0; i < 2; i++) {
		*out[i] = def[i];
		if (!s[i])
			continue;
		char *end;
		errno = 0;
		double v = strtod(s[i], &end);
		if (end == s[i] || *end || errno || !(v >= 0) || isinf(v)) {
			diag_error(d, LOC_NONE, "-%s takes a non-negative number, got '%s'", names[i], s[i]);
			return -1;
		}
		*out[i] = v;
	}
	return 0;
}

void tensor_compare(const struct type *t, const void *got, const void *ref, const struct tensor_tol *tol,
		    struct tensor_cmp *r)
{
	enum elem_kind k = (enum elem_kind)t->elem;
	memset(r, 0, sizeof *r);
	r->exact = !real_kind(k) && !elem_is_quantized(k);
	r->n = type_numel(t);
	size_t es = elem_size(k);
	const uint8_t *g = got, *e = ref;
	double worst_excess = -INFINITY;
	for (uint64_t i = 0; i < r->n; i++) {
		if (r->exact) {
			if (memcmp(g + i * es, e + i * es, es) != 0 && !r->bad++) {
				r->worst = i;
				r->have = true;
			}
			continue;
		}
		double x = tensor_real(t, got, i), y = tensor_real(t, ref, i);
		if ((isnan(x) && isnan(y)) || x == y)
			continue;
		double err = fabs(x - y), allowed = tol->atol + tol->rtol * fabs(y);
		/* a NaN on one side is the worst possible difference */
		double excess = isnan(err) ? INFINITY : err - allowed;
		if (isnan(err) || err > allowed)
			r->bad++;
		if (!r->have || excess > worst_excess) {
			worst_excess = excess;
			r->worst_err = err;
			r->worst = i;
			r->have = true;
		}
	}
}

/* ---- signatures ---- */

void tensor_print_signature(struct ostream *o, struct ir_func *f)
{
	size_t n;
	struct backend_io *io = backend_func_io(f, &n);
	os_printf(o, "@%s\n", f->name);
	for (size_t i = 0; i < n; i++) {
		if (!io[i].is_input && !io[i].is_output)
			continue;
		const char *role = io[i].is_input && io[i].is_output ? "inout" : io[i].is_input ? "input" : "output";
		os_printf(o, "  %s %s: ", role, io[i].w->v.name);
		type_print(o, io[i].w->v.type);
		os_putc(o, '\n');
	}
	free(io);
}

/* ---- memory ---- */

void *tensor_alloc(uint64_t n, const char *what, struct diag *d)
{
	void *p = n < SIZE_MAX ? calloc((size_t)n + 1, 1) : NULL;
	glow_big_pages(p, (size_t)n);
	if (!p)
		diag_error(d, LOC_NONE, "cannot allocate %s: %" PRIu64 " bytes", what, n);
	return p;
}
