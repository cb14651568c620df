/* typerules_quant.c - the type rules of the per-channel quantized kinds
 * (docs/Quantization.md):
 *
 * ChannelwiseQuantizedConvolution(Input, Filter, Bias) {Convolution's
 *   attributes, filter_scales = [s_0 .. s_OC-1], filter_offsets = [o_0 ..]}
 * ChannelwiseQuantizedFullyConnected(Input, Weights K x M, Bias)
 *   {weight_scales = [s_0 .. s_M-1], weight_offsets = [o_0 ..]}
 *
 * Shapes and attributes are Convolution's and FullyConnected's. Input and
 * the result are quantized; the filter (weights) is quantized with scale 1
 * and offset 0, its real parameters being the attribute lists, one scale
 * (positive, finite) and one offset (in the filter kind's range) per output
 * channel; Bias is float (real values, rounded per channel into the
 * accumulator's scale).
 */
#include "graph/typerules.h"
#include "graph/typerules_check.h"

#include <inttypes.h>
#include <math.h>

/* The per-channel lists (the FLOATS attribute sname of value sv, the INTS
 * attribute oname of value ov) against the output channels: dimension
 * oc_dim of the filter (operand 1), when the filter has the forward rule's
 * rank `rank` (else the forward rule has reported it). */
static void cw_params(struct typed_op *op, const char *sname, const union attr_val *sv, const char *oname,
		      const union attr_val *ov, unsigned rank, unsigned oc_dim)
{
	const unsigned filter = 1;
	const struct type *f = top_optype(op, filter);
	if (f->rank != rank)
		return;
	int64_t n_out = trc_dimv(f, oc_dim);
	if (!trc_op_class(op, 0, CQ) || !trc_op_class(op, filter, CQ) || !trc_op_class(op, 2, CF) ||
	    !trc_res_class(op, 0, CQ))
		return;
	if (f->scale != 1.0f || f->offset != 0)
		top_err(op, "the filter %s must have scale 1 and offset 0 (its parameters are %s and %s)", TYS(f), sname,
			oname);
	unsigned ns = sv->floats.n, no = ov->ints.n;
	const double *s = sv->floats.v;
	const int64_t *o = ov->ints.v;
	if ((int64_t)ns != n_out || (int64_t)no != n_out) {
		top_err(op, "%s and %s need one value per output channel (%" PRId64 "), got %u and %u", sname, oname, n_out,
			ns, no);
		return;
	}
	int64_t lo = f->elem == EK_QUI8 ? 0 : f->elem == EK_QI16 ? -32768 : f->elem == EK_QI32 ? INT32_MIN : -128;
	int64_t hi = f->elem == EK_QUI8 ? 255 : f->elem == EK_QI16 ? 32767 : f->elem == EK_QI32 ? INT32_MAX : 127;
	for (unsigned i = 0; i < ns; i++) {
		if (!(s[i] > 0) || !isfinite(s[i]) || s[i] > 3.4028234663852886e38) {
			top_err(op, "%s[%u] must be a positive finite float, got %g", sname, i, s[i]);
			return;
		}
		if (o[i] < lo || o[i] > hi) {
			top_err(op, "%s[%u] = %" PRId64 " is outside the filter kind's range [%" PRId64 ", %" PRId64 "]", oname, i,
				o[i], lo, hi);
			return;
		}
	}
}

void tr_channelwise_conv(struct typed_op *op)
{
	tr_convolution(op);
	cw_params(op, "filter_scales", top_attr(op, AN_filter_scales), "filter_offsets", top_attr(op, AN_filter_offsets),
		  4, 0);
}

void tr_channelwise_fc(struct typed_op *op)
{
	tr_fully_connected(op);
	cw_params(op, "weight_scales", top_attr(op, AN_weight_scales), "weight_offsets", top_attr(op, AN_weight_offsets),
		  2, 1);
}
