#!/usr/bin/env python3
"""make_cases.py - makes the models of this folder's conformance cases
(newer opsets and operators) with Debian's python3-onnx, whose helper
writes any opset number, and their expected outputs with onnxruntime.

    /usr/bin/python3 make_cases.py [CASE...]

Each case is written as CASE/model.onnx; then ort-make-case.mjs (from
../shared/tools, with ORT_PREFIX naming an onnxruntime-node 1.30 install)
makes CASE/test_data_set_0 (seeded random inputs, onnxruntime's outputs)
and CASE/data.json. The suite (test/onnx, folder 'new') runs the committed
files; this script only regenerates them (its helpers are casekit.py's,
the cases of the narrow element types cases_narrow.py's). ONNX 1.12's checker does not
know opsets past 17, so the models are not checked here: onnxruntime
loading them is the check.
"""
import functools
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

# the shared helpers and the registry in casekit.py; the narrow element
# types' cases (issue 15) in cases_narrow.py, which registers them on import
# (no __pycache__ in the case folder: the suite reads its subfolders)
sys.dont_write_bytecode = True
from casekit import (CASES, F, HERE, I64, TOOL, case, f32, i64, model, op_case,  # noqa: E402,F401
                     ort_outputs, vi, write_reference_case)
import cases_narrow  # noqa: E402,F401


@case
def split18_num_outputs_uneven():
    return op_case("Split", ["x"], ["a", "b", "c"], [vi("x", F, [7, 2])],
                   [vi("a", F, [3, 2]), vi("b", F, [3, 2]), vi("c", F, [1, 2])], 18, axis=0, num_outputs=3)


@case
def pad18_axes():
    return op_case("Pad", ["x", "pads", "cv", "axes"], ["y"], [vi("x", F, [2, 3, 4])], [vi("y", F, [2, 3, 7])], 18,
                   [i64("pads", [1, 2]), f32("cv", 0.5), i64("axes", [-1])], mode="constant")


@case
def pad18_negative_crop():
    return op_case("Pad", ["x", "pads"], ["y"], [vi("x", F, [3, 5])], [vi("y", F, [3, 4])], 18,
                   [i64("pads", [-1, 1, 1, -2])], mode="edge")


@case
def resize18_axes_linear():
    return op_case("Resize", ["x", "", "scales"], ["y"], [vi("x", F, [1, 2, 3, 4])], [vi("y", F, [1, 2, 6, 8])], 18,
                   [f32("scales", [2, 2])], mode="linear", axes=[2, 3])


@case
def resize18_not_larger():
    return op_case("Resize", ["x", "", "", "sizes"], ["y"], [vi("x", F, [1, 1, 4, 8])], [vi("y", F, [1, 1, 2, 4])], 18,
                   [i64("sizes", [3, 4])], mode="nearest", axes=[2, 3], keep_aspect_ratio_policy="not_larger")


@case
def resize18_not_smaller():
    return op_case("Resize", ["x", "", "", "sizes"], ["y"], [vi("x", F, [1, 1, 4, 8])], [vi("y", F, [1, 1, 6, 12])], 18,
                   [i64("sizes", [3, 12])], mode="linear", axes=[2, 3], keep_aspect_ratio_policy="not_smaller")


@case
def reduce_mean18_axes_input():
    return op_case("ReduceMean", ["x", "axes"], ["y"], [vi("x", F, [2, 3, 4])], [vi("y", F, [2, 4])], 18,
                   [i64("axes", [1])], keepdims=0)


@case
def reduce_max18_noop_empty_axes():
    return op_case("ReduceMax", ["x"], ["y"], [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], 18, noop_with_empty_axes=1)


@case
def averagepool19_dilations():
    return op_case("AveragePool", ["x"], ["y"], [vi("x", F, [1, 1, 5, 5])], [vi("y", F, [1, 1, 3, 3])], 19,
                   kernel_shape=[2, 2], dilations=[2, 2])


@case
def loop_zero_trips():
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]), helper.make_node("Add", ["acc", "x"], ["acc_out"]),
         helper.make_node("Identity", ["acc_out"], ["scan"])],
        "body", [vi("i", I64, []), vi("c", TensorProto.BOOL, []), vi("acc", F, [2])],
        [vi("c_out", TensorProto.BOOL, []), vi("acc_out", F, [2]), vi("scan", F, [2])])
    n = helper.make_node("Loop", ["M", "", "x"], ["final", "all"], body=body)
    return model([n], [vi("x", F, [2])], [vi("final", F, [2]), vi("all", F, [0, 2])], 13, [i64("M", 0)])


