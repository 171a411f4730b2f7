"""rmsnorm.forward / rmsnorm.backward / rmsnorm.backends over the C ABI."""

import ctypes
import os
from collections import namedtuple

import numpy as np

from . import _arrays as A
from . import _capi as c

Backend = namedtuple("Backend", "name is_device caps handle")
Backend.__doc__ = "A backend the library found: name, is_device, caps (set of names), handle."

ForwardResult = namedtuple("ForwardResult", "y h rstd q scale")
ForwardResult.__doc__ = """Outputs of forward(); a field is None when it was not asked for.
y: normalised output; h: x + residual; rstd: float32 [rows]; q: fp8 codes
(numpy uint8 / a torch float8 dtype); scale: float32 scales (see quant)."""

_QUANT = {None: c.QUANT_NONE, "none": c.QUANT_NONE, "per_tensor": c.QUANT_PER_TENSOR,
          "per_token": c.QUANT_PER_TOKEN, "per_block_128": c.QUANT_PER_BLOCK_128}
_ROUNDING = {"once": c.ROUND_ONCE, "llama": c.ROUND_LLAMA}


def _backend(handle):
    caps = c.lib.rmsnorm_backend_caps(handle)
    return Backend(
        name=c.lib.rmsnorm_backend_name(handle).decode(),
        is_device=bool(c.lib.rmsnorm_backend_is_device(handle)),
        caps=frozenset(n for i, n in enumerate(c.CAP_NAMES) if caps & (1 << i)),
        handle=handle,
    )


def backends():
    """The backends present in this process, in the library's order."""
    out = []
    for i in range(c.lib.rmsnorm_backend_count()):
        h = c.lib.rmsnorm_backend_at(i)
        if h:
            out.append(_backend(h))
    return out


def version():
    """The loaded library's version as (major, minor, patch)."""
    v = c.lib.rmsnorm_version()
    return (v >> 16, (v >> 8) & 0xFF, v & 0xFF)


def _find(name):
    h = c.lib.rmsnorm_backend_find(name.encode())
    if not h:
        raise c.RMSNormError(c.ERR_BACKEND_UNAVAILABLE,
                             c.status_string(c.ERR_BACKEND_UNAVAILABLE),
                             "backend %r" % name)
    return _backend(h)


def _pick(backend, device):
    """The backend for arrays on `device`: the named one, else the best for it."""
    if isinstance(backend, Backend):
        be = backend
    elif backend is not None:
        be = _find(backend)
    elif device != "cpu":
        torch = A._torch()
        be = _find("hip" if getattr(torch.version, "hip", None) else "cuda")
    else:
        # "auto" is the fastest backend present, which may be a GPU; host arrays
        # need a host backend, so fall back to the best CPU one.
        be = _find("auto")
        if be.is_device:
            pinned = os.environ.get("RMSNORM_BACKEND", "")
            present = {b.name: b for b in backends() if not b.is_device}
            be = present.get(pinned) or present.get("avx512") or present.get("ref")
            if be is None:
                be = next(iter(present.values()))
    if be.is_device != (device != "cpu"):
        raise ValueError("rmsnorm: backend %r works on %s memory but the arrays are on %s"
                         % (be.name, "device" if be.is_device else "host", device))
    return be


def _stream(stream, device):
    """The stream handle to pass: the caller's, else torch's current one on a GPU."""
    if stream is not None:
        return getattr(stream, "cuda_stream", stream)
    if device == "cpu":
        return None
    return A._torch().cuda.current_stream(device).cuda_stream


class _DeviceGuard:
    """Makes the tensors' GPU the current one while the library queues work."""

    def __init__(self, device):
        self.ctx = None
        if device != "cpu":
            self.ctx = A._torch().cuda.device(device)

    def __enter__(self):
        if self.ctx is not None:
            self.ctx.__enter__()

    def __exit__(self, *exc):
        if self.ctx is not None:
            self.ctx.__exit__(*exc)


def _same_device(device, arrays, names):
    for a, n in zip(arrays, names):
        if a is not None and A.device_of(a) != device:
            raise ValueError("rmsnorm: %s is on %s, x is on %s" % (n, A.device_of(a), device))


def _output(out, like, code, what):
    """Wraps a caller-provided output array, checking its dtype."""
    v = A.view(out, what, code)
    if v.code != code or v.rows != like.rows or v.cols != like.cols:
        raise ValueError("rmsnorm: %s must have x's shape and dtype" % what)
    return v


