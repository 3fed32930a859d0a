#!/usr/bin/env python3
"""peers.py - clops against PyTorch and ONNX Runtime on the same tensors, in one process, rerunnable.

Times clops through its Python package (python/clops: clops.depth_to_space, space_to_depth,
max_unpooling) and each peer on exactly the same inputs, next to a copy of the same number of bytes on
clops's device in the same run, and prints GB/s and ratios:

    PyTorch       pixel_shuffle (DepthToSpace CRD), pixel_unshuffle (SpaceToDepth CRD),
                  view+permute+contiguous (DepthToSpace and SpaceToDepth DCR, as ONNX defines them),
                  max_unpool2d (MaxUnpooling, INT64 indices, kernel 2 stride 2; kernel 3
                  stride 2 padding 1 for the overlapping rows); on the CPU, or on a CUDA GPU with
                  --torch-device cuda
    ONNX Runtime  DepthToSpace (DCR and CRD), SpaceToDepth (DCR), MaxUnpool (INT64 indices)

The rows are `clops bench`'s: the same shapes for --sizes, --widths (element types UINT8, FLOAT16,
FLOAT32, FLOAT64, COMPLEX128) and --blocks, and its MaxUnpooling index patterns, shown apart ("pool":
each index in its own 2x2 window, as a max pool makes them; "ovl": the argmax of a real
max_pool2d(3, 2, 1), kernel 3, stride 2, padding 1, whose windows overlap, over random values 0..7
with ties, the first maximum of each window winning, computed here with numpy; "scat": distinct
positions spread over the plane, input position k of a plane at k * 2654435761 mod the plane), with
INT64 and UINT32 indices (clops gets flat indices; PyTorch the same ones per plane).

clops runs on NumPy arrays with --device host, else on pyopencl arrays on a queue of that OpenCL
device (index of clops.devices(), as `clops devices` lists them), allocated from a pyopencl MemoryPool
so that the result's buffer is reused from call to call (as the C bench reuses its output). Where
pyopencl is not installed (--cl auto), or with --cl ctypes, clops runs through the C library instead:
clops_operator_execute on cl_mem buffers that the script makes through ctypes on the OpenCL ICD loader
(a context and queue on the device, the input written once, the output buffer made once per row and
reused), timed the same way; each row's first call is checked bit for bit against the host backend's
result before it is timed. Every time
(PyTorch on a GPU aside: below) is the wall clock around one Python call (+ queue.finish() on a
device), the median of --reps repetitions after one warm-up; clops is not timed by profiling events,
so that it is measured like the peers, which allocate their output (PyTorch) or write into an output
bound once through IOBinding (ONNX Runtime). The copy baseline is numpy.copyto (host) or pyopencl
enqueue_copy (device) of half the bytes an operator moves (it reads and writes them); "%copy" is
clops's GB/s against it, "ratio" clops's GB/s against a peer's (> 1: clops faster). GB/s = (bytes
read + written: input + output; MaxUnpooling input + indices + output) / median time.

With --torch-device cuda, PyTorch runs on the current CUDA GPU (clops stays on --device N through
pyopencl: --device 0 was NVIDIA's OpenCL device on the H100 machine; `clops devices` lists them). Each
row's tensors are moved to the GPU once, before timing. Each PyTorch call is timed by a pair of CUDA
events recorded around it (torch.cuda.Event(enable_timing=True)), after one warm-up and
torch.cuda.synchronize(), the median of --reps; the output comes from PyTorch's caching allocator,
warm after the warm-up. PyTorch then has its own copy baseline: dst.copy_(src) on the GPU of the same
bytes as clops's copy, timed the same way, so the PyTorch columns gain "copy" (that CUDA copy's GB/s)
and "%copy" (PyTorch / its CUDA copy), next to clops's %copy against its OpenCL copy; "ratio" stays
clops / PyTorch. Without a CUDA GPU (torch.cuda.is_available() false) it exits with status 2.

A row a peer has no operator or type for is shown as "-" (listed once on stderr).
A peer that is not installed is skipped with a message.

Setup: the package into a virtual environment, with the peers (CPU is enough; pyopencl optional):
    python3 -m venv --system-site-packages v && v/bin/pip install . pyopencl
    v/bin/pip install onnx onnxruntime torch   (or Debian's python3-torch, seen via --system-site-packages)
(`bash test/python/run.sh` leaves such a venv in build/venv, without the peers.)

On a GPU machine (../shared/gpu/README.md: `bash ../shared/gpu/pack.sh` here, then there, where
python3 has PyTorch with CUDA and numpy but no pyopencl, and nothing is pip-installed): the script finds
the package in this checkout's python/ and the library in build/ (CLOPS_LIBRARY names another), runs
clops through ctypes and the C library on OpenCL device 0 and PyTorch on CUDA, on the same NumPy
inputs, in one run (notes/peers.md):
    bash .gpu/run.sh python3 tools/scripts/peers.py --device 0 --torch-device cuda --sizes 64M \
        --json > $OUT/peers.json 2> $OUT/peers.err

Usage:
    v/bin/python tools/scripts/peers.py [--device N|host] [--torch-device cpu|cuda] [--cl auto|pyopencl|ctypes]
                                        [--quick] [--sizes LIST]
                                        [--widths LIST] [--blocks LIST] [--ops LIST] [--reps N] [--threads N]
                                        [--json]
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

SCATTER_STEP = 2654435761  # tools/bench/bench.c: scattered indices
NP_DTYPES = {"UINT8": "uint8", "FLOAT16": "float16", "FLOAT32": "float32", "FLOAT64": "float64",
             "COMPLEX128": "complex128"}
WIDTH_TYPES = {1: "UINT8", 2: "FLOAT16", 4: "FLOAT32", 8: "FLOAT64", 16: "COMPLEX128"}
OP_NAMES = {"d2s": "DepthToSpace", "s2d": "SpaceToDepth", "unpool": "MaxUnpooling"}
SPACE_CHANNELS, UNPOOL_CHANNELS = 4, 16  # tools/bench/bench.c


def parse_size(text):
    """"spec" (0), "4096", "64K", "1M", "2G" (binary multiples, optional "iB"/"B"), as the bench takes them."""
    t = text.strip().upper()
    if t == "SPEC":
        return 0
    if t.endswith("IB"):
        t = t[:-2]
    elif t.endswith("B"):
        t = t[:-1]
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1:], 1)
    return int(t[:-1] if mult > 1 else t) * mult


def make_rows(sizes, widths, blocks, ops, reps):
    """The bench's configurations and shapes (tools/bench/bench.c make_configs, make_shapes)."""
    rows = []
    for target in sizes:
        for op in ("d2s", "s2d", "unpool"):
            if op not in ops:
                continue
            variants = [(p, t) for p in ("pooling", "scattered", "overlapping") for t in ("INT64", "UINT32")] \
                if op == "unpool" else [("DCR", None), ("CRD", None)]
            for v in variants:
                for w in widths:
                    for b in ([0] if op == "unpool" else blocks):
                        if op == "unpool":
                            ch, h, wd = UNPOOL_CHANNELS, 2, 3
                            if target == 0:
                                ch = 8
                            else:
                                h = wd = max(1, int(math.floor(math.sqrt(target / w / UNPOOL_CHANNELS / 4.0) + 0.5)))
                            ins, outs = [1, ch, h, wd], [1, ch, 2 * h, 2 * wd]
                        else:
                            ch, hs, ws = 2, 2 * b, 3 * b
                            if target:
                                ch = SPACE_CHANNELS
                                hs = ws = b * max(1, int(math.floor(math.sqrt(target / w / SPACE_CHANNELS) / b + 0.5)))
                            space, deep = [1, ch, hs, ws], [1, ch * b * b, hs // b, ws // b]
                            ins, outs = (deep, space) if op == "d2s" else (space, deep)
                        n_in, n_out = math.prod(ins), math.prod(outs)
                        idx_w = (8 if v[1] == "INT64" else 4) if op == "unpool" else 0
                        rows.append({"op": OP_NAMES[op], "op_short": op, "order": None if op == "unpool" else v[0],
                                     "indices": v[0] if op == "unpool" else None, "index_type": v[1],
                                     "width": w, "block": b, "data_type": WIDTH_TYPES[w], "input_shape": ins,
                                     "output_shape": outs, "reps": reps,
                                     "bytes_moved": n_in * (w + idx_w) + n_out * w})
    return rows


def median_seconds(fn, reps):
    """The wall clock around fn(), median of reps after one warm-up."""
    fn()  # warm-up
    times = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times) * 1e-9


