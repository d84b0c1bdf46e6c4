"""``metadata.managedFields`` of creates, updates and non-apply patches through RestAPI, as kube's field
manager records them: an ``Update`` entry per manager, apiVersion and subresource, ownership moving to
whoever changes a field. And `record_update`'s shortcuts against its plain path and the plain
structured-merge-diff walk, on random objects and on the examples."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from berth.api.apply import _child, _item_element, _list_mode, apply_schema, decode_fields, encode_fields
from berth.api.manifest import parse_manifest_text
from berth.api.patches import APPLY_PATCH, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, PatchField
from berth.clock import SimClock
from berth.server import fieldmanager
from berth.server.fieldmanager import manager_or_user_agent, prefix_from_user_agent, record_update
from berth.server.rest import Request, RestAPI
from berth.store import MemoryStore

PODS = "/api/v1/namespaces/default/pods"
POD = f"{PODS}/a"
DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"
UA = "kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07"
T0, T1, T2 = "2024-01-01T00:00:00Z", "2024-01-01T00:01:00Z", "2024-01-01T00:02:00Z"


def _pod(image: str = "main:1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "a", "labels": {"app": "a"}},
        "spec": {"containers": [{"name": "main", "image": image, "ports": [{"containerPort": 80}]}]},
    }


def _api() -> tuple[RestAPI, SimClock]:
    clock = SimClock()
    return RestAPI(MemoryStore(seed=1, clock=clock)), clock


def _call(
    api: RestAPI,
    method: str,
    path: str,
    body: Any = None,
    manager: str | None = None,
    ct: str = "",
    ua: str = UA,
) -> tuple[int, dict[str, Any]]:
    query = {"fieldManager": [manager]} if manager else {}
    raw = json.dumps(body).encode() if body is not None else b""
    return api.handle(Request(method, path, query, raw, ct, ua))


def _managed(api: RestAPI, path: str = POD) -> list[dict[str, Any]]:
    code, obj = _call(api, "GET", path)
    assert code == 200
    return list(obj["metadata"].get("managedFields") or [])


def _entry(manager: str, fields: dict[str, Any], time: str | None = T0, **extra: str) -> dict[str, Any]:
    out: dict[str, Any] = {"manager": manager, "operation": "Update", "apiVersion": extra.pop("api", "v1")}
    if time is not None:
        out["time"] = time
    out.update(fieldsType="FieldsV1", fieldsV1=fields)
    out.update(extra)
    return out


CREATED = {
    "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
    "f:spec": {
        "f:containers": {
            'k:{"name":"main"}': {
                ".": {},
                "f:image": {},
                "f:name": {},
                "f:ports": {
                    ".": {},
                    'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}},
                },
            }
        }
    },
}


def test_create_records_the_field_manager() -> None:
    api, _ = _api()
    code, obj = _call(api, "POST", PODS, _pod(), "kubectl-create")
    assert code == 201
    assert obj["metadata"]["managedFields"] == [_entry("kubectl-create", CREATED)]
    assert _managed(api) == [_entry("kubectl-create", CREATED)]


def test_the_manager_defaults_to_the_user_agent_program() -> None:
    api, _ = _api()
    assert _call(api, "POST", PODS, _pod())[1]["metadata"]["managedFields"][0]["manager"] == "kubectl"
    api.store.delete(("", "Pod"), "default", "a", grace_period_seconds=0)
    assert _call(api, "POST", PODS, _pod(), ua="")[1]["metadata"]["managedFields"][0]["manager"] == "unknown"
    assert prefix_from_user_agent("kubectl-edit/v1.32.0 (linux/amd64) kubernetes/x") == "kubectl-edit"
    assert prefix_from_user_agent("Go-http-client/1.1") == "Go-http-client"
    assert prefix_from_user_agent("a\tb\x00c") == "abc"
    assert prefix_from_user_agent("é" * 100) == "é" * 64
    assert manager_or_user_agent("mine", UA) == "mine"


def test_label_then_patch_move_the_fields_they_change() -> None:
    api, clock = _api()
    _call(api, "POST", PODS, _pod(), "kubectl-create")
    clock.run(until=60)
    labels = {"metadata": {"labels": {"app": "b", "tier": "web"}}}
    assert _call(api, "PATCH", POD, labels, "kubectl-label", MERGE_PATCH)[0] == 200
    clock.run(until=120)
    image = {"spec": {"containers": [{"name": "main", "image": "main:2"}]}}
    code, obj = _call(api, "PATCH", POD, image, "kubectl-patch", STRATEGIC_MERGE_PATCH)
    assert code == 200
    created = json.loads(json.dumps(CREATED))
    created["f:metadata"]["f:labels"] = {}
    del created["f:spec"]["f:containers"]['k:{"name":"main"}']["f:image"]
    assert obj["metadata"]["managedFields"] == [
        _entry("kubectl-create", created),
        _entry("kubectl-label", {"f:metadata": {"f:labels": {"f:app": {}, "f:tier": {}}}}, T1),
        _entry("kubectl-patch", {"f:spec": {"f:containers": {'k:{"name":"main"}': {"f:image": {}}}}}, T2),
    ]


def test_a_later_write_of_the_same_manager_joins_its_entry_and_renews_its_time() -> None:
    api, clock = _api()
    _call(api, "POST", PODS, _pod(), "kubectl-create")
    _call(api, "PATCH", POD, {"metadata": {"labels": {"x": "1"}}}, "kubectl-label", MERGE_PATCH)
    clock.run(until=60)
    _call(api, "PATCH", POD, {"metadata": {"labels": {"y": "1"}}}, "kubectl-label", MERGE_PATCH)
    label = [e for e in _managed(api) if e["manager"] == "kubectl-label"]
    assert label == [_entry("kubectl-label", {"f:metadata": {"f:labels": {"f:x": {}, "f:y": {}}}}, T1)]
    clock.run(until=120)
    # writing what is already there changes nothing: no new revision, no new time
    revision = api.store.revision
    _call(api, "PATCH", POD, {"metadata": {"labels": {"y": "1"}}}, "kubectl-label", MERGE_PATCH)
    assert api.store.revision == revision
    assert [e["time"] for e in _managed(api)] == [T0, T1]


def test_removed_fields_leave_every_entry() -> None:
    api, _ = _api()
    _call(api, "POST", PODS, _pod(), "kubectl-create")
    ops = [{"op": "remove", "path": "/metadata/labels"}]
    code, obj = _call(api, "PATCH", POD, ops, "kubectl-patch", JSON_PATCH)
    assert code == 200
    created = {k: v for k, v in CREATED.items() if k != "f:metadata"}
    assert obj["metadata"]["managedFields"] == [_entry("kubectl-create", created)]


def test_replace_owns_what_it_changes_and_the_status_is_not_recorded() -> None:
    api, _ = _api()
    _call(api, "POST", PODS, _pod(), "kubectl-create")
    current = _call(api, "GET", POD)[1]
    body = {**current, "spec": {**current["spec"], "nodeSelector": {"disk": "ssd"}}, "status": {"phase": "X"}}
    code, obj = _call(api, "PUT", POD, body, "kubectl-replace")
    assert code == 200
    assert obj["metadata"]["managedFields"][1] == _entry(
        "kubectl-replace", {"f:spec": {"f:nodeSelector": {".": {}, "f:disk": {}}}}
    )


def test_status_writes_are_their_own_entry() -> None:
    api, clock = _api()
    _call(api, "POST", PODS, _pod(), "kubectl-create")
    clock.run(until=60)
    code, obj = _call(api, "PATCH", f"{POD}/status", {"status": {"phase": "Running"}}, "kubelet", MERGE_PATCH)
    assert code == 200
    status_entry = _entry("kubelet", {"f:status": {".": {}, "f:phase": {}}}, T1, subresource="status")
    assert obj["metadata"]["managedFields"] == [_entry("kubectl-create", CREATED), status_entry]
    current = _call(api, "GET", POD)[1]
    # a status PUT records only the status, whatever else its body says
    body = {
        **current,
        "metadata": {**current["metadata"], "labels": {"z": "1"}},
        "status": {"phase": "Failed"},
    }
    code, obj = _call(api, "PUT", f"{POD}/status", body, "other")
    assert obj["metadata"]["labels"] == {"app": "a"}
    assert obj["metadata"]["managedFields"][1:] == [
        _entry("kubelet", {"f:status": {}}, T1, subresource="status"),
        _entry("other", {"f:status": {"f:phase": {}}}, T1, subresource="status"),
    ]


def test_objects_written_by_components_stay_unmanaged() -> None:
    api, _ = _api()
    api.store.create(_pod())
    code, obj = _call(api, "PATCH", POD, {"metadata": {"labels": {"x": "1"}}}, "kubectl-label", MERGE_PATCH)
    assert code == 200 and "managedFields" not in obj["metadata"]
    current = _call(api, "GET", POD)[1]
    assert "managedFields" not in _call(api, "PUT", POD, current, "kubectl-replace")[1]["metadata"]


@pytest.mark.parametrize("reset", [[], [{}]])
def test_an_empty_list_clears_managed_fields(reset: list[Any]) -> None:
    api, _ = _api()
    _call(api, "POST", PODS, _pod(), "kubectl-create")
    code, obj = _call(api, "PATCH", POD, {"metadata": {"managedFields": reset}}, "m", MERGE_PATCH)
    assert code == 200 and "managedFields" not in obj["metadata"]
    assert _managed(api) == []


def test_a_request_may_set_managed_fields_and_bad_ones_are_ignored() -> None:
    api, _ = _api()
    importer = {"f:metadata": {"f:annotations": {"f:gone": {}}, "f:labels": {"f:app": {}}}}
    given = [_entry("importer", importer)]
    code, obj = _call(
        api, "POST", PODS, {**_pod(), "metadata": {**_pod()["metadata"], "managedFields": given}}
    )
    # a create sets every field of the object, so the given entries keep only what it does not set
    assert obj["metadata"]["managedFields"] == [
        _entry("importer", {"f:metadata": {"f:annotations": {"f:gone": {}}}}),
        _entry("kubectl", CREATED),
    ]
    bad = [{"manager": "x", "operation": "Sideways", "apiVersion": "v1", "fieldsType": "FieldsV1"}]
    patch = {"metadata": {"managedFields": bad, "labels": {"q": "1"}}}
    code, obj = _call(api, "PATCH", POD, patch, "kubectl-label", MERGE_PATCH)
    assert code == 200
    assert [e["manager"] for e in obj["metadata"]["managedFields"]] == [
        "importer",
        "kubectl",
        "kubectl-label",
    ]


def test_custom_kinds_start_from_an_empty_object() -> None:
    api, _ = _api()
    reservation = {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "Reservation",
        "metadata": {"name": "r"},
        "spec": {
            "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}},
            "owners": [{"object": {"name": "p"}}],
        },
    }
    code, obj = _call(api, "POST", "/apis/scheduling.koordinator.sh/v1alpha1/reservations", reservation, "m")
    assert code == 201
    assert obj["metadata"]["managedFields"] == [
        _entry(
            "m",
            {
                "f:spec": {
                    ".": {},
                    "f:owners": {},
                    "f:template": {".": {}, "f:spec": {".": {}, "f:containers": {}}},
                }
            },
            api="scheduling.koordinator.sh/v1alpha1",
        )
    ]


def _deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
            },
        },
    }


DEPLOYMENT = {
    "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
    "f:spec": {
        "f:replicas": {},
        "f:selector": {},
        "f:template": {
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {"f:containers": {'k:{"name":"c"}': {".": {}, "f:image": {}, "f:name": {}}}},
        },
    },
}


def test_built_in_kinds_start_from_their_zero_value_and_scale_takes_the_replicas() -> None:
    api, clock = _api()
    code, obj = _call(api, "POST", DEPLOYS, _deployment(), "kubectl-create")
    assert obj["metadata"]["managedFields"] == [_entry("kubectl-create", DEPLOYMENT, api="apps/v1")]
    clock.run(until=60)
    code, scale = _call(api, "PATCH", f"{DEPLOYS}/web/scale", {"spec": {"replicas": 3}}, None, MERGE_PATCH)
    assert (code, scale["spec"]["replicas"]) == (200, 3)
    without_replicas = json.loads(json.dumps(DEPLOYMENT))
    del without_replicas["f:spec"]["f:replicas"]
    assert _managed(api, f"{DEPLOYS}/web") == [
        _entry("kubectl", {"f:spec": {"f:replicas": {}}}, None, api="apps/v1", subresource="scale"),
        _entry("kubectl-create", without_replicas, api="apps/v1"),
    ]
    # the same number again changes nothing
    revision = api.store.revision
    _call(api, "PUT", f"{DEPLOYS}/web/scale", {"spec": {"replicas": 3}}, "other")
    assert api.store.revision == revision


def test_update_entries_beyond_ten_merge_into_ancient_changes() -> None:
    api, clock = _api()
    _call(api, "POST", PODS, _pod(), "m00")
    for n in range(1, 11):
        clock.run(until=60 * n)
        _call(api, "PATCH", POD, {"metadata": {"labels": {f"l{n}": "x"}}}, f"m{n:02d}", MERGE_PATCH)
    entries = _managed(api)
    assert len(entries) == 10
    assert entries[0]["manager"] == "ancient-changes"
    assert entries[0]["time"] == "2024-01-01T00:01:00Z"
    assert entries[0]["fieldsV1"]["f:metadata"]["f:labels"] == {".": {}, "f:app": {}, "f:l1": {}}
    assert [e["manager"] for e in entries[1:]] == [f"m{n:02d}" for n in range(2, 11)]


def test_apply_after_create_conflicts_with_the_creator() -> None:
    api, _ = _api()
    _call(api, "POST", PODS, _pod(), "kubectl-create")
    code, status = _call(api, "PATCH", POD, _pod("main:2"), "kubectl", APPLY_PATCH)
    assert (code, status["message"]) == (
        409,
        'Apply failed with 1 conflict: conflict with "kubectl-create" using v1: '
        '.spec.containers[name="main"].image',
    )


def test_status_apply_keeps_its_entry() -> None:
    api, _ = _api()
    _call(api, "POST", PODS, _pod(), "kubectl-create")
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "status": {"phase": "Running"}}
    code, _ = _call(api, "PATCH", f"{POD}/status", body, "kubelet", APPLY_PATCH)
    assert code == 200
    assert [(e["manager"], e["operation"], e.get("subresource")) for e in _managed(api)] == [
        ("kubelet", "Apply", "status"),
        ("kubectl-create", "Update", None),
    ]


def test_dry_run_answers_with_the_managed_fields_it_would_store() -> None:
    api, _ = _api()
    _call(api, "POST", PODS, _pod(), "kubectl-create")
    query = {"fieldManager": ["kubectl-label"], "dryRun": ["All"]}
    raw = json.dumps({"metadata": {"labels": {"x": "1"}}}).encode()
    code, obj = api.handle(Request("PATCH", POD, query, raw, MERGE_PATCH, UA))
    assert code == 200
    assert obj["metadata"]["managedFields"][1] == _entry(
        "kubectl-label", {"f:metadata": {"f:labels": {"f:x": {}}}}
    )
    assert _managed(api) == [_entry("kubectl-create", CREATED)]


# ----------------------------------------------------------------- record_update's shortcuts and walks

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
KINDS = [
    ("v1", "Pod"),
    ("v1", "Node"),
    ("v1", "Namespace"),
    ("v1", "Event"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "ReplicaSet"),
    ("policy/v1", "PodDisruptionBudget"),
    ("scheduling.k8s.io/v1", "PriorityClass"),
    ("coordination.k8s.io/v1", "Lease"),
    ("example.com/v1", "Widget"),
]
KEY_NAMES = [
    "spec", "status", "labels", "containers", "ports", "env", "name", "image", "containerPort", "protocol",
    "conditions", "type", "selector", "template", "strategy", "volumes", "finalizers", "ownerReferences", "uid",
    "podIPs", "ip", "topologySpreadConstraints", "topologyKey", "x", "é",
]  # fmt: skip
NAN = float("nan")
_KEYS = st.sampled_from(KEY_NAMES)
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from([0.0, 1.0, NAN, float("inf")]),
    st.sampled_from(["", "a", "b", "TCP", "ü", "true"]),
)
_ITEMS = st.fixed_dictionaries(
    {},
    optional={
        "name": st.sampled_from(["a", "b", "c", None]),
        "containerPort": st.sampled_from([80, 81, 80.0]),
        "protocol": st.sampled_from(["TCP", "UDP"]),
        "type": st.sampled_from(["Ready", "a"]),
        "uid": st.sampled_from(["u1", "u2"]),
        "ip": st.sampled_from(["10.0.0.1", True]),
        "image": _LEAVES,
        "ports": st.lists(st.fixed_dictionaries({"containerPort": st.sampled_from([80, 81])}), max_size=2),
    },
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(st.one_of(inner, _ITEMS), max_size=4), st.dictionaries(_KEYS, inner, max_size=4)
    ),
    max_leaves=16,
)
_PODISH = st.fixed_dictionaries(
    {"containers": st.lists(_ITEMS, min_size=1, max_size=4)},
    optional={
        **dict.fromkeys(
            ["volumes", "conditions", "podIPs", "ports", "ownerReferences", "topologySpreadConstraints"],
            st.lists(_ITEMS, max_size=4),
        ),
        "finalizers": st.lists(st.sampled_from(["a", "b", 1, True, 1.0]), max_size=4),
        "x": _VALUES,
    },
)
"""Maps with associative lists and sets (their items often with the same keys)."""
_BODIES = st.one_of(
    st.dictionaries(_KEYS, _VALUES, max_size=4),
    _PODISH,
    st.fixed_dictionaries({"spec": _PODISH}, optional={"status": _PODISH, "x": _VALUES}),
)
_STRIPPED_META = st.dictionaries(
    st.sampled_from(["name", "namespace", "uid", "generation", "resourceVersion", "creationTimestamp"]),
    st.one_of(st.sampled_from(["a", 1]), _VALUES),
    max_size=2,
)
_MANAGED = st.sampled_from(["keep", "keep", "keep", "reset", "copy", "junk"])
_REPLACEMENTS: list[Any] = [None, {}, [], 0, 1, True, 1.0, "a", NAN, {"name": "a"}, [{"name": "a"}, "a"]]


def _mutated(value: Any, seed: int) -> Any:
    """`value` with small seeded changes, the rest shared: scalars retyped (``True``, ``1``, ``1.0``) or
    replaced, keys dropped or added, list items duplicated, dropped or reordered."""
    rng = random.Random(seed)
    retype_only = rng.random() < 0.4  # equal values of other types only: True, 1 and 1.0 are ==

    def walk(v: Any) -> Any:
        if rng.random() < 0.3:
            return v
        if isinstance(v, dict):
            out = {k: walk(x) for k, x in v.items()}
            if out and rng.random() < 0.3 and not retype_only:
                del out[rng.choice(list(out))]
            if rng.random() < 0.3 and not retype_only:
                out[rng.choice(KEY_NAMES)] = rng.choice(_REPLACEMENTS)
            return out
        if isinstance(v, list):
            items = [walk(x) for x in v]
            op = 1.0 if retype_only else rng.random()
            if items and op < 0.3:
                items.append(items[rng.randrange(len(items))])
            elif items and op < 0.6:
                items.pop(rng.randrange(len(items)))
            elif op < 0.7:
                items.reverse()
            return items
        if isinstance(v, bool | int | float) and (retype_only or rng.random() < 0.7):
            return rng.choice([int(v) if v == v and abs(v) != float("inf") else v, float(v), bool(v)])
        return v if retype_only else rng.choice(_REPLACEMENTS)

    return walk(value)


def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    """record_update without its shortcuts: no direct create walk, no skipping of equal top-level fields,
    every entry decoded and encoded again."""

    def fallback(*_: Any) -> dict[str, Any]:
        raise fieldmanager._Fallback

    monkeypatch.setattr(fieldmanager, "_created_fields", fallback)
    monkeypatch.setattr(fieldmanager, "_same", lambda a, b: False)
    monkeypatch.setattr(fieldmanager, "_canonical", lambda tree, root=True: False)


def _both(live: Any, new: dict[str, Any], **kw: Any) -> dict[str, Any]:
    """record_update's result, asserted to be the same without its shortcuts (as Python values: NaN too)."""
    fast = record_update(copy.deepcopy(live), copy.deepcopy(new), **kw)
    with pytest.MonkeyPatch.context() as mp:
        _plain(mp)
        plain = record_update(copy.deepcopy(live), copy.deepcopy(new), **kw)
    assert repr(fast) == repr(plain)
    return fast


