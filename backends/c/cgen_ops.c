/* cgen_ops.c - one emitter per instruction kind: a call of a kernel with
 * literal shapes, weights packed into the constants blob on the way.
 *
 * Convolutions and fully-connected layers with constant weights take the
 * packed matrix-product path (kernels/cb_conv.c): the filter is packed into
 * CG_NR-wide panels, the bias padded to whole panels; depthwise filters are
 * transposed to KH x KW x C. An add of another buffer and then a relu or a
 * clip that directly follow a convolution are fused into its epilogue when
 * the convolution's own result is read by nothing else (the kernel writes
 * the last fused result instead). Batch normalizations with constant
 * statistics become a per-channel multiply-add whose factors are computed
 * here. Data movement of any element kind is one strided copy.
 */
#include "backends/c/cgen.h"
#include "support/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PTR(v, t, buf) cg_ptr(g, (v), (t), (buf), sizeof(buf))

static bool is_float(const struct ir_value *v) { return v->type->elem == EK_FLOAT; }

/* The constant weight v is (the whole of it, not a view), or NULL. */
static struct ir_weight *const_weight(struct ir_value *v)
{
	struct ir_weight *w = ir_as_weight(v);
	return w && w->is_const ? w : NULL;
}

/* Packs src (groups x oc rows, each read with stride so, k columns with
 * stride sk) into panels of CG_NR; returns the blob offset. With bias: the
 * bias padded to panels, its offset in *boff. */
static size_t pack_panels(struct cg *g, const float *src, size_t groups, size_t oc, size_t k, size_t so, size_t sk,
			  const float *bias, size_t *boff)
{
	size_t np = (oc + CG_NR - 1) / CG_NR;
	size_t n = groups * np * k * CG_NR;
	float *p = xcalloc(n + 1, sizeof(float));
	for (size_t gi = 0; gi < groups; gi++)
		for (size_t pi = 0; pi < np; pi++)
			for (size_t kk = 0; kk < k; kk++)
				for (size_t j = 0; j < CG_NR; j++) {
					size_t o = pi * CG_NR + j;
					if (o < oc)
						p[((gi * np + pi) * k + kk) * CG_NR + j] =
							src[(gi * oc + o) * so + kk * sk];
				}
	size_t off = cg_blob_add(g, p, n * sizeof(float));
	free(p);
	float *b = xcalloc(groups * np * CG_NR + 1, sizeof(float));
	for (size_t gi = 0; gi < groups; gi++)
		for (size_t o = 0; o < oc; o++)
			b[gi * np * CG_NR + o] = bias ? bias[gi * oc + o] : 0.0f;
	*boff = cg_blob_add(g, b, groups * np * CG_NR * sizeof(float));
	free(b);
	return off;
}

/* Packs src as pack_panels reads it for cb_conv_blas_f32 (-gemm=openblas):
 * per group a row-major k x oc matrix; the bias (zeros without one) as
 * groups * oc floats, its offset in *boff. Returns the filter's offset. */
static size_t pack_plain(struct cg *g, const float *src, size_t groups, size_t oc, size_t k, size_t so, size_t sk,
			 const float *bias, size_t *boff)
{
	size_t n = groups * k * oc;
	float *p = xmalloc(n * sizeof(float) + 1);
	for (size_t gi = 0; gi < groups; gi++)
		for (size_t kk = 0; kk < k; kk++)
			for (size_t o = 0; o < oc; o++)
				p[(gi * k + kk) * oc + o] = src[(gi * oc + o) * so + kk * sk];
	size_t off = cg_blob_add(g, p, n * sizeof(float));
	free(p);
	float *b = xcalloc(groups * oc + 1, sizeof(float));
	for (size_t o = 0; bias && o < groups * oc; o++)
		b[o] = bias[o];
	*boff = cg_blob_add(g, b, groups * oc * sizeof(float));
	free(b);
	return off;
}

/* What follows a convolution and fuses into it. */
struct fusion {
	struct ir_value *out; /* where the kernel writes */
	struct ir_value *res; /* residual added, or NULL */
	int act;              /* 0 none, 1 relu, 2 clip */
	double lo, hi;
	int64_t out_off;      /* elements into out (a concatenation's channel offset) */
	int64_t ostride;      /* floats between output pixels, 0: packed */
};

/* Finds an add, then a relu or clip, after `in` (whose result is dst and
 * which reads src) that can run in in's epilogue; marks them fused. */
static void find_fusion(struct cg *g, struct ir_instr *in, struct ir_value *src, struct ir_value *res,
			struct fusion *fu)
{
	fu->out = in->ops[0].val;
	fu->res = res;
	fu->act = 0;
	fu->lo = fu->hi = 0.0;
	fu->out_off = fu->ostride = 0;
	struct ir_instr *last = in, *nx = cg_next_real(in);
	if (nx && !res && nx->kind == IK_add && is_float(nx->ops[0].val)) {
		bool l = cg_same(g, nx->ops[1].val, fu->out), r = cg_same(g, nx->ops[2].val, fu->out);
		struct ir_value *other = l ? nx->ops[2].val : nx->ops[1].val, *d = nx->ops[0].val;
		if (l != r && !cg_overlap(g, d, src) && !cg_overlap(g, other, fu->out) &&
		    (cg_same(g, d, fu->out) || !cg_read_later(g, nx, fu->out)) &&
		    (cg_same(g, d, other) || !cg_overlap(g, d, other))) {
			fu->out = d;
			fu->res = other;
			u64map_put(&g->fused, (uint64_t)(uintptr_t)nx, nx);
			last = nx;
			nx = cg_next_real(nx);
		}
	}
	if (nx && (nx->kind == IK_relu || nx->kind == IK_clip) && is_float(nx->ops[0].val) &&
	    cg_same(g, nx->ops[1].val, fu->out)) {
		struct ir_value *d = nx->ops[0].val;
		if (!cg_overlap(g, d, src) && (cg_same(g, d, fu->out) || !cg_read_later(g, nx, fu->out)) &&
		    (!fu->res || cg_same(g, d, fu->res) || !cg_overlap(g, d, fu->res))) {
			fu->out = d;
			fu->act = nx->kind == IK_relu ? 1 : 2;
			if (nx->kind == IK_clip) {
				fu->lo = ir_float(nx, "min");
				fu->hi = ir_float(nx, "max");
			}
			u64map_put(&g->fused, (uint64_t)(uintptr_t)nx, nx);
			last = nx;
			nx = cg_next_real(nx);
		}
	}
	/* then an inserttensor of the result into a concatenation along the
	 * channels: write into the concatenation directly */
	/* the insert may come after other instructions (the other parts) */
	nx = cg_next_real(last);
	while (nx && !(nx->kind == IK_inserttensor && cg_same(g, nx->ops[1].val, fu->out)) &&
	       (nx->kind == IK_convolution || nx->kind == IK_relu || nx->kind == IK_inserttensor ||
		nx->kind == IK_clip))
		nx = cg_next_real(nx);
	if (nx && nx->kind == IK_inserttensor && ir_int(nx, "count") == 1 && cg_same(g, nx->ops[1].val, fu->out) &&
	    !cg_read_later(g, nx, fu->out)) {
		struct ir_value *big = nx->ops[0].val;
		const struct type *bt = big->type, *st = fu->out->type;
		unsigned n;
		const int64_t *start = ir_ints(nx, "start", &n);
		bool ok = bt->rank == 4 && st->rank == 4 && bt->elem == EK_FLOAT && start[0] == 0 && start[1] == 0 &&
			  start[2] == 0;
		for (unsigned i = 0; ok && i < 3; i++)
			ok = bt->dims[i] == st->dims[i];
		/* writing the concatenation early is safe if nothing between here
		 * and the insert touches its memory except other inserts into it
		 * (a buffer live across the whole stretch cannot share it: the
		 * plan kept them apart) */
		struct ir_value *root = ir_value_root(big, NULL);
		for (struct ir_instr *q = in->next; q && q != nx && ok; q = q->next) {
			if (q->kind == IK_alloc || q->kind == IK_dealloc || q->kind == IK_tensorview ||
			    q->kind == IK_touch || ptrmap_get(&g->fused, q))
				continue;
			bool into_big = q->kind == IK_inserttensor && ir_value_root(q->ops[0].val, NULL) == root;
			for (unsigned i = into_big ? 1 : 0; i < q->nops && ok; i++)
				ok = !cg_overlap(g, q->ops[i].val, big);
			/* and nothing reads the result it will no longer find */
			for (unsigned i = 0; i < q->nops && ok; i++)
				ok = !cg_overlap(g, q->ops[i].val, fu->out);
		}
		if (ok && !cg_overlap(g, big, src) && (!fu->res || !cg_overlap(g, big, fu->res))) {
			fu->out = big;
			fu->out_off = start[3];
			fu->ostride = (int64_t)bt->dims[3];
			u64map_put(&g->fused, (uint64_t)(uintptr_t)nx, nx);
			last = nx;
		}
	}
	(void)last;
}

