#!/usr/bin/env bash
# The quick-start demo: installs the dependencies, builds the toolchain and
# runs it on the bundled example (examples/lenet.glow): parse, verify,
# optimize at -O2 and print the optimized graph.
set -euo pipefail
cd "$(dirname "$0")/.."
bash utils/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
echo "=== glow-opt -O2 -stats examples/lenet.glow ==="
build/bin/glow-opt -O2 -stats examples/lenet.glow
