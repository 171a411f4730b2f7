"""An fp64 oracle in numpy for docs/numerics.md, and its error bounds.

Activation arrays travel as numpy arrays: float32, float16, or uint16 holding
bfloat16 bits (so the tests need no ml_dtypes). Everything here is written from
the documented formulas, not from the C code.
"""

import numpy as np

import rmsnorm

DTYPES = ("f32", "f16", "bf16")
# mantissa bits, smallest normal exponent
_FMT = {"f32": (23, -126), "f16": (10, -14), "bf16": (7, -126)}
FP8 = {  # fmax, mantissa bits, smallest normal exponent
    "e4m3": (448.0, 3, -6),
    "e5m2": (57344.0, 2, -14),
    "e4m3fnuz": (240.0, 3, -7),
}


def store(v, dt):
    """float values -> the stored array of dtype dt (round to nearest even)."""
    v32 = np.asarray(v, dtype=np.float32)
    if dt == "f32":
        return v32.copy()
    if dt == "f16":
        return v32.astype(np.float16)
    return rmsnorm.f32_to_bf16(v32)


def load(a, dt):
    """A stored array -> float64."""
    if dt == "bf16":
        return rmsnorm.bf16_to_f32(a).astype(np.float64)
    return np.asarray(a).astype(np.float64)


def round_t(v, dt):
    """round_T of float values (through fp32, as the library rounds fp32 results)."""
    return load(store(v, dt), dt)


def ulp(a, mant, emin):
    a = np.abs(np.asarray(a, dtype=np.float64))
    with np.errstate(divide="ignore"):
        e = np.floor(np.log2(np.where(a > 0, a, 1.0)))
    e = np.maximum(np.where(a > 0, e, emin), emin)
    return np.exp2(e - mant)


def ulp_t(a, dt):
    return ulp(a, *_FMT[dt])


def random_data(rng, rows, cols, dt, scale=1.0):
    return store(rng.standard_normal((rows, cols)) * scale, dt)


def forward(x, dt, weight=None, wdt=None, eps=1e-6, residual=None, offset=0.0, llama=False):
    """Returns dict(h, rstd, n, weff, v): v is the unrounded fp64 output."""
    eps = float(np.float32(eps))
    if residual is not None:
        # Step 1 is bit-exact: one fp32 add, one rounding to T.
        s = load(x, dt).astype(np.float32) + load(residual, dt).astype(np.float32)
        h_stored = store(s, dt)
    else:
        h_stored = x
    h = load(h_stored, dt)
    cols = h.shape[-1]
    rstd = 1.0 / np.sqrt((h * h).sum(-1, keepdims=True) / cols + eps)
    n = h * rstd
    if weight is None:
        weff = np.ones(cols)
    else:
        weff = load(weight, wdt) + float(np.float32(offset))
    v = (round_t(n, dt) if llama else n) * weff
    return {"h": h_stored, "rstd": rstd[:, 0], "n": n, "weff": weff, "v": v, "o": n * weff}


def y_bound(o, r, dt, llama):
    b = ulp_t(o["o"], dt) + 1e-5 * np.abs(o["o"])
    if llama:
        b = b + np.abs(o["weff"]) * ulp_t(o["n"], dt)
    return b


def check_close(a, o, bound, what):
    a = np.asarray(a, dtype=np.float64)
    bad = ~(np.abs(a - o) <= bound)
    bad &= ~(np.isnan(a) & np.isnan(o))
    if bad.any():
        i = np.argwhere(bad)[0]
        raise AssertionError("%s: %d of %d outside the bound; first at %s: got %r, oracle %r, "
                             "bound %r" % (what, bad.sum(), bad.size, tuple(i), a[tuple(i)],
                                           o[tuple(i)], bound[tuple(i)]))


def dyn_scale(amax, fmt, ub=0.0, pow2=False):
    fmax = FP8[fmt][0]
    if ub > 0:
        amax = np.minimum(amax, ub)
    s = np.maximum(amax / fmax, 1.0 / (fmax * 512.0))
    if pow2:
        s = np.exp2(np.ceil(np.log2(s)))
    return s


def check_q(q, v, s, fmt, what):
    """q: uint8 codes; v: oracle values; s: the library's scales, broadcastable to v."""
    fmax, mant, emin = FP8[fmt]
    t = v / np.asarray(s, dtype=np.float64)
    dec = rmsnorm.fp8_decode(q, fmt).astype(np.float64)
    sat = np.clip(t, -fmax, fmax)
    bound = ulp(sat, mant, emin) + 1e-5 * np.abs(sat)
    check_close(dec, sat, bound, what)


def backward(dy, x, dt, weight=None, wdt=None, eps=1e-6, offset=0.0, llama=False, dres=None):
    eps = float(np.float32(eps))
    h = load(x, dt)
    g0 = load(dy, dt)
    cols = h.shape[-1]
    rstd = 1.0 / np.sqrt((h * h).sum(-1, keepdims=True) / cols + eps)
    n = h * rstd
    weff = np.ones(cols) if weight is None else load(weight, wdt) + float(np.float32(offset))
    g = g0 * weff
    c = (g * n).sum(-1, keepdims=True) / cols
    dx = rstd * (g - n * c)
    if dres is not None:
        dx = dx + load(dres, dt)
    m = round_t(n, dt) if llama else n
    dw = (g0 * m).sum(0)
    gn = np.abs(g * n).mean(-1, keepdims=True)
    dx_bound = ulp_t(dx, dt) + 2e-5 * rstd * (np.abs(g) + np.abs(n) * gn)
    return dx, dx_bound, dw
