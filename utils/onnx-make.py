#!/usr/bin/env python3
"""onnx-make.py - writes an ONNX ModelProto from a compact text description.

Only the Python standard library: the protobuf wire format is encoded by hand
(field numbers from onnx/onnx.proto). Used by the importer's tests to build
tiny models.

    onnx-make.py SPEC -o model.onnx [--truncate N] [--garbage]

Lines of SPEC ('#' starts a comment, '//' lines are ignored so a spec can
live inside a lit test):

    opset 13                      default-domain opset (default 13)
    opset DOMAIN 1                an opset_import of another domain
    opset none                    no opset_import of the default domain
    ir 8                          IR version (default 8)
    graph NAME                    graph name
    input NAME TYPE DIM...        a graph input; a DIM that is not a number
                                  is symbolic (dim_param), '?' is unknown
    output NAME [TYPE DIM...]     a graph output
    value_info NAME TYPE DIM...   a value's declared type (GraphProto.value_info)
    init NAME TYPE DIM... = V...  an initializer (raw_data); V may be
                                  'fill X' (every element X)
    init NAME TYPE DIM... @ FILE OFFSET
                                  an initializer with external data
    init NAME TYPE DIM...         an initializer with no data at all
    node OP IN... -> OUT... [key=value...]
                                  a node; '_' is an empty input; attributes:
                                  name=S (node name), domain=S, and
                                  attr=i:3  f:0.5  s:text  ints:1,2
                                  floats:1,2.5  strings:a,b  t:TYPE:DIMS:VALUES
                                  (DIMS and VALUES comma separated, DIMS may
                                  be empty for a scalar)  g:NAME (a subgraph)
    subgraph NAME ... end         a subgraph (for If, Loop, Scan attributes
                                  g:NAME): the lines in between describe it
                                  (input, output, init, node, nested
                                  subgraphs); a subgraph input or output may
                                  omit its type
TYPE: float, float16, double, int8, uint8, int16, int32, int64, bool, string,
float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz, float8e8m0 (values:
the bits, 0..255), int4, uint4, float4e2m1 (values, float4e2m1's its 4-bit
codes 0..15, packed two per byte, the first in the low nibble).

--truncate N cuts the output after N bytes; --garbage writes bytes that are
not a protobuf message.
"""
import argparse
import os
import shlex
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from protowire import varint  # noqa: E402

DTYPES = {"undefined": 0, "float": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7,
          "string": 8, "bool": 9, "float16": 10, "double": 11, "uint32": 12, "uint64": 13, "bfloat16": 16,
          "float8e4m3fn": 17, "float8e4m3fnuz": 18, "float8e5m2": 19, "float8e5m2fnuz": 20, "uint4": 21, "int4": 22,
          "float4e2m1": 23, "float8e8m0": 24}
PACK = {1: "<f", 2: "<B", 3: "<b", 4: "<H", 5: "<h", 6: "<i", 7: "<q", 9: "<B", 10: "<e", 11: "<d",
        12: "<I", 13: "<Q", 17: "<B", 18: "<B", 19: "<B", 20: "<B", 24: "<B"}


def key(field, wire):
    return varint(field << 3 | wire)


def f_varint(field, v):
    return key(field, 0) + varint(v)


def f_bytes(field, b):
    if isinstance(b, str):
        b = b.encode()
    return key(field, 2) + varint(len(b)) + b


def f_float(field, v):
    return key(field, 5) + struct.pack("<f", v)


def encode_values(dtype, values):
    if dtype in (21, 22, 23):  # int4, uint4, float4e2m1: two per byte, the first in the low nibble
        v = [int(x) & 0xF for x in values] + [0] * (len(values) % 2)
        return bytes(v[i] | v[i + 1] << 4 for i in range(0, len(v), 2))
    if dtype not in PACK:
        raise SystemExit("onnx-make: no data encoding for element type %d" % dtype)
    fmt = PACK[dtype]
    out = bytearray()
    for v in values:
        out += struct.pack(fmt, float(v) if fmt in ("<f", "<e", "<d") else int(v))
    return bytes(out)


