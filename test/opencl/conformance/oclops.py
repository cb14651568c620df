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
""".split())

# ocl3 (issue 19): the operators that reach only supported kernels after
# the indexing and mapping kernels (gather, gatherelements, gathernd, the
# scatters, pad, broadcast, spacetodepth, depthtospace, flip, resize) and
# the integer Pow, Mod and BitShift; most lower through gathers. Every case
# of theirs runs in the plain build; the sample (-D opencl_all_cases=0,
# the sanitizer build) keeps a few (OPENCL_SAMPLE_OPS): their kernels are
# tested against the interpreter in one program by
# test/opencl/kernels-move.glow
OPENCL_INDEX_OPS = frozenset("""
BitwiseNot BlackmanWindow Celu CenterCropPad Col2Im Compress DFT DeformConv DepthToSpace Expand EyeLike GRU Gather
GatherElements GatherND Gelu GlobalMaxPool GridSample HammingWindow HannWindow If IsInf IsNaN LSTM MaxUnpool
MelWeightMatrix Mish Mod NegativeLogLikelihoodLoss OneHot Pad RNN Range Resize ReverseSequence RotaryEmbedding
Round STFT Scan Scatter ScatterElements ScatterND Shrink Sign Slice SpaceToDepth Split Swish TensorScatter
ThresholdedRelu Tile Trilu Upsample ai.onnx.preview.training.Adagrad ai.onnx.preview.training.Adam
ai.onnx.preview.training.Gradient ai.onnx.preview.training.Momentum
""".split())
# the operators opened by the reductions, arg-reductions and batched
# products (ocl_gen_red.c); SoftmaxCrossEntropyLoss needs the gathers too.
# Sampled as OPENCL_INDEX_OPS are: their kernels are tested in
# one program by test/opencl/kernels-reduce.glow, and the normalizations'
# cases compile many kernels each (LayerNormalization 2.5 to 3.9 s)
OPENCL_RED_OPS = frozenset("""
ArgMax ArgMin LayerNormalization LogSoftmax MeanVarianceNormalization ReduceL1 ReduceL2 ReduceLogSum ReduceMax
ReduceMean ReduceMin ReduceProd ReduceSum ReduceSumSquare SoftmaxCrossEntropyLoss
InstanceNormalization GroupNormalization LpNormalization RMSNormalization LpPool Hardmax AffineGrid Det BitwiseAnd
BitwiseOr BitwiseXor Attention RoiAlign
""".split())
# oclf (issue 19): the operators that need blocks (Loop: its run-time trip
# count or condition keeps it a loop, driven by the host), and
# TfIdfVectorizer (ops_text.c's composition). Every case runs in the
# sample too: they are few and small
OPENCL_FLOW_OPS = frozenset("Loop TfIdfVectorizer".split())
OPENCL_OPS = OPENCL_OPS | OPENCL_FLOW_OPS


# oclk (issue 19): the operators opened by ocl_gen_misc.c's kernels
# (convtranspose, topk, cumsum, cumprod; MaxPool's argmax is maxpool's
# variant). In the sample the first two cases of each folder (8)
# and MaxPool's two argmax cases (every MaxPool case runs): 10 cases, 25 s
# of processor time cold under load average 16 (existing cases measured
# there: 1.9 to 2.4 s each, about 2.7 times their 0.6 to 0.8 s), so about
# 9 s at the figures of docs/OpenCL.md; sanitizer build 5 cases
OPENCL_KERNEL2_OPS = frozenset("ConvTranspose TopK CumSum CumProd".split())
# the operators whose cases the sample (-D opencl_all_cases=0, the
# sanitizer build) samples apart
OPENCL_SAMPLED_OPS = OPENCL_INDEX_OPS | OPENCL_RED_OPS
OPENCL_OPS = OPENCL_OPS | OPENCL_SAMPLED_OPS
OPENCL_OPS = OPENCL_OPS | OPENCL_KERNEL2_OPS

# of OPENCL_SAMPLED_OPS, the op types whose first case of each folder runs by
# default (plain and sanitizer builds): the gathers, scatters and pad (12
# cases, 10.6 s cold: lit.local.cfg), two reductions, ArgMax and LogSoftmax; Resize's cases cost 3 to 6 s each,
# DepthToSpace's and Mod's kernels are in test/opencl/kernels-move.glow
OPENCL_SAMPLE_OPS = frozenset("""Gather GatherElements GatherND ScatterElements ScatterND Pad ReduceSum ReduceMax
ArgMax LogSoftmax""".split())

# oclt (issue 19): the operators that reach only supported kernels once the
# kernels convert between element kinds (ocl_gen_types.c): quantize and
# dequantize on uint8 and int8 (the importer's raw qui8 and qi8), CastLike.
# In the sample only the first QuantizeLinear and DequantizeLinear case of
# each folder; their conversions are tested in one program by
# test/opencl/kernels-types.glow
OPENCL_TYPE_OPS = frozenset("CastLike DequantizeLinear DynamicQuantizeLinear QuantizeLinear".split())
OPENCL_OPS = OPENCL_OPS | OPENCL_TYPE_OPS
OPENCL_SAMPLED_OPS = OPENCL_SAMPLED_OPS | OPENCL_TYPE_OPS
OPENCL_SAMPLE_OPS = OPENCL_SAMPLE_OPS | frozenset(("QuantizeLinear", "DequantizeLinear"))

# the integer matrix products (ocl_gen_quant.c: quantized convolution,
# fullyconnected, matmul and batchmatmul). Not sampled apart: the sample
# runs the first two cases of each (folder, op type), 7 cases of one kernel each
OPENCL_QLINEAR_OPS = frozenset("ConvInteger MatMulInteger QLinearConv QLinearMatMul".split())
OPENCL_OPS = OPENCL_OPS | OPENCL_QLINEAR_OPS

# the element types of the graph inputs and outputs of the cases: what the
# OpenCL backend's kernels compute on (elementwise kinds on the first four;
# uint8, int8 and float16: oclt's conversions and elementwise kernels)
OPENCL_TYPES = frozenset(("float32", "int32", "int64", "bool", "uint8", "int8", "float16"))

# the op types whose every case runs in the sample (-D opencl_all_cases=0;
# the others: the first two cases of each (folder, op type)): the kernels with the
# most variants by attribute (strides, pads, dilations, groups, ceil mode,
# transposes, axes), where one case per op type leaves most code paths
# untested
OPENCL_VARIANT_OPS = frozenset("AveragePool Conv Gemm MaxPool Softmax".split())
