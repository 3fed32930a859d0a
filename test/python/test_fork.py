"""Fork (issue 32 P2, the package's half): a child forked after clops used the host backend and the default
device starts with no cached context or operator (os.register_at_fork), and its host-backend calls work.
A device call in such a child raises clops.Error at once, naming the spawn start method and the host
backend (issue 38 Q2: it hung for ever); PyTorch DataLoader workers as docs/python.md shows them (spawn
for a device, the host backend with fork) give torch's results. Nothing may hang: joins and the loaders
have timeouts, and a child still running then fails the test."""
import multiprocessing
import os

import numpy as np
import pytest

import clops
import loader_dataset
from clops import _core
from conftest import REQUIRE_DEVICE, ref_depth_to_space, same_bits

X = np.arange(2 * 8 * 4 * 6, dtype=np.float32).reshape(2, 8, 4, 6)


def _child(conn):
    try:
        cached = (len(_core._contexts), len(_core._operators))
        y = clops.depth_to_space(X, 2, device="host")
        z = clops.max_unpooling(np.ones((1, 2, 1, 1), np.float32), np.array([3, 1], np.int64).reshape(1, 2, 1, 1),
                                (1, 2, 2, 2), "per-plane", device="host")
        conn.send((cached, same_bits(y, ref_depth_to_space(X, 2, "DCR")), z.ravel().tolist()))
    except BaseException as e:  # noqa: BLE001 (report anything to the parent)
        conn.send(repr(e))
    finally:
        conn.close()


NO_FORK = not hasattr(os, "register_at_fork") or "fork" not in multiprocessing.get_all_start_methods()


def _run_forked(target, seconds=60):
    """Runs target(conn) in a forked child; what it sent, or the test fails (a hang, an exit, nothing sent)."""
    ctx = multiprocessing.get_context("fork")
    parent_end, child_end = ctx.Pipe(duplex=False)
    p = ctx.Process(target=target, args=(child_end,))
    p.start()
    child_end.close()
    p.join(timeout=seconds)
    if p.is_alive():
        p.kill()
        p.join()
        pytest.fail(f"the forked child did not finish within {seconds} s (hung in clops?)")
    assert p.exitcode == 0
    assert parent_end.poll(0), "the child sent no result"
    return parent_end.recv()


def _device_or_skip():
    if not clops.devices():
        assert not REQUIRE_DEVICE, "CLOPS_REQUIRE_DEVICE=1 but no OpenCL device"
        pytest.skip("no OpenCL device")


@pytest.mark.skipif(NO_FORK, reason="no fork on this platform")
def test_forked_child_uses_new_contexts():
    clops.depth_to_space(X, 2, device="host")
    clops.depth_to_space(X, 2, device=0 if clops.devices() else None)  # an OpenCL device where there is one
    assert _core._contexts  # the parent keeps its contexts
    result = _run_forked(_child, 120)
    assert result == ((0, 0), True, [0, 0, 0, 1, 0, 1, 0, 0]), result
    # the parent's own contexts are untouched by the fork
    assert same_bits(clops.depth_to_space(X, 2, device=0 if clops.devices() else None),
                     ref_depth_to_space(X, 2, "DCR"))


def _child_device(conn):
    try:
        try:
            clops.depth_to_space(X, 2, device=0)
            conn.send("no exception")
        except clops.Error as e:
            y = clops.depth_to_space(X, 2, device="host")  # the host backend still works
            conn.send((e.name, str(e), same_bits(y, ref_depth_to_space(X, 2, "DCR"))))
    except BaseException as e:  # noqa: BLE001 (report anything to the parent)
        conn.send(repr(e))
    finally:
        conn.close()


@pytest.mark.skipif(NO_FORK, reason="no fork on this platform")
@pytest.mark.parametrize("parent_use", ["device", "devices", "default"])
def test_forked_child_device_refused(parent_use):
    """Issue 38 Q2: the parent reached the OpenCL driver (ran on device 0, only listed the devices, or ran
    device=None, which lists them to decide); a device call in a forked child raised nothing and hung in its
    first command. Now it raises clops.Error at once, saying what to do."""
    _device_or_skip()
    if parent_use == "device":
        clops.depth_to_space(X, 2, device=0)
    elif parent_use == "devices":
        clops.devices()
    else:
        clops.depth_to_space(X, 2)
    result = _run_forked(_child_device)
    assert isinstance(result, tuple), result
    name, message, host_right = result
    assert name == "CLOPS_ERROR_DEVICE_LOST", result
    assert "forked after process" in message and "spawn" in message and "host backend" in message, message
    assert host_right


def _check_batches(loader, n):
    """Every item of `loader` (batches of 2) against NumPy; the pids of the workers that made them."""
    pids, seen = set(), 0
    for batch, batch_pids in loader:
        for k in range(batch.shape[0]):
            want = ref_depth_to_space(loader_dataset.item_input(seen), 2, "DCR")[0]
            assert same_bits(batch[k].numpy(), want), f"item {seen}"
            seen += 1
        pids.update(int(p) for p in batch_pids)
    assert seen == n
    assert os.getpid() not in pids and len(pids) >= 1  # made in the workers
    return pids


def test_dataloader_workers_spawn_device():
    """docs/python.md "DataLoader workers": workers that use an OpenCL device start with spawn, here after the
    parent itself used the device (which makes fork workers fail)."""
    torch = pytest.importorskip("torch")
    _device_or_skip()
    clops.depth_to_space(X, 2, device=0)
    loader = torch.utils.data.DataLoader(loader_dataset.Upscale(device=0), batch_size=2, num_workers=2,
                                         multiprocessing_context="spawn", timeout=300)
    _check_batches(loader, 8)


@pytest.mark.skipif(NO_FORK, reason="no fork on this platform")
def test_dataloader_workers_fork_host():
    """docs/python.md "DataLoader workers": with fork workers (torch's default on Linux), device="host"."""
    torch = pytest.importorskip("torch")
    if clops.devices():
        clops.depth_to_space(X, 2, device=0)  # the parent's own device use does not matter to the host backend
    loader = torch.utils.data.DataLoader(loader_dataset.Upscale(device="host"), batch_size=2, num_workers=2,
                                         multiprocessing_context="fork", timeout=120)
    _check_batches(loader, 8)
