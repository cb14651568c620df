#!/usr/bin/env bash
# The quick-start demo: installs the dependencies, builds the toolchain and
# runs it on the bundled example (examples/lenet.glow): parse, verify,
# optimize at -O2 and print the optimized graph, and draw it before and after.
set -euo pipefail
cd "$(dirname "$0")/.."
bash utils/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
echo "=== glow-opt -O2 -stats examples/lenet.glow ==="
build/bin/glow-opt -O2 -stats examples/lenet.glow
mkdir -p build/demo
echo "=== glow-dot: examples/lenet.glow before and after glow-opt -O2 ==="
build/bin/glow-dot -T svg examples/lenet.glow -o build/demo/lenet.svg
build/bin/glow-opt -O2 examples/lenet.glow | build/bin/glow-dot -T svg -o build/demo/lenet-O2.svg
echo "wrote build/demo/lenet.svg and build/demo/lenet-O2.svg"
