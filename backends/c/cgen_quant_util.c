/* cgen_quant_util.c - the helpers every quantized emitter shares
 * (cgen_quant.c: products; cgen_quant_ew.c: pooling and elementwise
 * kinds): element kind codes, stored ranges, the mixed-operand check and
 * the requantization multiplier. In a file of their own so that the two
 * emitter files do not call each other in a circle (cgen_quant.c calls
 * cgen_quant_ew.c's cq_fuse_post; both call these).
 */
#include "backends/c/cgen.h"
#include "backends/c/cgen_quant.h"
#include "quant/quant.h"

/* cgen_quant.h */
int cq_kind(const struct type *t)
{
	switch ((enum elem_kind)t->elem) {
	case EK_QI8: return 0;
	case EK_QUI8: return 1;
	case EK_QI16: return 2;
	case EK_QI32: return 3;
	default: return -1;
	}
}

/* cgen_quant.h */
void cq_limits(const struct type *t, int64_t *lo, int64_t *hi)
{
	static const int64_t l[] = {-128, 0, -32768, INT32_MIN}, h[] = {127, 255, 32767, INT32_MAX};
	int k = cq_kind(t);
	*lo = l[k < 0 ? 0 : k];
	*hi = h[k < 0 ? 0 : k];
}

/* cgen_quant.h */
bool cq_all_quantized(struct cg *g, struct ir_instr *in, unsigned nops)
{
	for (unsigned i = 0; i < nops; i++)
		if (cq_kind(in->ops[i].val->type) < 0) {
			cg_unsupported(g, in, "quantized and float operands mixed");
			return false;
		}
	return true;
}

/* cgen_quant.h: quant_multiplier's mult and shift, as int64 */
void cq_mult(double ratio, int64_t *mult, int64_t *shift)
{
	int32_t m;
	int s;
	quant_multiplier(ratio, &m, &s);
	*mult = m;
	*shift = s;
}
