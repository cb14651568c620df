/* glow-diff - differential check of graph passes and backends: runs a
 * module before and after a pipeline through IRGen, the original on the
 * interpreter and the result on the interpreter or another backend, on the
 * same seeded random inputs, and compares every output.
 *
 *   glow-diff [options] A.glow (-passes=a,b,c | -O0..-O3) [-convert-to-fp16|-convert-to-bf16]
 *             [-keep-float=Kind,...] [-seed N] [-runs K] [-rtol X] [-atol X]
 *             [-randomize-constants] [-mode=infer|train] [-backend=interpreter|c]
 *             [-o REPORT] [-time]
 *
 * The module is parsed twice: the original, and a copy the pipeline runs on
 * (the passes and pipelines of glow-opt, lib/passes). -convert-to-fp16 and
 * -convert-to-bf16 append the fp16 or bf16 pipeline, as glow-opt does.
 * Every function of the original is generated (lib/irgen) and compiled for
 * the interpreter, and so is the function of the same name after the
 * pipeline; both run K times (-runs, default 1) on the same inputs.
 *
 * -backend=c runs the pipeline tailored to the C backend (as glow-opt
 * -backend=c does: its lowering choices and post-lowering fusions), then
 * the backend's own -O2 instruction IR pipeline (c-O2: buffer sharing,
 * concatenations hoisted for direct writes, the memory plan), and the
 * result compiled by it (a bundle built with the system C compiler,
 * $GLOW_CC and $GLOW_CFLAGS as for glow-run -backend=c); the original
 * still runs on the interpreter, unoptimized, so the check covers the
 * backend's IR pipeline and code as well as the graph passes.
 *
 * Inputs: every placeholder an IR function reads before writing, filled
 * from a generator seeded by -seed, the run number and the placeholder's
 * name (so both sides get the same data): float kinds uniform in [-1, 1);
 * integer and index kinds uniform in [0, B) where B is the smallest bound
 * the placeholder's uses impose (the indexed dimension of a Gather, the
 * smallest data dimension of a GatherND, the class count of a
 * CrossEntropyLoss; 4 when no use bounds it); bool 0 or 1; quantized kinds
 * any stored integer.
 *
 * -randomize-constants replaces, in both copies and before the pipeline
 * runs, every float constant given as a splat or zero by seeded random
 * data, so that a model whose weights are splats gets a real check:
 * constants of rank 2 or more (weights, first dimension = outputs) are
 * uniform in +-sqrt(3 / fan_in) with fan_in = elements / first dimension;
 * smaller ones (biases, normalization statistics) are the splat value v
 * times a factor uniform in [0.5, 1.5) (a variance stays positive), or
 * uniform in +-0.1 when v is 0. Integer, index and bool constants are left
 * alone (they may be indices or shapes).
 *
 * Comparison (lib/tensor, the rule and the -rtol/-atol defaults of
 * glow-run: 1e-3, 1e-5): float kinds (quantized kinds by their real
 * values) match when |a - b| <= atol + rtol * |b| (b: the original's value;
 * NaN equals NaN); integer, index and bool kinds exactly. Each output
 * prints one line with its worst element, on stdout or, whole, into the
 * file -o names (also after a mismatch; not after an error); the exit
 * status is 1 after a mismatch or an error, else 0. -time reports each
 * stage's seconds on stderr.
 */
#include "backends/c/cbackend.h"
#include "runner/runner.h"
#include "support/cl.h"
#include "support/util.h"

#include <string.h>

int main(int argc, char **argv)
{
	struct diff_options o;
	memset(&o, 0, sizeof o);
	o.olevel = -1;
	o.output = "-";
	const struct cl_opt opts[] = {
		{"passes", CL_STRING, &o.passes, "pass,...", "Passes and pipelines to check, in order", 0, NULL},
		{"O0", CL_SET, &o.olevel, NULL, "Check the O0 pipeline", 0, NULL},
		{"O1", CL_SET, &o.olevel, NULL, "Check the O1 pipeline", 1, NULL},
		{"O2", CL_SET, &o.olevel, NULL, "Check the O2 pipeline", 2, NULL},
		{"O3", CL_SET, &o.olevel, NULL, "Check the O3 pipeline", 3, NULL},
		{"convert-to-fp16", CL_FLAG, &o.fp16, NULL, "Then convert float computations to float16 (fp16 pipeline)",
		 0, NULL},
		{"convert-to-bf16", CL_FLAG, &o.bf16, NULL, "Then convert float computations to bfloat16 (bf16 pipeline)",
		 0, NULL},
		{"keep-float", CL_STRING, &o.keep_float, "Kind,...", "Node kinds the precision conversion leaves in float",
		 0, NULL},
		{"mode", CL_ENUM, &o.mode, NULL, "Compile for inference or training (infer-only passes skipped)", 0,
		 "infer|train"},
		{"seed", CL_STRING, &o.seed_s, "n", "Seed of the random inputs and constants (default 1)", 0, NULL},
		{"runs", CL_STRING, &o.runs_s, "k", "Runs, each on new random inputs (default 1)", 0, NULL},
		TENSOR_TOL_OPTS(&o.tol),
		{"o", CL_STRING, &o.output, "file", "Write the report (a line per output and run) to FILE instead of stdout", 0, NULL},
		{"time", CL_FLAG, &o.time, NULL, "Report the seconds of each stage on stderr", 0, NULL},
		{"randomize-constants", CL_FLAG, &o.randomize, NULL,
		 "Replace float splat and zero constants by seeded random data first", 0, NULL},
		{"backend", CL_ENUM, &o.backend, NULL,
		 "Tailor the pipeline to this backend and run its result there (the original runs on the interpreter)",
		 0, backend_names(0)},
	};
	const struct cl_tool tool =
		CL_TOOL1("glow-diff", "differential check of graph passes and backends against the interpreter",
			 "[options] [input.glow|-]", opts, &o.input);
	return cl_main(&tool, argc, argv, runner_glow_diff, &o);
}