class CudaTimer:
    """GPU time of fn() between two CUDA events recorded around it on the current stream, median of reps
    after one warm-up and torch.cuda.synchronize()."""

    def __init__(self, torch):
        self.cuda = torch.cuda
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def median_seconds(self, fn, reps):
        fn()  # warm-up (and PyTorch's caching allocator holds the output's memory from now on)
        self.cuda.synchronize()
        times = []
        for _ in range(reps):
            self.start.record()
            fn()
            self.end.record()
            self.end.synchronize()
            times.append(self.start.elapsed_time(self.end))  # milliseconds
        return statistics.median(times) * 1e-3


def import_clops():
    """The clops package: installed, or else this checkout's python/ with its build's library (the GPU
    machine runs the packed build tree, where nothing is pip-installed; CLOPS_LIBRARY names another)."""
    try:
        import clops
        return clops
    except ImportError:
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        lib = os.path.join(root, "build", "libclops.so")
        if not os.path.isdir(os.path.join(root, "python", "clops")) or not (
                os.environ.get("CLOPS_LIBRARY") or os.path.exists(lib)):
            raise
        sys.path.insert(0, os.path.join(root, "python"))
        os.environ.setdefault("CLOPS_LIBRARY", lib)
        import clops
        return clops


def make_clops(device, cl):
    """Clops (NumPy on the host, or pyopencl arrays on a device) or, for a device where pyopencl is not
    installed (cl "auto") or not wanted (cl "ctypes"), ClopsC."""
    clops = import_clops()  # ImportError: neither installed nor in this checkout
    if device != "host" and cl != "pyopencl":
        try:
            if cl == "ctypes":
                raise ImportError("--cl ctypes")
            import pyopencl  # noqa: F401
        except ImportError:
            return ClopsC(clops, device)
    return Clops(clops, device)


