"""Printing a benchmark's figures and writing them to benchmarks/results/<name>.json.

The recorded results are those of the default arguments. A benchmark that parses its command line with
`parse_args` makes every run with other arguments write to ``<name>-<args>.json`` instead (for instance
``scheduling_basic-nodes20-pods40.json``), so a quick run never overwrites the recorded figures; the
``--results-dir`` option `parse_args` adds chooses another folder.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"

_run: dict[str, Any] = {"slug": "", "results": None}
"""The arguments of this run: the file-name slug of its non-default options and the --results-dir."""


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far, in MiB."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _slug_part(dest: str, value: Any) -> str:
    name = dest.replace("_", "-")
    if value is True:
        return name
    if isinstance(value, list | tuple):
        value = ",".join(str(v) for v in value)
    return re.sub(r"[^A-Za-z0-9.,=+-]", "_", f"{name}{value}")


def args_slug(parser: argparse.ArgumentParser, args: argparse.Namespace, ignore: Iterable[str] = ()) -> str:
    """The options of ``args`` that differ from ``parser``'s defaults, as a file-name part (``nodes20-pods40``;
    "" when all are defaults). Positional arguments, hidden options and ``ignore``d ones do not count."""
    skip = set(ignore) | {"results_dir"}
    parts = []
    for action in parser._actions:
        if not action.option_strings or action.help == argparse.SUPPRESS or action.dest in skip:
            continue
        if action.dest == "help":
            continue
        value = getattr(args, action.dest, None)
        if value != action.default:
            parts.append(_slug_part(action.dest, value))
    return "-".join(parts)


def parse_args(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None = None, *, ignore: Iterable[str] = ()
) -> argparse.Namespace:
    """Parse the command line with ``parser`` (plus a ``--results-dir`` option) and remember which options
    differ from their defaults: `publish` then writes to ``<name>-<those options>.json``. Options in
    ``ignore`` (e.g. an output path) do not change the file name."""
    parser.add_argument(
        "--results-dir",
        type=Path,
        default=None,
        help="folder of the result files (default benchmarks/results)",
    )
    args = parser.parse_args(argv)
    _run["slug"] = args_slug(parser, args, ignore)
    _run["results"] = args.results_dir
    return args


def result_path(name: str, results: Path | None = None) -> Path:
    """Where the figures of ``name`` go: ``results`` (else --results-dir, else benchmarks/results), file
    ``<name>.json`` for the default arguments and ``<name>-<non-default options>.json`` otherwise."""
    folder = results or _run["results"] or RESULTS
    slug = _run["slug"]
    return Path(folder) / (f"{name}-{slug}.json" if slug else f"{name}.json")


def publish(name: str, figures: dict[str, Any], *, results: Path | None = None) -> Path:
    """Print ``figures`` one per line and write them as JSON to `result_path` (returned)."""
    for k, v in figures.items():
        print(f"{k:42s} {v}")
    path = result_path(name, results)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(figures, indent=2) + "\n")
    return path
