"""oclformat.py - the lit test format of test/opencl/conformance (see its
lit.local.cfg): test/onnx's harness at level 'opencl' on the conformance
cases the OpenCL backend executes. A module of its own because lit sends
the format to its worker processes by pickling, which needs an importable
class; test/onnx (onnxcase, onnxformat) must be on sys.path.
"""
import lit.Test

import onnxcase
import onnxformat

from oclops import OPENCL_OPS


class OpenCLCaseFormat(onnxformat.OnnxCaseFormat):
    """The test/onnx format at level 'opencl' on the float32 cases of
    OPENCL_OPS' operators (lit.local.cfg)."""

    def __init__(self, roots, folders, run_all, unsupported, xfail):
        super().__init__(roots, folders, ["opencl"], 120, unsupported, xfail, True)
        self.run_all = run_all

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        if path_in_suite != ("opencl", "conformance"):
            return
        cases = []
        for f in self.folders:
            cases += [c for c in onnxcase.discover(self.roots[f], [f])
                      if c.ops and all(t == "float32" for t in c.value_types()) and
                      all(op in OPENCL_OPS for op in c.ops)]
        keep = None if self.run_all else onnxformat.c_backend_subset(cases)
        for c in cases:
            if keep is None or c.key in keep:
                yield lit.Test.Test(testSuite, path_in_suite + ("opencl", c.folder, c.name), localConfig)



    def execute(self, test, litConfig):
        """As test/onnx's, except that a case whose graph still holds nodes
        the OpenCL backend does not execute after glow-opt lowered what it
        could (check-supported names them) is UNSUPPORTED with their names:
        the backend said so, nothing ran."""
        result = super().execute(test, litConfig)
        code, text = result if isinstance(result, tuple) else (result, "")
        if code == lit.Test.FAIL and "is not supported by the opencl backend" in text:
            kinds = sorted(set(line.split(" in @")[0].split(": error: ")[-1].split(" %")[0]
                               for line in text.splitlines() if "is not supported by the opencl backend" in line))
            return lit.Test.UNSUPPORTED, "the OpenCL backend does not execute " + ", ".join(kinds)
        return result
