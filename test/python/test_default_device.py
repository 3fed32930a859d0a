"""device=None for NumPy arrays (issue 33, item 1): CLOPS_DEVICE when set; else the C library's default
device, but the host backend instead of a CPU device; device= still forces either."""
import numpy as np
import pytest

import clops
from clops import _core
from conftest import ref_depth_to_space, same_bits

X = np.arange(2 * 8 * 4 * 6, dtype=np.float32).reshape(2, 8, 4, 6)


def _library_default():
    import ctypes
    is_host, index = ctypes.c_int(), ctypes.c_uint()
    _core.L.check(_core.L.default_device(ctypes.byref(is_host), ctypes.byref(index)))
    return None if is_host.value else index.value


def test_default_rule(monkeypatch):
    monkeypatch.delenv("CLOPS_DEVICE", raising=False)
    index = _library_default()
    if index is None:
        assert _core.default_key() == ("host",)
        return
    kind = {d.index: d.type for d in clops.devices()}[index]
    want = ("host",) if kind == "CPU" else ("device", index)
    assert _core.default_key() == want, f"default device {index} is a {kind}"


def test_cpu_device_gives_way_to_host(monkeypatch):
    monkeypatch.delenv("CLOPS_DEVICE", raising=False)
    cpus = [d.index for d in clops.devices() if d.type == "CPU"]
    if not cpus or _library_default() not in cpus:
        pytest.skip("the library's default device is not a CPU device here")
    assert _core.default_key() == ("host",)


def test_clops_device_is_honoured(monkeypatch):
    devs = clops.devices()
    monkeypatch.setenv("CLOPS_DEVICE", "host")
    assert _core.default_key() == ("host",)
    if devs:
        monkeypatch.setenv("CLOPS_DEVICE", str(devs[0].index))
        assert _core.default_key() == ("device", devs[0].index)  # set by the user: even a CPU device


def test_device_forces_either():
    assert _core._device_key("host") == ("host",)
    assert same_bits(clops.depth_to_space(X, 2, device="host"), ref_depth_to_space(X, 2, "DCR"))
    devs = clops.devices()
    if devs:
        assert _core._device_key(0) == ("device", 0)
        assert same_bits(clops.depth_to_space(X, 2, device=0), ref_depth_to_space(X, 2, "DCR"))
    assert same_bits(clops.depth_to_space(X, 2), ref_depth_to_space(X, 2, "DCR"))
