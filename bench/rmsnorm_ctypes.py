"""ctypes binding of librmsnorm's public ABI (abi/rmsnorm.h), for the GPU
comparison scripts (bench/peers.py, bench/gpu_*.py). Mirrors the C structs
field for field; ctypes applies the same alignment rules as the C compiler."""
import ctypes as C
import os

F32, F16, BF16, F8_E4M3, F8_E5M2, F8_E4M3FNUZ = 0, 1, 2, 3, 4, 5
Q_NONE, Q_TENSOR, Q_TOKEN, Q_BLOCK = 0, 1, 2, 3
ROUND_LLAMA, SCALE_POW2 = 1, 2


class Matrix(C.Structure):
    _fields_ = [("data", C.c_void_p), ("dtype", C.c_int32), ("rows", C.c_int64),
                ("cols", C.c_int64), ("row_stride", C.c_int64)]


class ForwardArgs(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("x", Matrix), ("residual", Matrix), ("h_out", Matrix),
                ("weight", C.c_void_p), ("weight_dtype", C.c_int32), ("weight_offset", C.c_float),
                ("eps", C.c_float), ("flags", C.c_uint32), ("y", Matrix), ("rstd", C.c_void_p),
                ("quant_mode", C.c_int32), ("scale_ub", C.c_float), ("q", Matrix), ("scale", C.c_void_p)]


class BackwardArgs(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("dy", Matrix), ("x", Matrix), ("weight", C.c_void_p),
                ("weight_dtype", C.c_int32), ("weight_offset", C.c_float), ("rstd", C.c_void_p),
                ("eps", C.c_float), ("flags", C.c_uint32), ("dx", Matrix), ("dresidual", Matrix),
                ("dweight", C.c_void_p), ("workspace", C.c_void_p), ("workspace_bytes", C.c_size_t)]


def load(path=None):
    path = path or os.environ.get("RMSNORM_LIB", "build/librmsnorm.so")
    lib = C.CDLL(os.path.abspath(path))
    lib.rmsnorm_backend_find.restype = C.c_void_p
    lib.rmsnorm_backend_find.argtypes = [C.c_char_p]
    lib.rmsnorm_forward.argtypes = [C.c_void_p, C.POINTER(ForwardArgs), C.c_void_p]
    lib.rmsnorm_backward.argtypes = [C.c_void_p, C.POINTER(BackwardArgs), C.c_void_p]
    lib.rmsnorm_backward_workspace_size.argtypes = [C.c_void_p, C.c_int64, C.c_int64,
                                                    C.POINTER(C.c_size_t)]
    lib.rmsnorm_status_string.restype = C.c_char_p
    return lib


def mat(t, dtype, rows=None, cols=None):
    """A Matrix view of a 2-D torch tensor (None -> empty matrix)."""
    if t is None:
        return Matrix(None, dtype, rows or 0, cols or 0, cols or 0)
    return Matrix(t.data_ptr(), dtype, t.shape[0], t.shape[1], t.stride(0))