/* The output pointer of a fusion: out, plus the concatenation offset. */
static const char *fu_out(struct cg *g, const struct fusion *fu, char *buf, size_t size)
{
	char p[96];
	cg_ptr(g, fu->out, "float", p, sizeof p);
	int n = snprintf(buf, size, "(%s + %" PRId64 ")", p, fu->out_off);
	if (n < 0 || (size_t)n >= size)
		unreachable("fusion output expression too long");
	return buf;
}

/* Winograd F(m x m, 3 x 3) of the convolution of shape v (cb_conv_args
 * order): its tiles, the bytes one tile's transformed input and products
 * take (per), the transformed filter's bytes, and the tiles per block of
 * cb_wino_f32: about 768 KiB of blocks (they stay in L2 while the a^2
 * filters pass over them); all tiles in one block when they take at most
 * 1.5 MiB, or at most 16 MiB while the filter exceeds 1 MiB (the filter
 * then streams from memory once and the blocks from L3). */
struct wino_shape {
	uint64_t tiles, per, ubytes, mc;
};

static struct wino_shape wino_shape(const int64_t v[15], int m)
{
	struct wino_shape w;
	uint64_t a2 = (uint64_t)(m + 2) * (uint64_t)(m + 2);
	uint64_t c64 = ((uint64_t)v[3] + 63) / 64 * 64, ocp = ((uint64_t)v[6] + CG_NR - 1) / CG_NR * CG_NR;
	w.tiles = (uint64_t)v[0] * (uint64_t)((v[4] + m - 1) / m) * (uint64_t)((v[5] + m - 1) / m);
	w.per = a2 * (c64 + ocp) * sizeof(float);
	w.ubytes = a2 * (uint64_t)v[3] * ocp * sizeof(float);
	w.mc = ((uint64_t)768 << 10) / w.per;
	if (w.mc < 12)
		w.mc = 12;
	if (w.tiles * w.per <= ((uint64_t)3 << 19) ||
	    (w.ubytes > ((uint64_t)1 << 20) && w.tiles * w.per <= ((uint64_t)16 << 20)) || w.mc > w.tiles)
		w.mc = w.tiles;
	return w;
}

/* Writes a struct cb_conv_args to the declarations; returns its number.
 * Reserves the scratch the kernel needs. The packed path: (min(mc, M) +
 * 16) x (K + 63) floats (rows of K rounded up to chunks of 64), mc chosen
 * so that a block of packed rows takes about 512 KiB, or all rows when
 * they fit in L2. The BLAS path (blas): mc x K floats of im2col rows, all
 * rows when they take at most 8 MiB, else blocks of about 2 MiB; none for
 * a 1x1 convolution read in place. */
static unsigned conv_args(struct cg *g, const int64_t v[15], int groups, const struct fusion *fu, size_t kdim,
			  bool blas, int wino)
{
	unsigned id = g->uniq++;
	uint64_t rows = (uint64_t)(v[0] * v[4] * v[5]);
	size_t mc = (size_t)(512u << 10) / (kdim * sizeof(float) + 1);
	if (mc < 48)
		mc = 48;
	/* all rows in one block when they fit in about 1.5 MiB of L2: every
	 * weight panel is then read from memory once */
	if (rows * kdim * sizeof(float) <= (uint64_t)(3u << 19))
		mc = (size_t)rows;
	uint64_t need = ((rows < mc ? rows : mc) + 16) * (kdim + 63 + CG_NR) * sizeof(float);
	if (blas) {
		bool direct = v[7] == 1 && v[8] == 1 && v[9] == 1 && v[10] == 1 && v[11] == 0 && v[12] == 0 &&
			      v[4] == v[1] && v[5] == v[2];
		mc = (size_t)(2u << 20) / (kdim * sizeof(float) + 1);
		if (mc < 16)
			mc = 16;
		if (rows * kdim * sizeof(float) <= (uint64_t)(8u << 20))
			mc = (size_t)rows;
		need = direct ? 0 : (rows < mc ? rows : mc) * kdim * sizeof(float);
	}
	if (wino) {
		/* Winograd: mc tiles per block (wino_shape), the scratch of
		 * cb_wino_f32 */
		struct wino_shape w = wino_shape(v, wino);
		uint64_t a2 = (uint64_t)(wino + 2) * (uint64_t)(wino + 2);
		uint64_t c64 = ((uint64_t)v[3] + 63) / 64 * 64, ocp = ((uint64_t)v[6] + CG_NR - 1) / CG_NR * CG_NR;
		mc = (size_t)w.mc;
		need = (a2 * ((w.mc + 16) * c64 + 16) + (w.mc + 16) * a2 * ocp) * sizeof(float);
	}
	if (need > g->scratch_bytes)
		g->scratch_bytes = need;
	os_printf(g->decls, "static const struct cb_conv_args cv%u = {", id);
	for (int i = 0; i < 15; i++)
		os_printf(g->decls, "%" PRId64 ", ", v[i]);
	char f1[40], f2[40];
	os_printf(g->decls, "%d, %d, %s, %s, %zu, %" PRId64 ", %d};\n", groups, fu ? fu->act : 0,
		  cg_flit(f1, fu ? fu->lo : 0.0), cg_flit(f2, fu ? fu->hi : 0.0), mc, fu ? fu->ostride : 0, wino);
	return id;
}

/* Emits the matrix product of a convolution or a fully-connected layer
 * with shape v (cb_conv_args order) reading x: the filter src (groups x oc
 * rows with stride so, kdim columns with stride sk) and the bias (NULL:
 * zeros) packed for the kernel of g's -gemm choice, then the call. */
static void emit_product(struct cg *g, const int64_t v[15], int groups, const struct fusion *fu, size_t kdim,
			 struct ir_value *x, const float *src, size_t so, size_t sk, const float *bias)
{
	bool blas = g->gemm == CBACKEND_GEMM_OPENBLAS;
	size_t oc = (size_t)v[6], boff, woff;
	if (blas)
		woff = pack_plain(g, src, (size_t)groups, oc, kdim, so, sk, bias, &boff);
	else
		woff = pack_panels(g, src, (size_t)groups, oc, kdim, so, sk, bias, &boff);
	unsigned id = conv_args(g, v, groups, fu, kdim, blas, 0);
	char a[96], o[96], r[96];
	os_printf(g->body,
		  "\t%s(&cv%u, %s, (const float *)(C + %zu), (const float *)(C + %zu), %s, %s, "
		  "(float *)(A + %" PRIu64 "));\n",
		  blas ? "cb_conv_blas_f32" : "cb_conv_f32", id, PTR(x, "float", a), woff, boff,
		  fu_out(g, fu, o, sizeof o), fu->res ? PTR(fu->res, "float", r) : "0", g->scratch_off);
}

/* The output tile size m of a Winograd F(m x m, 3 x 3) for the
 * convolution of shape v (cb_conv_args order), or 0: compute it directly.
 * Eligible: 3x3, stride and dilation 1, one group, channel counts
 * multiples of 16, the built-in kernels. auto takes the cheapest of
 * direct, m = 2 and m = 4 by a cost model in seconds, its rates measured
 * on ResNet-50's and SqueezeNet's layers (one AVX-512 core): products at
 * 100 GFLOP/s (Winograd's over whole tiles: those past the image cost as
 * much as used ones); a filter streamed from memory at 20 GB/s once per
 * layer, and again from L3 at 60 GB/s per further block of tiles when it
 * exceeds L2 (1 MiB); 0.28 ns per transformed input and product value. On ResNet-50 it picks
 * m = 4 for the 56x56, 28x28 and 14x14 layers (measured 2.2-3.0 times
 * faster than direct) and m = 2 for 7x7x512 (1.3 times; m = 4 as fast). */
