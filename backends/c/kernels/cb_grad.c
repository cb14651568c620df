/* cb_grad.c - the kernels of the gradient and training kinds a bundle runs
 * whole (the code generator's side is backends/c/cgen_grad.c; the
 * elementwise gradients are lib/ir/EW.def rows). Each computes what the
 * kind's lowering rule computes (lib/passes/lower-grad.c, lower-train.c)
 * in float, as the lowered kernels do.
 *
 * The heavy ones, the weight and input gradients of fully-connected layers
 * and convolutions, are matrix products on cb_grad_gemm, which keeps a
 * block of the result in vector registers across the whole sum (the
 * convolution's on its patches unrolled into a scratch matrix), and dot
 * products in CB_DOT_LANES independent partial sums; the remaining loops
 * run along contiguous memory, so the compiler vectorizes them.
 */
#include "cb_base.h"

/* partial sums of cb_dot: enough independent chains to fill a vector */
#define CB_DOT_LANES 16

/* sum of a[j] * b[j] for j < n, in CB_DOT_LANES interleaved partial sums
 * (vectorizable without reassociating one chain) */
CB_INLINE float cb_dot(const float *CB_RESTRICT a, const float *CB_RESTRICT b, size_t n)
{
	float acc[CB_DOT_LANES] = {0};
	const size_t whole = n - n % CB_DOT_LANES;
	for (size_t j = 0; j < whole; j += CB_DOT_LANES)
		for (int u = 0; u < CB_DOT_LANES; u++)
			acc[u] += a[j + u] * b[j + u];
	float s = 0.0f;
	for (int u = 0; u < CB_DOT_LANES; u++)
		s += acc[u];
	for (size_t j = whole; j < n; j++)
		s += a[j] * b[j];
	return s;
}

/* y[j] += a * x[j] for j < n */
CB_INLINE void cb_axpy(float *CB_RESTRICT y, float a, const float *CB_RESTRICT x, size_t n)
{
	for (size_t j = 0; j < n; j++)
		y[j] += a * x[j];
}

/* rows and vectors of the block of C that cb_grad_gemm keeps in registers */
#define CB_GR 4
#define CB_GV 2

/* C[m x n] (row stride ldc) += A B, A(i, k) at a[i * ai + k * ak] (either
 * layout: A or its transpose), B[k x n] row-major (row stride ldb). Blocks
 * of CB_GR rows and CB_GV vectors of C stay in registers over the whole k
 * loop, each step one broadcast of A per row and one vector of B per
 * column block; the edges that do not fill a block run plain loops. */
CB_INLINE void cb_grad_gemm(size_t m, size_t n, size_t kk, const float *a, size_t ai, size_t ak, const float *b,
			    size_t ldb, float *c, size_t ldc)
{
	size_t j0 = 0, mm = m - m % CB_GR;
#if CB_HAVE_VEC
	const size_t nr = CB_GV * CB_VL;
	for (; j0 + nr <= n; j0 += nr) {
		for (size_t i0 = 0; i0 < mm; i0 += CB_GR) {
			cb_vf acc[CB_GR][CB_GV];
			for (int r = 0; r < CB_GR; r++)
				for (int v = 0; v < CB_GV; v++)
					memcpy(&acc[r][v], c + (i0 + (size_t)r) * ldc + j0 + (size_t)v * CB_VL, sizeof(cb_vf));
			for (size_t k = 0; k < kk; k++) {
				cb_vf bv[CB_GV];
				for (int v = 0; v < CB_GV; v++)
					memcpy(&bv[v], b + k * ldb + j0 + (size_t)v * CB_VL, sizeof(cb_vf));
				for (int r = 0; r < CB_GR; r++) {
					cb_vf av = CB_SPLAT(a[(i0 + (size_t)r) * ai + k * ak]);
					for (int v = 0; v < CB_GV; v++)
						acc[r][v] = CB_FMA(acc[r][v], av, bv[v]);
				}
			}
			for (int r = 0; r < CB_GR; r++)
				for (int v = 0; v < CB_GV; v++)
					memcpy(c + (i0 + (size_t)r) * ldc + j0 + (size_t)v * CB_VL, &acc[r][v], sizeof(cb_vf));
		}
		for (size_t i = mm; i < m; i++)
			for (size_t k = 0; k < kk; k++)
				cb_axpy(c + i * ldc + j0, a[i * ai + k * ak], b + k * ldb + j0, nr);
	}
#endif
	(void)mm;
	for (size_t i = 0; i < m && j0 < n; i++)
		for (size_t k = 0; k < kk; k++)
			cb_axpy(c + i * ldc + j0, a[i * ai + k * ak], b + k * ldb + j0, n - j0);
}


