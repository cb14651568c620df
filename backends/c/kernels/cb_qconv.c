/* cb_qconv.c - the 8-bit matrix products of a C bundle: quantized
 * convolutions (grouped too, per-tensor or per-channel filter parameters),
 * fully-connected layers and matmuls with constant weights, bit for bit
 * the interpreter's (backends/interpreter/k_quant.c, docs/Quantization.md).
 *
 * Arithmetic. An input element q of zero point ox and a weight w of zero
 * point zw stand for (q - ox) and (w - zw). Inputs are read as unsigned
 * bytes u (a signed input flipped by u = q ^ 0x80 = q + 128, its zero point
 * zx = ox + 128), so that the inner loop is a pure u8 x s8 dot product:
 *   sum (u - zx)(w - zw) = sum u w - zw sum u - zx sum w + K zx zw.
 * The generator folds -zx sum w + K zx zw + bias' into a per-channel
 * correction (CB_QCORR); the row sum of u is computed while packing,
 * only when some channel has zw != 0. Padded window positions are packed
 * as zx, so they add nothing, as in the interpreter. The dot products are
 * exact in int32 (the generator takes this path only for K <= 32768:
 * |u w| <= 255 * 128); the accumulator plus corrections is formed in
 * int64 and requantized per channel: (acc * mult) >> shift rounding half
 * away from zero, plus the output offset, saturated.
 *
 * Paths, chosen by the preprocessor (never at run time):
 *   __AVX512VNNI__ (with AVX-512BW): vpdpbusd on zmm, tiles of 12 rows x
 *     2 vectors of 16 channels;
 *   __AVXVNNI__ or AVX-512 VNNI with VL: vpdpbusd on ymm, 3 rows x 4 vectors;
 *   __AVX2__: vpmaddubsw + vpmaddwd. vpmaddubsw sums two u8 x s8
 *     products into an int16 and saturates (2 * 255 * 128 > 32767), so
 *     the byte u is split into u >> 1 and u & 1: each half's pair sums
 *     stay inside int16 (2 * 127 * 128, 2 * 128), vpmaddwd widens them to
 *     int32 with weights 2 and 1. Exact; 2 rows x 4 vectors;
 *   otherwise (CB_NO_VECTOR, other targets): plain loops, 4 rows.
 * The requantization of the AVX-512 path is vectorized by hand (64-bit
 * lanes), the others' by the compiler from the same formula.
 * Every path computes the same integers.
 *
 * Layouts. Weights (packed by the generator, backends/c/cgen_quant.c):
 * per group, panels of CB_QNR (32) output channels, per panel the K
 * dimension in quads of 4: byte ((g * np + p) * kq + q) * 128 + j * 4 + t
 * is channel p * 32 + j, k = 4q + t (zeros past the channels and K). An
 * input block is packed as rows of kq * 4 bytes (im2col), zeros past K;
 * the micro-kernel broadcasts 4 bytes of each of its MR rows per quad.
 */
#include "cb_base.h"
#include "cb_thread.h"

#if defined(__GNUC__) && !defined(CB_NO_VECTOR) && defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include <immintrin.h>
#define CB_Q_VNNI512 1
#define CB_QMR 12
#elif defined(__GNUC__) && !defined(CB_NO_VECTOR) &&                                                 \
	(defined(__AVXVNNI__) || (defined(__AVX512VNNI__) && defined(__AVX512VL__)))
#include <immintrin.h>
#define CB_Q_VNNI256 1
#define CB_QMR 3
#elif defined(__GNUC__) && !defined(CB_NO_VECTOR) && defined(__AVX2__)
#include <immintrin.h>
#define CB_Q_AVX2 1
#define CB_QMR 2
#else
#define CB_QMR 4
#endif

/* output channels per weight panel (the generator agrees: CG_QNR) */
#define CB_QNR 32

/* One 8-bit matrix product (literal in the bundle): the shape as every
 * matrix-product kernel takes it (its n ... groups, mc: rows per packed
 * block, a multiple of 12, and ostride: bytes between output pixels; act,
 * lo, hi and wino unused), then the 8-bit product's own fields. */
struct cb_qconv_args {
	struct cb_conv_args g;
	int istride;      /* bytes between input pixels */
	int kq;           /* quads of K = kh * kw * c */
	int np;           /* panels per group */
	int xflip;        /* 0x80: the input is signed (read as q ^ 0x80) */
	int zx;           /* the input's zero point as an unsigned byte */
	int rowsum;       /* some channel has a weight zero point */
	int fast;         /* every accumulator fits int32 (the generator's bound)
			   and every weight zero point a byte; 2: and every
			   shift is 32 or more */
	int lo, hi, ooff; /* output range and zero point */
};

/* The channel constants of a panel (generator), CB_QCH int64 slots:
 * corr = bias' - zx sum w + K zx zw (int64, and again as int32, its value
 * modulo 2^32: the fast epilogue's accumulator fits int32, so the sum
 * wraps to the exact value); zw (int32); mult and shift of the
 * requantization and half = 2^(shift - 1) (0 for shift 0), int64 each,
 * per 16 channels the even ones first, then the odd ones (cb_qperm), as
 * vpmuldq pairs them with 32-bit lanes. */
enum { CB_QCORR = 0, CB_QCORR32 = CB_QNR, CB_QZW32 = CB_QNR + CB_QNR / 2, CB_QMULT = 2 * CB_QNR,
       CB_QSHIFT = 3 * CB_QNR, CB_QHALF = 4 * CB_QNR, CB_QCH = 5 * CB_QNR };

/* the slot of channel j in the mult, shift and half arrays */
CB_INLINE int cb_qperm(int j) { return (j & ~15) | ((j & 1) << 3) | ((j & 15) >> 1); }