static int wino_choice(const struct cg *g, const int64_t v[15], int groups)
{
	if (g->winograd == CBACKEND_WINO_OFF || g->gemm != CBACKEND_GEMM_BUILTIN || groups != 1 || v[7] != 3 ||
	    v[8] != 3 || v[9] != 1 || v[10] != 1 || v[13] != 1 || v[14] != 1 || v[3] % 16 || v[6] % 16)
		return 0;
	if (g->winograd == CBACKEND_WINO_F2)
		return 2;
	if (g->winograd == CBACKEND_WINO_F4)
		return 4;
	const double rate = 100e9, dram = 20e9, l3 = 60e9, per_value = 0.28e-9;
	const double c = (double)v[3], oc = (double)v[6];
	const uint64_t pixels = (uint64_t)(v[0] * v[4] * v[5]);
	double best = 2.0 * (double)pixels * 9 * c * oc / rate + 9 * c * oc * sizeof(float) / dram;
	int choice = 0;
	for (int m = 2; m <= 4; m += 2) {
		struct wino_shape w = wino_shape(v, m);
		uint64_t blocks = (w.tiles + w.mc - 1) / w.mc;
		double a2 = (double)((m + 2) * (m + 2)), ub = (double)w.ubytes;
		double t = 2.0 * (double)w.tiles * a2 * c * oc / rate + ub / dram +
			   (w.ubytes > ((uint64_t)1 << 20) ? (double)(blocks - 1) * ub / l3 : 0.0) +
			   (double)w.tiles * a2 * (c + oc) * per_value;
		if (t < best) {
			best = t;
			choice = m;
		}
	}
	return choice;
}

/* Emits a convolution as Winograd F(m x m, 3 x 3) (cb_wino_f32): the
 * filter (OC x 3 x 3 x C) transformed per output and input channel to U =
 * G g G^T (a x a, a = m + 2, in double precision) and packed as a^2 sets
 * of CG_NR-wide panels (position-major), the bias padded to panels. */
static void emit_wino(struct cg *g, const int64_t v[15], int m, const struct fusion *fu, struct ir_value *x,
		      const float *fd, const float *bd)
{
	static const double g4[6][3] = {{1.0 / 4, 0, 0},
					{-1.0 / 6, -1.0 / 6, -1.0 / 6},
					{-1.0 / 6, 1.0 / 6, -1.0 / 6},
					{1.0 / 24, 1.0 / 12, 1.0 / 6},
					{1.0 / 24, -1.0 / 12, 1.0 / 6},
					{0, 0, 1}};
	static const double g2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
	const size_t a = (size_t)m + 2, c = (size_t)v[3], oc = (size_t)v[6], np = (oc + CG_NR - 1) / CG_NR;
	const double(*gm)[3] = m == 4 ? g4 : g2;
	float *u = xcalloc(a * a * np * c * CG_NR + 1, sizeof(float));
	for (size_t o = 0; o < oc; o++)
		for (size_t ci = 0; ci < c; ci++) {
			const float *f = fd + o * 9 * c + ci; /* f[(kh * 3 + kw) * c] */
			double gg[6][3];                      /* G g */
			for (size_t i = 0; i < a; i++)
				for (size_t kw = 0; kw < 3; kw++) {
					double t = 0;
					for (size_t kh = 0; kh < 3; kh++)
						t += gm[i][kh] * (double)f[(kh * 3 + kw) * c];
					gg[i][kw] = t;
				}
			for (size_t i = 0; i < a; i++)
				for (size_t j = 0; j < a; j++) {
					double t = 0;
					for (size_t kw = 0; kw < 3; kw++)
						t += gg[i][kw] * gm[j][kw];
					size_t xi = i * a + j;
					u[((xi * np + o / CG_NR) * c + ci) * CG_NR + o % CG_NR] = (float)t;
				}
		}
	size_t woff = cg_blob_add(g, u, a * a * np * c * CG_NR * sizeof(float));
	free(u);
	float *b = xcalloc(np * CG_NR + 1, sizeof(float));
	memcpy(b, bd, oc * sizeof(float));
	size_t boff = cg_blob_add(g, b, np * CG_NR * sizeof(float));
	free(b);
	unsigned id = conv_args(g, v, 1, fu, 9 * c, false, m);
	char ab[96], o[96], r[96];
	os_printf(g->body,
		  "\tcb_wino_f32(&cv%u, %s, (const float *)(C + %zu), (const float *)(C + %zu), %s, %s, "
		  "(float *)(A + %" PRIu64 "));\n",
		  id, PTR(x, "float", ab), woff, boff, fu_out(g, fu, o, sizeof o), fu->res ? PTR(fu->res, "float", r) : "0",
		  g->scratch_off);
}

static void emit_conv(struct cg *g, struct ir_instr *in)
{
	struct ir_value *dst = in->ops[0].val, *src = in->ops[1].val, *fil = in->ops[2].val, *bias = in->ops[3].val;
	if (!is_float(dst) || !is_float(src) || !is_float(fil) || !is_float(bias)) {
		cg_unsupported(g, in, "only float convolutions are compiled");
		return;
	}
	const struct type *st = src->type, *dt = dst->type;
	unsigned n;
	const int64_t *k = ir_ints(in, "kernels", &n), *s = ir_ints(in, "strides", &n), *p = ir_ints(in, "pads", &n),
		      *dl = ir_ints(in, "dilation", &n);
	int groups = (int)ir_int(in, "group");
	int64_t c = (int64_t)st->dims[3] / groups, oc = (int64_t)dt->dims[3] / groups;
	int64_t v[15] = {(int64_t)st->dims[0], (int64_t)st->dims[1], (int64_t)st->dims[2], c, (int64_t)dt->dims[1],
			 (int64_t)dt->dims[2], oc, k[0], k[1], s[0], s[1], p[0], p[1], dl[0], dl[1]};
	struct ir_weight *fw = const_weight(fil), *bw = const_weight(bias);
	char a[96], b[96], o[96], r[96];
	if (!fw || !bw) {
		unsigned id = conv_args(g, v, groups, NULL, (size_t)(k[0] * k[1] * c), false, 0);
		os_printf(g->body, "\tcb_conv_ref_f32(&cv%u, %s, %s, %s, %s);\n", id, PTR(src, "float", a),
			  PTR(fil, "float", b), PTR(bias, "float", r), PTR(dst, "float", o));
		return;
	}
	float *fd = (float *)cg_weight_data(g, fw), *bd = (float *)cg_weight_data(g, bw);
	if (!fd || !bd) {
		free(fd);
		free(bd);
		return;
	}
	struct fusion fu;
	find_fusion(g, in, src, NULL, &fu);
	size_t kdim = (size_t)(k[0] * k[1] * c);
	int wino = wino_choice(g, v, groups);
	if (c == 1 && oc == 1 && groups > 1) {
		/* depthwise: KH x KW x C */
		size_t taps = (size_t)(k[0] * k[1]), ch = (size_t)groups;
		float *t = xmalloc(taps * ch * sizeof(float) + 1);
		for (size_t ci = 0; ci < ch; ci++)
			for (size_t q = 0; q < taps; q++)
				t[q * ch + ci] = fd[ci * taps + q];
		size_t woff = cg_blob_add(g, t, taps * ch * sizeof(float));
		size_t boff = cg_blob_add(g, bd, ch * sizeof(float));
		free(t);
		unsigned id = conv_args(g, v, groups, &fu, kdim, false, 0);
		os_printf(g->body, "\tcb_dwconv_f32(&cv%u, %s, (const float *)(C + %zu), (const float *)(C + %zu), %s, %s);\n",
			  id, PTR(src, "float", a), woff, boff, fu_out(g, &fu, o, sizeof o),
			  fu.res ? PTR(fu.res, "float", r) : "0");
	} else if (wino) {
		emit_wino(g, v, wino, &fu, src, fd, bd);
	} else {
		emit_product(g, v, groups, &fu, kdim, src, fd, kdim, 1, bd);
	}
	free(fd);
	free(bd);
}

/* Dest[n x m] = Src[n x k] * Weights[k x m] (+ bias), packed when the
 * weights are constant. bias NULL: none (matmul). */
