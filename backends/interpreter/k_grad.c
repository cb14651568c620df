/* k_grad.c - the kernels of the gradient and training kinds that are not
 * elementwise (the elementwise ones, relugrad, sigmoidgrad, tanhgrad and
 * regressiongrad, are rows of lib/ir/EW.def), so a gradient node the
 * backend keeps whole runs as one instruction. Each computes what the
 * kind's lowering rule computes (lib/passes/lower-grad.c and
 * lower-train.c document the formulas), in double: sums are accumulated in
 * double buffers and stored once.
 *
 * Operands follow Instrs.def: the node's results (@out) first, then its
 * operands.
 */
#include "backends/interpreter/kern.h"
#include "passes/dropoutmask.h"

#include <stdlib.h>

/* A zeroed double buffer of n values. */
static double *dzeros(size_t n) { return xcalloc(n ? n : 1, sizeof(double)); }

/* t as outer x len x inner around axis (len the axis' size). */
static void around_axis(const struct type *t, unsigned axis, size_t *outer, size_t *len, size_t *inner)
{
	*outer = *inner = 1;
	*len = (size_t)t->dims[axis];
	for (unsigned i = 0; i < t->rank; i++) {
		if (i < axis)
			*outer *= (size_t)t->dims[i];
		else if (i > axis)
			*inner *= (size_t)t->dims[i];
	}
}

/* Stores the n doubles of v into a and frees v. */
static void dstore(const struct interp_arg *a, double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		st_f(a->t, a->p, i, v[i]);
	free(v);
}

/* The gradients of Y = X W (+ bias) for batch matrices at element
 * offsets xo, wo, go: X N x I, W I x O, G N x O: dX = G W^T, dW = X^T G,
 * and, where db is not NULL, dB = the column sums of G, each accumulated
 * in double and stored once. */
static void linear_grads(const struct kargs *k, size_t xo, size_t wo, size_t go, size_t N, size_t I, size_t O,
			 const struct interp_arg *db)
{
	const struct interp_arg *dx = &k->op[0], *dw = &k->op[1];
	const struct interp_arg *x = &k->op[db ? 3 : 2], *w = &k->op[db ? 4 : 3], *g = &k->op[db ? 5 : 4];
	double *ax = dzeros(N * I), *aw = dzeros(I * O), *ab = dzeros(O);
	for (size_t n = 0; n < N; n++)
		for (size_t o = 0; o < O; o++) {
			double gv = ld_f(g->t, g->p, go + n * O + o);
			ab[o] += gv;
			for (size_t i = 0; i < I; i++) {
				ax[n * I + i] += gv * ld_f(w->t, w->p, wo + i * O + o);
				aw[i * O + o] += gv * ld_f(x->t, x->p, xo + n * I + i);
			}
		}
	for (size_t i = 0; i < N * I; i++)
		st_f(dx->t, dx->p, xo + i, ax[i]);
	for (size_t i = 0; i < I * O; i++)
		st_f(dw->t, dw->p, wo + i, aw[i]);
	for (size_t i = 0; db && i < O; i++)
		st_f(db->t, db->p, i, ab[i]);
	free(ax);
	free(aw);
	free(ab);
}

/* fullyconnectedgrad(InputGrad N x I, WeightsGrad I x O, BiasGrad O,
 * Input N x I, Weights I x O, OutputGrad N x O): dX = G W^T, dW = X^T G,
 * dB = the column sums of G. */
int kern_fullyconnectedgrad(const struct kargs *k)
{
	const struct type *xt = k->op[3].t;
	linear_grads(k, 0, 0, 0, (size_t)xt->dims[0], (size_t)xt->dims[1], (size_t)k->op[4].t->dims[1], &k->op[2]);
	return 0;
}

/* matmulgrad(LHSGrad, RHSGrad, LHS N x K, RHS K x M, OutputGrad N x M)
 * and batchmatmulgrad (the same per batch B): dA = G B^T, dB = A^T G. */