class Clops:
    """clops through its Python package, on NumPy arrays (host) or pooled pyopencl arrays (a device), and
    the same run's copy baseline on the same device."""

    def __init__(self, clops, device):
        self.clops, self.version = clops, clops.__version__
        self.host = device == "host"
        if self.host:
            self.name = "host"
            return
        import pyopencl as cl  # ImportError: pyopencl is needed for a device (--cl pyopencl)
        import pyopencl.array as cla
        import pyopencl.tools as clt
        devs = clops.devices()
        if not 0 <= device < len(devs):
            raise ValueError(f"--device {device}: clops.devices() lists {len(devs)} device(s)")
        d = devs[device]
        cl_dev = next((x for p in cl.get_platforms() if p.name == d.platform for x in p.get_devices()
                       if x.name == d.name), None)
        if cl_dev is None:
            raise ValueError(f"--device {device}: {d.name} ({d.platform}) is not among pyopencl's devices")
        self.name = f"{d.name} ({d.platform})"
        self.cl, self.cla = cl, cla
        self.queue = cl.CommandQueue(cl.Context([cl_dev]))
        self.pool = clt.MemoryPool(clt.ImmediateAllocator(self.queue))

    def prepare(self, row, inputs):
        c, op, b = self.clops, row["op_short"], row["block"]
        x = inputs.x
        if op == "unpool":
            idx = inputs.flat_idx.astype(inputs.np.uint32) if row["index_type"] == "UINT32" else inputs.flat_idx
        if self.host:
            if op == "unpool":
                return lambda: c.max_unpooling(x, idx, row["output_shape"], device="host")
            fn = c.depth_to_space if op == "d2s" else c.space_to_depth
            return lambda: fn(x, b, row["order"], device="host")
        q = self.queue
        xd = self.cla.to_device(q, x, allocator=self.pool)  # the result comes from x's allocator: the pool
        if op == "unpool":
            idxd = self.cla.to_device(q, idx, allocator=self.pool)
            call = lambda: c.max_unpooling(xd, idxd, row["output_shape"])  # noqa: E731
        else:
            fn = c.depth_to_space if op == "d2s" else c.space_to_depth
            call = lambda: fn(xd, b, row["order"])  # noqa: E731

        def run():
            y = call()
            q.finish()
            return y
        return run

    def copy(self, nbytes):
        """A copy of nbytes (reads and writes them) on clops's device."""
        if self.host:
            import numpy as np
            src, dst = np.ones(nbytes, np.uint8), np.empty(nbytes, np.uint8)
            return lambda: np.copyto(dst, src)
        cl, q = self.cl, self.queue
        src, dst = self.pool.allocate(nbytes), self.pool.allocate(nbytes)
        cl.enqueue_fill_buffer(q, src, b"\1", 0, nbytes)

        def run():
            cl.enqueue_copy(q, dst, src, byte_count=nbytes)
            q.finish()
        return run