/* The label of row i (an integer of es bytes), or -1 when it is not in
 * [0, c). */
CB_INLINE int64_t cb_grad_label(const void *labels, int es, size_t i, size_t c)
{
	int64_t l = es == 8 ? ((const int64_t *)labels)[i] : ((const int32_t *)labels)[i];
	return l >= 0 && (uint64_t)l < c ? l : -1;
}

/* fullyconnectedgrad, matmulgrad and batchmatmulgrad: per batch q <
 * batch, x [n x in], w [in x out], g [n x out] (consecutive per batch):
 * dx = g w^T, dw = x^T g, and db = the column sums of g where db is not
 * NULL (fullyconnectedgrad, batch 1); a NULL dx or dw (a result nothing
 * reads) is not computed. */
CB_KERNEL void cb_linear_grad_f32(const float *x, const float *w, const float *g, float *dx, float *dw, float *db,
				  size_t batch, size_t n, size_t in, size_t out)
{
	for (size_t o = 0; db && o < out; o++)
		db[o] = 0.0f;
	for (size_t q = 0; q < batch; q++) {
		const float *xq = x + q * n * in, *wq = w + q * in * out, *gq = g + q * n * out;
		if (dw) {
			float *dwq = dw + q * in * out;
			for (size_t i = 0; i < in * out; i++)
				dwq[i] = 0.0f;
			cb_grad_gemm(in, out, n, xq, 1, in, gq, out, dwq, out);
		}
		for (size_t r = 0; r < n; r++) {
			const float *gr = gq + r * out;
			for (size_t i = 0; dx && i < in; i++)
				dx[(q * n + r) * in + i] = cb_dot(gr, wq + i * out, out);
			if (db)
				cb_axpy(db, 1.0f, gr, out);
		}
	}
}

/* convolutiongrad: a the window table (cgen_grad.c: N H W C OH OW,
 * kernels, strides, pads top left, dilation, group), noc and nicg the
 * filter's output channels and channels per group; x NHWC, f OC x KH x KW
 * x ICg, g N x OH x OW x OC. Per image and group, with the image's
 * patches unrolled into col [P x T] (P = OH*OW output pixels, T =
 * KH*KW*ICg taps, zeros in the padding): the filter gradient dF^T [T x
 * OC] += col^T G and dcol [P x T] = G F, added back into dx patch by patch;
 * both products on cb_grad_gemm; dx NULL (nothing reads the input
 * gradient: a first layer's) skips the second. scratch holds 2 * P * T +
 * T * OC floats (col, dcol, dF^T). */
