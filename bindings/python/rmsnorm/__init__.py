"""librmsnorm for Python: RMSNorm forward/backward with fused residual add and
fp8 quantisation, over the library's C ABI (ctypes; numpy is the one dependency).

    import numpy as np, rmsnorm
    x = np.random.randn(4, 4096).astype(np.float32)
    w = np.ones(4096, np.float32)
    y = rmsnorm.forward(x, w, eps=1e-6)
    dx, dw = rmsnorm.backward(np.ones_like(y), x, w, eps=1e-6)

With PyTorch installed, the same calls take torch tensors on the CPU or a GPU
(the GPU's current stream is used), and rmsnorm.rms_norm, rmsnorm.RMSNormFunction
and rmsnorm.LlamaRMSNorm (a drop-in for Hugging Face's) are differentiable.

The library is found through RMSNORM_LIBRARY (a path), else next to this
package, else the system loader's path (librmsnorm.so.1).
"""

from ._capi import RMSNormError, library_path, status_string  # noqa: F401
from ._formats import bf16_to_f32, f32_to_bf16, fp8_decode  # noqa: F401
from ._ops import Backend, ForwardResult, backends, backward, forward, version  # noqa: F401

__all__ = [
    "RMSNormError", "Backend", "ForwardResult", "backends", "forward", "backward", "version",
    "status_string", "library_path", "bf16_to_f32", "f32_to_bf16", "fp8_decode",
    "rms_norm", "RMSNormFunction", "LlamaRMSNorm",
]

_TORCH_NAMES = ("rms_norm", "RMSNormFunction", "LlamaRMSNorm", "eager_llama_rms_norm")


def __getattr__(name):
    # The torch parts load on first use so that `import rmsnorm` never imports torch.
    if name in _TORCH_NAMES:
        from . import _torch
        return getattr(_torch, name)
    raise AttributeError("module 'rmsnorm' has no attribute %r" % name)
