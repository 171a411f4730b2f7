#!/usr/bin/env python3
"""Old against new from alternated rmsnorm-bench runs: one row per cell
(op, dtype, shape), each run's median in us under its tag, and new / old of
the tags' mean medians. The runs are JSON files given as TAG=PATH, in the
order they ran (e.g. old/new/new/old, so that a drift over the call shows as
two different olds). A run that is missing (a timeout) or a cell that failed
is shown as "-".

    python3 bench/ab_table.py old=ab_1_old.json new=ab_2_new.json \\
        new=ab_3_new.json old=ab_4_old.json [--base old --test new]
"""
import argparse
import json
import os
import sys


def load(path):
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def cell_key(c):
    return (c["op"], c["dtype"], int(c["rows"]), int(c["cols"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+", help="TAG=PATH, in run order")
    ap.add_argument("--base", default="old")
    ap.add_argument("--test", default="new")
    args = ap.parse_args()
    runs = []
    for r in args.runs:
        tag, sep, path = r.partition("=")
        if not sep:
            ap.error("expected TAG=PATH, got %r" % r)
        runs.append((tag, path, load(path)))
    keys = []
    med = {}  # (run index, key) -> us
    for i, (_, _, d) in enumerate(runs):
        for c in (d or {}).get("cells", []):
            k = cell_key(c)
            if k not in keys:
                keys.append(k)
            if c.get("verdict") == "ok" and c.get("median_s"):
                med[(i, k)] = c["median_s"] * 1e6
    missing = [p for _, p, d in runs if d is None]
    head = ["op", "dtype", "shape"] + ["%d:%s" % (i + 1, t) for i, (t, _, _) in enumerate(runs)]
    head.append("%s/%s" % (args.test, args.base))
    rows = []
    for k in keys:
        vals = [med.get((i, k)) for i in range(len(runs))]

        def mean(tag):
            v = [x for (t, _, _), x in zip(runs, vals) if t == tag and x is not None]
            return sum(v) / len(v) if v else None

        b, t = mean(args.base), mean(args.test)
        ratio = "%.4f" % (t / b) if b and t else "-"
        rows.append([k[0], k[1], "%dx%d" % (k[2], k[3])] + ["%.2f" % v if v is not None else "-" for v in vals] +
                    [ratio])
    widths = [max(len(str(r[j])) for r in [head] + rows) for j in range(len(head))]
    for r in [head] + rows:
        print("  ".join(str(v).rjust(w) if j >= 3 else str(v).ljust(w) for j, (v, w) in enumerate(zip(r, widths))))
    for p in missing:
        print("missing or unreadable: %s" % p, file=sys.stderr)
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
