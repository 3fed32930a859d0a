"""Bad arguments: ValueError or TypeError with the library's message, never a crash and never a result;
failures of the device or of the settings as clops.Error or ValueError."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import clops

X = np.arange(48, dtype=np.float32).reshape(1, 8, 2, 3)


@pytest.mark.parametrize("call, error, words", [
    (lambda d: clops.depth_to_space(X, 3, device=d), ValueError, "CLOPS_ERROR_CHANNELS_NOT_DIVISIBLE"),
    (lambda d: clops.depth_to_space(X, 0, device=d), ValueError, "CLOPS_ERROR_INVALID_BLOCK_SIZE"),
    (lambda d: clops.depth_to_space(X, -2, device=d), ValueError, "block size -2"),
    (lambda d: clops.depth_to_space(X, 2**40, device=d), ValueError, "block size"),
    (lambda d: clops.depth_to_space(X, 2.0, device=d), TypeError, "block_size must be an int"),
    (lambda d: clops.depth_to_space(X, True, device=d), TypeError, "block_size must be an int, not bool"),
    (lambda d: clops.space_to_depth(X, np.True_, device=d), TypeError, "block_size must be an int"),
    (lambda d: clops.space_to_depth(X, 2, device=d), ValueError, "CLOPS_ERROR_SPATIAL_NOT_DIVISIBLE"),
    (lambda d: clops.depth_to_space(X, 2, "RDC", device=d), ValueError, "order 'RDC'"),
    (lambda d: clops.depth_to_space(X, 2, None, device=d), ValueError, "order None"),
    (lambda d: clops.depth_to_space(X[0, 0], 2, device=d), ValueError, "at least 3-D, not 2-D"),
    (lambda d: clops.space_to_depth(X.ravel(), 2, device=d), ValueError, "at least 3-D, not 1-D"),
    (lambda d: clops.depth_to_space(X, 2, b"RDC", device=d), ValueError, "order b'RDC'"),
    (lambda d: clops.depth_to_space(X, 2, b"\xff", device=d), ValueError, "order b'\\xff'"),
    (lambda d: clops.depth_to_space(X.astype(object), 2, device=d), TypeError, "dtype object"),
    (lambda d: clops.depth_to_space(X.astype("U3"), 2, device=d), TypeError, "dtype <U3"),
    (lambda d: clops.depth_to_space(X.astype("datetime64[s]"), 2, device=d), TypeError, "datetime64"),
    (lambda d: clops.depth_to_space(X.astype(np.longdouble), 2, device=d), TypeError, "float128"),
    (lambda d: clops.depth_to_space("not an array", 2, device=d), TypeError, "dtype <U12"),
    (lambda d: clops.max_unpooling(X, np.full(X.shape, 48 * 4, np.int64), (1, 8, 4, 6), device=d),
     ValueError, "CLOPS_ERROR_INDEX_OUT_OF_RANGE"),
    (lambda d: clops.max_unpooling(X, np.full(X.shape, -1, np.int64), (1, 8, 4, 6), device=d),
     ValueError, "CLOPS_ERROR_INDEX_OUT_OF_RANGE"),
    (lambda d: clops.max_unpooling(X, np.zeros(X.shape, np.int32), (1, 8, 4, 6), device=d),
     TypeError, "CLOPS_ERROR_UNSUPPORTED_INDEX_TYPE"),
    (lambda d: clops.max_unpooling(X, np.zeros(X.shape, np.float32), (1, 8, 4, 6), device=d),
     TypeError, "CLOPS_ERROR_UNSUPPORTED_INDEX_TYPE"),
    (lambda d: clops.max_unpooling(X, np.zeros((1, 8, 2, 2), np.int64), (1, 8, 4, 6), device=d),
     ValueError, "CLOPS_ERROR_INDICES_SIZE_MISMATCH"),
    (lambda d: clops.max_unpooling(X, np.zeros(X.shape, np.int64), (1, 4, 4, 6), device=d),
     ValueError, "CLOPS_ERROR_BATCH_CHANNEL_MISMATCH"),
    (lambda d: clops.max_unpooling(X, np.zeros(X.shape, np.int64), (1, 8, 4), device=d),
     ValueError, "output_shape"),
    (lambda d: clops.max_unpooling(X, np.zeros(X.shape, np.int64), (1, 8, 4, -6), device=d),
     ValueError, "output_shape"),
    (lambda d: clops.max_unpooling(X, np.zeros(X.shape, np.int64), (1, 8, 2**32 - 1, 2**32 - 1), device=d),
     ValueError, "CLOPS_ERROR_SIZE_OVERFLOW"),
    (lambda d: clops.max_unpooling(X, np.zeros(X.shape, np.int64), (1, 8, 4, 2**32), device=d),
     ValueError, "output_shape"),
    (lambda d: clops.max_unpooling(X, np.zeros(X.shape, np.int64), "1,8,4,6", device=d),
     ValueError, "output_shape"),
    (lambda d: clops.max_unpooling(X, np.zeros(X.shape, np.int64), (True, 8, 4, 6), device=d),
     ValueError, "output_shape"),
    (lambda d: clops.max_unpooling(X, np.zeros(X.shape, np.int64), (1, 8, 4, 6), "planar", device=d),
     ValueError, "indices_layout 'planar'"),
], ids=lambda v: v.replace(" ", "_") if isinstance(v, str) else "")
def test_bad_arguments(device, call, error, words):
    with pytest.raises(error) as info:
        call(device)
    assert words in str(info.value)


@pytest.mark.parametrize("device, error, words", [
    ("gpu", ValueError, "device 'gpu'"),
    (10**6, ValueError, "CLOPS_ERROR_INVALID_DEVICE_SELECTION"),
    (-1, ValueError, "device index -1"),
    (1.5, TypeError, "device must be"),
    (True, TypeError, "device must be"),
])
def test_bad_devices(device, error, words):
    with pytest.raises(error) as info:
        clops.depth_to_space(X, 2, device=device)
    assert words in str(info.value)


@pytest.mark.filterwarnings("ignore:max_unpooling. indices_layout=.flat.")  # flat indices in plane 0, on purpose
def test_failed_calls_leave_nothing_cached(device):
    """A call that fails before running adds no operator to the cache; per-plane and flat operators of the
    same shapes are cached apart and each gives its own layout's result."""
    from clops import _core
    from conftest import ref_max_unpooling
    before = set(_core._operators)
    for call in (lambda: clops.depth_to_space(X, 3, device=device),
                 lambda: clops.max_unpooling(X, np.zeros(X.shape, np.int32), (1, 8, 4, 6), device=device),
                 lambda: clops.max_unpooling(X, np.zeros(X.shape, np.int64), (1, 4, 4, 6), "per-plane", device=device)):
        with pytest.raises((ValueError, TypeError)):
            call()
    assert set(_core._operators) <= before  # nothing new
    idx = np.arange(48, dtype=np.int64).reshape(X.shape) % 6 * 4  # per plane: 0..20 of 24; flat: the first rows
    for layout in ("per-plane", "flat", "per-plane"):
        y = clops.max_unpooling(X, idx, (1, 8, 4, 6), layout, device=device)
        assert y.tobytes() == ref_max_unpooling(X, idx, (1, 8, 4, 6), layout).tobytes(), layout