static void emit_linear(struct cg *g, struct ir_instr *in, struct ir_value *dst, struct ir_value *lhs,
			struct ir_value *rhs, struct ir_value *bias)
{
	if (!is_float(dst) || !is_float(lhs) || !is_float(rhs) || (bias && !is_float(bias))) {
		cg_unsupported(g, in, "only float matrix products are compiled");
		return;
	}
	int64_t rows = (int64_t)lhs->type->dims[0], kk = (int64_t)lhs->type->dims[1], m = (int64_t)rhs->type->dims[1];
	struct ir_weight *ww = const_weight(rhs), *bw = bias ? const_weight(bias) : NULL;
	char a[96], b[96], o[96], r[96];
	if (ww && (!bias || bw)) {
		float *wd = (float *)cg_weight_data(g, ww), *bd = bw ? (float *)cg_weight_data(g, bw) : NULL;
		if (wd && (!bw || bd)) {
			struct fusion fu;
			find_fusion(g, in, lhs, NULL, &fu);
			int64_t v[15] = {rows, 1, 1, kk, 1, 1, m, 1, 1, 1, 1, 0, 0, 1, 1};
			emit_product(g, v, 1, &fu, (size_t)kk, lhs, wd, 1, (size_t)m, bd);
		}
		free(wd);
		free(bd);
		return;
	}
	os_printf(g->body, "\t%s(%s, %s, %s, %s, 1, %" PRId64 ", %" PRId64 ", %" PRId64 ");\n",
		  g->gemm == CBACKEND_GEMM_OPENBLAS ? "cb_matmul_blas_f32" : "cb_matmul_f32", PTR(lhs, "float", a),
		  PTR(rhs, "float", b), bias ? PTR(bias, "float", r) : "0", PTR(dst, "float", o),
		  rows, kk, m);
}

static void emit_pool(struct cg *g, struct ir_instr *in, const char *fn)
{
	struct ir_value *dst = in->ops[0].val, *src = in->ops[1].val;
	if (!is_float(dst) || !is_float(src)) {
		cg_unsupported(g, in, "only float pooling is compiled");
		return;
	}
	const struct type *st = src->type, *dt = dst->type;
	int64_t k[2] = {1, 1}, s[2] = {1, 1}, p[4] = {0, 0, 0, 0}, incl = 0;
	if (in->kind != IK_adaptiveavgpool) {
		unsigned n;
		const int64_t *kv = ir_ints(in, "kernels", &n), *sv = ir_ints(in, "strides", &n),
			      *pv = ir_ints(in, "pads", &n);
		memcpy(k, kv, sizeof k);
		memcpy(s, sv, sizeof s);
		memcpy(p, pv, sizeof p);
		if (in->kind == IK_avgpool)
			incl = ir_int(in, "count_include_pads");
	}
	unsigned id = g->uniq++;
	os_printf(g->decls,
		  "static const struct cb_pool_args pl%u = {%" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64
		  ", %" PRIu64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
		  ", %" PRId64 "};\n",
		  id, st->dims[0], st->dims[1], st->dims[2], st->dims[3], dt->dims[1], dt->dims[2], k[0], k[1], s[0], s[1],
		  p[0], p[1], incl);
	char a[96], o[96];
	os_printf(g->body, "\t%s(&pl%u, %s, %s);\n", fn, id, PTR(src, "float", a), PTR(dst, "float", o));
}

/* outer x d x inner around axis of t */
static void split_axis(const struct type *t, unsigned axis, uint64_t *outer, uint64_t *d, uint64_t *inner)
{
	*outer = *inner = 1;
	*d = axis < t->rank ? t->dims[axis] : 1;
	for (unsigned i = 0; i < t->rank; i++) {
		if (i < axis)
			*outer *= t->dims[i];
		else if (i > axis)
			*inner *= t->dims[i];
	}
}

/* Element strides of a row-major shape. */
static void strides_of(const struct type *t, int64_t *st)
{
	int64_t s = 1;
	for (unsigned i = t->rank; i-- > 0;) {
		st[i] = s;
		s *= (int64_t)t->dims[i];
	}
}

/* Emits a static int64 table and returns its number. */
static unsigned i64_table(struct cg *g, const int64_t *v, unsigned n)
{
	unsigned id = g->uniq++;
	os_printf(g->decls, "static const int64_t tb%u[] = {", id);
	for (unsigned i = 0; i < n; i++)
		os_printf(g->decls, "%s%" PRId64, i ? ", " : "", v[i]);
	os_printf(g->decls, "%s};\n", n ? "" : "0");
	return id;
}

/* Emits a static int table and returns its number. */
static unsigned int_table(struct cg *g, const int64_t *v, unsigned n)
{
	unsigned id = g->uniq++;
	os_printf(g->decls, "static const int ti%u[] = {", id);
	for (unsigned i = 0; i < n; i++)
		os_printf(g->decls, "%s%" PRId64, i ? ", " : "", v[i]);
	os_printf(g->decls, "};\n");
	return id;
}

/* dims of t as an int64 table */
static unsigned dims_table(struct cg *g, const struct type *t)
{
	int64_t d[GLOW_MAX_RANK];
	for (unsigned i = 0; i < t->rank; i++)
		d[i] = (int64_t)t->dims[i];
	return i64_table(g, d, t->rank);
}

static int int_es(const struct ir_value *v)
{
	enum elem_kind k = (enum elem_kind)v->type->elem;
	return k == EK_I64 || k == EK_INDEX64 ? 8 : k == EK_I32 || k == EK_INDEX32 ? 4 : 0;
}

/* cb_copy_nd(dst + doff, ds, src + soff, ss, dims, rank) */
static void emit_copy_nd(struct cg *g, struct ir_value *dst, int64_t doff, const int64_t *ds0, struct ir_value *src,
			 int64_t soff, const int64_t *ss0, const int64_t *dims0, unsigned rank0)
{
	size_t es = elem_size((enum elem_kind)dst->type->elem);
	char a[96], o[96];
	/* drop dimensions of size 1, merge neighbours contiguous in both */
	int64_t ds[GLOW_MAX_RANK + 2], ss[GLOW_MAX_RANK + 2], dims[GLOW_MAX_RANK + 2];
	unsigned rank = 0;
	for (unsigned i = 0; i < rank0; i++) {
		if (dims0[i] == 1)
			continue;
		if (rank && ds[rank - 1] == ds0[i] * dims0[i] && ss[rank - 1] == ss0[i] * dims0[i]) {
			dims[rank - 1] *= dims0[i];
			ds[rank - 1] = ds0[i];
			ss[rank - 1] = ss0[i];
			continue;
		}
		dims[rank] = dims0[i];
		ds[rank] = ds0[i];
		ss[rank] = ss0[i];
		rank++;
	}
	/* a short strided innermost run over a longer one: loop the longer one
	 * innermost (fewer, longer runs) */
	if (rank >= 2 && dims[rank - 1] < 16 && dims[rank - 2] > dims[rank - 1] &&
	    !(ss[rank - 1] == 1 && ds[rank - 1] == 1)) {
		int64_t t;
		t = dims[rank - 1], dims[rank - 1] = dims[rank - 2], dims[rank - 2] = t;
		t = ds[rank - 1], ds[rank - 1] = ds[rank - 2], ds[rank - 2] = t;
		t = ss[rank - 1], ss[rank - 1] = ss[rank - 2], ss[rank - 2] = t;
	}
	unsigned t1 = i64_table(g, ds, rank), t2 = i64_table(g, ss, rank), t3 = i64_table(g, dims, rank);
	os_printf(g->body, "\tcb_copy_nd((uint8_t *)%s + %" PRId64 ", tb%u, (const uint8_t *)%s + %" PRId64
		  ", tb%u, tb%u, %u, %zu);\n",
		  PTR(dst, "void", o), doff * (int64_t)es, t1, PTR(src, "void", a), soff * (int64_t)es, t2, t3, rank,
		  es);
}

