"""torch tensors on the CPU backends: the numpy path's twin, autograd against
finite differences in float64 math, and the LlamaRMSNorm drop-in."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import oracle  # noqa: E402
import rmsnorm  # noqa: E402

HOST = [b.name for b in rmsnorm.backends() if not b.is_device]
TORCH_DT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def to_torch(a, dt):
    if dt == "bf16":
        return torch.from_numpy(a.astype(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def to_numpy(t, dt):
    if dt == "bf16":
        return t.view(torch.int16).numpy().astype(np.uint16)
    return t.numpy()


@pytest.mark.parametrize("backend", HOST)
@pytest.mark.parametrize("dt", oracle.DTYPES)
def test_tensors_match_numpy_bitwise(backend, dt):
    rng = np.random.default_rng(2)
    x = oracle.random_data(rng, 7, 300, dt)
    res = oracle.random_data(rng, 7, 300, dt)
    w = oracle.store(rng.uniform(-2, 2, 300), dt)
    a = rmsnorm.forward(x, w, residual=res, want_rstd=True, backend=backend)
    b = rmsnorm.forward(to_torch(x, dt), to_torch(w, dt), residual=to_torch(res, dt),
                        want_rstd=True, backend=backend)
    assert b.y.dtype == TORCH_DT[dt] and b.y.device.type == "cpu"
    assert np.array_equal(to_numpy(b.y, dt), a.y)
    assert np.array_equal(to_numpy(b.h, dt), a.h)
    assert np.array_equal(b.rstd.numpy(), a.rstd)
    q = rmsnorm.forward(to_torch(x, dt), to_torch(w, dt), quant="per_token", fp8="e4m3",
                        backend=backend)
    qn = rmsnorm.forward(x, w, quant="per_token", fp8="e4m3", backend=backend)
    assert q.q.dtype == getattr(torch, "float8_e4m3fn", torch.uint8)
    assert np.array_equal(q.q.view(torch.uint8).numpy(), qn.q)
    assert np.array_equal(q.scale.numpy(), qn.scale)


def test_non_contiguous_and_3d():
    x = torch.randn(2, 5, 64).transpose(0, 1)  # last dim still contiguous
    y = rmsnorm.forward(x, eps=1e-6)
    ref = x / torch.sqrt(x.double().pow(2).mean(-1, keepdim=True) + 1e-6)
    assert y.shape == x.shape
    torch.testing.assert_close(y.double(), ref, rtol=1e-5, atol=1e-6)
    xt = torch.randn(64, 6).t()  # last dim strided: copied
    torch.testing.assert_close(rmsnorm.forward(xt).double(),
                               xt / torch.sqrt(xt.double().pow(2).mean(-1, keepdim=True) + 1e-6),
                               rtol=1e-5, atol=1e-6)


def _loss_oracle(x64, w64, g64, eps):
    n = x64 / torch.sqrt(x64.pow(2).mean(-1, keepdim=True) + eps)
    return (n * w64 * g64).sum()


@pytest.mark.parametrize("backend", HOST)
@pytest.mark.parametrize("shape", [(1, 5), (3, 17), (4, 130)])
def test_autograd_against_fp64_finite_differences(backend, shape):
    """The library's f32 gradients against central differences of the fp64 formula."""
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(shape, generator=gen)
    w = torch.rand(shape[1], generator=gen) + 0.5
    g = torch.randn(shape, generator=gen)
    eps = 1e-5
    xr = x.clone().requires_grad_()
    wr = w.clone().requires_grad_()
    (rmsnorm.rms_norm(xr, wr, eps=eps, backend=backend) * g).sum().backward()

    x64, w64, g64 = x.double(), w.double(), g.double()
    h = 1e-6
    fd_x = torch.zeros_like(x64)
    for i in range(shape[0]):
        for j in range(shape[1]):
            d = torch.zeros_like(x64)
            d[i, j] = h
            fd_x[i, j] = (_loss_oracle(x64 + d, w64, g64, eps) -
                          _loss_oracle(x64 - d, w64, g64, eps)) / (2 * h)
    fd_w = torch.zeros_like(w64)
    for j in range(shape[1]):
        d = torch.zeros_like(w64)
        d[j] = h
        fd_w[j] = (_loss_oracle(x64, w64 + d, g64, eps) -
                   _loss_oracle(x64, w64 - d, g64, eps)) / (2 * h)
    torch.testing.assert_close(xr.grad.double(), fd_x, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(wr.grad.double(), fd_w, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("backend", HOST)
def test_gradcheck_on_the_f32_path(backend):
    """torch.autograd.gradcheck in float64 math around the f32 kernels: the
    casts carry gradients through, the tolerances cover fp32 rounding."""
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(3, 9, generator=gen, dtype=torch.float64, requires_grad=True)
    w = (torch.rand(9, generator=gen, dtype=torch.float64) + 0.5).requires_grad_()

    def f(x64, w64):
        return rmsnorm.rms_norm(x64.float(), w64.float(), eps=1e-5, backend=backend).double()

    assert torch.autograd.gradcheck(f, (x, w), eps=1e-3, atol=2e-3, rtol=2e-3)


def test_backward_without_weight_grad():
    x = torch.randn(4, 32, requires_grad=True)
    w = torch.rand(32) + 0.5  # no grad wanted
    y = rmsnorm.rms_norm(x, w)
    y.sum().backward()
    ref_x = x.detach().clone().requires_grad_()
    (ref_x / torch.sqrt(ref_x.pow(2).mean(-1, keepdim=True) + 1e-6) * w).sum().backward()
    torch.testing.assert_close(x.grad, ref_x.grad, rtol=1e-4, atol=1e-5)
    xn = torch.randn(4, 32, requires_grad=True)
    rmsnorm.rms_norm(xn).pow(2).sum().backward()  # no weight at all
    assert xn.grad is not None and xn.grad.shape == (4, 32)


@pytest.mark.parametrize("dt", ["f32", "f16", "bf16"])
def test_llama_drop_in_forward(dt):
    tdt = TORCH_DT[dt]
    gen = torch.Generator().manual_seed(3)
    m = rmsnorm.LlamaRMSNorm(256, eps=1e-6, dtype=tdt)
    with torch.no_grad():
        m.weight.copy_((torch.rand(256, generator=gen) * 2).to(tdt))
    assert list(m.state_dict().keys()) == ["weight"]
    assert m.variance_epsilon == 1e-6
    assert "(256,), eps=1e-06" in repr(m)
    x = (torch.randn(2, 8, 256, generator=gen) * 3).to(tdt)
    y = m(x)
    ref = rmsnorm.eager_llama_rms_norm(x, m.weight, 1e-6)
    assert y.dtype == ref.dtype == tdt and y.shape == x.shape
    # Bit-compatible up to the fp32 rounding of rstd: at most one ulp of T apart,
    # and equal almost everywhere.
    o = oracle.forward(to_numpy(x.reshape(16, 256).detach(), dt), dt,
                       to_numpy(m.weight.detach(), dt), dt, eps=1e-6, llama=True)
    bound = oracle.y_bound(o, None, dt, True)
    oracle.check_close(oracle.load(to_numpy(y.reshape(16, 256).detach(), dt), dt), o["o"],
                       bound, "llama y")
    if dt != "f32":  # in f32 the rstd rounding shows in the last bit of many outputs
        same = (y.detach() == ref.detach()).float().mean().item()
        assert same > 0.98, same


def test_llama_drop_in_grads_and_fallback():
    gen = torch.Generator().manual_seed(4)
    m = rmsnorm.LlamaRMSNorm(64)
    with torch.no_grad():
        m.weight.copy_(torch.rand(64, generator=gen) + 0.5)
    x = torch.randn(5, 64, generator=gen, requires_grad=True)
    m(x).pow(2).sum().backward()
    xr = x.detach().clone().requires_grad_()
    wr = m.weight.detach().clone().requires_grad_()
    rmsnorm.eager_llama_rms_norm(xr, wr, 1e-6).pow(2).sum().backward()
    torch.testing.assert_close(x.grad, xr.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(m.weight.grad, wr.grad, rtol=1e-4, atol=1e-5)
    # fp32 weight on bf16 activations: Hugging Face promotes to fp32; so do we (eager).
    xb = torch.randn(3, 64, generator=gen).to(torch.bfloat16)
    y = m(xb)
    assert y.dtype == torch.float32
    assert torch.equal(y, rmsnorm.eager_llama_rms_norm(xb, m.weight, 1e-6))


def test_against_transformers_llama_rmsnorm():
    llama = pytest.importorskip("transformers.models.llama.modeling_llama")
    hf = llama.LlamaRMSNorm(128, eps=1e-5).to(torch.bfloat16)
    with torch.no_grad():
        hf.weight.copy_(torch.rand(128) + 0.5)
    ours = rmsnorm.LlamaRMSNorm(128, eps=1e-5, dtype=torch.bfloat16)
    ours.load_state_dict(hf.state_dict())
    assert ours.state_dict().keys() == hf.state_dict().keys()
    x = torch.randn(4, 128).to(torch.bfloat16)
    a, b = ours(x), hf(x)
    assert a.dtype == b.dtype
    assert (a == b).float().mean().item() > 0.98
    torch.testing.assert_close(a.float(), b.float(), rtol=1e-2, atol=1e-2)
    same = rmsnorm.LlamaRMSNorm.from_module(hf)
    assert torch.equal(same.weight, hf.weight) and same.variance_epsilon == 1e-5
