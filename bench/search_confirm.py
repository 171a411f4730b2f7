#!/usr/bin/env python3
"""From a bench/gpu_search.py result to rmsnorm-bench's word on it: the
cells where the L2-hot search put an op's ladder more than --gap behind its
best config, re-timed cold by bench/set_sweep.py (the ladder against the
searched best, alternated --rounds times). Session 37's S37-1 was this.

gpu_search.py prints the plain forward's ladder for every forward op (the
plugin's describe hook knows no other), so the op's own ladder comes from
build/gpu/ladder-dump, written here (no GPU needed) and carried:

    python3 bench/search_confirm.py --ladder-json build/devrun/ladder_grid.json

and there, after `gpu_search.py --op q_block --json W/s_q_block.json` and
the like:

    python3 bench/search_confirm.py --ladder build/devrun/ladder_grid.json \\
        --search W/s_q_block.json,W/s_fused.json --out W --deadline 300

A cell whose best is the ladder's own config is not re-timed. A search run
with --dtype f16 or f32 is re-timed in that dtype (the ladder file holds
the forward ops' configs in all three, keyed op@dtype).
"""
import argparse
import json
import os
import subprocess
import sys

# gpu_search.py op -> (ladder-dump kind, set_sweep.py op); kind None: the
# search's own ladder text is the op's (the describe hook knows backward);
# "": no text is the op's (the hook prints the plain backward's config for
# bwd_dres, whose ladder the search times), so every flagged cell is re-timed
OPS = {
    "bwd": (None, "backward"),
    "bwd_dres": ("", "backward-res"),
    "fwd": ("bf16 q0 res0 h0 y1", "forward"),
    "fused": ("bf16 q0 res1 h1 y1", "fused-add"),
    "addq_block": ("bf16 q3 res1 h1 y1", "add-quant-block+y"),
    "addq_block_noy": ("bf16 q3 res1 h1 y0", "add-quant-block"),
    "q_block": ("bf16 q3 res0 h0 y0", "quant-block"),
    "q_block_y": ("bf16 q3 res0 h0 y1", "quant-block+y"),
}


def key_of(op, dt):
    """The ladder file's and the jobs' key: op for bf16, else op@dtype."""
    return op if dt == "bf16" else op + "@" + dt


def ladder_json(dump, path):
    """The forward ops' ladder configs, keyed by op (bf16) or op@dtype."""
    kinds = {}
    for op, (kind, _) in OPS.items():
        if kind:  # None and "": no ladder-dump kind
            for dt in ("bf16", "f16", "f32"):
                kinds[kind.replace("bf16", dt, 1)] = key_of(op, dt)
    out = {key: {} for key in kinds.values()}
    text = subprocess.run([dump], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=True).stdout
    for line in text.splitlines():
        p = line.split()
        op = kinds.get(" ".join(p[:5]))
        if op:
            out[op][p[5]] = p[6]
    with open(path, "w") as f:
        json.dump(out, f, indent=0)
    print("ladder configs of %d shapes to %s" % (sum(len(v) for v in out.values()), path))


def flagged(search_files, ladder, gap):
    jobs = []
    for path in search_files:
        try:
            with open(path) as f:
                rows = json.load(f)
        except (OSError, ValueError) as e:
            print("no search", path, e)
            continue
        for r in rows:
            if r["op"] not in OPS:
                continue
            shape = "%dx%d" % (r["rows"], r["cols"])
            key = key_of(r["op"], r.get("dtype", "bf16"))
            g = r["t_ladder"] / r["t_best"] - 1
            kind = OPS[r["op"]][0]
            own = r["ladder"] if kind is None else ladder.get(key, {}).get(shape) if kind else None
            if g > gap and r["best"] != own:
                jobs.append((g, key, shape, r["best"]))
    return sorted(jobs, reverse=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ladder-json", help="write the ops' ladder configs over ladder-dump's grid here and stop")
    ap.add_argument("--ladder-dump", default="build/gpu/ladder-dump")
    ap.add_argument("--ladder", help="the --ladder-json file")
    ap.add_argument("--search", help="gpu_search.py JSON files, comma-separated")
    ap.add_argument("--gap", type=float, default=0.02, help="how far behind the best a cell is flagged")
    ap.add_argument("--out", default=".", help="the sets file, set_sweep.py's runs and cells.json")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--deadline", type=float, default=300.0)
    ap.add_argument("--sweep-args", default="", help="more set_sweep.py arguments (--bench, --lib-dir, ...)")
    args = ap.parse_args()
    if args.ladder_json:
        ladder_json(args.ladder_dump, args.ladder_json)
        return 0
    if not args.ladder or not args.search:
        ap.error("--ladder and --search (or --ladder-json)")
    with open(args.ladder) as f:
        ladder = json.load(f)
    jobs = flagged(args.search.split(","), ladder, args.gap)
    print("flagged", len(jobs), flush=True)
    for g, op, shape, best in jobs:
        own = ladder.get(op, {}).get(shape) or ("as searched" if OPS[op.partition("@")[0]][0] is None else "unknown")
        print("  %+.1f%% %s %s %s (ladder %s)" % (100 * g, op, shape, best, own), flush=True)
    os.makedirs(args.out, exist_ok=True)
    sets = os.path.join(args.out, "sets_confirm.txt")
    with open(sets, "w") as f:
        for _, key, shape, best in jobs:
            op, _, dt = key.partition("@")
            sweep_op = OPS[op][1] + ("@" + dt if dt else "")
            f.write("%s_%s %s %s %s\n" % (key.replace("@", "_"), shape, sweep_op, shape, best))
    here = os.path.dirname(os.path.abspath(__file__))
    cmd = [sys.executable, os.path.join(here, "set_sweep.py"), "--sets", sets, "--rounds", str(args.rounds),
           "--deadline", str(args.deadline), "--out", args.out] + args.sweep_args.split()
    return subprocess.run(cmd).returncode


if __name__ == "__main__":
    sys.exit(main())
