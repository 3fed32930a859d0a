"""clops.onnx against plain ONNX Runtime: the same model, the same feed, the same bits out, with the
DepthToSpace, SpaceToDepth and MaxUnpool nodes on clops (on the host backend and on each OpenCL device of
conftest's `device`). Skips without onnx and onnxruntime (pip install 'clops[onnx]') unless
CLOPS_REQUIRE_ONNX=1 (CI), which makes their absence a failure."""
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import random_array, ref_depth_to_space, ref_max_unpooling, ref_space_to_depth, same_bits
from test_onnx_models import espcn, inputs, require_onnx, segnet

onnx, ort = require_onnx()
from onnx import TensorProto as T, helper as h, numpy_helper  # noqa: E402

import clops.onnx  # noqa: E402

CPU = {"providers": ["CPUExecutionProvider"]}


def plain(model, feed):
    return ort.InferenceSession(model.SerializeToString(), **CPU).run(None, feed)


def model_of(nodes, inputs_, outputs, inits=(), opset=17, ir_version=None):
    m = h.make_model(h.make_graph(nodes, "g", inputs_, outputs, list(inits)),
                     opset_imports=[h.make_opsetid("", opset)])
    if ir_version is not None:
        m.ir_version = ir_version
    return m


@pytest.fixture(scope="module")
def espcn_case():
    model = espcn()  # (1, 3, 180, 320) -> DepthToSpace CRD of (1, 27, 180, 320) -> (1, 3, 540, 960)
    feed = inputs(model)
    return model, feed, plain(model, feed)


@pytest.fixture(scope="module")
def segnet_case():
    model = segnet()  # (2, 3, 181, 241), 64 channels: MaxUnpool to 5.6 million elements
    feed = inputs(model)
    return model, feed, plain(model, feed)


def test_espcn_bit_exact(device, espcn_case):
    model, feed, want = espcn_case
    sess = clops.onnx.InferenceSession(model, device=device, **CPU)
    assert sess.partition == [("onnxruntime", ["conv1", "conv1.relu", "conv2", "conv2.relu", "conv3"]),
                              ("clops", "pixel_shuffle")]
    got = sess.run(None, feed)
    assert got[0].shape == (1, 3, 540, 960)
    assert same_bits(got[0], want[0])
    assert np.count_nonzero(got[0]) > got[0].size // 2  # a real picture, not zeros


def test_segnet_bit_exact(device, segnet_case):
    """Both MaxUnpools: unpool2 without output_shape (the default 90x120 from 45x60), unpool1 with the
    output_shape a Shape node gives (181x241, one more row and column than the default)."""
    model, feed, want = segnet_case
    sess = clops.onnx.InferenceSession(model, device=device, **CPU)
    assert [s for s in sess.partition if s[0] == "clops"] == [("clops", "unpool2"), ("clops", "unpool1")]
    assert len(sess.sessions) == 3
    got = sess.run(None, feed)
    assert [g.shape for g in got] == [(2, 4, 181, 241), (2, 64, 181, 241)]
    for g, w in zip(got, want):
        assert same_bits(g, w)
    u1 = got[1]
    assert 0 < np.count_nonzero(u1) <= u1.size // 4 + 2 * 64 * (181 + 241)  # one value per pooled window


def test_segnet_one_output_and_api(segnet_case):
    """output_names picks outputs (the steps after the last one needed do not run); get_inputs and
    get_outputs say what ONNX Runtime's say."""
    model, feed, want = segnet_case
    sess = clops.onnx.InferenceSession(model.SerializeToString(), device="host", **CPU)
    (u1,) = sess.run(["u1"], feed)
    assert same_bits(u1, want[1])
    ref = ort.InferenceSession(model.SerializeToString(), **CPU)
    for mine, theirs in ((sess.get_inputs(), ref.get_inputs()), (sess.get_outputs(), ref.get_outputs())):
        assert [(a.name, a.type, a.shape) for a in mine] == [(a.name, a.type, a.shape) for a in theirs]
    assert sess.get_providers() == ["CPUExecutionProvider"]
    assert sess.get_modelmeta().graph_name == "segnet"
    with pytest.raises(ValueError, match="Required inputs"):
        sess.run(None, {})
    with pytest.raises(ValueError, match="Invalid output name"):
        sess.run(["nope"], feed)
    with pytest.raises(ValueError, match="Invalid input name"):
        sess.run(None, dict(feed, nope=feed["x"]))


def test_path_and_run_options(tmp_path, espcn_case):
    model, feed, want = espcn_case
    path = tmp_path / "espcn.onnx"
    onnx.save(model, str(path))
    sess = clops.onnx.InferenceSession(path, device="host", **CPU)
    assert same_bits(sess.run(None, feed, ort.RunOptions())[0], want[0])
    with pytest.raises(TypeError, match="path, bytes or an onnx.ModelProto"):
        clops.onnx.InferenceSession(42)
    with pytest.raises(ValueError, match="device"):
        clops.onnx.InferenceSession(model, device="gpu", **CPU)


