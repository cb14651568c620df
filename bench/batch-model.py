#!/usr/bin/env python3
"""batch-model.py - a model-zoo network (utils/gen-models.py) at another
batch size, for bench/c-models.sh's batch column.

    batch-model.py IN.onnx OUT.onnx N|NAME

The generated networks declare batch 1 and their Reshape nodes carry
literal shapes that start with 1 (a flatten before the classifier, the
channel shuffle of ShuffleNet). This writes the same network with the
image input and the outputs declared with batch N and the
first entry of each such literal shape 0 (ONNX Reshape: "copy this
dimension of the input", the batch), so every layer runs on N images.
Both our toolchain and onnxruntime read the rewritten file. A NAME instead
of a number declares the batch symbolic (glow-import -dim NAME=N or
-input-shape binds it; test/threads uses this).
"""
import sys

import onnx
from onnx import numpy_helper


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: batch-model.py IN.onnx OUT.onnx N|NAME")
    model = onnx.load(sys.argv[1])
    n = sys.argv[3]
    g = model.graph
    inits = {init.name for init in g.initializer}
    for v in list(g.input) + list(g.output):
        dims = v.type.tensor_type.shape.dim
        # the images and the results, not the shape vectors of the
        # ConstantOfShape weights (graph inputs of rank 1 with initializers)
        if v.name in inits or len(dims) < 2:
            continue
        if dims[0].HasField("dim_value") and dims[0].dim_value == 1:
            if n.isdigit():
                dims[0].dim_value = int(n)
            else:
                dims[0].dim_param = n
    del g.value_info[:]
    shapes = {node.input[1] for node in g.node if node.op_type == "Reshape" and len(node.input) > 1}
    for i, init in enumerate(g.initializer):
        if init.name not in shapes:
            continue
        s = numpy_helper.to_array(init).copy()
        if s.ndim == 1 and len(s) and s[0] == 1:
            s[0] = 0
            g.initializer[i].CopyFrom(numpy_helper.from_array(s, init.name))
    onnx.save(model, sys.argv[2])


if __name__ == "__main__":
    main()
