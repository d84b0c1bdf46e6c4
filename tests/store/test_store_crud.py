"""MemoryStore CRUD: create defaults, get/list with selectors, update/status/patch semantics, admission."""

from __future__ import annotations

from typing import Any

import pytest

from berth.api.errors import AlreadyExists, BadRequest, Conflict, Forbidden, Invalid, NotFound
from berth.api.labels import parse_selector
from berth.clock import SimClock
from berth.store import KindSpec, MemoryStore, copy_object, static_kinds
from builders import make_node, make_pod

POD = ("", "Pod")
NODE = ("", "Node")
PC = ("scheduling.k8s.io", "PriorityClass")
KINDS = static_kinds(
    [
        KindSpec("", "Pod", "pods", True, True),
        KindSpec("", "Node", "nodes", False, True),
        KindSpec("scheduling.k8s.io", "PriorityClass", "priorityclasses", False, False),
        KindSpec("", "ConfigMap", "configmaps", True, False),
    ]
)


def make_store(**kw: Any) -> MemoryStore:
    kw.setdefault("validate", None)
    return MemoryStore(kinds=KINDS, **kw)


def test_create_stamps_system_fields() -> None:
    clock = SimClock(start=5.7)
    store = make_store(clock=clock)
    out = store.create(make_pod("p1").ns(None).obj())
    assert out["metadata"]["namespace"] == "default"
    assert out["metadata"]["resourceVersion"] == "1"
    assert out["metadata"]["creationTimestamp"] == "2024-01-01T00:00:05Z"
    assert out["metadata"]["generation"] == 1
    assert len(out["metadata"]["uid"]) == 36
    assert out["metadata"]["uid"][14] == "4"
    assert store.revision == 1
    assert store.get(POD, "default", "p1") is out


def test_create_copies_input_and_clears_system_fields() -> None:
    store = make_store()
    src = make_pod("p1").obj()
    src["metadata"].update({"uid": "u", "resourceVersion": "77", "deletionTimestamp": "x"})
    out = store.create(src)
    src["spec"]["containers"][0]["name"] = "mutated"
    assert out["spec"]["containers"][0]["name"] == "c"
    assert out["metadata"]["uid"] != "u"
    assert out["metadata"]["resourceVersion"] == "1"
    assert "deletionTimestamp" not in out["metadata"]


def test_cluster_scoped_clears_namespace_and_no_generation_without_spec() -> None:
    store = make_store()
    out = store.create(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "hi", "namespace": "x"},
            "value": 10,
        }
    )
    assert "namespace" not in out["metadata"]
    assert "generation" not in out["metadata"]
    assert store.get(PC, "", "hi")["value"] == 10
    assert store.get(PC, "whatever", "hi") is out


def test_same_seed_same_uids_and_names() -> None:
    def run(seed: int) -> list[str]:
        store = make_store(seed=seed)
        out = []
        for i in range(3):
            o = store.create(make_pod("").meta(name=None, generateName="web-").obj())
            out += [o["metadata"]["name"], o["metadata"]["uid"]]
            out.append(store.create(make_pod(f"p{i}").obj())["metadata"]["uid"])
        return out

    assert run(0) == run(0)
    assert run(0) != run(1)
    names = run(0)[0::3]
    assert all(n.startswith("web-") and len(n) == 9 for n in names)
    assert all(c in "bcdfghjklmnpqrstvwxz2456789" for n in names for c in n[4:])


def test_generate_name_truncates_base() -> None:
    store = make_store()
    out = store.create(make_pod("").ns(None).meta(name=None, generateName="a" * 70).obj())
    assert out["metadata"]["name"].startswith("a" * 58)
    assert len(out["metadata"]["name"]) == 63


def test_missing_name_is_invalid() -> None:
    store = make_store()
    with pytest.raises(Invalid) as info:
        store.create(make_pod("").obj())
    assert (
        str(info.value)
        == 'Pod "" is invalid: metadata.name: Required value: name or generateName is required'
    )
    assert info.value.code == 422
    assert info.value.causes == [("metadata.name", "Required value: name or generateName is required")]


