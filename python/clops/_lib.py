"""_lib.py - libclops through ctypes: the structs and functions of include/clops/clops.h (and of
clops_max_unpooling.h and clops_devices.h) used here, and the one place where a clops status becomes a
Python exception.

The library is the libclops.so.0 that `pip install .` put into the package (clops/lib/: the wheel
carries that one file, see pyproject.toml); the environment variable CLOPS_LIBRARY names another one (a
build tree's build/libclops.so). ctypes releases the GIL for every call into it.
"""
import ctypes
import glob
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def _library_path():
    named = os.environ.get("CLOPS_LIBRARY")
    if named:
        return named
    found = sorted(glob.glob(os.path.join(_HERE, "lib*", "libclops.so.0")) +
                   glob.glob(os.path.join(_HERE, "lib*", "libclops*.dylib")), key=len)
    if not found:
        raise ImportError(f"clops: libclops is not in {_HERE}/lib: install the package with `pip install .` "
                          "from the clops repository, or name a library with CLOPS_LIBRARY")
    return found[0]


lib = ctypes.CDLL(_library_path())

c_status = ctypes.c_int
c_void_p = ctypes.c_void_p

# ---- clops.h's structs ------------------------------------------------------------------------------


class TensorDesc(ctypes.Structure):
    _fields_ = [("data_type", ctypes.c_int), ("sizes", ctypes.c_uint32 * 4),
                ("strides", ctypes.POINTER(ctypes.c_uint64))]


class DepthSpaceDesc(ctypes.Structure):  # clops_depth_to_space_desc and clops_space_to_depth_desc
    _fields_ = [("input", ctypes.POINTER(TensorDesc)), ("output", ctypes.POINTER(TensorDesc)),
                ("block_size", ctypes.c_uint32), ("order", ctypes.c_int)]


class MaxUnpoolingDesc(ctypes.Structure):  # clops_max_unpooling_desc (clops_max_unpooling.h)
    _fields_ = [("input", ctypes.POINTER(TensorDesc)), ("indices", ctypes.POINTER(TensorDesc)),
                ("output", ctypes.POINTER(TensorDesc)), ("indices_layout", ctypes.c_int)]


class OperatorDesc(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("desc", c_void_p)]


class DeviceInfo(ctypes.Structure):
    _fields_ = [("index", ctypes.c_uint), ("platform", c_void_p), ("device", c_void_p),
                ("type", ctypes.c_uint64), ("platform_name", ctypes.c_char * 128),
                ("device_name", ctypes.c_char * 128), ("device_version", ctypes.c_char * 128),
                ("opencl_c_version", ctypes.c_char * 64), ("has_fp16", ctypes.c_int), ("has_fp64", ctypes.c_int),
                ("has_int64", ctypes.c_int), ("compiler_available", ctypes.c_int),
                ("max_alloc_bytes", ctypes.c_uint64)]


class OperatorInfo(ctypes.Structure):  # clops_operator_info (clops.h)
    _fields_ = [("backend", ctypes.c_int), ("kernel_name", ctypes.c_char_p), ("global_size", ctypes.c_size_t * 3),
                ("local_size", ctypes.c_size_t * 3), ("work_dim", ctypes.c_uint), ("build_options", ctypes.c_char_p),
                ("program_origin", ctypes.c_char_p), ("local_size_origin", ctypes.c_char_p),
                ("fallback_reason", ctypes.c_char_p)]


class HostBuffers(ctypes.Structure):
    _fields_ = [("input", c_void_p), ("input_bytes", ctypes.c_size_t), ("indices", c_void_p),
                ("indices_bytes", ctypes.c_size_t), ("output", c_void_p), ("output_bytes", ctypes.c_size_t)]


class Buffers(ctypes.Structure):
    _fields_ = [("input", c_void_p), ("indices", c_void_p), ("output", c_void_p)]


class ProgramSelection(ctypes.Structure):  # clops_program_selection (clops_cache.h)
    _fields_ = [("ops", ctypes.c_uint), ("types", ctypes.POINTER(ctypes.c_int)), ("type_count", ctypes.c_size_t),
                ("blocks", ctypes.POINTER(ctypes.c_uint32)), ("block_count", ctypes.c_size_t),
                ("layouts", ctypes.c_uint), ("windows", ctypes.POINTER(ctypes.c_uint32)),
                ("window_count", ctypes.c_size_t)]


class PreparedProgram(ctypes.Structure):  # clops_prepared_program
    _fields_ = [("source_name", ctypes.c_char_p), ("build_options", ctypes.c_char_p), ("origin", ctypes.c_char_p),
                ("status", ctypes.c_int), ("message", ctypes.c_char_p), ("done", ctypes.c_size_t),
                ("total", ctypes.c_size_t)]


class PrepareReport(ctypes.Structure):  # clops_prepare_report
    _fields_ = [("total", ctypes.c_size_t), ("built", ctypes.c_size_t), ("cached", ctypes.c_size_t),
                ("failed", ctypes.c_size_t)]


PREPARE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(PreparedProgram))
SELECT_DEPTH_TO_SPACE, SELECT_SPACE_TO_DEPTH, SELECT_MAX_UNPOOLING = 1, 2, 4
SELECT_PACKED, SELECT_NHWC, SELECT_STRIDED = 1, 2, 4
DATA_TYPE_BFLOAT16 = 101

