"""cases_narrow.py - the conformance cases of the narrow element types
(issue 15): float8, int4/uint4, float8e8m0, DequantizeLinear's
output_dtype and QuantizeLinear's precision, blocked quantization with
parameters known at import or computed at run time. make_cases.py imports
this module, which registers them (casekit's @case).
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from casekit import F, case, f32, model, vi



# ---- float8 and int4/uint4 (issue 15): graph inputs and outputs stay
# float/int32 (the runner's types); the new types live inside the model ----

F8 = {"e4m3fn": 17, "e4m3fnuz": 18, "e5m2": 19, "e5m2fnuz": 20}
U4, I4 = 21, 22


def raw_tensor(name, dtype, dims, raw=None, int32=None):
    """A TensorProto of a type ONNX 1.12's helpers do not know: raw_data
    bytes (4-bit values already packed) or int32_data values."""
    t = TensorProto()
    t.name, t.data_type = name, dtype
    t.dims.extend(dims)
    if raw is not None:
        t.raw_data = bytes(raw)
    else:
        t.int32_data.extend(int32)
    return t


def pack4(values):
    """4-bit values two per byte, the first in the low nibble (onnx.proto)."""
    v = [x & 0xF for x in values] + ([0] if len(values) % 2 else [])
    return [v[i] | v[i + 1] << 4 for i in range(0, len(v), 2)]


def f8_inputs():
    """Edge values of the four formats (halfway points, the largest finite
    values and past them, subnormals, infinities, NaN, signed zeros) and
    seeded random values over their ranges."""
    edges = [0.0, -0.0, 1.0, -1.5, 0.3, 448, 464, 470, 480, 500, -464, -470, 240, 248, 250, 256, 57344, 61440,
             61441, 65536, 1e9, -1e9, np.inf, -np.inf, np.nan, 2.0**-9, 2.0**-10, 3 * 2.0**-11, -2.0**-10,
             -2.0**-11, -2.0**-12, 2.0**-16, 2.0**-17, 3 * 2.0**-18, -2.0**-17, -2.0**-18, 1.0625, 1.1875,
             -0.0234375, 100.5, 3.14159]
    rng = np.random.default_rng(15)
    rand = rng.standard_normal(87) * np.exp2(rng.integers(-14, 16, 87))
    return np.array(edges + list(rand), dtype=np.float32)


@case
def cast19_float8():
    nodes, outs = [], []
    for name, dt in F8.items():
        for sat in (1, 0):
            o = "%s_%s" % (name, "sat" if sat else "nosat")
            nodes += [helper.make_node("Cast", ["x"], [o + "_8"], to=dt, saturate=sat),
                      helper.make_node("Cast", [o + "_8"], [o], to=F)]
            outs.append(vi(o, F, [128]))
    return model(nodes, [vi("x", F, [128])], outs, 19), [f8_inputs()]


@case
def castlike19_float8():
    like = raw_tensor("like", F8["e5m2"], [1], raw=[0])
    nodes = [helper.make_node("CastLike", ["x", "like"], ["x8"]),
             helper.make_node("Cast", ["x8"], ["y"], to=F),
             helper.make_node("Cast", ["x8"], ["i"], to=TensorProto.INT32),
             helper.make_node("Cast", ["x8"], ["h"], to=F8["e4m3fn"]),
             helper.make_node("Cast", ["h"], ["z"], to=F)]
    return model(nodes, [vi("x", F, [16])], [vi("y", F, [16]), vi("i", TensorProto.INT32, [16]), vi("z", F, [16])],
                 19, [like]), [np.array([0, -0.0, 0.7, -2.5, 3.5, 100, 1000, -1000, 30000, 60000, 1e6, -np.inf,
                                         0.01, 7.9, -7.9, 448], dtype=np.float32)]


@case
def cast21_int4():
    nodes = [helper.make_node("Cast", ["x"], ["x4"], to=I4), helper.make_node("Cast", ["x4"], ["a"], to=F),
             helper.make_node("Cast", ["x"], ["u4"], to=U4), helper.make_node("Cast", ["u4"], ["b"], to=F),
             helper.make_node("Cast", ["n"], ["n4"], to=I4), helper.make_node("Cast", ["n4"], ["c"], to=TensorProto.INT32)]
    x = np.concatenate([np.arange(-9.5, 16.75, 0.25), [np.nan, np.inf, -np.inf, -0.0]]).astype(np.float32)
    n = np.arange(-20, 21, dtype=np.int32)
    return model(nodes, [vi("x", F, [len(x)]), vi("n", TensorProto.INT32, [len(n)])],
                 [vi("a", F, [len(x)]), vi("b", F, [len(x)]), vi("c", TensorProto.INT32, [len(n)])], 21), [x, n]


@case
def qdq19_float8():
    s = f32("s", 0.05)
    sa = f32("sa", [0.5, 1, 2, 4, 8, 0.01])
    z8 = raw_tensor("z8", F8["e4m3fn"], [], raw=[0])
    z5 = raw_tensor("z5", F8["e5m2"], [6], raw=[0] * 6)
    zu = raw_tensor("zu", F8["e4m3fnuz"], [], raw=[0])
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z8"], ["q1"]),
             helper.make_node("DequantizeLinear", ["q1", "s", "z8"], ["y1"]),
             helper.make_node("QuantizeLinear", ["x", "sa", "z5"], ["q2"], axis=1),
             helper.make_node("DequantizeLinear", ["q2", "sa", "z5"], ["y2"], axis=1),
             helper.make_node("QuantizeLinear", ["x", "s", "zu"], ["q3"], saturate=0),
             helper.make_node("DequantizeLinear", ["q3", "s", "zu"], ["y3"])]
    return model(nodes, [vi("x", F, [4, 6])], [vi("y1", F, [4, 6]), vi("y2", F, [4, 6]), vi("y3", F, [4, 6])], 19,
                 [s, sa, z8, z5, zu]), [np.array(np.linspace(-30, 30, 24).reshape(4, 6), dtype=np.float32)]


@case
def qdq21_int4_blocked():
    sa = f32("sa", [0.1, 0.2, 0.5, 1.0])
    za = raw_tensor("za", I4, [4], raw=pack4([-1, 0, 2, -3]))
    sb = f32("sb", np.array([0.1, 0.3, 0.05, 0.2, 0.5, 1, 0.7, 0.2, 0.1, 0.25, 0.125, 2], dtype=np.float32).reshape(4, 3))
    zb = raw_tensor("zb", U4, [4, 3], int32=pack4([8, 7, 0, 15, 3, 9, 8, 8, 1, 2, 14, 5]))
    sc = f32("sc", np.array([0.01, 0.02, 0.05, 0.03, 0.04, 0.1, 0.02, 0.01], dtype=np.float32).reshape(4, 2))
    zc = numpy_helper.from_array(np.array([[128, 100], [0, 255], [30, 140], [128, 128]], dtype=np.uint8), "zc")
    nodes = [helper.make_node("QuantizeLinear", ["x", "sa", "za"], ["qa"], axis=0),
             helper.make_node("DequantizeLinear", ["qa", "sa", "za"], ["ya"], axis=0),
             helper.make_node("QuantizeLinear", ["x", "sb", "zb"], ["qb"], axis=1, block_size=3),
             helper.make_node("DequantizeLinear", ["qb", "sb", "zb"], ["yb"], axis=1, block_size=3),
             helper.make_node("QuantizeLinear", ["x", "sc", "zc"], ["qc"], axis=-1, block_size=4),
             helper.make_node("DequantizeLinear", ["qc", "sc", "zc"], ["yc"], axis=-1, block_size=4)]
    return model(nodes, [vi("x", F, [4, 8])], [vi("ya", F, [4, 8]), vi("yb", F, [4, 8]), vi("yc", F, [4, 8])], 21,
                 [sa, za, sb, zb, sc, zc]), [np.array(np.linspace(-3, 3, 32).reshape(4, 8), dtype=np.float32)]


@case
def dq21_int4_weights():
    w = raw_tensor("w", I4, [5, 3], raw=pack4([-8, -7, -1, 0, 1, 2, 3, 4, 5, 6, 7, -2, -3, -4, -5]))
    sw = f32("sw", [0.5, 0.25, 0.125])
    zw = raw_tensor("zw", I4, [3], raw=pack4([1, -1, 0]))
    w8 = raw_tensor("w8", F8["e5m2"], [3], int32=[0x3C, 0xC2, 0x01])
    s8 = f32("s8", 0.5)
    nodes = [helper.make_node("DequantizeLinear", ["w", "sw", "zw"], ["wf"], axis=1),
             helper.make_node("Add", ["x", "wf"], ["y"]),
             helper.make_node("DequantizeLinear", ["w8", "s8"], ["bf"]),
             helper.make_node("Add", ["y", "bf"], ["z"])]
    # an Add, not a MatMul: onnxruntime fuses DequantizeLinear(int4) and
    # MatMul into MatMulNBits, whose result is 0.4% off the exact product
    return model(nodes, [vi("x", F, [5, 3])], [vi("z", F, [5, 3])], 21, [w, sw, zw, w8, s8])


@case
def dq21_uint8_blocked_cast_float8():
    """uint8 initializers (no graph kind of their own) dequantized blocked
    and cast to float8 and back."""
    w = numpy_helper.from_array(np.array([[0, 10, 200, 255], [128, 129, 3, 4]], dtype=np.uint8), "w")
    s = f32("s", np.array([[0.5, 1], [2, 4]], dtype=np.float32))
    z = numpy_helper.from_array(np.array([[128, 0], [10, 255]], dtype=np.uint8), "z")
    nodes = [helper.make_node("DequantizeLinear", ["w", "s", "z"], ["wf"], axis=1, block_size=2),
             helper.make_node("Cast", ["w"], ["w8"], to=F8["e5m2"]),
             helper.make_node("Cast", ["w8"], ["wb"], to=F),
             helper.make_node("Add", ["x", "wf"], ["y"]),
             helper.make_node("Add", ["y", "wb"], ["o"])]
    return model(nodes, [vi("x", F, [2, 4])], [vi("o", F, [2, 4])], 21, [w, s, z])


# ---- float8e8m0 (opset 24), DequantizeLinear's output_dtype and
# QuantizeLinear's precision (opset 23), blocked quantization with
# parameters computed at run time (issue 15) ----

E8M0 = 24


@case
def cast24_float8e8m0():
    """Cast to float8e8m0 in each round_mode, saturating or not, and back:
    powers of two, halfway points, both ends of the range and past them,
    zeros, negative values, infinities, NaN, float subnormals."""
    nodes, outs = [], []
    for mode in ("up", "down", "nearest"):
        for sat in (1, 0):
            o = "%s_%s" % (mode, "sat" if sat else "nosat")
            nodes += [helper.make_node("Cast", ["x"], [o + "_8"], to=E8M0, saturate=sat, round_mode=mode),
                      helper.make_node("Cast", [o + "_8"], [o], to=F)]
            outs.append(vi(o, F, [48]))
    edges = [0.0, -0.0, 1.0, 0.2, 0.25, 0.26, 0.75, 1.25, 1.5, 1.75, 2.5, 3.0, 3.5, 5, 6, 7, 100, -100, -1.3,
             np.inf, -np.inf, np.nan, 2.0**-127, 2.0**-126, 3 * 2.0**-127, 1.5 * 2.0**-127, 2.0**-149, 2.0**-128,
             2.0**127, 1.7e38, 3e38, 2.0**-126 * 1.5]
    rng = np.random.default_rng(24)
    rand = np.abs(rng.standard_normal(16)) * np.exp2(rng.integers(-60, 60, 16))
    return model(nodes, [vi("x", F, [48])], outs, 24), [np.array(edges + list(rand), dtype=np.float32)]


@case
def dq23_output_dtype_float16():
    """DequantizeLinear to float16 (output_dtype, and a float16 scale
    computed at run time), QuantizeLinear dividing in float16 (precision)
    and DequantizeLinear with a float32 scale computed at run time."""
    H = TensorProto.FLOAT16
    s = numpy_helper.from_array(np.array(0.1, dtype=np.float16), "s")
    w = numpy_helper.from_array(np.arange(0, 240, 10, dtype=np.uint8).reshape(4, 6), "w")
    sa = numpy_helper.from_array(np.array([0.5, 0.3, 0.01, 2.5, 7, 0.125], dtype=np.float16), "sa")
    zi = numpy_helper.from_array(np.array(3, dtype=np.int8), "zi")
    nodes = [helper.make_node("DequantizeLinear", ["w", "s"], ["h1"], output_dtype=H),
             helper.make_node("Cast", ["h1"], ["y1"], to=F),
             helper.make_node("Cast", ["x"], ["sh"], to=H),
             helper.make_node("DequantizeLinear", ["w", "sh"], ["h2"]),
             helper.make_node("Cast", ["h2"], ["y2"], to=F),
             helper.make_node("DequantizeLinear", ["w", "sa"], ["h3"], axis=1),
             helper.make_node("Cast", ["h3"], ["y3"], to=F),
             helper.make_node("QuantizeLinear", ["v", "sq", "zi"], ["q"], precision=H),
             helper.make_node("Cast", ["q"], ["y4"], to=F),
             helper.make_node("DequantizeLinear", ["w", "x"], ["y5"])]
    v = np.linspace(-13, 13, 24, dtype=np.float32).reshape(4, 6)
    return model(nodes, [vi("x", F, []), vi("v", F, [4, 6])], [vi(o, F, [4, 6]) for o in ("y1", "y2", "y3", "y4", "y5")],
                 23, [s, w, sa, zi, f32("sq", 0.07)]), [np.array(0.07, dtype=np.float32), v]


@case
def qdq21_blocked_runtime_params():
    """Blocked QuantizeLinear and DequantizeLinear whose scales (graph
    inputs) and zero points (cast at run time) are known only at run time:
    int8 along the last axis (a short last block), int4 along the first,
    uint8 with a zero point."""
    nodes = [helper.make_node("QuantizeLinear", ["x", "sa"], ["qa"], axis=1, block_size=4, output_dtype=TensorProto.INT8),
             helper.make_node("DequantizeLinear", ["qa", "sa"], ["ya"], axis=1, block_size=4),
             helper.make_node("Cast", ["zb"], ["zb4"], to=I4),
             helper.make_node("QuantizeLinear", ["x", "sb", "zb4"], ["qb"], axis=0, block_size=3),
             helper.make_node("DequantizeLinear", ["qb", "sb", "zb4"], ["yb"], axis=0, block_size=3),
             helper.make_node("Cast", ["zc"], ["zc8"], to=TensorProto.UINT8),
             helper.make_node("QuantizeLinear", ["x", "sc", "zc8"], ["qc"], axis=-1, block_size=3),
             helper.make_node("DequantizeLinear", ["qc", "sc", "zc8"], ["yc"], axis=-1, block_size=3)]
    x = np.linspace(-3, 3, 30, dtype=np.float32).reshape(5, 6)
    sa = np.array([[0.1, 0.2], [0.3, 0.05], [0.01, 0.5], [1, 2], [0.02, 0.04]], dtype=np.float32)
    sb = np.array([[0.3, 0.4, 0.5, 0.2, 0.1, 0.6], [0.25, 0.5, 1, 0.125, 0.2, 0.3]], dtype=np.float32)
    zb = np.array([[1, -2, 0, 3, -8, 7], [0, 1, 2, -1, -3, 4]], dtype=np.float32)
    sc = np.array([[0.02, 0.05], [0.01, 0.03], [0.04, 0.02], [0.05, 0.01], [0.03, 0.02]], dtype=np.float32)
    zc = np.array([[128, 100], [0, 255], [30, 140], [128, 128], [7, 250]], dtype=np.float32)
    ins = [vi("x", F, [5, 6]), vi("sa", F, [5, 2]), vi("sb", F, [2, 6]), vi("zb", F, [2, 6]), vi("sc", F, [5, 2]),
           vi("zc", F, [5, 2])]
    return model(nodes, ins, [vi(o, F, [5, 6]) for o in ("ya", "yb", "yc")], 21), [x, sa, sb, zb, sc, zc]


# ---- BitCast (opset 26): the bits of each element as another type of the
# same width; graph inputs and outputs float/int32/bool, the reinterpreted
# types inside the model ----

def bits_inputs():
    """float32 values whose bit patterns cover the edges: signed zeros,
    subnormals, the largest finite value, infinities, NaN, and seeded
    random values."""
    edges = [0.0, -0.0, 1.0, -1.0, 1.5, 2.0**-149, -2.0**-149, 2.0**-126, 3.4028235e38, -3.4028235e38, np.inf,
             -np.inf, np.nan, 0.1, -7.25]
    rng = np.random.default_rng(26)
    return np.array(edges + list(rng.standard_normal(17) * 100), dtype=np.float32)


@case
def bitcast26_float_int32():
    """float32 -> int32 and back, through an integer add (the next float
    away from zero), both directions of a 32-bit BitCast."""
    one = helper.make_tensor("one", TensorProto.INT32, [1], [1])
    nodes = [helper.make_node("BitCast", ["x"], ["i"], to=TensorProto.INT32),
             helper.make_node("Add", ["i", "one"], ["j"]),
             helper.make_node("BitCast", ["j"], ["y"], to=F)]
    return model(nodes, [vi("x", F, [32])], [vi("i", TensorProto.INT32, [32]), vi("y", F, [32])], 26, [one]), \
        [bits_inputs()]


@case
def bitcast26_16bit_8bit():
    """float16 <-> bfloat16 (the same 16 bits read as the other format)
    and int8 <-> uint8, by way of Casts from and to the graph's float and
    int32 (int32 to int8 wraps: 300 is 44)."""
    nodes = [helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
             helper.make_node("BitCast", ["h"], ["b"], to=TensorProto.BFLOAT16),
             helper.make_node("Cast", ["b"], ["yb"], to=F),
             helper.make_node("Cast", ["x"], ["bb"], to=TensorProto.BFLOAT16),
             helper.make_node("BitCast", ["bb"], ["hh"], to=TensorProto.FLOAT16),
             helper.make_node("Cast", ["hh"], ["yh"], to=F),
             helper.make_node("Cast", ["k"], ["k8"], to=TensorProto.INT8),
             helper.make_node("BitCast", ["k8"], ["u8"], to=TensorProto.UINT8),
             helper.make_node("Cast", ["u8"], ["yu"], to=TensorProto.INT32),
             helper.make_node("BitCast", ["u8"], ["s8"], to=TensorProto.INT8),
             helper.make_node("Cast", ["s8"], ["ys"], to=TensorProto.INT32)]
    x = np.array([0, -0.0, 1, -2.5, 0.1, 3.14159, 65504, -1e-5, 6e-8, 1e4, np.inf, -np.inf, np.nan, 7, -7, 0.5],
                 dtype=np.float32)
    k = np.array([0, 1, -1, 127, -128, 100, -100, 55, -55, 64, -64, 300, -200, 256, -129, 70000], dtype=np.int32)
    outs = [vi("yb", F, [16]), vi("yh", F, [16]), vi("yu", TensorProto.INT32, [16]), vi("ys", TensorProto.INT32, [16])]
    return model(nodes, [vi("x", F, [16]), vi("k", TensorProto.INT32, [16])], outs, 26), [x, k]


@case
def bitcast26_narrow():
    """The one-byte and 4-bit types, which onnxruntime 1.30's BitCast does
    not implement (so the expected outputs are numpy's bit reinterpretation:
    an e5m2 code is the high byte of a float16): uint8 -> float8e5m2,
    int4 <-> uint4 (the nibble re-read: -1 is 15), uint8 -> bool (a nonzero
    byte is true) and bool -> uint8."""
    nodes = [helper.make_node("Cast", ["k"], ["ku"], to=TensorProto.UINT8),
             helper.make_node("BitCast", ["ku"], ["e5"], to=F8["e5m2"]),
             helper.make_node("Cast", ["e5"], ["ye5"], to=F),
             helper.make_node("Cast", ["n"], ["n4"], to=I4),
             helper.make_node("BitCast", ["n4"], ["u4"], to=U4),
             helper.make_node("Cast", ["u4"], ["yu4"], to=TensorProto.INT32),
             helper.make_node("BitCast", ["u4"], ["i4"], to=I4),
             helper.make_node("Cast", ["i4"], ["yi4"], to=TensorProto.INT32),
             helper.make_node("BitCast", ["ku"], ["bo"], to=TensorProto.BOOL),
             helper.make_node("BitCast", ["bo"], ["bu"], to=TensorProto.UINT8),
             helper.make_node("Cast", ["bu"], ["ybu"], to=TensorProto.INT32)]
    k = np.array([0, 1, 2, 60, 61, 64, 100, 123, 124, 127, 128, 129, 188, 200, 252, 255], dtype=np.int32)
    n = np.array([0, 1, -1, 7, -8, 3, -3, 5, -5, 2, -2, 6, -6, 4, -4, -7], dtype=np.int32)
    outs = [vi("ye5", F, [16]), vi("yu4", TensorProto.INT32, [16]), vi("yi4", TensorProto.INT32, [16]),
            vi("bo", TensorProto.BOOL, [16]), vi("ybu", TensorProto.INT32, [16])]
    ins = [vi("k", TensorProto.INT32, [16]), vi("n", TensorProto.INT32, [16])]
    ye5 = (k.astype(np.uint16) << 8).view(np.float16).astype(np.float32)
    u4 = (n & 0xF).astype(np.int32)
    i4 = np.where(u4 >= 8, u4 - 16, u4).astype(np.int32)
    bo = k != 0
    expected = [ye5, u4, i4, bo, bo.astype(np.int32)]
    return (model(nodes, ins, outs, 26), [k, n], expected,
            "numpy %s: bit reinterpretation (onnxruntime 1.30 has no BitCast of these types)" % np.__version__)


@case
def cast19_int8_uint8_wrap():
    """Cast between int32, uint8 and int8 in every direction, values outside
    the narrow ranges included: onnxruntime keeps the low byte (300 is 44
    as uint8, 200 is -56 as int8)."""
    nodes = [helper.make_node("Cast", ["k"], ["u"], to=TensorProto.UINT8),
             helper.make_node("Cast", ["u"], ["s"], to=TensorProto.INT8),
             helper.make_node("Cast", ["s"], ["ys"], to=TensorProto.INT32),
             helper.make_node("Cast", ["k"], ["s2"], to=TensorProto.INT8),
             helper.make_node("Cast", ["s2"], ["u2"], to=TensorProto.UINT8),
             helper.make_node("Cast", ["u2"], ["yu"], to=TensorProto.INT32)]
    k = np.array([0, 1, -1, 127, -128, 128, 255, 256, 300, -200, 200, -129, 70000, -70000, 2**31 - 1, -2**31],
                 dtype=np.int32)
    outs = [vi("ys", TensorProto.INT32, [16]), vi("yu", TensorProto.INT32, [16])]
    return model(nodes, [vi("k", TensorProto.INT32, [16])], outs, 19), [k]
