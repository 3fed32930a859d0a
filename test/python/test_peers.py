"""tools/scripts/peers.py where pyopencl is missing (as on the GPU machine): --help, and a tiny run on an
OpenCL device through ctypes and the C library (--cl auto falls back to it), whose clops results the
script checks against the host backend's before timing them. No time is asserted: the run must finish,
check every row and report each. pyopencl's absence is simulated by a module of that name on PYTHONPATH
that raises ImportError (the script's own import of it is the seam)."""
import json
import os
import subprocess
import sys

import pytest

import clops
from conftest import REQUIRE_DEVICE

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEERS = os.path.join(ROOT, "tools", "scripts", "peers.py")


def run_peers(args, tmp_path):
    shadow = tmp_path / "no-pyopencl"
    shadow.mkdir(exist_ok=True)
    (shadow / "pyopencl.py").write_text("raise ImportError('pyopencl hidden by test_peers.py')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(shadow)] + sys.path))
    return subprocess.run([sys.executable, PEERS] + args, env=env, capture_output=True, text=True, timeout=600)


def test_help(tmp_path):
    r = run_peers(["--help"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "--cl {auto,pyopencl,ctypes}" in r.stdout and "--torch-device" in r.stdout


def test_device_run_without_pyopencl(tmp_path):
    if not clops.devices():
        if REQUIRE_DEVICE:
            pytest.fail("CLOPS_REQUIRE_DEVICE=1 but clops.devices() lists no OpenCL device")
        pytest.skip("no OpenCL device")
    r = run_peers(["--device", "0", "--sizes", "spec", "--widths", "4", "--blocks", "2", "--reps", "1", "--json"],
                  tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert "OpenCL through ctypes, no pyopencl" in out["device"]
    # spec size, 4-byte elements, block 2: DepthToSpace and SpaceToDepth in DCR and CRD, MaxUnpooling's three
    # index patterns with INT64 and UINT32 indices.
    assert [(row["op"], row["order_or_index"]) for row in out["rows"]] == [
        ("DepthToSpace", "DCR"), ("DepthToSpace", "CRD"), ("SpaceToDepth", "DCR"), ("SpaceToDepth", "CRD"),
        ("MaxUnpooling", "pool/i64"), ("MaxUnpooling", "pool/u32"), ("MaxUnpooling", "scat/i64"),
        ("MaxUnpooling", "scat/u32"), ("MaxUnpooling", "ovl/i64"), ("MaxUnpooling", "ovl/u32")]
    for row in out["rows"]:
        assert row["clops_wall_gbps"] > 0 and row["copy_gbps"] > 0
    r = run_peers(["--device", "0", "--cl", "pyopencl", "--sizes", "spec", "--ops", "d2s"], tmp_path)
    assert r.returncode == 1 and "pyopencl" in r.stderr and "--cl ctypes" in r.stderr
