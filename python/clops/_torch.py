"""_torch.py - torch tensors in, torch tensors out, with autograd.

A CPU tensor goes to clops as a NumPy array on its own memory (no copy: __dlpack__, or __array__ for
bool). A torch dtype that NumPy lacks (bfloat16) goes as the integers of its width, whose bits these
operators move unchanged, and the result is viewed back as that dtype. The result is a new contiguous
tensor sharing memory with the NumPy array clops wrote.

The operators are differentiable (torch.autograd.Function), and their backwards are bit-exact too:
- DepthToSpace and SpaceToDepth (pixel_shuffle, pixel_unshuffle): the backward of one is the other, with
  the same block size and order, run by clops on the same device (what PyTorch's derivatives of
  pixel_shuffle and pixel_unshuffle are).
- MaxUnpooling (max_unpool2d): the backward gathers the output's gradient at the same indices, as
  PyTorch's does (grad.gather in max_pool_double_backward); with torch.gather, since clops has no gather
  operator. Gathering only moves elements, so the gradient is equal bit for bit.
Each backward is made of differentiable operations, so double backward works as in PyTorch. Forward-mode
AD (dual tensors): each operator is linear, so the tangent goes through the same operator (jvp). Where no
derivative is needed (torch.no_grad(), a tensor that neither requires grad nor has a tangent) no Function
is made, except under tracing (torch.jit.trace, torch.onnx.export), where the Function is always applied
so that the trace records it (a call outside it would be recorded as a Constant of its result).

ONNX export: each Function has a `symbolic` (torch.onnx.export calls it on the traced Function) that
writes ONNX's own node: DepthToSpace (mode DCR or CRD), SpaceToDepth (DCR; CRD, pixel_unshuffle's order,
which ONNX has no mode for, as SpaceToDepth followed by the channel permutation, Reshape-Transpose-Reshape)
and MaxUnpool, PyTorch's per-plane indices made flat inside the graph (plus (n * C + c) * H_out * W_out).
An argument ONNX cannot express raises torch.onnx.errors.OnnxExporterError naming it (docs/onnx.md).
"""
import contextlib
import functools
import warnings

import numpy as np

from . import _core
from . import _lib as L

_INVERSE = {L.OP_DEPTH_TO_SPACE: L.OP_SPACE_TO_DEPTH, L.OP_SPACE_TO_DEPTH: L.OP_DEPTH_TO_SPACE}


def is_tensor(a):
    """Whether `a` is a torch tensor (torch.nn.Parameter too), without importing torch."""
    t = type(a)
    return t.__module__.split(".")[0] == "torch" and hasattr(a, "__dlpack__")


@functools.lru_cache(maxsize=None)
def _bits_types():
    """torch dtypes NumPy has no type for, and the integer type of the same width their bits move as."""
    import torch
    return {torch.bfloat16: torch.int16}


def to_numpy(a, what):
    """A NumPy array on a CPU tensor's memory (no copy: __dlpack__, or __array__ for the types DLPack lacks
    here, bool for one), detached; a lazy conjugate or negation is resolved first (that alone copies). A
    bfloat16 tensor gives its bits as int16 (to_tensor views the result back)."""
    if a.device.type != "cpu":
        raise TypeError(f"{what}: a torch tensor on {a.device}; clops takes CPU tensors (use .cpu(), or "
                        "pyopencl arrays for an OpenCL device)")
    t = a.detach()
    for resolve in ("resolve_conj", "resolve_neg"):
        if hasattr(t, resolve):
            t = getattr(t, resolve)()
    bits = _bits_types().get(t.dtype)
    if bits is not None:
        t = t.view(bits)
    try:
        return np.from_dlpack(t)
    except (AttributeError, BufferError, RuntimeError, TypeError):
        try:
            return np.asarray(t)  # Tensor.__array__: Tensor.numpy(), no copy
        except (RuntimeError, TypeError) as e:
            raise TypeError(f"{what}: torch dtype {t.dtype} has no NumPy type clops takes ({e})") from None


def to_tensor(out, like):
    """The NumPy result `out` as a tensor of `like`'s dtype (no copy: bfloat16 is a view of the int16 bits)."""
    import torch
    t = torch.from_numpy(out)
    return t if t.dtype == like.dtype else t.view(like.dtype)


