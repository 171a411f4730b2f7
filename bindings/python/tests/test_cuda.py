"""torch tensors on the GPU backend (cuda, or hip under ROCm torch). Skips
without torch, a GPU or the plugin. Run on the H200 with
    RMSNORM_CUDA_REPORT=cuda_report.json python3 -m pytest -q bindings/python/tests/test_cuda.py
which also records the measured agreement in that JSON file."""
import json
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no GPU visible to torch", allow_module_level=True)

import oracle  # noqa: E402
import rmsnorm  # noqa: E402

GPU = "hip" if getattr(torch.version, "hip", None) else "cuda"
if GPU not in [b.name for b in rmsnorm.backends()]:
    pytest.skip("librmsnorm has no %s backend here (plugin not built or not found)" % GPU,
                allow_module_level=True)

DEV = torch.device("cuda")
TORCH_DT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
REPORT = {}


@pytest.fixture(scope="module", autouse=True)
def _write_report():
    yield
    path = os.environ.get("RMSNORM_CUDA_REPORT")
    if path:
        REPORT["device"] = torch.cuda.get_device_name(0)
        REPORT["torch"] = torch.__version__
        with open(path, "w") as f:
            json.dump(REPORT, f, indent=1, sort_keys=True)


def to_np(t, dt):
    t = t.detach().cpu()
    if dt == "bf16":
        return t.view(torch.int16).numpy().astype(np.uint16)
    return t.numpy()


def rand(shape, dt, scale=1.0, seed=0):
    g = torch.Generator(device="cpu").manual_seed(seed)
    return (torch.randn(shape, generator=g) * scale).to(TORCH_DT[dt]).to(DEV)


SHAPES = [(1, 1), (7, 100), (64, 4096), (513, 8192), (3, 65536)]


