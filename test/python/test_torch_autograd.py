"""Training through clops (issue 39): clops.max_unpool2d, pixel_shuffle and pixel_unshuffle are
differentiable, and their forwards and backwards equal PyTorch's bit for bit. A SegNet-like model trained
one step through clops against the same model through F.max_unpool2d; pixel_shuffle/pixel_unshuffle
against F's in 3-D, 4-D and 5-D, several factors and dtypes (bfloat16 and float16 included); gradcheck
and gradgradcheck; network sizes (millions of elements). Skips without torch, but under
CLOPS_REQUIRE_TORCH=1 (CI)."""
import copy

import numpy as np
import pytest

import clops
from conftest import random_array
from torch_required import F, random_tensor, same_tensor, torch


# ---- a SegNet-like model, one training step -----------------------------------------------------------


class TinySegNet(torch.nn.Module):
    """Two encoder stages (conv, batch norm, ReLU, max_pool2d with indices: 2x2 and an overlapping 3/2/1),
    two decoder stages (max_unpool2d by those indices, conv), per-pixel class scores."""

    def __init__(self, unpool):
        super().__init__()
        self.unpool = unpool
        conv = torch.nn.Conv2d
        self.enc1 = torch.nn.Sequential(conv(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU())
        self.enc2 = torch.nn.Sequential(conv(8, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU())
        self.dec2 = torch.nn.Sequential(conv(16, 8, 3, padding=1), torch.nn.ReLU())
        self.dec1 = conv(8, 5, 3, padding=1)

    def forward(self, x):
        e1 = self.enc1(x)
        p1, i1 = F.max_pool2d(e1, 2, 2, return_indices=True)
        e2 = self.enc2(p1)
        p2, i2 = F.max_pool2d(e2, 3, 2, 1, return_indices=True)
        d2 = self.dec2(self.unpool(p2, i2, 3, 2, 1, output_size=e2.shape[2:]))
        return self.dec1(self.unpool(d2, i1, 2, 2, 0, output_size=e1.shape[2:]))


def train_step(model, images, labels):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    grads = {name: p.grad.clone() for name, p in model.named_parameters()}
    optimizer.step()
    return loss.detach(), grads


def test_segnet_trains_through_clops_as_through_torch(device):
    """One SGD step through clops.max_unpool2d gives the loss, every parameter's gradient and every updated
    parameter of the same step through F.max_unpool2d, bit for bit; the encoder's gradient is not zero
    (it was exactly 0 when clops.max_unpool2d returned a detached tensor)."""
    torch.manual_seed(39)
    reference = TinySegNet(F.max_unpool2d)
    through_clops = copy.deepcopy(reference)
    through_clops.unpool = lambda *a, **kw: clops.max_unpool2d(*a, **kw, device=device)
    images = torch.randn(2, 3, 30, 34)
    labels = torch.randint(0, 5, (2, 30, 34))
    want_loss, want = train_step(reference, images, labels)
    got_loss, got = train_step(through_clops, images, labels)
    assert same_tensor(got_loss, want_loss)
    for name in want:
        assert same_tensor(got[name], want[name]), name
    assert got["enc1.0.weight"].abs().sum() > 0 and got["enc2.0.weight"].abs().sum() > 0
    for (name, p), q in zip(through_clops.named_parameters(), reference.parameters()):
        assert same_tensor(p, q), name


# ---- max_unpool2d's gradient ----------------------------------------------------------------------


def grads_of(fn, x, grad_out):
    """The output and x's gradient of fn(x) for the output gradient grad_out."""
    x = x.detach().requires_grad_(True)
    y = fn(x)
    (g,) = torch.autograd.grad(y, x, grad_out)
    return y, g


POOLS = [((2, 3, 9, 11), 3, 2, 1, True), ((2, 4, 10, 10), 2, 2, 0, False), ((3, 7, 8), 2, None, 0, False),
         ((1, 2, 9, 9), (3, 2), (2, 1), (1, 0), True)]


@pytest.mark.parametrize("shape, k, s, p, sized", POOLS, ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_max_unpool2d_gradient(device, shape, k, s, p, sized, dtype):
    """Overlapping pools (duplicate indices: every duplicate gets the gradient of its place), 3-D input, an
    output_size; random gradient bits (NaN payloads too): the gradient gathered by the indices, bit for bit."""
    t = torch.nan_to_num(torch.from_numpy(random_array(shape, np.float32, seed=len(shape) + sum(shape))))
    values, indices = F.max_pool2d(t, k, s, p, return_indices=True)
    values = values.to(dtype)
    size = t.shape[-2:] if sized else None
    want_y = F.max_unpool2d(values.float(), indices, k, s, p, output_size=size).to(dtype)
    grad_out = random_tensor(want_y.shape, dtype, seed=7)
    # PyTorch 1.13 lacks max_unpool2d for float16 and bfloat16 on the CPU: its backward is
    # grad.gather(-1, indices) per plane (max_pool_double_backward), which moves bits of any dtype.
    want_g = grad_out.reshape(indices.shape[:-2] + (-1,)).gather(-1, indices.reshape(indices.shape[:-2] + (-1,)))
    want_g = want_g.reshape(indices.shape)
    if dtype in (torch.float32, torch.float64):
        y, g = grads_of(lambda v: F.max_unpool2d(v, indices, k, s, p, output_size=size), values, grad_out)
        assert same_tensor(y, want_y) and same_tensor(g, want_g)
    y, g = grads_of(lambda v: clops.max_unpool2d(v, indices, k, s, p, output_size=size, device=device), values,
                    grad_out)
    assert same_tensor(y, want_y) and same_tensor(g, want_g)
    # NumPy indices with a torch x: the same; changing them after the forward does not reach the backward
    np_indices = indices.numpy().copy()
    v = values.detach().requires_grad_(True)
    y = clops.max_unpool2d(v, np_indices, k, s, p, output_size=size, device=device)
    np_indices[...] = 0
    (g,) = torch.autograd.grad(y, v, grad_out)
    assert same_tensor(y, want_y) and same_tensor(g, want_g)


def test_max_unpooling_flat_gradient(device):
    """clops.max_unpooling on a torch x with flat indices: its gradient is the per-plane one (the indices
    made flat), and a .sum() loss's expanded (stride 0) gradient goes through too."""
    t = torch.randn(2, 3, 8, 6)
    values, indices = F.max_pool2d(t, 2, 2, return_indices=True)
    flat = indices + torch.arange(6).reshape(2, 3, 1, 1) * 48
    want_y, want_g = grads_of(lambda v: F.max_unpool2d(v, indices, 2), values, torch.arange(288.).reshape(2, 3, 8, 6))
    y, g = grads_of(lambda v: clops.max_unpooling(v, flat, (2, 3, 8, 6), device=device), values,
                    torch.arange(288.).reshape(2, 3, 8, 6))
    assert same_tensor(y, want_y) and same_tensor(g, want_g)
    v = values.detach().requires_grad_(True)
    clops.max_unpooling(v, flat, (2, 3, 8, 6), b"flat", device=device).sum().backward()
    assert same_tensor(v.grad, torch.ones_like(values))


def test_no_graph_where_no_gradient():
    """torch.no_grad(), a tensor that does not require grad, integer tensors: a plain result, no graph."""
    x = torch.randn(1, 8, 2, 2, requires_grad=True)
    with torch.no_grad():
        assert clops.pixel_shuffle(x, 2, device="host").grad_fn is None
    assert clops.pixel_shuffle(x.detach(), 2, device="host").grad_fn is None
    assert clops.pixel_shuffle(x, 2, device="host").grad_fn is not None
    assert not clops.pixel_unshuffle(torch.arange(16).reshape(1, 4, 4), 2, device="host").requires_grad


def test_gradcheck_and_double_backward():
    """torch.autograd.gradcheck and gradgradcheck (float64): the backward is the derivative, and the
    backward of the backward is (pixel_shuffle's: pixel_unshuffle's of pixel_shuffle; max_unpool2d's:
    gather's, a scatter-add over duplicates, as PyTorch's)."""
    x = torch.randn(2, 8, 3, 2, dtype=torch.float64, requires_grad=True)
    for fn in (lambda x: clops.pixel_shuffle(x, 2, device="host"), lambda x: clops.pixel_unshuffle(x, 1, device="host"),
               lambda x: clops.depth_to_space(x, 2, "DCR", device="host")):
        assert torch.autograd.gradcheck(fn, (x,)) and torch.autograd.gradgradcheck(fn, (x,))
    y = torch.randn(3, 4, 6, dtype=torch.float64, requires_grad=True)
    fn = lambda y: clops.pixel_unshuffle(y, 2, device="host")  # noqa: E731
    assert torch.autograd.gradcheck(fn, (y,)) and torch.autograd.gradgradcheck(fn, (y,))
    # max_unpool2d of distinct indices (with duplicates only the last is in the output, yet each gets the
    # gradient, in PyTorch as in clops: gradcheck's finite differences disagree with both)
    values, indices = F.max_pool2d(torch.randn(1, 2, 8, 6, dtype=torch.float64), 2, 2, return_indices=True)
    fn = lambda v: clops.max_unpool2d(v, indices, 2, device="host")  # noqa: E731
    v = values.detach().requires_grad_(True)
    assert torch.autograd.gradcheck(fn, (v,)) and torch.autograd.gradgradcheck(fn, (v,))
    # the second derivatives of an overlapping pool, bit for bit
    values, indices = F.max_pool2d(torch.randn(1, 2, 7, 7, dtype=torch.float64), 3, 2, 1, return_indices=True)
    grad_out, gg = torch.randn(1, 2, 7, 7, dtype=torch.float64), torch.randn_like(values)
    second = []
    for unpool in (clops.max_unpool2d, F.max_unpool2d):
        v, go = values.detach().requires_grad_(True), grad_out.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(unpool(v, indices, 3, 2, 1, output_size=(7, 7)), v, go, create_graph=True)
        second.append(torch.autograd.grad(g, go, gg)[0])
    assert same_tensor(second[0], second[1])


def test_forward_mode_ad():
    """Forward-mode AD (dual tensors): the tangent goes through as PyTorch's does, bit for bit (it was
    dropped without a word before the Functions had a jvp)."""
    import torch.autograd.forward_ad as fwAD
    values, indices = F.max_pool2d(torch.randn(2, 3, 9, 9), 3, 2, 1, return_indices=True)
    cases = [(lambda v, f: f(v, indices, 3, 2, 1, output_size=(9, 9)), clops.max_unpool2d, F.max_unpool2d, values),
             (lambda v, f: f(v, 3), clops.pixel_shuffle, F.pixel_shuffle, torch.randn(2, 18, 4, 5)),
             (lambda v, f: f(v, 2), clops.pixel_unshuffle, F.pixel_unshuffle, torch.randn(3, 4, 6))]
    for call, ours, theirs, x in cases:
        tangent = random_tensor(x.shape, torch.float32, seed=11)
        with fwAD.dual_level():
            got = fwAD.unpack_dual(call(fwAD.make_dual(x, tangent), ours))
            want = fwAD.unpack_dual(call(fwAD.make_dual(x, tangent), theirs))
        assert same_tensor(got.primal, want.primal) and same_tensor(got.tangent, want.tangent)


# ---- pixel_shuffle and pixel_unshuffle against PyTorch ---------------------------------------------

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
OTHERS = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.complex64]


@pytest.mark.parametrize("dtype", FLOATS + OTHERS, ids=str)
@pytest.mark.parametrize("lead", [(), (2,), (2, 3)], ids=lambda v: f"{len(v) + 3}-D")
@pytest.mark.parametrize("r", [1, 2, 3])
def test_pixel_shuffle_matches_torch(device, dtype, lead, r):
    """Forward (random bits) and, for the floats, backward (random gradient bits), equal bit for bit."""
    shuffled = random_tensor(lead + (2 * r * r, 3, 5), dtype, seed=r)
    unshuffled = random_tensor(lead + (2, 3 * r, 2 * r), dtype, seed=r)
    for ours, theirs, arg in ((clops.pixel_shuffle, F.pixel_shuffle, shuffled),
                              (clops.pixel_unshuffle, F.pixel_unshuffle, unshuffled)):
        want = theirs(arg, r)
        got = ours(arg, r, device=device)
        assert same_tensor(got, want)
        if dtype in FLOATS:
            grad_out = random_tensor(want.shape, dtype, seed=r + 1)
            _, want_g = grads_of(lambda v: theirs(v, r), arg, grad_out)
            y, g = grads_of(lambda v: ours(v, r, device=device), arg, grad_out)
            assert same_tensor(y, want) and same_tensor(g, want_g)


def test_pixel_shuffle_views_and_empty():
    """Channels-last and sliced views go in as strides; a batch of none and a leading size of 0."""
    x = random_tensor((2, 12, 6, 4), torch.float32, seed=3)
    for view in (x.contiguous(memory_format=torch.channels_last), x[:, :, 1:5], x[..., ::2], x.transpose(2, 3)):
        assert same_tensor(clops.pixel_shuffle(view, 2, device="host"), F.pixel_shuffle(view, 2).contiguous())
    for shape in ((0, 12, 2, 2), (3, 0, 12, 2, 2)):
        e = torch.empty(shape)
        assert same_tensor(clops.pixel_shuffle(e, 2, device="host"), F.pixel_shuffle(e, 2))


@pytest.mark.parametrize("call, error, words", [
    (lambda: clops.pixel_shuffle(torch.zeros(8, 2), 2), ValueError, "pixel_shuffle expects x of shape (*, C, H, W)"),
    (lambda: clops.pixel_unshuffle(torch.zeros(4), 2), ValueError, "at least 3-D, not 1-D"),
    (lambda: clops.pixel_shuffle(torch.zeros(1, 6, 2, 2), 2), ValueError, "CLOPS_ERROR_CHANNELS_NOT_DIVISIBLE"),
    (lambda: clops.pixel_unshuffle(torch.zeros(1, 1, 3, 4), 2), ValueError, "CLOPS_ERROR_SPATIAL_NOT_DIVISIBLE"),
    (lambda: clops.pixel_shuffle(torch.zeros(1, 4, 2, 2), 0), ValueError, "CLOPS_ERROR_INVALID_BLOCK_SIZE"),
    (lambda: clops.pixel_shuffle(torch.zeros(1, 4, 2, 2), 2.0), TypeError, "block_size must be an int"),
    (lambda: clops.pixel_shuffle(torch.zeros(1, 4, 2, 2, device="meta"), 2), TypeError, "a torch tensor on meta"),
    (lambda: clops.pixel_shuffle(torch.zeros(1, 4, 2, 2, dtype=torch.complex32), 2), TypeError, "complex32"),
])
@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_pixel_shuffle_errors(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert words in str(info.value)


# ---- network sizes ------------------------------------------------------------------------------


def test_network_sizes(device):
    """An ESPCN's x3 output layer (27 = 3 x 3^2 channels at 180x240, a batch of 2: 2.3 million elements,
    shuffled to 3 x 540x720) and a SegNet stage (64 x 224x224 pooled 2x2, unpooled: 3.2 million elements),
    forward and backward against PyTorch's, bit for bit."""
    x = torch.randn(2, 27, 180, 240)
    grad_out = torch.randn(2, 3, 540, 720)
    want = grads_of(lambda v: F.pixel_shuffle(v, 3), x, grad_out)
    got = grads_of(lambda v: clops.pixel_shuffle(v, 3, device=device), x, grad_out)
    assert same_tensor(got[0], want[0]) and same_tensor(got[1], want[1])
    values, indices = F.max_pool2d(torch.randn(1, 64, 224, 224), 2, 2, return_indices=True)
    grad_out = torch.randn(1, 64, 224, 224)
    want = grads_of(lambda v: F.max_unpool2d(v, indices, 2), values, grad_out)
    got = grads_of(lambda v: clops.max_unpool2d(v, indices, 2, device=device), values, grad_out)
    assert same_tensor(got[0], want[0]) and same_tensor(got[1], want[1])