# ---- DepthToSpace and SpaceToDepth: every type, both modes ---------------------------------------------

ONNX_TYPES = {np.bool_: T.BOOL, np.int8: T.INT8, np.uint8: T.UINT8, np.int16: T.INT16, np.uint16: T.UINT16,
              np.float16: T.FLOAT16, np.int32: T.INT32, np.uint32: T.UINT32, np.float32: T.FLOAT,
              np.int64: T.INT64, np.uint64: T.UINT64, np.float64: T.DOUBLE, np.complex64: T.COMPLEX64,
              np.complex128: T.COMPLEX128}


@pytest.mark.parametrize("dtype", list(ONNX_TYPES))
def test_depth_space_chain_every_type(device, dtype):
    """DepthToSpace DCR -> SpaceToDepth -> DepthToSpace CRD, all on clops (no ONNX Runtime sub-model), against
    the specification's NumPy definitions (ONNX Runtime's CPU kernels take only some of these types)."""
    t = ONNX_TYPES[dtype]
    nodes = [h.make_node("DepthToSpace", ["x"], ["a"], blocksize=2),  # mode defaults to DCR
             h.make_node("SpaceToDepth", ["a"], ["b"], blocksize=4),
             h.make_node("DepthToSpace", ["b"], ["y"], blocksize=4, mode="CRD")]
    m = model_of(nodes, [h.make_tensor_value_info("x", t, ["N", 32, 12, 10])],
                 [h.make_tensor_value_info("y", t, None), h.make_tensor_value_info("a", t, None)])
    sess = clops.onnx.InferenceSession(m, device=device, **CPU)
    assert [w for w, _ in sess.partition] == ["clops"] * 3 and sess.sessions == [] and sess.get_providers() == []
    x = random_array((2, 32, 12, 10), dtype, seed=3)
    y, a = sess.run(None, {"x": x})
    assert same_bits(a, ref_depth_to_space(x, 2, "DCR"))
    assert same_bits(y, ref_depth_to_space(ref_space_to_depth(a, 4, "DCR"), 4, "CRD"))
    if dtype in (np.float32, np.float64, np.uint8):  # types ONNX Runtime's CPU DepthToSpace has (1.15: not uint8)
        try:
            want = plain(m, {"x": x})
        except Exception as e:  # onnxruntime's own exception types
            assert dtype == np.uint8 and "NOT_IMPLEMENTED" in str(e)
        else:
            assert all(same_bits(g, w) for g, w in zip((y, a), want))


def test_depth_to_space_between_ort_nodes(device):
    """ONNX Runtime, clops, ONNX Runtime, and an If whose branches read the clops node's output from the
    outer scope: the second sub-model must take it as an input."""
    then = h.make_graph([h.make_node("Identity", ["d"], ["o1"])], "then", [], [h.make_tensor_value_info("o1", T.FLOAT, None)])
    other = h.make_graph([h.make_node("Neg", ["d"], ["o2"])], "else", [], [h.make_tensor_value_info("o2", T.FLOAT, None)])
    nodes = [h.make_node("Relu", ["x"], ["r"]), h.make_node("DepthToSpace", ["r"], ["d"], blocksize=3, mode=b"CRD"),
             h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)]
    m = model_of(nodes, [h.make_tensor_value_info("x", T.FLOAT, [1, 18, 40, 30]),
                         h.make_tensor_value_info("c", T.BOOL, [])], [h.make_tensor_value_info("y", T.FLOAT, None)])
    sess = clops.onnx.InferenceSession(m, device=device, **CPU)
    assert [w for w, _ in sess.partition] == ["onnxruntime", "clops", "onnxruntime"]
    x = random_array((1, 18, 40, 30), np.float32, seed=4)
    for c in (True, False):
        feed = {"x": x, "c": np.array(c)}
        assert same_bits(sess.run(None, feed)[0], plain(m, feed)[0])


def test_mode_attribute_bytes_or_str():
    assert clops.onnx._mode(b"CRD") == "CRD" and clops.onnx._mode("DCR") == "DCR"
    for bad in (b"RDC", "dcr", b"crd"):  # case-sensitive, as ONNX Runtime's kernel
        with pytest.raises(ValueError, match="neither DCR nor CRD"):
            clops.onnx._mode(bad)


# ---- MaxUnpool: flat indices, output_shape, other ranks and types, errors ------------------------------


