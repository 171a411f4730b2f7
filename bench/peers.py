#!/usr/bin/env python3
"""Side-by-side GPU timing: librmsnorm's "cuda" backend (through its C ABI, via
ctypes) against PyTorch's paths -- the eager formula, torch.nn.functional.rms_norm
and torch.compile -- and, where importable, Liger-Kernel, FlashInfer and Quack.

Every path is timed the same way: its calls are captured into a CUDA graph
(rotating through enough input sets to exceed the 60 MB L2 where the shape
allows), the graph is replayed, and device events give the median time per call
over several replays; each path is timed --rounds times per shape, the order
rotated, and the lowest median kept (see time_paths). Each call's outputs
stay allocated until its buffer set comes round again, so every path writes as
many distinct outputs as it reads inputs (median_graph_time). The roofline is measured in the same run (copy, pure
write, 2 reads + 1 write through PyTorch, best of three) and every row reports
GB/s over logical bytes and % of the best probe.

    python3 bench/peers.py [--quick] [--rounds N] [--shapes RxC,...] [--only fwd,fused,bwd]
        [--json out.json] [--lib build/librmsnorm.so] [--skip eager,...] [--reuse-outputs]
        [--fused-shapes RxC,...]
"""
import argparse
import ctypes as C
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rmsnorm_ctypes as R  # noqa: E402

EPS = 1e-6
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
L2_DEFEAT = 240 << 20  # bytes touched per graph before a buffer set repeats


def median_graph_time(calls, target_ms=2.0, replays=7):
    """calls: list of closures, one per buffer set. Returns seconds per call.

    What a call returns (a peer's output tensors) is kept until the same
    buffer set's next call, so that every set writes its own outputs, as ours
    does into its preallocated ones. Dropped at once, a peer's output block
    went back to the capture's private pool and the next call's allocation
    took it: every call of a graph wrote the same (L2-resident) output, and
    a peer touched half the bytes ours did per pass over the sets (32 sets of
    1 MB inputs and one 1 MB output fit the L2; ours, 64 MB, did not).
    REUSE_OUTPUTS (--reuse-outputs) restores that, for comparison."""
    keep = [None] * len(calls)

    def run(i, f):
        out = f()
        if not REUSE_OUTPUTS:
            keep[i] = out

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i, f in enumerate(calls):  # warm-up outside capture (compilation, workspace)
            run(i, f)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    # how many passes over the buffer sets fit the target time
    t0 = time.perf_counter()
    for i, f in enumerate(calls):
        run(i, f)
    torch.cuda.synchronize()
    one = max(time.perf_counter() - t0, 1e-6)
    passes = max(1, min(200, int(target_ms * 1e-3 / one)))
    # the eager calls' outputs go before the capture, not inside it (freeing
    # ordinary-pool blocks there is the likely reason S22-3's backward run
    # lost its capture and then its CUDA generator state)
    keep[:] = [None] * len(calls)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(passes):
            for i, f in enumerate(calls):
                run(i, f)
    g.replay()
    torch.cuda.synchronize()
    times = []
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(replays):
        e0.record()
        g.replay()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) * 1e-3 / (passes * len(calls)))
    del g, keep
    return statistics.median(times)


ROUNDS = 2  # set by --rounds
SKIP = set()  # set by --skip
REUSE_OUTPUTS = False  # set by --reuse-outputs (median_graph_time)


def time_paths(row, paths):
    """paths: [(name, calls)]. Every path is timed ROUNDS times, the order
    rotated between rounds, and its lowest median kept. A shape's first
    timing reads high (up to 14% at the largest shapes: gpu_search.py saw it
    in S5-7, and this script used to time "ours" first at every shape, which
    put it 5-12% under rmsnorm-bench there); rotating hands that penalty to
    each path once, and the minimum drops it."""
    best = {}
    paths = [(name, calls) for name, calls in paths if name.startswith("ours") or name not in SKIP]
    for k in range(ROUNDS):
        j = k % len(paths)
        for name, calls in paths[j:] + paths[:j]:
            try:
                t = median_graph_time(calls)
            except Exception as e:  # noqa: BLE001
                best.setdefault(name, "error: %s" % str(e).splitlines()[0][:100])
                continue
            prev = best.get(name)
            best[name] = t if not isinstance(prev, float) else min(prev, t)
    for name, _ in paths:
        row[name] = best[name]


