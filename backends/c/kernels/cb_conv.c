/* cb_conv.c - convolution and fully-connected layers as a register- and
 * cache-blocked matrix product over packed weights.
 *
 * A convolution in NHWC is the product of a virtual M x K matrix A (one row
 * per output pixel, M = N*OH*OW; one column per filter tap and input
 * channel, K = KH*KW*C) with the K x OC filter. A is built one block of
 * rows at a time (below). A fully-connected layer is the 1 x 1 case with an
 * N x 1 x 1 x K image.
 *
 * Packed weights (done by the code generator, weights are constants): per
 * group, ceil(OC / CB_NR) panels, each K x CB_NR floats with the tap-major,
 * channel-minor K order of A, zero-padded past OC; the bias is padded to
 * whole panels as well. The micro-kernel holds CB_MR x CB_NR accumulators in
 * registers, broadcasts one A value per row and per k, and does CB_MR * NV
 * vector FMAs against one row of the panel.
 *
 * Blocking: rows go in blocks of `mc` (chosen by the generator so that the
 * block's A rows stay in L2 while every panel sweeps over them); each panel
 * (at most a few hundred KiB) stays in L2 across the tiles of a block.
 * Tiles whose rows already lie in memory with a constant stride skip the
 * packing (1x1 convolutions over 16-64 channels; first layers and stride-1
 * layers with K in one slice, tile by tile: cb_conv_win_ok; grouped 1x1
 * convolutions with K in one slice, their rows a run-time stride apart:
 * cb_row_at). A last partial tile runs a one-row or a four-row kernel
 * (cb_conv_tail).
 *
 * Epilogue: bias, an optional residual (an elementwise add that followed
 * the convolution, fused by the generator) and an optional activation.
 *
 * Threads (cb_thread.h): cb_conv_f32 and cb_wino_f32 split a layer into
 * parts by whole tiles of rows or by panels of output channels
 * (cb_conv_par), cb_dwconv_f32 by output rows; a part blocks its own rows
 * from its first one, so each output element is the same sum in the same
 * order as in a single-threaded run: the bytes do not depend on the
 * thread count.
 */
#include "cb_base.h"
#include "cb_thread.h"

/* CB_MR4: the rows of the short-tile kernel that runs a last partial tile
 * of 3 to 8 rows where CB_MR is 12 (1: none) */
#if CB_HAVE_VEC
#define CB_NV (CB_NR / CB_VL)
/* a panel whose columns past the first half are padding runs half the
 * vectors */
#define CB_HALF (CB_NV % 2 == 0)
#if CB_VL == 16
#define CB_MR 12
#define CB_MR4 4
#elif CB_VL == 8
#define CB_MR 3
#elif defined(CB_NEON)
/* AArch64 has 32 vector registers: 3 rows x 8 vectors of accumulators,
 * the rows' A values (used as lanes) and one panel vector fit */
#define CB_MR 3
#else
#define CB_MR 1
#endif
#else
#define CB_MR 4
#define CB_NV 1
#define CB_HALF 0
#endif

#ifndef CB_MR4
#define CB_MR4 1
#endif

/* CB_UNROLL: before a loop of cb_conv_tile over its rows or vectors. The
 * accumulators stay in registers only when every loop that touches them is
 * unrolled completely; GCC's -O2 (the cross builds' level) does not do
 * that on its own for 3 x 8 NEON vectors, so the NEON path asks for it. */
#if defined(CB_NEON)
#define CB_UNROLL _Pragma("GCC unroll 12")
#else
#define CB_UNROLL
#endif

/* How a tile starting at row m (of mtot) runs: 0 the full kernel (whole
 * tiles, and partial ones the short kernels do not suit), 1 the one-row
 * kernel row by row (one or two rows left), 2 the CB_MR4-row kernel (3 to
 * 2 * CB_MR4 rows left). */
static int cb_conv_tail(size_t m, size_t mtot)
{
	if (m + CB_MR <= mtot)
		return 0;
	const size_t left = mtot - m;
	if (CB_MR4 > 1 && left > 2 && left <= 2 * CB_MR4)
		return 2;
	return mtot >= CB_MR && left > 2 ? 0 : 1;
}

/* Packed A: per tile of CB_MR rows, ceil(K / CB_KC) chunks, each CB_MR
 * rows of CB_KC floats (the last chunk only partly used). The row stride
 * inside a chunk is a constant, so the micro-kernel addresses all rows from
 * one pointer with immediate offsets, and packing is contiguous copies. */
#define CB_KC 64
/* the K slice whose panel part (CB_KB x CB_NR floats, 24 KiB) stays in L1 */
#define CB_KB 192

static size_t cb_tile_floats(size_t kdim) { return (kdim + CB_KC - 1) / CB_KC * CB_KC * CB_MR; }

/* Copies the first and the last w of n floats (w <= n <= 2 * w, so that
 * they cover all n) from s to d: two copies of constant size once inlined. */
static CB_ALWAYS_INLINE void cb_copy_ends(float *CB_RESTRICT d, const float *CB_RESTRICT s, size_t n, const size_t w)
{
	memcpy(d, s, w * sizeof(float));
	memcpy(d + n - w, s + n - w, w * sizeof(float));
}

/* Copies n (4 <= n <= 64) floats from s to d (apart) without a call: two
 * overlapping copies of 4, 8, 16 or 32 floats. A window row of a few
 * channels (5 floats of a 5x5 filter over one channel) is one such copy
 * per tap row; memcpy of a size known only at run time is a call or a
 * string instruction whose start-up costs more than the copy (and GCC
 * turns a loop of fixed-size copies into such a call). */
static CB_ALWAYS_INLINE void cb_copy_short(float *CB_RESTRICT d, const float *CB_RESTRICT s, size_t n)
{
	if (n < 8)
		cb_copy_ends(d, s, n, 4);
	else if (n <= 16)
		cb_copy_ends(d, s, n, 8);
	else if (n <= 32)
		cb_copy_ends(d, s, n, 16);
	else
		cb_copy_ends(d, s, n, 32);
}

/* Copies run floats (run <= CB_KC) from x to d (one chunk of a packed
 * row) without a call: a few floats one by one, a whole chunk as one copy
 * of constant size, others by cb_copy_short. */
static CB_ALWAYS_INLINE void cb_pack_run(float *CB_RESTRICT d, const float *CB_RESTRICT x, size_t run)
{
	if (run < 4) {
		for (size_t q = 0; q < run; q++)
			d[q] = x[q];
	} else if (run == CB_KC) {
		memcpy(d, x, CB_KC * sizeof(float));
	} else {
		cb_copy_short(d, x, run);
	}
}

/* Whether output pixel m is input pixel m: a 1x1 convolution of unit
 * strides without padding (row m of A is then pixel m's channels). */
static int cb_conv_unit1x1(const struct cb_conv_args *s)
{
	return s->kh == 1 && s->kw == 1 && s->sh == 1 && s->sw == 1 && s->pt == 0 && s->pl == 0 && s->oh == s->h &&
	       s->ow == s->w;
}

/* Packs rows m0 .. m0 + nt*CB_MR - 1 of A for group g into ap (k =
 * tap-major, channel-minor). Taps in the padding and rows past the end are
 * zeros. */
