"""clops on pyopencl arrays: on the array's own queue and context, after its events, with the result's
event set; strided and offset arrays; the same bits as the host kernels."""
import numpy as np
import pytest

import clops
from conftest import REQUIRE_DEVICE, random_array, ref_depth_to_space, \
    ref_max_unpooling, ref_space_to_depth, same_bits

try:
    import pyopencl as cl
    import pyopencl.array as cla
    import pyopencl.tools  # noqa: F401 (cl.tools)
except ImportError:
    if REQUIRE_DEVICE:  # CI (test/python/run.sh installs pyopencl): this path must run, not skip
        raise
    pytest.skip("pyopencl is not installed", allow_module_level=True)


def _context():
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        platforms = []
    devices = [d for p in platforms for d in p.get_devices()]
    if not devices:
        if REQUIRE_DEVICE:
            pytest.fail("CLOPS_REQUIRE_DEVICE=1 but pyopencl finds no OpenCL device")
        pytest.skip("pyopencl finds no OpenCL device")
    return cl.Context([devices[0]])


@pytest.fixture(scope="module")
def context():
    return _context()


@pytest.fixture(params=["in-order", "out-of-order"])
def queue(request, context):
    props = 0 if request.param == "in-order" else cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE
    try:
        return cl.CommandQueue(context, properties=props)
    except cl.Error:
        pytest.skip(f"the device has no {request.param} queue")


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float32, np.int64, np.complex128],
                         ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("order", ["DCR", "crd"])
def test_depth_space(queue, dtype, order):
    x = random_array((2, 8, 4, 6), dtype, seed=1)
    xd = cla.to_device(queue, x)
    y = clops.depth_to_space(xd, 2, order)
    assert isinstance(y, cla.Array) and y.queue is queue and y.events
    assert same_bits(y.get(), ref_depth_to_space(x, 2, order))
    z = clops.space_to_depth(y, 2, order)
    assert isinstance(z, cla.Array) and same_bits(z.get(), x)
    assert same_bits(xd.get(), x)  # the input is read only


def test_runs_in_the_callers_context(queue):
    x = random_array((1, 4, 2, 2), np.float32)
    y = clops.depth_to_space(cla.to_device(queue, x), 2)
    assert y.context == queue.context and y.data.context == queue.context


def test_wait_for_is_honoured(queue, context):
    """An input behind a user event: clops's command waits for it (does not run, does not read the data
    written after the call) and the result's event completes after it."""
    x = random_array((1, 8, 2, 3), np.uint32, seed=2)
    xd = cla.empty(queue, x.shape, x.dtype)
    gate = cl.UserEvent(context)
    write = cl.enqueue_copy(queue, xd.data, x, wait_for=[gate], is_blocking=False)
    xd.add_event(write)
    y = clops.depth_to_space(xd, 2)
    event = y.events[-1]
    assert event.command_execution_status != cl.command_execution_status.COMPLETE
    gate.set_status(cl.command_execution_status.COMPLETE)
    event.wait()
    assert same_bits(y.get(), ref_depth_to_space(x, 2, "DCR"))


def test_fallback_status_is_checked(context, monkeypatch):
    """An operator on the host path (no compiler, no cache) gives the right bits on pyopencl arrays, and
    its host work's status (clops_operator_last_status) is checked: a failure there is clops.Error
    (its event completes with CL_COMPLETE either way)."""
    monkeypatch.setenv("CLOPS_DISABLE", "compiler")  # read when the queue's context is made
    monkeypatch.setenv("CLOPS_CACHE", "off")
    queue = cl.CommandQueue(context)
    x = random_array((1, 8, 3, 5), np.uint16, seed=3)
    y = clops.depth_to_space(cla.to_device(queue, x), 2)
    assert same_bits(y.get(), ref_depth_to_space(x, 2, "DCR"))
    import clops._core as core
    asked = []

    def failed(handle):  # as if the host work had failed
        asked.append(handle)
        return -15300  # CLOPS_ERROR_DEVICE_LOST
    monkeypatch.setattr(core.L, "operator_last_status", failed)
    with pytest.raises(clops.Error):
        clops.space_to_depth(y, 2)
    assert asked