class OpenCL:
    """The few OpenCL calls the device path needs without pyopencl, through ctypes on the ICD loader
    (libOpenCL.so.1): a context and an in-order queue on one device, buffers, copies, clFinish."""
    CONTEXT_PLATFORM, MEM_READ_WRITE, MEM_COPY_HOST_PTR = 0x1084, 1, 32

    def __init__(self, platform, device):
        import ctypes
        import ctypes.util
        self.c = ctypes
        try:  # the loader libclops itself linked (already in the process: .gpu/lib's on the GPU machine)
            cl = ctypes.CDLL("libOpenCL.so.1")
        except OSError:
            cl = ctypes.CDLL(ctypes.util.find_library("OpenCL") or "libOpenCL.so")
        self.lib = cl
        vp, i32 = ctypes.c_void_p, ctypes.c_int32
        for fn, res, args in (
                ("clCreateContext", vp, [ctypes.POINTER(ctypes.c_ssize_t), ctypes.c_uint32,
                                         ctypes.POINTER(vp), vp, vp, ctypes.POINTER(i32)]),
                ("clCreateCommandQueue", vp, [vp, vp, ctypes.c_uint64, ctypes.POINTER(i32)]),
                ("clCreateBuffer", vp, [vp, ctypes.c_uint64, ctypes.c_size_t, vp, ctypes.POINTER(i32)]),
                ("clEnqueueCopyBuffer", i32, [vp, vp, vp, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t,
                                              ctypes.c_uint32, vp, vp]),
                ("clEnqueueReadBuffer", i32, [vp, vp, ctypes.c_uint32, ctypes.c_size_t, ctypes.c_size_t, vp,
                                              ctypes.c_uint32, vp, vp]),
                ("clFinish", i32, [vp]), ("clReleaseEvent", i32, [vp]), ("clReleaseMemObject", i32, [vp])):
            getattr(cl, fn).restype, getattr(cl, fn).argtypes = res, args
        err = i32()
        props = (ctypes.c_ssize_t * 3)(self.CONTEXT_PLATFORM, platform, 0)
        dev = (vp * 1)(device)
        self.device, self.context = device, self.check(cl.clCreateContext(props, 1, dev, None, None, err), err, "clCreateContext")
        self.queue = self.check(cl.clCreateCommandQueue(self.context, device, 0, err), err, "clCreateCommandQueue")
        self.buffers = []

    def check(self, value, err, what):
        code = err.value if hasattr(err, "value") else err
        if code != 0:
            raise RuntimeError(f"{what} failed with OpenCL status {code}")
        return value

    def release(self):
        """Frees every buffer made so far (the previous row's)."""
        for mem in self.buffers:
            self.lib.clReleaseMemObject(mem)
        self.buffers = []

    def buffer(self, nbytes, host=None):
        """A buffer of nbytes (at least 1), filled from the NumPy array `host` if given; freed at exit."""
        err = self.c.c_int32()
        flags = self.MEM_READ_WRITE | (self.MEM_COPY_HOST_PTR if host is not None else 0)
        ptr = host.ctypes.data if host is not None else None
        mem = self.check(self.lib.clCreateBuffer(self.context, flags, max(1, nbytes), ptr, err), err, "clCreateBuffer")
        self.buffers.append(mem)
        return mem

    def read(self, mem, out):
        self.check(self.lib.clEnqueueReadBuffer(self.queue, mem, 1, 0, out.nbytes, out.ctypes.data, 0, None, None),
                   0, "clEnqueueReadBuffer")
        return out

    def copy(self, dst, src, nbytes):
        self.check(self.lib.clEnqueueCopyBuffer(self.queue, src, dst, 0, 0, nbytes, 0, None, None), 0,
                   "clEnqueueCopyBuffer")

    def finish(self):
        self.check(self.lib.clFinish(self.queue), 0, "clFinish")