def _needs_grad(x):
    """Whether x needs a Function: it requires grad in grad mode, it is a dual tensor (forward-mode AD) with
    a tangent, or a trace is being recorded (torch.jit.trace, torch.onnx.export, which runs under no_grad:
    only the Function's node is traced and exported; the operator run outside one would be a Constant)."""
    torch = _torch_modules()
    if x.requires_grad and torch.is_grad_enabled():
        return True
    if torch._C._get_tracing_state() is not None:
        return True
    forward_ad = torch.autograd.forward_ad
    if getattr(forward_ad, "_current_level", 0) < 0:  # outside every dual_level(): no tangent (cheap test)
        return False
    return forward_ad.unpack_dual(x).tangent is not None


def tracing(x):
    """Whether x is a torch tensor and a trace is being recorded (torch.jit.trace, torch.onnx.export)."""
    return is_tensor(x) and _torch_modules()._C._get_tracing_state() is not None


@contextlib.contextmanager
def quiet_tracer(x):
    """Under tracing: no TracerWarning for clops's own work, whose sizes are meant to be the traced ones
    (argument checks, the output size, the operator's result made a tensor inside its Function: the export
    writes the Function's symbolic, not that). Otherwise nothing (warnings.catch_warnings is not cheap)."""
    if not tracing(x):
        yield
        return
    import torch.jit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        yield


@functools.lru_cache(maxsize=None)
def _torch_modules():
    """torch, with torch.autograd.forward_ad imported (once: not on every call)."""
    import torch
    import torch.autograd.forward_ad  # noqa: F401
    return torch


# ---- DepthToSpace and SpaceToDepth ------------------------------------------------------------------


def depth_space(optype, x, block, order, device):
    """DepthToSpace or SpaceToDepth of a 4-D CPU tensor: a new tensor, with a gradient where x needs one."""
    if _needs_grad(x):
        return _functions().DepthSpace.apply(x, optype, block, order, device)
    return to_tensor(_core.run_depth_space(optype, to_numpy(x, "x"), block, order, device), x)


# ---- MaxUnpooling -----------------------------------------------------------------------------------


def _indices_numpy(indices):
    return to_numpy(indices, "indices") if is_tensor(indices) else indices


def max_unpooling(x, indices, out_shape, layout, device, pool=None):
    """MaxUnpooling of a 4-D CPU tensor x (indices: a tensor or a NumPy array): a new tensor, with a gradient
    for x where it needs one (the indices have none). `pool`: (kernel, stride, padding) pairs of
    max_unpool2d, None for max_unpooling; used only by the ONNX export (MaxUnpool's attributes)."""
    if _needs_grad(x):
        with quiet_tracer(x):  # for the symbolic: the sizes as traced (0-d tensors under tracing), as ints
            out_shape = tuple(int(n) for n in out_shape)
            geometry = (tuple(int(n) for n in x.shape[2:]), pool)
        return _functions().Unpool.apply(x, indices, out_shape, layout, device, geometry)
    y = _core.run_max_unpooling(to_numpy(x, "x"), _indices_numpy(indices), out_shape, layout, device)
    return to_tensor(y, x)


def _index_tensor(indices):
    """The indices as an int64 tensor for _gather, after the forward accepted them: a tensor as it is (saved
    for backward, which checks that it is not changed in place), a NumPy array copied (any index dtype
    and byte order; in range, so int64 holds them; a copy, so that a later change cannot reach backward)."""
    import torch
    if is_tensor(indices):
        return indices
    return torch.from_numpy(np.array(indices, dtype=np.int64))


def _gather(grad, indices, layout):
    """MaxUnpooling's backward: the gradient of the output gathered at each index, in the indices' shape
    (per plane: within the plane (n, c), as PyTorch's max_unpool2d backward gathers; flat: over the whole
    output)."""
    idx = indices.long()
    if layout == L.INDICES_PER_PLANE:
        n, c, h, w = grad.shape
        g = grad.contiguous().view(n, c, h * w)
        return g.gather(2, idx.reshape(n, c, -1)).view(idx.shape)
    return grad.contiguous().view(-1).gather(0, idx.reshape(-1)).view(idx.shape)


