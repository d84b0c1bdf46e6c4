"""The report tests reuse the trace tests' generated-trace helpers (tests/trace/openb_helpers.py)."""

from __future__ import annotations

import sys
from pathlib import Path

_TRACE = str(Path(__file__).parents[1] / "trace")
if _TRACE not in sys.path:
    sys.path.insert(0, _TRACE)
