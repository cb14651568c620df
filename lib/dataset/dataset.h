/* dataset.h - training and test data for glow-run's training run: IDX files
 * (the MNIST format), gzip-compressed or not, and .npy batches.
 *
 * A data set is one tensor whose leading dimension counts the examples: an
 * IDX file of images [N, 28, 28] or labels [N], a .npy file [N, ...]. One
 * example is everything after the leading index.
 *
 * IDX: two zero bytes, an element type byte (0x08 unsigned byte, 0x09
 * signed byte, 0x0B 16-bit, 0x0C 32-bit integer, 0x0D float, 0x0E double),
 * the rank (1 to GLOW_MAX_RANK), the dimensions as big-endian 32-bit
 * integers, then exactly the product of the dimensions of big-endian
 * elements. Anything else (a short header, an unknown type, a zero
 * dimension, fewer or more data bytes than the dimensions say, a product
 * beyond 64 bits) is rejected with the byte offset where it goes wrong.
 * Files are read through zlib's gzread, which reads gzip and plain files
 * alike; a damaged gzip stream is an error.
 *
 * .npy: any file lib/import/onnx/tensorio.h reads (rank 1 at least).
 *
 * Conversion to a placeholder (dataset_gather): an example fits a
 * placeholder of type [B, d1, ...] when it has d1 * ... elements (the
 * shape may differ: 28 x 28 images feed [B, 784] or [B, 1, 28, 28] or
 * [B, 28, 28, 1] in row-major order). Into float kinds: unsigned bytes are
 * scaled to [0, 1] (x / 255, the usual scaling of pixel intensities);
 * every other kind keeps its value. Into integer and index kinds (labels):
 * integer data keeps its value, which must fit the kind; float data is
 * rejected. Other placeholder kinds (quantized, bool) take no data set.
 *
 * Errors are reported as "FILE: error: ..." and never exit.
 */
#ifndef GLOW_DATASET_DATASET_H
#define GLOW_DATASET_DATASET_H

#include "support/diag.h"
#include "support/types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Element kinds of a data set (host byte order in memory). */
enum ds_elem { DS_U8, DS_I8, DS_I16, DS_I32, DS_I64, DS_F32, DS_F64, DS_F16, DS_BF16, DS_BOOL };

struct dataset {
	char *name;     /* the file, for messages */
	int elem;       /* enum ds_elem */
	unsigned rank;  /* at least 1 */
	uint64_t dims[GLOW_MAX_RANK];
	uint64_t count; /* dims[0]: examples */
	uint64_t example_elems; /* product of dims[1..] (1 for rank 1) */
	uint8_t *data;  /* count * example_elems elements (malloc'd) */
};

/* Parses the bytes of a data set file (already decompressed): IDX, or .npy
 * when buf starts with the NumPy magic. name is used in messages. Returns
 * 0, or -1 after reporting. */
int dataset_parse(const char *name, const uint8_t *buf, size_t len, struct dataset *ds, struct diag *d);

/* Reads path (gzip or plain) and parses it. Returns 0, or -1 after
 * reporting. */
int dataset_load(const char *path, struct dataset *ds, struct diag *d);

void dataset_free(struct dataset *ds);

/* Checks that the examples of ds can feed placeholder `ph` of type ty (see
 * the conversion rules above; integer targets: every value is checked).
 * Returns 0, or -1 after reporting. */
int dataset_check(const struct dataset *ds, const char *ph, const struct type *ty, struct diag *d);

/* Writes examples idx[0..n) of ds into out, a buffer of type ty (checked
 * by dataset_check) whose leading dimension is at least n; the rest of out
 * is zeroed. */
void dataset_gather(const struct dataset *ds, const struct type *ty, const uint64_t *idx, size_t n, void *out);

/* Example i's element j as a double (its stored value, unscaled). */
double dataset_value(const struct dataset *ds, uint64_t i, uint64_t j);

/* "unsigned byte", "float", ...: the name of ds_elem e */
const char *dataset_elem_name(int e);

#endif
