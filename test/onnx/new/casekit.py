"""casekit.py - what make_cases.py and the case modules beside it share:
the case registry (CASES, @case), the model builders (value infos,
constants, one-node models) and onnxruntime's outputs of a model
(ort-make-case.mjs from ../shared/tools) or a case's own expected outputs.
"""
import json
import os
import subprocess
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.environ.get("ORT_MAKE_CASE", os.path.join(HERE, "../../../../shared/tools/ort-make-case.mjs"))

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def vi(name, dtype, dims):
    return helper.make_tensor_value_info(name, dtype, dims)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def f32(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.float32), name)


def model(nodes, inputs, outputs, opset, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="make_cases.py")
    m.ir_version = 8
    return m


def op_case(op, ins, outs, inputs, outputs, opset, inits=(), /, **attrs):
    """The model of most cases: one node op with attributes attrs, reading
    ins and writing outs (names; "" for an absent optional one), in a graph
    with the value infos inputs and outputs and the initializers inits."""
    return model([helper.make_node(op, ins, outs, **attrs)], inputs, outputs, opset, inits)


CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def ort_outputs(m, inputs):
    """onnxruntime's outputs of model m on the given inputs (through
    ort-make-case.mjs, in a temporary folder)."""
    with tempfile.TemporaryDirectory() as tmp:
        path, ins, out = os.path.join(tmp, "model.onnx"), os.path.join(tmp, "in"), os.path.join(tmp, "out")
        os.makedirs(ins)
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        for i, a in enumerate(inputs):
            with open(os.path.join(ins, "input_%d.pb" % i), "wb") as f:
                f.write(numpy_helper.from_array(a, m.graph.input[i].name).SerializeToString())
        subprocess.run(["node", TOOL, path, out, "--inputs", ins], check=True, env=dict(os.environ))
        res = []
        for i in range(len(m.graph.output)):
            t = TensorProto()
            with open(os.path.join(out, "test_data_set_0", "output_%d.pb" % i), "rb") as f:
                t.ParseFromString(f.read())
            res.append(numpy_helper.to_array(t))
        return res


def write_reference_case(d, m, inputs, outputs, reference=None):
    """CASE/test_data_set_0 and data.json from given inputs and expected
    outputs (numpy's), for operators onnxruntime does not implement."""
    ds = os.path.join(d, "test_data_set_0")
    os.makedirs(ds, exist_ok=True)
    for kind, vals, infos in (("input", inputs, m.graph.input), ("output", outputs, m.graph.output)):
        for i, a in enumerate(vals):
            with open(os.path.join(ds, "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(a), infos[i].name).SerializeToString())
    with open(os.path.join(d, "data.json"), "w") as f:
        json.dump({"atol": 1e-5, "reference": reference or "numpy %s" % np.__version__, "rtol": 1e-3,
                   "source": "model.onnx"}, f, sort_keys=True)
        f.write("\n")