@case
def shape_input_unused():
    return op_case("Shape", ["x"], ["s"], [vi("x", F, [2, 3, 4])], [vi("s", I64, [2])], 15, start=1)


@case
def gelu20():
    return op_case("Gelu", ["x"], ["y"], [vi("x", F, [3, 4])], [vi("y", F, [3, 4])], 20)


@case
def gelu20_tanh():
    return op_case("Gelu", ["x"], ["y"], [vi("x", F, [3, 4])], [vi("y", F, [3, 4])], 20, approximate="tanh")


@case
def groupnorm18():
    return op_case("GroupNormalization", ["x", "scale", "bias"], ["y"],
                   [vi("x", F, [2, 4, 3, 2]), vi("scale", F, [2]), vi("bias", F, [2])], [vi("y", F, [2, 4, 3, 2])], 18,
                   num_groups=2, epsilon=1e-3)


@case
def groupnorm21():
    return op_case("GroupNormalization", ["x", "scale", "bias"], ["y"],
                   [vi("x", F, [2, 4, 3]), vi("scale", F, [4]), vi("bias", F, [4])], [vi("y", F, [2, 4, 3])], 21,
                   num_groups=2)


@case
def rmsnorm23():
    return op_case("RMSNormalization", ["x", "scale"], ["y"], [vi("x", F, [2, 3, 4]), vi("scale", F, [3, 4])],
                   [vi("y", F, [2, 3, 4])], 23, axis=-2, epsilon=1e-3)


@case
def lpnorm_l1():
    return op_case("LpNormalization", ["x"], ["y"], [vi("x", F, [3, 4, 2])], [vi("y", F, [3, 4, 2])], 17, axis=1, p=1)


@case
def lpnorm_l2():
    return op_case("LpNormalization", ["x"], ["y"], [vi("x", F, [3, 4])], [vi("y", F, [3, 4])], 22)


@case
def center_crop_pad18():
    return op_case("CenterCropPad", ["x", "shape"], ["y"], [vi("x", F, [5, 3, 2])], [vi("y", F, [2, 6, 2])], 18,
                   [i64("shape", [2, 6, 2])])


@case
def center_crop_pad18_axes():
    return op_case("CenterCropPad", ["x", "shape"], ["y"], [vi("x", F, [4, 3, 5])], [vi("y", F, [1, 3, 8])], 18,
                   [i64("shape", [8, 1])], axes=[-1, 0])


B = TensorProto.BOOL


def attn(opset, inputs, outputs, inits=(), names=None, **attrs):
    names = names or [i.name for i in inputs] + [i.name for i in inits]
    return op_case("Attention", names, [o.name for o in outputs], inputs, outputs, opset, inits, **attrs)


@case
def attention23_4d():
    return attn(23, [vi("q", F, [2, 3, 4, 8]), vi("k", F, [2, 3, 6, 8]), vi("v", F, [2, 3, 6, 5])],
                [vi("y", F, [2, 3, 4, 5])])


@case
def attention23_3d_gqa():
    return attn(23, [vi("q", F, [1, 3, 16]), vi("k", F, [1, 5, 8]), vi("v", F, [1, 5, 12])],
                [vi("y", F, [1, 3, 24])], q_num_heads=4, kv_num_heads=2)


@case
def attention23_mask_bool():
    return attn(23, [vi("q", F, [1, 2, 3, 4]), vi("k", F, [1, 2, 6, 4]), vi("v", F, [1, 2, 6, 4]),
                     vi("mask", B, [3, 6])], [vi("y", F, [1, 2, 3, 4])])


@case
def attention23_mask_float_qk1():
    return attn(23, [vi("q", F, [2, 2, 3, 4]), vi("k", F, [2, 2, 5, 4]), vi("v", F, [2, 2, 5, 4]),
                     vi("mask", F, [2, 1, 3, 5])], [vi("y", F, [2, 2, 3, 4]), vi("qk", F, [2, 2, 3, 5])],
                names=["q", "k", "v", "mask"], qk_matmul_output_mode=1)


@case
def attention23_causal():
    return op_case("Attention", ["q", "k", "v"], ["y", "", "", "qk"],
                   [vi("q", F, [1, 2, 4, 4]), vi("k", F, [1, 2, 4, 4]), vi("v", F, [1, 2, 4, 4])],
                   [vi("y", F, [1, 2, 4, 4]), vi("qk", F, [1, 2, 4, 4])], 23, is_causal=1)


