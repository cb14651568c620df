#!/usr/bin/env python3
"""gen_ir.py - synthetic instruction IR programs for the text round-trip
benchmark of glow-llc, with their MLIR twins for mlir-opt.

Design: as gen_graph.py, one seeded description and two printers. The
generator draws a program of instructions over buffers once, as a list of
records (kind, written and read buffers, attributes), and writes that list
as instruction IR (.gir, in canonical form, so `glow-llc in -o out` prints
the input back byte for byte) and as the equivalent MLIR 14 text on
memrefs, which Debian's mlir-opt 14 parses, verifies and prints:

  .gir                                  .mlir
  weight mutable (input, output)        function argument
  weight constant, xavier / dense hex   memref.global constant + get_global
  %a = alloc T                          %a = memref.alloc() : memref<T>
  dealloc @out %a                       memref.dealloc %a
  tensorview 4-D -> 2-D and back        memref.collapse_shape / expand_shape
  copy                                  memref.copy
  convolution {kernels = [1, 1]}        linalg.conv_2d_nhwc_hwcf (1x1)
  matmul                                linalg.matmul
  relu, tanh, exp, clip, add, sub,      linalg.generic with a one- or
  mul, max (in place or not)            two-op body (arith / math)

MLIR 14 has no single-line elementwise op on memrefs, so an elementwise
instruction is a linalg.generic there (three ops, five lines); a
convolution's bias is left out of the MLIR (linalg's convolution has none),
and xavier weights become splats. The twins carry the same buffers, shapes
and instruction order; mlir-opt has the longer text and more ops for the
elementwise kinds, glow-llc the extra type rules. measure.py reports MB/s and
time for both; the op counts are printed here.

Two files per format:
  nodes.{gir,mlir}    instruction-heavy: exactly --instrs instructions (one
                      function; allocs, deallocs and views counted).
  weights.{gir,mlir}  weight-heavy: one constant of --weight-mb megabytes
                      (10^6 bytes, rounded up to whole rows of 256 floats) as
                      dense little-endian hex, read through two views.
The stems match gen_graph.py's so that measure.py applies its targets.

Usage:
  gen_ir.py --out-dir D [--instrs N] [--weight-mb M] [--seed S]
Writes D/nodes.*, D/weights.* (a size of 0 skips that pair) and
D/manifest.tsv (file, format, instruction count, bytes; format "glow" for
.gir so that measure.py runs it with its --glow-opt tool), and prints a
summary. Needs Python 3.9 or later; the output depends only on the arguments.
"""

import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# the same weight bytes and the same manifest as gen_graph.py
from gen_graph import finish, manifest_pair, print_mix, weight_chunks, WEIGHT_COLS  # noqa: E402

H = W = 8
CHANNELS = (8, 16)
NFILTERS = 64  # filter sets per channel pair, shared by the whole program
LIVE = 6       # activations kept alive; beyond that the oldest is deallocated

UNARY = ["relu", "tanh", "exp", "clip"]
BINARY = ["add", "sub", "mul", "max"]
# step kind -> weight
MIX = [("unary_inplace", 22), ("unary", 10), ("binary", 22), ("conv", 16), ("matmul", 10),
       ("copy", 5)]


def act(c):
    return (1, H, W, c)


class Instr:
    """One instruction: kind, name, type (alloc/tensorview), written and
    read operands (buffer names), attributes (canonical text), and for the
    MLIR printer the shapes involved."""
    __slots__ = ("kind", "name", "shape", "outs", "ins", "attrs", "extra")

    def __init__(self, kind, name, shape=None, outs=(), ins=(), attrs="", extra=None):
        self.kind = kind
        self.name = name
        self.shape = shape
        self.outs = list(outs)
        self.ins = list(ins)
        self.attrs = attrs
        self.extra = extra


