"""_core.py - contexts and operators, made once per (device, shape, dtype, options) and reused, and the
two ways of running them: on NumPy arrays (clops_operator_execute_host) and on pyopencl arrays
(clops_operator_execute on the array's own queue).

Caches: a context per device (the host, a device index, or a caller's OpenCL queue, the last bounded to
MAX_QUEUES, least recently used dropped first) and an operator per descriptor (bounded to MAX_OPERATORS).
An operator is used by one thread at a time (clops.h): each has a lock held around its calls.
"""
import atexit
import collections
import ctypes
import operator as _operator
import os
import threading

import numpy as np

from . import _lib as L

MAX_OPERATORS = 256
MAX_QUEUES = 16
U32_MAX = 0xFFFFFFFF
BOOLS = (bool, np.bool_)  # ints to operator.index (np.bool_ with NumPy < 2, deprecated), but no sizes

_lock = threading.RLock()
_contexts = collections.OrderedDict()   # key -> _Context
_operators = collections.OrderedDict()  # key -> _Operator
_default_key = None


class _Context:
    __slots__ = ("handle", "key", "__weakref__")

    def __init__(self, handle, key):
        self.handle, self.key = handle, key

    def __del__(self):
        if self.handle:
            L.context_free(self.handle)
            self.handle = None


class _Operator:
    __slots__ = ("handle", "context", "lock", "out_shape", "host_buffers")

    def __init__(self, handle, context, out_shape):
        self.handle, self.context, self.out_shape = handle, context, out_shape
        self.lock = threading.Lock()
        self.host_buffers = L.HostBuffers()

    def __del__(self):
        if self.handle:
            L.operator_free(self.handle)  # before self.context (which it references) can go
            self.handle = None


@atexit.register
def clear_caches():
    """Frees every cached operator, then every cached context (the next call makes them again)."""
    with _lock:
        _operators.clear()
        _contexts.clear()


def _after_fork_in_child():
    """os.register_at_fork(after_in_child=...): a forked child starts with no cached context or operator,
    and decides device=None's device anew.

    The parent's OpenCL contexts are unusable in the child (PoCL's device threads, for one, are gone: a
    call on them hung; the C library answers CLOPS_ERROR_DEVICE_LOST there). The child makes new ones when
    it next needs them: the host backend's always work; a device's only where the parent never reached the
    OpenCL driver - after that the C library refuses a device context in the child at once (clops.Error,
    CLOPS_ERROR_DEVICE_LOST, naming the "spawn" start method and the host backend), as a new one would hang
    in its first command. The parent's handles are not freed here, only forgotten: freeing them in the
    child would call into the driver on the parent's objects (which hung too). The lock is made anew, as
    another thread of the parent may have held it at the fork."""
    global _lock, _contexts, _operators, _default_key
    for table in (_operators, _contexts):
        for obj in table.values():
            obj.handle = None  # leaked in the child, so that __del__ frees nothing
    _lock = threading.RLock()
    _operators = collections.OrderedDict()
    _contexts = collections.OrderedDict()
    _default_key = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


# ---- contexts ---------------------------------------------------------------------------------------


def default_key():
    """Where device=None runs a NumPy array or a torch tensor: the C library's default device for host data
    (clops_default_device_for_host_data in clops_devices.h, the rule the CLI's run and bench use and
    `clops devices` marks): CLOPS_DEVICE when set; else the first GPU; else the first device unless it is
    a CPU, whose kernels would run on the host's cores and copy the array in and out: then the host
    backend; else (no OpenCL device) the host backend."""
    is_host, index = ctypes.c_int(), ctypes.c_uint()
    L.check(L.default_device_for_host_data(ctypes.byref(is_host), ctypes.byref(index), None))
    return ("host",) if is_host.value else ("device", index.value)


def _device_key(device):
    global _default_key
    if device is None:
        if _default_key is None:
            _default_key = default_key()
        return _default_key
    if isinstance(device, str):
        if device.lower() == "host":
            return ("host",)
        raise ValueError(f"device {device!r}: expected None, an index of clops.devices() or \"host\"")
    index = getattr(device, "index", device)  # a Device of clops.devices()
    if isinstance(index, BOOLS) or not isinstance(index, (int, np.integer)):
        raise TypeError(f"device must be None, an int index of clops.devices() or \"host\", not {type(device).__name__}")
    if not 0 <= index <= U32_MAX:
        raise ValueError(f"device index {index} does not exist (see clops.devices())")
    return ("device", int(index))


