"""clops: DirectML-style DepthToSpace, SpaceToDepth and MaxUnpooling on any OpenCL device, or on the host.

    import numpy as np, clops
    x = np.arange(48, dtype=np.float32).reshape(1, 8, 2, 3)
    y = clops.depth_to_space(x, 2)                       # (1, 2, 4, 6), DCR, default device
    z = clops.space_to_depth(y, 2, order="dcr", device="host")
    assert (z == x).all()

Inputs are NumPy arrays of any fixed-width dtype (bool, int/uint 8-64, float16/32/64, complex64/128) in
any strides (passed to clops as strides, not copied), or pyopencl arrays (run on the array's own queue;
the package does not wait for them, but for max_unpooling's status, and copies nothing through the host;
an operator clops runs on the host path on that device follows the C API's fallback rule,
clops_operator_execute in clops.h). Results are bit-exact: these operators only move elements. Bad
arguments raise ValueError or TypeError with the library's message; failures of the device raise
clops.Error.
"""
from typing import NamedTuple

from . import _core
from . import _lib as L
from ._lib import Error

__all__ = ["__version__", "Device", "Error", "devices", "depth_to_space", "space_to_depth", "max_unpooling",
           "clear_cache"]

__version__ = L.version_string().decode()


class Device(NamedTuple):
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
    L.check(L.device_string(ctypes.byref(info), what, None, 0, ctypes.byref(n)))
    buf = ctypes.create_string_buffer(n.value + 1)
    L.check(L.device_string(ctypes.byref(info), what, buf, len(buf), None))
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
    L.check(L.device_list(None, 0, ctypes.byref(count)))
    infos = (L.DeviceInfo * max(1, count.value))()
    L.check(L.device_list(infos, count.value, ctypes.byref(count)))
    result = []
    for info in infos[:count.value]:
        n = L.device_plan(ctypes.byref(info), None, 0)
        plan = ctypes.create_string_buffer(n + 1)
        L.device_plan(ctypes.byref(info), plan, len(plan))
        result.append(Device(
            info.index, _device_string(info, L.DEVICE_STRING_DEVICE_NAME),
            _device_string(info, L.DEVICE_STRING_PLATFORM_NAME), _device_type(info.type),
            _device_string(info, L.DEVICE_STRING_DEVICE_VERSION),
            _device_string(info, L.DEVICE_STRING_DRIVER_VERSION),
            _device_string(info, L.DEVICE_STRING_OPENCL_C_VERSION), bool(info.has_fp16), bool(info.has_fp64),
            bool(info.has_int64), bool(info.compiler_available), info.max_alloc_bytes,
            plan.value.decode(errors="replace")))
    return result


def _block(block_size):
    import operator
    try:
        if isinstance(block_size, bool):  # an int to operator.index, but True is no block size
            raise TypeError
        b = operator.index(block_size)
    except TypeError:
        raise TypeError(f"block_size must be an int, not {type(block_size).__name__}") from None
    if not 0 <= b <= _core.U32_MAX:
        raise ValueError(f"block size {b} must be at least 1 (and below 2^32)")
    return b  # 0 goes to clops, which says why


def _order(order):
    o = {"DCR": L.ORDER_DCR, "CRD": L.ORDER_CRD}.get(order.upper() if isinstance(order, str) else None)
    if o is None:
        raise ValueError(f"order {order!r}: expected \"DCR\" or \"CRD\" (any case)")
    return o


def _depth_space(optype, x, block_size, order, device):
    b, o = _block(block_size), _order(order)
    if _core.is_cl_array(x):
        if device is not None:
            raise ValueError("device= is for NumPy arrays: a pyopencl array runs on its own queue")
        return _core.run_cl(optype, x, block=b, order=o)
    x = _core.as_numpy(x, "x")
    ctx = _core.context_for(device)
    tx = _core.tensor_key(x, "x")
    op = _core.depth_space_operator(ctx, optype, tx, b, o)
    return _core.run_host(op, x, tx[2])