static void emit_move(struct cg *g, struct ir_instr *in)
{
	struct ir_value *dst = in->ops[0].val, *src = in->ops[1].val;
	const struct type *dt = dst->type, *st = src->type;
	int64_t ds[GLOW_MAX_RANK + 1], ss[GLOW_MAX_RANK + 1], dims[GLOW_MAX_RANK + 1];
	unsigned rank = dt->rank;
	if (rank > 7) {
		cg_unsupported(g, in, "rank above 7");
		return;
	}
	int64_t sst[GLOW_MAX_RANK + 1], dst_[GLOW_MAX_RANK + 1];
	strides_of(st, sst);
	strides_of(dt, dst_);
	unsigned n;
	switch (in->kind) {
	case IK_transpose: {
		const int64_t *sh = ir_ints(in, "shuffle", &n);
		for (unsigned i = 0; i < rank; i++) {
			dims[i] = (int64_t)dt->dims[i];
			ds[i] = dst_[i];
			ss[i] = sst[sh[i]];
		}
		emit_copy_nd(g, dst, 0, ds, src, 0, ss, dims, rank);
		return;
	}
	case IK_extracttensor: {
		const int64_t *start = ir_ints(in, "start", &n);
		int64_t off = 0;
		for (unsigned i = 0; i < rank; i++)
			off += start[i] * sst[i];
		for (unsigned i = 0; i < rank; i++)
			dims[i] = (int64_t)dt->dims[i];
		emit_copy_nd(g, dst, 0, dst_, src, off, sst, dims, rank);
		return;
	}
	case IK_inserttensor: {
		const int64_t *start = ir_ints(in, "start", &n);
		int64_t count = ir_int(in, "count"), axis = ir_int(in, "axis");
		for (int64_t c = 0; c < count; c++) {
			int64_t off = 0;
			for (unsigned i = 0; i < rank; i++)
				off += (start[i] + ((int64_t)i == axis ? c * (int64_t)st->dims[i] : 0)) * dst_[i];
			for (unsigned i = 0; i < rank; i++)
				dims[i] = (int64_t)st->dims[i];
			emit_copy_nd(g, dst, off, dst_, src, 0, sst, dims, rank);
		}
		return;
	}
	case IK_tile: {
		unsigned axis = (unsigned)ir_int(in, "axis");
		unsigned j = 0;
		for (unsigned i = 0; i < rank; i++) {
			if (i == axis) {
				dims[j] = ir_int(in, "count");
				ds[j] = dst_[i] * (int64_t)st->dims[i];
				ss[j++] = 0;
			}
			dims[j] = (int64_t)st->dims[i];
			ds[j] = dst_[i];
			ss[j++] = sst[i];
		}
		emit_copy_nd(g, dst, 0, ds, src, 0, ss, dims, j);
		return;
	}
	case IK_broadcast: {
		unsigned axis = (unsigned)ir_int(in, "axis");
		for (unsigned i = 0; i < rank; i++) {
			dims[i] = (int64_t)dt->dims[i];
			ss[i] = 0;
			if (i >= axis && i - axis < st->rank && st->dims[i - axis] == dt->dims[i])
				ss[i] = sst[i - axis];
		}
		emit_copy_nd(g, dst, 0, dst_, src, 0, ss, dims, rank);
		return;
	}
	case IK_flip: {
		unsigned axis = (unsigned)ir_int(in, "axis");
		for (unsigned i = 0; i < rank; i++) {
			dims[i] = (int64_t)dt->dims[i];
			ss[i] = i == axis ? -sst[i] : sst[i];
		}
		int64_t off = dims[axis] > 0 ? (dims[axis] - 1) * sst[axis] : 0;
		emit_copy_nd(g, dst, 0, dst_, src, off, ss, dims, rank);
		return;
	}
	case IK_spacetodepth: case IK_depthtospace: {
		/* the spatial side viewed as N x H/b x b x W/b x b x C, the
		 * depth side as N x H/b x W/b x (b x b x C) (dcr) or
		 * (C x b x b) (crd) */
		bool to_depth = in->kind == IK_spacetodepth;
		const struct type *big = to_depth ? st : dt;
		int64_t b = ir_int(in, "block_size"), N = (int64_t)big->dims[0], H = (int64_t)big->dims[1],
			W = (int64_t)big->dims[2], C = (int64_t)big->dims[3];
		bool crd = !to_depth && ir_int(in, "mode") == 1;
		int64_t oh = H / b, ow = W / b, oc = C * b * b;
		int64_t sp[6] = {H * W * C, b * W * C, W * C, b * C, C, 1}; /* n, y, by, x, bx, c */
		int64_t dp[6] = {oh * ow * oc, ow * oc, crd ? b : b * C, oc, crd ? 1 : C, crd ? b * b : 1};
		int64_t d6[6] = {N, oh, b, ow, b, C};
		if (to_depth)
			emit_copy_nd(g, dst, 0, dp, src, 0, sp, d6, 6);
		else
			emit_copy_nd(g, dst, 0, sp, src, 0, dp, d6, 6);
		return;
	}
	case IK_pad: {
		if (ir_int(in, "mode") != 0) {
			const int64_t *pads = ir_ints(in, "pads", &n);
			unsigned t1 = dims_table(g, st), t2 = dims_table(g, dt), t3 = i64_table(g, pads, rank);
			char a[96], o[96];
			os_printf(g->body, "\tcb_pad_mode(%s, tb%u, %s, tb%u, tb%u, %u, %d, %zu);\n", PTR(src, "void", a), t1,
				  PTR(dst, "void", o), t2, t3, rank, (int)ir_int(in, "mode"),
				  elem_size((enum elem_kind)dt->elem));
			return;
		}
		if (!cg_ctype(dt->elem)) {
			cg_unsupported(g, in, "constant padding of this element kind is not compiled");
			return;
		}
		const int64_t *pads = ir_ints(in, "pads", &n);
		char o[96];
		double val = ir_float(in, "value");
		os_printf(g->body, "\tfor (size_t i = 0; i < %" PRIu64 "u; i++)\n\t\t%s[i] = (%s)%.17g;\n",
			  type_numel(dt), PTR(dst, cg_ctype(dt->elem), o), cg_ctype(dt->elem), val);
		int64_t doff = 0, soff = 0;
		for (unsigned i = 0; i < rank; i++) {
			int64_t b = pads[i];
			int64_t lo = b < 0 ? -b : 0; /* cropped from the source */
			int64_t d0 = b > 0 ? b : 0;
			int64_t len = (int64_t)st->dims[i] - lo;
			if (len > (int64_t)dt->dims[i] - d0)
				len = (int64_t)dt->dims[i] - d0;
			if (len <= 0)
				return;
			dims[i] = len;
			doff += d0 * dst_[i];
			soff += lo * sst[i];
		}
		emit_copy_nd(g, dst, doff, dst_, src, soff, sst, dims, rank);
		return;
	}
	default: unreachable("not a data movement kind");
	}
}

static void emit_norm(struct cg *g, struct ir_instr *in)
{
	char a[96], o[96], b1[96], b2[96], b3[96], b4[96];
	struct ir_value *dst = in->ops[0].val, *src = in->ops[1].val;
	for (unsigned i = 0; i < in->nops; i++)
		if (!is_float(in->ops[i].val)) {
			cg_unsupported(g, in, "only float normalizations are compiled");
			return;
		}
	uint64_t outer, c, inner;
	switch (in->kind) {
	case IK_batchnormalization: {
		split_axis(src->type, (unsigned)ir_int(in, "channel_idx"), &outer, &c, &inner);
		float eps = (float)ir_float(in, "epsilon");
		struct ir_weight *w[4];
		bool all = true;
		for (unsigned i = 0; i < 4; i++)
			all &= (w[i] = const_weight(in->ops[2 + i].val)) != NULL;
		if (all) {
			float *sc = (float *)cg_weight_data(g, w[0]), *bi = (float *)cg_weight_data(g, w[1]);
			float *mean = (float *)cg_weight_data(g, w[2]), *var = (float *)cg_weight_data(g, w[3]);
			if (sc && bi && mean && var) {
				float *mul = xmalloc(2 * c * sizeof(float) + 1);
				for (uint64_t i = 0; i < c; i++) {
					mul[i] = sc[i] / sqrtf(var[i] + eps);
					mul[c + i] = bi[i] - mean[i] * mul[i];
				}
				size_t off = cg_blob_add(g, mul, 2 * c * sizeof(float));
				free(mul);
				os_printf(g->body,
					  "\tcb_chan_affine_f32(%s, %s, (const float *)(C + %zu), (const float *)(C + %zu), %"
					  PRIu64 ", %" PRIu64 ", %" PRIu64 ");\n",
					  PTR(src, "float", a), PTR(dst, "float", o), off, off + c * sizeof(float), outer, c,
					  inner);
			}
			free(sc);
			free(bi);
			free(mean);
			free(var);
			return;
		}
		char fe[40];
		os_printf(g->body, "\tcb_batchnorm_f32(%s, %s, %s, %s, %s, %s, %s, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ");\n",
			  PTR(src, "float", a), PTR(dst, "float", o), PTR(in->ops[2].val, "float", b1),
			  PTR(in->ops[3].val, "float", b2), PTR(in->ops[4].val, "float", b3),
			  PTR(in->ops[5].val, "float", b4), cg_flit(fe, eps), outer, c, inner);
		return;
	}
	case IK_localresponsenormalization: {
		const struct type *t = src->type;
		char f1[40], f2[40], f3[40];
		os_printf(g->body, "\tcb_lrn_f32(%s, %s, %" PRIu64 ", %" PRIu64 ", %" PRId64 ", %s, %s, %s);\n",
			  PTR(src, "float", a), PTR(dst, "float", o), t->dims[0] * t->dims[1] * t->dims[2], t->dims[3],
			  ir_int(in, "half_window_size"), cg_flit(f1, ir_float(in, "alpha")),
			  cg_flit(f2, ir_float(in, "beta")), cg_flit(f3, ir_float(in, "k")));
		return;
	}
	case IK_layernormalization: {
		unsigned axis = (unsigned)ir_int(in, "axis");
		split_axis(src->type, axis, &outer, &c, &inner);
		inner *= c;
		if (type_numel(in->ops[2].val->type) != inner || type_numel(in->ops[3].val->type) != inner) {
			cg_unsupported(g, in, "scale and bias must cover the normalized dimensions");
			return;
		}
		char fe[40];
		os_printf(g->body, "\tcb_layernorm_f32(%s, %s, %s, %s, %" PRIu64 ", %" PRIu64 ", %s);\n",
			  PTR(src, "float", a), PTR(dst, "float", o), PTR(in->ops[2].val, "float", b1),
			  PTR(in->ops[3].val, "float", b2), outer, inner, cg_flit(fe, ir_float(in, "epsilon")));
		return;
	}
	default: unreachable("not a normalization");
	}
}

