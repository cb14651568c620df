/* tensorio.c - reading and writing .npy and TensorProto .pb tensors.
 *
 * .npy (format versions 1-3): the magic "\x93NUMPY", a version, a header
 * length and a Python dict literal {'descr': ..., 'fortran_order': False,
 * 'shape': (...)}; the data follows. Only C order is accepted. We write
 * version 1.0 with the header padded to a multiple of 64 bytes.
 *
 * .pb: an ONNX TensorProto decoded by protobuf-c. Values may come in
 * raw_data (little-endian) or in the typed repeated fields (float_data;
 * int32_data for int8/uint8/int16/int32/bool/float16/bfloat16, the 16-bit
 * floats as their bit patterns, float8 one byte per value, int4/uint4 two
 * nibbles per value; int64_data; double_data). External data and strings
 * are refused. We write raw_data (4-bit types packed, tensorio.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "import/onnx/tensorio.h"
#include "onnx/onnx.pb-c.h"
#include "support/io.h"
#include "support/util.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tio_dtype_name(int dtype)
{
	switch (dtype) {
	case TIO_FLOAT: return "float";
	case TIO_UINT8: return "uint8";
	case TIO_INT8: return "int8";
	case TIO_INT16: return "int16";
	case TIO_INT32: return "int32";
	case TIO_INT64: return "int64";
	case TIO_BOOL: return "bool";
	case TIO_FLOAT16: return "float16";
	case TIO_DOUBLE: return "double";
	case TIO_BFLOAT16: return "bfloat16";
	case TIO_FLOAT8E4M3FN: return "float8e4m3fn";
	case TIO_FLOAT8E4M3FNUZ: return "float8e4m3fnuz";
	case TIO_FLOAT8E5M2: return "float8e5m2";
	case TIO_FLOAT8E5M2FNUZ: return "float8e5m2fnuz";
	case TIO_UINT4: return "uint4";
	case TIO_INT4: return "int4";
	case TIO_FLOAT4E2M1: return "float4e2m1";
	case TIO_FLOAT8E8M0: return "float8e8m0";
	default: return "unknown";
	}
}

size_t tio_dtype_size(int dtype)
{
	switch (dtype) {
	case TIO_UINT8: case TIO_INT8: case TIO_BOOL: return 1;
	case TIO_FLOAT8E4M3FN: case TIO_FLOAT8E4M3FNUZ: case TIO_FLOAT8E5M2: case TIO_FLOAT8E5M2FNUZ: return 1;
	case TIO_UINT4: case TIO_INT4: case TIO_FLOAT4E2M1: return 1; /* in memory: one per byte */
	case TIO_FLOAT8E8M0: return 1;
	case TIO_INT16: case TIO_FLOAT16: case TIO_BFLOAT16: return 2;
	case TIO_FLOAT: case TIO_INT32: return 4;
	case TIO_INT64: case TIO_DOUBLE: return 8;
	default: return 0;
	}
}

/* The data type of each element kind (tensorio.h): the integers of a
 * quantized kind are stored as such. */
static const signed char dtype_of[EK_COUNT] = {
	[EK_FLOAT] = TIO_FLOAT, [EK_FLOAT16] = TIO_FLOAT16, [EK_BFLOAT16] = TIO_BFLOAT16,
	[EK_QI8] = TIO_INT8,    [EK_QUI8] = TIO_UINT8,      [EK_QI16] = TIO_INT16,
	[EK_QI32] = TIO_INT32,  [EK_I32] = TIO_INT32,       [EK_INDEX32] = TIO_INT32,
	[EK_I64] = TIO_INT64,   [EK_INDEX64] = TIO_INT64,   [EK_BOOL] = TIO_BOOL,
	[EK_F8E4M3FN] = TIO_FLOAT8E4M3FN, [EK_F8E4M3FNUZ] = TIO_FLOAT8E4M3FNUZ,
	[EK_F8E5M2] = TIO_FLOAT8E5M2, [EK_F8E5M2FNUZ] = TIO_FLOAT8E5M2FNUZ,
	[EK_U4] = TIO_UINT4, [EK_I4] = TIO_INT4,
	[EK_F4E2M1] = TIO_FLOAT4E2M1, [EK_F8E8M0] = TIO_FLOAT8E8M0,
};

/* The 8-bit integer type that holds dtype's elements in a .npy file (and
 * binds to its buffers): int8 for int4, uint8 for uint4, float4e2m1 and
 * the float8 types; dtype itself for the others. */
