"""torch.onnx.export of models that use clops's functions: each clops autograd Function has a symbolic, so
the export writes ONNX's own nodes (DepthToSpace DCR and CRD, SpaceToDepth, MaxUnpool with PyTorch's
per-plane indices made flat inside the graph), and ONNX Runtime and clops.onnx give the PyTorch model's
outputs bit for bit. A SegNet-like model (conv, max_pool2d with indices 2x2 and an overlapping 3x3/2/1,
clops.max_unpool2d) is exportable this way, where F.max_unpool2d is not (torch 1.13 has no symbolic for
it). What ONNX cannot express fails the export with torch.onnx's OnnxExporterError, never a graph that
ignores its input (before, a call outside autograd - no requires_grad, torch.no_grad(), as the export runs
- was traced as a Constant of its result).

The models' weights and inputs are small integers in float32: every convolution's sums are exact in any
order, so ONNX Runtime's convolutions equal PyTorch's bit for bit and the comparison is of the whole model.
Skips without torch (but under CLOPS_REQUIRE_TORCH=1) and without onnx/onnxruntime (but under
CLOPS_REQUIRE_ONNX=1)."""
import io

import numpy as np
import pytest

import clops
from torch_required import F, torch
from test_onnx_models import require_onnx

onnx, ort = require_onnx()
import clops.onnx  # noqa: E402

CPU = {"providers": ["CPUExecutionProvider"]}


def _newest_opset():
    """The newest opset this torch exports (17 for torch 1.13)."""
    from torch.onnx import _constants
    for name in ("ONNX_MAX_OPSET", "ONNX_TORCHSCRIPT_EXPORTER_MAX_OPSET"):
        if hasattr(_constants, name):
            return getattr(_constants, name)
    return 13


OPSETS = sorted({11, 13, _newest_opset()})


def small_ints(shape, seed, low, high):
    """float32 integers in [low, high]."""
    return torch.from_numpy(np.random.default_rng(seed).integers(low, high + 1, shape).astype(np.float32))


def integer_weights(model, seed=1):
    """Weights in {-1, 0, 1}, biases in [-2, 2]: with inputs in [-4, 4] and at most four 3x3 convolutions of
    <= 8 channels, every partial sum stays below 2^24, so the convolutions are exact in float32."""
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(small_ints(p.shape, seed + i, -1, 1) if p.dim() > 1 else small_ints(p.shape, seed + i, -2, 2))
    return model.eval()


class SegNetLike(torch.nn.Module):
    """Two encoder stages (conv, ReLU, max_pool2d with indices: 2x2, then an overlapping 3x3/2/1), two
    decoder stages (unpool by those indices to the encoder's sizes, conv). `unpool`: clops.max_unpool2d or
    F.max_unpool2d (the reference)."""

    def __init__(self, unpool=clops.max_unpool2d):
        super().__init__()
        self.unpool = unpool
        self.enc1, self.enc2 = torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.Conv2d(4, 4, 3, padding=1)
        self.dec2, self.dec1 = torch.nn.Conv2d(4, 4, 3, padding=1), torch.nn.Conv2d(4, 2, 3, padding=1)

    def forward(self, x):
        e1 = torch.relu(self.enc1(x))
        p1, i1 = F.max_pool2d(e1, 2, 2, return_indices=True)
        e2 = torch.relu(self.enc2(p1))
        p2, i2 = F.max_pool2d(e2, 3, 2, 1, return_indices=True)
        d2 = torch.relu(self.dec2(self.unpool(p2, i2, 3, 2, 1, output_size=e2.shape[2:])))
        return self.dec1(self.unpool(d2, i1, 2, 2, 0, output_size=e1.shape))


class ESPCNLike(torch.nn.Module):
    """Conv, ReLU, conv to 3 * r^2 channels, pixel_shuffle (DepthToSpace CRD)."""

    def __init__(self, shuffle=clops.pixel_shuffle, r=3):
        super().__init__()
        self.shuffle, self.r = shuffle, r
        self.conv1, self.conv2 = torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.Conv2d(8, 3 * r * r, 3, padding=1)

    def forward(self, x):
        return self.shuffle(self.conv2(torch.relu(self.conv1(x))), self.r)


