/* k_linalg.c - the float GEMM and the linear-algebra kernels
 * (fullyconnected, matmul, batchmatmul, gemm).
 *
 * kgemm is a packed, register-blocked GEMM: B is packed in panels of NR
 * columns and A in panels of MR rows for a KC-deep slice, and a micro-kernel
 * keeps an MR x NR block of C in vector registers while it walks k. Blocking
 * KC x MC keeps the packed A in L2. Accumulation is in float, as in every
 * BLAS; products of K up to a few thousand stay well inside ONNX tolerances.
 *
 * kgemm splits large products among the threads (kpar) by rows or by
 * column panels, never along K, so every thread count gives the same bits.
 *
 * Other element kinds (float16, bfloat16, quantized) are widened to float,
 * multiplied, and narrowed once into the result (quantized results are
 * requantized with their own scale and offset).
 */
#include "backends/interpreter/kern.h"

#include <stdlib.h>

enum { MR = 6, NR = 8, KC = 256, MC = 120 };

#if defined(__GNUC__)
typedef float v4f __attribute__((vector_size(16)));
static inline v4f vld(const float *p)
{
	v4f v;
	memcpy(&v, p, sizeof v);
	return v;
}
static inline void vst(float *p, v4f v) { memcpy(p, &v, sizeof v); }

/* c[6 x 8] (+)= ap (kc x 6, packed) * bp (kc x 8, packed) */
static void micro(size_t kc, const float *ap, const float *bp, float *c, size_t ldc, bool acc)
{
	v4f c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0};
	v4f c30 = {0}, c31 = {0}, c40 = {0}, c41 = {0}, c50 = {0}, c51 = {0};
	for (size_t k = 0; k < kc; k++, ap += MR, bp += NR) {
		v4f b0 = vld(bp), b1 = vld(bp + 4);
		/* row i of the tile += ap[i] * the row of B; a macro, so that the
		 * twelve accumulators are named variables (registers) */
#define MICRO_ROW(i)                                                                                         \
	do {                                                                                                 \
		v4f a = (v4f){0} + ap[i];                                                                    \
		c##i##0 += a * b0;                                                                           \
		c##i##1 += a * b1;                                                                           \
	} while (0)
		MICRO_ROW(0);
		MICRO_ROW(1);
		MICRO_ROW(2);
		MICRO_ROW(3);
		MICRO_ROW(4);
		MICRO_ROW(5);
#undef MICRO_ROW
	}
	v4f r[MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
	for (unsigned i = 0; i < MR; i++) {
		float *ci = c + i * ldc;
		if (acc) {
			vst(ci, vld(ci) + r[i][0]);
			vst(ci + 4, vld(ci + 4) + r[i][1]);
		} else {
			vst(ci, r[i][0]);
			vst(ci + 4, r[i][1]);
		}
	}
}
#else
static void micro(size_t kc, const float *ap, const float *bp, float *c, size_t ldc, bool acc)
{
	float r[MR][NR] = {{0}};
	for (size_t k = 0; k < kc; k++, ap += MR, bp += NR)
		for (unsigned i = 0; i < MR; i++)
			for (unsigned j = 0; j < NR; j++)
				r[i][j] += ap[i] * bp[j];
	for (unsigned i = 0; i < MR; i++)
		for (unsigned j = 0; j < NR; j++)
			c[i * ldc + j] = acc ? c[i * ldc + j] + r[i][j] : r[i][j];
}
#endif