static void cb_conv_pack_a(const struct cb_conv_args *s, const float *in, float *CB_RESTRICT ap, size_t m0,
			   size_t nt, size_t mtot, int g)
{
	const int gc = s->groups * s->c, c = s->c;
	const size_t ohw = (size_t)s->oh * s->ow, kdim = (size_t)s->kh * s->kw * c, tf = cb_tile_floats(kdim);
	if (cb_conv_unit1x1(s)) {
		/* a 1x1 convolution of stride 1 without padding (a grouped one's
		 * partial last tile, or K past one slice): row m is input pixel
		 * m, its group's channels one run; the general walk below costs
		 * more than the copy */
		for (size_t t = 0; t < nt; t++)
			for (int r = 0; r < CB_MR; r++) {
				const size_t mm = m0 + t * CB_MR + (size_t)r;
				float *rp = ap + t * tf + (size_t)r * CB_KC;
				const float *x = in + mm * (size_t)gc + (size_t)g * c;
				for (size_t k0 = 0; k0 < kdim; k0 += CB_KC) {
					const size_t run = cb_min_sz(CB_KC, kdim - k0);
					if (mm < mtot)
						cb_pack_run(rp + k0 * CB_MR, x + k0, run);
					else
						memset(rp + k0 * CB_MR, 0, run * sizeof(float));
				}
			}
		return;
	}
	/* the output coordinates of row m0, then stepped row by row (no
	 * division per row) */
	size_t n = m0 / ohw, rem0 = m0 % ohw;
	int oh = (int)(rem0 / (size_t)s->ow), ow = (int)(rem0 % (size_t)s->ow);
	for (size_t t = 0; t < nt; t++) {
		float *tp = ap + t * tf;
		for (int r = 0; r < CB_MR; r++) {
			size_t mm = m0 + t * CB_MR + (size_t)r;
			float *rp = tp + (size_t)r * CB_KC;
			if (mm >= mtot) {
				for (size_t k = 0; k < kdim; k++)
					rp[k / CB_KC * CB_KC * CB_MR + k % CB_KC] = 0.0f;
				continue;
			}
			int ih0 = oh * s->sh - s->pt, iw0 = ow * s->sw - s->pl;
			const size_t nn = n;
			if (++ow == s->ow) {
				ow = 0;
				if (++oh == s->oh) {
					oh = 0;
					n++;
				}
			}
			const float *base = in + nn * (size_t)s->h * s->w * gc + (size_t)g * c;
			size_t k = 0;
			/* a window row lies in one contiguous run of the input when the
			 * taps are adjacent pixels of an ungrouped image */
			const int rowrun = s->dw == 1 && gc == c && iw0 >= 0 && iw0 + s->kw <= s->w;
			for (int kh = 0; kh < s->kh; kh++) {
				int ih = ih0 + kh * s->dh;
				for (int kw = 0; kw < s->kw; kw++) {
					int iw = iw0 + kw * s->dw;
					const float *x = ih >= 0 && ih < s->h && iw >= 0 && iw < s->w
								 ? base + ((size_t)ih * s->w + (size_t)iw) * gc
								 : NULL;
					int cn = c;
					if (rowrun && kw == 0) {
						cn = c * s->kw; /* the whole window row at once */
						kw = s->kw - 1;
					}
					/* cn values from k on, split at chunk boundaries */
					for (int j = 0; j < cn;) {
						size_t off = k % CB_KC, run = CB_KC - off;
						if (run > (size_t)(cn - j))
							run = (size_t)(cn - j);
						float *d = rp + k / CB_KC * CB_KC * CB_MR + off;
						if (x)
							cb_pack_run(d, x + j, run);
						else
							memset(d, 0, run * sizeof(float));
						j += (int)run;
						k += run;
					}
				}
			}
		}
	}
}

/* The value of row r (a constant once unrolled) of a tile whose rows lie
 * g1 bytes apart in place (g3 = 3 * g1), at a (the row-0 value): rows 4q
 * to 4q+3 are at b, b + g1, b + 2 * g1 and b + g3 from b = a + 4q * g1,
 * so the compiler keeps three row pointers and two strides and each load
 * is one addressing mode (base + index * 1 or 2), where the twelve
 * products r * g1 of a plain a[r * stride] would take a register or a
 * multiplication each (that form measured no faster than packing). */
static CB_ALWAYS_INLINE float cb_row_at(const float *a, const int r, size_t g1, size_t g3)
{
	const char *b = (const char *)a + (size_t)(r / 4) * 4 * g1;
	switch (r % 4) {
	case 0: return *(const float *)b;
	case 1: return *(const float *)(b + g1);
	case 2: return *(const float *)(b + 2 * g1);
	default: return *(const float *)(b + g3);
	}
}

/* One tile: rows m .. m+mr-1 (mr is CB_MR or 1, a constant once inlined)
 * from the packed tile ap, one panel; stores the rows below mtot and the
 * columns below the group's oc. rs: the row stride of A in floats, a
 * constant once inlined; 0: the input's pixel stride groups * c, known at
 * run time (cb_row_at). */
