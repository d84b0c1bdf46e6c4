"""Printing a benchmark's figures and writing them to benchmarks/results/<name>.json."""

from __future__ import annotations

import json
import resource
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far, in MiB."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def publish(name: str, figures: dict[str, Any]) -> None:
    """Print ``figures`` one per line and write them as results/<name>.json."""
    for k, v in figures.items():
        print(f"{k:42s} {v}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(figures, indent=2) + "\n")
