"""The ``berth`` command line."""

from __future__ import annotations

import json
import sys
import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
import yaml

from berth.api.errors import InvalidObjectError
from berth.api.manifest import ManifestError, load_manifests
from berth.api.wellknown import parse_duration
from berth.scheduler.framework.config import ConfigError, SchedulerConfig, parse_config

app = typer.Typer(
    help="Berth: a Kubernetes scheduling control plane (scheduling framework, reservations, quotas, gangs).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

EXIT_INVALID = 2


class OutputFormat(StrEnum):
    """Output formats of ``berth simulate``."""

    table = "table"
    wide = "wide"
    json = "json"
    yaml = "yaml"


def _invalid(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(EXIT_INVALID)


def _load_config(path: Path | None) -> SchedulerConfig | None:
    if path is None:
        return None
    try:
        text = path.read_text()
    except OSError as e:
        raise _invalid(f"{path}: {e.strerror}") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise _invalid(f"{path}: invalid YAML: {e}") from None
    if not isinstance(doc, dict):
        raise _invalid(f"{path}: expected a KubeSchedulerConfiguration object")
    try:
        return parse_config(doc, source=str(path))
    except ConfigError as e:
        raise _invalid(f"{path}: {e}") from None


@app.command()
def simulate(
    paths: Annotated[list[Path], typer.Argument(help="Manifest files or directories (YAML or JSON).")],
    scheduler_config: Annotated[
        Path | None, typer.Option("--scheduler-config", help="KubeSchedulerConfiguration file.")
    ] = None,
    until: Annotated[str | None, typer.Option(help="Virtual time to stop at (e.g. 30m).")] = None,
    seed: Annotated[int, typer.Option(help="Seed for tie-breaks and generated names.")] = 0,
    output: Annotated[
        OutputFormat, typer.Option("-o", "--output", help="Output format.")
    ] = OutputFormat.table,
    report: Annotated[Path | None, typer.Option(help="Write a JSON run summary to this file.")] = None,
) -> None:
    """Run manifests and Scenarios on a virtual clock and print the final state."""
    from berth.sim.engine import Simulation
    from berth.sim.output import to_json, to_tables, to_yaml
    from berth.sim.report import build_report
    from berth.sim.scenario import build_plan

    until_s: float | None = None
    if until is not None:
        try:
            until_s = parse_duration(until)
        except ValueError:
            raise _invalid(f'--until: invalid duration "{until}"') from None
    config = _load_config(scheduler_config)
    try:
        manifests = load_manifests([str(p) for p in paths])
        plan = build_plan(manifests)
    except (ManifestError, InvalidObjectError) as e:
        raise _invalid(str(e)) from None
    try:
        sim = Simulation(config=config, seed=seed)
    except ConfigError as e:
        raise _invalid(f"{scheduler_config or 'default scheduler configuration'}: {e}") from None
    t0 = time.perf_counter()
    result = sim.run(plan, until_s)
    for msg in sim.step_errors:
        typer.echo(msg, err=True)
    objects = sim.objects()
    if output is OutputFormat.json:
        sys.stdout.write(to_json(objects))
    elif output is OutputFormat.yaml:
        sys.stdout.write(to_yaml(objects))
    else:
        sys.stdout.write(to_tables(objects, sim.store.timestamp(), wide=output is OutputFormat.wide))
    if report is not None:
        data = build_report(result, objects, seed=seed)
        data["totalWallSeconds"] = round(time.perf_counter() - t0, 6)
        report.write_text(json.dumps(data, indent=2) + "\n")


@app.command()
def version() -> None:
    """Print Berth's version."""
    from importlib.metadata import version as _v

    typer.echo(_v("berth"))


def main() -> None:
    """Entry point of the ``berth`` command."""
    app()
