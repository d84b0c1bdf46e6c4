"""What the READMEs say: how the reservation examples end, the virtual clock's start, links that resolve."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from berth.cli import app
from berth.store.memory import DEFAULT_EPOCH

REPO = Path(__file__).resolve().parents[2]
RESERVATION = REPO / "examples" / "reservation"
READMES = ["README.md", "examples/README.md", "examples/reservation/README.md", "examples/deploy/README.md"]


def _final(example: str, *args: str) -> dict[tuple[str, str], dict[str, Any]]:
    result = CliRunner().invoke(app, ["simulate", str(RESERVATION / example), *args, "-o", "json"])
    assert result.exit_code == 0, result.stderr
    items = json.loads(result.stdout)["items"]
    return {(o["kind"], o["metadata"]["name"]): o for o in items if o["kind"] in ("Pod", "Reservation")}


@pytest.mark.parametrize(
    "config", [(), ("--scheduler-config", str(RESERVATION / "06-scheduler-config.yaml"))]
)
def test_pre_allocation_default_ends_succeeded_with_or_without_the_scheduler_config(
    config: tuple[str, ...],
) -> None:
    final = _final("03-pre-allocation-default", *config)
    reservation = final[("Reservation", "reservation-prealloc")]
    assert reservation["status"]["phase"] == "Succeeded"
    assert reservation["status"]["nodeName"] == "node-0"
    new = final[("Pod", "my-app-new")]
    assert (new["spec"]["nodeName"], new["status"]["phase"]) == ("node-0", "Running")
    assert ("Pod", "my-app-old") not in final


def test_the_reservation_readme_says_how_the_examples_end() -> None:
    text = re.sub(r"\s+", " ", (RESERVATION / "README.md").read_text())
    assert "`03-pre-allocation-default` ends Succeeded too, by another path" in text
    assert "stays Pending, as none of its pods" not in text


def test_the_readme_documents_the_virtual_clocks_start() -> None:
    start = DEFAULT_EPOCH.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert start == "2024-01-01T00:00:00Z"
    text = re.sub(r"\s+", " ", (REPO / "README.md").read_text())
    assert f"The virtual clock starts at `{start}` (virtual time 0)" in text


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    heads = re.findall(r"^#+ (.*)$", markdown, re.M)
    return {re.sub(r"[^a-z0-9 _-]", "", h.strip().lower()).replace(" ", "-") for h in heads}


@pytest.mark.parametrize("readme", READMES)
def test_readme_links_point_into_the_repository(readme: str) -> None:
    path = REPO / readme
    for link in re.findall(r"\]\(([^)\s]+)\)", path.read_text()):
        if link.startswith(("http://", "https://")):
            assert readme == "examples/reservation/README.md", f"{readme}: external link {link}"
            continue
        target, _, anchor = link.partition("#")
        resolved = (path.parent / target).resolve() if target else path
        assert resolved.exists(), f"{readme}: {link} does not exist"
        assert resolved.is_relative_to(REPO), f"{readme}: {link} is outside the repository"
        if anchor and resolved.is_file():
            assert anchor in _anchors(resolved.read_text()), f"{readme}: {link}: no such heading"
