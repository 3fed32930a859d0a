"""clops: DirectML-style DepthToSpace, SpaceToDepth and MaxUnpooling on any OpenCL device, or on the host.

    import numpy as np, clops
    x = np.arange(48, dtype=np.float32).reshape(1, 8, 2, 3)
    y = clops.depth_to_space(x, 2)                       # (1, 2, 4, 6), DCR, default device (docs/python.md)
    z = clops.space_to_depth(y, 2, order="dcr", device="host")
    assert (z == x).all()

With PyTorch, clops.max_unpool2d(values, indices, kernel_size, stride, padding, output_size) takes the pair
torch.nn.functional.max_pool2d(..., return_indices=True) gives, and clops.pixel_shuffle(x, r) and
clops.pixel_unshuffle(x, r) take F.pixel_shuffle's arguments. Every function takes torch CPU tensors
(bfloat16 too) and returns torch tensors, differentiable (backward, double backward, forward-mode AD),
with forwards and gradients equal to PyTorch's bit for bit (docs/python.md, "PyTorch").

Inputs are NumPy arrays of any fixed-width dtype (bool, int/uint 8-64, float16/32/64, complex64/128) in
any strides (passed to clops as strides, not copied), or pyopencl arrays (run on the array's own queue;
the package does not wait for them, but for max_unpooling's status, and copies nothing through the host;
an operator clops runs on the host path on that device follows the C API's fallback rule,
clops_operator_execute in clops.h). Results are bit-exact: these operators only move elements. Bad
arguments raise ValueError or TypeError with the library's message; failures of the device raise
clops.Error. The public names are those of __all__; the rest (_core, _lib, helpers) is private.
"""
from typing import NamedTuple as _NamedTuple

import numpy as _np

from . import _core
from . import _lib as _L
from . import _torch
from ._lib import Error

__all__ = ["__version__", "Device", "Error", "devices", "depth_to_space", "space_to_depth", "max_unpooling",
           "max_unpool2d", "pixel_shuffle", "pixel_unshuffle", "clear_cache", "prepare", "Prepared"]

__version__ = _L.version_string().decode()


class Device(_NamedTuple):
    """An OpenCL device as `clops devices` lists it. `index` is what `device=` and CLOPS_DEVICE take."""
    index: int
    name: str
    platform: str
    type: str                 # "GPU", "CPU", "ACCELERATOR", "CUSTOM" or "OTHER"
    version: str              # CL_DEVICE_VERSION
    driver_version: str
    opencl_c_version: str
    fp16: bool
    fp64: bool
    int64: bool
    compiler: bool
    max_alloc_bytes: int
    plan: str                 # which path each operator and type takes there (clops_device_plan)

    def __repr__(self):  # the identity; the capabilities and plan are fields
        return f"Device(index={self.index}, name={self.name!r}, platform={self.platform!r}, type={self.type!r})"


def _device_string(info, what):
    import ctypes
    n = ctypes.c_size_t()
    _L.check(_L.device_string(ctypes.byref(info), what, None, 0, ctypes.byref(n)))
    buf = ctypes.create_string_buffer(n.value + 1)
    _L.check(_L.device_string(ctypes.byref(info), what, buf, len(buf), None))
    return buf.value.decode(errors="replace")


def _device_type(t):
    for bit, name in ((4, "GPU"), (2, "CPU"), (8, "ACCELERATOR"), (16, "CUSTOM")):
        if t & bit:
            return name
    return "OTHER"


