"""clops against PyTorch, where it is installed (not in CI: too big): pixel_shuffle, pixel_unshuffle, and
max_unpool2d on the indices of a real max_pool2d(3, 2, 1)."""
import numpy as np
import pytest

import clops
from conftest import random_array, same_bits

torch = pytest.importorskip("torch")
F = torch.nn.functional


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