def depth_to_space(x, block_size, order="DCR", device=None):
    """DepthToSpace: (N, C, H, W) -> (N, C/b^2, H*b, W*b), as DirectML and ONNX define it.

    x           a 4-D NumPy array of a fixed-width dtype, in any strides (views, channels-last), or a
                pyopencl.array.Array (then the result is one too, on x's queue, after x's events; x
                needs a queue, a cl_mem buffer (not SVM) and strides >= 0: NumPy views with negative
                strides are copied, pyopencl ones raise ValueError)
    block_size  b >= 1; C must be divisible by b^2
    order       "DCR" (DirectML's and ONNX's default) or "CRD" (PyTorch's pixel_shuffle); any case
    device      None (clops's default device: CLOPS_DEVICE, else the first GPU, else any, else the host),
                an index of clops.devices(), or "host"

    Returns a new C-contiguous array of x's dtype. Raises ValueError (shapes, block size, order, device)
    or TypeError (dtype) with the library's message, clops.Error for a device failure.
    """
    return _depth_space(L.OP_DEPTH_TO_SPACE, x, block_size, order, device)


def space_to_depth(x, block_size, order="DCR", device=None):
    """SpaceToDepth: (N, C, H, W) -> (N, C*b^2, H/b, W/b), the inverse of depth_to_space.

    x           a 4-D NumPy array of a fixed-width dtype, in any strides, or a pyopencl.array.Array
    block_size  b >= 1; H and W must be divisible by b
    order       "DCR" or "CRD" (PyTorch's pixel_unshuffle); any case
    device      None (the default device), an index of clops.devices(), or "host"

    Returns a new C-contiguous array of x's dtype (a pyopencl array on x's queue for a pyopencl x).
    Raises ValueError or TypeError with the library's message, clops.Error for a device failure.
    """
    return _depth_space(L.OP_SPACE_TO_DEPTH, x, block_size, order, device)


def max_unpooling(x, indices, output_shape, indices_layout="flat", device=None):
    """MaxUnpooling: a zero-filled array of output_shape with each x element written where its index says.

    x               a 4-D NumPy array (any fixed-width dtype, any strides) or a pyopencl.array.Array
    indices         x's shape; dtype uint32, uint64 or int64 (what ONNX and PyTorch give); a pyopencl
                    array when x is one
    output_shape    (N, C, H_out, W_out); N and C as x's
    indices_layout  "flat": an index counts over the whole packed output (DirectML, ONNX MaxUnpool);
                    "per-plane": within the output plane (n, c), as torch.nn.functional.max_pool2d(...,
                    return_indices=True) gives them. Any case.
    device          None (the default device), an index of clops.devices(), or "host"

    Duplicate indices: the element last in row-major order wins. Returns a new C-contiguous array (a
    pyopencl array on x's queue for a pyopencl x; that call waits for the operator to learn whether
    every index was in range). An index negative or past the output raises ValueError and returns no
    result; a bad shape or dtype ValueError or TypeError; a device failure clops.Error.
    """
    shape = _core.output_shape_arg(output_shape)
    layout = {"flat": L.INDICES_FLAT, "per-plane": L.INDICES_PER_PLANE}.get(
        indices_layout.lower() if isinstance(indices_layout, str) else None)
    if layout is None:
        raise ValueError(f"indices_layout {indices_layout!r}: expected \"flat\" or \"per-plane\"")
    if _core.is_cl_array(x):
        if device is not None:
            raise ValueError("device= is for NumPy arrays: a pyopencl array runs on its own queue")
        return _core.run_cl(L.OP_MAX_UNPOOLING, x, idx=indices, out_shape=shape, layout=layout)
    if _core.is_cl_array(indices):
        raise TypeError("indices is a pyopencl array but x is not: pass both as pyopencl arrays or neither")
    x = _core.as_numpy(x, "x")
    indices = _core.as_numpy(indices, "indices", numbers=True)  # read as numbers: see _core.byte_order
    ctx = _core.context_for(device)
    tx, ti = _core.tensor_key(x, "x"), _core.tensor_key(indices, "indices")
    op = _core.max_unpooling_operator(ctx, tx, ti, shape, layout)
    return _core.run_host(op, x, tx[2], indices, ti[2])


def clear_cache():
    """Frees the operators and contexts clops keeps between calls (each is made again when next needed).
    Contexts made on pyopencl queues hold those queues until then (at most 16 are kept)."""
    _core.clear_caches()