@case
def attention23_past_present_causal():
    return op_case("Attention", ["q", "k", "v", "", "pk", "pv"], ["y", "present_k", "present_v"],
                   [vi("q", F, [1, 2, 2, 4]), vi("k", F, [1, 2, 2, 4]), vi("v", F, [1, 2, 2, 4]),
                    vi("pk", F, [1, 2, 3, 4]), vi("pv", F, [1, 2, 3, 4])],
                   [vi("y", F, [1, 2, 2, 4]), vi("present_k", F, [1, 2, 5, 4]), vi("present_v", F, [1, 2, 5, 4])], 23,
                   is_causal=1)


@case
def attention23_past_mask_3d():
    return op_case("Attention", ["q", "k", "v", "mask", "pk", "pv"], ["y", "present_k", "present_v"],
                   [vi("q", F, [2, 3, 8]), vi("k", F, [2, 3, 8]), vi("v", F, [2, 3, 6]), vi("mask", F, [3, 5]),
                    vi("pk", F, [2, 2, 2, 4]), vi("pv", F, [2, 2, 2, 3])],
                   [vi("y", F, [2, 3, 6]), vi("present_k", F, [2, 2, 5, 4]), vi("present_v", F, [2, 2, 5, 3])], 23,
                   q_num_heads=2, kv_num_heads=2)


@case
def attention23_mqa_softcap_scale_qk2():
    return op_case("Attention", ["q", "k", "v"], ["y", "", "", "qk"],
                   [vi("q", F, [2, 3, 12]), vi("k", F, [2, 4, 3]), vi("v", F, [2, 4, 2])],
                   [vi("y", F, [2, 3, 8]), vi("qk", F, [2, 4, 3, 4])], 23, q_num_heads=4, kv_num_heads=1, softcap=0.5,
                   scale=0.7, qk_matmul_output_mode=2)


@case
def attention23_qk0_qk3():
    n = helper.make_node("Attention", ["q", "k", "v"], ["y", "", "", "qk"], qk_matmul_output_mode=3, scale=0.25)
    n0 = helper.make_node("Attention", ["q", "k", "v"], ["y0", "", "", "qk0"], qk_matmul_output_mode=0, softcap=1.0)
    return model([n, n0], [vi("q", F, [1, 1, 2, 3]), vi("k", F, [1, 1, 4, 3]), vi("v", F, [1, 1, 4, 3])],
                 [vi("y", F, [1, 1, 2, 3]), vi("qk", F, [1, 1, 2, 4]), vi("y0", F, [1, 1, 2, 3]),
                  vi("qk0", F, [1, 1, 2, 4])], 23)


@case
def attention24_gqa_causal_bool():
    return op_case("Attention", ["q", "k", "v", "mask"], ["y"],
                   [vi("q", F, [1, 4, 3, 4]), vi("k", F, [1, 2, 3, 4]), vi("v", F, [1, 2, 3, 4]),
                    vi("mask", B, [1, 1, 3, 3])],
                   [vi("y", F, [1, 4, 3, 4])], 24, is_causal=1)


@case
def attention24_nonpad_kv_seqlen():
    return op_case("Attention", ["q", "k", "v", "", "", "", "nonpad"], ["y"],
                   [vi("q", F, [2, 2, 3, 4]), vi("k", F, [2, 2, 5, 4]), vi("v", F, [2, 2, 5, 4])],
                   [vi("y", F, [2, 2, 3, 4])], 24, [i64("nonpad", [3, 5])])


@case
def rope23_4d():
    return op_case("RotaryEmbedding", ["x", "cos", "sin"], ["y"],
                   [vi("x", F, [1, 2, 3, 8]), vi("cos", F, [1, 3, 4]), vi("sin", F, [1, 3, 4])],
                   [vi("y", F, [1, 2, 3, 8])], 23)


@case
def rope23_3d_interleaved_position_ids():
    return op_case("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"],
                   [vi("x", F, [2, 3, 12]), vi("cos", F, [5, 3]), vi("sin", F, [5, 3])], [vi("y", F, [2, 3, 12])], 23,
                   [i64("pos", [[0, 1, 2], [4, 3, 1]])], interleaved=1, num_heads=2)