static int npy_storage(int dtype)
{
	if (dtype == TIO_INT4)
		return TIO_INT8;
	return dtype >= TIO_FLOAT8E4M3FN && dtype <= TIO_FLOAT8E8M0 ? TIO_UINT8 : dtype;
}

/* 4-bit types: bytes of n packed elements */
static bool is_4bit(int dtype) { return dtype == TIO_INT4 || dtype == TIO_UINT4 || dtype == TIO_FLOAT4E2M1; }

void tio_unpack4(const uint8_t *b, uint64_t n, bool is_signed, uint8_t *out)
{
	for (uint64_t i = 0; i < n; i++) {
		unsigned v = (b[i / 2] >> (4 * (i & 1))) & 0xfu;
		out[i] = (uint8_t)(is_signed && v >= 8 ? v | 0xf0u : v);
	}
}

int tio_dtype_of(enum elem_kind k)
{
	glow_assert((unsigned)k < EK_COUNT && dtype_of[k]);
	return dtype_of[k];
}

void tio_free(struct tio_tensor *t)
{
	free(t->data);
	free(t->name);
	memset(t, 0, sizeof *t);
}

/* Sets the shape; 0 if numel * size fits in 2^48 bytes. */
static int set_shape(struct tio_tensor *t, const uint64_t *dims, unsigned rank)
{
	size_t es = tio_dtype_size(t->dtype);
	uint64_t n = 1;
	t->rank = rank;
	for (unsigned i = 0; i < rank; i++) {
		t->dims[i] = dims[i];
		if (!mul_overflow_u64(n, dims[i], &n))
			return -1;
	}
	t->numel = n;
	uint64_t bytes;
	if (!mul_overflow_u64(n, es, &bytes) || bytes > (1ull << 48))
		return -1;
	return 0;
}

/* ---- .npy ---- */

static const struct {
	const char *descr;
	int dtype;
} npy_descrs[] = {
	{"f4", TIO_FLOAT}, {"f2", TIO_FLOAT16}, {"u2", TIO_BFLOAT16}, {"i1", TIO_INT8}, {"u1", TIO_UINT8},
	{"i2", TIO_INT16}, {"i4", TIO_INT32},   {"i8", TIO_INT64},    {"b1", TIO_BOOL}, {"f8", TIO_DOUBLE},
};

