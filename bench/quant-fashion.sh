#!/bin/sh
# quant-fashion.sh - test accuracy of the Fashion-MNIST networks of
# examples/fashion, trained by our own training flow, in float and
# quantized to int8 by the profile-guided flow (docs/Quantization.md), per
# schema, per tensor and per channel.
#
#   bench/quant-fashion.sh [build-dir] [mlp|cnn ...]
#
# Per network:
#   1. training: bench/train.sh (glow-opt -passes=differentiate,O2, one
#      glow-run -backend=c -epochs=N run); MLP_EPOCHS (default 10) epochs
#      on the 60,000 training images; the CNN CNN_EPOCHS (default 2) epochs
#      on the first CNN_LIMIT (default 15000) of them (an epoch of the full
#      set is some 24 processor minutes here). TRAINED=DIR takes the
#      weights of an earlier run (DIR/mlp/*.npy, DIR/cnn/*.npy) instead.
#   2. the inference module (bench/quant_fashion.py infer): the network
#      without its loss at batch ${BATCH:-1000}, the trained weights as
#      constants, so that quantization sees them;
#   3. float: glow-opt -O2 | glow-irgen | glow-llc -O2, run on the C backend
#      over the 10,000 test images (10 batches), accuracy of the argmax;
#   4. profile: glow-opt -O2 -precision=profile, glow-run -profile on the
#      first ${CALIB:-1000} training images (one batch);
#   5. for every schema (asymmetric, symmetric, symmetric-uint8,
#      symmetric-pow2), per tensor and with -quant-per-channel: glow-opt -O2
#      -precision=quantize -quant-precision=int8, run on the interpreter
#      (QBACKEND=c runs the quantized programs on the C backend where its
#      is_op_supported admits the integer kinds) over the same test images;
#      JOBS=N runs N configurations at a time.
# Prints one line per network and configuration: accuracy in %, and the
# difference to float in points. Figures only: nothing is asserted, no
# test runs this. Run with nice on a shared machine.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/models-lib.sh" # bench_args, bench_tmpdir, find_python
bench_args "mlp cnn" "$@"
data=${DATA:-/usr/share/datasets/fashion-mnist}
batch=${BATCH:-1000}
calib=${CALIB:-1000}
qbackend=${QBACKEND:-interpreter}
bench_tmpdir
find_python
file() { if [ -f "$data/$1.gz" ]; then echo "$data/$1.gz"; else echo "$data/$1"; fi; }
helper="$here/bench/quant_fashion.py"

for m in $list; do
	case $m in
	mlp) shape=784 ;;
	cnn) shape=28,28,1 ;;
	*) echo "quant-fashion.sh: unknown model '$m' (mlp, cnn)" >&2; exit 1 ;;
	esac
	if [ -n "${TRAINED:-}" ]; then
		w=$TRAINED/$m
	else
		w=$tmp/trained/$m
		if [ "$m" = mlp ]; then
			OUT=$tmp/trained MLP_EPOCHS=${MLP_EPOCHS:-10} sh "$here/bench/train.sh" "$build" mlp
		else
			OUT=$tmp/trained LIMIT=${CNN_LIMIT:-15000} CNN_EPOCHS=${CNN_EPOCHS:-2} sh "$here/bench/train.sh" "$build" cnn
		fi
	fi
	mkdir -p "$tmp/$m"
	cp "$w"/*.npy "$tmp/$m/"
	"$py" "$helper" bin "$tmp/$m"
	"$py" "$helper" infer "$here/examples/fashion/$m.glow" "$tmp/$m" "$batch" "$tmp/$m.glow"
	# the test set in batches, the calibration set in one
	nb=$((10000 / batch))
	k=0
	while [ $k -lt $nb ]; do
		[ -f "$tmp/test$shape.$k.npy" ] ||
			"$py" "$helper" idx "$(file t10k-images-idx3-ubyte)" "$tmp/test$shape.$k.npy" $((k * batch)) "$batch" "$shape"
		k=$((k + 1))
	done
	"$py" "$helper" idx "$(file train-images-idx3-ubyte)" "$tmp/calib.npy" 0 "$calib" "$shape"
	# run PROG BACKEND: the accuracy over the test batches (outputs beside PROG)
	run() {
		outs=""
		k=0
		while [ $k -lt $nb ]; do
			"$bin/glow-run" "$1" -backend="$2" -input image="$tmp/test$shape.$k.npy" -o "$1.out$k.npy"
			outs="$outs $1.out$k.npy"
			k=$((k + 1))
		done
		"$py" "$helper" accuracy "$(file t10k-labels-idx1-ubyte)" $outs
	}
	"$bin/glow-opt" -O2 "$tmp/$m.glow" | "$bin/glow-irgen" | "$bin/glow-llc" -O2 -o "$tmp/$m.f.gir"
	facc=$(run "$tmp/$m.f.gir" c)
	printf '%-4s %-16s %-12s %7s%%\n' "$m" float - "$facc"
	# the calibration batch is one example of a placeholder of batch $calib
	"$py" "$helper" infer "$here/examples/fashion/$m.glow" "$tmp/$m" "$calib" "$tmp/$m.calib.glow"
	"$bin/glow-opt" -O2 -precision=profile "$tmp/$m.calib.glow" | "$bin/glow-irgen" | "$bin/glow-llc" -O2 -o "$tmp/$m.p.gir"
	rm -f "$tmp/$m.prof"
	"$bin/glow-run" "$tmp/$m.p.gir" -input image="$tmp/calib.npy" -profile="$tmp/$m.prof"
	# the profile names values of the calibration module, which the
	# evaluation module at another batch shares (same nodes, same names)
	# one configuration: SCHEMA, per-tensor or per-channel; its line goes
	# to $tmp/$m.SCHEMA.HOW.txt
	quant_eval() {
		qb="" pc=""
		[ "$qbackend" = c ] && qb=-backend=c
		[ "$2" = per-channel ] && pc=-quant-per-channel
		g=$tmp/$m.$1.$2.gir
		"$bin/glow-opt" -O2 $qb -precision=quantize -profile="$tmp/$m.prof" -quant-precision=int8 \
			-quant-schema="$1" $pc "$tmp/$m.glow" | "$bin/glow-irgen" | "$bin/glow-llc" -O2 -o "$g"
		qacc=$(run "$g" "$qbackend")
		printf '%-4s %-16s %-12s %7s%% %+6.2f\n' "$m" "$1" "$2" "$qacc" \
			"$(awk -v a="$qacc" -v b="$facc" 'BEGIN { print a - b }')" > "$tmp/$m.$1.$2.txt"
	}
	# JOBS configurations at a time (default 1; each runs alone, so more
	# only helps on a machine with cores to spare)
	n=0
	for schema in asymmetric symmetric symmetric-uint8 symmetric-pow2; do
		for how in per-tensor per-channel; do
			quant_eval $schema $how &
			n=$((n + 1))
			[ $((n % ${JOBS:-1})) -eq 0 ] && wait
		done
	done
	wait
	for schema in asymmetric symmetric symmetric-uint8 symmetric-pow2; do
		for how in per-tensor per-channel; do
			cat "$tmp/$m.$schema.$how.txt"
		done
	done
done
