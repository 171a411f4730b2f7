"""ctypes mirror of abi/rmsnorm.h: the library, the structs and the status codes.

The structs copy the C layout field for field; struct_size is always
ctypes.sizeof of the mirror, so a library newer than this file reads the fields
it knows and treats the rest as zero (docs/abi.md). tests/abi/layout.c prints
the C layout and bindings/python/tests/test_layout.py compares the two.
"""

import ctypes
import ctypes.util
import os

# Status codes: frozen values (abi/rmsnorm.h).
STATUS_NAMES = {
    0: "RMSNORM_OK",
    1: "RMSNORM_ERR_NULL_POINTER",
    2: "RMSNORM_ERR_BAD_SHAPE",
    3: "RMSNORM_ERR_BAD_DTYPE",
    4: "RMSNORM_ERR_BAD_EPS",
    5: "RMSNORM_ERR_BAD_ALIAS",
    6: "RMSNORM_ERR_BAD_STRUCT_SIZE",
    7: "RMSNORM_ERR_BAD_FLAGS",
    8: "RMSNORM_ERR_WORKSPACE_TOO_SMALL",
    9: "RMSNORM_ERR_UNSUPPORTED",
    10: "RMSNORM_ERR_BACKEND_UNAVAILABLE",
    11: "RMSNORM_ERR_DEVICE",
    12: "RMSNORM_ERR_BAD_ARGUMENT",
    13: "RMSNORM_ERR_MISALIGNED",
}
OK = 0
ERR_BAD_STRUCT_SIZE = 6
ERR_BACKEND_UNAVAILABLE = 10

F32, F16, BF16, F8_E4M3, F8_E5M2, F8_E4M3FNUZ = range(6)
QUANT_NONE, QUANT_PER_TENSOR, QUANT_PER_TOKEN, QUANT_PER_BLOCK_128 = range(4)
COPY_TO_BACKEND, COPY_TO_HOST, COPY_WITHIN_BACKEND = range(3)
ROUND_ONCE = 0
ROUND_LLAMA = 1 << 0
SCALE_POW2 = 1 << 1

CAP_NAMES = (
    "f32", "f16", "bf16", "forward", "backward", "residual", "quant_per_tensor",
    "quant_per_token", "quant_per_block", "fp8_e4m3", "fp8_e5m2", "fp8_e4m3fnuz",
)

# Enums crossing the ABI are 32 bits (0x7FFFFFFF sentinels); GCC and Clang give
# them an unsigned int underlying type.
_enum = ctypes.c_uint32


class Matrix(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", _enum),
        ("rows", ctypes.c_int64),
        ("cols", ctypes.c_int64),
        ("row_stride", ctypes.c_int64),
    ]


class ForwardArgs(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("x", Matrix),
        ("residual", Matrix),
        ("h_out", Matrix),
        ("weight", ctypes.c_void_p),
        ("weight_dtype", _enum),
        ("weight_offset", ctypes.c_float),
        ("eps", ctypes.c_float),
        ("flags", ctypes.c_uint32),
        ("y", Matrix),
        ("rstd", ctypes.c_void_p),
        ("quant_mode", _enum),
        ("scale_ub", ctypes.c_float),
        ("q", Matrix),
        ("scale", ctypes.c_void_p),
    ]


class BackwardArgs(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("dy", Matrix),
        ("x", Matrix),
        ("weight", ctypes.c_void_p),
        ("weight_dtype", _enum),
        ("weight_offset", ctypes.c_float),
        ("rstd", ctypes.c_void_p),
        ("eps", ctypes.c_float),
        ("flags", ctypes.c_uint32),
        ("dx", Matrix),
        ("dresidual", Matrix),
        ("dweight", ctypes.c_void_p),
        ("workspace", ctypes.c_void_p),
        ("workspace_bytes", ctypes.c_size_t),
    ]


class RMSNormError(RuntimeError):
    """A call into librmsnorm returned a status other than RMSNORM_OK.

    status is the numeric code, name its RMSNORM_* name, message the library's
    own rmsnorm_status_string()."""

    def __init__(self, status, message, what=""):
        self.status = int(status)
        self.name = STATUS_NAMES.get(self.status, "status %d" % self.status)
        self.message = message
        prefix = what + ": " if what else ""
        super().__init__("%s%s (%s)" % (prefix, message, self.name))


_SONAME = "librmsnorm.so.1"


def _candidates():
    env = os.environ.get("RMSNORM_LIBRARY")
    if env:
        # An explicit choice is final: a typo must not silently load another copy.
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    paths = [os.path.join(d, _SONAME) for d in (here, os.path.dirname(here))]
    found = ctypes.util.find_library("rmsnorm")
    # Finally the bare SONAME: the loader's own path (LD_LIBRARY_PATH, ld.so.cache).
    return [p for p in paths if os.path.exists(p)] + ([found] if found else []) + [_SONAME]


def _load():
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errors.append("%s: %s" % (path, e))
    raise ImportError(
        "librmsnorm not found; set RMSNORM_LIBRARY to the path of librmsnorm.so.1 "
        "(tried: %s)" % "; ".join(errors)
    )


lib, library_path = _load()

_be = ctypes.c_void_p
_st = ctypes.c_int
_SIGNATURES = {
    "rmsnorm_version": (ctypes.c_uint32, []),
    "rmsnorm_status_string": (ctypes.c_char_p, [_st]),
    "rmsnorm_dtype_size": (ctypes.c_size_t, [_enum]),
    "rmsnorm_backend_count": (ctypes.c_int, []),
    "rmsnorm_backend_at": (_be, [ctypes.c_int]),
    "rmsnorm_backend_find": (_be, [ctypes.c_char_p]),
    "rmsnorm_backend_name": (ctypes.c_char_p, [_be]),
    "rmsnorm_backend_is_device": (ctypes.c_int, [_be]),
    "rmsnorm_backend_caps": (ctypes.c_uint32, [_be]),
    "rmsnorm_mem_alloc": (_st, [_be, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)]),
    "rmsnorm_mem_free": (_st, [_be, ctypes.c_void_p]),
    "rmsnorm_mem_copy": (_st, [_be, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, _enum,
                               ctypes.c_void_p]),
    "rmsnorm_synchronize": (_st, [_be, ctypes.c_void_p]),
    "rmsnorm_quant_scale_count": (_st, [_enum, ctypes.c_int64, ctypes.c_int64,
                                        ctypes.POINTER(ctypes.c_size_t)]),
    "rmsnorm_backward_workspace_size": (_st, [_be, ctypes.c_int64, ctypes.c_int64,
                                              ctypes.POINTER(ctypes.c_size_t)]),
    "rmsnorm_forward": (_st, [_be, ctypes.POINTER(ForwardArgs), ctypes.c_void_p]),
    "rmsnorm_backward": (_st, [_be, ctypes.POINTER(BackwardArgs), ctypes.c_void_p]),
}
for _name, (_res, _args) in _SIGNATURES.items():
    _fn = getattr(lib, _name)
    _fn.restype = _res
    _fn.argtypes = _args


def status_string(status):
    return lib.rmsnorm_status_string(int(status)).decode("utf-8", "replace")


def check(status, what=""):
    if status != OK:
        raise RMSNormError(status, status_string(status), what)