def pool_unpool(shape, kernel, strides, pads, out_input, dtype=T.FLOAT, opset=17):
    """MaxPool with indices then MaxUnpool with the same attributes; out_input: None (no output_shape),
    "shape" (Shape of the pool's input) or a tuple (a constant initializer)."""
    attrs = dict(kernel_shape=kernel, strides=strides, pads=pads)
    inits, args = [], ["p", "i"]
    nodes = [h.make_node("MaxPool", ["x"], ["p", "i"], **attrs)]
    if out_input == "shape":
        nodes.append(h.make_node("Shape", ["x"], ["s"]))
        args.append("s")
    elif out_input is not None:
        inits.append(numpy_helper.from_array(np.array(out_input, np.int64), "s"))
        args.append("s")
    nodes.append(h.make_node("MaxUnpool", args, ["y"], **attrs))
    return model_of(nodes, [h.make_tensor_value_info("x", dtype, shape)], [h.make_tensor_value_info("y", dtype, None)],
                    inits, opset)


@pytest.mark.parametrize("case", [
    ((2, 16, 64, 96), [2, 2], [2, 2], [0, 0, 0, 0], None),
    ((2, 16, 65, 97), [2, 2], [2, 2], [0, 0, 0, 0], "shape"),
    ((1, 32, 57, 75), [3, 3], [2, 2], [1, 1, 1, 1], "shape"),          # overlapping windows: duplicates
    ((3, 8, 40, 50), [3, 3], [2, 2], [1, 1, 1, 1], (3, 8, 41, 52)),    # a constant output_shape, larger
    ((2, 8, 1000), [4], [4], [0, 0], None),                              # 1-D: (N, C, L)
    ((1, 4, 9, 16, 20), [2, 2, 2], [2, 2, 2], [0] * 6, "shape"),         # 3-D: (N, C, D, H, W)
], ids=["2x2", "2x2-odd-shape", "3x3s2p1-shape", "3x3-const-shape", "1d", "3d"])
def test_max_unpool_against_onnxruntime(device, case):
    shape, kernel, strides, pads, out_input = case
    m = pool_unpool(shape, kernel, strides, pads, out_input)
    sess = clops.onnx.InferenceSession(m, device=device, **CPU)
    assert ("clops", "MaxUnpool#" + str(len(m.graph.node) - 1)) in sess.partition
    feed = {"x": np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)}
    got, want = sess.run(None, feed)[0], plain(m, feed)[0]
    assert same_bits(got, want)
    assert np.count_nonzero(got) > 0


