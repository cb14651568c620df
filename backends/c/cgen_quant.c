/* cgen_quant.c - the emitters of quantized instructions (the QEMIT rows of
 * Emitters.def): integer kernels bit for bit the interpreter's
 * (backends/interpreter/k_quant.c, docs/Quantization.md "Arithmetic").
 *
 * Everything that depends only on types and constants is computed here,
 * with the interpreter's own formulas (quant_multiplier, the bias rule):
 * requantization multipliers and shifts, the bias in accumulator units,
 * the zero-point corrections of the 8-bit products, the tables of sigmoid
 * and tanh. The bundle then does integer arithmetic only.
 *
 * Products (convolution, grouped and per-channel; fully connected;
 * matmul) with 8-bit operands, a constant filter and K <= 32768 take the
 * packed u8 x s8 kernel (kernels/cb_qconv.c): the filter stored in the
 * constants region as int8 panels, one byte per weight. The rest
 * (16-bit operands, depthwise layers, weights that are not constants,
 * batchmatmul) take the reference product of kernels/cb_qmisc.c.
 */
#include "backends/c/cgen.h"
#include "backends/c/cgen_ops.h"
#include "backends/c/cgen_quant.h"
#include "quant/quant.h"
#include "support/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- products ---- */

/* A product's per-output-channel parameters (all groups' channels):
 * weight scale and zero point, bias in accumulator units, requantization;
 * one allocation (mem). */
struct cq_chan {
	size_t n;
	double *wscale;
	int64_t *woff, *bias, *mult, *shift;
	void *mem;
};

static void cq_chan_free(struct cq_chan *c) { free(c->mem); }

/* Element i of raw bytes p of type t: stored integer (quantized) or real. */
static double cq_elem(const struct type *t, const uint8_t *p, size_t i, int64_t *q)
{
	switch ((enum elem_kind)t->elem) {
	case EK_QI8: *q = ((const int8_t *)p)[i]; break;
	case EK_QUI8: *q = p[i]; break;
	case EK_QI16: { int16_t v; memcpy(&v, p + 2 * i, 2); *q = v; break; }
	case EK_QI32: { int32_t v; memcpy(&v, p + 4 * i, 4); *q = v; break; }
	default: { float f; memcpy(&f, p + 4 * i, 4); *q = 0; return f; }
	}
	return 0;
}

/* Fills c for n output channels of a product of input type xt, weight
 * type wt (per-channel lists scales/offsets, or NULL), output type dt and
 * bias bw (a constant, or NULL: none); false after reporting. The bias
 * rule is the interpreter's: a quantized bias of scale sx sw (rounded to
 * float) adds its centred value, another one is requantized into sx sw, a
 * float one rounded half to even. */
static bool cq_chan_get(struct cg *g, size_t n, const struct type *xt, const struct type *wt,
			const double *scales, const int64_t *offsets, const struct type *dt, struct ir_weight *bw,
			struct cq_chan *c)
{
	c->n = n;
	c->mem = xmalloc(5 * 8 * n + 1);
	c->wscale = c->mem;
	c->woff = (int64_t *)c->mem + n;
	c->bias = c->woff + n;
	c->mult = c->bias + n;
	c->shift = c->mult + n;
	uint8_t *bd = bw ? cg_weight_data(g, bw) : NULL;
	if (bw && !bd)
		return false;
	for (size_t o = 0; o < n; o++) {
		c->wscale[o] = scales ? (double)(float)scales[o] : (double)wt->scale;
		c->woff[o] = scales ? offsets[o] : wt->offset;
		double acc = (double)xt->scale * c->wscale[o];
		c->bias[o] = 0;
		if (bd) {
			int64_t q;
			double f = cq_elem(bw->v.type, bd, o, &q);
			if (cq_kind(bw->v.type) < 0)
				c->bias[o] = (int64_t)nearbyint(f / acc);
			else if (bw->v.type->scale == (float)acc)
				c->bias[o] = q - bw->v.type->offset;
			else {
				int64_t m, s;
				cq_mult((double)bw->v.type->scale / acc, &m, &s);
				c->bias[o] = quant_requant(q - bw->v.type->offset, (int32_t)m, (int)s);
			}
		}
		cq_mult(acc / dt->scale, &c->mult[o], &c->shift[o]);
	}
	free(bd);
	return true;
}