class Program:
    """Draws the instruction list. State: the head buffer, the live
    activations in allocation order, shapes of every buffer."""

    def __init__(self, rng):
        self.rng = rng
        self.instrs = []
        self.shape = {"input": act(8), "output": act(8)}
        self.weights = []  # (name, shape, init): init is ("xavier", fan_in, seed) or ("dense", hex)
        self.live = []
        self.head = "input"
        self.n = 0
        self.filters = {}
        for cin in CHANNELS:
            for cout in CHANNELS:
                for i in range(NFILTERS):
                    fn = "f%d_%d_%d" % (cin, cout, i)
                    bn = "b%d_%d_%d" % (cin, cout, i)
                    self.add_weight(fn, (cout, 1, 1, cin), ("xavier", float(cin), len(self.weights) + 1))
                    bias = rng.randbytes(4 * cout)
                    bias = bytes(b if j % 4 != 3 else (b & 0x80) | 0x3c for j, b in enumerate(bias))
                    self.add_weight(bn, (cout,), ("dense", bias.hex()))
                    self.filters.setdefault((cin, cout), []).append((fn, bn))
        self.mats = {}
        for c in CHANNELS:
            for i in range(NFILTERS):
                mn = "m%d_%d" % (c, i)
                self.add_weight(mn, (c, c), ("xavier", float(c), len(self.weights) + 1))
                self.mats.setdefault(c, []).append(mn)

    def add_weight(self, name, shape, init):
        self.weights.append((name, shape, init))
        self.shape[name] = shape

    def fresh(self, base):
        self.n += 1
        return "%s%d" % (base, self.n)

    def emit(self, ins):
        self.instrs.append(ins)

    def alloc(self, shape, base="alloc"):
        name = self.fresh(base)
        self.shape[name] = shape
        self.emit(Instr("alloc", name, shape))
        self.live.append(name)
        return name

    def dealloc(self, name):
        self.live.remove(name)
        self.emit(Instr("dealloc", self.fresh("dealloc"), outs=[name]))

    def unary_attrs(self, kind):
        return " {min = 0.0, max = 6.0}" if kind == "clip" else ""

    def step_unary_inplace(self):
        h = self.head
        if h == "input":
            return self.step_unary()
        k = self.rng.choice(UNARY)
        self.emit(Instr(k, self.fresh(k), outs=[h], ins=[h], attrs=self.unary_attrs(k)))

    def step_unary(self):
        k = self.rng.choice(UNARY)
        d = self.alloc(self.shape[self.head])
        self.emit(Instr(k, self.fresh(k), outs=[d], ins=[self.head], attrs=self.unary_attrs(k)))
        self.head = d

    def step_binary(self):
        sh = self.shape[self.head]
        same = [a for a in self.live[-LIVE:] if self.shape[a] == sh] + (["input"] if sh == act(8) else [])
        other = self.rng.choice(same)
        k = self.rng.choice(BINARY)
        args = [self.head, other] if self.rng.random() < 0.5 else [other, self.head]
        if self.head != "input" and self.rng.random() < 0.5:
            d = self.head  # in place: Dest=LHS or Dest=RHS
        else:
            d = self.alloc(sh)
        self.emit(Instr(k, self.fresh(k), outs=[d], ins=args))
        self.head = d

    def step_conv(self):
        cin = self.shape[self.head][3]
        cout = self.rng.choice(CHANNELS)
        fn, bn = self.rng.choice(self.filters[(cin, cout)])
        d = self.alloc(act(cout))
        self.emit(Instr("convolution", self.fresh("conv"), outs=[d], ins=[self.head, fn, bn],
                        attrs=" {kernels = [1, 1]}"))
        self.head = d

    def step_matmul(self):
        c = self.shape[self.head][3]
        mn = self.rng.choice(self.mats[c])
        v = self.fresh("flat")
        self.shape[v] = (H * W, c)
        self.emit(Instr("tensorview", v, (H * W, c), ins=[self.head], attrs=" {offsets = [0, 0, 0, 0]}"))
        d = self.alloc((H * W, c))
        self.emit(Instr("matmul", self.fresh("matmul"), outs=[d], ins=[v, mn]))
        u = self.fresh("unflat")
        self.shape[u] = act(c)
        self.emit(Instr("tensorview", u, act(c), ins=[d], attrs=" {offsets = [0, 0]}", extra=d))
        self.head = u

    def step_copy(self):
        d = self.alloc(self.shape[self.head])
        self.emit(Instr("copy", self.fresh("copy"), outs=[d], ins=[self.head]))
        self.head = d

    def root(self, name):
        """The alloc a view chain ends in (views are recorded in extra)."""
        for ins in reversed(self.instrs):
            if ins.name == name and ins.kind == "tensorview":
                return ins.extra if ins.extra else name
        return name

    def draw(self, total):
        kinds, weights = zip(*MIX)
        cum = []
        t = 0
        for w in weights:
            t += w
            cum.append(t)
        steps = {"unary_inplace": self.step_unary_inplace, "unary": self.step_unary,
                 "binary": self.step_binary, "conv": self.step_conv, "matmul": self.step_matmul,
                 "copy": self.step_copy}
        # the ending: back to 8 channels (conv, 2), copy to the output (1),
        # a dealloc per live activation
        while True:
            budget = total - len(self.instrs) - (len(self.live) + 1) - 3
            if budget < 8:
                break
            r = self.rng.random() * cum[-1]
            steps[kinds[next(i for i, c in enumerate(cum) if r < c)]]()
            self.trim()
        if self.shape[self.head][3] != 8 or len(self.shape[self.head]) != 4:
            self.step_conv_to(8)
        while total - len(self.instrs) - len(self.live) - 1 > 0:
            if self.head == "input":
                self.step_unary()
            else:
                k = self.rng.choice(UNARY)
                self.emit(Instr(k, self.fresh(k), outs=[self.head], ins=[self.head],
                                attrs=self.unary_attrs(k)))
        self.emit(Instr("copy", self.fresh("copy"), outs=["output"], ins=[self.head]))
        for a in list(self.live):
            self.dealloc(a)
        assert len(self.instrs) == total, (len(self.instrs), total)

    def step_conv_to(self, cout):
        cin = self.shape[self.head][3]
        fn, bn = self.filters[(cin, cout)][0]
        d = self.alloc(act(cout))
        self.emit(Instr("convolution", self.fresh("conv"), outs=[d], ins=[self.head, fn, bn],
                        attrs=" {kernels = [1, 1]}"))
        self.head = d

    def trim(self):
        """Deallocates the oldest activations beyond LIVE, never the head
        nor the alloc under a head view."""
        keep = {self.head, self.root(self.head)} if self.head.startswith("unflat") else {self.head}
        while len(self.live) > LIVE:
            old = next(a for a in self.live if a not in keep)
            self.dealloc(old)


