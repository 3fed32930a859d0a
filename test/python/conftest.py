"""Fixtures of the Python suite: a private program cache, the devices to run on, NumPy references.

Run by `bash tools/run.sh test` in build/venv (pip install . there); by hand:
    python3 -m venv v && v/bin/pip install . pytest pyopencl && v/bin/python -m pytest test/python
CLOPS_REQUIRE_DEVICE=1 makes a missing OpenCL device (or pyopencl, or its platform) a failure, not a skip.
"""
import os
import shutil
import tempfile

import numpy as np
import pytest

# Before clops makes any context: the program cache (and pyopencl's) in a directory of this run, never
# the user's, unless the caller named one (tools/run.sh: build/test-cache).
_TMP = tempfile.mkdtemp(prefix="clops-pytest-")
os.environ["XDG_CACHE_HOME"] = _TMP
os.environ.setdefault("CLOPS_CACHE_DIR", os.path.join(_TMP, "clops"))

import clops  # noqa: E402

REQUIRE_DEVICE = os.environ.get("CLOPS_REQUIRE_DEVICE") == "1"


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_TMP, ignore_errors=True)


def _device_params():
    params = ["host"]
    if clops.devices():
        params += [None, 0]
    elif REQUIRE_DEVICE:
        raise RuntimeError("CLOPS_REQUIRE_DEVICE=1 but clops.devices() lists no OpenCL device")
    return params


DEVICES = _device_params()


@pytest.fixture(params=DEVICES, ids=lambda d: "default" if d is None else str(d))
def device(request):
    """Each place a NumPy array can run: the host backend, the default device, device 0."""
    return request.param


DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.float16, np.int32, np.uint32, np.float32,
          np.int64, np.uint64, np.float64, np.complex64, np.complex128]


def random_array(shape, dtype, seed=0):
    """Random bits of `dtype` (NaNs with payloads, -0.0 and denormals included for the floats)."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    n = int(np.prod(shape))
    return rng.integers(0, 256, n * dtype.itemsize, dtype=np.uint8).view(dtype).reshape(shape)


def same_bits(a, b):
    """Same shape, dtype and bytes (NaN payloads compared as bits)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


# ---- NumPy references: the specification's definitions --------------------------------------------


def ref_depth_to_space(x, b, order):
    n, c, h, w = x.shape
    if order.upper() == "DCR":
        y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        y = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return np.ascontiguousarray(y.reshape(n, c // (b * b), h * b, w * b))


def ref_space_to_depth(x, b, order):
    n, c, h, w = x.shape
    y = x.reshape(n, c, h // b, b, w // b, b)
    y = y.transpose(0, 3, 5, 1, 2, 4) if order.upper() == "DCR" else y.transpose(0, 1, 3, 5, 2, 4)
    return np.ascontiguousarray(y.reshape(n, c * b * b, h // b, w // b))


def ref_max_unpooling(x, indices, out_shape, layout="flat"):
    """Zeros, then x.flat[k] at out.flat[indices.flat[k]] (per plane: within plane (n, c)); among
    duplicates the element last in row-major order wins."""
    idx = np.asarray(indices).astype(np.int64)
    if layout == "per-plane":
        n, c = x.shape[:2]
        plane = out_shape[2] * out_shape[3]
        idx = idx + (np.arange(n * c, dtype=np.int64).reshape(n, c, 1, 1) * plane)
    out = np.zeros(int(np.prod(out_shape)), x.dtype)
    rev = idx.ravel()[::-1]
    where, first = np.unique(rev, return_index=True)
    out[where] = np.ascontiguousarray(x).ravel()[::-1][first]
    return out.reshape(out_shape)

