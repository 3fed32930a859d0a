"""clops.onnx: run an ONNX model on ONNX Runtime with its DepthToSpace, SpaceToDepth and MaxUnpool nodes on clops.

    import clops.onnx
    sess = clops.onnx.InferenceSession("espcn.onnx", providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, {"x": x})          # as onnxruntime.InferenceSession.run

Needs the optional packages onnx and onnxruntime (`pip install 'clops[onnx]'`); without them, making an
InferenceSession raises ImportError naming the extra (importing this module does not need them).

How: the graph is split. Each DepthToSpace, SpaceToDepth and MaxUnpool node of the main graph (domain
ai.onnx) whose data input has a type clops takes runs on clops (clops.depth_to_space, space_to_depth,
max_unpooling, on `device`); every other node runs on ONNX Runtime, in sub-models of the original nodes
between them, each an onnxruntime.InferenceSession made with the caller's options. Values cross between
them as NumPy arrays; a clops node writes into its previous output's memory once no array of that is left
(as ONNX Runtime's arena reuses its buffers). Nodes are grouped into as few sub-models as their
dependencies allow: an ONNX Runtime node goes into the first sub-model after every clops node it depends
on. docs/onnx.md says why this mechanism (not a custom-op library) and what differs from a plain
onnxruntime.InferenceSession.
"""
import importlib
import threading
import weakref

import numpy as np

from . import _core, _block, _order
from . import depth_to_space as _depth_to_space, max_unpooling as _max_unpooling, space_to_depth as _space_to_depth

__all__ = ["InferenceSession", "CLOPS_OPS"]

EXTRA = "pip install 'clops[onnx]'"
CLOPS_OPS = ("DepthToSpace", "SpaceToDepth", "MaxUnpool")

_import = importlib.import_module  # the seam test_onnx_extra.py replaces to simulate a missing package


def _require():
    """(onnx, onnxruntime), or ImportError naming the extra and each package that is missing."""
    mods, missing = [], []
    for name in ("onnx", "onnxruntime"):
        try:
            mods.append(_import(name))
        except ImportError as e:
            missing.append(f"{name} ({e})")
    if missing:
        raise ImportError(f"clops.onnx needs the optional packages onnx and onnxruntime; missing: "
                          f"{'; '.join(missing)}. Install them with: {EXTRA} (or pip install onnx onnxruntime)",
                          name=missing[0].split()[0])
    mods.append(_import("onnx.numpy_helper"))
    return tuple(mods)


# ---- errors: ONNX Runtime's exception classes, and ValueError ------------------------------------------

_ERRORS = {}


def _error(kind):
    """An exception class that is both ValueError (what clops.onnx raised before) and onnxruntime's
    exception of that kind (onnxruntime.capi.onnxruntime_pybind11_state.InvalidArgument, Fail or
    InvalidGraph): what ONNX Runtime raises for the same model or feed."""
    cls = _ERRORS.get(kind)
    if cls is None:
        ort_cls = getattr(_import("onnxruntime").capi.onnxruntime_pybind11_state, kind)
        cls = _ERRORS[kind] = type(kind, (ValueError, ort_cls), {"__module__": __name__})
    return cls


# ---- types: TensorProto element types clops moves, and ONNX Runtime's type strings ----------------------

# TensorProto.DataType -> NumPy dtype, for the fixed-width types that NumPy and clops both have
# (not STRING, BFLOAT16 or the float8/int4 types: ONNX Runtime's Python API gives no NumPy array of them).
_NP_TYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
             9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64, 14: np.complex64,
             15: np.complex128}


_ONNX_OF = {np.dtype(t): e for e, t in _NP_TYPES.items()}


def _type_string(tp, onnx):
    """A TypeProto as ONNX Runtime's NodeArg.type writes it: tensor(float), seq(tensor(int64)), ..."""
    kind = tp.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        name = onnx.TensorProto.DataType.Name(getattr(tp, kind).elem_type).lower()
        return f"{'sparse_' if kind == 'sparse_tensor_type' else ''}tensor({name})"
    if kind == "sequence_type":
        return f"seq({_type_string(tp.sequence_type.elem_type, onnx)})"
    if kind == "optional_type":
        return f"optional({_type_string(tp.optional_type.elem_type, onnx)})"
    if kind == "map_type":
        key = onnx.TensorProto.DataType.Name(tp.map_type.key_type).lower()
        return f"map({key},{_type_string(tp.map_type.value_type, onnx)})"
    return "unknown"


def _shape_list(tp):
    """NodeArg.shape: each dimension an int, a symbolic name or None; [] when the shape is unknown."""
    kind = tp.WhichOneof("value")
    if kind not in ("tensor_type", "sparse_tensor_type") or not getattr(tp, kind).HasField("shape"):
        return []
    return [d.dim_value if d.HasField("dim_value") else d.dim_param if d.HasField("dim_param") else None
            for d in getattr(tp, kind).shape.dim]