def test_max_unpool_onnx_output_shape_example(device):
    """ONNX's test_maxunpool_export_with_output_shape: indices flat over the 5x5 output given (ONNX
    Runtime's reading; docs/semantics.md says why ONNX's reference data differs)."""
    nodes = [h.make_node("MaxUnpool", ["x", "i", "s"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    m = model_of(nodes, [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 2, 2]),
                         h.make_tensor_value_info("i", T.INT64, [1, 1, 2, 2]),
                         h.make_tensor_value_info("s", T.INT64, [4])], [h.make_tensor_value_info("y", T.FLOAT, None)])
    feed = {"x": np.array([[[[5, 6], [7, 8]]]], np.float32), "i": np.array([[[[5, 7], [13, 15]]]], np.int64),
            "s": np.array([1, 1, 5, 5], np.int64)}
    got = clops.onnx.InferenceSession(m, device=device, **CPU).run(None, feed)[0]
    want = np.zeros((1, 1, 5, 5), np.float32)
    want.flat[[5, 7, 13, 15]] = [5, 6, 7, 8]
    assert same_bits(got, want) and same_bits(got, plain(m, feed)[0])


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_max_unpool_other_float_types(device, dtype):
    """ONNX's MaxUnpool takes float16, float and double; ONNX Runtime's CPU kernel is float32 only (float16
    through casts, which change NaN payloads; double not at all). On clops each is moved bit for bit. Flat
    indices over a batch of 2 x 3 planes (batch and channel offsets included), against the
    specification's NumPy definition, and against ONNX Runtime where it runs (on finite values)."""
    t = {np.float64: T.DOUBLE, np.float16: T.FLOAT16}[dtype]
    nodes = [h.make_node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    m = model_of(nodes, [h.make_tensor_value_info("x", t, [2, 3, 30, 40]), h.make_tensor_value_info("i", T.INT64, [2, 3, 30, 40])],
                 [h.make_tensor_value_info("y", t, None)])
    x = random_array((2, 3, 30, 40), dtype, seed=5)
    rng = np.random.default_rng(6)
    i = rng.integers(0, 2 * 3 * 60 * 80, (2, 3, 30, 40)).astype(np.int64)
    sess = clops.onnx.InferenceSession(m, device=device, **CPU)
    assert same_bits(sess.run(None, {"x": x, "i": i})[0], ref_max_unpooling(x, i, (2, 3, 60, 80)))
    x = np.nan_to_num(x)
    got = sess.run(None, {"x": x, "i": i})[0]
    try:
        want = plain(m, {"x": x, "i": i})[0]
    except Exception as e:  # onnxruntime's own exception types
        assert "NOT_IMPLEMENTED" in str(e)
    else:
        assert same_bits(got, want)


def test_max_unpool_errors(device):
    m = pool_unpool((1, 2, 8, 8), [2, 2], [2, 2], [0, 0, 0, 0], None)
    unpool = model_of([m.graph.node[-1]], [h.make_tensor_value_info("p", T.FLOAT, [1, 2, 4, 4]),
                                           h.make_tensor_value_info("i", T.INT64, [1, 2, 4, 4])],
                      [h.make_tensor_value_info("y", T.FLOAT, None)])
    sess = clops.onnx.InferenceSession(unpool, device=device, **CPU)
    p, i = np.ones((1, 2, 4, 4), np.float32), np.zeros((1, 2, 4, 4), np.int64)
    i.flat[7] = 128  # one past the output's 2 * 8 * 8 elements
    with pytest.raises(ValueError, match="(?i)index"):
        sess.run(None, {"p": p, "i": i})
    i.flat[7] = -1
    with pytest.raises(ValueError, match="(?i)index"):
        sess.run(None, {"p": p, "i": i})
    with pytest.raises(ValueError, match="Unexpected input data type for 'p'"):
        sess.run(None, {"p": p.astype(np.float64), "i": np.zeros((1, 2, 4, 4), np.int64)})
    with pytest.raises(ValueError, match="Unexpected input data type for 'i'"):
        sess.run(None, {"p": p, "i": np.zeros((1, 2, 4, 4), np.int32)})
    shaped = pool_unpool((1, 2, 8, 8), [2, 2], [2, 2], [0, 0, 0, 0], (1, 2, 7, 8))
    with pytest.raises(ValueError, match="smaller than the minimum"):
        clops.onnx.InferenceSession(shaped, device=device, **CPU).run(None, {"x": np.ones((1, 2, 8, 8), np.float32)})
    shaped = pool_unpool((1, 2, 8, 8), [2, 2], [2, 2], [0, 0, 0, 0], (2, 1, 8, 8))
    with pytest.raises(ValueError, match="batch and channels"):
        clops.onnx.InferenceSession(shaped, device=device, **CPU).run(None, {"x": np.ones((1, 2, 8, 8), np.float32)})
    bad = h.make_node("MaxUnpool", ["p", "i"], ["y"], kernel_shape=[2, 2], strides=[2])
    with pytest.raises(ValueError, match="do not fit together"):
        clops.onnx.InferenceSession(model_of([bad], list(unpool.graph.input), list(unpool.graph.output)), **CPU)


def test_overridable_initializer_into_clops(device):
    """An initializer that is a graph input too: the default feeds the clops node, the caller's value
    overrides it, as in ONNX Runtime (from IR version 4 on; before, ONNX Runtime refuses the feed)."""
    w = random_array((1, 8, 6, 5), np.float32, seed=7)
    nodes = [h.make_node("DepthToSpace", ["w"], ["d"], blocksize=2), h.make_node("Add", ["d", "x"], ["y"])]
    m = model_of(nodes, [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 12, 10]),
                         h.make_tensor_value_info("w", T.FLOAT, [1, 8, 6, 5])], [h.make_tensor_value_info("y", T.FLOAT, None)],
                 [numpy_helper.from_array(w, "w")])
    sess = clops.onnx.InferenceSession(m, device=device, **CPU)
    assert [a.name for a in sess.get_overridable_initializers()] == ["w"] and [a.name for a in sess.get_inputs()] == ["x"]
    x = random_array((1, 2, 12, 10), np.float32, seed=8)
    for feed in ({"x": x}, {"x": x, "w": random_array((1, 8, 6, 5), np.float32, seed=9)}):
        assert same_bits(sess.run(None, feed)[0], plain(m, feed)[0])
    m.ir_version = 3
    sess = clops.onnx.InferenceSession(m, device=device, **CPU)
    assert sess.get_overridable_initializers() == [] and same_bits(sess.run(None, {"x": x})[0], plain(m, {"x": x})[0])
    with pytest.raises(ValueError, match="Invalid input name"):
        sess.run(None, {"x": x, "w": w})


# ---- no whole-model shape inference where the types are known (findings R2) ----------------------------