/* x / 2^s rounded half away from zero, s >= 1 */
CB_INLINE int64_t cb_q_rshift(int64_t x, int s)
{
	int64_t h = (int64_t)1 << (s - 1);
	return x < 0 ? -((h - x) >> s) : (x + h) >> s;
}

/* The requantization of docs/Quantization.md for any 64-bit x: an x
 * outside int32 is first brought inside by the least 2^k (rounded half
 * away), the shift lowered by k, or the product scaled up (saturating to
 * +-2^62) when the shift is below k. */
CB_INLINE int64_t cb_q_requant(int64_t x, int64_t mult, int shift)
{
	int k = 0;
	if (mult == 0)
		return 0;
	while (k < 40 && (x >> k < INT32_MIN || x >> k > INT32_MAX))
		k++;
	if (k > 0) {
		x = cb_q_rshift(x, k);
		x = x > INT32_MAX ? INT32_MAX : x;
		if (shift < k) {
			double v = (double)x * (double)mult * (double)((int64_t)1 << (k - shift));
			if (v >= 4.6e18)
				return (int64_t)1 << 62;
			return v <= -4.6e18 ? -((int64_t)1 << 62) : (int64_t)v;
		}
		shift -= k;
	}
	return shift > 0 ? cb_q_rshift(x * mult, shift) : x * mult;
}

/* offset + v saturated to [lo, hi], as the stored byte */
CB_INLINE uint8_t cb_q_store(int64_t v, int ooff, int lo, int hi)
{
	v += ooff;
	v = v < lo ? lo : v > hi ? hi : v;
	return (uint8_t)(int8_t)v;
}

/* A row's running sum of bytes while it is packed: on the AVX-512 path
 * the vpsadbw sums of the copied vectors in 64-bit lanes (reading the
 * row back after its masked stores would wait for them: they do not
 * forward), else an integer. Passed by value: through a pointer it
 * lived in memory (the byte stores may alias it). */
#if defined(CB_Q_VNNI512)
typedef __m512i cb_qsum;
CB_INLINE cb_qsum cb_qsum_zero(void) { return _mm512_setzero_si512(); }
CB_INLINE cb_qsum cb_qsum_add(cb_qsum a, cb_qsum b) { return _mm512_add_epi64(a, b); }
CB_INLINE int32_t cb_qsum_get(cb_qsum s) { return (int32_t)_mm512_reduce_add_epi64(s); }
#else
typedef int32_t cb_qsum;
CB_INLINE cb_qsum cb_qsum_zero(void) { return 0; }
CB_INLINE cb_qsum cb_qsum_add(cb_qsum a, cb_qsum b) { return a + b; }
CB_INLINE int32_t cb_qsum_get(cb_qsum s) { return s; }
#endif

#if defined(CB_Q_VNNI512)
/* The bytes of mask m from x to p, each xor'ed with flip; their sum (in
 * 64-bit lanes) when want, else zero. */
CB_INLINE __m512i cb_q_copyflip_m(uint8_t *CB_RESTRICT p, const uint8_t *CB_RESTRICT x, __mmask64 m, uint8_t flip,
				  bool want)
{
	__m512i v = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, (const void *)x), _mm512_set1_epi8((char)flip));
	_mm512_mask_storeu_epi8((void *)p, m, v);
	return want ? _mm512_sad_epu8(_mm512_maskz_mov_epi8(m, v), _mm512_setzero_si512()) : _mm512_setzero_si512();
}
#endif

/* n bytes from x to p, each xor'ed with flip (0 or 0x80); returns their
 * sum when want, else zero: 64 at a time (the last ones by masked moves)
 * on the AVX-512 path, else 8 at a time */
CB_INLINE cb_qsum cb_q_copyflip(uint8_t *CB_RESTRICT p, const uint8_t *CB_RESTRICT x, size_t n, uint8_t flip,
				bool want)
{
	cb_qsum sum = cb_qsum_zero();
#if defined(CB_Q_VNNI512)
	const __m512i f = _mm512_set1_epi8((char)flip), z = _mm512_setzero_si512();
	size_t i = 0;
	for (; i + 64 <= n; i += 64) {
		__m512i v = _mm512_xor_si512(_mm512_loadu_si512((const void *)(x + i)), f);
		_mm512_storeu_si512((void *)(p + i), v);
		if (want)
			sum = _mm512_add_epi64(sum, _mm512_sad_epu8(v, z));
	}
	if (i < n)
		sum = _mm512_add_epi64(sum, cb_q_copyflip_m(p + i, x + i, (__mmask64)(~0ull >> (64 - (n - i))), flip, want));
#else
	if (!flip)
		memcpy(p, x, n);
	else {
		size_t i = 0;
		for (; i + 8 <= n; i += 8) {
			uint64_t v;
			memcpy(&v, x + i, 8);
			v ^= 0x8080808080808080ull;
			memcpy(p + i, &v, 8);
		}
		for (; i < n; i++)
			p[i] = x[i] ^ flip;
	}
	for (size_t k = 0; want && k < n; k++)
		sum += p[k];
#endif
	return sum;
}

/* Packs rows m0 .. m0 + nr - 1 (of the n x oh x ow output pixels) of group
 * g as rows of kq * 4 bytes at dst (up to a whole tile of CB_QMR rows,
 * the rows past nr zero), with their sums of u into rs when the product
 * needs them. A window row inside the image whose pixels are contiguous
 * (one group, unit dilation) is one copy. */
