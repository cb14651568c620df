#!/usr/bin/env python3
"""quant_fashion.py - the helpers of bench/quant-fashion.sh, standard
library only.

  quant_fashion.py idx IMAGES.idx[.gz] OUT.npy FIRST COUNT SHAPE
      images FIRST .. FIRST+COUNT-1 of an IDX image file as one float32
      batch of shape COUNT x SHAPE (SHAPE: "784" or "28,28,1"), scaled
      x / 255 as glow-run's training run feeds them (docs/Training.md)
  quant_fashion.py infer MODEL.glow WEIGHTS-DIR BATCH OUT.glow
      the inference module of a training model of examples/fashion: its
      @infer function (else @train without the loss: the nodes after the
      Save of @logits go), at batch BATCH, every trainable placeholder a
      constant read from WEIGHTS-DIR/NAME.bin (raw little-endian float32,
      written by the `bin` command from glow-run's trained NAME.npy)
  quant_fashion.py bin WEIGHTS-DIR
      NAME.bin (the raw data) beside every float32 NAME.npy of WEIGHTS-DIR
      (other element types are skipped)
  quant_fashion.py accuracy LABELS.idx[.gz] LOGITS.npy...
      the fraction (%) of the labels the logits' argmax gets right; the
      logits files cover the first labels in order (batches of the test set)
"""
import gzip
import re
import struct
import sys


def idx_read(path):
    """(dims, raw bytes) of an unsigned-byte IDX file, gzip or not."""
    data = (gzip.open if path.endswith(".gz") else open)(path, "rb").read()
    if data[0:2] != b"\0\0" or data[2] != 0x08:
        sys.exit("%s: not an unsigned-byte IDX file" % path)
    rank = data[3]
    dims = struct.unpack(">%dI" % rank, data[4:4 + 4 * rank])
    return dims, data[4 + 4 * rank:]


def npy_header(dims):
    shape = "(%s)" % ", ".join(str(d) for d in dims) if len(dims) != 1 else "(%d,)" % dims[0]
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape
    header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode()


def npy_body(path, need_float=True):
    """(dims, float32 payload bytes) of a float32 .npy file; None for
    another element type unless need_float."""
    data = open(path, "rb").read()
    hl = struct.unpack("<H", data[8:10])[0]
    head = data[10:10 + hl].decode()
    if "'<f4'" not in head:
        if not need_float:
            return None
        sys.exit(path + ": not float32")
    dims = [int(d) for d in re.search(r"\(([^)]*)\)", head).group(1).replace(",", " ").split()]
    return dims, data[10 + hl:]


def cmd_idx(path, out, first, count, shape):
    dims, raw = idx_read(path)
    per = 1
    for d in dims[1:]:
        per *= d
    if first + count > dims[0]:
        sys.exit("%s: has %d images, not %d" % (path, dims[0], first + count))
    block = raw[first * per:(first + count) * per]
    with open(out, "wb") as f:
        f.write(npy_header([count] + shape))
        f.write(struct.pack("<%df" % len(block), *[b / 255.0 for b in block]))


def cmd_infer(model, wdir, batch, out):
    lines = open(model).read().split("\n")
    text = "\n".join(lines)
    fname = "infer" if re.search(r"^func @infer \{", text, re.M) else "train"
    res = []
    body, in_func, done = [], False, False
    for ln in lines:
        m = re.match(r"placeholder @(\S+) : float<([^>]*)> trainable$", ln)
        if m:
            res.append('constant @%s : float<%s> = file "%s/%s.bin"' % (m.group(1), m.group(2), wdir, m.group(1)))
            continue
        m = re.match(r"placeholder @(image|logits) : float<\d+ x (.*)>$", ln)
        if m:
            res.append("placeholder @%s : float<%d x %s>" % (m.group(1), batch, m.group(2)))
            continue
        if ln.startswith("module ") or ln.startswith("//") or not ln.strip():
            res.append(ln)
            continue
        if ln.startswith("func @"):
            in_func = ln.startswith("func @%s {" % fname)
            done = False
            continue
        if in_func:
            if ln == "}":
                in_func = False
                continue
            if done:
                continue
            # every result's leading dimension is the batch
            body.append(re.sub(r": float<\d+ x", ": float<%d x" % batch,
                               re.sub(r"index64<\d+ x", "index64<%d x" % batch, ln)))
            done = "Save(" in ln and "@logits)" in ln
    res = [ln for ln in res if not re.match(r"placeholder @(label|loss) ", ln)]
    open(out, "w").write("\n".join(res).rstrip("\n") + "\n\nfunc @infer {\n" + "\n".join(body) + "\n}\n")


def cmd_bin(wdir):
    import os
    for name in sorted(os.listdir(wdir)):
        got = npy_body(os.path.join(wdir, name), False) if name.endswith(".npy") else None
        if got:  # the float weights (not a dropout step counter)
            open(os.path.join(wdir, name[:-4] + ".bin"), "wb").write(got[1])


def cmd_accuracy(labels, files):
    _, lab = idx_read(labels)
    right = total = 0
    for path in files:
        dims, body = npy_body(path)
        classes = dims[-1]
        vals = struct.unpack("<%df" % (len(body) // 4), body)
        for k in range(len(vals) // classes):
            row = vals[k * classes:(k + 1) * classes]
            right += max(range(classes), key=lambda c: row[c]) == lab[total]
            total += 1
    print("%.2f" % (100.0 * right / total))


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "idx":
        cmd_idx(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), [int(d) for d in sys.argv[6].split(",")])
    elif cmd == "infer":
        cmd_infer(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    elif cmd == "bin":
        cmd_bin(sys.argv[2])
    elif cmd == "accuracy":
        cmd_accuracy(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
