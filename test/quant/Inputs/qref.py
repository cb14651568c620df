#!/usr/bin/env python3
"""qref.py - an independent reference of the quantized arithmetic of
docs/Quantization.md, in plain Python (no numpy), for test/quant.

  qref.py gen CASE DIR     writes DIR/CASE.glow (the one node under test,
                           its quantized placeholders and constants) and
                           DIR/CASE.<input>.npy for every input (seeded
                           random stored integers)
  qref.py check CASE DIR   reads DIR/CASE.out.npy (glow-run -o) and compares
                           it with the reference's stored integers; prints
                           "CASE: N elements match" or the first mismatches
                           and exits 1

The formulas are written here from the document, not from the C kernels:
centred integers q - o, exact accumulation, requantization by a 31-bit
multiplier and a right shift rounding half away from zero, 16 fraction bits
for the additive kinds, tables for sigmoid and tanh.
"""
import math
import random
import struct
import sys

LIMITS = {"qi8": (-128, 127), "qui8": (0, 255), "qi16": (-32768, 32767), "qi32": (-2**31, 2**31 - 1)}
NPY = {"qi8": ("|i1", "b"), "qui8": ("|u1", "B"), "qi16": ("<i2", "h"), "qi32": ("<i4", "i"),
       "index64": ("<i8", "q"), "float": ("<f4", "f")}
FRAC = 16


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


class T:
    """a tensor type: kind, dims, scale (float32), offset"""

    def __init__(self, kind, dims, scale=None, offset=0):
        self.kind, self.dims, self.offset = kind, list(dims), offset
        self.scale = f32(scale) if scale is not None else None

    def numel(self):
        n = 1
        for d in self.dims:
            n *= d
        return n

    def text(self):
        d = " x ".join(str(x) for x in self.dims)
        if self.kind in ("float", "index64"):
            return "%s<%s>" % (self.kind, d)
        return "%s[%r:%d]<%s>" % (self.kind, self.scale, self.offset, d)


def mult_shift(ratio):
    if not ratio > 0:
        return 0, 0
    f, e = math.frexp(ratio)
    m = round(f * 2**31)  # half to even
    if m == 2**31:
        m //= 2
        e += 1
    sh = 31 - e
    if sh > 62 or m == 0:
        return 0, 0
    if sh < 0:
        return 2**31 - 1, 0
    return m, sh


def rshift(x, s):
    if s == 0:
        return x
    half = 1 << (s - 1)
    return (x + half) >> s if x >= 0 else -((-x + half) >> s)


def requant(x, ratio):
    m, s = mult_shift(ratio)
    if m == 0:
        return 0
    # an accumulator past 32 bits: divided by the least 2^k that fits
    k = 0
    while (x >> k) > 2**31 - 1 or (x >> k) < -2**31:
        k += 1
    if k:
        x = min(rshift(x, k), 2**31 - 1)
        if s < k:
            v = float(x) * m * 2**(k - s)
            return 2**62 if v >= 4.6e18 else -2**62 if v <= -4.6e18 else int(v)
        s -= k
    return rshift(x * m, s)


def store(t, v):
    lo, hi = LIMITS[t.kind]
    return max(lo, min(hi, v + t.offset))


def strides(dims):
    st, s = [0] * len(dims), 1
    for i in range(len(dims) - 1, -1, -1):
        st[i] = s
        s *= dims[i]
    return st


def hexbytes(t, vals):
    code = NPY[t.kind][1]
    return "0x" + b"".join(struct.pack("<" + code, v) for v in vals).hex()


# ---- the cases: inputs (name, type), constants, the node text, output type,
# and the reference function of the input integers ----

def rnd(rng, t):
    lo, hi = LIMITS.get(t.kind, (-3, 3))
    return [rng.randint(lo, hi) for _ in range(t.numel())]


def out_positions(ot):
    """The (image, row, column) of every output pixel of an NHWC tensor ot,
    in storage order: the outer loops of the reference kernels."""
    N, OH, OW, _ = ot.dims
    return ((n, oy, ox) for n in range(N) for oy in range(OH) for ox in range(OW))