static CB_ALWAYS_INLINE void cb_conv_tile(const struct cb_conv_args *s, const float *CB_RESTRICT ap,
					  const float *CB_RESTRICT b, const float *pbias, float *out, const float *res,
					  size_t m, size_t mtot, int g, int p, const int mr, const char *pf, size_t pfstep,
					  size_t ka, size_t kb, float *part, const int nv, const int rs, const size_t kcw,
					  const size_t cadv, const int hv)
{
	const int goc = s->groups * s->oc;
	const size_t kdim = kb;
	const size_t g1 = (size_t)s->groups * (size_t)s->c * sizeof(float), g3 = 3 * g1;
	/* k from ka (a multiple of CB_KC) to kb: start from the bias or from
	 * the partial sums in part; stop with partial sums or the epilogue */
	ap += ka / kcw * cadv;
	b += ka * CB_NR;
#if CB_HAVE_VEC
	cb_vf acc[CB_MR][CB_NV];
	CB_UNROLL
	for (int v = 0; v < nv; v++) {
		cb_vf bv = *(const cb_vf *)(pbias + v * CB_VL);
		CB_UNROLL
		for (int r = 0; r < mr; r++)
			acc[r][v] = ka ? *(const cb_vf *)(part + (r * CB_NV + v) * CB_VL) : bv;
	}
#if CB_HV
	/* hv: after the nv vectors, one half vector (the panel's columns
	 * nv * CB_VL .. + 7; the rest of the panel is padding) */
	cb_vh acch[CB_MR];
	if (hv) {
		cb_vh bh = *(const cb_vh *)(pbias + nv * CB_VL);
		CB_UNROLL
		for (int r = 0; r < mr; r++)
			acch[r] = ka ? *(const cb_vh *)(part + (r * CB_NV + nv) * CB_VL) : bh;
	}
#else
	(void)hv;
#endif
	for (size_t k0 = ka; k0 < kdim; k0 += kcw) {
		size_t kc = kdim - k0 < kcw ? kdim - k0 : kcw;
		for (size_t k = 0; k < kc; k++) {
			CB_PREFETCH(pf);
			pf += pfstep;
#if defined(CB_NEON)
			/* panel vector by panel vector, each multiplied by every
			 * row's A value as a lane (fmla by element): no splat
			 * registers, and only one panel vector live, so the 24
			 * accumulators stay in registers. The same products in the
			 * same order as the other paths: only the scheduling differs. */
			float x[CB_MR];
			CB_UNROLL
			for (int r = 0; r < mr; r++)
				x[r] = rs ? ap[r * rs + (int)k] : cb_row_at(ap + k, r, g1, g3);
			CB_UNROLL
			for (int v = 0; v < nv; v++) {
				float32x4_t bq = vld1q_f32(b + v * CB_VL);
				CB_UNROLL
				for (int r = 0; r < mr; r++)
					acc[r][v] = (cb_vf)vfmaq_n_f32((float32x4_t)acc[r][v], bq, x[r]);
			}
#else
			cb_vf bv[CB_NV];
			CB_UNROLL
			for (int v = 0; v < nv; v++)
				bv[v] = *(const cb_vf *)(b + v * CB_VL);
#if CB_HV
			const cb_vh bh = hv ? *(const cb_vh *)(b + nv * CB_VL) : (cb_vh){0};
#endif
			CB_UNROLL
			for (int r = 0; r < mr; r++) {
				const float xs = rs ? ap[r * rs + (int)k] : cb_row_at(ap + k, r, g1, g3);
				cb_vf x = CB_SPLAT(xs);
				CB_UNROLL
				for (int v = 0; v < nv; v++)
					acc[r][v] = CB_FMA(acc[r][v], bv[v], x);
#if CB_HV
				if (hv)
					acch[r] = CB_FMAH(acch[r], bh, ((cb_vh){xs, xs, xs, xs, xs, xs, xs, xs}));
#endif
			}
#endif
			b += CB_NR;
		}
		ap += cadv;
	}
	if (kb < (size_t)s->kh * s->kw * s->c) {
		CB_UNROLL
		for (int r = 0; r < mr; r++) {
			CB_UNROLL
			for (int v = 0; v < nv; v++)
				*(cb_vf *)(part + (r * CB_NV + v) * CB_VL) = acc[r][v];
#if CB_HV
			if (hv)
				*(cb_vh *)(part + (r * CB_NV + nv) * CB_VL) = acch[r];
#endif
		}
		return;
	}
#else
	float acc[CB_MR][CB_NR];
	(void)nv;
	(void)hv;
	(void)rs;
	(void)pf;
	(void)pfstep;
	for (int r = 0; r < mr; r++)
		for (int j = 0; j < CB_NR; j++)
			acc[r][j] = ka ? part[r * CB_NR + j] : pbias[j];
	for (size_t k0 = ka; k0 < kdim; k0 += kcw) {
		size_t kc = kdim - k0 < kcw ? kdim - k0 : kcw;
		for (size_t k = 0; k < kc; k++) {
			for (int r = 0; r < mr; r++) {
				float x = rs ? ap[(size_t)r * (size_t)rs + k] : cb_row_at(ap + k, r, g1, g3);
				for (int j = 0; j < CB_NR; j++)
					acc[r][j] += b[j] * x;
			}
			b += CB_NR;
		}
		ap += cadv;
	}
	if (kb < (size_t)s->kh * s->kw * s->c) {
		for (int r = 0; r < mr; r++)
			for (int j = 0; j < CB_NR; j++)
				part[r * CB_NR + j] = acc[r][j];
		return;
	}
#endif
	int ncol = s->oc - p * CB_NR;
	if (ncol > CB_NR)
		ncol = CB_NR;
	const size_t ost = s->ostride ? (size_t)s->ostride : (size_t)goc;
	/* constant trip counts with breaks (not r < mr && ...): loops CB_UNROLL
	 * can unroll, so that every index of acc is a constant */
	CB_UNROLL
	for (int r = 0; r < mr; r++) {
		if (m + (size_t)r >= mtot)
			break;
		size_t off = (m + (size_t)r) * goc + (size_t)g * s->oc + (size_t)p * CB_NR;
		float *o = out + (m + (size_t)r) * ost + (size_t)g * s->oc + (size_t)p * CB_NR;
		int jv = 0; /* columns stored by the vector epilogue */
#if CB_HAVE_VEC
		if (s->act != CB_ACT_CLIP) {
			/* whole vectors below ncol (a partial panel too) */
			CB_UNROLL
			for (int v = 0; v < nv; v++) {
				if ((v + 1) * CB_VL > ncol)
					break;
				jv += CB_VL;
				cb_vf x = acc[r][v];
				if (res)
					x += *(const cb_vf *)(res + off + v * CB_VL);
				if (s->act == CB_ACT_RELU)
					x = cb_vrelu(x);
				*(cb_vf *)(o + v * CB_VL) = x;
			}
#if CB_HV
			/* the half vector, when its 8 columns are the panel's */
			if (hv && jv == nv * CB_VL && jv + CB_VH <= ncol) {
				jv += CB_VH;
				cb_vh x = acch[r];
				if (res)
					x += *(const cb_vh *)(res + off + nv * CB_VL);
				if (s->act == CB_ACT_RELU)
					x = cb_vhrelu(x);
				*(cb_vh *)(o + nv * CB_VL) = x;
			}
#endif
			if (jv == ncol)
				continue;
		}
#endif
		float t[CB_NR];
#if CB_HAVE_VEC
		CB_UNROLL
		for (int v = 0; v < nv; v++)
			if (v >= jv / CB_VL)
				*(cb_vf *)(t + v * CB_VL) = acc[r][v];
#if CB_HV
		if (hv)
			*(cb_vh *)(t + nv * CB_VL) = acch[r];
#endif
#else
		for (int j = 0; j < CB_NR; j++)
			t[j] = acc[r][j];
#endif
		if (res) {
			const float *q = res + off;
			for (int j = jv; j < ncol; j++)
				t[j] += q[j];
		}
		for (int j = jv; j < ncol; j++)
			o[j] = cb_act(t[j], s->act, s->lo, s->hi);
	}
}

/* One tile with the micro-kernel variant for its shape: full rows of
 * CB_MR or a single row, a whole or half panel, and the row stride of A
 * within a chunk (CB_KC when packed; the channel count when the rows are
 * read in place from the input of a 1x1 convolution; 0 when they are read
 * in place from the input of a grouped 1x1 convolution, groups * c floats
 * apart, the next chunk CB_KC floats further along the rows). win: the rows are
 * read in place from the image (cb_conv_win_ok): a chunk is one window
 * row of KW*C floats, rows sw*C floats apart (rs: 1, 3, 6, 16, 32 or 64),
 * the next chunk dh image rows further. */
