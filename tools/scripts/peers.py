#!/usr/bin/env python3
"""peers.py - clops against PyTorch and ONNX Runtime on the same shapes, rerunnable.

Runs `clops bench --json` (with the options given here), then times each peer on
exactly the shapes, element types and index patterns of the bench's rows, and
prints clops's throughput ratio against each peer:

    PyTorch       pixel_shuffle (DepthToSpace CRD), pixel_unshuffle (SpaceToDepth CRD),
                  max_unpool2d (MaxUnpooling, INT64 indices, kernel 2 stride 2; kernel 3
                  stride 2 padding 1 for the overlapping rows)
    ONNX Runtime  DepthToSpace (DCR and CRD), SpaceToDepth (DCR), MaxUnpool (INT64 indices)

MaxUnpooling rows come in the bench's three index patterns, shown apart ("pool": each
index in its own 2x2 window, as a max pool makes them; "ovl": the argmax of a real
max_pool2d(3, 2, 1), kernel 3, stride 2, padding 1, whose windows overlap, over random
values 0..7 with ties, the first maximum of each window winning; "scat": distinct
positions spread over the plane, input position k of a plane at k * 2654435761 mod the
plane), and the peers get the same pattern (for "ovl" the same kind of pool over their
own random values, computed here with numpy).

A row a peer has no operator or type for is shown as "-" (listed once on stderr).
A peer that is not installed is skipped with a message.

Install the peers (CPU is enough) from PyPI:
    pip install numpy onnx onnxruntime torch
or PyTorch from Debian (for /usr/bin/python3): apt-get install python3-torch python3-numpy
(then onnx and onnxruntime from PyPI).

Usage:
    python3 tools/scripts/peers.py [--clops PATH] [clops bench options: --quick --sizes --widths
                            --blocks --ops --reps --device] [--threads N] [--json]
    python3 tools/scripts/peers.py --from-json bench.json   (reuse a saved `clops bench --json`)

Byte accounting is the bench's: bytes read + bytes written (input + output; MaxUnpooling
input + indices + output), divided by the median time of the repetitions after one
warm-up. Peers are timed by the wall clock around one Python call, so clops is compared
by its wall clock too (clops_operator_execute + clFinish, the bench's op_wall_seconds),
not by its device profiling. PyTorch's functions allocate their output on every call,
as a user calls them; ONNX Runtime writes into an output bound once through IOBinding.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

SCATTER_STEP = 2654435761  # tools/bench/bench.c: scattered indices
NP_DTYPES = {"UINT8": "uint8", "FLOAT16": "float16", "FLOAT32": "float32", "FLOAT64": "float64",
             "COMPLEX128": "complex128"}


def default_clops():
    """build/bin/clops, else a stand-alone bench binary built from tools/bench/bench_main.c."""
    for path in (os.path.join(ROOT, "build", "bin", "clops"), os.path.join(ROOT, "build-bench", "clops_bench")):
        if os.access(path, os.X_OK):
            return path
    return shutil.which("clops") or os.path.join(ROOT, "build", "bin", "clops")


def run_clops(path, bench_args):
    # The CLI takes `bench` as a subcommand; the stand-alone bench_main does not.
    cmd = [path] + (["bench"] if os.path.basename(path) == "clops" else []) + bench_args + ["--json"]
    print("peers: running " + " ".join(cmd), file=sys.stderr)
    out = subprocess.run(cmd, stdout=subprocess.PIPE, check=True).stdout
    return json.loads(out)


def median_seconds(fn, reps):
    fn()  # warm-up
    times = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times) * 1e-9


class Inputs:
    """Random input data and 2x2 stride-2 pooling indices for one bench row."""

    def __init__(self, np, row, seed=1):
        self.np = np
        rng = np.random.default_rng(seed)
        dtype = np.dtype(NP_DTYPES[row["data_type"]])
        shape = tuple(row["input_shape"])
        count = int(np.prod(shape))
        self.x = np.frombuffer(rng.bytes(count * dtype.itemsize), dtype=dtype).reshape(shape).copy()
        self.plane_idx = self.flat_idx = None
        if row["op_short"] == "unpool":
            n, c, h, w = shape
            oh, ow = row["output_shape"][2], row["output_shape"][3]
            if row.get("indices") == "scattered":  # the bench's SCATTER_STEP
                k = np.arange(h * w, dtype=np.uint64) * np.uint64(SCATTER_STEP) % np.uint64(oh * ow)
                self.plane_idx = np.broadcast_to(k.astype(np.int64).reshape(1, 1, h, w), shape).copy()
            elif row.get("indices") == "overlapping":
                self.plane_idx = overlap_indices(np, rng, n, c, h, w, oh, ow)
            else:
                r = rng.integers(0, 4, size=shape, dtype=np.int64)
                hh = np.arange(h, dtype=np.int64).reshape(1, 1, h, 1)
                ww = np.arange(w, dtype=np.int64).reshape(1, 1, 1, w)
                self.plane_idx = (2 * hh + (r >> 1)) * ow + 2 * ww + (r & 1)
            # PyTorch's indices are per (n, c) plane; ONNX's flat over the whole output.
            planes = np.arange(n * c, dtype=np.int64).reshape(n, c, 1, 1) * (oh * ow)
            self.flat_idx = self.plane_idx + planes


def overlap_indices(np, rng, n, c, h, w, oh, ow):
    """Per-plane argmax of max_pool2d(3, 2, 1) over random values 0..7 of {n, c, oh, ow}
    (pooled to {n, c, h, w}): the first maximum of each window in row-major order."""
    vals = np.full((n, c, 2 * h + 2, 2 * w + 2), -1, dtype=np.int8)  # padding never wins
    vals[:, :, 1:oh + 1, 1:ow + 1] = rng.integers(0, 8, size=(n, c, oh, ow), dtype=np.int8)
    best = np.full((n, c, h, w), -2, dtype=np.int8)
    idx = np.zeros((n, c, h, w), dtype=np.int64)
    for a in range(3):  # window element (a, b) of window (i, j): padded (2i + a, 2j + b)
        for b in range(3):
            v = vals[:, :, a:a + 2 * h:2, b:b + 2 * w:2]
            better = v > best
            best = np.where(better, v, best)
            r = np.arange(h, dtype=np.int64).reshape(1, 1, h, 1) * 2 + a - 1
            q = np.arange(w, dtype=np.int64).reshape(1, 1, 1, w) * 2 + b - 1
            idx = np.where(better, r * ow + q, idx)
    return idx


def unpool_geometry(row):
    """kernel, stride, padding of the pool the row's indices come from."""
    return (3, 2, 1) if row.get("indices") == "overlapping" else (2, 2, 0)