/* The shape of a product in the order of struct cb_qref_args' first
 * fields: n h w c oh ow oc kh kw sh sw pt pl dh dw groups (c and oc per
 * group). */
struct cq_shape {
	int64_t v[16];
};

/* Emits the reference product (kernels/cb_qmisc.c cb_qref): weights read
 * at run time with strides wso (output channel), wsk (k), wsb (batch, rpb
 * rows per batch). */
static void cq_emit_ref(struct cg *g, const struct cq_shape *sh, struct ir_value *x, struct ir_value *w,
			struct ir_value *d, int64_t wso, int64_t wsk, int64_t wsb, int64_t rpb, const struct cq_chan *c)
{
	int64_t lo, hi;
	cq_limits(d->type, &lo, &hi);
	unsigned id = g->uniq++;
	unsigned two = cg_i64_table(g, c->woff, (unsigned)c->n), tb = cg_i64_table(g, c->bias, (unsigned)c->n),
		 tm = cg_i64_table(g, c->mult, (unsigned)c->n), ts = cg_i64_table(g, c->shift, (unsigned)c->n);
	os_printf(g->decls, "static const struct cb_qref_args qr%u = {", id);
	for (int i = 0; i < 16; i++)
		os_printf(g->decls, "%" PRId64 ", ", sh->v[i]);
	os_printf(g->decls,
		  "%d, %d, %d, %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
		  ", %" PRId64 "};\n",
		  cq_kind(x->type), cq_kind(w->type), cq_kind(d->type), (int64_t)x->type->offset, wso, wsk, wsb, rpb,
		  (int64_t)d->type->offset, lo, hi);
	char a[96], b[96], o[96];
	os_printf(g->body, "\tcb_qref(&qr%u, %s, %s, tb%u, tb%u, tb%u, tb%u, %s);\n", id, PTR(x, "void", a),
		  PTR(w, "void", b), two, tb, tm, ts, PTR(d, "void", o));
}

/* Whether a product takes the packed 8-bit kernel: 8-bit input and
 * output, a constant qi8 filter, K small enough for exact int32 dot
 * products, not depthwise. */
static bool cq_packed_ok(const struct cq_shape *sh, struct ir_value *x, struct ir_weight *fw, struct ir_value *d)
{
	int xk = cq_kind(x->type), dk = cq_kind(d->type);
	int64_t k = sh->v[7] * sh->v[8] * sh->v[3], zx = x->type->offset + (xk == 0 ? 128 : 0);
	bool depthwise = sh->v[3] == 1 && sh->v[6] == 1 && sh->v[15] > 1;
	/* padded positions are packed as the zero point: it must be a byte */
	return fw && fw->v.type->elem == EK_QI8 && (xk == 0 || xk == 1) && (dk == 0 || dk == 1) && k <= 32768 &&
	       !depthwise && zx >= 0 && zx <= 255;
}

/* the slot of channel j of a panel in its mult, shift and half arrays
 * (cb_qperm: per 16 channels the even ones, then the odd ones) */
static size_t cq_perm(size_t j) { return (j & ~(size_t)15) | ((j & 1) << 3) | ((j & 15) >> 1); }

/* Stores int32 v as element j of the int32 array at int64 slots p (the
 * constants are raw bytes in the target's order, as the int64 ones). */
static void cq_put_i32(int64_t *p, size_t j, int32_t v) { memcpy((char *)p + 4 * j, &v, 4); }

