/* ocl_kernels.cl - the OpenCL C templates of the OpenCL backend
 * (backends/opencl/ocl_gen.c; docs/OpenCL.md).
 *
 * This file is not compiled as it stands: the build embeds it as text
 * (cb-embed), and the generator copies one section per instruction into
 * the program of a compiled function, after #defines that specialize it on
 * the instruction's static shapes and operand places. A section starts at
 * a line "//@ NAME" and runs to the next one. Every section defines one
 * kernel named KNAME taking ARGS (the four regions R0..R3) and finds its
 * operands through macros (PD the destination, PS the source, ...), each a
 * typed pointer into a region at an offset fixed at generation time.
 * ACT(x) is the activation fused into the kernel's store: (x), or relu
 * where an in-place relu followed the instruction.
 *
 * Work-items are laid out so that dimension 0 runs along the innermost
 * (contiguous) dimension of the result: neighbouring work-items load
 * neighbouring weights and store neighbouring outputs, which a GPU
 * coalesces and a CPU implementation (PoCL) turns into vector code.
 */

//@ preamble
/* Once per program, before every kernel. */
#define ARGS __global uchar *R0, __global uchar *R1, __global uchar *R2, __global uchar *R3

/* EW.def's functions that OpenCL C lacks: sigmoid in its overflow-free form,
 * the remainder with the divisor's sign */
float ocl_sigmoid(float x);
float ocl_sigmoid(float x)
{
	if (x >= 0.0f)
		return 1.0f / (1.0f + exp(-x));
	const float e = exp(x);
	return e / (1.0f + e);
}

float ocl_fmod_floor(float a, float b);
float ocl_fmod_floor(float a, float b)
{
	float r = fmod(a, b);
	if (r != 0.0f && ((r < 0.0f) != (b < 0.0f)))
		r += b;
	return r;
}

/* lib/support/scalar.h's integer helpers of EW.def's Int column, the same
 * computation in OpenCL C (ocl3): the power wrapping (a negative exponent
 * gives 1/a^-b truncated), the remainder with the divisor's sign (by 0 and
 * by -1: 0), the logical shift of the low `width` bits */
long ocl_sc_ipow(long a, long b);
long ocl_sc_ipow(long a, long b)
{
	if (b < 0)
		return a == 1 ? 1 : a == -1 ? (b % 2 ? -1 : 1) : 0;
	ulong r = 1, x = (ulong)a;
	for (ulong e = (ulong)b; e; e >>= 1, x *= x)
		if (e & 1)
			r *= x;
	return (long)r;
}

long ocl_sc_imod(long a, long b);
long ocl_sc_imod(long a, long b)
{
	const long r = b == 0 || b == -1 ? 0 : a % b;
	return r != 0 && (r < 0) != (b < 0) ? (long)((ulong)r + (ulong)b) : r;
}

ulong ocl_sc_shift(ulong x, long sh, int width, int left);
ulong ocl_sc_shift(ulong x, long sh, int width, int left)
{
	const ulong mask = width == 64 ? ~0UL : (1UL << width) - 1;
	x &= mask;
	return sh < 0 || sh >= width ? 0 : left ? (x << sh) & mask : x >> sh;
}

/* The pool and poolv sections' output pixel PIX (of the N OH OW) at
 * channel CH on: T (float, or a vector of channels) folds its KH x KW
 * window through LOAD(0, p) and STORE(x, 0, p) (vloadN and vstoreN, or
 * LOAD1 and STORE1). Max pooling (IS_MAX 1) ignores padded positions (a
 * window of padding only gives 0) and lets NaN win over a number; average
 * pooling divides by KH * KW (INCL 1) or by the number of real pixels in the
 * window. A macro because OpenCL C has no functions generic in T; IS_MAX is
 * a constant, so the compiler keeps one branch of each test. */
#define POOL_PIXEL(T, PIX, CH, LOAD, STORE)                                                                  \
	do {                                                                                                 \
		const int ox = (int)((PIX) % OW);                                                            \
		const size_t t = (PIX) / OW;                                                                 \
		const int oy = (int)(t % OH), n = (int)(t / OH);                                             \
		T acc = (T)(0.0f);                                                                           \
		int cnt = 0;                                                                                 \
		for (int ky = 0; ky < KH; ky++) {                                                            \
			const int iy = oy * SH + ky - PT;                                                    \
			if (iy < 0 || iy >= H)                                                               \
				continue;                                                                    \
			for (int kx = 0; kx < KW; kx++) {                                                    \
				const int ix = ox * SW + kx - PL;                                            \
				if (ix < 0 || ix >= W)                                                       \
					continue;                                                            \
				const T v = LOAD(0, PS + ((size_t)(n * H + iy) * W + ix) * C + (CH));        \
				/* v wins where it is greater, or NaN over a number */                       \
				if (IS_MAX)                                                                  \
					acc = cnt == 0 ? v : select(acc, v, (v > acc) || (isnan(v) && !isnan(acc))); \
				else                                                                         \
					acc += v;                                                            \
				cnt++;                                                                       \
			}                                                                                    \
		}                                                                                            \
		const int div = INCL ? KH * KW : cnt;                                                        \
		STORE(ACT(IS_MAX ? acc : div ? acc / (float)div : (T)(0.0f)), 0, PD + (PIX) * C + (CH));     \
	} while (0)

/* vload and vstore of one float, for macros written for either */
#define LOAD1(o, p) ((p)[o])
#define STORE1(x, o, p) ((p)[o] = (x))

//@ ew
/* Elementwise: PD[i] = EXPR on A = PA[i] (and B = PB[i]); N elements.
 * EXPR is the kind's Real (ET float) or Int (ET long) column of
 * lib/ir/EW.def; STORE converts its value to the destination's element
 * (bool: 0 or 1; an integer: wrapped to its width). */