static void cb_qconv_pack(const struct cb_qconv_args *s, const uint8_t *in, int g, size_t m0, int nr,
			  uint8_t *dst, int32_t *rs)
{
	const int kh = s->g.kh, kw = s->g.kw, c = s->g.c, h = s->g.h, w = s->g.w, ow = s->g.ow, oh = s->g.oh, kq = s->kq;
	const size_t kb = (size_t)kq * 4, is = (size_t)s->istride;
	const bool whole = s->g.dw == 1 && is == (size_t)c;
	const size_t wlen = (size_t)kw * (size_t)c; /* a window row's bytes */
#if defined(CB_Q_VNNI512)
	const __mmask64 wmask = (__mmask64)(wlen < 64 ? ~0ull >> (64 - wlen) : ~0ull);
#endif
	int ntiles = (nr + CB_QMR - 1) / CB_QMR;
	memset(dst + (size_t)nr * kb, 0, (size_t)(ntiles * CB_QMR - nr) * kb);
	const uint8_t flip = (uint8_t)s->xflip, zx = (uint8_t)s->zx;
	/* the pixel of row m0, then stepped row by row */
	int ox = (int)(m0 % (size_t)ow), oy = (int)(m0 / (size_t)ow % (size_t)oh);
	size_t n = m0 / ((size_t)ow * (size_t)oh);
	for (int r = 0; r < nr; r++) {
		uint8_t *row = dst + (size_t)r * kb, *p = row;
		int ix0 = ox * s->g.sw - s->g.pl;
		cb_qsum sum = cb_qsum_zero();
		const bool want = s->rowsum;
		int32_t pads = 0; /* bytes packed as zx */
		for (int ky = 0; ky < kh; ky++) {
			int iy = oy * s->g.sh + ky * s->g.dh - s->g.pt;
			const uint8_t *xr = in + (n * (size_t)h + (size_t)iy) * (size_t)w * is + (size_t)g * (size_t)c;
			if (iy < 0 || iy >= h) {
				memset(p, zx, (size_t)kw * (size_t)c);
				p += (size_t)kw * (size_t)c;
				pads += kw * c;
				continue;
			}
			if (whole && ix0 >= 0 && ix0 + kw <= w) {
				const uint8_t *px = xr + (size_t)ix0 * is;
#if defined(CB_Q_VNNI512)
				if (wlen < 64) /* one masked move, its mask made once */
					sum = cb_qsum_add(sum, cb_q_copyflip_m(p, px, wmask, flip, want));
				else
#endif
					sum = cb_qsum_add(sum, cb_q_copyflip(p, px, wlen, flip, want));
				p += wlen;
				continue;
			}
			for (int kx = 0; kx < kw; kx++, p += c) {
				int ix = ix0 + kx * s->g.dw;
				if (ix < 0 || ix >= w) {
					memset(p, zx, (size_t)c);
					pads += c;
				} else {
					const uint8_t *px = xr + (size_t)ix * is;
					sum = cb_qsum_add(sum, cb_q_copyflip(p, px, (size_t)c, flip, want));
				}
			}
		}
		/* at most 3 bytes past K: a call to memset costs more */
		for (; p < row + kb; p++)
			*p = 0;
		if (s->rowsum) /* the bytes past K are zero */
			rs[r] = cb_qsum_get(sum) + pads * (int32_t)zx;
		if (++ox == ow) {
			ox = 0;
			if (++oy == oh)
				oy = 0, n++;
		}
	}
}

#if defined(CB_Q_VNNI512)
/* Row r's step of the AVX-512 tile: its 4 bytes of quad q broadcast,
 * times the panel's one or two vectors (b0, b1). */
#define CB_QT_ROW(r)                                                                    \
	if (mr > (r)) {                                                                 \
		int32_t w_;                                                             \
		memcpy(&w_, a + (size_t)(r) * lda, 4);                                  \
		__m512i x_ = _mm512_set1_epi32(w_);                                     \
		c##r##_0 = _mm512_dpbusd_epi32(c##r##_0, x_, b0);                       \
		if (nv > 1)                                                             \
			c##r##_1 = _mm512_dpbusd_epi32(c##r##_1, x_, b1);               \
	}