CB_KERNEL void cb_conv_grad_f32(const int *a, size_t noc, size_t nicg, const float *x, const float *f, const float *g,
				float *dx, float *df, float *db, float *scratch)
{
	const size_t N = (size_t)a[0], H = (size_t)a[1], W = (size_t)a[2], C = (size_t)a[3];
	const size_t OH = (size_t)a[4], OW = (size_t)a[5], KH = (size_t)a[6], KW = (size_t)a[7];
	const long sh = a[8], sw = a[9], pt = a[10], pl = a[11], dh = a[12], dw = a[13];
	const size_t OC = noc, ICG = nicg, OCG = OC / (size_t)a[14], P = OH * OW, T = KH * KW * ICG;
	float *col = scratch, *dcol = scratch + P * T, *dft = scratch + 2 * P * T;
	for (size_t i = 0; i < T * OC; i++)
		dft[i] = 0.0f;
	for (size_t i = 0; dx && i < N * H * W * C; i++)
		dx[i] = 0.0f;
	for (size_t oc = 0; oc < OC; oc++)
		db[oc] = 0.0f;
	for (size_t n = 0; n < N; n++) {
		const float *gn = g + n * P * OC;
		for (size_t p = 0; p < P; p++)
			cb_axpy(db, 1.0f, gn + p * OC, OC);
		for (size_t o0 = 0; o0 < OC; o0 += OCG) {
			size_t c0 = o0 / OCG * ICG;
			/* col[p, (ky, kx, c)] = x[n, iy, ix, c0 + c] or 0 */
			for (size_t p = 0; p < P; p++)
				for (size_t ky = 0; ky < KH; ky++)
					for (size_t kx = 0; kx < KW; kx++) {
						long iy = (long)(p / OW) * sh - pt + (long)ky * dh;
						long ix = (long)(p % OW) * sw - pl + (long)kx * dw;
						float *cp = col + p * T + (ky * KW + kx) * ICG;
						bool in = iy >= 0 && iy < (long)H && ix >= 0 && ix < (long)W;
						const float *xp = x + ((n * H + (size_t)iy) * W + (size_t)ix) * C + c0;
						for (size_t c = 0; c < ICG; c++)
							cp[c] = in ? xp[c] : 0.0f;
					}
			cb_grad_gemm(T, OCG, P, col, 1, T, gn + o0, OC, dft + o0, OC);
			if (!dx)
				continue;
			for (size_t i = 0; i < P * T; i++)
				dcol[i] = 0.0f;
			cb_grad_gemm(P, T, OCG, gn + o0, OC, 1, f + o0 * T, T, dcol, T);
			for (size_t p = 0; p < P; p++)
				for (size_t ky = 0; ky < KH; ky++)
					for (size_t kx = 0; kx < KW; kx++) {
						long iy = (long)(p / OW) * sh - pt + (long)ky * dh;
						long ix = (long)(p % OW) * sw - pl + (long)kx * dw;
						if (iy < 0 || iy >= (long)H || ix < 0 || ix >= (long)W)
							continue;
						cb_axpy(dx + ((n * H + (size_t)iy) * W + (size_t)ix) * C + c0, 1.0f,
							dcol + p * T + (ky * KW + kx) * ICG, ICG);
					}
		}
	}
	for (size_t oc = 0; oc < OC; oc++)
		for (size_t t = 0; t < T; t++)
			df[oc * T + t] = dft[t * OC + oc];
}

/* maxpoolgrad: dx (nin) = 0, then g[i] added at the flat input position
 * am[i] (integers of aes bytes); -1 for a position outside dx. */
CB_KERNEL int cb_maxpool_grad_f32(const void *am, int aes, const float *g, float *dx, size_t nin, size_t nout)
{
	for (size_t i = 0; i < nin; i++)
		dx[i] = 0.0f;
	for (size_t i = 0; i < nout; i++) {
		int64_t at = cb_grad_label(am, aes, i, nin);
		if (at < 0)
			return -1;
		dx[at] += g[i];
	}
	return 0;
}

/* avgpoolgrad: a the window table (cgen_grad.c: N H W C OH OW, kernels,
 * strides, pads top left, dilation, group, count_include_pads): each g
 * spread evenly over the input pixels of its window, divided as the
 * forward pool divides. */
CB_KERNEL void cb_avgpool_grad_f32(const int *a, const float *g, float *dx)
{
	const size_t N = (size_t)a[0], H = (size_t)a[1], W = (size_t)a[2], C = (size_t)a[3];
	const size_t OH = (size_t)a[4], OW = (size_t)a[5];
	const long kh = a[6], kw = a[7], sh = a[8], sw = a[9], pt = a[10], pl = a[11];
	for (size_t i = 0; i < N * H * W * C; i++)
		dx[i] = 0.0f;
	for (size_t n = 0; n < N; n++)
		for (size_t oy = 0; oy < OH; oy++)
			for (size_t ox = 0; ox < OW; ox++) {
				long y0 = (long)oy * sh - pt, x0 = (long)ox * sw - pl, y1 = y0 + kh, x1 = x0 + kw;
				y0 = y0 < 0 ? 0 : y0, x0 = x0 < 0 ? 0 : x0;
				y1 = y1 > (long)H ? (long)H : y1, x1 = x1 > (long)W ? (long)W : x1;
				long cnt = a[15] ? kh * kw : (y1 - y0) * (x1 - x0);
				if (cnt <= 0)
					continue;
				const float *gp = g + ((n * OH + oy) * OW + ox) * C;
				for (long iy = y0; iy < y1; iy++)
					for (long ix = x0; ix < x1; ix++)
						cb_axpy(dx + ((n * H + (size_t)iy) * W + (size_t)ix) * C, 1.0f / (float)cnt,
							gp, C);
			}
}

/* softmaxgrad: dx = y - one_hot(labels), y [n x c]; -1 for a label out of
 * range. */
