/* glow-gradcheck - checks the differentiate pass: for a function @F with a
 * loss, compares the gradient @F_grad computes for every trainable
 * placeholder with central finite differences of the loss, on seeded random
 * inputs, and reports the worst relative error per placeholder and per
 * gradient kind.
 *
 *   glow-gradcheck M.glow [-func=@F] [-O0|-O2] [-lower-grads]
 *                  [-backend=interpreter|c] [-mode=train|infer] [-seed=N]
 *                  [-step=H] [-tolerance=T]
 *
 * The loss is the sum of @F's loss nodes: CrossEntropyLoss's value and, for
 * Regression(Input, Expected), sum (Input - Expected)^2 / 2, the loss whose
 * gradient Regression stands for. It is accumulated in double from values
 * the tool saves out of @F.
 *
 * Analytic side: differentiate with learning rate 1 and no momentum, decay
 * or batch scaling, so one run of @F_grad turns every trainable W into
 * W - dW, and dW is read back as the difference (|W| <= 1, so the float
 * subtraction loses at most about 1e-7 absolutely). -O0 then runs only the
 * lower pass, -O2 the O2 pipeline for the backend; the backend's
 * instruction IR pipeline of that level follows. The gradient and training
 * kinds stay whole where the backend keeps them (the interpreter and the
 * C backend keep every kind that has an instruction) and run on the
 * backend's own kernels; -lower-grads first lowers all of them into
 * forward kinds (lib/passes/lower-grad.c, lower-train.c), so the same
 * check covers both forms.
 *
 * Numeric side: (L(W + h e_i) - L(W - h e_i)) / 2h for each element i (at
 * most 64 elements per placeholder, evenly spaced), with h = -step
 * (default 0.01). The interpreter computes in float, so h cannot be much
 * smaller: the loss's rounding error (about 1e-7 of its size) is divided by
 * 2h. The truncation error is O(h^2).
 *
 * Error of an element: |a - n| / max(|a|, |n|, 0.01), a relative error that
 * turns absolute for gradients below 0.01 (where the finite difference is
 * mostly rounding noise). A placeholder's error is the worst of its
 * elements; a gradient kind's the worst over the placeholders whose
 * gradient passes through a node of that kind in @F_grad (before lowering).
 * Exit status 1 when some error exceeds -tolerance (default 0.01) or after
 * an error.
 *
 * Modes: -mode=train (the default) differentiates as glow-opt -mode=train
 * does, so a BatchNormalization normalizes with its batch's statistics;
 * the tool gives @F's BatchNormalizations the same statistics, and @F's
 * Dropouts the masks @F_grad draws (at step 0), so both sides compute one
 * function. -mode=infer keeps the Mean and Var operands. The infer-only
 * passes are skipped in both modes.
 *
 * Inputs: every placeholder gets uniform values in [-1, 1) from a
 * generator seeded by -seed and its name; an integer placeholder feeding a
 * CrossEntropyLoss as labels gets classes in [0, C), one feeding a Gather
 * as indices positions along its axis, any other integer placeholder
 * zeros.
 */
#include "gradcheck/gradcheck.h"
#include "support/cl.h"
#include "support/util.h"

int main(int argc, char **argv)
{
	struct gc_options o = {0};
	o.olevel = 0;
	const struct cl_opt opts[] = {
		{"func", CL_STRING, &o.func, "@name", "The function to check (default: the only one with a loss)", 0,
		 NULL},
		{"O0", CL_SET, &o.olevel, NULL, "Lower the gradient function only (the default)", 0, NULL},
		{"O2", CL_SET, &o.olevel, NULL, "Run the O2 pipelines on it", 2, NULL},
		{"lower-grads", CL_FLAG, &o.lower_grads, NULL,
		 "Lower every gradient and training kind into forward kinds (default: whole where the backend keeps "
		 "them)",
		 0, NULL},
		{"backend", CL_ENUM, &o.backend, NULL, "Backend that runs both sides", 0, backend_names(BACKEND_HOST)},
		{"mode", CL_ENUM, &o.mode, NULL,
		 "Mode of differentiate: train (BatchNormalization with batch statistics, the default) or infer", 0,
		 GRADCHECK_MODES},
		{"seed", CL_STRING, &o.seed_s, "n", "Seed of the random inputs (default 1)", 0, NULL},
		{"step", CL_STRING, &o.step_s, "h", "Finite-difference step (default 0.01)", 0, NULL},
		{"tolerance", CL_STRING, &o.tol_s, "t", "Largest relative error that passes (default 0.01)", 0, NULL},
	};
	const struct cl_tool tool =
		CL_TOOL1("glow-gradcheck", "glow gradient checker", "[options] [input.glow|-]", opts, &o.input);
	return cl_main(&tool, argc, argv, gradcheck_run, &o);
}
