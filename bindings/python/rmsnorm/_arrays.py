"""Array adapters: numpy arrays (host memory) and torch tensors (CPU or CUDA/HIP)
seen as row-major [rows, cols] views with a pointer, a dtype code and a row stride.

Only the last dimension must be contiguous. A 2-D input keeps its row stride
(no copy); an N-D input is flattened to [prod(leading), cols], which copies only
when the leading dimensions cannot be merged.
"""

import numpy as np

from . import _capi as c

try:  # optional: numpy's bfloat16 and fp8 dtypes
    import ml_dtypes
except ImportError:  # pragma: no cover - depends on the environment
    ml_dtypes = None

_NP_CODES = {np.dtype(np.float32): c.F32, np.dtype(np.float16): c.F16}
if ml_dtypes is not None:
    _NP_CODES[np.dtype(ml_dtypes.bfloat16)] = c.BF16

DTYPE_NAMES = {"f32": c.F32, "float32": c.F32, "f16": c.F16, "float16": c.F16,
               "bf16": c.BF16, "bfloat16": c.BF16}
FP8_NAMES = {"e4m3": c.F8_E4M3, "e4m3fn": c.F8_E4M3, "e5m2": c.F8_E5M2,
             "e4m3fnuz": c.F8_E4M3FNUZ}


def _torch():
    import sys
    return sys.modules.get("torch")


def is_torch(a):
    t = _torch()
    return t is not None and isinstance(a, t.Tensor)


def torch_codes(torch):
    return {torch.float32: c.F32, torch.float16: c.F16, torch.bfloat16: c.BF16}


def torch_fp8_dtype(torch, code):
    name = {c.F8_E4M3: "float8_e4m3fn", c.F8_E5M2: "float8_e5m2",
            c.F8_E4M3FNUZ: "float8_e4m3fnuz"}[code]
    return getattr(torch, name, torch.uint8)


class View:
    """A [rows, cols] view of an array: what a rmsnorm_matrix describes."""

    __slots__ = ("array", "ptr", "code", "rows", "cols", "row_stride", "shape")

    def __init__(self, array, ptr, code, rows, cols, row_stride, shape):
        self.array = array  # keeps the memory alive while the call runs
        self.ptr = ptr
        self.code = code
        self.rows = rows
        self.cols = cols
        self.row_stride = row_stride
        self.shape = shape

    def matrix(self):
        m = c.Matrix()
        m.data = self.ptr
        m.dtype = self.code
        m.rows = self.rows
        m.cols = self.cols
        m.row_stride = self.row_stride
        return m


def _code_of_numpy(a, dtype):
    if a.dtype == np.uint16:
        # Raw 16-bit patterns: bfloat16 unless the caller says f16.
        return c.F16 if dtype == c.F16 else c.BF16
    code = _NP_CODES.get(a.dtype)
    if code is None:
        raise TypeError("rmsnorm: unsupported numpy dtype %s (float32, float16, bfloat16 via "
                        "ml_dtypes, or uint16 holding bfloat16 bits)" % a.dtype)
    return code


def view(a, what, dtype=None):
    """Wraps an input array; dtype (a code) only disambiguates uint16 arrays."""
    if is_torch(a):
        torch = _torch()
        code = torch_codes(torch).get(a.dtype)
        if code is None:
            raise TypeError("rmsnorm: %s has unsupported dtype %s" % (what, a.dtype))
        if a.dim() == 0:
            raise ValueError("rmsnorm: %s must have at least one dimension" % what)
        if a.stride(-1) != 1 or (a.dim() == 2 and a.stride(0) < a.shape[1]):
            a = a.contiguous()
        if a.dim() == 2:
            rows, cols, stride = a.shape[0], a.shape[1], a.stride(0)
            if rows <= 1:
                stride = cols
            return View(a, a.data_ptr(), code, rows, cols, stride, tuple(a.shape))
        flat = a.reshape(-1, a.shape[-1])
        if flat.dim() == 2 and flat.shape[0] > 1 and flat.stride(0) < flat.shape[1]:
            flat = flat.contiguous()
        stride = flat.stride(0) if flat.shape[0] > 1 else flat.shape[1]
        return View(flat, flat.data_ptr(), code, flat.shape[0], flat.shape[1], stride,
                    tuple(a.shape))
    a = np.asarray(a)
    code = _code_of_numpy(a, dtype)
    if a.ndim == 0:
        raise ValueError("rmsnorm: %s must have at least one dimension" % what)
    item = a.itemsize
    shape = a.shape
    if a.ndim == 2 and a.strides[1] == item and a.strides[0] % item == 0 \
            and a.strides[0] >= a.shape[1] * item:
        flat = a
    else:
        flat = np.ascontiguousarray(a).reshape(-1, a.shape[-1])
    stride = flat.strides[0] // item if flat.shape[0] > 1 else flat.shape[1]
    return View(flat, flat.ctypes.data, code, flat.shape[0], flat.shape[1], stride, shape)


def flat_input(a, what, code=None):
    """A 1-D input (weight, rstd, scale): contiguous, returns (array, ptr, code);
    code only disambiguates a numpy uint16 array."""
    if is_torch(a):
        torch = _torch()
        a = a.contiguous()
        k = torch_codes(torch).get(a.dtype)
        if k is None:
            raise TypeError("rmsnorm: %s has unsupported dtype %s" % (what, a.dtype))
        return a, a.data_ptr(), k
    a = np.ascontiguousarray(a)
    return a, a.ctypes.data, _code_of_numpy(a, code)


def device_of(a):
    """'cpu', or ('cuda', index) for a torch tensor on a GPU."""
    if is_torch(a) and a.device.type != "cpu":
        return a.device
    return "cpu"


def empty_like_view(like, shape, code, fp8=False):
    """A new contiguous output in the same library (numpy/torch) and device as like."""
    if is_torch(like.array):
        torch = _torch()
        if fp8:
            dt = torch_fp8_dtype(torch, code)
        else:
            dt = {c.F32: torch.float32, c.F16: torch.float16, c.BF16: torch.bfloat16}[code]
        return torch.empty(shape, dtype=dt, device=like.array.device)
    if fp8:
        return np.empty(shape, dtype=np.uint8)
    # Outputs have x's dtype T and x's representation (uint16 bits stay uint16).
    return np.empty(shape, dtype=like.array.dtype)


def empty_f32(like, n):
    if is_torch(like.array):
        torch = _torch()
        return torch.empty((n,), dtype=torch.float32, device=like.array.device)
    return np.empty((n,), dtype=np.float32)


def workspace(like, nbytes, align=256):
    """Scratch memory in the view's memory space, aligned to `align` bytes."""
    n = max(int(nbytes), 1) + align
    if is_torch(like.array):
        torch = _torch()
        buf = torch.empty((n,), dtype=torch.uint8, device=like.array.device)
        ptr = buf.data_ptr()
    else:
        buf = np.empty((n,), dtype=np.uint8)
        ptr = buf.ctypes.data
    return buf, (ptr + align - 1) // align * align


def ptr_of(a):
    return a.data_ptr() if is_torch(a) else a.ctypes.data
