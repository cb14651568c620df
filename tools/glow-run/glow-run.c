/* glow-run - executes an instruction IR function on real tensors with the
 * interpreter backend or compiled C.
 *
 *   glow-run PROG.gir [-func=@name] [-input NAME=FILE ...] [-o FILE]
 *            [-output-dir D] [-output-format=pb|npy] [-print] [-print-full]
 *            [-print-signature] [-expected NAME=FILE ...] [-expected-dir D]
 *            [-rtol=X] [-atol=X] [-ignore-memory-plan] [-time]
 *            [-backend=interpreter|c] [-gemm=builtin|openblas] [-winograd=auto|off|f2|f4]
 *            [-threads=N]
 *   glow-run PROG.gir -epochs=N -train-data NAME=FILE ... [-test-data NAME=FILE ...]
 *            [-batch=N] [-seed=N] [-no-shuffle] [-limit=N] [-loss=NAME] [-scores=NAME]
 *            [-input NAME=FILE ...] [-output-dir D] [-backend=...]
 *
 * The second form trains (lib/runner/train.h, docs/Training.md): the step
 * @F_grad runs over the data set in mini-batches for N epochs, and -input
 * gives initial weights.
 *
 * Inputs and outputs are the function's placeholders (mutable weights) by
 * the rule of backends/backend.h: a mutable weight without initializer that
 * the program reads before writing is an input and must be bound with
 * -input; every mutable weight the program writes is an output. Input files
 * are .npy or ONNX TensorProto .pb (lib/import/onnx/tensorio.h) and must
 * match the placeholder's type exactly (quantized kinds: their integers).
 * -print-signature lists them (lib/tensor) and exits without running.
 *
 * Outputs, in declaration order: printed with -print (also the default when
 * no other destination is given; lib/tensor's text, tensors over 1000
 * elements summarized unless -print-full, quantized ones with their real
 * values too), printed into FILE with -o FILE, or written as one tensor
 * file with -o FILE.npy / FILE.pb (a program of one output), written to
 * -output-dir as NAME.pb or NAME.npy (every character of NAME other than a
 * letter, digit, '_', '.' or '-' becomes '_'), compared with -expected /
 * -expected-dir files. The comparison (lib/tensor, shared with glow-diff)
 * passes when |got - expected| <= atol + rtol * |expected| for float kinds
 * (quantized kinds compare their real values; defaults rtol 1e-3, atol
 * 1e-5), NaN equals NaN, and integer, index and bool kinds are equal
 * exactly. -expected-dir finds D/NAME.pb, D/NAME.npy, or a .pb file in D
 * whose TensorProto name is NAME (the layout of ONNX test data sets).
 *
 * -profile=FILE runs a program instrumented by glow-opt -precision=profile
 * over the -input sets (several -input of one name, or a batch file) and
 * writes or accumulates the quantization profile FILE instead of the
 * outputs (lib/runner/profile.c, docs/Quantization.md).
 *
 * Sizes come from the program, so an allocation that fails (the memory
 * plan, a buffer, an output) is reported with the size and ends with
 * status 1. -time reports each stage's seconds on stderr (lib/tensor/stages.h).
 *
 * Exit status: 0; 1 after an error or a mismatch.
 */
#include "backends/c/cbackend.h"
#include "runner/runner.h"
#include "support/cl.h"
#include "support/util.h"

