/* cgen_conv.c - the emitters of the matrix-product kinds: convolutions
 * (direct packed, Winograd), fully-connected layers, matmuls and Gemm.
 *
 * Convolutions and fully-connected layers with constant weights take the
 * packed matrix-product path (kernels/cb_conv.c): the filter is packed into
 * CG_NR-wide panels, the bias padded to whole panels; depthwise filters are
 * transposed to KH x KW x C. An add of another buffer and then a relu or a
 * clip that directly follow a convolution are fused into its epilogue when
 * the convolution's own result is read by nothing else (the kernel writes
 * the last fused result instead).
 */
#include "backends/c/cgen.h"
#include "backends/c/cgen_ops.h"
#include "support/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
 * which reads src) that can run in in's epilogue; marks them fused. With
 * res, in adds that residual itself (no add is looked for); act 1: in
 * rectifies itself (C.ConvAddRelu: no relu or clip is looked for). */
static void find_fusion(struct cg *g, struct ir_instr *in, struct ir_value *src, struct ir_value *res, int act,
			struct fusion *fu)
{
	fu->out = in->ops[0].val;
	fu->res = res;
	fu->act = act;
	fu->lo = fu->hi = 0.0;
	fu->out_off = fu->ostride = 0;
	struct ir_instr *last = in, *nx = cg_next_real(in);
	if (nx && !res && nx->kind == IK_add && cg_is_float(nx->ops[0].val)) {
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
	if (nx && !act && (nx->kind == IK_relu || nx->kind == IK_clip) && cg_is_float(nx->ops[0].val) &&
	    cg_same(g, nx->ops[1].val, fu->out)) {
		struct ir_value *d = nx->ops[0].val;
		if (!cg_overlap(g, d, src) && (cg_same(g, d, fu->out) || !cg_read_later(g, nx, fu->out)) &&
		    (!fu->res || cg_same(g, d, fu->res) || !cg_overlap(g, d, fu->res))) {
			fu->out = d;
			fu->act = nx->kind == IK_relu ? 1 : 2;
			if (nx->kind == IK_clip) {
				fu->lo = ir_float(nx, AN_min);
				fu->hi = ir_float(nx, AN_max);
			}
			u64map_put(&g->fused, (uint64_t)(uintptr_t)nx, nx);
			last = nx;
			nx = cg_next_real(nx);
		}
	}
	/* then an inserttensor of the result into a concatenation along the
	 * channels: write into the concatenation directly */
	struct ir_value *big;
	if (cg_into_concat(g, in, last, fu->out, src, fu->res, &big, &fu->out_off, &fu->ostride))
		fu->out = big;
}

/* cgen.h */
bool cg_into_concat(struct cg *g, struct ir_instr *in, struct ir_instr *last, struct ir_value *out,
		    struct ir_value *src, struct ir_value *res, struct ir_value **big, int64_t *off, int64_t *stride)
{
	/* the insert may come after other instructions (the other parts) */
	struct ir_instr *nx = cg_next_real(last);
	while (nx && !(nx->kind == IK_inserttensor && cg_same(g, nx->ops[1].val, out)) &&
	       (nx->kind == IK_convolution || nx->kind == IK_c_convaddrelu || nx->kind == IK_relu ||
		nx->kind == IK_inserttensor || nx->kind == IK_clip ||
		nx->kind == IK_channelwisequantizedconvolution || nx->kind == IK_rescalequantized))
		nx = cg_next_real(nx);
	if (!nx || nx->kind != IK_inserttensor || ir_int(nx, AN_count) != 1 || !cg_same(g, nx->ops[1].val, out) ||
	    cg_read_later(g, nx, out))
		return false;
	struct ir_value *bv = nx->ops[0].val;
	const struct type *bt = bv->type, *st = out->type;
	unsigned n;
	const int64_t *start = ir_ints(nx, AN_start, &n);
	bool ok = bt->rank == 4 && st->rank == 4 && bt->elem == st->elem && start[0] == 0 && start[1] == 0 &&
		  start[2] == 0;
	for (unsigned i = 0; ok && i < 3; i++)
		ok = bt->dims[i] == st->dims[i];
	/* writing the concatenation early is safe if nothing between here
	 * and the insert touches its memory except other inserts into it
	 * (a buffer live across the whole stretch cannot share it: the
	 * plan kept them apart) */
	struct ir_value *root = ir_value_root(bv, NULL);
	for (struct ir_instr *q = in->next; q && q != nx && ok; q = q->next) {
		if (cg_emits_nothing(q->kind) || ptrmap_get(&g->fused, q))
			continue;
		bool into_big = q->kind == IK_inserttensor && ir_value_root(q->ops[0].val, NULL) == root;
		for (unsigned i = into_big ? 1 : 0; i < q->nops && ok; i++)
			ok = !cg_overlap(g, q->ops[i].val, bv);
		/* and nothing reads the result it will no longer find */
		for (unsigned i = 0; i < q->nops && ok; i++)
			ok = !cg_overlap(g, q->ops[i].val, out);
	}
	if (!ok || cg_overlap(g, bv, src) || (res && cg_overlap(g, bv, res)))
		return false;
	*big = bv;
	*off = start[3];
	*stride = (int64_t)bt->dims[3];
	u64map_put(&g->fused, (uint64_t)(uintptr_t)nx, nx);
	return true;
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

/* How cb_pack_f32 reads a filter that is not a constant: row r (of all
 * groups) at r * so, column (k1, k2, k3) at base + k1 * s[0] + k2 * s[1] +
 * k3 * s[2], k over n[0] x n[1] x n[2] (the filter's K order). */
struct walk {
	int64_t so, base, n[3], s[3];
};

/* Emits the matrix product of shape v (cb_conv_args order) reading x whose
 * filter fil is not a constant (a trainable placeholder, an activation):
 * cb_pack_f32 packs it (read as w says) and the bias (NULL: zeros) at run
 * time into the pack region after the scratch (CB_PACK_OFF, sized here),
 * then cb_conv_f32 runs as for a constant. */
static void emit_product_live(struct cg *g, const int64_t v[15], int groups, const struct fusion *fu, size_t kdim,
			      struct ir_value *x, struct ir_value *fil, const struct walk *w, struct ir_value *bias)
{
	size_t oc = (size_t)v[6], np = (oc + CG_NR - 1) / CG_NR;
	uint64_t wfloats = (uint64_t)groups * np * kdim * CG_NR, bfloats = (uint64_t)groups * np * CG_NR;
	uint64_t need = (wfloats + bfloats) * sizeof(float);
	if (need > g->pack_bytes)
		g->pack_bytes = need;
	unsigned id = conv_args(g, v, groups, fu, kdim, false, 0);
	char a[96], f[96], b[96], o[96], r[96];
	os_printf(g->body,
		  "\tcb_pack_f32(%s, %s, (float *)(A + CB_PACK_OFF), (float *)(A + CB_PACK_OFF) + %" PRIu64
		  ", %d, %zu, %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
		  ", %" PRId64 ");\n",
		  PTR(fil, "float", f), bias ? PTR(bias, "float", b) : "0", wfloats, groups, oc, w->so, w->base, w->n[0],
		  w->s[0], w->n[1], w->s[1], w->n[2], w->s[2]);
	os_printf(g->body,
		  "\tcb_conv_f32(&cv%u, %s, (const float *)(A + CB_PACK_OFF), (const float *)(A + CB_PACK_OFF) + %" PRIu64
		  ", %s, %s, (float *)(A + %" PRIu64 "));\n",
		  id, PTR(x, "float", a), wfloats, fu_out(g, fu, o, sizeof o), fu->res ? PTR(fu->res, "float", r) : "0",
		  g->scratch_off);
}

/* Whether a product whose filter or bias is not a constant runs on the
 * packed path (emit_product_live): with the built-in kernels (-gemm=openblas
 * keeps the loops it had for them). */
static bool live_packed(const struct cg *g)
{
	return g->gemm == CBACKEND_GEMM_BUILTIN;
}

/* The output tile size m of a Winograd F(m x m, 3 x 3) for the
 * convolution of shape v (cb_conv_args order), or 0: compute it directly.
 * Eligible: 3x3, stride and dilation 1, one group, channel counts
 * multiples of 16, the built-in kernels. auto takes the cheapest of
 * direct, m = 2 and m = 4 by a cost model in seconds, its rates measured
 * on ResNet-50's layers on one AVX-512 core (Intel Xeon, family 6 model
 * 207, 2026-11-26; -DCB_PROFILE per layer with -winograd=off, f2 and f4):
 * the products at 150 GFLOP/s (Winograd's over whole tiles: those past the
 * image cost as much as used ones) overlap the filter's streaming from
 * memory at 10 GB/s (one core reads 12 GB/s at best), so a layer takes
 * the longer of the two; again from L3 at 60 GB/s per further block of
 * tiles when the filter exceeds L2 (1 MiB); 0.28 ns per transformed input
 * and product value. On ResNet-50 at batch 1 it picks m = 4 for the 56x56
 * and 28x28 layers (measured 0.63 and 0.58 ms against 1.69 and 1.67
 * direct), m = 2 for 14x14x256 (0.90-1.02 ms; m = 4 1.48, direct 1.55:
 * m = 4's 9 MiB filter streams from memory for 16 tiles) and direct for
 * 7x7x512 (2.2 ms; m = 2 2.47, m = 4 5.0). */
static int wino_choice(const struct cg *g, const int64_t v[15], int groups)
{
	if (g->winograd == CBACKEND_WINO_OFF || g->gemm != CBACKEND_GEMM_BUILTIN || groups != 1 || v[7] != 3 ||
	    v[8] != 3 || v[9] != 1 || v[10] != 1 || v[13] != 1 || v[14] != 1 || v[3] % 16 || v[6] % 16)
		return 0;
	if (g->winograd == CBACKEND_WINO_F2)
		return 2;
	if (g->winograd == CBACKEND_WINO_F4)
		return 4;
	const double rate = 150e9, dram = 10e9, l3 = 60e9, per_value = 0.28e-9;
	const double c = (double)v[3], oc = (double)v[6];
	const uint64_t pixels = (uint64_t)(v[0] * v[4] * v[5]);
	double best = fmax(2.0 * (double)pixels * 9 * c * oc / rate, 9 * c * oc * sizeof(float) / dram);
	int choice = 0;
	for (int m = 2; m <= 4; m += 2) {
		struct wino_shape w = wino_shape(v, m);
		uint64_t blocks = (w.tiles + w.mc - 1) / w.mc;
		double a2 = (double)((m + 2) * (m + 2)), ub = (double)w.ubytes;
		double t = fmax(2.0 * (double)w.tiles * a2 * c * oc / rate, ub / dram) +
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

/* The matrix product that a float transpose t feeds as its weights and
 * that can read the transpose's source instead (through the source's
 * strides, cb_pack_f32), or NULL: a matmul or fully-connected layer (a 2-D
 * transpose) or a one-group convolution (4-D); it is the first instruction
 * after t that touches t's result and reads it only as its weights, nothing
 * in between writes the source, the product does not write over the
 * source, and nothing after it reads the result. In a training step: the
 * input gradient of a fully-connected layer (dy * W^T) and the weight
 * gradient of a convolution (its filter is the output gradient with batch
 * and channels swapped). */
static struct ir_instr *transposed_weights_user(struct cg *g, struct ir_instr *t)
{
	struct ir_value *r = t->ops[0].val, *x = t->ops[1].val;
	unsigned rank = r->type->rank;
	if (!live_packed(g) || !cg_is_float(r) || !cg_is_float(x) || (rank != 2 && rank != 4) || x->type->rank != rank)
		return NULL;
	for (struct ir_instr *q = t->next; q; q = q->next) {
		if (cg_emits_nothing(q->kind))
			continue;
		if (instr_is_block(q->kind))
			return NULL; /* a loop could run the user again after its source changed */
		bool touches = false;
		for (unsigned i = 0; i < q->nops && !touches; i++)
			touches = cg_overlap(g, q->ops[i].val, r);
		if (touches) {
			bool product = rank == 2 ? q->kind == IK_matmul || q->kind == IK_fullyconnected
						 : q->kind == IK_convolution && ir_int(q, AN_group) == 1;
			product = product && q->nops >= 3 && cg_same(g, q->ops[2].val, r);
			for (unsigned i = 0; product && i < q->nops; i++)
				product = i == 2 || !cg_overlap(g, q->ops[i].val, r);
			if (!product || cg_overlap(g, q->ops[0].val, x) || cg_read_later(g, q, r))
				return NULL;
			return q;
		}
		for (unsigned i = 0; i < q->nops; i++)
			if (q->ops[i].qual != IQ_IN && cg_overlap(g, q->ops[i].val, x))
				return NULL;
	}
	return NULL;
}

/* Skips a transpose of weights whose only reader is a matrix product that
 * packs the source in transposed order itself (transposed_walk): true,
 * nothing emitted. The pack reads the values the transpose would have
 * copied, so the product's result is the same. */
bool cg_emit_transpose_into_product(struct cg *g, struct ir_instr *in)
{
	if (!transposed_weights_user(g, in))
		return false;
	ptrmap_put(&g->fused, in, in);
	return true;
}

/* The source of a transpose skipped by cg_emit_transpose_into_product
 * whose result is the weights w of the product in, or NULL; with it, in
 * *wk, how cb_pack_f32 reads the filter from the source: row o (the
 * result's index 0 of a convolution filter, index 1 of a matmul's k x m
 * weights), the other indices as K, each through the source's stride of
 * the axis the transpose moved there. */
static struct ir_value *transposed_walk(struct cg *g, struct ir_instr *in, struct ir_value *w, struct walk *wk)
{
	for (struct ir_instr *q = in->prev; q; q = q->prev) {
		if (cg_emits_nothing(q->kind))
			continue;
		if (q->kind == IK_transpose && cg_same(g, q->ops[0].val, w)) {
			if (!ptrmap_get(&g->fused, q) || transposed_weights_user(g, q) != in)
				return NULL;
			struct ir_value *x = q->ops[1].val;
			int64_t xs[GLOW_MAX_RANK + 1];
			cg_strides_of(x->type, xs);
			unsigned n;
			const int64_t *sh = ir_ints(q, AN_shuffle, &n);
			const struct type *rt = w->type;
			wk->base = 0;
			wk->n[0] = wk->n[1] = 1;
			wk->s[0] = wk->s[1] = 0;
			if (rt->rank == 2) {
				wk->so = xs[sh[1]];
				wk->n[2] = (int64_t)rt->dims[0];
				wk->s[2] = xs[sh[0]];
			} else {
				wk->so = xs[sh[0]];
				for (unsigned i = 0; i < 3; i++) {
					wk->n[i] = (int64_t)rt->dims[i + 1];
					wk->s[i] = xs[sh[i + 1]];
				}
			}
			return x;
		}
		for (unsigned i = 0; i < q->nops; i++)
			if (cg_overlap(g, q->ops[i].val, w))
				return NULL;
	}
	return NULL;
}

/* Convolution (direct, packed or Winograd; with fused add/relu/clip), and
 * with row parameter CG_CONV_ADD_RELU the C backend's C.ConvAddRelu
 * (c_convaddrelu): the same kernels with the residual (operand 4) and the
 * relu in their epilogue from the start. */
void cg_emit_conv(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	struct ir_value *dst = in->ops[0].val, *src = in->ops[1].val, *fil = in->ops[2].val, *bias = in->ops[3].val;
	bool own = row->param == CG_CONV_ADD_RELU;
	struct ir_value *res = own ? in->ops[4].val : NULL;
	int act = own ? 1 : 0;
	if (!cg_is_float(dst) || !cg_is_float(src) || !cg_is_float(fil) || !cg_is_float(bias) ||
	    (res && !cg_is_float(res))) {
		cg_unsupported(g, in, "only float convolutions are compiled");
		return;
	}
	const struct type *st = src->type, *dt = dst->type;
	unsigned n;
	const int64_t *k = ir_ints(in, AN_kernels, &n), *s = ir_ints(in, AN_strides, &n), *p = ir_ints(in, AN_pads, &n),
		      *dl = ir_ints(in, AN_dilation, &n);
	int groups = (int)ir_int(in, AN_group);
	int64_t c = (int64_t)st->dims[3] / groups, oc = (int64_t)dt->dims[3] / groups;
	int64_t v[15] = {(int64_t)st->dims[0], (int64_t)st->dims[1], (int64_t)st->dims[2], c, (int64_t)dt->dims[1],
			 (int64_t)dt->dims[2], oc, k[0], k[1], s[0], s[1], p[0], p[1], dl[0], dl[1]};
	struct ir_weight *fw = cg_const_weight(fil), *bw = cg_const_weight(bias);
	char a[96], b[96], o[96], r[96];
	if ((!fw || !bw) && live_packed(g) && !(c == 1 && oc == 1 && groups > 1)) {
		/* a filter (or bias) that is not a constant: packed per call */
		struct fusion fu;
		find_fusion(g, in, src, res, act, &fu);
		size_t kdim = (size_t)(k[0] * k[1] * c);
		struct walk w = {(int64_t)kdim, 0, {1, 1, (int64_t)kdim}, {0, 0, 1}};
		struct ir_value *tx = transposed_walk(g, in, fil, &w);
		/* one input channel: taps summed in registers (cgen_grad.c) */
		if (!tx && !fu.res && !fu.ostride && cg_emit_conv_one_channel(g, in, fu.out, fu.act, fu.lo, fu.hi))
			return;
		emit_product_live(g, v, groups, &fu, kdim, src, tx ? tx : fil, &w, bias);
		return;
	}
	if (!fw || !bw) {
		if (own) { /* the reference loops have no epilogue */
			cg_unsupported(g, in, "a filter or bias that is not a constant needs the built-in kernels (-gemm=builtin)");
			return;
		}
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
	find_fusion(g, in, src, res, act, &fu);
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

/* Emits dst = the stride-1 transposed convolution of src (N x H x W x
 * groups*C) with a filter whose tap (ky, kx) of output channel o and input
 * channel ci lies at fil + ci * ci_stride + o * o_stride + ky * KW * C' +
 * kx * C' (C' the filter's last dimension), kernels k, pads p (top, left
 * first), dilation dl: a convolution with the rotated filter on the packed
 * path (one group where the filter is read transposed, o_stride 1); false,
 * emitting nothing, where the pads leave nothing to rotate into. */
static bool emit_rotated(struct cg *g, struct ir_value *dst, struct ir_value *src, struct ir_value *fil,
			 struct ir_value *bias, const int64_t *k, const int64_t *p, const int64_t *dl, int64_t groups,
			 bool transposed)
{
	const struct type *st = src->type, *dt = dst->type, *ft = fil->type;
	/* out[oy] gets in[iy] * f[ky] where oy = iy + ky * dh - pt: with ky' =
	 * kh - 1 - ky, iy = oy - pt' + ky' * dh, pt' = (kh - 1) * dh - pt, a
	 * convolution with the rotated filter and pads pt', pl' */
	int64_t pt = (k[0] - 1) * dl[0] - p[0], pl = (k[1] - 1) * dl[1] - p[1];
	int64_t c = (int64_t)st->dims[3] / groups, oc = (int64_t)dt->dims[3] / groups, fc = (int64_t)ft->dims[3];
	if (pt < 0 || pl < 0 || (transposed && groups != 1))
		return false;
	int64_t v[15] = {(int64_t)st->dims[0], (int64_t)st->dims[1], (int64_t)st->dims[2], c, (int64_t)dt->dims[1],
			 (int64_t)dt->dims[2], oc, k[0], k[1], 1, 1, pt, pl, dl[0], dl[1]};
	struct fusion fu = {dst, NULL, 0, 0.0, 0.0, 0, 0};
	size_t kdim = (size_t)(k[0] * k[1] * c);
	/* the taps backwards: (ky, kx, ci) read at (kh - 1 - ky, kw - 1 - kx, ci);
	 * transposed, ci is the filter's first dimension and the row its last */
	int64_t ci = transposed ? k[0] * k[1] * fc : 1;
	struct walk w = {transposed ? 1 : (int64_t)kdim, ((k[0] - 1) * k[1] + k[1] - 1) * fc,
			 {k[0], k[1], c}, {-k[1] * fc, -fc, ci}};
	emit_product_live(g, v, (int)groups, &fu, kdim, src, fil, &w, bias);
	return true;
}

/* Emits a stride-1 transposed convolution (cb_convtranspose_f32's
 * contract: filter groups * OC x KH x KW x C, C the input's channels per
 * group) as a convolution with the rotated filter on the packed path;
 * false, emitting nothing, for the shapes that keep the reference loops
 * (strides, -gemm=openblas). */
bool cg_emit_convtranspose_packed(struct cg *g, struct ir_instr *in)
{
	unsigned n;
	const int64_t *k = ir_ints(in, AN_kernels, &n), *s = ir_ints(in, AN_strides, &n), *p = ir_ints(in, AN_pads, &n),
		      *dl = ir_ints(in, AN_dilation, &n);
	int64_t groups = ir_int(in, AN_group);
	if (!live_packed(g) || s[0] != 1 || s[1] != 1 || groups < 1 || in->ops[1].val->type->rank != 4 ||
	    in->ops[0].val->type->rank != 4)
		return false;
	return emit_rotated(g, in->ops[0].val, in->ops[1].val, in->ops[2].val, in->ops[3].val, k, p, dl, groups, false);
}

/* Emits dx, the input gradient of a stride-1 convolution of one group
 * (filter fil: OC x KH x KW x C) for the output gradient gy, on the packed
 * path: the transposed convolution of gy with the filter read transposed
 * (convolutiongrad, cgen_grad.c); false, emitting nothing, where the
 * packed path does not apply. */
bool cg_emit_conv_input_grad_packed(struct cg *g, struct ir_value *dx, struct ir_value *gy, struct ir_value *fil,
				    const int64_t *k, const int64_t *s, const int64_t *p, const int64_t *dl)
{
	if (!live_packed(g) || s[0] != 1 || s[1] != 1)
		return false;
	return emit_rotated(g, dx, gy, fil, NULL, k, p, dl, 1, true);
}

/* Dest[n x m] = Src[n x k] * Weights[k x m] (+ bias), packed when the
 * weights are constant: fullyconnected (row parameter CG_LINEAR_BIAS,
 * operand 3 the bias) and matmul (none). */
void cg_emit_linear(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	struct ir_value *dst = in->ops[0].val, *lhs = in->ops[1].val, *rhs = in->ops[2].val;
	struct ir_value *bias = row->param == CG_LINEAR_BIAS ? in->ops[3].val : NULL;
	if (!cg_is_float(dst) || !cg_is_float(lhs) || !cg_is_float(rhs) || (bias && !cg_is_float(bias))) {
		cg_unsupported(g, in, "only float matrix products are compiled");
		return;
	}
	int64_t rows = (int64_t)lhs->type->dims[0], kk = (int64_t)lhs->type->dims[1], m = (int64_t)rhs->type->dims[1];
	struct ir_weight *ww = cg_const_weight(rhs), *bw = bias ? cg_const_weight(bias) : NULL;
	char a[96], b[96], o[96], r[96];
	if (ww && (!bias || bw)) {
		float *wd = (float *)cg_weight_data(g, ww), *bd = bw ? (float *)cg_weight_data(g, bw) : NULL;
		if (wd && (!bw || bd)) {
			struct fusion fu;
			find_fusion(g, in, lhs, NULL, 0, &fu);
			int64_t v[15] = {rows, 1, 1, kk, 1, 1, m, 1, 1, 1, 1, 0, 0, 1, 1};
			emit_product(g, v, 1, &fu, (size_t)kk, lhs, wd, 1, (size_t)m, bd);
		}
		free(wd);
		free(bd);
		return;
	}
	if (live_packed(g)) {
		/* weights (or a bias) that are not constants: packed per call */
		struct fusion fu;
		find_fusion(g, in, lhs, NULL, 0, &fu);
		int64_t v[15] = {rows, 1, 1, kk, 1, 1, m, 1, 1, 1, 1, 0, 0, 1, 1};
		/* row o of the filter is column o of the k x m weights (or of a
		 * skipped transpose's source, read through its strides) */
		struct walk w = {1, 0, {1, 1, kk}, {0, 0, m}};
		struct ir_value *x = transposed_walk(g, in, rhs, &w);
		emit_product_live(g, v, 1, &fu, (size_t)kk, lhs, x ? x : rhs, &w, bias);
		return;
	}
	os_printf(g->body, "\t%s(%s, %s, %s, %s, 1, %" PRId64 ", %" PRId64 ", %" PRId64 ");\n",
		  g->gemm == CBACKEND_GEMM_OPENBLAS ? "cb_matmul_blas_f32" : "cb_matmul_f32", PTR(lhs, "float", a),
		  PTR(rhs, "float", b), bias ? PTR(bias, "float", r) : "0", PTR(dst, "float", o),
		  rows, kk, m);
}

/* Gemm (alpha * A' * B' + beta * C) with its transposes. */
void cg_emit_gemm(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	for (unsigned i = 0; i < 4; i++)
		if (!cg_is_float(in->ops[i].val)) {
			cg_unsupported(g, in, "only float gemm is compiled");
			return;
		}
	const struct type *at = in->ops[1].val->type, *ct = in->ops[3].val->type, *yt = in->ops[0].val->type;
	int ta = (int)ir_int(in, AN_trans_a), tb = (int)ir_int(in, AN_trans_b);
	uint64_t mm = yt->dims[0], nn = yt->dims[1], kk = ta ? at->dims[0] : at->dims[1];
	struct ir_weight *bw = cg_const_weight(in->ops[2].val), *cw = cg_const_weight(in->ops[3].val);
	bool cvec = cw && type_numel(ct) == nn && (ct->rank == 1 || (ct->rank == 2 && ct->dims[0] == 1));
	bool cfull = !cvec && ct->rank == 2 && ct->dims[0] == mm && ct->dims[1] == nn &&
		     !cg_overlap(g, in->ops[3].val, in->ops[1].val);
	if (!ta && bw && (cvec || cfull) && ir_float(in, AN_alpha) == 1.0 && ir_float(in, AN_beta) == 1.0) {
		/* a fully-connected layer: B packed (transposed or not), C the
		 * bias (a constant vector) or a residual (a whole matrix) */
		float *bd = (float *)cg_weight_data(g, bw), *cd = cvec ? (float *)cg_weight_data(g, cw) : NULL;
		if (bd && (cd || !cvec)) {
			struct fusion fu;
			find_fusion(g, in, in->ops[1].val, cvec ? NULL : in->ops[3].val, 0, &fu);
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
		  PTR(in->ops[0].val, "float", o), mm, nn, kk, ta, tb, cg_flit(f1, ir_float(in, AN_alpha)), cg_flit(f2, ir_float(in, AN_beta)), cs0,
		  cs1);
}
