#!/bin/sh
# make-cnn-int8.sh - regenerates cnn-int8/: the int8 QDQ form of
# examples/cnn.onnx (utils/qdq-model.py, from a profile of one seeded
# random image) and onnxruntime's output for a seeded random input
# (../shared/tools/ort-make-case.mjs, ORT_PREFIX naming an
# onnxruntime-node install). The tests read only the committed files.
#
#   sh make-cnn-int8.sh BUILD_DIR
set -e
B=${1:?usage: make-cnn-int8.sh BUILD_DIR}/bin
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$HERE/../../..
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
/usr/bin/python3 -c "import numpy as np; np.save('$T/in.npy', np.random.RandomState(0).rand(1, 1, 16, 16).astype(np.float32))"
"$B/glow-import" "$SRC/examples/cnn.onnx" -o "$T/cnn.glow"
"$B/glow-opt" -O2 -precision=profile "$T/cnn.glow" | "$B/glow-irgen" | "$B/glow-llc" -O2 -o "$T/prof.gir"
"$B/glow-run" "$T/prof.gir" -input image="$T/in.npy" -profile="$T/cnn.prof"
/usr/bin/python3 "$SRC/utils/qdq-model.py" "$SRC/examples/cnn.onnx" "$T/cnn.prof" -o "$T/cnnq.onnx"
rm -rf "$HERE/cnn-int8"
node "$SRC/../shared/tools/ort-make-case.mjs" "$T/cnnq.onnx" "$HERE/cnn-int8" --seed 3 --lo 0 --hi 1