@pytest.mark.parametrize("dt", oracle.DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("llama", [False, True])
def test_forward_against_oracle_and_torch(dt, shape, llama):
    x = rand(shape, dt, 3.0, seed=shape[1])
    w = (torch.rand(shape[1], device=DEV) * 2).to(TORCH_DT[dt])
    r = rmsnorm.forward(x, w, eps=1e-6, rounding="llama" if llama else "once", want_rstd=True)
    torch.cuda.synchronize()
    assert r.y.device == x.device and r.y.dtype == x.dtype
    o = oracle.forward(to_np(x, dt), dt, to_np(w, dt), dt, eps=1e-6, llama=llama)
    oracle.check_close(oracle.load(to_np(r.y, dt), dt), o["o"], oracle.y_bound(o, None, dt, llama),
                       "y")
    oracle.check_close(r.rstd.cpu().numpy(), o["rstd"], 1e-5 * o["rstd"], "rstd")
    key = "forward/%s/%dx%d/%s" % (dt, shape[0], shape[1], "llama" if llama else "once")
    if llama:
        eager = rmsnorm.eager_llama_rms_norm(x, w, 1e-6)
        REPORT[key] = {"bitwise_equal_to_eager_llama": (r.y == eager).float().mean().item()}
    elif hasattr(torch.nn.functional, "rms_norm"):
        ref = torch.nn.functional.rms_norm(x, (shape[1],), w, 1e-6)
        diff = (r.y.float() - ref.float()).abs()
        REPORT[key] = {"max_abs_diff_vs_F_rms_norm": diff.max().item(),
                       "bitwise_equal_to_F_rms_norm": (r.y == ref).float().mean().item()}
        # both are within about one ulp of T of the exact value
        tol = {"f32": 1e-5, "f16": 2e-3, "bf16": 1.6e-2}[dt]
        torch.testing.assert_close(r.y.float(), ref.float(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dt", oracle.DTYPES)
def test_residual_bit_exact_and_matches_cpu_ref(dt):
    x, res = rand((33, 3000), dt, seed=1), rand((33, 3000), dt, seed=2)
    w = torch.rand(3000, device=DEV)
    g = rmsnorm.forward(x, w, residual=res)
    c = rmsnorm.forward(x.cpu(), w.cpu(), residual=res.cpu(), backend="ref")
    torch.cuda.synchronize()
    assert torch.equal(g.h.cpu(), c.h), "h is bit-exact on every backend"
    o = oracle.forward(to_np(x, dt), dt, w.cpu().numpy(), "f32", residual=to_np(res, dt))
    oracle.check_close(oracle.load(to_np(g.y, dt), dt), o["o"], oracle.y_bound(o, None, dt, False),
                       "y")


@pytest.mark.parametrize("dt", oracle.DTYPES)
@pytest.mark.parametrize("mode,fmt", [("per_token", "e4m3"), ("per_token", "e5m2"),
                                      ("per_block_128", "e4m3"), ("per_tensor", "e4m3")])
def test_quant(dt, mode, fmt):
    rows, cols = 37, 1024
    x = rand((rows, cols), dt, 4.0, seed=5)
    w = (torch.rand(cols, device=DEV) * 2).to(TORCH_DT[dt])
    r = rmsnorm.forward(x, w, quant=mode, fp8=fmt, scale=0.05 if mode == "per_tensor" else None)
    torch.cuda.synchronize()
    o = oracle.forward(to_np(x, dt), dt, to_np(w, dt), dt)
    v = o["o"]
    q = r.q.view(torch.uint8).cpu().numpy()
    s = r.scale.cpu().numpy().astype(np.float64)
    if mode == "per_tensor":
        oracle.check_q(q, v, np.float32(0.05), fmt, "q")
    elif mode == "per_token":
        s_o = oracle.dyn_scale(np.abs(v).max(-1), fmt)
        oracle.check_close(s, s_o, 1e-5 * s_o, "scale")
        oracle.check_q(q, v, s[:, None], fmt, "q")
    else:
        padded = (rows + 3) // 4 * 4
        for k in range(cols // 128):
            blk = v[:, k * 128:(k + 1) * 128]
            sk = s[k * padded:k * padded + rows]
            s_o = oracle.dyn_scale(np.abs(blk).max(-1), fmt)
            oracle.check_close(sk, s_o, 1e-5 * s_o, "block scale")
            oracle.check_q(q[:, k * 128:(k + 1) * 128], blk, sk[:, None], fmt, "block q")


@pytest.mark.parametrize("dt", oracle.DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (5, 130), (300, 4096)])
def test_backward_against_oracle_and_deterministic(dt, shape):
    x, dy = rand(shape, dt, 2.0, seed=7), rand(shape, dt, seed=8)
    w = torch.rand(shape[1], device=DEV) + 0.5
    dx, dw = rmsnorm.backward(dy, x, w, eps=1e-6)
    dx2, dw2 = rmsnorm.backward(dy, x, w, eps=1e-6)
    torch.cuda.synchronize()
    assert torch.equal(dx, dx2) and torch.equal(dw, dw2), "bitwise reproducible"
    dx_o, bound, dw_o = oracle.backward(to_np(dy, dt), to_np(x, dt), dt, w.cpu().numpy(), "f32",
                                        eps=1e-6)
    oracle.check_close(oracle.load(to_np(dx, dt), dt), dx_o, bound, "dx")
    err = np.linalg.norm(dw.cpu().numpy().astype(np.float64) - dw_o)
    assert err <= 1e-5 * np.linalg.norm(dw_o) + 1e-30
    REPORT["backward/%s/%dx%d" % (dt, *shape)] = {
        "dw_rel_l2_err": float(err / (np.linalg.norm(dw_o) + 1e-30))}


def test_streams():
    """Work goes on the current torch stream, or on the one passed."""
    x = rand((256, 4096), "bf16", seed=9)
    want = rmsnorm.forward(x)
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        got = rmsnorm.forward(x)
    s.synchronize()
    assert torch.equal(got, want)
    s2 = torch.cuda.Stream()
    s2.wait_stream(torch.cuda.current_stream())
    got2 = rmsnorm.forward(x, stream=s2)
    s2.synchronize()
    assert torch.equal(got2, want)


def test_autograd_and_llama_module_on_gpu():
    x = rand((16, 512), "f32", seed=10).requires_grad_()
    m = rmsnorm.LlamaRMSNorm(512, device=DEV)
    with torch.no_grad():
        m.weight.copy_(torch.rand(512, device=DEV) + 0.5)
    m(x).pow(2).sum().backward()
    xr = x.detach().clone().requires_grad_()
    wr = m.weight.detach().clone().requires_grad_()
    rmsnorm.eager_llama_rms_norm(xr, wr, 1e-6).pow(2).sum().backward()
    torch.testing.assert_close(x.grad, xr.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(m.weight.grad, wr.grad, rtol=1e-4, atol=1e-4)

    xb = rand((4, 64, 4096), "bf16", seed=11)
    mb = rmsnorm.LlamaRMSNorm(4096, eps=1e-5, device=DEV, dtype=torch.bfloat16)
    with torch.no_grad():
        mb.weight.copy_((torch.rand(4096, device=DEV) + 0.5).to(torch.bfloat16))
    y = mb(xb)
    eager = rmsnorm.eager_llama_rms_norm(xb, mb.weight, 1e-5)
    frac = (y == eager).float().mean().item()
    REPORT["llama_module/bf16/256x4096"] = {"bitwise_equal_to_eager": frac,
                                            "max_abs_diff": (y.float() - eager.float()).abs()
                                            .max().item()}
    assert frac > 0.98, frac
    try:
        from transformers.models.llama.modeling_llama import LlamaRMSNorm as HF
    except ImportError:
        return
    hf = HF(4096, eps=1e-5).to(DEV, torch.bfloat16)
    hf.load_state_dict(mb.state_dict())
    ref = hf(xb)
    frac_hf = (y == ref).float().mean().item()
    REPORT["llama_module/bf16/256x4096"]["bitwise_equal_to_transformers"] = frac_hf
    assert frac_hf > 0.98, frac_hf
