"""Bad input to ``berth compare``: exit 2 with one line naming the value, before any run starts."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from compare_inputs import fit_config, node, packing_scenario, pod, trace, write
from typer.testing import CliRunner

from berth.cli import app
from berth.sim.compare import outcome

runner = CliRunner()


@pytest.fixture(autouse=True)
def no_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing may run: any run fails the test."""

    def refuse(spec: object) -> None:
        raise AssertionError(f"a run started: {spec}")

    monkeypatch.setattr(outcome, "run_one", refuse)
    import berth.sim.compare.executor as executor

    monkeypatch.setattr(executor, "run_one", refuse)


def refused(tmp_path: Path, *args: str) -> str:
    r = runner.invoke(app, ["compare", *args, "--jobs", "1"])
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unknown_policy(tmp_path: Path) -> None:
    line = refused(tmp_path, f"openb:{trace(tmp_path / 't')}", "--config", "policy:Tetris")
    assert line.startswith('error: --config policy:Tetris: unknown policy "Tetris" (known: ')


def test_missing_workload_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    assert refused(tmp_path, str(missing)) == f'error: workload "{missing}": no such file or directory'


def test_missing_trace_folder(tmp_path: Path) -> None:
    line = refused(tmp_path, f"openb:{tmp_path / 'none'}", "--config", "policy:FGD")
    assert (
        line
        == f'error: workload "openb:{tmp_path / "none"}": trace folder "{tmp_path / "none"}" does not exist or is not a directory'
    )


def test_unknown_trace_option(tmp_path: Path) -> None:
    spec = f"openb:{trace(tmp_path / 't')}?inflaton=2"
    line = refused(tmp_path, spec)
    assert line == f'error: workload "{spec}": unknown option "inflaton" (known: pod-list, inflation, nodes)'


def test_missing_pod_list(tmp_path: Path) -> None:
    spec = f"openb:{trace(tmp_path / 't')}?pod-list=cpu050"
    line = refused(tmp_path, spec)
    assert line.startswith(f'error: workload "{spec}": ') and "openb_pod_list_cpu050.csv" in line


def test_invalid_config_file(tmp_path: Path) -> None:
    config = fit_config(tmp_path, "MostAllocated")
    config.write_text(config.read_text().replace("scoringStrategy", "scoringStrateg"))
    line = refused(tmp_path, str(packing_scenario(tmp_path)), "--config", str(config))
    assert line.startswith(f"error: --config {config}: ") and "scoringStrateg" in line


def test_invalid_plugin_args_are_refused_before_running(tmp_path: Path) -> None:
    config = fit_config(tmp_path, "MostAllocated")
    config.write_text(config.read_text().replace("MostAllocated", "MostAlocated"))
    line = refused(tmp_path, str(packing_scenario(tmp_path)), "--config", str(config))
    assert line.startswith(f"error: --config {config}: ") and "MostAlocated" in line


def test_config_without_gpu_policy_on_a_trace(tmp_path: Path) -> None:
    config = fit_config(tmp_path, "MostAllocated")
    line = refused(tmp_path, f"openb:{trace(tmp_path / 't')}", "--config", str(config))
    assert line.startswith(f"error: --config {config}: ") and "no GPU score plugin enabled" in line


def test_policy_on_a_scenario(tmp_path: Path) -> None:
    line = refused(tmp_path, str(packing_scenario(tmp_path)), "--config", "policy:FGD")
    assert line.startswith("error: --config policy:FGD: a policy applies to trace workloads only")


def test_unknown_field_in_a_scenario(tmp_path: Path) -> None:
    bad = pod("p", "1")
    bad["spec"]["nodeNmae"] = "n-1"
    path = write(tmp_path / "bad.yaml", [node("n-1"), bad])
    line = refused(tmp_path, str(path))
    assert line.startswith(f'error: workload "{path}": ') and "nodeNmae" in line


def test_refused_initial_object(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.yaml", [node("n-1"), pod("p", "1", priority="missing")])
    line = refused(tmp_path, str(path))
    assert line.startswith(f'error: workload "{path}": Error from server') and "missing" in line


@pytest.mark.parametrize(
    ("seeds", "message"),
    [
        ("5..2", 'error: --seeds: range "5..2" ends before it starts'),
        ("x", 'error: --seeds: invalid seed or range "x" (e.g. 42, 42..51 or 1,5,9)'),
        ("1,1", "error: --seeds: seed 1 given twice"),
    ],
)
def test_bad_seeds(tmp_path: Path, seeds: str, message: str) -> None:
    assert refused(tmp_path, str(packing_scenario(tmp_path)), "--seeds", seeds) == message


def test_jobs_zero(tmp_path: Path) -> None:
    r = runner.invoke(app, ["compare", str(packing_scenario(tmp_path)), "--jobs", "0"])
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", "error: --jobs: must be at least 1, not 0\n")


def test_bad_executor(tmp_path: Path) -> None:
    line = refused(tmp_path, str(packing_scenario(tmp_path)), "--executor", "ray://x:1")
    assert line == 'error: --executor: expected local or dask://HOST:PORT, not "ray://x:1"'


def test_unreachable_dask_scheduler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import berth.sim.compare.executor as executor

    monkeypatch.setattr(executor, "CONNECT_TIMEOUT", "1s")
    port = free_port()  # nothing listens there
    line = refused(tmp_path, str(packing_scenario(tmp_path)), "--executor", f"dask://127.0.0.1:{port}")
    assert line.startswith(f"error: --executor dask://127.0.0.1:{port}: cannot reach the dask scheduler: ")


def test_config_given_twice(tmp_path: Path) -> None:
    config = str(fit_config(tmp_path, "MostAllocated"))
    line = refused(tmp_path, str(packing_scenario(tmp_path)), "--config", config, "--config", config)
    assert line == f"error: --config {config}: given twice"