int main(int argc, char **argv)
{
	struct run_options o = {0};
	const struct cl_opt opts[] = {
		{"backend", CL_ENUM, &o.backend, NULL, "Backend to run on: the interpreter (default), compiled C, or an OpenCL device", 0, backend_names(0)},
		{"gemm", CL_ENUM, &o.gemm, NULL, "With -backend=c: matrix products by the bundle's own kernels (builtin, the default) or OpenBLAS's cblas_sgemm (openblas, linked with -lopenblas)", 0, CBACKEND_GEMM_NAMES},
		{"winograd", CL_ENUM, &o.winograd, NULL, "With -backend=c: 3x3 stride-1 convolutions as Winograd F(m x m, 3 x 3) where it is expected to win (auto), never (off), or wherever eligible with m = 2 (f2) or m = 4 (f4)", 0, CBACKEND_WINO_NAMES},
		{"func", CL_STRING, &o.func, "@name", "The function to run (default: the only one)", 0, NULL},
		{"input", CL_LIST, &o.inputs, "NAME=FILE", "Bind input NAME to a .npy or TensorProto .pb file", 0, NULL},
		{"o", CL_STRING, &o.output, "file", "Write the printed outputs to FILE instead of stdout; FILE.npy or FILE.pb: the one output as a tensor file", 0, NULL},
		{"output-dir", CL_STRING, &o.output_dir, "dir", "Write each output to DIR/NAME.pb (or .npy)", 0, NULL},
		{"output-format", CL_ENUM, &o.format, "pb|npy", "File format of -output-dir (default pb)", 0, "pb|npy"},
		{"print", CL_FLAG, &o.print, NULL, "Print every output as text (the default without other destinations); tensors over 1000 elements are summarized", 0, NULL},
		{"print-full", CL_FLAG, &o.print_full, NULL, "Print every element of every output (implies -print)", 0, NULL},
		{"profile", CL_STRING, &o.profile, "FILE", "Profile the run of a program instrumented by glow-opt -precision=profile over the -input sets (an input given several times, or a batch file) into FILE (accumulating into an existing one)", 0, NULL},
		{"print-signature", CL_FLAG, &o.print_signature, NULL, "List the function's inputs and outputs with their types, then exit", 0, NULL},
		{"expected", CL_LIST, &o.expected, "NAME=FILE", "Compare output NAME with a .npy or .pb file", 0, NULL},
		{"expected-dir", CL_STRING, &o.expected_dir, "dir", "Compare every output with DIR/NAME.pb|.npy or a .pb named NAME", 0, NULL},
		TENSOR_TOL_OPTS(&o.tol),
		{"ignore-memory-plan", CL_FLAG, &o.ignore_plan, NULL, "Allocate every buffer separately even when a memory plan is recorded", 0, NULL},
		{"time", CL_FLAG, &o.time, NULL, "Report the seconds of each stage on stderr", 0, NULL},
		{"epochs", CL_STRING, &o.epochs, "n", "Train: run the training step @F_grad over -train-data N times (docs/Training.md)", 0, NULL},
		{"train-data", CL_LIST, &o.train_data, "NAME=FILE", "Train: feed placeholder NAME from an IDX (.gz) or .npy data set", 0, NULL},
		{"test-data", CL_LIST, &o.test_data, "NAME=FILE", "Train: the held-out set @F's accuracy is measured on after each epoch", 0, NULL},
		{"batch", CL_STRING, &o.batch, "n", "Train: check that the step's batch (its data placeholders' leading dimension) is N", 0, NULL},
		{"seed", CL_STRING, &o.seed, "n", "Train: seed of the shuffle and the initial weights (default 1)", 0, NULL},
		{"no-shuffle", CL_FLAG, &o.no_shuffle, NULL, "Train: take the examples in file order every epoch", 0, NULL},
		{"limit", CL_STRING, &o.limit, "n", "Train: use the first N examples of each data set only", 0, NULL},
		{"loss", CL_STRING, &o.loss, "NAME", "Train: the step's loss output (default: its one float output of one element)", 0, NULL},
		{"scores", CL_STRING, &o.scores, "NAME", "Train: @F's output whose argmax is the prediction (default: its one float [batch, classes] output)", 0, NULL},
		{"threads", CL_STRING, &o.threads, "N", "Threads that split each large operator (interpreter and -backend=c; 1 to 256, default: every core available); results are bitwise the same for any count", 0, NULL},
	};
	const struct cl_tool tool =
		CL_TOOL1("glow-run", "run glow instruction IR on the interpreter or compiled C",
			 "[options] PROG.gir", opts, &o.positional);
	return cl_main(&tool, argc, argv, runner_glow_run, &o);
}