def _make_context(key, create):
    """The cached context of `key`, made with `create` when absent. Contexts on pyopencl queues are bounded
    (MAX_QUEUES): a hit moves the queue's context to the end, so the least recently used goes first."""
    ctx = _contexts.get(key)
    if ctx is not None and key[0] != "cl":
        return ctx  # a device's or the host's context: never dropped but by clear_caches()
    with _lock:
        ctx = _contexts.get(key)
        if ctx is None:
            handle = ctypes.c_void_p()
            L.check(create(ctypes.byref(handle)))
            ctx = _Context(handle.value, key)
            _contexts[key] = ctx
            queues = [k for k in _contexts if k[0] == "cl"]
            for k in queues[:max(0, len(queues) - MAX_QUEUES)]:
                _forget_context(k)
        elif key[0] == "cl":
            _contexts.move_to_end(key)
        return ctx


def _forget_context(key):
    for k in [k for k in _operators if k[0] == key]:
        del _operators[k]
    del _contexts[key]


def context_for(device):
    """The cached context of `device` (None, an index, "host")."""
    key = _device_key(device)
    if key[0] == "host":
        return _make_context(key, L.context_create_host)
    return _make_context(key, lambda out: L.context_create_device(key[1], out))


def context_for_queue(queue):
    """The cached context on a pyopencl CommandQueue (clops retains the queue, so its address stays its own
    while cached)."""
    key = ("cl", queue.int_ptr)
    return _make_context(key, lambda out: L.context_create_from_cl(queue.context.int_ptr, queue.device.int_ptr,
                                                                   queue.int_ptr, out))


# ---- tensors and operators --------------------------------------------------------------------------


def data_type(dt, what):
    """The clops data type of NumPy dtype `dt`; TypeError for one clops does not take."""
    code = L.DATA_TYPES.get((dt.kind, dt.itemsize))
    if code is None:
        raise TypeError(f"{what}: dtype {dt} is not a type clops supports (bool, int8-64, uint8-64, "
                        "float16/32/64, complex64/128)")
    return code


def tensor_key(arr, what):
    """(clops data type, sizes, element strides or None for packed) of a 4-D NumPy or pyopencl array."""
    code = data_type(arr.dtype, what)
    shape = arr.shape
    if len(shape) != 4:
        raise ValueError(f"{what} must be 4-D (N, C, H, W), not {len(shape)}-D with shape {tuple(shape)}")
    if any(n > U32_MAX for n in shape):
        raise ValueError(f"{what}: a size of {tuple(shape)} is past 2^32-1")
    if arr.flags.c_contiguous:
        return code, shape, None
    size = arr.dtype.itemsize
    if any(s < 0 or s % size for s in arr.strides):  # NumPy arrays were copied by as_numpy: a pyopencl array
        raise ValueError(f"{what}: a pyopencl array with strides {arr.strides} (negative or not whole elements): "
                         "clops takes strides of whole elements >= 0 and does not copy pyopencl arrays (pyopencl "
                         "cannot copy this one either); pass a view with such strides or a NumPy array")
    return code, shape, tuple(s // size for s in arr.strides)


def span_bytes(arr, strides):
    """Bytes from the first element to the end of the last one."""
    if arr.size == 0:
        return 0
    if strides is None:
        return arr.nbytes
    return (sum((n - 1) * s for n, s in zip(arr.shape, strides)) + 1) * arr.dtype.itemsize


class _Desc:
    """A clops_tensor_desc with its strides kept alive."""

    def __init__(self, tkey):
        code, shape, strides = tkey
        self.strides = (ctypes.c_uint64 * 4)(*strides) if strides is not None else None
        self.t = L.TensorDesc(code, (ctypes.c_uint32 * 4)(*shape),
                              ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_uint64)) if self.strides else None)


def depth_space_operator(ctx, optype, tx, block, order):
    """The cached DepthToSpace or SpaceToDepth operator; its output shape from clops's rule."""
    key = (ctx.key, optype, tx, block, order)
    op = _lookup(key)
    if op is not None:
        return op
    x = _Desc(tx)
    d = L.DepthSpaceDesc(ctypes.pointer(x.t), None, block, order)
    desc = L.OperatorDesc(optype, ctypes.cast(ctypes.pointer(d), ctypes.c_void_p))
    sizes = (ctypes.c_uint32 * 4)()
    L.check(L.operator_output_sizes(ctypes.byref(desc), sizes))
    y = _Desc((tx[0], tuple(sizes), None))
    d.output = ctypes.pointer(y.t)
    return _create(key, ctx, desc, tuple(sizes))