def devices():
    """Every OpenCL device of every platform, in the order and with the indices of `clops devices`.

    Returns a list of Device (index, name, platform, type, versions, fp16/fp64/int64/compiler
    capabilities, max_alloc_bytes, plan). An empty list when there is no OpenCL platform; the host
    backend (device="host") is always there and is not listed.
    """
    import ctypes
    count = ctypes.c_size_t()
    _L.check(_L.device_list(None, 0, ctypes.byref(count)))
    infos = (_L.DeviceInfo * max(1, count.value))()
    _L.check(_L.device_list(infos, count.value, ctypes.byref(count)))
    result = []
    for info in infos[:count.value]:
        n = _L.device_plan(ctypes.byref(info), None, 0)
        plan = ctypes.create_string_buffer(n + 1)
        _L.device_plan(ctypes.byref(info), plan, len(plan))
        result.append(Device(
            info.index, _device_string(info, _L.DEVICE_STRING_DEVICE_NAME),
            _device_string(info, _L.DEVICE_STRING_PLATFORM_NAME), _device_type(info.type),
            _device_string(info, _L.DEVICE_STRING_DEVICE_VERSION),
            _device_string(info, _L.DEVICE_STRING_DRIVER_VERSION),
            _device_string(info, _L.DEVICE_STRING_OPENCL_C_VERSION), bool(info.has_fp16), bool(info.has_fp64),
            bool(info.has_int64), bool(info.compiler_available), info.max_alloc_bytes,
            plan.value.decode(errors="replace")))
    return result


def _block(block_size):
    import operator
    try:
        if isinstance(block_size, _core.BOOLS):  # an int to operator.index, but True is no block size
            raise TypeError
        b = operator.index(block_size)
    except TypeError:
        raise TypeError(f"block_size must be an int, not {type(block_size).__name__}") from None
    if not 0 <= b <= _core.U32_MAX:
        raise ValueError(f"block size {b} must be at least 1 (and below 2^32)")
    return b  # 0 goes to clops, which says why


def _word(value):
    """A str attribute as str; bytes (ONNX's string attributes, as onnx.helper gives them: mode=b"CRD") decoded
    as ASCII; None for anything else."""
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("ascii")
        except UnicodeDecodeError:
            return None
    return value if isinstance(value, str) else None


def _order(order):
    o = {"DCR": _L.ORDER_DCR, "CRD": _L.ORDER_CRD}.get((_word(order) or "").upper())
    if o is None:
        raise ValueError(f"order {order!r}: expected \"DCR\" or \"CRD\" (any case, str or bytes)")
    return o


def _depth_space(optype, x, block_size, order, device, what):
    b, o = _block(block_size), _order(order)
    if _torch.is_tensor(x):
        return _core.batched(x, lambda x4: _torch.depth_space(optype, x4, b, o, device), what)
    if not _core.is_cl_array(x):
        x = _core.as_numpy(x, "x")
    _core.data_type(x.dtype, "x")  # a dtype error before a shape error
    return _core.batched(x, lambda x4: _core.run_depth_space(optype, x4, b, o, device), what)


def depth_to_space(x, block_size, order="DCR", device=None):
    """DepthToSpace: (N, C, H, W) -> (N, C/b^2, H*b, W*b), as DirectML and ONNX define it.

    x           (N, C, H, W), or (C, H, W), or more leading sizes (*, C, H, W) as torch's pixel_shuffle
                takes them. A NumPy array of a fixed-width dtype, in any strides (views, channels-last);
                a torch CPU tensor (any dtype but complex32, bfloat16 included; the result is a torch
                tensor with a gradient where x requires one); or a pyopencl.array.Array (then the result
                is one too, on x's queue, after x's events; x needs a queue, a cl_mem buffer (not SVM)
                and strides >= 0: NumPy views with negative strides are copied, pyopencl ones raise
                ValueError)
    block_size  b >= 1; C must be divisible by b^2
    order       "DCR" (DirectML's and ONNX's default) or "CRD" (PyTorch's pixel_shuffle); any case, str
                or bytes (ONNX's attribute, mode=b"CRD")
    device      None (the library's default device, which `clops devices` marks: CLOPS_DEVICE if set,
                else the first GPU, else the host backend rather than a CPU device; docs/cli.md, "The
                default device"), an index of clops.devices(), or "host"; for NumPy arrays and torch
                tensors

    Returns a new C-contiguous array of x's type and dtype. Raises ValueError (shapes, block size, order,
    device) or TypeError (dtype) with the library's message, clops.Error for a device failure.
    """
    return _depth_space(_L.OP_DEPTH_TO_SPACE, x, block_size, order, device, "depth_to_space")