/* Row r's accumulators stored into acc[r] */
#define CB_QT_PUT(r)                                                                    \
	if (mr > (r)) {                                                                 \
		_mm512_storeu_si512((void *)acc[r], c##r##_0);                          \
		if (nv > 1)                                                             \
			_mm512_storeu_si512((void *)(acc[r] + 16), c##r##_1);           \
	}

/* The AVX-512 tile of mr rows x nv vectors of 16 channels (constants
 * where it is called, so that each form is unrolled on its own). The
 * accumulators are named variables, not an array: GCC 12 kept an array
 * of them on the stack, a load and a store around every vpdpbusd. */
static inline __attribute__((always_inline)) void cb_qtile512(const uint8_t *CB_RESTRICT a, size_t lda,
							      const int8_t *CB_RESTRICT b, int kq,
							      int32_t acc[CB_QMR][CB_QNR], int mr, int nv)
{
	const __m512i z = _mm512_setzero_si512();
	__m512i c0_0 = z, c0_1 = z, c1_0 = z, c1_1 = z, c2_0 = z, c2_1 = z, c3_0 = z, c3_1 = z;
	__m512i c4_0 = z, c4_1 = z, c5_0 = z, c5_1 = z, c6_0 = z, c6_1 = z, c7_0 = z, c7_1 = z;
	__m512i c8_0 = z, c8_1 = z, c9_0 = z, c9_1 = z, c10_0 = z, c10_1 = z, c11_0 = z, c11_1 = z;
	for (int q = 0; q < kq; q++, a += 4, b += CB_QNR * 4) {
		__m512i b0 = _mm512_loadu_si512((const void *)b);
		__m512i b1 = nv > 1 ? _mm512_loadu_si512((const void *)(b + 64)) : b0;
		CB_QT_ROW(0) CB_QT_ROW(1) CB_QT_ROW(2) CB_QT_ROW(3) CB_QT_ROW(4) CB_QT_ROW(5)
		CB_QT_ROW(6) CB_QT_ROW(7) CB_QT_ROW(8) CB_QT_ROW(9) CB_QT_ROW(10) CB_QT_ROW(11)
	}
	CB_QT_PUT(0) CB_QT_PUT(1) CB_QT_PUT(2) CB_QT_PUT(3) CB_QT_PUT(4) CB_QT_PUT(5)
	CB_QT_PUT(6) CB_QT_PUT(7) CB_QT_PUT(8) CB_QT_PUT(9) CB_QT_PUT(10) CB_QT_PUT(11)
}
#undef CB_QT_ROW
#undef CB_QT_PUT
#endif

/* acc[r][j] = the dot products of CB_QMR rows (lda bytes apart from a)
 * with panel b over kq quads: of the first nr rows and nj channels at
 * least (the AVX-512 path skips 8 rows of a tile of at most 4, and the
 * second vector of a panel of at most 16 channels; the rest compute the
 * whole tile) */
static void cb_qconv_tile(const uint8_t *CB_RESTRICT a, size_t lda, const int8_t *CB_RESTRICT b, int kq,
			  int32_t acc[CB_QMR][CB_QNR], int nr, int nj)
{
#if defined(CB_Q_VNNI512)
	if (nr > 4)
		nj > 16 ? cb_qtile512(a, lda, b, kq, acc, CB_QMR, 2) : cb_qtile512(a, lda, b, kq, acc, CB_QMR, 1);
	else
		nj > 16 ? cb_qtile512(a, lda, b, kq, acc, 4, 2) : cb_qtile512(a, lda, b, kq, acc, 4, 1);
#elif defined(CB_Q_VNNI256) || defined(CB_Q_AVX2)
	(void)nr, (void)nj;
	__m256i c[CB_QMR][4];
	for (int r = 0; r < CB_QMR; r++)
		for (int v = 0; v < 4; v++)
			c[r][v] = _mm256_setzero_si256();
#if defined(CB_Q_AVX2)
	const __m256i lo7 = _mm256_set1_epi8(0x7f), one8 = _mm256_set1_epi8(1);
	const __m256i two16 = _mm256_set1_epi16(2), one16 = _mm256_set1_epi16(1);
#endif
	for (int q = 0; q < kq; q++, a += 4, b += CB_QNR * 4) {
		__m256i bv[4];
		for (int v = 0; v < 4; v++)
			bv[v] = _mm256_loadu_si256((const void *)(b + v * 32));
		for (int r = 0; r < CB_QMR; r++) {
			int32_t w;
			memcpy(&w, a + (size_t)r * lda, 4);
			__m256i x = _mm256_set1_epi32(w);
#if defined(CB_Q_VNNI256)
			for (int v = 0; v < 4; v++)
#if defined(__AVXVNNI__)
				c[r][v] = _mm256_dpbusd_avx_epi32(c[r][v], x, bv[v]);
#else
				c[r][v] = _mm256_dpbusd_epi32(c[r][v], x, bv[v]);
#endif
#else
			/* u = 2 (u >> 1) + (u & 1): each half's pair sums fit int16 */
			__m256i xh = _mm256_and_si256(_mm256_srli_epi16(x, 1), lo7), xl = _mm256_and_si256(x, one8);
			for (int v = 0; v < 4; v++) {
				__m256i ph = _mm256_madd_epi16(_mm256_maddubs_epi16(xh, bv[v]), two16);
				__m256i pl = _mm256_madd_epi16(_mm256_maddubs_epi16(xl, bv[v]), one16);
				c[r][v] = _mm256_add_epi32(c[r][v], _mm256_add_epi32(ph, pl));
			}
#endif
		}
	}
	for (int r = 0; r < CB_QMR; r++)
		for (int v = 0; v < 4; v++)
			_mm256_storeu_si256((void *)(acc[r] + v * 8), c[r][v]);
#else
	for (int r = 0; r < CB_QMR; r++)
		for (int j = 0; j < CB_QNR; j++)
			acc[r][j] = 0;
	(void)nr, (void)nj;
	for (int q = 0; q < kq; q++, a += 4, b += CB_QNR * 4)
		for (int r = 0; r < CB_QMR; r++)
			for (int j = 0; j < CB_QNR; j++) {
				int32_t sum = 0;
				for (int t = 0; t < 4; t++)
					sum += (int32_t)a[(size_t)r * lda + (size_t)t] * (int32_t)b[j * 4 + t];
				acc[r][j] += sum;
			}
#endif
}

/* the operators of the elementwise kernels (cb_qbinary, cb_qbin8, a
 * product's post operations): add, sub, max, min in units of 2^-16 of the
 * result's scale; mul requantizes the exact product */
enum { CB_QADD, CB_QSUB, CB_QMAX, CB_QMIN, CB_QMUL };

/* What runs on a product's stored bytes before they reach the output: an
 * elementwise kind fused by the generator (op, CB_QADD ... of
 * cb_qmisc.c, or -1: none) with the other operand res (laid out as the
 * output), both operands' values in units of 2^-16 of the result's scale
 * by their stored byte (tl: the left operand's table, tr the right's;
 * prod_left: the product is the left operand), the result's zero point
 * and range; then a byte table tab (NULL: none). f32: the fine units of
 * both operands also in 32-bit lanes (the AVX-512 epilogue), fl and fr:
 * zero point o, mh, ml, half and s - CB_QFT of each (cb_q_fine16); rsgn:
 * the other operand is signed. */
struct cb_qpost {
	int op, prod_left;
	const uint8_t *res;
	const int64_t *tl, *tr;
	int64_t off, lo, hi;
	const uint8_t *tab;
	int f32, rsgn;
	int32_t fl[5], fr[5];
};

/* the bits of a fine-unit multiplier below mh (cb_q_fine16) */
#define CB_QFT 9

/* Joins two operands of add, sub, max or min in the result's fine units, then
 * the result's store (bytes). Branch-free: x / 2^16 rounded half away
 * from zero is (x + 2^15 - (x < 0)) >> 16. */
CB_INLINE uint8_t cb_q_join8(int op, int64_t x, int64_t y, int64_t off, int64_t lo, int64_t hi)
{
	int64_t v = op == 0 ? x + y : op == 1 ? x - y : op == 2 ? (x > y ? x : y) : (x < y ? x : y);
	v = ((v + 32768 - (int64_t)(v < 0)) >> 16) + off;
	v = v < lo ? lo : v;
	return (uint8_t)(int8_t)(v > hi ? hi : v);
}

/* The 8-bit add, sub, max or min (op): each operand's value in the
 * result's fine units by its stored byte (the generator's tables ta, tb),
 * joined and stored as the result's bytes */
CB_INLINE void cb_qbin8_run(int op, size_t n, const uint8_t *a, const int64_t *ta, const uint8_t *b,
			 const int64_t *tb, uint8_t *d, int64_t off, int64_t lo, int64_t hi)
{
	size_t i0 = 0;
#if defined(CB_Q_VNNI512)
	/* 8 elements a step: the tables gathered into 64-bit lanes */
	const __m512i vo = _mm512_set1_epi64(off), vlo = _mm512_set1_epi64(lo), vhi = _mm512_set1_epi64(hi);
	const __m512i half = _mm512_set1_epi64(32768), one = _mm512_set1_epi64(1);
	for (; i0 + 8 <= n; i0 += 8) {
		__m256i ia = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const void *)(a + i0)));
		__m256i ib = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const void *)(b + i0)));
		__m512i x = _mm512_i32gather_epi64(ia, (const void *)ta, 8), y = _mm512_i32gather_epi64(ib, (const void *)tb, 8);
		__m512i v = op == CB_QADD ? _mm512_add_epi64(x, y)
			    : op == CB_QSUB ? _mm512_sub_epi64(x, y)
			    : op == CB_QMAX ? _mm512_max_epi64(x, y)
					    : _mm512_min_epi64(x, y);
		v = _mm512_sub_epi64(_mm512_add_epi64(v, half), _mm512_and_si512(_mm512_srai_epi64(v, 63), one));
		v = _mm512_add_epi64(_mm512_srai_epi64(v, 16), vo);
		v = _mm512_min_epi64(_mm512_max_epi64(v, vlo), vhi);
		_mm512_mask_cvtepi64_storeu_epi8((void *)(d + i0), 0xff, v);
	}
