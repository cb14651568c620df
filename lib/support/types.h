/* types.h - tensor types shared by the graph IR and the instruction IR.
 *
 * A type is an element kind plus a shape of rank 0..GLOW_MAX_RANK; quantized
 * kinds also carry a scale and an offset. Types are uniqued in a type_ctx, so
 * two types are equal exactly when their pointers are.
 *
 * Text: float<8 x 28 x 28 x 1>, float<> (a scalar), qi8[0.5:-3]<4 x 15>. */
#ifndef GLOW_SUPPORT_TYPES_H
#define GLOW_SUPPORT_TYPES_H

#include "arena.h"
#include "hashmap.h"
#include <stddef.h>
#include <stdint.h>

#define GLOW_MAX_RANK 8

/* ELEM(enum, text, bytes, class): the one table of element kinds.
 * class: F float, Q quantized integer, I integer, X index, B bool,
 * S storage only: the float8 formats (ONNX's FLOAT8E4M3FN, E4M3FNUZ, E5M2,
 * E5M2FNUZ; one byte, the format's bits) and the 4-bit integers (ONNX's
 * INT4 and UINT4; one byte per element, i4 sign-extended, u4 zero-extended:
 * unpacked in memory, packed two per byte only in ONNX tensors), float4e2m1
 * (ONNX's FLOAT4E2M1; one byte per element, the format's 4 bits in the low
 * nibble, packed like int4 in ONNX tensors) and float8e8m0 (ONNX's
 * FLOAT8E8M0, the OCP MX scale format; one byte). Only the
 * conversions (ConvertTo, Quantize/Dequantize arithmetic around them) and
 * data movement read them; every other kind refuses them by its class. */
#define GLOW_ELEM_KINDS(ELEM)                   \
	ELEM(EK_FLOAT, "float", 4, F)           \
	ELEM(EK_FLOAT16, "float16", 2, F)       \
	ELEM(EK_BFLOAT16, "bfloat16", 2, F)     \
	ELEM(EK_QI8, "qi8", 1, Q)               \
	ELEM(EK_QUI8, "qui8", 1, Q)             \
	ELEM(EK_QI16, "qi16", 2, Q)             \
	ELEM(EK_QI32, "qi32", 4, Q)             \
	ELEM(EK_I32, "i32", 4, I)               \
	ELEM(EK_I64, "i64", 8, I)               \
	ELEM(EK_INDEX32, "index32", 4, X)       \
	ELEM(EK_INDEX64, "index64", 8, X)       \
	ELEM(EK_BOOL, "bool", 1, B)             \
	ELEM(EK_F8E4M3FN, "f8e4m3fn", 1, S)     \
	ELEM(EK_F8E4M3FNUZ, "f8e4m3fnuz", 1, S) \
	ELEM(EK_F8E5M2, "f8e5m2", 1, S)         \
	ELEM(EK_F8E5M2FNUZ, "f8e5m2fnuz", 1, S) \
	ELEM(EK_I4, "i4", 1, S)                 \
	ELEM(EK_U4, "u4", 1, S)                 \
	ELEM(EK_F4E2M1, "f4e2m1", 1, S)         \
	ELEM(EK_F8E8M0, "f8e8m0", 1, S)

enum elem_kind {
#define ELEM(e, s, b, c) e,
	GLOW_ELEM_KINDS(ELEM)
#undef ELEM
	EK_COUNT
};

enum elem_class { EC_F, EC_Q, EC_I, EC_X, EC_B, EC_S };

struct type {
	uint8_t elem;  /* enum elem_kind */
	uint8_t rank;
	uint16_t pad0;
	float scale;   /* quantized kinds only, else 0 */
	int32_t offset;
	uint32_t pad1;
	uint64_t dims[GLOW_MAX_RANK]; /* unused dims are 0 */
};

struct type_ctx {
	struct arena arena;
	struct strmap map; /* key: the struct type bytes */
};

void type_ctx_init(struct type_ctx *c);
void type_ctx_free(struct type_ctx *c);

const struct type *type_get(struct type_ctx *c, enum elem_kind k, const uint64_t *dims, unsigned rank);
const struct type *type_get_q(struct type_ctx *c, enum elem_kind k, const uint64_t *dims, unsigned rank,
			      float scale, int32_t offset);
/* same element kind (and quantization), other shape */
const struct type *type_with_dims(struct type_ctx *c, const struct type *t, const uint64_t *dims, unsigned rank);
/* same shape, other (non-quantized) element kind */
const struct type *type_with_elem(struct type_ctx *c, const struct type *t, enum elem_kind k);

const char *elem_name(enum elem_kind k);
size_t elem_size(enum elem_kind k);
enum elem_class elem_class(enum elem_kind k);
/* looks up an element kind name ("index" is index64); -1 if unknown */
int elem_lookup(const char *s, size_t len);
static inline int elem_is_float(enum elem_kind k) { return elem_class(k) == EC_F; }
static inline int elem_is_quantized(enum elem_kind k) { return elem_class(k) == EC_Q; }
static inline int elem_is_index(enum elem_kind k) { return elem_class(k) == EC_X; }
/* the float8 kinds and the 4-bit integers (class S) */
static inline int elem_is_f8(enum elem_kind k) { return k >= EK_F8E4M3FN && k <= EK_F8E5M2FNUZ; }
static inline int elem_is_int4(enum elem_kind k) { return k == EK_I4 || k == EK_U4; }
/* the microscaling formats float4e2m1 and float8e8m0 (support/scalar.h) */
static inline int elem_is_mx(enum elem_kind k) { return k == EK_F4E2M1 || k == EK_F8E8M0; }
/* a float format held as its code in one byte (class S): the float8 kinds,
 * float4e2m1 and float8e8m0 */
static inline int elem_is_float_bits(enum elem_kind k) { return elem_is_f8(k) || elem_is_mx(k); }
/* a float8 kind's format number in support/scalar.h (SC_F8_*: the same
 * order, checked in types.c) */
static inline int elem_f8_format(enum elem_kind k) { return (int)k - EK_F8E4M3FN; }
/* integers usable as indices: i32, i64, index32, index64 */
static inline int elem_is_integer(enum elem_kind k) { return elem_class(k) == EC_I || elem_class(k) == EC_X; }

uint64_t type_numel(const struct type *t);
uint64_t type_bytes(const struct type *t);
static inline int type_same_shape(const struct type *a, const struct type *b)
{
	if (a->rank != b->rank)
		return 0;
	for (unsigned i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return 0;
	return 1;
}
/* element kind and quantization parameters agree */
static inline int type_same_elem(const struct type *a, const struct type *b)
{
	return a->elem == b->elem && a->scale == b->scale && a->offset == b->offset;
}
/* checks a shape: numel * elem bytes must fit in 2^48; returns 0 if too large */
int type_shape_ok(enum elem_kind k, const uint64_t *dims, unsigned rank);

struct ostream;
void type_print(struct ostream *o, const struct type *t);
/* into a buffer, for diagnostics: returns buf */
char *type_str(const struct type *t, char *buf, size_t size);

#endif