/* Finds 'key' in the header dict and returns a pointer after its colon. */
static const char *npy_field(const char *h, const char *key)
{
	char pat[32];
	snprintf(pat, sizeof pat, "'%s'", key);
	const char *p = strstr(h, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	if (*p != ':')
		return NULL;
	p++;
	while (*p == ' ')
		p++;
	return p;
}

static int npy_parse(const char *path, const uint8_t *buf, size_t len, struct tio_tensor *t, struct diag *d)
{
	if (len < 10 || buf[6] < 1 || buf[6] > 3) {
		diag_error(d, LOC_NONE, "%s: unsupported .npy version", path);
		return -1;
	}
	size_t hlen, hstart;
	if (buf[6] == 1) {
		hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
		hstart = 10;
	} else {
		if (len < 12) {
			diag_error(d, LOC_NONE, "%s: truncated .npy header", path);
			return -1;
		}
		hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
		hstart = 12;
	}
	if (hlen > len - hstart) {
		diag_error(d, LOC_NONE, "%s: truncated .npy header", path);
		return -1;
	}
	char *h = xstrndup((const char *)buf + hstart, hlen);
	int rc = -1;
	const char *descr = npy_field(h, "descr"), *fo = npy_field(h, "fortran_order"), *sh = npy_field(h, "shape");
	if (!descr || !fo || !sh || *descr != '\'' || *sh != '(') {
		diag_error(d, LOC_NONE, "%s: malformed .npy header", path);
		goto out;
	}
	if (strncmp(fo, "False", 5) != 0) {
		diag_error(d, LOC_NONE, "%s: Fortran-order .npy files are not supported", path);
		goto out;
	}
	descr++;
	const char *end = strchr(descr, '\'');
	size_t dl = end ? (size_t)(end - descr) : 0;
	t->dtype = 0;
	if (dl == 3 && strchr("<|=", descr[0]))
		for (size_t i = 0; i < GLOW_ARRAY_SIZE(npy_descrs); i++)
			if (memcmp(descr + 1, npy_descrs[i].descr, 2) == 0)
				t->dtype = npy_descrs[i].dtype;
	if (!t->dtype) {
		diag_error(d, LOC_NONE, "%s: unsupported .npy element type '%.*s'", path, (int)dl, descr);
		goto out;
	}
	uint64_t dims[GLOW_MAX_RANK];
	unsigned rank = 0;
	const char *p = sh + 1;
	for (;;) {
		while (*p == ' ' || *p == ',')
			p++;
		if (*p == ')')
			break;
		if (!isdigit((unsigned char)*p) || rank == GLOW_MAX_RANK) {
			diag_error(d, LOC_NONE, "%s: malformed or unsupported .npy shape", path);
			goto out;
		}
		char *e;
		dims[rank++] = strtoull(p, &e, 10);
		p = e;
	}
	if (set_shape(t, dims, rank)) {
		diag_error(d, LOC_NONE, "%s: .npy tensor is too large", path);
		goto out;
	}
	size_t bytes = (size_t)(t->numel * tio_dtype_size(t->dtype));
	if (len - hstart - hlen != bytes) {
		diag_error(d, LOC_NONE, "%s: .npy data has %zu bytes; the header says %zu", path, len - hstart - hlen,
			   bytes);
		goto out;
	}
	t->data = xmalloc(bytes + 1);
	memcpy(t->data, buf + hstart + hlen, bytes);
	rc = 0;
out:
	free(h);
	return rc;
}

int tio_write_npy(const char *path, const struct type *ty, const void *data, struct diag *d)
{
	int dt = npy_storage(tio_dtype_of((enum elem_kind)ty->elem));
	const char *descr = NULL;
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(npy_descrs); i++)
		if (npy_descrs[i].dtype == dt)
			descr = npy_descrs[i].descr;
	char h[512];
	int n = snprintf(h, sizeof h, "{'descr': '%c%s', 'fortran_order': False, 'shape': (",
			 tio_dtype_size(dt) == 1 ? '|' : '<', descr);
	for (unsigned i = 0; i < ty->rank; i++)
		n += snprintf(h + n, sizeof h - (size_t)n, "%" PRIu64 "%s", ty->dims[i],
			      ty->rank == 1 ? "," : i + 1 < ty->rank ? ", " : "");
	n += snprintf(h + n, sizeof h - (size_t)n, "), }");
	while ((10 + n + 1) % 64)
		h[n++] = ' ';
	h[n++] = '\n';
	struct ostream o;
	if (ostream_open(&o, path, d))
		return -1;
	uint8_t pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (uint8_t)(n & 0xff), (uint8_t)(n >> 8)};
	os_write(&o, pre, sizeof pre);
	os_write(&o, h, (size_t)n);
	os_write(&o, data, (size_t)type_bytes(ty));
	return ostream_commit(&o, d) ? -1 : 0;
}

/* ---- .pb ---- */

/* The number of values in the typed repeated field of p for dtype. */
static size_t pb_count(const Onnx__TensorProto *p, int dtype)
{
	switch (dtype) {
	case TIO_FLOAT: return p->n_float_data;
	case TIO_DOUBLE: return p->n_double_data;
	case TIO_INT64: return p->n_int64_data;
	default: return p->n_int32_data;
	}
}

/* The number of typed values (or raw bytes) numel elements of dtype take:
 * 4-bit types pack two per value. */
static uint64_t pb_values(int dtype, uint64_t numel) { return is_4bit(dtype) ? (numel + 1) / 2 : numel; }