#endif
	a += i0, b += i0, d += i0, n -= i0;
	/* one loop per operator: the operator is not tested per element */
	switch (op) {
	case CB_QADD: for (size_t i = 0; i < n; i++) d[i] = cb_q_join8(CB_QADD, ta[a[i]], tb[b[i]], off, lo, hi); break;
	case CB_QSUB: for (size_t i = 0; i < n; i++) d[i] = cb_q_join8(CB_QSUB, ta[a[i]], tb[b[i]], off, lo, hi); break;
	case CB_QMAX: for (size_t i = 0; i < n; i++) d[i] = cb_q_join8(CB_QMAX, ta[a[i]], tb[b[i]], off, lo, hi); break;
	default: for (size_t i = 0; i < n; i++) d[i] = cb_q_join8(CB_QMIN, ta[a[i]], tb[b[i]], off, lo, hi); break;
	}
}

/* d[i] = tab[a[i]]: a unary kind of 8-bit operands as a table of the 256
 * stored bytes (the generator's) */
CB_KERNEL void cb_qlut_b(size_t n, const uint8_t *a, const uint8_t *CB_RESTRICT tab, uint8_t *d)
{
	size_t i = 0;
#if defined(CB_Q_VNNI512) && defined(__AVX512VBMI__)
	/* 64 bytes a step: two 128-entry permutes (vpermi2b), chosen by bit 7 */
	const __m512i t0 = _mm512_loadu_si512((const void *)tab), t1 = _mm512_loadu_si512((const void *)(tab + 64));
	const __m512i t2 = _mm512_loadu_si512((const void *)(tab + 128)), t3 = _mm512_loadu_si512((const void *)(tab + 192));
	for (; i + 64 <= n; i += 64) {
		__m512i x = _mm512_loadu_si512((const void *)(a + i));
		__m512i lo = _mm512_permutex2var_epi8(t0, x, t1), hi = _mm512_permutex2var_epi8(t2, x, t3);
		_mm512_storeu_si512((void *)(d + i), _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), lo, hi));
	}
#endif
	for (; i < n; i++)
		d[i] = tab[a[i]];
}

/* Stores nr rows x nj channels of acc (rows ostride bytes apart at out)
 * after the corrections and the requantization (portable and AVX2 paths,
 * the AVX-512 path's slow form and its fallback for post operations it
 * does not take in registers). The fast form (the generator's bound:
 * every accumulator fits int32, every shift >= 1) rounds half away from
 * zero as (p + half - (p < 0)) >> shift, p = x * mult in 64 bits: the
 * same integer as cb_q_requant, branch-free. */
static void cb_qconv_epilogue(const struct cb_qconv_args *s, int32_t acc[CB_QMR][CB_QNR], const int64_t *ch,
			      const int32_t *rs, int nr, int nj, uint8_t *out, size_t ostride)
{
	const int ooff = s->ooff, lo = s->lo, hi = s->hi;
	const int32_t *zw = (const int32_t *)(const void *)(ch + CB_QZW32);
	for (int r = 0; r < nr; r++) {
		uint8_t *o = out + (size_t)r * ostride;
		int64_t sum = s->rowsum ? rs[r] : 0;
		if (!s->fast) {
			for (int j = 0; j < nj; j++) {
				int64_t x = (int64_t)acc[r][j] + ch[CB_QCORR + j] - zw[j] * sum;
				int q = cb_qperm(j);
				o[j] = cb_q_store(cb_q_requant(x, ch[CB_QMULT + q], (int)ch[CB_QSHIFT + q]), ooff, lo, hi);
			}
			continue;
		}
		int64_t v[CB_QNR];
		for (int j = 0; j < CB_QNR; j++) {
			int q = cb_qperm(j);
			int64_t x = (int64_t)acc[r][j] + ch[CB_QCORR + j] - zw[j] * sum;
			int64_t p = x * ch[CB_QMULT + q];
			p = (p + ch[CB_QHALF + q] - (int64_t)(p < 0)) >> ch[CB_QSHIFT + q];
			p += ooff;
			v[j] = p < lo ? lo : p > hi ? hi : p;
		}
		for (int j = 0; j < nj; j++)
			o[j] = (uint8_t)(int8_t)v[j];
	}
}