def roofline(gib=2.0):
    n = int(gib * (1 << 30)) // 4
    a = torch.empty(n, dtype=torch.float32, device="cuda").uniform_()
    b = torch.empty_like(a).uniform_()
    c = torch.empty_like(a)
    res = {}
    for name, fn, mult in (("copy", lambda: c.copy_(a), 2), ("write", lambda: c.fill_(1.5), 1),
                           ("r2w1", lambda: torch.add(a, b, out=c), 3)):
        best = min(median_graph_time([fn], target_ms=20, replays=3) for _ in range(3))
        res[name] = mult * n * 4 / best / 1e9
    del a, b, c
    torch.cuda.empty_cache()
    return res


class Ours:
    def __init__(self, lib_path):
        self.lib = R.load(lib_path)
        self.be = self.lib.rmsnorm_backend_find(b"cuda")
        if not self.be:
            raise RuntimeError("no cuda backend in librmsnorm (RMSNORM_PLUGIN_PATH?)")

    def check(self, st):
        if st != 0:
            raise RuntimeError("rmsnorm: " + self.lib.rmsnorm_status_string(st).decode())

    def fwd_args(self, x, w, y, res=None, h=None, q=None, scale=None, quant=R.Q_NONE, rstd=None):
        T = R.BF16 if x.dtype == torch.bfloat16 else (R.F16 if x.dtype == torch.float16 else R.F32)
        a = R.ForwardArgs()
        a.struct_size = C.sizeof(R.ForwardArgs)
        a.x = R.mat(x, T)
        a.residual = R.mat(res, T, x.shape[0], x.shape[1])
        a.h_out = R.mat(h, T, x.shape[0], x.shape[1])
        a.weight = w.data_ptr() if w is not None else None
        a.weight_dtype = T
        a.eps = EPS
        a.y = R.mat(y, T, x.shape[0], x.shape[1])
        a.rstd = rstd.data_ptr() if rstd is not None else None
        a.quant_mode = quant
        if quant != R.Q_NONE:
            a.q = R.mat(q, R.F8_E4M3)
            a.scale = scale.data_ptr()
        return a

    def fwd(self, a):
        st = self.lib.rmsnorm_forward(self.be, C.byref(a), C.c_void_p(torch.cuda.current_stream().cuda_stream))
        self.check(st)

    def bwd_args(self, dy, x, w, rstd, dx, dw, ws, dres=None):
        T = R.BF16 if x.dtype == torch.bfloat16 else (R.F16 if x.dtype == torch.float16 else R.F32)
        a = R.BackwardArgs()
        a.struct_size = C.sizeof(R.BackwardArgs)
        a.dy = R.mat(dy, T)
        a.x = R.mat(x, T)
        a.weight = w.data_ptr()
        a.weight_dtype = T
        a.rstd = rstd.data_ptr() if rstd is not None else None
        a.eps = EPS
        a.dx = R.mat(dx, T)
        a.dresidual = R.mat(dres, T, x.shape[0], x.shape[1])
        a.dweight = dw.data_ptr() if dw is not None else None
        a.workspace = ws.data_ptr() if ws is not None else None
        a.workspace_bytes = ws.numel() if ws is not None else 0
        return a

    def bwd(self, a):
        st = self.lib.rmsnorm_backward(self.be, C.byref(a), C.c_void_p(torch.cuda.current_stream().cuda_stream))
        self.check(st)

    def ws_bytes(self, rows, cols):
        n = C.c_size_t(0)
        self.check(self.lib.rmsnorm_backward_workspace_size(self.be, rows, cols, C.byref(n)))
        return n.value


def eager_formula(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)).to(x.dtype) * w


def f_rms(x, w):
    return F.rms_norm(x, (x.shape[-1],), w, EPS)


torch._dynamo.config.recompile_limit = 256
compiled = torch.compile(eager_formula, dynamic=False)
# a separate compiled object for the autograd runs (requires_grad changes the
# guards; sharing one would exhaust its recompile budget and fall back to eager)
compiled_train = torch.compile(eager_formula, dynamic=False)


def add_norm(x, r, w):
    h = x + r
    return h, eager_formula(h, w)


compiled_add = torch.compile(add_norm, dynamic=False)


