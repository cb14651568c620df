#!/usr/bin/env python3
"""quant-edges.py OUT.npy - 1 x 27 floats for c-quantize.test: exact
halves of the scale 0.5 (ties: rounded to even), values past both ends
of qi8 and qui8 (saturated), infinities, NaN (the offset), -0.0, and
ordinary values, so that both the vector steps (8 at a time) and the
scalar tail see them."""
import struct
import sys

vals = [0.25, 0.75, -0.25, -0.75, 1.25, -1.25, 63.25, -64.25,
        1e30, -1e30, float("inf"), float("-inf"), float("nan"), -0.0, 0.0, 63.75,
        -63.75, 127.25, 3.1, -2.7, 0.125, 62.9, -65.0, 130.0, float("nan"), 0.25, -0.75]
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, %d), }" % len(vals)
header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%df" % len(vals), *vals))