#if defined(CB_Q_VNNI512)
/* The AVX-512 fast epilogue: 16 channels in 32-bit lanes. */

/* The requantization constants of 16 channels of a panel, loaded once
 * per tile: the even channels' mult, half and shift in 64-bit lanes (e),
 * the odd ones' (o); the odd shifts less 32 in the blend form. */
struct cb_q16 {
	__m512i me, mo, he, ho, se, so;
};

/* Loads the constants of channels 16 h ... 16 h + 15 of panel ch;
 * blend: cb_qconv_args.fast == 2. */
CB_INLINE void cb_q16_load(struct cb_q16 *k, const int64_t *ch, int h, bool blend)
{
	const int64_t *m = ch + CB_QMULT + 16 * h, *sh = ch + CB_QSHIFT + 16 * h, *hf = ch + CB_QHALF + 16 * h;
	k->me = _mm512_loadu_si512((const void *)m), k->mo = _mm512_loadu_si512((const void *)(m + 8));
	k->he = _mm512_loadu_si512((const void *)hf), k->ho = _mm512_loadu_si512((const void *)(hf + 8));
	k->se = _mm512_loadu_si512((const void *)sh), k->so = _mm512_loadu_si512((const void *)(sh + 8));
	if (blend)
		k->so = _mm512_sub_epi64(k->so, _mm512_set1_epi64(32));
}

/* The requantized stored values of 16 channels (constants k) of
 * accumulators x (int32, corrections added): the even channels' products
 * x * mult in the 64-bit lanes of one vpmuldq, the odd ones' in another,
 * rounded and shifted there; then clamped to [lo', hi'] (the range less
 * the zero point) and the zero point added, as cb_q_store does. The
 * blend form (every shift >= 32: each result fits int32 unsaturated)
 * shifts the odd products 32 bits less, so that their results lie in the
 * high halves of the lanes, the even ones' in the low halves: one blend
 * joins them. The other form saturates both to int32 and interleaves. */
CB_INLINE __m512i cb_q_requant16(__m512i x, const struct cb_q16 *k, bool blend, __m512i lo, __m512i hi, __m512i off)
{
	__m512i pe = _mm512_mul_epi32(x, k->me), po = _mm512_mul_epi32(_mm512_srli_epi64(x, 32), k->mo);
	pe = _mm512_add_epi64(_mm512_add_epi64(pe, k->he), _mm512_srai_epi64(pe, 63));
	po = _mm512_add_epi64(_mm512_add_epi64(po, k->ho), _mm512_srai_epi64(po, 63));
	pe = _mm512_srav_epi64(pe, k->se);
	po = _mm512_srav_epi64(po, k->so);
	__m512i v;
	if (blend)
		v = _mm512_mask_blend_epi32((__mmask16)0xaaaa, pe, po);
	else {
		const __m512i idx = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
		v = _mm512_permutex2var_epi32(_mm512_castsi256_si512(_mm512_cvtsepi64_epi32(pe)), idx,
					      _mm512_castsi256_si512(_mm512_cvtsepi64_epi32(po)));
	}
	return _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(v, lo), hi), off);
}

/* The fine units of 16 stored values q of an operand of a fused binary
 * kind (struct cb_qpost's fl, fr): quant_requant(q - o, mult, shift)
 * with mult = mh 2^CB_QFT + ml, in 32-bit lanes: p + half - (p < 0) =
 * X 2^CB_QFT + Y for X = d mh, Y = d ml + half - (d < 0), and
 * floor((X 2^t + Y) / 2^s) = floor((X + floor(Y / 2^t)) / 2^(s - t)).
 * The generator checked every stored byte against its own table. */
CB_INLINE __m512i cb_q_fine16(__m512i q, const int32_t *f)
{
	__m512i d = _mm512_sub_epi32(q, _mm512_set1_epi32(f[0]));
	__m512i x = _mm512_mullo_epi32(d, _mm512_set1_epi32(f[1]));
	__m512i y = _mm512_add_epi32(_mm512_mullo_epi32(d, _mm512_set1_epi32(f[2])),
				     _mm512_add_epi32(_mm512_set1_epi32(f[3]), _mm512_srai_epi32(d, 31)));
	return _mm512_srav_epi32(_mm512_add_epi32(x, _mm512_srai_epi32(y, CB_QFT)), _mm512_set1_epi32(f[4]));
}

/* 16 stored values of the fused binary kind of p: the product's values v
 * and the other operand's bytes at rb (n of them), joined in fine units
 * and stored as cb_q_join8 does. */
CB_INLINE __m512i cb_q_post16(const struct cb_qpost *p, __m512i v, const uint8_t *rb, int n)
{
	__m128i raw = _mm_maskz_loadu_epi8((__mmask16)(n >= 16 ? 0xffff : (1u << n) - 1), (const void *)rb);
	__m512i q = p->rsgn ? _mm512_cvtepi8_epi32(raw) : _mm512_cvtepu8_epi32(raw);
	__m512i x = cb_q_fine16(p->prod_left ? v : q, p->fl), y = cb_q_fine16(p->prod_left ? q : v, p->fr);
	__m512i w = p->op == CB_QADD	 ? _mm512_add_epi32(x, y)
		    : p->op == CB_QSUB ? _mm512_sub_epi32(x, y)
		    : p->op == CB_QMAX ? _mm512_max_epi32(x, y)
				       : _mm512_min_epi32(x, y);
	w = _mm512_add_epi32(_mm512_add_epi32(w, _mm512_set1_epi32(32768)), _mm512_srai_epi32(w, 31));
	w = _mm512_add_epi32(_mm512_srai_epi32(w, 16), _mm512_set1_epi32((int)p->off));
	return _mm512_min_epi32(_mm512_max_epi32(w, _mm512_set1_epi32((int)p->lo)), _mm512_set1_epi32((int)p->hi));
}

