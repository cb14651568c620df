#!/bin/sh
# quant.sh - signal-to-quantization-noise ratio (SQNR, dB) of the model-zoo
# networks quantized by the profile-guided flow (docs/Quantization.md),
# against their float outputs, per schema, per tensor and per channel.
#
#   bench/quant.sh [build-dir] [model...]
#
# The networks are utils/gen-models.py's with seeded random weights
# (--weights random --seed ${SEED:-0}; He-normal, BatchNormalization
# statistics of a real forward pass, so activations stay in range). For
# each network: glow-import | glow-opt -O2 -precision=profile | glow-irgen |
# glow-llc -O2, profiled by glow-run -profile over a calibration batch of
# ${CALIB:-4} seeded uniform [0, 1) images (seed 1); then for every schema
# (asymmetric, symmetric, symmetric-uint8, symmetric-pow2), per tensor and
# with -quant-per-channel, int8 (and PRECISION=int16 for 16-bit), glow-opt
# -O2 -precision=quantize, run on the interpreter over ${EVAL:-2} other
# images (seed 2) and compared with the float program's outputs on the same
# images: SQNR = 10 log10(sum float^2 / sum (float - quantized)^2) over all
# outputs of all evaluation images (bench/sqnr.py). CALIBRATION=kl adds
# -quant-calibration=kl. INIT="--bn-images N --residual-scale S" passes
# utils/gen-models.py's data-dependent initialization options (the
# default: none, the weights as before); SCHEMAS (default all four) and
# PER (default "tensor channel") pick the configurations. AT=logits
# compares the logits (the network without its last SoftMax) instead of
# the probabilities: the SQNR of a softmax's output grows as its logits
# shrink, the logits' does not. The quantized
# kernels are the interpreter's reference loops: ResNet-50 takes minutes per configuration; run with nice
# on a shared machine. Figures only: nothing is asserted, no test runs this.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/models-lib.sh" # bench_args, bench_tmpdir, find_python
bench_args "squeezenet resnet50" "$@"
calib=${CALIB:-4}
eval_n=${EVAL:-2}
prec=${PRECISION:-int8}
bench_tmpdir
find_python
"$py" "$here/utils/gen-models.py" -o "$tmp" --weights random --seed "${SEED:-0}" ${INIT:-} $list >/dev/null
cal=""
[ "${CALIBRATION:-none}" = kl ] && cal=-quant-calibration=kl
printf '%-12s %-16s' network schema
for per in ${PER:-tensor channel}; do printf ' %12s' "per-$per"; done
echo
for m in $list; do
	onnx=$tmp/light_$m.onnx
	"$bin/glow-import" "$onnx" -o "$tmp/$m.glow"
	if [ "${AT:-probabilities}" = logits ]; then
		"$py" "$here/bench/sqnr.py" logits "$tmp/$m.glow" "$tmp/$m.l.glow"
		mv "$tmp/$m.l.glow" "$tmp/$m.glow"
	fi
	"$bin/glow-opt" -O2 "$tmp/$m.glow" | "$bin/glow-irgen" | "$bin/glow-llc" -O2 -o "$tmp/$m.f.gir"
	sig=$("$bin/glow-run" "$tmp/$m.f.gir" -print-signature)
	in=$(echo "$sig" | sed -n 's/^  input \([^:]*\): float<\(.*\)>$/\1/p' | head -n 1)
	dims=$(echo "$sig" | sed -n 's/^  input [^:]*: float<\(.*\)>$/\1/p' | head -n 1 | sed 's/ x /,/g')
	"$py" "$here/bench/sqnr.py" images "$tmp/calib.npy" "$calib" "$dims" 1
	"$bin/glow-opt" -O2 -precision=profile "$tmp/$m.glow" | "$bin/glow-irgen" | "$bin/glow-llc" -O2 -o "$tmp/$m.p.gir"
	rm -f "$tmp/$m.prof"
	"$bin/glow-run" "$tmp/$m.p.gir" -input "$in=$tmp/calib.npy" -profile="$tmp/$m.prof"
	k=0
	while [ $k -lt "$eval_n" ]; do
		"$py" "$here/bench/sqnr.py" image "$tmp/e$k.npy" "$dims" 2 $k
		"$bin/glow-run" "$tmp/$m.f.gir" -input "$in=$tmp/e$k.npy" -o "$tmp/f$k.npy"
		k=$((k + 1))
	done
	for schema in ${SCHEMAS:-asymmetric symmetric symmetric-uint8 symmetric-pow2}; do
		row=""
		for per in ${PER:-tensor channel}; do
			pc=""
			[ "$per" = channel ] && pc=-quant-per-channel
			"$bin/glow-opt" -O2 -precision=quantize -profile="$tmp/$m.prof" -quant-precision="$prec" \
				-quant-schema=$schema $pc $cal "$tmp/$m.glow" | "$bin/glow-irgen" | "$bin/glow-llc" -O2 -o "$tmp/$m.q.gir"
			pairs=""
			k=0
			while [ $k -lt "$eval_n" ]; do
				"$bin/glow-run" "$tmp/$m.q.gir" -input "$in=$tmp/e$k.npy" -o "$tmp/q$k.npy"
				pairs="$pairs $tmp/f$k.npy $tmp/q$k.npy"
				k=$((k + 1))
			done
			row="$row $("$py" "$here/bench/sqnr.py" sqnr $pairs)"
		done
		printf '%-12s %-16s' "$m" "$schema"
		for v in $row; do printf ' %12s' "$v"; done
		echo
	done
done