def r2_model(before=None):
    """The finding's model: a MaxUnpool whose indices input has no declared shape, which onnx 1.12's shape
    inference of MaxUnpool dereferences (SIGSEGV). before: an op (Relu) between x and the MaxUnpool, so that
    the MaxUnpool's data type is known only by inference."""
    nodes = [h.make_node("MaxUnpool", ["r" if before else "x", "i"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    if before:
        nodes.insert(0, h.make_node(before, ["x"], ["r"]))
    return model_of(nodes, [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 2, 2]),
                            h.make_tensor_value_info("i", T.INT64, None)],
                    [h.make_tensor_value_info("y", T.FLOAT, None)], opset=11)


R2_FEED = {"x": np.array([5, 6, 7, 8], np.float32).reshape(1, 1, 2, 2), "i": np.array([0, 3, 9, 15]).reshape(1, 1, 2, 2)}
# ONNX Runtime 1.32's output for R2_FEED (the finding's). Not computed here: ONNX Runtime 1.15 itself
# crashes on that model (the same MaxUnpool inference), and the suite must run with it.
R2_WANT = np.array([5, 0, 0, 6, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 8], np.float32).reshape(1, 1, 4, 4)


def test_max_unpool_indices_without_shape_in_a_child(tmp_path):
    """In a child interpreter (a crash must fail this test, not end the suite): the finding's model, and the
    same after a Relu (inference needed, on a copy whose MaxUnpool is not inferred), both on clops and equal
    to ONNX Runtime's output."""
    for k, before in enumerate((None, "Relu")):
        onnx.save(r2_model(before), str(tmp_path / f"m{k}.onnx"))
    np.savez(tmp_path / "feed.npz", **R2_FEED)
    child = (
        "import sys, json, numpy as np, clops.onnx\n"
        "feed = dict(np.load(sys.argv[1] + '/feed.npz'))\n"
        "for k in range(2):\n"
        "    s = clops.onnx.InferenceSession(sys.argv[1] + f'/m{k}.onnx', device='host', providers=['CPUExecutionProvider'])\n"
        "    np.save(sys.argv[1] + f'/y{k}.npy', s.run(None, feed)[0])\n"
        "    print(json.dumps([list(p) for p in s.partition]))\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", child, str(tmp_path)], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"child ended with {r.returncode}: {r.stderr[-2000:]}"
    assert r.stdout.split("\n")[:2] == ['[["clops", "MaxUnpool#0"]]', '[["onnxruntime", ["Relu#0"]], ["clops", "MaxUnpool#1"]]']
    for k in range(2):
        assert same_bits(np.load(tmp_path / f"y{k}.npy"), R2_WANT)


def test_no_shape_inference_where_types_are_declared(monkeypatch, device):
    """onnx.shape_inference is not called where the types of the clops nodes' data inputs are declared: the
    finding's model, and a DepthToSpace between ONNX Runtime nodes whose outputs' shapes are not declared
    (get_outputs still gives ONNX Runtime's shapes: the clops node's output shape is computed, the sub-session
    infers the rest)."""
    def refuse(*args, **kwargs):
        raise AssertionError("onnx.shape_inference.infer_shapes called")
    d2s = model_of([h.make_node("DepthToSpace", ["x"], ["d"], blocksize=2, mode="CRD"), h.make_node("Relu", ["d"], ["y"]),
                    h.make_node("SpaceToDepth", ["y"], ["z"], blocksize=2)],
                   [h.make_tensor_value_info("x", T.FLOAT, ["N", 8, 3, 5])],
                   [h.make_tensor_value_info("y", T.FLOAT, None), h.make_tensor_value_info("z", T.FLOAT, None)])
    x = random_array((2, 8, 3, 5), np.float32, seed=11)
    monkeypatch.setattr(onnx.shape_inference, "infer_shapes", refuse)
    sess = clops.onnx.InferenceSession(r2_model(), device=device, **CPU)
    d2s_sess = clops.onnx.InferenceSession(d2s, device=device, **CPU)
    monkeypatch.undo()
    assert same_bits(sess.run(None, R2_FEED)[0], R2_WANT)
    # What ONNX Runtime 1.32's session of the finding's model says (1.15 crashes on it: R2_WANT).
    assert [(a.name, a.type, a.shape) for a in sess.get_inputs() + sess.get_outputs()] == [
        ("x", "tensor(float)", [1, 1, 2, 2]), ("i", "tensor(int64)", []), ("y", "tensor(float)", [])]
    sess, ref = d2s_sess, ort.InferenceSession(d2s.SerializeToString(), **CPU)
    for g, w in zip(sess.run(None, {"x": x}), ref.run(None, {"x": x})):
        assert same_bits(g, w)
    for mine, theirs in ((sess.get_inputs(), ref.get_inputs()), (sess.get_outputs(), ref.get_outputs())):
        assert [(a.name, a.type, a.shape) for a in mine] == [(a.name, a.type, a.shape) for a in theirs]
    assert [w for w, _ in sess.partition] == ["clops", "onnxruntime", "clops"]
    assert [a.shape for a in sess.get_outputs()] == [["N", 2, 6, 10], ["N", 8, 3, 5]]


# ---- what ONNX Runtime refuses, clops.onnx refuses with the same exception class (findings R5) -----------

ORT_ERRORS = ort.capi.onnxruntime_pybind11_state


def refused_alike(make, kind, match):
    """make(session class) raises with ONNX Runtime and with clops.onnx. clops.onnx's exception is ONNX
    Runtime 1.32's class `kind` and a ValueError, its message matching `match` (ONNX Runtime 1.32's words);
    ONNX Runtime's own class and words are checked where it is 1.32 or later (1.15 raises RuntimeException
    for a lower-case mode and says "Invalid Feed Input Name")."""
    cls = getattr(ORT_ERRORS, kind)
    with pytest.raises(Exception) as e:
        make(lambda m, **kw: ort.InferenceSession(m.SerializeToString(), **CPU))
    if tuple(int(v) for v in ort.__version__.split(".")[:2]) >= (1, 32):
        assert isinstance(e.value, cls) and e.match(match)
    with pytest.raises(cls, match=match) as e:
        make(lambda m, **kw: clops.onnx.InferenceSession(m, **kw, **CPU))
    assert isinstance(e.value, ValueError)


def test_feed_rank_and_dimensions_checked(device):
    """The finding's DepthToSpace declared [1, 4, 2, 2]: (4, 2, 2), (1, 8, 2, 2) and (1, 4, 6, 6) are
    refused; a symbolic dimension takes any size but not another rank; MaxUnpool's output_shape declared
    1-D and fed 2-D; the element type; unknown names."""
    m = model_of([h.make_node("DepthToSpace", ["x"], ["y"], blocksize=2)], [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 2, 2])],
                 [h.make_tensor_value_info("y", T.FLOAT, [1, 1, 4, 4])])
    good = np.zeros((1, 4, 2, 2), np.float32)
    for shape, match in (((4, 2, 2), "Invalid rank for input: x Got: 3 Expected: 4"),
                         ((1, 8, 2, 2), "Got invalid dimensions for input: x for the following indices\n index: 1 Got: 8 Expected: 4\n"),
                         ((1, 4, 6, 6), "index: 2 Got: 6 Expected: 2\n index: 3 Got: 6 Expected: 2\n")):
        refused_alike(lambda S: S(m, device=device).run(None, {"x": np.zeros(shape, np.float32)}), "InvalidArgument", match)
    refused_alike(lambda S: S(m, device=device).run(None, {"x": good.astype(np.float64)}), "InvalidArgument",
                  r"Unexpected input data type.*Actual: \(tensor\(double\)\) , expected: \(tensor\(float\)\)")
    refused_alike(lambda S: S(m, device=device).run(None, {"x": good, "nope": good}), "InvalidArgument", "Invalid input name")
    refused_alike(lambda S: S(m, device=device).run(["nope"], {"x": good}), "InvalidArgument", "(?i)Invalid output name")
    sym = model_of([h.make_node("DepthToSpace", ["x"], ["y"], blocksize=2)], [h.make_tensor_value_info("x", T.FLOAT, ["N", 4, None, 2])],
                   [h.make_tensor_value_info("y", T.FLOAT, None)])
    x = random_array((3, 4, 5, 2), np.float32, seed=12)
    assert same_bits(clops.onnx.InferenceSession(sym, device=device, **CPU).run(None, {"x": x})[0], plain(sym, {"x": x})[0])
    refused_alike(lambda S: S(sym, device=device).run(None, {"x": x[0]}), "InvalidArgument", "Invalid rank for input: x Got: 3")
    unpool = model_of([h.make_node("MaxUnpool", ["x", "i", "s"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
                      [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 2, 2]), h.make_tensor_value_info("i", T.INT64, [1, 1, 2, 2]),
                       h.make_tensor_value_info("s", T.INT64, [4])], [h.make_tensor_value_info("y", T.FLOAT, None)])
    feed = dict(R2_FEED, s=np.array([[1, 1, 4, 4]], np.int64))
    refused_alike(lambda S: S(unpool, device=device).run(None, feed), "InvalidArgument", "Invalid rank for input: s Got: 2 Expected: 1")


@pytest.mark.parametrize("case", ["duplicate-names", "mode-in-opset-1", "mode-lower-case", "unknown-attribute",
                                  "space-to-depth-mode", "unpool-one-input"])
def test_models_onnxruntime_refuses(case):
    """Models ONNX Runtime refuses at construction, where only clops nodes are concerned: refused alike."""
    x = h.make_tensor_value_info("x", T.FLOAT, [1, 4, 2, 2])
    y = h.make_tensor_value_info("y", T.FLOAT, None)
    kind, match, opset = "InvalidGraph", "This is an invalid model", 13
    if case == "duplicate-names":
        nodes = [h.make_node("Relu", ["x"], ["r"], name="n"), h.make_node("DepthToSpace", ["r"], ["y"], blocksize=2, name="n")]
        kind, match = "Fail", r"two nodes with same node name \(n\)"
    elif case == "mode-in-opset-1":
        nodes, opset, match = [h.make_node("DepthToSpace", ["x"], ["y"], blocksize=2, mode="DCR")], 1, "Unrecognized attribute: mode"
    elif case == "mode-lower-case":
        nodes, kind, match = [h.make_node("DepthToSpace", ["x"], ["y"], blocksize=2, mode="crd")], "Fail", "only 'DCR' and 'CRD' modes"
    elif case == "unknown-attribute":
        nodes, match = [h.make_node("DepthToSpace", ["x"], ["y"], blocksize=2, colour=1)], "Unrecognized attribute: colour"
    elif case == "space-to-depth-mode":
        nodes, match = [h.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2, mode="DCR")], "Unrecognized attribute: mode"
    else:
        nodes, match = [h.make_node("MaxUnpool", ["x"], ["y"], kernel_shape=[2, 2])], "input size 1"
    m = model_of(nodes, [x], [y], opset=opset)
    refused_alike(lambda S: S(m, device="host"), kind, match)