int kern_matmulgrad(const struct kargs *k)
{
	const struct type *at = k->op[2].t, *bt = k->op[3].t;
	bool batched = at->rank == 3;
	size_t B = batched ? (size_t)at->dims[0] : 1, r = batched ? 1 : 0;
	size_t N = (size_t)at->dims[r], K = (size_t)at->dims[r + 1], M = (size_t)bt->dims[r + 1];
	for (size_t q = 0; q < B; q++)
		linear_grads(k, q * N * K, q * K * M, q * N * M, N, K, M, NULL);
	return 0;
}

/* convolutiongrad(InputGrad, FilterGrad, BiasGrad, Input N x H x W x C,
 * Filter OC x KH x KW x C/group, OutputGrad N x OH x OW x OC) {kernels,
 * strides, pads, group, dilation}: every product of the forward
 * convolution, Y[n, oy, ox, oc] += X[n, iy, ix, c] F[oc, ky, kx, c'], sends
 * G[n, oy, ox, oc] back to both factors. */
int kern_convolutiongrad(const struct kargs *k)
{
	const struct interp_arg *dx = &k->op[0], *df = &k->op[1], *db = &k->op[2];
	const struct interp_arg *x = &k->op[3], *f = &k->op[4], *g = &k->op[5];
	const int64_t *st = KINTS(k, AN_strides), *pd = KINTS(k, AN_pads), *dl = KINTS(k, AN_dilation);
	const uint64_t *xd = x->t->dims, *fd = f->t->dims, *gd = g->t->dims;
	size_t N = xd[0], H = xd[1], W = xd[2], C = xd[3];
	size_t OC = fd[0], KH = fd[1], KW = fd[2], ICG = fd[3], OH = gd[1], OW = gd[2];
	size_t OCG = OC / (size_t)KI(k, AN_group);
	double *ax = dzeros(numel(x->t)), *af = dzeros(numel(f->t)), *ab = dzeros(OC);
	for (size_t n = 0; n < N; n++)
		for (size_t oy = 0; oy < OH; oy++)
			for (size_t ox = 0; ox < OW; ox++)
				for (size_t oc = 0; oc < OC; oc++) {
					double gv = ld_f(g->t, g->p, ((n * OH + oy) * OW + ox) * OC + oc);
					ab[oc] += gv;
					size_t c0 = oc / OCG * ICG;
					for (size_t ky = 0; ky < KH; ky++) {
						int64_t iy = (int64_t)oy * st[0] - pd[0] + (int64_t)ky * dl[0];
						if (iy < 0 || iy >= (int64_t)H)
							continue;
						for (size_t kx = 0; kx < KW; kx++) {
							int64_t ix = (int64_t)ox * st[1] - pd[1] + (int64_t)kx * dl[1];
							if (ix < 0 || ix >= (int64_t)W)
								continue;
							size_t xi = ((n * H + (size_t)iy) * W + (size_t)ix) * C + c0;
							size_t fi = ((oc * KH + ky) * KW + kx) * ICG;
							for (size_t c = 0; c < ICG; c++) {
								ax[xi + c] += gv * ld_f(f->t, f->p, fi + c);
								af[fi + c] += gv * ld_f(x->t, x->p, xi + c);
							}
						}
					}
				}
	dstore(dx, ax, numel(x->t));
	dstore(df, af, numel(f->t));
	dstore(db, ab, OC);
	return 0;
}

/* maxpoolgrad(InputGrad, Argmax, OutputGrad): each G[i] added at the flat
 * input position Argmax[i] (maxpoolwithargmax's). */
int kern_maxpoolgrad(const struct kargs *k)
{
	const struct interp_arg *dx = &k->op[0], *a = &k->op[1], *g = &k->op[2];
	size_t nin = numel(dx->t), nout = numel(g->t);
	double *acc = dzeros(nin);
	for (size_t i = 0; i < nout; i++) {
		int64_t at = ld_i(a->t, a->p, i);
		if (at < 0 || (uint64_t)at >= nin) {
			free(acc);
			return kerror(k, "argmax %lld of output element %zu is outside the input's %zu elements",
				      (long long)at, i, nin);
		}
		acc[at] += ld_f(g->t, g->p, i);
	}
	dstore(dx, acc, nin);
	return 0;
}