def space_to_depth(x, block_size, order="DCR", device=None):
    """SpaceToDepth: (N, C, H, W) -> (N, C*b^2, H/b, W/b), the inverse of depth_to_space.

    x           (N, C, H, W), (C, H, W) or (*, C, H, W): a NumPy array of a fixed-width dtype in any
                strides, a torch CPU tensor, or a pyopencl.array.Array, as for depth_to_space
    block_size  b >= 1; H and W must be divisible by b
    order       "DCR" or "CRD" (PyTorch's pixel_unshuffle); any case, str or bytes
    device      None (the default: the host backend rather than a CPU device, see depth_to_space), an
                index of clops.devices(), or "host"

    Returns a new C-contiguous array of x's type and dtype (a torch tensor with a gradient where x
    requires one; a pyopencl array on x's queue for a pyopencl x). Raises ValueError or TypeError with the
    library's message, clops.Error for a device failure.
    """
    return _depth_space(_L.OP_SPACE_TO_DEPTH, x, block_size, order, device, "space_to_depth")


def pixel_shuffle(x, upscale_factor, *, device=None):
    """torch.nn.functional.pixel_shuffle on clops: (*, C*r^2, H, W) -> (*, C, H*r, W*r), clops's
    DepthToSpace in CRD order.

    x               a torch CPU tensor of at least 3 dimensions, of a dtype clops takes (bfloat16 and
                    float16 included; not complex32 or the quantized types); also a NumPy array or a
                    pyopencl array (folding leading sizes needs a contiguous one), whose type comes back
    upscale_factor  r >= 1; the channels must be divisible by r^2
    device          (keyword only, not PyTorch's) None, an index of clops.devices(), or "host"

    Returns a new contiguous tensor, equal bit for bit to PyTorch's. Differentiable: where x requires
    grad, the backward is pixel_unshuffle of the gradient, run by clops (equal bit for bit to PyTorch's).
    Raises ValueError (shapes, factor; PyTorch raises RuntimeError) or TypeError (dtype, a CUDA tensor).
    """
    return _depth_space(_L.OP_DEPTH_TO_SPACE, x, upscale_factor, "CRD", device, "pixel_shuffle")


def pixel_unshuffle(x, downscale_factor, *, device=None):
    """torch.nn.functional.pixel_unshuffle on clops: (*, C, H*r, W*r) -> (*, C*r^2, H, W), clops's
    SpaceToDepth in CRD order; the inverse of pixel_shuffle.

    x                 as for pixel_shuffle; H and W must be divisible by r
    downscale_factor  r >= 1
    device            (keyword only) None, an index of clops.devices(), or "host"

    Returns a new contiguous tensor, equal bit for bit to PyTorch's; differentiable (the backward is
    pixel_shuffle of the gradient). Raises as pixel_shuffle.
    """
    return _depth_space(_L.OP_SPACE_TO_DEPTH, x, downscale_factor, "CRD", device, "pixel_unshuffle")


def max_unpooling(x, indices, output_shape, indices_layout="flat", device=None):
    """MaxUnpooling: a zero-filled array of output_shape with each x element written where its index says.

    x               a 4-D NumPy array (any fixed-width dtype, any strides), a torch CPU tensor (the
                    result is a torch tensor, with a gradient where x requires one), or a
                    pyopencl.array.Array
    indices         x's shape; dtype uint32, uint64 or int64 (what ONNX and PyTorch give); a pyopencl
                    array when x is one (a torch tensor and a NumPy array mix)
    output_shape    (N, C, H_out, W_out); N and C as x's
    indices_layout  "flat": an index counts over the whole packed output (DirectML, ONNX MaxUnpool);
                    "per-plane": within the output plane (n, c), as torch.nn.functional.max_pool2d(...,
                    return_indices=True) gives them. Any case, str or bytes.
    device          None (the default: the host backend rather than a CPU device, see depth_to_space),
                    an index of clops.devices(), or "host"

    Duplicate indices: the element last in row-major order wins. Returns a new C-contiguous array of x's
    type (a pyopencl array on x's queue for a pyopencl x; that call waits for the operator to learn
    whether every index was in range). The gradient of a torch x gathers the output's gradient at the
    same indices. An index negative or past the output raises ValueError and returns no result; a bad
    shape or dtype ValueError or TypeError; a device failure clops.Error.
    """
    shape = _core.output_shape_arg(output_shape)
    layout = {"flat": _L.INDICES_FLAT, "per-plane": _L.INDICES_PER_PLANE}.get((_word(indices_layout) or "").lower())
    if layout is None:
        raise ValueError(f"indices_layout {indices_layout!r}: expected \"flat\" or \"per-plane\"")
    y = _unpool(x, indices, shape, layout, device)
    if layout == _L.INDICES_FLAT and not _core.is_cl_array(indices):
        # after a call that succeeded: a failed one says what is wrong itself
        _warn_if_per_plane(_torch.to_numpy(indices, "indices") if _torch.is_tensor(indices) else
                           _np.asarray(indices), shape)
    return y


