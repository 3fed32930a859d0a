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
is made.
"""
import functools

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
    """Whether x needs a derivative: it requires grad in grad mode, or it is a dual tensor (forward-mode AD)
    with a tangent."""
    torch = _torch_modules()
    if x.requires_grad and torch.is_grad_enabled():
        return True
    forward_ad = torch.autograd.forward_ad
    if getattr(forward_ad, "_current_level", 0) < 0:  # outside every dual_level(): no tangent (cheap test)
        return False
    return forward_ad.unpack_dual(x).tangent is not None


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


def max_unpooling(x, indices, out_shape, layout, device):
    """MaxUnpooling of a 4-D CPU tensor x (indices: a tensor or a NumPy array): a new tensor, with a gradient
    for x where it needs one (the indices have none)."""
    if _needs_grad(x):
        return _functions().Unpool.apply(x, indices, out_shape, layout, device)
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
            return to_tensor(_core.run_depth_space(optype, to_numpy(x, "x"), block, order, device), x)

        @staticmethod
        def backward(ctx, grad):
            optype, block, order, device = ctx.args
            return (depth_space(_INVERSE[optype], grad, block, order, device), None, None, None, None)

        @staticmethod
        def jvp(ctx, tangent, *_):  # forward-mode AD: the operator is linear, the tangent moves as x does
            optype, block, order, device = ctx.args
            return depth_space(optype, tangent, block, order, device)

    class ClopsMaxUnpooling(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, indices, out_shape, layout, device):
            y = _core.run_max_unpooling(to_numpy(x, "x"), _indices_numpy(indices), out_shape, layout, device)
            ctx.layout = layout
            ctx.save_for_backward(_index_tensor(indices))
            ctx.forward_args = (indices, out_shape, layout, device)
            return to_tensor(y, x)

        @staticmethod
        def backward(ctx, grad):
            return (_gather(grad, ctx.saved_tensors[0], ctx.layout), None, None, None, None)

        @staticmethod
        def jvp(ctx, tangent, *_):  # forward-mode AD: the tangent unpooled by the same indices
            return max_unpooling(tangent, *ctx.forward_args)

    return SimpleNamespace(DepthSpace=ClopsDepthSpace, Unpool=ClopsMaxUnpooling)