# ---------------------------------------------------------------- printers

def gir_type(shape):
    return "float<" + " x ".join(str(d) for d in shape) + ">"


def mlir_type(shape):
    return "memref<" + "x".join(str(d) for d in shape) + "xf32>"


def write_gir(f, prog, header):
    f.write(header)
    f.write("function @main\ndeclare {\n")
    f.write("  %%input = weight mutable %s\n" % gir_type(prog.shape["input"]))
    f.write("  %%output = weight mutable %s\n" % gir_type(prog.shape["output"]))
    for name, shape, init in prog.weights:
        if init[0] == "xavier":
            f.write("  %%%s = weight constant %s, xavier %.1f seed %d\n" % (name, gir_type(shape), init[1],
                                                                          init[2]))
        else:
            f.write('  %%%s = weight constant %s, dense "0x%s"\n' % (name, gir_type(shape), init[1]))
    f.write("}\nprogram {\n")
    for i in prog.instrs:
        if i.kind == "alloc":
            f.write("  %%%s = alloc %s\n" % (i.name, gir_type(i.shape)))
        elif i.kind == "tensorview":
            f.write("  %%%s = tensorview %s @in %%%s%s\n" % (i.name, gir_type(i.shape), i.ins[0], i.attrs))
        else:
            ops = ["@out %" + o for o in i.outs] + ["@in %" + o for o in i.ins]
            f.write("  %%%s = %s %s%s\n" % (i.name, i.kind, ", ".join(ops), i.attrs))
    f.write("}\n")


MAP4 = "#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>\n"
PAR4 = '["parallel", "parallel", "parallel", "parallel"]'
BODY = {"relu": ["%0 = arith.maxf %x, %zero : f32"], "tanh": ["%0 = math.tanh %x : f32"],
        "exp": ["%0 = math.exp %x : f32"],
        "clip": ["%1 = arith.maxf %x, %zero : f32", "%0 = arith.minf %1, %six : f32"],
        "add": ["%0 = arith.addf %x, %y : f32"], "sub": ["%0 = arith.subf %x, %y : f32"],
        "mul": ["%0 = arith.mulf %x, %y : f32"], "max": ["%0 = arith.maxf %x, %y : f32"]}