class ForwardOnly:
    """A peer path without a backward (not offered to run_backward)."""

    def __init__(self, fn, add=None):
        self.fn, self.add = fn, add

    def __call__(self, x, w):
        return self.fn(x, w)


def flashinfer_shim(path):
    """FlashInfer's CUDA RMSNorm through bench/peers_shim/flashinfer_norm.cu
    (its header-only norm.cuh built into a small library; see build.sh there),
    for a machine where the flashinfer wheel cannot be installed. PDL on, as
    flashinfer.norm.rmsnorm enables it on sm_90."""
    lib = C.CDLL(path)
    sig = [C.c_int, C.c_void_p, C.c_void_p, C.c_void_p, C.c_uint, C.c_uint, C.c_uint, C.c_uint, C.c_float, C.c_int,
           C.c_void_p]
    lib.fi_rmsnorm.argtypes = sig
    lib.fi_fused_add_rmsnorm.argtypes = sig

    def dt(x):
        return 0 if x.dtype == torch.bfloat16 else 1

    def norm(x, w):
        y = torch.empty_like(x)
        rc = lib.fi_rmsnorm(dt(x), x.data_ptr(), w.data_ptr(), y.data_ptr(), x.shape[0], x.shape[1], x.stride(0),
                            y.stride(0), EPS, 1, torch.cuda.current_stream().cuda_stream)
        if rc != 0:
            raise RuntimeError("fi_rmsnorm: cudaError %d" % rc)
        return y

    def add_norm_in_place(x, r, w):
        """FlashInfer's fused add: r = x + r, x = rmsnorm(r) * w, in place."""
        rc = lib.fi_fused_add_rmsnorm(dt(x), x.data_ptr(), r.data_ptr(), w.data_ptr(), x.shape[0], x.shape[1],
                                      x.stride(0), r.stride(0), EPS, 1, torch.cuda.current_stream().cuda_stream)
        if rc != 0:
            raise RuntimeError("fi_fused_add_rmsnorm: cudaError %d" % rc)
        return x

    return ForwardOnly(norm, add_norm_in_place)


def quack_peer():
    """Quack's public RMSNorm (quack.rmsnorm.rmsnorm: its default, untuned
    configuration; autograd, so the backward grid times it too), and its fused
    add: out-of-place, h and y written, as ours (bench/peers_shim/quack.sh
    installs it on a device)."""
    from quack.rmsnorm import rmsnorm as quack_rmsnorm  # type: ignore

    class Quack:
        def __call__(self, x, w):
            return quack_rmsnorm(x, w, eps=EPS)

        def add(self, x, r, w):
            return quack_rmsnorm(x, w, residual=r, eps=EPS, prenorm=True)

    return Quack()


def rel_err(out, ref):
    """A peer's output against the fp64 reference; out may be (y, ...)."""
    y = out[0] if isinstance(out, (tuple, list)) else out
    return ((y.double() - ref).norm() / ref.norm()).item()


def check_peers(row, fns, ref):
    """Validate before timing: every path's output on the first buffer set,
    as row["peer_err"][name] (a relative error, or the exception)."""
    errs = {}
    for name, fn in fns:
        if name in SKIP:
            continue
        try:
            errs[name] = rel_err(fn(), ref)
        except Exception as e:  # noqa: BLE001
            errs[name] = "error: %s" % str(e).splitlines()[0][:100]
    row["peer_err"] = errs
    bad = {k: v for k, v in errs.items() if not isinstance(v, float) or not v < 1e-2}
    if bad:
        print("  peer outputs off or failed:", bad, flush=True)


def peer_versions():
    import importlib.metadata as md
    out = {}
    for dist in ("liger-kernel", "quack-kernels", "nvidia-cutlass-dsl-libs-base", "triton", "flashinfer-python"):
        try:
            out[dist] = md.version(dist)
        except Exception:  # noqa: BLE001
            pass
    return out


