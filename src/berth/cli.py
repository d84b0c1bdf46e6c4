"""The ``berth`` command line."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, cast

import typer
import yaml

from berth.api.errors import InvalidObjectError
from berth.api.manifest import ManifestError, load_manifests
from berth.api.wellknown import parse_duration
from berth.cli_help import HelpGroup
from berth.clock import RealClock
from berth.gc_policy import batch_run, end_process, tune_for_throughput
from berth.scheduler.framework.config import ConfigError, SchedulerConfig, parse_config, read_config_document

app = typer.Typer(
    help="Berth: a Kubernetes scheduling control plane (scheduling framework, reservations, quotas, gangs).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # click's own help layout: option help wraps at the terminal's width (COLUMNS) and is never cut with "…",
    # as rich's panels cut long option names and help at 80 columns
    rich_markup_mode=None,
    context_settings={"max_content_width": 120},
    cls=HelpGroup,
)

EXIT_INVALID = 2


def _print_version(value: bool) -> None:
    """``--version``: print Berth's version (as ``berth version``) and exit."""
    if value:
        from importlib.metadata import version as _v

        typer.echo(_v("berth"))
        raise typer.Exit()


@app.callback()
def _main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", is_eager=True, callback=_print_version, help="Print Berth's version and exit."
        ),
    ] = False,
) -> None:
    """Berth: a Kubernetes scheduling control plane (scheduling framework, reservations, quotas, gangs)."""


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
        config = parse_config(read_config_document(path), source=str(path))
    except ConfigError as e:
        raise _invalid(f"{path}: {e}") from None
    for notice in config.warnings:
        typer.echo(f"warning: {path}: {notice}", err=True)
    return config


def _seconds(option: str, value: str) -> float:
    """The positive duration ``value`` of ``option`` in seconds; exits 2 naming the option otherwise."""
    try:
        seconds = parse_duration(value)
    except ValueError:
        raise _invalid(f'{option}: invalid duration "{value}"') from None
    if seconds <= 0:
        raise _invalid(f'{option}: must be positive, not "{value}"')
    return seconds


def _load_manifests(paths: list[Path], validate: str) -> Any:
    """The manifests in ``paths``, decoded as ``--validate`` says: exits 2 with one line per object with
    unknown fields under strict, prints one warning per object under warn. Other errors are the caller's."""
    from berth.sim.strict import StrictDecodingError, parse_validation, strict_check

    try:
        mode = parse_validation(validate)
    except ValueError as e:
        raise _invalid(str(e)) from None
    check = strict_check(mode, lambda line: typer.echo(line, err=True))
    try:
        return load_manifests([str(p) for p in paths], check=check)
    except StrictDecodingError as e:
        for line in e.lines:
            typer.echo(f"error: {line}", err=True)
        raise typer.Exit(EXIT_INVALID) from None


def _prepare_run(
    paths: list[Path], scheduler_config: Path | None, until: str | None, seed: int, validate: str = "strict"
) -> tuple[Any, Any, float | None]:
    """The simulation, the plan of the manifests in ``paths`` and the end time; exits 2 on bad input."""
    from berth.sim.scenario import build_plan

    until_s = None if until is None else _seconds("--until", until)
    config = _load_config(scheduler_config)
    try:
        manifests = _load_manifests(paths, validate)
        plan = build_plan(manifests)
    except (ManifestError, InvalidObjectError) as e:
        raise _invalid(str(e)) from None
    _check_unique_uids(plan)
    from berth.sim.engine import Simulation  # imported once the input is known good: bad input exits fast

    try:
        sim = Simulation(config=config, seed=seed)
    except ConfigError as e:
        raise _invalid(f"{scheduler_config or 'default scheduler configuration'}: {e}") from None
    return sim, plan, until_s


def _check_report_path(report: Path | None, option: str = "--report") -> None:
    """Exit 2 with one line, before anything runs, when ``option`` (``--report``, ``--report-html``) cannot
    be written: a directory, or a file in a directory that does not exist (the file itself is only written
    after the run)."""
    if report is None:
        return
    if report.is_dir():
        raise _invalid(f'{option}: "{report}" is a directory')
    parent = report.parent
    if not parent.is_dir():
        what = f'"{parent}" is not a directory' if parent.exists() else f'directory "{parent}" does not exist'
        raise _invalid(f'{option}: cannot write "{report}": {what}')


def _check_unique_uids(plan: Any) -> None:
    """A given metadata.uid names one object only (Berth keeps given uids); a repeat exits 2."""
    seen: dict[str, str] = {}
    for step in plan.steps:
        for obj in step.create:
            meta = obj.get("metadata") or {}
            uid = meta.get("uid")
            if not uid:
                continue
            who = f'{obj.get("kind")} "{meta.get("name")}"'
            if uid in seen:
                raise _invalid(
                    f'{who}: metadata.uid: Duplicate value: "{uid}" (already the uid of {seen[uid]})'
                )
            seen[str(uid)] = who


def _create_initial(sim: Any, plan: Any, *, hand_over: bool = False) -> Any:
    """Create the initial objects before anything runs; the plan left to run. Any object the API server
    refuses exits 2, after one ``kubectl apply``-style line per refused object (nothing is run or printed).
    `hand_over`: the plan's initial objects are not used after (see `create_initial_objects`)."""
    from berth.sim.initial import create_initial_objects

    refused, rest = create_initial_objects(sim.store, plan, hand_over=hand_over)
    if refused:
        for line in refused:
            typer.echo(line, err=True)
        raise typer.Exit(EXIT_INVALID)
    return rest


