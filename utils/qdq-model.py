#!/usr/bin/env python3
"""qdq-model.py - writes an int8 QDQ ONNX model of a float ONNX model from
a glow-run profile, with the scales and offsets `glow-opt
-precision=quantize` chooses (docs/Quantization.md), so that onnxruntime
runs the same quantized network as our int8 bundle.

    qdq-model.py MODEL.onnx PROFILE -o OUT.onnx [--schema S] [--per-channel]

MODEL.onnx   a float model (the model zoo's: utils/gen-models.py --weights
             random; weights as initializers or ConstantOfShape fills)
PROFILE      `glow-run -profile=FILE` of the model's -O2 profiling program
             (the profile names values by the ONNX tensor names; an NHWC
             twin "NAME.nhwc" holds the same range)
--schema     asymmetric (default), symmetric, symmetric-uint8, symmetric-pow2
--per-channel  convolution and Gemm/MatMul weights get one scale per output
             channel (symmetric int8, as onnxruntime's per-channel QDQ)
--keep-float OP,...  ONNX operators left in float (as glow-opt -keep-float;
             e.g. Gemm, which the interpreter's pipeline does not quantize)

What it writes: opset 13 (the model's own if newer), BatchNormalization
after a Conv folded into the Conv's weights (as glow-opt -O2 folds it),
Dropout removed, Unsqueeze's axes moved to its input (opset 13), weights
as int8 initializers read through DequantizeLinear (per channel on axis 0
of Conv weights, the output axis of Gemm/MatMul weights), biases as int32
with scale input scale * weight scale, and every activation that a
quantizable operator reads or writes (Conv, Gemm, MatMul, Add, Sum, Mul,
Relu, MaxPool, AveragePool, GlobalAveragePool, Concat, Reshape, Flatten,
Transpose) followed by a QuantizeLinear/DequantizeLinear pair with the
profile's range; data movement (MaxPool, Reshape, Flatten, Transpose)
keeps its input's parameters; a Conv, Gemm, MatMul or Add read only by a
Relu whose parameters represent no negative value gets no pair of its own
(the Relu's range is its result's, as fold-quantization folds such a
quantized Relu into its producer). Softmax,
LRN and the rest stay float.

Needs Debian's python3-onnx (and numpy). Exit 1 with a message on bad
input.
"""
import argparse
import math
import re
import sys

import numpy as np
from onnx import TensorProto, helper, load, numpy_helper, save

QUANTIZED_OPS = {"Conv", "Gemm", "MatMul", "Add", "Sum", "Mul", "Relu", "MaxPool", "AveragePool",
                 "GlobalAveragePool", "Concat", "Reshape", "Flatten", "Transpose"}
MOVING_OPS = {"MaxPool", "Reshape", "Flatten", "Transpose"}
LIMITS = {"int8": (-128, 127), "uint8": (0, 255)}


def fail(msg):
    sys.stderr.write("qdq-model.py: error: %s\n" % msg)
    sys.exit(1)


# ---- the profile (docs/Quantization.md, "The profile file") ----

def read_profile(path):
    """{(name, result): (min, max)} of a glow-profile 1 file."""
    try:
        text = open(path).read()
    except OSError as e:
        fail("%s: %s" % (path, e.strerror))
    text = "\n".join(line.split("#", 1)[0] for line in text.split("\n"))
    toks = re.findall(r'"(?:[^"\\]|\\.)*"|\S+', text)
    if toks[:2] != ["glow-profile", "1"]:
        fail("%s: not a glow-profile 1 file" % path)
    ranges, i = {}, 2
    while i < len(toks):
        try:
            if toks[i] != "value" or toks[i + 3] != "min" or toks[i + 5] != "max" or toks[i + 7] != "bins":
                raise ValueError
            name = re.sub(r'\\(.)', r'\1', toks[i + 1][1:-1])
            res, lo, hi, bins = int(toks[i + 2]), float(toks[i + 4]), float(toks[i + 6]), int(toks[i + 8])
            if toks[i + 9] != "=":
                raise ValueError
        except (ValueError, IndexError):
            fail("%s: malformed entry near token %d ('%s')" % (path, i, toks[i] if i < len(toks) else "end"))
        ranges[(name, res)] = (f32(lo), f32(hi))  # the profile's numbers are floats
        i += 10 + bins
    return ranges


