#!/usr/bin/env python3
"""Sets of rmsnorm-bench runs on a GPU, the ladder against pins or another
build of the plugin, alternated round by round: how sessions 34-37 timed
every ladder change (docs/perf/h200.md). Until session 37 this lived as
sw.py in the runs JSON of session 35 and was restored by hand each session.

A set file has one line a set, "tag op shapes pins", '#' for comments:
  tag     a name for the set (cells are keyed by it)
  op      an rmsnorm-bench op, "+y" for --quant-y, "@f16" for a dtype (bf16
          by default): quant-block+y@f16
  shapes  RxC[,RxC..], one rmsnorm-bench run for all of them
  pins    "|"-separated RMSNORM_CUDA_CONFIG texts, "-" for none; "old" runs
          the plugin in --old-dir with its own ladder, "old:PIN" that plugin
          under a pin
Each round runs every set: the ladder first, then each pin; every second
round in the reverse order, so that drift over the call shows. Every cell is
validated against the ref backend by rmsnorm-bench before it is timed; a
cell that fails is shown by its verdict instead of a time.

    python3 bench/set_sweep.py --sets sets.txt --rounds 2 --deadline 300 \\
        --lib-dir build/devrun/lib --old-dir build/devrun/old --out $OUT/w

Prints a line a run as it goes and a table a set at the end (the median in
us of each round, joined by " / ", and each pin's mean over the ladder's,
P1/P0 ...: under 1 the pin is faster); every cell's medians go to
OUT/cells.json as {"tag|shape|pin index": [...]}. No new run starts after
the deadline (seconds from the start), so a device call's time limit is met.
"""
import argparse
import json
import os
import subprocess
import sys
import time


def parse_sets(path):
    sets = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            tag, op, shapes, pins = line.split()[:4]
            sets.append((tag, op, shapes, [""] + [p for p in pins.split("|") if p != "-"]))
    return sets


def run(args, res, tag, op, shapes, j, pin, k):
    extra = ["--quant-y"] if "+y" in op else []
    dtype = op.split("@")[1] if "@" in op else "bf16"
    name = op.split("@")[0].replace("+y", "")
    js = os.path.join(args.out, "c_%s_%d_%d.json" % (tag, j, k))
    cmd = [args.bench, "--backend", "cuda", "--op", name] + extra + ["--dtype", dtype, "--shape", shapes] + \
        args.bench_args.split() + ["--json", js]
    old = pin.startswith("old")
    env = dict(os.environ, RMSNORM_CUDA_CONFIG=pin[4:] if old else pin,
               RMSNORM_PLUGIN_PATH=args.old_dir if old else args.lib_dir)
    t = time.time()
    try:
        r = subprocess.run(cmd, env=env, timeout=args.timeout, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        rc, err = r.returncode, r.stderr.decode()[-200:].strip().replace("\n", " | ")
    except subprocess.TimeoutExpired:
        rc, err = "timeout", ""
    print("%s %d %d [%s] rc %s %.1fs %s" % (tag, k, j, pin or "ladder", rc, time.time() - t, err), flush=True)
    try:
        with open(js) as f:
            cells = json.load(f)["cells"]
    except (OSError, ValueError, KeyError) as e:
        print("no json", js, e, flush=True)
        return
    for c in cells:
        v = "%.2f" % (c["median_s"] * 1e6) if c["verdict"] == "ok" else c["verdict"]
        res.setdefault((tag, "%dx%d" % (c["rows"], c["cols"]), j), []).append(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", required=True, help="the set file (format above)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--deadline", type=float, default=540.0, help="seconds from the start; no run starts after")
    ap.add_argument("--bench", default="build/devrun/rmsnorm-bench")
    ap.add_argument("--lib-dir", default="build/devrun/lib", help="the plugin under test (RMSNORM_PLUGIN_PATH)")
    ap.add_argument("--old-dir", default="build/devrun/old", help="the plugin the pin 'old' runs")
    ap.add_argument("--out", default=".", help="where the per-run JSON and cells.json go")
    ap.add_argument("--bench-args", default="--graph --force --tries 1 --probe-mib 64")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds a run")
    args = ap.parse_args()
    for a in ("bench", "lib_dir", "old_dir", "out"):
        setattr(args, a, os.path.abspath(getattr(args, a)))
    os.makedirs(args.out, exist_ok=True)
    deadline = time.time() + args.deadline
    sets = parse_sets(args.sets)
    res = {}
    stop = False
    for k in range(1, args.rounds + 1):
        for tag, op, shapes, pins in sets:
            order = list(enumerate(pins)) if k % 2 else list(enumerate(pins))[::-1]
            for j, pin in order:
                if time.time() > deadline:
                    print("deadline", tag, k, j, flush=True)
                    stop = True
                    break
                run(args, res, tag, op, shapes, j, pin, k)
            if stop:
                break
        if stop:
            break
    with open(os.path.join(args.out, "cells.json"), "w") as f:
        json.dump({"%s|%s|%d" % key: v for key, v in res.items()}, f, indent=0)
    for tag, op, shapes, pins in sets:
        print("\n%s (%s): %s" % (tag, op, "; ".join("P%d=%s" % (j, p or "ladder") for j, p in enumerate(pins))))
        print("| shape | " + " | ".join("P%d" % j for j in range(len(pins))) + " | " +
              " | ".join("P%d/P0" % j for j in range(1, len(pins))) + " |")
        for sh in shapes.split(","):
            cols = [res.get((tag, sh, j), ["-"]) for j in range(len(pins))]
            print("| %s | " % sh + " | ".join(" / ".join(v) for v in cols) + " | " +
                  " | ".join(ratio(cols[j], cols[0]) for j in range(1, len(pins))) + " |")
    return 0


def ratio(a, b):
    """The mean of a's rounds over the mean of b's ('-' when either has no time)."""
    def mean(v):
        t = [float(x) for x in v if x.replace(".", "", 1).isdigit()]
        return sum(t) / len(t) if t else None
    ma, mb = mean(a), mean(b)
    return "%.3f" % (ma / mb) if ma and mb else "-"


if __name__ == "__main__":
    sys.exit(main())