static void cb_conv_tile_any(const struct cb_conv_args *s, const float *ap, int rs, const float *b, const float *pbias,
			     float *out, const float *res, size_t m, size_t mtot, int g, int p, int one_row,
			     const char *pf, size_t pfstep, size_t ka, size_t kb, float *part, int win)
{
	const int ncol = s->oc - p * CB_NR;
	const int half = CB_HALF && ncol <= CB_NR / 2;
	if (one_row == 1) {
		cb_conv_tile(s, ap, b, pbias, out, res, m, mtot, g, p, 1, pf, 0, ka, kb, part, CB_NV, CB_KC, CB_KC,
			     CB_KC * CB_MR, 0);
		return;
	}
#if CB_MR4 > 1
	if (one_row == 2) {
		cb_conv_tile(s, ap, b, pbias, out, res, m, mtot, g, p, CB_MR4, pf, 0, ka, kb, part, CB_NV, CB_KC,
			     CB_KC, CB_KC * CB_MR, 0);
		return;
	}
#endif
	if (rs == 0) {
		/* a grouped layer's rows in place: the half vector for a panel
		 * of at most 8 columns (below), else whole vectors only, one
		 * more unrolled kernel rather than two (a panel of 9 to 16
		 * columns runs its padding) */
#if CB_HV
		if (ncol <= 8) {
			cb_conv_tile(s, ap, b, pbias, out, res, m, mtot, g, p, CB_MR, pf, pfstep, ka, kb, part, 0, 0,
				     CB_KC, CB_KC, 1);
			return;
		}
#endif
		cb_conv_tile(s, ap, b, pbias, out, res, m, mtot, g, p, CB_MR, pf, pfstep, ka, kb, part, CB_NV, 0, CB_KC,
			     CB_KC, 0);
		return;
	}
	const size_t kcw = win ? (size_t)s->kw * s->c : CB_KC;
	const size_t cadv = win ? (size_t)s->dh * s->w * s->c : CB_KC * CB_MR;
#define CB_TILE(RS, KCW, CADV)                                                                               \
	do {                                                                                                   \
		if (half)                                                                                      \
			cb_conv_tile(s, ap, b, pbias, out, res, m, mtot, g, p, CB_MR, pf, pfstep, ka, kb, part, \
				     CB_HALF ? CB_NV / 2 : CB_NV, RS, KCW, CADV, 0);                            \
		else                                                                                           \
			cb_conv_tile(s, ap, b, pbias, out, res, m, mtot, g, p, CB_MR, pf, pfstep, ka, kb, part, \
				     CB_NV, RS, KCW, CADV, 0);                                                  \
	} while (0)
#if CB_HV
	/* A half vector ends two kinds of panel: one of at most 8 columns on
	 * packed rows or on a grouped layer's rows read in place (rs 0:
	 * ShuffleNet's groups of 34, 68 and 136 channels end in panels of 2,
	 * 4 and 8 columns; a classifier of 1000 in one of 8) and one of 17 to
	 * 24 columns on a first layer of 3 channels and stride 2 read in
	 * place (ShuffleNet's 24). Only these: each variant is one more
	 * unrolled kernel for the C compiler (six of them took a ShuffleNet
	 * bundle's compile from 7.5 to 10.3 s, two to 8.2, these three to
	 * 8.9) */
	if (!win && rs != 16 && rs != 32 && ncol <= 8) {
		cb_conv_tile(s, ap, b, pbias, out, res, m, mtot, g, p, CB_MR, pf, pfstep, ka, kb, part, 0, CB_KC,
			     CB_KC, CB_KC * CB_MR, 1);
		return;
	}
	if (win && rs == 6 && ncol > 16 && ncol <= 24) {
		cb_conv_tile(s, ap, b, pbias, out, res, m, mtot, g, p, CB_MR, pf, pfstep, ka, kb, part, 1, 6, kcw,
			     cadv, 1);
		return;
	}
#endif
	if (win) {
		switch (rs) {
		case 1: CB_TILE(1, kcw, cadv); break;
		case 3: CB_TILE(3, kcw, cadv); break;
		case 6: CB_TILE(6, kcw, cadv); break;
		case 16: CB_TILE(16, kcw, cadv); break;
		case 32: CB_TILE(32, kcw, cadv); break;
		default: CB_TILE(64, kcw, cadv); break;
		}
		return;
	}
	switch (rs) {
	case 16: CB_TILE(16, CB_KC, CB_KC * CB_MR); break;
	case 32: CB_TILE(32, CB_KC, CB_KC * CB_MR); break;
	default: CB_TILE(CB_KC, CB_KC, CB_KC * CB_MR); break;
	}
#undef CB_TILE
}

/* Whether the tile of rows m .. m + CB_MR - 1 can be read in place from
 * the image (win mode of cb_conv_tile_any): its pixels lie in one output
 * row and every tap of their windows inside the image. Then *ap is the
 * first row's first tap. Layer conditions (one group, unit width dilation,
 * sw*C of 1, 3, 6, 16, 32 or 64, one K slice) are the caller's. */
static int cb_conv_win_ok(const struct cb_conv_args *s, const float *in, size_t m, size_t mtot, const float **ap)
{
	if (m + CB_MR > mtot)
		return 0;
	const size_t ohw = (size_t)s->oh * s->ow, n = m / ohw, rem = m % ohw;
	const int oh = (int)(rem / (size_t)s->ow), ow = (int)(rem % (size_t)s->ow);
	const int ih0 = oh * s->sh - s->pt, iw0 = ow * s->sw - s->pl;
	if (ow + CB_MR > s->ow || ih0 < 0 || ih0 + (s->kh - 1) * s->dh >= s->h || iw0 < 0 ||
	    iw0 + (CB_MR - 1) * s->sw + s->kw > s->w)
		return 0;
	*ap = in + ((n * (size_t)s->h + (size_t)ih0) * s->w + (size_t)iw0) * s->c;
	return 1;
}

/* A 1x1 convolution with K of at most CB_SMALLK (a grouped one of few
 * channels per group): pixel by pixel, each group's panels in registers,
 * one broadcast input value per k; no packing, no tiles (their fixed costs
 * outweigh so few products). Same contract as cb_conv_f32. */
#define CB_SMALLK 8

/* The input of output pixel pix (its gc channels), or NULL when the pixel
 * lies in the padding. */
static CB_ALWAYS_INLINE const float *cb_smallk_in(const struct cb_conv_args *s, const float *in, size_t pix, int gc)
{
	const size_t n = pix / ((size_t)s->oh * s->ow);
	const int oh = (int)(pix / (size_t)s->ow % (size_t)s->oh), ow = (int)(pix % (size_t)s->ow);
	const int ih = oh * s->sh - s->pt, iw = ow * s->sw - s->pl;
	if (ih < 0 || ih >= s->h || iw < 0 || iw >= s->w)
		return NULL;
	return in + (((size_t)n * s->h + (size_t)ih) * s->w + (size_t)iw) * gc;
}

/* pixels at once in cb_conv_smallk's vector path */
#define CB_SMALLK_PB 4

#if CB_HAVE_VEC
/* Panel p of group g for npx pixels (1 or CB_SMALLK_PB, a constant once
 * inlined), pixel i's input x[i] and its panel to t + i * ts; x[0] NULL
 * (npx 1, a pixel in the padding): the bias alone. Several pixels are
 * that many independent sums per vector of the panel, where one pixel's
 * is a chain of dependent FMAs (each waiting for the last: K of at most 8
 * is too short to hide that). Each sum is the same whatever npx. */
static CB_ALWAYS_INLINE void cb_smallk_panels(const struct cb_conv_args *s, const float *const *x, const int npx,
					      const float *wp, const float *bias, int g, int p, int np, float *t,
					      size_t ts)
{
	const int c = s->c;
	const float *b = wp + ((size_t)g * np + p) * c * CB_NR;
	const float *pb = bias + ((size_t)g * np + p) * CB_NR;
	cb_vf acc[CB_SMALLK_PB][CB_NV];
	for (int v = 0; v < CB_NV; v++)
		for (int i = 0; i < npx; i++)
			acc[i][v] = *(const cb_vf *)(pb + v * CB_VL);
	for (int k = 0; x[0] && k < c; k++)
		for (int v = 0; v < CB_NV; v++) {
			const cb_vf bv = *(const cb_vf *)(b + k * CB_NR + v * CB_VL);
			for (int i = 0; i < npx; i++)
				acc[i][v] = CB_FMA(acc[i][v], bv, CB_SPLAT(x[i][g * c + k]));
		}
	for (int i = 0; i < npx; i++)
		for (int v = 0; v < CB_NV; v++)
			*(cb_vf *)(t + (size_t)i * ts + v * CB_VL) = acc[i][v];
}
#endif

/* Panel p of group g for the input x (NULL: the bias alone) into the
 * CB_NR floats at t. */
static CB_ALWAYS_INLINE void cb_smallk_panel(const struct cb_conv_args *s, const float *x, const float *wp,
					     const float *bias, int g, int p, int np, float *t)
{
#if CB_HAVE_VEC
	cb_smallk_panels(s, &x, 1, wp, bias, g, p, np, t, 0);
#else
	const int c = s->c;
	const float *b = wp + ((size_t)g * np + p) * c * CB_NR;
	const float *pb = bias + ((size_t)g * np + p) * CB_NR;
	for (int j = 0; j < CB_NR; j++)
		t[j] = pb[j];
	for (int k = 0; x && k < c; k++)
		for (int j = 0; j < CB_NR; j++)
			t[j] += x[g * c + k] * b[k * CB_NR + j];
#endif
}

