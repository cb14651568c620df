#!/usr/bin/env python3
"""make-cnn.py - writes the bundled example model examples/cnn.onnx and its
input examples/cnn-input.npy: a small image classifier in ONNX's NCHW layout
(Conv, BatchNormalization, Relu, MaxPool, Conv, Relu, GlobalAveragePool,
Flatten, Gemm, Softmax) with seeded random weights, written through
utils/onnx-make.py and utils/tensor-make.py (Python standard library only).

    examples/make-cnn.py            (re)writes both files beside this script
"""
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
UTILS = os.path.join(HERE, "..", "utils")


def values(rng, n, scale):
    return " ".join("%.6g" % rng.uniform(-scale, scale) for _ in range(n))


def main():
    rng = random.Random(2026)
    spec = [
        "opset 13",
        "graph cnn",
        "input image float 1 1 16 16",
        "output probabilities float 1 10",
        "init conv1.w float 8 1 3 3 = " + values(rng, 8 * 9, 0.5),
        "init conv1.b float 8 = " + values(rng, 8, 0.1),
        "init bn.scale float 8 = " + " ".join("%.6g" % rng.uniform(0.5, 1.5) for _ in range(8)),
        "init bn.bias float 8 = " + values(rng, 8, 0.2),
        "init bn.mean float 8 = " + values(rng, 8, 0.2),
        "init bn.var float 8 = " + " ".join("%.6g" % rng.uniform(0.5, 2.0) for _ in range(8)),
        "init conv2.w float 16 8 3 3 = " + values(rng, 16 * 8 * 9, 0.2),
        "init conv2.b float 16 = " + values(rng, 16, 0.1),
        "init fc.w float 10 16 = " + values(rng, 160, 0.3),
        "init fc.b float 10 = " + values(rng, 10, 0.1),
        "node Conv image conv1.w conv1.b -> c1 name=conv1 kernel_shape=ints:3,3 pads=ints:1,1,1,1",
        "node BatchNormalization c1 bn.scale bn.bias bn.mean bn.var -> b1 name=bn1 epsilon=f:1e-5",
        "node Relu b1 -> r1 name=relu1",
        "node MaxPool r1 -> p1 name=pool1 kernel_shape=ints:2,2 strides=ints:2,2",
        "node Conv p1 conv2.w conv2.b -> c2 name=conv2 kernel_shape=ints:3,3 pads=ints:1,1,1,1",
        "node Relu c2 -> r2 name=relu2",
        "node GlobalAveragePool r2 -> g name=gap",
        "node Flatten g -> f name=flatten axis=i:1",
        "node Gemm f fc.w fc.b -> logits name=fc transB=i:1",
        "node Softmax logits -> probabilities name=softmax axis=i:1",
    ]
    spec_path = os.path.join(HERE, "cnn.spec.tmp")
    with open(spec_path, "w") as f:
        f.write("\n".join(spec) + "\n")
    try:
        subprocess.run([sys.executable, os.path.join(UTILS, "onnx-make.py"), spec_path, "-o",
                        os.path.join(HERE, "cnn.onnx")], check=True)
    finally:
        os.remove(spec_path)
    pixels = [str(round(((i * 37) % 256) / 255.0, 4)) for i in range(16 * 16)]
    subprocess.run([sys.executable, os.path.join(UTILS, "tensor-make.py"), "-o",
                    os.path.join(HERE, "cnn-input.npy"), "float", "1,1,16,16"] + pixels, check=True)


if __name__ == "__main__":
    main()
