#!/usr/bin/env python3
"""rand-npy.py - seeded random .npy tensors for the training tests.

    rand-npy.py DIR SEED NAME=float:DIMS ... NAME=int32:DIMS:CLASSES ...

writes DIR/NAME.npy per argument: floats uniform in [-1, 1), int32 labels
uniform in [0, CLASSES). DIMS is comma-separated. The values depend only on
SEED and the argument's position (Python's Mersenne Twister)."""
import os
import random
import struct
import sys


def write_npy(path, descr, dims, fmt, values):
    shape = "(" + "".join("%d," % d for d in dims) + ")"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


def main():
    out, seed = sys.argv[1], int(sys.argv[2])
    for i, spec in enumerate(sys.argv[3:]):
        name, rest = spec.split("=", 1)
        parts = rest.split(":")
        dims = [int(d) for d in parts[1].split(",")]
        count = 1
        for d in dims:
            count *= d
        rng = random.Random(seed * 1000 + i)
        if parts[0] == "float":
            write_npy(os.path.join(out, name + ".npy"), "<f4", dims, "f",
                      [rng.uniform(-1, 1) for _ in range(count)])
        else:
            classes = int(parts[2])
            write_npy(os.path.join(out, name + ".npy"), "<i4", dims, "i",
                      [rng.randrange(classes) for _ in range(count)])


main()