def value_range(ranges, name):
    """The profiled range of ONNX tensor name (or of its NHWC twin)."""
    for key in ((name, 0), (name + ".nhwc", 0)):
        if key in ranges:
            return ranges[key]
    return None


# ---- scales and offsets (docs/Quantization.md, "Scale and offset per schema") ----

def f32(x):
    return float(np.float32(x))


def qparams(lo, hi, schema, signed_only=False):
    """(scale, offset, 'int8' or 'uint8') for the real range [lo, hi]."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    kind = "uint8" if schema == "symmetric-uint8" and lo >= 0 and not signed_only else "int8"
    qmin, qmax = LIMITS[kind]
    if schema == "asymmetric":
        if hi - lo < 1e-6:
            hi = lo + 1e-6
        scale = f32((hi - lo) / (qmax - qmin))
        off = min(max(round_even(qmin - lo / scale), qmin), qmax)
        return scale, int(off), kind
    m = max(-lo, hi)
    if kind == "uint8":
        return f32(max(hi, 1e-6) / 255.0), 0, kind
    m = max(m, 1e-6)
    if schema == "symmetric-pow2":
        return f32(2.0 ** math.ceil(math.log2(m / qmax))), 0, kind
    return f32(m / qmax), 0, kind


def round_even(x):
    return float(np.rint(x))


def quantize(w, scale, off, kind):
    qmin, qmax = LIMITS[kind]
    q = np.rint(w.astype(np.float64) / np.float64(scale)) + off
    return np.clip(q, qmin, qmax).astype(np.int8 if kind == "int8" else np.uint8)


# ---- the model ----

class Builder:
    def __init__(self, model, ranges, schema, per_channel, keep_float):
        self.quantized_ops = QUANTIZED_OPS - set(keep_float)
        self.m = model
        self.g = model.graph
        self.ranges = ranges
        self.schema = schema
        self.per_channel = per_channel
        self.inits = {t.name: t for t in self.g.initializer}
        self.params = {}     # activation name -> (scale, offset, kind)
        self.deq = {}        # activation name -> its DequantizeLinear output
        self.nodes = []
        self.new_inits = []
        self.skipped = []
        self.readers = {}    # activation name -> the name its readers read
        self.relu_fed = set(o for o, r in relu_fed(model.graph).items() if self.clips_nothing(r))

    def clips_nothing(self, relu_out):
        """Relu output relu_out's parameters represent no negative value, so
        the node under the Relu can take them (its saturation clips)."""
        p = self.act_params(relu_out)
        return p is not None and p[0] * (LIMITS[p[2]][0] - p[1]) >= 0

    def const(self, name, array):
        self.new_inits.append(numpy_helper.from_array(array, name))
        return name

    def act_params(self, name):
        if name not in self.params:
            r = value_range(self.ranges, name)
            if r is None:
                return None
            self.params[name] = qparams(r[0], r[1], self.schema)
        return self.params[name]

    def qdq(self, name):
        """The DequantizeLinear output of activation name's QDQ pair."""
        if name in self.deq:
            return self.deq[name]
        p = self.act_params(name)
        if p is None:
            self.skipped.append(name)
            return name
        scale, off, kind = p
        s = self.const(name + "_scale", np.array(scale, dtype=np.float32))
        z = self.const(name + "_zp", np.array(off, dtype=np.int8 if kind == "int8" else np.uint8))
        self.nodes.append(helper.make_node("QuantizeLinear", [name, s, z], [name + "_q"]))
        self.nodes.append(helper.make_node("DequantizeLinear", [name + "_q", s, z], [name + "_dq"]))
        self.deq[name] = name + "_dq"
        return self.deq[name]

    def weight(self, name, axis):
        """A float initializer as int8 through DequantizeLinear; returns
        (DequantizeLinear output, scales)."""
        w = numpy_helper.to_array(self.inits[name]).astype(np.float32)
        if self.per_channel:
            moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
            ps = [qparams(float(c.min()), float(c.max()), "symmetric", True) for c in moved]
            scales = np.array([p[0] for p in ps], dtype=np.float32)
            shape = [1] * w.ndim
            shape[axis] = -1
            q = quantize(w, scales.reshape(shape), 0, "int8")
            zp = np.zeros(len(ps), dtype=np.int8)
        else:
            scale, off, _ = qparams(float(w.min()), float(w.max()), self.schema, True)
            scales = np.array(scale, dtype=np.float32)
            q, zp = quantize(w, scale, off, "int8"), np.array(off, dtype=np.int8)
        qn = self.const(name + "_q", q)
        s = self.const(name + "_scale", scales)
        z = self.const(name + "_zp", zp)
        attrs = {"axis": axis} if self.per_channel else {}
        self.nodes.append(helper.make_node("DequantizeLinear", [qn, s, z], [name + "_dq"], **attrs))
        return name + "_dq", scales

    def bias(self, name, in_scale, w_scales):
        b = numpy_helper.to_array(self.inits[name]).astype(np.float64)
        scale = (np.float32(in_scale) * w_scales).astype(np.float32)
        q = np.clip(np.rint(b / scale.astype(np.float64)), -2 ** 31, 2 ** 31 - 1).astype(np.int32)
        qn = self.const(name + "_q", q)
        s = self.const(name + "_scale", scale)
        z = self.const(name + "_zp", np.zeros(scale.shape, dtype=np.int32))
        attrs = {"axis": 0} if self.per_channel else {}
        self.nodes.append(helper.make_node("DequantizeLinear", [qn, s, z], [name + "_dq"], **attrs))
        return name + "_dq"

    def linear(self, n, waxis):
        """Conv, Gemm, MatMul with an initializer weight (input 1) and
        optional bias (input 2)."""
        x = n.input[0]
        if n.input[1] not in self.inits or self.act_params(x) is None:
            return False
        xd = self.qdq(x)
        wd, ws = self.weight(n.input[1], waxis)
        ins = [xd, wd]
        if len(n.input) > 2 and n.input[2]:
            if n.input[2] not in self.inits:
                return False
            ins.append(self.bias(n.input[2], self.params[x][0], ws))
        self.nodes.append(helper.make_node(n.op_type, ins, list(n.output), name=n.name, **attrs_of(n)))
        return True

    def run(self):
        for n in self.g.node:
            op = n.op_type
            done = False
            if op not in self.quantized_ops:
                pass
            elif op == "Conv":
                done = self.linear(n, 0)
            elif op == "Gemm" and not any(a.name == "transA" and a.i for a in n.attribute):
                done = self.linear(n, 0 if any(a.name == "transB" and a.i for a in n.attribute) else 1)
            elif op == "MatMul":
                done = self.linear(n, 1)
            if not done and op in self.quantized_ops:
                ins = [self.qdq(i) if i and i not in self.inits and i not in self.relu_fed else i for i in n.input]
                if op in MOVING_OPS and n.input[0] in self.params and n.output[0] not in self.params:
                    self.params[n.output[0]] = self.params[n.input[0]]
                self.nodes.append(helper.make_node(op, ins, list(n.output), name=n.name, **attrs_of(n)))
                done = True
            if not done:
                self.nodes.append(n)
            if op in self.quantized_ops:
                for o in n.output:
                    if o not in self.relu_fed:
                        self.qdq_after(o)

    def qdq_after(self, name):
        """Activation name gets its QDQ pair now (after its producer); every
        reader reads the pair's output (finish)."""
        self.readers[name] = self.qdq(name)

    def finish(self):
        """The nodes, reading the QDQ outputs of the activations (but the
        QuantizeLinear of each pair, which reads the activation itself)."""
        for n in self.nodes:
            if n.op_type != "QuantizeLinear":
                n.input[:] = [self.readers.get(i, i) for i in n.input]
        return self.nodes