ValidateOption = Annotated[
    str,
    typer.Option(
        "--validate",
        help="Unknown fields in manifests: strict (or true) refuses them, warn prints a warning, "
        "ignore (or false) drops them silently.",
    ),
]
SchedulerConfigOption = Annotated[
    Path | None, typer.Option("--scheduler-config", help="KubeSchedulerConfiguration file.")
]
UntilOption = Annotated[str | None, typer.Option(help="Virtual time to stop at (e.g. 30m).")]
SeedOption = Annotated[int, typer.Option(help="Seed for tie-breaks and generated names.")]
DeschedulerPolicyOption = Annotated[
    Path | None,
    typer.Option(
        "--descheduler-policy", help="Run this DeschedulerPolicy (descheduler/v1alpha2) periodically."
    ),
]
DeschedulingIntervalOption = Annotated[
    str, typer.Option("--descheduling-interval", help="Time between descheduling cycles.")
]


@app.command()
def simulate(
    paths: Annotated[
        list[Path],
        typer.Argument(help="Manifest files or directories (YAML or JSON); - reads standard input."),
    ],
    scheduler_config: SchedulerConfigOption = None,
    until: UntilOption = None,
    seed: SeedOption = 0,
    output: Annotated[
        OutputFormat, typer.Option("-o", "--output", help="Output format.")
    ] = OutputFormat.table,
    report: Annotated[Path | None, typer.Option(help="Write a JSON run summary to this file.")] = None,
    report_html: Annotated[
        Path | None,
        typer.Option("--report-html", help="Write a self-contained HTML report with charts to this file."),
    ] = None,
    sample: Annotated[
        str, typer.Option("--sample", help="Virtual time between the samples of --report-html.")
    ] = "10s",
    descheduler_policy: Annotated[
        Path | None,
        typer.Option(
            "--descheduler-policy", help="Run this DeschedulerPolicy (descheduler/v1alpha2) periodically."
        ),
    ] = None,
    descheduling_interval: Annotated[
        str, typer.Option("--descheduling-interval", help="Virtual time between descheduling cycles.")
    ] = "5m",
    validate: ValidateOption = "strict",
    quiet: Annotated[
        bool,
        typer.Option("--quiet", "-q", help="No progress bar (shown on a terminal for runs over a second)."),
    ] = False,
) -> None:
    """Run manifests and Scenarios on a virtual clock and print the final state."""
    with batch_run():
        _check_report_path(report)
        _check_report_path(report_html, "--report-html")
        sample_s = _seconds("--sample", sample)
        sim, plan, until_s = _prepare_run(paths, scheduler_config, until, seed, validate)
        from berth.sim.output import to_tables, to_yaml, write_json
        from berth.sim.report import build_report

        policy, every = _descheduler_options(descheduler_policy, descheduling_interval)
        if policy is not None:
            sim.enable_descheduler(policy, every)
        t0 = time.perf_counter()
        rest = _create_initial(sim, plan, hand_over=True)  # the plan's initial objects: read once, here
        progress = _progress(sim, rest, until_s, quiet)
        timeline = _timeline(sim, rest, until_s, sample_s) if report_html is not None else None
        try:
            result = sim.run(rest, until_s)
        finally:
            if progress is not None:
                progress.close()
        for msg in [*sim.step_errors, *sim.descheduling_errors]:
            typer.echo(msg, err=True)
        objects = sim.objects()
        if output is OutputFormat.json:
            write_json(objects, sys.stdout)
        elif output is OutputFormat.yaml:
            sys.stdout.write(to_yaml(objects))
        else:
            sys.stdout.write(to_tables(objects, sim.store.timestamp(), wide=output is OutputFormat.wide))
        if report is not None:
            data = build_report(result, objects, seed=seed)
            data["totalWallSeconds"] = round(time.perf_counter() - t0, 6)
            report.write_text(json.dumps(data, indent=2) + "\n")
        if report_html is not None and timeline is not None:
            _write_timeline(timeline, report_html, result, seed)


def _timeline(sim: Any, plan: Any, until: float | None, step: float) -> Any:
    """A Timeline sampling ``sim`` every ``step`` virtual seconds of the run of ``plan``."""
    from berth.sim.engine import run_end
    from berth.sim.timeline import Timeline

    timeline = Timeline(step)
    timeline.attach(sim, run_end(plan, until))
    return timeline


def _write_timeline(timeline: Any, path: Path, result: Any, seed: int) -> None:
    """Finish ``timeline`` and write its HTML report to ``path``."""
    from berth.sim.html_report import write_html

    timeline.finish()
    summary = (
        f"{result.virtual_seconds:g}s of virtual time, seed {seed}: {result.scheduled} pods scheduled in "
        f"{result.attempts} attempts ({result.unschedulable_attempts} unschedulable), sampled every "
        f"{timeline.step:g}s."
    )
    write_html(path, timeline.data(), "Berth simulation report", summary)


def _progress(sim: Any, plan: Any, until: float | None, quiet: bool) -> Any:
    """The progress bar of a ``berth simulate`` run on standard error, following ``sim``; None with ``--quiet``
    or when standard error is not a terminal."""
    console = None if quiet else _terminal_console()
    if console is None:
        return None
    from berth.sim.engine import run_end
    from berth.sim.progress import SimProgress

    progress = SimProgress(console)
    progress.attach(sim, run_end(plan, until))
    return progress


def _terminal_console() -> Any:
    """A rich Console on standard error when that is a terminal, else None (tests put a terminal here)."""
    if not sys.stderr.isatty():
        return None
    from rich.console import Console

    return Console(stderr=True)


def _descheduler_options(path: Path | None, interval: str) -> tuple[Any, float]:
    """The policy (None without one) and the interval in seconds of ``--descheduler-policy`` /
    ``--descheduling-interval``; exits 2 on a bad policy or interval."""
    from berth.descheduler.args import PolicyError
    from berth.descheduler.setup import read_policy

    every = _seconds("--descheduling-interval", interval)
    if path is None:
        return None, every
    try:
        policy = read_policy(str(path))
    except PolicyError as e:
        raise _invalid(str(e)) from None
    return policy, every


class ExplainFormat(StrEnum):
    """Output formats of ``berth explain``."""

    text = "text"
    json = "json"