/* Copies the typed repeated field of p into t->data. */
static int pb_typed(const char *path, const Onnx__TensorProto *p, struct tio_tensor *t, struct diag *d)
{
	size_t have;
	switch (t->dtype) {
	case TIO_FLOAT: have = p->n_float_data; break;
	case TIO_DOUBLE: have = p->n_double_data; break;
	case TIO_INT64: have = p->n_int64_data; break;
	default: have = p->n_int32_data; break;
	}
	if (is_4bit(t->dtype)) {
		uint8_t *b = xmalloc(have + 1);
		for (size_t i = 0; i < have; i++)
			b[i] = (uint8_t)p->int32_data[i];
		tio_unpack4(b, t->numel, t->dtype == TIO_INT4, t->data);
		free(b);
		return 0;
	}
	if (have != t->numel) {
		diag_error(d, LOC_NONE, "%s: tensor has %zu values; its shape needs %" PRIu64, path, have, t->numel);
		return -1;
	}
	size_t es = tio_dtype_size(t->dtype);
	for (size_t i = 0; i < have; i++) {
		uint8_t *o = t->data + i * es;
		switch (t->dtype) {
		case TIO_FLOAT: memcpy(o, &p->float_data[i], 4); break;
		case TIO_DOUBLE: memcpy(o, &p->double_data[i], 8); break;
		case TIO_INT64: memcpy(o, &p->int64_data[i], 8); break;
		case TIO_INT32: memcpy(o, &p->int32_data[i], 4); break;
		case TIO_INT16: case TIO_FLOAT16: case TIO_BFLOAT16: {
			uint16_t v = (uint16_t)p->int32_data[i];
			memcpy(o, &v, 2);
			break;
		}
		case TIO_BOOL: *o = p->int32_data[i] != 0; break;
		default: *o = (uint8_t)p->int32_data[i]; break;
		}
	}
	return 0;
}

static int pb_parse(const char *path, const uint8_t *buf, size_t len, struct tio_tensor *t, struct diag *d)
{
	Onnx__TensorProto *p = onnx__tensor_proto__unpack(NULL, len, buf);
	if (!p) {
		diag_error(d, LOC_NONE, "%s: not a .npy file or an ONNX TensorProto", path);
		return -1;
	}
	int rc = -1;
	t->dtype = p->data_type;
	if (!tio_dtype_size(p->data_type)) {
		diag_error(d, LOC_NONE, "%s: unsupported tensor data type %d (%s)", path, p->data_type,
			   tio_dtype_name(p->data_type));
		goto out;
	}
	if (p->has_data_location && p->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
		diag_error(d, LOC_NONE, "%s: tensors with external data are not supported", path);
		goto out;
	}
	if (p->n_dims > GLOW_MAX_RANK) {
		diag_error(d, LOC_NONE, "%s: tensor rank %zu exceeds %d", path, p->n_dims, GLOW_MAX_RANK);
		goto out;
	}
	uint64_t dims[GLOW_MAX_RANK];
	for (size_t i = 0; i < p->n_dims; i++) {
		if (p->dims[i] < 0) {
			diag_error(d, LOC_NONE, "%s: negative dimension %" PRId64, path, p->dims[i]);
			goto out;
		}
		dims[i] = (uint64_t)p->dims[i];
	}
	if (set_shape(t, dims, (unsigned)p->n_dims)) {
		diag_error(d, LOC_NONE, "%s: tensor is too large", path);
		goto out;
	}
	size_t bytes = (size_t)(t->numel * tio_dtype_size(t->dtype));
	/* the sizes are checked against the data before allocating: a small
	 * file whose dims claim terabytes is bad input, not out of memory */
	uint64_t vals = pb_values(t->dtype, t->numel);
	if (p->has_raw_data && p->raw_data.len != (is_4bit(t->dtype) ? vals : bytes)) {
		diag_error(d, LOC_NONE, "%s: raw data has %zu bytes; %s<%" PRIu64 " elements> needs %zu", path,
			   p->raw_data.len, tio_dtype_name(t->dtype), t->numel, (size_t)(is_4bit(t->dtype) ? vals : bytes));
		goto out;
	}
	if (!p->has_raw_data && pb_count(p, t->dtype) != vals) {
		diag_error(d, LOC_NONE, "%s: tensor has %zu values; its shape needs %" PRIu64, path,
			   pb_count(p, t->dtype), vals);
		goto out;
	}
	t->data = xcalloc(bytes + 1, 1);
	if (p->has_raw_data && is_4bit(t->dtype)) {
		tio_unpack4(p->raw_data.data, t->numel, t->dtype == TIO_INT4, t->data);
	} else if (p->has_raw_data) {
		if (bytes) /* an empty tensor's raw_data may be NULL */
			memcpy(t->data, p->raw_data.data, bytes);
	} else if (pb_typed(path, p, t, d)) {
		goto out;
	}
	if (p->name && *p->name)
		t->name = xstrdup(p->name);
	rc = 0;
out:
	onnx__tensor_proto__free_unpacked(p, NULL);
	return rc;
}