class ClopsC:
    """clops on an OpenCL device without pyopencl: the C library's clops_operator_execute on cl_mem buffers
    made through ctypes (OpenCL above), with the package's ctypes bindings and operator cache (clops._lib,
    clops._core: private to the package, used here so that no struct is declared twice). The input is
    written to the device once; the output buffer is made once and reused (as clops bench does). Each
    time is the wall clock around clops_operator_execute + clFinish, as the pyopencl path's."""

    def __init__(self, clops, device):
        import ctypes
        from types import SimpleNamespace
        from clops import _core, _lib
        self.clops, self.core, self.L, self.c = clops, _core, _lib, ctypes
        self.version = clops.__version__
        count = ctypes.c_size_t()
        _lib.check(_lib.device_list(None, 0, ctypes.byref(count)))
        infos = (_lib.DeviceInfo * max(1, count.value))()
        _lib.check(_lib.device_list(infos, count.value, ctypes.byref(count)))
        info = next((i for i in infos[:count.value] if i.index == device), None)
        if info is None:
            raise ValueError(f"--device {device}: clops.devices() lists {count.value} device(s)")
        self.name = f"{info.device_name.decode(errors='replace')} ({info.platform_name.decode(errors='replace')}; " \
                    "OpenCL through ctypes, no pyopencl)"
        self.cl = OpenCL(info.platform, info.device)
        q = self.cl.queue
        handle = SimpleNamespace(int_ptr=q, context=SimpleNamespace(int_ptr=self.cl.context),
                                 device=SimpleNamespace(int_ptr=self.cl.device))
        self.ctx = _core.context_for_queue(handle)  # what a pyopencl queue gets: clops_context_create_from_cl

    def prepare(self, row, inputs):
        core, L, c, np = self.core, self.L, self.c, inputs.np
        self.cl.release()  # the previous row's buffers: main() is done with them
        op, x = row["op_short"], inputs.x
        out = np.empty(row["output_shape"], x.dtype)
        xm, im = self.cl.buffer(x.nbytes, x), None
        if op == "unpool":
            idx = inputs.flat_idx.astype(np.uint32) if row["index_type"] == "UINT32" else inputs.flat_idx
            im = self.cl.buffer(idx.nbytes, idx)
            oper = core.max_unpooling_operator(self.ctx, core.tensor_key(x, "x"), core.tensor_key(idx, "indices"),
                                               tuple(row["output_shape"]), L.INDICES_FLAT)
            want = lambda: self.clops.max_unpooling(x, idx, row["output_shape"], device="host")  # noqa: E731
        else:
            optype = L.OP_DEPTH_TO_SPACE if op == "d2s" else L.OP_SPACE_TO_DEPTH
            order = L.ORDER_DCR if row["order"] == "DCR" else L.ORDER_CRD
            oper = core.depth_space_operator(self.ctx, optype, core.tensor_key(x, "x"), row["block"], order)
            fn = self.clops.depth_to_space if op == "d2s" else self.clops.space_to_depth
            want = lambda: fn(x, row["block"], row["order"], device="host")  # noqa: E731
        ym = self.cl.buffer(out.nbytes)
        bufs = L.Buffers(xm, im, ym)
        event = c.c_void_p()

        def run():
            with oper.lock:
                L.check(L.operator_execute(oper.handle, c.byref(bufs), 0, None, c.byref(event)))
                self.cl.finish()
                self.cl.lib.clReleaseEvent(event)
                L.check(L.operator_last_status(oper.handle))

        run()  # once, checked against the host backend: the times below are of a right answer
        if self.cl.read(ym, out).tobytes() != want().tobytes():
            raise RuntimeError(f"clops on {self.name}: {' '.join(str(v) for v in row_key(row))} differs from the host "
                               "backend's result")
        return run

    def copy(self, nbytes):
        """clEnqueueCopyBuffer of nbytes (reads and writes them) on the device, + clFinish."""
        src, dst = self.cl.buffer(nbytes), self.cl.buffer(nbytes)

        def run():
            self.cl.copy(dst, src, nbytes)
            self.cl.finish()
        return run


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