class NodeArg:
    """What get_inputs() and get_outputs() return: name, type and shape, as onnxruntime.NodeArg has them."""
    __slots__ = ("name", "type", "shape")

    def __init__(self, name, type, shape):
        self.name, self.type, self.shape = name, type, shape

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


class ModelMetadata:
    """What get_modelmeta() returns: the fields of onnxruntime.ModelMetadata, read from the model."""

    def __init__(self, model):
        self.producer_name, self.domain, self.version = model.producer_name, model.domain, model.model_version
        self.description, self.graph_name = model.doc_string, model.graph.name
        self.graph_description = model.graph.doc_string
        self.custom_metadata_map = {p.key: p.value for p in model.metadata_props}


# ---- the graph: which names a node reads, and which nodes clops runs ---------------------------------


def _subgraph_refs(graph):
    """Names a subgraph (an If's branch, a Loop's body) reads from the scopes around it."""
    defined = {v.name for v in graph.input} | {t.name for t in graph.initializer}
    defined |= {t.values.name for t in graph.sparse_initializer}
    refs = []
    for node in graph.node:
        refs += [r for r in _node_refs(node) if r not in defined]
        defined.update(node.output)
    refs += [v.name for v in graph.output if v.name not in defined]
    return refs


def _node_refs(node):
    """Every name `node` reads: its inputs (not the empty name of an omitted optional input) and the
    outer-scope names its subgraphs read, each once, in order."""
    refs = [n for n in node.input if n]
    for a in node.attribute:
        for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
            refs += _subgraph_refs(g)
    return list(dict.fromkeys(refs))


def _attr(node, name, default, onnx):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def _mode(value):
    """DepthToSpace's `mode`: bytes in a ModelProto (helper.get_attribute_value), str when built by hand.
    Case-sensitive, as ONNX Runtime's kernel reads it ("crd" is refused)."""
    mode = value.decode() if isinstance(value, bytes) else str(value)
    if mode not in ("DCR", "CRD"):
        raise _error("Fail")(f"DepthToSpace: mode {mode!r} is neither DCR nor CRD (SpaceDepth op: only 'DCR' "
                             "and 'CRD' modes are supported)")
    return mode


def _clops_candidate(node):
    """A DepthToSpace, SpaceToDepth or MaxUnpool of the default domain (clops runs it where its type allows)."""
    return node.op_type in CLOPS_OPS and node.domain in ("", "ai.onnx") and bool(node.input)


# ---- the types of the graph's values: declared, else inferred, never by MaxUnpool's inference -----------

# The domain, without a schema, that MaxUnpool nodes are moved to in the copy of the model given to
# onnx.shape_inference: onnx's MaxUnpool inference reads the indices' shape without checking that there is
# one (dimension 1 of an empty shape: onnx 1.12 crashes the interpreter on a valid model whose indices have
# no declared shape, findings R2). Their outputs are typed by _value_types instead.
_NO_INFERENCE = "clops.onnx.no-inference"


def _nodes_under(nodes):
    """`nodes` and the nodes of every subgraph in them (If branches, Loop and Scan bodies), recursively."""
    for node in nodes:
        yield node
        for a in node.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                yield from _nodes_under(g.node)


def _typed(v):
    """Whether a ValueInfoProto has a type (a tensor type with an element type, or another kind)."""
    kind = v.type.WhichOneof("value")
    return kind is not None and not (kind == "tensor_type" and v.type.tensor_type.elem_type == 0)


def _tensor_shape(v):
    """A tensor ValueInfoProto's TensorShapeProto, or None (no type, not a tensor, or no shape)."""
    if v is None or v.type.WhichOneof("value") != "tensor_type" or not v.type.tensor_type.HasField("shape"):
        return None
    return v.type.tensor_type.shape


