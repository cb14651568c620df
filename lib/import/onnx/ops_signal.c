/* ops_signal.c - translators of the signal-processing operators of opset
 * 17: DFT and STFT as a MatMul with a constant matrix of cosines and sines,
 * the window generators HannWindow, HammingWindow and BlackmanWindow, and
 * MelWeightMatrix.
 *
 * The graph IR has no complex element type; as in ONNX, a complex tensor is
 * a real one whose last dimension is 2 (real, imaginary), and a real signal
 * may come with a last dimension of 1. A DFT of length N along one axis is
 * linear in the (real, imaginary) pairs along that axis, so the axis is
 * moved next to the last dimension, every other dimension is flattened into
 * the rows, and one MatMul with a (L * C) x (K * 2) matrix computes every
 * output pair: out[k] = sum_n x[n] * exp(-+2 pi i k n / N) (/ N when
 * inverse). Zero padding to N > L and truncation to N < L are rows of the
 * matrix (absent or zero), onesided keeps the first N / 2 + 1 columns.
 *
 * Window sizes, DFT lengths, STFT frame steps and lengths and every input
 * of MelWeightMatrix must be known at import (an initializer, a folded
 * value, or a graph input bound with glow-import -freeze-input): they
 * determine output shapes. Windows and mel matrices are then constants.
 */
#include "import/onnx/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SIG_PI 3.14159265358979323846

/* Elements of the largest DFT matrix built (64 MiB of floats). */
#define SIG_MATRIX_MAX (1u << 24)

/* a float constant of the given shape from v */
static struct value const_val(struct importer *im, const char *name, unsigned rank, const uint64_t *dims,
			      const double *v)
{
	struct tensor *t = imp_t_from_floats(im, name, DT_FLOAT, rank, dims, v);
	return t ? imp_tval(im, t) : no_value;
}

/* The DFT matrix: rows n * C + c (input sample n < L, component c < C),
 * columns k * 2 + j (output bin k < K, j = 0 real, 1 imaginary), for a
 * transform of length N. NULL node after reporting when too large. */
static struct value dft_matrix(struct importer *im, const char *name, uint64_t L, uint64_t C, uint64_t N,
			       uint64_t K, bool inverse)
{
	uint64_t rows = L * C, cols = K * 2;
	if (rows == 0 || cols == 0 || rows > SIG_MATRIX_MAX / cols) {
		imp_op_err(im, "a DFT matrix of %llu x %llu elements is not built (more than %u)",
		       (unsigned long long)rows, (unsigned long long)cols, SIG_MATRIX_MAX);
		return no_value;
	}
	double *m = arena_alloc(&im->scratch, rows * cols * sizeof *m);
	double sign = inverse ? 1.0 : -1.0, scale = inverse ? 1.0 / (double)N : 1.0;
	for (uint64_t n = 0; n < L; n++)
		for (uint64_t k = 0; k < K; k++) {
			/* exp(sign * 2 pi i k n / N); k * n reduced mod N keeps the angle exact */
			double a = sign * 2.0 * SIG_PI * (double)((k * n) % N) / (double)N;
			double c = n < N ? cos(a) * scale : 0, s = n < N ? sin(a) * scale : 0;
			/* (xr + i xi) (c + i s) = (xr c - xi s) + i (xr s + xi c) */
			double *re = m + (n * C) * cols + k * 2;
			re[0] = c;
			re[1] = s;
			if (C == 2) {
				re[cols] = -s;
				re[cols + 1] = c;
			}
		}
	uint64_t dims[2] = {rows, cols};
	return const_val(im, name, 2, dims, m);
}

/* The DFT of x along axis (< rank - 1; the last dimension is 1 or 2) with
 * length N and K output bins: x's shape with axis K and the last 2. */