@functools.lru_cache(maxsize=None)
def _functions():
    """The autograd Functions, made on first use (so that importing clops does not import torch)."""
    import torch
    from types import SimpleNamespace

    class ClopsDepthSpace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, optype, block, order, device):
            ctx.args = (optype, block, order, device)
            with quiet_tracer(x):
                return to_tensor(_core.run_depth_space(optype, to_numpy(x, "x"), block, order, device), x)

        @staticmethod
        def backward(ctx, grad):
            optype, block, order, device = ctx.args
            return (depth_space(_INVERSE[optype], grad, block, order, device), None, None, None, None)

        @staticmethod
        def jvp(ctx, tangent, *_):  # forward-mode AD: the operator is linear, the tangent moves as x does
            optype, block, order, device = ctx.args
            return depth_space(optype, tangent, block, order, device)

        @staticmethod
        def symbolic(g, x, optype, block, order, device):
            with _graph_op_warnings():
                return _onnx_depth_space(g, x, optype, block, order)

    class ClopsMaxUnpooling(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, indices, out_shape, layout, device, geometry):
            y = _core.run_max_unpooling(to_numpy(x, "x"), _indices_numpy(indices), out_shape, layout, device)
            ctx.layout = layout
            ctx.save_for_backward(_index_tensor(indices))
            ctx.forward_args = (indices, out_shape, layout, device, geometry[1])
            with quiet_tracer(x):
                return to_tensor(y, x)

        @staticmethod
        def backward(ctx, grad):
            return (_gather(grad, ctx.saved_tensors[0], ctx.layout), None, None, None, None, None)

        @staticmethod
        def jvp(ctx, tangent, *_):  # forward-mode AD: the tangent unpooled by the same indices
            return max_unpooling(tangent, *ctx.forward_args)

        @staticmethod
        def symbolic(g, x, indices, out_shape, layout, device, geometry):
            with _graph_op_warnings():
                return _onnx_max_unpool(g, x, indices, out_shape, layout, geometry)

    return SimpleNamespace(DepthSpace=ClopsDepthSpace, Unpool=ClopsMaxUnpooling)


# ---- ONNX export: the Functions' symbolics -----------------------------------------------------------

_ONNX_INT64 = 7  # onnx.TensorProto.INT64 (Cast's `to`)
_UNPOOL_TYPES = ("Half", "Float", "Double")  # MaxUnpool's T1 (opsets 9 and 11), as torch names them


def _export_error(message):
    """torch.onnx's error for what ONNX cannot express (a RuntimeError), so that the export fails rather
    than writing a graph that does something else."""
    import torch.onnx
    error = getattr(getattr(torch.onnx, "errors", None), "OnnxExporterError", RuntimeError)
    return error(message)


@contextlib.contextmanager
def _graph_op_warnings():
    """torch 1.13 gives an autograd Function's symbolic a torch._C.Graph, whose g.op (the documented way to
    write nodes there) warns FutureWarning that it is deprecated, once per node; later torch versions give a
    GraphContext. Those warnings are not the caller's to act on: ignored while a symbolic writes its nodes."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*_graph_op' is deprecated", category=FutureWarning)
        yield


def _opset(g):
    """The opset the export writes: the graph context's (torch >= 1.13 gives one to most symbolics), else
    the exporter's global setting."""
    opset = getattr(g, "opset", None)
    if opset is None:
        try:
            from torch.onnx._globals import GLOBALS
            opset = GLOBALS.export_onnx_opset_version
        except ImportError:  # torch < 1.13
            from torch.onnx import symbolic_helper
            opset = symbolic_helper._export_onnx_opset_version
    return opset


def _int64s(g, values):
    """A Constant of int64s: a 1-D tensor of a list, a scalar of an int."""
    import torch
    return g.op("Constant", value_t=torch.tensor(values, dtype=torch.int64))


def _onnx_depth_space(g, x, optype, block, order):
    """DepthToSpace (mode DCR or CRD: ONNX's `mode` from opset 11 on) or SpaceToDepth (DCR; CRD, which
    ONNX's SpaceToDepth has no mode for, as SpaceToDepth DCR followed by the permutation of its channels
    from (b*b, C) to (C, b*b): Reshape to (N, b*b, C, H', W'), Transpose, Reshape back, the shapes taken
    from the input's Shape at run time)."""
    crd = order == L.ORDER_CRD
    if optype == L.OP_DEPTH_TO_SPACE:
        if not crd:
            return g.op("DepthToSpace", x, blocksize_i=block)
        if _opset(g) < 11:
            raise _export_error(f"clops.pixel_shuffle / depth_to_space(order=\"CRD\") exports as ONNX DepthToSpace "
                                f"with mode=\"CRD\", which needs opset_version >= 11 (this export: "
                                f"{_opset(g)})")
        return g.op("DepthToSpace", x, blocksize_i=block, mode_s="CRD")
    y = g.op("SpaceToDepth", x, blocksize_i=block)
    if not crd or block == 1:
        return y
    shape = g.op("Shape", y)
    n, c, hw = (g.op("Gather", shape, _int64s(g, i), axis_i=0) for i in ([0], [1], [2, 3]))
    split = g.op("Concat", n, _int64s(g, [block * block]), g.op("Div", c, _int64s(g, [block * block])), hw,
                 axis_i=0)
    moved = g.op("Transpose", g.op("Reshape", y, split), perm_i=[0, 2, 1, 3, 4])
    return g.op("Reshape", moved, shape)


