#!/usr/bin/env python3
"""gen_graph.py - synthetic graphs for the text round-trip benchmark.

Design: one seeded description, two printers. The generator draws a chain of
tensor ops (a realistic mix of elementwise, shape and matmul ops on small
shapes) once, as a list of records (kind, operands, attributes, result
shape), and writes that same list both as graph IR (.glow) and as the
equivalent tosa dialect text that Debian's mlir-opt 14 accepts (generic op
form, `func`/`return` of the builtin and standard dialects of MLIR 14).
Nothing in the list depends on the output format, so the two files carry the
same ops on the same shapes by construction; `--compare` checks that again
on the tools' printed output.

Two files per format:
  nodes.{glow,mlir}    node-heavy: --nodes ops (the final Save / return
                       counted), no weights.
  weights.{glow,mlir}  weight-heavy: one float constant of --weight-mb
                       megabytes (10^6 bytes, rounded up to whole rows of
                       256 floats) as little-endian hex, used by a few ops.
The weight bytes are the same in both files: float32 values whose exponent
is forced into [2^-7, 2) with random sign and mantissa (weights of a trained
network look like that; no NaN or infinity, so any reader keeps them).

Shape classes: every value has one of a few shapes of 256 or 128 elements.
Reshape moves between shapes of the same element count, Slice halves
[16 x 16] -> [8 x 16] and [32 x 8] -> [16 x 8], Concat joins two halves back,
Transpose swaps the two dimensions of a matrix (or the last two of
[1 x 16 x 16]), BatchMatMul (tosa.matmul, which is rank 3 only) works on
[1 x 16 x 16]. When a drawn op does not apply to the current value's shape the
generator first reshapes to a shape where it does, or falls back to a unary
elementwise op; the printed summary gives the resulting mix.

Usage:
  gen_graph.py --out-dir D [--nodes N] [--weight-mb M] [--seed S]
  gen_graph.py --compare OUT.glow OUT.mlir
Writes D/nodes.*, D/weights.* (a size of 0 skips that pair) and D/manifest.tsv
(file, format, node count, bytes), and prints a summary. Needs Python 3.9 or
later (random.randbytes); the output depends only on the arguments.
"""

import argparse
import collections
import os
import random
import re
import sys

# Shapes (tuples of dims) by element count.
S16 = (16, 16)
HALF0 = (8, 16)   # Slice of [16 x 16] along dim 0
HALF1 = (16, 8)   # Slice of [32 x 8] along dim 0; Concat of two on dim 1
B3 = (1, 16, 16)  # BatchMatMul / tosa.matmul operand and result
SHAPES256 = [S16, (8, 32), (32, 8), (4, 64), B3]
SHAPES128 = [HALF0, HALF1]

# Graph IR kind -> tosa op name (Relu is tosa.clamp with these bounds).
BINARY = {"Add": "tosa.add", "Mul": "tosa.mul", "Sub": "tosa.sub", "Max": "tosa.maximum"}
UNARY = {"Relu": "tosa.clamp", "Tanh": "tosa.tanh", "Sigmoid": "tosa.sigmoid", "Exp": "tosa.exp"}
TOSA = dict(BINARY)
TOSA.update(UNARY)
TOSA.update({"Transpose": "tosa.transpose", "Reshape": "tosa.reshape", "Slice": "tosa.slice",
             "Concat": "tosa.concat", "BatchMatMul": "tosa.matmul"})
RELU_ATTRS = ("{min_int = 0 : i64, max_int = 2147483647 : i64, min_fp = 0.0 : f32, "
              "max_fp = 3.40282347E+38 : f32}")

# The drawn mix, by weight.
MIX = [("binary", 36), ("unary", 24), ("Transpose", 10), ("Reshape", 12), ("Slice", 7),
       ("Concat", 6), ("BatchMatMul", 5)]

POOL = 8  # recent values per shape that a binary op may take as second operand


class Op:
    """One node: kind, operand value ids, attributes (a dict), result shape.
    Value ids: >= 0 the result of op number id, -1-i graph input i."""
    __slots__ = ("kind", "args", "attrs", "shape")

    def __init__(self, kind, args, attrs, shape):
        self.kind = kind
        self.args = args
        self.attrs = attrs
        self.shape = shape


