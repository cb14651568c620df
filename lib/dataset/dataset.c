/* dataset.c - IDX and .npy data sets (dataset.h describes the formats and
 * the conversion rules).
 *
 * A file is read whole (through gzread, so gzip and plain files alike) and
 * parsed from memory: the fuzzer (utils/fuzz/fuzz_dataset.c) drives the
 * same parser. Every size is checked against the bytes actually there
 * before anything is allocated from it, so a header that claims more than
 * the file holds costs nothing.
 */
#include "dataset/dataset.h"
#include "import/onnx/tensorio.h"
#include "support/util.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const size_t ds_elem_bytes[] = {1, 1, 2, 4, 8, 4, 8};
static const char *const ds_elem_names[] = {"unsigned byte", "signed byte", "int16", "int32",
					    "int64",         "float",       "double"};

const char *dataset_elem_name(int e) { return e >= 0 && e <= DS_F64 ? ds_elem_names[e] : "unknown"; }

/* "NAME: error: ..." : a location naming the file as a whole */
static struct loc file_loc(struct diag *d, const char *name) { return (struct loc){diag_add_source(d, name, NULL, 0), LOC_FILE_OFF}; }

void dataset_free(struct dataset *ds)
{
	free(ds->name);
	free(ds->data);
	memset(ds, 0, sizeof *ds);
}

/* Sets rank, dims, count and example_elems; -1 when the product of the
 * dimensions times the element size overflows 64 bits. */
static int set_dims(struct dataset *ds, const uint64_t *dims, unsigned rank)
{
	ds->rank = rank;
	uint64_t n = 1;
	for (unsigned i = 0; i < rank; i++) {
		ds->dims[i] = dims[i];
		if (dims[i] && n > UINT64_MAX / dims[i])
			return -1;
		n *= dims[i];
	}
	if (n > UINT64_MAX / 8)
		return -1;
	ds->count = dims[0];
	ds->example_elems = dims[0] ? n / dims[0] : 0;
	return 0;
}

/* ---- IDX ---- */

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static int idx_elem(uint8_t code)
{
	switch (code) {
	case 0x08: return DS_U8;
	case 0x09: return DS_I8;
	case 0x0B: return DS_I16;
	case 0x0C: return DS_I32;
	case 0x0D: return DS_F32;
	case 0x0E: return DS_F64;
	default: return -1;
	}
}

static int idx_parse(const char *name, const uint8_t *buf, size_t len, struct dataset *ds, struct diag *d)
{
	if (len < 4) {
		diag_error(d, file_loc(d, name), "truncated IDX header: %zu bytes, the magic number needs 4", len);
		return -1;
	}
	if (buf[0] || buf[1]) {
		diag_error(d, file_loc(d, name),
			   "not an IDX or .npy file: the first two bytes are 0x%02x 0x%02x, an IDX file starts with zeros",
			   buf[0], buf[1]);
		return -1;
	}
	int e = idx_elem(buf[2]);
	if (e < 0) {
		diag_error(d, file_loc(d, name), "unknown IDX element type 0x%02x at byte offset 2", buf[2]);
		return -1;
	}
	unsigned rank = buf[3];
	if (rank < 1 || rank > GLOW_MAX_RANK) {
		diag_error(d, file_loc(d, name), "IDX rank %u at byte offset 3 is not in [1, %d]", rank, GLOW_MAX_RANK);
		return -1;
	}
	size_t hdr = 4 + 4 * (size_t)rank;
	if (len < hdr) {
		diag_error(d, file_loc(d, name), "truncated IDX header: %zu bytes, %u dimensions need %zu", len, rank,
			   hdr);
		return -1;
	}
	uint64_t dims[GLOW_MAX_RANK];
	for (unsigned i = 0; i < rank; i++) {
		dims[i] = be32(buf + 4 + 4 * i);
		if (dims[i] == 0) {
			diag_error(d, file_loc(d, name), "IDX dimension %u at byte offset %u is 0", i, 4 + 4 * i);
			return -1;
		}
	}
	ds->elem = e;
	size_t es = ds_elem_bytes[e];
	if (set_dims(ds, dims, rank)) {
		diag_error(d, file_loc(d, name), "IDX dimensions overflow: their product is beyond 64 bits");
		return -1;
	}
	uint64_t want = ds->count * ds->example_elems * es;
	uint64_t have = len - hdr;
	if (want != have) {
		diag_error(d, file_loc(d, name),
			   "IDX data at byte offset %zu has %" PRIu64 " bytes; the dimensions say %" PRIu64 " (%s)", hdr,
			   have, want, have < want ? "truncated" : "trailing bytes");
		return -1;
	}
	ds->data = malloc(want ? (size_t)want : 1);
	if (!ds->data) {
		diag_error(d, file_loc(d, name), "cannot allocate %" PRIu64 " bytes of data", want);
		return -1;
	}
	const uint8_t *src = buf + hdr;
	/* big-endian elements to host order (bytes assembled, so any host) */
	for (uint64_t i = 0, n = want / es; i < n; i++, src += es) {
		uint8_t *dst = ds->data + i * es;
		uint64_t v = 0;
		for (size_t b = 0; b < es; b++)
			v = v << 8 | src[b];
		switch (es) {
		case 1: dst[0] = (uint8_t)v; break;
		case 2: { uint16_t x = (uint16_t)v; memcpy(dst, &x, 2); break; }
		case 4: { uint32_t x = (uint32_t)v; memcpy(dst, &x, 4); break; }
		default: memcpy(dst, &v, 8); break;
		}
	}
	return 0;
}