def _weight(weight, xv, device):
    if weight is None:
        return None, None, c.F32
    arr, ptr, code = A.flat_input(weight, "weight", xv.code)
    if A.device_of(arr) != device:
        raise ValueError("rmsnorm: weight is on %s, x is on %s" % (A.device_of(arr), device))
    if arr.shape != (xv.cols,):
        raise ValueError("rmsnorm: weight must have shape (%d,)" % xv.cols)
    return arr, ptr, code


def _f32_input(a, n, like, what):
    """A float32 [n] input in x's memory space (rstd, a static scale)."""
    if A.is_torch(like.array):
        torch = A._torch()
        a = torch.as_tensor(a, dtype=torch.float32, device=like.array.device).reshape(-1)
    else:
        a = np.ascontiguousarray(a, dtype=np.float32).reshape(-1)
    if a.shape[0] != n:
        raise ValueError("rmsnorm: %s must hold %d float32 values" % (what, n))
    a = a.contiguous() if A.is_torch(a) else a
    return a, A.ptr_of(a)


def forward(x, weight=None, *, eps=1e-6, residual=None, weight_offset=0.0, rounding="once",
            quant=None, fp8="e4m3", scale=None, scale_ub=0.0, scale_pow2=False,
            want_y=True, want_rstd=False, out=None, h_out=None, dtype=None,
            backend=None, stream=None):
    """RMSNorm over the last dimension of x.

    x: numpy array (float32, float16, ml_dtypes.bfloat16, or uint16 holding
    bfloat16 bits) or torch tensor (float32, float16, bfloat16; CPU or GPU).
    weight: [cols], x's dtype or float32, or None. residual: like x; then
    h = x + residual is also returned. rounding: "once" (default) or "llama"
    (Hugging Face LlamaRMSNorm's two roundings). weight_offset: 1.0 for
    Gemma-style (1 + w). quant: None, "per_tensor" (scale is the input
    scale), "per_token" or "per_block_128" (scales are outputs), with fp8 in
    "e4m3", "e5m2", "e4m3fnuz". out / h_out: optional outputs (out may be x,
    h_out may be residual, for in-place use). dtype: "f16" to read uint16
    arrays as float16 bits. backend: a name ("ref", "avx512", "cuda", ...) or
    None for the best one for x's device. stream: a CUDA/HIP stream (or its
    handle) for GPU tensors; default torch's current stream.

    Returns y alone when neither residual, quant nor want_rstd is given, else a
    ForwardResult(y, h, rstd, q, scale). Raises RMSNormError with the library's
    status string when the library refuses the call.
    """
    code_hint = A.DTYPE_NAMES.get(dtype, dtype) if dtype is not None else None
    xv = A.view(x, "x", code_hint)
    device = A.device_of(xv.array)
    _same_device(device, (residual, out, h_out), ("residual", "out", "h_out"))
    be = _pick(backend, device)
    qmode = _QUANT.get(quant)
    if qmode is None or rounding not in _ROUNDING or fp8 not in A.FP8_NAMES:
        raise ValueError("rmsnorm: unknown quant %r, rounding %r or fp8 %r" % (quant, rounding, fp8))

    a = c.ForwardArgs()
    a.struct_size = ctypes.sizeof(c.ForwardArgs)
    a.x = xv.matrix()
    keep = [xv]
    flags = _ROUNDING[rounding] | (c.SCALE_POW2 if scale_pow2 else 0)
    a.flags = flags
    a.eps = eps
    a.weight_offset = weight_offset
    warr, wptr, wcode = _weight(weight, xv, device)
    keep.append(warr)
    if wptr is not None:
        a.weight = wptr
        a.weight_dtype = wcode

    y = h = rstd = q = scales = None
    if residual is not None:
        rv = A.view(residual, "residual", xv.code)
        keep.append(rv)
        a.residual = rv.matrix()
        if h_out is None:
            h = A.empty_like_view(xv, xv.shape, xv.code)
            hv = A.view(h, "h", xv.code)
        else:
            hv = _output(h_out, xv, xv.code, "h_out")
            h = h_out
        keep.append(hv)
        a.h_out = hv.matrix()
    if want_y or qmode == c.QUANT_NONE:
        if out is None:
            y = A.empty_like_view(xv, xv.shape, xv.code)
            yv = A.view(y, "y", xv.code)
        else:
            yv = _output(out, xv, xv.code, "out")
            y = out
        keep.append(yv)
        a.y = yv.matrix()
    if want_rstd:
        rstd = A.empty_f32(xv, xv.rows)
        keep.append(rstd)
        a.rstd = A.ptr_of(rstd)
    if qmode != c.QUANT_NONE:
        fcode = A.FP8_NAMES[fp8]
        q = A.empty_like_view(xv, xv.shape, fcode, fp8=True)
        qv = A.View(q, A.ptr_of(q), fcode, xv.rows, xv.cols, xv.cols, xv.shape)
        keep.append(qv)
        a.quant_mode = qmode
        a.q = qv.matrix()
        a.scale_ub = scale_ub
        count = ctypes.c_size_t()
        c.check(c.lib.rmsnorm_quant_scale_count(qmode, xv.rows, xv.cols, ctypes.byref(count)),
                "quant_scale_count")
        if qmode == c.QUANT_PER_TENSOR:
            if scale is None:
                raise ValueError("rmsnorm: quant='per_tensor' needs scale")
            scales, sptr = _f32_input(scale, 1, xv, "scale")
        else:
            scales = A.empty_f32(xv, count.value)
            sptr = A.ptr_of(scales)
        keep.append(scales)
        a.scale = sptr

    with _DeviceGuard(device):
        st = c.lib.rmsnorm_forward(be.handle, ctypes.byref(a), _stream(stream, device))
    c.check(st, "rmsnorm_forward on %s" % be.name)
    if y is not None and out is None:
        y = y.reshape(xv.shape)
    if h is not None and h_out is None:
        h = h.reshape(xv.shape)
    if q is not None:
        q = q.reshape(xv.shape)
    if residual is None and qmode == c.QUANT_NONE and not want_rstd:
        return y
    return ForwardResult(y, h, rstd, q, scales)


