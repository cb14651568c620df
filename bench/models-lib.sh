# models-lib.sh - gen_models, find_python, bench_args and bench_tmpdir,
# shared by the benchmark scripts that measure the model-zoo networks
# (c-models.sh, memplan.sh, opt-models.sh, quant.sh) and by train.sh,
# grad-forms.sh (fashion_env) and quant-fashion.sh. Sourced with `here`
# set to the source tree.
#
# bench_args DEFAULT_LIST [BUILD [NAME...]]: the arguments of quant.sh and
# train.sh: sets build (BUILD, default $here/build), bin (its bin/) and
# list (the NAMEs, default DEFAULT_LIST).
bench_args() {
	dflt=$1
	shift
	build=${1:-$here/build}
	[ $# -ge 1 ] && shift
	list=${*:-$dflt}
	bin=$build/bin
}

# find_python: sets py to a Python that has the onnx module (the system one
# first: a python3 on PATH may lack it).
find_python() {
	py=/usr/bin/python3
	[ -x "$py" ] || py=python3
}

# gen_models DIR [NAME...]: the model-zoo networks, written into DIR by
# utils/gen-models.py (weights: ConstantOfShape fills unless WEIGHTS=random,
# seeded random initializers, SEED=0 by default) with find_python's Python
gen_models() {
	gdir=$1
	shift
	find_python
	"$py" "$here/utils/gen-models.py" -o "$gdir" --weights "${WEIGHTS:-fill}" --seed "${SEED:-0}" "$@"
}

# bench_tmpdir: sets tmp to a new temporary directory, removed when the
# script exits (however it exits).
bench_tmpdir() {
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
}

# fashion_env: for the Fashion-MNIST scripts (train.sh, grad-forms.sh) sets
# data (DATA, default Debian's dataset-fashion-mnist), seed (SEED, default
# 1) and tmp (a temporary directory, removed at exit), and defines
# `file NAME`: the path of the IDX file NAME under data, gzip or not.
fashion_env() {
	data=${DATA:-/usr/share/datasets/fashion-mnist}
	seed=${SEED:-1}
	bench_tmpdir
}
file() { if [ -f "$data/$1.gz" ]; then echo "$data/$1.gz"; else echo "$data/$1"; fi; }
