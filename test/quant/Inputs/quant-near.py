#!/usr/bin/env python3
"""quant-near.py OUT.npy - 1 x 267 floats for c-quantize-near.glow: the
exact ties (k + 1/2) 49/64 for k = -133 ... 133 of the scale 49/64, each
a float32. Times the double reciprocal of the scale (inexact), 82 of
them come out one ulp off the tie, so that they would round to the
other integer than x / scale does; the kernel must divide those vectors
as the interpreter does. Checks that the data has such
values, so that the test keeps its point."""
import struct
import sys

scale = 49 / 64
vals = [(k + 0.5) * scale for k in range(-133, 134)]
assert all(struct.unpack("<f", struct.pack("<f", v))[0] == v for v in vals)
# round() is half to even, as the interpreter's nearbyint
assert sum(round(v * (1.0 / scale)) != round(v / scale) for v in vals) >= 80
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, %d), }" % len(vals)
header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%df" % len(vals), *vals))
