"""numpy arrays on every host backend against the fp64 oracle (oracle.py)."""
import numpy as np
import pytest

import oracle
import rmsnorm

HOST = [b.name for b in rmsnorm.backends() if not b.is_device]
SHAPES = [(1, 1), (3, 7), (5, 128), (4, 1000), (2, 4096)]


def test_discovery():
    names = [b.name for b in rmsnorm.backends()]
    assert "ref" in names
    assert rmsnorm.version()[0] == 1
    ref = [b for b in rmsnorm.backends() if b.name == "ref"][0]
    assert not ref.is_device and {"forward", "backward", "f32", "bf16"} <= ref.caps


@pytest.mark.parametrize("backend", HOST)
@pytest.mark.parametrize("dt", oracle.DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("wkind", ["none", "f32", "same"])
@pytest.mark.parametrize("llama", [False, True])
def test_forward(backend, dt, shape, wkind, llama):
    rng = np.random.default_rng(hash((dt, shape, wkind, llama)) & 0xFFFF)
    x = oracle.random_data(rng, *shape, dt, scale=3.0)
    w = wdt = None
    if wkind != "none":
        wdt = "f32" if wkind == "f32" else dt
        w = oracle.store(rng.uniform(-2, 2, shape[1]), wdt)
    r = rmsnorm.forward(x, w, eps=1e-5, rounding="llama" if llama else "once",
                        want_rstd=True, backend=backend)
    o = oracle.forward(x, dt, w, wdt, eps=1e-5, llama=llama)
    assert r.y.dtype == x.dtype and r.y.shape == x.shape
    oracle.check_close(r.rstd, o["rstd"], 1e-5 * o["rstd"], "rstd")
    oracle.check_close(oracle.load(r.y, dt), o["o"], oracle.y_bound(o, None, dt, llama), "y")


@pytest.mark.parametrize("backend", HOST)
@pytest.mark.parametrize("dt", oracle.DTYPES)
def test_residual_and_offset(backend, dt):
    rng = np.random.default_rng(7)
    x = oracle.random_data(rng, 6, 300, dt)
    res = oracle.random_data(rng, 6, 300, dt)
    w = oracle.store(rng.uniform(-0.5, 0.5, 300), "f32")
    r = rmsnorm.forward(x, w, eps=1e-6, residual=res, weight_offset=1.0, backend=backend)
    o = oracle.forward(x, dt, w, "f32", eps=1e-6, residual=res, offset=1.0)
    assert np.array_equal(r.h.view(np.uint8), o["h"].view(np.uint8)), "h must be bit-exact"
    assert r.rstd is None and r.q is None
    oracle.check_close(oracle.load(r.y, dt), o["o"], oracle.y_bound(o, None, dt, False), "y")


@pytest.mark.parametrize("backend", HOST)
def test_in_place_residual(backend):
    """vLLM's fused_add_rms_norm shape: y over x, h over residual."""
    rng = np.random.default_rng(3)
    x = oracle.random_data(rng, 4, 64, "f32")
    res = oracle.random_data(rng, 4, 64, "f32")
    o = oracle.forward(x, "f32", residual=res)
    r = rmsnorm.forward(x, None, residual=res, out=x, h_out=res, backend=backend)
    assert r.y is x and r.h is res
    assert np.array_equal(res, o["h"])
    oracle.check_close(x, o["o"], oracle.y_bound(o, None, "f32", False), "y")


@pytest.mark.parametrize("backend", HOST)
@pytest.mark.parametrize("dt", oracle.DTYPES)
@pytest.mark.parametrize("mode,fmt,pow2", [
    ("per_token", "e4m3", False), ("per_token", "e5m2", False), ("per_token", "e4m3fnuz", False),
    ("per_block_128", "e4m3", False), ("per_tensor", "e4m3", False), ("per_tensor", "e5m2", False),
    ("per_token", "e4m3", True), ("per_token", "e5m2", True), ("per_token", "e4m3fnuz", True),
    ("per_block_128", "e4m3", True), ("per_block_128", "e4m3fnuz", True)])
def test_quant(backend, dt, mode, fmt, pow2):
    rng = np.random.default_rng(11)
    rows, cols = 5, 256
    x = oracle.random_data(rng, rows, cols, dt, scale=4.0)
    w = oracle.store(rng.uniform(-2, 2, cols), dt)
    static = 0.02
    r = rmsnorm.forward(x, w, eps=1e-6, quant=mode, fp8=fmt, scale_pow2=pow2,
                        scale=static if mode == "per_tensor" else None, backend=backend)
    o = oracle.forward(x, dt, w, dt, eps=1e-6)
    v = o["o"]
    assert r.q.dtype == np.uint8 and r.q.shape == x.shape
    oracle.check_close(oracle.load(r.y, dt), v, oracle.y_bound(o, None, dt, False), "y")
    if mode == "per_tensor":
        oracle.check_q(r.q, v, np.float32(static), fmt, "q")
        return
    if mode == "per_token":
        assert r.scale.shape == (rows,)
        s_o = oracle.dyn_scale(np.abs(v).max(-1), fmt, pow2=pow2)
        s_a = r.scale.astype(np.float64)
        oracle.check_close(s_a, s_o, 1e-5 * s_o if not pow2 else 1e-5 * s_o + 0.5 * s_o, "scale")
        if pow2:
            assert np.all(np.exp2(np.round(np.log2(s_a))) == s_a), "scales are powers of two"
        oracle.check_q(r.q, v, s_a[:, None], fmt, "q")
        return
    padded = (rows + 3) // 4 * 4
    assert r.scale.shape == ((cols // 128) * padded,)
    for k in range(cols // 128):
        blk = v[:, k * 128:(k + 1) * 128]
        s_o = oracle.dyn_scale(np.abs(blk).max(-1), fmt, pow2=pow2)
        s_a = r.scale[k * padded:k * padded + rows].astype(np.float64)
        oracle.check_close(s_a, s_o, 1e-5 * s_o + (0.5 * s_o if pow2 else 0), "block scale")
        oracle.check_q(r.q[:, k * 128:(k + 1) * 128], blk, s_a[:, None], fmt, "block q")


@pytest.mark.parametrize("backend", HOST)
@pytest.mark.parametrize("dt", oracle.DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (8, 512), (33, 1000)])
@pytest.mark.parametrize("llama", [False, True])
@pytest.mark.parametrize("given_rstd", [False, True])
def test_backward(backend, dt, shape, llama, given_rstd):
    rng = np.random.default_rng(hash((dt, shape, llama)) & 0xFFFF)
    x = oracle.random_data(rng, *shape, dt, scale=2.0)
    dy = oracle.random_data(rng, *shape, dt)
    dres = oracle.random_data(rng, *shape, dt)
    w = oracle.store(rng.uniform(-2, 2, shape[1]), "f32")
    rounding = "llama" if llama else "once"
    rstd = None
    if given_rstd:
        rstd = rmsnorm.forward(x, w, eps=1e-6, want_rstd=True, rounding=rounding,
                               backend=backend).rstd
    dx, dw = rmsnorm.backward(dy, x, w, rstd=rstd, eps=1e-6, rounding=rounding, dresidual=dres,
                              backend=backend)
    dx_o, bound, dw_o = oracle.backward(dy, x, dt, w, "f32", eps=1e-6, llama=llama, dres=dres)
    assert dx.dtype == x.dtype and dw.dtype == np.float32 and dw.shape == (shape[1],)
    oracle.check_close(oracle.load(dx, dt), dx_o, bound, "dx")
    rel = 1e-3 if (llama and dt != "f32") else 1e-5
    err = np.linalg.norm(dw.astype(np.float64) - dw_o)
    assert err <= rel * np.linalg.norm(dw_o) + 1e-30, (err, np.linalg.norm(dw_o))


@pytest.mark.parametrize("backend", HOST)
def test_backward_deterministic_and_no_weight(backend):
    rng = np.random.default_rng(5)
    x = oracle.random_data(rng, 64, 384, "f32")
    dy = oracle.random_data(rng, 64, 384, "f32")
    w = oracle.store(rng.uniform(-2, 2, 384), "f32")
    a = rmsnorm.backward(dy, x, w, backend=backend)
    b = rmsnorm.backward(dy, x, w, backend=backend)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    dx, dw = rmsnorm.backward(dy, x, None, backend=backend)
    assert dw is None
    dx_o, bound, _ = oracle.backward(dy, x, "f32")
    oracle.check_close(dx, dx_o, bound, "dx without weight")


@pytest.mark.parametrize("backend", HOST)
def test_strided_and_nd(backend):
    rng = np.random.default_rng(9)
    big = oracle.random_data(rng, 4, 100, "f32")
    x = big[:, :60]  # row stride 100, no copy
    o = oracle.forward(np.ascontiguousarray(x), "f32")
    y = rmsnorm.forward(x, backend=backend)
    assert y.shape == (4, 60)
    oracle.check_close(y, o["o"], oracle.y_bound(o, None, "f32", False), "strided y")
    x3 = oracle.random_data(rng, 6, 32, "f16").reshape(2, 3, 32)
    y3 = rmsnorm.forward(x3, backend=backend)
    o3 = oracle.forward(x3.reshape(6, 32), "f16")
    assert y3.shape == (2, 3, 32) and y3.dtype == np.float16
    oracle.check_close(y3.reshape(6, 32).astype(np.float64), o3["o"],
                       oracle.y_bound(o3, None, "f16", False), "3-D y")


def test_ml_dtypes_bfloat16():
    ml = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(1)
    bits = oracle.random_data(rng, 3, 50, "bf16")
    x = bits.view(ml.bfloat16)
    y = rmsnorm.forward(x, eps=1e-6)
    assert y.dtype == ml.bfloat16
    y_bits = rmsnorm.forward(bits, eps=1e-6)
    assert np.array_equal(y.view(np.uint16), y_bits)


def test_fp8_decode_tables():
    assert rmsnorm.fp8_decode(np.array([0x7E, 0xFE, 0x7F]), "e4m3").tolist()[:2] == [448.0, -448.0]
    assert np.isnan(rmsnorm.fp8_decode(np.array([0x7F]), "e4m3"))[0]
    assert rmsnorm.fp8_decode(np.array([0x7B]), "e5m2")[0] == 57344.0
    assert rmsnorm.fp8_decode(np.array([0x7F]), "e4m3fnuz")[0] == 240.0
    assert np.isnan(rmsnorm.fp8_decode(np.array([0x80]), "e4m3fnuz"))[0]


def test_errors_carry_the_status_string():
    x = np.ones((2, 8), np.float32)
    with pytest.raises(rmsnorm.RMSNormError) as e:
        rmsnorm.forward(x, eps=float("nan"))
    assert e.value.status == 4 and e.value.name == "RMSNORM_ERR_BAD_EPS"
    assert e.value.message == rmsnorm.status_string(4) and e.value.message in str(e.value)
    with pytest.raises(rmsnorm.RMSNormError) as e:
        rmsnorm.forward(x, backend="no-such-backend")
    assert e.value.name == "RMSNORM_ERR_BACKEND_UNAVAILABLE"
    with pytest.raises(rmsnorm.RMSNormError) as e:
        rmsnorm.forward(np.ones((2, 100), np.float32), quant="per_block_128")
    assert e.value.name == "RMSNORM_ERR_BAD_SHAPE"
    with pytest.raises(ValueError):
        rmsnorm.forward(x, np.ones(7, np.float32))
    with pytest.raises(TypeError):
        rmsnorm.forward(np.ones((2, 8), np.float64))