/* The address of byte off of v as uint8_t * (buf: 128 bytes) */
static const char *cq_ptr_at(struct cg *g, struct ir_value *v, int64_t off, char *buf, size_t n)
{
	char p[96];
	cg_ptr(g, v, "uint8_t", p, sizeof p);
	if (off)
		snprintf(buf, n, "(%s + %" PRId64 ")", p, off);
	else
		snprintf(buf, n, "%s", p);
	return buf;
}

/* Emits the packed 8-bit product of in: the filter (raw bytes fd of
 * groups x oc rows, row o's k-th weight at o * so + k * sk) packed into
 * int8 panels, the channel constants into blocks per panel, then the call
 * (with the elementwise kinds that follow fused, cq_fuse_post). */
static void cq_emit_packed(struct cg *g, struct ir_instr *in, const struct cq_shape *sh, struct ir_value *x,
			   const int8_t *fd, size_t so, size_t sk, struct ir_value *d, const struct cq_chan *c)
{
	/* elementwise kinds after the product run in its epilogue */
	struct ir_value *out = d, *copy_to = NULL, *res, *big;
	struct ir_instr *last;
	char pbuf[512];
	int64_t lo, hi;
	cq_limits(d->type, &lo, &hi);
	const char *post = cq_fuse_post(g, in, &out, &copy_to, &last, &res, &lo, &hi, pbuf, sizeof pbuf);
	const int64_t *v = sh->v;
	/* the result written straight into a concatenation that copies it
	 * (a fused operand is laid out as the product's result: not then) */
	int64_t ooff = 0, ostride = v[15] * v[6];
	if (!copy_to && !res && cg_into_concat(g, in, last, out, x, NULL, &big, &ooff, &ostride))
		out = big;
	size_t groups = (size_t)v[15], oc = (size_t)v[6], k = (size_t)(v[7] * v[8] * v[3]);
	size_t kq = (k + 3) / 4, np = (oc + CG_QNR - 1) / CG_QNR;
	int xk = cq_kind(x->type);
	int64_t zx = x->type->offset + (xk == 0 ? 128 : 0);
	size_t wbytes = groups * np * kq * 4 * CG_QNR, chn = groups * np * CG_QCH;
	int8_t *wp = xcalloc(wbytes + 1, 1);
	int64_t *ch = xcalloc(chn + 1, sizeof *ch);
	bool rowsum = false, zw_byte = true;
	int64_t amax = 0; /* the largest |accumulator| the interpreter can form */
	int64_t minshift = 62;
	int64_t xr = zx > 255 - zx ? zx : 255 - zx; /* max |u - zx| */
	for (size_t gi = 0; gi < groups; gi++)
		for (size_t o = 0; o < oc; o++) {
			size_t row = gi * oc + o, p = o / CG_QNR, j = o % CG_QNR;
			int8_t *pan = wp + (gi * np + p) * kq * 4 * CG_QNR;
			int64_t *blk = ch + (gi * np + p) * CG_QCH;
			int64_t wsum = 0;
			for (size_t kk = 0; kk < k; kk++) {
				int8_t w = fd[row * so + kk * sk];
				pan[(kk / 4) * 4 * CG_QNR + j * 4 + kk % 4] = w;
				wsum += w;
			}
			int64_t zw = c->woff[row];
			rowsum |= zw != 0;
			/* the AVX-512 epilogue forms zw * rowsum from int16 pairs */
			zw_byte &= zw >= -128 && zw <= 127;
			int64_t corr = c->bias[row] - zx * wsum + (int64_t)k * zx * zw;
			size_t q = cq_perm(j);
			blk[j] = corr;
			cq_put_i32(blk + CG_QNR, j, (int32_t)(uint32_t)(uint64_t)corr);
			cq_put_i32(blk + CG_QNR + CG_QNR / 2, j, (int32_t)zw);
			blk[2 * CG_QNR + q] = c->mult[row];
			blk[3 * CG_QNR + q] = c->shift[row];
			blk[4 * CG_QNR + q] = c->shift[row] ? (int64_t)1 << (c->shift[row] - 1) : 0;
			int64_t b = c->bias[row] < 0 ? -c->bias[row] : c->bias[row];
			int64_t wr = zw + 128 > 127 - zw ? zw + 128 : 127 - zw; /* max |w - zw| */
			wr = wr < 0 ? -wr : wr;
			int64_t m = (int64_t)k * xr * wr + b;
			amax = m > amax ? m : amax;
			minshift = c->shift[row] < minshift ? c->shift[row] : minshift;
		}
	size_t woff = cg_blob_add(g, wp, wbytes), coff = cg_blob_add(g, ch, chn * sizeof *ch);
	free(wp);
	free(ch);
	size_t rows = (size_t)(v[0] * v[4] * v[5]);
	/* a block of packed rows of about 256 KiB (all rows when they fit in
	 * 1 MiB), a multiple of 12 rows */
	size_t mc = ((size_t)(256u << 10) / (kq * 4) + 11) / 12 * 12;
	if (rows * kq * 4 <= ((size_t)1 << 20))
		mc = (rows + 11) / 12 * 12;
	mc = mc < 12 ? 12 : mc;
	uint64_t need = 12 * CG_QNR * 4 + mc * 4 + (mc + 12) * kq * 4 + 64;
	if (need > g->scratch_bytes)
		g->scratch_bytes = need;
	/* the epilogue's form (cb_qconv_args.fast) */
	int fast = amax > INT32_MAX || minshift < 1 || !zw_byte ? 0 : minshift < 32 ? 1 : 2;
	unsigned id = g->uniq++;
	os_printf(g->decls, "static const struct cb_qconv_args qc%u = {{", id);
	for (int i = 0; i < 16; i++)
		os_printf(g->decls, "%" PRId64 ", ", v[i]);
	os_printf(g->decls,
		  "0, 0.0f, 0.0f, %zu, %" PRId64 ", 0}, %" PRId64 ", %zu, %zu, %d, %" PRId64 ", %d, %d, %" PRId64
		  ", %" PRId64 ", %" PRId64 "};\n",
		  mc, ostride, v[15] * v[3], kq, np, xk == 0 ? 0x80 : 0, zx, rowsum,
		  fast, lo, hi, (int64_t)d->type->offset);
	char a[96], o[128];
	os_printf(g->body,
		  "\tcb_qconv_s8(&qc%u, %s, (const int8_t *)(C + %zu), (const int64_t *)(C + %zu), %s, %s, "
		  "(uint8_t *)(A + %" PRIu64 "));\n",
		  id, PTR(x, "uint8_t", a), woff, coff, post, cq_ptr_at(g, out, ooff, o, sizeof o), g->scratch_off);
	if (copy_to) {
		char t[96];
		os_printf(g->body, "\tmemcpy(%s, %s, %" PRIu64 "u);\n", PTR(copy_to, "uint8_t", t), PTR(out, "uint8_t", o),
			  type_numel(copy_to->type));
	}
}

