"""Bit-level conversions for numpy without ml_dtypes: bfloat16 held in uint16 and
fp8 codes held in uint8 (the layouts of ref/formats.h and docs/numerics.md)."""

import numpy as np


def bf16_to_f32(bits):
    """uint16 bfloat16 bit patterns -> float32 (exact)."""
    bits = np.asarray(bits, dtype=np.uint16)
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(values):
    """float32 -> uint16 bfloat16 bits, round to nearest even; NaN stays NaN."""
    v = np.ascontiguousarray(values, dtype=np.float32)
    u = v.view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(v)
    # A NaN whose payload sits in the low half would round to infinity: keep it quiet NaN.
    quiet = ((u >> 16) | 0x40).astype(np.uint16)
    return np.where(nan, quiet, rounded).astype(np.uint16)


_FP8 = {  # exponent bits, mantissa bits, bias, kind
    "e4m3": (4, 3, 7, "fn"),
    "e4m3fn": (4, 3, 7, "fn"),
    "e5m2": (5, 2, 15, "ieee"),
    "e4m3fnuz": (4, 3, 8, "fnuz"),
}


def _fp8_table(fmt):
    ebits, mbits, bias, kind = _FP8[fmt]
    table = np.empty(256, dtype=np.float64)
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        e = (code >> mbits) & ((1 << ebits) - 1)
        m = code & ((1 << mbits) - 1)
        if e == 0:
            v = m / (1 << mbits) * 2.0 ** (1 - bias)
        else:
            v = (1 + m / (1 << mbits)) * 2.0 ** (e - bias)
        v *= sign
        if kind == "ieee" and e == (1 << ebits) - 1:
            v = sign * np.inf if m == 0 else np.nan
        elif kind == "fn" and (code & 0x7F) == 0x7F:
            v = np.nan
        elif kind == "fnuz" and code == 0x80:
            v = np.nan
        table[code] = v
    return table.astype(np.float32)


_TABLES = {}


def fp8_decode(codes, fmt="e4m3"):
    """uint8 fp8 codes -> float32 (exact). fmt: e4m3 (OCP e4m3fn), e5m2, e4m3fnuz."""
    if fmt not in _TABLES:
        _TABLES[fmt] = _fp8_table(fmt)
    return _TABLES[fmt][np.asarray(codes, dtype=np.uint8)]