# clops.h's enum values used here.
OP_DEPTH_TO_SPACE, OP_SPACE_TO_DEPTH, OP_MAX_UNPOOLING = 1, 2, 3
ORDER_DCR, ORDER_CRD = 0, 1
INDICES_FLAT, INDICES_PER_PLANE = 0, 1
DEVICE_STRING_PLATFORM_NAME, DEVICE_STRING_DEVICE_NAME = 1, 3
DEVICE_STRING_VENDOR, DEVICE_STRING_DEVICE_VERSION, DEVICE_STRING_DRIVER_VERSION = 4, 5, 6
DEVICE_STRING_OPENCL_C_VERSION = 7
BACKEND_OPENCL, BACKEND_HOST = 1, 2

# NumPy dtype kind + item size -> clops_data_type (BFLOAT16 has no NumPy dtype).
DATA_TYPES = {("b", 1): 100, ("i", 1): 8, ("u", 1): 5, ("i", 2): 7, ("u", 2): 4, ("f", 2): 2, ("i", 4): 6,
              ("u", 4): 3, ("f", 4): 1, ("i", 8): 11, ("u", 8): 10, ("f", 8): 9, ("c", 8): 102, ("c", 16): 103}


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


P = ctypes.POINTER
version_string = _fn("clops_version_string", ctypes.c_char_p)
status_name = _fn("clops_status_name", ctypes.c_char_p, ctypes.c_int)
status_message = _fn("clops_status_message", ctypes.c_char_p, ctypes.c_int)
last_error_message = _fn("clops_last_error_message", ctypes.c_char_p)
device_list = _fn("clops_device_list", c_status, P(DeviceInfo), ctypes.c_size_t, P(ctypes.c_size_t))
device_string = _fn("clops_device_string", c_status, P(DeviceInfo), ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t,
                    P(ctypes.c_size_t))
device_plan = _fn("clops_device_plan", ctypes.c_size_t, P(DeviceInfo), ctypes.c_char_p, ctypes.c_size_t)
default_device = _fn("clops_default_device", c_status, P(ctypes.c_int), P(ctypes.c_uint))
default_device_for_host_data = _fn("clops_default_device_for_host_data", c_status, P(ctypes.c_int),
                                   P(ctypes.c_uint), P(ctypes.c_int))
context_create_device = _fn("clops_context_create_device", c_status, ctypes.c_uint, P(c_void_p))
context_create_host = _fn("clops_context_create_host", c_status, P(c_void_p))
context_create_from_cl = _fn("clops_context_create_from_cl", c_status, c_void_p, c_void_p, c_void_p, P(c_void_p))
context_free = _fn("clops_context_free", None, c_void_p)
context_device_name = _fn("clops_context_device_name", ctypes.c_char_p, c_void_p)
context_backend = _fn("clops_context_backend", ctypes.c_int, c_void_p)
operator_output_sizes = _fn("clops_operator_output_sizes", c_status, P(OperatorDesc), P(ctypes.c_uint32))
operator_create = _fn("clops_operator_create", c_status, c_void_p, P(OperatorDesc), P(c_void_p))
operator_free = _fn("clops_operator_free", None, c_void_p)
operator_get_info = _fn("clops_operator_get_info", c_status, c_void_p, P(OperatorInfo))
operator_execute = _fn("clops_operator_execute", c_status, c_void_p, P(Buffers), ctypes.c_uint, P(c_void_p),
                       P(c_void_p))
operator_last_status = _fn("clops_operator_last_status", c_status, c_void_p)
operator_execute_host = _fn("clops_operator_execute_host", c_status, c_void_p, P(HostBuffers))
host_run = _fn("clops_host_run", c_status, P(OperatorDesc), P(HostBuffers))
programs_prepare = _fn("clops_programs_prepare", c_status, ctypes.c_uint, P(ProgramSelection), ctypes.c_uint,
                       PREPARE_FN, c_void_p, P(PrepareReport))

# ---- statuses -> exceptions -------------------------------------------------------------------------


class Error(RuntimeError):
    """A failure of the device or of clops itself (not of the arguments): a build that failed, a device
    that was lost or missed its deadline, memory that ran out. `status` is the clops status code (an int,
    OpenCL's own codes included) and `name` its name, e.g. "CLOPS_ERROR_DEVICE_LOST"."""

    def __init__(self, status, name, message):
        super().__init__(f"{name}: {message}")
        self.status = status
        self.name = name
        self.message = message

    def __reduce__(self):  # pickled (multiprocessing, concurrent.futures) with what __init__ takes
        return type(self), (self.status, self.name, self.message)


_TYPE_ERRORS = {-15002, -15003, -15010}  # unsupported data type, type mismatch, unsupported index type
# Argument and descriptor codes (-15000..-15099), out-of-range indices, a device that does not exist,
# a bad setting: the caller's doing.
_VALUE_ERRORS = set(range(-15099, -14999)) - _TYPE_ERRORS | {-15100, -15201, -15209}


def name_of(status):
    return status_name(status).decode()


def exception(status, message=None):
    """The exception for a failed status: TypeError, ValueError, else Error, with the library's detailed
    message of this thread's last failure (or `message`)."""
    name = name_of(status)
    detail = message or last_error_message().decode(errors="replace") or status_message(status).decode()
    if status in _TYPE_ERRORS:
        return TypeError(f"{detail} ({name})")
    if status in _VALUE_ERRORS:
        return ValueError(f"{detail} ({name})")
    return Error(status, name, detail)


def check(status):
    if status != 0:
        raise exception(status)
