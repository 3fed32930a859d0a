"""device=None for NumPy arrays (issue 33, item 1): CLOPS_DEVICE when set; else the C library's default
device, but the host backend instead of a CPU device; device= still forces either. The rule is the
library's (clops_default_device_for_host_data), the one the CLI's run and bench use and `clops devices`
marks: the package asks it, and does not decide on its own."""
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


def _for_host_data():
    import ctypes
    is_host, index, reason = ctypes.c_int(), ctypes.c_uint(), ctypes.c_int()
    _core.L.check(_core.L.default_device_for_host_data(ctypes.byref(is_host), ctypes.byref(index),
                                                       ctypes.byref(reason)))
    return (("host",) if is_host.value else ("device", index.value)), reason.value


@pytest.mark.parametrize("env", [None, "host", "0"])
def test_the_library_rule(monkeypatch, env):
    if env == "0" and not clops.devices():
        pytest.skip("no OpenCL device")
    if env is None:
        monkeypatch.delenv("CLOPS_DEVICE", raising=False)
    else:
        monkeypatch.setenv("CLOPS_DEVICE", env)
    key, reason = _for_host_data()
    assert _core.default_key() == key
    if env:
        assert reason == 1  # CLOPS_DEFAULT_REASON_ENVIRONMENT
    elif _library_default() is None:
        assert reason == 5  # no OpenCL device
    else:  # the first GPU (2), else the first device: a CPU (4, the host backend) or not (3)
        kind = {d.index: d.type for d in clops.devices()}[_library_default()]
        assert reason == {"GPU": 2, "CPU": 4}.get(kind, 3)
