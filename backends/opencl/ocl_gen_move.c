/* ocl_gen_move.c - the OpenCL backend's data-movement kernels: copy,
 * transpose, inserttensor and extracttensor, on elements of any kind (moved
 * as unsigned integers of their size, bit for bit).
 *
 * Their index arithmetic depends on the rank and shapes, so the kernel is
 * generated whole rather than taken from kernels/ocl_kernels.cl: one
 * work-item per element moved, its row-major index split into coordinates
 * by constant divisions and recombined with the other side's constant
 * strides.
 */
#include "backends/opencl/ocl.h"
#include "support/util.h"

#include <inttypes.h>
#include <string.h>

/* The unsigned OpenCL type of an element of t's size, NULL if none. */
static const char *utype(const struct type *t)
{
	switch (elem_size((enum elem_kind)t->elem)) {
	case 1: return "uchar";
	case 2: return "ushort";
	case 4: return "uint";
	case 8: return "ulong";
	default: return NULL;
	}
}

bool ocl_gen_move_supports(const struct ir_instr *in)
{
	switch (in->kind) {
	case IK_copy:
	case IK_transpose:
	case IK_inserttensor:
	case IK_extracttensor: return utype(in->ops[0].val->type) && utype(in->ops[1].val->type);
	default: return false;
	}
}

static void strides(const struct type *t, uint64_t *s)
{
	uint64_t acc = 1;
	for (unsigned i = t->rank; i-- > 0;) {
		s[i] = acc;
		acc *= t->dims[i];
	}
}

/* Appends statements that split index `i` over dims (rank r) into
 * coordinates c0..c{r-1}. */
static void split(struct ostream *o, const uint64_t *dims, unsigned r)
{
	os_puts(o, "\tsize_t t = i;\n");
	for (unsigned d = r; d-- > 0;) {
		os_printf(o, "\tconst size_t c%u = t %% %" PRIu64 "UL;\n", d, dims[d]);
		if (d)
			os_printf(o, "\tt /= %" PRIu64 "UL;\n", dims[d]);
	}
	os_puts(o, "\t(void)t;\n");
}

/* "cD + " for a dimension split into a coordinate (d < r); nothing for the
 * last dimension of a row-wise kernel, which its loop walks. */
static void coord(struct ostream *o, unsigned d, unsigned r)
{
	if (d < r)
		os_printf(o, "c%u + ", d);
}

int ocl_gen_move(struct ocl_gen *g, const struct ir_instr *in)
{
	if (!ocl_gen_move_supports(in))
		return 1;
	const struct type *dt = in->ops[0].val->type, *st = in->ops[1].val->type;
	const char *T = utype(dt);
	struct ocl_launch *l = ocl_gen_begin(g, in);
	ocl_gen_ptr(g, "PD", T, in, 0);
	ocl_gen_ptr(g, "PS", T, in, 1);
	ocl_gen_define(g, "T_", "%s", T);
	struct ostream *o = &g->src;
	uint64_t ds[GLOW_MAX_RANK], ss[GLOW_MAX_RANK];
	strides(dt, ds);
	strides(st, ss);
	/* the shape iterated: the destination's (the source's for insert) */
	const struct type *it = in->kind == IK_inserttensor ? st : dt;
	int64_t count = in->kind == IK_inserttensor ? ir_int(in, "count") : 1;
	/* copy, insert and extract move rows of the last dimension, which are
	 * contiguous on both sides: a work-item per row, a loop along it */
	bool rows = in->kind != IK_transpose && it->rank > 0;
	uint64_t len = rows ? it->dims[it->rank - 1] : 1;
	uint64_t total = (len ? type_numel(it) / len : 0) * (uint64_t)count;
	unsigned r = rows ? it->rank - 1 : it->rank;
	os_printf(o, "__kernel void %s(ARGS)\n{\n\tconst size_t i = get_global_id(0);\n", l->name);
	os_printf(o, "\tif (i >= %" PRIu64 "UL)\n\t\treturn;\n", total);
	unsigned nst = 0;
	const int64_t *start = in->kind == IK_inserttensor || in->kind == IK_extracttensor ? ir_ints(in, "start", &nst)
											     : NULL;
	switch (in->kind) {
	case IK_copy:
		os_printf(o, "\tfor (size_t j = 0; j < %" PRIu64 "UL; j++)\n\t\tPD[i * %" PRIu64 "UL + j] = PS[i * %" PRIu64
			     "UL + j];\n", len, len, len);
		break;
	case IK_transpose: {
		unsigned n;
		const int64_t *sh = ir_ints(in, "shuffle", &n);
		split(o, dt->dims, dt->rank);
		os_puts(o, "\tPD[i] = PS[0");
		for (unsigned d = 0; d < dt->rank; d++)
			os_printf(o, " + c%u * %" PRIu64 "UL", d, ss[sh[d]]);
		os_puts(o, "];\n");
		break;
	}
	case IK_extracttensor:
		split(o, dt->dims, r);
		os_puts(o, "\t__global const T_ *s = PS");
		for (unsigned d = 0; d < dt->rank; d++) {
			os_puts(o, " + (");
			coord(o, d, r);
			os_printf(o, "%" PRId64 "UL) * %" PRIu64 "UL", start[d], ss[d]);
		}
		os_printf(o, ";\n\t__global T_ *dd = PD + i * %" PRIu64 "UL;\n", len);
		os_printf(o, "\tfor (size_t j = 0; j < %" PRIu64 "UL; j++)\n\t\tdd[j] = s[j];\n", len);
		break;
	case IK_inserttensor: {
		unsigned axis = (unsigned)ir_int(in, "axis");
		uint64_t n = total / (uint64_t)count;
		os_printf(o, "\tconst size_t rep = i / %" PRIu64 "UL;\n", n);
		os_puts(o, "\t(void)rep;\n");
		os_printf(o, "\t{\n\tconst size_t i0 = i %% %" PRIu64 "UL;\n\t{\n\tconst size_t i = i0;\n", n);
		split(o, st->dims, r);
		os_puts(o, "\t__global T_ *dd = PD");
		for (unsigned d = 0; d < st->rank; d++) {
			os_puts(o, " + (");
			coord(o, d, r);
			os_printf(o, "%" PRId64 "UL", start[d]);
			if (d == axis && count > 1)
				os_printf(o, " + rep * %" PRIu64 "UL", st->dims[d]);
			os_printf(o, ") * %" PRIu64 "UL", ds[d]);
		}
		os_printf(o, ";\n\t__global const T_ *s = PS + i * %" PRIu64 "UL;\n", len);
		os_printf(o, "\tfor (size_t j = 0; j < %" PRIu64 "UL; j++)\n\t\tdd[j] = s[j];\n\t}\n\t}\n", len);
		break;
	}
	default: unreachable("not a move kind");
	}
	os_puts(o, "}\n");
	ocl_gen_section(g, "none");
	size_t ls = g->gpu ? 256 : (rows ? 8 : 32);
	l->dims = 1;
	l->local[0] = ls;
	l->global[0] = ocl_round_up((size_t)(total ? total : 1), ls);
	return 0;
}