def _output_shape(node, info, onnx):
    """The output shape of a clops candidate as onnx's shape inference gives it (where that does not crash),
    or None where it is not known before the node runs. Each dimension a number, a symbolic name (passed on
    unchanged) or None (computed from a name). DepthToSpace and SpaceToDepth of a 4-D X: (N, C / b^2, H * b,
    W * b) and (N, C * b^2, H / b, W / b). MaxUnpool with two inputs whose shapes are known: X's batch, the
    indices' channels and (in - 1) * stride + kernel - pads per spatial axis; with output_shape, None."""
    x = _tensor_shape(info.get(node.input[0]))
    dim = lambda d: d.dim_value if d.HasField("dim_value") else d.dim_param if d.HasField("dim_param") else None  # noqa: E731
    num = lambda d, f: f(d.dim_value) if d.HasField("dim_value") else None  # noqa: E731
    if node.op_type != "MaxUnpool":
        b = _attr(node, "blocksize", None, onnx)
        if x is None or len(x.dim) != 4 or not isinstance(b, int) or b <= 0:
            return None
        n, c, hh, w = x.dim
        if node.op_type == "DepthToSpace":
            return [dim(n), num(c, lambda v: v // (b * b)), num(hh, lambda v: v * b), num(w, lambda v: v * b)]
        return [dim(n), num(c, lambda v: v * b * b), num(hh, lambda v: v // b), num(w, lambda v: v // b)]
    i = _tensor_shape(info.get(node.input[1])) if len(node.input) == 2 else None
    if x is None or i is None or len(x.dim) < 2 or len(i.dim) < 2:
        return None
    n = len(x.dim) - 2
    kernel = list(_attr(node, "kernel_shape", [], onnx))
    strides = list(_attr(node, "strides", [1] * n, onnx))
    pads = list(_attr(node, "pads", [0] * 2 * n, onnx))
    if len(kernel) != n or len(strides) != n or len(pads) != 2 * n:
        return None
    return [dim(x.dim[0]), dim(i.dim[1])] + [
        num(d, lambda v, s=s, k=k, pb=pb, pe=pe: (v - 1) * s + k - pb - pe)
        for d, s, k, pb, pe in zip(x.dim[2:], strides, kernel, pads[:n], pads[n:])]


def _value_types(model, onnx):
    """name -> ValueInfoProto for the main graph's values: the initializers, the declared ones (graph
    inputs, value_info, outputs), and the outputs of DepthToSpace, SpaceToDepth and MaxUnpool nodes (the
    data input's element type). Only where a data input of one of those nodes has no type that way is
    onnx.shape_inference run, on a copy in which every MaxUnpool node (subgraphs and functions included) is
    in a domain with no schema, their outputs typed here, round after round until none is added."""
    graph = model.graph
    info = {t.name: onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in graph.initializer}
    info.update((v.name, v) for v in list(graph.value_info) + list(graph.input) + list(graph.output) if _typed(v))

    def walk(info):
        """Types the clops candidates' outputs that have none (and gives a shape to those typed without
        one); (the ValueInfoProtos of those that had no type, whether every candidate's data input has an
        element type)."""
        added, complete = [], True
        for node in graph.node:
            if not _clops_candidate(node) or not node.output or not node.output[0]:
                continue
            x = info.get(node.input[0])
            elem = x.type.tensor_type.elem_type if x is not None and _typed(x) and \
                x.type.WhichOneof("value") == "tensor_type" else 0
            if not elem:
                complete = False
            elif node.output[0] not in info or not _typed(info[node.output[0]]):
                shape = _output_shape(node, info, onnx)
                info[node.output[0]] = onnx.helper.make_tensor_value_info(node.output[0], elem, shape)
                added.append(info[node.output[0]])
            elif _tensor_shape(info[node.output[0]]) is None and \
                    info[node.output[0]].type.WhichOneof("value") == "tensor_type":
                shape = _output_shape(node, info, onnx)
                if shape is not None:
                    info[node.output[0]] = onnx.helper.make_tensor_value_info(
                        node.output[0], info[node.output[0]].type.tensor_type.elem_type, shape)
        return added, complete

    if walk(dict(info))[1]:  # every data input's type is declared: no inference
        walk(info)
        return info
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for nodes, opsets in [(copy.graph.node, copy.opset_import)] + [(f.node, f.opset_import) for f in copy.functions]:
        moved = False
        for node in _nodes_under(nodes):
            if node.op_type == "MaxUnpool" and node.domain in ("", "ai.onnx"):
                node.domain, moved = _NO_INFERENCE, True
        if moved:
            opsets.append(onnx.helper.make_opsetid(_NO_INFERENCE, 1))
    while True:
        inferred = onnx.shape_inference.infer_shapes(copy)
        found = dict(info)
        found.update((v.name, v) for v in list(inferred.graph.value_info) + list(inferred.graph.input) +
                     list(inferred.graph.output) if _typed(v))
        added, _ = walk(found)
        if not added:
            return found
        copy.graph.value_info.extend(added)


class _ClopsStep:
    """One DepthToSpace, SpaceToDepth or MaxUnpool node, run on clops."""

    def __init__(self, node, label, onnx):
        self.label, self.op = label, node.op_type
        self.inputs, self.outputs = _node_refs(node), list(node.output[:1])
        self.args = list(node.input)
        if self.op == "MaxUnpool":
            self.kernel = list(_attr(node, "kernel_shape", [], onnx))
            self.strides = list(_attr(node, "strides", [1] * len(self.kernel), onnx))
            self.pads = list(_attr(node, "pads", [0] * 2 * len(self.kernel), onnx))
            if not self.kernel or len(self.strides) != len(self.kernel) or len(self.pads) != 2 * len(self.kernel):
                raise ValueError(f"MaxUnpool node {label}: kernel_shape {self.kernel}, strides {self.strides} "
                                 f"and pads {self.pads} do not fit together (kernel_shape is required)")
        else:
            self.block = _attr(node, "blocksize", None, onnx)
            if self.block is None:
                raise ValueError(f"{self.op} node {label}: the attribute blocksize is required")
            self.mode = _mode(_attr(node, "mode", "DCR", onnx)) if self.op == "DepthToSpace" else "DCR"
        self._lock, self._mem, self._lease = threading.Lock(), None, lambda: None

    def run(self, values, device):
        x = np.asarray(values(self.args[0]))
        if self.op != "MaxUnpool":
            if x.ndim != 4 or not self.reuse:  # the package's function (its messages, its batching)
                fn = _depth_to_space if self.op == "DepthToSpace" else _space_to_depth
                return fn(x, self.block, self.mode, device=device)
            b, order, x = _block(self.block), _order(self.mode), _core.as_numpy(x, "x")
            tx = _core.tensor_key(x, "x")
            optype = _core.L.OP_DEPTH_TO_SPACE if self.op == "DepthToSpace" else _core.L.OP_SPACE_TO_DEPTH
            return self._execute(_core.depth_space_operator(_core.context_for(device), optype, tx, b, order), x, tx[2])
        indices = np.asarray(values(self.args[1]))
        given = values(self.args[2]) if len(self.args) > 2 and self.args[2] else None
        shape = self.unpool_shape(x.shape, given)
        # Flat indices count over the whole output whatever its rank: as (N, C, rest, last) it is the same
        # row-major array, so every rank runs as clops's 4-D operator.
        four = lambda s: (s[0], s[1], int(np.prod(s[2:-1], dtype=np.int64)), s[-1])  # noqa: E731
        x = x.reshape(four(x.shape))
        indices = indices.reshape(four(indices.shape)) if indices.ndim == len(shape) else indices
        if not self.reuse or indices.ndim != 4:
            return _max_unpooling(x, indices, four(shape), "flat", device=device).reshape(shape)
        out_shape = _core.output_shape_arg(four(shape))
        x, indices = _core.as_numpy(x, "x"), _core.as_numpy(indices, "indices", numbers=True)
        tx, ti = _core.tensor_key(x, "x"), _core.tensor_key(indices, "indices")
        op = _core.max_unpooling_operator(_core.context_for(device), tx, ti, out_shape, _core.L.INDICES_FLAT)
        return self._execute(op, x, tx[2], indices, ti[2]).reshape(shape)

    # Outputs are written into the memory of this step's previous output once no array of it is left (as
    # ONNX Runtime's arena reuses its buffers): a new NumPy array of tens of MB is fresh pages from the
    # kernel each run (NumPy asks for huge pages; their faults, and compaction to find them, took up to 5
    # times the operator's own time in the SegNet of the tests: docs/onnx.md, "Cost").
    reuse = True

    def _execute(self, op, x, sx, idx=None, si=None):
        """_core.run_host into reused memory: the array returned is made from a _Lease of this step's
        memory, and every array or view of it keeps the lease alive; the memory is reused only when the last
        lease is gone (a weak reference says so), so an output the caller still holds is never written."""
        with self._lock:
            mem, lease = self._mem, self._lease
            self._mem = self._lease = None
        if mem is None or lease() is not None or mem.shape != tuple(op.out_shape) or mem.dtype != x.dtype:
            mem = np.empty(op.out_shape, x.dtype)
        out = _Lease(mem)
        with op.lock:
            hb = op.host_buffers
            hb.input, hb.input_bytes = x.__array_interface__["data"][0], _core.span_bytes(x, sx)
            if idx is not None:
                hb.indices, hb.indices_bytes = idx.__array_interface__["data"][0], _core.span_bytes(idx, si)
            hb.output, hb.output_bytes = mem.__array_interface__["data"][0], mem.nbytes
            st = _core.L.operator_execute_host(op.handle, hb)
        with self._lock:
            self._mem, self._lease = mem, weakref.ref(out)
        if st != 0:
            raise _core.L.exception(st)
        return np.asarray(out)

    def unpool_shape(self, in_shape, given):
        """MaxUnpool's output shape, with ONNX Runtime's checks: by default (in - 1) * stride + kernel -
        pad_begin - pad_end per spatial axis; a given output_shape must have X's rank, N and C, and be no
        smaller than that."""
        n = len(self.kernel)
        if len(in_shape) != n + 2:
            raise ValueError(f"MaxUnpool node {self.label}: X has shape {tuple(in_shape)}, but kernel_shape "
                             f"{self.kernel} needs {n + 2} dimensions")
        default = tuple(in_shape[:2]) + tuple((d - 1) * s + k - pb - pe for d, s, k, pb, pe in zip(
            in_shape[2:], self.strides, self.kernel, self.pads[:n], self.pads[n:]))
        if given is None:
            return default
        shape = tuple(int(v) for v in np.asarray(given).reshape(-1))
        if len(shape) != len(in_shape) or shape[:2] != tuple(in_shape[:2]):
            raise ValueError(f"MaxUnpool node {self.label}: output_shape {list(shape)} must have X's rank "
                             f"({len(in_shape)}) and X's batch and channels {list(in_shape[:2])}")
        if any(g < d for g, d in zip(shape, default)):
            raise ValueError(f"MaxUnpool node {self.label}: output_shape {list(shape)} is smaller than the "
                             f"minimum the attributes give, {list(default)}")
        return shape


class _Lease:
    """Hands a step's memory to NumPy (np.asarray reads __array_interface__ and keeps this object as the
    array's base, which every view keeps alive in turn)."""

    def __init__(self, mem):
        self.mem, self.__array_interface__ = mem, mem.__array_interface__


class _OrtStep:
    """A sub-model of consecutive ONNX Runtime nodes, and its session."""

    def __init__(self, session, inputs, outputs, labels):
        self.session, self.inputs, self.outputs, self.labels = session, inputs, outputs, labels

    def run(self, env, outputs, run_options):
        # Every input is in env (the caller's, or an earlier step's) but an overridable initializer the
        # caller did not feed: the sub-model has its default.
        return self.session.run(outputs, {n: env[n] for n in self.inputs if n in env}, run_options)


# ---- the session -------------------------------------------------------------------------------------


def _load(model, onnx):
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, (bytes, bytearray, memoryview)):
        return onnx.load_model_from_string(bytes(model))
    if isinstance(model, str) or hasattr(model, "__fspath__"):
        return onnx.load(model)
    raise TypeError(f"model must be a path, bytes or an onnx.ModelProto, not {type(model).__name__}")


SPINNING = "session.intra_op.allow_spinning"


def _threading(sess_options, ort):
    """The SessionOptions every sub-session gets: the caller's (None: new ones), with ONNX Runtime's
    intra-op thread spinning off (SPINNING = "0") unless the caller set SPINNING or uses the process's
    global thread pools (use_per_session_threads=False, after
    onnxruntime.capi._pybind_state.set_global_thread_pool_sizes: then every sub-session shares one pool).
    Why: each sub-session has its own pool, whose idle workers spin for a while after its run ends, on
    the cores that the next sub-session's pool and the clops nodes then need (docs/onnx.md, "Cost").
    The caller's object is changed (the entry added), as SessionOptions cannot be copied."""
    if sess_options is None:
        sess_options = ort.SessionOptions()
    elif not getattr(sess_options, "use_per_session_threads", True):
        return sess_options
    try:
        sess_options.get_session_config_entry(SPINNING)
    except Exception:  # not set (RuntimeError; older ONNX Runtime versions may lack the getter: set it)
        sess_options.add_session_config_entry(SPINNING, "0")
    return sess_options


class InferenceSession:
    """onnxruntime.InferenceSession's interface over a model whose DepthToSpace, SpaceToDepth and MaxUnpool
    nodes run on clops.

    model        a path (str or os.PathLike; external data next to it is loaded), the model's bytes, or
                 an onnx.ModelProto (not changed)
    sess_options, providers, provider_options, **ort_options
                 onnxruntime.InferenceSession's arguments, positional or by keyword as there, given to
                 every sub-model's session; intra-op thread spinning is turned off in them (the entry
                 session.intra_op.allow_spinning = "0" added to sess_options, a new one when None) unless
                 sess_options sets that entry or has use_per_session_threads=False (global thread pools)
    device       (keyword only) where the clops nodes run: None (the default device, which `clops devices`
                 marks: docs/cli.md, "The default device"), an index of clops.devices(), or "host"

    Raises ImportError when onnx or onnxruntime is missing, ValueError or TypeError for a bad device,
    what onnx.load or onnxruntime raise for the model, and for a model ONNX Runtime refuses where its
    clops nodes are concerned (two nodes of one name, an attribute or input count the node's schema does
    not have, a DepthToSpace mode other than "DCR" and "CRD") an exception that is both ValueError and
    the onnxruntime.capi.onnxruntime_pybind11_state class ONNX Runtime raises (Fail, InvalidGraph).
    """

    def __init__(self, model, sess_options=None, providers=None, provider_options=None, *, device=None,
                 **ort_options):
        onnx, ort, self._numpy_helper = _require()
        if sess_options is not None and not isinstance(sess_options, ort.SessionOptions):
            raise TypeError(f"sess_options must be an onnxruntime.SessionOptions, not {type(sess_options).__name__} "
                            "(clops.onnx.InferenceSession's device is keyword-only: device=...)")
        sess_options = _threading(sess_options, ort)
        ort_options.update(sess_options=sess_options, providers=providers, provider_options=provider_options)
        self._device = device
        _core._device_key(device)  # a bad device fails here, not at the first run
        model = _load(model, onnx)
        self._validate(model, onnx)
        self._meta = ModelMetadata(model)
        graph = model.graph
        inits = {t.name: t for t in graph.initializer}
        self._inputs = [v for v in graph.input if v.name not in inits]
        self._required = [v.name for v in self._inputs]
        # As ONNX Runtime: from IR version 4 on, an initializer that is also a graph input is a default the
        # caller may override; before, every initializer had to be an input, and none is overridable.
        self._overridable = [v for v in graph.input if v.name in inits] if model.ir_version >= 4 else []
        self._feedable = {v.name: v for v in self._inputs + self._overridable}
        self._output_names = [v.name for v in graph.output]
        self._info = _value_types(model, onnx)
        self._lock = threading.Lock()
        self._plans = {}
        self._steps = self._partition(model, inits, onnx, ort, ort_options)
        # The initializers that clops nodes and the graph's outputs read (ONNX Runtime's have them inside),
        # as NumPy arrays; the caller's feed overrides an overridable one.
        read = {r for s in self._steps if isinstance(s, _ClopsStep) for r in s.inputs} | set(self._output_names)
        self._constants = {n: self._numpy_helper.to_array(inits[n]) for n in read if n in inits}
        self.partition = [("clops", s.label) if isinstance(s, _ClopsStep) else ("onnxruntime", s.labels)
                          for s in self._steps]
        self._outputs = [self._output_arg(v, onnx) for v in graph.output]

    # -- building --

    @staticmethod
    def _validate(model, onnx):
        """What ONNX Runtime refuses of a model where clops nodes are concerned (it checks the nodes it runs
        itself): two nodes of the main graph with one name, and a clops candidate that its schema (at the
        model's opset) refuses: an unknown attribute (DepthToSpace's mode before opset 11), a missing
        required one, a wrong number of inputs."""
        seen = set()
        for node in model.graph.node:
            if node.name and node.name in seen:
                raise _error("Fail")(f"This is an invalid model. Error: two nodes with same node name ({node.name}).")
            seen.add(node.name)
        ctx = onnx.checker.C.CheckerContext()
        ctx.ir_version = model.ir_version
        opsets = {o.domain: o.version for o in model.opset_import}
        if "" in opsets or "ai.onnx" in opsets:
            opsets[""] = opsets["ai.onnx"] = opsets.get("", opsets.get("ai.onnx"))
        ctx.opset_imports = opsets
        for node in model.graph.node:
            if _clops_candidate(node):
                try:
                    onnx.checker.check_node(node, ctx)
                except onnx.checker.ValidationError as e:
                    raise _error("InvalidGraph")(f"This is an invalid model. In Node {node.name!r} "
                                                 f"({node.op_type}): Error {str(e).splitlines()[0]}") from None

    def _output_arg(self, v, onnx):
        """get_outputs()'s NodeArg of graph output `v`: its type and shape, declared, inferred or learnt."""
        info = self._info.get(v.name, v)
        return NodeArg(v.name, _type_string(info.type, onnx), _shape_list(info.type))

    def _learn(self, name, elem, shape, onnx):
        """A shape of a value that a step makes, where none is known yet (a clops node's, computed from its
        input's; a sub-session output's, ONNX Runtime's own inference): later sub-models declare it, and
        get_outputs gives it, as ONNX Runtime's session of the whole model would. ONNX Runtime's [] (no
        shape, or a scalar) teaches nothing."""
        if elem and shape and _tensor_shape(self._info.get(name)) is None:
            self._info[name] = onnx.helper.make_tensor_value_info(name, elem, shape)

    def _elem_type(self, name, inits):
        if name in inits:
            return inits[name].data_type
        info = self._info.get(name)
        if info is not None and info.type.WhichOneof("value") == "tensor_type":
            return info.type.tensor_type.elem_type
        return 0

    def _runs_on_clops(self, node, inits, sparse):
        if node.op_type not in CLOPS_OPS or node.domain not in ("", "ai.onnx") or not node.input:
            return False
        if any(n in sparse for n in node.input):
            return False
        return self._elem_type(node.input[0], inits) in _NP_TYPES

    def _partition(self, model, inits, onnx, ort, ort_options):
        """Stages: an ONNX Runtime node's stage is the highest of its ONNX Runtime producers' and one past
        its clops producers'; a clops node's, its producers' highest. Stage s runs its sub-model, then its
        clops nodes in the graph's order."""
        graph = model.graph
        sparse = {t.values.name for t in graph.sparse_initializer}
        producer, stages = {}, []  # name -> (is_clops, stage); stages[s] = ([ORT nodes], [clops nodes])
        for i, node in enumerate(graph.node):
            on_clops = self._runs_on_clops(node, inits, sparse)
            deps = [producer[r] for r in _node_refs(node) if r in producer]
            stage = max([s for _, s in deps] if on_clops else [s + c for c, s in deps], default=0)
            while len(stages) <= stage:
                stages.append(([], []))
            stages[stage][on_clops].append((i, node))
            for o in node.output:
                if o:
                    producer[o] = (on_clops, stage)
        label = lambda i, node: node.name or f"{node.op_type}#{i}"  # noqa: E731
        # Which names each step reads, to know each sub-model's outputs.
        order = []
        for ort_nodes, clops_nodes in stages:
            if ort_nodes:
                order.append(("ort", ort_nodes))
            order += [("clops", [n]) for n in clops_nodes]
        read_after = [set() for _ in order]
        later = set(self._output_names)
        for k in range(len(order) - 1, -1, -1):
            read_after[k] = set(later)
            for _, node in order[k][1]:
                later.update(_node_refs(node))
        steps, types = [], {}  # types: element types of values clops nodes make, and of sub-model outputs
        for k, (kind, nodes) in enumerate(order):
            if kind == "clops":
                i, node = nodes[0]
                step = _ClopsStep(node, label(i, node), onnx)
                types[step.outputs[0]] = self._elem_type(node.input[0], inits)
                self._learn(step.outputs[0], types[step.outputs[0]], _output_shape(node, self._info, onnx), onnx)
            else:
                step = self._ort_step(model, nodes, read_after[k], inits, sparse, types, onnx, ort, ort_options,
                                      [label(i, n) for i, n in nodes])
            steps.append(step)
        return steps

    def _value_info(self, name, types, onnx):
        info = self._info.get(name)
        if info is not None and info.type.WhichOneof("value") is not None and not (
                info.type.WhichOneof("value") == "tensor_type" and info.type.tensor_type.elem_type == 0):
            return info
        if name in types:
            return onnx.helper.make_tensor_value_info(name, types[name], None)
        raise ValueError(f"clops.onnx: the type of {name!r}, which crosses between ONNX Runtime and clops, is "
                         "unknown (ONNX shape inference gives none): declare it in the graph's value_info")

    def _ort_step(self, model, nodes, read_after, inits, sparse, types, onnx, ort, ort_options, labels):
        made = {o for _, n in nodes for o in n.output if o}
        reads = list(dict.fromkeys(r for _, n in nodes for r in _node_refs(n)))
        outer = [r for r in reads if r not in made]
        graph_inputs = self._feedable
        inputs = [r for r in outer if r not in inits and r not in sparse or r in graph_inputs]
        outputs = [o for _, n in nodes for o in n.output if o and o in read_after]
        g = onnx.helper.make_graph(
            [n for _, n in nodes], model.graph.name,
            [graph_inputs[r] if r in graph_inputs else self._value_info(r, types, onnx) for r in inputs],
            [self._info.get(o) or onnx.ValueInfoProto(name=o) for o in outputs],
            [inits[r] for r in outer if r in inits])
        g.sparse_initializer.extend(t for t in model.graph.sparse_initializer if t.values.name in outer)
        g.value_info.extend(v for v in model.graph.value_info if v.name in made)
        sub = onnx.helper.make_model(g, opset_imports=model.opset_import, functions=model.functions)
        sub.ir_version = max(model.ir_version, 4)  # from 4 on, initializers need not be graph inputs
        session = ort.InferenceSession(sub.SerializeToString(), **ort_options)
        for arg in session.get_outputs():
            elem = getattr(onnx.TensorProto, arg.type[len("tensor("):-1].upper(), 0) \
                if arg.type.startswith("tensor(") else 0
            types.setdefault(arg.name, elem)
            self._learn(arg.name, elem, arg.shape, onnx)
        return _OrtStep(session, inputs, outputs, labels)

    # -- running --

    def _plan(self, names):
        """The steps `names` need, each with the outputs wanted of it, and the names no later step reads."""
        with self._lock:
            plan = self._plans.get(names)
        if plan is not None:
            return plan
        needed, steps = set(names), []
        for step in reversed(self._steps):
            wanted = [o for o in step.outputs if o in needed]
            if wanted:
                steps.append((step, wanted))
                needed.update(step.inputs)
        steps.reverse()
        last = {}
        for k, (step, _) in enumerate(steps):
            for r in step.inputs:
                last[r] = k
        drops = [[r for r, k2 in last.items() if k2 == k and r not in names] for k in range(len(steps))]
        plan = list(zip(steps, drops))
        with self._lock:
            self._plans[names] = plan
        return plan

    def run(self, output_names, input_feed, run_options=None):
        """onnxruntime.InferenceSession.run: a list of the outputs named (None: all) for `input_feed`
        (a dict of input name to array). Missing inputs raise ValueError, as in ONNX Runtime; unknown names,
        and arrays whose element type, rank or a static dimension differs from the model's declaration,
        what ONNX Runtime raises (onnxruntime.capi.onnxruntime_pybind11_state.InvalidArgument), which is
        also a ValueError here."""
        names = tuple(output_names) if output_names else tuple(self._output_names)
        unknown = [n for n in names if n not in self._output_names]
        if unknown:
            raise _error("InvalidArgument")(f"Invalid output name(s): {unknown}; the model's outputs are "
                                            f"{self._output_names}")
        known = self._feedable
        bad = [n for n in input_feed if n not in known]
        if bad:
            raise _error("InvalidArgument")(f"Invalid input name(s): {bad}; the model's inputs are {sorted(known)}")
        missing = [n for n in self._required if n not in input_feed]
        if missing:
            raise ValueError(f"Required inputs ({missing}) are missing from input feed ({list(input_feed)})")
        for name, value in input_feed.items():
            self._check_input(name, value)
        env = dict(input_feed)

        def values(name):
            return env[name] if name in env else self._constants[name]

        for (step, wanted), drops in self._plan(names):
            if isinstance(step, _ClopsStep):
                self._check_type(step, env)
                env[step.outputs[0]] = step.run(values, self._device)
            else:
                env.update(zip(wanted, step.run(env, wanted, run_options)))
            for r in drops:
                env.pop(r, None)
        return [values(n) for n in names]

    def _type_error(self, name, got, tp):
        want = _NP_TYPES.get(tp.tensor_type.elem_type)
        if want is not None and got != want:
            onnx = _require()[0]
            raise _error("InvalidArgument")(
                f"Unexpected input data type for {name!r}. Actual: (tensor("
                f"{onnx.TensorProto.DataType.Name(_ONNX_OF.get(got, 0)).lower()})) , expected: ({_type_string(tp, onnx)})")

    def _check_input(self, name, value):
        """The checks ONNX Runtime makes of an array it is fed for a tensor input: its element type, its rank
        and each dimension the model gives a number (not a name) for, with ONNX Runtime's messages."""
        tp = self._feedable[name].type
        if tp.WhichOneof("value") != "tensor_type":
            return
        if isinstance(value, np.ndarray):  # other values (lists) ONNX Runtime converts; clops nodes: _check_type
            self._type_error(name, value.dtype, tp)
        if not tp.tensor_type.HasField("shape"):
            return
        dims, shape = tp.tensor_type.shape.dim, np.shape(value)
        if len(shape) != len(dims):
            raise _error("InvalidArgument")(f"Invalid rank for input: {name} Got: {len(shape)} Expected: {len(dims)} "
                                            "Please fix either the inputs/outputs or the model.")
        wrong = [(k, g, d.dim_value) for k, (g, d) in enumerate(zip(shape, dims))
                 if d.HasField("dim_value") and g != d.dim_value]
        if wrong:
            raise _error("InvalidArgument")(f"Got invalid dimensions for input: {name} for the following indices\n" +
                                            "".join(f" index: {k} Got: {g} Expected: {d}\n" for k, g, d in wrong) +
                                            " Please fix either the inputs/outputs or the model.")

    def _check_type(self, step, env):
        """The element type of what the caller fed a clops node (arrays are checked by run; this is for
        other values, which np.asarray makes into arrays)."""
        for name in step.args:
            v = self._feedable.get(name)
            if v is None or name not in env or v.type.WhichOneof("value") != "tensor_type":
                continue
            self._type_error(name, np.asarray(env[name]).dtype, v.type)

    # -- onnxruntime.InferenceSession's other methods --

    def get_inputs(self):
        return [NodeArg(v.name, _type_string(v.type, _require()[0]), _shape_list(v.type)) for v in self._inputs]

    def get_outputs(self):
        return [NodeArg(a.name, a.type, list(a.shape)) for a in self._outputs]

    def get_overridable_initializers(self):
        return [NodeArg(v.name, _type_string(v.type, _require()[0]), _shape_list(v.type)) for v in self._overridable]

    def get_modelmeta(self):
        return self._meta

    def _first_session(self):
        return next((s.session for s in self._steps if isinstance(s, _OrtStep)), None)

    def get_providers(self):
        """The providers of the sub-models' sessions ([] when every node runs on clops)."""
        s = self._first_session()
        return s.get_providers() if s is not None else []

    def get_provider_options(self):
        s = self._first_session()
        return s.get_provider_options() if s is not None else {}

    def get_session_options(self):
        s = self._first_session()
        return s.get_session_options() if s is not None else None

    @property
    def sessions(self):
        """The onnxruntime.InferenceSession of each sub-model, in the order they run."""
        return [s.session for s in self._steps if isinstance(s, _OrtStep)]