def relu_fed(g):
    """{output: the Relu's output} of the Conv, Gemm, MatMul and Add nodes
    whose output only a Relu reads (and that are no graph output)."""
    readers = {}
    for n in g.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    outs = set(o.name for o in g.output)
    return {o: readers[o][0].output[0] for n in g.node if n.op_type in ("Conv", "Gemm", "MatMul", "Add")
            for o in n.output if len(readers.get(o, [])) == 1 and readers[o][0].op_type == "Relu" and o not in outs}


def attrs_of(n):
    return {a.name: helper.get_attribute_value(a) for a in n.attribute}


def preprocess(model):
    """ConstantOfShape fills as initializers, Dropout removed, Unsqueeze's
    axes as an input, BatchNormalization folded into the Conv before it."""
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    rename, nodes = {}, []
    for n in g.node:
        n.input[:] = [rename.get(i, i) for i in n.input]
        if n.op_type == "ConstantOfShape" and n.input[0] in inits:
            shape = numpy_helper.to_array(inits[n.input[0]]).astype(np.int64)
            val = np.zeros(1, dtype=np.float32)
            for a in n.attribute:
                if a.name == "value":
                    val = numpy_helper.to_array(a.t)
            t = numpy_helper.from_array(np.full(shape, val.reshape(-1)[0], dtype=val.dtype), n.output[0])
            g.initializer.append(t)
            inits[t.name] = t
            continue
        if n.op_type == "Dropout":
            rename[n.output[0]] = n.input[0]
            continue
        if n.op_type == "Unsqueeze" and len(n.input) == 1:
            axes = [a for a in n.attribute if a.name == "axes"][0].ints
            t = numpy_helper.from_array(np.array(list(axes), dtype=np.int64), n.output[0] + "_axes")
            g.initializer.append(t)
            inits[t.name] = t
            n.input.append(t.name)
            del n.attribute[:]
        nodes.append(n)
    for o in g.output:
        if o.name in rename:
            fail("graph output %s is a Dropout's" % o.name)
    nodes = fold_batchnorm(nodes, inits, g)
    del g.node[:]
    g.node.extend(nodes)