RELABEL, RETYPE = 2**32, 2**32 - 1
"""Seeds of writes that change the labels only, sharing everything else with the live object, and that
change the types of numbers and booleans only (``True`` to ``1`` to ``1.0``: they stay ==)."""


def _retyped(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _retyped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_retyped(v) for v in value]
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return float(value)
    return value


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(KINDS),
    body=_BODIES,
    meta=_STRIPPED_META,
    labels=st.dictionaries(_KEYS, _LEAVES, max_size=3),
    writes=st.lists(
        st.tuples(st.integers(0, 2**32), st.sampled_from(["", "", "status"]), _MANAGED, _BODIES), max_size=3
    ),
    has_status=st.booleans(),
)
@example(  # a NaN the update keeps is a change (NaN is not itself), as True that becomes 1
    kind=("v1", "Pod"),
    body={"spec": {"containers": [{"name": "a", "ip": True, "n": 1}]}, "status": {"y": NAN}, "x": [NAN]},
    meta={"name": {"x": 1}},
    labels={},
    writes=[(RELABEL, "", "keep", {}), (RETYPE, "", "keep", {}), (RELABEL, "status", "keep", {})],
    has_status=False,
)
def test_record_update_matches_its_plain_path_on_random_objects(
    kind: tuple[str, str],
    body: dict[str, Any],
    meta: dict[str, Any],
    labels: dict[str, Any],
    writes: list[tuple[int, str, str, dict[str, Any]]],
    has_status: bool,
) -> None:
    schema = apply_schema(kind[0].rpartition("/")[0], kind[1])
    obj = {"apiVersion": kind[0], "kind": kind[1], **body, "metadata": {**meta, "labels": labels}}
    live = _both(None, obj, manager="m", schema=schema, has_status=has_status, now="t0")
    for i, (seed, subresource, managed, fresh) in enumerate(writes):
        if seed in (RELABEL, RETYPE):
            new = {**live, "metadata": {**live["metadata"], "labels": {"changed": "1"}}}
            new["metadata"].pop("managedFields", None)
            if seed == RETYPE:
                new = {k: v if k == "metadata" else _retyped(v) for k, v in new.items()}
        elif seed % 4:  # as patches and status writes make them: what is kept is shared
            new = {k: v for k, v in _mutated(live, seed).items() if k != "metadata"}
            new["metadata"] = _mutated(dict(live["metadata"]), seed + 1)
            if not isinstance(new["metadata"], dict):
                new["metadata"] = {}
            new["metadata"].pop("managedFields", None)
        else:
            new = {"apiVersion": kind[0], "kind": kind[1], **fresh, "metadata": {"labels": labels}}
        if managed == "reset":
            new["metadata"]["managedFields"] = []
        elif managed == "copy":
            new["metadata"]["managedFields"] = live["metadata"].get("managedFields")
        elif managed == "junk":
            new["metadata"]["managedFields"] = [{"manager": "x", "operation": "Bogus"}]
        kw: dict[str, Any] = {"schema": schema, "has_status": has_status, "subresource": subresource}
        live = _both(live, new, manager=f"m{i % 2}", now=f"t{i + 1}", **kw)


