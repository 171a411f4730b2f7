#!/usr/bin/env python3
r"""Which kernels' machine code differs between two builds of a GPU plugin.

    tools/sass_diff.py OLD.so NEW.so [--arch sm_90a] [--arch sm_80]
                       [--rename REGEX REPL] [--list N]

Each kernel's SASS (cuobjdump, from $CUOBJDUMP, PATH or tools/cudatools.sh)
is compared instruction for instruction, addresses and encodings left out,
by demangled name. --rename rewrites NEW's demangled names before they are
matched (repeatable, Python re.sub), for a template parameter added with a
default (session 36: --rename
'^(void \(anonymous namespace\)::rmsi_fwd_lean(_rq)?<.*), false>' '\1>').
Prints, per arch, how many kernels are identical, differ, only old, only
new, and lists the differing ones and those only old. Exit status 0; 2 when
cuobjdump or a build is missing. A claim such as "the other kernels
compile as before" is then checked, not assumed (sessions 35 and 36 did
this by hand).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys


def cuobjdump():
    c = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")
    if c:
        return c
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([os.path.join(here, "cudatools.sh")], capture_output=True, text=True)
    c = os.path.join(r.stdout.strip(), "cuobjdump")
    return c if r.returncode == 0 and os.access(c, os.X_OK) else None


def kernels(tool, so, arch):
    out = subprocess.run([tool, "-sass", "-arch", arch, so], capture_output=True, text=True, check=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s*(.*?)\s*;", line)
        if m and cur is not None:
            cur.append(m.group(1))
    return funcs


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    return dict(zip(names, out.splitlines()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--arch", action="append")
    ap.add_argument("--rename", nargs=2, action="append", default=[], metavar=("REGEX", "REPL"))
    ap.add_argument("--list", type=int, default=40)
    a = ap.parse_args()
    tool = cuobjdump()
    if not tool or not os.path.exists(a.old) or not os.path.exists(a.new):
        print("sass_diff: needs cuobjdump and both builds", file=sys.stderr)
        return 2
    for arch in a.arch or ["sm_90a"]:
        old, new = kernels(tool, a.old, arch), kernels(tool, a.new, arch)
        dold = {d: n for n, d in demangle(list(old)).items()}
        dnew = {}
        for n, d in demangle(list(new)).items():
            for rx, repl in a.rename:
                d = re.sub(rx, repl, d)
            dnew[d] = n
        both = [d for d in dold if d in dnew]
        diff = sorted(d for d in both if old[dold[d]] != new[dnew[d]])
        print("%s: %d kernels old, %d new; %d identical, %d differ, %d only old, %d only new" %
              (arch, len(old), len(new), len(both) - len(diff), len(diff), len(dold) - len(both),
               len(dnew) - len(both)))
        for d in diff[:a.list]:
            print("  differs (%d -> %d instructions): %s" % (len(old[dold[d]]), len(new[dnew[d]]), d))
        for d in sorted(set(dold) - set(dnew))[:a.list]:
            print("  only old: %s" % d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