def numel(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def tensor(name, dtype, dims, values=None, external=None):
    b = bytearray()
    for d in dims:
        b += f_varint(1, d)
    b += f_varint(2, dtype)
    if name:
        b += f_bytes(8, name)
    if external:
        path, offset = external
        b += f_bytes(13, f_bytes(1, "location") + f_bytes(2, path))
        b += f_bytes(13, f_bytes(1, "offset") + f_bytes(2, str(offset)))
        b += f_varint(14, 1)
    elif values is not None:
        b += f_bytes(9, encode_values(dtype, values))
    return bytes(b)


def parse_values(tokens, dims):
    if tokens and tokens[0] == "fill":
        return [tokens[1]] * numel(dims)
    return tokens


def value_info(name, dtype=None, dims=None):
    b = f_bytes(1, name)
    if dtype is not None:
        shape = bytearray()
        for d in dims:
            if d == "?":
                dim = b""
            elif d.lstrip("-").isdigit():
                dim = f_varint(1, int(d))
            else:
                dim = f_bytes(2, d)
            shape += f_bytes(1, dim)
        tt = f_varint(1, dtype) + f_bytes(2, bytes(shape))
        b += f_bytes(2, f_bytes(1, tt))
    return b


def attribute(name, text, graphs):
    kind, _, val = text.partition(":")
    b = f_bytes(1, name)
    if kind == "g":
        if val not in graphs:
            raise SystemExit("onnx-make: attribute %s: no subgraph %s" % (name, val))
        return b + f_bytes(6, graphs[val]) + f_varint(20, 5)
    if kind == "i":
        return b + f_varint(3, int(val)) + f_varint(20, 2)
    if kind == "f":
        return b + f_float(2, float(val)) + f_varint(20, 1)
    if kind == "s":
        return b + f_bytes(4, val) + f_varint(20, 3)
    if kind == "ints":
        for v in filter(None, val.split(",")):
            b += f_varint(8, int(v))
        return b + f_varint(20, 7)
    if kind == "floats":
        for v in filter(None, val.split(",")):
            b += f_float(7, float(v))
        return b + f_varint(20, 6)
    if kind == "strings":
        for v in filter(None, val.split(",")):
            b += f_bytes(9, v)
        return b + f_varint(20, 8)
    if kind == "t":
        ty, dims, vals = val.split(":")
        dl = [int(d) for d in filter(None, dims.split(","))]
        return b + f_bytes(5, tensor(None, DTYPES[ty], dl, list(filter(None, vals.split(","))))) + f_varint(20, 4)
    raise SystemExit("onnx-make: bad attribute %s=%s" % (name, text))


class Graph:
    def __init__(self, name):
        self.name = name
        self.nodes, self.inits, self.inputs, self.outputs, self.infos = [], [], [], [], []

    def encode(self):
        g = bytearray()
        for n in self.nodes:
            g += f_bytes(1, n)
        g += f_bytes(2, self.name)
        for i in self.inits:
            g += f_bytes(5, i)
        for i in self.inputs:
            g += f_bytes(11, i)
        for o in self.outputs:
            g += f_bytes(12, o)
        for v in self.infos:
            g += f_bytes(13, v)
        return bytes(g)


def build(spec):
    opset, ir = 13, 8
    domains = []  # (domain, version) of other domains' opset_import
    stack = [Graph("g")]
    graphs = {}  # subgraph name -> encoded GraphProto
    for raw in spec.splitlines():
        line = raw.split("#")[0].strip()
        if line.startswith("//"):
            line = line[2:].strip()
            if not line.startswith("onnx:"):
                continue
            line = line[5:].strip()
        if not line:
            continue
        t = shlex.split(line)
        cur = stack[-1]
        if t[0] == "opset" and len(t) == 3:
            domains.append((t[1], int(t[2])))
        elif t[0] == "opset":
            opset = None if t[1] == "none" else int(t[1])
        elif t[0] == "ir":
            ir = int(t[1])
        elif t[0] == "graph":
            cur.name = t[1]
        elif t[0] == "subgraph":
            stack.append(Graph(t[1]))
        elif t[0] == "end":
            if len(stack) < 2:
                raise SystemExit("onnx-make: 'end' without 'subgraph'")
            g = stack.pop()
            graphs[g.name] = g.encode()
        elif t[0] in ("input", "output"):
            vi = value_info(t[1], DTYPES[t[2]], t[3:]) if len(t) > 2 else value_info(t[1])
            (cur.inputs if t[0] == "input" else cur.outputs).append(vi)
        elif t[0] == "value_info":
            cur.infos.append(value_info(t[1], DTYPES[t[2]], t[3:]))
        elif t[0] == "init":
            name, dtype = t[1], DTYPES[t[2]]
            if "@" in t:
                at = t.index("@")
                dims = [int(d) for d in t[3:at]]
                cur.inits.append(tensor(name, dtype, dims, external=(t[at + 1], int(t[at + 2]))))
            elif "=" in t:
                eq = t.index("=")
                dims = [int(d) for d in t[3:eq]]
                cur.inits.append(tensor(name, dtype, dims, parse_values(t[eq + 1:], dims)))
            else:  # dims and no data at all (a malformed model, for the importer's errors)
                cur.inits.append(tensor(name, dtype, [int(d) for d in t[3:]]))
        elif t[0] == "node":
            arrow = t.index("->")
            ins = t[2:arrow]
            rest = t[arrow + 1:]
            outs = [x for x in rest if "=" not in x]
            attrs = [x for x in rest if "=" in x]
            b = bytearray()
            for i in ins:
                b += f_bytes(1, "" if i == "_" else i)
            for o in outs:
                b += f_bytes(2, o)
            b += f_bytes(4, t[1])
            for a in attrs:
                k, _, v = a.partition("=")
                if k == "name":
                    b += f_bytes(3, v)
                elif k == "domain":
                    b += f_bytes(7, v)
                else:
                    b += f_bytes(5, attribute(k, v, graphs))
            cur.nodes.append(bytes(b))
        else:
            raise SystemExit("onnx-make: bad line: " + raw)
    if len(stack) != 1:
        raise SystemExit("onnx-make: subgraph %s has no 'end'" % stack[-1].name)
    m = f_varint(1, ir) + f_bytes(2, "onnx-make") + f_bytes(7, stack[0].encode())
    if opset is not None:
        m += f_bytes(8, f_bytes(1, "") + f_varint(2, opset))
    for dom, ver in domains:
        m += f_bytes(8, f_bytes(1, dom) + f_varint(2, ver))
    return m


def main():
    ap = argparse.ArgumentParser(description="Write an ONNX model from a compact text spec.")
    ap.add_argument("spec")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--truncate", type=int)
    ap.add_argument("--garbage", action="store_true")
    a = ap.parse_args()
    with open(a.spec) as f:
        data = build(f.read())
    if a.truncate is not None:
        data = data[:a.truncate]
    if a.garbage:
        data = b"\x0a\xff\xff\xff\xff\x0f garbage"
    with open(a.output, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