static void cb_conv_smallk(const struct cb_conv_args *s, const float *in, const float *wp, const float *bias,
			   float *out, const float *res, size_t mb, size_t me)
{
	const int gc = s->groups * s->c, goc = s->groups * s->oc, np = (s->oc + CB_NR - 1) / CB_NR;
	const size_t ost = s->ostride ? (size_t)s->ostride : (size_t)goc;
#if CB_HAVE_VEC
	/* A pixel's whole row of goc results when it fits: each panel stored
	 * whole into row at its column (the lanes past its group's oc land on
	 * the next group's columns, which that group's panels store later; the
	 * last group's past goc), then the residual and the activation over
	 * whole vectors of the row and the stores to out, instead of a scalar
	 * epilogue per panel (ShuffleNet's 28 of 32 lanes per group). The same
	 * operations on each value in the same order. */
	enum { CB_SMALLK_ROW = 512, CB_SMALLK_RS = CB_SMALLK_ROW + CB_NR };
	float rows[CB_SMALLK_PB * CB_SMALLK_RS];
	if (goc <= CB_SMALLK_ROW && s->act != CB_ACT_CLIP) {
		/* CB_SMALLK_PB pixels' rows at once where none lies in the
		 * padding, else one pixel's */
		const float *x[CB_SMALLK_PB];
		int nx = 0, ix = 0;
		for (size_t pix = mb; pix < me; pix++, ix++) {
			if (ix == nx) {
				ix = nx = 0;
				if (pix + CB_SMALLK_PB <= me) {
					while (nx < CB_SMALLK_PB && (x[nx] = cb_smallk_in(s, in, pix + (size_t)nx, gc)))
						nx++;
					if (nx < CB_SMALLK_PB)
						nx = 0;
				}
				if (nx)
					for (int g = 0; g < s->groups; g++)
						for (int p = 0; p < np; p++)
							cb_smallk_panels(s, x, CB_SMALLK_PB, wp, bias, g, p, np,
									 rows + (size_t)g * s->oc + (size_t)p * CB_NR,
									 CB_SMALLK_RS);
				else
					for (int g = 0; g < s->groups; g++)
						for (int p = 0; p < np; p++)
							cb_smallk_panel(s, cb_smallk_in(s, in, pix, gc), wp, bias, g, p,
									np, rows + (size_t)g * s->oc + (size_t)p * CB_NR);
				nx = nx ? nx : 1;
			}
			const float *row = rows + (size_t)ix * CB_SMALLK_RS;
			float *o = out + pix * ost;
			const float *q = res ? res + pix * (size_t)goc : NULL;
			int j = 0;
			for (; j + CB_VL <= goc; j += CB_VL) {
				cb_vf y = *(const cb_vf *)(row + j);
				if (q)
					y += *(const cb_vf *)(q + j);
				if (s->act == CB_ACT_RELU)
					y = cb_vrelu(y);
				*(cb_vf *)(o + j) = y;
			}
			for (; j < goc; j++)
				o[j] = cb_act(q ? row[j] + q[j] : row[j], s->act, s->lo, s->hi);
		}
		return;
	}
#endif
	for (size_t pix = mb; pix < me; pix++) {
		const float *x = cb_smallk_in(s, in, pix, gc);
		for (int g = 0; g < s->groups; g++)
			for (int p = 0; p < np; p++) {
				float t[CB_NR];
				cb_smallk_panel(s, x, wp, bias, g, p, np, t);
				int ncol = s->oc - p * CB_NR;
				if (ncol > CB_NR)
					ncol = CB_NR;
				const size_t col = (size_t)g * s->oc + (size_t)p * CB_NR;
				float *o = out + pix * ost + col;
				if (res) {
					const float *q = res + pix * (size_t)goc + col;
					for (int j = 0; j < ncol; j++)
						t[j] += q[j];
				}
				for (int j = 0; j < ncol; j++)
					o[j] = cb_act(t[j], s->act, s->lo, s->hi);
			}
	}
}

/* The rows mb .. me-1 (output pixels) and the panels p0 .. p1-1 of groups
 * g0 .. g1-1 of out = act(conv(in, filter) + bias [+ res]) (cb_conv_f32);
 * the rows are blocked from mb on, so a part computes each of its outputs
 * exactly as the whole layer would. */
static void cb_conv_range(const struct cb_conv_args *s, const float *in, const float *wp, const float *bias,
			  float *out, const float *res, float *scratch, size_t mb, size_t me, int p0, int p1, int g0,
			  int g1)
{
	const size_t mtot = me;
	const int np = (s->oc + CB_NR - 1) / CB_NR;
	const size_t kdim = (size_t)s->kh * s->kw * s->c, tf = cb_tile_floats(kdim);
	size_t mc = s->mc > 0 && (size_t)s->mc < mtot - mb ? (size_t)s->mc : mtot - mb;
	mc = (mc + CB_MR - 1) / CB_MR * CB_MR;
	/* a deep K runs in slices of CB_KB so that a slice of the panel stays
	 * in L1 while the block's tiles pass over it (partial sums in part) */
	const size_t kslice = kdim > CB_KB ? CB_KB : kdim;
	/* one slice and the whole packed filter of a group within 512 KiB:
	 * loop tiles outside, panels inside (a tile writes whole rows) */
	const int small_b = kdim <= CB_KB && kdim * (size_t)np * CB_NR * sizeof(float) <= ((size_t)512 << 10);
	/* a 1x1 convolution over 16, 32 or 64 channels reads whole tiles of
	 * rows in place: consecutive pixels are already CB_MR rows of K floats */
	const int direct = cb_conv_unit1x1(s) && s->groups == 1 && (s->c == 16 || s->c == 32 || s->c == 64);
	/* a small filter in one K slice, one group, unit width dilation, rows
	 * sw*C floats apart of 1, 3 or 6 (first layers) or 16, 32, 64 (stride
	 * 1): the tiles that lie inside one output row and inside the image
	 * are read in place, only the others are packed (cb_conv_win_ok). (A
	 * deep K read in place measured no faster than packed.) */
	const int wrs = s->sw * s->c;
	const int winl = small_b && !direct && s->groups == 1 && s->dw == 1 &&
			 (wrs == 1 || wrs == 3 || wrs == 6 || (s->sw == 1 && (wrs == 16 || wrs == 32 || wrs == 64)));
	/* a grouped 1x1 convolution of stride 1 with K in one slice reads
	 * whole tiles in place as well, rows groups * c floats apart (rs 0 of
	 * cb_conv_tile_any; ShuffleNet's): its packing was a tenth of the
	 * network's time */
	const int gplace = cb_conv_unit1x1(s) && s->groups > 1 && kdim <= CB_KB;
	const size_t ntmax = mc / CB_MR;
	float *part = scratch + ntmax * tf;
	for (int g = g0; g < g1; g++) {
		const float *gw = wp + (size_t)g * np * kdim * CB_NR;
		const float *gb = bias + (size_t)g * np * CB_NR;
		for (size_t m0 = mb; m0 < mtot; m0 += mc) {
			size_t m1 = cb_min_sz(mtot, m0 + mc), nt = (m1 - m0 + CB_MR - 1) / CB_MR;
			if (winl)
				; /* tile by tile below */
			else if (!direct && !gplace)
				cb_conv_pack_a(s, in, scratch, m0, nt, mtot, g);
			else if ((m1 - m0) % CB_MR) /* the partial last tile only */
				cb_conv_pack_a(s, in, scratch + (nt - 1) * tf, m0 + (nt - 1) * CB_MR, 1, mtot, g);
			for (size_t tt = 0; tt < (small_b ? nt : 1); tt++) {
				const float *wap = NULL;
				int win = 0;
				if (winl && !(win = cb_conv_win_ok(s, in, m0 + tt * CB_MR, mtot, &wap)))
					cb_conv_pack_a(s, in, scratch + tt * tf, m0 + tt * CB_MR, 1, mtot, g);
				for (int p = p0; p < p1; p++) {
					const float *pw = gw + (size_t)p * kdim * CB_NR, *pb = gb + (size_t)p * CB_NR;
					/* the tiles of this panel that run the full kernel fetch
					 * the next panel, each its share, one step per k (a last
					 * tile of one or two rows runs the one-row kernel and
					 * fetches nothing) */
					const char *next = (const char *)(pw + kdim * CB_NR);
					const size_t mlast = m0 + (nt - 1) * CB_MR;
					const size_t ntp = cb_conv_tail(mlast, mtot) == 0 ? nt : nt - 1;
					size_t span = ntp ? (kdim * CB_NR * sizeof(float) + ntp - 1) / ntp : 0, step = span / kdim;
					if (p + 1 == p1 || small_b)
						step = 0;
					for (size_t ka = 0; ka < kdim; ka += kslice) {
						size_t kb = cb_min_sz(kdim, ka + kslice);
						for (size_t t = small_b ? tt : 0; t < (small_b ? tt + 1 : nt); t++) {
							size_t m = m0 + t * CB_MR;
							/* a last tile of one or two rows runs the one-row kernel */
							int full = m + CB_MR <= mtot;
							const float *ap = win			? wap
									  : direct && full ? in + m * (size_t)s->c
									  : gplace && full ? in + m * (size_t)s->groups * s->c + (size_t)g * s->c
											   : scratch + t * tf;
							int rs = win ? s->sw * s->c : direct && full ? s->c : gplace && full ? 0 : CB_KC;
							float *tp = part + t * CB_MR * CB_NR;
							const char *pf = step ? next + t * span + ka * step : (const char *)pw;
							const int tail = full ? 0 : cb_conv_tail(m, mtot);
							if (tail == 0) {
								cb_conv_tile_any(s, ap, rs, pw, pb, out, res, m, mtot, g, p, 0,
										 pf, step, ka, kb, tp, win);
							} else {
								/* rows of the packed tile by one or by CB_MR4 */
								const size_t by = tail == 1 ? 1 : CB_MR4;
								for (size_t r = 0; r < mtot - m; r += by)
									cb_conv_tile_any(s, ap + r * CB_KC, CB_KC, pw, pb, out, res,
											 m + r, mtot, g, p, tail, pf, 0, ka, kb,
											 tp + r * CB_NR, 0);
							}
						}
					}
				}
			}
		}
	}
}

