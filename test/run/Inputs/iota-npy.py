"""iota-npy.py - writes a float32 .npy file of the given shape holding
0, 1, 2, ... in row-major order (a tensor too long for a RUN line).

    iota-npy.py OUT.npy D0,D1,...
"""
import struct
import sys

out, dims = sys.argv[1], [int(x) for x in sys.argv[2].split(",")]
n = 1
for d in dims:
    n *= d
shape = "(%s)" % (", ".join(map(str, dims)) + ("," if len(dims) == 1 else ""))
header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open(out, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%df" % n, *range(n)))
