"""The dashboard tests start a real `berth serve` with tests/serve's helpers."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_SERVE = str(Path(__file__).parents[1] / "serve")
if _SERVE not in sys.path:
    sys.path.insert(0, _SERVE)


@pytest.fixture(scope="session")
def served_5000(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """An `--api-only` server holding 5 000 nodes ``node-00000`` ... ``node-04999`` (4 cpu each)."""
    from dashboard_helpers import node
    from serve_helpers import running

    with running(tmp_path_factory.mktemp("dashboard-5k"), "--api-only") as served:
        with served.client() as c:
            for i in range(5000):
                r = c.post("/api/v1/nodes", json=node(f"node-{i:05d}"))
                assert r.status_code == 201, r.text
        yield served
