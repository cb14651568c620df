/* vec.h - type-generic growable arrays.
 *   VEC(int) v = {0}; vec_push(&v, 3); v.data[0]; vec_free(&v);
 */
#ifndef GLOW_SUPPORT_VEC_H
#define GLOW_SUPPORT_VEC_H

#include "util.h"
#include <stdlib.h>

#define VEC(T) struct { T *data; size_t len, cap; }

#define vec_reserve(v, n) \
	((v)->data = xgrow((v)->data, &(v)->cap, (n), sizeof(*(v)->data)))
#define vec_push(v, x) \
	(vec_reserve((v), (v)->len + 1), (v)->data[(v)->len++] = (x))
#define vec_pop(v) ((v)->data[--(v)->len])
#define vec_last(v) ((v)->data[(v)->len - 1])
#define vec_clear(v) ((v)->len = 0)
#define vec_free(v) (free((v)->data), (v)->data = NULL, (v)->len = (v)->cap = 0)

#endif