def _unpool(x, indices, shape, layout, device, pool=None):
    """MaxUnpooling of a 4-D x of any kind (torch, NumPy, pyopencl), in x's kind. `pool`: max_unpool2d's
    (kernel, stride, padding), which a torch x's ONNX export writes as MaxUnpool's attributes."""
    if _torch.is_tensor(x):
        return _torch.max_unpooling(x, indices, shape, layout, device, pool)
    if _torch.is_tensor(indices):
        indices = _torch.to_numpy(indices, "indices")
    return _core.run_max_unpooling(x, indices, shape, layout, device)


def _warn_if_per_plane(indices, shape):
    """UserWarning when flat indices all fall inside the first plane of an output with several planes: what
    per-plane indices (PyTorch's max_pool2d) given as flat look like. NumPy indices only (a device array
    would need a reduction on the device). O(1) when the last index is past the first plane, which flat
    indices of a real pool always are; otherwise one pass (max) over the indices."""
    planes, plane = shape[0] * shape[1], shape[2] * shape[3]
    if planes < 2 or indices.size == 0 or indices.ndim != 4 or not 0 < plane <= _core.U32_MAX:
        return
    if int(indices[-1, -1, -1, -1]) >= plane or int(indices.max()) >= plane:
        return
    import warnings
    warnings.warn(f"max_unpooling: indices_layout=\"flat\" but every index is below {plane}, the size of one "
                  f"output plane, in an output of {planes} planes: every value lands in plane (0, 0). Indices "
                  "that count within each (n, c) plane, as torch.nn.functional.max_pool2d(..., "
                  "return_indices=True) gives them, need indices_layout=\"per-plane\" (or clops.max_unpool2d)",
                  UserWarning, stacklevel=3)


def _pair(v, what, least):
    import operator
    items = v if isinstance(v, (tuple, list)) else (v, v)
    try:
        if len(items) != 2 or any(isinstance(n, _core.BOOLS) for n in items):
            raise TypeError
        pair = tuple(operator.index(n) for n in items)
    except TypeError:
        raise TypeError(f"{what} must be an int or two ints, not {v!r}") from None
    if any(n < least for n in pair):
        raise ValueError(f"{what} {v!r}: each must be at least {least}")
    return pair


