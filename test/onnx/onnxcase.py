"""onnxcase.py - what the conformance suite needs to know about one ONNX
backend-test case, read with the Python standard library only.

A case is a folder holding model.onnx and test_data_set_0/{input,output}_N.pb.
This module decodes just enough of the protobuf wire format (field numbers
from onnx/onnx.proto) to answer:

  - the graph inputs that are not initializers, and the graph outputs, each
    with its value kind ('tensor', 'sequence', 'optional', 'map', ...) and,
    for tensors, its element type name;
  - the operators of the graph (op_type, with the domain when it is not the
    default one), including those inside subgraph attributes;
  - the nodes of the main graph with their input and output names, and from
    them the graph inputs whose values the importer must know (see
    frozen_inputs());
  - the element type of every TensorProto file of the data set;
  - tolerances from the case's data.json when it has one (ONNX 1.12's
    node, simple and pytorch-* folders carry none: defaults apply).

Used by test/onnx/lit.local.cfg (one lit test per case) and by
utils/conformance.py (the summary). Nothing here runs a model.
"""
import json
import os

# TensorProto.DataType -> name
DTYPES = {
    0: "undefined", 1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
    7: "int64", 8: "string", 9: "bool", 10: "float16", 11: "double", 12: "uint32", 13: "uint64",
    14: "complex64", 15: "complex128", 16: "bfloat16",
}

# the element types of the "788-case" subset of the node folder
CORE_DTYPES = frozenset(["float32", "int64", "int32", "bool"])

DEFAULT_RTOL = 1e-3
DEFAULT_ATOL = 1e-7


class DecodeError(Exception):
    pass


def _varint(buf, pos):
    result = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise DecodeError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 70:
            raise DecodeError("varint too long")


def fields(buf):
    """Yields (field number, wire type, value) of one message; length-
    delimited values are bytes, varints ints, fixed ones raw bytes."""
    pos = 0
    n = len(buf)
    while pos < n:
        key, pos = _varint(buf, pos)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, pos = _varint(buf, pos)
        elif wt == 1:
            v = buf[pos:pos + 8]
            pos += 8
        elif wt == 2:
            ln, pos = _varint(buf, pos)
            v = buf[pos:pos + ln]
            pos += ln
        elif wt == 5:
            v = buf[pos:pos + 4]
            pos += 4
        else:
            raise DecodeError("unsupported wire type %d" % wt)
        if pos > n:
            raise DecodeError("truncated field")
        yield num, wt, v


def _str(b):
    return bytes(b).decode("utf-8", "replace")


def _type_info(buf):
    """TypeProto -> (kind, element type name or None)."""
    for num, _, v in fields(buf):
        if num == 1:  # tensor_type
            return "tensor", DTYPES.get(_by_number(v).last(1, 0), "unknown")
        if num == 4:
            return "sequence", None
        if num == 5:
            return "map", None
        if num == 9:
            return "optional", None
        if num == 8:
            return "sparse_tensor", None
    return "unknown", None


class _Fields(dict):
    """The field values of one message by field number, each list in field
    order; a number the message lacks gives an empty list."""

    def __missing__(self, num):
        return []

    def last(self, num, default):
        """The value of a singular field (the last one wins, as in protobuf)."""
        return self[num][-1] if self[num] else default

    def last_str(self, num):
        return _str(self.last(num, b""))


def _by_number(buf):
    f = _Fields()
    for num, _, v in fields(buf):
        f.setdefault(num, []).append(v)
    return f


def _sub(buf, nums):
    """The values of the fields of buf whose numbers are in nums, in order."""
    return [v for n, _, v in fields(buf) if n in nums]


def _value_info(buf):
    f = _by_number(buf)
    kind, elem = _type_info(f[2][-1]) if f[2] else ("unknown", None)
    return {"name": f.last_str(1), "kind": kind, "dtype": elem}


def _node_ops(buf, ops, nodes=None):
    f = _by_number(buf)
    op, domain = f.last_str(4), f.last_str(7)
    # AttributeProto (5): g = 6, graphs = 11
    subgraphs = [g for a in f[5] for g in _sub(a, (6, 11))]
    name = op if domain in ("", "ai.onnx") else domain + "." + op
    ops.append(name)
    if nodes is not None:
        nodes.append({"op": name, "inputs": [_str(v) for v in f[1]], "outputs": [_str(v) for v in f[2]]})
    for g in subgraphs:
        _graph(g, ops)


def _graph(buf, ops, nodes=None):
    f = _by_number(buf)
    for v in f[1]:
        _node_ops(v, ops, nodes)
    # initializer TensorProto (5): name = 8
    inits = {_str(n) for t in f[5] for n in _sub(t, (8,))}
    inputs = [_value_info(v) for v in f[11]]
    return [i for i in inputs if i["name"] not in inits], [_value_info(v) for v in f[12]]


