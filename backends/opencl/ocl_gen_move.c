/* ocl_gen_move.c - the OpenCL backend's data-movement kernels: copy,
 * transpose, inserttensor, extracttensor and bitcast, on elements of any kind (moved
 * as unsigned integers of their size, bit for bit).
 *
 * Their index arithmetic depends on the rank and shapes, so the kernel is
 * generated whole rather than taken from kernels/ocl_kernels.cl: one
 * work-item per element moved, its row-major index split into coordinates
 * by constant divisions and recombined with the other side's constant
 * strides. One generator serves the four kinds: OclKernels.def's Arg picks
 * the body and the shape iterated (move_kinds). Select, which moves the
 * element of either side as the condition says, is here too (its kernel a
 * section of kernels/ocl_kernels.cl: its operands share one shape).
 */
#include "backends/opencl/ocl.h"
#include "support/util.h"

#include <inttypes.h>
#include <string.h>

const char *ocl_utype(const struct type *t)
{
	switch (elem_size((enum elem_kind)t->elem)) {
	case 1: return "uchar";
	case 2: return "ushort";
	case 4: return "uint";
	case 8: return "ulong";
	default: return NULL;
	}
}

bool ocl_sup_move(const struct ir_instr *in) { return ocl_utype(in->ops[0].val->type) && ocl_utype(in->ops[1].val->type); }

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

/* A move kernel being generated: the two sides' shapes and row-major
 * strides, and the work: `total` work-items, each moving `len` elements (a
 * row of the last dimension where rows, else one), its index split over
 * the first r dimensions of the shape iterated. */
struct move {
	struct ostream *o;
	const struct type *dt, *st;
	uint64_t ds[GLOW_MAX_RANK], ss[GLOW_MAX_RANK];
	uint64_t len, total;
	int64_t count;
	unsigned r;
	bool rows;
};

/* Appends the loop that moves the `len` elements of a row from s to dd. */
static void move_row(const struct move *m)
{
	os_printf(m->o, "\tfor (size_t j = 0; j < %" PRIu64 "UL; j++)\n\t\tdd[j] = s[j];\n", m->len);
}

/* The bodies: the statements that move work-item i's row or element. */

static void body_copy(const struct move *m, const struct ir_instr *in)
{
	(void)in;
	os_printf(m->o, "\tfor (size_t j = 0; j < %" PRIu64 "UL; j++)\n\t\tPD[i * %" PRIu64 "UL + j] = PS[i * %" PRIu64
		       "UL + j];\n", m->len, m->len, m->len);
}

static void body_transpose(const struct move *m, const struct ir_instr *in)
{
	unsigned n;
	const int64_t *sh = ir_ints(in, AN_shuffle, &n);
	split(m->o, m->dt->dims, m->dt->rank);
	os_puts(m->o, "\tPD[i] = PS[0");
	for (unsigned d = 0; d < m->dt->rank; d++)
		os_printf(m->o, " + c%u * %" PRIu64 "UL", d, m->ss[sh[d]]);
	os_puts(m->o, "];\n");
}

static void body_extract(const struct move *m, const struct ir_instr *in)
{
	unsigned nst;
	const int64_t *start = ir_ints(in, AN_start, &nst);
	split(m->o, m->dt->dims, m->r);
	os_puts(m->o, "\t__global const T_ *s = PS");
	for (unsigned d = 0; d < m->dt->rank; d++) {
		os_puts(m->o, " + (");
		coord(m->o, d, m->r);
		os_printf(m->o, "%" PRId64 "UL) * %" PRIu64 "UL", start[d], m->ss[d]);
	}
	os_printf(m->o, ";\n\t__global T_ *dd = PD + i * %" PRIu64 "UL;\n", m->len);
	move_row(m);
}

/* The source `count` times along `axis`, each copy after the last. */
static void body_insert(const struct move *m, const struct ir_instr *in)
{
	unsigned nst;
	const int64_t *start = ir_ints(in, AN_start, &nst);
	unsigned axis = (unsigned)ir_int(in, AN_axis);
	uint64_t n = m->total / (uint64_t)m->count;
	os_printf(m->o, "\tconst size_t rep = i / %" PRIu64 "UL;\n", n);
	os_puts(m->o, "\t(void)rep;\n");
	os_printf(m->o, "\t{\n\tconst size_t i0 = i %% %" PRIu64 "UL;\n\t{\n\tconst size_t i = i0;\n", n);
	split(m->o, m->st->dims, m->r);
	os_puts(m->o, "\t__global T_ *dd = PD");
	for (unsigned d = 0; d < m->st->rank; d++) {
		os_puts(m->o, " + (");
		coord(m->o, d, m->r);
		os_printf(m->o, "%" PRId64 "UL", start[d]);
		if (d == axis && m->count > 1)
			os_printf(m->o, " + rep * %" PRIu64 "UL", m->st->dims[d]);
		os_printf(m->o, ") * %" PRIu64 "UL", m->ds[d]);
	}
	os_printf(m->o, ";\n\t__global const T_ *s = PS + i * %" PRIu64 "UL;\n", m->len);
	move_row(m);
	os_puts(m->o, "\t}\n\t}\n");
}