/* Whether the AVX-512 epilogue takes post operations p in registers: a
 * binary kind only with the generator's 32-bit fine units, a byte table
 * only with vpermb (AVX-512 VBMI). */
CB_INLINE bool cb_qpost_inreg(const struct cb_qpost *p)
{
#if defined(__AVX512VBMI__)
	bool tab = true;
#else
	bool tab = !p || !p->tab;
#endif
	return !p || ((p->op < 0 || p->f32) && tab);
}

/* The fast epilogue of nr rows x nj channels (the generator's bound, as
 * cb_qconv_epilogue's fast form) with the post operations p (NULL: none;
 * cb_qpost_inreg) in registers: rows ostride bytes apart at out, the
 * fused operand's at res (laid out as the output). */
static void cb_qconv_epi512(const struct cb_qconv_args *s, int32_t acc[CB_QMR][CB_QNR], const int64_t *ch,
			    const int32_t *rs, int nr, int nj, uint8_t *out, const uint8_t *res, size_t ostride,
			    const struct cb_qpost *p)
{
	const __m512i lo = _mm512_set1_epi32(s->lo - s->ooff), hi = _mm512_set1_epi32(s->hi - s->ooff);
	const __m512i off = _mm512_set1_epi32(s->ooff);
	const int32_t *corr = (const int32_t *)(const void *)(ch + CB_QCORR32);
	const int32_t *zw = (const int32_t *)(const void *)(ch + CB_QZW32);
	const __mmask32 keep = (__mmask32)(nj >= 32 ? 0xffffffffu : (1u << nj) - 1);
	const bool two = nj > 16, bin = p && p->op >= 0, blend = s->fast == 2;
	struct cb_q16 k[2];
	cb_q16_load(&k[0], ch, 0, blend);
	if (two)
		cb_q16_load(&k[1], ch, 1, blend);
	/* zw * rowsum by one vpmaddwd instead of vpmulld (two uops): the
	 * int16 pairs (zw, 256 zw) of each channel times the row's (rs & 255,
	 * rs >> 8); exact, as rs < 255 * 32768 < 2^23 and |zw| <= 128 */
	__m512i zwp[2];
	for (int h = 0; h < 2; h++) {
		__m512i z = _mm512_loadu_si512((const void *)(zw + 16 * h));
		zwp[h] = _mm512_or_si512(_mm512_and_si512(z, _mm512_set1_epi32(0xffff)), _mm512_slli_epi32(z, 24));
	}
#if defined(__AVX512VBMI__)
	/* the low bytes of two vectors of 16 int32 (values already in a
	 * byte's range): one vpermt2b instead of two vpmovdb and an insert */
	const __m512i pick = _mm512_set_epi64(0, 0, 0, 0, 0x7c7874706c686460ll, 0x5c5854504c484440ll,
					      0x3c3834302c282420ll, 0x1c1814100c080400ll);
	const uint8_t *tab = p ? p->tab : NULL;
	__m512i t0 = _mm512_setzero_si512(), t1 = t0, t2 = t0, t3 = t0;
	if (tab) {
		t0 = _mm512_loadu_si512((const void *)tab), t1 = _mm512_loadu_si512((const void *)(tab + 64));
		t2 = _mm512_loadu_si512((const void *)(tab + 128)), t3 = _mm512_loadu_si512((const void *)(tab + 192));
	}
#endif
	for (int r = 0; r < nr; r++) {
		const __m512i rsp = _mm512_set1_epi32(s->rowsum ? (rs[r] & 255) | (rs[r] >> 8) << 16 : 0);
		__m512i v[2];
		for (int h = 0; h < 2; h++) {
			if (h == 1 && !two) {
				v[1] = v[0];
				break;
			}
			__m512i x = _mm512_add_epi32(_mm512_loadu_si512((const void *)(acc[r] + 16 * h)),
						     _mm512_loadu_si512((const void *)(corr + 16 * h)));
			if (s->rowsum)
				x = _mm512_sub_epi32(x, _mm512_madd_epi16(rsp, zwp[h]));
			v[h] = cb_q_requant16(x, &k[h], blend, lo, hi, off);
			if (bin)
				v[h] = cb_q_post16(p, v[h], res + (size_t)r * ostride + 16 * h, nj - 16 * h);
		}
#if defined(__AVX512VBMI__)
		__m512i z = _mm512_permutex2var_epi8(v[0], pick, v[1]);
		if (tab) {
			/* the byte table: two 128-entry permutes, chosen by bit 7 */
			__m512i l = _mm512_permutex2var_epi8(t0, z, t1), u = _mm512_permutex2var_epi8(t2, z, t3);
			z = _mm512_mask_blend_epi8(_mm512_movepi8_mask(z), l, u);
		}
		__m256i y = _mm512_castsi512_si256(z);
#else
		__m256i y = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm512_cvtepi32_epi8(v[0])),
						    _mm512_cvtepi32_epi8(v[1]), 1);
#endif
		_mm256_mask_storeu_epi8((void *)(out + (size_t)r * ostride), keep, y);
	}
}
#endif

/* n bytes of a product's result (t) through the post operations into o;
 * res: the fused operand's bytes at the same positions (o may be res) */
