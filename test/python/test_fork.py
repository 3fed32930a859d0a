"""Fork (issue 32 P2, the package's half): a child forked after clops used the host backend and the default
device starts with no cached context or operator (os.register_at_fork), and its host-backend calls work.
It must not hang: the join has a timeout, and a child still running then fails the test."""
import multiprocessing
import os

import numpy as np
import pytest

import clops
from clops import _core
from conftest import ref_depth_to_space, same_bits

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


@pytest.mark.skipif(not hasattr(os, "register_at_fork") or "fork" not in multiprocessing.get_all_start_methods(),
                    reason="no fork on this platform")
def test_forked_child_uses_new_contexts():
    clops.depth_to_space(X, 2, device="host")
    clops.depth_to_space(X, 2, device=0 if clops.devices() else None)  # an OpenCL device where there is one
    assert _core._contexts  # the parent keeps its contexts
    ctx = multiprocessing.get_context("fork")
    parent_end, child_end = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_child, args=(child_end,))
    p.start()
    child_end.close()
    p.join(timeout=120)
    if p.is_alive():
        p.kill()
        p.join()
        pytest.fail("the forked child did not finish within 120 s (hung in clops?)")
    assert p.exitcode == 0
    assert parent_end.poll(0), "the child sent no result"
    result = parent_end.recv()
    assert result == ((0, 0), True, [0, 0, 0, 1, 0, 1, 0, 0]), result
    # the parent's own contexts are untouched by the fork
    assert same_bits(clops.depth_to_space(X, 2, device=0 if clops.devices() else None),
                     ref_depth_to_space(X, 2, "DCR"))
