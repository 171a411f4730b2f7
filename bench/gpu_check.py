#!/usr/bin/env python3
"""Quick correctness sweep of the "cuda" backend through the C ABI (ctypes +
PyTorch tensors), against an fp64 evaluation of docs/numerics.md. It covers
the paths the ladder selects (register-cached, multi-pass 16-byte and narrow),
the fusions, the three quant modes, in-place aliasing, CUDA-graph capture and
dw determinism. The cmocka tests are the real oracle; this is the smoke test a
device session runs first.

    python3 bench/gpu_check.py [--lib build/librmsnorm.so]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers as P  # noqa: E402
import rmsnorm_ctypes as R  # noqa: E402

TD = {torch.float32: R.F32, torch.float16: R.F16, torch.bfloat16: R.BF16}
FAILS = []


def ok(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILS.append(what)


def strided(rows, cols, dt, pad=0, off=0):
    """A [rows, cols] view with row stride cols + pad, starting off elements in."""
    base = torch.randn(rows * (cols + pad) + off + 8, dtype=torch.float32, device="cuda").to(dt)
    return base[off:off + rows * (cols + pad)].view(rows, cols + pad)[:, :cols]


def ulp_t(a, dt):
    """ulp_T(|a|) of docs/numerics.md: T's spacing at |a|, its subnormal spacing below its smallest normal."""
    mant, emin = {torch.bfloat16: (7, -126), torch.float16: (10, -14), torch.float32: (23, -126)}[dt]
    e = torch.floor(torch.log2(a.abs().clamp(min=2.0 ** emin))).clamp(min=emin)
    return torch.exp2(e - mant)


def ref_forward(x, r, w, off, eps, llama, dt):
    h = x.float() + r.float() if r is not None else x.float()
    h = h.to(dt).double()
    rstd = 1.0 / torch.sqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    n = h * rstd
    if llama:
        n = n.to(dt).double()
    v = n * (w.double() + off) if w is not None else n
    return h, rstd.squeeze(-1), v