def channel_qparams(wt, n, wsc, woff):
    """The weight scales and offsets of n output channels: wsc and woff when
    given (per-channel quantization), else wt's own for every channel."""
    return wsc or [wt.scale] * n, woff or [wt.offset] * n


def store_acc(ot, acc, acc_scale):
    """An accumulator acc in units of acc_scale, requantized into ot."""
    return store(ot, requant(acc, acc_scale / ot.scale))


def conv_ref(x, xt, w, wt, bias, bt, ot, strides_, pads, group, dil, wsc=None, woff=None):
    N, H, W, C = xt.dims
    OC = ot.dims[3]
    _, KH, KW, ICG = wt.dims
    ocg = OC // group
    wsc, woff = channel_qparams(wt, OC, wsc, woff)
    out = []
    for n, oy, ox in out_positions(ot):
        for oc in range(OC):
            g = oc // ocg
            acc_scale = xt.scale * wsc[oc]
            acc = 0
            for ky in range(KH):
                iy = oy * strides_[0] + ky * dil[0] - pads[0]
                if iy < 0 or iy >= H:
                    continue
                for kx in range(KW):
                    ix = ox * strides_[1] + kx * dil[1] - pads[1]
                    if ix < 0 or ix >= W:
                        continue
                    for c in range(ICG):
                        xv = x[((n * H + iy) * W + ix) * C + g * ICG + c] - xt.offset
                        wv = w[((oc * KH + ky) * KW + kx) * ICG + c] - woff[oc]
                        acc += xv * wv
            acc += bias_units(bias[oc], bt, acc_scale)
            out.append(store_acc(ot, acc, acc_scale))
    return out


def bias_units(b, bt, acc_scale):
    if bt.kind == "float":
        return round(b / acc_scale)
    c = b - bt.offset
    if bt.scale == f32(acc_scale):
        return c
    return requant(c, bt.scale / acc_scale)


def gemm_ref(a, at, b, bt, ot, nb, M, K, N, shared, bias=None, biast=None, wsc=None, woff=None):
    wsc, woff = channel_qparams(bt, N, wsc, woff)
    out = []
    for bi in range(nb):
        for i in range(M):
            for j in range(N):
                acc_scale = at.scale * wsc[j]
                acc = bias_units(bias[j], biast, acc_scale) if bias else 0
                for k in range(K):
                    av = a[(bi * M + i) * K + k] - at.offset
                    bv = b[(0 if shared else bi) * K * N + k * N + j] - woff[j]
                    acc += av * bv
                out.append(store_acc(ot, acc, acc_scale))
    return out


def fine(q, t, ot):
    return requant(q - t.offset, t.scale / ot.scale * 2**FRAC)


def binary_ref(kind, a, at, b, bt, ot):
    out = []
    for x, y in zip(a, b):
        if kind == "Mul":
            out.append(store(ot, requant((x - at.offset) * (y - bt.offset), at.scale * bt.scale / ot.scale)))
            continue
        fx, fy = fine(x, at, ot), fine(y, bt, ot)
        v = {"Add": fx + fy, "Sub": fx - fy, "Max": max(fx, fy), "Min": min(fx, fy)}[kind]
        out.append(store(ot, rshift(v, FRAC)))
    return out


def unary_ref(kind, a, at, ot, lo=None, hi=None):
    out = []
    one = 2**FRAC / ot.scale
    for x in a:
        v = fine(x, at, ot)
        if kind == "Relu":
            v = max(v, 0)
        else:
            v = max(round(lo * one), min(round(hi * one), v))
        out.append(store(ot, rshift(v, FRAC)))
    return out


def lut_ref(kind, a, at, ot):
    out = []
    for x in a:
        r = at.scale * (x - at.offset)
        y = 1.0 / (1.0 + math.exp(-r)) if kind == "Sigmoid" else math.tanh(r)
        out.append(store(ot, round(y / ot.scale)))
    return out


