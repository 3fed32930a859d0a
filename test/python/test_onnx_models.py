"""The ONNX models test_onnx.py runs and notes/onnx_bench.py times, built with onnx.helper (no file, no
download): an ESPCN-like super-resolution net (Conv, Relu, DepthToSpace CRD) and a SegNet-like
encoder-decoder (Conv, Relu, MaxPool with indices, MaxUnpool with and without its output_shape input).
The weights are random (seeded): the comparisons are of bits, not of what the nets would learn.

This file's own test checks that onnx.checker accepts each model (it skips without onnx, like
test_onnx.py, unless CLOPS_REQUIRE_ONNX=1)."""
import os

import numpy as np


def _modules():
    import onnx
    from onnx import helper, numpy_helper
    return onnx, helper, numpy_helper


class _Net:
    """Nodes and weights, added layer by layer."""

    def __init__(self, seed):
        self.onnx, self.h, self.nh = _modules()
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []

    def weight(self, name, shape, scale):
        self.inits.append(self.nh.from_array((self.rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def conv(self, name, x, cin, cout, k, relu=True):
        w = self.weight(name + ".w", (cout, cin, k, k), (2.0 / (cin * k * k)) ** 0.5)
        b = self.weight(name + ".b", (cout,), 0.1)
        self.nodes.append(self.h.make_node("Conv", [x, w, b], [name], name=name, pads=[k // 2] * 4))
        if not relu:
            return name
        self.nodes.append(self.h.make_node("Relu", [name], [name + ".relu"], name=name + ".relu"))
        return name + ".relu"

    def model(self, name, inputs, outputs, opset=17):
        g = self.h.make_graph(self.nodes, name, inputs, outputs, self.inits)
        return self.h.make_model(g, opset_imports=[self.h.make_opsetid("", opset)])


def espcn(height=180, width=320, scale=3, channels=3, batch=1):
    """ESPCN (Shi et al. 2016) as its PyTorch versions export it: Conv 5x5 to 64, Conv 3x3 to 32, Conv 3x3
    to channels * scale^2, each with Relu but the last, then DepthToSpace CRD (pixel_shuffle). The default
    is a 320x180 frame scaled by 3 to 960x540: a (1, 27, 180, 320) tensor into DepthToSpace."""
    n = _Net(1)
    x = n.conv("conv1", "x", channels, 64, 5)
    x = n.conv("conv2", x, 64, 32, 3)
    x = n.conv("conv3", x, 32, channels * scale * scale, 3, relu=False)
    n.nodes.append(n.h.make_node("DepthToSpace", [x], ["y"], name="pixel_shuffle", blocksize=scale, mode="CRD"))
    T = n.onnx.TensorProto
    return n.model("espcn", [n.h.make_tensor_value_info("x", T.FLOAT, [batch, channels, height, width])],
                   [n.h.make_tensor_value_info("y", T.FLOAT, [batch, channels, height * scale, width * scale])])


def segnet(height=181, width=241, channels=64, batch=2, classes=4):
    """A two-level SegNet (Badrinarayanan et al. 2017): Conv 3x3 + Relu, MaxPool 2x2/2 with indices, twice;
    a 1x1 Conv between; then MaxUnpool with the second pool's indices and no output_shape (the default
    size, twice the pooled one), a 1x1 Conv + Relu, MaxUnpool with the first pool's indices and
    output_shape = Shape(first encoder output) (the odd size back: 181x241 pools to 90x120, whose
    default unpooled size 180x240 would lose a row and a column), a 1x1 Conv to `classes`.
    Default: (2, 64, 181, 241), 5.6 million elements, out of the last MaxUnpool."""
    n = _Net(2)
    T = n.onnx.TensorProto
    e1 = n.conv("enc1", "x", 3, channels, 3)
    n.nodes.append(n.h.make_node("MaxPool", [e1], ["p1", "i1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]))
    e2 = n.conv("enc2", "p1", channels, channels, 1)
    n.nodes.append(n.h.make_node("MaxPool", [e2], ["p2", "i2"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]))
    mid = n.conv("mid", "p2", channels, channels, 1)
    n.nodes.append(n.h.make_node("MaxUnpool", [mid, "i2"], ["u2"], name="unpool2", kernel_shape=[2, 2],
                                 strides=[2, 2]))
    d2 = n.conv("dec2", "u2", channels, channels, 1)
    n.nodes.append(n.h.make_node("Shape", [e1], ["s1"], name="shape1"))
    n.nodes.append(n.h.make_node("MaxUnpool", [d2, "i1", "s1"], ["u1"], name="unpool1", kernel_shape=[2, 2],
                                 strides=[2, 2]))
    n.conv("dec1", "u1", channels, classes, 1, relu=False)
    return n.model("segnet", [n.h.make_tensor_value_info("x", T.FLOAT, [batch, 3, height, width])],
                   [n.h.make_tensor_value_info("dec1", T.FLOAT, [batch, classes, height, width]),
                    n.h.make_tensor_value_info("u1", T.FLOAT, [batch, channels, height, width])])


def inputs(model, seed=0):
    """A feed of random float32 (normal) values for every input of `model`."""
    rng = np.random.default_rng(seed)
    feed = {}
    for v in model.graph.input:
        shape = [d.dim_value for d in v.type.tensor_type.shape.dim]
        feed[v.name] = rng.standard_normal(shape).astype(np.float32)
    return feed


def require_onnx():
    """(onnx, onnxruntime); without them the calling test module skips, or fails under CLOPS_REQUIRE_ONNX=1
    (CI, which installs them)."""
    import pytest
    if os.environ.get("CLOPS_REQUIRE_ONNX") == "1":
        import onnx
        import onnxruntime
        return onnx, onnxruntime
    why = "not installed (pip install 'clops[onnx]'); CLOPS_REQUIRE_ONNX=1 makes this a failure"
    return (pytest.importorskip("onnx", reason=f"onnx is {why}"),
            pytest.importorskip("onnxruntime", reason=f"onnxruntime is {why}"))


def test_models_are_valid_onnx():
    onnx = require_onnx()[0]
    for model in (espcn(), segnet()):
        onnx.checker.check_model(model, full_check=True)
        assert {n.op_type for n in model.graph.node} & {"DepthToSpace", "MaxUnpool"}
    onnx.checker.check_model(model, full_check=True)
    ops = {n.op_type for n in model.graph.node}
    assert ops & {"DepthToSpace", "MaxUnpool"}