# ---- onnxruntime.InferenceSession's positional arguments ------------------------------------------------


def test_positional_arguments_as_onnxruntime(tmp_path, espcn_case):
    """InferenceSession(path, sess_options, providers, provider_options), positionally as in ONNX Runtime;
    device is keyword-only, and a device given second is a TypeError naming that."""
    model, feed, want = espcn_case
    path = str(tmp_path / "espcn.onnx")
    onnx.save(model, path)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = clops.onnx.InferenceSession(path, so, ["CPUExecutionProvider"], [{}], device="host")
    assert sess.get_providers() == ["CPUExecutionProvider"] and sess.get_session_options().intra_op_num_threads == 1
    assert same_bits(sess.run(None, feed)[0], want[0])
    with pytest.raises(TypeError, match="keyword-only"):
        clops.onnx.InferenceSession(path, "host")


# ---- threads: the sub-sessions' spinning off, the caller's choice kept, global thread pools ---------------


def spinning(sess):
    return [s.get_session_options().get_session_config_entry(clops.onnx.SPINNING) for s in sess.sessions]


def test_sub_sessions_do_not_spin(segnet_case):
    """Every sub-session has intra-op spinning off (docs/onnx.md, "Cost"), with or without the caller's
    sess_options; a caller's own session.intra_op.allow_spinning is kept."""
    model, feed, want = segnet_case
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    for opts, expect in ((None, "0"), (so, "0")):
        sess = clops.onnx.InferenceSession(model, opts, device="host", **CPU)
        assert len(sess.sessions) == 3 and spinning(sess) == [expect] * 3
        assert all(same_bits(a, b) for a, b in zip(sess.run(None, feed), want))
    assert sess.get_session_options().intra_op_num_threads == 1
    so = ort.SessionOptions()
    so.add_session_config_entry(clops.onnx.SPINNING, "1")
    sess = clops.onnx.InferenceSession(model, so, device="host", **CPU)
    assert spinning(sess) == ["1"] * 3
    assert all(same_bits(a, b) for a, b in zip(sess.run(None, feed), want))


