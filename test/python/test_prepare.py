"""clops.prepare (issue 33, item 6): the programs of a selection built into an empty program cache, found
there by a second call; the host needs none; bad selections and a cache that is off raise."""
import os

import numpy as np
import pytest

import clops
from conftest import REQUIRE_DEVICE, ref_depth_to_space, same_bits


def _device_or_skip():
    if not clops.devices():
        assert not REQUIRE_DEVICE, "CLOPS_REQUIRE_DEVICE=1 but no OpenCL device"
        pytest.skip("no OpenCL device")
    return 0


def test_prepare_fills_an_empty_cache(tmp_path, monkeypatch):
    device = _device_or_skip()
    monkeypatch.setenv("CLOPS_CACHE_DIR", str(tmp_path))  # read by the contexts prepare makes
    monkeypatch.delenv("CLOPS_CACHE", raising=False)
    seen = []
    got = clops.prepare(["d2s", "s2d"], [np.uint8], device=device, blocks=[3], layouts="packed", jobs=2,
                        progress=lambda *a: seen.append(a))
    assert got.device == device
    assert got.total > 0 and got.built == got.total and got.cached == 0 and got.failed == 0, got
    assert got.failures == []
    assert sorted(a[0] for a in seen) == list(range(1, got.total + 1))  # one call per program, counted
    assert all(a[1] == got.total and a[4] == "compiled" for a in seen)
    assert {a[2] for a in seen} == {"depth_space.cl"}
    entries = [n for n in os.listdir(tmp_path) if n.endswith(".bin")]
    assert len(entries) == got.total
    assert not [n for n in os.listdir(tmp_path) if ".tmp" in n]

    again = clops.prepare("d2s,s2d", np.uint8, device=device, blocks=[3], layouts=["packed"])
    assert (again.total, again.built, again.cached, again.failed) == (got.total, 0, got.total, 0), again

    # the operators of the selection run (from those binaries)
    x = np.arange(1 * 9 * 4 * 5, dtype=np.uint8).reshape(1, 9, 4, 5)
    assert same_bits(clops.depth_to_space(x, 3, device=device), ref_depth_to_space(x, 3, "DCR"))
    assert len([n for n in os.listdir(tmp_path) if n.endswith(".bin")]) == got.total  # nothing new compiled


def test_prepare_host_builds_nothing():
    assert clops.prepare("d2s", np.float32, device="host") == clops.Prepared("host", 0, 0, 0, 0, [])


def test_prepare_bad_selection():
    with pytest.raises(ValueError, match="ops"):
        clops.prepare("transpose", device="host")
    with pytest.raises(ValueError, match="layouts"):
        clops.prepare("d2s", layouts="nchw", device="host")
    with pytest.raises(TypeError, match="dtype"):
        clops.prepare("d2s", [object], device="host")
    with pytest.raises(ValueError, match="block"):
        clops.prepare("d2s", blocks=[0], device="host")
    with pytest.raises(ValueError, match="jobs"):
        clops.prepare("d2s", jobs=0, device="host")


def test_prepare_without_cache(monkeypatch):
    device = _device_or_skip()
    monkeypatch.setenv("CLOPS_CACHE", "off")
    with pytest.raises(clops.Error) as e:
        clops.prepare("d2s", np.uint8, device=device, blocks=[2], layouts="packed")
    assert e.value.name == "CLOPS_ERROR_CACHE_UNAVAILABLE"