def _unpool_output_size(in_hw, kernel, stride, padding, output_size):
    """max_unpool2d's (H_out, W_out), by PyTorch's rule (torch.nn.functional._unpool_output_size): by default
    (H - 1) * stride - 2 * padding + kernel_size per dimension; a given output_size, (H, W) or a full 4-D
    shape (whose first two sizes are ignored, as PyTorch does), must lie strictly between that default minus
    and plus the stride."""
    default = tuple((n - 1) * s - 2 * p + k for n, s, p, k in zip(in_hw, stride, padding, kernel))
    if output_size is None:
        hw = default
    else:
        import operator
        try:
            sizes = tuple(output_size)
            if any(isinstance(n, _core.BOOLS) for n in sizes):
                raise TypeError
            sizes = tuple(operator.index(n) for n in sizes)
        except TypeError:
            raise TypeError(f"output_size must be (H, W) or (N, C, H, W) ints, not {output_size!r}") from None
        if len(sizes) == 4:
            sizes = sizes[2:]
        if len(sizes) != 2:
            raise ValueError(f"output_size should be a sequence containing 2 or 4 elements, but it has a length "
                             f"of '{len(tuple(output_size))}'")
        for d in range(2):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < sizes[d] < hi:
                raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {d} must be between {lo} and {hi})')
        hw = sizes
    if any(n < 0 for n in hw):
        raise ValueError(f"max_unpool2d: output size {hw} of input size {tuple(in_hw)}, kernel_size {kernel}, "
                         f"stride {stride} and padding {padding} is negative")
    return hw


def max_unpool2d(x, indices, kernel_size, stride=None, padding=0, output_size=None, *, device=None):
    """torch.nn.functional.max_unpool2d on clops: the inverse of max_pool2d(..., return_indices=True).

    x            (N, C, H, W) or (C, H, W): a torch CPU tensor (read in place through __dlpack__, or
                 __array__ for bool; bfloat16 as its 16-bit words), a NumPy array or a
                 pyopencl.array.Array, any fixed-width dtype
    indices      x's shape, int64 as max_pool2d gives them (uint32 and uint64 also taken), each counting
                 within its (n, c) output plane (indices_layout="per-plane" of clops.max_unpooling);
                 the same kind of array as x (a torch tensor and a NumPy array mix)
    kernel_size  int or (kH, kW); stride: int, (sH, sW) or None (= kernel_size); padding: int or (pH, pW)
    output_size  None: (H - 1) * stride - 2 * padding + kernel_size per dimension, PyTorch's default;
                 or (H_out, W_out), or a full shape (N, C, H_out, W_out) whose N and C are ignored as
                 PyTorch ignores them; each size strictly between that default minus and plus the stride
                 (PyTorch's check: ValueError outside)
    device       (keyword only, not PyTorch's) for NumPy and torch inputs: None, an index of
                 clops.devices(), or "host"

    Returns x's type: a new torch tensor (CPU, contiguous, sharing memory with the NumPy result), a NumPy
    array or a pyopencl array, shaped (N, C, H_out, W_out) or (C, H_out, W_out). Differentiable where x
    is a tensor that requires grad: the backward gathers the output's gradient at the same indices, as
    PyTorch's does, equal to F.max_unpool2d's gradient bit for bit (the indices get none).
    Zeros but where an index says; duplicate indices (overlapping pools): the element last in row-major
    order wins, as in PyTorch on the CPU. An index outside its plane raises ValueError (PyTorch raises
    RuntimeError), a bad argument ValueError or TypeError.
    """
    with _torch.quiet_tracer(x):  # a trace (ONNX export) records the sizes checked here as constants
        return _max_unpool2d(x, indices, kernel_size, stride, padding, output_size, device)


def _max_unpool2d(x, indices, kernel_size, stride, padding, output_size, device):
    k = _pair(kernel_size, "kernel_size", 1)
    s = k if stride is None else _pair(stride, "stride", 1)
    p = _pair(padding, "padding", 0)
    if not _torch.is_tensor(x) and not _core.is_cl_array(x):
        x = _core.as_numpy(x, "x")
    if not _torch.is_tensor(indices) and not _core.is_cl_array(indices):
        indices = _core.as_numpy(indices, "indices", numbers=True)
    if len(x.shape) not in (3, 4):
        raise ValueError(f"max_unpool2d: x must be 3-D (C, H, W) or 4-D (N, C, H, W), not {len(x.shape)}-D "
                         f"with shape {tuple(x.shape)}")
    if tuple(indices.shape) != tuple(x.shape):
        raise ValueError(f"max_unpool2d: indices' shape {tuple(indices.shape)} is not x's {tuple(x.shape)}")
    three = len(x.shape) == 3
    if three:
        x, indices = x.reshape((1,) + tuple(x.shape)), indices.reshape((1,) + tuple(indices.shape))
    hw = _unpool_output_size(tuple(x.shape[2:]), k, s, p, output_size)
    y = _unpool(x, indices, tuple(x.shape[:2]) + hw, _L.INDICES_PER_PLANE, device, (k, s, p))
    if three:
        y = y.reshape(tuple(y.shape[1:]))
    return y


