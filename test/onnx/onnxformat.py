"""onnxformat.py - the lit test format of the ONNX conformance suite (see
lit.local.cfg): a test per (optimization level, case folder), run as the
pipeline glow-import | glow-opt | glow-irgen | glow-llc | glow-run with
temp files in the test's exec dir (kept for a look after a failure).

It lives in a module of its own because lit sends the format to its worker
processes by pickling, which needs an importable class.
"""
import os
import subprocess

import lit.formats
import lit.Test

import onnxcase

# The levels a case runs at: an optimization level O0..O3 (interpreter),
# 'fp16' (glow-opt -O2 -convert-to-fp16: float computations in float16,
# compared at the looser FP16_RTOL/FP16_ATOL), 'c-O0' and 'c' (-O0 and -O2,
# the C backend: glow-llc runs its pipelines c-O0 and c-O2, glow-run
# -backend=c compiles and runs a C bundle, with the interpreter's cases and
# tolerances).
LEVELS = ("O0", "O1", "O2", "O3", "fp16", "c-O0", "c", "opencl")

# float16 has an 11-bit significand: one rounding is a relative error of at
# most 2^-11 (4.9e-4). A case is a handful of operations, each rounding its
# result (and the float32 inputs are rounded once on the way in), so a few
# units of roundoff add up to ~2e-3; rtol 1e-2 leaves a margin of about 20
# roundings. atol 1e-3 covers results near zero made by cancellation of
# terms of magnitude ~1 (each term already off by ~5e-4). A case whose
# data makes this meaningless (values beyond float16's range of 65504,
# long sums) is an XFAIL at level fp16 with that reason.
FP16_RTOL = 1e-2
FP16_ATOL = 1e-3


# The C levels test the C code that glow-llc's pipelines generate (c-O0:
# the unoptimized one, c: -O2), not the C compiler's optimizer, whose -O3
# is most of this suite's processor time (a bundle with a convolution:
# some 6 s at -O3 against 1 s at -O1; the generated code is the same).
# So every c-O0 bundle, and every c bundle but those of
# c_backend_subset (the first case of each op type per folder, which keep
# the backend's default -O3 so that every op type's code is still built
# by the optimizer users get), is compiled at -O1. A GLOW_CFLAGS set in
# the test environment wins.
C_FAST_CFLAGS = "-O1 -march=native"

# What LeakSanitizer prints when its tracer thread crashes (see _stage).
LSAN_TRACER_CRASH = "Tracer caught signal"


def level_options(level):
    """(optimization level, extra glow-opt options, extra glow-llc options,
    glow-run options). The C backend levels run glow-llc's C pipelines
    (-backend=c -emit=ir: the IR after c-O0 or c-O2) and then glow-run
    -backend=c on that IR."""
    if level == "fp16":
        return "O2", ["-convert-to-fp16"], [], []
    if level == "c":
        return "O2", [], ["-backend=c", "-emit=ir"], ["-backend=c"]
    if level == "c-O0":
        return "O0", [], ["-backend=c", "-emit=ir"], ["-backend=c"]
    if level == "opencl":  # test/opencl/conformance: -O2 for the OpenCL backend, run on its device
        return "O2", ["-backend=opencl"], ["-backend=opencl", "-emit=ir"], ["-backend=opencl"]
    return level, [], [], []


def c_backend_subset(cases):
    """The cases of the levels that run a sample (lit -D onnx_subset=...;
    by default c-O0, whose every case compiles a C bundle): per folder and
    op type (Case.main_op), the first case by name, so every op type of
    every folder still runs at that level."""
    first = {}
    for c in cases:
        k = (c.folder, c.main_op())
        if k not in first or c.name < first[k]:
            first[k] = c.name
    return set(f + "/" + n for (f, _), n in first.items())