def backward(dy, x, weight=None, *, rstd=None, eps=1e-6, weight_offset=0.0, rounding="once",
             dresidual=None, want_dweight=True, out=None, dtype=None, backend=None, stream=None):
    """Gradients of y = rmsnorm(x) * (weight + weight_offset) given dy.

    x is the tensor that was normalised (h when a residual was fused). rstd:
    the forward's rstd (float32 [rows]), or None to recompute it from x and
    eps. dresidual: a gradient added into dx. rounding must match the
    forward's. Returns (dx, dweight); dweight is float32 [cols], or None
    without a weight or with want_dweight=False.
    """
    code_hint = A.DTYPE_NAMES.get(dtype, dtype) if dtype is not None else None
    dyv = A.view(dy, "dy", code_hint)
    xv = A.view(x, "x", dyv.code)
    device = A.device_of(xv.array)
    _same_device(device, (dy, dresidual, out), ("dy", "dresidual", "out"))
    be = _pick(backend, device)
    if rounding not in _ROUNDING:
        raise ValueError("rmsnorm: unknown rounding %r" % (rounding,))

    a = c.BackwardArgs()
    a.struct_size = ctypes.sizeof(c.BackwardArgs)
    a.dy = dyv.matrix()
    a.x = xv.matrix()
    a.eps = eps
    a.weight_offset = weight_offset
    a.flags = _ROUNDING[rounding]
    keep = [dyv, xv]
    warr, wptr, wcode = _weight(weight, xv, device)
    keep.append(warr)
    if wptr is not None:
        a.weight = wptr
        a.weight_dtype = wcode
    if rstd is not None:
        r, rptr = _f32_input(rstd, xv.rows, xv, "rstd")
        keep.append(r)
        a.rstd = rptr
    if out is None:
        dx = A.empty_like_view(xv, xv.shape, xv.code)
        dxv = A.view(dx, "dx", xv.code)
    else:
        dxv = _output(out, xv, xv.code, "out")
        dx = out
    keep.append(dxv)
    a.dx = dxv.matrix()
    if dresidual is not None:
        drv = A.view(dresidual, "dresidual", xv.code)
        keep.append(drv)
        a.dresidual = drv.matrix()
    dweight = None
    if wptr is not None and want_dweight:
        dweight = A.empty_f32(xv, xv.cols)
        a.dweight = A.ptr_of(dweight)
        need = ctypes.c_size_t()
        c.check(c.lib.rmsnorm_backward_workspace_size(be.handle, xv.rows, xv.cols,
                                                      ctypes.byref(need)),
                "backward_workspace_size")
        buf, wsptr = A.workspace(xv, need.value)
        keep.append(buf)
        a.workspace = wsptr
        a.workspace_bytes = need.value

    with _DeviceGuard(device):
        st = c.lib.rmsnorm_backward(be.handle, ctypes.byref(a), _stream(stream, device))
    c.check(st, "rmsnorm_backward on %s" % be.name)
    if out is None:
        dx = dx.reshape(xv.shape)
    return dx, dweight