def max_unpooling_operator(ctx, tx, ti, out_shape, layout):
    key = (ctx.key, L.OP_MAX_UNPOOLING, tx, ti, out_shape, layout)
    op = _lookup(key)
    if op is not None:
        return op
    x, i, y = _Desc(tx), _Desc(ti), _Desc((tx[0], out_shape, None))
    d = L.MaxUnpoolingDesc(ctypes.pointer(x.t), ctypes.pointer(i.t), ctypes.pointer(y.t), layout)
    desc = L.OperatorDesc(L.OP_MAX_UNPOOLING, ctypes.cast(ctypes.pointer(d), ctypes.c_void_p))
    return _create(key, ctx, desc, out_shape)


def _lookup(key):
    op = _operators.get(key)
    if op is not None:
        with _lock:
            if key in _operators:
                _operators.move_to_end(key)
    return op


_said_missing = set()  # devices whose missing programs were said (once each)


def _say_missing_program(handle, ctx):
    """An operator sent to the host because its OpenCL device has no compiler and no binary of the programs
    it needs (a board without a compiler whose pack lacks them): a warning, once per device, with how to add
    the portable program (docs/cache-and-tuning.md, "The portable program")."""
    info = L.OperatorInfo()
    if L.operator_get_info(handle, ctypes.byref(info)) != 0 or info.backend != L.BACKEND_HOST:
        return
    reason = (info.fallback_reason or b"").decode(errors="replace")
    name = L.context_device_name(ctx.handle).decode(errors="replace")
    if "no cached binary" not in reason or name in _said_missing:
        return
    _said_missing.add(name)
    import warnings
    warnings.warn(f"clops: operators run on the host, not on device {name!r}: {reason}; to run them there, build "
                  "the portable program offline ('clops kernels list --device N --portable') and add it with "
                  "'clops kernels pack-add' and 'clops cache import'", RuntimeWarning, stacklevel=4)


def _create(key, ctx, desc, out_shape):
    handle = ctypes.c_void_p()
    L.check(L.operator_create(ctx.handle, ctypes.byref(desc), ctypes.byref(handle)))
    if L.context_backend(ctx.handle) == L.BACKEND_OPENCL:
        _say_missing_program(handle.value, ctx)
    op = _Operator(handle.value, ctx, out_shape)
    with _lock:
        _operators[key] = op
        while len(_operators) > MAX_OPERATORS:
            _operators.popitem(last=False)
    return op


def output_shape_arg(shape):
    """MaxUnpooling's output_shape: four sizes."""
    try:
        items = tuple(shape)
        if any(isinstance(n, BOOLS) for n in items):  # ints to operator.index, but no sizes
            raise TypeError
        sizes = tuple(_operator.index(n) for n in items)
    except TypeError:
        raise ValueError(f"output_shape must be four ints (N, C, H, W), not {shape!r}") from None
    if len(sizes) != 4 or any(not 0 <= n <= U32_MAX for n in sizes):
        raise ValueError(f"output_shape must be four sizes 0..2^32-1 (N, C, H, W), not {shape!r}")
    return sizes


# ---- byte order: one rule for every array of every function ------------------------------------------


def byte_order(a, what, numbers):
    """The package's one byte-order rule. Every entry point passes each array it gives clops through here:
    the tensors (numbers=False) and the indices (numbers=True), NumPy and pyopencl arrays alike.

    clops reads elements in the machine's byte order. An array in the other byte order:
    - numbers=True (indices: read as numbers): a NumPy array is swapped on the host into a native copy; a
      pyopencl array raises TypeError naming its byte order (swapping it would need a device kernel that
      clops does not have; the caller can swap it, e.g. with .astype on the host before to_device).
    - numbers=False (x: its elements are only moved, never read as numbers): swapping it on the way in and
      the result back on the way out gives the same bits as moving it unchanged, so it is passed unchanged
      (no copy, NumPy or pyopencl) and the result keeps the caller's dtype, byte order included.
    One-byte elements (and bool) have no byte order. Returns the array to give clops."""
    dt = a.dtype
    if dt.isnative or not numbers:
        return a
    order = "big-endian" if dt.byteorder == ">" else "little-endian"
    if is_cl_array(a):
        raise TypeError(f"{what}: dtype {dt.str!r} is {order}, not this machine's byte order; clops reads "
                        f"{what} as numbers and cannot swap a pyopencl array's bytes: pass "
                        f"{what} in native byte order ({dt.newbyteorder('=').name}), for example swapped on "
                        "the host with .astype() before pyopencl.array.to_device")
    return a.astype(dt.newbyteorder("="))


