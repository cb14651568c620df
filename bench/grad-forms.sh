#!/bin/sh
# grad-forms.sh - the training step of the Fashion-MNIST networks
# (examples/fashion) on the C backend with its gradient and training kinds
# run whole (the default: convolutiongrad, fullyconnectedgrad, sgdmomentum,
# ...; backends/c/cgen_grad.c) and lowered into forward kinds (declared
# unsupported to glow-opt, as a backend without them), one epoch each on
# the first LIMIT training images, and the ratio of their speeds.
#
#   bench/grad-forms.sh [build-dir] [mlp|cnn ...]
#
# Environment: DATA (the IDX files; default Debian's dataset-fashion-mnist),
# LIMIT (default 6000), SEED (default 1). Both forms run in the same call,
# one after the other, so the ratio holds on a loaded machine better than
# the absolute figures (images per processor second, glow-run's). Figures
# only: nothing is asserted, no test runs this.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/models-lib.sh" # bench_args, find_python
bench_args "mlp cnn" "$@"
fashion_env # data, seed, tmp, file
limit=${LIMIT:-6000}
grads=FullyConnectedGrad,ConvolutionGrad,MaxPoolGrad,ReluGrad,SoftMaxGrad,CrossEntropyLossGrad,SGD,DropoutMask,ReshapeGrad,DropoutGrad

for m in $list; do
	case $m in
	mlp) batch=32 wd=0 ;;
	cnn) batch=64 wd=0.0005 ;;
	*) echo "grad-forms.sh: unknown model '$m' (mlp, cnn)" >&2; exit 1 ;;
	esac
	for form in whole lowered; do
		unsup=
		[ $form = lowered ] && unsup=-backend-unsupported=$grads
		"$bin/glow-opt" -passes=differentiate,O2 -mode=train -learning-rate=0.01 -momentum=0.9 \
			-weight-decay=$wd -batch-size=$batch $unsup "$here/examples/fashion/$m.glow" |
			"$bin/glow-irgen" -func=@train_grad | "$bin/glow-llc" -O2 -o "$tmp/$m-$form.gir"
		ips=$("$bin/glow-run" "$tmp/$m-$form.gir" -backend=c -epochs=1 -seed=$seed -limit=$limit \
			-train-data image="$(file train-images-idx3-ubyte)" \
			-train-data label="$(file train-labels-idx1-ubyte)" | awk '{ print $(NF - 1) }')
		echo "$m $form: $ips images/s"
		eval "ips_$form=$ips"
	done
	awk -v w="$ips_whole" -v l="$ips_lowered" -v m=$m 'BEGIN { printf "%s: whole / lowered = %.2f\n", m, w / l }'
done