@case
def rope23_rotary_dim():
    return op_case("RotaryEmbedding", ["x", "cos", "sin"], ["y"],
                   [vi("x", F, [2, 2, 2, 8]), vi("cos", F, [2, 2, 2]), vi("sin", F, [2, 2, 2])],
                   [vi("y", F, [2, 2, 2, 8])], 23, rotary_embedding_dim=4)


I32 = TensorProto.INT32


def bitwise(op, dtype, xs, ys=None):
    npt = {I32: np.int32, I64: np.int64}[dtype]
    x = np.array(xs, dtype=npt)
    ins = [vi("x", dtype, list(x.shape))]
    data = [x]
    if ys is not None:
        y = np.array(ys, dtype=npt)
        ins.append(vi("y", dtype, list(y.shape)))
        data.append(y)
    n = helper.make_node(op, [i.name for i in ins], ["z"])
    out_shape = list(np.broadcast(*data).shape)
    return model([n], ins, [vi("z", dtype, out_shape)], 18), data


@case
def bitwise_and18_int32():
    return bitwise("BitwiseAnd", I32, [[0, -1, 12345, -2147483648], [7, 255, -9, 2147483647]],
                   [[5, -2, 4095, -1], [3, 15, 100, -2147483648]])


@case
def bitwise_or18_int64_broadcast():
    return bitwise("BitwiseOr", I64, [[1, -8, 1 << 40], [0, 6, -(1 << 62)]], [3, 1, -1 - (1 << 63) + (1 << 63) - 5])


@case
def bitwise_xor18_int32():
    return bitwise("BitwiseXor", I32, [1, -1, 0x5555, -123456, 2147483647], [3, 12, 0x3333, 654321, -1])


@case
def bitwise_not18_int64():
    return bitwise("BitwiseNot", I64, [[0, -1, 5], [1 << 62, -(1 << 63), 123456789]])


@case
def shape21_start_end():
    n = helper.make_node("Shape", ["x"], ["s"], start=-3, end=-1)
    n2 = helper.make_node("Size", ["x"], ["n"])
    return model([n, n2], [vi("x", F, [2, 3, 4, 5])], [vi("s", I64, [2]), vi("n", I64, [])], 21)


@case
def onehot_depth_known24():
    n = helper.make_node("OneHot", ["idx", "depth", "vals"], ["y"], axis=1)
    return (model([n], [vi("idx", I64, [2, 3])], [vi("y", F, [2, 5, 3])], 24,
                  [i64("depth", 5), f32("vals", [-1.5, 2.0])]),
            [np.array([[0, 4, -1], [2, -5, 3]], dtype=np.int64)])


def scatter_nd(reduction):
    return op_case("ScatterND", ["x", "idx", "u"], ["y"], [vi("x", F, [4, 3]), vi("u", F, [5, 3])],
                   [vi("y", F, [4, 3])], 18, [i64("idx", [[1], [3], [1], [0], [3]])], reduction=reduction)


def scatter_el(reduction):
    return op_case("ScatterElements", ["x", "idx", "u"], ["y"], [vi("x", F, [2, 4]), vi("u", F, [2, 3])],
                   [vi("y", F, [2, 4])], 18, [i64("idx", [[1, 1, -1], [0, 2, 0]])], axis=1, reduction=reduction)


# one case per reduction of each: scatternd18_add, scatterelements18_min, ...
for _reduction in ("add", "mul", "max", "min"):
    CASES["scatternd18_" + _reduction] = functools.partial(scatter_nd, _reduction)
    CASES["scatterelements18_" + _reduction] = functools.partial(scatter_el, _reduction)


@case
def layernorm_mean_invstddev():
    return op_case("LayerNormalization", ["x", "s", "b"], ["y", "mean", "inv"],
                   [vi("x", F, [2, 3, 4]), vi("s", F, [3, 4]), vi("b", F, [4])],
                   [vi("y", F, [2, 3, 4]), vi("mean", F, [2, 1, 1]), vi("inv", F, [2, 1, 1])], 23, axis=-2,
                   epsilon=1e-3)


@case
def lppool18_ceil_dilations():
    return op_case("LpPool", ["x"], ["y"], [vi("x", F, [1, 2, 5, 6])], [vi("y", F, [1, 2, 3, 2])], 18,
                   kernel_shape=[2, 2], p=3, strides=[2, 2], ceil_mode=1, dilations=[1, 2])


