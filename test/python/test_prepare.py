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


@pytest.mark.parametrize("kwargs", [dict(ops=""), dict(ops=[]), dict(ops="d2s,,s2d"), dict(ops="d2s,"),
                                    dict(ops=" "), dict(dtypes=[]), dict(blocks=[]), dict(blocks=""),
                                    dict(layouts=""), dict(layouts=["packed", ""])],
                         ids=lambda k: repr(k))
def test_prepare_refuses_empty_selections(kwargs):
    """Issue 38 Q11: an empty selection selected everything (ops="" passed 0 to the library, which builds all
    three operators); `clops kernels build --ops ''` is a usage error, and so is this. None selects all."""
    args = dict(ops="d2s", dtypes=[np.uint8], blocks=[2], layouts="packed", device="host")
    args.update(kwargs)
    with pytest.raises(ValueError, match="empty selection"):
        clops.prepare(**args)


def test_prepare_refuses_bad_blocks_and_progress():
    """Issue 38 Q11: blocks="²" (str.isdigit() is true) ended in int()'s own error; progress=5 was accepted."""
    with pytest.raises(TypeError, match="blocks: '²' is not an int"):
        clops.prepare("d2s", blocks="²", device="host")
    with pytest.raises(TypeError, match="progress must be None or a callable, not int"):
        clops.prepare("d2s", progress=5, device="host")


def test_prepare_raises_what_progress_raised(tmp_path, monkeypatch):
    """Issue 38 Q11: an exception raised by progress was printed by ctypes and dropped (prepare returned a
    Prepared). Now prepare raises it once the build ends, and progress is not called again after it."""
    device = _device_or_skip()
    monkeypatch.setenv("CLOPS_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("CLOPS_CACHE", raising=False)
    calls = []

    class Stop(Exception):
        pass

    def progress(*a):
        calls.append(a)
        raise Stop("from progress")

    with pytest.raises(Stop, match="from progress"):
        clops.prepare(["d2s", "s2d"], [np.uint8], device=device, blocks=[2], layouts="packed", jobs=2,
                      progress=progress)
    assert len(calls) == 1


def test_prepare_huge_block_builds_the_portable_program(tmp_path, monkeypatch):
    """Past block 16 DepthToSpace runs the portable program (a specialised one's build grew with the block:
    `clops kernels build --blocks 3000` had not built one program in 500 s). prepare builds that one program
    for such a block, and a block of 17 then finds it cached."""
    device = _device_or_skip()
    monkeypatch.setenv("CLOPS_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("CLOPS_CACHE", raising=False)
    seen = []
    got = clops.prepare("d2s", [np.uint8], device=device, blocks=[3000], layouts="packed",
                        progress=lambda *a: seen.append(a[3]))
    assert got.total > 0 and got.built == got.total and got.failed == 0, got
    assert got.total == 1 and seen == ["-cl-std=CL1.2"], seen
    again = clops.prepare("d2s", [np.uint8], device=device, blocks=[17], layouts="packed")
    assert (again.total, again.cached) == (got.total, got.total), again