static void emit_reduce(struct cg *g, struct ir_instr *in, int op)
{
	struct ir_value *dst = in->ops[0].val, *src = in->ops[1].val;
	int es = int_es(src);
	if ((!is_float(dst) || !is_float(src)) && (!es || int_es(dst) != es)) {
		cg_unsupported(g, in, "only float and int32/int64 reductions are compiled");
		return;
	}
	const struct type *t = src->type;
	unsigned n;
	const int64_t *axes = ir_ints(in, "axes", &n);
	int64_t dims[GLOW_MAX_RANK], ys[GLOW_MAX_RANK];
	bool red[GLOW_MAX_RANK] = {0};
	for (unsigned i = 0; i < n; i++)
		red[axes[i]] = true;
	int64_t s = 1;
	uint64_t cnt = 1;
	for (unsigned i = t->rank; i-- > 0;) {
		dims[i] = (int64_t)t->dims[i];
		ys[i] = red[i] ? 0 : s;
		if (red[i])
			cnt *= t->dims[i];
		else
			s *= (int64_t)t->dims[i];
	}
	unsigned t1 = i64_table(g, dims, t->rank), t2 = i64_table(g, ys, t->rank);
	char a[96], o[96];
	if (es)
		os_printf(g->body, "\tcb_reduce_i(%s, %s, %" PRIu64 ", tb%u, tb%u, %u, %d, %d, %" PRIu64 ");\n",
			  PTR(src, "void", a), PTR(dst, "void", o), type_numel(dst->type), t1, t2, t->rank, op, es, cnt);
	else
		os_printf(g->body, "\tcb_reduce_f32(%s, %s, %" PRIu64 ", tb%u, tb%u, %u, %d, %.1ff);\n",
			  PTR(src, "float", a), PTR(dst, "float", o), type_numel(dst->type), t1, t2, t->rank, op,
			  (double)cnt);
}

static void emit_gemm(struct cg *g, struct ir_instr *in)
{
	for (unsigned i = 0; i < 4; i++)
		if (!is_float(in->ops[i].val)) {
			cg_unsupported(g, in, "only float gemm is compiled");
			return;
		}
	const struct type *at = in->ops[1].val->type, *ct = in->ops[3].val->type, *yt = in->ops[0].val->type;
	int ta = (int)ir_int(in, "trans_a"), tb = (int)ir_int(in, "trans_b");
	uint64_t mm = yt->dims[0], nn = yt->dims[1], kk = ta ? at->dims[0] : at->dims[1];
	struct ir_weight *bw = const_weight(in->ops[2].val), *cw = const_weight(in->ops[3].val);
	bool cvec = cw && type_numel(ct) == nn && (ct->rank == 1 || (ct->rank == 2 && ct->dims[0] == 1));
	bool cfull = !cvec && ct->rank == 2 && ct->dims[0] == mm && ct->dims[1] == nn &&
		     !cg_overlap(g, in->ops[3].val, in->ops[1].val);
	if (!ta && bw && (cvec || cfull) && ir_float(in, "alpha") == 1.0 && ir_float(in, "beta") == 1.0) {
		/* a fully-connected layer: B packed (transposed or not), C the
		 * bias (a constant vector) or a residual (a whole matrix) */
		float *bd = (float *)cg_weight_data(g, bw), *cd = cvec ? (float *)cg_weight_data(g, cw) : NULL;
		if (bd && (cd || !cvec)) {
			struct fusion fu;
			find_fusion(g, in, in->ops[1].val, cvec ? NULL : in->ops[3].val, &fu);
			int64_t v[15] = {(int64_t)mm, 1, 1, (int64_t)kk, 1, 1, (int64_t)nn, 1, 1, 1, 1, 0, 0, 1, 1};
			emit_product(g, v, 1, &fu, (size_t)kk, in->ops[1].val, bd, tb ? (size_t)kk : 1,
				     tb ? 1 : (size_t)nn, cd);
		}
		free(bd);
		free(cd);
		return;
	}
	uint64_t cs0 = 0, cs1 = 0;
	if (ct->rank == 1) {
		cs1 = ct->dims[0] == nn && nn > 1 ? 1 : 0;
	} else if (ct->rank == 2) {
		cs0 = ct->dims[0] == mm && mm > 1 ? ct->dims[1] : 0;
		cs1 = ct->dims[1] == nn && nn > 1 ? 1 : 0;
	}
	char a[96], b[96], c[96], o[96], f1[40], f2[40];
	os_printf(g->body, "\t%s(%s, %s, %s, %s, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %d, %d, %s, %s, %"
		  PRIu64 ", %" PRIu64 ");\n",
		  g->gemm == CBACKEND_GEMM_OPENBLAS ? "cb_gemm_blas_f32" : "cb_gemm_f32",
		  PTR(in->ops[1].val, "float", a), PTR(in->ops[2].val, "float", b), PTR(in->ops[3].val, "float", c),
		  PTR(in->ops[0].val, "float", o), mm, nn, kk, ta, tb, cg_flit(f1, ir_float(in, "alpha")), cg_flit(f2, ir_float(in, "beta")), cs0,
		  cs1);
}