def fold_batchnorm(nodes, inits, g):
    users = {}
    for n in nodes:
        for i in n.input:
            users[i] = users.get(i, 0) + 1
    producer = {o: n for n in nodes for o in n.output}
    out = []
    for n in nodes:
        p = producer.get(n.input[0]) if n.op_type == "BatchNormalization" else None
        if p is None or p.op_type != "Conv" or users.get(n.input[0]) != 1 or p.input[1] not in inits or \
                not all(i in inits for i in n.input[1:5]):
            out.append(n)
            continue
        eps = next((a.f for a in n.attribute if a.name == "epsilon"), 1e-5)
        gam, beta, mean, var = (numpy_helper.to_array(inits[i]).astype(np.float64) for i in n.input[1:5])
        k = gam / np.sqrt(var + eps)
        w = numpy_helper.to_array(inits[p.input[1]]).astype(np.float64)
        b = numpy_helper.to_array(inits[p.input[2]]).astype(np.float64) if len(p.input) > 2 and p.input[2] \
            else np.zeros(w.shape[0])
        wn, bn = p.input[1] + "_bn", p.output[0] + "_bn_bias"
        for name, arr in ((wn, w * k.reshape(-1, 1, 1, 1)), (bn, (b - mean) * k + beta)):
            t = numpy_helper.from_array(arr.astype(np.float32), name)
            g.initializer.append(t)
            inits[name] = t
        p.input[:] = [p.input[0], wn, bn]
        p.output[0] = n.output[0]
    return out


def main():
    ap = argparse.ArgumentParser(description="int8 QDQ ONNX model from a float model and a glow-run profile")
    ap.add_argument("model")
    ap.add_argument("profile")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--schema", default="asymmetric",
                    choices=["asymmetric", "symmetric", "symmetric-uint8", "symmetric-pow2"])
    ap.add_argument("--per-channel", action="store_true")
    ap.add_argument("--keep-float", default="", metavar="OP,...")
    a = ap.parse_args()
    keep = [k for k in a.keep_float.split(",") if k]
    for k in keep:
        if k not in QUANTIZED_OPS:
            fail("--keep-float: '%s' is not an operator this script quantizes (%s)" % (k, ", ".join(sorted(QUANTIZED_OPS))))
    try:
        model = load(a.model)
    except Exception as e:  # onnx raises DecodeError and others
        fail("%s: %s" % (a.model, e))
    ranges = read_profile(a.profile)
    preprocess(model)
    b = Builder(model, ranges, a.schema, a.per_channel, keep)
    for i in model.graph.input:
        if i.name not in b.inits and i.type.tensor_type.elem_type == TensorProto.FLOAT:
            b.qdq_after(i.name)
    b.run()
    nodes = b.finish()
    if not any(n.op_type == "QuantizeLinear" for n in nodes):
        fail("the profile names none of the model's activations")
    g = model.graph
    del g.node[:]
    g.node.extend(nodes)
    g.initializer.extend(b.new_inits)
    used = set(i for n in g.node for i in n.input)
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    for op in model.opset_import:
        if op.domain in ("", "ai.onnx") and op.version < 13:
            op.version = 13
    save(model, a.output)
    if b.skipped:
        sys.stderr.write("qdq-model.py: %d activations have no profile entry and stay float: %s\n"
                         % (len(set(b.skipped)), ", ".join(sorted(set(b.skipped))[:8])))


if __name__ == "__main__":
    main()