@app.command()
def explain(
    paths: Annotated[
        list[Path],
        typer.Argument(help="Manifest files or directories (YAML or JSON); - reads standard input."),
    ],
    pod: Annotated[
        str | None, typer.Option("--pod", help="The pod to explain: NAMESPACE/NAME or NAME (default ns).")
    ] = None,
    reservation: Annotated[
        str | None,
        typer.Option("--reservation", help="The Reservation to explain (the scheduling of its reserve pod)."),
    ] = None,
    scheduler_config: SchedulerConfigOption = None,
    until: UntilOption = None,
    seed: SeedOption = 0,
    attempt: Annotated[
        int | None, typer.Option(help="Show only this attempt (1 = first, -1 = last); default all.")
    ] = None,
    node: Annotated[
        list[str] | None, typer.Option("--node", help="Show only this node (repeatable).")
    ] = None,
    top: Annotated[
        int | None,
        typer.Option(
            "--top",
            help="Show only the N best nodes: highest total score first, then feasible, then rejected (by name).",
        ),
    ] = None,
    output: Annotated[
        ExplainFormat, typer.Option("-o", "--output", help="Output format.")
    ] = ExplainFormat.text,
    validate: ValidateOption = "strict",
) -> None:
    """Run a scenario and show, for one pod (or a Reservation's reserve pod), each node's Filter verdicts, every
    plugin's scores, the reservations it used or was refused by, and the choice."""
    from berth.scheduler.trace import Tracer
    from berth.sim import explain as ex

    try:
        subject = ex.subject_for(pod, reservation)
    except ex.ExplainError as e:
        raise _invalid(str(e)) from None
    if top is not None and top < 1:
        raise _invalid(f"--top: must be a positive number, got {top}")
    view = ex.View(frozenset(node) if node else None, top)
    sim, plan, until_s = _prepare_run(paths, scheduler_config, until, seed, validate)
    tracer = Tracer(subject.wants)
    sim.scheduler.tracer = tracer
    lifecycle = ex.Lifecycle(subject, sim.clock.now)
    sim.store.subscribe(lifecycle.on_event, lifecycle.key)
    sim.run(_create_initial(sim, plan), until_s)
    for msg in sim.step_errors:
        typer.echo(msg, err=True)
    traces = tracer.traces
    nodes = {o["metadata"]["name"] for o in sim.objects() if o.get("kind") == "Node"}
    try:
        numbered = ex.select(subject, traces, lifecycle, ex.Request(attempt, view), nodes)
    except ex.ExplainError as e:
        raise _invalid(str(e)) from None
    if output is ExplainFormat.json:
        sys.stdout.write(json.dumps(ex.render_json(subject, numbered, lifecycle, view), indent=2) + "\n")
    else:
        sys.stdout.write(ex.render_text(subject, numbered, len(traces), lifecycle, view))


Kubeconfig = Annotated[
    Path | None, typer.Option("--kubeconfig", help="kubeconfig file (default $KUBECONFIG).")
]
Context = Annotated[str | None, typer.Option("--context", help="kubeconfig context to use.")]
Server = Annotated[
    str | None, typer.Option("--server", "-s", help="API server address (overrides kubeconfig).")
]
Token = Annotated[str | None, typer.Option("--token", help="Bearer token for the API server.")]
Insecure = Annotated[
    bool, typer.Option("--insecure-skip-tls-verify", help="Do not verify the server's certificate.")
]


def _connect(
    kubeconfig: Path | None, context: str | None, server: str | None, token: str | None, insecure: bool
) -> Any:
    """A KubeClient for the chosen API server (tests replace this function to talk to an in-process one)."""
    from berth.remote.client import KubeClient
    from berth.remote.kubeconfig import KubeconfigError, connection_for

    try:
        conn = connection_for(
            str(kubeconfig) if kubeconfig else None, context, server=server, token=token, insecure=insecure
        )
    except KubeconfigError as e:
        raise _invalid(str(e)) from None
    return KubeClient.connect(conn)


def _server_error(e: Exception) -> typer.Exit:
    """kubectl's report of a refusal (``Error from server (NotFound): ...``) or of an unreachable server."""
    from berth.api.errors import StatusError
    from berth.remote.client import ServerUnreachable

    if isinstance(e, StatusError):
        typer.echo(f"Error from server ({e.reason}): {e.message}", err=True)
    elif isinstance(e, ServerUnreachable):
        typer.echo(e.kubectl_message(), err=True)
    else:
        typer.echo(f"error: {e}", err=True)
    return typer.Exit(1)


def _drain_clock() -> RealClock:
    """The clock a drain against an API server runs on (tests put a simulated cluster's time here)."""
    return RealClock()


def _node_command(
    action: str,
    node: str,
    kubeconfig: Path | None,
    context: str | None,
    server: str | None,
    token: str | None,
    insecure: bool,
) -> None:
    """Run ``cordon`` or ``uncordon`` on ``node`` and print kubectl's line."""
    from berth.api.errors import StatusError
    from berth.descheduler.drain import set_unschedulable
    from berth.remote.client import ServerUnreachable
    from berth.remote.store import RemoteStore

    store = RemoteStore(_connect(kubeconfig, context, server, token, insecure))
    try:
        typer.echo(set_unschedulable(store, node, action == "cordon")[1])
    except (StatusError, ServerUnreachable) as e:
        raise _server_error(e) from None


def _register_node_command(action: str, summary: str) -> None:
    """Add ``berth <action> NODE`` (cordon or uncordon) with the API connection options."""

    def command(
        node: Annotated[str, typer.Argument(help="Node name.")],
        kubeconfig: Kubeconfig = None,
        context: Context = None,
        server: Server = None,
        token: Token = None,
        insecure_skip_tls_verify: Insecure = False,
    ) -> None:
        _node_command(action, node, kubeconfig, context, server, token, insecure_skip_tls_verify)

    command.__doc__ = summary
    app.command(name=action)(command)