def nelems(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class Chain:
    """Draws the node list. State: the head value (the last result), its
    shape, and per shape the last few values."""

    def __init__(self, rng):
        self.rng = rng
        self.ops = []
        self.shape_of = {-1: S16, -2: S16}
        self.pool = collections.defaultdict(lambda: collections.deque(maxlen=POOL))
        self.pool[S16].extend([-1, -2])
        self.head = -1
        kinds, weights = zip(*MIX)
        self.mix_kinds = kinds
        self.mix_cum = []
        total = 0
        for w in weights:
            total += w
            self.mix_cum.append(total)

    def emit(self, kind, args, attrs, shape):
        vid = len(self.ops)
        self.ops.append(Op(kind, args, attrs, shape))
        self.shape_of[vid] = shape
        self.pool[shape].append(vid)
        self.head = vid

    def reshape_to(self, shapes):
        sh = self.shape_of[self.head]
        cands = [s for s in shapes if s != sh and nelems(s) == nelems(sh)]
        if not cands:
            return False
        self.emit("Reshape", [self.head], None, self.rng.choice(cands))
        return True

    def unary(self):
        kind = self.rng.choice(list(UNARY))
        self.emit(kind, [self.head], None, self.shape_of[self.head])

    def slice_half(self):
        """Slices the head ([16 x 16] or [32 x 8]) in half along dim 0."""
        h = self.head
        sh = self.shape_of[h]
        if sh == S16:
            self.emit("Slice", [h], {"start": [self.rng.choice((0, 8)), 0]}, HALF0)
        else:
            self.emit("Slice", [h], {"start": [self.rng.choice((0, 16)), 0]}, HALF1)

    def pair(self, kind, attrs, shape):
        """A two-operand op of the head and a recent value of its shape."""
        h = self.head
        other = self.rng.choice(self.pool[self.shape_of[h]])
        args = [h, other] if self.rng.random() < 0.5 else [other, h]
        self.emit(kind, args, attrs, shape)

    def step(self):
        """Draws one op from the mix and emits it, preceded by a Reshape or
        Slice when the head's shape does not fit it."""
        rng = self.rng
        r = rng.random() * self.mix_cum[-1]
        what = self.mix_kinds[next(i for i, c in enumerate(self.mix_cum) if r < c)]
        sh = self.shape_of[self.head]
        if what == "binary":
            self.pair(rng.choice(list(BINARY)), None, sh)
        elif what == "unary":
            self.unary()
        elif what == "Transpose":
            if len(sh) == 2:
                self.emit("Transpose", [self.head], {"shuffle": [1, 0]}, (sh[1], sh[0]))
            else:
                self.emit("Transpose", [self.head], {"shuffle": [0, 2, 1]}, (sh[0], sh[2], sh[1]))
        elif what == "Reshape":
            if not self.reshape_to(SHAPES256 + SHAPES128):
                self.unary()
        elif what == "Slice":
            if sh in (S16, (32, 8)) or self.reshape_to([S16, (32, 8)]):
                self.slice_half()
            else:
                self.unary()
        elif what == "Concat":
            if sh == S16:
                self.slice_half()
                sh = HALF0
            elif sh not in SHAPES128:
                self.unary()
                return
            self.pair("Concat", {"dim": 0 if sh == HALF0 else 1}, S16)
        elif what == "BatchMatMul":
            if sh == B3 or self.reshape_to([B3]):
                self.pair("BatchMatMul", None, B3)
            else:
                self.unary()


def draw_chain(nops, seed):
    """Returns the op list of a node-heavy graph: nops ops (before the final
    Save), the last one landing on [16 x 16]."""
    chain = Chain(random.Random(seed))
    while len(chain.ops) < nops - 1:
        chain.step()
    # a step may emit two ops: drop the one past the budget
    del chain.ops[max(nops - 1, 0):]
    chain.head = len(chain.ops) - 1 if chain.ops else -1
    sh = chain.shape_of[chain.head]
    if sh == S16:
        chain.unary()
    elif nelems(sh) == 256:
        chain.emit("Reshape", [chain.head], None, S16)
    else:
        chain.emit("Concat", [chain.head, chain.head], {"dim": 0 if sh == HALF0 else 1}, S16)
    return chain.ops


# ---------------------------------------------------------------- printers

def glow_type(shape):
    return "float<" + " x ".join(str(d) for d in shape) + ">"


def mlir_type(shape):
    return "tensor<" + "x".join(str(d) for d in shape) + "xf32>"


def glow_attrs(attrs):
    if not attrs:
        return ""
    parts = []
    for k, v in attrs.items():
        if isinstance(v, list):
            parts.append("%s = [%s]" % (k, ", ".join(str(x) for x in v)))
        else:
            parts.append("%s = %s" % (k, v))
    return " {" + ", ".join(parts) + "}"


def write_glow_nodes(f, ops, names, header):
    f.write(header)
    f.write("module @bench_nodes\n\n")
    f.write("placeholder @in0 : float<16 x 16>\n")
    f.write("placeholder @in1 : float<16 x 16>\n")
    f.write("placeholder @out : float<16 x 16>\n\n")
    f.write("func @main {\n")
    for i, op in enumerate(ops):
        args = ", ".join(names[a] for a in op.args)
        f.write("  %s = %s(%s)%s : %s\n" % (names[i], op.kind, args, glow_attrs(op.attrs),
                                            glow_type(op.shape)))
    f.write("  Save(%s, @out)\n}\n" % names[len(ops) - 1])


def glow_names(ops):
    """%add12 style names (kind + index), inputs as the placeholders."""
    names = {-1: "@in0", -2: "@in1"}
    for i, op in enumerate(ops):
        names[i] = "%" + op.kind.lower() + str(i)
    return names


def mlir_op_line(op, res, argnames, argshapes, perm2, perm3):
    rt = mlir_type(op.shape)
    kind = op.kind
    attrs = ""
    if kind == "Transpose":
        argnames = argnames + [perm2 if len(op.shape) == 2 else perm3]
        argshapes = argshapes + [None]
    elif kind == "Reshape":
        attrs = " {new_shape = [%s]}" % ", ".join(str(d) for d in op.shape)
    elif kind == "Slice":
        attrs = " {start = [%s], size = [%s]}" % (", ".join(str(d) for d in op.attrs["start"]),
                                                 ", ".join(str(d) for d in op.shape))
    elif kind == "Concat":
        attrs = " {axis = %d : i64}" % op.attrs["dim"]
    elif kind == "Mul":
        attrs = " {shift = 0 : i32}"
    elif kind == "Relu":
        attrs = " " + RELU_ATTRS
    ats = []
    for i, s in enumerate(argshapes):
        if s is None:
            ats.append("tensor<%dxi32>" % (2 if len(op.shape) == 2 else 3))
        else:
            ats.append(mlir_type(s))
    return '    %s = "%s"(%s)%s : (%s) -> %s\n' % (res, TOSA[kind], ", ".join(argnames), attrs,
                                                  ", ".join(ats), rt)


def write_mlir_nodes(f, ops, header):
    f.write(header)
    f.write("module {\n")
    f.write("  func @main(%arg0: tensor<16x16xf32>, %arg1: tensor<16x16xf32>) -> tensor<16x16xf32> {\n")
    f.write('    %perm2 = "tosa.const"() {value = dense<[1, 0]> : tensor<2xi32>} : () -> tensor<2xi32>\n')
    f.write('    %perm3 = "tosa.const"() {value = dense<[0, 2, 1]> : tensor<3xi32>} : () -> tensor<3xi32>\n')
    names = {-1: "%arg0", -2: "%arg1"}
    shapes = {-1: S16, -2: S16}
    for i, op in enumerate(ops):
        names[i] = "%" + str(i)
        shapes[i] = op.shape
        f.write(mlir_op_line(op, names[i], [names[a] for a in op.args],
                             [shapes[a] for a in op.args], "%perm2", "%perm3"))
    f.write("    return %%%d : tensor<16x16xf32>\n  }\n}\n" % (len(ops) - 1))


WEIGHT_COLS = 256
CHUNK_ROWS = 4096  # rows of weights generated and written at a time (4 MiB)


def weight_chunks(rows, seed):
    """Yields the weight bytes in chunks: random bytes with the top byte of
    each little-endian float32 rewritten to sign | exponent 0x78..0x7f."""
    rng = random.Random(seed ^ 0x5eed)
    table = bytes((b & 0x80) | (0x3c + (b & 0x03)) for b in range(256))
    left = rows
    while left > 0:
        n = min(left, CHUNK_ROWS)
        buf = bytearray(rng.randbytes(n * WEIGHT_COLS * 4))
        buf[3::4] = bytes(buf[3::4]).translate(table)
        yield bytes(buf)
        left -= n


def write_weights(dirname, weight_mb, seed, header):
    """Writes weights.glow and weights.mlir; returns the node count."""
    rows = max(1, -(-int(weight_mb * 1e6) // (WEIGHT_COLS * 4)))
    wshape = (rows, WEIGHT_COLS)
    last = rows - 1
    with open(os.path.join(dirname, "weights.glow"), "w") as g, \
            open(os.path.join(dirname, "weights.mlir"), "w") as m:
        g.write(header)
        g.write("module @bench_weights\n\n")
        g.write("placeholder @in0 : float<16 x 16>\n")
        g.write("placeholder @out : float<16 x 16>\n")
        g.write('constant @w : %s = dense "0x' % glow_type(wshape))
        m.write(header)
        m.write("module {\n")
        m.write("  func @main(%arg0: tensor<16x16xf32>) -> tensor<16x16xf32> {\n")
        m.write('    %w = "tosa.const"() {value = dense<"0x')
        for chunk in weight_chunks(rows, seed):
            h = chunk.hex()
            g.write(h)
            m.write(h)
        g.write('"\n\nfunc @main {\n')
        m.write('"> : %s} : () -> %s\n' % (mlir_type(wshape), mlir_type(wshape)))
        # Slice the first and the last row, reshape, combine with the input.
        ops = [
            Op("Slice", [-10], {"start": [0, 0]}, (1, 256)),
            Op("Slice", [-10], {"start": [last, 0]}, (1, 256)),
            Op("Reshape", [0], None, S16),
            Op("Reshape", [1], None, S16),
            Op("Mul", [2, -1], None, S16),
            Op("Add", [4, 3], None, S16),
            Op("Relu", [5], None, S16),
        ]
        gn = {-1: "@in0", -10: "@w"}
        mn = {-1: "%arg0", -10: "%w"}
        shapes = {-1: S16, -10: wshape}
        for i, op in enumerate(ops):
            gn[i] = "%" + op.kind.lower() + str(i)
            mn[i] = "%" + str(i)
            shapes[i] = op.shape
            g.write("  %s = %s(%s)%s : %s\n" % (gn[i], op.kind, ", ".join(gn[a] for a in op.args),
                                                glow_attrs(op.attrs), glow_type(op.shape)))
            m.write(mlir_op_line(op, mn[i], [mn[a] for a in op.args],
                                 [shapes[a] for a in op.args], None, None))
        g.write("  Save(%s, @out)\n}\n" % gn[len(ops) - 1])
        m.write("    return %%%d : tensor<16x16xf32>\n  }\n}\n" % (len(ops) - 1))
    return len(ops) + 1


# ---------------------------------------------------------------- compare

GLOW_NODE = re.compile(r"^\s*%\S+ = (\w+)\(.*: float<([0-9 x]+)>\s*$")
GLOW_SAVE = re.compile(r"^\s*Save\(")
MLIR_OP = re.compile(r'"(tosa\.\w+)"\(.*-> tensor<([0-9x]+)xf32>\s*$')
MLIR_RET = re.compile(r"^\s*(return|func\.return|std\.return)\b")


def census_glow(path):
    c = collections.Counter()
    with open(path) as f:
        for line in f:
            m = GLOW_NODE.match(line)
            if m:
                c[(TOSA.get(m.group(1), m.group(1)), m.group(2).replace(" ", ""))] += 1
            elif GLOW_SAVE.match(line):
                c[("return", "")] += 1
    return c


def census_mlir(path):
    c = collections.Counter()
    with open(path) as f:
        for line in f:
            m = MLIR_OP.search(line)
            if m and m.group(1) != "tosa.const":
                c[(m.group(1), m.group(2))] += 1
            elif MLIR_RET.match(line):
                c[("return", "")] += 1
    return c


def compare(glow_path, mlir_path):
    """Checks that a .glow and a .mlir file (as printed by the tools) hold
    the same multiset of (op, result shape); tosa.const is not a node."""
    g = census_glow(glow_path)
    m = census_mlir(mlir_path)
    if g != m:
        for key in sorted(set(g) | set(m)):
            if g[key] != m[key]:
                print("mismatch: %s %s: %d in %s, %d in %s" % (key[0], key[1], g[key], glow_path,
                                                              m[key], mlir_path))
        return 1
    print("equivalent: %d nodes, %d kinds on shapes" % (sum(g.values()), len(g)))
    return 0


# ---------------------------------------------------------------- main

def write_manifest(out_dir, manifest, unit):
    """OUT_DIR/manifest.tsv, what measure.py reads: a line per generated
    file of manifest (name, format, count), with its size in bytes; each
    also printed with its count in `unit` (nodes, instructions)."""
    with open(os.path.join(out_dir, "manifest.tsv"), "w") as f:
        for name, fmt, n in manifest:
            size = os.path.getsize(os.path.join(out_dir, name))
            f.write("%s\t%s\t%d\t%d\n" % (name, fmt, n, size))
            print("%s: %d %s, %d bytes" % (name, n, unit, size))


def print_mix(kinds, extra=""):
    """Prints how many of each kind a generated file has ("mix: Add=3 ..."),
    then extra."""
    mix = collections.Counter(kinds)
    print("mix: " + " ".join("%s=%d" % kv for kv in sorted(mix.items())) + extra)


def manifest_pair(manifest, stem, ext, n):
    """Adds the two files of one generated program to manifest: STEM.EXT in
    this generator's format and STEM.mlir, n nodes or instructions each."""
    manifest.append(("%s.%s" % (stem, ext), "glow", n))
    manifest.append((stem + ".mlir", "mlir", n))


def finish(args, manifest, header, write_weights, ext, unit):
    """The end of both generators' main (gen_ir.py too): the weight files of
    --weight-mb, written by the generator's own write_weights, then the
    manifest. Returns main's exit status."""
    if args.weight_mb:
        manifest_pair(manifest, "weights", ext, write_weights(args.out_dir, args.weight_mb, args.seed, header))
    write_manifest(args.out_dir, manifest, unit)
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", help="directory to write the files to")
    ap.add_argument("--nodes", type=int, default=1000000,
                    help="nodes of the node-heavy graph, Save included (0: skip)")
    ap.add_argument("--weight-mb", type=float, default=100.0,
                    help="megabytes (10^6 bytes) of constant data (0: skip)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--compare", nargs=2, metavar=("GLOW", "MLIR"),
                    help="check two printed files for the same ops on the same shapes")
    args = ap.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    if not args.out_dir:
        ap.error("--out-dir is required")
    if args.nodes == 1 or args.nodes < 0 or args.weight_mb < 0:
        ap.error("--nodes must be 0 or at least 2, --weight-mb not negative")
    os.makedirs(args.out_dir, exist_ok=True)
    manifest = []
    header = "// bench/gen_graph.py --nodes %d --weight-mb %g --seed %d\n" % (
        args.nodes, args.weight_mb, args.seed)
    if args.nodes:
        ops = draw_chain(args.nodes - 1, args.seed)
        gpath = os.path.join(args.out_dir, "nodes.glow")
        mpath = os.path.join(args.out_dir, "nodes.mlir")
        with open(gpath, "w") as f:
            write_glow_nodes(f, ops, glow_names(ops), header)
        with open(mpath, "w") as f:
            write_mlir_nodes(f, ops, header)
        print_mix((op.kind for op in ops), " Save=1")
        manifest_pair(manifest, "nodes", "glow", len(ops) + 1)
    return finish(args, manifest, header, write_weights, "glow", "nodes")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