def write_mlir(f, prog, header):
    """Returns the number of MLIR operations written (module and func
    included, region terminators too)."""
    f.write(header)
    f.write(MAP4)
    f.write("module {\n")
    nops = 1
    for name, shape, init in prog.weights:
        if init[0] == "xavier":
            # linalg's filter layout is KH x KW x IC x OC; matrices as they are
            val = "dense<%s>" % repr(1.0 / init[1])
            mshape = (shape[1], shape[2], shape[3], shape[0]) if len(shape) == 4 else shape
        else:
            val = 'dense<"0x%s">' % init[1]
            mshape = shape
        prog.shape["mlir:" + name] = mshape
        f.write('  memref.global "private" constant @%s : %s = %s\n' % (name, mlir_type(mshape), val))
        nops += 1
    t8 = mlir_type(act(8))
    f.write("  func @main(%%input: %s, %%output: %s) {\n" % (t8, t8))
    f.write("    %zero = arith.constant 0.0 : f32\n    %six = arith.constant 6.0 : f32\n")
    nops += 3
    used = set()
    for i in prog.instrs:
        for o in i.ins:
            if "mlir:" + o in prog.shape and o not in used:
                used.add(o)
    for name in sorted(used):
        f.write("    %%%s = memref.get_global @%s : %s\n" % (name, name, mlir_type(prog.shape["mlir:" + name])))
        nops += 1

    def ty(n):
        return mlir_type(prog.shape.get("mlir:" + n, prog.shape[n]))

    for i in prog.instrs:
        k = i.kind
        if k == "alloc":
            f.write("    %%%s = memref.alloc() : %s\n" % (i.name, mlir_type(i.shape)))
            nops += 1
        elif k == "dealloc":
            f.write("    memref.dealloc %%%s : %s\n" % (i.outs[0], ty(i.outs[0])))
            nops += 1
        elif k == "tensorview":
            src = i.ins[0]
            op = "collapse_shape" if len(i.shape) == 2 else "expand_shape"
            f.write("    %%%s = memref.%s %%%s [[0, 1, 2], [3]] : %s into %s\n" % (
                i.name, op, src, ty(src), mlir_type(i.shape)))
            nops += 1
        elif k == "copy":
            f.write("    memref.copy %%%s, %%%s : %s to %s\n" % (i.ins[0], i.outs[0], ty(i.ins[0]), ty(i.outs[0])))
            nops += 1
        elif k == "convolution":
            x, fl = i.ins[0], i.ins[1]
            f.write("    linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : "
                    "tensor<2xi64>} ins(%%%s, %%%s : %s, %s) outs(%%%s : %s)\n" % (
                        x, fl, ty(x), ty(fl), i.outs[0], ty(i.outs[0])))
            nops += 1
        elif k == "matmul":
            a, b = i.ins
            f.write("    linalg.matmul ins(%%%s, %%%s : %s, %s) outs(%%%s : %s)\n" % (
                a, b, ty(a), ty(b), i.outs[0], ty(i.outs[0])))
            nops += 1
        else:
            body = BODY[k]
            ins = i.ins
            maps = ", ".join(["#map"] * (len(ins) + 1))
            f.write("    linalg.generic {indexing_maps = [%s], iterator_types = %s} ins(%s : %s) outs(%%%s : %s) {\n"
                    % (maps, PAR4, ", ".join("%" + a for a in ins), ", ".join(ty(a) for a in ins),
                       i.outs[0], ty(i.outs[0])))
            args = ["%x: f32", "%y: f32", "%z: f32"][:len(ins)] + ["%r: f32"]
            f.write("    ^bb0(%s):\n" % ", ".join(args))
            for line in body:
                f.write("      %s\n" % line)
            f.write("      linalg.yield %0 : f32\n    }\n")
            nops += 2 + len(body)
    f.write("    return\n  }\n}\n")
    return nops + 1


