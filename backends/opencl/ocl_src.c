/* ocl_src.c - the program text every OpenCL generator writes through
 * (docs/OpenCL.md): a kernel's start (its launch record and KNAME), its
 * #defines (remembered so that the section's end #undefs them), operand
 * pointers at their places in the four regions, the ACT macro, a section
 * of kernels/ocl_kernels.cl, and the launch shapes.
 *
 * It calls no generator and reads no table, so every generator file
 * (ocl_gen.c, ocl_gen_igemm.c, ocl_gen_move.c) and the program driver
 * (ocl_prog.c) depend on it and it on none of them.
 */
#include "backends/opencl/ocl.h"
#include "support/util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* kernels/ocl_kernels.cl as lines (cb-embed) */
extern const char *const ocl_kernel_text[];

/* the names #defined since ocl_src_begin, #undef'd after the section */
static char defined_names[64][16];
static unsigned ndefined;

void ocl_src_define(struct ocl_gen *g, const char *name, const char *fmt, ...)
{
	os_printf(&g->src, "#define %s ", name);
	va_list ap;
	va_start(ap, fmt);
	char buf[4096];
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	os_puts(&g->src, buf);
	os_putc(&g->src, '\n');
	char base[16];
	size_t n = strcspn(name, "(");
	if (n >= sizeof base)
		unreachable("OpenCL macro name too long");
	memcpy(base, name, n);
	base[n] = 0;
	if (ndefined == GLOW_ARRAY_SIZE(defined_names))
		unreachable("too many OpenCL macros in one kernel");
	memcpy(defined_names[ndefined++], base, n + 1);
}

void ocl_src_ints(struct ocl_gen *g, const struct ocl_int_def *defs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ocl_src_define(g, defs[i].name, "%" PRId64, defs[i].value);
}

struct ocl_place ocl_operand_place(struct ocl_gen *g, const struct ir_instr *in, unsigned i)
{
	uint64_t off = 0;
	struct ir_value *root = ir_value_root(in->ops[i].val, &off);
	const struct ocl_place *p = root ? ptrmap_get(&g->place, root) : NULL;
	if (!p)
		unreachable("OpenCL operand without a place");
	struct ocl_place r = {p->region, p->offset + off};
	return r;
}

void ocl_src_ptr(struct ocl_gen *g, const char *name, const char *ctype, const struct ir_instr *in, unsigned i)
{
	struct ocl_place p = ocl_operand_place(g, in, i);
	if (p.region == 1)
		g->direct_mutable = true;
	ocl_src_define(g, name, "((__global %s *)(R%u + %" PRIu64 "))", ctype, p.region, p.offset);
}

void ocl_src_out(struct ocl_gen *g, const struct ir_instr *in)
{
	if (!g->res_add) {
		ocl_src_ptr(g, "PD", "float", in, 0);
		return;
	}
	ocl_src_ptr(g, "PD", "float", g->res_add, 0);
	ocl_src_ptr(g, "PRES", "float", g->res_add, g->res_op);
}

struct ocl_launch *ocl_src_begin(struct ocl_gen *g, const struct ir_instr *in)
{
	if (g->nlaunch == g->caplaunch) {
		g->caplaunch = g->caplaunch ? 2 * g->caplaunch : 64;
		g->launch = xrealloc(g->launch, g->caplaunch * sizeof *g->launch);
	}
	struct ocl_launch *l = &g->launch[g->nlaunch];
	memset(l, 0, sizeof *l);
	l->in = in;
	snprintf(l->name, sizeof l->name, "k%zu", g->nlaunch);
	g->nlaunch++;
	ndefined = 0;
	os_puts(&g->src, "\n/* ");
	ir_instr_print(&g->src, in);
	os_puts(&g->src, " */\n");
	ocl_src_define(g, "KNAME", "%s", l->name);
	return l;
}

void ocl_src_section(struct ocl_gen *g, const char *section)
{
	size_t n = strlen(section);
	bool in = false;
	for (size_t i = 0; ocl_kernel_text[i]; i++) {
		const char *s = ocl_kernel_text[i];
		if (strncmp(s, "//@ ", 4) == 0) {
			if (in)
				break;
			in = strncmp(s + 4, section, n) == 0 && s[4 + n] == 0;
			continue;
		}
		if (in) {
			os_puts(&g->src, s);
			os_putc(&g->src, '\n');
		}
	}
	ocl_src_end(g);
}

void ocl_src_end(struct ocl_gen *g)
{
	for (unsigned i = 0; i < ndefined; i++)
		os_printf(&g->src, "#undef %s\n", defined_names[i]);
	ndefined = 0;
}

void ocl_launch_1d(struct ocl_launch *l, size_t ls, uint64_t n)
{
	l->dims = 1;
	l->local[0] = ls;
	l->global[0] = ocl_round_up((size_t)(n ? n : 1), ls);
}

void ocl_launch_2d(struct ocl_launch *l, size_t l0, size_t l1, size_t n0, size_t n1)
{
	l->dims = 2;
	l->local[0] = l0;
	l->local[1] = l1;
	l->global[0] = ocl_round_up(n0, l0);
	l->global[1] = ocl_round_up(n1, l1);
}

void ocl_src_act(struct ocl_gen *g, bool relu, bool vector)
{
	const char *r = vector ? "fmax((x), 0.0f)" : "((x) > 0.0f ? (x) : 0.0f)";
	ocl_src_define(g, "ACT(x)", "%s", relu ? r : "(x)");
}