_register_node_command("cordon", "Mark a node unschedulable (as kubectl cordon).")
_register_node_command("uncordon", "Mark a node schedulable again (as kubectl uncordon).")


@app.command()
def drain(
    node: Annotated[str, typer.Argument(help="Node name.")],
    force: Annotated[bool, typer.Option(help="Also evict pods that declare no controller.")] = False,
    timeout: Annotated[str, typer.Option(help="Give up after this long (0s: never).")] = "0s",
    grace_period: Annotated[
        int, typer.Option(help="Termination grace period for evicted pods (-1: the pod's own).")
    ] = -1,
    ignore_daemonsets: Annotated[
        bool, typer.Option("--ignore-daemonsets", help="Ignore DaemonSet-managed pods.")
    ] = False,
    delete_emptydir_data: Annotated[
        bool,
        typer.Option(
            "--delete-emptydir-data",
            help="Continue even if there are pods using emptyDir (local data deleted with the pod).",
        ),
    ] = False,
    pod_selector: Annotated[
        str, typer.Option("--pod-selector", help="Label selector to filter the pods on the node.")
    ] = "",
    dry_run: Annotated[
        str,
        typer.Option(
            "--dry-run",
            metavar="none|client|server",
            help='"none", "server" (send the requests with dryRun=All) or "client" (only print what would '
            "be evicted).",
        ),
    ] = "none",
    prefer_avoid_pods: Annotated[
        bool,
        typer.Option(
            help="Ask the node to avoid each evicted pod's controller afterwards "
            "(scheduler.alpha.kubernetes.io/preferAvoidPods; kubectl never does)."
        ),
    ] = False,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
    server: Server = None,
    token: Token = None,
    insecure_skip_tls_verify: Insecure = False,
) -> None:
    """Cordon a node and evict its pods through the eviction API, respecting PodDisruptionBudgets."""
    from berth.api.errors import StatusError
    from berth.api.labels import LabelSelectorError, parse_selector
    from berth.descheduler.drain import DrainError, DryRun, failure_lines
    from berth.descheduler.drain import drain as start_drain
    from berth.remote.client import ServerUnreachable
    from berth.remote.store import RemoteStore

    try:
        timeout_s = parse_duration(timeout)
    except ValueError:
        raise _invalid(f'--timeout: invalid duration "{timeout}"') from None
    if grace_period < -1:
        raise _invalid(f"--grace-period: invalid value {grace_period} (expected -1 or more)")
    if dry_run not in ("none", "client", "server"):
        raise _invalid(f'Invalid dry-run value ({dry_run}). Must be "none", "server", or "client".')
    try:
        parse_selector(pod_selector)
    except LabelSelectorError:
        raise _invalid("--pod-selector=<pod_selector> must be a valid label selector") from None
    clock = _drain_clock()
    store = RemoteStore(_connect(kubeconfig, context, server, token, insecure_skip_tls_verify), clock)
    pending: list[str] = []
    try:
        op = start_drain(
            store,
            clock,
            node,
            force=force,
            timeout=timeout_s,
            grace_period_seconds=None if grace_period < 0 else grace_period,
            prefer_avoid=prefer_avoid_pods,
            ignore_daemonsets=ignore_daemonsets,
            delete_emptydir_data=delete_emptydir_data,
            pod_selector=pod_selector,
            dry_run=cast(DryRun, dry_run),
            on_log=typer.echo,
            on_error=lambda line: typer.echo(line, err=True),
        )
        while not op.done and clock.step():
            pass
        error = op.result.error if op.result is not None else "drain stopped before it finished"
        pending = failure_lines(op.result) if op.result is not None else []
    except DrainError as e:
        error = str(e)
    except (StatusError, ServerUnreachable) as e:
        raise _server_error(e) from None
    if error:
        for line in pending:
            typer.echo(line, err=True)
        typer.echo(
            f'error: unable to drain node "{node}" due to error: {error}, continuing command...\n'
            f"There are pending nodes to be drained:\n {node}\nerror: {error}",
            err=True,
        )
        raise typer.Exit(1)


class ManifestFormat(StrEnum):
    """Output formats of commands that print manifests."""

    yaml = "yaml"
    json = "json"


class TableFormat(StrEnum):
    """Output formats of the commands that print a table or JSON (deschedule, whatif, compare)."""

    table = "table"
    json = "json"


@app.command()
def deschedule(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Manifest files or directories: the cluster as it was (default: a live cluster)."
        ),
    ] = None,
    policy: Annotated[
        Path, typer.Option("--policy", help="DeschedulerPolicy (descheduler/v1alpha2) file.")
    ] = Path(),
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Evict on a copy and re-place (implied with PATHs).")
    ] = False,
    scheduler_config: SchedulerConfigOption = None,
    output: Annotated[TableFormat, typer.Option("-o", "--output", help="Output format.")] = TableFormat.table,
    now: Annotated[
        str | None, typer.Option("--now", help="The cycle's time (RFC 3339; default: the wall clock).")
    ] = None,
    seed: SeedOption = 0,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
    server: Server = None,
    token: Token = None,
    insecure_skip_tls_verify: Insecure = False,
    validate: ValidateOption = "strict",
) -> None:
    """Run one descheduling cycle and print what it evicts, where the replacements go, and the utilisation."""
    from datetime import UTC, datetime

    from berth.api.errors import StatusError
    from berth.api.timestamps import parse_time
    from berth.descheduler.args import PolicyError
    from berth.descheduler.setup import read_policy
    from berth.remote.client import ServerUnreachable
    from berth.sim.deschedule import plan_descheduling, run_live_cycle

    if policy == Path():
        raise _invalid("--policy: a DeschedulerPolicy file is required")
    try:
        loaded = read_policy(str(policy))
    except PolicyError as e:
        raise _invalid(str(e)) from None
    if now is not None:
        at = parse_time(now)
        if at is None:
            raise _invalid(f'--now: invalid time "{now}" (expected RFC 3339, e.g. 2024-01-01T00:00:00Z)')
    else:
        at = datetime.now(UTC).replace(microsecond=0)
    config = _load_config(scheduler_config)
    if paths:
        try:
            manifests = _load_manifests(paths, validate)
        except (ManifestError, InvalidObjectError) as e:
            raise _invalid(str(e)) from None
        objects = [m.obj for m in manifests]
        for m in manifests:
            if m.obj.get("kind") == "Scenario":
                raise _invalid(f"{m.source}: berth deschedule reads cluster objects, not a Scenario")
        try:
            plan = plan_descheduling(objects, loaded, now=at, config=config, seed=seed, validated=True)
        except (InvalidObjectError, StatusError, PolicyError) as e:
            raise _invalid(str(e)) from None
    else:
        from berth.remote.store import RemoteStore

        store = RemoteStore(
            _connect(kubeconfig, context, server, token, insecure_skip_tls_verify), RealClock()
        )
        try:
            plan = run_live_cycle(store, loaded, now=at, dry_run=dry_run, config=config, seed=seed)
        except PolicyError as e:
            raise _invalid(str(e)) from None
        except (StatusError, ServerUnreachable) as e:
            raise _server_error(e) from None
    if output is TableFormat.json:
        sys.stdout.write(json.dumps(plan.to_dict(), indent=2) + "\n")
    else:
        sys.stdout.write(plan.to_table())


