/* tensor.c - ONNX element types, tensors known at import and their graph
 * values.
 *
 * Known contents are kept as little-endian bytes in the ONNX element packing
 * (which is also the graph IR's packing for every kind they share) or as a
 * splat; the folder reads them widened to int64 or double. A known tensor
 * becomes a graph constant, named as the ONNX value, only when a node that
 * is not folded reads it.
 */
#define _POSIX_C_SOURCE 200809L
#include "import/onnx/internal.h"
#include "import/onnx/tensorio.h"
#include "support/fp16.h"
#include "support/scalar.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- element types ---- */

size_t imp_dt_size(int dtype)
{
	switch (dtype) {
	case DT_UINT8: case DT_INT8: case DT_BOOL: return 1;
	case DT_FLOAT8E4M3FN: case DT_FLOAT8E4M3FNUZ: case DT_FLOAT8E5M2: case DT_FLOAT8E5M2FNUZ: return 1;
	case DT_FLOAT8E8M0: return 1;
	case DT_UINT4: case DT_INT4: case DT_FLOAT4E2M1: return 1; /* unpacked */
	case DT_UINT16: case DT_INT16: case DT_FLOAT16: case DT_BFLOAT16: return 2;
	case DT_FLOAT: case DT_INT32: case DT_UINT32: return 4;
	case DT_INT64: case DT_UINT64: case DT_DOUBLE: return 8;
	default: return 0;
	}
}

const char *imp_dt_name(int dtype)
{
	static const char *const names[] = {"undefined", "float", "uint8", "int8", "uint16", "int16",
					    "int32", "int64", "string", "bool", "float16", "double",
					    "uint32", "uint64", "complex64", "complex128", "bfloat16",
					    "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4",
					    "int4", "float4e2m1", "float8e8m0", "uint2", "int2"};
	return dtype >= 0 && dtype < (int)GLOW_ARRAY_SIZE(names) ? names[dtype] : "unknown";
}

bool imp_dt_is_float(int dtype)
{
	return dtype == DT_FLOAT || dtype == DT_FLOAT16 || dtype == DT_BFLOAT16 || dtype == DT_DOUBLE;
}

bool imp_dt_is_f8(int dtype)
{
	return (dtype >= DT_FLOAT8E4M3FN && dtype <= DT_FLOAT8E5M2FNUZ) || dtype == DT_FLOAT8E8M0;
}
bool imp_dt_is_4bit(int dtype) { return dtype == DT_UINT4 || dtype == DT_INT4 || dtype == DT_FLOAT4E2M1; }
bool imp_dt_is_narrow(int dtype) { return imp_dt_is_f8(dtype) || imp_dt_is_4bit(dtype); }

bool imp_dt_is_int(int dtype)
{
	switch (dtype) {
	case DT_UINT8: case DT_INT8: case DT_UINT16: case DT_INT16: case DT_INT32: case DT_INT64:
	case DT_BOOL: case DT_UINT32: case DT_UINT64: return true;
	default: return false;
	}
}

int imp_dt_elem(int dtype)
{
	switch (dtype) {
	case DT_FLOAT: return EK_FLOAT;
	case DT_FLOAT16: return EK_FLOAT16;
	case DT_BFLOAT16: return EK_BFLOAT16;
	case DT_INT32: return EK_I32;
	case DT_INT64: return EK_I64;
	case DT_BOOL: return EK_BOOL;
	case DT_FLOAT8E4M3FN: return EK_F8E4M3FN;
	case DT_FLOAT8E4M3FNUZ: return EK_F8E4M3FNUZ;
	case DT_FLOAT8E5M2: return EK_F8E5M2;
	case DT_FLOAT8E5M2FNUZ: return EK_F8E5M2FNUZ;
	case DT_INT4: return EK_I4;
	case DT_UINT4: return EK_U4;
	case DT_FLOAT4E2M1: return EK_F4E2M1;
	case DT_FLOAT8E8M0: return EK_F8E8M0;
	default: return -1;
	}
}

/* ONNX's codes are the tensor files' (tensorio.h), kind for kind */
int imp_dt_of_elem(int elem)
{
	return tio_dtype_of((enum elem_kind)elem);
}

/* ---- tensors ---- */

uint64_t imp_t_numel(const struct tensor *t)
{
	uint64_t n = 1;
	for (unsigned i = 0; i < t->rank; i++)
		n *= t->dims[i];
	return n;
}

