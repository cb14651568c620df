# lit configuration of the toolchain's test suite.
#
# One behaviour per file; RUN lines at the top; tools come from this build's
# bin/, FileCheck/not/count from LLVM's tools. Substitutions:
#   %glow_src   the source tree          %inputs   test/Inputs
#   %models     the model-zoo architectures generated into the build tree
#   %gen_models utils/gen-models.py run by a Python that has the onnx module
import os
import lit.formats

config.name = "glow"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".glow", ".gir", ".test", ".onnxtxt"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.glow_obj_root, "test")

path = os.path.pathsep.join([config.glow_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
config.environment["PATH"] = path
config.environment["FILECHECK_OPTS"] = "-enable-var-scope"
# sanitizer builds: leaks are errors, reports are short
config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"

config.substitutions.append(("%glow_src", config.glow_src_root))
config.substitutions.append(("%inputs", os.path.join(config.glow_src_root, "test", "Inputs")))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%models", os.path.join(config.glow_obj_root, "models")))
config.substitutions.append(("%gen_models", config.models_python + " " + os.path.join(config.glow_src_root, "utils", "gen-models.py")))

# Feature sanitize: a sanitizer build (-DGLOW_SANITIZE=ON). There the
# model-zoo tests that run whole networks (test/{cbackend,cross,diff,opencl}/
# model-*.test) keep the two smallest, SqueezeNet and ShuffleNet (UNSUPPORTED:
# sanitize in the others): the larger networks run the same code of ours
# through the sanitizers many more times, and the plain build runs all nine.
# test/onnx and test/opencl/conformance sample their cases there (their
# lit.local.cfg).
if config.glow_sanitize in ("ON", "1", "TRUE", "YES", "on", "true"):
    config.available_features.add("sanitize")
# Feature long-tests (lit -D long_tests=1): the few tests that take minutes
# each and add little to what the others check (REQUIRES: long-tests;
# README.md, "Tests"): outside the default run, as LLVM's expensive checks.
if lit_config.params.get("long_tests", "0") not in ("0", "", "false"):
    config.available_features.add("long-tests")
if os.path.isdir("/usr/share/libonnx-testdata/data"):
    config.available_features.add("onnx-testdata")
# mlir-opt (Debian: mlir-14-tools) for the benchmark generator's tosa twins
import shutil
if shutil.which("mlir-opt", path=path):
    config.available_features.add("mlir-opt")
# gcc -m32 (Debian: gcc-multilib) for the C backend's 32-bit build test,
# and a kernel that runs 32-bit programs (a kernel built without IA-32
# emulation answers "Exec format error"): the probe builds and runs one.
# It links into a temporary directory: a linker given -o /dev/null
# replaces the device with its output when run as root.
import subprocess
import tempfile
try:
    with tempfile.TemporaryDirectory() as probe_dir:
        exe = os.path.join(probe_dir, "a.out")
        if subprocess.run(["gcc", "-m32", "-x", "c", "-", "-o", exe],
                          input=b"int main(void) { return 0; }\n",
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0 and \
                subprocess.run([exe], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
            config.available_features.add("m32")
except OSError:
    pass
# Cross toolchains for test/cross: feature cross-TARGET when Debian's cross
# compiler builds a static C11 program that uses libm and qemu-user runs it
# (packages gcc-aarch64-linux-gnu, gcc-arm-linux-gnueabihf,
# gcc-riscv64-linux-gnu, qemu-user). Skipped without the compiler, so a
# machine without them pays nothing.
cross_probe = b"""#include <math.h>
int main(int argc, char **argv)
{
	(void)argv;
	return sqrtf((float)(argc + 3)) == 2.0f ? 0 : 1;
}
"""
for cross_target, cross_cc, cross_qemu in (("aarch64", "aarch64-linux-gnu-gcc", "qemu-aarch64"),
                                           ("armhf", "arm-linux-gnueabihf-gcc", "qemu-arm"),
                                           ("riscv64", "riscv64-linux-gnu-gcc", "qemu-riscv64")):
    if not shutil.which(cross_cc, path=path) or not shutil.which(cross_qemu, path=path):
        continue
    try:
        with tempfile.TemporaryDirectory() as probe_dir:
            exe = os.path.join(probe_dir, "a.out")
            if (subprocess.run([cross_cc, "-std=c11", "-O2", "-static", "-x", "c", "-", "-o", exe, "-lm"],
                               input=cross_probe, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL).returncode == 0 and
                    subprocess.run([cross_qemu, exe], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL).returncode == 0):
                config.available_features.add("cross-" + cross_target)
    except OSError:
        pass
config.substitutions.append(("%glow_obj", config.glow_obj_root))
# OpenCL (test/opencl): feature opencl-backend when this build has
# -backend=opencl (the probe's error is about the device, not the name),
# opencl when a device also runs a one-instruction program on it (Debian:
# pocl-opencl-icd gives a CPU device). Tests that run kernels say
# REQUIRES: opencl, so they are unsupported without a device.
opencl_probe = b"""function @p
declare {
  %x = weight mutable float<4>, splat 2.0
  %y = weight mutable float<4>
}
program {
  %r = relu @out %y, @in %x
}
"""
# Compiled C bundles are kept too (backends/c/cbcache.c): the suite compiles
# the same bundle at several levels and on every rerun. A cache named by the
# environment wins, so two build trees (CI's plain and sanitizer suites,
# whose generated C is the same) can share one.
config.environment["GLOW_CBACKEND_CACHE"] = os.environ.get("GLOW_CBACKEND_CACHE") or os.path.join(
    config.glow_obj_root, "test", "cbundle-cache")
# Built OpenCL programs are kept in the build tree, not the user's cache,
# and PoCL's own kernel cache too (it keeps one under the user's home by
# default): the suite then depends on nothing an earlier run left there.
# As for the C bundles, caches named by the environment (GLOW_OPENCL_CACHE,
# POCL_CACHE_DIR) win: CI's plain and sanitizer suites generate the same
# OpenCL programs, so the second one takes the first one's builds instead
# of spending PoCL's compiler time again (.ci/run).
config.environment["GLOW_OPENCL_CACHE"] = os.environ.get("GLOW_OPENCL_CACHE") or os.path.join(
    config.glow_obj_root, "test", "opencl-program-cache")
config.environment["POCL_CACHE_DIR"] = os.environ.get("POCL_CACHE_DIR") or os.path.join(
    config.glow_obj_root, "test", "pocl-cache")
# PoCL builds a generic work-group function of every kernel when it builds
# a program, then at the first launch one specialized to the launch's sizes:
# a second compilation of every kernel, half of PoCL's compile time on the
# model-zoo networks (whose programs have hundreds of kernels), for code
# that runs the same kernels faster. The suite checks results, not speed,
# so PoCL runs the generic ones here (bench/ and users get PoCL's default).
config.environment["POCL_WORK_GROUP_SPECIALIZATION"] = "0"
# What the OpenCL implementation keeps allocated at exit is not ours: a
# sanitizer build's leak checker skips it (test/opencl/lsan.supp).
config.environment["LSAN_OPTIONS"] = "print_suppressions=0:suppressions=" + os.path.join(
    config.glow_src_root, "test", "opencl", "lsan.supp")
try:
    glow_run = os.path.join(config.glow_tools_dir, "glow-run")
    if os.path.exists(glow_run):
        probe_env = dict(os.environ, LSAN_OPTIONS=config.environment["LSAN_OPTIONS"],
                         POCL_CACHE_DIR=config.environment["POCL_CACHE_DIR"],
                         ASAN_OPTIONS=config.environment["ASAN_OPTIONS"])
        p = subprocess.run([glow_run, "-backend=opencl", "-"], input=opencl_probe, env=probe_env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        if p.returncode == 0:
            config.available_features.add("opencl-backend")
            config.available_features.add("opencl")
        elif b"OpenCL" in p.stderr and b"not part of this build" not in p.stderr:
            config.available_features.add("opencl-backend")
except (OSError, subprocess.TimeoutExpired):
    pass
