"""clops on NumPy arrays against the NumPy references of conftest.py, on the host and on the devices."""
import numpy as np
import pytest

import clops
from conftest import (DTYPES, random_array, ref_depth_to_space, ref_max_unpooling,
                      ref_space_to_depth, same_bits)


def test_version_and_devices():
    assert clops.__version__.count(".") == 2
    for i, d in enumerate(clops.devices()):
        assert d.index == i and d.name and d.platform and d.type in ("GPU", "CPU", "ACCELERATOR", "CUSTOM", "OTHER")
        assert d.max_alloc_bytes > 0 and d.plan


def test_namespace_is_the_public_api():
    """Issue 33 item 9: no helper leaks into the package's namespace (clops.L and clops.NamedTuple did):
    every public name is in __all__, every name of __all__ exists, and `import *` gives just those."""
    # The package's own submodules (clops.onnx) become attributes once any test imports them: not leaks.
    public = {n for n in dir(clops) if not n.startswith("_")
              and not getattr(getattr(clops, n), "__name__", "").startswith("clops.")}
    assert public == set(clops.__all__) - {"__version__"}
    assert all(hasattr(clops, n) for n in clops.__all__)
    for leaked in ("L", "NamedTuple", "unpool_output_size", "pair"):
        assert not hasattr(clops, leaked), leaked
    names = {}
    exec("from clops import *", names)
    assert set(names) - {"__builtins__"} == set(clops.__all__)


def test_the_package_carries_one_library():
    """`pip install .` puts one libclops into the package (a wheel has no symbolic links: the soname's
    and the development link would be two more copies of it), and nothing else of the C install."""
    import glob
    import os
    import sys
    if os.environ.get("CLOPS_LIBRARY"):
        pytest.skip("CLOPS_LIBRARY names the library: this run is not of the installed package's")
    here = os.path.dirname(clops.__file__)
    found = sorted(os.path.relpath(p, here) for p in glob.glob(os.path.join(here, "lib*", "**"), recursive=True)
                   if os.path.isfile(p))
    want = "libclops.so.0" if sys.platform.startswith("linux") else found[0]
    assert found == [os.path.join("lib", want)]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
def test_every_dtype(device, dtype):
    x = random_array((2, 8, 3, 4), dtype)
    for order in ("DCR", "CRD"):
        y = clops.depth_to_space(x, 2, order, device=device)
        assert same_bits(y, ref_depth_to_space(x, 2, order))
        z = clops.space_to_depth(y, 2, order, device=device)
        assert same_bits(z, x)


@pytest.mark.parametrize("block", [1, 2, 3, 4])
@pytest.mark.parametrize("order", ["DCR", "crd", "Dcr"])
def test_blocks_and_orders(device, block, order):
    x = random_array((2, 3 * block * block, 2, 5), np.float32, seed=block)
    assert same_bits(clops.depth_to_space(x, block, order, device=device), ref_depth_to_space(x, block, order))
    x = random_array((1, 3, 2 * block, 3 * block), np.uint16, seed=block)
    assert same_bits(clops.space_to_depth(x, block, order, device=device), ref_space_to_depth(x, block, order))


def test_the_specification_example(device):
    x = np.arange(48, dtype=np.uint32).reshape(1, 8, 2, 3)
    y = clops.depth_to_space(x, 2, device=device)
    assert y.shape == (1, 2, 4, 6) and y.flags.c_contiguous
    assert y[0, 0, 0].tolist() == [0, 12, 1, 13, 2, 14]


def views(base):
    """Strided views of a 4-D array, as a user makes them: channels-last, steps, a broadcast channel,
    reversed axes (negative strides, which clops cannot take and are copied), a Fortran-order copy."""
    nhwc = np.ascontiguousarray(base.transpose(0, 2, 3, 1))
    wide = np.concatenate([base, base], axis=3)
    return {
        "channels-last": nhwc.transpose(0, 3, 1, 2),
        "every-other-column": wide[:, :, :, ::2],
        "broadcast-batch": np.broadcast_to(base[:1], base.shape),
        "reversed-width": base[:, :, :, ::-1],
        "fortran": np.asfortranarray(base),
        "byteswapped": base.astype(base.dtype.newbyteorder(">")),
    }


@pytest.mark.parametrize("view", ["channels-last", "every-other-column", "broadcast-batch", "reversed-width",
                                  "fortran", "byteswapped"])
def test_strided_views(device, view):
    base = random_array((2, 8, 4, 6), np.float32, seed=3)
    x = views(base)[view]
    packed = np.ascontiguousarray(x)
    for order in ("DCR", "CRD"):
        assert same_bits(clops.depth_to_space(x, 2, order, device=device), ref_depth_to_space(packed, 2, order))
        assert same_bits(clops.space_to_depth(x, 2, order, device=device), ref_space_to_depth(packed, 2, order))


