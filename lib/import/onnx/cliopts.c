/* cliopts.c - glow-import's importer options from their command-line
 * spellings (cliopts.h). */
#include "import/onnx/cliopts.h"
#include "support/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Parses the -dim NAME=N bindings; reports and returns -1 on a bad one. */
static int parse_dims(const struct cl_list *l, struct onnx_dim_binding *out, struct diag *d)
{
	for (size_t i = 0; i < l->n; i++) {
		const char *s = l->v[i], *eq = strrchr(s, '=');
		char *end;
		errno = 0;
		long long v = eq ? strtoll(eq + 1, &end, 10) : -1;
		if (!eq || eq == s || !eq[1] || *end || errno || v < 0) {
			diag_error(d, LOC_NONE, "bad -dim '%s' (expected NAME=N with N >= 0)", s);
			return -1;
		}
		out[i].name = xstrndup(s, (size_t)(eq - s));
		out[i].value = v;
	}
	return 0;
}

/* Reads the -freeze-input NAME=FILE tensors into out (tensors[i] owns the
 * data); reports and returns -1 on a bad option or an unreadable file. */
static int read_frozen(const struct cl_list *l, struct onnx_frozen_input *out, struct tio_tensor *tensors,
		       struct diag *d)
{
	int status = 0;
	for (size_t i = 0; i < l->n; i++) {
		const char *s = l->v[i], *eq = strchr(s, '=');
		if (!eq || eq == s || !eq[1]) {
			diag_error(d, LOC_NONE, "bad -freeze-input '%s' (expected NAME=FILE)", s);
			status = -1;
			continue;
		}
		if (tio_read(eq + 1, &tensors[i], d)) {
			status = -1;
			continue;
		}
		out[i].name = xstrndup(s, (size_t)(eq - s));
		out[i].dtype = tensors[i].dtype;
		out[i].rank = tensors[i].rank;
		memcpy(out[i].dims, tensors[i].dims, sizeof out[i].dims);
		out[i].data = tensors[i].data;
	}
	return status;
}

/* Parses the -input-shape NAME=AxBx... options into out[0..l->n); reports
 * and returns -1 on a bad one. */
static int parse_shapes(const struct cl_list *l, struct onnx_input_shape *out, struct diag *d)
{
	int status = 0;
	for (size_t i = 0; i < l->n; i++) {
		const char *s = l->v[i], *eq = strrchr(s, '=');
		struct onnx_input_shape *us = &out[i];
		bool ok = eq && eq != s && eq[1];
		for (const char *p = ok ? eq + 1 : ""; ok && *p;) {
			char *end;
			errno = 0;
			long long v = *p >= '0' && *p <= '9' ? strtoll(p, &end, 10) : -1;
			ok = v >= 0 && !errno && us->rank < GLOW_MAX_RANK && (*end == 0 || (*end == 'x' && end[1]));
			if (ok) {
				us->dims[us->rank++] = (uint64_t)v;
				p = *end ? end + 1 : end;
			}
		}
		if (!ok) {
			diag_error(d, LOC_NONE,
				   "bad -input-shape '%s' (expected NAME=AxBx... with at most %d dimensions, each N >= 0)", s,
				   GLOW_MAX_RANK);
			status = -1;
			us->rank = 0;
			continue;
		}
		us->name = xstrndup(s, (size_t)(eq - s));
		us->opt = "-input-shape";
		us->dtype = -1;
	}
	return status;
}

/* Reads the -example-input NAME=FILE tensors: their shapes and element types
 * into out[0..l->n) (the values are dropped); reports and returns -1 on a
 * bad option or an unreadable file. */
static int read_examples(const struct cl_list *l, struct onnx_input_shape *out, struct diag *d)
{
	int status = 0;
	for (size_t i = 0; i < l->n; i++) {
		const char *s = l->v[i], *eq = strchr(s, '=');
		struct tio_tensor t;
		if (!eq || eq == s || !eq[1]) {
			diag_error(d, LOC_NONE, "bad -example-input '%s' (expected NAME=FILE)", s);
			status = -1;
			continue;
		}
		if (tio_read(eq + 1, &t, d)) {
			status = -1;
			continue;
		}
		out[i].name = xstrndup(s, (size_t)(eq - s));
		out[i].opt = "-example-input";
		out[i].dtype = t.dtype;
		out[i].rank = t.rank;
		memcpy(out[i].dims, t.dims, sizeof out[i].dims);
		tio_free(&t);
	}
	return status;
}

int onnx_cli_opts_read(struct onnx_cli_opts *c, const struct onnx_cli_lists *l, struct diag *d)
{
	size_t nshapes = l->shapes->n + l->examples->n;
	c->shapes = xcalloc(nshapes + 1, sizeof *c->shapes);
	c->dims = xcalloc(l->dims->n + 1, sizeof *c->dims);
	c->frozen = xcalloc(l->freeze->n + 1, sizeof *c->frozen);
	c->ftensors = xcalloc(l->freeze->n + 1, sizeof *c->ftensors);
	c->io = (struct onnx_import_opts){c->dims, l->dims->n, l->opset_check, c->frozen, l->freeze->n, c->shapes,
					  nshapes, l->keep_qdq, 0};
	int bad_shapes = parse_shapes(l->shapes, c->shapes, d);
	bad_shapes |= read_examples(l->examples, c->shapes + l->shapes->n, d);
	if (parse_dims(l->dims, c->dims, d) || read_frozen(l->freeze, c->frozen, c->ftensors, d) || bad_shapes)
		return -1;
	return 0;
}

void onnx_cli_opts_free(struct onnx_cli_opts *c)
{
	for (size_t i = 0; i < c->io.ndims; i++)
		free((char *)c->dims[i].name);
	free(c->dims);
	for (size_t i = 0; i < c->io.nfrozen; i++) {
		free((char *)c->frozen[i].name);
		tio_free(&c->ftensors[i]);
	}
	free(c->frozen);
	free(c->ftensors);
	for (size_t i = 0; i < c->io.nshapes; i++)
		free((char *)c->shapes[i].name);
	free(c->shapes);
}