class Peer:
    """What a peer times with and against: the wall clock (median_seconds), and clops's copy (own_copy
    False). A peer on another device has its own timer and copy of the same bytes there."""
    own_copy = False

    def median_seconds(self, fn, reps):
        return median_seconds(fn, reps)


class TorchPeer(Peer):
    name = "PyTorch"

    def __init__(self, threads, device="cpu"):
        import torch  # noqa: F401 (ImportError: peer missing)
        self.torch = torch
        torch.set_num_threads(threads)
        self.version = torch.__version__
        self.device = torch.device(device)
        self.device_name = "cpu"
        if self.device.type == "cuda":  # main() checked torch.cuda.is_available()
            self.device_name = f"cuda ({torch.cuda.get_device_name(self.device)})"
            self.median_seconds = CudaTimer(torch).median_seconds
            self.own_copy = True

    def prepare(self, row, inputs):
        torch, F = self.torch, self.torch.nn.functional
        op, order = row["op_short"], row["order"]
        x = torch.from_numpy(inputs.x).to(self.device)  # moved once, outside the timing
        b = row["block"]
        n, c, h, w = x.shape
        if op == "d2s" and order == "CRD":
            fn = lambda: F.pixel_shuffle(x, b)  # noqa: E731
        elif op == "d2s":  # DCR, as ONNX defines it: {n, b, b, c/b², h, w} -> {n, c/b², h, b, w, b}
            cc = c // (b * b)
            def fn():
                return x.view(n, b, b, cc, h, w).permute(0, 3, 4, 1, 5, 2).contiguous().view(n, cc, h * b, w * b)
        elif op == "s2d" and order == "CRD":
            fn = lambda: F.pixel_unshuffle(x, b)  # noqa: E731
        elif op == "s2d":  # DCR: {n, c, h/b, b, w/b, b} -> {n, b, b, c, h/b, w/b}
            hh, ww = h // b, w // b
            def fn():
                return x.view(n, c, hh, b, ww, b).permute(0, 3, 5, 1, 2, 4).contiguous().view(n, b * b * c, hh, ww)
        elif op == "unpool" and row["index_type"] == "INT64":
            idx = torch.from_numpy(inputs.plane_idx).to(self.device)
            size = tuple(row["output_shape"][2:])
            k, st, pad = unpool_geometry(row)
            fn = lambda: F.max_unpool2d(x, idx, kernel_size=k, stride=st, padding=pad, output_size=size)  # noqa: E731
        else:
            raise Unsupported("no operator")
        try:
            fn()
            if self.own_copy:
                torch.cuda.synchronize()  # an error in the kernel shows here
        except RuntimeError as e:  # e.g. not implemented for 'Byte'
            raise Unsupported(str(e).splitlines()[0])
        return fn

    def copy(self, nbytes):
        """A copy of nbytes on PyTorch's device (own_copy only)."""
        src = self.torch.ones(nbytes, dtype=self.torch.uint8, device=self.device)
        dst = self.torch.empty_like(src)
        return lambda: dst.copy_(src)