@case
def lppool18_pads_p2():
    return op_case("LpPool", ["x"], ["y"], [vi("x", F, [2, 3, 5])], [vi("y", F, [2, 3, 5])], 18, kernel_shape=[3],
                   pads=[1, 1])


@case
def pad19_wrap():
    return op_case("Pad", ["x", "pads"], ["y"], [vi("x", F, [3, 4])], [vi("y", F, [6, 7])], 19,
                   [i64("pads", [1, 2, 2, 1])], mode="wrap")


@case
def pad21_wrap_negative():
    return op_case("Pad", ["x", "pads"], ["y"], [vi("x", F, [3, 5])], [vi("y", F, [4, 4])], 21,
                   [i64("pads", [2, -1, -1, 0])], mode="wrap")


@case
def pad24_reflect_axes():
    return op_case("Pad", ["x", "pads", "", "axes"], ["y"], [vi("x", F, [2, 3, 4])], [vi("y", F, [2, 5, 4])], 24,
                   [i64("pads", [1, 1]), i64("axes", [1])], mode="reflect")



@case
def tensorscatter24_linear():
    n = helper.make_node("TensorScatter", ["cache", "upd", "wi"], ["y"])
    rng = np.random.default_rng(3)
    return (model([n], [vi("cache", F, [2, 2, 5, 3]), vi("upd", F, [2, 2, 2, 3]), vi("wi", I64, [2])],
                  [vi("y", F, [2, 2, 5, 3])], 24),
            [rng.uniform(-1, 1, (2, 2, 5, 3)).astype(np.float32), rng.uniform(-1, 1, (2, 2, 2, 3)).astype(np.float32),
             np.array([1, 3], dtype=np.int64)])


@case
def tensorscatter24_circular_axis1():
    n = helper.make_node("TensorScatter", ["cache", "upd", "wi"], ["y"], axis=1, mode="circular")
    rng = np.random.default_rng(4)
    return (model([n], [vi("cache", F, [2, 4, 3]), vi("upd", F, [2, 3, 3]), vi("wi", I64, [2])],
                  [vi("y", F, [2, 4, 3])], 24),
            [rng.uniform(-1, 1, (2, 4, 3)).astype(np.float32), rng.uniform(-1, 1, (2, 3, 3)).astype(np.float32),
             np.array([3, 1], dtype=np.int64)])


@case
def tensorscatter24_no_indices():
    return op_case("TensorScatter", ["cache", "upd"], ["y"], [vi("cache", F, [1, 4, 2]), vi("upd", F, [1, 2, 2])],
                   [vi("y", F, [1, 4, 2])], 24)



@case
def resize18_antialias_linear_down():
    return op_case("Resize", ["x", "", "scales"], ["y"], [vi("x", F, [1, 2, 8, 9])], [vi("y", F, [1, 2, 4, 5])], 18,
                   [f32("scales", [1, 1, 0.5, 0.6])], mode="linear", antialias=1)


@case
def resize18_antialias_cubic_down_sizes():
    return op_case("Resize", ["x", "", "", "sizes"], ["y"], [vi("x", F, [1, 1, 9, 7])], [vi("y", F, [1, 1, 3, 5])], 18,
                   [i64("sizes", [3, 5])], mode="cubic", antialias=1, axes=[2, 3])


@case
def resize18_antialias_cubic_exclude_outside():
    return op_case("Resize", ["x", "", "scales"], ["y"], [vi("x", F, [2, 10])], [vi("y", F, [2, 4])], 18,
                   [f32("scales", [1, 0.4])], mode="cubic", antialias=1, exclude_outside=1, cubic_coeff_a=-0.5)


@case
def resize19_cubic_coeff_exclude_up():
    return op_case("Resize", ["x", "", "scales"], ["y"], [vi("x", F, [1, 1, 3, 4])], [vi("y", F, [1, 1, 6, 6])], 19,
                   [f32("scales", [1, 1, 2, 1.5])], mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1)


@case
def resize19_half_pixel_symmetric():
    return op_case("Resize", ["x", "", "", "sizes"], ["y"], [vi("x", F, [1, 1, 4, 5])], [vi("y", F, [1, 1, 7, 3])], 19,
                   [i64("sizes", [1, 1, 7, 3])], mode="linear", coordinate_transformation_mode="half_pixel_symmetric")