def test_global_thread_pools_in_a_child(tmp_path, espcn_case):
    """With the process's global thread pools (set_global_thread_pool_sizes, then use_per_session_threads
    False: ONNX Runtime then refuses sessions without it, so in a child interpreter), every sub-session
    uses the one pool, no spinning entry is added, and the output is ONNX Runtime's."""
    if not hasattr(ort.capi.onnxruntime_pybind11_state, "set_global_thread_pool_sizes"):
        pytest.skip(f"onnxruntime {ort.__version__}'s Python API has no set_global_thread_pool_sizes")
    model, feed, want = espcn_case
    onnx.save(model, str(tmp_path / "m.onnx"))
    np.savez(tmp_path / "feed.npz", **feed)
    child = (
        "import sys, numpy as np, onnxruntime as ort, clops.onnx\n"
        "from onnxruntime.capi import onnxruntime_pybind11_state as C\n"
        "C.set_global_thread_pool_sizes(0, 0)\n"
        "so = ort.SessionOptions()\n"
        "so.use_per_session_threads = False\n"
        "s = clops.onnx.InferenceSession(sys.argv[1] + '/m.onnx', so, device='host', providers=['CPUExecutionProvider'])\n"
        "o = [x.get_session_options() for x in s.sessions]\n"
        "assert o and not any(x.use_per_session_threads for x in o)\n"
        "try:\n"
        "    o[0].get_session_config_entry(clops.onnx.SPINNING)\n"
        "    raise SystemExit('spinning entry added')\n"
        "except RuntimeError:\n"
        "    pass\n"
        "np.save(sys.argv[1] + '/y.npy', s.run(None, dict(np.load(sys.argv[1] + '/feed.npz')))[0])\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", child, str(tmp_path)], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"child ended with {r.returncode}: {r.stderr[-2000:]}"
    assert same_bits(np.load(tmp_path / "y.npy"), want[0])


