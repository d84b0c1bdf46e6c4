"""Unknown fields found by the one schema source of simulate and the server (`berth.server.strictdecode`)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from berth.server.strictdecode import (
    CleanFields,
    UnknownField,
    has_schema,
    render_path,
    strict_decoding_error,
    unknown_fields,
    without_unknown_fields,
)
from builders import make_pod

KOORD = "scheduling.koordinator.sh/v1alpha1"


def _hints(obj: dict[str, Any]) -> str:
    return strict_decoding_error(unknown_fields(obj), hints=True)


def _pod(**spec: Any) -> dict[str, Any]:
    pod = make_pod("web").req(cpu="100m").obj()
    pod["spec"].update(spec)
    return pod


def test_a_valid_pod_has_no_unknown_field() -> None:
    assert unknown_fields(make_pod("web").req(cpu="1").obj()) == []


def test_clean_top_level_fields_are_remembered_by_their_encoding() -> None:
    clean: CleanFields = set()
    assert unknown_fields(_pod(), clean=clean) == []
    assert len(clean) == 1  # the spec; a metadata never is
    typo = _pod()
    typo["spec"]["containers"][0]["resources"]["requestz"] = {}
    expected = [UnknownField(("spec", "containers", 0, "resources", "requestz"), "requests")]
    assert unknown_fields(typo, clean=clean) == unknown_fields(typo) == expected
    assert len(clean) == 1


def test_the_issues_pod_typos_with_did_you_mean() -> None:
    pod = _pod(nodeSelecter={"a": "b"})
    pod["spec"]["containers"][0]["resource"] = pod["spec"]["containers"][0].pop("resources")
    assert _hints(pod) == (
        'strict decoding error: unknown field "spec.containers[0].resource" (did you mean '
        '"spec.containers[0].resources"?), unknown field "spec.nodeSelecter" (did you mean '
        '"spec.nodeSelector"?)'
    )
    assert strict_decoding_error(unknown_fields(pod)) == (
        'strict decoding error: unknown field "spec.containers[0].resource", unknown field "spec.nodeSelecter"'
    )


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            {
                "apiVersion": KOORD,
                "kind": "Reservation",
                "metadata": {"name": "r"},
                "spec": {"allocateonce": False, "template": {"spec": {"anything": 1}}, "owners": []},
            },
            'unknown field "spec.allocateonce" (did you mean "spec.allocateOnce"?)',
        ),
        (
            {
                "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
                "kind": "ElasticQuota",
                "metadata": {"name": "q", "namespace": "team"},
                "spec": {"mix": {"cpu": "1"}, "max": {"cpu": "2"}},
            },
            'unknown field "spec.mix"',  # min and max are equally close: no suggestion
        ),
        (
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "pdb"},
                "spec": {"minAvailabel": 1},
            },
            'unknown field "spec.minAvailabel" (did you mean "spec.minAvailable"?)',
        ),
        (
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n", "lables": {}}},
            'unknown field "metadata.lables" (did you mean "metadata.labels"?)',
        ),
        (
            {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": {"name": "g"},
                "spec": {"minMembers": 2},
            },
            'unknown field "spec.minMembers" (did you mean "spec.minMember"?)',
        ),
    ],
)
def test_the_issues_custom_and_policy_typos(obj: dict[str, Any], expected: str) -> None:
    assert _hints(obj) == f"strict decoding error: {expected}"


def test_preserve_unknown_fields_keeps_a_reservation_template_unchecked() -> None:
    rsv = {
        "apiVersion": KOORD,
        "kind": "Reservation",
        "metadata": {"name": "r"},
        "spec": {"template": {"spec": {"nodeSelecter": {}}}, "owners": [{"object": {"name": "p"}}]},
    }
    assert unknown_fields(rsv) == []


def test_inlined_structs_and_nested_lists_and_maps() -> None:
    pod = _pod(
        ephemeralContainers=[{"name": "dbg", "image": "busybox", "targetContainerName": "c", "imag": "x"}],
        volumes=[{"name": "v", "configMap": {"name": "cm"}, "emptydir": {}}],
        imagePullSecrets=[{"name": "s", "nam": "t"}],
    )
    pod["spec"]["containers"][0]["livenessProbe"] = {
        "httpGet": {"path": "/", "port": 80},
        "exec": {"cmd": []},
    }
    assert [f.field_path for f in unknown_fields(pod)] == [
        "spec.containers[0].livenessProbe.exec.cmd",
        "spec.ephemeralContainers[0].imag",
        "spec.volumes[0].emptydir",
        "spec.imagePullSecrets[0].nam",
    ]


def test_fields_are_reported_in_document_order() -> None:
    pod = {
        "zeta": 1,
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "alpha": 2,
        "spec": {"b": 1, "containers": [{"name": "c", "x": 1}], "a": 2},
    }
    assert [f.field_path for f in unknown_fields(pod)] == [
        "zeta",
        "alpha",
        "spec.b",
        "spec.containers[0].x",
        "spec.a",
    ]


def test_a_scenario_checks_the_objects_and_patches_of_its_steps() -> None:
    scenario = {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "spec": {
            "untill": "1h",
            "steps": [
                {
                    "at": "1m",
                    "create": [_pod(nodeSelecter={})],
                    "patch": [
                        {
                            "apiVersion": "v1",
                            "kind": "Node",
                            "name": "n",
                            "patch": {"spec": {"unschedulabe": True}},
                        }
                    ],
                    "drain": {"node": "n", "forse": True},
                    "delete": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "namespce": "x"}],
                }
            ],
        },
    }
    assert [f.hint() for f in unknown_fields(scenario)] == [
        'unknown field "spec.untill" (did you mean "spec.until"?)',
        'unknown field "spec.steps[0].create[0].spec.nodeSelecter" '
        '(did you mean "spec.steps[0].create[0].spec.nodeSelector"?)',
        'unknown field "spec.steps[0].patch[0].patch.spec.unschedulabe" '
        '(did you mean "spec.steps[0].patch[0].patch.spec.unschedulable"?)',
        'unknown field "spec.steps[0].drain.forse" (did you mean "spec.steps[0].drain.force"?)',
        'unknown field "spec.steps[0].delete[0].namespce" (did you mean "spec.steps[0].delete[0].namespace"?)',
    ]


def test_kinds_without_a_schema_are_not_checked() -> None:
    assert not has_schema("example.com/v1", "Widget")
    assert unknown_fields({"apiVersion": "example.com/v1", "kind": "Widget", "whatever": 1}) == []
    assert has_schema("v1", "Pod") and has_schema(KOORD, "Reservation")


def test_dropping_unknown_fields_copies_only_their_path() -> None:
    pod = _pod(nodeSelecter={"a": "b"})
    pod["spec"]["containers"][0]["resource"] = {}
    before = copy.deepcopy(pod)
    kept = without_unknown_fields(pod, unknown_fields(pod))
    assert pod == before  # the original is untouched
    assert unknown_fields(kept) == []
    assert "nodeSelecter" not in kept["spec"] and "resource" not in kept["spec"]["containers"][0]
    assert kept["metadata"] is pod["metadata"]  # untouched parts are shared


def test_paths_render_as_kube_prints_them() -> None:
    assert render_path(("spec", "containers", 0, "resource")) == "spec.containers[0].resource"
    assert str(UnknownField(("spec", "x"))) == 'unknown field "spec.x"'
    assert UnknownField(("spec", "x")).hint() == 'unknown field "spec.x"'