/* The rarer kinds: reference kernels (kernels/cb_ref.c). */
static void emit_ref(struct cg *g, struct ir_instr *in)
{
	char a[96], b[96], c[96], o[96], e[96];
	struct ir_value *d0 = in->ops[0].val, *s1 = in->nops > 1 ? in->ops[1].val : NULL;
	unsigned n;
	switch (in->kind) {
	case IK_convtranspose: {
		for (unsigned i = 0; i < 4; i++)
			if (!is_float(in->ops[i].val)) {
				cg_unsupported(g, in, "only float transposed convolutions are compiled");
				return;
			}
		const struct type *st = s1->type, *dt = d0->type;
		const int64_t *k = ir_ints(in, "kernels", &n), *s = ir_ints(in, "strides", &n),
			      *p = ir_ints(in, "pads", &n), *dl = ir_ints(in, "dilation", &n);
		int64_t v[16] = {(int64_t)st->dims[0], (int64_t)st->dims[1], (int64_t)st->dims[2], (int64_t)st->dims[3],
				 (int64_t)dt->dims[1], (int64_t)dt->dims[2], (int64_t)dt->dims[3], k[0], k[1], s[0], s[1],
				 p[0], p[1], dl[0], dl[1], ir_int(in, "group")};
		unsigned id = int_table(g, v, 16);
		os_printf(g->body, "\tcb_convtranspose_f32(ti%u, %s, %s, %s, %s);\n", id, PTR(s1, "float", a),
			  PTR(in->ops[2].val, "float", b), PTR(in->ops[3].val, "float", c), PTR(d0, "float", o));
		return;
	}
	case IK_maxpoolwithargmax: {
		const struct type *st = s1->type, *dt = d0->type, *at = in->ops[2].val->type;
		if (!is_float(d0) || at->rank != dt->rank || int_es(in->ops[2].val) != 8) {
			cg_unsupported(g, in, "only float max pooling with an int64 argmax of the result's shape is compiled");
			return;
		}
		const int64_t *k = ir_ints(in, "kernels", &n), *s = ir_ints(in, "strides", &n),
			      *p = ir_ints(in, "pads", &n);
		int64_t v[12] = {(int64_t)st->dims[0], (int64_t)st->dims[1], (int64_t)st->dims[2], (int64_t)st->dims[3],
				 (int64_t)dt->dims[1], (int64_t)dt->dims[2], k[0], k[1], s[0], s[1], p[0], p[1]};
		unsigned id = int_table(g, v, 12);
		os_printf(g->body, "\tcb_maxpool_argmax_f32(ti%u, %s, %s, %s);\n", id, PTR(s1, "float", a),
			  PTR(d0, "float", o), PTR(in->ops[2].val, "int64_t", b));
		return;
	}
	case IK_instancenormalization: {
		for (unsigned i = 0; i < 4; i++)
			if (!is_float(in->ops[i].val)) {
				cg_unsupported(g, in, "only float instance normalization is compiled");
				return;
			}
		char fe[40];
		unsigned t = dims_table(g, s1->type);
		os_printf(g->body, "\tcb_instancenorm_f32(%s, %s, %s, %s, tb%u, %u, %d, %s);\n", PTR(s1, "float", a),
			  PTR(d0, "float", o), PTR(in->ops[2].val, "float", b), PTR(in->ops[3].val, "float", c), t,
			  s1->type->rank, (int)ir_int(in, "channel_idx"), cg_flit(fe, ir_float(in, "epsilon")));
		return;
	}
	case IK_gathernd: {
		struct ir_value *ix = in->ops[2].val;
		const struct type *it = ix->type;
		int ies = int_es(ix);
		uint64_t m = it->rank ? it->dims[it->rank - 1] : 0;
		if (!ies || !m) {
			cg_unsupported(g, in, "indices must be int32/int64 tuples");
			return;
		}
		unsigned t = dims_table(g, s1->type);
		os_printf(g->body, "\tif (cb_gathernd(%s, tb%u, %u, %s, %d, %" PRIu64 ", %" PRIu64 ", %d, %s, %zu))\n"
			  "\t\treturn -1;\n",
			  PTR(s1, "void", a), t, s1->type->rank, PTR(ix, "void", b), ies, type_numel(it) / m, m,
			  (int)ir_int(in, "batch_dims"), PTR(d0, "void", o), elem_size((enum elem_kind)s1->type->elem));
		return;
	}
	case IK_resizenearest: case IK_resizebilinear: {
		bool bil = in->kind == IK_resizebilinear;
		if (bil && !is_float(d0)) {
			cg_unsupported(g, in, "only float bilinear resizing is compiled");
			return;
		}
		const double *sc = ir_floats(in, "scale", &n);
		unsigned id = g->uniq++;
		os_printf(g->decls, "static const double sc%u[] = {", id);
		for (unsigned i = 0; i < n; i++)
			os_printf(g->decls, "%s%.17g", i ? ", " : "", sc[i]);
		os_puts(g->decls, "};\n");
		unsigned t1 = dims_table(g, s1->type), t2 = dims_table(g, d0->type);
		os_printf(g->body, "\tcb_resize(%s, tb%u, %s, tb%u, sc%u, %u, %d, %zu);\n", PTR(s1, "void", a), t1,
			  PTR(d0, "void", o), t2, id, s1->type->rank, bil, elem_size((enum elem_kind)s1->type->elem));
		return;
	}
	case IK_topk: {
		struct ir_value *vals = in->ops[0].val, *ind = in->ops[1].val, *src = in->ops[2].val,
				*scr = in->ops[3].val;
		const struct type *t = src->type;
		uint64_t len = t->dims[t->rank - 1];
		if (!is_float(src) || !int_es(ind) || type_bytes(scr->type) < len * sizeof(size_t)) {
			cg_unsupported(g, in, "only float top-k with int32/int64 indices is compiled");
			return;
		}
		os_printf(g->body, "\tcb_topk_f32(%s, %s, %s, %d, %" PRIu64 ", %" PRIu64 ", %" PRId64 ", (size_t *)%s);\n",
			  PTR(src, "float", a), PTR(vals, "float", o), PTR(ind, "void", b), int_es(ind),
			  len ? type_numel(t) / len : 0, len, ir_int(in, "k"), PTR(scr, "void", c));
		return;
	}
	case IK_cumsum: {
		int ies = int_es(s1);
		if (!is_float(s1) && !ies) {
			cg_unsupported(g, in, "only float and int32/int64 cumulative sums are compiled");
			return;
		}
		uint64_t outer, len, inner;
		split_axis(s1->type, (unsigned)ir_int(in, "axis"), &outer, &len, &inner);
		os_printf(g->body, "\tcb_cumsum(%s, %s, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %d, %d, %d);\n",
			  PTR(s1, "void", a), PTR(d0, "void", o), outer, len, inner, (int)ir_int(in, "exclusive"),
			  (int)ir_int(in, "reverse"), ies);
		return;
	}
	case IK_crossentropyloss: {
		struct ir_value *p = in->ops[1].val, *l = in->ops[2].val;
		if (!is_float(p) || !is_float(d0) || !int_es(l)) {
			cg_unsupported(g, in, "only float probabilities with int32/int64 labels are compiled");
			return;
		}
		os_printf(g->body, "\tif (cb_crossentropy_f32(%s, %s, %d, %" PRIu64 ", %" PRIu64 ", %s))\n\t\treturn -1;\n",
			  PTR(p, "float", a), PTR(l, "void", b), int_es(l), p->type->dims[0], p->type->dims[1],
			  PTR(d0, "float", o));
		return;
	}
	case IK_quantizationprofile: {
		struct ir_value *src = in->ops[0].val, *h = in->ops[1].val, *info = in->ops[2].val;
		if (!is_float(src) || !is_float(h) || !is_float(info)) {
			cg_unsupported(g, in, "only float profiles are compiled");
			return;
		}
		uint64_t bins = type_numel(h->type);
		if (bins * sizeof(float) > g->scratch_bytes)
			g->scratch_bytes = bins * sizeof(float);
		os_printf(g->body, "\tcb_qprofile_f32(%s, %" PRIu64 ", %s, %" PRIu64 ", %s, (float *)(A + %" PRIu64 "));\n",
			  PTR(src, "float", a), type_numel(src->type), PTR(h, "float", b), bins, PTR(info, "float", e),
			  g->scratch_off);
		return;
	}
	case IK_gatherelements: {
		struct ir_value *ix = in->ops[2].val;
		int ies = int_es(ix);
		if (!ies) {
			cg_unsupported(g, in, "indices must be int32/int64");
			return;
		}
		unsigned t1 = dims_table(g, s1->type), t2 = dims_table(g, ix->type);
		os_printf(g->body, "\tif (cb_gather_elements(%s, tb%u, %s, %d, tb%u, %u, %d, %s, %zu))\n\t\treturn -1;\n",
			  PTR(s1, "void", a), t1, PTR(ix, "void", b), ies, t2, ix->type->rank, (int)ir_int(in, "axis"),
			  PTR(d0, "void", o), elem_size((enum elem_kind)s1->type->elem));
		return;
	}
	case IK_scatterelements: case IK_scatternd: {
		struct ir_value *ix = in->ops[2].val, *up = in->ops[3].val;
		int ies = int_es(ix), red = (int)ir_int(in, "reduction"), cls = int_es(d0);
		const struct type *it = ix->type;
		if (!ies || (red && !cls && !is_float(d0)) || (in->kind == IK_scatternd && !it->rank)) {
			cg_unsupported(g, in, "int32/int64 indices and, with a reduction, float or int32/int64 data needed");
			return;
		}
		if (!cg_same(g, d0, s1))
			os_printf(g->body, "\tmemmove(%s, %s, %" PRIu64 ");\n", PTR(d0, "uint8_t", o), PTR(s1, "uint8_t", a),
				  type_bytes(d0->type));
		unsigned t1 = dims_table(g, d0->type);
		size_t es = elem_size((enum elem_kind)d0->type->elem);
		if (in->kind == IK_scatterelements) {
			unsigned t2 = dims_table(g, it);
			os_printf(g->body, "\tif (cb_scatter_elements(%s, tb%u, %s, %d, tb%u, %u, %d, %s, %d, %d, %zu))\n"
				  "\t\treturn -1;\n",
				  PTR(d0, "void", o), t1, PTR(ix, "void", b), ies, t2, it->rank, (int)ir_int(in, "axis"),
				  PTR(up, "void", c), red, cls, es);
		} else {
			uint64_t m = it->dims[it->rank - 1];
			os_printf(g->body, "\tif (cb_scatter_nd(%s, tb%u, %u, %s, %d, %" PRIu64 ", %" PRIu64 ", %s, %d, %d, %zu))\n"
				  "\t\treturn -1;\n",
				  PTR(d0, "void", o), t1, d0->type->rank, PTR(ix, "void", b), ies, m ? type_numel(it) / m : 0, m,
				  PTR(up, "void", c), red, cls, es);
		}
		return;
	}
	default: unreachable("not a reference kind");
	}
}

