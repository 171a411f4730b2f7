#!/usr/bin/env python3
"""Plot rmsnorm-bench CSV results: % of the measured roofline against rows*cols.

    python3 bench/plot.py results.csv [more.csv ...] -o docs/perf/plot.svg

One panel per op; one line per (backend, dtype). Runs whose roofline drifted
(suspect) are drawn with hollow markers. When a CSV has no roofline (the
backend has no probe hook), GB/s is plotted instead. matplotlib is installed
with pip on first use if it is missing (--no-install to refuse).
"""
import argparse
import csv
import importlib
import math
import subprocess
import sys


def need_matplotlib(install):
    try:
        return importlib.import_module("matplotlib")
    except ImportError:
        if not install:
            sys.exit("plot.py: matplotlib is missing (pip install matplotlib)")
        print("plot.py: installing matplotlib with pip ...", file=sys.stderr)
        subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", "matplotlib"])
        importlib.invalidate_caches()
        return importlib.import_module("matplotlib")


def read_csv(path):
    """Returns (environment dict from the '# key: value' lines, list of row dicts)."""
    env, lines = {}, []
    with open(path, newline="") as f:
        for line in f:
            if line.startswith("#"):
                key, _, value = line[1:].partition(":")
                env[key.strip()] = value.strip()
            else:
                lines.append(line)
    return env, list(csv.DictReader(lines))


def number(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="+", help="rmsnorm-bench --csv output(s)")
    ap.add_argument("-o", "--output", default="rmsnorm-bench.svg", help="SVG file to write")
    ap.add_argument("--title", default=None)
    ap.add_argument("--no-install", action="store_true", help="do not pip-install matplotlib")
    args = ap.parse_args()

    mpl = need_matplotlib(not args.no_install)
    mpl.use("Agg")
    plt = importlib.import_module("matplotlib.pyplot")

    series = {}  # op -> (backend, dtype) -> [(elems, value, suspect)]
    devices, metric = [], "pct_roofline"
    runs = [read_csv(p) for p in args.csv]
    if all(not number(r.get("pct_roofline")) for _, rows in runs for r in rows):
        metric = "gbps"  # no roofline anywhere: absolute bandwidth
    for env, rows in runs:
        dev = "%s: %s" % (env.get("backend", "?"), env.get("device", "?"))
        if env.get("commit"):
            dev += " @ " + env["commit"]
        devices.append(dev)
        for r in rows:
            v = number(r.get(metric))
            if r.get("verdict") != "ok" or v is None:
                continue
            elems = int(r["rows"]) * int(r["cols"])
            key = (r["backend"], r["dtype"])
            series.setdefault(r["op"], {}).setdefault(key, []).append(
                (elems, v, r.get("suspect") == "1"))
    if not series:
        sys.exit("plot.py: no ok rows with %s in %s" % (metric, ", ".join(args.csv)))

    ops = sorted(series)
    cols = min(len(ops), 2)
    nrows = (len(ops) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(7 * cols, 4.2 * nrows), squeeze=False)
    for i, op in enumerate(ops):
        ax = axes[i // cols][i % cols]
        for (backend, dtype), pts in sorted(series[op].items()):
            # several shapes share rows*cols: keep the median per x
            byx = {}
            for x, v, s in pts:
                byx.setdefault(x, []).append((v, s))
            xs = sorted(byx)
            ys = [sorted(v for v, _ in byx[x])[len(byx[x]) // 2] for x in xs]
            sus = [any(s for _, s in byx[x]) for x in xs]
            line, = ax.plot(xs, ys, "-", label="%s %s" % (backend, dtype))
            for x, y, s in zip(xs, ys, sus):
                ax.plot([x], [y], "o", color=line.get_color(),
                        markerfacecolor="none" if s else line.get_color())
        ax.set_xscale("log", base=2)
        ax.set_title(op)
        ax.set_xlabel("rows x cols (elements)")
        ax.set_ylabel("% of measured roofline" if metric == "pct_roofline" else "GB/s")
        if metric == "pct_roofline":
            ax.axhline(100.0, color="grey", linewidth=0.8, linestyle="--")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    for j in range(len(ops), nrows * cols):
        axes[j // cols][j % cols].set_visible(False)
    title = args.title or "rmsnorm-bench: " + "; ".join(sorted(set(devices)))
    fig.suptitle(title + "\n(hollow markers: roofline drifted, ratios suspect)", fontsize="small")
    fig.tight_layout()
    fig.savefig(args.output)  # format from the extension (svg, png, pdf)
    print("plot.py: wrote %s" % args.output)


if __name__ == "__main__":
    main()
