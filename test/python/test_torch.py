"""clops against PyTorch, where it is importable (test/python/run.sh's venv sees Debian's python3-torch;
CI installs it and sets CLOPS_REQUIRE_TORCH=1, which makes a missing torch a failure, not a skip):
pixel_shuffle, pixel_unshuffle, max_unpool2d on the indices of a real max_pool2d(3, 2, 1), and
clops.max_unpool2d on SegNet-style max_pool2d pairs."""
import numpy as np
import pytest

import clops
from conftest import random_array, same_bits
from conftest import ref_depth_to_space, ref_max_unpooling
from torch_required import F, random_tensor, same_tensor, torch


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.float16, np.float32, np.float64])
@pytest.mark.parametrize("block", [2, 3])
def test_pixel_shuffle_and_unshuffle(device, dtype, block):
    x = random_array((2, 4 * block * block, 3, 5), dtype, seed=block)
    want = F.pixel_shuffle(torch.from_numpy(x), block).numpy()
    assert same_bits(clops.depth_to_space(x, block, "CRD", device=device), want)
    x = random_array((2, 3, 4 * block, 2 * block), dtype, seed=block)
    want = F.pixel_unshuffle(torch.from_numpy(x), block).numpy()
    assert same_bits(clops.space_to_depth(x, block, "crd", device=device), want)


def pooled(seed):
    t = torch.from_numpy(random_array((2, 3, 9, 11), np.float32, seed=seed))
    t = torch.nan_to_num(t)
    values, indices = F.max_pool2d(t, 3, 2, 1, return_indices=True)
    return t, values, indices


def test_max_unpool2d_as_flat_indices(device):
    """PyTorch's per-plane indices made flat (plus each plane's offset): the layout every clops has."""
    t, values, indices = pooled(1)
    want = F.max_unpool2d(values, indices, 3, 2, 1, output_size=t.shape[2:]).numpy()
    n, c, h, w = t.shape
    flat = indices.numpy() + (np.arange(n * c).reshape(n, c, 1, 1) * h * w)
    assert same_bits(clops.max_unpooling(values.numpy(), flat, tuple(t.shape), device=device), want)


def test_max_unpool2d_per_plane(device):
    t, values, indices = pooled(2)
    want = F.max_unpool2d(values, indices, 3, 2, 1, output_size=t.shape[2:]).numpy()
    got = clops.max_unpooling(values.numpy(), indices.numpy(), tuple(t.shape), "per-plane", device=device)
    assert same_bits(got, want)


# ---- clops.max_unpool2d against F.max_unpool2d: SegNet-style pairs -----------------------------------

SEGNET = [((1, 64, 128, 128), 2, 2, 0, False), ((1, 64, 128, 128), 3, 2, 1, True),
          ((2, 3, 9, 11), 3, 2, 1, True), ((2, 4, 10, 10), (2, 3), (2, 1), (1, 0), False), ((3, 7, 8), 2, None, 0, False)]


@pytest.mark.parametrize("shape, k, s, p, sized", SEGNET, ids=lambda v: str(v).replace(" ", ""))
def test_max_unpool2d_segnet(device, shape, k, s, p, sized):
    """max_pool2d(return_indices=True) then max_unpool2d, as a SegNet decoder does; torch tensors in and
    out, and NumPy arrays in and out; output_size given where the default would not hold the indices."""
    t = torch.nan_to_num(torch.from_numpy(random_array(shape, np.float32, seed=len(shape) + sum(shape))))
    values, indices = F.max_pool2d(t, k, s, p, return_indices=True)
    size = t.shape if sized else None
    want = F.max_unpool2d(values, indices, k, s, p, output_size=size)
    got = clops.max_unpool2d(values, indices, k, s, p, output_size=size, device=device)
    assert isinstance(got, torch.Tensor) and got.dtype == want.dtype and got.shape == want.shape
    assert same_bits(got.numpy(), want.numpy())
    got = clops.max_unpool2d(values.numpy(), indices.numpy(), k, s, p, output_size=size, device=device)
    assert isinstance(got, np.ndarray) and same_bits(got, want.numpy())


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int32, torch.int64, torch.float16, torch.float64, torch.bool])
def test_max_unpool2d_dtypes_and_views(dtype):
    t = torch.from_numpy(random_array((2, 3, 8, 8), np.float32, seed=9)).nan_to_num()
    values, indices = F.max_pool2d(t, 2, 2, return_indices=True)
    values = (values * 10).to(dtype) if dtype is not torch.bool else values > 0
    want = F.max_unpool2d(values.to(torch.float64), indices, 2).to(dtype)
    got = clops.max_unpool2d(values, indices, 2, device="host")
    assert got.dtype == dtype and torch.equal(got, want)
    # channels-last views go in as strides; a tensor that requires grad gives a result with a gradient
    cl, icl = values.contiguous(memory_format=torch.channels_last), indices.contiguous(memory_format=torch.channels_last)
    assert torch.equal(clops.max_unpool2d(cl, icl, 2, device="host"), want)
    if dtype.is_floating_point:
        g = values.clone().requires_grad_(True)
        got = clops.max_unpool2d(g, indices, 2, device="host")
        assert torch.equal(got, want) and got.requires_grad


