"""oclops.py - the ONNX operators of test/opencl/conformance's cases
(oclformat.py, bench/gpu-check.sh): no lit import, so scripts can read it."""

# ONNX operators whose nodes reach kernels of the OpenCL backend
OPENCL_OPS = frozenset("""
Abs Acos Acosh Add Asin Asinh Atan Atanh AveragePool BatchNormalization Ceil Clip Concat Constant Conv Cos
Cosh Div Dropout Elu Erf Exp Flatten Floor Gemm GlobalAveragePool HardSigmoid HardSwish Identity LRN
LeakyRelu Log MatMul Max MaxPool Mean Min Mul Neg Pow PRelu Reciprocal Relu Reshape Selu Sigmoid Sin
Sinh Softmax Softplus Softsign Sqrt Squeeze Sub Sum Tan Tanh Transpose Unsqueeze
""".split())