/* Winograd F(m x m, 3 x 3), m = 2 or 4 (Lavin and Gray's minimal
 * filtering): a 3x3, stride-1, one-group convolution computed per output
 * tile of m x m pixels from an input tile of a x a (a = m + 2) as
 *     Y = A^T [ (G g G^T) (.) (B^T d B) ] A
 * where (.) is the elementwise product, summed over input channels. The
 * sum over channels makes each of the a^2 positions xi one matrix product:
 * M[xi] (tiles x OC) = V[xi] (tiles x C) * U[xi] (C x OC). U = G g G^T is
 * computed by the code generator (the filter is a constant) and packed in
 * panels like any filter, one set of panels per xi; per block of tiles the
 * kernel transforms the input straight into the packed row layout of the
 * micro-kernel (V), runs the a^2 products with it (M, tile-major: one
 * tile's a^2 x OCp values together), and transforms M back into the
 * output, adding bias and residual and applying the activation there. The
 * multiplications drop from 9 to a^2 / m^2 per output (2.25 for m = 4, 4
 * for m = 2). The channel counts are multiples of 16 (the generator's
 * condition), so the transforms run on whole vectors of channels. */
#if CB_HAVE_VEC
typedef cb_vf cb_wv;
#define CB_WV CB_VL
#else
typedef float cb_wv;
#define CB_WV 1
#endif

/* B^T d over a points, A^T q over a points to m */
static CB_ALWAYS_INLINE void cb_wino_bt(int m, const cb_wv *d, cb_wv *v)
{
	if (m == 4) {
		v[0] = 4.0f * d[0] - 5.0f * d[2] + d[4];
		v[1] = d[3] + d[4] - 4.0f * (d[1] + d[2]);
		v[2] = 4.0f * (d[1] - d[2]) + d[4] - d[3];
		v[3] = 2.0f * (d[3] - d[1]) + d[4] - d[2];
		v[4] = 2.0f * (d[1] - d[3]) + d[4] - d[2];
		v[5] = 4.0f * d[1] - 5.0f * d[3] + d[5];
	} else {
		v[0] = d[0] - d[2];
		v[1] = d[1] + d[2];
		v[2] = d[2] - d[1];
		v[3] = d[1] - d[3];
	}
}

static CB_ALWAYS_INLINE void cb_wino_at(int m, const cb_wv *q, cb_wv *y)
{
	if (m == 4) {
		const cb_wv t1 = q[1] + q[2], t2 = q[1] - q[2], t3 = q[3] + q[4], t4 = q[3] - q[4];
		y[0] = q[0] + t1 + t3;
		y[1] = t2 + 2.0f * t4;
		y[2] = t1 + 4.0f * t3;
		y[3] = t2 + 8.0f * t4 + q[5];
	} else {
		y[0] = q[0] + q[1] + q[2];
		y[1] = q[1] - q[2] - q[3];
	}
}

static CB_ALWAYS_INLINE cb_wv cb_wino_act(cb_wv x, const struct cb_conv_args *s)
{
#if CB_HAVE_VEC
	if (s->act == CB_ACT_RELU)
		return cb_vrelu(x);
	if (s->act == CB_ACT_CLIP) {
		float t[CB_VL];
		memcpy(t, &x, sizeof t);
		for (int j = 0; j < CB_VL; j++)
			t[j] = cb_act(t[j], s->act, s->lo, s->hi);
		memcpy(&x, t, sizeof t);
	}
	return x;
#else
	return cb_act(x, s->act, s->lo, s->hi);
#endif
}

/* The floats of V for one position xi, given tb tiles of c channels:
 * packed tiles of rows, padded so that the a^2 positions' blocks do not
 * start a multiple of 4 KiB apart (the input transform writes all of them
 * for each tile). */
static size_t cb_wino_vstride(size_t tb, size_t c) { return tb / CB_MR * cb_tile_floats(c) + 16; }