def pool_ref(a, at, ot, k, s, p, incl, adaptive=False):
    N, H, W, C = at.dims
    _, OH, OW, _ = ot.dims
    out = []
    for n, oy, ox in out_positions(ot):
        if adaptive:
            y0, y1 = oy * H // OH, ((oy + 1) * H + OH - 1) // OH
            x0, x1 = ox * W // OW, ((ox + 1) * W + OW - 1) // OW
        else:
            y0, x0 = oy * s[0] - p[0], ox * s[1] - p[1]
            y1, x1 = y0 + k[0], x0 + k[1]
        for c in range(C):
            tot, cnt = 0, 0
            for iy in range(y0, y1):
                for ix in range(x0, x1):
                    if 0 <= iy < H and 0 <= ix < W:
                        tot += a[((n * H + iy) * W + ix) * C + c] - at.offset
                        cnt += 1
            div = k[0] * k[1] if incl else cnt
            out.append(store(ot, requant(tot, at.scale / ot.scale / div) if div else 0))
    return out


def maxpool_ref(a, at, ot, k, s):
    N, H, W, C = at.dims
    out = []
    for n, oy, ox in out_positions(ot):
        for c in range(C):
            out.append(max(a[((n * H + oy * s[0] + ky) * W + ox * s[1] + kx) * C + c]
                           for ky in range(k[0]) for kx in range(k[1])))
    return out


