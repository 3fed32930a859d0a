"""Time per run of clops.onnx.InferenceSession against plain onnxruntime.InferenceSession on the models of
test/python/test_onnx_models.py (ESPCN-like (1,3,180,320) -> (1,3,540,960); SegNet-like, 2 levels, 64
channels, (1,3,360,480)), same feed, medians (docs/onnx.md, "Cost"):

- together: a plain ONNX Runtime session ("ort", or "ort-nospin" where --sessions lists it) and one
  clops.onnx session in one process (a process for each pair of an ONNX Runtime kind and a clops.onnx
  kind, the pairs alternating), interleaved, the order swapped every round (a session run right after
  another whose threads still spin is slowed by them): each is the other's "second session". Each
  clops.onnx kind's ratio is to the ONNX Runtime session beside it; one line per ONNX Runtime kind.
- alone: each session in a child process of its own (only that session in it), the children of the
  sessions alternating, --procs of each; each child prints the median of its --rounds runs, and the
  median of those is shown.

Each child process prints its medians of --rounds runs; the medians over --procs processes are shown.
Sessions: "ort" (plain ONNX Runtime), "ort-nospin" (plain ONNX Runtime with
session.intra_op.allow_spinning=0, as clops.onnx's sub-sessions run), "clops" (clops.onnx as it is: its sub-sessions' thread spinning
off), "clops-spin" (clops.onnx with sess_options setting session.intra_op.allow_spinning=1: what it did
before), "clops-stop" (spinning on, session.force_spinning_stop=1: each sub-session's workers stop
spinning when its run ends), "clops-fresh" (clops.onnx with a new NumPy array for each clops node's output
every run, _ClopsStep.reuse = False: what it did before outputs reused their memory). Ratios are to "ort"
of the same mode (together: to the ONNX Runtime session in the same process).

With --ops, then the operators alone: ONNX Runtime's DepthToSpace and MaxUnpool kernels (its profiler's
per-node kernel times, in a profiled session of its own) against the clops steps of clops.onnx (the wall
clock around each step, the call into clops and its NumPy result included), the median per node, summed.
With --steps, ONNX Runtime's profile of the whole model per kernel (its NCHWc reorders included) and
clops.onnx's wall clock per step (sub-sessions and clops nodes), in this process, one after the other.

    PYTHONPATH=python CLOPS_LIBRARY=build/libclops.so python notes/onnx_bench.py [--rounds 9] [--procs 5]
        [--modes together,alone] [--sessions ort,clops,clops-fresh] [--device host] [--ops] [--steps]

    e.g. --models segnet --sessions ort,ort-nospin,clops: together, the pairs (ort, clops) and
    (ort-nospin, clops) alternating; alone, ort, ort-nospin and clops alternating.

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


def ort_profile(ort, model, feed, threads, rounds, prefix):
    """ONNX Runtime's profiler events of rounds + 1 runs of the whole model (the first a warm-up)."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads, opts.enable_profiling = threads, True
    opts.profile_file_prefix = os.path.join(os.environ.get("TMPDIR", "/tmp"), prefix)
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    for _ in range(rounds + 1):
        sess.run(None, feed)
    path = sess.end_profiling()
    with open(path) as f:
        events = json.load(f)
    os.remove(path)
    return events


def ort_op_ms(ort, model, feed, threads, rounds, ops):
    """Median per node of ONNX Runtime's kernel time of the nodes of `ops`, summed, in ms."""
    events = ort_profile(ort, model, feed, threads, rounds, "clops-onnx-bench")
    per_node = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time") and e["args"].get("op_name") in ops:
            per_node[e["name"]].append(e["dur"] / 1e3)
    return sum(float(np.median(v[1:])) for v in per_node.values())  # the first run is a warm-up


def ort_kernels(ort, model, feed, threads, rounds):
    """ONNX Runtime's profile of the whole model: [(node, op, median ms)] per kernel in the order they ran,
    and the median ms of its model_run (what the session itself took)."""
    events = ort_profile(ort, model, feed, threads, rounds, "clops-onnx-steps")
    per_node, runs = collections.defaultdict(list), []
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            per_node[(e["name"][:-len("_kernel_time")], e["args"].get("op_name"))].append(e["dur"] / 1e3)
        elif e.get("name") == "model_run":
            runs.append(e["dur"] / 1e3)
    return [(n, op, float(np.median(v[1:]))) for (n, op), v in per_node.items()], float(np.median(runs[1:]))