static struct value dft_along(struct importer *im, struct value x, unsigned axis, uint64_t N, uint64_t K,
			      bool inverse, const char *name)
{
	if (!x.node)
		return x;
	const struct type *t = val_type(x);
	unsigned r = t->rank;
	uint64_t L = t->dims[axis], C = t->dims[r - 1];
	/* move axis to r - 2 */
	unsigned perm[GLOW_MAX_RANK], inv[GLOW_MAX_RANK], j = 0;
	for (unsigned i = 0; i < r - 1; i++)
		if (i != axis)
			perm[j++] = i;
	perm[j++] = axis;
	perm[j] = r - 1;
	for (unsigned i = 0; i < r; i++)
		inv[perm[i]] = i;
	struct value xt = imp_b_transpose(im, x, perm, imp_dname(im, name, "axis"));
	uint64_t rows = 1;
	for (unsigned i = 0; i < r - 2; i++)
		rows *= t->dims[perm[i]];
	uint64_t flat[2] = {rows, L * C};
	struct value x2 = imp_b_reshape(im, xt, flat, 2, imp_dname(im, name, "rows"));
	struct value m = dft_matrix(im, imp_dname(im, name, "dft"), L, C, N, K, inverse);
	uint64_t od[2] = {rows, K * 2};
	struct value ops[2] = {x2, m};
	struct value y = imp_b_node(im, NK_MatMul, imp_dname(im, name, "matmul"), ops, 2,
				x2.node ? imp_ty(im, t->elem, od, 2) : NULL);
	uint64_t yd[GLOW_MAX_RANK];
	for (unsigned i = 0; i < r - 2; i++)
		yd[i] = t->dims[perm[i]];
	yd[r - 2] = K;
	yd[r - 1] = 2;
	struct value y3 = imp_b_reshape(im, y, yd, r, imp_dname(im, name, "bins"));
	return imp_b_transpose(im, y3, inv, name);
}

/* a float input whose last dimension is 1 (real) or 2 (complex), rank >= 2 */
static struct value signal_input(struct importer *im, unsigned i)
{
	struct value x = imp_in_val(im, i);
	if (!x.node)
		return x;
	const struct type *t = val_type(x);
	if (!elem_is_float((enum elem_kind)t->elem)) {
		imp_op_err(im, "input %u must be floating point", i);
		return no_value;
	}
	if (t->rank < 2 || (t->dims[t->rank - 1] != 1 && t->dims[t->rank - 1] != 2)) {
		imp_op_err(im, "input %u must have rank 2 or more and a last dimension of 1 (real) or 2 (complex)", i);
		return no_value;
	}
	return x;
}

/* a scalar (or one-element) integer input known at import */
static int known_scalar(struct importer *im, unsigned i, int64_t *out)
{
	uint64_t cnt = 0;
	const int64_t *v = imp_in_ints(im, i, &cnt);
	if (!v)
		return -1;
	if (cnt != 1)
		return imp_op_err(im, "input %u must hold one value, got %llu", i, (unsigned long long)cnt);
	*out = v[0];
	return 0;
}

/* DFT-17: input [batch, ..., n, ..., 1|2], optional dft_length, attributes
 * axis (default 1), inverse, onesided. */
int imp_op_dft(struct importer *im, const onnx_node *n)
{
	struct value x = signal_input(im, 0);
	if (!x.node)
		return -1;
	const struct type *t = val_type(x);
	unsigned axis;
	if (imp_norm_axis(im, imp_attr_i(n, "axis", 1), t->rank, &axis))
		return -1;
	if (axis + 1 == t->rank)
		return imp_op_err(im, "axis %u is the (real, imaginary) dimension", axis);
	bool inverse = imp_attr_i(n, "inverse", 0) != 0, onesided = imp_attr_i(n, "onesided", 0) != 0;
	if (inverse && onesided)
		return imp_op_err(im, "an inverse onesided DFT is not supported");
	int64_t len = (int64_t)t->dims[axis];
	if (imp_in_opt(im, 1) && known_scalar(im, 1, &len))
		return -1;
	if (len < 1)
		return imp_op_err(im, "dft_length must be positive, got %lld", (long long)len);
	uint64_t N = (uint64_t)len, K = onesided ? N / 2 + 1 : N;
	return imp_set_out(im, 0, dft_along(im, x, axis, N, K, inverse, imp_out_name(im, 0)));
}

/* STFT-17: signal [batch, length, 1|2], frame_step, optional window
 * [frame_length], optional frame_length; attribute onesided (default 1).
 * Output [batch, frames, bins, 2]. Frames are one Gather of the signal
 * with a [frames, frame_length] index constant. */
