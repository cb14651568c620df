#!/usr/bin/env bash
# The quick-start demo: installs the dependencies, builds the toolchain and
# runs the whole pipeline on the bundled example model (examples/cnn.onnx, a
# small NCHW image classifier): import, optimize, schedule + IRGen, IR
# optimization and memory planning, execution on the interpreter and as a
# compiled C bundle, and Graphviz pictures before and after optimization.
set -euo pipefail
cd "$(dirname "$0")/.."
bash utils/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" >/dev/null

B=build/bin
D=build/demo
mkdir -p "$D"
set -x
$B/glow-import examples/cnn.onnx -o $D/cnn.glow
$B/glow-opt -O2 -stats $D/cnn.glow -o $D/cnn.opt.glow
$B/glow-irgen $D/cnn.opt.glow | $B/glow-llc -O2 -print-memory-plan -o $D/cnn.gir
$B/glow-run $D/cnn.gir -input image=examples/cnn-input.npy -print
$B/glow-llc $D/cnn.gir -backend=c -o $D/cnn-bundle
$B/glow-run -backend=c $D/cnn.gir -input image=examples/cnn-input.npy -print
$B/glow-dot -T svg $D/cnn.glow -o $D/cnn.svg
$B/glow-dot -T svg $D/cnn.opt.glow -o $D/cnn.opt.svg
$B/glow-dot -T svg $D/cnn.gir -o $D/cnn.gir.svg
set +x
echo "demo: graph, program and C bundle in $D/ (cnn.svg before, cnn.opt.svg after -O2, cnn.gir.svg the planned program)"