__kernel void KNAME(ARGS)
{
	const size_t i = get_global_id(0);
	if (i >= N)
		return;
	const ET A = PA[i];
#ifdef PB
	const ET B = PB[i];
#endif
	PD[i] = STORE(EXPR);
}

//@ splat
__kernel void KNAME(ARGS)
{
	const size_t i = get_global_id(0);
	if (i < N)
		PD[i] = VALUE;
}

//@ convert
/* PD[i] = CONV(PS[i]) on N elements: convertto (ocl_gen_ew.c) */
__kernel void KNAME(ARGS)
{
	const size_t i = get_global_id(0);
	if (i < N)
		PD[i] = CONV(PS[i]);
}

//@ select
/* PD[i] = PC[i] ? PL[i] : PR[i] on N elements, moved bit for bit */
__kernel void KNAME(ARGS)
{
	const size_t i = get_global_id(0);
	if (i < N)
		PD[i] = PC[i] ? PL[i] : PR[i];
}

//@ batchedadd
/* PD = PA + PB, PB (SLICE elements) repeated along the batch */
__kernel void KNAME(ARGS)
{
	const size_t i = get_global_id(0);
	if (i < N)
		PD[i] = ACT(PA[i] + PB[i % SLICE]);
}

//@ conv
/* Convolution, NHWC: work-item (oc, row) computes output channel oc of PX
 * neighbouring pixels of one output row block (row = (n * OH + oy) * OWB +
 * block). WIDX(ky, kx, ic) is the filter index of channel oc: the repacked
 * [KH][KW][ICG][OC] layout for a constant filter (neighbouring work-items
 * read neighbouring weights), the original OC x KH x KW x ICG otherwise. */
__kernel void KNAME(ARGS)
{
	const int oc = (int)get_global_id(0);
	const int row = (int)get_global_id(1);
	if (oc >= OC || row >= ROWS)
		return;
	const int owb = row % OWB, t = row / OWB;
	const int oy = t % OH, n = t / OH;
	const int ox0 = owb * PX;
	const int cin = (oc / OCG) * ICG;
	float acc[PX];
	int off[PX];
	bool ok[PX];
	const float bias = PBIAS[oc];
	for (int p = 0; p < PX; p++)
		acc[p] = bias;
	for (int ky = 0; ky < KH; ky++) {
		const int iy = oy * SH + ky * DH - PT;
		if (iy < 0 || iy >= H)
			continue;
		__global const float *in_row = PS + ((size_t)(n * H + iy) * W) * C + cin;
		for (int kx = 0; kx < KW; kx++) {
			for (int p = 0; p < PX; p++) {
				const int ix = (ox0 + p) * SW + kx * DW - PL;
				ok[p] = ix >= 0 && ix < W;
				off[p] = ok[p] ? ix * C : 0;
			}
			for (int ic = 0; ic < ICG; ic++) {
				const float w = PF[WIDX(ky, kx, ic)];
				for (int p = 0; p < PX; p++) {
					const float x = in_row[off[p] + ic];
					acc[p] += (ok[p] ? x : 0.0f) * w;
				}
			}
		}
	}
	for (int p = 0; p < PX; p++)
		if (ox0 + p < OW) {
			const size_t o = ((size_t)(n * OH + oy) * OW + ox0 + p) * OC + oc;
#ifdef PRES
			acc[p] += PRES[o]; /* a residual added in the store */
#endif
			PD[o] = ACT(acc[p]);
		}
}

//@ convv
/* Convolution, NHWC, vectorized within a work-item (for CPU devices, whose
 * compilers vectorize a work-item's own loops rather than across
 * work-items): work-item (b, row) computes VB vectors (VT, VW lanes each)
 * of output channels from b * VB * VW on, for PX neighbouring pixels of one
 * output row block: VB * PX accumulators, each input value loaded once for
 * VB vectors of weights. The filter is the repacked [KH][KW][ICG][OC]
 * layout, so a lane's weights are neighbours. The channels of a work-item
 * are in one group (OCG % (VB * VW) == 0), so they read one input channel
 * at a time (a scalar broadcast; pixels in the padding read zeros at
 * PZERO, ICG of them at the start of R3), or the convolution is depthwise
 * (DEPTHWISE 1: ICG = OCG = 1, VB = 1) and lane l reads input channel
 * oc0 + l (a vector). */
__kernel void KNAME(ARGS)
{
	const int b = (int)get_global_id(0);
	const int row = (int)get_global_id(1);
	if (b >= OC / (VB * VW) || row >= ROWS)
		return;
	const int oc0 = b * VB * VW;
	const int owb = row % OWB, t = row / OWB;
	const int oy = t % OH, n = t / OH;
	const int ox0 = owb * PX;
	VT acc[VB][PX];
	_Pragma("unroll") for (int v = 0; v < VB; v++) {
		const VT bias = VLOAD(0, PBIAS + oc0 + v * VW);
		_Pragma("unroll") for (int p = 0; p < PX; p++)
			acc[v][p] = bias;
	}
	for (int ky = 0; ky < KH; ky++) {
		const int iy = oy * SH + ky * DH - PT;
		if (iy < 0 || iy >= H)
			continue;
		__global const float *in_row = PS + ((size_t)(n * H + iy) * W) * C;
		for (int kx = 0; kx < KW; kx++) {
			__global const float *wk = PF + (size_t)((ky * KW + kx) * ICG) * OC + oc0;
#if DEPTHWISE
			const VT w = VLOAD(0, wk);
			_Pragma("unroll") for (int p = 0; p < PX; p++) {
				const int ix = (ox0 + p) * SW + kx * DW - PL;
				if (ix >= 0 && ix < W)
					acc[0][p] += VLOAD(0, in_row + (size_t)ix * C + oc0) * w;
			}
#else
			/* a pixel in the padding reads ICG zeros at PZERO instead */
			const int cin = (oc0 / OCG) * ICG;
			__global const float *xp[PX];
			_Pragma("unroll") for (int p = 0; p < PX; p++) {
				const int ix = (ox0 + p) * SW + kx * DW - PL;
				xp[p] = ix >= 0 && ix < W ? in_row + (size_t)ix * C + cin : PZERO;
			}
			for (int ic = 0; ic < ICG; ic++) {
				VT w[VB];
				_Pragma("unroll") for (int v = 0; v < VB; v++)
					w[v] = VLOAD(0, wk + (size_t)ic * OC + v * VW);
				_Pragma("unroll") for (int p = 0; p < PX; p++) {
					const float x = xp[p][ic];
					_Pragma("unroll") for (int v = 0; v < VB; v++)
						acc[v][p] += x * w[v];
				}
			}
#endif
		}
	}
	_Pragma("unroll") for (int p = 0; p < PX; p++)
		if (ox0 + p < OW)
			_Pragma("unroll") for (int v = 0; v < VB; v++) {
				const size_t o = ((size_t)(n * OH + oy) * OW + ox0 + p) * OC + oc0 + v * VW;
#ifdef PRES
				acc[v][p] += VLOAD(0, PRES + o); /* a residual added in the store */
#endif
				VSTORE(ACT(acc[v][p]), 0, PD + o);
			}
}