def grid_sample(xshape, gshape, seed, **attrs):
    n = helper.make_node("GridSample", ["x", "grid"], ["y"], **attrs)
    yshape = list(xshape[:2]) + list(gshape[1:-1])
    rng = np.random.default_rng(seed)
    # the grid reaches past [-1, 1] so that every padding mode matters
    return (model([n], [vi("x", F, list(xshape)), vi("grid", F, list(gshape))], [vi("y", F, yshape)], 20),
            [rng.uniform(-1, 1, xshape).astype(np.float32), rng.uniform(-1.3, 1.3, gshape).astype(np.float32)])


@case
def gridsample20_linear_zeros():
    return grid_sample((1, 2, 4, 5), (1, 3, 4, 2), 11, mode="linear")


@case
def gridsample20_nearest_border_align():
    return grid_sample((2, 1, 3, 4), (2, 2, 5, 2), 12, mode="nearest", padding_mode="border", align_corners=1)


@case
def gridsample20_cubic_reflection():
    return grid_sample((1, 2, 5, 4), (1, 3, 3, 2), 13, mode="cubic", padding_mode="reflection")


@case
def gridsample20_3d_linear_zeros():
    return grid_sample((1, 2, 3, 4, 5), (1, 2, 3, 2, 3), 14, mode="linear")


@case
def gridsample20_3d_linear_border_align():
    return grid_sample((2, 1, 3, 3, 4), (2, 2, 2, 3, 3), 15, mode="linear", padding_mode="border", align_corners=1)


@case
def gridsample20_3d_nearest_reflection():
    return grid_sample((1, 2, 4, 3, 3), (1, 3, 2, 2, 3), 16, mode="nearest", padding_mode="reflection")


@case
def gridsample20_3d_linear_reflection_align():
    return grid_sample((1, 1, 3, 4, 4), (1, 2, 2, 3, 3), 17, mode="linear", padding_mode="reflection",
                       align_corners=1)



@case
def affinegrid20_2d():
    return op_case("AffineGrid", ["theta", "size"], ["grid"], [vi("theta", F, [2, 2, 3])],
                   [vi("grid", F, [2, 3, 4, 2])], 20, [i64("size", [2, 5, 3, 4])])


@case
def affinegrid20_3d_align_corners():
    return op_case("AffineGrid", ["theta", "size"], ["grid"], [vi("theta", F, [1, 3, 4])],
                   [vi("grid", F, [1, 2, 3, 4, 3])], 20, [i64("size", [1, 1, 2, 3, 4])], align_corners=1)


@case
def affinegrid20_gridsample20():
    a = helper.make_node("AffineGrid", ["theta", "size"], ["grid"])
    g = helper.make_node("GridSample", ["x", "grid"], ["y"], mode="linear", padding_mode="border")
    return model([a, g], [vi("theta", F, [1, 2, 3]), vi("x", F, [1, 2, 4, 4])], [vi("y", F, [1, 2, 3, 5])], 20,
                 [i64("size", [1, 2, 3, 5])])


@case
def col2im18():
    return op_case("Col2Im", ["x", "img", "blk"], ["y"], [vi("x", F, [1, 6, 4])], [vi("y", F, [1, 1, 3, 4])], 18,
                   [i64("img", [3, 4]), i64("blk", [2, 3])])


@case
def col2im18_strides_pads_dilations():
    return op_case("Col2Im", ["x", "img", "blk"], ["y"], [vi("x", F, [2, 8, 9])], [vi("y", F, [2, 2, 4, 3])], 18,
                   [i64("img", [4, 3]), i64("blk", [2, 2])], strides=[2, 1], pads=[1, 0, 1, 2], dilations=[1, 2])


@case
def col2im18_1d():
    return op_case("Col2Im", ["x", "img", "blk"], ["y"], [vi("x", F, [1, 6, 3])], [vi("y", F, [1, 2, 7])], 18,
                   [i64("img", [7]), i64("blk", [3])], strides=[2])



@case
def dropout22_ratio_inference_mask():
    return op_case("Dropout", ["x", "ratio", "training"], ["y", "mask"], [vi("x", F, [3, 4])],
                   [vi("y", F, [3, 4]), vi("mask", B, [3, 4])], 22,
                   [f32("ratio", 0.3), numpy_helper.from_array(np.array(False), "training")])


@case
def dropout13_training_ratio_zero():
    return op_case("Dropout", ["x", "ratio", "training"], ["y", "mask"], [vi("x", F, [2, 5])],
                   [vi("y", F, [2, 5]), vi("mask", B, [2, 5])], 13,
                   [f32("ratio", 0.0), numpy_helper.from_array(np.array(True), "training")], seed=3)