int imp_op_stft(struct importer *im, const onnx_node *n)
{
	struct value x = signal_input(im, 0);
	if (!x.node)
		return -1;
	const struct type *t = val_type(x);
	const char *name = imp_out_name(im, 0);
	if (t->rank != 3)
		return imp_op_err(im, "signal must be [batch, length, 1 or 2], got rank %u", t->rank);
	int64_t step = 0, flen = -1;
	if (known_scalar(im, 1, &step))
		return -1;
	struct tensor *wt = imp_in_opt(im, 2);
	if (wt) {
		if (wt->rank != 1)
			return imp_op_err(im, "window must have rank 1, got %u", wt->rank);
		flen = (int64_t)wt->dims[0];
	}
	if (imp_in_opt(im, 3)) {
		int64_t fl = 0;
		if (known_scalar(im, 3, &fl))
			return -1;
		if (wt && fl != flen)
			return imp_op_err(im, "frame_length %lld differs from the window length %lld", (long long)fl,
				      (long long)flen);
		flen = fl;
	}
	if (flen < 0)
		return imp_op_err(im, "a window or a frame_length is required");
	uint64_t L = t->dims[1], C = t->dims[2];
	if (step < 1 || flen < 1 || (uint64_t)flen > L)
		return imp_op_err(im, "frame_step (%lld) and frame_length (%lld) must be positive, the frame no longer "
				  "than the signal (%llu)",
			      (long long)step, (long long)flen, (unsigned long long)L);
	uint64_t F = (L - (uint64_t)flen) / (uint64_t)step + 1, FL = (uint64_t)flen;
	bool onesided = imp_attr_i(n, "onesided", 1) != 0;
	uint64_t K = onesided ? FL / 2 + 1 : FL;
	if (F > SIG_MATRIX_MAX / FL)
		return imp_op_err(im, "too many frames (%llu of %llu)", (unsigned long long)F, (unsigned long long)FL);
	int64_t *idx = arena_alloc(&im->scratch, F * FL * sizeof *idx);
	for (uint64_t f = 0; f < F; f++)
		for (uint64_t j = 0; j < FL; j++)
			idx[f * FL + j] = (int64_t)(f * (uint64_t)step + j);
	uint64_t idims[2] = {F, FL};
	struct tensor *it = imp_t_from_ints(im, imp_dname(im, name, "frames.idx"), DT_INT64, 2, idims, idx);
	if (!it)
		return -1;
	struct value ops[2] = {x, imp_tval(im, it)};
	uint64_t fd[4] = {t->dims[0], F, FL, C};
	struct value frames = imp_b_node(im, NK_Gather, imp_dname(im, name, "frames"), ops, 2, imp_ty(im, t->elem, fd, 4));
	if (frames.node)
		node_set_int(im->m, frames.node, AN_axis, 1);
	if (wt) {
		struct value w = imp_tval(im, wt);
		if (w.node && val_type(w)->elem != t->elem)
			return imp_op_err(im, "window must have the element type of the signal");
		uint64_t wd[4] = {1, 1, FL, 1};
		w = imp_b_reshape(im, w, wd, 4, imp_dname(im, name, "window"));
		w = imp_b_broadcast(im, w, fd, 4, imp_dname(im, name, "windowb"));
		struct value mops[2] = {frames, w};
		frames = imp_b_node(im, NK_Mul, imp_dname(im, name, "windowed"), mops, 2, frames.node ? val_type(frames) : NULL);
	}
	return imp_set_out(im, 0, dft_along(im, frames, 2, FL, K, false, name));
}

/* ---- windows ---- */

/* HannWindow, HammingWindow, BlackmanWindow: size known at import,
 * attributes periodic (default 1) and output_datatype (default float):
 *   w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N),
 * N = size when periodic, size - 1 otherwise. */
int imp_op_window(struct importer *im, const onnx_node *n)
{
	double a0, a1, a2 = 0;
	if (strcmp(n->op_type, "HannWindow") == 0)
		a0 = 0.5, a1 = 0.5;
	else if (strcmp(n->op_type, "HammingWindow") == 0)
		a0 = 25.0 / 46.0, a1 = 21.0 / 46.0;
	else
		a0 = 0.42, a1 = 0.5, a2 = 0.08;
	int64_t size = 0;
	if (known_scalar(im, 0, &size))
		return -1;
	if (size < 0 || size > (int64_t)SIG_MATRIX_MAX)
		return imp_op_err(im, "window size %lld is out of range", (long long)size);
	int64_t dt = imp_attr_i(n, "output_datatype", DT_FLOAT);
	if (dt < 0 || dt > 0xffff || imp_dt_size((int)dt) == 0 || dt == DT_BOOL || dt == DT_STRING)
		return imp_op_err(im, "output_datatype %lld is not supported", (long long)dt);
	double N = imp_attr_i(n, "periodic", 1) ? (double)size : (double)(size - 1);
	double *w = arena_alloc(&im->scratch, ((size_t)size + 1) * sizeof *w);
	for (int64_t k = 0; k < size; k++) {
		double x = N > 0 ? 2.0 * SIG_PI * (double)k / N : 0;
		w[k] = a0 - a1 * cos(x) + a2 * cos(2 * x);
	}
	uint64_t dims[1] = {(uint64_t)size};
	return imp_set_out_t(im, 0, imp_t_from_floats(im, imp_out_name(im, 0), (int)dt, 1, dims, w));
}

