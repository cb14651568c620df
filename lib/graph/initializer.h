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
	INIT_VALUE_FIELDS
	const uint8_t *data;  /* INIT_DENSE: type_bytes bytes; NULL: as zero */
};

/* The init_spec of anything with INIT_VALUE_FIELDS and a payload `data`
 * (a constant, an instruction IR weight), of initializer kind k. */
#define INIT_SPEC_OF(x, k)                                                                                       \
	((struct init_spec){.kind = (k),                                                                         \
			    .splat_f = (x)->splat_f,                                                             \
			    .splat_i = (x)->splat_i,                                                             \
			    .fan_in = (x)->fan_in,                                                               \
			    .seed = (x)->seed,                                                                   \
			    .file = (x)->file,                                                                   \
			    .file_offset = (x)->file_offset,                                                     \
			    .data = (x)->data})

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

/* The verifiers' checks of an initializer of a value of type t, both
 * levels: a dense one needs data (unless t has no bytes), a xavier one a
 * floating-point element kind and a positive fan-in, a bool splat 0 or 1.
 * Writes a message per problem into msgs and returns how many; other
 * kinds have none. */
enum { INIT_PROBLEMS_MAX = 2, INIT_PROBLEM_LEN = 128 };
unsigned init_verify(const struct init_spec *s, const struct type *t, char msgs[INIT_PROBLEMS_MAX][INIT_PROBLEM_LEN]);

/* The text of the initializer of a weight of type t, as both formats write
 * it: dense "0x..." (zeros when data is NULL), splat v, zero, xavier f
 * [seed n], file "path" [offset n] (graph/print.c). */
struct ostream;
void init_print(struct ostream *o, const struct init_spec *s, const struct type *t);

/* A relative weight-file path as written in a text read from from_dir, as
 * it must be written in a text in to_dir (path_rebase): file itself when it
 * does not change, else a copy in arena a; NULL with errno set when the file
 * cannot be found. For module_rebase_files and ir_module_rebase_files. */
struct arena;
const char *init_rebase_file(struct arena *a, const char *file, const char *from_dir, const char *to_dir);

/* The end of a rebase to directory to (malloc'd): the module's base
 * directory *base_dir becomes to when every file was rebased (rc 0); to is
 * freed otherwise. Returns rc. */
int init_rebase_end(char **base_dir, char *to, int rc);

/* The initializer of a constant, its payload as data (NULL until
 * materialized). */
struct init_spec constant_init_spec(const struct constant *c);

#endif