unsigned imp_gather_dims(const struct tensor *data, const struct tensor *idx, unsigned axis, uint64_t *dims)
{
	unsigned r = 0;
	for (unsigned k = 0; k < axis; k++)
		dims[r++] = data->dims[k];
	for (unsigned k = 0; k < idx->rank; k++)
		dims[r++] = idx->dims[k];
	for (unsigned k = axis + 1; k < data->rank; k++)
		dims[r++] = data->dims[k];
	return r;
}

/* Innermost binding first: subgraph scopes shadow their enclosing ones. */
struct tensor *imp_t_lookup(struct importer *im, const char *name)
{
	for (const struct scope *sc = im->inner; sc; sc = sc->parent) {
		struct tensor *t = strmap_get(&sc->tensors, name);
		if (t)
			return t;
	}
	return strmap_get(&im->tensors, name);
}

struct tensor *imp_t_new(struct importer *im, const char *name, int dtype, unsigned rank, const uint64_t *dims)
{
	struct tensor *t = arena_new(&im->scratch, struct tensor);
	t->name = name;
	t->dtype = dtype;
	t->rank = rank;
	for (unsigned i = 0; i < rank; i++)
		t->dims[i] = dims[i];
	return t;
}

static void store(int dtype, uint8_t *p, int64_t i, double f, bool from_float)
{
	if (from_float && imp_dt_is_int(dtype)) {
		/* float -> integer truncates toward zero; out of range is 0 */
		i = isfinite(f) && f > -9.2e18 && f < 9.2e18 ? (int64_t)f : 0;
		if (dtype == DT_BOOL)
			i = f != 0;
	}
	if (!from_float)
		f = (double)i;
	switch (dtype) {
	case DT_FLOAT: { float v = (float)f; memcpy(p, &v, 4); break; }
	case DT_DOUBLE: memcpy(p, &f, 8); break;
	case DT_FLOAT16: { uint16_t v = float_to_half((float)f); memcpy(p, &v, 2); break; }
	case DT_BFLOAT16: { uint16_t v = float_to_bf16((float)f); memcpy(p, &v, 2); break; }
	case DT_BOOL: p[0] = i != 0; break;
	case DT_INT8: case DT_UINT8: p[0] = (uint8_t)i; break;
	case DT_INT16: case DT_UINT16: { uint16_t v = (uint16_t)i; memcpy(p, &v, 2); break; }
	case DT_INT32: case DT_UINT32: { uint32_t v = (uint32_t)i; memcpy(p, &v, 4); break; }
	case DT_INT64: case DT_UINT64: memcpy(p, &i, 8); break;
	case DT_INT4: p[0] = (uint8_t)sc_f2i4(f, 1); break;
	case DT_UINT4: p[0] = (uint8_t)sc_f2i4(f, 0); break;
	case DT_FLOAT8E4M3FN: case DT_FLOAT8E4M3FNUZ: case DT_FLOAT8E5M2: case DT_FLOAT8E5M2FNUZ:
		p[0] = sc_f2f8((float)f, dtype - DT_FLOAT8E4M3FN, 1);
		break;
	case DT_FLOAT4E2M1: p[0] = sc_f2f4((float)f); break;
	case DT_FLOAT8E8M0: p[0] = sc_f2e8m0((float)f, 1, SC_E8M0_UP); break;
	default: unreachable("store: no data for this element type");
	}
}

static int64_t load_i(int dtype, const uint8_t *p)
{
	switch (dtype) {
	case DT_BOOL: case DT_UINT8: return p[0];
	case DT_INT8: case DT_INT4: return (int8_t)p[0];
	case DT_UINT4: return p[0];
	case DT_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
	case DT_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
	case DT_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
	case DT_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
	case DT_INT64: case DT_UINT64: { int64_t v; memcpy(&v, p, 8); return v; }
	default: unreachable("load_i: not an integer type");
	}
}

static double load_f(int dtype, const uint8_t *p)
{
	switch (dtype) {
	case DT_FLOAT: { float v; memcpy(&v, p, 4); return v; }
	case DT_DOUBLE: { double v; memcpy(&v, p, 8); return v; }
	case DT_FLOAT16: { uint16_t v; memcpy(&v, p, 2); return half_to_float(v); }
	case DT_BFLOAT16: { uint16_t v; memcpy(&v, p, 2); return bf16_to_float(v); }
	case DT_FLOAT8E4M3FN: case DT_FLOAT8E4M3FNUZ: case DT_FLOAT8E5M2: case DT_FLOAT8E5M2FNUZ:
		return sc_f82f(p[0], dtype - DT_FLOAT8E4M3FN);
	case DT_FLOAT4E2M1: return sc_f42f(p[0]);
	case DT_FLOAT8E8M0: return sc_e8m02f(p[0]);
	default: return (double)load_i(dtype, p);
	}
}

