"""Byte order (issue 32 P3): one rule, clops._core.byte_order, for every array of every function. Indices
(read as numbers) in the other byte order are swapped on the host for NumPy arrays and refused with a
TypeError naming the byte order for device arrays; tensors (only moved) keep their dtype. The pyopencl
half is in test_pyopencl.py (test_big_endian_indices_are_refused); this file needs no pyopencl."""
import numpy as np
import pytest

import clops
from clops import _core
from conftest import random_array, ref_max_unpooling, same_bits

OTHER = ">" if np.little_endian else "<"
NAME = "big-endian" if np.little_endian else "little-endian"


@pytest.mark.filterwarnings("ignore:max_unpooling. indices_layout=.flat.")  # the [1, 0] case: flat in plane 0
@pytest.mark.parametrize("index_dtype", ["u4", "i8", "u8"])
def test_numpy_indices_in_the_other_byte_order(device, index_dtype):
    x = random_array((2, 3, 2, 2), np.float32, seed=5)
    rng = np.random.default_rng(5)
    flat = rng.permutation(2 * 3 * 4 * 4)[:x.size].reshape(x.shape)
    want = ref_max_unpooling(x, flat, (2, 3, 4, 4))
    swapped = flat.astype(OTHER + index_dtype)
    assert same_bits(clops.max_unpooling(x, swapped, (2, 3, 4, 4), device=device), want)
    # the case: values 1 and 0, whose swapped bytes fall far outside a small output
    x2 = np.array([7, 9], np.float32).reshape(1, 2, 1, 1)
    y = clops.max_unpooling(x2, np.array([1, 0], OTHER + index_dtype).reshape(1, 2, 1, 1), (1, 2, 2, 2),
                            device=device)
    assert y.ravel().tolist() == [9, 7, 0, 0, 0, 0, 0, 0]
    # per-plane too, and a tensor in the other byte order: moved as is, its dtype kept
    xs = x.astype(OTHER + "f4")
    plane = (flat % 16).astype(OTHER + index_dtype)
    got = clops.max_unpooling(xs, plane, (2, 3, 4, 4), "per-plane", device=device)
    assert got.dtype == xs.dtype
    assert same_bits(got.astype(np.float32), ref_max_unpooling(x, flat % 16, (2, 3, 4, 4), "per-plane"))


def test_rule_on_numpy_arrays():
    a = np.arange(6, dtype=OTHER + "u4").reshape(1, 1, 2, 3)
    n = _core.byte_order(a, "indices", numbers=True)
    assert n.dtype.isnative and n.dtype == np.uint32 and (n == a).all()
    assert _core.byte_order(a, "x", numbers=False) is a  # only moved: passed unchanged
    native = np.arange(6, dtype=np.int64)
    assert _core.byte_order(native, "indices", numbers=True) is native
    one_byte = np.arange(6, dtype=np.uint8)
    assert _core.byte_order(one_byte, "indices", numbers=True) is one_byte


class _FakeDeviceArray:
    """Looks like a pyopencl array to the package (module name and queue), without pyopencl."""
    __module__ = "pyopencl.array"
    queue = None

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)


@pytest.mark.parametrize("dtype", ["u4", "i8", "u8"])
def test_rule_refuses_device_indices(dtype):
    with pytest.raises(TypeError, match=NAME):
        _core.byte_order(_FakeDeviceArray(OTHER + dtype), "indices", numbers=True)
    fake = _FakeDeviceArray(OTHER + dtype)
    assert _core.byte_order(fake, "x", numbers=False) is fake
    fake = _FakeDeviceArray("=" + dtype)
    assert _core.byte_order(fake, "indices", numbers=True) is fake