@app.command()
def whatif(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Manifest files or directories: the cluster (default: a live cluster)."),
    ] = None,
    pod: Annotated[Path | None, typer.Option("--pod", help="File with the Pod to place.")] = None,
    gang: Annotated[
        Path | None, typer.Option("--gang", help="File with the pods of one PodGroup (and the PodGroup).")
    ] = None,
    reservation: Annotated[
        Path | None, typer.Option("--reservation", help="File with the Koordinator Reservation to place.")
    ] = None,
    scheduler_config: SchedulerConfigOption = None,
    output: Annotated[TableFormat, typer.Option("-o", "--output", help="Output format.")] = TableFormat.table,
    now: Annotated[
        str | None, typer.Option("--now", help="The cluster's time (RFC 3339; default: the wall clock).")
    ] = None,
    seed: SeedOption = 0,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
    server: Server = None,
    token: Token = None,
    insecure_skip_tls_verify: Insecure = False,
    validate: ValidateOption = "strict",
) -> None:
    """Would a pod, a gang or a Reservation fit now: where, what it preempts and borrows; if not, why, and the
    smallest change that makes it fit (each tried on a copy; nothing is written to the cluster)."""
    from datetime import UTC, datetime

    from berth.api.errors import StatusError
    from berth.api.timestamps import parse_time
    from berth.remote.client import ServerUnreachable
    from berth.sim import whatif as wi

    chosen = [(k, p) for k, p in (("Pod", pod), ("PodGroup", gang), ("Reservation", reservation)) if p]
    if len(chosen) != 1:
        raise _invalid("give exactly one of --pod, --gang and --reservation")
    kind, path = chosen[0]
    at = datetime.now(UTC).replace(microsecond=0) if now is None else parse_time(now)
    if at is None:
        raise _invalid(f'--now: invalid time "{now}" (expected RFC 3339, e.g. 2024-01-01T00:00:00Z)')
    config = _load_config(scheduler_config)
    try:
        asked = _load_manifests([path], validate)
        question = wi.question_from(kind, [(m.obj, m.source) for m in asked], str(path))
        manifests = _load_manifests(paths, validate) if paths else None
    except (ManifestError, InvalidObjectError, wi.WhatIfError) as e:
        raise _invalid(str(e)) from None
    for m in manifests or ():
        if m.obj.get("kind") == "Scenario":
            raise _invalid(f"{m.source}: berth whatif reads cluster objects, not a Scenario")
    cluster = None if manifests is None else [m.obj for m in manifests]
    try:
        if cluster is None:
            from berth.remote.store import RemoteStore
            from berth.sim.deschedule import read_cluster

            store = RemoteStore(
                _connect(kubeconfig, context, server, token, insecure_skip_tls_verify), RealClock()
            )
            cluster = read_cluster(store)
        result = wi.answer(cluster, question, now=at, config=config, seed=seed, validated=True)
    except (wi.WhatIfError, InvalidObjectError) as e:
        raise _invalid(str(e)) from None
    except (StatusError, ServerUnreachable) as e:
        raise _server_error(e) from None
    for note in result.trial.notes:
        typer.echo(f"warning: {note}", err=True)
    sys.stdout.write(result.to_json() if output is TableFormat.json else result.to_table())


def _run_loop(main: Any) -> None:
    """Run the server's coroutine on uvloop (libuv: about twice the requests per second of asyncio's own loop
    here), or on asyncio's loop where uvloop is not available."""
    try:
        import uvloop
    except ImportError:  # uvloop does not exist for Windows
        asyncio.run(main)
        return
    uvloop.run(main)


class KubeletMode(StrEnum):
    """What runs the pods ``berth serve`` binds."""

    sim = "sim"
    none = "none"


def _listen_address(listen: str) -> tuple[str, int]:
    """HOST:PORT (IPv6 in brackets) as a host and a port; exit 2 naming the option when malformed."""
    host, sep, port_text = listen.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise _invalid(f'--listen: invalid address "{listen}" (expected HOST:PORT, e.g. 127.0.0.1:6443)')
    return host, int(port_text)


