"""oclops.py - the ONNX operators of test/opencl/conformance's cases
(oclformat.py, bench/gpu-check.sh): no lit import, so scripts can read it."""

# ONNX operators whose nodes reach kernels of the OpenCL backend (or that
# the importer folds into constants: Shape, Size, ConstantOfShape)
OPENCL_OPS = frozenset("""
Abs Acos Acosh Add And Asin Asinh Atan Atanh AveragePool BatchNormalization Cast Ceil Clip Concat Constant
ConstantOfShape Conv Cos Cosh Div Dropout Elu Equal Erf Exp Flatten Floor Gemm GlobalAveragePool Greater
GreaterOrEqual HardSigmoid HardSwish Identity LRN LeakyRelu Less LessOrEqual Log MatMul Max MaxPool Mean
Min Mul Neg Not Or Pow PRelu Reciprocal Relu Reshape Selu Shape Sigmoid Sin Sinh Size Softmax Softplus
Softsign Sqrt Squeeze Sub Sum Tan Tanh Transpose Unsqueeze Where Xor
""".split()) | frozenset("""
ArgMax ArgMin LayerNormalization LogSoftmax MeanVarianceNormalization ReduceL1 ReduceL2 ReduceLogSum ReduceMax
ReduceMean ReduceMin ReduceProd ReduceSum ReduceSumSquare
""".split())  # the reductions, arg-reductions and batched products (ocl2: ocl_gen_red.c)

# the element types of the graph inputs and outputs of the cases: what the
# OpenCL backend's kernels compute on (elementwise kinds on all four)
OPENCL_TYPES = frozenset(("float32", "int32", "int64", "bool"))

# the op types whose every case runs by default in the plain build (the
# others: the first case of each (folder, op type)): the kernels with the
# most variants by attribute (strides, pads, dilations, groups, ceil mode,
# transposes, axes), where one case per op type leaves most code paths
# untested
OPENCL_VARIANT_OPS = frozenset("AveragePool Conv Gemm MaxPool Softmax".split())