def unpool_and_shuffle():
    """A model of a DepthToSpace and a MaxUnpool of one input, both graph outputs; its feeds and outputs."""
    model = model_of([h.make_node("DepthToSpace", ["x"], ["d"], blocksize=2),
                      h.make_node("MaxUnpool", ["x", "i"], ["u"], kernel_shape=[2, 2], strides=[2, 2])],
                     [h.make_tensor_value_info("x", T.FLOAT, [1, 8, 4, 6]),
                      h.make_tensor_value_info("i", T.INT64, [1, 8, 4, 6])],
                     [h.make_tensor_value_info("d", T.FLOAT, [1, 2, 8, 12]),
                      h.make_tensor_value_info("u", T.FLOAT, [1, 8, 8, 12])])
    rng = np.random.default_rng(5)

    def feed():
        return {"x": rng.standard_normal((1, 8, 4, 6)).astype(np.float32),
                "i": rng.permutation(8 * 8 * 12)[:8 * 4 * 6].reshape(1, 8, 4, 6).astype(np.int64)}

    def want(f):
        return [ref_depth_to_space(f["x"], 2, "DCR"), ref_max_unpooling(f["x"], f["i"], (1, 8, 8, 12))]
    return model, feed, want


def test_outputs_reuse_memory_only_once_released(device):
    """A clops node writes into the memory of its previous output once no array of that output is left
    (docs/onnx.md, "Cost"): an output the caller holds, or a view of it, keeps its values while later runs
    go to new memory; once released, the next run writes where it was."""
    model, feed, want = unpool_and_shuffle()
    sess = clops.onnx.InferenceSession(model, device=device, **CPU)
    feeds = [feed() for _ in range(5)]
    held = sess.run(None, feeds[0])
    second = sess.run(None, feeds[1])  # the first is still held: new memory
    assert not any(np.shares_memory(a, b) for a, b in zip(held, second))
    address = [a.ctypes.data for a in second]
    assert all(same_bits(a, b) for a, b in zip(second, want(feeds[1])))
    del second
    third = sess.run(None, feeds[2])  # the second is gone: its memory again
    assert [a.ctypes.data for a in third] == address
    assert all(same_bits(a, b) for a, b in zip(third, want(feeds[2])))
    views = [a[0, 1:] for a in third]  # a view keeps the memory of the whole output
    del third
    fourth = sess.run(None, feeds[3])
    assert not any(np.shares_memory(a, b) for a, b in zip(views, fourth))
    assert all(same_bits(v, w[0, 1:]) for v, w in zip(views, want(feeds[2])))
    assert all(same_bits(a, b) for a, b in zip(fourth, want(feeds[3])))
    assert all(same_bits(a, b) for a, b in zip(held, want(feeds[0])))
    assert all(a.flags.writeable and a.flags.c_contiguous for a in fourth)


def test_concurrent_runs(device):
    """Runs from several threads at once, each keeping its outputs: every output is its own feed's."""
    import threading
    model, feed, want = unpool_and_shuffle()
    sess = clops.onnx.InferenceSession(model, device=device, **CPU)
    feeds = [[feed() for _ in range(8)] for _ in range(4)]
    results = [[] for _ in feeds]

    def work(k):
        for f in feeds[k]:
            results[k].append(sess.run(None, f))
            if len(results[k]) % 2:
                results[k][-1] = [a.copy() for a in results[k][-1]]  # every other run's memory released

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(feeds))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for fs, rs in zip(feeds, results):
        assert len(rs) == len(fs)
        for f, r in zip(fs, rs):
            assert all(same_bits(a, b) for a, b in zip(r, want(f)))


@pytest.mark.parametrize("op", ["Identity", "Reshape"])
def test_onnxruntime_output_of_a_clops_output_is_its_own(op):
    """An ONNX Runtime node that may alias its input (Identity, Reshape) after a clops node, as a graph
    output: ONNX Runtime hands back its own copy, so the clops node's memory, reused at the next run, does
    not change an output the caller keeps."""
    inits = [numpy_helper.from_array(np.array([1, -1], np.int64), "s")] if op == "Reshape" else []
    model = model_of([h.make_node("DepthToSpace", ["x"], ["d"], blocksize=2),
                      h.make_node(op, ["d", "s"][:1 + len(inits)], ["y"])],
                     [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 2, 2])], [h.make_tensor_value_info("y", T.FLOAT, None)],
                     inits)
    sess = clops.onnx.InferenceSession(model, device="host", **CPU)
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 2, 2)
    (first,) = sess.run(None, {"x": x})
    kept = first.copy()
    (second,) = sess.run(None, {"x": -x - 1})
    assert same_bits(first, kept) and not np.shares_memory(first, second)
    assert same_bits(second, plain(model, {"x": -x - 1})[0])