class Prepared(_NamedTuple):
    """What clops.prepare() did: `total` programs of the selection, `built` (compiled now and stored in the
    cache), `cached` (in the cache already), `failed`, and `failures`: (source, build options, reason)
    of each failed one."""
    device: object            # the device index prepared, or "host" (nothing to build)
    total: int
    built: int
    cached: int
    failed: int
    failures: list


_OPS = {"depth_to_space": _L.SELECT_DEPTH_TO_SPACE, "depth-to-space": _L.SELECT_DEPTH_TO_SPACE,
        "d2s": _L.SELECT_DEPTH_TO_SPACE, "space_to_depth": _L.SELECT_SPACE_TO_DEPTH,
        "space-to-depth": _L.SELECT_SPACE_TO_DEPTH, "s2d": _L.SELECT_SPACE_TO_DEPTH,
        "max_unpooling": _L.SELECT_MAX_UNPOOLING, "max-unpooling": _L.SELECT_MAX_UNPOOLING,
        "unpool": _L.SELECT_MAX_UNPOOLING, "max_unpool2d": _L.SELECT_MAX_UNPOOLING}
_LAYOUTS = {"packed": _L.SELECT_PACKED, "nhwc": _L.SELECT_NHWC, "strided": _L.SELECT_STRIDED}


def _words(value, what):
    """prepare()'s selection `value` as a list: [] for None (all); an empty selection or word is refused (it
    would select nothing, and the library takes none as all)."""
    if value is None:
        return []
    words = value.split(",") if isinstance(value, str) else list(value)
    if not words or any(isinstance(w, str) and not w.strip() for w in words):
        raise ValueError(f"prepare: {what}: {value!r} has an empty selection or word (None selects all)")
    return words


def _selection_dtype(d):
    if isinstance(d, str) and d.lower() == "bfloat16":
        return _L.DATA_TYPE_BFLOAT16
    import numpy as np
    try:
        dt = np.dtype(d)
    except TypeError:
        raise TypeError(f"prepare: dtypes: {d!r} is not a NumPy dtype or \"bfloat16\"") from None
    code = _L.DATA_TYPES.get((dt.kind, dt.itemsize))
    if code is None:
        raise TypeError(f"prepare: dtype {dt} is not a type clops supports (bool, int8-64, uint8-64, "
                        "float16/32/64, complex64/128, \"bfloat16\")")
    return code


def _select_bits(words, what, table):
    """The CLOPS_SELECT_* bits of prepare()'s `words` (names in `table`), ValueError for another."""
    bits = 0
    for w in _words(words, what):
        bit = table.get(str(w).lower()) if isinstance(w, str) else None
        if bit is None:
            raise ValueError(f"prepare: {what}: {w!r} is not one of {sorted(table)}")
        bits |= bit
    return bits


