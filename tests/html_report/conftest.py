"""The report tests reuse the trace tests' generated-trace helpers (tests/trace/openb_helpers.py) and the
compare tests' inputs (tests/compare/compare_inputs.py)."""

from __future__ import annotations

import sys
from pathlib import Path

for _helpers in ("trace", "compare"):
    _path = str(Path(__file__).parents[1] / _helpers)
    if _path not in sys.path:
        sys.path.insert(0, _path)