def test_already_exists() -> None:
    store = make_store()
    store.create(make_pod("p1").obj())
    with pytest.raises(AlreadyExists) as info:
        store.create(make_pod("p1").obj())
    assert str(info.value) == 'pods "p1" already exists'
    assert (info.value.code, info.value.reason) == (409, "AlreadyExists")
    assert store.revision == 1
    store.create(make_pod("p1").ns("other").obj())  # same name, other namespace
    assert store.revision == 2


@pytest.mark.parametrize(
    ("key", "ns", "name", "message"),
    [
        (POD, "default", "nope", 'pods "nope" not found'),
        (POD, "other", "p1", 'pods "p1" not found'),
        (PC, "", "x", 'priorityclasses.scheduling.k8s.io "x" not found'),
        (("", "Widget"), "", "x", "the server could not find the requested resource"),
    ],
)
def test_get_not_found(key: tuple[str, str], ns: str, name: str, message: str) -> None:
    store = make_store()
    store.create(make_pod("p1").obj())
    with pytest.raises(NotFound) as info:
        store.get(key, ns, name)
    assert str(info.value) == message
    assert info.value.code == 404


def test_list_sorted_with_namespace_and_rv() -> None:
    store = make_store()
    for ns, name in [("b", "z"), ("a", "y"), ("b", "a"), ("a", "x")]:
        store.create(make_pod(name).ns(ns).obj())
    items, rv = store.list(POD)
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in items] == [
        ("a", "x"),
        ("a", "y"),
        ("b", "a"),
        ("b", "z"),
    ]
    assert rv == "4"
    items, _ = store.list(POD, "b")
    assert [o["metadata"]["name"] for o in items] == ["a", "z"]
    assert store.list(NODE) == ([], "4")


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("", ["n1", "n2", "n3"]),
        ("zone=a", ["n1", "n2"]),
        ("zone!=a", ["n3"]),
        ("zone in (b),gpu", []),
        ("!gpu", ["n2", "n3"]),
        (parse_selector("gpu"), ["n1"]),
    ],
)
def test_list_label_selector(selector: Any, expected: list[str]) -> None:
    store = make_store()
    store.create(make_node("n1").label(zone="a", gpu="true").obj())
    store.create(make_node("n2").label(zone="a").obj())
    store.create(make_node("n3").label(zone="b").obj())
    items, _ = store.list(NODE, label_selector=selector)
    assert [o["metadata"]["name"] for o in items] == expected


def test_list_bad_label_selector() -> None:
    store = make_store()
    store.create(make_node("n1").obj())
    with pytest.raises(BadRequest) as info:
        store.list(NODE, label_selector="a in b")
    assert (
        str(info.value)
        == "unable to parse labelSelector: unable to parse requirement: found 'b' expected: '('"
    )


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("spec.nodeName=n1", ["p1"]),
        ("spec.nodeName=", ["p3"]),
        ("spec.nodeName!=", ["p1", "p2"]),
        ("spec.nodeName!=n1,status.phase=Running", ["p2"]),
        ("metadata.name==p3", ["p3"]),
        ("metadata.namespace=default", ["p1", "p2", "p3"]),
        ("spec.schedulerName=other", ["p2"]),
    ],
)
def test_list_field_selector(selector: str, expected: list[str]) -> None:
    store = make_store()
    store.create(make_pod("p1").node("n1").phase("Pending").obj())
    store.create(make_pod("p2").node("n2").scheduler("other").phase("Running").obj())
    store.create(make_pod("p3").obj())
    items, _ = store.list(POD, field_selector=selector)
    assert [o["metadata"]["name"] for o in items] == expected


def test_list_unsupported_field() -> None:
    store = make_store()
    with pytest.raises(BadRequest) as info:
        store.list(POD, field_selector="spec.hostname=x")
    assert str(info.value) == "field label not supported: spec.hostname"
    assert info.value.code == 400


def test_update_bumps_rv_and_generation_only_on_spec_change() -> None:
    store = make_store()
    created = store.create(make_pod("p1").obj())
    obj = copy_object(created)
    obj["metadata"]["labels"] = {"a": "b"}
    out = store.update(obj)
    assert out["metadata"]["resourceVersion"] == "2"
    assert out["metadata"]["generation"] == 1
    assert out["metadata"]["uid"] == created["metadata"]["uid"]
    obj = copy_object(out)
    obj["spec"]["nodeName"] = "n1"
    out2 = store.update(obj)
    assert out2["metadata"]["generation"] == 2
    assert out2["metadata"]["resourceVersion"] == "3"
    assert created["metadata"]["resourceVersion"] == "1"  # old versions untouched