# ---- running on NumPy arrays ------------------------------------------------------------------------


def as_numpy(a, what, numbers=False):
    """A NumPy array clops can read: negative or partial-element strides are copied once (clops's strides
    are whole elements, >= 0); every other view goes to clops as strides. Then byte_order's rule (numbers:
    whether clops reads its elements as numbers, as it does indices)."""
    if type(a) is not np.ndarray:
        a = np.asarray(a)
        if a.dtype == object:
            raise TypeError(f"{what} must be a NumPy array (or a pyopencl array), not {type(a).__name__}")
    size = a.dtype.itemsize
    if not a.flags.c_contiguous and any(s < 0 or s % size for s in a.strides):
        a = np.ascontiguousarray(a)
    return byte_order(a, what, numbers)


def run_host(op, x, sx, idx=None, si=None):
    """Runs `op` on NumPy arrays (sx, si: their element strides or None) into a new packed array."""
    out = np.empty(op.out_shape, x.dtype)
    with op.lock:
        hb = op.host_buffers
        hb.input = x.__array_interface__["data"][0]
        hb.input_bytes = span_bytes(x, sx)
        if idx is not None:
            hb.indices = idx.__array_interface__["data"][0]
            hb.indices_bytes = span_bytes(idx, si)
        hb.output = out.__array_interface__["data"][0]
        hb.output_bytes = out.nbytes
        st = L.operator_execute_host(op.handle, hb)
        if st != 0:
            raise L.exception(st)
    return out


def _no_device(device):
    if device is not None:
        raise ValueError("device= is for NumPy arrays and torch tensors: a pyopencl array runs on its own queue")


def run_depth_space(optype, x, block, order, device):
    """DepthToSpace or SpaceToDepth of a 4-D NumPy array (on `device`) or pyopencl array (on its queue)."""
    if is_cl_array(x):
        _no_device(device)
        return run_cl(optype, x, block=block, order=order)
    x = as_numpy(x, "x")
    ctx = context_for(device)
    tx = tensor_key(x, "x")
    return run_host(depth_space_operator(ctx, optype, tx, block, order), x, tx[2])


def run_max_unpooling(x, indices, out_shape, layout, device):
    """MaxUnpooling of a 4-D NumPy array (on `device`) or pyopencl array (on its queue, indices one too)."""
    if is_cl_array(x):
        _no_device(device)
        return run_cl(L.OP_MAX_UNPOOLING, x, idx=indices, out_shape=out_shape, layout=layout)
    if is_cl_array(indices):
        raise TypeError("indices is a pyopencl array but x is not: pass both as pyopencl arrays or neither")
    x = as_numpy(x, "x")
    indices = as_numpy(indices, "indices", numbers=True)  # read as numbers: see byte_order
    ctx = context_for(device)
    tx, ti = tensor_key(x, "x"), tensor_key(indices, "indices")
    return run_host(max_unpooling_operator(ctx, tx, ti, out_shape, layout), x, tx[2], indices, ti[2])


def batched(x, run, what):
    """`run` (a 4-D array in, a 4-D array out) on x of shape (*, C, H, W), at least 3-D, as PyTorch's
    pixel_shuffle takes it: the leading sizes folded into one N (a view where the array allows it), the
    result shaped (*, C', H', W'). NumPy, torch and pyopencl arrays alike."""
    shape = tuple(x.shape)
    if len(shape) == 4:
        return run(x)
    if len(shape) < 3:
        raise ValueError(f"{what} expects x of shape (*, C, H, W), at least 3-D, not {len(shape)}-D with shape "
                         f"{shape}")
    n = 1
    for s in shape[:-3]:
        n *= s
    y = run(x.reshape((n,) + shape[-3:]))
    return y.reshape(shape[:-3] + tuple(y.shape[1:]))


# ---- running on pyopencl arrays ---------------------------------------------------------------------


