"""Time per run of clops.onnx.InferenceSession against plain onnxruntime.InferenceSession on the models of
test/python/test_onnx_models.py (ESPCN-like, SegNet-like), same feed, same process, interleaved: each
round runs every session once, in turn, and the medians over the rounds are printed (docs/onnx.md).
Then the operators alone: ONNX Runtime's DepthToSpace and MaxUnpool kernels (its profiler's per-node
kernel times, in a profiled session of its own) against the clops steps of clops.onnx (the wall clock
around each step, the call into clops and its NumPy result included), the median per node, summed.

    PYTHONPATH=python CLOPS_LIBRARY=build/libclops.so python notes/onnx_bench.py [--rounds 15] [--device host]

(or with the package installed: python notes/onnx_bench.py). Also checks that the outputs are bit-exact.
"""
import argparse
import collections
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "python"))
from test_onnx_models import espcn, inputs, segnet  # noqa: E402


def ort_op_ms(ort, model, feed, threads, rounds, ops):
    """Median per node of ONNX Runtime's kernel time of the nodes of `ops`, summed, in ms."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads, opts.enable_profiling = threads, True
    opts.profile_file_prefix = os.path.join(os.environ.get("TMPDIR", "/tmp"), "clops-onnx-bench")
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    for _ in range(rounds + 1):
        sess.run(None, feed)
    path = sess.end_profiling()
    with open(path) as f:
        events = json.load(f)
    os.remove(path)
    per_node = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time") and e["args"].get("op_name") in ops:
            per_node[e["name"]].append(e["dur"] / 1e3)
    return sum(float(np.median(v[1:])) for v in per_node.values())  # the first run is a warm-up


def clops_op_ms(mine, feed, rounds):
    """Median per clops step of clops.onnx's wall clock around it, summed, in ms."""
    import clops.onnx as co
    per_step, run = collections.defaultdict(list), co._ClopsStep.run

    def timed(step, values, device):
        t = time.perf_counter()
        y = run(step, values, device)
        per_step[step.label].append((time.perf_counter() - t) * 1e3)
        return y

    co._ClopsStep.run = timed
    try:
        for _ in range(rounds + 1):
            mine.run(None, feed)
    finally:
        co._ClopsStep.run = run
    return sum(float(np.median(v[1:])) for v in per_step.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--device", default="host", help='clops device: "host", an index, or "default"')
    ap.add_argument("--threads", type=int, default=0, help="ONNX Runtime intra-op threads (0: its default)")
    args = ap.parse_args()
    import onnxruntime as ort
    import clops.onnx
    device = None if args.device == "default" else int(args.device) if args.device.isdigit() else args.device
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = args.threads
    kw = dict(sess_options=opts, providers=["CPUExecutionProvider"])
    print(f"onnxruntime {ort.__version__}, clops {clops.__version__} (device {args.device}), "
          f"{os.cpu_count()} CPUs, load average before {os.getloadavg()[0]:.1f}")
    print(f"{'model':<44} {'ORT ms':>9} {'clops.onnx ms':>14} {'ratio':>6}   {'its ORT op ms':>13} "
          f"{'its clops op ms':>15}")
    for name, model in (("ESPCN x3, (1,3,180,320) -> (1,3,540,960)", espcn()),
                        ("SegNet 2 levels, (2,3,181,241), 64 channels", segnet())):
        feed = inputs(model)
        plain = ort.InferenceSession(model.SerializeToString(), **kw)
        mine = clops.onnx.InferenceSession(model, device=device, **kw)
        for a, b in zip(plain.run(None, feed), mine.run(None, feed)):  # and a warm-up of each
            assert a.shape == b.shape and a.tobytes() == b.tobytes(), f"{name}: outputs differ"
        times = {"ort": [], "clops": []}
        for _ in range(args.rounds):
            for key, sess in (("ort", plain), ("clops", mine)):
                t = time.perf_counter()
                sess.run(None, feed)
                times[key].append(time.perf_counter() - t)
        o, c = (np.median(times[k]) * 1e3 for k in ("ort", "clops"))
        ops = ort_op_ms(ort, model, feed, args.threads, args.rounds, clops.onnx.CLOPS_OPS)
        mine_ops = clops_op_ms(mine, feed, args.rounds)
        print(f"{name:<44} {o:9.1f} {c:14.1f} {c / o:6.2f}   {ops:13.1f} {mine_ops:15.1f}")
    print(f"load average after {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