def prepare(ops=None, dtypes=None, device=None, *, blocks=None, layouts=None, jobs=None, progress=None):
    """Builds the OpenCL programs of a selection of operator variants into clops's program cache, on every
    core, so that a service's first calls load them from disk instead of compiling (seconds per new dtype
    or pool variant on a CPU device). What `clops kernels build` does, through the library's
    clops_programs_prepare (docs/cache-and-tuning.md, "Warming up a service").

    ops      operator names: "depth_to_space" ("d2s"), "space_to_depth" ("s2d"), "max_unpooling"
             ("unpool", "max_unpool2d"), a list of them or a comma-separated string; None: all three
    dtypes   NumPy dtypes (or names, "bfloat16" too), a list; None: every type
    device   None (where device=None runs NumPy arrays: when that is the host backend, as on a machine
             whose only OpenCL device is a CPU, there is nothing to build), an index of clops.devices()
             (pyopencl arrays on that device, or device=N), or "host" (nothing to build)
    blocks   DepthToSpace/SpaceToDepth block sizes; None: 1 to 8
    layouts  "packed", "nhwc", "strided" (a list or comma-separated); None: all three
    jobs     building threads, each with a context of its own; None: one per online core
    progress None, or a callable(done, total, source, build_options, origin) called once per finished
             program (origin "compiled", "disk cache", or None when it failed), from the building threads,
             one call at a time; what it raises is raised by prepare once the build ends (and it is not
             called again)

    An empty selection (ops="", dtypes=[], blocks=[], an empty word) is a ValueError: None selects all.
    Returns a Prepared (device, total, built, cached, failed, failures). Raises ValueError or TypeError
    for a bad selection or device, and clops.Error when the cache is off or read-only
    (CLOPS_ERROR_CACHE_UNAVAILABLE) or when some programs failed (CLOPS_ERROR_BUILD_FAILED; the error's
    `prepared` attribute is the Prepared, with each failure's reason). The call releases the GIL while
    it builds.
    """
    import ctypes
    op_bits, layout_bits = _select_bits(ops, "ops", _OPS), _select_bits(layouts, "layouts", _LAYOUTS)
    if dtypes is not None and not isinstance(dtypes, (list, tuple, set, frozenset)):
        dtypes = [dtypes]
    types = sorted({_selection_dtype(d) for d in _words(dtypes, "dtypes")})
    block_list = []
    for b in _words(blocks, "blocks"):
        if isinstance(b, bool) or not isinstance(b, int) and not (isinstance(b, str) and b.isascii() and b.isdigit()):
            raise TypeError(f"prepare: blocks: {b!r} is not an int")
        if not 1 <= int(b) <= 0xFFFFFFFF:
            raise ValueError(f"prepare: blocks: {b} is not a block size (1 or more)")
        block_list.append(int(b))
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= 256):
        raise ValueError(f"prepare: jobs must be an int from 1 to 256, not {jobs!r}")
    if progress is not None and not callable(progress):
        raise TypeError(f"prepare: progress must be None or a callable, not {type(progress).__name__}")
    key = _core._device_key(device)
    if key[0] == "host":
        return Prepared("host", 0, 0, 0, 0, [])
    index = key[1]

    type_arr = (ctypes.c_int * max(1, len(types)))(*types)
    block_arr = (ctypes.c_uint32 * max(1, len(block_list)))(*block_list)
    sel = _L.ProgramSelection(op_bits, type_arr if types else None, len(types), block_arr if block_list else None,
                              len(block_list), layout_bits, None, 0)
    failures, raised = [], []

    def on_program(_user, p):
        p = p.contents
        source, options = p.source_name.decode(), p.build_options.decode()
        if p.status != 0:
            failures.append((source, options, f"{_L.name_of(p.status)}: {p.message.decode(errors='replace')}"))
        if progress is not None and not raised:  # after it raised once, not called again
            try:
                progress(p.done, p.total, source, options, p.origin.decode() if p.status == 0 else None)
            except BaseException as e:  # noqa: BLE001 (ctypes would print and drop it: raised after the build)
                raised.append(e)

    callback = _L.PREPARE_FN(on_program)
    report = _L.PrepareReport()
    st = _L.programs_prepare(index, ctypes.byref(sel), jobs or 0, callback, None, ctypes.byref(report))
    result = Prepared(index, report.total, report.built, report.cached, report.failed, failures)
    if raised:
        raise raised[0]
    if st != 0:
        err = _L.exception(st)
        if report.failed:
            shown = "; ".join(f"{s} {o}: {why}" for s, o, why in failures[:3])
            err = _L.exception(st, f"{report.failed} of {report.total} programs failed: {shown}")
        err.prepared = result
        raise err
    return result


def clear_cache():
    """Frees the operators and contexts clops keeps between calls (each is made again when next needed).
    Contexts made on pyopencl queues hold those queues until then (at most 16 are kept)."""
    _core.clear_caches()