static struct tensor *t_known(struct importer *im, const char *name, int dtype, unsigned rank, const uint64_t *dims,
			      const int64_t *iv, const double *fv)
{
	struct tensor *t = imp_t_new(im, name, dtype, rank, dims);
	size_t es = imp_dt_size(dtype);
	glow_assert(es != 0);
	uint64_t n = imp_t_numel(t);
	uint8_t *raw = arena_alloc(&im->scratch, n * es + 1);
	for (uint64_t k = 0; k < n; k++)
		store(dtype, raw + k * es, iv ? iv[k] : 0, fv ? fv[k] : 0, fv != NULL);
	t->known = true;
	t->generated = true;
	t->raw = raw;
	return t;
}

struct tensor *imp_t_from_ints(struct importer *im, const char *name, int dtype, unsigned rank, const uint64_t *dims,
			   const int64_t *v)
{
	return t_known(im, name, dtype, rank, dims, v, NULL);
}

struct tensor *imp_t_from_floats(struct importer *im, const char *name, int dtype, unsigned rank,
			     const uint64_t *dims, const double *v)
{
	return t_known(im, name, dtype, rank, dims, NULL, v);
}

/* imp_t_ints (ints) and imp_t_floats: the values of t converted once and
 * cached in it, the one way each to check, count and walk them; a float
 * element as an integer is truncated, 0 where it has none. NULL where t is
 * not known, of an unsized type, or larger than ONNX_FOLD_MAX. */
static const void *t_values(struct importer *im, struct tensor *t, bool ints)
{
	if (!t->known || imp_dt_size(t->dtype) == 0)
		return NULL;
	if (ints ? t->ivals != NULL : t->fvals != NULL)
		return ints ? (const void *)t->ivals : (const void *)t->fvals;
	uint64_t n = imp_t_numel(t);
	if (n > ONNX_FOLD_MAX)
		return NULL;
	int64_t *iv = ints ? arena_alloc(&im->scratch, (n + 1) * sizeof *iv) : NULL;
	double *fv = ints ? NULL : arena_alloc(&im->scratch, (n + 1) * sizeof *fv);
	size_t es = imp_dt_size(t->dtype);
	/* real values: the float types, and the float formats held as bits */
	bool fl = imp_dt_is_float(t->dtype) || imp_dt_is_f8(t->dtype) || t->dtype == DT_FLOAT4E2M1;
	for (uint64_t k = 0; k < n; k++) {
		if (!ints)
			fv[k] = t->splat ? (fl ? t->splat_f : (double)t->splat_i) : load_f(t->dtype, t->raw + k * es);
		else if (t->splat)
			iv[k] = fl ? (int64_t)t->splat_f : t->splat_i;
		else if (fl) {
			double f = load_f(t->dtype, t->raw + k * es);
			iv[k] = isfinite(f) && fabs(f) < 9.2e18 ? (int64_t)f : 0;
		} else
			iv[k] = load_i(t->dtype, t->raw + k * es);
	}
	if (ints)
		return t->ivals = iv;
	return t->fvals = fv;
}

const int64_t *imp_t_ints(struct importer *im, struct tensor *t)
{
	return t_values(im, t, true);
}

const double *imp_t_floats(struct importer *im, struct tensor *t)
{
	return t_values(im, t, false);
}

/* ---- TensorProto ---- */

static const char *ext_entry(const Onnx__TensorProto *p, const char *key)
{
	for (size_t i = 0; i < p->n_external_data; i++) {
		const Onnx__StringStringEntryProto *e = p->external_data[i];
		if (e->key && strcmp(e->key, key) == 0)
			return e->value ? e->value : "";
	}
	return NULL;
}

static int parse_u64(const char *s, uint64_t *out)
{
	if (!s || !*s)
		return -1;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || *s == '-')
		return -1;
	*out = v;
	return 0;
}