def _example_objects() -> list[dict[str, Any]]:
    """Every object of examples/**, those a Scenario's steps create too."""
    out: list[dict[str, Any]] = []
    for path in sorted(EXAMPLES.rglob("*.yaml")):
        if path.parent.name == "deploy":
            continue  # manifests for a real cluster (CRDs, RBAC, a Deployment), not objects Berth serves
        for m in parse_manifest_text(path.read_text(), str(path)):
            out.append(m.obj)
            steps = (m.obj.get("spec") or {}).get("steps") if m.obj.get("kind") == "Scenario" else None
            for step in steps or []:
                out.extend(step.get("create") or [])
    return out


def test_record_update_on_the_examples_matches_its_plain_path() -> None:
    objects = _example_objects()
    assert len(objects) > 50
    for obj in objects:
        group_version, kind = str(obj.get("apiVersion")), str(obj.get("kind"))
        kw: dict[str, Any] = {
            "schema": apply_schema(group_version.rpartition("/")[0], kind),
            "has_status": True,
        }
        live = _both(None, obj, manager="kubectl-create", now=T0, **kw)
        relabelled = copy.deepcopy(live)
        relabelled["metadata"]["labels"] = {**(relabelled["metadata"].get("labels") or {}), "x": "1"}
        live = _both(live, relabelled, manager="kubectl-label", now=T1, **kw)
        status = {**live, "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
        _both(live, status, manager="kubelet", now=T2, subresource="status", **kw)


_MISSING = fieldmanager._MISSING


def _reference_compare(
    lhs: Any, rhs: Any, f: PatchField, name: str, path: tuple[str, ...], out: tuple[set[Any], set[Any]]
) -> None:
    """structured-merge-diff's compare walker as written plainly: `out` gets the added or modified and the
    removed paths (`lhs` or `rhs` _MISSING when absent there)."""
    changed, removed = out

    def leaf() -> None:
        if lhs is _MISSING:
            changed.add(path)
        elif rhs is _MISSING:
            removed.add(path)
        elif not fieldmanager._equal(lhs, rhs):
            changed.add(path)

    def empty(value: Any) -> bool:
        return value is _MISSING or value is None or not value

    def fields(left: Any, right: Any, item_path: tuple[str, ...]) -> None:
        left, right = left if isinstance(left, dict) else {}, right if isinstance(right, dict) else {}
        for key in {**left, **right}:
            child = (*item_path, f"f:{key}")
            _reference_compare(
                left.get(key, _MISSING), right.get(key, _MISSING), _child(f, key), key, child, out
            )

    present = [v for v in (lhs, rhs) if v is not _MISSING and v is not None]
    if present and all(isinstance(v, dict) for v in present):
        if f.replaces or (empty(lhs) and empty(rhs)):
            return leaf()
        fields(lhs, rhs, path)
    elif present and all(isinstance(v, list) for v in present):
        mode, keys = _list_mode(f, name)
        if mode == "atomic" or (empty(lhs) and empty(rhs)):
            return leaf()
        groups: tuple[dict[str, list[Any]], dict[str, list[Any]]] = ({}, {})
        for side, items in zip(groups, (lhs, rhs), strict=True):
            for item in items if isinstance(items, list) else []:
                side.setdefault(_item_element(item, mode, keys), []).append(item)
        for element in {**groups[0], **groups[1]}:
            old, new = groups[0].get(element, []), groups[1].get(element, [])
            item_path = (*path, element)
            if len(old) <= 1 and len(new) <= 1:
                a, b = old[0] if old else _MISSING, new[0] if new else _MISSING
                if mode == "map" and all(isinstance(v, dict) for v in (a, b) if v is not _MISSING):
                    fields(a, b, item_path)
                    if a is _MISSING:
                        changed.add(item_path)
                    elif b is _MISSING:
                        removed.add(item_path)
                else:
                    _reference_compare(a, b, PatchField("replace"), "", item_path, out)  # a leaf
            elif len(old) >= 2 and len(new) >= 2:
                if not fieldmanager._equal(old, new):
                    changed.add(item_path)
            else:
                (removed if len(old) >= 2 else changed).add(item_path)
    else:
        return leaf()
    if path and lhs is _MISSING:
        changed.add(path)
    elif path and rhs is _MISSING:
        removed.add(path)
    return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(KINDS),
    lhs=st.one_of(st.just(_MISSING), _BODIES),
    rhs=st.one_of(st.just(_MISSING), _BODIES),
    seed=st.integers(0, 2**32),
)
@example(
    kind=("v1", "Pod"),
    lhs={"containers": [{"name": "a"}, {"name": "a", "x": 1}]},
    rhs={"containers": [{"name": "a"}]},
    seed=0,
)
@example(
    kind=("v1", "Pod"),
    lhs={"containers": [{"name": "a"}]},
    rhs={"containers": [{"name": "a"}, {"name": "a"}]},
    seed=0,
)
@example(
    kind=("v1", "Pod"),
    lhs={"containers": [{"name": "a"}, {"name": "a", "x": 1}]},
    rhs={"containers": [{"name": "a"}, {"name": "a", "x": 1.0}]},
    seed=0,
)
@example(
    kind=("v1", "Pod"),
    lhs={"containers": [{"name": "a", "ports": [{"containerPort": 80}]}], "x": True},
    rhs={"containers": [{"name": "a", "ports": [{"containerPort": 80.0}]}], "x": 1},
    seed=0,
)
@example(
    kind=("v1", "Pod"),
    lhs={"containers": None, "x": None, "y": {}},
    rhs={"containers": [{"name": "a"}], "x": {"a": 1}, "y": None},
    seed=0,
)
def test_compare_matches_the_plain_walk(kind: tuple[str, str], lhs: Any, rhs: Any, seed: int) -> None:
    if lhs is not _MISSING and seed % 4:
        rhs = _mutated(lhs, seed)  # mostly the same, sharing values
    root = PatchField(fields=apply_schema(kind[0].rpartition("/")[0], kind[1]))
    for top in ("spec", "x", ""):
        f, path = (_child(root, top), ("f:" + top,)) if top else (root, ())
        expected: tuple[set[Any], set[Any]] = (set(), set())
        _reference_compare(lhs, rhs, f, top, path, expected)
        got: tuple[set[Any], set[Any]] = (set(), set())
        fieldmanager._compare(lhs, rhs, f, top, path, *got)
        assert got == expected


