"""The ctypes mirrors against the C layout printed by tests/abi/layout.c."""
import ctypes
import os
import subprocess

import pytest

from rmsnorm import _capi as c


def c_layout():
    tool = os.environ.get("RMSNORM_LAYOUT_TOOL")
    if not tool or not os.path.exists(tool):
        pytest.skip("RMSNORM_LAYOUT_TOOL not set (ninja pytest builds and sets it)")
    out = subprocess.run([tool], check=True, capture_output=True, text=True).stdout
    return dict((k, int(v)) for k, v in (line.split() for line in out.splitlines()))


MIRRORS = {"rmsnorm_matrix": c.Matrix, "rmsnorm_forward_args": c.ForwardArgs,
           "rmsnorm_backward_args": c.BackwardArgs}


def test_struct_layout_matches_c():
    layout = c_layout()
    for cname, mirror in MIRRORS.items():
        assert ctypes.sizeof(mirror) == layout[cname], cname
        fields = [f[0] for f in mirror._fields_]
        c_fields = [k.split(".", 1)[1] for k in layout if k.startswith(cname + ".")]
        assert fields == c_fields, cname
        for f in fields:
            assert getattr(mirror, f).offset == layout["%s.%s" % (cname, f)], (cname, f)

