#!/usr/bin/env python3
"""gen_resnet50_gir.py - writes a ResNet-50-sized instruction IR program
(batch N, 224 x 224 x 3 NHWC, batch normalization folded into convolution
biases as an inference compiler would): the 7x7/2 stem, 3x3/2 max pooling,
bottleneck stages of 3, 4, 6 and 3 blocks (1x1, 3x3, 1x1 convolutions with
projection shortcuts), global average pooling, a 2048 x 1000
fully-connected layer and softmax. Weights are xavier-initialized.

    gen_resnet50_gir.py [-n N] > resnet50.gir
    time glow-run resnet50.gir -input data=INPUT.npy -output-dir /tmp/out
"""
import argparse


class Gen:
    def __init__(self, n):
        self.n = n
        self.decl = []
        self.prog = []
        self.uid = 0

    def fresh(self, base):
        self.uid += 1
        return "%s%d" % (base, self.uid)

    def weight(self, dims, fan_in=None, zero=False):
        name = self.fresh("w")
        t = "float<%s>" % " x ".join(str(d) for d in dims)
        init = "zero" if zero else "xavier %.1f seed %d" % (fan_in, self.uid)
        self.decl.append("  %%%s = weight constant %s, %s" % (name, t, init))
        return name

    def alloc(self, dims):
        name = self.fresh("a")
        self.prog.append("  %%%s = alloc float<%s>" % (name, " x ".join(str(d) for d in dims)))
        return name

    def dealloc(self, buf):
        self.prog.append("  %%%s = dealloc @out %%%s" % (self.fresh("d"), buf))

    def conv(self, x, shape, oc, k, s, p, relu=True):
        n, h, w, c = shape
        oh = (h + 2 * p - k) // s + 1
        ow = (w + 2 * p - k) // s + 1
        f = self.weight([oc, k, k, c], fan_in=k * k * c)
        b = self.weight([oc], zero=True)
        out = self.alloc([n, oh, ow, oc])
        self.prog.append(
            "  %%%s = convolution @out %%%s, @in %%%s, @in %%%s, @in %%%s {kernels = [%d, %d], strides = [%d, %d], pads = [%d, %d, %d, %d]}"
            % (self.fresh("c"), out, x, f, b, k, k, s, s, p, p, p, p))
        if relu:
            self.prog.append("  %%%s = relu @out %%%s, @in %%%s" % (self.fresh("r"), out, out))
        return out, [n, oh, ow, oc]

    def bottleneck(self, x, shape, width, stride, project):
        a, sa = self.conv(x, shape, width, 1, 1, 0)
        b, sb = self.conv(a, sa, width, 3, stride, 1)
        self.dealloc(a)
        c, sc = self.conv(b, sb, width * 4, 1, 1, 0, relu=False)
        self.dealloc(b)
        if project:
            sc_buf, _ = self.conv(x, shape, width * 4, 1, stride, 0, relu=False)
        else:
            sc_buf = x
        self.prog.append("  %%%s = add @out %%%s, @in %%%s, @in %%%s" % (self.fresh("s"), c, c, sc_buf))
        self.prog.append("  %%%s = relu @out %%%s, @in %%%s" % (self.fresh("r"), c, c))
        if project:
            self.dealloc(sc_buf)
        return c, sc

    def build(self):
        n = self.n
        self.decl.append("  %%data = weight mutable float<%d x 224 x 224 x 3>" % n)
        self.decl.append("  %%prob = weight mutable float<%d x 1000>" % n)
        x, s = self.conv("data", [n, 224, 224, 3], 64, 7, 2, 3)
        p = self.alloc([n, 56, 56, 64])
        self.prog.append("  %%%s = maxpool @out %%%s, @in %%%s {kernels = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]}"
                         % (self.fresh("m"), p, x))
        self.dealloc(x)
        x, s = p, [n, 56, 56, 64]
        for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            for i in range(blocks):
                y, s2 = self.bottleneck(x, s, width, stride if i == 0 else 1, i == 0)
                self.dealloc(x)
                x, s = y, s2
        g = self.alloc([n, 1, 1, 2048])
        self.prog.append("  %%%s = avgpool @out %%%s, @in %%%s {kernels = [7, 7], strides = [1, 1]}" % (self.fresh("v"), g, x))
        self.dealloc(x)
        flat = self.fresh("flat")
        self.prog.append("  %%%s = tensorview float<%d x 2048> @in %%%s {offsets = [0, 0, 0, 0]}" % (flat, n, g))
        fw = self.weight([2048, 1000], fan_in=2048)
        fb = self.weight([1000], zero=True)
        logits = self.alloc([n, 1000])
        self.prog.append("  %%%s = fullyconnected @out %%%s, @in %%%s, @in %%%s, @in %%%s" % (self.fresh("fc"), logits, flat, fw, fb))
        self.dealloc(g)
        self.prog.append("  %%%s = softmax @out %%prob, @in %%%s {axis = 1}" % (self.fresh("sm"), logits))
        self.dealloc(logits)
        return "function @resnet50\ndeclare {\n%s\n}\nprogram {\n%s\n}\n" % ("\n".join(self.decl), "\n".join(self.prog))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=1)
    print(Gen(ap.parse_args().n).build(), end="")


if __name__ == "__main__":
    main()