//@ pool
/* Max or average pooling (POOL_PIXEL), NHWC, one work-item per output
 * element. */
__kernel void KNAME(ARGS)
{
	const size_t i = get_global_id(0);
	if (i < TOTAL)
		POOL_PIXEL(float, i / C, i % C, LOAD1, STORE1);
}

//@ poolv
/* The pool section vectorized within a work-item (CPU devices): work-item
 * (b, pixel) computes channels b * VW .. b * VW + VW - 1 of one output
 * pixel (the number of real pixels is the same for every lane). */
__kernel void KNAME(ARGS)
{
	const int b = (int)get_global_id(0);
	const size_t pix = get_global_id(1);
	if (b < C / VW && pix < NPIX)
		POOL_PIXEL(VT, pix, (size_t)b * VW, VLOAD, VSTORE);
}

//@ gemm
/* PD (M x N) = ALPHA * A B + BETA * C: work-item (j, r) computes column j
 * of RB rows starting at r * RB. AIDX, BIDX and CIDX index the operands
 * (transposed or repacked as the generator arranged; C broadcast; a
 * batched product's BIDX finds the batch from i0, ocl_gen_red.c). */
__kernel void KNAME(ARGS)
{
	const int j = (int)get_global_id(0);
	const int i0 = (int)get_global_id(1) * RB;
	if (j >= N || i0 >= M)
		return;
	float acc[RB];
	int ii[RB];
	for (int r = 0; r < RB; r++) {
		acc[r] = 0.0f;
		ii[r] = min(i0 + r, M - 1);
	}
	for (int k = 0; k < K; k++) {
		const float b = PB[BIDX(k, j)];
		for (int r = 0; r < RB; r++)
			acc[r] += PA[AIDX(ii[r], k)] * b;
	}
	for (int r = 0; r < RB && i0 + r < M; r++) {
		float v = ALPHA * acc[r];
#ifdef PC
		v += BETA * PC[CIDX(i0 + r, j)];
#endif
		PD[(size_t)(i0 + r) * N + j] = ACT(v);
	}
}

//@ softmax
/* Softmax along an axis of LEN elements (stride INNER), one work-item per
 * row; the maximum is subtracted first (NaN wins). */
__kernel void KNAME(ARGS)
{
	const size_t t = get_global_id(0);
	if (t >= OUTER * INNER)
		return;
	const size_t base = (t / INNER) * LEN * INNER + t % INNER;
	float mx = -INFINITY;
	for (size_t j = 0; j < LEN; j++) {
		const float v = PS[base + j * INNER];
		if (v > mx || isnan(v))
			mx = v;
	}
	float sum = 0.0f;
	for (size_t j = 0; j < LEN; j++)
		sum += exp(PS[base + j * INNER] - mx);
	for (size_t j = 0; j < LEN; j++)
		PD[base + j * INNER] = exp(PS[base + j * INNER] - mx) / sum;
}

//@ lrn
/* Local response normalization across the channels (the last dimension,
 * C) of an NHWC image, one work-item per element. */
__kernel void KNAME(ARGS)
{
	const size_t i = get_global_id(0);
	if (i >= N)
		return;
	const int c = (int)(i % C);
	const size_t base = i - (size_t)c;
	float sq = 0.0f;
	for (int j = max(c - HW, 0); j <= min(c + HW, C - 1); j++) {
		const float x = PS[base + (size_t)j];
		sq += x * x;
	}
	PD[i] = PS[i] / pow(LK + LALPHA / (float)(2 * HW + 1) * sq, LBETA);
}

//@ igemm
/* Convolution (group 1) or matrix product as a tiled matrix product, for
 * GPU devices: PD[m][n] = ACT(PBIAS[n] + sum_k A(m, k) PF[k][n]), m over
 * the output pixels (N OH OW, the rows of NHWC), n over the OC output
 * channels, k over the KD = KH KW C reduction in the repacked filter's
 * order (ky, kx, ic; ic innermost, so neighbouring k are neighbouring
 * input channels of one pixel). A matrix product is the 1x1 case on 1x1
 * images (C = its K). A work-group of 16 x 16 work-items computes a
 * TM x TN tile (TM = 16 RM, TN = 16 RN): work-item (lx, ly) holds RM x RN
 * accumulators, rows ly + 16 i and columns lx + 16 j, so neighbouring
 * work-items store neighbouring channels. The reduction steps TK = 16 at
 * a time through __local copies of the A (TK x TM, one column of padding
 * against bank conflicts) and B (TK x TN) tiles: every global value is
 * loaded once per work-group, neighbouring work-items loading neighbouring
 * addresses. A(m, k) gathers the input pixel, zero in the padding and past
 * the edges of the matrices. */
