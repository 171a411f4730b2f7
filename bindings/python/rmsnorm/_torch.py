"""PyTorch integration: an autograd Function and a drop-in for Hugging Face's
LlamaRMSNorm. Imported lazily by rmsnorm.__getattr__, so numpy-only users never
import torch."""

import torch

from . import _ops

_ACT = (torch.float32, torch.float16, torch.bfloat16)


class RMSNormFunction(torch.autograd.Function):
    """y = rmsnorm(x) * (weight + weight_offset) with the library's forward and
    backward. apply(x, weight, eps, rounding, weight_offset, backend); weight
    may be None. The forward's rstd is saved, so backward does not recompute it.
    """

    @staticmethod
    def forward(ctx, x, weight, eps, rounding="once", weight_offset=0.0, backend=None):
        res = _ops.forward(x, weight, eps=eps, rounding=rounding, weight_offset=weight_offset,
                           want_rstd=True, backend=backend)
        ctx.save_for_backward(x, weight, res.rstd)
        ctx.eps = eps
        ctx.rounding = rounding
        ctx.weight_offset = weight_offset
        ctx.backend = backend
        return res.y

    @staticmethod
    def backward(ctx, dy):
        x, weight, rstd = ctx.saved_tensors
        want_dw = weight is not None and ctx.needs_input_grad[1]
        dx, dw = _ops.backward(dy.contiguous(), x, weight, rstd=rstd, eps=ctx.eps,
                               weight_offset=ctx.weight_offset, rounding=ctx.rounding,
                               want_dweight=want_dw, backend=ctx.backend)
        if dw is not None:
            dw = dw.to(weight.dtype)
        return (dx if ctx.needs_input_grad[0] else None), dw, None, None, None, None


def rms_norm(x, weight=None, eps=1e-6, rounding="once", weight_offset=0.0, backend=None):
    """Functional, differentiable RMSNorm over the last dimension."""
    return RMSNormFunction.apply(x, weight, eps, rounding, weight_offset, backend)


def eager_llama_rms_norm(hidden_states, weight, eps):
    """Hugging Face LlamaRMSNorm.forward, verbatim in effect: the fallback for
    dtype combinations the library does not express, and the tests' reference."""
    input_dtype = hidden_states.dtype
    hs = hidden_states.to(torch.float32)
    variance = hs.pow(2).mean(-1, keepdim=True)
    hs = hs * torch.rsqrt(variance + eps)
    return weight * hs.to(input_dtype)


class LlamaRMSNorm(torch.nn.Module):
    """Drop-in for transformers' LlamaRMSNorm: same parameter (weight), same
    attribute (variance_epsilon), same state_dict keys, and the same two
    roundings (RMSNORM_ROUND_LLAMA): y = w * round_T(x * rstd), rounded to T.

    The library computes when the weight's dtype equals the input's; otherwise
    (say an fp32 weight on bf16 activations, where Hugging Face's result is
    promoted to fp32) it runs the eager formula, which is what the original does.
    """

    def __init__(self, hidden_size, eps=1e-6, device=None, dtype=None, backend=None):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden_size, device=device, dtype=dtype))
        self.variance_epsilon = eps
        self.backend = backend

    @classmethod
    def from_module(cls, module, backend=None):
        """Copies a transformers LlamaRMSNorm (or any module with weight and
        variance_epsilon) into this class, sharing nothing."""
        new = cls(module.weight.shape[0], eps=module.variance_epsilon,
                  device=module.weight.device, dtype=module.weight.dtype, backend=backend)
        with torch.no_grad():
            new.weight.copy_(module.weight)
        return new

    def forward(self, hidden_states):
        if hidden_states.dtype in _ACT and self.weight.dtype == hidden_states.dtype:
            return RMSNormFunction.apply(hidden_states, self.weight, self.variance_epsilon,
                                         "llama", 0.0, self.backend)
        return eager_llama_rms_norm(hidden_states, self.weight, self.variance_epsilon)

    def extra_repr(self):
        return "%s, eps=%s" % (tuple(self.weight.shape), self.variance_epsilon)
