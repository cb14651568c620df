#!/bin/sh
# train.sh - trains the two Fashion-MNIST networks of examples/fashion (the
# 784-100-10 MLP and the CNN of the data set's benchmark/convnet.py) with the
# C backend on the full data set: 60,000 training images, accuracy on the
# 10,000 test images after every epoch.
#
#   bench/train.sh [build-dir] [mlp|cnn ...]
#
# Environment: DATA (the IDX files; default Debian's dataset-fashion-mnist,
# /usr/share/datasets/fashion-mnist), MLP_EPOCHS (default 10), CNN_EPOCHS
# (default 15), SEED (default 1), LIMIT (train and test on the first LIMIT
# images only: a quicker, partial figure, not the benchmark), OUT (where the
# trained weights go; default a temporary directory, removed), THREADS (the
# bundle's threads, default 1: one core's figure), RUNNER (glow-run, the
# default, or bundle: the training bundle's own driver, below), CC for
# bench/peak.c and the bundle (GLOW_CC and GLOW_CFLAGS reach glow-run's
# compile).
#
# Per model: glow-opt -passes=differentiate,O2 -mode=train with the
# hyper-parameters below, glow-irgen | glow-llc -O2, then one training run:
# glow-run -backend=c (the step and the model compiled once as a training
# bundle, called per batch), or with RUNNER=bundle the training bundle
# written by glow-llc -backend=c, compiled with $CC -O3 -march=native and
# run by its driver NAME_main (docs/CBackend.md; it reads uncompressed
# IDX files, so the data are gunzipped into the temporary directory first).
# Both print the same epoch lines (mean loss, test accuracy, wall and
# processor seconds, images per processor second: one core's speed, also
# on a shared machine), followed here by the step's GFLOP/s: images per
# processor second times the flops of one training step per image (glow-opt
# -passes=lower-all,dce,count-flops on @train_grad after -O2: forward,
# backward and update) and its fraction of this core's single-precision peak per
# processor second (bench/peak.c's peak_gflops_cpu, measured in the same
# run). The seconds are those of the training steps; the evaluation is not
# in them. The load average is printed at the start and the end.
# Figures only: nothing is asserted, no test runs this.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/models-lib.sh" # bench_args, find_python
bench_args "mlp cnn" "$@"
fashion_env # data, seed, tmp, file
out=${OUT:-$tmp/trained}
mkdir -p "$out"

for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
	if [ ! -f "$data/$f.gz" ] && [ ! -f "$data/$f" ]; then
		echo "train.sh: $data/$f(.gz) not found (Debian: dataset-fashion-mnist; or set DATA)" >&2
		exit 1
	fi
done

threads=${THREADS:-1}
runner=${RUNNER:-glow-run}
case $runner in glow-run|bundle) ;; *) echo "train.sh: RUNNER is glow-run or bundle, not '$runner'" >&2; exit 1 ;; esac
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
peak=0
if ${CC:-cc} -std=gnu11 -O2 -march=native -ffp-contract=fast -o "$tmp/peak" "$here/bench/peak.c"; then
	peak=$("$tmp/peak" | sed -n 's/^peak_gflops_cpu //p')
fi
echo "single-core fp32 peak: ${peak:-0} GFLOP/s per processor second (bench/peak.c)"
# the bundle's driver reads uncompressed IDX files
plain() {
	if [ -f "$data/$1" ]; then
		echo "$data/$1"
	else
		[ -f "$tmp/$1" ] || gzip -dc "$data/$1.gz" > "$tmp/$1"
		echo "$tmp/$1"
	fi
}

for m in $list; do
	# the batch is the models' (examples/fashion/*.glow); SGD with momentum
	case $m in
	mlp) batch=32 lr=0.01 mom=0.9 wd=0 epochs=${MLP_EPOCHS:-10} ;;
	cnn) batch=64 lr=0.01 mom=0.9 wd=0.0005 epochs=${CNN_EPOCHS:-15} ;;
	*) echo "train.sh: unknown model '$m' (mlp, cnn)" >&2; exit 1 ;;
	esac
	"$bin/glow-opt" -passes=differentiate,O2 -mode=train -backend=c -learning-rate=$lr -momentum=$mom -weight-decay=$wd \
		-batch-size=$batch "$here/examples/fashion/$m.glow" -o "$tmp/$m.glow"
	# the flops of the step's forward-kind form (count-flops has no rows for
	# the gradient kinds the C backend keeps whole; dce drops what the
	# lowering makes for results nothing reads, such as a first layer's
	# input gradient, which the whole kernels do not compute)
	flops=$("$bin/glow-opt" -passes=lower-all,dce,count-flops "$tmp/$m.glow" -o /dev/null 2>&1 |
		sed -n 's/^count-flops: @train_grad: [0-9]* nodes, \([^ ]*\) flops$/\1/p')
	"$bin/glow-irgen" "$tmp/$m.glow" | "$bin/glow-llc" -O2 -o "$tmp/$m.gir"
	echo "$m: batch $batch, learning rate $lr, momentum $mom, weight decay $wd, seed $seed;" \
		"$(awk -v f="${flops:-0}" -v b=$batch 'BEGIN { printf "%.1f MFLOP per image and step", f / b / 1e6 }')"
	mkdir -p "$out/$m"
	if [ "$runner" = bundle ]; then
		"$bin/glow-llc" -backend=c -emit-main -bundle-name=$m -o "$tmp/$m-bundle" "$tmp/$m.gir"
		${CC:-cc} -std=c11 -O3 -march=native -pthread -o "$tmp/$m-bundle/${m}_main" \
			"$tmp/$m-bundle/$m.c" "$tmp/$m-bundle/${m}_main.c" -lm
		set -- "$tmp/$m-bundle/${m}_main" -weights "$tmp/$m-bundle/$m.weights.bin" -threads $threads \
			-epochs $epochs -seed $seed ${LIMIT:+-limit $LIMIT} \
			-train-data image="$(plain train-images-idx3-ubyte)" -train-data label="$(plain train-labels-idx1-ubyte)" \
			-test-data image="$(plain t10k-images-idx3-ubyte)" -test-data label="$(plain t10k-labels-idx1-ubyte)" \
			-output-dir "$out/$m"
	else
		set -- "$bin/glow-run" "$tmp/$m.gir" -backend=c -threads=$threads -epochs=$epochs -seed=$seed \
			${LIMIT:+-limit=$LIMIT} \
			-train-data image="$(file train-images-idx3-ubyte)" -train-data label="$(file train-labels-idx1-ubyte)" \
			-test-data image="$(file t10k-images-idx3-ubyte)" -test-data label="$(file t10k-labels-idx1-ubyte)" \
			-output-dir "$out/$m" -output-format=npy
	fi
	echo "runner: $runner, $threads thread(s)"
	"$@" |
		# one awk per line: mawk reads a pipe in blocks, which would hold
		# the epoch lines back until the run ends
		while IFS= read -r line; do
			printf '%s\n' "$line" | awk -v f="${flops:-0}" -v b=$batch -v pk="${peak:-0}" '{
				ips = $(NF - 1); g = ips * f / b / 1e9
				printf "%s, %.2f GFLOP/s", $0, g
				if (pk > 0) printf " (%.1f%% of peak)", 100 * g / pk
				printf "\n"
			}'
		done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