/* One block of tiles t0 .. t0 + nt - 1 (as above): a x a input tiles to V. */
static CB_ALWAYS_INLINE void cb_wino_in(const struct cb_conv_args *s, const int m, const float *in, float *v,
					size_t t0, size_t nt, size_t rows, size_t vs)
{
	const int a = m + 2, c = s->c, th = (s->oh + m - 1) / m, tw = (s->ow + m - 1) / m;
	const size_t tf = cb_tile_floats((size_t)c);
	for (size_t i = 0; i < rows; i++) {
		float *vr = v + i / CB_MR * tf + i % CB_MR * CB_KC;
		if (i >= nt) { /* rows that pad the last tile of rows */
			for (int xi = 0; xi < a * a; xi++)
				for (int cc = 0; cc < c; cc++)
					vr[xi * vs + (size_t)(cc / CB_KC * CB_KC * CB_MR + cc % CB_KC)] = 0.0f;
			continue;
		}
		const size_t t = t0 + i, per = (size_t)th * tw, n = t / per, r = t % per;
		const int ih0 = (int)(r / (size_t)tw) * m - s->pt, iw0 = (int)(r % (size_t)tw) * m - s->pl;
		const float *img = in + n * (size_t)s->h * s->w * c;
		for (int cc = 0; cc < c; cc += CB_WV) {
			cb_wv d[6][6], col[6], tv[6][6], o[6];
			const cb_wv zero = {0};
			for (int y = 0; y < a; y++) {
				const int ih = ih0 + y;
				for (int x = 0; x < a; x++) {
					const int iw = iw0 + x;
					d[y][x] = ih >= 0 && ih < s->h && iw >= 0 && iw < s->w
							  ? *(const cb_wv *)(img + ((size_t)ih * s->w + (size_t)iw) * c + cc)
							  : zero;
				}
			}
			for (int x = 0; x < a; x++) {
				for (int y = 0; y < a; y++)
					col[y] = d[y][x];
				cb_wino_bt(m, col, o);
				for (int y = 0; y < a; y++)
					tv[y][x] = o[y];
			}
			float *vc = vr + (size_t)(cc / CB_KC * CB_KC * CB_MR + cc % CB_KC);
			for (int y = 0; y < a; y++) {
				cb_wino_bt(m, tv[y], o);
				for (int x = 0; x < a; x++)
					*(cb_wv *)(vc + (size_t)(y * a + x) * vs) = o[x];
			}
		}
	}
}

/* M of tiles t0 .. t0 + nt - 1 back to the output. */
static CB_ALWAYS_INLINE void cb_wino_out(const struct cb_conv_args *s, const int m, const float *mm,
					 const float *bias, float *out, const float *res, size_t t0, size_t nt,
					 size_t ocp, int c0, int c1)
{
	const int a = m + 2, oc = s->oc, th = (s->oh + m - 1) / m, tw = (s->ow + m - 1) / m;
	const size_t ost = s->ostride ? (size_t)s->ostride : (size_t)oc;
	for (size_t i = 0; i < nt; i++) {
		const size_t t = t0 + i, per = (size_t)th * tw, n = t / per, r = t % per;
		const int oy0 = (int)(r / (size_t)tw) * m, ox0 = (int)(r % (size_t)tw) * m;
		const float *mt = mm + i * (size_t)(a * a) * ocp;
		for (int cc = c0; cc < c1; cc += CB_WV) {
			cb_wv q[6], w[6][4], col[6], y[4];
			for (int yy = 0; yy < a; yy++) {
				for (int x = 0; x < a; x++)
					q[x] = *(const cb_wv *)(mt + (size_t)(yy * a + x) * ocp + cc);
				cb_wino_at(m, q, w[yy]);
			}
			const cb_wv bv = *(const cb_wv *)(bias + cc);
			for (int x = 0; x < m; x++) {
				if (ox0 + x >= s->ow)
					break;
				for (int yy = 0; yy < a; yy++)
					col[yy] = w[yy][x];
				cb_wino_at(m, col, y);
				for (int yy = 0; yy < m && oy0 + yy < s->oh; yy++) {
					const size_t pix = (n * s->oh + (size_t)(oy0 + yy)) * s->ow + (size_t)(ox0 + x);
					cb_wv val = y[yy] + bv;
					if (res)
						val += *(const cb_wv *)(res + pix * oc + cc);
					*(cb_wv *)(out + pix * ost + cc) = cb_wino_act(val, s);
				}
			}
		}
	}
}

/* out = act(conv(in, filter) + bias [+ res]) for a convolution the
 * generator chose for Winograd (s->wino, s->mc tiles per block): u holds
 * the a^2 transformed filters packed in panels, bias the bias padded to
 * panels. scratch: a^2 * vstride(mc + 16) + (mc + 16) * a^2 * OCp floats.
 * Only tiles ta .. tz-1 and the output channels of panels pa .. pz-1 (a
 * part of cb_conv_par: every part transforms its tiles' whole input). */
static CB_ALWAYS_INLINE void cb_wino_m(const struct cb_conv_args *s, const int m, const float *in,
				       const float *u, const float *bias, float *out, const float *res,
				       float *scratch, size_t ta, size_t tz, int pa, int pz)
{
	static const float zero[CB_NR];
	const int a = m + 2, a2 = a * a, c = s->c, np = (s->oc + CB_NR - 1) / CB_NR;
	const size_t ocp = (size_t)np * CB_NR, tf = cb_tile_floats((size_t)c);
	const size_t ntiles = tz;
	const size_t tb = ((size_t)s->mc + CB_MR - 1) / CB_MR * CB_MR, vs = cb_wino_vstride(tb, (size_t)c);
	float *v = scratch, *mm = scratch + (size_t)a2 * vs;
	/* the products: rows of one position's V times its filter, rows of M
	 * a^2 * OCp floats apart */
	struct cb_conv_args sg;
	memset(&sg, 0, sizeof sg);
	sg.n = sg.h = sg.oh = sg.groups = 1;
	sg.w = sg.ow = (int)tb;
	sg.c = c;
	sg.oc = (int)ocp;
	sg.kh = sg.kw = sg.sh = sg.sw = sg.dh = sg.dw = 1;
	sg.ostride = a2 * (int)ocp;
	for (size_t t0 = ta; t0 < ntiles; t0 += tb) {
		const size_t nt = cb_min_sz(tb, ntiles - t0), rows = (nt + CB_MR - 1) / CB_MR * CB_MR;
		cb_wino_in(s, m, in, v, t0, nt, rows, vs);
		/* the full tiles of rows fetch the panel that comes next (this
		 * part's next panel, or its first of the next position), each
		 * its share, one step per k, as cb_conv_range: a filter larger
		 * than L2 streams from memory, and the hardware prefetcher alone
		 * reads it at about half the memory's rate */
		const size_t ntp = nt / CB_MR + (cb_conv_tail(nt / CB_MR * CB_MR, nt) == 0 && nt % CB_MR ? 1 : 0);
		const size_t pbytes = (size_t)c * CB_NR * sizeof(float), span = ntp ? (pbytes + ntp - 1) / ntp : 0;
		for (int xi = 0; xi < a2; xi++)
			for (int p = pa; p < pz; p++) {
				const float *b = u + ((size_t)xi * np + (size_t)p) * (size_t)c * CB_NR;
				const float *next = p + 1 < pz ? b + (size_t)c * CB_NR
						    : xi + 1 < a2 ? u + ((size_t)(xi + 1) * np + (size_t)pa) * (size_t)c * CB_NR
								  : NULL;
				const size_t step = next ? span / (size_t)c : 0;
				for (size_t r0 = 0; r0 < rows; r0 += CB_MR) {
					const float *ap = v + (size_t)xi * vs + r0 / CB_MR * tf;
					float *mx = mm + (size_t)xi * ocp;
					const int tail = cb_conv_tail(r0, nt);
					if (tail == 0) {
						const char *pf = step ? (const char *)next + r0 / CB_MR * span : (const char *)b;
						cb_conv_tile(&sg, ap, b, zero, mx, NULL, r0, nt, 0, p, CB_MR, pf, step, 0,
							     (size_t)c, NULL, CB_NV, CB_KC, CB_KC, CB_KC * CB_MR, 0);
						continue;
					}
					/* a last partial tile of rows: by one or CB_MR4 rows, as
					 * cb_conv_f32 */
					const size_t by = tail == 1 ? 1 : CB_MR4;
					for (size_t r = 0; r < nt - r0; r += by)
						if (tail == 1)
							cb_conv_tile(&sg, ap + r * CB_KC, b, zero, mx, NULL, r0 + r, nt, 0, p, 1,
								     (const char *)b, 0, 0, (size_t)c, NULL, CB_NV, CB_KC, CB_KC,
								     CB_KC * CB_MR, 0);
						else
							cb_conv_tile(&sg, ap + r * CB_KC, b, zero, mx, NULL, r0 + r, nt, 0, p,
								     CB_MR4, (const char *)b, 0, 0, (size_t)c, NULL, CB_NV, CB_KC,
								     CB_KC, CB_KC * CB_MR, 0);
				}
			}
		cb_wino_out(s, m, mm, bias, out, res, t0, nt, ocp, pa * CB_NR, pz * CB_NR < s->oc ? pz * CB_NR : s->oc);
	}
}