def test_max_unpool2d_reads_torch_memory_in_place(monkeypatch):
    """No copy of a contiguous CPU tensor: the array clops gets shares the tensor's memory."""
    from clops import _core
    seen = []
    real = _core.as_numpy
    monkeypatch.setattr(_core, "as_numpy", lambda a, *args, **kw: seen.append(a) or real(a, *args, **kw))
    values, indices = F.max_pool2d(torch.rand(1, 2, 4, 4), 2, 2, return_indices=True)
    clops.max_unpool2d(values, indices, 2, device="host")
    assert seen[0].__array_interface__["data"][0] == values.data_ptr()
    assert seen[1].__array_interface__["data"][0] == indices.data_ptr()


def test_max_unpool2d_output_size_rules_match_torch():
    values, indices = F.max_pool2d(torch.rand(1, 2, 9, 9), 3, 2, 1, return_indices=True)  # 5x5 -> default 9x9
    for size in [(8, 8), (10, 10), (1, 2, 9, 10), (7, 9), (11, 9), (9,), (1, 9, 9)]:
        try:
            want = F.max_unpool2d(values, indices, 3, 2, 1, output_size=size)
        except (ValueError, RuntimeError):
            with pytest.raises(ValueError):
                clops.max_unpool2d(values, indices, 3, 2, 1, output_size=size, device="host")
            continue
        assert torch.equal(clops.max_unpool2d(values, indices, 3, 2, 1, output_size=size, device="host"), want)


# ---- torch in, torch out, everywhere (issue 39 item 2) --------------------------------------------

TORCH_DTYPES = [torch.bfloat16, torch.float16, torch.float32, torch.int64, torch.bool, torch.complex128]


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=str)
def test_depth_space_torch_in_torch_out(device, dtype):
    """depth_to_space and space_to_depth of a torch tensor return a torch tensor of its dtype (bfloat16
    moved as its 16-bit words), equal to pixel_shuffle/pixel_unshuffle in CRD order (str or bytes, as
    ONNX's mode=b"CRD") and to the NumPy reference's bits in DCR order; 3-D too."""
    x = random_tensor((2, 8, 3, 5), dtype, seed=4)
    for order in ("CRD", b"CRD", "crd"):
        y = clops.depth_to_space(x, 2, order, device=device)
        assert same_tensor(y, F.pixel_shuffle(x, 2))
        assert same_tensor(clops.space_to_depth(y, 2, order, device=device), x)
    assert same_tensor(clops.depth_to_space(x[0], 2, b"CRD", device=device), F.pixel_shuffle(x[0], 2))
    bits = x.view(torch.int16) if dtype is torch.bfloat16 else x
    want = torch.from_numpy(ref_depth_to_space(bits.numpy(), 2, "DCR"))
    y = clops.depth_to_space(x, 2, b"DCR", device=device)
    assert same_tensor(y.view(torch.int16) if dtype is torch.bfloat16 else y, want)


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=str)
def test_max_unpooling_torch_in_torch_out(device, dtype):
    """max_unpooling (flat and per-plane indices, torch and NumPy) and max_unpool2d of torch tensors: torch
    tensors of x's dtype (bfloat16 too, which PyTorch 1.13's max_unpool2d lacks on the CPU), equal to the
    NumPy reference's bits (bfloat16's int16 words)."""
    values, indices = F.max_pool2d(torch.randn(2, 3, 8, 6), 2, 2, return_indices=True)
    x = random_tensor(values.shape, dtype, seed=6)
    bits = x.view(torch.int16) if dtype is torch.bfloat16 else x
    want = torch.from_numpy(ref_max_unpooling(bits.numpy(), indices.numpy(), (2, 3, 8, 6), "per-plane"))
    for got in (clops.max_unpool2d(x, indices, 2, device=device),
                clops.max_unpooling(x, indices + torch.arange(6).reshape(2, 3, 1, 1) * 48, (2, 3, 8, 6), device=device),
                clops.max_unpooling(x, indices.numpy(), (2, 3, 8, 6), b"per-plane", device=device)):
        assert isinstance(got, torch.Tensor) and got.dtype == dtype
        assert same_tensor(got.view(torch.int16) if dtype is torch.bfloat16 else got, want)


def test_numpy_in_numpy_out():
    """pixel_shuffle and pixel_unshuffle of NumPy arrays: NumPy arrays back (no torch tensor)."""
    x = random_array((2, 8, 3, 5), np.float32, seed=8)
    y = clops.pixel_shuffle(x, 2, device="host")
    assert isinstance(y, np.ndarray) and same_bits(y, F.pixel_shuffle(torch.from_numpy(x), 2).numpy())
    z = clops.pixel_unshuffle(y, 2, device="host")
    assert isinstance(z, np.ndarray) and same_bits(z, x)
