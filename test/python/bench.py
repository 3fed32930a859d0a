#!/usr/bin/env python3
"""test/python/bench.py - what the Python package costs over the C library (numbers: notes/python.md).

    build/venv/bin/python test/python/bench.py [--clops build/bin/clops] [--device 0] [--reps 7]

1. Per-call overhead on the host path: clops.depth_to_space on the specification's 1x8x2x3 FLOAT32
   tensor (device="host"), median per call over batches of calls, against the C library's own time for
   the same call (`clops bench --device host --sizes spec`: the wall clock around
   clops_operator_execute_host). Overhead = Python per call - C per call.
2. 64 MiB on pyopencl arrays: DepthToSpace and SpaceToDepth (FLOAT32, block 2, both orders) and
   MaxUnpooling (FLOAT32, INT64 pooling-shaped indices) on the bench's shapes, GB/s = (bytes read +
   written) / median wall time of one call + queue.finish(), against `clops bench --sizes 64M`'s
   op_wall_gbps (execute + clFinish) on the same device. Two ways of allocating the result: pyopencl's
   default (a new buffer each call, as a plain call does) and a pyopencl MemoryPool on the input (the
   result's buffer is reused, as the C bench reuses its output), against clops_operator_execute on the
   same operator and a fixed output, interleaved with them (the C bench's timing, in this process).
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

import numpy as np

import clops

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def c_bench(path, args):
    out = subprocess.run([path, "bench", "--json"] + args, stdout=subprocess.PIPE, check=True).stdout
    return json.loads(out)["results"]


def overhead(reps, c_rows):
    x = np.arange(48, dtype=np.float32).reshape(1, 8, 2, 3)
    clops.depth_to_space(x, 2, device="host")
    batch, per_call = 2000, []
    for _ in range(reps * 3):
        t = time.perf_counter()
        for _ in range(batch):
            clops.depth_to_space(x, 2, device="host")
        per_call.append((time.perf_counter() - t) / batch)
    py = statistics.median(per_call) * 1e6
    line = f"per call, 1x8x2x3 FLOAT32 DCR, host: Python {py:.2f} us"
    if c_rows:
        c = next(r["op_wall_seconds"] for r in c_rows if r["order"] == "DCR") * 1e6
        line += f", C {c:.2f} us, overhead {py - c:.2f} us (target < 30)"
    print(line)


def cl_cases(queue):
    import pyopencl.array as cla
    rng = np.random.default_rng(0)
    d = cla.to_device(queue, rng.random((1, 16, 1024, 1024), dtype=np.float32))
    s = cla.to_device(queue, rng.random((1, 4, 2048, 2048), dtype=np.float32))
    u = cla.to_device(queue, rng.random((1, 16, 512, 512), dtype=np.float32))
    n, c, h, w = 1, 16, 512, 512
    hh, ww = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    planes = np.arange(n * c).reshape(n, c, 1, 1) * (4 * h * w)
    idx = planes + (2 * hh + rng.integers(0, 2, (n, c, h, w))) * (2 * w) + 2 * ww + rng.integers(0, 2, (n, c, h, w))
    i = cla.to_device(queue, idx.astype(np.int64))
    mib = 1 << 20
    return [("d2s", "DCR", lambda a: clops.depth_to_space(a, 2, "DCR"), d, None, 128 * mib),
            ("d2s", "CRD", lambda a: clops.depth_to_space(a, 2, "CRD"), d, None, 128 * mib),
            ("s2d", "DCR", lambda a: clops.space_to_depth(a, 2, "DCR"), s, None, 128 * mib),
            ("s2d", "CRD", lambda a: clops.space_to_depth(a, 2, "CRD"), s, None, 128 * mib),
            ("unpool", "INT64", lambda a, ix=i: clops.max_unpooling(a, ix, (1, 16, 1024, 1024)), u, i, 112 * mib)]


def throughput(queue, reps, c_rows):
    """Interleaved repetitions in a random order (the machine's load drifts alike for all columns): the package with a new
    result buffer per call, with a pooled one, and the same cached operator's clops_operator_execute on
    a fixed output buffer (what the C bench times), each + queue.finish()."""
    import ctypes
    import pyopencl.array as cla
    import pyopencl.tools as clt
    from clops import _core, _lib
    pool = clt.MemoryPool(clt.ImmediateAllocator(queue))
    c_gbps = {}
    for r in c_rows or []:
        if r["op_short"] == "unpool" and r.get("indices") != "pooling":
            continue
        c_gbps[(r["op_short"], r["order"] or r["index_type"])] = r["op_wall_gbps"]
    print(f"{'op':<7} {'order':<6} {'new buffer':>11} {'pooled':>8} {'execute':>8} {'C bench':>8}"
          "   GB/s, 64 MiB, pyopencl arrays")
    for op, order, call, x, idx, moved in cl_cases(queue):
        pooled = cla.Array(queue, x.shape, x.dtype, data=x.data, allocator=pool)
        out = call(x)
        operator = next(reversed(_core._operators.values()))  # the one just used
        bufs = _lib.Buffers(x.data.int_ptr, idx.data.int_ptr if idx is not None else None, out.data.int_ptr)

        def execute():
            _lib.check(_lib.operator_execute(operator.handle, ctypes.byref(bufs), 0, None, None))

        runs = {"new": lambda: call(x), "pooled": lambda: call(pooled), "execute": execute}
        times = {k: [] for k in runs}
        for k, f in runs.items():
            f()
            queue.finish()
        for _ in range(reps):
            order_now = list(runs.items())
            random.shuffle(order_now)  # no column always runs after the new-buffer one (page faults)
            for k, f in order_now:
                t = time.perf_counter()
                f()
                queue.finish()
                times[k].append(time.perf_counter() - t)
        g = {k: moved / statistics.median(v) / 1e9 for k, v in times.items()}
        c = c_gbps.get((op, order))
        print(f"{op:<7} {order:<6} {g['new']:>11.1f} {g['pooled']:>8.1f} {g['execute']:>8.1f} "
              f"{c if c is None else round(c, 1)!s:>8}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clops", default=os.path.join(ROOT, "build", "bin", "clops"), help="the CLI, for the C numbers")
    ap.add_argument("--device", type=int, default=0, help="OpenCL device index (clops devices) for the 64 MiB runs")
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    have_c = os.access(a.clops, os.X_OK)
    if not have_c:
        print(f"bench: {a.clops} not found: Python numbers only", file=sys.stderr)
    common = ["--widths", "4", "--blocks", "2", "--reps", str(a.reps)]
    overhead(a.reps, c_bench(a.clops, ["--device", "host", "--ops", "d2s", "--sizes", "spec"] + common)
             if have_c else None)
    import pyopencl as cl
    dev = clops.devices()[a.device]
    cl_dev = next(d for p in cl.get_platforms() for d in p.get_devices() if d.name == dev.name)
    queue = cl.CommandQueue(cl.Context([cl_dev]))
    throughput(queue, a.reps, c_bench(a.clops, ["--device", str(a.device), "--sizes", "64M"] + common)
               if have_c else None)


if __name__ == "__main__":
    main()