static void cb_wino_range(const struct cb_conv_args *s, int m, const float *in, const float *u, const float *bias,
			  float *out, const float *res, float *scratch, size_t ta, size_t tz, int pa, int pz)
{
	if (m == 4)
		cb_wino_m(s, 4, in, u, bias, out, res, scratch, ta, tz, pa, pz);
	else
		cb_wino_m(s, 2, in, u, bias, out, res, scratch, ta, tz, pa, pz);
}

/* A convolution or matrix product split among the threads (cb_par): by
 * rows (output pixels, whole tiles of CB_MR) or, when there are too few
 * rows for every thread to get several tiles and the filter is large
 * (over CB_SPLIT_FILTER bytes: streaming all of it on every thread would
 * cost more than the split saves), by groups where they divide evenly
 * among the threads, else by panels of output channels (each part packs
 * the rows itself and streams only its share of the filter:
 * fully-connected layers, ResNet-50's 7x7 layers). A small filter with
 * few rows splits by rows all the same: every thread then keeps to its own
 * pixels from one operator to the next (a split by channels hands half of
 * each pixel to the other thread, whose cache may be another chiplet's:
 * 0.6 us a cache line's round trip between this Zen 5's two cores), and
 * Winograd's input transform is not repeated in every part. */
struct cb_conv_job {
	const struct cb_conv_args *s;
	const float *in, *wp, *bias, *res;
	float *out;
	size_t units; /* tiles of rows or panels */
	int nparts, by_panels, by_groups, wino;
};

static void cb_conv_part(const void *ctx, int i, float *scratch)
{
	const struct cb_conv_job *j = ctx;
	const struct cb_conv_args *s = j->s;
	const size_t mtot = (size_t)s->n * s->oh * s->ow, u0 = cb_par_first(i, j->nparts, j->units),
		     u1 = cb_par_first(i + 1, j->nparts, j->units);
	if (u0 == u1)
		return;
	if (j->wino) {
		const size_t tiles = (size_t)s->n * (size_t)((s->oh + j->wino - 1) / j->wino) *
				     (size_t)((s->ow + j->wino - 1) / j->wino);
		const int np = (s->oc + CB_NR - 1) / CB_NR;
		if (j->by_panels)
			cb_wino_range(s, j->wino, j->in, j->wp, j->bias, j->out, j->res, scratch, 0, tiles, (int)u0, (int)u1);
		else
			cb_wino_range(s, j->wino, j->in, j->wp, j->bias, j->out, j->res, scratch, u0 * CB_MR,
				      cb_min_sz(tiles, u1 * CB_MR), 0, np);
		return;
	}
	if (j->by_panels)
		cb_conv_range(s, j->in, j->wp, j->bias, j->out, j->res, scratch, 0, mtot, (int)u0, (int)u1, 0,
			      s->groups);
	else if (j->by_groups)
		cb_conv_range(s, j->in, j->wp, j->bias, j->out, j->res, scratch, 0, mtot, 0, (s->oc + CB_NR - 1) / CB_NR,
			      (int)u0, (int)u1);
	else if (s->kh == 1 && s->kw == 1 && s->c <= CB_SMALLK)
		cb_conv_smallk(s, j->in, j->wp, j->bias, j->out, j->res, u0, cb_min_sz(mtot, u1));
	else
		cb_conv_range(s, j->in, j->wp, j->bias, j->out, j->res, scratch, u0 * CB_MR, cb_min_sz(mtot, u1 * CB_MR),
			      0, (s->oc + CB_NR - 1) / CB_NR, 0, s->groups);
}

/* fewer tiles of rows per thread than this are "few" (cb_conv_par) */
#ifndef CB_FEW_TILES
#define CB_FEW_TILES 8
#endif
/* the filter bytes above which a layer of few rows splits by panels or
 * groups (cb_conv_par) */
#ifndef CB_SPLIT_FILTER
#define CB_SPLIT_FILTER 2097152.0
#endif
/* Splits a layer of `rows` rows (output pixels or Winograd tiles) and np
 * panels per group into parts (cb_conv_job) and runs them. */
static void cb_conv_par(struct cb_conv_job *j, size_t rows, int np, double work, float *scratch)
{
	const struct cb_conv_args *s = j->s;
	const int t = cb_pool_threads();
	const size_t tiles = (rows + CB_MR - 1) / CB_MR;
	const int smallk = !j->wino && s->kh == 1 && s->kw == 1 && s->c <= CB_SMALLK;
	/* the filter (the transformed one of Winograd) in bytes */
	const double fbytes = (double)np * CB_NR * s->c * s->groups * sizeof(float) *
			      (j->wino ? (double)(j->wino + 2) * (j->wino + 2) : (double)s->kh * s->kw);
	const int few = !smallk && tiles < (size_t)t * CB_FEW_TILES && fbytes > CB_SPLIT_FILTER;
	j->by_groups = few && !j->wino && s->groups >= t && s->groups % t == 0;
	j->by_panels = few && s->groups == 1 && np >= t;
	j->units = smallk ? rows : j->by_panels ? (size_t)np : j->by_groups ? (size_t)s->groups : tiles;
	j->nparts = cb_par_parts(work, j->units);
	cb_par(cb_conv_part, j, j->nparts, scratch);
}

/* out = act(conv(in, filter) + bias [+ res]). wp and bias are packed as
 * above; res is NULL or has out's layout (out may be res). scratch holds
 * (min(mc, M) + 16) * (K + 63 + CB_NR) floats: the packed rows of A, then
 * the partial sums of a deep K (each thread its own). */
CB_KERNEL void cb_conv_f32(const struct cb_conv_args *s, const float *in, const float *wp, const float *bias,
			   float *out, const float *res, float *scratch)
{
	struct cb_conv_job j = {s, in, wp, bias, res, out, 0, 0, 0, 0, 0};
	const size_t rows = (size_t)s->n * s->oh * s->ow;
	const int np = (s->oc + CB_NR - 1) / CB_NR;
	cb_conv_par(&j, rows, np, (double)rows * s->kh * s->kw * s->c * s->oc * s->groups, scratch);
}

/* cb_conv_f32 for a convolution the generator chose for Winograd (s->wino):
 * u holds the a^2 transformed filters packed in panels (cb_wino_m). */
CB_KERNEL void cb_wino_f32(const struct cb_conv_args *s, const float *in, const float *u, const float *bias,
			   float *out, const float *res, float *scratch)
{
	struct cb_conv_job j = {s, in, u, bias, res, out, 0, 0, 0, 0, s->wino};
	const size_t tiles = (size_t)s->n * (size_t)((s->oh + s->wino - 1) / s->wino) *
			     (size_t)((s->ow + s->wino - 1) / s->wino);
	const int np = (s->oc + CB_NR - 1) / CB_NR;
	cb_conv_par(&j, tiles, np, (double)tiles * (s->wino + 2) * (s->wino + 2) * s->c * s->oc, scratch);
}