static void cb_qconv_post(const struct cb_qpost *p, const uint8_t *t, const uint8_t *res, uint8_t *o, int n)
{
	const uint8_t *tab = p->tab;
	if (p->op >= 0) {
		cb_qbin8_run(p->op, (size_t)n, p->prod_left ? t : res, p->tl, p->prod_left ? res : t, p->tr, o, p->off,
			     p->lo, p->hi);
		t = o;
	}
	if (tab)
		cb_qlut_b((size_t)n, t, tab, o);
	else if (t != o)
		memcpy(o, t, (size_t)n);
}

/* The job of cb_qconv_s8: tiles of rows split among parts. */
struct cb_qconv_job {
	const struct cb_qconv_args *s;
	const uint8_t *in;
	const int8_t *wp;
	const int64_t *ch;
	const struct cb_qpost *post;
	uint8_t *out;
	size_t tiles;
	int nparts;
};

/* Output rows [mb, me) of every group: blocks of mc rows packed into
 * scratch, then every panel over every tile of the block. */
static void cb_qconv_rows(const struct cb_qconv_args *s, const uint8_t *in, const int8_t *wp, const int64_t *ch,
			  const struct cb_qpost *post, uint8_t *out, uint8_t *scratch, size_t mb, size_t me)
{
	size_t kb = (size_t)s->kq * 4, tile = kb * CB_QMR, os = (size_t)s->g.ostride;
	int32_t(*acc)[CB_QNR] = (int32_t(*)[CB_QNR])scratch;
	uint8_t *tmp = (uint8_t *)acc; /* the post operations' input: over acc, once it is read */
	int32_t *rs = (int32_t *)(scratch + sizeof(int32_t) * CB_QMR * CB_QNR);
	uint8_t *blk = (uint8_t *)(rs + s->g.mc);
	for (int g = 0; g < s->g.groups; g++)
		for (size_t m0 = mb; m0 < me; m0 += (size_t)s->g.mc) {
			int nr = (int)cb_min_sz((size_t)s->g.mc, me - m0);
			cb_qconv_pack(s, in, g, m0, nr, blk, rs);
			for (int p = 0; p < s->np; p++) {
				int oc0 = p * CB_QNR, nj = s->g.oc - oc0 < CB_QNR ? s->g.oc - oc0 : CB_QNR;
				const int8_t *b = wp + ((size_t)g * (size_t)s->np + (size_t)p) * kb * CB_QNR;
				const int64_t *c = ch + ((size_t)g * (size_t)s->np + (size_t)p) * CB_QCH;
				uint8_t *o = out + (size_t)g * (size_t)s->g.oc + (size_t)oc0;
				for (int t = 0; t * CB_QMR < nr; t++) {
					int tr = nr - t * CB_QMR < CB_QMR ? nr - t * CB_QMR : CB_QMR;
					cb_qconv_tile(blk + (size_t)t * tile, kb, b, s->kq, acc, tr, nj);
					size_t mt = m0 + (size_t)t * CB_QMR;
#if defined(CB_Q_VNNI512)
					if (s->fast && cb_qpost_inreg(post)) {
						size_t at = (size_t)(o - out) + mt * os;
						cb_qconv_epi512(s, acc, c, rs + t * CB_QMR, tr, nj, out + at,
								post && post->res ? post->res + at : NULL, os, post);
						continue;
					}
#endif
					if (!post) {
						cb_qconv_epilogue(s, acc, c, rs + t * CB_QMR, tr, nj, o + mt * os, os);
						continue;
					}
					/* acc is read row by row before its bytes are written:
					 * row r's bytes (32 at r * 32) never reach a later row's
					 * int32 values (at r * 128 and beyond) */
					cb_qconv_epilogue(s, acc, c, rs + t * CB_QMR, tr, nj, tmp, CB_QNR);
					for (int r = 0; r < tr; r++) {
						size_t at = (mt + (size_t)r) * os + (size_t)g * (size_t)s->g.oc + (size_t)oc0;
						cb_qconv_post(post, tmp + r * CB_QNR, post->res ? post->res + at : NULL, out + at,
							      nj);
					}
				}
			}
		}
}

static void cb_qconv_part(const void *ctx, int i, float *scratch)
{
	const struct cb_qconv_job *j = (const struct cb_qconv_job *)ctx;
	const struct cb_qconv_args *s = j->s;
	size_t mtot = (size_t)s->g.n * (size_t)s->g.oh * (size_t)s->g.ow;
	/* parts take whole blocks of 12 rows (a multiple of every CB_QMR) */
	size_t mb = cb_par_first(i, j->nparts, j->tiles) * 12, me = cb_par_first(i + 1, j->nparts, j->tiles) * 12;
	cb_qconv_rows(s, j->in, j->wp, j->ch, j->post, j->out, (uint8_t *)scratch, mb, cb_min_sz(me, mtot));
}

/* An 8-bit convolution, fully-connected layer or matmul: input in (bytes,
 * n x h x w pixels istride apart), packed weights wp, channel constants ch,
 * output out (n x oh x ow pixels ostride apart), through the fused post
 * operations when post is not NULL. scratch: 12 * 32 * 4 + mc * 4 +
 * mc * kq * 4 bytes at least (cgen_quant.c reserves it). */
CB_KERNEL void cb_qconv_s8(const struct cb_qconv_args *s, const uint8_t *in, const int8_t *wp, const int64_t *ch,
			   const struct cb_qpost *post, uint8_t *out, uint8_t *scratch)
{
	size_t mtot = (size_t)s->g.n * (size_t)s->g.oh * (size_t)s->g.ow;
	struct cb_qconv_job j = {s, in, wp, ch, post, out, (mtot + 11) / 12, 1};
	double work = (double)mtot * s->kq * 4.0 * s->g.oc * s->g.groups / 4.0; /* ~4 MACs per float FMA */
	j.nparts = cb_par_parts(work, j.tiles);
	cb_par(cb_qconv_part, &j, j.nparts, (float *)(void *)scratch);
}
