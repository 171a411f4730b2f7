#!/usr/bin/env python3
"""ISA gate for the HIP build of the shared kernels (issue 9).

Reads the device assembly that `ninja hip-check` keeps (clang -save-temps:
<src>-hip-amdgcn-amd-amdhsa-<gfx>.s, the exact text that was assembled into the
fat binary) and, for every kernel and every target:

  FAIL  private segment (scratch) in use: .private_segment_fixed_size > 0, a
        dynamic stack, or a scratch instruction; any VGPR spill;
  warn  SGPR spills (FAIL with --strict-sgpr). On gfx9 an SGPR spill goes to a
        lane of a VGPR (v_writelane / v_readlane, no memory traffic); one that
        reached memory would show as scratch above and fail anyway;
  FAIL  a kernel of the 16-byte vector path whose loops hold no 16-byte global
        load (global_load_dwordx4, buffer_load_dwordx4, global_load_lds_dwordx4);
  info  VGPR / AGPR / SGPR / LDS / occupancy, written as a markdown table so that
        a change that doubles a kernel's registers shows up in review.

Kernels of the narrow (one element per access) path are listed in NARROW and
exempt from the load-width rule: they exist for misaligned rows and strides.

Usage: isa_gate.py --table OUT.md [--doc docs/perf/amd-isa.md] [--cxxfilt PATH]
                   [--compiler TEXT] [--stamp FILE] FILE.s...
Exit status 0 when every kernel passes, 1 otherwise (the table is written
either way, with the failures marked).
"""

import argparse
import os
import re
import subprocess
import sys

# Demangled-name patterns of kernels that load one element per access by design.
NARROW = [
    (re.compile(r"rmsi_probe1\("), "byte probe for unaligned buffers"),
    (re.compile(r"rmsi_(fwd|bwd)_multi<[^<>]*, 1>"), "narrow path (any alignment / stride)"),
    (re.compile(r"rmsi_dw_reduce\("), "fp32 partial sum, 4-byte column reads"),
]

WIDE_LOAD = re.compile(r"^\s*(global_load_dwordx4|buffer_load_dwordx4|global_load_lds_dwordx4)\b")
ANY_GLOBAL_LOAD = re.compile(r"^\s*(global|buffer|flat)_load_(\w+)")
LABEL = re.compile(r"^(\.LBB\d+_\d+):|^; %bb\.\d+:")
IN_LOOP = re.compile(r"in Loop: Header=|Loop Header: Depth=")
SRC_ARCH = re.compile(r"^(?P<src>.+)-hip-amdgcn-amd-amdhsa-(?P<arch>gfx\w+)\.s$")


def parse_metadata(text):
    """Top-level keys of each entry of amdhsa.kernels in the .amdgpu_metadata YAML."""
    m = re.search(r"\.amdgpu_metadata\n(.*?)\.end_amdgpu_metadata", text, re.S)
    if not m:
        return {}
    kernels = {}
    cur = None
    in_kernels = False
    for line in m.group(1).splitlines():
        if line.startswith("amdhsa.kernels:"):
            in_kernels = True
            continue
        if in_kernels and re.match(r"^\S", line):
            in_kernels = False
        if not in_kernels:
            continue
        item = re.match(r"^  - (\.[\w]+):\s*(.*)$", line)
        key = re.match(r"^    (\.[\w]+):\s*(.*)$", line)
        if item:
            cur = {}
            kv = item
        elif key and cur is not None:
            kv = key
        else:
            continue
        cur[kv.group(1)] = kv.group(2).strip()
        if kv.group(1) == ".symbol":
            kernels[kv.group(2).strip()[: -len(".kd")]] = cur
    return kernels


def parse_functions(text):
    """Per kernel symbol: body lines, and the '; Kernel info' comment block."""
    funcs = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^\s*\.type\s+([\w.$]+),@function", lines[i])
        if not m:
            i += 1
            continue
        name = m.group(1)
        body = []
        j = i + 1
        while j < len(lines) and not lines[j].startswith(".Lfunc_end"):
            body.append(lines[j])
            j += 1
        info = {}
        k = j
        while k < len(lines) and not re.match(r"^\s*\.type\s", lines[k]):
            c = re.match(r"^; (\w[\w ]*?):\s*(\d+)", lines[k])
            if c and c.group(1) not in info:
                info[c.group(1)] = int(c.group(2))
            k += 1
        funcs[name] = (body, info)
        i = j
    return funcs