/* ---- .npy ---- */

static int npy_elem(int dtype)
{
	switch (dtype) {
	case TIO_UINT8: return DS_U8;
	case TIO_INT8: return DS_I8;
	case TIO_INT16: return DS_I16;
	case TIO_INT32: return DS_I32;
	case TIO_INT64: return DS_I64;
	case TIO_FLOAT: return DS_F32;
	case TIO_DOUBLE: return DS_F64;
	default: return -1;
	}
}

static int npy_parse_ds(const char *name, const uint8_t *buf, size_t len, struct dataset *ds, struct diag *d)
{
	struct tio_tensor t;
	if (tio_parse_npy(name, buf, len, &t, d))
		return -1;
	int rc = -1;
	int e = npy_elem(t.dtype);
	if (e < 0)
		diag_error(d, file_loc(d, name), "a data set of %s elements is not supported", tio_dtype_name(t.dtype));
	else if (t.rank < 1)
		diag_error(d, file_loc(d, name), "a data set needs a leading dimension of examples; this .npy is a scalar");
	else if (t.dims[0] == 0)
		diag_error(d, file_loc(d, name), "the data set holds no examples (leading dimension 0)");
	else if (set_dims(ds, t.dims, t.rank))
		diag_error(d, file_loc(d, name), "the .npy dimensions overflow 64 bits");
	else {
		ds->elem = e;
		ds->data = t.data;
		t.data = NULL;
		rc = 0;
	}
	tio_free(&t);
	return rc;
}

int dataset_parse(const char *name, const uint8_t *buf, size_t len, struct dataset *ds, struct diag *d)
{
	memset(ds, 0, sizeof *ds);
	int rc = len >= 6 && memcmp(buf, "\x93NUMPY", 6) == 0 ? npy_parse_ds(name, buf, len, ds, d)
							       : idx_parse(name, buf, len, ds, d);
	if (rc)
		dataset_free(ds);
	else
		ds->name = xstrdup(name);
	return rc;
}

