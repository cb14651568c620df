"""gradient-ref.py - the expected outputs of import-gradient.test, computed
with the Python standard library from the closed form (not by the
toolchain): for y = tanh(x w) with x 2 x 3 and w 3 x 2,
    d sum(y) / dx = (1 - y^2) w^T,   d sum(y) / dw = x^T (1 - y^2).

    gradient-ref.py OUTDIR X0..X5 W0..W5

writes OUTDIR/dy_dx.npy and OUTDIR/dy_dw.npy with tensor-make.py's format.
"""
import math
import os
import struct
import sys


def save(path, dims, vals):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join("%d, " % d for d in dims)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%df" % len(vals), *vals))


out = sys.argv[1]
v = [float(a) for a in sys.argv[2:14]]
x = [v[0:3], v[3:6]]
w = [v[6:8], v[8:10], v[10:12]]
y = [[math.tanh(sum(x[i][k] * w[k][j] for k in range(3))) for j in range(2)] for i in range(2)]
d = [[1 - y[i][j] ** 2 for j in range(2)] for i in range(2)]
dx = [sum(d[i][j] * w[k][j] for j in range(2)) for i in range(2) for k in range(3)]
dw = [sum(x[i][k] * d[i][j] for i in range(2)) for k in range(3) for j in range(2)]
save(os.path.join(out, "dy_dx.npy"), (2, 3), dx)
save(os.path.join(out, "dy_dw.npy"), (3, 2), dw)