/* The input window [w[0], w[1]) x [w[2], w[3]) of output pixel (oy, ox)
 * of the pool gradient k (OutputGrad g, InputGrad x) and the count its
 * gradient is divided by (0: an empty window): avgpoolgrad's forward
 * window {kernels, strides, pads} cut to the input, divided by the whole
 * window with count_include_pads; adaptiveavgpoolgrad's rows [oy H / OH,
 * ceil((oy + 1) H / OH)) and columns alike. */
static int64_t pool_window(const struct kargs *k, const uint64_t *xd, const uint64_t *gd, size_t oy, size_t ox,
			   int64_t *w)
{
	int64_t H = (int64_t)xd[1], W = (int64_t)xd[2], OH = (int64_t)gd[1], OW = (int64_t)gd[2];
	int64_t y = (int64_t)oy, x = (int64_t)ox;
	if (k->kind == IK_adaptiveavgpoolgrad) {
		w[0] = y * H / OH, w[1] = ((y + 1) * H + OH - 1) / OH;
		w[2] = x * W / OW, w[3] = ((x + 1) * W + OW - 1) / OW;
		return (w[1] - w[0]) * (w[3] - w[2]);
	}
	const int64_t *ks = KINTS(k, AN_kernels), *st = KINTS(k, AN_strides), *pd = KINTS(k, AN_pads);
	w[0] = y * st[0] - pd[0], w[2] = x * st[1] - pd[1];
	w[1] = w[0] + ks[0], w[3] = w[2] + ks[1];
	w[0] = w[0] < 0 ? 0 : w[0], w[2] = w[2] < 0 ? 0 : w[2];
	w[1] = w[1] > H ? H : w[1], w[3] = w[3] > W ? W : w[3];
	if (w[1] <= w[0] || w[3] <= w[2])
		return 0;
	return KI(k, AN_count_include_pads) ? ks[0] * ks[1] : (w[1] - w[0]) * (w[3] - w[2]);
}

/* avgpoolgrad(InputGrad N x H x W x C, OutputGrad N x OH x OW x C)
 * {kernels, strides, pads, count_include_pads} and
 * adaptiveavgpoolgrad(InputGrad, OutputGrad): each G spread evenly over
 * the input pixels of its window (pool_window), divided as the forward
 * pool divides. */
int kern_avgpoolgrad(const struct kargs *k)
{
	const struct interp_arg *dx = &k->op[0], *g = &k->op[1];
	const uint64_t *xd = dx->t->dims, *gd = g->t->dims;
	size_t N = xd[0], H = xd[1], W = xd[2], C = xd[3], OH = gd[1], OW = gd[2];
	double *acc = dzeros(numel(dx->t));
	for (size_t n = 0; n < N; n++)
		for (size_t oy = 0; oy < OH; oy++)
			for (size_t ox = 0; ox < OW; ox++) {
				int64_t w[4], cnt = pool_window(k, xd, gd, oy, ox, w);
				for (size_t c = 0; cnt > 0 && c < C; c++) {
					double v = ld_f(g->t, g->p, ((n * OH + oy) * OW + ox) * C + c) / (double)cnt;
					for (int64_t iy = w[0]; iy < w[1]; iy++)
						for (int64_t ix = w[2]; ix < w[3]; ix++)
							acc[((n * H + (size_t)iy) * W + (size_t)ix) * C + c] += v;
				}
			}
	dstore(dx, acc, numel(dx->t));
	return 0;
}

/* logsoftmaxgrad(InputGrad, Result, OutputGrad) {axis}: G - exp(Y) *
 * (the sum of G along the axis). */
int kern_logsoftmaxgrad(const struct kargs *k)
{
	const struct interp_arg *dx = &k->op[0], *y = &k->op[1], *g = &k->op[2];
	size_t outer, len, inner;
	around_axis(y->t, (unsigned)KI(k, AN_axis), &outer, &len, &inner);
	for (size_t o = 0; o < outer; o++)
		for (size_t in = 0; in < inner; in++) {
			size_t base = o * len * inner + in;
			double s = 0;
			for (size_t j = 0; j < len; j++)
				s += ld_f(g->t, g->p, base + j * inner);
			for (size_t j = 0; j < len; j++) {
				size_t i = base + j * inner;
				st_f(dx->t, dx->p, i, ld_f(g->t, g->p, i) - exp(ld_f(y->t, y->p, i)) * s);
			}
		}
	return 0;
}

