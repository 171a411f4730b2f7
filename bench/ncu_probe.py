#!/usr/bin/env python3
"""Kernels to put under Nsight Compute side by side: librmsnorm's "cuda"
forward and backward (ladder configs), torch.compile's generated forward and
Liger's forward where its wheel is installed,
each called a few times on one shape. Run it under ncu, e.g.

    ncu --clock-control none -k regex:'rmsi_|triton' --section SpeedOfLight \\
        --section Occupancy --section LaunchStats --section WarpStateStats \\
        python3 bench/ncu_probe.py --lib build/devrun/lib/librmsnorm.so

With TORCH_LOGS=output_code the generated Triton source is printed too, so
the peer's launch parameters can be read next to its counters.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers as P  # noqa: E402
import rmsnorm_ctypes as R  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default="build/librmsnorm.so")
    ap.add_argument("--fwd", default="32768x8192,65536x2048")
    ap.add_argument("--bwd", default="4096x4096,32768x8192")
    ap.add_argument("--quant", default="", help="fused add + 1x128 block fp8 shapes")
    ap.add_argument("--qblock", default="", help="1x128 block fp8 shapes without a residual; RxC+y writes y too")
    ap.add_argument("--calls", type=int, default=2)
    args = ap.parse_args()
    ours = P.Ours(args.lib)
    liger = P.optional_peers().get("liger")  # a callable where the wheel is installed
    for shp in filter(None, args.fwd.split(",")):
        rows, cols = (int(v) for v in shp.split("x"))
        x = torch.randn(rows, cols, dtype=torch.bfloat16, device="cuda")
        w = torch.rand(cols, dtype=torch.bfloat16, device="cuda") + 0.5
        y = torch.empty_like(x)
        a = ours.fwd_args(x, w, y)
        for _ in range(args.calls):
            ours.fwd(a)
            P.compiled(x, w)
            if callable(liger):
                liger(x, w)
        torch.cuda.synchronize()
        print("fwd", shp, "max |ours - compiled|", (y.float() - P.compiled(x, w).float()).abs().max().item())
        del x, y, a
    for shp in filter(None, args.bwd.split(",")):
        rows, cols = (int(v) for v in shp.split("x"))
        x = torch.randn(rows, cols, dtype=torch.bfloat16, device="cuda")
        w = torch.rand(cols, dtype=torch.bfloat16, device="cuda") + 0.5
        dy = torch.randn_like(x)
        dx = torch.empty_like(x)
        rstd = torch.rsqrt(x.float().pow(2).mean(-1) + P.EPS).contiguous()
        dw = torch.empty(cols, dtype=torch.float32, device="cuda")
        ws = torch.empty(max(ours.ws_bytes(rows, cols), 16), dtype=torch.uint8, device="cuda")
        a = ours.bwd_args(dy, x, w, rstd, dx, dw, ws)
        for _ in range(args.calls):
            ours.bwd(a)
        torch.cuda.synchronize()
        print("bwd", shp, "done")
        del x, dy, dx, a, ws
    for shp in filter(None, args.quant.split(",")):
        rows, cols = (int(v) for v in shp.split("x"))
        x = torch.randn(rows, cols, dtype=torch.bfloat16, device="cuda")
        r = torch.randn_like(x)
        w = torch.rand(cols, dtype=torch.bfloat16, device="cuda") + 0.5
        h, y = torch.empty_like(x), torch.empty_like(x)
        q = torch.empty(rows, cols, dtype=torch.uint8, device="cuda")
        s = torch.empty((cols // 128) * ((rows + 3) // 4 * 4), dtype=torch.float32, device="cuda")
        a = ours.fwd_args(x, w, y, res=r, h=h, q=q, scale=s, quant=R.Q_BLOCK)
        for _ in range(args.calls):
            ours.fwd(a)
        torch.cuda.synchronize()
        print("add+block fp8", shp, "done")
        del x, r, h, y, q, s, a
    for shp in filter(None, args.qblock.split(",")):
        rows, cols = (int(v) for v in shp.replace("+y", "").split("x"))
        x = torch.randn(rows, cols, dtype=torch.bfloat16, device="cuda")
        w = torch.rand(cols, dtype=torch.bfloat16, device="cuda") + 0.5
        y = torch.empty_like(x) if shp.endswith("+y") else None
        q = torch.empty(rows, cols, dtype=torch.uint8, device="cuda")
        s = torch.empty((cols // 128) * ((rows + 3) // 4 * 4), dtype=torch.float32, device="cuda")
        a = ours.fwd_args(x, w, y, q=q, scale=s, quant=R.Q_BLOCK)
        for _ in range(args.calls):
            ours.fwd(a)
        torch.cuda.synchronize()
        print("block fp8", shp, "done")
        del x, y, q, s, a
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
