# models-lib.sh - gen_models, shared by the benchmark scripts that measure
# the model-zoo networks (c-models.sh, memplan.sh, opt-models.sh). Sourced
# with `here` set to the source tree.
#
# gen_models DIR [NAME...]: the model-zoo networks, written into DIR by
# utils/gen-models.py (weights: ConstantOfShape fills unless WEIGHTS=random,
# seeded random initializers, SEED=0 by default) with a Python that has the
# onnx module (the system one first: a python3 on PATH may lack it)
gen_models() {
	gdir=$1
	shift
	py=/usr/bin/python3
	[ -x "$py" ] || py=python3
	"$py" "$here/utils/gen-models.py" -o "$gdir" --weights "${WEIGHTS:-fill}" --seed "${SEED:-0}" "$@"
}