/* The label of row i of l, checked against the class count C; -1 after
 * reporting. */
static int64_t label(const struct kargs *k, const struct interp_arg *l, size_t i, size_t C)
{
	int64_t c = ld_i(l->t, l->p, i);
	if (c < 0 || c >= (int64_t)C)
		return kerror(k, "label %lld of row %zu is out of range [0, %zu)", (long long)c, i, C);
	return c;
}

/* softmaxgrad(InputGrad N x C, Result N x C, Labels N) = Result -
 * one_hot(Labels). */
int kern_softmaxgrad(const struct kargs *k)
{
	const struct interp_arg *dx = &k->op[0], *y = &k->op[1], *l = &k->op[2];
	size_t N = (size_t)y->t->dims[0], C = (size_t)y->t->dims[1];
	for (size_t i = 0; i < N; i++) {
		int64_t c = label(k, l, i, C);
		if (c < 0)
			return -1;
		for (size_t j = 0; j < C; j++)
			st_f(dx->t, dx->p, i * C + j, ld_f(y->t, y->p, i * C + j) - ((int64_t)j == c ? 1.0 : 0.0));
	}
	return 0;
}

/* crossentropylossgrad(PGrad N x C, P N x C, Labels N, CEGrad <1>):
 * -CEGrad / P[i, Labels[i]] at the label, 0 elsewhere. */
int kern_crossentropylossgrad(const struct kargs *k)
{
	const struct interp_arg *dp = &k->op[0], *p = &k->op[1], *l = &k->op[2], *cg = &k->op[3];
	size_t N = (size_t)p->t->dims[0], C = (size_t)p->t->dims[1];
	double gv = ld_f(cg->t, cg->p, 0);
	for (size_t i = 0; i < N; i++) {
		int64_t c = label(k, l, i, C);
		if (c < 0)
			return -1;
		for (size_t j = 0; j < C; j++)
			st_f(dp->t, dp->p, i * C + j, (int64_t)j == c ? -gv / ld_f(p->t, p->p, i * C + j) : 0.0);
	}
	return 0;
}

/* batchnormalizationgrad(InputGrad, ScaleGrad, BiasGrad, Input, Scale,
 * Mean, Var, OutputGrad) {channel_idx, epsilon}, per channel over the cnt
 * values of the other axes, xhat = (X - Mean) / sqrt(Var + eps):
 * dBias = sum G, dScale = sum G xhat,
 * dX = Scale / sqrt(Var + eps) * (G - dBias / cnt - xhat dScale / cnt). */
int kern_batchnormalizationgrad(const struct kargs *k)
{
	const struct interp_arg *dx = &k->op[0], *ds = &k->op[1], *db = &k->op[2], *x = &k->op[3];
	const struct interp_arg *sc = &k->op[4], *me = &k->op[5], *va = &k->op[6], *g = &k->op[7];
	size_t outer, C, inner;
	around_axis(x->t, (unsigned)KI(k, AN_channel_idx), &outer, &C, &inner);
	double cnt = (double)(outer * inner), eps = KF(k, AN_epsilon);
	for (size_t c = 0; c < C; c++) {
		double mean = ld_f(me->t, me->p, c), sd = sqrt(ld_f(va->t, va->p, c) + eps);
		double sb = 0, ss = 0;
		for (size_t o = 0; o < outer; o++)
			for (size_t in = 0; in < inner; in++) {
				size_t i = (o * C + c) * inner + in;
				double gv = ld_f(g->t, g->p, i);
				sb += gv;
				ss += gv * (ld_f(x->t, x->p, i) - mean) / sd;
			}
		double kk = ld_f(sc->t, sc->p, c) / sd;
		for (size_t o = 0; o < outer; o++)
			for (size_t in = 0; in < inner; in++) {
				size_t i = (o * C + c) * inner + in;
				double xh = (ld_f(x->t, x->p, i) - mean) / sd;
				st_f(dx->t, dx->p, i, kk * (ld_f(g->t, g->p, i) - sb / cnt - xh * ss / cnt));
			}
		st_f(ds->t, ds->p, c, ss);
		st_f(db->t, db->p, c, sb);
	}
	return 0;
}

/* The window sum over channels c - hw .. c + hw of v (C per pixel) at
 * element i of channel c. */