class OnnxCaseFormat(lit.formats.base.TestFormat):
    """Discovers a test per (level, case) and runs the pipeline in the
    test's exec dir with temp files (each stage's output is kept for a
    look after a failure)."""

    def __init__(self, roots, folders, levels, timeout, unsupported, xfail, subset_levels=()):
        # the levels that run only c_backend_subset's cases
        self.subset_levels = set(subset_levels)
        self.c_default_flags = set()  # filled by getTestsInDirectory
        self.roots = roots  # folder -> the directory holding it
        self.folders = folders
        self.levels = levels
        self.timeout = timeout
        self.unsupported = unsupported
        self.xfail = xfail

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        if path_in_suite != ("onnx",):
            return
        cases = []
        for f in self.folders:
            cases += onnxcase.discover(self.roots[f], [f])
        c_subset = c_backend_subset(cases)
        # level c's cases compiled at the backend's default flags
        self.c_default_flags = c_subset
        for c in cases:
            for level in self.levels:
                if level in self.subset_levels and c.key not in c_subset:
                    continue
                yield lit.Test.Test(testSuite, path_in_suite + (level, c.folder, c.name), localConfig)

    def before_run(self, prog, env, log):
        """Called with the compiled program before glow-run runs it; the
        OpenCL format builds its device program here (oclformat.py)."""

    def _stage(self, argv, env, log):
        log.append("$ " + " ".join(argv))
        for attempt in (0, 1):
            try:
                p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                   timeout=self.timeout)
            except subprocess.TimeoutExpired:
                log.append("timed out after %d s" % self.timeout)
                return False
            out = p.stdout.decode("utf-8", "replace")
            # LeakSanitizer's own tracer (the thread that stops the others
            # for the leak check at exit) now and then crashes after an
            # OpenCL run on PoCL, whose worker threads are still alive: the
            # sanitizer's failure, not the program's. Such a stage runs once
            # more; any other failure, and a second crash, stand.
            if attempt == 0 and p.returncode != 0 and LSAN_TRACER_CRASH in out \
                    and "LeakSanitizer has encountered a fatal error" in out:
                log.append(out[:4000].rstrip("\n"))
                log.append("# LeakSanitizer's tracer crashed (not a finding): the stage runs again")
                continue
            break
        if out:
            log.append(out[:4000].rstrip("\n"))
        if p.returncode != 0:
            log.append("exit status %d" % p.returncode)
            return False
        return True

    def execute(self, test, litConfig):
        level, folder, name = test.path_in_suite[-3:]
        case = onnxcase.Case(folder, name, os.path.join(self.roots[folder], folder, name))
        reason = onnxcase.match_rules(self.unsupported, case, level)
        if not reason and level == "fp16" and "float32" not in case.value_types():
            reason = "level fp16: no float32 graph input or output to convert"
        if reason:
            return lit.Test.UNSUPPORTED, "out of scope: " + reason
        xfail = onnxcase.match_rules(self.xfail, case, level)
        ok, log = self._run(test, case, level)
        text = "\n".join(log)
        if xfail:
            text = "expected to fail: " + xfail + "\n" + text
            return (lit.Test.XPASS if ok else lit.Test.XFAIL), text
        return (lit.Test.PASS if ok else lit.Test.FAIL), text

    def _run(self, test, case, level):
        log = []
        if len(case.input_files) != len(case.inputs) or len(case.output_files) != len(case.outputs):
            log.append("the data set has %d inputs and %d outputs, the model %d and %d" %
                       (len(case.input_files), len(case.output_files), len(case.inputs), len(case.outputs)))
            return False, log
        tmp = test.getExecPath()
        os.makedirs(tmp, exist_ok=True)
        env = dict(test.config.environment)
        if level == "c-O0" or (level == "c" and case.key not in self.c_default_flags):
            env.setdefault("GLOW_CFLAGS", C_FAST_CFLAGS)
        glow = os.path.join(tmp, "model.glow")
        opt = os.path.join(tmp, "opt.glow")
        gir = os.path.join(tmp, "prog.gir")
        llc = os.path.join(tmp, "opt.gir")
        # Graph inputs whose values the importer must know (shapes, axes,
        # sizes, ...: onnxcase.frozen_inputs) are frozen from the case's
        # own test data; they have no placeholder and are not bound again.
        imp = ["glow-import", os.path.join(case.dir, "model.onnx"), "-o", glow]
        for v, f in zip(case.inputs, case.input_files):
            if v["name"] in case.frozen:
                imp.append("-freeze-input=" + v["name"] + "=" + f)
        olevel, opt_extra, llc_extra, run_extra = level_options(level)
        stages = [
            imp,
            ["glow-opt", "-" + olevel] + opt_extra + [glow, "-o", opt],
            ["glow-irgen", opt, "-o", gir],
            ["glow-llc", "-" + olevel] + llc_extra + [gir, "-o", llc],
        ]
        for argv in stages:
            if not self._stage(argv, env, log):
                return False, log
        self.before_run(llc, env, log)
        # Every graph input that is not frozen is bound, as a user would:
        # the program keeps the model's signature, so an input read only for
        # its shape (Shape, Size, EyeLike, CastLike's target) is bound too.
        rtol, atol = case.rtol, case.atol
        if level == "fp16":
            rtol, atol = max(rtol, FP16_RTOL), max(atol, FP16_ATOL)
        run = ["glow-run"] + run_extra + [llc, "-rtol=%g" % rtol, "-atol=%g" % atol]
        for v, f in zip(case.inputs, case.input_files):
            if v["name"] in case.frozen:
                log.append("# input '%s' is frozen at import: not bound" % v["name"])
            else:
                run += ["-input", v["name"] + "=" + f]
        for v, f in zip(case.outputs, case.output_files):
            run += ["-expected", v["name"] + "=" + f]
        return self._stage(run, env, log), log

