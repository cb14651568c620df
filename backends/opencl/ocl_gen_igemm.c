/* ocl_gen_igemm.c - the GPU kernels' convolution and matrix product: the
 * igemm section of kernels/ocl_kernels.cl (docs/OpenCL.md).
 *
 * A GPU gets its arithmetic from many work-items sharing loaded values, not
 * from each work-item's own loop: the igemm kernel computes a convolution
 * of one group (or a fully connected layer or matrix product, the 1x1 case
 * on 1x1 images) as a matrix product tiled over output pixels x output
 * channels, the reduction staged through __local memory. The tile is
 * chosen per instruction from the static shapes: 128 rows (8 per
 * work-item) where there are enough pixels, else 64, and 128 channels
 * where there are at least 128, else 64, so small layers do not compute
 * mostly padding.
 */
#include "backends/opencl/ocl.h"

#include <inttypes.h>
#include <limits.h>

/* Whether every index of the kernel fits its int arithmetic. */
static bool fits_int(uint64_t a, uint64_t b)
{
	return a < (uint64_t)INT_MAX / 2 && b < (uint64_t)INT_MAX / 2;
}

/* The shape's defines, the igemm section and the launch: 16 x 16
 * work-items per RM x RN-blocked tile, one work-group per tile. */
static void igemm_common(struct ocl_gen *g, struct ocl_launch *l, const struct ocl_igemm *s, bool relu)
{
	unsigned rm = s->m >= 1024 ? 8 : 4, rn = s->oc >= 128 ? 8 : 4;
	OCL_SRC_INTS(g, {"M", (int64_t)s->m}, {"OC", (int64_t)s->oc}, {"KD", (int64_t)(s->kh * s->kw * s->c)},
		     {"H", (int64_t)s->h}, {"W", (int64_t)s->w}, {"C", (int64_t)s->c}, {"OH", (int64_t)s->oh},
		     {"OW", (int64_t)s->ow}, {"KH", (int64_t)s->kh}, {"KW", (int64_t)s->kw}, {"SH", (int64_t)s->sh},
		     {"SW", (int64_t)s->sw}, {"DH", (int64_t)s->dh}, {"DW", (int64_t)s->dw}, {"PT", (int64_t)s->pt},
		     {"PL", (int64_t)s->pl}, {"RM", rm}, {"RN", rn});
	ocl_src_act(g, relu, true);
	ocl_src_section(g, "igemm");
	ocl_launch_2d(l, 16, 16, (size_t)((s->oc + 16 * rn - 1) / (16 * rn)) * 16,
		      (size_t)((s->m + 16 * rm - 1) / (16 * rm)) * 16);
}

bool ocl_igemm_fits(const struct ocl_igemm *s)
{
	return fits_int(s->m * s->oc, s->n * s->h * s->w * s->c) && fits_int(s->kh * s->kw * s->c, s->m);
}

void ocl_gen_igemm(struct ocl_gen *g, const struct ir_instr *in, const struct ocl_igemm *s, uint64_t pf_offset,
		   bool relu)
{
	struct ocl_launch *l = ocl_src_begin(g, in);
	ocl_src_out(g, in);
	ocl_src_ptr(g, "PS", "float", in, 1);
	if (s->has_bias)
		ocl_src_ptr(g, "PBIAS", "float", in, 3);
	if (s->packed)
		ocl_src_define(g, "PF", "((__global const float *)(R3 + %" PRIu64 "))", pf_offset);
	else
		ocl_src_ptr(g, "PF", "float", in, 2);
	igemm_common(g, l, s, relu);
}
