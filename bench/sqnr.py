#!/usr/bin/env python3
"""sqnr.py - the helpers of bench/quant.sh, standard library only.

  sqnr.py images OUT.npy N D1,D2,... SEED   N seeded uniform [0, 1) float
                                            images of shape D1 x D2 x ...
                                            as one batch (N x D1 x ...)
  sqnr.py image OUT.npy D1,D2,... SEED K    image K of that batch alone
  sqnr.py sqnr REF.npy GOT.npy [...]        SQNR in dB of GOT against REF
                                            (pairs; summed over all pairs):
                                            10 log10(sum ref^2 / sum (ref - got)^2)
  sqnr.py logits IN.glow OUT.glow           the module without its last
                                            SoftMax: the Save of the
                                            SoftMax's result saves its input
                                            (the logits) instead
"""
import math
import random
import re
import struct
import sys


def write_npy(path, dims, vals):
    shape = "(%s)" % "".join("%d, " % d for d in dims) if len(dims) != 1 else "(%d,)" % dims[0]
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape.replace(", )", ")")
    header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % len(vals), *vals))


def read_npy(path):
    data = open(path, "rb").read()
    hl = struct.unpack("<H", data[8:10])[0]
    assert "'<f4'" in data[10:10 + hl].decode(), path + ": not float32"
    body = data[10 + hl:]
    return struct.unpack("<%df" % (len(body) // 4), body)


def images(n, dims, seed):
    rng = random.Random(seed)
    count = 1
    for d in dims:
        count *= d
    return [[rng.random() for _ in range(count)] for _ in range(n)]


def logits(src, dst):
    lines = open(src).read().split("\n")
    soft = [k for k, ln in enumerate(lines) if re.match(r"\s*%(\S+) = SoftMax\((%[^,)]+)\)", ln)]
    if not soft:
        sys.exit(src + ": no SoftMax")
    m = re.match(r"\s*%(\S+) = SoftMax\((%[^,)]+)\)", lines[soft[-1]])
    res, arg = "%" + m.group(1), m.group(2)
    out = []
    for k, ln in enumerate(lines):
        if k == soft[-1]:
            continue
        out.append(ln.replace("Save(%s," % res, "Save(%s," % arg))
    open(dst, "w").write("\n".join(out))


def main():
    cmd = sys.argv[1]
    if cmd == "images":
        out, n, dims, seed = sys.argv[2], int(sys.argv[3]), [int(d) for d in sys.argv[4].split(",")], int(sys.argv[5])
        write_npy(out, [n] + dims, [v for img in images(n, dims, seed) for v in img])
    elif cmd == "image":
        out, dims, seed, k = sys.argv[2], [int(d) for d in sys.argv[3].split(",")], int(sys.argv[4]), int(sys.argv[5])
        write_npy(out, dims, images(k + 1, dims, seed)[k])
    elif cmd == "sqnr":
        sig = noise = 0.0
        files = sys.argv[2:]
        for ref, got in zip(files[0::2], files[1::2]):
            r, g = read_npy(ref), read_npy(got)
            sig += sum(x * x for x in r)
            noise += sum((x - y) ** 2 for x, y in zip(r, g))
        print("inf" if noise == 0 else "%.1f" % (10 * math.log10(sig / noise)))
    elif cmd == "logits":
        logits(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