def clops_steps(mine, feed, rounds):
    """clops.onnx's wall clock around each step (ONNX Runtime sub-session or clops node): [(step, median ms)]
    in order, and the median ms of the whole run."""
    import clops.onnx as co
    per_step, total, runs = collections.defaultdict(list), [], (co._ClopsStep.run, co._OrtStep.run)

    def timed(run, label):
        def step(s, *args):
            t = time.perf_counter()
            y = run(s, *args)
            per_step[label(s)].append((time.perf_counter() - t) * 1e3)
            return y
        return step

    co._ClopsStep.run = timed(runs[0], lambda s: f"clops {s.op} {s.label}")
    co._OrtStep.run = timed(runs[1], lambda s: f"onnxruntime {s.labels[0]}..{s.labels[-1]} ({len(s.labels)} nodes)")
    try:
        for _ in range(rounds + 1):
            t = time.perf_counter()
            mine.run(None, feed)
            total.append((time.perf_counter() - t) * 1e3)
    finally:
        co._ClopsStep.run, co._OrtStep.run = runs
    return [(k, float(np.median(v[1:]))) for k, v in per_step.items()], float(np.median(total[1:]))


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


MODELS = {"espcn": ("ESPCN x3, (1,3,180,320) -> (1,3,540,960)", lambda: espcn()),
          "segnet": ("SegNet 2 levels, (1,3,360,480), 64 channels", lambda: segnet(360, 480, batch=1))}
SESSIONS = ("ort", "ort-nospin", "clops", "clops-spin", "clops-stop", "clops-fresh")
ORT_KINDS = ("ort", "ort-nospin")


def make_session(kind, model, args):
    import onnxruntime as ort
    import clops.onnx
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = args.threads
    kw = dict(providers=["CPUExecutionProvider"])
    if kind in ORT_KINDS:
        if kind == "ort-nospin":
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(model.SerializeToString(), opts, **kw)
    if kind == "clops-spin":
        opts.add_session_config_entry("session.intra_op.allow_spinning", "1")
    elif kind == "clops-stop":
        opts.add_session_config_entry("session.intra_op.allow_spinning", "1")
        opts.add_session_config_entry("session.force_spinning_stop", "1")
    elif kind == "clops-fresh":
        clops.onnx._ClopsStep.reuse = False
    return clops.onnx.InferenceSession(model, opts, device=args.device, **kw)


def time_runs(sessions, feed, rounds):
    """{kind: [seconds per run]}, the sessions interleaved round by round (the order reversed every other
    round), after one warm-up run each."""
    times = {k: [] for k in sessions}
    for s in sessions.values():
        s.run(None, feed)
    for r in range(rounds):
        for k, s in (list(sessions.items()) if r % 2 == 0 else list(sessions.items())[::-1]):
            t = time.perf_counter()
            s.run(None, feed)
            times[k].append(time.perf_counter() - t)
    return times


def child(args):
    """One session alone in this process (--child), or an ONNX Runtime session (--base: "ort" or "ort-nospin")
    and one clops.onnx session (--pair): prints the median ms of each one's runs, after checking that their
    outputs are the same bits."""
    model = MODELS[args.model][1]()
    feed = inputs(model)
    kinds = [args.base, args.pair] if args.pair else [args.child]
    sessions = {k: make_session(k, model, args) for k in kinds}
    if args.pair:
        for a, b in zip(*(s.run(None, feed) for s in sessions.values())):
            assert a.shape == b.shape and a.tobytes() == b.tobytes(), f"{args.model}, {args.pair}: outputs differ"
    times = time_runs(sessions, feed, args.rounds)
    print(json.dumps({k: float(np.median(v)) * 1e3 for k, v in times.items()}))