def test_update_conflict_on_stale_rv_and_unconditional_when_empty() -> None:
    store = make_store()
    created = store.create(make_pod("p1").obj())
    fresh = copy_object(created)
    fresh["metadata"]["labels"] = {"v": "1"}
    store.update(fresh)
    stale = copy_object(created)
    stale["metadata"]["labels"] = {"v": "2"}
    with pytest.raises(Conflict) as info:
        store.update(stale)
    assert str(info.value) == (
        'Operation cannot be fulfilled on pods "p1": the object has been modified; please apply your changes '
        "to the latest version and try again"
    )
    assert info.value.code == 409
    del stale["metadata"]["resourceVersion"]
    assert store.update(stale)["metadata"]["labels"] == {"v": "2"}


def test_update_noop_writes_nothing() -> None:
    store = make_store()
    created = store.create(make_pod("p1").obj())
    assert store.update(copy_object(created)) is created
    assert store.revision == 1


def test_update_ignores_status_for_status_kinds() -> None:
    store = make_store()
    created = store.create(make_pod("p1").phase("Pending").obj())
    obj = copy_object(created)
    obj["status"] = {"phase": "Running"}
    out = store.update(obj)
    assert out is created  # status-only change through the main resource is a no-op
    obj["spec"]["nodeName"] = "n"
    out = store.update(obj)
    assert out["status"] == {"phase": "Pending"}
    assert out["spec"]["nodeName"] == "n"


def test_update_changes_status_for_kinds_without_subresource() -> None:
    store = make_store()
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "status": {"x": 1}}
    created = store.create(cm)
    obj = copy_object(created)
    obj["status"] = {"x": 2}
    assert store.update(obj)["status"] == {"x": 2}


def test_update_status_only_touches_status() -> None:
    store = make_store()
    created = store.create(make_pod("p1").phase("Pending").obj())
    obj = copy_object(created)
    obj["status"] = {"phase": "Running"}
    obj["spec"]["nodeName"] = "ignored"
    obj["metadata"]["labels"] = {"ignored": "yes"}
    out = store.update_status(obj)
    assert out["status"] == {"phase": "Running"}
    assert "nodeName" not in out["spec"]
    assert "labels" not in out["metadata"]
    assert out["metadata"]["resourceVersion"] == "2"
    assert out["metadata"]["generation"] == 1
    with pytest.raises(Conflict):
        store.update_status(obj)  # obj still carries resourceVersion 1


def test_update_status_not_supported_without_subresource() -> None:
    store = make_store()
    store.create(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "pc"},
            "value": 1,
        }
    )
    with pytest.raises(NotFound):
        store.update_status(
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "pc"}}
        )


def test_update_missing_object() -> None:
    store = make_store()
    with pytest.raises(NotFound, match='pods "p1" not found'):
        store.update(make_pod("p1").obj())


def test_update_uid_is_immutable() -> None:
    store = make_store()
    obj = copy_object(store.create(make_pod("p1").obj()))
    obj["metadata"]["uid"] = "other"
    with pytest.raises(Invalid) as info:
        store.update(obj)
    assert str(info.value) == 'Pod "p1" is invalid: metadata.uid: Invalid value: "other": field is immutable'


def test_patch_merge_and_null_delete() -> None:
    store = make_store()
    store.create(make_pod("p1").ns(None).label(a="1", b="2").image("x").obj())
    out = store.patch(
        POD, "default", "p1", {"metadata": {"labels": {"a": None, "c": "3"}}, "spec": {"nodeName": "n1"}}
    )
    assert out["metadata"]["labels"] == {"b": "2", "c": "3"}
    assert out["spec"]["nodeName"] == "n1"
    assert out["spec"]["containers"] == [{"name": "c", "image": "x"}]
    assert out["metadata"]["generation"] == 2
    assert out["metadata"]["resourceVersion"] == "2"


