"""depth_to_space and space_to_depth on (C, H, W) and (*, C, H, W) arrays as PyTorch's pixel_shuffle takes
them, and orders and index layouts given as bytes, as ONNX's string attributes come (onnx.helper gives
mode=b"CRD"). NumPy arrays; torch tensors in test_torch.py."""
import numpy as np
import pytest

import clops
from conftest import random_array, ref_depth_to_space, ref_max_unpooling, ref_space_to_depth, same_bits


def ref_batched(ref, x, b, order):
    """The 4-D reference on (*, C, H, W): the leading sizes as one N."""
    y = ref(x.reshape((-1,) + x.shape[-3:]), b, order)
    return y.reshape(x.shape[:-3] + y.shape[1:])


@pytest.mark.parametrize("lead", [(), (3,), (2, 3), (2, 1, 2)], ids=lambda v: f"{len(v) + 3}-D")
@pytest.mark.parametrize("order", ["DCR", "CRD"])
def test_leading_sizes(device, lead, order):
    x = random_array(lead + (8, 3, 5), np.float32, seed=len(lead))
    y = clops.depth_to_space(x, 2, order, device=device)
    assert same_bits(y, ref_batched(ref_depth_to_space, x, 2, order))
    assert same_bits(clops.space_to_depth(y, 2, order, device=device), x)
    # a strided view whose leading sizes cannot fold without a copy
    v = random_array((4,) + lead + (8, 6, 4), np.uint16, seed=5).swapaxes(0, -3)[:2]
    assert same_bits(clops.space_to_depth(v, 2, order, device=device), ref_batched(ref_space_to_depth, v, 2, order))


def test_empty_leading_size():
    x = np.zeros((2, 0, 8, 3, 5), np.int8)
    assert clops.depth_to_space(x, 2, device="host").shape == (2, 0, 2, 6, 10)


@pytest.mark.parametrize("order", [b"CRD", b"crd", bytearray(b"DCR"), np.bytes_(b"DCR"), np.str_("crd")], ids=repr)
def test_orders_as_bytes(device, order):
    word = bytes(order).decode() if not isinstance(order, str) else order
    x = random_array((2, 8, 3, 5), np.int32, seed=2)
    assert same_bits(clops.depth_to_space(x, 2, order, device=device), ref_depth_to_space(x, 2, word))
    assert same_bits(clops.space_to_depth(x[:, :, :2, :4], 2, order=order, device=device),
                     ref_space_to_depth(x[:, :, :2, :4], 2, word))


@pytest.mark.filterwarnings("ignore:max_unpooling. indices_layout=.flat.")  # flat indices in plane 0, on purpose
@pytest.mark.parametrize("layout", [b"flat", b"PER-PLANE", bytearray(b"per-plane")], ids=repr)
def test_indices_layout_as_bytes(device, layout):
    x = random_array((2, 3, 2, 2), np.float32, seed=3)
    indices = np.arange(24, dtype=np.int64).reshape(2, 3, 2, 2) * 2 % 16
    word = bytes(layout).decode().lower()
    assert same_bits(clops.max_unpooling(x, indices, (2, 3, 4, 4), layout, device=device),
                     ref_max_unpooling(x, indices, (2, 3, 4, 4), word))