def is_cl_array(a):
    t = type(a)
    return t is not np.ndarray and t.__module__.startswith("pyopencl") and hasattr(a, "queue")


def check_cl_array(a, what):
    """A pyopencl array clops can take: in a cl_mem buffer (not shared virtual memory)."""
    import pyopencl as cl
    if a.base_data is not None and not isinstance(a.base_data, cl.MemoryObjectHolder):
        raise TypeError(f"{what}: a pyopencl array in {type(a.base_data).__name__} (shared virtual memory) is not "
                        "supported: clops takes cl_mem buffers; allocate it with pyopencl's default allocator or a "
                        "MemoryPool")


def _cl_mem(a, span, keep, wait):
    """The cl_mem address holding `a` from its first element: its buffer, a sub-buffer at its offset, or
    (an offset the device cannot start a sub-buffer at) a device-side copy of its span."""
    if a.offset == 0:
        return a.base_data.int_ptr  # clops checks the span against the buffer's size
    import pyopencl as cl
    if a.offset + span > a.base_data.size:
        raise ValueError(f"a pyopencl array's strides reach past its buffer ({a.offset} + {span} bytes > "
                         f"{a.base_data.size})")
    try:
        sub = a.base_data.get_sub_region(a.offset, span)
    except cl.Error:
        sub = cl.Buffer(a.context, cl.mem_flags.READ_ONLY, span)
        wait.append(cl.enqueue_copy(a.queue, sub, a.base_data, byte_count=span, src_offset=a.offset,
                                    wait_for=a.events))
    keep.append(sub)
    return sub.int_ptr


def run_cl(optype, x, block=0, order=0, idx=None, out_shape=None, layout=0):
    """Runs on pyopencl arrays on x's queue, after their events; returns a pyopencl array whose event is
    the operator's. MaxUnpooling, and an operator on the host path, wait for their status (bad indices
    are found on the device; the host work's failure is reported only by clops_operator_last_status)."""
    import pyopencl as cl
    import pyopencl.array as cla
    queue = x.queue
    if queue is None:
        raise ValueError("x: a pyopencl array without a queue (with_queue(None)): clops runs on x's queue; "
                         "give it one with x.with_queue(queue)")
    check_cl_array(x, "x")
    x = byte_order(x, "x", numbers=False)
    if idx is not None:
        if not is_cl_array(idx):
            raise TypeError("indices must be a pyopencl array when x is one")
        if idx.context.int_ptr != x.context.int_ptr:
            raise ValueError("indices and x are pyopencl arrays of different OpenCL contexts")
        check_cl_array(idx, "indices")
        idx = byte_order(idx, "indices", numbers=True)
    ctx = context_for_queue(queue)
    tx = tensor_key(x, "x")
    if optype == L.OP_MAX_UNPOOLING:
        ti = tensor_key(idx, "indices")
        op = max_unpooling_operator(ctx, tx, ti, out_shape, layout)
    else:
        op = depth_space_operator(ctx, optype, tx, block, order)
    out = cla.empty(queue, op.out_shape, x.dtype, allocator=x.allocator)
    if out.size == 0:
        return out
    if x.size == 0:  # MaxUnpooling of nothing: all zeros
        out.fill(0)
        return out
    keep, wait = [], []
    bufs = L.Buffers(_cl_mem(x, span_bytes(x, tx[2]), keep, wait),
                     _cl_mem(idx, span_bytes(idx, ti[2]), keep, wait) if idx is not None else None,
                     out.base_data.int_ptr)
    events = list(x.events) + (list(idx.events) if idx is not None else []) + wait
    wait_list = (ctypes.c_void_p * max(1, len(events)))(*[e.int_ptr for e in events])
    event = ctypes.c_void_p()
    with op.lock:
        st = L.operator_execute(op.handle, ctypes.byref(bufs), len(events), wait_list if events else None,
                                ctypes.byref(event))
        if st != 0:
            raise L.exception(st)
        out.add_event(cl.Event.from_int_ptr(event.value, retain=False))
        # Every operator: MaxUnpooling's bad indices are found on the device, and an operator on the
        # host path (no compiler, a failed build: its info's fallback_reason) reports its host work's
        # failure only here (its event completes either way). It returns at once for DepthToSpace and
        # SpaceToDepth on the device.
        st = L.operator_last_status(op.handle)
        if st != 0:
            raise L.exception(st)
    return out