CB_KERNEL int cb_softmax_grad_f32(const float *y, const void *labels, int les, float *dx, size_t n, size_t c)
{
	for (size_t i = 0; i < n; i++) {
		int64_t l = cb_grad_label(labels, les, i, c);
		if (l < 0)
			return -1;
		for (size_t j = 0; j < c; j++)
			dx[i * c + j] = y[i * c + j] - ((int64_t)j == l ? 1.0f : 0.0f);
	}
	return 0;
}

/* crossentropylossgrad: dp = -cg / p at each row's label, 0 elsewhere; -1
 * for a label out of range. */
CB_KERNEL int cb_xent_grad_f32(const float *p, const void *labels, int les, const float *cg, float *dp, size_t n,
			       size_t c)
{
	for (size_t i = 0; i < n; i++) {
		int64_t l = cb_grad_label(labels, les, i, c);
		if (l < 0)
			return -1;
		for (size_t j = 0; j < c; j++)
			dp[i * c + j] = (int64_t)j == l ? -cg[0] / p[i * c + j] : 0.0f;
	}
	return 0;
}

/* batchnormalizationgrad over outer x c x inner (c the channel axis), per
 * channel with cnt = outer * inner and xhat = (x - mean) / sqrt(var + eps):
 * db = sum g, ds = sum g xhat, dx = scale / sd * (g - db / cnt - xhat ds /
 * cnt). */
CB_KERNEL void cb_bn_grad_f32(const float *x, const float *scale, const float *mean, const float *var, const float *g,
			      float *dx, float *ds, float *db, size_t outer, size_t c, size_t inner, float eps)
{
	const float cnt = (float)(outer * inner);
	for (size_t ch = 0; ch < c; ch++) {
		float sd = sqrtf(var[ch] + eps), m = mean[ch], sb = 0.0f, ss = 0.0f;
		for (size_t o = 0; o < outer; o++)
			for (size_t i = 0; i < inner; i++) {
				size_t e = (o * c + ch) * inner + i;
				sb += g[e];
				ss += g[e] * ((x[e] - m) / sd);
			}
		float k = scale[ch] / sd;
		for (size_t o = 0; o < outer; o++)
			for (size_t i = 0; i < inner; i++) {
				size_t e = (o * c + ch) * inner + i;
				dx[e] = k * (g[e] - sb / cnt - (x[e] - m) / sd * (ss / cnt));
			}
		ds[ch] = ss;
		db[ch] = sb;
	}
}

/* s = k + alpha / size * (the sum of x^2 over channels ch - half .. ch +
 * half) of the pixel at xp (c channels) */
CB_INLINE float cb_lrn_s(const float *xp, int c, int ch, int half, float as, float k)
{
	int lo = ch - half < 0 ? 0 : ch - half, hi = ch + half >= c ? c - 1 : ch + half;
	float s = 0.0f;
	for (int j = lo; j <= hi; j++)
		s += xp[j] * xp[j];
	return k + as * s;
}

/* localresponsenormalizationgrad over pixels x c (NHWC) of y = x s^-beta:
 * dx = g s^-beta - 2 alpha beta / size * x * (window sum of g x s^-beta /
 * s). */
CB_KERNEL void cb_lrn_grad_f32(const float *x, const float *g, float *dx, size_t pixels, int c, int half, float alpha,
			       float beta, float k)
{
	const float size = (float)(2 * half + 1), as = alpha / size;
	for (size_t p = 0; p < pixels; p++) {
		const float *xp = x + p * (size_t)c, *gp = g + p * (size_t)c;
		float *dp = dx + p * (size_t)c;
		for (int ch = 0; ch < c; ch++) {
			int lo = ch - half < 0 ? 0 : ch - half, hi = ch + half >= c ? c - 1 : ch + half;
			float w = 0.0f;
			for (int j = lo; j <= hi; j++) {
				float sj = cb_lrn_s(xp, c, j, half, as, k);
				w += gp[j] * xp[j] * powf(sj, -beta) / sj;
			}
			float s = cb_lrn_s(xp, c, ch, half, as, k);
			dp[ch] = gp[ch] * powf(s, -beta) - 2.0f * alpha * beta / size * xp[ch] * w;
		}
	}
}

/* the 64-bit mix of DropoutMask's keys (lib/passes/dropoutmask.h) */
CB_INLINE uint64_t cb_mix64(uint64_t v)
{
	v ^= v >> 30;
	v *= 0xbf58476d1ce4e5b9u;
	v ^= v >> 27;
	v *= 0x94d049bb133111ebu;
	return v ^ (v >> 31);
}