int tio_write_pb(const char *path, const char *name, const struct type *ty, const void *data, struct diag *d)
{
	Onnx__TensorProto p = ONNX__TENSOR_PROTO__INIT;
	int64_t dims[GLOW_MAX_RANK];
	for (unsigned i = 0; i < ty->rank; i++)
		dims[i] = (int64_t)ty->dims[i];
	p.n_dims = ty->rank;
	p.dims = dims;
	p.has_data_type = 1;
	p.data_type = tio_dtype_of((enum elem_kind)ty->elem);
	p.name = (char *)(uintptr_t)name;
	p.has_raw_data = 1;
	p.raw_data.len = (size_t)type_bytes(ty);
	p.raw_data.data = (uint8_t *)(uintptr_t)data;
	uint8_t *packed = NULL;
	if (is_4bit(p.data_type)) { /* two per byte, the first in the low nibble */
		uint64_t numel = type_numel(ty);
		const uint8_t *e = data;
		packed = xcalloc((size_t)pb_values(p.data_type, numel) + 1, 1);
		for (uint64_t i = 0; i < numel; i++)
			packed[i / 2] |= (uint8_t)((e[i] & 0xfu) << (4 * (i & 1)));
		p.raw_data.len = (size_t)pb_values(p.data_type, numel);
		p.raw_data.data = packed;
	}
	size_t n = onnx__tensor_proto__get_packed_size(&p);
	uint8_t *out = xmalloc(n + 1);
	onnx__tensor_proto__pack(&p, out);
	free(packed);
	struct ostream o;
	int rc = -1;
	if (ostream_open(&o, path, d) == 0) {
		os_write(&o, out, n);
		rc = ostream_commit(&o, d) ? -1 : 0;
	}
	free(out);
	return rc;
}

/* ---- common ---- */

int tio_parse_npy(const char *path, const uint8_t *buf, size_t len, struct tio_tensor *t, struct diag *d)
{
	memset(t, 0, sizeof *t);
	int rc = len >= 6 && memcmp(buf, "\x93NUMPY", 6) == 0 ? npy_parse(path, buf, len, t, d) : -1;
	if (rc && !(len >= 6 && memcmp(buf, "\x93NUMPY", 6) == 0))
		diag_error(d, LOC_NONE, "%s: not a .npy file", path);
	if (rc)
		tio_free(t);
	return rc;
}

int tio_read(const char *path, struct tio_tensor *t, struct diag *d)
{
	memset(t, 0, sizeof *t);
	char *buf = NULL;
	size_t len = 0;
	int rc = read_input(path, &buf, &len, d);
	if (rc)
		return -1;
	if (len >= 6 && memcmp(buf, "\x93NUMPY", 6) == 0)
		rc = npy_parse(path, (const uint8_t *)buf, len, t, d);
	else
		rc = pb_parse(path, (const uint8_t *)buf, len, t, d);
	free(buf);
	if (rc)
		tio_free(t);
	return rc;
}

const char *tio_mismatch(const struct tio_tensor *t, const struct type *ty, char *buf, size_t size)
{
	int want = tio_dtype_of((enum elem_kind)ty->elem);
	bool same = t->rank == ty->rank;
	for (unsigned i = 0; same && i < t->rank; i++)
		same = t->dims[i] == ty->dims[i];
	char tb[160];
	if (same && t->dtype != want && t->dtype == npy_storage(want) && is_4bit(want)) {
		int lo = want == TIO_INT4 ? -8 : 0, hi = want == TIO_INT4 ? 7 : 15; /* float4e2m1: its codes */
		for (uint64_t i = 0; i < t->numel; i++) {
			int v = want == TIO_INT4 ? (int8_t)t->data[i] : t->data[i];
			if (v < lo || v > hi) {
				snprintf(buf, size, "element %" PRIu64 " is %d, out of range for %s", i, v,
					 type_str(ty, tb, sizeof tb));
				return buf;
			}
		}
	}
	if ((t->dtype == want || t->dtype == npy_storage(want)) && same)
		return NULL;
	int n = snprintf(buf, size, "file has %s<", tio_dtype_name(t->dtype));
	for (unsigned i = 0; i < t->rank && n > 0 && (size_t)n < size; i++)
		n += snprintf(buf + n, size - (size_t)n, "%s%" PRIu64, i ? " x " : "", t->dims[i]);
	if (n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, ">, expected %s (stored as %s)", type_str(ty, tb, sizeof tb),
			 tio_dtype_name(want));
	return buf;
}