_ELEMENTS = st.sampled_from(
    ["f:a", "f:b", "f:spec", 'k:{"name":"a"}', "k:{}", "v:1", "i:0", "i:10", "g:x", "a", "é", "."]
)
_PATHS = st.sets(
    st.lists(_ELEMENTS.filter(lambda e: e != "."), min_size=1, max_size=4).map(tuple), max_size=10
)


def _spoiled(tree: dict[str, Any], seed: int) -> Any:
    """A FieldsV1 tree with a seeded change that may leave it as `_encode_fields` makes them or not."""
    rng = random.Random(seed)
    nodes = [tree]
    for node in nodes:
        nodes.extend(v for v in node.values() if isinstance(v, dict))
    node = rng.choice(nodes)
    op = rng.randrange(6)
    if op == 0 and node:
        del node[rng.choice(list(node))]
    elif op == 1:
        node["."] = rng.choice([{}, {"f:x": {}}])
    elif op == 2:
        items = list(node.items())
        rng.shuffle(items)
        node.clear()
        node.update(items)
    elif op == 3 and node:
        node[rng.choice(list(node))] = rng.choice([1, None, {".": {}}])
    elif op == 4:
        node[rng.choice(["f:zz", "", "i:1", "z"])] = {}
    return tree


@settings(max_examples=300, deadline=None)
@given(paths=_PATHS, seed=st.integers(0, 2**32), items=st.lists(st.one_of(_LEAVES, _ITEMS), max_size=4))
def test_fieldsv1_helpers_match_berth_api_apply(
    paths: set[tuple[str, ...]], seed: int, items: list[Any]
) -> None:
    encoded = encode_fields(paths)
    assert json.dumps(fieldmanager._encode_fields(paths)) == json.dumps(encoded)
    assert fieldmanager._canonical(encoded)
    tree = _spoiled(json.loads(json.dumps(encoded)), seed)
    if fieldmanager._canonical(tree):  # it is what encoding its paths gives, in order
        owned = decode_fields(tree)
        assert json.dumps(encode_fields(owned)) == json.dumps(tree)
        for path in paths | {("f:zz",), ("z",)}:
            assert fieldmanager._tree_has(tree, path) == (path in owned)
    for name, f in (
        ("ports", PatchField("merge", "containerPort")),
        ("x", PatchField("merge", "name")),
        ("x", PatchField("merge")),
    ):
        mode, keys = fieldmanager._mode(f, name)
        assert [fieldmanager._element(item, mode, keys) for item in items] == [
            _item_element(item, *_list_mode(f, name)) for item in items
        ]