/* Reads external data (a file relative to the model) into scratch. */
static const uint8_t *read_external(struct importer *im, const Onnx__TensorProto *p, const char *name,
				    uint64_t bytes)
{
	const char *loc = ext_entry(p, "location");
	if (!loc || !*loc) {
		imp_op_err(im, "tensor \"%s\" has external data without a location", name);
		return NULL;
	}
	uint64_t off = 0, len = bytes;
	const char *s = ext_entry(p, "offset");
	if (s && parse_u64(s, &off)) {
		imp_op_err(im, "tensor \"%s\": bad external data offset '%s'", name, s);
		return NULL;
	}
	s = ext_entry(p, "length");
	if (s && parse_u64(s, &len)) {
		imp_op_err(im, "tensor \"%s\": bad external data length '%s'", name, s);
		return NULL;
	}
	if (len != bytes) {
		imp_op_err(im, "tensor \"%s\": external data length %llu does not match its %llu bytes", name,
		       (unsigned long long)len, (unsigned long long)bytes);
		return NULL;
	}
	size_t plen = strlen(loc) + (im->base_dir ? strlen(im->base_dir) : 0) + 2;
	char *path = arena_alloc(&im->scratch, plen);
	if (im->base_dir && loc[0] != '/')
		snprintf(path, plen, "%s/%s", im->base_dir, loc);
	else
		snprintf(path, plen, "%s", loc);
	FILE *f = fopen(path, "rb");
	if (!f) {
		imp_op_err(im, "tensor \"%s\": cannot open external data file '%s'", name, path);
		return NULL;
	}
	uint8_t *buf = arena_alloc(&im->scratch, bytes + 1);
	int ok = off <= (uint64_t)INT64_MAX && fseeko(f, (off_t)off, SEEK_SET) == 0 &&
		 fread(buf, 1, bytes, f) == bytes;
	fclose(f);
	if (!ok) {
		imp_op_err(im, "tensor \"%s\": external data file '%s' is shorter than offset %llu + %llu bytes", name,
		       path, (unsigned long long)off, (unsigned long long)bytes);
		return NULL;
	}
	return buf;
}

/* n 4-bit elements packed two per byte (the first in the low nibble), one
 * per byte: int4 sign-extended, uint4 zero-extended */
static uint8_t *unpack4(struct importer *im, const uint8_t *b, uint64_t n, int dtype)
{
	uint8_t *r = arena_alloc(&im->scratch, n + 1);
	tio_unpack4(b, n, dtype == DT_INT4, r);
	return r;
}

struct tensor *imp_t_from_proto(struct importer *im, const Onnx__TensorProto *p, const char *name)
{
	if (p->n_dims > GLOW_MAX_RANK) {
		imp_op_err(im, "tensor \"%s\" has rank %zu (at most %d)", name, p->n_dims, GLOW_MAX_RANK);
		return NULL;
	}
	uint64_t dims[GLOW_MAX_RANK];
	uint64_t n = 1;
	for (size_t i = 0; i < p->n_dims; i++) {
		if (p->dims[i] < 0) {
			imp_op_err(im, "tensor \"%s\" has a negative dimension", name);
			return NULL;
		}
		dims[i] = (uint64_t)p->dims[i];
		if (!mul_overflow_u64(n, dims[i], &n) || n > ((uint64_t)1 << 40)) {
			imp_op_err(im, "tensor \"%s\" is too large", name);
			return NULL;
		}
	}
	int dtype = p->has_data_type ? p->data_type : DT_UNDEF;
	struct tensor *t = imp_t_new(im, arena_strdup(&im->scratch, name), dtype, (unsigned)p->n_dims, dims);
	size_t es = imp_dt_size(dtype);
	if (es == 0)
		return t; /* unsupported element type: reported if a node uses it */
	uint64_t bytes = n * es, packed = imp_dt_is_4bit(dtype) ? (n + 1) / 2 : bytes;
	t->known = true;
	if (p->has_data_location && p->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
		const uint8_t *ext = read_external(im, p, name, packed);
		t->raw = ext && packed != bytes ? unpack4(im, ext, n, dtype) : (uint8_t *)ext;
		return t->raw ? t : NULL;
	}
	if (p->has_raw_data) {
		if (p->raw_data.len != packed) {
			imp_op_err(im, "tensor \"%s\": raw data has %zu bytes, expected %llu", name, p->raw_data.len,
			       (unsigned long long)packed);
			return NULL;
		}
		if (packed != bytes) {
			t->raw = unpack4(im, p->raw_data.data, n, dtype);
			return t;
		}
		/* An empty tensor's raw_data may be absent (NULL): nothing to copy. */
		t->raw = bytes ? arena_memdup(&im->scratch, p->raw_data.data, bytes) : arena_alloc(&im->scratch, 1);
		return t;
	}
	size_t have;
	switch (dtype) {
	case DT_FLOAT: have = p->n_float_data; break;
	case DT_INT64: have = p->n_int64_data; break;
	case DT_DOUBLE: have = p->n_double_data; break;
	case DT_UINT32: case DT_UINT64: have = p->n_uint64_data; break;
	default: have = p->n_int32_data; break;
	}
	if (have != (imp_dt_is_4bit(dtype) ? packed : n)) {
		imp_op_err(im, "tensor \"%s\": %zu values, expected %llu", name, have,
			   (unsigned long long)(imp_dt_is_4bit(dtype) ? packed : n));
		return NULL;
	}
	/* allocated only now: the count checked above bounds it by the input's
	 * size, whatever the declared dims say */
	uint8_t *raw = arena_alloc(&im->scratch, bytes + 1);
	if (imp_dt_is_4bit(dtype) || imp_dt_is_f8(dtype)) {
		/* onnx.proto: a float8 value's bits per int32, two 4-bit values (low nibble first) per int32 */
		for (uint64_t k = 0; k < have; k++)
			raw[k] = (uint8_t)p->int32_data[k];
		t->raw = imp_dt_is_4bit(dtype) ? unpack4(im, raw, n, dtype) : raw;
		return t;
	}
	for (uint64_t k = 0; k < n; k++) {
		uint8_t *q = raw + k * es;
		switch (dtype) {
		case DT_FLOAT: memcpy(q, &p->float_data[k], 4); break;
		case DT_INT64: memcpy(q, &p->int64_data[k], 8); break;
		case DT_DOUBLE: memcpy(q, &p->double_data[k], 8); break;
		case DT_UINT32: case DT_UINT64: store(dtype, q, (int64_t)p->uint64_data[k], 0, false); break;
		case DT_FLOAT16: case DT_BFLOAT16: { uint16_t v = (uint16_t)p->int32_data[k]; memcpy(q, &v, 2); break; }
		default: store(dtype, q, p->int32_data[k], 0, false); break;
		}
	}
	t->raw = raw;
	return t;
}