@app.command()
def serve(
    data_dir: Annotated[
        Path, typer.Option("--data-dir", help="Where the state, certificates and kubeconfig live.")
    ],
    listen: Annotated[
        str, typer.Option(help="Address to serve HTTPS on (port 0: any free port).")
    ] = "127.0.0.1:6443",
    kubelet: Annotated[
        KubeletMode, typer.Option(help="sim: bound pods start and finish; none: they stay bound.")
    ] = KubeletMode.sim,
    scheduler_config: SchedulerConfigOption = None,
    api_only: Annotated[
        bool,
        typer.Option(help="Serve the API only: no scheduler, controllers or kubelet (a bare API server)."),
    ] = False,
    tls_cert_file: Annotated[
        Path | None, typer.Option(help="Serving certificate (default: one Berth makes).")
    ] = None,
    tls_private_key_file: Annotated[Path | None, typer.Option(help="Key of --tls-cert-file.")] = None,
    descheduler_policy: DeschedulerPolicyOption = None,
    descheduling_interval: DeschedulingIntervalOption = "5m",
) -> None:
    """Serve the Kubernetes API (for kubectl and client libraries) with the scheduler and controllers running."""

    from berth.controlplane.serve import ServeOptions
    from berth.controlplane.serve import serve as run_server
    from berth.server.credentials import CredentialsError, ServerCredentials
    from berth.store.journal import JournalError

    host, port = _listen_address(listen)
    policy, every = _descheduler_options(descheduler_policy, descheduling_interval)
    options = ServeOptions(
        data_dir,
        host,
        port,
        kubelet=kubelet is KubeletMode.sim,
        api_only=api_only,
        config=_load_config(scheduler_config),
        tls_cert=tls_cert_file,
        tls_key=tls_private_key_file,
        descheduler=policy,
        descheduling_interval=every,
    )

    def ready(creds: ServerCredentials) -> None:
        typer.echo(
            f"berth serve: listening on {creds.server_url}; KUBECONFIG={creds.kubeconfig_path}", err=True
        )

    try:
        _run_loop(run_server(options, ready=ready))
    except (CredentialsError, JournalError) as e:
        raise _invalid(str(e)) from None
    except OSError as e:
        typer.echo(f"error: {listen}: {e.strerror or e}", err=True)
        raise typer.Exit(1) from None


_GO_BOOLS = {"1": True, "t": True, "true": True, "0": False, "f": False, "false": False}


def _go_bool(option: str, value: str) -> bool:
    """A Go ``strconv.ParseBool`` value (``true``, ``false``, ``1``, ``0``, ``t``, ``f``, any case)."""
    parsed = _GO_BOOLS.get(value.strip().lower())
    if parsed is None:
        raise _invalid(f'{option}: invalid boolean "{value}" (true or false)')
    return parsed