class Unshuffle(torch.nn.Module):
    """pixel_unshuffle (SpaceToDepth CRD), conv, pixel_shuffle: a space-to-depth front end."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(12, 12, 3, padding=1)

    def forward(self, x):
        return clops.pixel_shuffle(self.conv(clops.pixel_unshuffle(x, 2)), 2)


def export(model, x, opset, dynamic=True):
    """The ONNX model's bytes, with the batch dynamic (input and output) where asked."""
    f = io.BytesIO()
    axes = {"x": {0: "n"}, "y": {0: "n"}} if dynamic else None
    torch.onnx.export(model, x, f, opset_version=opset, input_names=["x"], output_names=["y"], dynamic_axes=axes)
    data = f.getvalue()
    onnx.checker.check_model(onnx.load_from_string(data))
    return data


def ops(data):
    return [n.op_type for n in onnx.load_from_string(data).graph.node]


def node(data, op_type):
    (found,) = [n for n in onnx.load_from_string(data).graph.node if n.op_type == op_type]
    return found


def attribute(n, name, default=None):
    for a in n.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def check_runtimes(data, model, x, device):
    """ONNX Runtime and clops.onnx (on `device`) give the PyTorch model's output, bit for bit."""
    with torch.no_grad():
        want = model(x).numpy()
    feed = {"x": x.numpy()}
    (plain,) = ort.InferenceSession(data, **CPU).run(None, feed)
    sess = clops.onnx.InferenceSession(data, device=device, **CPU)
    (ours,) = sess.run(None, feed)
    assert same(plain, want)
    assert same(ours, want)
    assert np.count_nonzero(want) > want.size // 4  # a real output, not zeros
    return sess


@pytest.mark.parametrize("opset", OPSETS)
def test_segnet_exports_and_runs_bit_exact(opset, device):
    model = integer_weights(SegNetLike())
    x = small_ints((1, 3, 19, 23), 7, -4, 4)  # odd sizes: output_size differs from the default
    with torch.no_grad():  # the model is PyTorch's SegNet, bit for bit
        assert torch.equal(model(x), integer_weights(SegNetLike(F.max_unpool2d))(x))
    data = export(model, x, opset)
    assert ops(data).count("MaxUnpool") == 2 and ops(data).count("MaxPool") >= 2
    assert "PythonOp" not in " ".join(ops(data))
    sess = check_runtimes(data, model, x, device)
    assert sum(step[0] == "clops" for step in sess.partition) == 2  # both MaxUnpools ran on clops
    # The plane offsets come from the input's shape: another batch size runs right too.
    check_runtimes(data, model, small_ints((3, 3, 19, 23), 8, -4, 4), device)


@pytest.mark.parametrize("opset", OPSETS)
def test_espcn_exports_and_runs_bit_exact(opset, device):
    model = integer_weights(ESPCNLike())
    x = small_ints((2, 3, 11, 13), 9, -4, 4)
    with torch.no_grad():
        assert torch.equal(model(x), integer_weights(ESPCNLike(F.pixel_shuffle))(x))
    data = export(model, x, opset)
    assert ops(data) == ["Conv", "Relu", "Conv", "DepthToSpace"]
    d2s = node(data, "DepthToSpace")
    assert attribute(d2s, "blocksize") == 3 and attribute(d2s, "mode") == b"CRD"
    check_runtimes(data, model, x, device)


@pytest.mark.parametrize("opset", OPSETS)
def test_pixel_unshuffle_exports_as_space_to_depth(opset):
    model = integer_weights(Unshuffle())
    x = small_ints((1, 3, 10, 14), 10, -4, 4)
    with torch.no_grad():
        assert torch.equal(model(x), F.pixel_shuffle(model.conv(F.pixel_unshuffle(x, 2)), 2))
    data = export(model, x, opset)
    assert "SpaceToDepth" in ops(data) and "DepthToSpace" in ops(data)
    check_runtimes(data, model, x, "host")
    check_runtimes(data, model, small_ints((2, 3, 10, 14), 11, -4, 4), "host")


