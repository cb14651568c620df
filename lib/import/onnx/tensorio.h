/* tensorio.h - tensors in files: NumPy .npy and ONNX TensorProto .pb.
 *
 * A file holds one tensor: a data type, a shape and little-endian element
 * bytes. Data types are named by their ONNX TensorProto.DataType codes
 * (TIO_FLOAT = 1, ...), also for .npy files, whose descr maps as
 *   <f4 float  <f2 float16  <u2 bfloat16 (raw bits; NumPy has no bfloat16)
 *   |i1 int8   |u1 uint8    <i2 int16  <i4 int32  <i8 int64  |b1 bool
 *   <f8 double (read only)
 * Element kinds of the IR correspond to data types one way (tio_dtype_of):
 * qi8 int8, qui8 uint8, qi16 int16, qi32/i32/index32 int32, i64/index64
 * int64; quantized tensors are stored as their integers, the scale and
 * offset stay with the IR type. The float8 kinds and i4/u4 are ONNX's
 * FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, INT4 and UINT4
 * (17..22), held one element per byte in memory (tio_tensor.data; 4-bit
 * values sign- or zero-extended). In .pb files they follow onnx.proto: one
 * byte per float8 element (raw_data, or one int32_data value each), two
 * 4-bit elements per byte, the first in the low nibble (raw_data, or two
 * per int32_data value). NumPy has none of them: a .npy file holds a float8
 * kind's bits as uint8 (|u1), u4 as uint8 and i4 as int8 (|i1), and a
 * uint8 or int8 tensor (either file format) binds to such a buffer, 4-bit
 * values range checked. f4e2m1 and f8e8m0 are FLOAT4E2M1 (23, packed like
 * the 4-bit integers, its 4-bit code per element) and FLOAT8E8M0 (24, one
 * byte): in .npy files their codes as uint8, f4e2m1's range checked.
 *
 * This lives beside the ONNX importer because .pb files are decoded with
 * the protobuf-c code generated from onnx.proto. Nothing here exits; errors
 * go to the diag as "tool: error: FILE: ...".
 */
#ifndef GLOW_IMPORT_ONNX_TENSORIO_H
#define GLOW_IMPORT_ONNX_TENSORIO_H

#include "support/diag.h"
#include "support/types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum tio_dtype {
	TIO_FLOAT = 1,
	TIO_UINT8 = 2,
	TIO_INT8 = 3,
	TIO_INT16 = 5,
	TIO_INT32 = 6,
	TIO_INT64 = 7,
	TIO_BOOL = 9,
	TIO_FLOAT16 = 10,
	TIO_DOUBLE = 11,
	TIO_BFLOAT16 = 16,
	TIO_FLOAT8E4M3FN = 17,
	TIO_FLOAT8E4M3FNUZ = 18,
	TIO_FLOAT8E5M2 = 19,
	TIO_FLOAT8E5M2FNUZ = 20,
	TIO_UINT4 = 21,
	TIO_INT4 = 22,
	TIO_FLOAT4E2M1 = 23,
	TIO_FLOAT8E8M0 = 24,
};

/* A tensor read from a file. data holds numel * tio_dtype_size bytes
 * (malloc'd, at least one byte); name is the TensorProto's name (NULL for
 * .npy or an unnamed proto). */
struct tio_tensor {
	int dtype; /* enum tio_dtype */
	unsigned rank;
	uint64_t dims[GLOW_MAX_RANK];
	uint64_t numel;
	uint8_t *data;
	char *name;
};

/* "float", "int8", ... ("unknown" for other codes) */
const char *tio_dtype_name(int dtype);
/* bytes per element, 0 for unsupported codes */
size_t tio_dtype_size(int dtype);
/* the data type that stores element kind k */
int tio_dtype_of(enum elem_kind k);

/* Unpacks n 4-bit elements (two per byte of b, the first in the low
 * nibble) into out, one per byte: sign-extended when is_signed (int4). */
void tio_unpack4(const uint8_t *b, uint64_t n, bool is_signed, uint8_t *out);

/* Reads path: .npy if it starts with the NumPy magic, else a TensorProto.
 * Returns 0, or -1 after reporting. */
int tio_read(const char *path, struct tio_tensor *t, struct diag *d);
void tio_free(struct tio_tensor *t);
/* Parses the bytes of a .npy file (buf, len bytes) as tio_read does; path
 * names it in messages. Returns 0, or -1 after reporting. */
int tio_parse_npy(const char *path, const uint8_t *buf, size_t len, struct tio_tensor *t, struct diag *d);

/* Writes a tensor of type imp_ty (data: type_bytes(ty) bytes) whole or not at
 * all. The .pb form carries `name`. Return 0, or -1 after reporting. */
int tio_write_npy(const char *path, const struct type *ty, const void *data, struct diag *d);
int tio_write_pb(const char *path, const char *name, const struct type *ty, const void *data, struct diag *d);

/* Checks that t can be bound to a buffer of type imp_ty (same shape; dtype
 * tio_dtype_of(ty->elem)). Returns NULL if it can, else a message describing
 * the mismatch in buf. */
const char *tio_mismatch(const struct tio_tensor *t, const struct type *ty, char *buf, size_t size);

#endif
