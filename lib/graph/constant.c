/* constant.c - materializing initializers (splat, zero, xavier, external
 * file, dense) into payload bytes: init_materialize (initializer.h), shared
 * by the graph IR's constants and the instruction IR's weights, and
 * constant_data on top of it. */
#define _POSIX_C_SOURCE 200809L
#include "graph/graph.h"
#include "graph/initializer.h"
#include "support/fp16.h"
#include "support/scalar.h"
#include "support/textread.h"
#include "support/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Stores v into one element of kind k (quantized kinds take the stored
 * integer, not a real value). */
static void store_elem(enum elem_kind k, uint8_t *p, double f, int64_t i)
{
	switch (k) {
	case EK_FLOAT: { float x = (float)f; memcpy(p, &x, 4); break; }
	case EK_FLOAT16: { uint16_t h = float_to_half((float)f); memcpy(p, &h, 2); break; }
	case EK_BFLOAT16: { uint16_t h = float_to_bf16((float)f); memcpy(p, &h, 2); break; }
	case EK_QI8: { int8_t x = (int8_t)i; memcpy(p, &x, 1); break; }
	case EK_QUI8: { uint8_t x = (uint8_t)i; memcpy(p, &x, 1); break; }
	case EK_QI16: { int16_t x = (int16_t)i; memcpy(p, &x, 2); break; }
	case EK_QI32:
	case EK_I32:
	case EK_INDEX32: { int32_t x = (int32_t)i; memcpy(p, &x, 4); break; }
	case EK_I64:
	case EK_INDEX64: memcpy(p, &i, 8); break;
	case EK_BOOL: *p = i != 0; break;
	case EK_I4: case EK_U4: *p = (uint8_t)i; break; /* one per byte, range checked by the reader */
	/* the float formats held as bits: ONNX's Cast defaults (saturating) */
	case EK_F8E4M3FN: case EK_F8E4M3FNUZ: case EK_F8E5M2: case EK_F8E5M2FNUZ:
		*p = sc_f2f8((float)f, elem_f8_format(k), 1);
		break;
	case EK_F4E2M1: *p = sc_f2f4((float)f); break;
	case EK_F8E8M0: *p = sc_f2e8m0((float)f, 1, SC_E8M0_UP); break;
	default: unreachable("bad element kind");
	}
}

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int load_file(const struct init_spec *s, const char *base_dir, struct loc loc, uint8_t *out, uint64_t bytes,
		     struct diag *d)
{
	char *path = tp_path_join(base_dir, s->file);
	FILE *f = fopen(path, "rb");
	int rc = -1;
	if (!f) {
		diag_error(d, loc, "cannot open weight file '%s': %s", path, strerror(errno));
		goto done;
	}
	if (fseek(f, 0, SEEK_END) != 0) {
		diag_error(d, loc, "cannot seek in weight file '%s'", path);
		goto done;
	}
	long size = ftell(f);
	if (size < 0 || (uint64_t)size < s->file_offset || (uint64_t)size - s->file_offset < bytes) {
		diag_error(d, loc, "weight file '%s' has %ld bytes; %llu needed at offset %llu", path, size,
			   (unsigned long long)bytes, (unsigned long long)s->file_offset);
		goto done;
	}
	if (fseek(f, (long)s->file_offset, SEEK_SET) != 0 || fread(out, 1, (size_t)bytes, f) != bytes) {
		diag_error(d, loc, "cannot read weight file '%s'", path);
		goto done;
	}
	rc = 0;
done:
	if (f)
		fclose(f);
	free(path);
	return rc;
}

int init_materialize(const struct init_spec *s, const struct type *t, const char *base_dir, struct loc loc,
		     void *out, struct diag *d)
{
	enum elem_kind k = (enum elem_kind)t->elem;
	uint64_t n = type_numel(t), bytes = type_bytes(t);
	size_t es = elem_size(k);
	uint8_t *p = out;
	switch (s->kind) {
	case INIT_SPLAT:
		for (uint64_t i = 0; i < n; i++)
			store_elem(k, p + i * es, s->splat_f, s->splat_i);
		return 0;
	case INIT_XAVIER: {
		uint64_t st = s->seed;
		double scale = sqrt(3.0 / (s->fan_in > 0 ? s->fan_in : 1.0));
		for (uint64_t i = 0; i < n; i++) {
			double u = (double)(splitmix64(&st) >> 11) * (1.0 / 9007199254740992.0);
			store_elem(k, p + i * es, (2.0 * u - 1.0) * scale, 0);
		}
		return 0;
	}
	case INIT_FILE:
		return load_file(s, base_dir, loc, p, bytes, d);
	case INIT_DENSE:
		if (s->data) {
			if (bytes) /* an empty payload may have no data */
				memcpy(p, s->data, (size_t)bytes);
			return 0;
		}
		/* fall through */
	case INIT_ZERO:
	default:
		memset(p, 0, (size_t)bytes);
		if (elem_is_quantized(k)) /* zero real value: the offset */
			for (uint64_t i = 0; i < n; i++)
				store_elem(k, p + i * es, 0, t->offset);
		return 0;
	}
}

unsigned init_verify(const struct init_spec *s, const struct type *t, char msgs[INIT_PROBLEMS_MAX][INIT_PROBLEM_LEN])
{
	enum elem_kind k = (enum elem_kind)t->elem;
	unsigned n = 0;
	switch (s->kind) {
	case INIT_DENSE:
		if (!s->data && type_bytes(t) != 0)
			snprintf(msgs[n++], INIT_PROBLEM_LEN, "dense initializer has no data");
		break;
	case INIT_XAVIER:
		if (!elem_is_float(k))
			snprintf(msgs[n++], INIT_PROBLEM_LEN,
				 "xavier initializer needs a floating-point element kind, not %s", elem_name(k));
		if (!(s->fan_in > 0))
			snprintf(msgs[n++], INIT_PROBLEM_LEN, "xavier fan-in must be positive");
		break;
	case INIT_SPLAT:
		if (k == EK_BOOL && s->splat_i != 0 && s->splat_i != 1)
			snprintf(msgs[n++], INIT_PROBLEM_LEN, "bool splat must be 0 or 1");
		break;
	default: break;
	}
	return n;
}

struct init_spec constant_init_spec(const struct constant *c) { return INIT_SPEC_OF(c, (int)c->init); }

const uint8_t *constant_data(struct module *m, struct constant *c, struct diag *d)
{
	if (c->data)
		return c->data;
	const struct type *t = node_type(&c->n);
	struct init_spec s = constant_init_spec(c); /* data NULL: INIT_DENSE sets it at creation */
	uint8_t *p = xcalloc((size_t)type_bytes(t) + 1, 1);
	if (init_materialize(&s, t, m->base_dir, c->n.loc, p, d) != 0) {
		free(p);
		return NULL;
	}
	c->data = p; /* freed by module_destroy (init != INIT_DENSE) */
	return p;
}
