"""oclformat.py - the lit test format of test/opencl/conformance (see its
lit.local.cfg): test/onnx's harness at level 'opencl' on the conformance
cases the OpenCL backend executes. A module of its own because lit sends
the format to its worker processes by pickling, which needs an importable
class; test/onnx (onnxcase, onnxformat) must be on sys.path.
"""
import os
import resource
import select
import subprocess

import lit.Test

import onnxcase
import onnxformat

from oclops import OPENCL_OPS, OPENCL_SAMPLE_OPS, OPENCL_SAMPLED_OPS, OPENCL_TYPES, OPENCL_VARIANT_OPS


# The ocl-prebuild server of this lit worker process (a worker runs one
# test at a time), started on its first case: it builds each case's device
# program into the program cache before the case's glow-run, so PoCL reads
# its kernel library once per worker instead of once per case
# (backends/opencl/check/ocl-prebuild.c).
_server = None


def prebuild(prog, env, timeout):
    """Sends prog to the worker's ocl-prebuild server and waits for its
    answer; returns (answer, processor seconds) or None where there is no
    server, it died or it did not answer within timeout seconds (it is
    stopped and the next case starts another). Nothing depends on the
    answer: glow-run builds what is missing itself and reports errors."""
    global _server
    if _server is not None and _server.poll() is not None:
        _server = None
    if _server is None:
        try:
            _server = subprocess.Popen(["ocl-prebuild", "-serve"], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        except OSError:
            return None
    try:
        _server.stdin.write((prog + "\n").encode())
        _server.stdin.flush()
        ready, _, _ = select.select([_server.stdout], [], [], timeout)
        line = _server.stdout.readline().decode("utf-8", "replace").split() if ready else []
    except OSError:
        line = []
    if len(line) != 2:
        _server.kill()
        _server.wait()
        _server = None
        return None
    return line[0], float(line[1])


def first_cases(cases, n):
    """The keys of the first n cases by name of each (folder, op type)
    (Case.main_op): n = 1 is test/onnx's onnx_c_subset."""
    groups = {}
    for c in cases:
        groups.setdefault((c.folder, c.main_op()), []).append(c.key)
    return set(k for keys in groups.values() for k in sorted(keys)[:n])


class OpenCLCaseFormat(onnxformat.OnnxCaseFormat):
    """The test/onnx format at level 'opencl' on the cases of OPENCL_OPS'
    operators with OPENCL_TYPES' inputs and outputs (lit.local.cfg).
    which: 'all' (every such case), 'sample' (the first two cases by name of
    each (folder, op type), and every case of OPENCL_VARIANT_OPS' op types)
    or 'subset' (the first case of each (folder, op type) only)."""

    def __init__(self, roots, folders, which, unsupported, xfail):
        super().__init__(roots, folders, ["opencl"], 120, unsupported, xfail)
        self.which = which

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        if path_in_suite != ("opencl", "conformance"):
            return
        cases = []
        for f in self.folders:
            cases += [c for c in onnxcase.discover(self.roots[f], [f])
                      if c.ops and all(t in OPENCL_TYPES for t in c.value_types()) and
                      all(op in OPENCL_OPS for op in c.ops)]
        keep = None
        # the cases with an operator of OPENCL_SAMPLED_OPS (oclops.py): in
        # the sample and the subset only the first case of each folder of
        # OPENCL_SAMPLE_OPS' op types; the others by first_cases
        index = [c for c in cases if set(c.ops) & OPENCL_SAMPLED_OPS]
        rest = [c for c in cases if not set(c.ops) & OPENCL_SAMPLED_OPS]
        if self.which != "all":
            keep = first_cases(rest, 2 if self.which == "sample" else 1)
            keep |= first_cases([c for c in index if c.main_op() in OPENCL_SAMPLE_OPS], 1)
        if self.which == "sample":
            keep |= set(c.key for c in rest if c.main_op() in OPENCL_VARIANT_OPS)
        for c in cases:
            if keep is None or c.key in keep:
                yield lit.Test.Test(testSuite, path_in_suite + ("opencl", c.folder, c.name), localConfig)

    def before_run(self, prog, env, log):
        """The device program of prog built by this worker's ocl-prebuild
        server (prebuild), its processor time kept for cpu.txt."""
        r = prebuild(prog, env, self.timeout)
        log.append("# ocl-prebuild: " + ("%s (%.3f s)" % r if r else "no answer (glow-run builds the program)"))
        self.prebuild_cpu += r[1] if r else 0.0

    def execute(self, test, litConfig):
        """As test/onnx's, except that a case whose graph still holds nodes
        the OpenCL backend does not execute after glow-opt lowered what it
        could (check-supported names them) is UNSUPPORTED with their names:
        the backend said so, nothing ran. The processor time of the
        case's processes and of its ocl-prebuild request goes to cpu.txt
        in its exec dir (a lit worker runs one test at a time), for the
        suite's cost in CI (docs/OpenCL.md)."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.prebuild_cpu = 0.0
        result = super().execute(test, litConfig)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime + self.prebuild_cpu
        tmp = test.getExecPath()
        if os.path.isdir(tmp):
            with open(os.path.join(tmp, "cpu.txt"), "w") as f:
                f.write("%.3f\n" % cpu)
        code, text = result if isinstance(result, tuple) else (result, "")
        if code == lit.Test.FAIL and "is not supported by the opencl backend" in text:
            kinds = sorted(set(line.split(" in @")[0].split(": error: ")[-1].split(" %")[0]
                               for line in text.splitlines() if "is not supported by the opencl backend" in line))
            return lit.Test.UNSUPPORTED, "the OpenCL backend does not execute " + ", ".join(kinds)
        return result