static void kgemm_seq(size_t M, size_t N, size_t K, const float *A, size_t lda, const float *B, size_t ldb,
		      float *C, size_t ldc, bool accumulate)
{
	if (M == 0 || N == 0)
		return;
	if (K == 0) {
		if (!accumulate)
			for (size_t i = 0; i < M; i++)
				memset(C + i * ldc, 0, N * sizeof(float));
		return;
	}
	size_t npan = (N + NR - 1) / NR;
	float *bp = xmalloc(KC * npan * NR * sizeof(float));
	float *ap = xmalloc(KC * MC * sizeof(float));
	float edge[MR * NR];
	for (size_t pc = 0; pc < K; pc += KC) {
		size_t kc = K - pc < KC ? K - pc : KC;
		bool acc = accumulate || pc > 0;
		/* pack B[pc .. pc+kc, :] into panels of NR columns, zero padded */
		for (size_t p = 0; p < npan; p++) {
			float *dst = bp + p * kc * NR;
			size_t j0 = p * NR, nr = N - j0 < NR ? N - j0 : NR;
			for (size_t k = 0; k < kc; k++) {
				const float *src = B + (pc + k) * ldb + j0;
				for (size_t j = 0; j < nr; j++)
					dst[k * NR + j] = src[j];
				for (size_t j = nr; j < NR; j++)
					dst[k * NR + j] = 0;
			}
		}
		for (size_t ic = 0; ic < M; ic += MC) {
			size_t mc = M - ic < MC ? M - ic : MC;
			/* pack A[ic .. ic+mc, pc .. pc+kc] into panels of MR rows */
			for (size_t i0 = 0; i0 < mc; i0 += MR) {
				float *dst = ap + i0 * kc;
				size_t mr = mc - i0 < MR ? mc - i0 : MR;
				for (size_t i = 0; i < MR; i++) {
					const float *src = A + (ic + i0 + i) * lda + pc;
					if (i < mr)
						for (size_t k = 0; k < kc; k++)
							dst[k * MR + i] = src[k];
					else
						for (size_t k = 0; k < kc; k++)
							dst[k * MR + i] = 0;
				}
			}
			for (size_t p = 0; p < npan; p++) {
				size_t j0 = p * NR, nr = N - j0 < NR ? N - j0 : NR;
				for (size_t i0 = 0; i0 < mc; i0 += MR) {
					size_t mr = mc - i0 < MR ? mc - i0 : MR;
					float *c = C + (ic + i0) * ldc + j0;
					if (mr == MR && nr == NR) {
						micro(kc, ap + i0 * kc, bp + p * kc * NR, c, ldc, acc);
						continue;
					}
					micro(kc, ap + i0 * kc, bp + p * kc * NR, edge, NR, false);
					for (size_t i = 0; i < mr; i++)
						for (size_t j = 0; j < nr; j++)
							c[i * ldc + j] = acc ? c[i * ldc + j] + edge[i * NR + j]
									     : edge[i * NR + j];
				}
			}
		}
	}
	free(ap);
	free(bp);
}

/* kgemm split among the threads: by rows (whole micro-tiles of MR) when
 * every thread gets at least two, else by panels of NR columns. Each
 * element is the same sum in the same order either way (its K slices in
 * turn, each a micro-kernel's k loop), so the split changes no bit. */
struct kgemm_job {
	size_t M, N, K, lda, ldb, ldc, units;
	const float *A, *B;
	float *C;
	bool accumulate, by_cols;
	int nparts;
};

static void kgemm_part(const void *ctx, int i)
{
	const struct kgemm_job *j = ctx;
	size_t u0 = kpar_first(i, j->nparts, j->units), u1 = kpar_first(i + 1, j->nparts, j->units);
	if (j->by_cols) {
		size_t c0 = u0 * NR, c1 = u1 * NR < j->N ? u1 * NR : j->N;
		kgemm_seq(j->M, c1 - c0, j->K, j->A, j->lda, j->B + c0, j->ldb, j->C + c0, j->ldc, j->accumulate);
		return;
	}
	size_t r0 = u0 * MR, r1 = u1 * MR < j->M ? u1 * MR : j->M;
	kgemm_seq(r1 - r0, j->N, j->K, j->A + r0 * j->lda, j->lda, j->B, j->ldb, j->C + r0 * j->ldc, j->ldc,
		  j->accumulate);
}

void kgemm(size_t M, size_t N, size_t K, const float *A, size_t lda, const float *B, size_t ldb, float *C,
	   size_t ldc, bool accumulate)
{
	size_t tiles = (M + MR - 1) / MR, panels = (N + NR - 1) / NR;
	int t = kpar_parts((double)M * N * (K ? K : 1), tiles > panels ? tiles : panels);
	if (t <= 1) {
		kgemm_seq(M, N, K, A, lda, B, ldb, C, ldc, accumulate);
		return;
	}
	struct kgemm_job j = {M, N, K, lda, ldb, ldc, 0, A, B, C, accumulate, tiles < 2 * (size_t)t, 0};
	j.units = j.by_cols ? panels : tiles;
	j.nparts = (size_t)t < j.units ? t : (int)j.units;
	kpar(kgemm_part, &j, j.nparts);
}

