"""Makes `import rmsnorm` and `import oracle` work when pytest runs from anywhere.
`ninja pytest` also sets RMSNORM_LIBRARY to build/librmsnorm.so.1."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
for p in (here, os.path.dirname(here)):
    if p not in sys.path:
        sys.path.insert(0, p)
if "RMSNORM_LIBRARY" not in os.environ:
    built = os.path.join(here, "..", "..", "..", "build", "librmsnorm.so.1")
    if os.path.exists(built):
        os.environ["RMSNORM_LIBRARY"] = os.path.abspath(built)