def test_strided_and_offset_arrays(queue):
    x = random_array((3, 8, 4, 6), np.float32, seed=4)
    xd = cla.to_device(queue, x)
    cases = {"transposed": (xd.transpose((0, 1, 3, 2)), x.transpose(0, 1, 3, 2)),
             "offset": (xd[1:], x[1:]),
             "offset-transposed": (xd[1:].transpose((0, 1, 3, 2)), x[1:].transpose(0, 1, 3, 2))}
    for name, (view, host) in cases.items():
        host = np.ascontiguousarray(host)
        assert same_bits(clops.depth_to_space(view, 2, "CRD").get(), ref_depth_to_space(host, 2, "CRD")), name
        assert same_bits(clops.space_to_depth(view, 2).get(), ref_space_to_depth(host, 2, "DCR")), name


def test_max_unpooling(queue):
    x = random_array((2, 3, 4, 5), np.float32, seed=6)
    out_shape = (2, 3, 8, 10)
    idx = np.random.default_rng(6).integers(0, int(np.prod(out_shape)) // 3, x.shape).astype(np.int64)
    y = clops.max_unpooling(cla.to_device(queue, x), cla.to_device(queue, idx), out_shape)
    assert isinstance(y, cla.Array) and same_bits(y.get(), ref_max_unpooling(x, idx, out_shape))
    plane = np.random.default_rng(7).integers(0, 80, x.shape).astype(np.uint32)
    y = clops.max_unpooling(cla.to_device(queue, x), cla.to_device(queue, plane), out_shape, "per-plane")
    assert isinstance(y, cla.Array) and same_bits(y.get(), ref_max_unpooling(x, plane, out_shape, "per-plane"))


@pytest.mark.parametrize("index_dtype", [">u4", ">i8", ">u8", "<u4", "<i8"])
def test_big_endian_indices_are_refused(queue, index_dtype):
    """Issue 32 P3: non-native indices on the device were read in the machine's byte order and the values
    scattered to the swapped positions, silently. Now a TypeError naming the byte order (the NumPy path
    swaps them: test_byte_order.py); native ones still run."""
    x = cla.to_device(queue, np.array([7, 9], np.float32).reshape(1, 2, 1, 1))
    for values in ([0, 0], [1, 0]):  # [0, 0] swapped is still 0: in range, so main gave no error at all
        idx = cla.to_device(queue, np.array(values, index_dtype).reshape(1, 2, 1, 1))
        if np.dtype(index_dtype).isnative:
            y = clops.max_unpooling(x, idx, (1, 2, 2, 2)).get()
            assert y.ravel().tolist() == ([9, 0, 0, 0, 0, 0, 0, 0] if values == [0, 0] else [9, 7, 0, 0, 0, 0, 0, 0])
            continue
        with pytest.raises(TypeError, match="big-endian" if index_dtype[0] == ">" else "little-endian"):
            clops.max_unpooling(x, idx, (1, 2, 2, 2))


def test_big_endian_tensors_keep_their_dtype(queue):
    """Tensors' elements are only moved: one in the other byte order runs unchanged and keeps its dtype."""
    x = random_array((1, 8, 2, 3), np.float32, seed=4).astype(">f4")
    y = clops.depth_to_space(cla.to_device(queue, x), 2)
    assert y.dtype == np.dtype(">f4") and same_bits(y.get(), ref_depth_to_space(x, 2, "DCR"))


def test_empty(queue):
    y = clops.depth_to_space(cla.empty(queue, (0, 8, 2, 2), np.float32), 2)
    assert isinstance(y, cla.Array) and y.shape == (0, 2, 4, 4)
    y = clops.max_unpooling(cla.empty(queue, (1, 2, 0, 3), np.float32), cla.empty(queue, (1, 2, 0, 3), np.int64),
                            (1, 2, 2, 2))
    assert same_bits(y.get(), np.zeros((1, 2, 2, 2), np.float32))


def test_bad_arguments(queue):
    xd = cla.to_device(queue, np.zeros((1, 8, 2, 3), np.float32))
    with pytest.raises(ValueError, match="CLOPS_ERROR_CHANNELS_NOT_DIVISIBLE"):
        clops.depth_to_space(xd, 3)
    with pytest.raises(ValueError, match="own queue"):
        clops.depth_to_space(xd, 2, device="host")
    with pytest.raises(TypeError, match="pyopencl array"):
        clops.max_unpooling(xd, np.zeros(xd.shape, np.int64), (1, 8, 4, 6))
    with pytest.raises(TypeError, match="pyopencl array"):
        clops.max_unpooling(np.zeros(xd.shape, np.float32), cla.to_device(queue, np.zeros(xd.shape, np.int64)),
                            (1, 8, 4, 6))
    with pytest.raises(ValueError, match="CLOPS_ERROR_INDEX_OUT_OF_RANGE"):
        clops.max_unpooling(xd, cla.to_device(queue, np.full(xd.shape, 10**6, np.int64)), (1, 8, 4, 6))
    other = cl.CommandQueue(_context())
    with pytest.raises(ValueError, match="different OpenCL contexts"):
        clops.max_unpooling(xd, cla.to_device(other, np.zeros(xd.shape, np.int64)), (1, 8, 4, 6))


def test_many_queues_stay_bounded(context):
    from clops import _core
    x = random_array((1, 4, 2, 2), np.uint8)
    for _ in range(_core.MAX_QUEUES + 4):
        q = cl.CommandQueue(context)
        assert same_bits(clops.depth_to_space(cla.to_device(q, x), 2).get(), ref_depth_to_space(x, 2, "DCR"))
    assert sum(1 for k in _core._contexts if k[0] == "cl") <= _core.MAX_QUEUES


def test_queue_contexts_are_least_recently_used(context):
    """MAX_QUEUES contexts on queues are kept; a queue used again stays, the one unused longest goes."""
    from clops import _core
    clops.clear_cache()
    x = cla.to_device(cl.CommandQueue(context), random_array((1, 4, 2, 2), np.uint8))
    queues = [cl.CommandQueue(context) for _ in range(_core.MAX_QUEUES)]
    for q in queues:
        clops.depth_to_space(x.with_queue(q), 2).finish()
    first = _core._contexts[("cl", queues[0].int_ptr)]
    clops.depth_to_space(x.with_queue(queues[0]), 2).finish()   # a hit: queues[0] is now the most recent
    extra = cl.CommandQueue(context)
    clops.depth_to_space(x.with_queue(extra), 2).finish()       # one too many: queues[1] goes
    keys = [k for k in _core._contexts if k[0] == "cl"]
    assert len(keys) == _core.MAX_QUEUES
    assert _core._contexts.get(("cl", queues[0].int_ptr)) is first
    assert ("cl", queues[1].int_ptr) not in _core._contexts and ("cl", extra.int_ptr) in _core._contexts


def test_arrays_clops_cannot_take(queue, context):
    """A queue-less array, one in shared virtual memory and one with negative strides: ValueError or
    TypeError that says so (a NumPy array with negative strides is copied instead: test_numpy.py)."""
    x = random_array((1, 8, 2, 3), np.float32, seed=8)
    xd = cla.to_device(queue, x)
    with pytest.raises(ValueError, match="without a queue"):
        clops.depth_to_space(xd.with_queue(None), 2)
    idx = cla.to_device(queue, np.arange(48, dtype=np.int64).reshape(x.shape))
    with pytest.raises(ValueError, match="without a queue"):
        clops.max_unpooling(xd.with_queue(None), idx, (1, 8, 2, 3))
    y = clops.max_unpooling(xd, idx.with_queue(None), (1, 8, 2, 3))  # indices run on x's queue
    assert same_bits(y.get(), x)
    with pytest.raises(ValueError, match="negative or not whole elements"):
        clops.depth_to_space(xd[:, :, :, ::-1], 2)
    with pytest.raises(ValueError, match="negative or not whole elements"):
        clops.max_unpooling(xd, idx[:, :, ::-1], (1, 8, 2, 3))
    svm_queue = cl.CommandQueue(context)  # pyopencl's SVM allocations take in-order queues only
    try:
        svm = cl.tools.SVMAllocator(context, alignment=0, queue=svm_queue)
        xs = cla.to_device(svm_queue, x, allocator=svm)
    except (cl.Error, AttributeError, TypeError):
        pytest.skip("the device has no shared virtual memory")
    with pytest.raises(TypeError, match="shared virtual memory"):
        clops.depth_to_space(xs, 2)
    with pytest.raises(TypeError, match="shared virtual memory"):
        clops.max_unpooling(xd.with_queue(svm_queue), cla.to_device(svm_queue, idx.get(), allocator=svm),
                            (1, 8, 2, 3))