/* convolution and channelwisequantizedconvolution (param CQ_CHANNELWISE) */
void cg_emit_qconv(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	struct ir_value *dst = in->ops[0].val, *src = in->ops[1].val, *fil = in->ops[2].val, *bias = in->ops[3].val;
	if (!cq_all_quantized(g, in, 3))
		return;
	struct ir_weight *fw = cg_const_weight(fil), *bw = cg_const_weight(bias);
	if (!bw) {
		cg_unsupported(g, in, "a quantized convolution's bias must be a constant");
		return;
	}
	const struct type *st = src->type, *dt = dst->type;
	unsigned n;
	const int64_t *k = ir_ints(in, AN_kernels, &n), *s = ir_ints(in, AN_strides, &n), *p = ir_ints(in, AN_pads, &n),
		      *dl = ir_ints(in, AN_dilation, &n);
	int64_t groups = ir_int(in, AN_group), oct = (int64_t)dt->dims[3];
	struct cq_shape sh = {{(int64_t)st->dims[0], (int64_t)st->dims[1], (int64_t)st->dims[2],
			       (int64_t)st->dims[3] / groups, (int64_t)dt->dims[1], (int64_t)dt->dims[2], oct / groups,
			       k[0], k[1], s[0], s[1], p[0], p[1], dl[0], dl[1], groups}};
	const double *scales = NULL;
	const int64_t *offsets = NULL;
	if (row->param == CQ_CHANNELWISE) {
		scales = ir_floats(in, AN_filter_scales, &n);
		offsets = ir_ints(in, AN_filter_offsets, &n);
	}
	struct cq_chan c;
	if (!cq_chan_get(g, (size_t)oct, st, fil->type, scales, offsets, dt, bw, &c)) {
		cq_chan_free(&c);
		return;
	}
	int64_t kdim = k[0] * k[1] * sh.v[3];
	if (cq_packed_ok(&sh, src, fw, dst)) {
		int8_t *fd = (int8_t *)cg_weight_data(g, fw);
		if (fd)
			cq_emit_packed(g, in, &sh, src, fd, (size_t)kdim, 1, dst, &c);
		free(fd);
	} else
		cq_emit_ref(g, &sh, src, fil, dst, kdim, 1, 0, 0, &c);
	cq_chan_free(&c);
}