/* fullyconnected(Dest N x M, Src N x K, Weights K x M, Bias M) */
int kern_fullyconnected(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *s = &k->op[1], *w = &k->op[2], *b = &k->op[3];
	size_t n = (size_t)s->t->dims[0], kk = (size_t)s->t->dims[1], m = (size_t)w->t->dims[1];
	float *fs = kwiden(s), *fw = kwiden(w), *fb = kwiden(b), *fd = kresult_buf(d);
	for (size_t i = 0; i < n; i++)
		memcpy(fd + i * m, fb, m * sizeof(float));
	kgemm(n, m, kk, fs, kk, fw, m, fd, m, true);
	kresult_done(d, fd);
	kfree_wide(s, fs);
	kfree_wide(w, fw);
	kfree_wide(b, fb);
	return 0;
}

/* matmul, or with `batched` batchmatmul (a leading batch dimension on all
 * three operands) */
static int matmul(const struct kargs *k, bool batched)
{
	const struct interp_arg *d = &k->op[0], *a = &k->op[1], *b = &k->op[2];
	unsigned o = batched ? 1 : 0;
	size_t bs = batched ? (size_t)a->t->dims[0] : 1;
	size_t n = (size_t)a->t->dims[o], kk = (size_t)a->t->dims[o + 1], m = (size_t)b->t->dims[o + 1];
	float *fa = kwiden(a), *fb = kwiden(b), *fd = kresult_buf(d);
	for (size_t i = 0; i < bs; i++)
		kgemm(n, m, kk, fa + i * n * kk, kk, fb + i * kk * m, m, fd + i * n * m, m, false);
	kresult_done(d, fd);
	kfree_wide(a, fa);
	kfree_wide(b, fb);
	return 0;
}

/* matmul(Dest N x M, LHS N x K, RHS K x M) */
int kern_matmul(const struct kargs *k) { return matmul(k, false); }

/* batchmatmul(Dest B x N x M, LHS B x N x K, RHS B x K x M) */
int kern_batchmatmul(const struct kargs *k) { return matmul(k, true); }

/* A transposed copy of a rows x cols matrix. */
static float *transposed(const float *x, size_t rows, size_t cols)
{
	float *t = xmalloc(rows * cols * sizeof(float) + 1);
	for (size_t i = 0; i < rows; i++)
		for (size_t j = 0; j < cols; j++)
			t[j * rows + i] = x[i * cols + j];
	return t;
}

/* gemm(Dest M x N, A, B, C) {alpha, beta, trans_a, trans_b}:
 * alpha * A' B' + beta * C, C broadcast to M x N. */
int kern_gemm(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *a = &k->op[1], *b = &k->op[2], *c = &k->op[3];
	bool ta = KI(k, AN_trans_a), tb = KI(k, AN_trans_b);
	double alpha = KF(k, AN_alpha), beta = KF(k, AN_beta);
	size_t m = (size_t)a->t->dims[ta], kk = (size_t)a->t->dims[!ta], n = (size_t)b->t->dims[!tb];
	float *fa = kwiden(a), *fb = kwiden(b), *fd = kresult_buf(d);
	float *at = ta ? transposed(fa, kk, m) : fa, *bt = tb ? transposed(fb, n, kk) : fb;
	kgemm(m, n, kk, at, kk, bt, n, fd, n, false);
	size_t cr = c->t->rank >= 2 ? (size_t)c->t->dims[0] : 1;
	size_t cc = c->t->rank >= 1 ? (size_t)c->t->dims[c->t->rank - 1] : 1;
	for (size_t i = 0; i < m; i++)
		for (size_t j = 0; j < n; j++) {
			size_t ci = (cr == 1 ? 0 : i) * cc + (cc == 1 ? 0 : j);
			fd[i * n + j] = (float)(alpha * fd[i * n + j] + beta * ld_f(c->t, c->p, ci));
		}
	if (ta)
		free(at);
	if (tb)
		free(bt);
	kresult_done(d, fd);
	kfree_wide(a, fa);
	kfree_wide(b, fb);
	return 0;
}