int dataset_load(const char *path, struct dataset *ds, struct diag *d)
{
	memset(ds, 0, sizeof *ds);
	gzFile gz = gzopen(path, "rb");
	if (!gz) {
		diag_error(d, file_loc(d, path), "cannot open: %s", errno ? strerror(errno) : "out of memory");
		return -1;
	}
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	int rc = -1;
	for (;;) {
		if (cap - len < (1u << 16)) {
			size_t ncap = cap ? cap * 2 : (1u << 20);
			uint8_t *nb = ncap > cap ? realloc(buf, ncap) : NULL;
			if (!nb) {
				diag_error(d, file_loc(d, path), "cannot allocate %zu bytes to read it", ncap);
				goto out;
			}
			buf = nb;
			cap = ncap;
		}
		size_t want = cap - len > INT_MAX ? INT_MAX : cap - len;
		int got = gzread(gz, buf + len, (unsigned)want);
		if (got < 0) {
			int zerr;
			const char *msg = gzerror(gz, &zerr);
			if (strncmp(msg, path, strlen(path)) == 0 && msg[strlen(path)] == ':')
				msg += strlen(path) + (msg[strlen(path) + 1] == ' ' ? 2 : 1);
			diag_error(d, file_loc(d, path), "cannot read at byte offset %zu: %s", len,
				   zerr == Z_ERRNO ? strerror(errno) : msg);
			goto out;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	/* gzread stops quietly at a gzip stream cut short: ask */
	int zerr;
	const char *msg = gzerror(gz, &zerr);
	size_t pl = strlen(path);
	if (strncmp(msg, path, pl) == 0 && msg[pl] == ':' && msg[pl + 1] == ' ')
		msg += pl + 2; /* zlib's message starts with the path, ours already does */
	if (zerr != Z_OK && zerr != Z_STREAM_END) {
		diag_error(d, file_loc(d, path), "damaged gzip data after %zu bytes: %s", len, msg);
		goto out;
	}
	rc = dataset_parse(path, buf, len, ds, d);
out:
	gzclose(gz);
	free(buf);
	return rc;
}

/* ---- conversion ---- */

/* the exact integer value of an integer element */
static int64_t int_value(const struct dataset *ds, uint64_t k)
{
	const uint8_t *p = ds->data + k * ds_elem_bytes[ds->elem];
	switch (ds->elem) {
	case DS_U8: return p[0];
	case DS_I8: return (int8_t)p[0];
	case DS_I16: { int16_t x; memcpy(&x, p, 2); return x; }
	case DS_I32: { int32_t x; memcpy(&x, p, 4); return x; }
	default: { int64_t x; memcpy(&x, p, 8); return x; }
	}
}

double dataset_value(const struct dataset *ds, uint64_t i, uint64_t j)
{
	uint64_t k = i * ds->example_elems + j;
	const uint8_t *p = ds->data + k * ds_elem_bytes[ds->elem];
	switch (ds->elem) {
	case DS_F32: { float x; memcpy(&x, p, 4); return x; }
	case DS_F64: { double x; memcpy(&x, p, 8); return x; }
	default: return (double)int_value(ds, k);
	}
}

static bool ds_is_float(int e) { return e == DS_F32 || e == DS_F64; }

int dataset_check(const struct dataset *ds, const char *ph, const struct type *ty, struct diag *d)
{
	enum elem_kind k = ty->elem;
	bool to_float = k == EK_FLOAT;
	bool to_int = k == EK_I32 || k == EK_I64 || k == EK_INDEX32 || k == EK_INDEX64;
	char ts[160];
	type_str(ty, ts, sizeof ts);
	if (!to_float && !to_int) {
		diag_error(d, file_loc(d, ds->name), "placeholder '%s' (%s) takes no data set: only float and integer kinds do",
			   ph, ts);
		return -1;
	}
	if (ty->rank < 1) {
		diag_error(d, file_loc(d, ds->name), "placeholder '%s' (%s) has no leading batch dimension", ph, ts);
		return -1;
	}
	uint64_t per = 1;
	for (unsigned i = 1; i < ty->rank; i++)
		per *= ty->dims[i];
	if (per != ds->example_elems) {
		diag_error(d, file_loc(d, ds->name),
			   "an example has %" PRIu64 " elements; placeholder '%s' (%s) takes %" PRIu64 " per example",
			   ds->example_elems, ph, ts, per);
		return -1;
	}
	if (to_int && ds_is_float(ds->elem)) {
		diag_error(d, file_loc(d, ds->name), "%s data cannot feed integer placeholder '%s' (%s)",
			   dataset_elem_name(ds->elem), ph, ts);
		return -1;
	}
	if (to_int && (k == EK_I32 || k == EK_INDEX32) && ds->elem == DS_I64)
		for (uint64_t i = 0, n = ds->count * ds->example_elems; i < n; i++) {
			int64_t v = int_value(ds, i);
			if (v < INT32_MIN || v > INT32_MAX) {
				diag_error(d, file_loc(d, ds->name), "value %" PRId64 " of example %" PRIu64
					   " does not fit placeholder '%s' (%s)", v, i / ds->example_elems, ph, ts);
				return -1;
			}
		}
	return 0;
}

void dataset_gather(const struct dataset *ds, const struct type *ty, const uint64_t *idx, size_t n, void *out)
{
	uint64_t per = ds->example_elems;
	size_t es = elem_size(ty->elem);
	memset(out, 0, (size_t)type_bytes(ty));
	for (size_t b = 0; b < n; b++) {
		uint64_t i = idx[b];
		uint8_t *dst = (uint8_t *)out + b * per * es;
		if (ty->elem == EK_FLOAT) {
			float *f = (float *)(void *)dst;
			if (ds->elem == DS_U8) {
				const uint8_t *src = ds->data + i * per;
				for (uint64_t j = 0; j < per; j++)
					f[j] = (float)src[j] / 255.0f;
			} else if (ds->elem == DS_F32) {
				memcpy(f, ds->data + i * per * 4, per * 4);
			} else {
				for (uint64_t j = 0; j < per; j++)
					f[j] = (float)dataset_value(ds, i, j);
			}
		} else {
			for (uint64_t j = 0; j < per; j++) {
				int64_t v = int_value(ds, i * per + j);
				if (es == 4) {
					int32_t x = (int32_t)v;
					memcpy(dst + j * 4, &x, 4);
				} else {
					memcpy(dst + j * 8, &v, 8);
				}
			}
		}
	}
}