def deform(xs, ws, offs, seed, masks=None, bias=False, **attrs):
    ins = ["x", "w", "off"] + (["b"] if bias else [""] if masks else []) + (["mask"] if masks else [])
    n = helper.make_node("DeformConv", ins, ["y"], **attrs)
    rng = np.random.default_rng(seed)
    vis = [vi("x", F, list(xs)), vi("w", F, list(ws)), vi("off", F, list(offs))]
    data = [rng.uniform(-1, 1, xs).astype(np.float32), rng.uniform(-1, 1, ws).astype(np.float32),
            rng.uniform(-2, 2, offs).astype(np.float32)]
    if bias:
        vis.append(vi("b", F, [ws[0]]))
        data.append(rng.uniform(-1, 1, ws[0]).astype(np.float32))
    if masks:
        vis.append(vi("mask", F, list(masks)))
        data.append(rng.uniform(0, 1, masks).astype(np.float32))
    out = [xs[0], ws[0], offs[2], offs[3]]
    return model([n], vis, [vi("y", F, out)], 19), data


@case
def deformconv19_basic():
    return deform((1, 2, 4, 5), (3, 2, 2, 2), (1, 8, 3, 4), 21)


@case
def deformconv19_pads_strides_bias_mask():
    return deform((2, 2, 5, 5), (2, 2, 3, 3), (2, 18, 3, 3), 22, masks=(2, 9, 3, 3), bias=True,
                  pads=[1, 1, 1, 1], strides=[2, 2])


@case
def deformconv19_groups_offset_groups_dilations():
    return deform((1, 4, 5, 6), (4, 2, 2, 2), (1, 16, 3, 4), 23, group=2, offset_group=2, dilations=[2, 2])



@case
def mish18():
    return op_case("Mish", ["x"], ["y"], [vi("x", F, [3, 4])], [vi("y", F, [3, 4])], 18)


@case
def swish24_alpha():
    n = helper.make_node("Swish", ["x"], ["y"], alpha=0.5)
    n2 = helper.make_node("Swish", ["x"], ["z"])
    return model([n, n2], [vi("x", F, [3, 4])], [vi("y", F, [3, 4]), vi("z", F, [3, 4])], 24)


def np_cumprod(x, axis, exclusive=0, reverse=0):
    """ONNX CumProd by numpy's cumprod: reverse by flips, exclusive by
    shifting in a 1."""
    if reverse:
        x = np.flip(x, axis)
    y = np.cumprod(x, axis=axis, dtype=x.dtype)
    if exclusive:
        y = np.moveaxis(y, axis, 0)
        y = np.concatenate([np.ones_like(y[:1]), y[:-1]])
        y = np.moveaxis(y, 0, axis)
    return np.flip(y, axis) if reverse else y