def read_model(path):
    """model.onnx -> dict(inputs, outputs, ops, nodes, opset); nodes are
    the main graph's, each dict(op, inputs, outputs)."""
    with open(path, "rb") as f:
        buf = f.read()
    ops, nodes = [], []
    inputs, outputs, opset = [], [], None
    for num, _, v in fields(buf):
        if num == 7:
            inputs, outputs = _graph(v, ops, nodes)
        elif num == 8:  # opset_import: domain 1, version 2
            imp = _by_number(v)
            if imp.last_str(1) in ("", "ai.onnx"):
                opset = imp.last(2, 0)
    return {"inputs": inputs, "outputs": outputs, "ops": ops, "nodes": nodes, "opset": opset}


# ---- inputs frozen at import ---------------------------------------------------
#
# The graph IR has static shapes, so some operands must be known when the
# model is imported: those that determine an output shape (Reshape's shape,
# Slice's starts/ends/axes/steps, Compress's condition, ...) and a few scalar parameters the
# importer folds into attributes (Pad's constant value, OneHot's depth,
# CumSum's axis, Dropout's ratio and training mode). IMPORT_OPERANDS lists
# them per op type by operand position; positions an older opset does not
# have are simply absent from its nodes (Slice-1 and Squeeze-1 take
# attributes; Resize-10's operand 1 is its scales, Resize-11's is roi,
# whose values also matter only at import).
#
# A graph input must be frozen when its value reaches such an operand
# through any chain of nodes (Reshape(x, Concat(Shape(x), Cast(n))) needs n);
# the walk stops at Shape and Size, whose outputs depend on their input's
# shape only, so a data input is never frozen just because its shape is
# read. Operands the importer handles at run time (Clip's bounds, Trilu's
# k, Where's condition, Loop's trip count and condition: a Loop region's
# scan outputs take their static length from the model's declared shape)
# are not listed: freezing them would fold away the computation under test. The harness passes -freeze-input NAME=input_N.pb
# for each such input (the case's own test data), and it is not bound
# again at run time.
IMPORT_OPERANDS = {
    "Reshape": (1,), "Expand": (1,), "Tile": (1,), "ConstantOfShape": (0,),
    "Slice": (1, 2, 3, 4), "Pad": (1, 2, 3), "Resize": (1, 2, 3), "Upsample": (1,),
    "TopK": (1,), "Split": (1,), "Squeeze": (1,), "Unsqueeze": (1,),
    "ReduceSum": (1,), "ReduceMean": (1,), "ReduceMax": (1,), "ReduceMin": (1,),
    "ReduceProd": (1,), "ReduceL1": (1,), "ReduceL2": (1,), "ReduceLogSum": (1,),
    "ReduceLogSumExp": (1,), "ReduceSumSquare": (1,),
    "Range": (0, 1, 2), "OneHot": (1,), "CumSum": (1,), "Dropout": (1, 2),
    "HannWindow": (0,), "HammingWindow": (0,), "BlackmanWindow": (0,),
    "DFT": (1,), "STFT": (1, 3), "MelWeightMatrix": (0, 1, 2, 3, 4),
    "RNN": (4,), "GRU": (4,), "LSTM": (4,),
    "Compress": (1,), "MaxUnpool": (2,),
    # quantization parameters are part of the graph IR's quantized types
    # (QuantizeLinear's may be computed at run time: it makes raw integers)
    "DequantizeLinear": (1, 2),
    "QLinearConv": (1, 2, 4, 5, 6, 7, 8), "QLinearMatMul": (1, 2, 4, 5, 6, 7),
    "ConvInteger": (2, 3), "MatMulInteger": (2, 3),
}
# ops whose outputs depend on the shapes of their inputs only
SHAPE_ONLY = frozenset(["Shape", "Size"])


def frozen_inputs(inputs, nodes):
    """The names of the graph inputs (of inputs, the non-initializer graph
    inputs) whose values must be known at import, per IMPORT_OPERANDS."""
    producer = {}
    for n in nodes:
        for o in n["outputs"]:
            if o:
                producer[o] = n
    need = []
    for n in nodes:
        for pos in IMPORT_OPERANDS.get(n["op"], ()):
            if pos < len(n["inputs"]) and n["inputs"][pos]:
                need.append(n["inputs"][pos])
    graph_inputs = set(v["name"] for v in inputs)
    seen, frozen = set(), set()
    while need:
        v = need.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in graph_inputs:
            frozen.add(v)
        n = producer.get(v)
        if n is not None and n["op"] not in SHAPE_ONLY:
            need.extend(i for i in n["inputs"] if i)
    return frozen


def tensor_dtype(path):
    """The element type name of a TensorProto file ('sequence' or
    'optional' when the file holds one of those instead)."""
    with open(path, "rb") as f:
        buf = f.read()
    try:
        for num, _, v in fields(buf):
            if num == 2:
                return DTYPES.get(v, "unknown")
    except DecodeError:
        pass
    return "unknown"