/* MelWeightMatrix: every input known at import; output
 * [dft_length / 2 + 1, num_mel_bins] of output_datatype. The num_mel_bins
 * + 2 band edges are spaced evenly on the mel scale
 * mel(f) = 2595 log10(1 + f / 700) from lower_edge_hertz to
 * upper_edge_hertz and mapped to spectrogram bins
 * floor((dft_length + 1) * f / sample_rate); band i is a triangle rising
 * from edge i to 1 at edge i + 1 and falling to 0 at edge i + 2. */
int imp_op_mel_weight_matrix(struct importer *im, const onnx_node *n)
{
	int64_t mels = 0, dftlen = 0, rate = 0;
	if (known_scalar(im, 0, &mels) || known_scalar(im, 1, &dftlen) || known_scalar(im, 2, &rate))
		return -1;
	double edge[2];
	for (unsigned i = 0; i < 2; i++) {
		struct tensor *t = imp_in_req(im, 3 + i);
		const double *v = t ? imp_t_floats(im, t) : NULL;
		if (!v || imp_t_numel(t) != 1)
			return imp_op_err(im, "input %u must be one value known at import time", 3 + i);
		edge[i] = v[0];
	}
	if (mels < 1 || dftlen < 1 || rate < 1 || mels > 65536 || dftlen > 1 << 24)
		return imp_op_err(im, "num_mel_bins, dft_length and sample_rate must be positive and not too large");
	int64_t dt = imp_attr_i(n, "output_datatype", DT_FLOAT);
	if (dt < 0 || dt > 0xffff || imp_dt_size((int)dt) == 0 || dt == DT_BOOL || dt == DT_STRING)
		return imp_op_err(im, "output_datatype %lld is not supported", (long long)dt);
	uint64_t bins = (uint64_t)dftlen / 2 + 1, M = (uint64_t)mels;
	if (bins > SIG_MATRIX_MAX / M)
		return imp_op_err(im, "the mel weight matrix would be too large");
	double lo = 2595.0 * log10(1.0 + edge[0] / 700.0), hi = 2595.0 * log10(1.0 + edge[1] / 700.0);
	double stepm = (hi - lo) / (double)(M + 2);
	int64_t *fb = arena_alloc(&im->scratch, (M + 2) * sizeof *fb);
	for (uint64_t i = 0; i < M + 2; i++) {
		double hz = 700.0 * (pow(10.0, ((double)i * stepm + lo) / 2595.0) - 1.0);
		fb[i] = (int64_t)floor((double)(dftlen + 1) * hz / (double)rate);
	}
	double *w = arena_alloc(&im->scratch, bins * M * sizeof *w);
	memset(w, 0, bins * M * sizeof *w);
	for (uint64_t i = 0; i < M; i++) {
		int64_t l = fb[i], c = fb[i + 1], h = fb[i + 2];
		if (l < 0 || c < l || h < c || (uint64_t)c >= bins || (uint64_t)h > bins)
			return imp_op_err(im, "the mel band %llu [%lld, %lld, %lld] lies outside the %llu spectrogram bins",
				      (unsigned long long)i, (long long)l, (long long)c, (long long)h,
				      (unsigned long long)bins);
		if (c == l)
			w[(uint64_t)c * M + i] = 1;
		else
			for (int64_t j = l; j <= c; j++)
				w[(uint64_t)j * M + i] = (double)(j - l) / (double)(c - l);
		for (int64_t j = c; j < h; j++)
			w[(uint64_t)j * M + i] = (double)(h - j) / (double)(h - c);
	}
	uint64_t dims[2] = {bins, M};
	return imp_set_out_t(im, 0, imp_t_from_floats(im, imp_out_name(im, 0), (int)dt, 2, dims, w));
}