void cg_emit_instr(struct cg *g, struct ir_instr *in)
{
	char a[96], b[96], o[96];
	switch (in->kind) {
	case IK_alloc: case IK_dealloc: case IK_tensorview: case IK_touch:
		return;
	case IK_copy:
		if (!cg_same(g, in->ops[0].val, in->ops[1].val))
			os_printf(g->body, "\tmemmove(%s, %s, %" PRIu64 ");\n", PTR(in->ops[0].val, "uint8_t", o),
				  PTR(in->ops[1].val, "uint8_t", a), type_bytes(in->ops[0].val->type));
		return;
	case IK_splat: {
		const struct type *t = in->ops[0].val->type;
		if (cg_ew_supported(in)) { /* a loop that may fuse with its readers */
			cg_emit_ew(g, in);
			return;
		}
		const char *ct = cg_ctype(t->elem);
		if (!ct) {
			cg_unsupported(g, in, "element kind not compiled");
			return;
		}
		os_printf(g->body, "\tfor (size_t i = 0; i < %" PRIu64 "u; i++)\n\t\t%s[i] = (%s)%.17g;\n", type_numel(t),
			  PTR(in->ops[0].val, ct, o), ct, ir_float(in, "value"));
		return;
	}
	case IK_convolution: emit_conv(g, in); return;
	case IK_fullyconnected: emit_linear(g, in, in->ops[0].val, in->ops[1].val, in->ops[2].val, in->ops[3].val); return;
	case IK_matmul: emit_linear(g, in, in->ops[0].val, in->ops[1].val, in->ops[2].val, NULL); return;
	case IK_batchmatmul: {
		const struct type *lt = in->ops[1].val->type, *rt = in->ops[2].val->type;
		if (!is_float(in->ops[0].val) || !is_float(in->ops[1].val) || !is_float(in->ops[2].val)) {
			cg_unsupported(g, in, "only float matrix products are compiled");
			return;
		}
		os_printf(g->body, "\t%s(%s, %s, 0, %s, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 ");\n",
			  g->gemm == CBACKEND_GEMM_OPENBLAS ? "cb_matmul_blas_f32" : "cb_matmul_f32",
			  PTR(in->ops[1].val, "float", a), PTR(in->ops[2].val, "float", b), PTR(in->ops[0].val, "float", o),
			  lt->dims[0], lt->dims[1], lt->dims[2], rt->dims[2]);
		return;
	}
	case IK_gemm: emit_gemm(g, in); return;
	case IK_maxpool: emit_pool(g, in, "cb_maxpool_f32"); return;
	case IK_avgpool: emit_pool(g, in, "cb_avgpool_f32"); return;
	case IK_adaptiveavgpool: emit_pool(g, in, "cb_adaptiveavgpool_f32"); return;
	case IK_softmax: case IK_logsoftmax: {
		if (!is_float(in->ops[0].val) || !is_float(in->ops[1].val)) {
			cg_unsupported(g, in, "only float softmax is compiled");
			return;
		}
		uint64_t outer, d, inner;
		split_axis(in->ops[1].val->type, (unsigned)ir_int(in, "axis"), &outer, &d, &inner);
		os_printf(g->body, "\tcb_softmax_f32(%s, %s, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %d);\n",
			  PTR(in->ops[1].val, "float", a), PTR(in->ops[0].val, "float", o), outer, d, inner,
			  in->kind == IK_logsoftmax);
		return;
	}
	case IK_batchnormalization: case IK_localresponsenormalization: case IK_layernormalization:
		emit_norm(g, in);
		return;
	case IK_transpose: case IK_extracttensor: case IK_inserttensor: case IK_tile: case IK_broadcast: case IK_flip:
	case IK_pad: case IK_spacetodepth: case IK_depthtospace:
		emit_move(g, in);
		return;
	case IK_convtranspose: case IK_maxpoolwithargmax: case IK_instancenormalization: case IK_gathernd:
	case IK_resizenearest: case IK_resizebilinear: case IK_topk: case IK_cumsum: case IK_crossentropyloss:
	case IK_quantizationprofile: case IK_gatherelements: case IK_scatterelements: case IK_scatternd:
		emit_ref(g, in);
		return;
	case IK_batchedadd: {
		const struct type *t = in->ops[0].val->type;
		const char *ct = cg_ctype(t->elem);
		if (!ct || t->elem == EK_BOOL || in->ops[2].val->type->elem != t->elem) {
			cg_unsupported(g, in, "element kind not compiled");
			return;
		}
		uint64_t sl = type_numel(in->ops[2].val->type);
		char s[96];
		os_printf(g->body, "\tfor (size_t b = 0; b < %" PRIu64 "u; b++)\n\t\tfor (size_t i = 0; i < %" PRIu64
			  "u; i++)\n\t\t\t%s[b * %" PRIu64 "u + i] = (%s)(%s[b * %" PRIu64 "u + i] + %s[i]);\n",
			  t->dims[0], sl, PTR(in->ops[0].val, ct, o), sl, ct, PTR(in->ops[1].val, ct, a), sl,
			  PTR(in->ops[2].val, ct, s));
		return;
	}
	case IK_batchedreduceadd: emit_reduce(g, in, 0); return;
	case IK_batchedreducemean: emit_reduce(g, in, 1); return;
	case IK_batchedreducemax: emit_reduce(g, in, 2); return;
	case IK_batchedreducemin: emit_reduce(g, in, 3); return;
	case IK_batchedreduceprod: emit_reduce(g, in, 4); return;
	case IK_argmax: case IK_argmin: {
		struct ir_value *src = in->ops[1].val, *dst = in->ops[0].val;
		if (!is_float(src)) {
			cg_unsupported(g, in, "only float arg max/min is compiled");
			return;
		}
		uint64_t outer, d, inner;
		split_axis(src->type, (unsigned)ir_int(in, "axis"), &outer, &d, &inner);
		int i64 = dst->type->elem == EK_I64 || dst->type->elem == EK_INDEX64;
		os_printf(g->body, "\tcb_argmax_f32(%s, %s, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %d, %d);\n",
			  PTR(src, "float", a), PTR(dst, "void", o), outer, d, inner, in->kind == IK_argmin, i64);
		return;
	}
	case IK_gather: {
		struct ir_value *dst = in->ops[0].val, *data = in->ops[1].val, *ind = in->ops[2].val;
		uint64_t outer, d, inner;
		split_axis(data->type, (unsigned)ir_int(in, "axis"), &outer, &d, &inner);
		int i64 = ind->type->elem == EK_I64 || ind->type->elem == EK_INDEX64;
		os_printf(g->body, "\tif (cb_gather(%s, %s, %s, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64
			  ", %d, %zu))\n\t\treturn -1;\n",
			  PTR(data, "void", a), PTR(ind, "void", b), PTR(dst, "void", o), outer, d, inner,
			  type_numel(ind->type), i64, elem_size((enum elem_kind)data->type->elem));
		return;
	}
	default:
		if (cg_ew_supported(in)) {
			cg_emit_ew(g, in);
			return;
		}
		cg_unsupported(g, in, "kind or element kinds not supported");
		return;
	}
}