def test_views_go_as_strides(device):
    """A channels-last view reaches clops as strides (the operator's key), not as a packed copy."""
    from clops import _core
    x = np.ascontiguousarray(random_array((1, 8, 2, 3), np.uint8).transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    clops.depth_to_space(x, 2, device=device)
    keys = [k for k in _core._operators if k[1] == 1 and k[2][1] == (1, 8, 2, 3) and k[2][0] == 5]
    assert x.strides == (48, 1, 24, 8) and any(k[2][2] == (48, 1, 24, 8) for k in keys)


def test_inputs_left_alone(device):
    x = random_array((1, 4, 2, 2), np.int32)
    x.setflags(write=False)  # read-only inputs are fine
    before = x.copy()
    clops.depth_to_space(x, 2, device=device)
    assert same_bits(x, before)


def test_empty_tensors(device):
    for shape in [(0, 8, 2, 3), (1, 0, 2, 3), (1, 8, 0, 3)]:
        x = np.zeros(shape, np.float32)
        assert clops.depth_to_space(x, 2, device=device).shape == ref_depth_to_space(x, 2, "DCR").shape


def unpool_case(seed, dtype=np.float32, index_dtype=np.int64, duplicates=False):
    x = random_array((2, 3, 4, 5), dtype, seed=seed)
    out_shape = (2, 3, 7, 9)
    rng = np.random.default_rng(seed)
    total = int(np.prod(out_shape))
    if duplicates:
        flat = rng.integers(0, total // 4, x.shape)
    else:
        flat = rng.permutation(total)[:x.size].reshape(x.shape)
    return x, flat.astype(index_dtype), out_shape


@pytest.mark.parametrize("index_dtype", [np.uint32, np.uint64, np.int64], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("duplicates", [False, True], ids=["distinct", "duplicates"])
def test_max_unpooling_flat(device, index_dtype, duplicates):
    x, idx, out_shape = unpool_case(7, index_dtype=index_dtype, duplicates=duplicates)
    y = clops.max_unpooling(x, idx, out_shape, device=device)
    assert same_bits(y, ref_max_unpooling(x, idx, out_shape))
    assert same_bits(clops.max_unpooling(x, idx, out_shape, "FLAT", device=device), y)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
def test_max_unpooling_dtypes_and_views(device, dtype):
    x, idx, out_shape = unpool_case(11, dtype=dtype)
    xt = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)   # channels-last views
    it = np.ascontiguousarray(idx.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    assert same_bits(clops.max_unpooling(xt, it, out_shape, device=device), ref_max_unpooling(x, idx, out_shape))


def test_max_unpooling_per_plane(device):
    x = random_array((2, 3, 4, 5), np.float64, seed=5)
    rng = np.random.default_rng(5)
    out_shape = (2, 3, 6, 7)
    idx = np.stack([np.stack([rng.permutation(42)[:20].reshape(4, 5) for _ in range(3)]) for _ in range(2)])
    y = clops.max_unpooling(x, idx, out_shape, indices_layout="per-plane", device=device)
    assert same_bits(y, ref_max_unpooling(x, idx, out_shape, "per-plane"))


def test_operators_are_reused(device):
    from clops import _core
    x = random_array((1, 8, 2, 3), np.float32)
    clops.depth_to_space(x, 2, device=device)
    before = (len(_core._operators), len(_core._contexts))
    handles = {id(op) for op in _core._operators.values()}
    for _ in range(50):
        clops.depth_to_space(x, 2, device=device)
        clops.depth_to_space(x.copy(), 2, device=device)   # another array of the same shape and dtype
    assert (len(_core._operators), len(_core._contexts)) == before
    assert {id(op) for op in _core._operators.values()} == handles


def test_threads_share_operators(device):
    import threading
    x = random_array((2, 8, 4, 6), np.int16, seed=9)
    want = ref_depth_to_space(x, 2, "CRD")
    bad = []

    def work():
        for _ in range(40):
            if not same_bits(clops.depth_to_space(x, 2, "CRD", device=device), want):
                bad.append(1)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad


def test_clear_cache(device):
    x = random_array((1, 4, 2, 2), np.uint8)
    y = clops.depth_to_space(x, 2, device=device)
    clops.clear_cache()
    assert same_bits(clops.depth_to_space(x, 2, device=device), y)


# ---- max_unpool2d without torch: PyTorch's output-size rules; the per-plane warning -----------------


def _pool_pair(shape=(2, 3, 4, 4), out_hw=(8, 8), seed=11):
    """Values and per-plane indices of a 2x2/2 pool onto out_hw (one index per window)."""
    x = random_array(shape, np.float32, seed=seed)
    n, c, h, w = shape
    rng = np.random.default_rng(seed)
    rows = np.arange(h).reshape(h, 1) * 2 + rng.integers(0, 2, (n, c, h, w))
    cols = np.arange(w).reshape(1, w) * 2 + rng.integers(0, 2, (n, c, h, w))
    return x, (rows * out_hw[1] + cols).astype(np.int64)


def test_max_unpool2d_default_output_size(device):
    x, idx = _pool_pair()
    y = clops.max_unpool2d(x, idx, 2, device=device)  # (4 - 1) * 2 - 0 + 2 = 8
    assert y.shape == (2, 3, 8, 8) and same_bits(y, ref_max_unpooling(x, idx, (2, 3, 8, 8), "per-plane"))
    assert same_bits(clops.max_unpool2d(x, idx, (2, 2), (2, 2), (0, 0), device=device), y)
    y3 = clops.max_unpool2d(x[0], idx[0], 2, device=device)  # (C, H, W) as PyTorch takes it
    assert same_bits(y3, y[0])


@pytest.mark.parametrize("kernel, stride, padding, want", [
    (2, None, 0, (7, 9)), (3, 2, 1, (5, 7)), (3, 1, 0, (6, 7)), ((2, 3), (1, 2), (0, 1), (5, 7)),
])
def test_max_unpool2d_output_size_arithmetic(kernel, stride, padding, want):
    """(H - 1) * stride - 2 * padding + kernel_size, per dimension, as torch.nn.functional.max_unpool2d."""
    x = np.zeros((1, 2, 4, 5), np.float32)
    y = clops.max_unpool2d(x, np.zeros(x.shape, np.int64), kernel, stride, padding, device="host")
    k = kernel if isinstance(kernel, tuple) else (kernel, kernel)
    s = k if stride is None else (stride if isinstance(stride, tuple) else (stride, stride))
    p = padding if isinstance(padding, tuple) else (padding, padding)
    assert y.shape == (1, 2) + tuple((n - 1) * s[d] - 2 * p[d] + k[d] for d, n in enumerate((4, 5)))


def test_max_unpool2d_given_output_size(device):
    x, idx = _pool_pair(out_hw=(9, 8))
    for size in [(9, 8), (2, 3, 9, 8), (7, 3, 9, 8)]:  # (H, W), or a full shape whose N and C are ignored
        y = clops.max_unpool2d(x, idx, 2, output_size=size, device=device)
        assert same_bits(y, ref_max_unpooling(x, idx, (2, 3, 9, 8), "per-plane"))
    # strictly between default - stride and default + stride: 7..9 excluded -> only 7 < n < 10 is 8, 9
    for size in [(10, 8), (6, 8), (8, 10), (8, 6)]:
        with pytest.raises(ValueError, match="invalid output_size"):
            clops.max_unpool2d(x, idx, 2, output_size=size, device=device)
    for size in [(8,), (1, 8, 8), (1, 2, 3, 8, 8)]:
        with pytest.raises(ValueError, match="2 or 4 elements"):
            clops.max_unpool2d(x, idx, 2, output_size=size, device=device)
    with pytest.raises(TypeError):
        clops.max_unpool2d(x, idx, 2, output_size=(8.0, 8), device=device)


def test_max_unpool2d_bad_arguments():
    x, idx = _pool_pair()
    for call, error in [
        (lambda: clops.max_unpool2d(x, idx, 0), ValueError),
        (lambda: clops.max_unpool2d(x, idx, 2, stride=0), ValueError),
        (lambda: clops.max_unpool2d(x, idx, 2, padding=-1), ValueError),
        (lambda: clops.max_unpool2d(x, idx, (2, 2, 2)), TypeError),
        (lambda: clops.max_unpool2d(x, idx, True), TypeError),
        (lambda: clops.max_unpool2d(x, idx[:, :1], 2), ValueError),
        (lambda: clops.max_unpool2d(x[0, 0], idx[0, 0], 2), ValueError),
        (lambda: clops.max_unpool2d(x, idx + 64, 2, device="host"), ValueError),  # past its plane
    ]:
        with pytest.raises(error):
            call()


def test_flat_indices_in_the_first_plane_warn(device):
    x, idx = _pool_pair()
    with pytest.warns(UserWarning, match="per-plane") as record:
        clops.max_unpooling(x, idx, (2, 3, 8, 8), device=device)
    assert record[0].filename == __file__  # points at the caller
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clops.max_unpooling(x, idx, (2, 3, 8, 8), "per-plane", device=device)  # meant: no warning
        clops.max_unpool2d(x, idx, 2, device=device)
        flat = idx + (np.arange(6).reshape(2, 3, 1, 1) * 64)  # real flat indices
        clops.max_unpooling(x, flat, (2, 3, 8, 8), device=device)
        clops.max_unpooling(x[:1, :1], idx[:1, :1], (1, 1, 8, 8), device=device)  # one plane: flat is per-plane
        flat[-1, -1, -1, -1] = 0  # the last index in plane 0, another past it: still no warning
        clops.max_unpooling(x, flat, (2, 3, 8, 8), device=device)
