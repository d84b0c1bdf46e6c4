"""`berth serve` honours ``fieldValidation`` as kube-apiserver does, checked with the real kubectl (which sends
``Strict`` by default, ``Warn`` for ``--validate=warn`` and ``Ignore`` for ``--validate=false``); YAML bodies
have the API server's alias limits."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from serve_helpers import KUBECTL, Served, running

from builders import make_pod

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="the end-to-end tests need kubectl on PATH")


def _laughs() -> str:
    """A 1 KB "billion laughs": nine levels of nine aliases in a pod's args."""
    levels = ['    - &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"    - &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    head = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: laughs\nspec:\n  containers:\n"
    return head + "  - name: c\n    image: busybox\n    args:\n" + "\n".join(levels) + "\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with running(tmp_path_factory.mktemp("serve"), "--api-only") as served:
        yield served


def _typo_pod(name: str) -> str:
    pod = make_pod(name).req(cpu="100m").obj()
    pod["spec"]["nodeSelecter"] = {"zone": "a"}
    pod["spec"]["containers"][0]["resource"] = {"requests": {"cpu": "1"}}
    return yaml.safe_dump(pod)


def _pod(server: Served, name: str) -> dict[str, Any] | None:
    done = server.kubectl("get", "pod", name, "-o", "json")
    return json.loads(done.stdout) if done.returncode == 0 else None


def test_create_is_strict_by_default_and_stores_nothing(server: Served) -> None:
    done = server.kubectl("create", "-f", "-", stdin=_typo_pod("strict"))
    assert (done.returncode, done.stdout, done.stderr) == (
        1,
        "",
        'Error from server (BadRequest): error when creating "STDIN": Pod in version "v1" cannot be handled as '
        'a Pod: strict decoding error: unknown field "spec.containers[0].resource", unknown field '
        '"spec.nodeSelecter"\n',
    )
    assert _pod(server, "strict") is None


def test_validate_warn_creates_without_the_fields_and_warns(server: Served) -> None:
    done = server.kubectl("create", "--validate=warn", "-f", "-", stdin=_typo_pod("warned"))
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        "pod/warned created\n",
        'Warning: unknown field "spec.containers[0].resource"\nWarning: unknown field "spec.nodeSelecter"\n',
    )
    pod = _pod(server, "warned")
    assert pod is not None
    assert "nodeSelecter" not in pod["spec"] and "resource" not in pod["spec"]["containers"][0]


def test_validate_false_drops_the_fields_silently(server: Served) -> None:
    done = server.kubectl("apply", "--validate=false", "-f", "-", stdin=_typo_pod("ignored"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "pod/ignored created\n", "")
    pod = _pod(server, "ignored")
    assert pod is not None and "nodeSelecter" not in pod["spec"]


def test_apply_to_an_existing_object_is_refused_and_changes_nothing(server: Served) -> None:
    good = make_pod("applied").req(cpu="100m").obj()
    assert server.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(good)).returncode == 0
    before = _pod(server, "applied")
    changed = make_pod("applied").req(cpu="100m").label(tier="web").obj()
    changed["spec"]["nodeSelecter"] = {"zone": "a"}
    done = server.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(changed))
    assert done.returncode == 1
    assert done.stderr.startswith('The request is invalid: patch: Invalid value: "map[metadata:map[')
    assert done.stderr.endswith('": strict decoding error: unknown field "spec.nodeSelecter"\n')
    assert _pod(server, "applied") == before


def test_server_side_apply_refuses_unknown_fields(server: Served) -> None:
    done = server.kubectl("apply", "--server-side", "-f", "-", stdin=_typo_pod("ssa"))
    assert (done.returncode, done.stderr) == (
        1,
        "Error from server (BadRequest): failed to create typed patch object (default/ssa; /v1, Kind=Pod): "
        'errors:\n  .spec.containers[name="c"].resource: field not declared in schema\n'
        "  .spec.nodeSelecter: field not declared in schema\n",
    )
    assert _pod(server, "ssa") is None


def test_a_custom_kind_is_checked_with_its_crd_schema(server: Served) -> None:
    reservation = {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "Reservation",
        "metadata": {"name": "r1"},
        "spec": {
            "allocateonce": False,
            "owners": [{"object": {"name": "p", "namespace": "default"}}],
            "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}},
        },
    }
    done = server.kubectl("create", "-f", "-", stdin=yaml.safe_dump(reservation))
    assert (done.returncode, done.stderr) == (
        1,
        'Error from server (BadRequest): error when creating "STDIN": Reservation in version "v1alpha1" cannot '
        'be handled as a Reservation: strict decoding error: unknown field "spec.allocateonce"\n',
    )
    assert server.kubectl("get", "reservation", "r1").returncode == 1


def test_a_billion_laughs_body_is_refused(server: Served) -> None:
    body = _laughs()
    assert len(body) < 1024
    with server.client() as http:
        response = http.post(
            "/api/v1/namespaces/default/pods",
            content=body.encode(),
            headers={"Content-Type": "application/yaml"},
        )
        assert response.status_code == 400
        assert response.json()["message"] == (
            "the request body is not valid YAML: yaml: document contains excessive aliasing"
        )
        assert http.get("/healthz").status_code == 200