/* x mod 2^31 - 1 without a division: 2^31 is 1 modulo 2^31 - 1, so
 * adding the bits above 31 to the low 31 keeps the residue; twice brings
 * any 64-bit x under 2^31 + 5, one subtraction the rest (the divisions
 * took 1 ms per step of the Fashion-MNIST CNN's 65,536-element mask). */
CB_INLINE uint64_t cb_mod_m31(uint64_t x)
{
	const uint64_t m = 2147483647u;
	x = (x & m) + (x >> 31);
	x = (x & m) + (x >> 31);
	return x >= m ? x - m : x;
}

/* dropoutmask: mask[i] = keep where element i is kept at step *step (the
 * hash of lib/passes/dropoutmask.h, modulus m = 2^31 - 1), else 0. */
CB_KERNEL void cb_dropout_mask_f32(float *mask, size_t n, const int64_t *step, uint64_t seed, int64_t thr, float keep)
{
	const int64_t m = 2147483647;
	int64_t t = *step % m;
	t = (t < 0 ? t + m : t) * 48271 % m;
	uint64_t base = cb_mix64(seed + 0x9e3779b97f4a7c15u);
	for (size_t i = 0; i < n; i++) {
		/* every value below is in [0, m): the products fit 62 bits */
		uint64_t key = cb_mod_m31(cb_mix64(base + i));
		uint64_t h = cb_mod_m31(key + (uint64_t)t);
		h = cb_mod_m31(h * h + key);
		h = cb_mod_m31(h * h + key);
		mask[i] = (int64_t)h < thr ? keep : 0.0f;
	}
}

/* sgdmomentum over n elements: g = grad * inv_batch + l1 sign(w) + l2 w,
 * vel = mu vel + g, dst = w - lr vel (dst may be w). */
CB_KERNEL void cb_sgd_momentum_f32(float *dst, const float *grad, const float *w, float *vel, size_t n,
				   float inv_batch, float l1, float l2, float mu, float lr)
{
	for (size_t i = 0; i < n; i++) {
		float wv = w[i];
		float gv = grad[i] * inv_batch + l1 * (float)((wv > 0.0f) - (wv < 0.0f)) + l2 * wv;
		float vv = mu * vel[i] + gv;
		vel[i] = vv;
		dst[i] = wv - lr * vv;
	}
}

/* adaptiveavgpoolgrad: g [n x oh x ow x c] spread evenly over each forward
 * window of dx [n x h x w x c] (rows [oy h / oh, ceil((oy + 1) h / oh)),
 * the columns alike). */
CB_KERNEL void cb_adaptive_avgpool_grad_f32(const float *g, float *dx, size_t n, size_t h, size_t w, size_t c,
					    size_t oh, size_t ow)
{
	for (size_t i = 0; i < n * h * w * c; i++)
		dx[i] = 0.0f;
	for (size_t b = 0; b < n; b++)
		for (size_t oy = 0; oy < oh; oy++)
			for (size_t ox = 0; ox < ow; ox++) {
				size_t y0 = oy * h / oh, y1 = ((oy + 1) * h + oh - 1) / oh;
				size_t x0 = ox * w / ow, x1 = ((ox + 1) * w + ow - 1) / ow;
				const float *gp = g + ((b * oh + oy) * ow + ox) * c;
				float inv = 1.0f / (float)((y1 - y0) * (x1 - x0));
				for (size_t y = y0; y < y1; y++)
					for (size_t x = x0; x < x1; x++)
						cb_axpy(dx + ((b * h + y) * w + x) * c, inv, gp, c);
			}
}

/* logsoftmaxgrad over outer x len x inner (len the axis): dx = g - exp(y)
 * * (the sum of g along the axis). */
CB_KERNEL void cb_logsoftmax_grad_f32(const float *y, const float *g, float *dx, size_t outer, size_t len,
				      size_t inner)
{
	for (size_t o = 0; o < outer; o++)
		for (size_t in = 0; in < inner; in++) {
			size_t base = o * len * inner + in;
			float s = 0.0f;
			for (size_t j = 0; j < len; j++)
				s += g[base + j * inner];
			for (size_t j = 0; j < len; j++) {
				size_t i = base + j * inner;
				dx[i] = g[i] - expf(y[i]) * s;
			}
		}
}