__kernel __attribute__((reqd_work_group_size(16, 16, 1))) void KNAME(ARGS)
{
	__local float As[16][16 * RM + 1];
	__local float Bs[16][16 * RN];
	const int lx = (int)get_local_id(0), ly = (int)get_local_id(1);
	const int n0 = (int)get_group_id(0) * (16 * RN), m0 = (int)get_group_id(1) * (16 * RM);
	/* the pixels whose A values this work-item loads: rows ly + 16 i of
	 * the tile (the top-left input position of each, its image's base) */
	int py[RM], px[RM], pbase[RM];
	_Pragma("unroll") for (int i = 0; i < RM; i++) {
		const int m = m0 + ly + 16 * i;
		const int ox = m % OW, t = m / OW;
		const int oy = t % OH, img = t / OH;
		/* a row past M gets a position that is never inside the image */
		py[i] = m < M ? oy * SH - PT : -(1 << 20);
		px[i] = ox * SW - PL;
		pbase[i] = img * H * W * C;
	}
	float acc[RM][RN];
	_Pragma("unroll") for (int i = 0; i < RM; i++)
		_Pragma("unroll") for (int j = 0; j < RN; j++)
			acc[i][j] = 0.0f;
	for (int k0 = 0; k0 < KD; k0 += 16) {
		/* A: this work-item's column k0 + lx of the tile */
		const int ka = k0 + lx;
		const int ic = ka % C, t = ka / C;
		const int kx = t % KW, ky = t / KW;
		_Pragma("unroll") for (int i = 0; i < RM; i++) {
			const int iy = py[i] + ky * DH, ix = px[i] + kx * DW;
			const bool in = ka < KD && iy >= 0 && iy < H && ix >= 0 && ix < W;
			As[lx][ly + 16 * i] = in ? PS[(size_t)pbase[i] + (size_t)(iy * W + ix) * C + ic] : 0.0f;
		}
		/* B: this work-item's row k0 + ly of the tile */
		const int kb = k0 + ly;
		_Pragma("unroll") for (int j = 0; j < RN; j++) {
			const int n = n0 + lx + 16 * j;
			Bs[ly][lx + 16 * j] = kb < KD && n < OC ? PF[(size_t)kb * OC + n] : 0.0f;
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		_Pragma("unroll") for (int kk = 0; kk < 16; kk++) {
			float a[RM], b[RN];
			_Pragma("unroll") for (int i = 0; i < RM; i++)
				a[i] = As[kk][ly + 16 * i];
			_Pragma("unroll") for (int j = 0; j < RN; j++)
				b[j] = Bs[kk][lx + 16 * j];
			_Pragma("unroll") for (int i = 0; i < RM; i++)
				_Pragma("unroll") for (int j = 0; j < RN; j++)
					acc[i][j] += a[i] * b[j];
		}
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	_Pragma("unroll") for (int j = 0; j < RN; j++) {
		const int n = n0 + lx + 16 * j;
		if (n >= OC)
			continue;
#ifdef PBIAS
		const float bias = PBIAS[n];
#else
		const float bias = 0.0f;
#endif
		_Pragma("unroll") for (int i = 0; i < RM; i++) {
			const int m = m0 + ly + 16 * i;
#ifdef PRES
			if (m < M) /* a residual added in the store */
				PD[(size_t)m * OC + n] = ACT(acc[i][j] + bias + PRES[(size_t)m * OC + n]);
#else
			if (m < M)
				PD[(size_t)m * OC + n] = ACT(acc[i][j] + bias);
#endif
		}
	}
}

/* ---- reductions, argmax, batchmatmul (ocl2; ocl_gen_red.c) ---- */

//@ red
/* A reduction of PS into NOUT outputs PD, each over R source elements:
 * output o's elements are PS[OBASE(o) + ROFF(r)], r in [0, R) (the
 * generator's index arithmetic for the kept and the reduced dimensions).
 * The accumulator (type ACC, IDENT before the first element) joins each
 * element by JOIN(acc, v); FINAL(acc) is what is stored. ARG 1 (argmax,
 * argmin): the accumulator is a value and its index, BETTER(v, i, bv, bi)
 * says whether (v, i) wins over (bv, bi) (NaN loses to a number, equal
 * values to the lower index), and the index is stored. LS 1: a work-item
 * per output along dimension 0, a plain loop. LS > 1: a work-group of LS
 * work-items per output (dimension 1), each joining every LS-th element,
 * then a tree over __local partial results; joins are associative, so
 * only the order of float sums and products differs from the loop's. */
__kernel void KNAME(ARGS)
{
#if LS > 1
	const size_t o = get_global_id(1), lid = get_local_id(0);
#else
	const size_t o = get_global_id(0), lid = 0;
	if (o >= NOUT)
		return;
#endif
	const size_t base = OBASE(o);
#if ARG
	VT bv = IDENT;
	long bi = LONG_MAX;
	for (size_t r = lid; r < R; r += LS) {
		const VT v = PS[base + ROFF(r)];
		if (BETTER(v, (long)r, bv, bi)) {
			bv = v;
			bi = (long)r;
		}
	}
#if LS > 1
	__local VT pv[LS];
	__local long pi[LS];
	pv[lid] = bv;
	pi[lid] = bi;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (size_t s = LS / 2; s > 0; s >>= 1) {
		if (lid < s && BETTER(pv[lid + s], pi[lid + s], pv[lid], pi[lid])) {
			pv[lid] = pv[lid + s];
			pi[lid] = pi[lid + s];
		}
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (lid == 0)
		PD[o] = R ? pi[0] : 0;
#else
	PD[o] = R ? bi : 0;
#endif
#else
	ACC acc = IDENT;
	for (size_t r = lid; r < R; r += LS)
		acc = JOIN(acc, (ACC)PS[base + ROFF(r)]);
#if LS > 1
	__local ACC part[LS];
	part[lid] = acc;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (size_t s = LS / 2; s > 0; s >>= 1) {
		if (lid < s)
			part[lid] = JOIN(part[lid], part[lid + s]);
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (lid == 0)
		PD[o] = FINAL(part[0]);
#else
	PD[o] = FINAL(acc);
#endif
#endif
}

/* ---- oclk (issue 19): transposed convolution, top-k, cumulative sums and
 * products, max pooling with its argmax (ocl_gen_misc.c). Where the device
 * has double (cl_khr_fp64), the float sums these kernels share with the
 * interpreter are computed in double as there (OCLK_REAL): bit for bit its
 * results; elsewhere in float, within its tolerances. ---- */

//@ convt
/* Transposed convolution, NHWC (Filter OC x KH x KW x ICG, Bias OC): a
 * work-item per output element (n, oy, ox, oc) gathers the input pixels
 * (iy, ix) whose tap (ky, kx) reaches it, iy * SH + ky * DH - PT = oy (and
 * so for x), in the interpreter's order: iy, then ix, ascending, so the
 * taps descending. Each tap adds its dot product over the ICG input
 * channels of oc's group, rounded to float, to the bias. */
#ifndef OCLK_REAL
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define OCLK_REAL double
#else
#define OCLK_REAL float
#endif
#endif
__kernel void KNAME(ARGS)
{
	const size_t i = get_global_id(0);
	if (i >= TOTAL)
		return;
	const int oc = (int)(i % OC);
	const size_t pix = i / OC;
	const int ox = (int)(pix % OW);
	const size_t t = pix / OW;
	const int oy = (int)(t % OH), n = (int)(t / OH), g = oc / OCG;
	float acc = PBIAS[oc];
	for (int ky = KH - 1; ky >= 0; ky--) {
		const int ty = oy + PT - ky * DH;
		if (ty < 0 || ty % SH != 0 || ty / SH >= H)
			continue;
		const int iy = ty / SH;
		for (int kx = KW - 1; kx >= 0; kx--) {
			const int tx = ox + PL - kx * DW;
			if (tx < 0 || tx % SW != 0 || tx / SW >= W)
				continue;
			__global const float *px = PS + ((size_t)(n * H + iy) * W + tx / SW) * C + (size_t)g * ICG;
			__global const float *fr = PF + (((size_t)oc * KH + ky) * KW + kx) * ICG;
			OCLK_REAL d = 0;
			for (int c = 0; c < ICG; c++)
				d += (OCLK_REAL)px[c] * (OCLK_REAL)fr[c];
			acc += (float)d;
		}
	}
	PD[i] = ACT(acc);
}

//@ topk
/* The K best of each row of LEN elements of PS (type T) into PV and their
 * positions into PI (type IT): a work-item per row. The order is the
 * interpreter's stable selection's: a before b where BEATS(a, b) (greater;
 * a number before NaN), or neither beats the other and a's index is lower.
 * The j-th pick is the first in that order of the elements after pick
 * j - 1: K passes over the row, no memory but the last pick. */
__kernel void KNAME(ARGS)
{
	const size_t r = get_global_id(0);
	if (r >= ROWS)
		return;
	__global const T *s = PS + r * (size_t)LEN;
	T pv = 0;
	long pi = -1;
	for (long j = 0; j < K; j++) {
		T bv = 0;
		long bi = -1;
		for (long m = 0; m < LEN; m++) {
			const T v = s[m];
			/* after the last pick: the last pick comes before v */
			if (pi >= 0 && !(BEATS(pv, v) || (!BEATS(v, pv) && pi < m)))
				continue;
			/* before the best so far */
			if (bi < 0 || BEATS(v, bv) || (!BEATS(bv, v) && m < bi)) {
				bv = v;
				bi = m;
			}
		}
		PV[r * (size_t)K + (size_t)j] = s[bi];
		PI[r * (size_t)K + (size_t)j] = (IT)bi;
		pv = bv;
		pi = bi;
	}
}

//@ cum
/* Running sums (JOIN +) or products (JOIN *) along an axis of LEN elements
 * of stride INNER, from IDENT: a work-item per line (LANES of them), from
 * the end where REV; EXCL stores the value before each element's. Floats
 * accumulate in OCLK_REAL, integers in wrapping ulong (LOADA); the store
 * converts to T. Each element is read before it is written, so Dest may
 * be Src. */
#ifndef OCLK_REAL
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define OCLK_REAL double
#else
#define OCLK_REAL float
#endif
#endif
__kernel void KNAME(ARGS)
{
	const size_t l = get_global_id(0);
	if (l >= LANES)
		return;
	const size_t base = l / INNER * LEN * INNER + l % INNER;
#if FLOATS
	OCLK_REAL a = IDENT;
#else
	ulong a = IDENT;
#endif
	for (size_t jj = 0; jj < LEN; jj++) {
		const size_t i = base + (REV ? LEN - 1 - jj : jj) * INNER;
#if FLOATS
		const OCLK_REAL p = JOIN(a, LOADA(PS[i]));
		PD[i] = (T)(EXCL ? a : p);
#else
		const ulong p = JOIN(a, LOADA(PS[i]));
		PD[i] = (T)(long)(EXCL ? a : p);
#endif
		a = p;
	}
}

//@ poolarg
/* Max pooling with its argmax, NHWC: a work-item per output element takes
 * the first maximum of its window's real pixels (rows, then columns; NaN
 * beats a number) and stores it and its flattened index in Src (batch
 * included, the interpreter's) into PA; a window of padding only gives 0
 * and -1. */
__kernel void KNAME(ARGS)
{
	const size_t i = get_global_id(0);
	if (i >= TOTAL)
		return;
	const int ch = (int)(i % C);
	const size_t pix = i / C;
	const int ox = (int)(pix % OW);
	const size_t t = pix / OW;
	const int oy = (int)(t % OH), n = (int)(t / OH);
	long best = -1;
	float bv = 0.0f;
	for (int ky = 0; ky < KH; ky++) {
		const int iy = oy * SH + ky - PT;
		if (iy < 0 || iy >= H)
			continue;
		for (int kx = 0; kx < KW; kx++) {
			const int ix = ox * SW + kx - PL;
			if (ix < 0 || ix >= W)
				continue;
			const long ii = ((long)(n * H + iy) * W + ix) * C + ch;
			const float v = PS[ii];
			if (best < 0 || v > bv || (isnan(v) && !isnan(bv))) {
				best = ii;
				bv = v;
			}
		}
	}
	PD[i] = best < 0 ? 0.0f : PS[best];
	PA[i] = best;
}

/* ---- oclt (issue 19): element types (ocl_gen_types.c) ---- */

//@ types
/* The conversions of lib/support/scalar.h and the interpreter's quantize
 * (backends/interpreter/kern.h), restated on the bits (as_uint, as_float)
 * so that every result is the interpreter's bit for bit, NaN payloads
 * included. Written before the first kernel that needs them; the guard
 * keeps them to one copy per program, and static inline keeps those a
 * program does not call out of its compilation. */
#ifndef OCL_TYPES_HELPERS
#define OCL_TYPES_HELPERS
/* IEEE half to float: a NaN keeps its payload, subnormals are exact */
static inline uint ocl_h2f(uint h)
{
	const uint s = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
	if (e == 0x1fu)
		return s | 0x7f800000u | (m << 13);
	if (e == 0u)
		return m ? as_uint((s ? -1.0f : 1.0f) * (float)m * 0x1p-24f) : s;
	return s | ((e + 112u) << 23) | (m << 13);
}

/* float to IEEE half, to nearest even; a NaN stays a quiet NaN with the
 * top of its payload, overflow gives infinity */
static inline uint ocl_f2h(uint x)
{
	const uint s = (x >> 16) & 0x8000u, e = (x >> 23) & 0xffu;
	uint m = x & 0x7fffffu;
	if (e == 0xffu)
		return s | 0x7c00u | (m ? 0x200u | (m >> 13) : 0u);
	const int ex = (int)e - 112;
	if (ex >= 0x1f)
		return s | 0x7c00u;
	if (ex <= 0) {
		if (ex < -10)
			return s;
		m |= 0x800000u;
		const uint sh = (uint)(14 - ex);
		uint h = m >> sh;
		const uint rem = m & ((1u << sh) - 1u), mid = 1u << (sh - 1u);
		if (rem > mid || (rem == mid && (h & 1u)))
			h++;
		return s | h;
	}
	uint h = s | ((uint)ex << 10) | (m >> 13);
	const uint rem = m & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
		h++; /* may carry into the exponent, up to infinity */
	return h;
}

/* float to bfloat16, to nearest even; a NaN stays a quiet NaN */
static inline uint ocl_f2bf(uint x)
{
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return (x >> 16) | 0x40u;
	return (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
}

/* float8 format f (0 E4M3FN, 1 E4M3FNUZ, 2 E5M2, 3 E5M2FNUZ): mantissa
 * bits, bias, largest finite code, and whether it has one NaN (0x80) and
 * no negative zero */
#define OCL_F8_M(f) ((f) <= 1 ? 3 : 2)
#define OCL_F8_BIAS(f) ((f) == 0 ? 7 : (f) == 1 ? 8 : (f) == 2 ? 15 : 16)
#define OCL_F8_MAX(f) ((f) == 0 ? 0x7eu : (f) == 2 ? 0x7bu : 0x7fu)
#define OCL_F8_UZ(f) ((f) == 1 || (f) == 3)

/* a float8 code of format f to float */
static inline uint ocl_f82f(uint b, int f)
{
	const uint m = (uint)OCL_F8_M(f);
	const uint s = (b & 0x80u) << 24, e = (b & 0x7fu) >> m, mant = b & ((1u << m) - 1u);
	if (OCL_F8_UZ(f) ? b == 0x80u : f == 0 ? (b & 0x7fu) == 0x7fu : (e == 0x1fu && mant != 0u))
		return 0x7fc00000u | s;
	if (f == 2 && e == 0x1fu)
		return 0x7f800000u | s;
	const int bias = OCL_F8_BIAS(f);
	if (e == 0u) /* mant * 2^(1 - bias - m), exact in float */
		return mant ? as_uint((s ? -1.0f : 1.0f) * (float)mant *
				      as_float((uint)(127 + 1 - bias - (int)m) << 23))
			    : s;
	return s | (uint)((int)e - bias + 127) << 23 | mant << (23u - m);
}

/* float to a float8 code of format f: to nearest even; NaN is the format's
 * NaN; beyond the largest finite value +-max when sat, else infinity
 * (E5M2) or NaN; ONNX's two quirks (E4M3FN's [480, 496) gives 448; E5M2
 * without sat gives NaN below 65536) as scalar.h keeps them */
static inline uint ocl_f2f8(uint x, int f, int sat)
{
	const uint s = (x >> 24) & 0x80u, ex = (x >> 23) & 0xffu, fm = x & 0x7fffffu;
	const bool uz = OCL_F8_UZ(f);
	const uint maxcode = OCL_F8_MAX(f);
	const uint nan = uz ? 0x80u : 0x7fu | s;
	const uint over = sat ? maxcode | s : f == 2 ? 0x7cu | s : nan;
	if (ex == 0xffu)
		return fm ? nan : over;
	const uint sig = ex ? fm | 0x800000u : fm; /* |v| = sig * 2^e2 */
	const int e2 = ex ? (int)ex - 150 : -149;
	if (!sig)
		return uz ? 0u : s;
	if (f == 0 && (x & 0x7fffffffu) >= 0x43f00000u && (x & 0x7fffffffu) < 0x43f80000u)
		return 0x7eu | s;
	const int m = OCL_F8_M(f), emin = 1 - OCL_F8_BIAS(f);
	const int top = 31 - (int)clz(sig);
	const int lg = e2 + top, sh = (lg > emin ? lg : emin) - m - e2;
	int qe = (lg > emin ? lg : emin) - m;
	uint r;
	if (sh <= 0)
		r = sig << -sh;
	else if (sh > 31)
		r = 0u;
	else {
		const uint rem = sig & ((1u << sh) - 1u), hw = 1u << (sh - 1);
		r = sig >> sh;
		if (rem > hw || (rem == hw && (r & 1u)))
			r++;
	}
	if (!r)
		return uz ? 0u : s;
	if (r >> (m + 1)) {
		r >>= 1;
		qe++;
	}
	const uint code = (r >> m) ? (uint)(qe + m - emin + 1) << m | (r & ((1u << m) - 1u)) : r;
	if (code > maxcode)
		return f == 2 && !sat && (x & 0x7fffffffu) < 0x47800000u ? 0x7fu | s : over;
	return code | s;
}

/* float4e2m1 (low nibble) to float, and float to it: to nearest even,
 * beyond +-6 saturated, NaN +6 */
static inline float ocl_f42f(uint b)
{
	const uint e = (b >> 1) & 3u, m = b & 1u;
	const float v = e ? (float)(2u + m) * (float)(1u << e) * 0.25f : (float)m * 0.5f;
	return (b & 8u) ? -v : v;
}

static inline uint ocl_f2f4(uint x)
{
	const uint s = (x >> 28) & 8u;
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return 7u;
	const float a = as_float(x & 0x7fffffffu);
	if (a >= 6.0f)
		return s | 7u;
	/* the quantum: 0.5 below 2, 1 in [2, 4), 2 in [4, 6]: exact scalings */
	const float q = a < 2.0f ? rint(a * 2.0f) : a < 4.0f ? rint(a) : rint(a * 0.5f);
	return s | (a < 2.0f ? (uint)q : a < 4.0f ? (uint)q + 2u : (uint)q + 4u);
}

/* float8e8m0 to float, and float to it (sat; mode 0 up, 1 down, 2 nearest) */
static inline uint ocl_e8m02f(uint b) { return b == 0xffu ? 0x7fc00000u : b ? b << 23 : 0x00400000u; }

static inline uint ocl_f2e8m0(uint x, int sat, int mode)
{
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return 0xffu;
	if ((x >> 31) || x < 0x00400000u)
		return sat ? 0x00u : 0xffu;
	if (x > 0x7f000000u)
		return sat ? 0xfeu : 0xffu;
	const uint e = x >> 23, m = x & 0x7fffffu, frac = e ? m : (m - 0x400000u) << 1;
	const uint up = mode == 0 ? frac != 0u : mode == 2 ? frac >= 0x400000u : 0u;
	return e + up;
}

/* |x| rounded to 53 significant bits, ties to even: the magnitude of
 * (double)x, as the interpreter converts an int64 to a real value */
static inline ulong ocl_l53(long x)
{
	const ulong u = x < 0 ? (ulong)0 - (ulong)x : (ulong)x;
	const int sh = 11 - (int)clz(u);
	if (u < (1UL << 53) || sh <= 0)
		return u;
	const ulong rem = u & ((1UL << sh) - 1UL), hw = 1UL << (sh - 1);
	ulong r = u >> sh;
	if (rem > hw || (rem == hw && (r & 1UL)))
		r++;
	return r << sh;
}

/* (float)(double)x of an int64: rounded once more, from the 53-bit value */
static inline float ocl_l2f(long x)
{
	const float f = convert_float(ocl_l53(x));
	return x < 0 ? -f : f;
}

/* a NaN made quiet, as the interpreter's conversion through double does */
static inline float ocl_quiet(float v) { return isnan(v) ? as_float(as_uint(v) | 0x400000u) : v; }

/* float to int64 as the interpreter's sat_to_i64: toward zero, saturated
 * (the top is the largest double below 2^63), NaN 0 */
static inline long ocl_f2l(float v) { return v >= 0x1p63f ? 9223372036854774784L : convert_long_sat_rtz(v); }

/* a real value to int4 (sgn) or uint4 as scalar.h's sc_f2i4: rounded half
 * away from zero, wrapped to the low 4 bits; beyond +-9.2e18 (the float
 * bound 0x1.feb3dep+62 is the least float not below it) and NaN 0 */
static inline int ocl_f2i4(float v, int sgn)
{
	if (!(v > -0x1.feb3dep+62f && v < 0x1.feb3dep+62f))
		return 0;
	const int b = (int)((ulong)convert_long(round(v)) & 0xfUL);
	return sgn && b >= 8 ? b - 16 : b;
}

static inline int ocl_l2i4(long x, int sgn)
{
	const ulong u = ocl_l53(x);
	if (u >= 9200000000000000000UL)
		return 0;
	const int b = (int)((x < 0 ? (ulong)0 - u : u) & 0xfUL);
	return sgn && b >= 8 ? b - 16 : b;
}

/* The interpreter's quantize of a float v with scale s (> 0) and offset o
 * (|o| <= 2^16): round(v / s) half to even, plus o, saturated to [lo, hi];
 * NaN gives o. The interpreter divides in double, whose quotient lies on
 * the same side of every half-way point n + 1/2 as the exact one (for
 * |v / s| < 2^21 the distance from a half-way point, when not 0, is at
 * least 2^-25, the double's error at most 2^-32). Here the float quotient
 * (within 2.5 ulp, so within 1 of the exact one) gives a candidate n, and
 * the exact side of n - 1/2 and n + 1/2 is the sign of fma(-(n +- 1/2), s,
 * v), rounded once from the exact value. Beyond 2^21 every result
 * saturates. */
static inline long ocl_quant(float v, float s, long o, long lo, long hi)
{
	if (isnan(v))
		return o < lo ? lo : o > hi ? hi : o;
	const float q = v / s;
	if (!(fabs(q) < 0x1p21f))
		return q > 0.0f ? hi : lo;
	float n = rint(q);
	const float up = fma(-(n + 0.5f), s, v), dn = fma(-(n - 0.5f), s, v);
	const bool odd = (convert_long(n) & 1L) != 0;
	if (up > 0.0f || (up == 0.0f && odd))
		n += 1.0f;
	else if (dn < 0.0f || (dn == 0.0f && odd))
		n -= 1.0f;
	const long r = convert_long(n) + o;
	return r <= lo ? lo : r >= hi ? hi : r;
}
#endif

//@ ewt
/* Elementwise on float16, bfloat16 and quantized operands (ocl_gen_ew.c):
 * A and B loaded through LD (float16, bfloat16: their float value, ET
 * float, the Real column; quantized: the stored integer minus the offset,
 * ET long, the Int column), PD[i] = STORE(EXPR) */
__kernel void KNAME(ARGS)
{
	const size_t i = get_global_id(0);
	if (i >= N)
		return;
	const ET A = LD(PA[i]);
#ifdef PB
	const ET B = LD(PB[i]);
#endif
	PD[i] = STORE(EXPR);
}

//@ qhelpers
/* The integer requantization of docs/Quantization.md ("Arithmetic"), as
 * lib/quant/quant.h's quant_requant computes it: (x * mult) >> shift
 * rounding half away from zero, an x outside int32 first divided by the
 * least 2^k that brings it inside. Where the shift is smaller than that k
 * the interpreter scales up in double and saturates to +-2^62; mult is
 * then at least 2^30 and x at least 2^30 in magnitude, so the product is
 * past every result range and the store saturates it either way: +-2^62
 * here, with no double. Once per program (the guard). */
#ifndef OCL_Q_HELPERS
#define OCL_Q_HELPERS
static inline long ocl_q_rshift(long x, int s)
{
	const long hv = (long)1 << (s - 1);
	return x >= 0 ? (x + hv) >> s : -((-x + hv) >> s);
}

static inline long ocl_q_requant(long x, long mult, int shift)
{
	if (mult == 0)
		return 0;
	int k = 0;
	while (k < 40 && ((x >> k) > 2147483647L || (x >> k) < -2147483648L))
		k++;
	if (k) {
		x = ocl_q_rshift(x, k);
		if (x > 2147483647L)
			x = 2147483647L;
		if (shift < k)
			return x > 0 ? ((long)1 << 62) : x < 0 ? -((long)1 << 62) : 0;
		shift -= k;
	}
	const long p = x * mult;
	return shift ? ocl_q_rshift(p, shift) : p;
}

/* The stored integer of value v: offset o plus v, saturated to [lo, hi];
 * with relu, then the interpreter's relu of that stored integer (of the
 * same type): max(q - o, 0) + o, saturated again */
static inline long ocl_q_store(long v, long o, long lo, long hi, int relu)
{
	long q = v + o;
	q = q < lo ? lo : q > hi ? hi : q;
	if (relu) {
		q = q > o ? q : o;
		q = q < lo ? lo : q > hi ? hi : q;
	}
	return q;
}
#endif

//@ qconv
/* Quantized convolution (ocl_gen_quant.c), NHWC: work-item o computes
 * output element o (n, oy, ox, oc) as the interpreter's kern_q_convolution
 * does: the exact sum of the centred products (XO, WO the offsets; padded
 * positions add nothing), plus the bias in accumulator units (BIAS), then
 * requantized by MULT and SHIFT, stored as ocl_q_store does (the result's
 * offset DO, saturated to [QLO, QHI], and a relu folded in where QRELU).
 * The filter is [OC][KH][KW][ICG] as stored. */
__kernel void KNAME(ARGS)
{
	const size_t o = get_global_id(0);
	if (o >= TOTAL)
		return;
	const size_t oc = o % OC;
	size_t t = o / OC;
	const long ox = (long)(t % OW);
	t /= OW;
	const long oy = (long)(t % OH);
	const size_t n = t / OH;
	const size_t g = oc / OCG;
	long acc = 0;
	for (long ky = 0; ky < KH; ky++) {
		const long iy = oy * SH + ky * DH - PT;
		if (iy < 0 || iy >= H)
			continue;
		for (long kx = 0; kx < KW; kx++) {
			const long ix = ox * SW + kx * DW - PL;
			if (ix < 0 || ix >= W)
				continue;
			const size_t xb = ((n * H + (size_t)iy) * W + (size_t)ix) * C + g * ICG;
			const size_t wb = ((oc * KH + (size_t)ky) * KW + (size_t)kx) * ICG;
			for (size_t c = 0; c < ICG; c++)
				acc += (long)((int)PS[xb + c] - XO) * (long)((int)PF[wb + c] - WO);
		}
	}
#ifdef PBIAS
	acc += BIAS((long)PBIAS[oc] - BO);
#endif
	PD[o] = (DT)ocl_q_store(ocl_q_requant(acc, MULT, SHIFT), DO, QLO, QHI, QRELU);
}

//@ qgemm
/* Quantized matrix products (ocl_gen_quant.c): work-item (j, i) computes
 * element (i, j) of batch b = i / M of Dest (B*M x N) = A (B*M x K) times
 * B (K x N, BSTRIDE elements apart per batch; 0: one B for all), as the
 * interpreter's qk_gemm: the exact sum of centred products, the bias of
 * column j in accumulator units (fullyconnected), requantized, stored as
 * qconv stores. */
__kernel void KNAME(ARGS)
{
	const size_t j = get_global_id(0), i = get_global_id(1);
	if (j >= N || i >= BM)
		return;
	__global const AT *a = PA + i * K;
	__global const BT *b = PB + (i / M) * BSTRIDE + j;
	long acc = 0;
	for (size_t k = 0; k < K; k++)
		acc += (long)((int)a[k] - XO) * (long)((int)b[k * N] - WO);
#ifdef PBIAS
	acc += BIAS((long)PBIAS[j] - BO);
#endif
	PD[i * N + j] = (DT)ocl_q_store(ocl_q_requant(acc, MULT, SHIFT), DO, QLO, QHI, QRELU);
}
