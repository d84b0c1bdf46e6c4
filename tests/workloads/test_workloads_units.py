"""Unit tests: the pod-template-hash, scale-down ranking, fenceposts and the kubectl tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner
from workloads_helpers import deployment, template

from berth.cli import app
from berth.controllers.workloads.hashing import SAFE_ALPHABET, compute_hash, fnv32a, safe_encode
from berth.controllers.workloads.ranking import pods_to_delete
from berth.controllers.workloads.rollout import resolve_fenceposts
from builders import make_node, make_pod


@pytest.mark.parametrize(
    ("data", "expected"), [(b"", 0x811C9DC5), (b"a", 0xE40C292C), (b"foobar", 0xBF9CF968)]
)
def test_fnv32a_vectors(data: bytes, expected: int) -> None:
    assert fnv32a(data) == expected


def test_safe_encode_digits() -> None:
    assert safe_encode("0123456789") == "456789bcdf"


DIGIT_OF = {c: str(d) for d, c in enumerate(safe_encode("0123456789"))}


def test_hash_of_template_and_collision_count() -> None:
    """What kube's pod-template-hash promises, not a value: stable for a template, different for another
    template or collision count, and the SafeEncodeString of a 32-bit sum's decimal digits."""
    h = compute_hash(template(), None)
    assert compute_hash(template(), None) == h
    assert compute_hash(template(image="nginx:2"), None) != h
    assert compute_hash(template(cpu="200m"), None) != h
    assert compute_hash(template(), 1) != h
    assert compute_hash(template(), 1) != compute_hash(template(), 2)
    assert 1 <= len(h) <= 10
    assert int("".join(DIGIT_OF[c] for c in h)) < 2**32


@given(
    st.dictionaries(
        st.from_regex(r"[a-z]{1,8}", fullmatch=True), st.from_regex(r"[a-z0-9]{0,8}", fullmatch=True)
    ),
    st.none() | st.integers(0, 2**31 - 1),
)
def test_hash_shape(labels: dict[str, str], collisions: int | None) -> None:
    tmpl = {"metadata": {"labels": labels}, "spec": template()["spec"]}
    h = compute_hash(tmpl, collisions)
    assert h == compute_hash(dict(reversed(list(tmpl.items()))), collisions)
    assert 1 <= len(h) <= 10
    assert set(h) <= set("456789bcdf") <= set(SAFE_ALPHABET)


NOW = 1704067200.0 + 3600  # 2024-01-01T01:00:00Z


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (
            make_pod("a").running().obj(),
            make_pod("b").node("n1").running().obj(),
        ),
        (
            make_pod("a").node("n1").phase("Pending").obj(),
            make_pod("b").node("n1").running().obj(),
        ),
        (
            make_pod("a").node("n1").phase("Running").obj(),
            make_pod("b").node("n1").running().obj(),
        ),
        (
            make_pod("a")
            .annotate({"controller.kubernetes.io/pod-deletion-cost": "-5"})
            .node("n1")
            .running()
            .obj(),
            make_pod("b").node("n1").running().obj(),
        ),
        (
            make_pod("a").node("n1").phase("Running").ready(at="2024-01-01T00:59:00Z").obj(),
            make_pod("b").node("n1").phase("Running").ready(at="2024-01-01T00:00:00Z").obj(),
        ),
        (
            make_pod("a").node("n1").running().status(containerStatuses=[{"restartCount": 3}]).obj(),
            make_pod("b").node("n1").running().obj(),
        ),
        (
            make_pod("a").created("2024-01-01T00:59:00Z").node("n1").running().obj(),
            make_pod("b").created("2024-01-01T00:00:00Z").node("n1").running().obj(),
        ),
    ],
    ids=["unassigned", "pending", "not-ready", "deletion-cost", "ready-less-long", "restarts", "newer"],
)
def test_scale_down_rank(first: dict[str, Any], second: dict[str, Any]) -> None:
    for order in ([first, second], [second, first]):
        assert pods_to_delete(order, order, 1, NOW) == [first]


def test_scale_down_prefers_doubled_up_nodes() -> None:
    a, b, c = (
        make_pod("a").node("n1").running().obj(),
        make_pod("b").node("n1").running().obj(),
        make_pod("c").node("n2").running().obj(),
    )
    assert [p["metadata"]["name"] for p in pods_to_delete([c, a, b], [a, b, c], 2, NOW)] == ["a", "b"]


@pytest.mark.parametrize(
    ("replicas", "rolling", "expected"),
    [
        (4, {}, (1, 1)),
        (10, {}, (3, 2)),
        (1, {}, (1, 0)),
        (3, {"maxSurge": 0, "maxUnavailable": "10%"}, (0, 1)),
        (5, {"maxSurge": "50%", "maxUnavailable": 2}, (3, 2)),
    ],
)
def test_fenceposts(replicas: int, rolling: dict[str, Any], expected: tuple[int, int]) -> None:
    d = deployment(replicas=replicas, strategy={"type": "RollingUpdate", "rollingUpdate": rolling})
    assert resolve_fenceposts(d) == expected


def test_simulate_prints_workload_tables(tmp_path: Path) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all([make_node("n1").obj(), deployment(replicas=2)]))
    result = CliRunner().invoke(app, ["simulate", str(f), "-o", "table"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "NAMESPACE   NAME   READY   UP-TO-DATE   AVAILABLE   AGE" in lines
    assert "default     web    2/2     2            2           10m" in lines
    assert "NAMESPACE   NAME            DESIRED   CURRENT   READY   AGE" in lines
    pod_hash = compute_hash(template(), None)
    assert f"default     web-{pod_hash}   2         2         2       10m" in lines
    wide = CliRunner().invoke(app, ["simulate", str(f), "-o", "wide"]).stdout.splitlines()
    assert any(line.split()[-3:] == ["c", "nginx", f"app=web,pod-template-hash={pod_hash}"] for line in wide)


def test_simulate_refuses_mismatched_selector(tmp_path: Path) -> None:
    bad = deployment()
    bad["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all([make_node("n1").obj(), bad]))
    result = CliRunner().invoke(app, ["simulate", str(f), "-o", "json"])
    assert result.exit_code == 2
    assert (
        'Deployment "default/web": spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
        "`selector` does not match template `labels`" in result.stderr
    )