/* fullyconnected, channelwisequantizedfullyconnected (CQ_CHANNELWISE),
 * matmul (CQ_NOBIAS) and batchmatmul (CQ_BATCH): weights K x M, column o
 * output channel o. */
void cg_emit_qlinear(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	struct ir_value *dst = in->ops[0].val, *lhs = in->ops[1].val, *rhs = in->ops[2].val;
	bool has_bias = !(row->param & (CQ_NOBIAS | CQ_BATCH));
	if (!cq_all_quantized(g, in, 3))
		return;
	struct ir_weight *ww = cg_const_weight(rhs), *bw = has_bias ? cg_const_weight(in->ops[3].val) : NULL;
	if (has_bias && !bw) {
		cg_unsupported(g, in, "a quantized fully-connected layer's bias must be a constant");
		return;
	}
	const struct type *lt = lhs->type, *rt = rhs->type;
	bool batch = row->param & CQ_BATCH;
	int64_t nb = batch ? (int64_t)lt->dims[0] : 1, rows = (int64_t)lt->dims[batch ? 1 : 0];
	int64_t kk = (int64_t)lt->dims[batch ? 2 : 1], m = (int64_t)rt->dims[batch ? 2 : 1];
	struct cq_shape sh = {{nb * rows, 1, 1, kk, 1, 1, m, 1, 1, 1, 1, 0, 0, 1, 1, 1}};
	unsigned n;
	const double *scales = NULL;
	const int64_t *offsets = NULL;
	if (row->param & CQ_CHANNELWISE) {
		scales = ir_floats(in, AN_weight_scales, &n);
		offsets = ir_ints(in, AN_weight_offsets, &n);
	}
	struct cq_chan c;
	if (!cq_chan_get(g, (size_t)m, lt, rt, scales, offsets, dst->type, bw, &c)) {
		cq_chan_free(&c);
		return;
	}
	if (!batch && cq_packed_ok(&sh, lhs, ww, dst)) {
		int8_t *wd = (int8_t *)cg_weight_data(g, ww);
		if (wd)
			cq_emit_packed(g, in, &sh, lhs, wd, 1, (size_t)m, dst, &c);
		free(wd);
	} else
		cq_emit_ref(g, &sh, lhs, rhs, dst, 1, m, batch ? kk * m : 0, batch ? rows : 0, &c);
	cq_chan_free(&c);
}