class Call(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("device", ["host", None])
def test_a_call_outside_autograd_exports_its_node_not_a_constant(grad, device):
    """Before, clops.pixel_shuffle(x, 3, device="host") on a tensor without requires_grad (or under
    torch.no_grad(), as the export traces) ran outside autograd, through NumPy, and was traced as a Constant
    of its result: an ONNX model that ignored its input."""
    x = torch.randn(1, 9, 4, 5, requires_grad=grad)
    data = export(Call(lambda t: clops.pixel_shuffle(t, 3, device=device)), x, 13, dynamic=False)
    assert ops(data) == ["DepthToSpace"]
    other = torch.randn(1, 9, 4, 5)
    (got,) = ort.InferenceSession(data, **CPU).run(None, {"x": other.numpy()})
    assert same(got, F.pixel_shuffle(other, 3).numpy())


@pytest.mark.parametrize("fn, want, mode", [
    (lambda t: clops.depth_to_space(t, 2), "DepthToSpace", b"DCR"),
    (lambda t: clops.depth_to_space(t, 2, "crd"), "DepthToSpace", b"CRD"),
    (lambda t: clops.space_to_depth(t, 2), "SpaceToDepth", None),
])
def test_depth_space_nodes(fn, want, mode):
    x = torch.randn(2, 8, 4, 6)
    data = export(Call(fn), x, 13)
    assert ops(data) == [want]
    if mode is not None:
        assert attribute(node(data, want), "mode", b"DCR") == mode  # DCR: ONNX's default, no attribute
    (got,) = ort.InferenceSession(data, **CPU).run(None, {"x": x.numpy()})
    assert same(got, fn(x).numpy())


def test_depth_to_space_dcr_at_opset_9():
    x = torch.randn(1, 8, 3, 3)
    data = export(Call(lambda t: clops.depth_to_space(t, 2)), x, 9, dynamic=False)
    assert ops(data) == ["DepthToSpace"]
    assert [a.name for a in node(data, "DepthToSpace").attribute] == ["blocksize"]


def test_max_unpooling_flat_and_numpy_indices():
    """clops.max_unpooling (flat indices: ONNX's own, no offsets) and max_unpool2d with NumPy indices (a
    Constant), at opset 11 and at opset 9 (no Range: the offsets are constants)."""
    flat = torch.randperm(2 * 3 * 5 * 6)[:24].reshape(2, 3, 2, 2)
    per_plane = np.random.default_rng(3).permutation(30)[:24].reshape(2, 3, 2, 2)
    x = torch.randn(2, 3, 2, 2)
    for opset in (9, 11):
        for fn in (lambda t: clops.max_unpooling(t, flat, (2, 3, 5, 6)),
                   lambda t: clops.max_unpool2d(t, per_plane, 3, output_size=(5, 6))):
            data = export(Call(fn), x, opset, dynamic=False)
            assert "MaxUnpool" in ops(data)
            for runs in (ort.InferenceSession(data, **CPU), clops.onnx.InferenceSession(data, **CPU)):
                (got,) = runs.run(None, {"x": x.numpy()})
                assert same(got, fn(x).numpy())
    assert torch.equal(clops.max_unpool2d(x, per_plane, 3, output_size=(5, 6)),
                       F.max_unpool2d(x, torch.from_numpy(per_plane), 3, output_size=(5, 6)))


def test_ceil_mode_pool_exports():
    """A ceil-mode pool's output_size lies below MaxUnpool's default size, which ONNX Runtime refuses: the
    attributes are then chosen so that output_shape is valid (the flat indices place every value)."""
    def fn(t):
        v, i = F.max_pool2d(t, 2, 2, ceil_mode=True, return_indices=True)
        return clops.max_unpool2d(v, i, 2, 2, output_size=t.shape)
    x = torch.randn(2, 3, 7, 9)
    data = export(Call(fn), x, 13)
    (got,) = ort.InferenceSession(data, **CPU).run(None, {"x": x.numpy()})
    assert same(got, fn(x).numpy())


FLAT = torch.arange(0, 64, 4).reshape(1, 4, 2, 2)


@pytest.mark.parametrize("fn, opset, words", [
    (lambda t: clops.pixel_shuffle(t, 2), 10, "mode=\"CRD\", which needs opset_version >= 11"),
    (lambda t: clops.max_unpooling(t, FLAT, (1, 4, 4, 4)), 8, "MaxUnpool, which needs opset_version >= 9"),
    (lambda t: clops.max_unpooling(t.long(), FLAT, (1, 4, 4, 4)), 13,
     "MaxUnpool takes only float16, float32 and float64"),
])
def test_what_onnx_cannot_express_fails_the_export(fn, opset, words):
    with pytest.raises(torch.onnx.errors.OnnxExporterError, match=words.replace("(", r"\(")):
        export(Call(fn), torch.randn(1, 4, 2, 2), opset, dynamic=False)


def test_jit_trace_records_the_function():
    """torch.jit.trace too: the traced module runs clops on each new input (not a recorded result)."""
    traced = torch.jit.trace(Call(lambda t: clops.pixel_shuffle(t, 2) * 2), torch.randn(1, 8, 3, 3))
    other = torch.randn(2, 8, 4, 5)
    assert torch.equal(traced(other), F.pixel_shuffle(other, 2) * 2)