@app.command(name="run")
def run_cluster(
    kubeconfig: Annotated[
        Path | None,
        typer.Option(help="Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, else in-cluster)."),
    ] = None,
    context: Annotated[str | None, typer.Option(help="Kubeconfig context (default: current).")] = None,
    scheduler_config: SchedulerConfigOption = None,
    descheduler_policy: DeschedulerPolicyOption = None,
    descheduling_interval: DeschedulingIntervalOption = "5m",
    controllers: Annotated[
        str,
        typer.Option(
            help="Berth's controllers to run: reservation,elasticquota,podgroup,podmigrationjob; "
            "'*' for all, '-name' to leave one out."
        ),
    ] = "*",
    leader_elect: Annotated[
        str, typer.Option(help="Compete for a Lease before acting (--leader-elect=false: act at once).")
    ] = "true",
    leader_elect_lease_duration: Annotated[str, typer.Option(help="Lease duration.")] = "15s",
    leader_elect_renew_deadline: Annotated[str, typer.Option(help="Renew deadline of the leader.")] = "10s",
    leader_elect_retry_period: Annotated[str, typer.Option(help="Wait between two tries.")] = "2s",
    leader_elect_resource_namespace: Annotated[
        str, typer.Option(help="Namespace of the Lease.")
    ] = "kube-system",
    leader_elect_resource_name: Annotated[str, typer.Option(help="Name of the Lease.")] = "berth-scheduler",
    kube_api_qps: Annotated[
        float, typer.Option(help="Requests per second to the API server (0 or less: unthrottled).")
    ] = 50.0,
    kube_api_burst: Annotated[int, typer.Option(help="Requests allowed in a burst above the QPS.")] = 100,
    metrics_listen: Annotated[
        str,
        typer.Option(
            help="Serve /metrics and /healthz over HTTPS on HOST:PORT (kube-scheduler's secure port; '' to turn off)."
        ),
    ] = "127.0.0.1:10259",
    tls_cert_file: Annotated[
        Path | None,
        typer.Option(help="Certificate of the metrics port (default: a self-signed one made at start)."),
    ] = None,
    tls_private_key_file: Annotated[Path | None, typer.Option(help="Private key of --tls-cert-file.")] = None,
    bind_workers: Annotated[
        int,
        typer.Option(
            help="Bindings sent concurrently, off the scheduling thread (0: one at a time, inline)."
        ),
    ] = 16,
) -> None:
    """Schedule a real cluster through its API server: Berth's profiles, its controllers and descheduler."""
    import logging
    import signal

    from berth.controlplane.plane import select_controllers
    from berth.controlplane.run import OPTIONAL_KINDS, RunError, Runner, RunOptions, followed_kinds
    from berth.controlplane.statusserver import StatusServer
    from berth.remote.client import KubeClient
    from berth.remote.delegated import DelegatedAuthorizer
    from berth.remote.eventsink import EventSink
    from berth.remote.kubeconfig import KubeconfigError, connection_for
    from berth.remote.mirror import ClusterMirror
    from berth.remote.preflight import PreflightError, check_cluster, serves
    from berth.remote.ratelimit import TokenBucket
    from berth.remote.store import RemoteStore

    try:
        chosen = select_controllers(controllers)
    except ValueError as e:
        raise _invalid(str(e)) from None
    elect = _go_bool("--leader-elect", leader_elect)
    lease = _seconds("--leader-elect-lease-duration", leader_elect_lease_duration)
    renew = _seconds("--leader-elect-renew-deadline", leader_elect_renew_deadline)
    retry = _seconds("--leader-elect-retry-period", leader_elect_retry_period)
    if elect and not lease > renew > retry:
        raise _invalid(
            "--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline, "
            "which must be greater than --leader-elect-retry-period"
        )
    if kube_api_qps > 0 and kube_api_burst < 1:
        raise _invalid(f"--kube-api-burst: must be positive when --kube-api-qps is ({kube_api_burst})")
    policy, every = _descheduler_options(descheduler_policy, descheduling_interval)
    config = _load_config(scheduler_config)
    status_at: tuple[str, int] | None = None
    if metrics_listen:
        host, sep, port_text = metrics_listen.rpartition(":")
        if not sep or not host or not port_text.isdigit() or int(port_text) > 65535:
            raise _invalid(f'--metrics-listen: invalid address "{metrics_listen}" (expected HOST:PORT)')
        status_at = (host.strip("[]"), int(port_text))
    if (tls_cert_file is None) != (tls_private_key_file is None):
        raise _invalid("--tls-cert-file and --tls-private-key-file must be given together")
    try:
        conn = connection_for(str(kubeconfig) if kubeconfig else None, context)
    except KubeconfigError as e:
        raise _invalid(str(e)) from None
    client = KubeClient.connect(conn, rate_limiter=TokenBucket(kube_api_qps, kube_api_burst))
    kinds = followed_kinds(chosen, policy is not None)
    try:
        missing = check_cluster(client, conn.server, kinds, OPTIONAL_KINDS)
    except PreflightError as e:
        client.close()
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
    served = tuple(k for k in OPTIONAL_KINDS if k not in missing)
    # Events go through a client (and a QPS budget) of their own, in the background, as kube-scheduler's
    events_client = KubeClient.connect(conn, rate_limiter=TokenBucket(kube_api_qps, kube_api_burst))
    sink = EventSink()
    mirror = ClusterMirror(
        RemoteStore(client),
        (*kinds, *served),
        absent=missing,
        events=(RemoteStore(events_client), sink),
        events_v1=serves(client, "events.k8s.io/v1"),  # else v1 Events
        bind_workers=max(0, bind_workers),
    )
    options = RunOptions(
        config=config,
        controllers=chosen,
        descheduler=policy,
        descheduling_interval=every,
        leader_elect=elect,
        lease_namespace=leader_elect_resource_namespace,
        lease_name=leader_elect_resource_name,
        lease_duration=lease,
        renew_deadline=renew,
        retry_period=retry,
    )
    runner = Runner(mirror, options)
    status: StatusServer | None = None
    if status_at is not None:
        # /metrics: the API server's TokenReview and SubjectAccessReview decide, or berth run's own token
        authorize = DelegatedAuthorizer(client, conn.authorization)
        try:
            status = StatusServer(
                *status_at,
                runner.metrics,
                runner.healthz,
                secure=True,
                cert_file=tls_cert_file,
                key_file=tls_private_key_file,
                authorize=authorize,
            )
        except (OSError, ValueError) as e:
            client.close()
            reason = e.strerror if isinstance(e, OSError) and e.strerror else e
            typer.echo(f"error: --metrics-listen {metrics_listen}: {reason}", err=True)
            raise typer.Exit(1) from None
        status.start()
        typer.echo(f"berth run: serving /metrics and /healthz on {status.url}", err=True)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda _s, _f: runner.stop())
    typer.echo(
        f"berth run: following {conn.server} as {options.identity}; "
        f"controllers: {','.join(sorted(chosen)) or '(none)'}",
        err=True,
    )
    try:
        code = runner.run()
    except RunError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None
    finally:
        if status is not None:
            status.close()
        sink.close()
        events_client.close()
        client.close()
    if code:
        typer.echo("error: leaderelection lost", err=True)
        raise typer.Exit(code)


@app.command()
def crds(
    output: Annotated[
        ManifestFormat, typer.Option("-o", "--output", help="Output format.")
    ] = ManifestFormat.yaml,
) -> None:
    """Print the CustomResourceDefinitions of the custom kinds Berth serves (install them before berth run)."""
    from berth.server.crds import custom_resource_definitions

    docs = custom_resource_definitions()
    if output is ManifestFormat.json:
        sys.stdout.write(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}, indent=2) + "\n")
    else:
        sys.stdout.write(yaml.safe_dump_all(docs, sort_keys=False))


@app.command()
def rbac(
    namespace: Annotated[
        str, typer.Option(help="Namespace of the ServiceAccount and of the leader-election Lease.")
    ] = "kube-system",
    name: Annotated[
        str, typer.Option(help="Name of the ServiceAccount, the roles, their bindings and the Lease.")
    ] = "berth-scheduler",
    output: Annotated[
        ManifestFormat, typer.Option("-o", "--output", help="Output format.")
    ] = ManifestFormat.yaml,
) -> None:
    """Print the ServiceAccount, ClusterRole, Role and bindings berth run needs in a cluster."""
    from berth.remote.rbac import rbac_objects

    try:
        docs = rbac_objects(namespace, name)
    except ValueError as e:
        raise _invalid(str(e)) from None
    if output is ManifestFormat.json:
        sys.stdout.write(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}, indent=2) + "\n")
    else:
        sys.stdout.write(yaml.safe_dump_all(docs, sort_keys=False))


