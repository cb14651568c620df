#!/usr/bin/env python3
"""Generates the model-zoo architectures that the tests and benchmarks use.

    gen-models.py [-o DIR] [--weights fill|random] [--seed N] [--fill V]
                  [--bn-images N] [--residual-scale S] [--batch N]
                  [--image-size N] [NAME...]
    gen-models.py --list

Writes DIR/light_<name>.onnx (DIR defaults to the current directory) for
each NAME, or for all nine when none is given: bvlc_alexnet, densenet121,
inception_v1, inception_v2, resnet50, shufflenet, squeezenet, vgg19,
zfnet512. Each file is the layer graph of that ONNX model-zoo network as
Caffe2's exporter wrote it: ONNX IR version 3, opset 9, one float input
[1, 3, 224, 224] (`data_0`, or `gpu_0/data_0` for the networks exported
from Detectron-style Caffe2 nets), the network's own output name, nodes
named n0, n1, ... and intermediate values r0, r1, ..., shape constants
for Reshape as int64 initializers named OC2_DUMMY_<k>, and every
initializer listed among the graph inputs as IR 3 wants.

Weights, two modes:

  --weights fill (the default, what the build generates for the tests)
      every weight W of shape S is an int64 initializer W__SHAPE holding S
      and a ConstantOfShape node that fills W with --fill (0.02). The files
      are tiny (VGG-19 is 9 KB) and generation takes a second; an importer
      has to fold ConstantOfShape into a constant. With constant weights
      the outputs are nearly uniform: the tests that check numerics give
      the imported graph seeded random weights themselves
      (`glow-diff -randomize-constants`).

  --weights random
      every weight is a float initializer of seeded random values, the same
      for the same --seed on every machine (numpy's PCG64 generator, one
      stream per model seeded from --seed and the model's name). Scaled so
      that activations stay in range through the depth of the network:
      convolution and fully-connected weights are He-normal
      (std = sqrt(2 / fan_in), fan_in = input channels per group times the
      kernel area), biases and BatchNormalization offsets are uniform in
      [-0.05, 0.05] and scales in [0.8, 1.2]. A BatchNormalization's mean
      and variance are the statistics of what it receives when the network
      runs on a seeded uniform [0, 1) input (a numpy forward pass at
      generation time), so it normalizes as in a trained network and the
      logits stay within about +-10. The files are as large as the real
      networks' (ResNet-50 102 MB, VGG-19 574 MB): for benchmarks and for
      users who want realistic numerics.

  --bn-images N, --residual-scale S (random weights only)
      a data-dependent initialization closer to a trained network's: the
      BatchNormalization statistics are taken over N seeded images instead
      of the batch (one image: late layers of 7 x 7 pixels give each
      channel 49 samples, so the statistics fit that one image), and the
      scale of the BatchNormalization that ends each residual branch (the
      first input of a Sum: ResNet-50's res*_branch2c_bn) is multiplied by
      S before the statistics are taken, as the zero-gamma initialization
      of residual networks does with S = 0 (Goyal et al., 2017) and as
      trained ResNets end up with small scales there. Without them the
      output is byte for byte the same as before the options existed.
      bench/README.md (Quantization) measures what they change.

  --image-size N
      the input's height and width (default 224): the same layers on a
      smaller (or larger) image, for tests that run a network where every
      pixel costs (qemu-user). The weights whose shapes follow from the
      image follow it: the first fully-connected layer of AlexNet, ZFNet
      and VGG-19 takes the flattened map of that size, and the average
      pooling before the classifier of Inception v1 and v2, ResNet-50 and
      ShuffleNet (7 x 7 at 224) covers the whole last map, so every
      network still ends in one value per class. A size at which a layer
      would have no output pixel is an error. At 224 the files are byte
      for byte those written without the option.

Each file is written to a temporary file beside it and renamed into
place, so an interrupted run never leaves a truncated model behind.
Needs the onnx and numpy Python modules (Debian: python3-onnx, which
pulls in python3-numpy). Exit status 0, or 1 with a message on stderr.
"""

import argparse
import difflib
import os
import sys
import tempfile
import zlib

PROG = os.path.basename(sys.argv[0])

# the batch size of the input (--batch)
BATCH = 1
# the input's height and width (--image-size)
IMAGE = 224


class ShapeError(Exception):
    """A layer of the network has no output pixel at this image size."""


def die(msg):
    sys.stderr.write(f"{PROG}: error: {msg}\n")
    sys.exit(1)


try:
    import numpy as np
    from onnx import TensorProto, checker, helper
except ImportError as e:
    die(f"{e}; the generator needs the onnx and numpy Python modules "
        "(Debian: apt-get install python3-onnx python3-numpy, or utils/install-deps.sh)")

# BatchNormalization's epsilon as the exports store it (float32): ResNet-50's
# is the float32 just above 1e-5, DenseNet's and BN-Inception's the one just
# below; ShuffleNet's leaves it at the default.
BN_EPS = 1.0000000656873453e-05
BN_EPS_F32 = 9.999999747378752e-06
LRN_ALPHA = 9.999999747378752e-05