class OrtPeer(Peer):
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
        # helper.np_dtype_to_tensor_dtype is onnx >= 1.13; onnx 1.12 (Debian 12's python3-onnx) has the table.
        to_elem = getattr(helper, "np_dtype_to_tensor_dtype", None)
        elem = to_elem(inputs.x.dtype) if to_elem else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[inputs.x.dtype]
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
    ap = argparse.ArgumentParser(description="clops (its Python package) against PyTorch and ONNX Runtime, in one process")
    ap.add_argument("--device", default="0", help="OpenCL device index (clops.devices()) or host (default 0)")
    ap.add_argument("--torch-device", default="cpu", choices=("cpu", "cuda"),
                    help="where PyTorch runs; cuda: on the current CUDA GPU, timed by CUDA events against its own "
                         "CUDA copy (default cpu)")
    ap.add_argument("--quick", action="store_true", help="sizes spec,1M, widths 1,4,16, blocks 2,3 (as clops bench)")
    ap.add_argument("--sizes", default=None, help="tensor sizes: spec,64K,1M,... (default spec,64K,1M,4M,16M,64M)")
    ap.add_argument("--widths", default=None, help="element widths among 1,2,4,8,16 (default all)")
    ap.add_argument("--blocks", default=None, help="block sizes of d2s and s2d (default 2,3,4,8)")
    ap.add_argument("--ops", default="d2s,s2d,unpool", help="operators among d2s,s2d,unpool (default all)")
    ap.add_argument("--reps", type=int, default=7, help="timed repetitions, medians reported (default 7)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="peer threads (default: all cores)")
    ap.add_argument("--cl", default="auto", choices=("auto", "pyopencl", "ctypes"),
                    help="how clops reaches an OpenCL device: pyopencl arrays, or cl_mem buffers made through ctypes "
                         "and the C library's clops_operator_execute (no pyopencl needed); auto: pyopencl where "
                         "installed (default auto)")
    ap.add_argument("--json", action="store_true", help="print the comparison as JSON")
    a = ap.parse_args()
    try:
        device = "host" if a.device.lower() == "host" else int(a.device)
        sizes = [parse_size(v) for v in (a.sizes or ("spec,1M" if a.quick else "spec,64K,1M,4M,16M,64M")).split(",")]
        widths = [int(v) for v in (a.widths or ("1,4,16" if a.quick else "1,2,4,8,16")).split(",")]
        blocks = [int(v) for v in (a.blocks or ("2,3" if a.quick else "2,3,4,8")).split(",")]
    except ValueError as e:
        ap.error(str(e))
    ops = a.ops.split(",")
    bad = [w for w in widths if w not in WIDTH_TYPES] + [o for o in ops if o not in OP_NAMES] + [b for b in blocks if b < 1]
    if bad or a.reps < 1:
        ap.error(f"bad values: {bad or a.reps}")

    if a.torch_device == "cuda":  # asked for: no falling back to the CPU or skipping PyTorch
        try:
            import torch
        except ImportError:
            print("peers: --torch-device cuda needs PyTorch with CUDA, and torch is not installed", file=sys.stderr)
            return 2
        if not torch.cuda.is_available():
            print(f"peers: --torch-device cuda: torch.cuda.is_available() is false (PyTorch {torch.__version__}, "
                  f"CUDA {torch.version.cuda or 'none: a CPU-only build'}): no CUDA GPU to time PyTorch on; "
                  "run on a GPU machine (../shared/gpu/README.md) or leave --torch-device out", file=sys.stderr)
            return 2

    try:
        import numpy as np
    except ImportError:
        print("peers: numpy is missing: pip install numpy (or apt-get install python3-numpy)", file=sys.stderr)
        return 1
    try:
        clops = make_clops(device, a.cl)
    except ImportError as e:
        print(f"peers: {e.name or e} is not installed: pip install . (from the repository root)"
              f"{'' if e.name == 'clops' else ', pip install pyopencl (or --cl ctypes)'} into this Python's venv", file=sys.stderr)
        return 1
    except (ValueError, RuntimeError, OSError) as e:  # no such device; OpenCL or clops failed to start
        print(f"peers: {e}", file=sys.stderr)
        return 1

    peers = []
    for make, name, install in ((lambda: TorchPeer(a.threads, a.torch_device), TorchPeer.name,
                                 "pip install torch   (or apt-get install python3-torch)"),
                                (lambda: OrtPeer(a.threads), OrtPeer.name, "pip install onnx onnxruntime")):
        try:
            peers.append(make())
        except ImportError as e:
            print(f"peers: skipping {name}: {e.name or e} is not installed ({install})", file=sys.stderr)
    if not peers:
        print("peers: no peer installed; clops and the copy only", file=sys.stderr)

    rows = make_rows(sizes, widths, blocks, ops, a.reps)
    unsupported = {}
    table = []
    interactive = sys.stderr.isatty()
    for n, r in enumerate(rows):
        if interactive:
            print(f"\r\033[K[{n + 1}/{len(rows)}] {' '.join(str(v) for v in row_key(r))}", end="", file=sys.stderr,
                  flush=True)
        moved = r["bytes_moved"]
        inputs = Inputs(np, r)
        copy_bytes = (moved + 1) // 2 + 15 & ~15  # the bench's copy: reads and writes this many
        entry = {"key": row_key(r), "row": r, "peers": {}, "peer_copy": {},
                 "clops_gbps": moved / median_seconds(clops.prepare(r, inputs), a.reps) / 1e9,
                 "copy_gbps": 2 * copy_bytes / median_seconds(clops.copy(copy_bytes), a.reps) / 1e9}
        for p in peers:
            try:
                fn = p.prepare(r, inputs)
                entry["peers"][p.name] = moved / p.median_seconds(fn, a.reps) / 1e9
                if p.own_copy:  # the same bytes copied on the peer's device, timed as the peer is
                    entry["peer_copy"][p.name] = 2 * copy_bytes / p.median_seconds(p.copy(copy_bytes), a.reps) / 1e9
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

    torch_device = next((p.device_name for p in peers if isinstance(p, TorchPeer)), None)
    if a.json:
        out = {"clops": clops.version, "device": clops.name, "peers": {p.name: p.version for p in peers},
               "torch_device": torch_device, "threads": a.threads, "reps": a.reps, "rows": []}
        for e in table:
            op, what, width, block, shape = e["key"]
            row = {"op": op, "order_or_index": what, "width": width, "block": block, "input_shape": shape,
                   "bytes_moved": e["row"]["bytes_moved"], "clops_wall_gbps": e["clops_gbps"],
                   "copy_gbps": e["copy_gbps"], "clops_over_copy": e["clops_gbps"] / e["copy_gbps"],
                   "peer_gbps": e["peers"],
                   "ratio": {k: (e["clops_gbps"] / v if v else None) for k, v in e["peers"].items()}}
            if e["peer_copy"]:  # --torch-device cuda: PyTorch's own CUDA copy, and PyTorch's GB/s over it
                row["peer_copy_gbps"] = e["peer_copy"]
                row["peer_over_copy"] = {k: e["peers"][k] / v for k, v in e["peer_copy"].items()}
            out["rows"].append(row)
        json.dump(out, sys.stdout, indent=1)
        print()
        return 0

    print(f"# clops {clops.version} (Python package) on {clops.name} vs " +
          ", ".join(f"{p.name} {p.version}" for p in peers) + f" on {a.threads} thread(s)")
    print(f"# GB/s = (bytes read + written) / median wall time of one call ({a.reps} reps); copy = same bytes copied "
          "on clops's device; %copy = clops / copy; ratio = clops / peer (> 1: clops faster)")
    if torch_device and torch_device != "cpu":
        print(f"# PyTorch on {torch_device}: timed by CUDA events, not the wall clock; its copy = dst.copy_(src) of "
              "the same bytes on that GPU, its %copy = PyTorch / that copy")
    head = f"{'op':<12} {'order':<8} {'width':>5} {'block':>5} {'input shape':<16} {'clops':>8} {'copy':>8} {'%copy':>6}"
    for p in peers:
        head += f" {p.name[:12]:>12}" + (f" {'copy':>8} {'%copy':>6}" if p.own_copy else "") + f" {'ratio':>6}"
    print(head)
    for e in table:
        op, what, width, block, shape = e["key"]
        line = (f"{op:<12} {what:<8} {width:>5} {block if block else '-':>5} {shape:<16} {e['clops_gbps']:>8.3f} "
                f"{e['copy_gbps']:>8.3f} {100 * e['clops_gbps'] / e['copy_gbps']:>6.1f}")
        for p in peers:
            v, pc = e["peers"].get(p.name), e["peer_copy"].get(p.name)
            line += f" {v:>12.3f}" if v else f" {'-':>12}"
            if p.own_copy:
                line += f" {pc:>8.3f} {100 * v / pc:>6.1f}" if v else f" {'-':>8} {'-':>6}"
            line += f" {e['clops_gbps'] / v:>6.2f}" if v else f" {'-':>6}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