def index_of(dims, flat):
    idx = []
    for st in strides(dims):
        idx.append(flat // st)
        flat %= st
    return idx


def case(name):
    rng = random.Random(sum(map(ord, name)))
    C = {}
    if name in ("conv", "depthwise", "conv16"):
        if name == "conv16":  # 16-bit: the accumulator passes 32 bits
            xt, wt = T("qi16", [1, 4, 4, 8], 0.001, 7), T("qi16", [2, 3, 3, 8], 0.0005, 0)
            bt = T("qi32", [2], f32(xt.scale * wt.scale), 0)
            ot, st, pd, g, dl = T("qi16", [1, 2, 2, 2], 1.0, 0), [1, 1], [0, 0, 0, 0], 1, [1, 1]
        elif name == "conv":
            xt, wt = T("qi8", [1, 5, 5, 4], 0.05, 3), T("qi8", [6, 3, 3, 2], 0.02, 0)
            bt = T("qi32", [6], f32(xt.scale * wt.scale), 0)
            ot, st, pd, g, dl = T("qi8", [1, 3, 3, 6], 0.1, -5), [2, 2], [1, 1, 1, 1], 2, [1, 1]
        else:
            xt, wt = T("qui8", [1, 6, 6, 3], 0.03, 128), T("qi8", [3, 3, 3, 1], 0.01, 2)
            bt = T("float", [3])
            ot, st, pd, g, dl = T("qi8", [1, 6, 6, 3], 0.05, 0), [1, 1], [2, 2, 2, 2], 3, [2, 2]
        x, w = rnd(rng, xt), rnd(rng, wt)
        b = [rng.randint(-2000, 2000) for _ in range(bt.numel())] if bt.kind == "qi32" else \
            [f32(rng.uniform(-1, 1)) for _ in range(bt.numel())]
        bias_text = hexbytes(bt, b) if bt.kind == "qi32" else \
            "0x" + b"".join(struct.pack("<f", v) for v in b).hex()
        C["inputs"] = [("x", xt, x)]
        C["consts"] = [("w", wt, hexbytes(wt, w)), ("b", bt, bias_text)]
        C["node"] = "Convolution(@x, @w, @b) {kernels = [3, 3], strides = %s, pads = %s, group = %d, dilation = %s}" % (
            st, pd, g, dl)
        C["out"] = ot
        C["ref"] = conv_ref(x, xt, w, wt, b, bt, ot, st, pd, g, dl)
    elif name in ("cwconv", "cwfc"):
        # per-channel: the filter is qi8 of scale 1, offset 0; the real
        # parameters are one scale and offset per output channel
        fl = lambda v: "[%s]" % ", ".join(repr(x) for x in v)
        if name == "cwconv":
            xt, wt, bt = T("qi8", [1, 4, 4, 4], 0.05, -2), T("qi8", [4, 2, 2, 2], 1.0, 0), T("float", [4])
            ot = T("qi8", [1, 3, 3, 4], 0.08, 4)
            wsc, woff = [f32(0.01), f32(0.002), f32(0.03), f32(0.007)], [0, -3, 5, 0]
        else:
            xt, wt, bt = T("qi8", [2, 6], 0.05, -2), T("qi8", [6, 3], 1.0, 0), T("float", [3])
            ot = T("qi8", [2, 3], 0.02, 0)
            wsc, woff = [f32(0.004), f32(0.01), f32(0.0005)], [1, 0, -7]
        x, w = rnd(rng, xt), rnd(rng, wt)
        b = [f32(rng.uniform(-0.5, 0.5)) for _ in range(bt.numel())]
        C["inputs"] = [("x", xt, x)]
        C["consts"] = [("w", wt, hexbytes(wt, w)), ("b", bt, "0x" + b"".join(struct.pack("<f", v) for v in b).hex())]
        if name == "cwconv":
            C["node"] = ("ChannelwiseQuantizedConvolution(@x, @w, @b) {kernels = [2, 2], group = 2, "
                         "filter_scales = %s, filter_offsets = %s}" % (fl(wsc), fl(woff)))
            C["ref"] = conv_ref(x, xt, w, wt, b, bt, ot, [1, 1], [0, 0, 0, 0], 2, [1, 1], wsc, woff)
        else:
            C["node"] = "ChannelwiseQuantizedFullyConnected(@x, @w, @b) {weight_scales = %s, weight_offsets = %s}" % (
                fl(wsc), fl(woff))
            C["ref"] = gemm_ref(x, xt, w, wt, ot, 1, 2, 6, 3, True, b, bt, wsc, woff)
        C["out"] = ot
    elif name == "fc":
        at, wt, bt, ot = T("qi8", [3, 5], 0.04, -7), T("qi8", [5, 4], 0.03, 0), T("qi32", [4], 0.0007, 0), \
            T("qi16", [3, 4], 0.002, 0)
        a, w, b = rnd(rng, at), rnd(rng, wt), [rng.randint(-5000, 5000) for _ in range(4)]
        C["inputs"] = [("x", at, a)]
        C["consts"] = [("w", wt, hexbytes(wt, w)), ("b", bt, hexbytes(bt, b))]
        C["node"] = "FullyConnected(@x, @w, @b)"
        C["out"] = ot
        C["ref"] = gemm_ref(a, at, w, wt, ot, 1, 3, 5, 4, True, b, bt)
    elif name in ("matmul", "batchmatmul"):
        if name == "matmul":
            at, bt, ot, nb, M, K, N = T("qi8", [2, 3], 0.1, 1), T("qui8", [3, 4], 0.05, 100), \
                T("qi8", [2, 4], 0.2, -1), 1, 2, 3, 4
        else:
            at, bt, ot, nb, M, K, N = T("qi16", [2, 2, 3], 0.001, 0), T("qi16", [2, 3, 2], 0.002, 5), \
                T("qi16", [2, 2, 2], 0.003, 0), 2, 2, 3, 2
        a, b = rnd(rng, at), rnd(rng, bt)
        if at.kind == "qi16":
            a = [v // 64 for v in a]
            b = [v // 64 for v in b]
        C["inputs"] = [("a", at, a), ("b", bt, b)]
        C["node"] = "%s(@a, @b)" % ("MatMul" if name == "matmul" else "BatchMatMul")
        C["out"] = ot
        C["ref"] = gemm_ref(a, at, b, bt, ot, nb, M, K, N, False)
    elif name in ("add", "sub", "mul", "max", "min"):
        kind = name.capitalize()
        at, bt = T("qi8", [2, 3, 4], 0.1, 2), T("qi8", [2, 3, 4], 0.07, -3)
        ot = T("qi8", [2, 3, 4], 0.5 if kind == "Mul" else 0.15, 1)
        a, b = rnd(rng, at), rnd(rng, bt)
        C["inputs"] = [("a", at, a), ("b", bt, b)]
        C["node"] = "%s(@a, @b)" % kind
        C["out"] = ot
        C["ref"] = binary_ref(kind, a, at, b, bt, ot)
    elif name in ("relu", "clip"):
        at = T("qi8", [24], 0.1, 5)
        ot = T("qi8", [24], 0.05, -128) if name == "relu" else T("qi8", [24], 0.01, -20)
        a = rnd(rng, at)
        C["inputs"] = [("a", at, a)]
        C["node"] = "Relu(@a)" if name == "relu" else "Clip(@a) {min = -0.3, max = 0.8}"
        C["out"] = ot
        C["ref"] = unary_ref("Relu", a, at, ot) if name == "relu" else unary_ref("Clip", a, at, ot, -0.3, 0.8)
    elif name in ("sigmoid", "tanh", "sigmoid16"):
        kind = "Tanh" if name == "tanh" else "Sigmoid"
        if name == "sigmoid16":
            at, ot = T("qi16", [40], 0.0003, 0), T("qi16", [40], 2.0**-16, -32768)
        else:
            at, ot = (T("qi8", [40], 0.1, 0), T("qi8", [40], 0.004, -128)) if kind == "Sigmoid" else \
                (T("qi8", [40], 0.05, 3), T("qi8", [40], 0.008, 0))
        a = rnd(rng, at)
        C["inputs"] = [("a", at, a)]
        C["node"] = "%s(@a)" % kind
        C["out"] = ot
        C["ref"] = lut_ref(kind, a, at, ot)
    elif name in ("avgpool", "avgpool-nopad", "adaptiveavgpool"):
        at = T("qi8", [1, 5, 7 if name == "adaptiveavgpool" else 5, 2], 0.1, 3)
        a = rnd(rng, at)
        C["inputs"] = [("a", at, a)]
        if name == "adaptiveavgpool":
            ot = T("qi8", [1, 2, 3, 2], 0.05, 0)
            C["node"] = "AdaptiveAvgPool(@a)"
            C["ref"] = pool_ref(a, at, ot, None, None, None, False, True)
        else:
            incl = name == "avgpool"
            ot = T("qi8", [1, 3, 3, 2], 0.05, 0)
            C["node"] = "AvgPool(@a) {kernels = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], count_include_pads = %s}" % (
                "true" if incl else "false")
            C["ref"] = pool_ref(a, at, ot, [3, 3], [2, 2], [1, 1], incl)
        C["out"] = ot
    elif name == "maxpool":
        at = T("qi8", [1, 4, 4, 3], 0.1, 3)
        a = rnd(rng, at)
        ot = T("qi8", [1, 2, 2, 3], 0.1, 3)
        C["inputs"] = [("a", at, a)]
        C["node"] = "MaxPool(@a) {kernels = [2, 2], strides = [2, 2]}"
        C["extra"] = ", index64<1 x 2 x 2 x 3>"
        C["out"] = ot
        C["ref"] = maxpool_ref(a, at, ot, [2, 2], [2, 2])
    elif name in ("concat", "reshape", "transpose", "slice", "pad", "gather", "argmax"):
        at = T("qi8", [2, 3, 4], 0.1, 3)
        a = rnd(rng, at)
        C["inputs"] = [("a", at, a)]
        sa = strides(at.dims)
        if name == "concat":
            bt = T("qi8", [2, 2, 4], 0.1, 3)
            b = rnd(rng, bt)
            C["inputs"].append(("b", bt, b))
            ot = T("qi8", [2, 5, 4], 0.1, 3)
            C["node"] = "Concat(@a, @b) {dim = 1}"
            ref = []
            for i in range(2):
                ref += a[i * 12:(i + 1) * 12] + b[i * 8:(i + 1) * 8]
        elif name == "reshape":
            ot = T("qi8", [4, 6], 0.1, 3)
            C["node"] = "Reshape(@a)"
            ref = list(a)
        elif name == "transpose":
            ot = T("qi8", [4, 2, 3], 0.1, 3)
            C["node"] = "Transpose(@a) {shuffle = [2, 0, 1]}"
            ref = [a[i * sa[0] + j * sa[1] + k] for k in range(4) for i in range(2) for j in range(3)]
        elif name == "slice":
            ot = T("qi8", [1, 2, 3], 0.1, 3)
            C["node"] = "Slice(@a) {start = [1, 1, 0]}"
            ref = [a[1 * sa[0] + j * sa[1] + k] for j in range(1, 3) for k in range(0, 3)]
        elif name == "pad":
            ot = T("qi8", [2, 4, 6], 0.1, 3)
            C["node"] = "Pad(@a) {pads = [0, 1, 1, 0, 0, 1], value = 0.25}"
            padq = store(ot, round(0.25 / ot.scale))  # 2.5 -> 2, half to even
            ref = []
            for i in range(2):
                for j in range(4):
                    for k in range(6):
                        ref.append(a[i * sa[0] + (j - 1) * sa[1] + (k - 1)] if 1 <= j < 4 and 1 <= k < 5 else padq)
        elif name == "gather":
            ot = T("qi8", [2, 3, 2], 0.1, 3)
            C["consts"] = [("i", T("index64", [2]), hexbytes(T("index64", [2]), [3, 1]))]
            C["node"] = "Gather(@a, @i) {axis = 2}"
            ref = [a[i * sa[0] + j * sa[1] + k] for i in range(2) for j in range(3) for k in (3, 1)]
        else:
            ot = T("index64", [2, 4])
            C["node"] = "ArgMax(@a) {axis = 1}"
            ref = []
            for i in range(2):
                for k in range(4):
                    col = [a[i * sa[0] + j * sa[1] + k] for j in range(3)]
                    ref.append(col.index(max(col)))
        C["out"] = ot
        C["ref"] = ref
    else:
        sys.exit("qref.py: unknown case '%s'" % name)
    C.setdefault("consts", [])
    C.setdefault("extra", "")
    return C


def write_npy(path, t, vals):
    descr, code = NPY[t.kind]
    shape = "(%s)" % "".join("%d, " % d for d in t.dims) if len(t.dims) != 1 else "(%d,)" % t.dims[0]
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape.replace(", )", ")"))
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(b"".join(struct.pack("<" + code, v) for v in vals))


def read_npy(path):
    data = open(path, "rb").read()
    hl = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + hl].decode()
    descr = header.split("'descr': '")[1].split("'")[0]
    code = [c for d, c in NPY.values() if d == descr][0]
    size = struct.calcsize("<" + code)
    body = data[10 + hl:]
    return [struct.unpack("<" + code, body[i:i + size])[0] for i in range(0, len(body), size)]


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("gen", "check"):
        sys.exit(__doc__)
    mode, name, d = sys.argv[1:]
    c = case(name)
    if mode == "gen":
        lines = ["// generated by qref.py gen %s" % name]
        for n, t, _ in c["inputs"]:
            lines.append("placeholder @%s : %s" % (n, t.text()))
        lines.append("placeholder @out : %s" % c["out"].text())
        for n, t, h in c["consts"]:
            lines.append('constant @%s : %s = dense "%s"' % (n, t.text(), h))
        lines.append("func @main {")
        lines.append("  %%r = %s : %s%s" % (c["node"], c["out"].text(), c["extra"]))
        lines.append("  Save(%s, @out)" % ("%r#0" if c["extra"] else "%r"))
        lines.append("}")
        open("%s/%s.glow" % (d, name), "w").write("\n".join(lines) + "\n")
        for n, t, v in c["inputs"]:
            write_npy("%s/%s.%s.npy" % (d, name, n), t, v)
        return
    got = read_npy("%s/%s.out.npy" % (d, name))
    ref = c["ref"]
    bad = [(i, g, r) for i, (g, r) in enumerate(zip(got, ref)) if g != r]
    if len(got) != len(ref) or bad:
        print("%s: %d of %d elements differ (got %d elements)" % (name, len(bad), len(ref), len(got)))
        for i, g, r in bad[:5]:
            print("  at %s: got %d, expected %d" % (index_of(c["out"].dims, i), g, r))
        sys.exit(1)
    print("%s: %d elements match" % (name, len(ref)))


if __name__ == "__main__":
    main()