def test_patch_status_subresource_isolation() -> None:
    store = make_store()
    store.create(make_pod("p1").phase("Pending").status(podIP="1.2.3.4").obj())
    out = store.patch(
        POD,
        "default",
        "p1",
        {"status": {"phase": "Running", "podIP": None}, "spec": {"nodeName": "x"}},
        subresource="status",
    )
    assert out["status"] == {"phase": "Running"}
    assert "nodeName" not in out["spec"]
    out = store.patch(POD, "default", "p1", {"status": {"phase": "Failed"}, "spec": {"nodeName": "n"}})
    assert out["status"] == {"phase": "Running"}
    assert out["spec"]["nodeName"] == "n"


def test_patch_resource_version_precondition() -> None:
    store = make_store()
    store.create(make_pod("p1").obj())
    with pytest.raises(Conflict):
        store.patch(POD, "default", "p1", {"metadata": {"resourceVersion": "99"}, "spec": {"nodeName": "a"}})
    out = store.patch(POD, "default", "p1", {"metadata": {"resourceVersion": "1"}, "spec": {"nodeName": "a"}})
    assert out["spec"]["nodeName"] == "a"


def test_patch_cannot_rename() -> None:
    store = make_store()
    store.create(make_pod("p1").obj())
    with pytest.raises(BadRequest) as info:
        store.patch(POD, "default", "p1", {"metadata": {"name": "p2"}})
    assert str(info.value) == "the name of the object (p2) does not match the name on the URL (p1)"


def test_patch_does_not_share_caller_values() -> None:
    store = make_store()
    store.create(make_pod("p1").obj())
    labels = {"a": "1"}
    store.patch(POD, "default", "p1", {"metadata": {"labels": labels}})
    labels["a"] = "changed"
    assert store.get(POD, "default", "p1")["metadata"]["labels"] == {"a": "1"}


def test_admission_can_mutate_and_veto() -> None:
    store = make_store()
    calls: list[tuple[str, str | None]] = []

    def admit(op: str, new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        calls.append((op, None if old is None else old["metadata"]["resourceVersion"]))
        if new["metadata"]["name"] == "forbidden":
            raise Forbidden.of("pods", "", "forbidden", "denied by test")
        new["metadata"].setdefault("labels", {})["admitted"] = "yes"
        return new

    remove = store.add_admission(admit)
    out = store.create(make_pod("p1").obj())
    assert out["metadata"]["labels"] == {"admitted": "yes"}
    with pytest.raises(Forbidden) as info:
        store.create(make_pod("forbidden").obj())
    assert str(info.value) == 'pods "forbidden" is forbidden: denied by test'
    assert info.value.code == 403
    assert store.revision == 1
    with pytest.raises(NotFound):
        store.get(POD, "default", "forbidden")
    store.patch(POD, "default", "p1", {"spec": {"nodeName": "n"}})
    assert calls == [("CREATE", None), ("CREATE", None), ("UPDATE", "1")]
    remove()
    store.create(make_pod("p2").obj())
    assert len(calls) == 3


def test_admission_veto_on_update_leaves_object() -> None:
    store = make_store()
    created = store.create(make_pod("p1").obj())

    def admit(op: str, new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        raise Invalid.of("Pod", "", new["metadata"]["name"], [("spec", "Forbidden: no")])

    store.add_admission(admit)
    with pytest.raises(Invalid):
        store.patch(POD, "default", "p1", {"spec": {"nodeName": "n"}})
    assert store.get(POD, "default", "p1") is created
    assert store.revision == 1


def test_validation_maps_to_invalid() -> None:
    store = MemoryStore(seed=0)  # default kinds and validation from berth.api
    bad = make_pod("p1").obj()
    bad["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "500x"}}
    with pytest.raises(Invalid) as info:
        store.create(bad)
    assert info.value.causes[0][0] == "spec.containers[0].resources.requests.cpu"
    assert str(info.value).startswith('Pod "p1" is invalid: spec.containers[0].resources.requests.cpu: ')
    assert store.revision == 0
    assert store.create(make_pod("p1").obj())["metadata"]["resourceVersion"] == "1"


def test_custom_validator() -> None:
    class Bad(ValueError):
        path = "spec.x"
        message = "Required value"

    def validate(obj: Any) -> None:
        if "x" not in obj.get("spec", {}):
            raise Bad()

    store = make_store(validate=validate)
    with pytest.raises(Invalid) as info:
        store.create(make_pod("p1").obj())
    assert str(info.value) == 'Pod "p1" is invalid: spec.x: Required value'