trace_app = typer.Typer(help="Replay cluster traces.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(trace_app, name="trace")


@trace_app.command("openb")
def trace_openb(
    folder: Annotated[Path, typer.Argument(help="The alibaba-openb-gpu-2023 trace folder (csv/ inside).")],
    pod_list: Annotated[
        str, typer.Option(help="Pod list: default, cpu050, gpushare40, multigpu20 ...")
    ] = "default",
    nodes: Annotated[str, typer.Option(help="Node list: gpu (GPU nodes, as the paper) or all.")] = "gpu",
    inflation: Annotated[
        float | None, typer.Option(help="Arrived GPU demand as a multiple of GPU capacity (default 1.3).")
    ] = None,
    timed: Annotated[
        bool,
        typer.Option(
            "--timed", help="Replay at the trace's creation and deletion times instead of the paper's way."
        ),
    ] = False,
    seed: Annotated[int, typer.Option(help="Seed: shuffle, resampling, Random policy.")] = 42,
    policy: Annotated[
        str | None,
        typer.Option(help="Random, DotProduct, GpuClustering, GpuPacking, BestFit or FGD (default FGD)."),
    ] = None,
    scheduler_config: Annotated[
        Path | None,
        typer.Option(
            help="KubeSchedulerConfiguration; its GPU score plugin of largest weight is the policy."
        ),
    ] = None,
    report: Annotated[
        Path | None, typer.Option(help="Write the JSON report (with per-arrival series).")
    ] = None,
    report_html: Annotated[
        Path | None,
        typer.Option("--report-html", help="Write a self-contained HTML report with charts to this file."),
    ] = None,
    emit: Annotated[
        bool, typer.Option(help="Print the nodes and a Scenario of the pods instead of running.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Replay the Alibaba openb GPU trace the FGD paper's way and report GPU allocation and fragmentation."""
    from berth.sim.traces.command import (
        OpenbOptions,
        emit_openb,
        policy_from_config,
        policy_name,
        run_openb,
        summary,
        write_report,
    )
    from berth.sim.traces.openb import TraceError

    _check_report_path(report)
    _check_report_path(report_html, "--report-html")
    try:
        if policy is not None and scheduler_config is not None:
            raise TraceError("--policy and --scheduler-config exclude each other")
        name = policy_from_config(scheduler_config) if scheduler_config else policy_name(policy or "FGD")
        if timed and inflation is not None:
            raise TraceError(
                "--inflation and --timed exclude each other (--timed replays the recorded times)"
            )
        opts = OpenbOptions(
            folder, pod_list, nodes, 1.3 if inflation is None else inflation, seed, name, timed
        )
        if emit:
            emit_openb(opts, sys.stdout)
            return
        result = run_openb(opts, quiet=quiet)
    except TraceError as e:
        raise _invalid(str(e)) from None
    sys.stdout.write(summary(result))
    if report is not None:
        write_report(result, report)
    if report_html is not None:
        from berth.sim.html_report import trace_data, write_html
        from berth.sim.traces.openb import load_nodes

        write_html(
            report_html,
            trace_data(result, load_nodes(opts.folder, opts.nodes)),
            f"Berth trace replay: openb {pod_list}, {result.policy}",
            f"{result.pods_scheduled} pods placed, {result.pods_failed} not, seed {result.seed}.",
        )


@app.command()
def compare(
    workloads: Annotated[
        list[str],
        typer.Argument(
            help="Workloads: a scenario file or folder (as berth simulate reads it), or a trace spec "
            "openb:DIR[?pod-list=default&inflation=1.3&nodes=gpu]."
        ),
    ],
    config: Annotated[
        list[str] | None,
        typer.Option(
            "--config",
            help="A KubeSchedulerConfiguration file, or policy:NAME (FGD, BestFit, ...) for trace workloads; "
            "repeat for each configuration (default: the default configuration, FGD on traces).",
        ),
    ] = None,
    seeds: Annotated[
        str | None,
        typer.Option(help="Seeds: 42, 42..51 or 1,5,9 (default 0 for scenarios, 42 for traces)."),
    ] = None,
    jobs: Annotated[
        int | None, typer.Option(help="Worker processes on this machine (default: the CPU count).")
    ] = None,
    executor: Annotated[
        str, typer.Option(help="local, or dask://HOST:PORT: the scheduler of a dask.distributed cluster.")
    ] = "local",
    until: UntilOption = None,
    output: Annotated[TableFormat, typer.Option("-o", "--output", help="Output format.")] = TableFormat.table,
    report_html: Annotated[
        Path | None,
        typer.Option(
            "--report-html",
            help="Write one self-contained HTML page: the tables and every series, the configurations "
            "overlaid on the same axes.",
        ),
    ] = None,
    sample: Annotated[
        str,
        typer.Option(
            "--sample", help="Virtual time between the samples of --report-html (scenario workloads)."
        ),
    ] = "10s",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Run workloads under several scheduler configurations and seeds; one table of outcomes per workload."""
    from berth.sim.compare import (
        CompareError,
        RunFailed,
        aggregate,
        prepare,
        run_comparison,
        to_json,
        to_table,
    )

    _check_report_path(report_html, "--report-html")
    sample_s = _seconds("--sample", sample)
    until_s = None if until is None else _seconds("--until", until)
    try:
        comparison = prepare(
            workloads, config or [], seeds, jobs, executor, until_s, None if report_html is None else sample_s
        )
        for notice in comparison.warnings:
            typer.echo(f"warning: {notice}", err=True)
        console = None if quiet else _terminal_console()
        if console is None:
            outcomes = run_comparison(comparison)
        else:
            from rich.progress import Progress

            with Progress(console=console, transient=True) as bar:
                task = bar.add_task("compare", total=len(comparison.runs))
                outcomes = run_comparison(comparison, lambda: bar.advance(task))
    except CompareError as e:
        raise _invalid(str(e)) from None
    except RunFailed as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None
    groups = aggregate(outcomes, comparison.kinds)
    sys.stdout.write(to_json(groups) if output is TableFormat.json else to_table(groups))
    if report_html is not None:
        from berth.sim.compare.report import write_report

        write_report(report_html, groups, outcomes, comparison.runs)


@app.command()
def version() -> None:
    """Print Berth's version."""
    from importlib.metadata import version as _v

    typer.echo(_v("berth"))


def main() -> None:
    """Entry point of the ``berth`` command."""
    tune_for_throughput()
    try:
        app()
    except SystemExit as done:
        end_process(done.code)
    end_process(0)