class Unsupported(Exception):
    pass


class TorchPeer:
    name = "PyTorch"

    def __init__(self, threads):
        import torch  # noqa: F401 (ImportError: peer missing)
        self.torch = torch
        torch.set_num_threads(threads)
        self.version = torch.__version__

    def prepare(self, row, inputs):
        torch, F = self.torch, self.torch.nn.functional
        op, order = row["op_short"], row["order"]
        x = torch.from_numpy(inputs.x)
        b = row["block"]
        if op == "d2s" and order == "CRD":
            return lambda: F.pixel_shuffle(x, b)
        if op == "s2d" and order == "CRD":
            return lambda: F.pixel_unshuffle(x, b)
        if op == "unpool" and row["index_type"] == "INT64":
            idx = torch.from_numpy(inputs.plane_idx)
            size = tuple(row["output_shape"][2:])
            k, st, pad = unpool_geometry(row)
            fn = lambda: F.max_unpool2d(x, idx, kernel_size=k, stride=st, padding=pad, output_size=size)  # noqa: E731
            try:
                fn()
            except RuntimeError as e:  # e.g. not implemented for 'Byte'
                raise Unsupported(str(e).splitlines()[0])
            return fn
        raise Unsupported("no operator")


class OrtPeer:
    name = "ONNX Runtime"

    def __init__(self, threads):
        import onnx  # noqa: F401
        import onnxruntime
        self.onnx, self.ort = onnx, onnxruntime
        self.version = onnxruntime.__version__
        self.threads = threads

    def _session(self, node, inputs, out_name, out_type, out_shape):
        onnx, helper = self.onnx, self.onnx.helper
        graph = helper.make_graph([node], "peer", inputs, [helper.make_tensor_value_info(out_name, out_type, out_shape)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        so = self.ort.SessionOptions()
        so.intra_op_num_threads = self.threads
        so.inter_op_num_threads = 1
        try:
            return self.ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        except Exception as e:  # NOT_IMPLEMENTED for a type, for example
            raise Unsupported(str(e).splitlines()[0][:120])

    def prepare(self, row, inputs):
        np, onnx, helper = inputs.np, self.onnx, self.onnx.helper
        elem = helper.np_dtype_to_tensor_dtype(inputs.x.dtype)
        op, order, b = row["op_short"], row["order"], row["block"]
        in_shape, out_shape = list(row["input_shape"]), list(row["output_shape"])
        feeds = {"x": inputs.x}
        vx = helper.make_tensor_value_info("x", elem, in_shape)
        if op == "d2s":
            node = helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=b, mode=order)
            sess = self._session(node, [vx], "y", elem, out_shape)
        elif op == "s2d" and order == "DCR":
            node = helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=b)
            sess = self._session(node, [vx], "y", elem, out_shape)
        elif op == "unpool" and row["index_type"] == "INT64":
            vi = helper.make_tensor_value_info("i", onnx.TensorProto.INT64, in_shape)
            vs = helper.make_tensor_value_info("s", onnx.TensorProto.INT64, [4])
            k, st, pad = unpool_geometry(row)
            node = helper.make_node("MaxUnpool", ["x", "i", "s"], ["y"], kernel_shape=[k, k], strides=[st, st],
                                    pads=[pad] * 4)
            sess = self._session(node, [vx, vi, vs], "y", elem, out_shape)
            feeds["i"] = inputs.flat_idx
            feeds["s"] = np.array(out_shape, dtype=np.int64)
        else:
            raise Unsupported("no operator")
        y = np.empty(out_shape, dtype=inputs.x.dtype)
        io = sess.io_binding()
        for k, v in feeds.items():
            io.bind_cpu_input(k, v)
        io.bind_output("y", "cpu", 0, y.dtype, out_shape, y.ctypes.data)
        def fn(y=y):  # the bound output must outlive the binding: keep y referenced
            sess.run_with_iobinding(io)
            return y

        try:
            fn()
        except Exception as e:
            raise Unsupported(str(e).splitlines()[0][:120])
        return fn