/* ---- graph values ---- */

const struct type *imp_t_type(struct importer *im, const struct tensor *t)
{
	int elem = imp_dt_elem(t->dtype);
	if (elem < 0)
		return NULL;
	return imp_ty(im, elem, t->dims, t->rank);
}

uint64_t imp_generated_max(const struct importer *im)
{
	return im->opts->max_generated_bytes ? im->opts->max_generated_bytes : ONNX_GENERATED_MAX;
}

static void generated_over(struct importer *im, const char *what, uint64_t total)
{
	im->generated_over = true;
	imp_op_err(im, "the constants computed at import (folded values, sampling tables) exceed %llu bytes (%llu with %s)",
		   (unsigned long long)imp_generated_max(im), (unsigned long long)total, what);
}

bool imp_generated_fits(struct importer *im, uint64_t bytes)
{
	uint64_t max = imp_generated_max(im);
	if (bytes > max || im->generated_bytes > max - bytes) {
		generated_over(im, "this node's tables", bytes > max ? bytes : im->generated_bytes + bytes);
		return false;
	}
	return true;
}

struct value imp_t_const(struct importer *im, const struct tensor *t, const struct type *type)
{
	const char *name = t->name;
	if (strmap_get(&im->outputs, name)) /* the output placeholder takes the name */
		name = imp_dname(im, name, "const");
	if (module_find_global(im->m, name))
		name = module_fresh_name(im->m, name);
	if (!type)
		return (struct value){NULL, 0};
	if (!t->splat && t->generated) {
		im->generated_bytes += type_bytes(type);
		if (im->generated_bytes > imp_generated_max(im)) {
			char what[300];
			snprintf(what, sizeof what, "\"%.200s\"", name);
			generated_over(im, what, im->generated_bytes);
			return (struct value){NULL, 0};
		}
	}
	struct constant *c = module_add_constant(im->m, name, type, LOC_NONE);
	if (t->splat) {
		c->init = INIT_SPLAT;
		c->splat_f = t->dtype == DT_DOUBLE ? t->splat_f : imp_f32_short((float)t->splat_f);
		c->splat_i = t->splat_i;
		if (!elem_is_float((enum elem_kind)type->elem))
			c->splat_f = (double)t->splat_i;
	} else {
		constant_set_data(im->m, c, t->raw);
	}
	return node_val(&c->n, 0);
}

struct value imp_tval(struct importer *im, struct tensor *t)
{
	struct value none = {NULL, 0};
	if (t->v.node || t->poisoned)
		return t->v;
	if (imp_dt_elem(t->dtype) < 0) {
		imp_op_err(im, "tensor \"%s\" has element type %s, which the graph IR does not support here", t->name,
		       imp_dt_name(t->dtype));
		return none;
	}
	const struct type *type = imp_t_type(im, t);
	if (!type)
		return none;
	if (!t->known)
		unreachable("tval: a tensor with neither a value nor contents");
	t->v = imp_t_const(im, t, type);
	return t->v;
}