static double window_sum(const double *v, size_t i, size_t c, size_t C, int64_t hw)
{
	double s = 0;
	size_t base = i - c;
	for (int64_t j = (int64_t)c - hw; j <= (int64_t)c + hw; j++)
		if (j >= 0 && j < (int64_t)C)
			s += v[base + (size_t)j];
	return s;
}

/* localresponsenormalizationgrad(InputGrad, Input N x H x W x C,
 * OutputGrad) {half_window_size hw, alpha, beta, k} of y = X d,
 * d = s^-beta, s = k + alpha / size * (window sum of X^2):
 * dX = G d - 2 alpha beta / size * X * (window sum of G X d / s). */
int kern_localresponsenormalizationgrad(const struct kargs *k)
{
	const struct interp_arg *dx = &k->op[0], *x = &k->op[1], *g = &k->op[2];
	size_t C = (size_t)x->t->dims[3], n = numel(x->t);
	int64_t hw = KI(k, AN_half_window_size);
	double alpha = KF(k, AN_alpha), beta = KF(k, AN_beta), kk = KF(k, AN_k), size = (double)(2 * hw + 1);
	double *x2 = dzeros(n), *s = dzeros(n), *q = dzeros(n);
	for (size_t i = 0; i < n; i++) {
		double v = ld_f(x->t, x->p, i);
		x2[i] = v * v;
	}
	for (size_t i = 0; i < n; i++)
		s[i] = kk + alpha / size * window_sum(x2, i, i % C, C, hw);
	for (size_t i = 0; i < n; i++)
		q[i] = ld_f(g->t, g->p, i) * ld_f(x->t, x->p, i) * pow(s[i], -beta) / s[i];
	for (size_t i = 0; i < n; i++) {
		double corr = 2 * alpha * beta / size * ld_f(x->t, x->p, i) * window_sum(q, i, i % C, C, hw);
		x2[i] = ld_f(g->t, g->p, i) * pow(s[i], -beta) - corr;
	}
	dstore(dx, x2, n);
	free(s);
	free(q);
	return 0;
}

/* dropoutmask(Mask, Step <1>) {ratio, seed}: 1 / (1 - ratio) where element
 * i is kept at this step, else 0 (passes/dropoutmask.h). */
int kern_dropoutmask(const struct kargs *k)
{
	const struct interp_arg *m = &k->op[0], *s = &k->op[1];
	double r = KF(k, AN_ratio);
	uint64_t seed = (uint64_t)KI(k, AN_seed);
	int64_t t = dropout_step_term(ld_i(s->t, s->p, 0)), thr = dropout_threshold(r);
	/* the lowered form stores the Splat 1 / (1 - ratio) of the mask's type */
	double keep = 1.0 / (1.0 - r);
	for (size_t i = 0; i < numel(m->t); i++)
		st_f(m->t, m->p, i, dropout_keep(dropout_key(seed, i), t, thr) ? keep : 0.0);
	return 0;
}

/* sgdmomentum(Dest, Gradient, Weight, Velocity) {l1_decay, l2_decay,
 * learning_rate, momentum, batch_size}: g = G / batch_size + l1 sign(W) +
 * l2 W, Velocity = momentum Velocity + g, Dest = W - learning_rate
 * Velocity (the lowering rule's arithmetic, in double). Dest may be
 * Weight: each element is read before it is written. */
int kern_sgdmomentum(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *g = &k->op[1], *w = &k->op[2], *v = &k->op[3];
	double l1 = KF(k, AN_l1_decay), l2 = KF(k, AN_l2_decay), lr = KF(k, AN_learning_rate);
	double mu = KF(k, AN_momentum), b = (double)KI(k, AN_batch_size);
	for (size_t i = 0; i < numel(d->t); i++) {
		double wv = ld_f(w->t, w->p, i);
		double gv = ld_f(g->t, g->p, i) / b + l1 * (wv > 0 ? 1.0 : wv < 0 ? -1.0 : 0.0) + l2 * wv;
		double vv = mu * ld_f(v->t, v->p, i) + gv;
		st_f(v->t, v->p, i, vv);
		st_f(d->t, d->p, i, wv - lr * vv);
	}
	return 0;
}
