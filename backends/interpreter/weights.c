/* weights.c - the contents of a weight from its initializer.
 *
 * The same values the graph IR gives a constant with the same initializer
 * (lib/graph/constant.c): splat stores its value in the element kind
 * (quantized and integer kinds store splat_i as is), zero stores zeros
 * (quantized kinds their offset), xavier draws uniform values in
 * +-sqrt(3 / fan_in) from splitmix64 seeded with the weight's seed, file
 * reads the bytes at the offset, dense copies the data.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/interpreter/kern.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int load_file(struct ir_module *m, const struct ir_weight *w, void *out, uint64_t bytes, struct diag *d)
{
	char *path;
	if (w->file[0] == '/' || !m->base_dir) {
		path = xstrdup(w->file);
	} else {
		size_t a = strlen(m->base_dir), b = strlen(w->file);
		path = xmalloc(a + b + 1);
		memcpy(path, m->base_dir, a);
		memcpy(path + a, w->file, b + 1);
	}
	int rc = -1;
	FILE *f = fopen(path, "rb");
	if (!f) {
		diag_error(d, w->v.loc, "cannot open weight file '%s': %s", path, strerror(errno));
		goto done;
	}
	if (fseek(f, 0, SEEK_END) != 0) {
		diag_error(d, w->v.loc, "cannot seek in weight file '%s'", path);
		goto done;
	}
	long size = ftell(f);
	if (size < 0 || (uint64_t)size < w->file_offset || (uint64_t)size - w->file_offset < bytes) {
		diag_error(d, w->v.loc, "weight file '%s' has %ld bytes; %llu needed at offset %llu", path, size,
			   (unsigned long long)bytes, (unsigned long long)w->file_offset);
		goto done;
	}
	if (fseek(f, (long)w->file_offset, SEEK_SET) != 0 || fread(out, 1, (size_t)bytes, f) != bytes) {
		diag_error(d, w->v.loc, "cannot read weight file '%s'", path);
		goto done;
	}
	rc = 0;
done:
	if (f)
		fclose(f);
	free(path);
	return rc;
}

int interp_weight_init(struct ir_module *m, const struct ir_weight *w, void *out, struct diag *d)
{
	const struct type *t = w->v.type;
	size_t n = numel(t), bytes = (size_t)type_bytes(t);
	bool q = elem_is_quantized(ekind(t));
	switch (w->init) {
	case INIT_DENSE:
		if (bytes) /* an empty weight has no data */
			memcpy(out, w->data, bytes);
		return 0;
	case INIT_SPLAT:
		for (size_t i = 0; i < n; i++) {
			if (elem_is_float(ekind(t)))
				st_f(t, out, i, w->splat_f);
			else
				st_i(t, out, i, w->splat_i);
		}
		return 0;
	case INIT_XAVIER: {
		uint64_t s = w->seed;
		double scale = sqrt(3.0 / (w->fan_in > 0 ? w->fan_in : 1.0));
		for (size_t i = 0; i < n; i++) {
			double u = (double)(splitmix64(&s) >> 11) * (1.0 / 9007199254740992.0);
			st_f(t, out, i, (2.0 * u - 1.0) * scale);
		}
		return 0;
	}
	case INIT_FILE:
		return load_file(m, w, out, bytes, d);
	case INIT_ZERO:
	default: /* IR_INIT_NONE */
		memset(out, 0, bytes);
		if (q)
			for (size_t i = 0; i < n; i++)
				st_i(t, out, i, t->offset);
		return 0;
	}
}
