/* initializer.h - the values of a splat, zero, xavier, file or dense
 * initializer, for both IR levels.
 *
 * A graph IR constant (constant_data, lib/graph/constant.c) and an
 * instruction IR weight (the interpreter's interp_weight_init, which the C
 * backend also uses for its weight blobs) describe their initial contents
 * with the same fields; this one function turns them into element bytes, so
 * a constant and the weight IRGen makes of it hold the same values.
 */
#ifndef GLOW_GRAPH_INITIALIZER_H
#define GLOW_GRAPH_INITIALIZER_H

#include "graph/graph.h"

/* An initializer: the fields struct constant and struct ir_weight share. */
struct init_spec {
	int kind;             /* enum init_kind; any other value: zeros */
	double splat_f;       /* INIT_SPLAT on float kinds */
	int64_t splat_i;      /* INIT_SPLAT on integer, quantized and bool kinds */
	double fan_in;        /* INIT_XAVIER */
	uint64_t seed;        /* INIT_XAVIER */
	const char *file;     /* INIT_FILE: the path as written */
	uint64_t file_offset; /* INIT_FILE */
	const uint8_t *data;  /* INIT_DENSE: type_bytes bytes; NULL: as zero */
};

/* Writes the type_bytes(t) bytes of the initializer to out:
 *   splat   its value in every element (float kinds take splat_f, rounded
 *           to the kind; the others store splat_i as is)
 *   zero    zeros; quantized kinds their offset (a real value of zero)
 *   xavier  uniform values in +-sqrt(3 / fan_in) (fan_in <= 0: 1) drawn
 *           from splitmix64 seeded with seed (float kinds only)
 *   file    the bytes at file_offset of the file, a relative path taken
 *           from base_dir (NULL: the working directory)
 *   dense   a copy of data
 * Returns 0, or -1 after reporting at loc why a file cannot be read. */
int init_materialize(const struct init_spec *s, const struct type *t, const char *base_dir, struct loc loc,
		     void *out, struct diag *d);

#endif