class Net:
    """One network under construction.

    Tracks the shape of every value so that weight shapes and Reshape
    targets follow from the layer parameters; weights are recorded with a
    kind that the random mode scales by. The `prefix` (e.g. "gpu_0/") is
    put before every weight name, as the exporter did."""

    def __init__(self, graph_name, input_name, prefix=""):
        self.graph_name = graph_name
        self.prefix = prefix
        self.input = input_name
        self.nodes = []
        self.weights = {}  # name -> (shape, kind, fan_in)
        self.int_consts = []  # (name, values) in creation order
        self.shapes = {input_name: [BATCH, 3, IMAGE, IMAGE]}
        self.nv = 0
        self.ndummy = 1

    def value(self):
        name = f"r{self.nv}"
        self.nv += 1
        return name

    def weight(self, name, shape, kind, fan_in=None):
        name = self.prefix + name
        assert name not in self.weights, name
        if fan_in is None:
            fan_in = 1
            for d in shape[1:]:
                fan_in *= d
        self.weights[name] = (list(shape), kind, fan_in)
        return name

    def shape_const(self, values, name=None):
        """An int64 initializer OC2_DUMMY_<k> (odd k, as Caffe2 numbered
        them) holding a Reshape target."""
        if name is None:
            name = f"OC2_DUMMY_{self.ndummy}"
        self.ndummy += 2
        self.int_consts.append((name, list(values)))
        return name

    def node(self, op, inputs, shape, attrs=None, extra_outputs=0):
        out = self.value()
        outs = [out] + [self.value() for _ in range(extra_outputs)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=f"n{len(self.nodes)}", **(attrs or {})))
        self.shapes[out] = list(shape)
        return out

    # Layers. Each returns its output value.

    def conv(self, x, wname, cout, k, s=1, p=0, group=1, bias=True, bname=None, pads_attr=True):
        n, c, h, w = self.shapes[x]
        assert c % group == 0 and cout % group == 0, (wname, c, cout, group)
        inputs = [x, self.weight(wname, [cout, c // group, k, k], "conv")]
        if bias:
            inputs.append(self.weight(bname or wname[:-3] + "b_0", [cout], "bias"))
        attrs = {"strides": [s, s], "kernel_shape": [k, k]}
        if pads_attr:
            attrs["pads"] = [p, p, p, p]
        if group != 1:
            attrs["group"] = group
        oh = (h + 2 * p - k) // s + 1
        ow = (w + 2 * p - k) // s + 1
        self.check_map(wname, oh, ow)
        return self.node("Conv", inputs, [n, cout, oh, ow], attrs)

    def check_map(self, layer, oh, ow):
        """Raises ShapeError where a layer's output would be empty."""
        if oh < 1 or ow < 1:
            raise ShapeError(f"layer {layer} would have an output of {oh} x {ow} pixels")

    def pool(self, op, x, k, s, pads=(0, 0, 0, 0), pads_attr=True):
        """MaxPool or AveragePool; `pads` is [top, left, bottom, right]:
        Caffe's ceil-mode pooling shows up as an extra bottom/right pad."""
        n, c, h, w = self.shapes[x]
        attrs = {"strides": [s, s], "kernel_shape": [k, k]}
        if pads_attr:
            attrs["pads"] = list(pads)
        oh = (h + pads[0] + pads[2] - k) // s + 1
        ow = (w + pads[1] + pads[3] - k) // s + 1
        self.check_map(f"{op} n{len(self.nodes)}", oh, ow)
        return self.node(op, [x], [n, c, oh, ow], attrs)

    def last_pool_kernel(self, x, pads=(0, 0, 0, 0)):
        """The window of the average pooling before a classifier: the
        whole last map with its bottom pads (7 for a 224 x 224 image), so
        that one value per channel is left at any image size."""
        _, _, h, w = self.shapes[x]
        assert h + pads[0] + pads[2] == w + pads[1] + pads[3], (h, w, pads)
        return h + pads[0] + pads[2]

    def unary(self, op, x, attrs=None):
        return self.node(op, [x], self.shapes[x], attrs)

    def relu(self, x):
        return self.unary("Relu", x)

    def lrn(self, x, alpha=LRN_ALPHA, bias=1.0):
        return self.unary("LRN", x, {"size": 5, "alpha": alpha, "beta": 0.75, "bias": bias})

    def dropout(self, x, ratio=0.5):
        return self.node("Dropout", [x], self.shapes[x], {"ratio": ratio}, extra_outputs=1)

    def batchnorm(self, x, base, names=("s", "b", "rm", "riv"), eps=BN_EPS):
        c = self.shapes[x][1]
        kinds = ("bn_scale", "bn_bias", "bn_mean", "bn_var")
        ins = [x] + [self.weight(f"{base}{nm}_0", [c], kd) for nm, kd in zip(names, kinds)]
        return self.node("BatchNormalization", ins, self.shapes[x], {} if eps is None else {"epsilon": eps})

    def scale(self, x, wname, bname):
        """Caffe's Scale layer after BatchNorm: x * w + b, both [C]
        unsqueezed to [C, 1, 1] so they broadcast over H and W."""
        c = self.shapes[x][1]
        w = self.node("Unsqueeze", [self.weight(wname, [c], "bn_scale")], [c, 1, 1], {"axes": [1, 2]})
        y = self.node("Mul", [x, w], self.shapes[x])
        b = self.node("Unsqueeze", [self.weight(bname, [c], "bn_bias")], [c, 1, 1], {"axes": [1, 2]})
        return self.node("Add", [y, b], self.shapes[x])

    def concat(self, xs):
        shape = list(self.shapes[xs[0]])
        shape[1] = sum(self.shapes[x][1] for x in xs)
        return self.node("Concat", xs, shape, {"axis": 1})

    def sum(self, a, b):
        return self.node("Sum", [a, b], self.shapes[a])

    def reshape(self, x, shape, const_name=None):
        return self.node("Reshape", [x, self.shape_const(shape, const_name)], shape)

    def flatten(self, x, const_name=None):
        n = self.shapes[x][0]
        size = 1
        for d in self.shapes[x][1:]:
            size *= d
        return self.reshape(x, [n, size], const_name)

    def gemm(self, x, wname, cout):
        n, cin = self.shapes[x]
        w = self.weight(wname, [cout, cin], "fc")
        b = self.weight(wname[:-3] + "b_0", [cout], "bias")
        return self.node("Gemm", [x, w, b], [n, cout], {"transB": 1})

    def softmax(self, x):
        return self.unary("Softmax", x)

    def finish(self, y, name):
        """Renames the final value to the network's output name (the
        exporter gave it no r<k> name)."""
        self.nodes[-1].output[0] = name
        self.shapes[name] = self.shapes.pop(y)
        self.nv -= 1
        self.output = name


# The networks. Layer names, channel counts and attributes are those of the
# model zoo's Caffe2 exports.

def alexnet_like(net, convs, lrn_alpha, lrn_bias, fcs, dropout):
    """AlexNet and ZFNet-512: five convolutions with LRN after the first
    two, three fully-connected layers. `convs` is a list of
    (cout, k, stride, pad, group, pool) where pool is None or (k, s, pads)."""
    x = net.input
    for i, (cout, k, s, p, g, pool) in enumerate(convs, 1):
        x = net.relu(net.conv(x, f"conv{i}_w_0", cout, k, s, p, g))
        if i <= 2:
            x = net.lrn(x, lrn_alpha, lrn_bias)
        if pool:
            x = net.pool("MaxPool", x, *pool)
    x = net.flatten(x)
    for i, cout in enumerate(fcs, 6):
        x = net.gemm(x, f"fc{i}_w_0", cout)
        if i < 8:
            x = net.relu(x)
            if dropout:
                x = net.dropout(x)
    net.finish(net.softmax(x), "prob_1" if not net.prefix else net.prefix + "softmax_1")


def bvlc_alexnet():
    net = Net("bvlc_alexnet", "data_0")
    alexnet_like(net, [
        (96, 11, 4, 0, 1, (3, 2)),
        (256, 5, 1, 2, 2, (3, 2)),
        (384, 3, 1, 1, 1, None),
        (384, 3, 1, 1, 2, None),
        (256, 3, 1, 1, 2, (3, 2, (0, 0, 1, 1))),
    ], LRN_ALPHA, 1.0, [4096, 4096, 1000], dropout=True)
    return net


def zfnet512():
    net = Net("zfnet512", "gpu_0/data_0", "gpu_0/")
    alexnet_like(net, [
        (96, 7, 2, 0, 1, (3, 2)),
        (256, 5, 2, 0, 1, (3, 2)),
        (512, 3, 1, 1, 1, None),
        (512, 3, 1, 1, 1, None),
        (512, 3, 1, 1, 1, (2, 2)),
    ], 0.0005000000237487257, 2.0, [4096, 1024, 1000], dropout=False)
    return net


def vgg19():
    net = Net("vgg19", "data_0")
    x = net.input
    for stage, (cout, n) in enumerate([(64, 2), (128, 2), (256, 4), (512, 4), (512, 4)], 1):
        for i in range(1, n + 1):
            x = net.relu(net.conv(x, f"conv{stage}_{i}_w_0", cout, 3, 1, 1))
        x = net.pool("MaxPool", x, 2, 2)
    x = net.flatten(x)
    for i, cout in enumerate([4096, 4096, 1000], 6):
        x = net.gemm(x, f"fc{i}_w_0", cout)
        if i < 8:
            x = net.dropout(net.relu(x))
    net.finish(net.softmax(x), "prob_1")
    return net


def squeezenet():
    net = Net("squeezenet_old", "data_0")
    x = net.relu(net.conv(net.input, "conv1_w_0", 64, 3, 2, 0))
    x = net.pool("MaxPool", x, 3, 2)
    fires = [(2, 16, 64), (3, 16, 64), None, (4, 32, 128), (5, 32, 128), None,
             (6, 48, 192), (7, 48, 192), (8, 64, 256), (9, 64, 256)]
    for f in fires:
        if f is None:
            x = net.pool("MaxPool", x, 3, 2)
            continue
        i, sq, ex = f
        s = net.relu(net.conv(x, f"fire{i}/squeeze1x1_w_0", sq, 1))
        a = net.relu(net.conv(s, f"fire{i}/expand1x1_w_0", ex, 1))
        b = net.relu(net.conv(s, f"fire{i}/expand3x3_w_0", ex, 3, 1, 1))
        x = net.concat([a, b])
    x = net.dropout(x)
    x = net.relu(net.conv(x, "conv10_w_0", 1000, 1))
    x = net.unary("GlobalAveragePool", x)
    net.shapes[x] = net.shapes[x][:2] + [1, 1]
    net.finish(net.softmax(x), "softmaxout_1")
    return net


def inception_v1():
    net = Net("inception_v1", "data_0")
    x = net.relu(net.conv(net.input, "conv1/7x7_s2_w_0", 64, 7, 2, 3))
    x = net.lrn(net.pool("MaxPool", x, 3, 2))
    x = net.relu(net.conv(x, "conv2/3x3_reduce_w_0", 64, 1))
    x = net.relu(net.conv(x, "conv2/3x3_w_0", 192, 3, 1, 1))
    x = net.pool("MaxPool", net.lrn(x), 3, 2)
    # (name, 1x1, 3x3 reduce, 3x3, 5x5 reduce, 5x5, pool projection)
    modules = [("3a", 64, 96, 128, 16, 32, 32), ("3b", 128, 128, 192, 32, 96, 64), None,
               ("4a", 192, 96, 208, 16, 48, 64), ("4b", 160, 112, 224, 24, 64, 64),
               ("4c", 128, 128, 256, 24, 64, 64), ("4d", 112, 144, 288, 32, 64, 64),
               ("4e", 256, 160, 320, 32, 128, 128), None,
               ("5a", 256, 160, 320, 32, 128, 128), ("5b", 384, 192, 384, 48, 128, 128)]
    for m in modules:
        if m is None:
            x = net.pool("MaxPool", x, 3, 2)
            continue
        name, c1, r3, c3, r5, c5, pp = m
        p = f"inception_{name}/"
        a = net.relu(net.conv(x, p + "1x1_w_0", c1, 1))
        b = net.relu(net.conv(x, p + "3x3_reduce_w_0", r3, 1))
        b = net.relu(net.conv(b, p + "3x3_w_0", c3, 3, 1, 1))
        c = net.relu(net.conv(x, p + "5x5_reduce_w_0", r5, 1))
        c = net.relu(net.conv(c, p + "5x5_w_0", c5, 5, 1, 2))
        d = net.pool("MaxPool", x, 3, 1, (1, 1, 1, 1))
        d = net.relu(net.conv(d, p + "pool_proj_w_0", pp, 1))
        x = net.concat([a, b, c, d])
    x = net.pool("AveragePool", x, net.last_pool_kernel(x, (0, 0, 1, 1)), 1, (0, 0, 1, 1))
    x = net.dropout(x, 0.4000000059604645)
    x = net.flatten(x)
    # The classifier's weight was stored as [1, 1, 1000, 1024] and reshaped
    # in the graph.
    w = net.weight("loss3/classifier_w_0", [1, 1, 1000, 1024], "fc", fan_in=1024)
    w = net.node("Reshape", [w, net.shape_const([1000, 1024])], [1000, 1024])
    b = net.weight("loss3/classifier_b_0", [1000], "bias")
    y = net.node("Gemm", [x, w, b], [1, 1000], {"transB": 1})
    net.finish(net.softmax(y), "prob_1")
    return net


def bn_inception_unit(net, x, name, cout, k, s=1, p=0):
    """BN-Inception's unit: convolution without bias, BatchNormalization
    with unit scale and zero offset, a Scale layer, ReLU."""
    x = net.conv(x, name + "_w_0", cout, k, s, p, bias=False)
    x = net.batchnorm(x, name + "/bn_", ("scale", "bias", "mean", "var"), BN_EPS_F32)
    x = net.scale(x, name + "/bn/sc_w_0", name + "/bn/sc_b_0")
    return net.relu(x)


def inception_v2():
    net = Net("inception_v2", "data_0")
    u = lambda x, name, cout, k, s=1, p=0: bn_inception_unit(net, x, name, cout, k, s, p)
    ceil = (0, 0, 1, 1)
    x = u(net.input, "conv1/7x7_s2", 64, 7, 2, 3)
    x = net.pool("MaxPool", x, 3, 2, ceil)
    x = u(x, "conv2/3x3_reduce", 64, 1)
    x = u(x, "conv2/3x3", 192, 3, 1, 1)
    x = net.pool("MaxPool", x, 3, 2, ceil)
    # (name, 1x1 or 0 for a stride-2 module, 3x3 reduce, 3x3, double 3x3
    # reduce, double 3x3, pool kind, pool projection)
    modules = [("3a", 64, 64, 64, 64, 96, "AveragePool", 32),
               ("3b", 64, 64, 96, 64, 96, "AveragePool", 64),
               ("3c", 0, 128, 160, 64, 96, "MaxPool", 0),
               ("4a", 224, 64, 96, 96, 128, "AveragePool", 128),
               ("4b", 192, 96, 128, 96, 128, "AveragePool", 128),
               ("4c", 160, 128, 160, 128, 160, "AveragePool", 96),
               ("4d", 96, 128, 192, 160, 192, "AveragePool", 96),
               ("4e", 0, 128, 192, 192, 256, "MaxPool", 0),
               ("5a", 352, 192, 320, 160, 224, "AveragePool", 128),
               ("5b", 352, 192, 320, 192, 224, "MaxPool", 128)]
    for name, c1, r3, c3, rd, cd, pool, pp in modules:
        p = f"inception_{name}/"
        s = 1 if c1 else 2
        branches = []
        if c1:
            branches.append(u(x, p + "1x1", c1, 1))
        b = u(x, p + "3x3_reduce", r3, 1)
        branches.append(u(b, p + "3x3", c3, 3, s, 1))
        d = u(x, p + "double3x3_reduce", rd, 1)
        d = u(d, p + "double3x3a", cd, 3, 1, 1)
        branches.append(u(d, p + "double3x3b", cd, 3, s, 1))
        if c1:
            q = net.pool(pool, x, 3, 1, (1, 1, 1, 1))
            branches.append(u(q, p + "pool_proj", pp, 1))
        else:
            branches.append(net.pool(pool, x, 3, 2, ceil))
        x = net.concat(branches)
    x = net.pool("AveragePool", x, net.last_pool_kernel(x), 1)
    x = net.flatten(x, "OC2_DUMMY_139")
    net.finish(net.softmax(net.gemm(x, "loss3/classifier_w_0", 1000)), "prob_1")
    return net


def densenet121():
    net = Net("densenet121", "data_0")

    def bn_scale_relu(x, base):
        x = net.batchnorm(x, base + "/bn_", ("scale", "bias", "mean", "var"), BN_EPS_F32)
        return net.relu(net.scale(x, base + "/bn_w_0", base + "/bn_b_0"))

    x = net.conv(net.input, "conv1_w_0", 64, 7, 2, 3, bias=False)
    x = bn_scale_relu(x, "conv1")
    x = net.pool("MaxPool", x, 3, 2, (1, 1, 1, 1))
    blocks = [6, 12, 24, 16]
    for bi, layers in enumerate(blocks, 2):
        for li in range(1, layers + 1):
            base = f"conv{bi}_{li}"
            y = bn_scale_relu(x, base + "/x1")
            y = net.conv(y, base + "/x1_w_0", 128, 1, bias=False)
            y = bn_scale_relu(y, base + "/x2")
            y = net.conv(y, base + "/x2_w_0", 32, 3, 1, 1, bias=False)
            x = net.concat([x, y])
        base = f"conv{bi}_blk"
        x = bn_scale_relu(x, base)
        if bi < 5:
            x = net.conv(x, base + "_w_0", net.shapes[x][1] // 2, 1, bias=False)
            x = net.pool("AveragePool", x, 2, 2)
    x = net.unary("GlobalAveragePool", x)
    net.shapes[x] = net.shapes[x][:2] + [1, 1]
    net.finish(net.conv(x, "fc6_w_0", 1000, 1), "fc6_1")
    return net


def caffe2_classifier(net, x):
    """The classifier both Caffe2-zoo networks (resnet50, shufflenet) end
    with: a 7x7 average pool, Flatten, a 1000-way Gemm (pred_w_0) and
    Softmax as gpu_0/softmax_1. Returns net, finished."""
    x = net.pool("AveragePool", x, net.last_pool_kernel(x), 1, pads_attr=False)
    x = net.flatten(x)
    net.finish(net.softmax(net.gemm(x, "pred_w_0", 1000)), "gpu_0/softmax_1")
    return net


def resnet50():
    net = Net("resnet50", "gpu_0/data_0", "gpu_0/")
    x = net.conv(net.input, "conv1_w_0", 64, 7, 2, 3, bias=False)
    x = net.relu(net.batchnorm(x, "res_conv1_bn_"))
    x = net.pool("MaxPool", x, 3, 2, (1, 1, 1, 1))
    for stage, (width, blocks) in enumerate([(64, 3), (128, 4), (256, 6), (512, 3)], 2):
        for i in range(blocks):
            base = f"res{stage}_{i}_branch"
            s = 2 if i == 0 and stage > 2 else 1
            y = net.conv(x, base + "2a_w_0", width, 1, bias=False)
            y = net.relu(net.batchnorm(y, base + "2a_bn_"))
            y = net.conv(y, base + "2b_w_0", width, 3, s, 1, bias=False)
            y = net.relu(net.batchnorm(y, base + "2b_bn_"))
            y = net.conv(y, base + "2c_w_0", width * 4, 1, bias=False)
            y = net.batchnorm(y, base + "2c_bn_")
            if i == 0:
                sc = net.conv(x, base + "1_w_0", width * 4, 1, s, bias=False, pads_attr=False)
                x = net.sum(y, net.batchnorm(sc, base + "1_bn_"))
            else:
                x = net.sum(y, x)
            x = net.relu(x)
    return caffe2_classifier(net, x)


def shufflenet():
    """ShuffleNet with 4 groups: every unit is a grouped 1x1 convolution,
    a channel shuffle (Reshape to [N, 4, C/4, H, W], Transpose, Reshape
    back), a depthwise 3x3 and a grouped 1x1; a stage's first unit has
    stride 2 and concatenates a 3x3 average pool of its input, the others
    add their input."""
    net = Net("shufflenet", "gpu_0/data_0", "gpu_0/")
    groups = 4
    x = net.conv(net.input, "conv3_0_w_0", 24, 3, 2, 1)
    x = net.relu(net.batchnorm(x, "conv3_0_bn_", eps=None))
    x = net.pool("MaxPool", x, 3, 2, (1, 1, 1, 1))
    n1 = n3 = 0
    for cout, units in [(136, 4), (272, 8), (544, 4)]:
        for i in range(units):
            n, cin, h, w = net.shapes[x]
            first = i == 0
            mid = cout - cin if first else cout
            y = net.conv(x, f"gconv1_{n1}_w_0", mid, 1, group=groups, bias=False)
            y = net.relu(net.batchnorm(y, f"gconv1_{n1}_bn_", eps=None))
            y = net.reshape(y, [n, groups, mid // groups, h, w])
            y = net.node("Transpose", [y], [n, mid // groups, groups, h, w], {"perm": [0, 2, 1, 3, 4]})
            y = net.reshape(y, [n, mid, h, w])
            y = net.conv(y, f"gconv3_{n3}_w_0", mid, 3, 2 if first else 1, 1, group=mid, bias=False)
            y = net.batchnorm(y, f"gconv3_{n3}_bn_", eps=None)
            y = net.conv(y, f"gconv1_{n1 + 1}_w_0", mid, 1, group=groups, bias=False)
            y = net.batchnorm(y, f"gconv1_{n1 + 1}_bn_", eps=None)
            n1 += 2
            n3 += 1
            if first:
                x = net.concat([y, net.pool("AveragePool", x, 3, 2, (1, 1, 1, 1))])
            else:
                x = net.sum(y, x)
            x = net.relu(x)
    return caffe2_classifier(net, x)


MODELS = {
    "bvlc_alexnet": bvlc_alexnet,
    "densenet121": densenet121,
    "inception_v1": inception_v1,
    "inception_v2": inception_v2,
    "resnet50": resnet50,
    "shufflenet": shufflenet,
    "squeezenet": squeezenet,
    "vgg19": vgg19,
    "zfnet512": zfnet512,
}


def random_values(rng, shape, kind, fan_in):
    """Seeded weights scaled by their role (see the module comment)."""
    if kind in ("conv", "fc"):
        return rng.standard_normal(shape, dtype=np.float32) * np.float32((2.0 / fan_in) ** 0.5)
    lo, hi = {"bn_scale": (0.8, 1.2), "bn_var": (0.5, 1.5)}.get(kind, (-0.05, 0.05))
    return rng.uniform(lo, hi, shape).astype(np.float32)


# A reference forward pass in numpy, only for calibrating BatchNormalization
# in the random mode: it runs the graph on one seeded input, and each
# BatchNormalization's mean and variance become the per-channel statistics
# of the values it actually receives, so that it normalizes them as a
# trained network's would. Without it the random statistics let the
# variance grow by a constant factor per unit, and ShuffleNet's logits
# reach 1e5.

def np_windows(x, kh, kw, sh, sw):
    """[N, C, H, W] -> the view [N, C, kh, kw, OH, OW] of its windows."""
    n, c, h, w = x.shape
    oh = (h - kh) // sh + 1
    ow = (w - kw) // sw + 1
    st = x.strides
    return np.lib.stride_tricks.as_strided(
        x, (n, c, kh, kw, oh, ow), (st[0], st[1], st[2], st[3], st[2] * sh, st[3] * sw), writeable=False)


def np_pad(x, pads, value=0.0):
    t, l, b, r = pads
    return np.pad(x, ((0, 0), (0, 0), (t, b), (l, r)), constant_values=value)


def np_conv(x, w, b, a):
    kh, kw = a["kernel_shape"]
    sh, sw = a["strides"]
    group = a.get("group", 1)
    win = np_windows(np_pad(x, a.get("pads", [0, 0, 0, 0])), kh, kw, sh, sw)
    n, c, _, _, oh, ow = win.shape
    co, cig = w.shape[0], w.shape[1]
    cog = co // group
    if cig == 1 and cog == 1:  # depthwise
        out = np.einsum("ckl,nckloq->ncoq", w[:, 0], win, optimize=True)
    else:
        out = np.empty((n, co, oh, ow), np.float32)
        for g in range(group):
            cols = win[:, g * cig:(g + 1) * cig].reshape(n, cig * kh * kw, oh * ow)
            wg = w[g * cog:(g + 1) * cog].reshape(cog, cig * kh * kw)
            out[:, g * cog:(g + 1) * cog] = np.matmul(wg, cols).reshape(n, cog, oh, ow)
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out.astype(np.float32)


def np_pool(op, x, a):
    kh, kw = a["kernel_shape"]
    sh, sw = a["strides"]
    pads = a.get("pads", [0, 0, 0, 0])
    if op == "MaxPool":
        return np_windows(np_pad(x, pads, -np.inf), kh, kw, sh, sw).max(axis=(2, 3))
    # AveragePool, count_include_pad = 0: divide by the window's real elements
    total = np_windows(np_pad(x, pads), kh, kw, sh, sw).sum(axis=(2, 3))
    ones = np.ones((1, 1) + x.shape[2:], np.float32)
    count = np_windows(np_pad(ones, pads), kh, kw, sh, sw).sum(axis=(2, 3))
    return (total / count).astype(np.float32)


def np_lrn(x, a):
    size = a["size"]
    sq = np.pad(x * x, ((0, 0), ((size - 1) // 2, size // 2), (0, 0), (0, 0)))
    csum = np.cumsum(sq, axis=1)
    csum = np.concatenate([np.zeros_like(csum[:, :1]), csum], axis=1)
    window = csum[:, size:] - csum[:, :-size]
    return (x / (a["bias"] + a["alpha"] / size * window) ** a["beta"]).astype(np.float32)


def calibrate_batchnorm(net, weights, rng, images=None):
    """Runs `net` on a uniform [0, 1) input from `rng` with `weights`
    (name -> array) and sets every BatchNormalization's mean and variance
    weights to the statistics of its input. `images`: the number of input
    images (default: the batch)."""
    vals = {net.input: rng.random((images or BATCH, 3, 224, 224), dtype=np.float32)}
    for w, arr in weights.items():
        vals[w] = arr
    for c, v in net.int_consts:
        vals[c] = np.array(v, np.int64)
    for nd in net.nodes:
        a = {at.name: helper.get_attribute_value(at) for at in nd.attribute}
        x = [vals[i] for i in nd.input]
        op = nd.op_type
        if op == "Conv":
            y = np_conv(x[0], x[1], x[2] if len(x) > 2 else None, a)
        elif op in ("MaxPool", "AveragePool"):
            y = np_pool(op, x[0], a)
        elif op == "GlobalAveragePool":
            y = x[0].mean(axis=(2, 3), keepdims=True)
        elif op == "BatchNormalization":
            mean = x[0].mean(axis=(0, 2, 3))
            var = x[0].var(axis=(0, 2, 3)) + np.float32(1e-3)
            weights[nd.input[3]][...] = mean
            weights[nd.input[4]][...] = var
            eps = a.get("epsilon", 1e-5)
            y = (x[0] - mean.reshape(1, -1, 1, 1)) / np.sqrt(var.reshape(1, -1, 1, 1) + eps)
            y = y * x[1].reshape(1, -1, 1, 1) + x[2].reshape(1, -1, 1, 1)
        elif op == "Relu":
            y = np.maximum(x[0], 0)
        elif op == "LRN":
            y = np_lrn(x[0], a)
        elif op in ("Sum", "Add"):
            y = x[0] + x[1]
        elif op == "Mul":
            y = x[0] * x[1]
        elif op == "Unsqueeze":
            y = x[0]
            for ax in a["axes"]:
                y = np.expand_dims(y, ax)
        elif op == "Concat":
            y = np.concatenate(x, axis=a["axis"])
        elif op == "Reshape":
            # a target that names the batch follows the calibration's count
            y = x[0].reshape([x[0].shape[0]] + list(x[1][1:]) if x[1][0] == BATCH else x[1])
        elif op == "Transpose":
            y = x[0].transpose(a["perm"])
        elif op == "Gemm":
            y = x[0] @ x[1].T + x[2]
        elif op == "Dropout":
            y = x[0]
        elif op == "Softmax":
            e = np.exp(x[0] - x[0].max())
            y = e / e.sum()
        else:
            raise AssertionError(f"calibrate_batchnorm: no reference for {op}")
        vals[nd.output[0]] = y.astype(np.float32)


def scale_residual_branches(net, data, factor):
    """Multiplies the scale of every BatchNormalization that ends a residual
    branch (the first input of a Sum: ResNet-50's res*_branch2c_bn,
    ShuffleNet's last grouped convolution's) by `factor`."""
    producer = {nd.output[0]: nd for nd in net.nodes}
    for nd in net.nodes:
        if nd.op_type in ("Sum", "Add"):
            bn = producer.get(nd.input[0])
            if bn is not None and bn.op_type == "BatchNormalization":
                data[bn.input[1]] *= np.float32(factor)


def build_model(name, mode, seed, fill, bn_images=None, residual_scale=1.0):
    """The ModelProto of network `name` with weights in `mode`; in the
    random mode, BatchNormalization statistics over `bn_images` seeded
    images (default: the batch) and residual branches' last scales times
    `residual_scale` (see --bn-images and --residual-scale)."""
    net = MODELS[name]()
    inits = []
    prelude = []
    for cname, values in net.int_consts:
        inits.append(helper.make_tensor(cname, TensorProto.INT64, [len(values)], values))
    if mode == "fill":
        # ConstantOfShape nodes come first, by weight name, as in the
        # model zoo's light files.
        fill_value = helper.make_tensor("value", TensorProto.FLOAT, [1], [fill])
        for wname in sorted(net.weights):
            shape = net.weights[wname][0]
            inits.append(helper.make_tensor(wname + "__SHAPE", TensorProto.INT64, [len(shape)], shape))
            prelude.append(helper.make_node("ConstantOfShape", [wname + "__SHAPE"], [wname], value=fill_value))
    else:
        rng = np.random.Generator(np.random.PCG64([seed, zlib.crc32(name.encode())]))
        data = {}
        for wname in sorted(net.weights):
            shape, kind, fan_in = net.weights[wname]
            data[wname] = random_values(rng, shape, kind, fan_in)
        if residual_scale != 1.0:
            scale_residual_branches(net, data, residual_scale)
        if any(nd.op_type == "BatchNormalization" for nd in net.nodes):
            calibrate_batchnorm(net, data, np.random.Generator(np.random.PCG64([seed, zlib.crc32(name.encode()), 1])),
                                bn_images)
        for wname in sorted(net.weights):
            shape = net.weights[wname][0]
            t = TensorProto()
            t.name = wname
            t.data_type = TensorProto.FLOAT
            t.dims.extend(shape)
            t.raw_data = data[wname].astype("<f4").tobytes()
            inits.append(t)
    inputs = [helper.make_tensor_value_info(net.input, TensorProto.FLOAT, [BATCH, 3, IMAGE, IMAGE])]
    # IR 3: every initializer is a graph input too
    for t in inits:
        inputs.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    outputs = [helper.make_tensor_value_info(net.output, TensorProto.FLOAT, net.shapes[net.output])]
    graph = helper.make_graph(prelude + net.nodes, net.graph_name, inputs, outputs, inits)
    model = helper.make_model(graph, producer_name="glow gen-models.py", opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 3
    return model


def write_atomic(path, data):
    """Writes `data` to `path` through a temporary file in the same
    directory, so readers see the old file or the whole new one."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".tmp-", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        # mkstemp creates the file private; give it the mode a plain
        # open() would have
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def main():
    ap = argparse.ArgumentParser(description="Generates the model-zoo architectures (ONNX, opset 9) used by the tests and benchmarks.")
    ap.add_argument("names", nargs="*", metavar="NAME", help="networks to write (default: all)")
    ap.add_argument("-o", "--output-dir", default=".", help="directory for light_<name>.onnx (created if missing)")
    ap.add_argument("--weights", choices=["fill", "random"], default="fill", help="ConstantOfShape fills (default) or seeded random initializers")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random weights (default 0)")
    ap.add_argument("--fill", type=float, default=0.02, help="value of the fill weights (default 0.02)")
    ap.add_argument("--list", action="store_true", help="print the network names and exit")
    ap.add_argument("--batch", type=int, default=1,
                    help="the input's batch size (default 1; for benchmarks: resnet50 and the networks whose "
                         "Reshape targets follow the batch)")
    ap.add_argument("--image-size", type=int, default=224, metavar="N",
                    help="the input's height and width (default 224; the classifier follows the size)")
    ap.add_argument("--bn-images", type=int, default=None, metavar="N",
                    help="random weights: BatchNormalization statistics over N seeded images (default: the batch)")
    ap.add_argument("--residual-scale", type=float, default=1.0, metavar="S",
                    help="random weights: the last BatchNormalization scale of every residual branch times S "
                         "(default 1)")
    args = ap.parse_args()
    global BATCH, IMAGE
    BATCH = args.batch
    IMAGE = args.image_size

    if args.list:
        print("\n".join(MODELS))
        return 0
    if args.image_size < 1:
        die(f"--image-size must be at least 1, got {args.image_size}")
    if args.seed < 0:
        die(f"--seed must be non-negative, got {args.seed}")
    if args.bn_images is not None and args.bn_images < 1:
        die(f"--bn-images must be at least 1, got {args.bn_images}")
    if not args.residual_scale > 0 or args.residual_scale == float("inf"):
        die(f"--residual-scale must be a positive number, got {args.residual_scale}")
    if args.weights != "random" and (args.bn_images is not None or args.residual_scale != 1.0):
        die("--bn-images and --residual-scale apply to --weights random only")
    for n in args.names:
        if n not in MODELS:
            close = difflib.get_close_matches(n, list(MODELS), 1)
            hint = f"; did you mean '{close[0]}'?" if close else f" (known: {', '.join(MODELS)})"
            die(f"unknown network '{n}'{hint}")
    try:
        os.makedirs(args.output_dir, exist_ok=True)
    except OSError as e:
        die(f"cannot create '{args.output_dir}': {e.strerror}")
    for n in args.names or list(MODELS):
        try:
            model = build_model(n, args.weights, args.seed, args.fill, args.bn_images, args.residual_scale)
        except ShapeError as e:
            die(f"{n} does not take a {IMAGE} x {IMAGE} image: {e}")
        checker.check_model(model)
        path = os.path.join(args.output_dir, f"light_{n}.onnx")
        try:
            write_atomic(path, model.SerializeToString())
        except OSError as e:
            die(f"cannot write '{path}': {e.strerror}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
