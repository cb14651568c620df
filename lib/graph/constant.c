/* constant.c - materializing constant initializers (splat, zero, xavier,
 * external file) into payload bytes. */
#define _POSIX_C_SOURCE 200809L
#include "graph/graph.h"
#include "support/fp16.h"
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

static char *resolve(struct module *m, const char *file)
{
	if (file[0] == '/' || !m->base_dir)
		return xstrdup(file);
	size_t a = strlen(m->base_dir), b = strlen(file);
	char *p = xmalloc(a + b + 1);
	memcpy(p, m->base_dir, a);
	memcpy(p + a, file, b + 1);
	return p;
}

static int load_file(struct module *m, struct constant *c, uint8_t *out, uint64_t bytes, struct diag *d)
{
	char *path = resolve(m, c->file);
	FILE *f = fopen(path, "rb");
	int rc = -1;
	if (!f) {
		diag_error(d, c->n.loc, "cannot open weight file '%s': %s", path, strerror(errno));
		goto done;
	}
	if (fseek(f, 0, SEEK_END) != 0) {
		diag_error(d, c->n.loc, "cannot seek in weight file '%s'", path);
		goto done;
	}
	long size = ftell(f);
	if (size < 0 || (uint64_t)size < c->file_offset || (uint64_t)size - c->file_offset < bytes) {
		diag_error(d, c->n.loc, "weight file '%s' has %ld bytes; %llu needed at offset %llu", path, size,
			   (unsigned long long)bytes, (unsigned long long)c->file_offset);
		goto done;
	}
	if (fseek(f, (long)c->file_offset, SEEK_SET) != 0 || fread(out, 1, (size_t)bytes, f) != bytes) {
		diag_error(d, c->n.loc, "cannot read weight file '%s'", path);
		goto done;
	}
	rc = 0;
done:
	if (f)
		fclose(f);
	free(path);
	return rc;
}

const uint8_t *constant_data(struct module *m, struct constant *c, struct diag *d)
{
	if (c->data)
		return c->data;
	const struct type *t = node_type(&c->n);
	enum elem_kind k = (enum elem_kind)t->elem;
	uint64_t n = type_numel(t), bytes = type_bytes(t);
	size_t es = elem_size(k);
	uint8_t *p = xcalloc((size_t)bytes + 1, 1);
	switch (c->init) {
	case INIT_DENSE: /* data set at creation; never NULL unless empty */
	case INIT_ZERO:
		if (k == EK_QI8 || k == EK_QUI8 || k == EK_QI16 || k == EK_QI32) /* zero real value: the offset */
			for (uint64_t i = 0; i < n; i++)
				store_elem(k, p + i * es, 0, t->offset);
		break;
	case INIT_SPLAT:
		for (uint64_t i = 0; i < n; i++)
			store_elem(k, p + i * es, c->splat_f, c->splat_i);
		break;
	case INIT_XAVIER: {
		uint64_t s = c->seed;
		double scale = sqrt(3.0 / (c->fan_in > 0 ? c->fan_in : 1.0));
		for (uint64_t i = 0; i < n; i++) {
			double u = (double)(splitmix64(&s) >> 11) * (1.0 / 9007199254740992.0);
			store_elem(k, p + i * es, (2.0 * u - 1.0) * scale, 0);
		}
		break;
	}
	case INIT_FILE:
		if (load_file(m, c, p, bytes, d) != 0) {
			free(p);
			return NULL;
		}
		break;
	}
	c->data = p; /* freed by module_destroy (init != INIT_DENSE) */
	return p;
}