def optional_peers():
    out = {}
    try:
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction  # type: ignore
        out["liger"] = lambda x, w: LigerRMSNormFunction.apply(x, w, EPS, 0.0, "llama", False)
    except Exception as e:  # noqa: BLE001
        out["liger"] = "unavailable: %s" % (str(e).splitlines()[0][:120] if str(e) else type(e).__name__)
    try:
        import flashinfer  # type: ignore
        out["flashinfer"] = lambda x, w: flashinfer.norm.rmsnorm(x, w, EPS)
    except Exception as e:  # noqa: BLE001
        why = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
        shim = os.environ.get("RMSNORM_PEER_FLASHINFER", os.path.join(ROOT, ".peers", "libfi_norm.so"))
        out["flashinfer"] = flashinfer_shim(shim) if os.path.exists(shim) else "unavailable: %s" % why
    try:
        out["quack"] = quack_peer()
    except Exception as e:  # noqa: BLE001
        out["quack"] = "unavailable: %s" % (str(e).splitlines()[0][:120] if str(e) else type(e).__name__)
    return out


def randn_dev(rows, cols, dt):
    """Inputs drawn by the CPU generator: a graph capture that fails (the
    first autograd capture of a process can, S15-8) leaves the CUDA
    generator mid-capture, and every torch.randn(device="cuda") after it
    raised "Offset increment outside graph capture" (S22-3, S22-5)."""
    return torch.randn(rows, cols, dtype=dt).cuda()


def nsets(bytes_per_call):
    return max(1, min(32, math.ceil(L2_DEFEAT / max(bytes_per_call, 1))))


def run_forward(ours, rows, cols, peers, roof, results):
    dt = torch.bfloat16
    logical = rows * cols * 4 + cols * 2
    k = nsets(logical)
    xs = [randn_dev(rows, cols, dt) for _ in range(k)]
    ys = [torch.empty_like(x) for x in xs]
    w = (torch.rand(cols, dtype=dt).cuda() + 0.5)
    args = [ours.fwd_args(x, w, y) for x, y in zip(xs, ys)]
    ours.fwd(args[0])
    ref = f_rms(xs[0].double(), w.double())
    err = ((ys[0].double() - ref).norm() / ref.norm()).item()
    row = {"op": "fwd", "rows": rows, "cols": cols, "bytes": logical, "rel_err": err}
    paths = [("ours", [lambda a=a: ours.fwd(a) for a in args])]
    if REUSE_OUTPUTS:  # ours on the peers' old footing: every set's call writes ys[0]
        one_y = [ours.fwd_args(x, w, ys[0]) for x in xs]
        paths.append(("ours_1y", [lambda a=a: ours.fwd(a) for a in one_y]))
    fns = [("eager", eager_formula), ("F.rms_norm", f_rms), ("compile", compiled)]
    fns += [(name, fn) for name, fn in peers.items() if callable(fn)]
    check_peers(row, [(name, lambda fn=fn: fn(xs[0], w)) for name, fn in fns], ref)
    paths += [(name, [lambda x=x, fn=fn: fn(x, w) for x in xs]) for name, fn in fns]
    time_paths(row, paths)
    report(row, roof, results)
    del xs, ys, args
    torch.cuda.empty_cache()


