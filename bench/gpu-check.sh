#!/bin/sh
# gpu-check.sh - the OpenCL backend on a GPU machine: the conformance subset
# and ResNet-50 at batch 1 and 32, with GFLOP/s, the fraction of the
# device's fp32 peak and the time in device copies. One prepared script,
# in two steps:
#
#   bench/gpu-check.sh prepare [build-dir] [out-dir]   (here, with the toolchain)
#   bench/gpu-check.sh run [prepared-dir]              (on the GPU machine)
#
# prepare writes into out-dir (default build-gpu/ beside the build, which
# .gitignore keeps out of the tree): the programs, so that the GPU machine
# needs neither Python, nor ONNX, nor protobuf-c:
#   - resnet50-b1.glow, resnet50-b32.glow: utils/gen-models.py's ResNet-50
#     (fill weights) imported, and resnet50-bN.gir: the same after glow-opt
#     -O2 -backend=opencl | glow-irgen | glow-llc -O2 -backend=opencl;
#     flops-bN.txt: glow-opt -passes=count-flops's count after -O2;
#   - conformance/: test/opencl/conformance's cases (one per op type), each
#     as case.gir (imported and compiled here for -backend=opencl), its
#     input and expected output .pb files and a line of cases.txt;
#   - bin/: this build's tools (glow-opt, glow-irgen, glow-llc, glow-run,
#     glow-diff) and lib/ the shared libraries they need beyond the C
#     library and the OpenCL loader, used there when the GPU machine cannot
#     build them (no cmake, re2c, bison or OpenCL headers).
# run needs only a POSIX shell, awk and the device's OpenCL driver. It
# installs nothing: it builds the tools from this source tree with cmake
# and cc into a temporary directory when both exist and the OpenCL headers
# are there (else it takes prepared-dir/bin); when no ICD vendors file
# names NVIDIA's driver (libnvidia-opencl.so.1), it points the ICD loader
# at one in a temporary directory (OCL_ICD_VENDORS). Then:
#   1. the conformance subset on the device (glow-run -backend=opencl with
#      the interpreter's expected outputs and tolerances);
#   2. ResNet-50 batch 1 and batch 32: correctness against the interpreter
#      (glow-diff -O2 -backend=opencl -randomize-constants: seeded random
#      weights and inputs, the interpreter's default tolerances), then the
#      backend's profiling hook (GLOW_OPENCL_PROFILE=RUNS+1: the median
#      wall time of RUNS runs after one that pays for the driver's
#      compiler, without kernel events; the time in kernels and in
#      device copies from one more, profiled run); GFLOP/s from the
#      flop count, and the fraction of the fp32 peak: compute units x clock
#      (both from the device, printed by the hook) x fp32 lanes per compute
#      unit x 2 (a fused multiply-add), the lanes from the table in
#      lanes_per_cu below (NVIDIA's CUDA cores per SM by architecture).
# The GPU kernels (docs/OpenCL.md: the tiled igemm convolution) are the
# default on a GPU device; GLOW_OPENCL_KERNELS=cpu in the environment of
# run times the CPU kernels there instead. prepare must be re-run after the
# build changes: run takes prepared-dir/bin where it cannot build.
# Meant to finish in under 5 minutes on one GPU (RUNS=${RUNS:-10}; for a
# quick look MAX_CASES=N runs the first N cases, BATCHES="1" one batch;
# BUILD=0 takes the prepared tools without trying to build).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-run}
[ $# -ge 1 ] && shift

prepare() {
	build=${1:-$here/build}
	out=${2:-$here/build-gpu}
	bin=$build/bin
	py=/usr/bin/python3
	[ -x "$py" ] || py=python3
	rm -rf "$out"
	mkdir -p "$out/conformance" "$out/bin"
	for b in 1 32; do
		"$py" "$here/utils/gen-models.py" -o "$out/gen$b" --batch "$b" resnet50
		"$bin/glow-import" "$out/gen$b/light_resnet50.onnx" -o "$out/resnet50-b$b.glow"
		rm -rf "$out/gen$b"
		"$bin/glow-opt" -O2 -backend=opencl "$out/resnet50-b$b.glow" | "$bin/glow-irgen" |
			"$bin/glow-llc" -O2 -backend=opencl -emit=ir -o "$out/resnet50-b$b.gir"
		"$bin/glow-opt" -passes=O2,count-flops "$out/resnet50-b$b.glow" -o /dev/null 2>&1 |
			awk '/module:/ { print $(NF - 1) }' > "$out/flops-b$b.txt"
		# the input: seeded uniform [0, 1) floats
		"$py" "$here/bench/npy_uniform.py" "$out/in-b$b.npy" "$b,3,224,224"
	done
	# the conformance subset: the cases test/opencl/conformance runs
	"$py" - "$here" "$out/conformance" <<'PY'
import os, shutil, subprocess, sys
here, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(here, "test", "onnx"))
sys.path.insert(0, os.path.join(here, "test", "opencl", "conformance"))
sys.dont_write_bytecode = True
import onnxcase
from oclops import OPENCL_OPS, OPENCL_TYPES
data = "/usr/share/libonnx-testdata/data"
cases = []
for folder, root in [(f, data) for f in ("node", "simple", "pytorch-converted", "pytorch-operator")] + [("new", os.path.join(here, "test", "onnx"))]:
    if os.path.isdir(os.path.join(root, folder)):
        cases += onnxcase.discover(root, [folder])
cases = [c for c in cases if c.ops and all(t in OPENCL_TYPES for t in c.value_types()) and all(o in OPENCL_OPS for o in c.ops)]
first = {}  # per (folder, op type) the first case by name, as the lit suite runs them
for c in cases:
    k = (c.folder, c.main_op())
    if k not in first or c.name < first[k]:
        first[k] = c.name
keep = set(f + "/" + n for (f, _), n in first.items())
unsup = onnxcase.load_rules(os.path.join(here, "test", "onnx", "unsupported.txt"))
xfail = onnxcase.load_rules(os.path.join(here, "test", "onnx", "xfail.txt"))
bin = os.path.join(here, "build", "bin")
lines = []
for c in cases:
    if c.key not in keep or onnxcase.match_rules(unsup, c, "opencl") or onnxcase.match_rules(xfail, c, "opencl"):
        continue
    d = os.path.join(out, c.folder + "_" + c.name)
    os.makedirs(d)
    imp = [bin + "/glow-import", c.dir + "/model.onnx", "-o", d + "/m.glow"]
    for v, f in zip(c.inputs, c.input_files):
        if v["name"] in c.frozen:
            imp.append("-freeze-input=" + v["name"] + "=" + f)
    stages = [imp, [bin + "/glow-opt", "-O2", "-backend=opencl", d + "/m.glow", "-o", d + "/o.glow"],
              [bin + "/glow-irgen", d + "/o.glow", "-o", d + "/p.gir"],
              [bin + "/glow-llc", "-O2", "-backend=opencl", "-emit=ir", d + "/p.gir", "-o", d + "/case.gir"]]
    ok = all(subprocess.run(a, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0 for a in stages)
    for t in ("m.glow", "o.glow", "p.gir"):
        if os.path.exists(os.path.join(d, t)):
            os.remove(os.path.join(d, t))
    if not ok:
        shutil.rmtree(d)
        continue
    args = ["-rtol=%g" % c.rtol, "-atol=%g" % c.atol]
    for i, (v, f) in enumerate(zip(c.inputs, c.input_files)):
        if v["name"] in c.frozen:
            continue
        shutil.copy(f, os.path.join(d, "in%d.pb" % i))
        args.append("-input %s=in%d.pb" % (v["name"], i))
    for i, (v, f) in enumerate(zip(c.outputs, c.output_files)):
        shutil.copy(f, os.path.join(d, "out%d.pb" % i))
        args.append("-expected %s=out%d.pb" % (v["name"], i))
    lines.append(os.path.basename(d) + " " + " ".join(args))
with open(os.path.join(out, "cases.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
print("prepared %d conformance cases" % len(lines))
PY
	for t in glow-opt glow-irgen glow-llc glow-run glow-diff; do
		cp "$bin/$t" "$out/bin/"
	done
	# the shared libraries they need beyond the C library and the OpenCL
	# loader (glow-run: libprotobuf-c, for .pb tensors), found there through
	# LD_LIBRARY_PATH
	mkdir -p "$out/lib"
	for t in "$out"/bin/*; do
		ldd "$t" | awk '$3 ~ /^\// { print $3 }'
	done | sort -u | while read -r lib; do
		case $(basename "$lib") in
		libc.so* | libm.so* | libOpenCL.so* | ld-linux*) ;;
		*) cp -L "$lib" "$out/lib/" ;;
		esac
	done
	echo "prepared $out ($(du -sh "$out" | cut -f1))"
}

# fp32 lanes per compute unit of the device named $1 (NVIDIA: CUDA cores
# per SM), 0 when unknown
lanes_per_cu() {
	case $1 in
	# GA100 (A100, A800, A30), Volta and Turing: 64; Hopper, Ada and the
	# other Amperes: 128 (the first matching line wins: A100 before A10)
	*A100* | *A800* | *A30* | *V100* | *T4* | *RTX\ 20* | *TITAN\ V*) echo 64 ;;
	*H100* | *H200* | *H800* | *GH200* | *L40* | *L4* | *RTX\ 40* | *RTX\ 30* | *A10* | *A40* | *RTX\ A*) echo 128 ;;
	*) echo 0 ;;
	esac
}

run() {
	prep=$(cd "${1:-$here/build-gpu}" && pwd)
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	t0=$(date +%s)
	bin=
	if [ "${BUILD:-1}" != 0 ] && command -v cmake >/dev/null 2>&1 && command -v cc >/dev/null 2>&1 &&
		command -v re2c >/dev/null 2>&1 &&
		command -v bison >/dev/null 2>&1 &&
		{ [ -e /usr/include/CL/cl.h ] || [ -e /usr/local/cuda/include/CL/cl.h ]; }; then
		extra=
		[ -e /usr/include/CL/cl.h ] || extra=-DOpenCL_INCLUDE_DIR=/usr/local/cuda/include
		if cmake -S "$here" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release $extra >"$tmp/cmake.log" 2>&1 &&
			cmake --build "$tmp/build" -j"$(nproc)" --target glow-opt glow-irgen glow-llc glow-run glow-diff \
				>>"$tmp/cmake.log" 2>&1 &&
			[ -e "$tmp/build/backends/libglowopencl.a" ]; then
			bin=$tmp/build/bin
			echo "built the tools here ($(($(date +%s) - t0)) s)"
		fi
	fi
	if [ -z "$bin" ]; then
		bin=$prep/bin
		export LD_LIBRARY_PATH="$prep/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
		echo "using the prepared tools ($prep/bin)"
	fi
	if ! grep -qs nvidia /etc/OpenCL/vendors/*.icd && [ -z "${OCL_ICD_VENDORS:-}" ]; then
		mkdir -p "$tmp/vendors"
		echo libnvidia-opencl.so.1 >"$tmp/vendors/nvidia.icd"
		export OCL_ICD_VENDORS="$tmp/vendors"
		echo "ICD loader pointed at libnvidia-opencl.so.1 ($OCL_ICD_VENDORS)"
	fi
	export GLOW_OPENCL_DEVICE=${GLOW_OPENCL_DEVICE:-}
	[ -n "$GLOW_OPENCL_DEVICE" ] || unset GLOW_OPENCL_DEVICE
	pass=0 fail=0 ncase=0
	while read -r name args; do
		[ -n "$name" ] || continue
		ncase=$((ncase + 1))
		[ "$ncase" -le "${MAX_CASES:-100000}" ] || break
		if (cd "$prep/conformance/$name" && eval "\"$bin/glow-run\" -backend=opencl case.gir $args") \
			>"$tmp/case.log" 2>&1; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			echo "FAIL conformance $name:"
			sed 's/^/  /' "$tmp/case.log" | head -5
		fi
	done <"$prep/conformance/cases.txt"
	echo "conformance subset on the device: $pass passed, $fail failed ($(($(date +%s) - t0)) s so far)"
	runs=${RUNS:-10}
	for b in ${BATCHES:-1 32}; do
		if "$bin/glow-diff" -O2 -backend=opencl -randomize-constants "$prep/resnet50-b$b.glow" >"$tmp/diff.log" 2>&1; then
			ok="matches the interpreter"
		else
			ok="DIFFERS from the interpreter: $(grep -m1 -i 'mismatch\|error' "$tmp/diff.log")"
		fi
		in=$("$bin/glow-run" -print-signature "$prep/resnet50-b$b.gir" | awk '$1 == "input" { sub(":", "", $2); print $2; exit }')
		note=$(GLOW_OPENCL_PROFILE=$((runs + 1)) "$bin/glow-run" -backend=opencl "$prep/resnet50-b$b.gir" \
			-input "$in=$prep/in-b$b.npy" -o "$tmp/out.npy" 2>&1 | grep 'note: opencl:' || true)
		if [ -z "$note" ]; then
			echo "ResNet-50 batch $b: the run failed:"
			"$bin/glow-run" -backend=opencl "$prep/resnet50-b$b.gir" -input "$in=$prep/in-b$b.npy" \
				-o "$tmp/out.npy" 2>&1 | head -5
			continue
		fi
		med=$(echo "$note" | sed 's/.*median \([0-9.]*\) ms.*/\1/')
		copies=$(echo "$note" | sed 's/.*device copies \([0-9.]*\) ms.*/\1/')
		kern=$(echo "$note" | sed 's/.*per run: kernels \([0-9.]*\) ms.*/\1/')
		dev=$(echo "$note" | sed "s/.*on '\([^']*\)'.*/\1/")
		cu=$(echo "$note" | sed 's/.*(\([0-9]*\) compute units.*/\1/')
		mhz=$(echo "$note" | sed 's/.* at \([0-9]*\) MHz.*/\1/')
		lanes=$(lanes_per_cu "$dev")
		flops=$(cat "$prep/flops-b$b.txt")
		echo "ResNet-50 batch $b on '$dev' ($in): $ok"
		awk -v f="$flops" -v t="$med" -v k="$kern" -v c="$copies" -v cu="$cu" -v mhz="$mhz" -v l="$lanes" 'BEGIN {
			g = f / (t * 1e-3) / 1e9
			printf "  median %.3f ms per batch (kernels %.3f ms, device copies %.3f ms), %.1f GFLOP/s", t, k, c, g
			if (l > 0) {
				peak = cu * mhz * 1e6 * l * 2 / 1e9
				printf ", %.2f%% of the fp32 peak %.0f GFLOP/s (%d CUs x %d MHz x %d lanes x 2)", 100 * g / peak, peak, cu, mhz, l
			} else
				printf " (fp32 lanes per compute unit unknown for this device: no peak fraction)"
			printf "\n"
		}'
	done
	echo "total $(($(date +%s) - t0)) s"
}

case $mode in
prepare) prepare "$@" ;;
run) run "$@" ;;
*)
	echo "usage: $0 prepare [build-dir] [out-dir] | run [prepared-dir]" >&2
	exit 1
	;;
esac