def test_error_pickles():
    """clops.Error crosses process boundaries (multiprocessing, concurrent.futures) whole."""
    import pickle
    e = clops.Error(-15300, "CLOPS_ERROR_DEVICE_LOST", "a command failed")
    f = pickle.loads(pickle.dumps(e))
    assert type(f) is clops.Error and (f.status, f.name, f.message, str(f)) == (e.status, e.name, e.message, str(e))


def test_unsupported_index_types_name_the_type():
    with pytest.raises(TypeError, match="INT32"):
        clops.max_unpooling(X, np.zeros(X.shape, np.int32), (1, 8, 4, 6), device="host")


def run_python(code, **env):
    """`code` in a fresh interpreter (settings are read when a context is made), with `env` added."""
    full = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full, capture_output=True,
                          text=True, timeout=300)


def test_bad_setting_is_a_value_error():
    r = run_python("""
        import numpy as np, clops
        try:
            clops.depth_to_space(np.zeros((1, 4, 1, 1), np.uint8), 2, device="host")
        except ValueError as e:
            print("ValueError", e)
        """, CLOPS_CACHE="sometimes")
    assert r.returncode == 0, r.stderr
    assert "ValueError" in r.stdout and "CLOPS_CACHE" in r.stdout and "CLOPS_ERROR_INVALID_SETTING" in r.stdout


def test_device_failure_is_clops_error():
    """A device without a compiler (CLOPS_DISABLE=compiler), no cached binary (cache off) and no fallback
    allowed: clops cannot run the operator there, which is clops.Error with its status name."""
    if not clops.devices():
        pytest.skip("no OpenCL device")
    r = run_python("""
        import numpy as np, clops
        try:
            clops.depth_to_space(np.zeros((1, 4, 1, 1), np.uint8), 2, device=0)
            print("no error")
        except clops.Error as e:
            import pickle
            f = pickle.loads(pickle.dumps(e))
            same = (f.status, f.name, str(f)) == (e.status, e.name, str(e))
            print("Error", e.name, e.status, isinstance(e, RuntimeError), same)
        """, CLOPS_DISABLE="compiler", CLOPS_CACHE="off", CLOPS_FALLBACK="never")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[:2] == ["Error", "CLOPS_ERROR_FALLBACK_REFUSED"] and r.stdout.split()[3:] == ["True", "True"]


def test_missing_program_warned_once():
    """A device without a compiler whose cache holds neither the specialised nor the portable program: the
    operator runs on the host (bit-exact) and clops warns once, naming the programs and how to add the
    portable one; a second operator on that device warns no more."""
    if not clops.devices():
        pytest.skip("no OpenCL device")
    r = run_python("""
        import warnings, numpy as np, clops
        x = np.arange(16, dtype=np.uint8).reshape(1, 4, 2, 2)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            a = clops.depth_to_space(x, 2, device=0)
            b = clops.space_to_depth(a, 2, device=0)
        said = [str(m.message) for m in w if issubclass(m.category, RuntimeWarning)]
        print(len(said), (b == x).all(), (a == clops.depth_to_space(x, 2, device="host")).all())
        print(said[0] if said else "")
        """, CLOPS_DISABLE="compiler", CLOPS_CACHE="off")
    assert r.returncode == 0, r.stderr
    first, message = r.stdout.split("\n", 1)
    assert first.split() == ["1", "True", "True"], r.stdout
    assert "portable.cl" in message and "clops kernels list --device N --portable" in message, message