def run_fused(ours, rows, cols, roof, results, quant, peers=None):
    dt = torch.bfloat16
    logical = rows * cols * 8 + cols * 2
    if quant:
        logical += rows * cols + (cols // 128) * ((rows + 3) // 4 * 4) * 4
    k = nsets(logical)
    xs = [randn_dev(rows, cols, dt) for _ in range(k)]
    rs = [randn_dev(rows, cols, dt) for _ in range(k)]
    hs = [torch.empty_like(x) for x in xs]
    ys = [torch.empty_like(x) for x in xs]
    w = (torch.rand(cols, dtype=dt).cuda() + 0.5)
    if quant:
        qs = [torch.empty(rows, cols, dtype=torch.uint8, device="cuda") for _ in range(k)]
        ss = [torch.empty((cols // 128) * ((rows + 3) // 4 * 4), dtype=torch.float32, device="cuda")
              for _ in range(k)]
        args = [ours.fwd_args(x, w, y, res=r, h=h, q=q, scale=s, quant=R.Q_BLOCK)
                for x, r, h, y, q, s in zip(xs, rs, hs, ys, qs, ss)]
    else:
        args = [ours.fwd_args(x, w, y, res=r, h=h) for x, r, h, y in zip(xs, rs, hs, ys)]
    ours.fwd(args[0])
    hr = (xs[0].float() + rs[0].float()).to(dt)
    ref = f_rms(hr.double(), w.double())
    err = ((ys[0].double() - ref).norm() / ref.norm()).item()
    row = {"op": "fwd_add_block_fp8" if quant else "fwd_add", "rows": rows, "cols": cols, "bytes": logical,
           "rel_err": err, "h_exact": bool(torch.equal(hs[0], hr))}
    paths = [("ours", [lambda a=a: ours.fwd(a) for a in args])]
    if not quant:
        paths.append(("eager", [lambda x=x, r=r: add_norm(x, r, w) for x, r in zip(xs, rs)]))
        paths.append(("compile", [lambda x=x, r=r: compiled_add(x, r, w) for x, r in zip(xs, rs)]))
        adds = [(name, fn.add) for name, fn in (peers or {}).items() if getattr(fn, "add", None) is not None]
        # on copies: FlashInfer's add works in place (the same bytes, x and r rewritten)
        check_peers(row, [("eager", lambda: add_norm(xs[0], rs[0], w)[1]),
                          ("compile", lambda: compiled_add(xs[0], rs[0], w)[1])] +
                    [(name, lambda f=f: f(xs[0].clone(), rs[0].clone(), w)) for name, f in adds], ref)
        for name, f in adds:
            paths.append((name, [lambda x=x, r=r, f=f: f(x, r, w) for x, r in zip(xs, rs)]))
    time_paths(row, paths)
    report(row, roof, results)
    del xs, rs, hs, ys, args
    torch.cuda.empty_cache()


def run_backward(ours, rows, cols, roof, results, dres=False, peers=None, warm_up=False):
    dt = torch.bfloat16
    logical = rows * cols * 6 + rows * 4 + cols * 2 + cols * 4 + (rows * cols * 2 if dres else 0)
    k = nsets(logical)
    xs = [randn_dev(rows, cols, dt) for _ in range(k)]
    dys = [randn_dev(rows, cols, dt) for _ in range(k)]
    dxs = [torch.empty_like(x) for x in xs]
    drs = [randn_dev(rows, cols, dt) for _ in range(k)] if dres else [None] * k
    w = (torch.rand(cols, dtype=dt).cuda() + 0.5)
    rstds = [torch.rsqrt(x.float().pow(2).mean(-1) + EPS).contiguous() for x in xs]
    dw = torch.empty(cols, dtype=torch.float32, device="cuda")
    wsb = ours.ws_bytes(rows, cols)
    ws = torch.empty(max(wsb, 16), dtype=torch.uint8, device="cuda")
    args = [ours.bwd_args(dy, x, w, r, dx, dw, ws, dres=d) for dy, x, r, dx, d in zip(dys, xs, rstds, dxs, drs)]
    ours.bwd(args[0])
    # reference through autograd in fp64
    xd = xs[0].double().requires_grad_()
    wd = w.double().requires_grad_()
    yd = F.rms_norm(xd, (cols,), wd, EPS)
    gx, gw = torch.autograd.grad(yd, (xd, wd), dys[0].double())
    if dres:
        gx = gx + drs[0].double()
    ex = ((dxs[0].double() - gx).norm() / gx.norm()).item()
    ew = ((dw.double() - gw).norm() / gw.norm()).item()
    row = {"op": "bwd_dres" if dres else "bwd", "rows": rows, "cols": cols, "bytes": logical,
           "rel_err": max(ex, ew), "ws_bytes": wsb}
    paths = [("ours", [lambda a=a: ours.bwd(a) for a in args])]
    if not dres:
        fns = [("eager", eager_formula), ("F.rms_norm", f_rms), ("compile", compiled_train)]
        fns += [(k, v) for k, v in (peers or {}).items() if callable(v)]
        for name, fn in fns:
            calls = []
            try:
                for x, dy in zip(xs, dys):
                    xg = x.detach().requires_grad_()
                    wg = w.detach().requires_grad_()
                    y = fn(xg, wg)
                    calls.append(lambda y=y, xg=xg, wg=wg, dy=dy: torch.autograd.grad(y, (xg, wg), dy,
                                                                                      retain_graph=True))
            except Exception as e:  # noqa: BLE001
                row[name] = "error: %s" % str(e).splitlines()[0][:100]
                continue
            paths.append((name, calls))
    time_paths(row, paths)
    del paths
    if not warm_up:
        report(row, roof, results)
    del xs, dys, dxs, args
    torch.cuda.empty_cache()


def report(row, roof, results):
    best = max(roof.values())
    cells = []
    for k, v in list(row.items()):
        if isinstance(v, float) and k not in ("rel_err",):
            gbs = row["bytes"] / v / 1e9
            row[k + "_gbs"] = gbs
            cells.append("%s %.1fus %.0f%%" % (k, v * 1e6, 100 * gbs / best))
    t = row.get("ours")
    fastest_peer = min((v for k, v in row.items()
                        if isinstance(v, float) and k not in ("ours", "ours_1y", "rel_err", "bytes")
                        and not k.endswith("_gbs")),
                       default=None)
    if t and fastest_peer:
        row["speedup_vs_best_peer"] = fastest_peer / t
    results.append(row)
    print("%-18s %6dx%-6d err %.1e | %s%s" % (row["op"], row["rows"], row["cols"], row["rel_err"], " | ".join(cells),
          (" | x%.2f vs best peer" % row["speedup_vs_best_peer"]) if "speedup_vs_best_peer" in row else ""),
          flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default="build/librmsnorm.so")
    ap.add_argument("--json", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--only", default="fwd,fused,bwd")
    ap.add_argument("--rounds", type=int, default=2, help="timings per path, order rotated; the lowest counts")
    ap.add_argument("--shapes", default="", help="forward and backward grid shapes, e.g. 4096x4096,32768x8192")
    ap.add_argument("--fused-shapes", default="32768x8192",
                    help="the plain fused add's shapes (the fp8 cells stay 4096x8192 and 32768x8192)")
    ap.add_argument("--skip", default="", help="peer paths not to time, e.g. eager,F.rms_norm (comma list)")
    ap.add_argument("--reuse-outputs", action="store_true",
                    help="let each peer call's output go at once, as before S22 (every call then rewrites one block)")
    args = ap.parse_args()
    global ROUNDS, SKIP, REUSE_OUTPUTS
    REUSE_OUTPUTS = args.reuse_outputs
    ROUNDS = max(1, args.rounds)
    SKIP = set(v for v in args.skip.split(",") if v)
    torch.manual_seed(0)
    ours = Ours(args.lib)
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    roof = roofline()
    print("roofline GB/s:", {k: round(v, 1) for k, v in roof.items()}, flush=True)
    peers = optional_peers()
    for k, v in peers.items():
        if not callable(v):
            print("peer", k, v, flush=True)
    print("versions:", peer_versions(), flush=True)
    results = []
    only = args.only.split(",")
    rows_f = [1, 32, 256, 1024, 4096, 16384, 32768, 65536]
    cols_f = [512, 2048, 4096, 5120, 8192]
    if args.quick:
        rows_f, cols_f = [1, 32, 4096, 32768], [4096, 8192]
    picked = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",") if s]
    if "fwd" in only:
        for r, c in picked or [(r, c) for r in rows_f for c in cols_f]:
            run_forward(ours, r, c, {k: v for k, v in peers.items() if callable(v)}, roof, results)
    if "fused" in only:
        for shp in filter(None, args.fused_shapes.split(",")):
            r, c = (int(v) for v in shp.split("x"))
            run_fused(ours, r, c, roof, results, quant=False, peers=peers)
        run_fused(ours, 4096, 8192, roof, results, quant=True)
        run_fused(ours, 32768, 8192, roof, results, quant=True)
    if "bwd" in only:
        rows_b = [1, 32, 256, 1024, 4096, 16384, 32768, 65536]
        cols_b = [2048, 4096, 5120, 8192]
        if args.quick:
            rows_b, cols_b = [1, 32, 4096, 32768], [4096, 8192]
        grid_b = [(r, c) for r in rows_b for c in cols_b if r >= 1024 or c == 4096]
        trainable = {k: v for k, v in peers.items() if callable(v) and not isinstance(v, ForwardOnly)}
        # a throwaway shape first: the first autograd path a process captures
        # failed its graph capture for torch.compile and Liger (S15-8), which
        # cost the grid's first cell its peers
        run_backward(ours, 64, 256, roof, [], peers=trainable, warm_up=True)
        for r, c in picked or grid_b:
            run_backward(ours, r, c, roof, results, peers=trainable)
        run_backward(ours, 32768, 8192, roof, results, dres=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"roofline": roof, "device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "peers": {k: (v if isinstance(v, str) else "ok") for k, v in peers.items()},
                       "versions": peer_versions(),
                       "rows": results}, f, indent=1)


if __name__ == "__main__":
    main()
