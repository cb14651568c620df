#!/usr/bin/env python3
"""tensor-make.py - writes one tensor as a NumPy .npy file or an ONNX
TensorProto .pb file, with the Python standard library only.

    tensor-make.py -o FILE.npy|FILE.pb TYPE DIMS VALUE...
    tensor-make.py -o FILE.pb --name NAME TYPE DIMS VALUE...

TYPE: float, float16, bfloat16, int8, uint8, int16, int32, int64, bool,
double. DIMS: comma-separated dimensions ('' or 'scalar' for rank 0).
VALUEs: one per element, or 'fill X' for every element; floats accept nan,
inf, -inf; bool takes 0/1/true/false. The format follows the suffix of -o.
.pb files store raw_data unless --typed asks for the typed repeated fields
(float_data, int32_data, int64_data, double_data). bfloat16 in .npy is
stored as '<u2' (its bit patterns), the convention of glow-run.
"""
import argparse
import math
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from protowire import varint  # noqa: E402

# ONNX TensorProto.DataType codes, .npy descr, struct format
TYPES = {
    "float": (1, "<f4", "<f"), "uint8": (2, "|u1", "<B"), "int8": (3, "|i1", "<b"),
    "int16": (5, "<i2", "<h"), "int32": (6, "<i4", "<i"), "int64": (7, "<i8", "<q"),
    "bool": (9, "|b1", "<B"), "float16": (10, "<f2", "<e"), "double": (11, "<f8", "<d"),
    "bfloat16": (16, "<u2", "<H"),
}


def field(num, wire, payload):
    return varint(num << 3 | wire) + payload


def bf16_bits(x):
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    if math.isnan(x):
        return 0x7FC0
    return (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16  # round to nearest even


def parse_value(tname, text):
    if tname in ("float", "float16", "double", "bfloat16"):
        return float(text)
    if tname == "bool":
        low = text.lower()
        return 1 if low == "true" else 0 if low == "false" else int(text)
    return int(text)


def element_bytes(tname, values):
    fmt = TYPES[tname][2]
    if tname == "bfloat16":
        return b"".join(struct.pack("<H", bf16_bits(v)) for v in values)
    return b"".join(struct.pack(fmt, v) for v in values)


def npy(tname, dims, data):
    if len(dims) == 1:
        shape = "(%d,)" % dims[0]
    else:
        shape = "(" + ", ".join("%d" % d for d in dims) + ")"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (TYPES[tname][1], shape)
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * (pad % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data


def pb(tname, dims, values, data, name, typed):
    code = TYPES[tname][0]
    out = b"".join(field(1, 0, varint(d)) for d in dims)
    out += field(2, 0, varint(code))
    if name is not None:
        out += field(8, 2, varint(len(name.encode())) + name.encode())
    if not typed:
        return out + field(9, 2, varint(len(data)) + data)
    if tname == "float":
        body = b"".join(struct.pack("<f", v) for v in values)
        return out + field(4, 2, varint(len(body)) + body)
    if tname == "double":
        body = b"".join(struct.pack("<d", v) for v in values)
        return out + field(10, 2, varint(len(body)) + body)
    if tname == "int64":
        body = b"".join(varint(v) for v in values)
        return out + field(7, 2, varint(len(body)) + body)
    if tname == "float16":
        ints = [struct.unpack("<H", struct.pack("<e", v))[0] for v in values]
    elif tname == "bfloat16":
        ints = [bf16_bits(v) for v in values]
    else:
        ints = values
    body = b"".join(varint(v) for v in ints)
    return out + field(5, 2, varint(len(body)) + body)


def main():
    ap = argparse.ArgumentParser(description="write a .npy or TensorProto .pb tensor")
    ap.add_argument("-o", required=True)
    ap.add_argument("--name")
    ap.add_argument("--typed", action="store_true")
    ap.add_argument("type", choices=sorted(TYPES))
    ap.add_argument("dims")
    ap.add_argument("values", nargs="*")
    a = ap.parse_args()
    dims = [] if a.dims in ("", "scalar") else [int(d) for d in a.dims.split(",")]
    n = 1
    for d in dims:
        n *= d
    if len(a.values) == 2 and a.values[0] == "fill":
        values = [parse_value(a.type, a.values[1])] * n
    else:
        values = [parse_value(a.type, v) for v in a.values]
    if len(values) != n:
        sys.exit("tensor-make.py: %d values given, shape %s needs %d" % (len(values), dims, n))
    data = element_bytes(a.type, values)
    if a.o.endswith(".npy"):
        blob = npy(a.type, dims, data)
    else:
        blob = pb(a.type, dims, values, data, a.name, a.typed)
    with open(a.o, "wb") as f:
        f.write(blob)


if __name__ == "__main__":
    main()
