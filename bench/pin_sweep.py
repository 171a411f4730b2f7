#!/usr/bin/env python3
"""The ladder against pinned configs, cold, in rmsnorm-bench: one run of the
ladder, one run per pin (RMSNORM_CUDA_CONFIG or RMSNORM_HIP_CONFIG, which the
plugin merges with the ladder's choice, so "cl=2" changes one knob), the
ladder again, then a table of median times with how far the ladder is from
the fastest run of each shape ("off"). This is how the heuristic-within-2%
checks of docs/perf/h200.md (S12-3..S12-5) were made; --config-search times
every config instead, which takes far longer (each config is validated
against the reference on the host).

    python3 bench/pin_sweep.py --op backward --shapes 4096x4096,32768x8192 \\
        --pins "cl=1;cl=2;cache=0" [--bench build/rmsnorm-bench] [--json out.json]

A pin that does not fit a shape shows as "-" (the bench reports it
unsupported); a cell that fails validation is left out and named below the
table. Times compare only within one sweep (one machine, one hour).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

PIN_ENV = {"cuda": "RMSNORM_CUDA_CONFIG", "hip": "RMSNORM_HIP_CONFIG"}


def run_bench(args, pin, path):
    env = dict(os.environ)
    var = PIN_ENV.get(args.backend)
    if var:
        env.pop(var, None)
        if pin:
            env[var] = pin
    cmd = [args.bench, "--backend", args.backend, "--op", args.op, "--dtype", args.dtype, "--shape", args.shapes,
           "--json", path] + args.bench_args.split()
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=args.timeout)
    if r.returncode != 0 or not os.path.exists(path):
        sys.stderr.write(r.stdout[-2000:])
        raise SystemExit("pin_sweep: rmsnorm-bench failed (rc %d) for pin %r" % (r.returncode, pin))
    with open(path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default="build/rmsnorm-bench")
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--op", default="forward")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--shapes", required=True, help="RxC[,RxC..]")
    ap.add_argument("--pins", required=True, help="semicolon-separated config texts")
    ap.add_argument("--bench-args", default="--graph --force", help="passed to every run")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    ap.add_argument("--json", default=None, help="write every run's cells and the table")
    args = ap.parse_args()
    pins = [p.strip() for p in args.pins.split(";") if p.strip()]
    if args.backend not in PIN_ENV:
        sys.stderr.write("pin_sweep: backend %s takes no pins; every run is the same code\n" % args.backend)
    runs = [("ladder", "")] + [(p, p) for p in pins] + [("ladder ", "")]
    shapes = [s for s in args.shapes.split(",") if s]
    times = {}  # (run index, shape) -> us
    failed = []
    raw = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, pin) in enumerate(runs):
            d = run_bench(args, pin, os.path.join(tmp, "run%d.json" % i))
            raw.append({"pin": pin, "cells": d["cells"], "roofline": d.get("roofline")})
            for c in d["cells"]:
                shape = "%dx%d" % (c["rows"], c["cols"])
                if c["op"] != args.op:
                    continue
                if c["verdict"] == "ok":
                    times[(i, shape)] = c["median_s"] * 1e6
                elif c["verdict"] != "skip" and "unsupported" not in (c.get("note") or ""):
                    failed.append("%s [%s]: %s %s" % (shape, pin or "ladder", c["verdict"], c.get("note") or ""))
            print("run %d/%d done: %s" % (i + 1, len(runs), name or "ladder"), file=sys.stderr, flush=True)
    table = []
    print("| shape | " + " | ".join("`%s`" % n.strip() if p else "ladder" for n, p in runs) + " | off |")
    print("|---" * (len(runs) + 2) + "|")
    for s in shapes:
        row = [times.get((i, s)) for i in range(len(runs))]
        lad = [row[0], row[-1]]
        lad = min(v for v in lad if v is not None) if any(v is not None for v in lad) else None
        valid = [v for v in row if v is not None]
        off = (lad / min(valid) - 1.0) * 100.0 if lad is not None and valid else None
        table.append({"shape": s, "us": row, "off_pct": off})
        print("| %s | %s | %s |" % (s, " | ".join("-" if v is None else "%.2f" % v for v in row),
                                    "-" if off is None else "%.1f%%" % off))
    for f in failed:
        print("failed:", f)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": [n.strip() for n, _ in runs], "table": table, "failed": failed, "raw": raw}, f,
                      indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
