#!/bin/sh
# make.sh - regenerates this case: model.onnx from model.spec
# (utils/onnx-make.py), seeded uint8 inputs, and onnxruntime's outputs
# (../shared/tools/ort-make-case.mjs with ORT_PREFIX naming an
# onnxruntime-node install). The test reads only the committed files.
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$HERE/../../../..
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
python3 "$SRC/utils/onnx-make.py" "$HERE/model.spec" -o "$T/model.onnx"
mkdir "$T/in"
/usr/bin/python3 -c "
import numpy as np
from onnx import numpy_helper
r = np.random.RandomState(11)
open('$T/in/input_0.pb', 'wb').write(numpy_helper.from_array(r.randint(0, 256, (1, 4, 5, 5)).astype(np.uint8), 'x').SerializeToString())
open('$T/in/input_1.pb', 'wb').write(numpy_helper.from_array(r.randint(0, 256, (3, 4)).astype(np.uint8), 'a').SerializeToString())
"
rm -rf "$T/case"
node "$SRC/../shared/tools/ort-make-case.mjs" "$T/model.onnx" "$T/case" --inputs "$T/in"
cp "$T/case/model.onnx" "$HERE/model.onnx"
cp "$T/case/test_data_set_0/"*.pb "$HERE/test_data_set_0/"