def fwd_case(ours, rows, cols, dt, wdt=None, res=False, hout=True, llama=False, off=0.0, pad=0, xoff=0,
             quant=R.Q_NONE, fp8=R.F8_E4M3, ub=0.0, inplace=False, pow2=False, yout=True):
    x = strided(rows, cols, dt, pad, xoff)
    r = strided(rows, cols, dt, pad, xoff) if res else None
    w = (torch.rand(cols, device="cuda") + 0.5).to(wdt or dt)
    h = torch.full((rows, cols), float("nan"), dtype=dt, device="cuda") if (res and hout) else None
    # yout=False: fp8 output alone (y NULL), the quantiser checked against the reference's v
    y = x if inplace else torch.full((rows, cols), float("nan"), dtype=dt, device="cuda") if yout else None
    rstd = torch.full((rows,), float("nan"), device="cuda")
    hr, rr, v = ref_forward(x, r, w, off, 1e-6, llama, dt)
    a = ours.fwd_args(x, w, y, res=r, h=h, rstd=rstd)
    a.weight_dtype = TD[wdt or dt]
    a.weight_offset = off
    a.flags = (R.ROUND_LLAMA if llama else 0) | (R.SCALE_POW2 if pow2 else 0)
    q = s = None
    if quant != R.Q_NONE:
        q = torch.full((rows, cols), 0x55, dtype=torch.uint8, device="cuda")
        if quant == R.Q_TENSOR:
            s = torch.tensor([0.05], device="cuda")
        elif quant == R.Q_TOKEN:
            s = torch.full((rows,), float("nan"), device="cuda")
        else:
            s = torch.full(((cols // 128) * ((rows + 3) // 4 * 4),), float("nan"), device="cuda")
        a.quant_mode = quant
        a.q = R.mat(q, fp8)
        a.scale = s.data_ptr()
        a.scale_ub = ub
    tag = "fwd %s %dx%d pad%d off%d res%d llama%d w%s q%d fp8=%d inplace%d%s" % (
        str(dt)[6:], rows, cols, pad, xoff, res, llama, str(wdt or dt)[6:], quant, fp8, inplace,
        "" if yout else " no-y")
    ours.fwd(a)
    torch.cuda.synchronize()
    if h is not None:
        ok(torch.equal(h.float(), hr.float()), tag + " h bit-exact")
    ok(((rstd.double() - rr).abs() <= 1e-5 * rr).all().item(), tag + " rstd")
    if y is not None:
        yy = y.double()
        # relative ulp plus the subnormal spacing (f16 below 2^-14 has spacing 2^-24)
        sub = 2.0 ** -24 if dt == torch.float16 else (2.0 ** -133 if dt == torch.bfloat16 else 1e-45)
        tol = (v.abs() * (2.0 ** -7 if dt == torch.bfloat16 else 2.0 ** -10 if dt == torch.float16 else 1e-6)
               + 1e-5 * v.abs() + sub)
        if llama:
            tol = tol * 2 + (w.double() + off).abs() * tol
        bad = ~((yy - v).abs() <= tol)
        ok(not bad.any().item(), tag + " y")
        if bad.any().item():
            idx = bad.nonzero()[:4].tolist()
            print("     y mismatches (row, col, got, want):",
                  [(r_, c_, yy[r_, c_].item(), v[r_, c_].item()) for r_, c_ in idx], flush=True)
    if quant != R.Q_NONE:
        fmax = {R.F8_E4M3: 448.0, R.F8_E5M2: 57344.0, R.F8_E4M3FNUZ: 240.0}[fp8]
        tdt = {R.F8_E4M3: torch.float8_e4m3fn, R.F8_E5M2: torch.float8_e5m2,
               R.F8_E4M3FNUZ: torch.float8_e4m3fnuz}[fp8]
        dec = q.view(tdt).double()
        # docs/numerics.md: with ROUND_LLAMA a dynamic scale may move by max_j |weff_j| ulp_T(|n_j|) / fmax
        # (round_T(n) on the other side of a tie from the oracle's)
        lt = torch.zeros_like(v)
        if llama:
            lt = (w.double() + off).abs() * ulp_t(hr * rr[:, None], dt) / fmax
        if quant == R.Q_TENSOR:
            sc = s.double().expand(rows, cols)
        elif quant == R.Q_TOKEN:
            amax = v.abs().amax(-1)
            if ub > 0:
                amax = amax.clamp(max=ub)
            sref = torch.maximum(amax / fmax, torch.full_like(amax, 1.0 / (fmax * 512)))
            if not pow2:
                ok(((s.double() - sref).abs() <= 1e-5 * sref + lt.amax(-1)).all().item(), tag + " token scales")
            sc = s.double()[:, None].expand(rows, cols)
        else:
            nb, rp = cols // 128, (rows + 3) // 4 * 4
            sm = s.view(nb, rp)[:, :rows].t().double()
            amax = v.view(rows, nb, 128).abs().amax(-1)
            sref = torch.maximum(amax / fmax, torch.full_like(amax, 1.0 / (fmax * 512)))
            if not pow2:
                bad = ~((sm - sref).abs() <= 1e-5 * sref + lt.view(rows, nb, 128).amax(-1))
                ok(not bad.any().item(), tag + " block scales")
                if bad.any().item():
                    idx = bad.nonzero()[:4].tolist()
                    print("     block scale mismatches (row, block, got, want):",
                          [(r_, b_, sm[r_, b_].item(), sref[r_, b_].item()) for r_, b_ in idx], flush=True)
            else:
                mant, _ = torch.frexp(sm)  # a power of two has mantissa exactly 0.5
                good = mant == 0.5
                ok(bool(good.all()), tag + " pow2 scales")
                if not bool(good.all()):
                    print("     non-pow2 scales:", sm[~good][:4].tolist(), "ref", sref[~good][:4].tolist(), flush=True)
            if rp > rows:
                ok(torch.isnan(s.view(nb, rp)[:, rows:]).all().item(), tag + " scale padding untouched")
            sc = sm.repeat_interleave(128, dim=1)
        target = (v / sc).clamp(-fmax, fmax)
        err = (dec - target).abs()
        ok((err <= target.abs() * 0.126 + 2.0 ** -9 * (1 if fp8 != R.F8_E5M2 else 2 ** 6)).all().item(),
           tag + " q within one code")


def bwd_case(ours, rows, cols, dt, wdt=None, pad=0, xoff=0, saved=True, dres=False, llama=False, off=0.0):
    x = strided(rows, cols, dt, pad, xoff)
    dy = strided(rows, cols, dt, pad, xoff)
    w = (torch.rand(cols, device="cuda") + 0.5).to(wdt or dt)
    dr = strided(rows, cols, dt, pad, xoff) if dres else None
    dx = torch.full((rows, cols), float("nan"), dtype=dt, device="cuda")
    dw = torch.full((cols,), float("nan"), device="cuda")
    wsb = ours.ws_bytes(rows, cols)
    ws = torch.full((max(wsb // 4, 4),), float("nan"), device="cuda")
    xd = x.double()
    rstd_d = 1.0 / torch.sqrt(xd.pow(2).mean(-1, keepdim=True) + 1e-6)
    rstd = rstd_d.squeeze(-1).float().contiguous()
    a = ours.bwd_args(dy, x, w, rstd if saved else None, dx, dw, ws, dres=dr)
    a.weight_dtype = TD[wdt or dt]
    a.weight_offset = off
    a.flags = R.ROUND_LLAMA if llama else 0
    a.workspace_bytes = ws.numel() * 4
    tag = "bwd %s %dx%d pad%d off%d saved%d dres%d llama%d" % (str(dt)[6:], rows, cols, pad, xoff, saved, dres, llama)
    ours.bwd(a)
    torch.cuda.synchronize()
    weff = w.double() + off
    n = xd * rstd_d
    g = dy.double() * weff
    c = (g * n).mean(-1, keepdim=True)
    dxr = rstd_d * (g - n * c) + (dr.double() if dres else 0)
    m = n.to(dt).double() if llama else n
    dwr = (dy.double() * m).sum(0)
    # docs/numerics.md's bound: ulp_T(|o|) (T's subnormal spacing below its smallest normal: an fp16 dx of
    # -1.1e-6 was 2.8e-8 off, under that spacing, 6e-8, but over a relative ulp, 1.8e-8; S34-2) + the
    # cancellation term
    tol = ulp_t(dxr, dt) + 2e-5 * rstd_d * (g.abs() + n.abs() * (g * n).abs().mean(-1, keepdim=True)) + 1e-30
    bad = ~((dx.double() - dxr).abs() <= tol)
    ok(not bad.any().item(), tag + " dx")
    if bad.any().item():
        idx = bad.nonzero()[:4].tolist()
        print("     dx mismatches (row, col, got, want, bound): %d" % int(bad.sum().item()),
              [(r_, c_, dx[r_, c_].item(), dxr[r_, c_].item(), tol[r_, c_].item()) for r_, c_ in idx], flush=True)
    rel = ((dw.double() - dwr).norm() / (dwr.norm() + 1e-30)).item()
    ok(rel <= (1e-3 if llama else 1e-5), tag + " dw rel %.1e" % rel)
    first = dw.clone()
    same = True
    for _ in range(3):
        ws.fill_(float("nan"))
        dw.fill_(float("nan"))
        ours.bwd(a)
        torch.cuda.synchronize()
        same = same and torch.equal(dw.view(torch.int32), first.view(torch.int32))
    ok(same, tag + " dw bitwise repeatable")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default="build/librmsnorm.so")
    args = ap.parse_args()
    torch.manual_seed(1)
    ours = P.Ours(args.lib)
    bf, hf, f32 = torch.bfloat16, torch.float16, torch.float32
    # forward: register path over widths, dtypes, weights, fusions
    for dt in (bf, hf, f32):
        for cols in (8, 512, 4096, 5120, 16384):
            fwd_case(ours, 37, cols, dt, res=True)
        fwd_case(ours, 3, 4096, dt, wdt=f32, llama=True, off=1.0)
    fwd_case(ours, 5, 4096, bf, res=True, hout=False)
    fwd_case(ours, 64, 2048, bf, res=True, inplace=True)
    # 4 vectors a thread with the weights loaded with the row: the ladder's
    # choice for many rows (>= 16 an SM at 4096 bf16 columns), which the
    # cmocka suites' 257 rows never reach
    for dt in (bf, hf, f32):
        fwd_case(ours, 4096, 4096, dt)
        fwd_case(ours, 4096, 4096, dt, wdt=f32, res=True, llama=True, off=1.0)
    fwd_case(ours, 2500, 8192, bf, res=True, hout=False, pad=8)
    fwd_case(ours, 4096, 4096, hf, res=True, inplace=True)
    # from 64 rows an SM (8448 on 132 SMs): the default cache policy, and a
    # fused add of 1024 vectors at 2 vectors a thread (512 threads a row)
    fwd_case(ours, 8448, 8192, bf, res=True)
    fwd_case(ours, 8448, 4096, f32, wdt=f32, res=True, off=1.0)
    fwd_case(ours, 8448, 2048, bf)
    # the plain forward of 512 and 1024 16-bit vectors there: the lean
    # kernel (session 29), in place and with fp32 weights, ROUND_LLAMA and an offset too
    fwd_case(ours, 8448, 8192, bf)
    fwd_case(ours, 8448, 4096, hf, wdt=f32, llama=True, off=1.0)
    fwd_case(ours, 8448, 8192, bf, inplace=True)
    # ... and 16-bit rows of 640+ vectors not a power of two load their
    # weights after the reduction there (stage 0, session 12)
    fwd_case(ours, 8448, 5120, bf)
    fwd_case(ours, 8448, 7168, hf, wdt=f32, llama=True, off=1.0)
    # session 31: rows wider than one CTA under 2 rows an SM split over
    # clusters of 8 (2 vectors, or 4 with the weights loaded with the row),
    # the lean kernel from 2048 vectors an SM; 16384 columns at a row or
    # two, clusters of 8 too; fused adds of 512 vectors at 1.5-2 rows an SM
    # and the lean kernel for fused adds of 256 and 640 vectors
    fwd_case(ours, 1, 32768, bf)
    fwd_case(ours, 32, 65536, bf, wdt=f32, llama=True, off=1.0)
    fwd_case(ours, 8, 65536, hf)
    fwd_case(ours, 100, 32768, bf, pad=8)
    fwd_case(ours, 3, 16384, bf)
    fwd_case(ours, 200, 4096, bf, res=True)
    fwd_case(ours, 600, 2048, bf, res=True, wdt=f32, llama=True, off=1.0)
    fwd_case(ours, 1100, 5120, bf, res=True)
    fwd_case(ours, 4200, 5120, bf, res=True, inplace=True)
    # ... and the fusions and fp8 output at 2048 and 4096 vectors under half a row an SM
    fwd_case(ours, 3, 16384, bf, res=True, quant=R.Q_TOKEN, ub=1.5)
    fwd_case(ours, 20, 16384, hf, quant=R.Q_TENSOR, fp8=R.F8_E5M2)
    fwd_case(ours, 50, 16384, bf, quant=R.Q_BLOCK)
    fwd_case(ours, 2, 32768, bf, res=True, hout=False)
    fwd_case(ours, 40, 32768, hf, res=True, wdt=f32, llama=True, off=1.0)
    fwd_case(ours, 60, 32768, bf, res=True, quant=R.Q_BLOCK, fp8=R.F8_E4M3FNUZ)
    fwd_case(ours, 1, 65536, bf, res=True, quant=R.Q_TOKEN)
    fwd_case(ours, 40, 24576, bf, res=True, quant=R.Q_BLOCK)
    fwd_case(ours, 20, 65536, hf, res=True)
    # rows that do not split in 8 (3076 vectors): clusters of 4 (2 vectors
    # to a quarter of a row an SM, then 4, staged), and the lean kernel from
    # 2048 vectors an SM
    fwd_case(ours, 3, 24608, bf)
    fwd_case(ours, 40, 24608, bf)
    fwd_case(ours, 120, 24608, hf, wdt=f32, llama=True, off=1.0)
    # session 32: 8193-16384 vectors in clusters of 8 (staged under 65536
    # threads), the lean kernel above those rows and at 262144 columns, the
    # fusions' lean kernel above the clusters' rows (512 threads from one
    # to 1.875 rows an SM), per-token fp8 of wide rows at 1024 threads
    fwd_case(ours, 3, 131072, bf, wdt=f32, llama=True, off=1.0)
    fwd_case(ours, 20, 98304, hf, pad=8)
    fwd_case(ours, 2, 131072, bf, res=True, inplace=True)
    fwd_case(ours, 3, 131072, bf, res=True, quant=R.Q_BLOCK, fp8=R.F8_E5M2)
    fwd_case(ours, 2, 131072, bf, quant=R.Q_TOKEN, ub=1.5)
    fwd_case(ours, 60, 131072, bf, quant=R.Q_TOKEN, fp8=R.F8_E4M3FNUZ)
    fwd_case(ours, 60, 131072, hf, res=True, wdt=f32, llama=True, off=1.0)
    fwd_case(ours, 1, 262144, bf, quant=R.Q_BLOCK)
    fwd_case(ours, 150, 32768, bf, res=True)
    fwd_case(ours, 150, 32768, bf, res=True, quant=R.Q_BLOCK)
    fwd_case(ours, 40, 32768, bf, res=True, inplace=True)
    fwd_case(ours, 1, 65528, bf)
    # fp32 rows wider than a CTA: the same clusters and lean kernel (session 32)
    fwd_case(ours, 1, 65536, f32, llama=True, off=1.0)
    fwd_case(ours, 20, 32768, f32, res=True, pad=4)
    fwd_case(ours, 40, 32768, f32, res=True)
    fwd_case(ours, 300, 16384, f32, pad=4, xoff=4)
    # session 33: the fused add with the block quantiser from 31 rows an SM
    # at 512-2048 vectors, the lean kernel at 256 threads and 48 registers;
    # per-token fp8 of wide rows at 1024 threads to 3 rows an SM
    fwd_case(ours, 4096, 4096, bf, res=True, quant=R.Q_BLOCK)
    fwd_case(ours, 4100, 8192, hf, res=True, wdt=f32, quant=R.Q_BLOCK, fp8=R.F8_E5M2)
    fwd_case(ours, 4092, 16384, bf, res=True, llama=True, off=1.0, quant=R.Q_BLOCK, pow2=True)
    fwd_case(ours, 300, 131072, bf, quant=R.Q_TOKEN)
    # wide rows: the lean kernel under 2 rows an SM too (session 32), the
    # multi-pass kernel for fp32; misaligned / odd strides (narrow)
    fwd_case(ours, 3, 262144, bf, res=True)
    fwd_case(ours, 2, 100003, f32)
    fwd_case(ours, 9, 4096, bf, pad=3, xoff=1, res=True)
    fwd_case(ours, 9, 1000, hf, pad=1)
    # quant modes
    for fp8 in (R.F8_E4M3, R.F8_E5M2, R.F8_E4M3FNUZ):
        fwd_case(ours, 7, 4096, bf, quant=R.Q_TENSOR, fp8=fp8)
        fwd_case(ours, 7, 4096, bf, res=True, quant=R.Q_TOKEN, fp8=fp8, ub=1.5)
        fwd_case(ours, 7, 1152, bf, res=True, quant=R.Q_BLOCK, fp8=fp8)
    fwd_case(ours, 5, 32768, bf, res=True, quant=R.Q_BLOCK)
    fwd_case(ours, 6, 4096, f32, quant=R.Q_BLOCK, pow2=True)
    fwd_case(ours, 6, 1152, hf, pad=128, xoff=3, quant=R.Q_BLOCK)
    fwd_case(ours, 6, 5000, hf, pad=0, xoff=3, quant=R.Q_TOKEN, fp8=R.F8_E5M2)
    # backward
    for dt in (bf, hf, f32):
        for cols in (512, 4096, 8192):
            bwd_case(ours, 300, cols, dt)
        bwd_case(ours, 33, 4096, dt, wdt=f32, saved=False, dres=True, llama=True, off=1.0)
    bwd_case(ours, 7, 65536, bf)
    bwd_case(ours, 17, 1000, hf, pad=3, xoff=1)
    bwd_case(ours, 4096, 4096, bf)
    # clusters of 2 summing the dw partials (16 rows an SM, 128 threads a row)
    bwd_case(ours, 16384, 2048, bf)
    bwd_case(ours, 4224, 2048, hf, saved=False, dres=True, llama=True)
    # 128 threads x 4 vectors, clusters of 2, at 10-16 rows an SM of 4096 columns (session 10)
    bwd_case(ours, 2048, 4096, bf)
    bwd_case(ours, 1536, 4096, hf, saved=False, dres=True, llama=True, off=1.0)
    # 16-bit rows of 1025-2048 vectors from a row an SM: the register path,
    # 4 vectors, clusters of 2 under 31 rows an SM (session 30); a residual
    # gradient keeps the multi-pass kernel
    bwd_case(ours, 300, 16384, bf)
    bwd_case(ours, 4224, 10240, hf, saved=False, llama=True, off=1.0)
    bwd_case(ours, 264, 16384, bf, wdt=f32)
    bwd_case(ours, 264, 16384, bf, dres=True)
    # under half a row an SM, 1025-4096 16-bit vectors: 1024 threads (session 31)
    bwd_case(ours, 33, 16384, hf, dres=True)
    bwd_case(ours, 64, 12288, bf, saved=False, llama=True, off=1.0)
    # wider than 8192 vectors to 1.75 rows an SM: 1024 threads (session 32)
    bwd_case(ours, 3, 131072, bf, dres=True)
    bwd_case(ours, 40, 262144, hf, saved=False, llama=True, off=1.0)
    bwd_case(ours, 5, 65536, f32)
    bwd_case(ours, 300, 16384, f32, dres=False, saved=False)
    # session 34 (after the backward cases, so that the draws before them are
    # unchanged): the block quantiser in the 48-register lean kernel from 31
    # rows an SM without a residual (lean = 2; with y to 1024 vectors), the
    # fused add's every multiple of 128 vectors (640: 128 threads from 62
    # rows an SM, 768: 256) and 128 threads without y at 512 vectors from
    # 248 rows an SM
    fwd_case(ours, 4092, 4096, bf, quant=R.Q_BLOCK, yout=False)
    fwd_case(ours, 4200, 5120, hf, wdt=f32, quant=R.Q_BLOCK, fp8=R.F8_E5M2, pow2=True)
    fwd_case(ours, 4096, 8192, bf, llama=True, off=1.0, quant=R.Q_BLOCK, pad=64)
    fwd_case(ours, 4100, 12288, bf, quant=R.Q_BLOCK, yout=False, xoff=8)
    fwd_case(ours, 8184, 5120, bf, res=True, quant=R.Q_BLOCK, yout=False)
    fwd_case(ours, 4096, 6144, hf, res=True, llama=True, quant=R.Q_BLOCK, fp8=R.F8_E4M3FNUZ)
    fwd_case(ours, 8184, 9216, bf, res=True, wdt=f32, quant=R.Q_BLOCK)
    fwd_case(ours, 32768, 4096, bf, res=True, quant=R.Q_BLOCK, yout=False)
    # with y at 1025-2048 vectors from 62 rows an SM: 256 threads, cache = 1
    # (added after S34-5; not yet run on a device)
    fwd_case(ours, 8184, 10240, bf, quant=R.Q_BLOCK, pad=8)
    # fp32 backward rows of 1025-2048 vectors from 2.5 rows an SM: the
    # register path, clusters of 2 under 31 rows an SM (session 51; 300 rows
    # above keep the multi-pass kernel on a 132-SM device)
    bwd_case(ours, 400, 8192, f32)
    bwd_case(ours, 4224, 5120, f32, saved=False, llama=True, off=1.0)
    bwd_case(ours, 1000, 4104, f32, pad=8)
    # 16-bit rows of 8192 columns from 124 rows an SM under 28 GB/s an SM (an
    # H100): two rows a CTA, clusters of 2 (session 52); an odd row count
    # leaves the last CTA one row
    bwd_case(ours, 16501, 8192, hf)
    bwd_case(ours, 16400, 8192, hf, pad=8, saved=False)
    bwd_case(ours, 16499, 8192, bf, llama=True)
    # fp32 rows of 2048 columns from 64 rows an SM (sm_90+): 2 vectors of
    # 256 threads, clusters of 2 (session 52)
    bwd_case(ours, 12300, 2048, f32)
    bwd_case(ours, 9001, 2048, f32, pad=4, saved=False)
    # and under 16 rows an SM: 4096 columns at 2 vectors of 512 threads, 2048
    # columns in the lean kernel, one row a CTA (session 52)
    bwd_case(ours, 500, 4096, f32, llama=True)
    bwd_case(ours, 1501, 2048, f32, pad=4)
    # the same rules with a residual gradient, under 28 GB/s of HBM an SM (an
    # H100; session 53)
    bwd_case(ours, 1024, 4096, f32, pad=4, dres=True)
    bwd_case(ours, 12000, 2048, f32, saved=False, dres=True)
    # rows = 0 writes dw = 0
    dw = torch.full((64,), float("nan"), device="cuda")
    e = torch.empty(1, 64, dtype=bf, device="cuda")
    a = ours.bwd_args(e, e, torch.ones(64, dtype=bf, device="cuda"), None, e, dw,
                      torch.empty(16, dtype=torch.uint8, device="cuda"))
    a.dy.rows = a.x.rows = a.dx.rows = 0
    try:
        ours.bwd(a)
        torch.cuda.synchronize()
        ok(bool((dw == 0).all()), "bwd rows=0 dw zeros")
    except RuntimeError as ex:
        ok(False, "bwd rows=0: %s" % ex)
    # CUDA graph capture of a forward and a backward
    x = torch.randn(256, 4096, dtype=bf, device="cuda")
    w = torch.ones(4096, dtype=bf, device="cuda")
    y = torch.empty_like(x)
    fa = ours.fwd_args(x, w, y)
    t = P.median_graph_time([lambda: ours.fwd(fa)], target_ms=0.2, replays=3)
    ok(t > 0 and torch.allclose(y.float(), torch.nn.functional.rms_norm(x.float(), (4096,), w.float(), 1e-6),
                                rtol=1e-2, atol=1e-2), "graph-captured forward (%.1f us)" % (t * 1e6))
    print("FAILED %d" % len(FAILS) if FAILS else "ALL OK", flush=True)
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