def data_files(case_dir, prefix):
    """Sorted input_N.pb / output_N.pb paths of test_data_set_0."""
    d = os.path.join(case_dir, "test_data_set_0")
    out = []
    if not os.path.isdir(d):
        return out
    for f in os.listdir(d):
        if f.startswith(prefix + "_") and f.endswith(".pb"):
            try:
                out.append((int(f[len(prefix) + 1:-3]), os.path.join(d, f)))
            except ValueError:
                pass
    return [p for _, p in sorted(out)]


def tolerances(case_dir):
    """(rtol, atol): data.json's when present, else the defaults."""
    rtol, atol = DEFAULT_RTOL, DEFAULT_ATOL
    p = os.path.join(case_dir, "data.json")
    if os.path.isfile(p):
        try:
            with open(p) as f:
                j = json.load(f)
            rtol = float(j.get("rtol", rtol))
            atol = float(j.get("atol", atol))
        except (ValueError, OSError, AttributeError):
            pass
    return rtol, atol


class Case:
    """One case folder: its model facts and the dtype classification."""

    def __init__(self, folder, name, case_dir):
        self.folder = folder
        self.name = name
        self.dir = case_dir
        self.key = folder + "/" + name
        m = read_model(os.path.join(case_dir, "model.onnx"))
        self.inputs = m["inputs"]
        self.outputs = m["outputs"]
        self.ops = m["ops"]
        self.opset = m["opset"]
        self.frozen = frozen_inputs(self.inputs, m["nodes"])
        self.input_files = data_files(case_dir, "input")
        self.output_files = data_files(case_dir, "output")
        self.rtol, self.atol = tolerances(case_dir)

    def value_types(self):
        """Every graph input and output as 'dtype' or a non-tensor kind."""
        return [v["dtype"] if v["kind"] == "tensor" else v["kind"] for v in self.inputs + self.outputs]

    def is_core(self):
        """Inputs and outputs only float32, int64, int32 or bool tensors."""
        return all(t in CORE_DTYPES for t in self.value_types())

    def main_op(self):
        """The op type the case is filed under: the model's operator whose
        name, lower-cased, is the longest prefix of the case name without
        'test_' and underscores (test_reduce_sum_square_* is ReduceSumSquare
        even when expanded into other nodes); else the first node's."""
        if not self.ops:
            return "(none)"
        stem = self.name[5:] if self.name.startswith("test_") else self.name
        stem = stem.replace("_", "").lower()
        best = None
        for op in set(self.ops):
            base = op.rsplit(".", 1)[-1].lower()
            if stem.startswith(base) and (best is None or len(base) > len(best.rsplit(".", 1)[-1])):
                best = op
        return best or self.ops[0]


def discover(root, folders):
    """Case objects of root/<folder>/<case> that hold a model.onnx."""
    cases = []
    for folder in folders:
        d = os.path.join(root, folder)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            cd = os.path.join(d, name)
            if os.path.isfile(os.path.join(cd, "model.onnx")):
                cases.append(Case(folder, name, cd))
    return cases


# ---- the UNSUPPORTED and XFAIL lists ----------------------------------------
#
# Both files hold one rule per line, '#' starts a comment:
#
#   KIND[@LEVEL] PATTERN REASON...
#
# KIND is 'dtype' (an element type of a graph input or output), 'kind' (a
# non-tensor value kind of a graph input or output: sequence, optional, map),
# 'op' (an operator used anywhere in the model, 'domain.Op' outside the
# default domain) or 'case' (folder/case). PATTERN is a shell wildcard
# (fnmatch). '@O2' (or any level) restricts a rule to that optimization
# level. The first matching rule gives the reason.

import fnmatch


def load_rules(path):
    """Parses a rule file into (kind, level or None, pattern, reason)."""
    rules = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 2)
            if len(parts) < 3:
                raise ValueError("%s:%d: expected KIND PATTERN REASON" % (path, lineno))
            kind, pattern, reason = parts
            level = None
            if "@" in kind:
                kind, level = kind.split("@", 1)
            if kind not in ("dtype", "kind", "op", "case"):
                raise ValueError("%s:%d: unknown rule kind '%s'" % (path, lineno, kind))
            rules.append((kind, level, pattern, reason))
    return rules


def match_rules(rules, case, level):
    """The reason of the first rule that matches case at level, or None."""
    for kind, lvl, pattern, reason in rules:
        if lvl is not None and lvl != level:
            continue
        if kind == "case":
            subjects = [case.key]
        elif kind == "op":
            subjects = case.ops
        elif kind == "dtype":
            subjects = [v["dtype"] for v in case.inputs + case.outputs if v["kind"] == "tensor"]
        else:
            subjects = [v["kind"] for v in case.inputs + case.outputs]
        if any(fnmatch.fnmatchcase(s, pattern) for s in subjects):
            return reason
    return None