def write_weights(dirname, weight_mb, seed, header):
    """Writes weights.gir and weights.mlir; returns the instruction count."""
    rows = max(2, -(-int(weight_mb * 1e6) // (WEIGHT_COLS * 4)))
    wshape = (rows, WEIGHT_COLS)
    last = rows - 1
    t16 = gir_type((16, 16))
    m16 = mlir_type((16, 16))
    prog = [
        "  %%first = tensorview %s @in %%w {offsets = [0, 0]}\n" % t16,
        "  %%last = tensorview %s @in %%w {offsets = [%d, 0]}\n" % (t16, last),
        "  %%a = alloc %s\n" % t16,
        "  %mul = mul @out %a, @in %first, @in %input\n",
        "  %add = add @out %a, @in %a, @in %last\n",
        "  %relu = relu @out %a, @in %a\n",
        "  %copy = copy @out %output, @in %a\n",
        "  %dealloc = dealloc @out %a\n",
    ]
    with open(os.path.join(dirname, "weights.gir"), "w") as g, \
            open(os.path.join(dirname, "weights.mlir"), "w") as m:
        g.write(header)
        g.write("function @main\ndeclare {\n")
        g.write("  %%input = weight mutable %s\n  %%output = weight mutable %s\n" % (t16, t16))
        g.write('  %%w = weight constant %s, dense "0x' % gir_type(wshape))
        m.write(header)
        m.write("#map = affine_map<(d0, d1) -> (d0, d1)>\nmodule {\n")
        m.write('  memref.global "private" constant @w : %s = dense<"0x' % mlir_type(wshape))
        for chunk in weight_chunks(rows, seed):
            h = chunk.hex()
            g.write(h)
            m.write(h)
        g.write('"\n}\nprogram {\n')
        g.write("".join(prog))
        g.write("}\n")
        m.write('">\n')
        m.write("  func @main(%%input: %s, %%output: %s) {\n" % (m16, m16))
        m.write("    %%w = memref.get_global @w : %s\n" % mlir_type(wshape))
        lastoff = last * WEIGHT_COLS
        m.write("    %%first = memref.reinterpret_cast %%w to offset: [0], sizes: [16, 16], strides: [16, 1] "
                ": %s to %s\n" % (mlir_type(wshape), m16))
        m.write("    %%last = memref.reinterpret_cast %%w to offset: [%d], sizes: [16, 16], strides: [16, 1] "
                ": %s to memref<16x16xf32, offset: %d, strides: [16, 1]>\n" % (lastoff, mlir_type(wshape), lastoff))
        m.write("    %%a = memref.alloc() : %s\n" % m16)
        lt = "memref<16x16xf32, offset: %d, strides: [16, 1]>" % lastoff
        par2 = '["parallel", "parallel"]'
        for what, ins, tys in (("arith.mulf", "%first, %input", "%s, %s" % (m16, m16)),
                               ("arith.addf", "%a, %last", "%s, %s" % (m16, lt))):
            m.write("    linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = %s} ins(%s : %s) "
                    "outs(%%a : %s) {\n    ^bb0(%%x: f32, %%y: f32, %%r: f32):\n      %%0 = %s %%x, %%y : f32\n"
                    "      linalg.yield %%0 : f32\n    }\n" % (par2, ins, tys, m16, what))
        m.write("    %zero = arith.constant 0.0 : f32\n")
        m.write("    linalg.generic {indexing_maps = [#map, #map], iterator_types = %s} ins(%%a : %s) outs(%%a : %s) {\n"
                "    ^bb0(%%x: f32, %%r: f32):\n      %%0 = arith.maxf %%x, %%zero : f32\n"
                "      linalg.yield %%0 : f32\n    }\n" % (par2, m16, m16))
        m.write("    memref.copy %%a, %%output : %s to %s\n" % (m16, m16))
        m.write("    memref.dealloc %%a : %s\n    return\n  }\n}\n" % m16)
    return len(prog)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", required=True, help="directory to write the files to")
    ap.add_argument("--instrs", type=int, default=1000000,
                    help="instructions of the instruction-heavy program (0: skip; else at least 64)")
    ap.add_argument("--weight-mb", type=float, default=100.0,
                    help="megabytes (10^6 bytes) of constant data (0: skip)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    if (args.instrs and args.instrs < 64) or args.instrs < 0 or args.weight_mb < 0:
        ap.error("--instrs must be 0 or at least 64, --weight-mb not negative")
    os.makedirs(args.out_dir, exist_ok=True)
    manifest = []
    header = "// bench/gen_ir.py --instrs %d --weight-mb %g --seed %d\n" % (args.instrs, args.weight_mb,
                                                                          args.seed)
    if args.instrs:
        prog = Program(random.Random(args.seed))
        prog.draw(args.instrs)
        with open(os.path.join(args.out_dir, "nodes.gir"), "w") as f:
            write_gir(f, prog, header)
        with open(os.path.join(args.out_dir, "nodes.mlir"), "w") as f:
            mops = write_mlir(f, prog, header)
        print_mix(i.kind for i in prog.instrs)
        print("weights: %d; mlir operations: %d" % (len(prog.weights) + 2, mops))
        manifest_pair(manifest, "nodes", "gir", len(prog.instrs))
    return finish(args, manifest, header, write_weights, "gir", "instructions")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