def loop_loads(body):
    """(16-byte loads in loop blocks, other global loads in loop blocks, 16-byte loads anywhere)."""
    in_loop = False
    header_zone = False
    wide_loop = narrow_loop = wide_all = 0
    for line in body:
        if LABEL.match(line):
            in_loop = bool(IN_LOOP.search(line))
            header_zone = True
            continue
        if header_zone and line.strip().startswith(";"):
            if IN_LOOP.search(line):
                in_loop = True
            continue
        header_zone = False
        if WIDE_LOAD.match(line):
            wide_all += 1
            if in_loop:
                wide_loop += 1
        elif ANY_GLOBAL_LOAD.match(line) and in_loop:
            narrow_loop += 1
    return wide_loop, narrow_loop, wide_all


def demangle(names, cxxfilt):
    try:
        out = subprocess.run([cxxfilt], input="\n".join(names), capture_output=True, text=True, check=True)
        return dict(zip(names, out.stdout.splitlines()))
    except (OSError, subprocess.CalledProcessError):
        return {n: n for n in names}


def short(dem):
    s = dem.replace("(anonymous namespace)::", "").replace("void ", "", 1)
    s = re.sub(r"\((rmsi_fwd_params|rmsi_bwd_params)\)$", "", s)
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", required=True)
    ap.add_argument("--doc")
    ap.add_argument("--cxxfilt", default="llvm-cxxfilt-22")
    ap.add_argument("--compiler", default="")
    ap.add_argument("--stamp")
    ap.add_argument("--strict-sgpr", action="store_true")
    ap.add_argument("asm", nargs="+")
    args = ap.parse_args()

    rows = {}  # (src, symbol) -> {arch: record}
    archs = set()
    for path in args.asm:
        m = SRC_ARCH.match(os.path.basename(path))
        if not m:
            print(f"isa_gate: cannot tell source/arch from {path}", file=sys.stderr)
            return 2
        src, arch = m.group("src"), m.group("arch")
        archs.add(arch)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        meta = parse_metadata(text)
        funcs = parse_functions(text)
        for sym, md in meta.items():
            body, info = funcs.get(sym, ([], {}))
            wl, nl, wa = loop_loads(body)
            scratch_ops = sum(1 for l in body if re.match(r"^\s*scratch_(load|store)", l)
                              or re.match(r"^\s*buffer_(load|store)_\w+ .*, s\[0:3\]", l))
            rec = {
                "vgpr": int(md.get(".vgpr_count", "0")),
                "agpr": int(md.get(".agpr_count", "0")),
                "sgpr": int(md.get(".sgpr_count", "0")),
                "lds": int(md.get(".group_segment_fixed_size", "0")),
                "scratch": int(md.get(".private_segment_fixed_size", "0")),
                "vspill": int(md.get(".vgpr_spill_count", "0")),
                "sspill": int(md.get(".sgpr_spill_count", "0")),
                "dynstack": md.get(".uses_dynamic_stack", "false") == "true",
                "wgmax": int(md.get(".max_flat_workgroup_size", "0")),
                "occ": info.get("Occupancy", 0),
                "wide_loop": wl,
                "narrow_loop": nl,
                "wide_all": wa,
                "scratch_ops": scratch_ops,
            }
            rows.setdefault((src, sym), {})[arch] = rec

    archs = sorted(archs)
    dem = demangle(sorted({s for _, s in rows}), args.cxxfilt)
    failures = []
    warnings = []
    table = []
    for (src, sym) in sorted(rows, key=lambda k: (k[0], short(dem[k[1]]))):
        name = short(dem[sym])
        narrow = next((why for pat, why in NARROW if pat.search(dem[sym])), None)
        cells = []
        for arch in archs:
            r = rows[(src, sym)].get(arch)
            if r is None:
                failures.append(f"{src}: {name}: missing for {arch}")
                cells.append("-")
                continue
            bad = []
            if r["scratch"] > 0 or r["dynstack"] or r["scratch_ops"] > 0:
                bad.append(f"scratch {r['scratch']} B")
            if r["vspill"]:
                bad.append(f"{r['vspill']} VGPR spills")
            if r["sspill"]:
                if args.strict_sgpr:
                    bad.append(f"{r['sspill']} SGPR spills")
                else:
                    warnings.append(f"{src} [{arch}] {name}: {r['sspill']} SGPR spills to VGPR lanes")
            if narrow is None and r["wide_loop"] == 0:
                bad.append("no 16-byte load in its loops")
            for b in bad:
                failures.append(f"{src} [{arch}] {name}: {b}")
            v = f"{r['vgpr']}" + (f"+{r['agpr']}a" if r["agpr"] else "")
            sg = f"{r['sgpr']}" + (f" (s{r['sspill']})" if r["sspill"] else "")
            cells.append((v, sg, r["lds"], r["occ"], r["scratch"], r["wide_loop"], bad))
        table.append((src, name, narrow, cells))

    lines = []
    lines.append("# AMD ISA table (generated by `ninja hip-check`, do not edit)")
    lines.append("")
    lines.append("Written by gpu/hip/isa_gate.py from the device assembly of the shared kernels")
    lines.append("(gpu/common/*.cu) compiled as HIP against gpu/hip/hip_minimal.h:")
    lines.append("")
    lines.append(f"    {args.compiler}" if args.compiler else "    (compiler not recorded)")
    lines.append("")
    lines.append("Compile-time numbers only: nothing here ran on an AMD GPU. VGPR is the")
    lines.append("architectural VGPR count (+a: AGPRs); Occ is the compiler's waves per SIMD")
    lines.append("(of 8 on gfx942/gfx950) from registers, LDS and the launch bound; x4 is the")
    lines.append("number of 16-byte global loads inside loops (the hot path). Scratch must be 0.")
    lines.append("SGPR (sN): N SGPRs spilled to VGPR lanes (no memory traffic; a warning).")
    lines.append("A reviewer should question any change that raises VGPR enough to lower Occ.")
    lines.append("")
    head = "| file | kernel |"
    sep = "|---|---|"
    for a in archs:
        head += f" {a} VGPR | SGPR | LDS B | Occ | scratch | x4 |"
        sep += "---:|---:|---:|---:|---:|---:|"
    lines.append(head)
    lines.append(sep)
    for src, name, narrow, cells in table:
        row = f"| {src} | `{name}`{' (narrow)' if narrow else ''} |"
        for c in cells:
            if c == "-":
                row += " - | - | - | - | - | - |"
                continue
            v, s, lds, occ, scr, wl, bad = c
            mark = " **FAIL**" if bad else ""
            row += f" {v}{mark} | {s} | {lds} | {occ} | {scr} | {wl} |"
        lines.append(row)
    lines.append("")
    if failures:
        lines.append(f"Gate: FAIL ({len(failures)})")
        lines.append("")
        lines += [f"- {f}" for f in failures]
    else:
        lines.append(f"Gate: pass ({len(table)} kernels x {len(archs)} targets: no scratch, no spills,")
        lines.append("16-byte loads in the loops of every vector-path kernel).")
    if warnings:
        lines.append("")
        lines.append(f"Warnings ({len(warnings)}): SGPR spills to VGPR lanes")
        lines.append("")
        lines += [f"- {w}" for w in warnings]
    lines.append("")
    text = "\n".join(lines)
    with open(args.table, "w", encoding="utf-8") as f:
        f.write(text)
    if args.doc:
        old = None
        if os.path.exists(args.doc):
            with open(args.doc, encoding="utf-8") as f:
                old = f.read()
        if old != text:
            os.makedirs(os.path.dirname(args.doc) or ".", exist_ok=True)
            with open(args.doc, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"isa_gate: {args.doc} updated (review the diff)")

    print(f"isa_gate: {len(table)} kernels x {len(archs)} targets ({', '.join(archs)})")
    if warnings:
        print(f"isa_gate: {len(warnings)} warning(s): SGPR spills to VGPR lanes (see the table)")
    for f in failures:
        print(f"isa_gate: FAIL {f}")
    if failures:
        return 1
    if args.stamp:
        with open(args.stamp, "w", encoding="utf-8") as f:
            f.write("ok\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