def deform3d_case(shift):
    """DeformConv 3-D against onnxruntime's Conv 3-D, which the case's
    expected outputs come from: with zero offsets and a mask of ones
    (shift None) DeformConv is that Conv; with every offset the integer
    vector `shift` it samples x[p + shift] at every tap position p (padding
    included), which is the unpadded Conv of the padded input shifted by
    it: x'[q] = x[q - pads_begin + shift], zero outside x."""
    rng = np.random.default_rng(22)
    x = rng.uniform(-1, 1, (1, 4, 4, 5, 6)).astype(np.float32)
    w = rng.uniform(-1, 1, (6, 2, 2, 3, 2)).astype(np.float32)
    b = rng.uniform(-1, 1, (6,)).astype(np.float32)
    attrs = dict(group=2, pads=[1, 0, 1, 0, 1, 1], strides=[1, 2, 1], dilations=[1, 1, 2])
    out = [4, 2, 6]  # (4+1+0-2)/1+1, (5+0+1-3)/2+1, (6+1+1-3)/1+1 with dilation 2
    xs, cattrs = x, dict(attrs)
    if shift is not None:
        pb, pe = attrs["pads"][:3], attrs["pads"][3:]
        xs = np.zeros((1, 4) + tuple(x.shape[2 + a] + pb[a] + pe[a] for a in range(3)), dtype=np.float32)
        for q in np.ndindex(*xs.shape[2:]):
            src = tuple(q[a] - pb[a] + shift[a] for a in range(3))
            if all(0 <= src[a] < x.shape[2 + a] for a in range(3)):
                xs[(0, slice(None)) + q] = x[(0, slice(None)) + src]
        cattrs["pads"] = [0] * 6
    conv = model([helper.make_node("Conv", ["x", "w", "b"], ["y"], **cattrs)], [vi("x", F, list(xs.shape))],
                 [vi("y", F, [1, 6] + out)], 22, [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    expected = ort_outputs(conv, [xs])
    og, K = 2, 2 * 3 * 2
    off = np.zeros((1, og * K * 3, *out), dtype=np.float32)
    if shift is not None:
        off = off.reshape(1, og, K, 3, *out)
        for a in range(3):
            off[:, :, :, a] = shift[a]
        off = off.reshape(1, og * K * 3, *out)
    mask = np.ones((1, og * K, *out), dtype=np.float32)
    dc = model([helper.make_node("DeformConv", ["x", "w", "off", "b", "mask"], ["y"], offset_group=og, **attrs)],
               [vi("x", F, list(x.shape)), vi("off", F, list(off.shape)), vi("mask", F, list(mask.shape))],
               [vi("y", F, [1, 6] + out)], 22, [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    return dc, [x, off, mask], expected, "onnxruntime-node 1.30.0 Conv 3-D (make_cases.py deform3d_case)"


@case
def deformconv22_3d_zero_offsets():
    return deform3d_case(None)


@case
def deformconv22_3d_integer_shift():
    return deform3d_case((1, -1, 2))


@case
def cumprod26():
    """onnxruntime 1.30 has no CumProd kernel: the expected outputs are
    numpy's (a case of three parts: model, inputs, outputs)."""
    rng = np.random.default_rng(26)
    x = rng.uniform(0.5, 1.5, (3, 5)).astype(np.float32)
    n = np.array([[1, -2, 3, 4], [5, 6, -7, 1]], dtype=np.int64)
    modes = [("a", 1, 0, 0), ("b", 1, 1, 0), ("c", 0, 0, 1), ("d", -1, 1, 1)]
    nodes = [helper.make_node("CumProd", ["x", "axis_%s" % o], [o], exclusive=e, reverse=r) for o, _, e, r in modes]
    nodes.append(helper.make_node("CumProd", ["n", "axis_e"], ["e"], exclusive=1))
    inits = [i64("axis_%s" % o, a) for o, a, _, _ in modes] + [i64("axis_e", 1)]
    outs = [np_cumprod(x, a, e, r) for _, a, e, r in modes] + [np_cumprod(n, 1, 1, 0)]
    m = model(nodes, [vi("x", F, [3, 5]), vi("n", I64, [2, 4])],
              [vi(o, F, [3, 5]) for o, _, _, _ in modes] + [vi("e", I64, [2, 4])], 26, inits)
    return m, [x, n], outs


def main(names):
    env = dict(os.environ)
    if "ORT_PREFIX" not in env:
        raise SystemExit("make_cases.py: set ORT_PREFIX to the onnxruntime-node 1.30 install "
                         "(see ../shared/tools/README.md)")
    for name in names or sorted(CASES):
        d = os.path.join(HERE, name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        made = CASES[name]()
        # a case may give its inputs (integer data, where the random
        # runner's zeros would test nothing): (model, [array per input])
        m, inputs = made[:2] if isinstance(made, tuple) else (made, None)
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        if isinstance(made, tuple) and len(made) >= 3:
            # expected outputs of the case itself (an operator onnxruntime lacks)
            write_reference_case(d, m, inputs, *made[2:])
            continue
        cmd = ["node", TOOL, path, d, "--seed", "1"]
        with tempfile.TemporaryDirectory() as tmp:
            if inputs is not None:
                for i, a in enumerate(inputs):
                    with open(os.path.join(tmp, "input_%d.pb" % i), "wb") as f:
                        f.write(numpy_helper.from_array(a, m.graph.input[i].name).SerializeToString())
                cmd += ["--inputs", tmp]
            subprocess.run(cmd, check=True, env=env)
        # data.json names the model it was made from: the case's own, not
        # this machine's path
        dj = os.path.join(d, "data.json")
        with open(dj) as f:
            meta = json.load(f)
        meta["source"] = "model.onnx"
        if "inputs_from" in meta:  # a temporary folder of this script's arrays
            meta["inputs_from"] = "make_cases.py"
        with open(dj, "w") as f:
            json.dump(meta, f, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