def row_key(r):
    what = r["order"]
    if r["op_short"] == "unpool":  # pattern and index type: pool/i64, scat/u32, ...
        short = {"INT64": "i64", "UINT32": "u32", "UINT64": "u64"}.get(r["index_type"], r["index_type"])
        what = {"scattered": "scat/", "overlapping": "ovl/"}.get(r.get("indices"), "pool/") + short
    shape = "x".join(str(v) for v in r["input_shape"])
    return r["op"], what, r["width"], r["block"], shape


def main():
    ap = argparse.ArgumentParser(description="clops against PyTorch and ONNX Runtime on the bench's shapes")
    ap.add_argument("--clops", default=None, help="the clops CLI (default build/bin/clops, else build-bench/clops_bench)")
    ap.add_argument("--from-json", default=None, help="use this saved `clops bench --json` instead of running it")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="peer threads (default: all cores)")
    ap.add_argument("--peer-reps", type=int, default=None, help="repetitions per peer timing (default: the bench's)")
    ap.add_argument("--json", action="store_true", help="print the comparison as JSON")
    for opt in ("--sizes", "--widths", "--blocks", "--ops", "--reps", "--device"):
        ap.add_argument(opt, default=None, help="passed to clops bench")
    ap.add_argument("--quick", action="store_true", help="passed to clops bench")
    a = ap.parse_args()

    try:
        import numpy as np
    except ImportError:
        print("peers: numpy is missing: pip install numpy (or apt-get install python3-numpy)", file=sys.stderr)
        return 1

    peers = []
    for cls, install in ((TorchPeer, "pip install torch   (or apt-get install python3-torch)"),
                         (OrtPeer, "pip install onnx onnxruntime")):
        try:
            peers.append(cls(a.threads))
        except ImportError as e:
            print(f"peers: skipping {cls.name}: {e.name or e} is not installed ({install})", file=sys.stderr)
    if not peers:
        print("peers: no peer installed; nothing to compare", file=sys.stderr)

    if a.from_json:
        with open(a.from_json) as f:
            bench = json.load(f)
    else:
        bench_args = []
        for opt in ("sizes", "widths", "blocks", "ops", "reps", "device"):
            if getattr(a, opt) is not None:
                bench_args += ["--" + opt, getattr(a, opt)]
        if a.quick:
            bench_args.append("--quick")
        path = a.clops or default_clops()
        if not os.access(path, os.X_OK):
            print(f"peers: {path} not found; build clops first (cmake --build build) or pass --clops", file=sys.stderr)
            return 1
        bench = run_clops(path, bench_args)

    rows = bench["results"]
    unsupported = {}
    table = []
    interactive = sys.stderr.isatty()
    for n, r in enumerate(rows):
        if interactive:
            print(f"\r\033[K[{n + 1}/{len(rows)}] {' '.join(str(v) for v in row_key(r))}", end="", file=sys.stderr,
                  flush=True)
        reps = a.peer_reps or r["reps"]
        moved = r["bytes_moved"]
        entry = {"key": row_key(r), "row": r, "clops_gbps": r.get("op_wall_gbps", r["op_gbps"]), "peers": {}}
        inputs = None
        for p in peers:
            try:
                if inputs is None:
                    inputs = Inputs(np, r)
                fn = p.prepare(r, inputs)
                entry["peers"][p.name] = moved / median_seconds(fn, reps) / 1e9
            except Unsupported as e:
                why = str(e)
                dtype = "" if why == "no operator" else r["data_type"]  # no operator: whatever the type
                unsupported.setdefault((p.name, r["op"], r["order"] or r["index_type"], dtype), why)
                entry["peers"][p.name] = None
        table.append(entry)
    if interactive:
        print("\r\033[K", end="", file=sys.stderr)
    for (peer, op, what, dtype), why in sorted(unsupported.items()):
        print(f"peers: {peer} has no {op} {what}{' ' + dtype if dtype else ''}: {why}", file=sys.stderr)

    dev = bench["device"]
    if a.json:
        out = {"device": dev, "peers": {p.name: p.version for p in peers}, "threads": a.threads, "rows": []}
        for e in table:
            op, what, width, block, shape = e["key"]
            out["rows"].append({"op": op, "order_or_index": what, "width": width, "block": block, "input_shape": shape,
                                "bytes_moved": e["row"]["bytes_moved"], "clops_wall_gbps": e["clops_gbps"],
                                "peer_gbps": e["peers"],
                                "ratio": {k: (e["clops_gbps"] / v if v else None) for k, v in e["peers"].items()}})
        json.dump(out, sys.stdout, indent=1)
        print()
        return 0

    print(f"# clops on {dev['name']} ({dev['backend']}) vs " +
          ", ".join(f"{p.name} {p.version}" for p in peers) + f" on {a.threads} thread(s)")
    print("# GB/s = (bytes read + written) / median wall time of one call; ratio = clops / peer (> 1: clops faster)")
    head = f"{'op':<12} {'order':<8} {'width':>5} {'block':>5} {'input shape':<16} {'clops':>8}"
    for p in peers:
        head += f" {p.name[:12]:>12} {'ratio':>6}"
    print(head)
    for e in table:
        op, what, width, block, shape = e["key"]
        line = f"{op:<12} {what:<8} {width:>5} {block if block else '-':>5} {shape:<16} {e['clops_gbps']:>8.3f}"
        for p in peers:
            v = e["peers"].get(p.name)
            line += f" {v:>12.3f} {e['clops_gbps'] / v:>6.2f}" if v else f" {'-':>12} {'-':>6}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