def _unpool_attributes(in_hw, out_hw, pool):
    """MaxUnpool's kernel_shape, strides and pads. The output_shape input fixes the output, and the flat
    indices say where each value goes, so these only need to be valid: ONNX Runtime requires each pad to be
    below the kernel and output_shape to be no smaller than (in - 1) * stride + kernel - pads per axis.
    max_unpool2d's own pool where it satisfies both; else (a ceil-mode pool, or max_unpooling, which has no
    pool) per axis kernel 1, stride 1 (that size is `in`) where out >= in, and kernel in - out + 1 with
    pads in - out on both sides (that size is `out`) where out < in."""
    if pool is not None:
        k, s, p = pool
        if all(pp < kk and (i - 1) * ss + kk - 2 * pp <= o for i, o, kk, ss, pp in zip(in_hw, out_hw, k, s, p)):
            return list(k), list(s), list(p) * 2
    kernel, pads = [], []
    for i, o in zip(in_hw, out_hw):
        kernel.append(1 if o >= i else i - o + 1)
        pads.append(0 if o >= i else i - o)
    return kernel, [1] * len(kernel), pads * 2


def _onnx_max_unpool(g, x, indices, out_shape, layout, geometry):
    """MaxUnpool with output_shape = (N, C of x, H_out, W_out), and the indices made flat over the whole
    output as ONNX's are: per-plane ones (PyTorch's max_pool2d's) plus (n * C + c) * H_out * W_out. From
    opset 11 on, N and C are read from x's Shape at run time (Range makes the plane numbers), so a dynamic
    batch exports; at opsets 9 and 10 (no Range) they are the traced ones, as constants. The spatial output
    size is the traced call's (a constant). NumPy indices become a Constant."""
    import torch
    opset = _opset(g)
    if opset < 9:
        raise _export_error(f"clops.max_unpool2d / max_unpooling exports as ONNX MaxUnpool, which needs "
                            f"opset_version >= 9 (this export: {opset})")
    dtype = x.type().scalarType()
    if dtype not in _UNPOOL_TYPES:
        raise _export_error(f"clops.max_unpool2d / max_unpooling of a {dtype} tensor: ONNX MaxUnpool takes only "
                            "float16, float32 and float64 values, so this call has no ONNX form (clops runs every "
                            "type; export a model whose unpooled tensors are floats)")
    in_hw, pool = geometry
    n, c, h_out, w_out = out_shape
    plane = h_out * w_out
    if not isinstance(indices, torch._C.Value):  # NumPy indices: a Constant
        indices = g.op("Constant", value_t=torch.from_numpy(np.array(indices, dtype=np.int64)))
    elif indices.type().scalarType() != "Long":
        indices = g.op("Cast", indices, to_i=_ONNX_INT64)
    if opset >= 11:
        nc = g.op("Gather", g.op("Shape", x), _int64s(g, [0, 1]), axis_i=0)
        size = g.op("Concat", nc, _int64s(g, [h_out, w_out]), axis_i=0)
    else:
        size = _int64s(g, [n, c, h_out, w_out])
    if layout == L.INDICES_PER_PLANE:
        if opset >= 11:
            planes = g.op("ReduceProd", nc, keepdims_i=0)
            first = g.op("Range", _int64s(g, 0), planes, _int64s(g, 1))
            first = g.op("Mul", first, _int64s(g, plane))
            offsets = g.op("Reshape", first, g.op("Concat", nc, _int64s(g, [1, 1]), axis_i=0))
        else:
            offsets = _int64s(g, (np.arange(n * c, dtype=np.int64).reshape(n, c, 1, 1) * plane).tolist())
        indices = g.op("Add", indices, offsets)
    kernel, strides, pads = _unpool_attributes(in_hw, (h_out, w_out), pool)
    return g.op("MaxUnpool", x, indices, size, kernel_shape_i=kernel, strides_i=strides, pads_i=pads)