/* A bitcast (docs/GraphIR.md, "BitCast"): the stored bits of each element,
 * of one width on both sides, except into a nibble kind (the low four
 * bits, i4 sign-extended) or bool (whether the byte is nonzero), as the
 * interpreter's kern_bitcast. */
static void body_bitcast(const struct move *m, const struct ir_instr *in)
{
	(void)in;
	const char *e;
	switch ((enum elem_kind)m->dt->elem) {
	case EK_I4: e = "(uchar)((x & 8u) ? (x | 0xf0u) : (x & 0x0fu))"; break;
	case EK_U4: case EK_F4E2M1: e = "(uchar)(x & 0x0fu)"; break;
	case EK_BOOL: e = "(uchar)(x != 0)"; break;
	default: e = "x"; break;
	}
	os_printf(m->o, "\tconst T_ x = PS[i];\n\tPD[i] = %s;\n", e);
}

/* The move kinds by OclKernels.def's Arg (OCL_MOVE_*): the body, and the
 * shape the kernel iterates, by rows of its last dimension (contiguous on
 * both sides: a work-item per row, a loop along it) or by elements. */
static const struct {
	void (*body)(const struct move *m, const struct ir_instr *in);
	bool source;   /* iterates the source's shape, else the destination's */
	bool rows;     /* by rows */
	bool repeated; /* `count` times (inserttensor's attribute) */
} move_kinds[OCL_MOVE_COUNT] = {
	[OCL_MOVE_COPY] = {body_copy, false, true, false},
	[OCL_MOVE_TRANSPOSE] = {body_transpose, false, false, false},
	[OCL_MOVE_EXTRACT] = {body_extract, false, true, false},
	[OCL_MOVE_INSERT] = {body_insert, true, true, true},
	[OCL_MOVE_BITCAST] = {body_bitcast, false, false, false},
};

void ocl_gen_move(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	glow_assert(arg < OCL_MOVE_COUNT && !relu); /* OclKernels.def's move rows */
	struct move m;
	m.o = &g->src;
	m.dt = in->ops[0].val->type;
	m.st = in->ops[1].val->type;
	const struct type *it = move_kinds[arg].source ? m.st : m.dt;
	m.count = move_kinds[arg].repeated ? ir_int(in, AN_count) : 1;
	const char *T = ocl_utype(m.dt);
	struct ocl_launch *l = ocl_src_begin(g, in);
	ocl_src_ptr(g, "PD", T, in, 0);
	ocl_src_ptr(g, "PS", T, in, 1);
	ocl_src_define(g, "T_", "%s", T);
	strides(m.dt, m.ds);
	strides(m.st, m.ss);
	m.rows = move_kinds[arg].rows && it->rank > 0;
	m.len = m.rows ? it->dims[it->rank - 1] : 1;
	m.total = (m.len ? type_numel(it) / m.len : 0) * (uint64_t)m.count;
	m.r = m.rows ? it->rank - 1 : it->rank;
	os_printf(m.o, "__kernel void %s(ARGS)\n{\n\tconst size_t i = get_global_id(0);\n", l->name);
	os_printf(m.o, "\tif (i >= %" PRIu64 "UL)\n\t\treturn;\n", m.total);
	move_kinds[arg].body(&m, in);
	os_puts(m.o, "}\n");
	ocl_src_section(g, "none");
	ocl_launch_1d(l, g->gpu ? 256 : (m.rows ? 8 : 32), m.total);
}

bool ocl_sup_select(const struct ir_instr *in)
{
	const struct type *d = in->ops[0].val->type;
	return in->ops[1].val->type->elem == EK_BOOL && ocl_utype(d) && in->ops[2].val->type->elem == d->elem &&
	       in->ops[3].val->type->elem == d->elem;
}

void ocl_gen_select(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	(void)arg;
	(void)relu;
	const char *T = ocl_utype(in->ops[0].val->type);
	uint64_t n = type_numel(in->ops[0].val->type);
	struct ocl_launch *l = ocl_src_begin(g, in);
	ocl_src_define(g, "N", "%" PRIu64 "UL", n);
	ocl_src_ptr(g, "PD", T, in, 0);
	ocl_src_ptr(g, "PC", "uchar", in, 1);
	ocl_src_ptr(g, "PL", T, in, 2);
	ocl_src_ptr(g, "PR", T, in, 3);
	ocl_src_section(g, "select");
	ocl_launch_1d(l, g->gpu ? 256 : 32, n);
}