def children(key, kinds, mode, args):
    """Medians over --procs rounds of child processes (alone: one per session; together: one per pair of an
    ONNX Runtime kind and a clops.onnx kind). Returns [(label, {kind: ms}, {kind: ratio})]: alone one entry,
    ratios to "ort"; together one per ONNX Runtime kind, each clops.onnx kind's ratio the median of each
    process's ratio to the ONNX Runtime session beside it."""
    import subprocess
    cmd = [sys.executable, os.path.abspath(__file__), "--model", key, "--rounds", str(args.rounds),
           "--threads", str(args.threads), "--device", str(args.device_arg)]
    if mode == "together":
        bases = [k for k in kinds if k in ORT_KINDS]
        runs = [(b, k) for b in bases for k in kinds if k not in ORT_KINDS]
    else:
        runs = [(None, k) for k in kinds]
    per = collections.defaultdict(list)
    ratios = collections.defaultdict(list)
    for _ in range(args.procs):
        for base, k in runs:
            flag = ["--base", base, "--pair", k] if base else ["--child", k]
            out = subprocess.run(cmd + flag, check=True, capture_output=True, text=True).stdout
            got = json.loads(out.strip().splitlines()[-1])
            per[base, k].append(got[k])
            if base:
                per[base, base].append(got[base])
                ratios[base, k].append(got[k] / got[base])
    med = {bk: float(np.median(v)) for bk, v in per.items()}
    if mode != "together":
        return [(mode, {k: med[None, k] for k in kinds}, {k: med[None, k] / med[None, "ort"] for k in kinds})]
    out = []
    for b in bases:
        mine = [k for base, k in runs if base == b]
        out.append((f"{mode} ({b})", {k: med[b, k] for k in [b] + mine},
                    {b: 1.0, **{k: float(np.median(ratios[b, k])) for k in mine}}))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--procs", type=int, default=5, help="child processes per session (alone) or per pair (together)")
    ap.add_argument("--models", default="espcn,segnet")
    ap.add_argument("--modes", default="together,alone")
    ap.add_argument("--sessions", default="ort,clops,clops-fresh", help=f"of {','.join(SESSIONS)}")
    ap.add_argument("--device", default="host", help='clops device: "host", an index, or "default"')
    ap.add_argument("--threads", type=int, default=0, help="ONNX Runtime intra-op threads (0: its default)")
    ap.add_argument("--ops", action="store_true", help="also the DepthToSpace/MaxUnpool operators alone")
    ap.add_argument("--steps", action="store_true", help="also ONNX Runtime's profile per kernel and clops.onnx's "
                    "time per step, in this process (no --modes then: --modes '')")
    ap.add_argument("--child", choices=SESSIONS, help=argparse.SUPPRESS)
    ap.add_argument("--pair", choices=[k for k in SESSIONS if k not in ORT_KINDS], help=argparse.SUPPRESS)
    ap.add_argument("--base", choices=ORT_KINDS, default="ort", help=argparse.SUPPRESS)
    ap.add_argument("--model", choices=MODELS, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.device_arg = args.device
    args.device = None if args.device == "default" else int(args.device) if args.device.isdigit() else args.device
    if args.child or args.pair:
        return child(args)
    import onnxruntime as ort
    import clops
    import clops.onnx
    kinds = [k for k in args.sessions.split(",") if k]
    assert kinds[0] == "ort" and all(k in SESSIONS for k in kinds), f"--sessions: ort first, then of {SESSIONS}"
    print(f"onnxruntime {ort.__version__}, clops {clops.__version__} (device {args.device_arg}), "
          f"{os.cpu_count()} CPUs, load average before {os.getloadavg()[0]:.1f}; median ms (ratio to ort; "
          "together: the median of each process's ratio to the ONNX Runtime session beside it, named in brackets)")
    for key in args.models.split(","):
        name, make = MODELS[key]
        model = make()
        feed = inputs(model)
        for mode in [m for m in args.modes.split(",") if m]:
            for label, med, ratio in children(key, kinds, mode, args):
                print(f"{name:<44} {label:<9} " + "  ".join(f"{k} {v:.1f} ({ratio[k]:.2f})" for k, v in med.items()),
                      flush=True)
        if args.ops:
            mine = make_session("clops", model, args)
            ops = ort_op_ms(ort, model, feed, args.threads, args.rounds, clops.onnx.CLOPS_OPS)
            print(f"{name:<44} operators: on ONNX Runtime {ops:.1f} ms, on clops {clops_op_ms(mine, feed, args.rounds):.1f} ms")
        if args.steps:
            kernels, ort_run = ort_kernels(ort, model, feed, args.threads, args.rounds)
            print(f"{name}: ONNX Runtime's profile, median ms per kernel")
            for node, op, ms in kernels:
                print(f"    {node:<36} {op:<16} {ms:7.2f}")
            print(f"    {'kernels':<53} {sum(k[2] for k in kernels):7.2f}\n    {'model_run':<53} {ort_run:7.2f}")
            steps, total = clops_steps(make_session("clops", model, args), feed, args.rounds)
            print(f"{name}: clops.onnx, median ms per step (wall clock)")
            for label, ms in steps:
                print(f"    {label:<53} {ms:7.2f}")
            print(f"    {'run':<53} {total:7.2f}")
    print(f"load average after {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
