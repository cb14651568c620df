"""mask-stats.py - checks two dropout masks (float32 .npy files written by
glow-run) of one DropoutMask at consecutive steps (dropout-mask.test):

    mask-stats.py RATIO STEP0.npy STEP1.npy

Every element must be 0 or 1 / (1 - RATIO); the fraction of zeros of each
mask within 0.03 of RATIO (for the 2,000 elements of the test, about four
standard deviations); the two masks must differ in at least a quarter of
their elements, and where a mask is 0 its neighbour must not be
systematically 0 too (no stripes: a zero is followed by a zero with about
the probability RATIO). Prints one line per finding; exit status 1 on a
failure.
"""
import struct
import sys


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        sys.exit(f"{path}: not a .npy file")
    hlen = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + hlen].decode("latin1")
    if "'<f4'" not in header:
        sys.exit(f"{path}: not float32: {header}")
    body = data[10 + hlen:]
    return list(struct.unpack(f"<{len(body) // 4}f", body))


def main():
    ratio = float(sys.argv[1])
    masks = [load(p) for p in sys.argv[2:4]]
    scale = 1.0 / (1.0 - ratio)
    ok = True
    for i, m in enumerate(masks):
        bad = [v for v in m if v != 0.0 and abs(v - scale) > 1e-6 * scale]
        zeros = sum(1 for v in m if v == 0.0) / len(m)
        pairs = [(a, b) for a, b in zip(m, m[1:]) if a == 0.0]
        follow = sum(1 for a, b in pairs if b == 0.0) / max(len(pairs), 1)
        print(f"step {i}: {len(bad)} values other than 0 and {scale:.6g}")
        print(f"step {i}: zero fraction {'ok' if abs(zeros - ratio) <= 0.03 else 'WRONG %.4f' % zeros}")
        print(f"step {i}: zero after zero {'ok' if abs(follow - ratio) <= 0.06 else 'WRONG %.4f' % follow}")
        ok &= not bad and abs(zeros - ratio) <= 0.03 and abs(follow - ratio) <= 0.06
    diff = sum(1 for a, b in zip(*masks) if a != b) / len(masks[0])
    print(f"steps differ: {'ok' if diff >= 0.25 else 'WRONG %.4f' % diff}")
    ok &= diff >= 0.25
    sys.exit(0 if ok else 1)


main()
