"""JSON patch (RFC 6902) and strategic merge patch, with cases from RFC 6902 and apimachinery's tests."""

from __future__ import annotations

from typing import Any

import pytest

from berth.api.errors import BadRequest
from berth.api.patches import (
    PatchField,
    PatchRejected,
    RequestEntityTooLarge,
    json_patch,
    smp_schema,
    strategic_merge_patch,
)

# ------------------------------------------------------------------------------------------- JSON patch


def test_json_patch_operations() -> None:
    doc = {"a": {"b": [1, 2], "c": "x"}, "k/e~y": 1}
    ops = [
        {"op": "add", "path": "/a/b/1", "value": 9},
        {"op": "add", "path": "/a/b/-", "value": 3},
        {"op": "replace", "path": "/a/c", "value": "y"},
        {"op": "remove", "path": "/k~1e~0y"},
        {"op": "copy", "from": "/a/b", "path": "/d"},
        {"op": "move", "from": "/a/c", "path": "/e"},
        {"op": "test", "path": "/d", "value": [1, 9, 2, 3]},
        {"op": "add", "path": "/a/b/-1", "value": 7},
    ]
    # json-patch v4: a negative index counts from the end of the grown list (-1 appends)
    assert json_patch(doc, ops) == {"a": {"b": [1, 9, 2, 3, 7]}, "d": [1, 9, 2, 3], "e": "y"}
    assert doc == {"a": {"b": [1, 2], "c": "x"}, "k/e~y": 1}


def test_json_patch_kube_json_patch_v4_leniency() -> None:
    # replace of a missing member adds it; test of a missing member against null passes
    out = json_patch({"m": {}}, [{"op": "replace", "path": "/m/x", "value": 1}, {"op": "test", "path": "/n"}])
    assert out == {"m": {"x": 1}}


@pytest.mark.parametrize(
    ("ops", "detail"),
    [
        ([{"op": "test", "path": "/a", "value": 2}], "testing value /a failed: test failed"),
        ([{"op": "test", "path": "/a", "value": True}], "testing value /a failed: test failed"),
        (
            [{"op": "remove", "path": "/zz"}],
            "error in remove for path: '/zz': Unable to remove nonexistent key: zz: missing value",
        ),
        (
            [{"op": "add", "path": "/x/y", "value": 1}],
            'add operation does not apply: doc is missing path: "/x/y": missing value',
        ),
        (
            [{"op": "add", "path": "/l/5", "value": 1}],
            "error in add for path: '/l/5': Unable to access invalid index: 5: invalid index referenced",
        ),
        (
            [{"op": "replace", "path": "/l/3", "value": 1}],
            "replace operation does not apply: doc is missing key: /l/3: missing value",
        ),
        ([{"op": "frob", "path": "/a"}], "Unexpected kind: frob"),
    ],
)
def test_json_patch_failures_are_422(ops: list[dict[str, Any]], detail: str) -> None:
    with pytest.raises(PatchRejected) as info:
        json_patch({"a": 1, "l": [0]}, ops)
    status = info.value.to_status()
    assert (status["code"], status["reason"]) == (422, "Invalid")
    assert status["message"] == "the server rejected our request due to an error in our request"
    assert status["details"]["causes"] == [{"reason": "UnexpectedServerResponse", "message": detail}]


def test_json_patch_bad_bodies() -> None:
    with pytest.raises(BadRequest, match=r"cannot unmarshal object into Go value of type jsonpatch\.Patch"):
        json_patch({}, {"op": "add"})
    with pytest.raises(BadRequest):
        json_patch({}, [1])
    with pytest.raises(RequestEntityTooLarge):
        json_patch({}, [{"op": "test", "path": "", "value": {}}] * 10001)


# ------------------------------------------------------------------------------- strategic merge patch

_LIST = PatchField("merge", "name", {"nested": PatchField("merge", "name")})
_SCHEMA = {
    "mergingList": _LIST,
    "mergingIntList": PatchField("merge"),
    "nonMergingList": PatchField(),
    "replacedMap": PatchField("replace"),
}


def _smp(original: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    before = repr(original), repr(patch)
    out = strategic_merge_patch(original, patch, _SCHEMA)
    assert (repr(original), repr(patch)) == before
    return out


def test_smp_merges_by_key_and_keeps_live_order() -> None:
    original = {"mergingList": [{"name": "1", "other": "a"}, {"name": "2", "value": "2"}]}
    out = _smp(original, {"mergingList": [{"name": "2", "value": "x"}]})
    assert out == {"mergingList": [{"name": "1", "other": "a"}, {"name": "2", "value": "x"}]}
    # new items without an order directive come first, as in kube
    out = _smp(original, {"mergingList": [{"name": "3"}]})
    assert out == {"mergingList": [{"name": "3"}, {"name": "1", "other": "a"}, {"name": "2", "value": "2"}]}


def test_smp_set_element_order_add_item() -> None:
    # apimachinery "add an item in a list and preserve order" (three-way patch on current)
    current = {"mergingList": [{"name": "1", "other": "a"}, {"name": "2", "value": "2", "other": "b"}]}
    patch = {
        "$setElementOrder/mergingList": [{"name": "3"}, {"name": "1"}, {"name": "2"}],
        "mergingList": [{"name": "3", "value": "3"}],
    }
    assert _smp(current, patch) == {
        "mergingList": [
            {"name": "3", "value": "3"},
            {"name": "1", "other": "a"},
            {"name": "2", "value": "2", "other": "b"},
        ]
    }


def test_smp_set_element_order_with_server_only_items() -> None:
    # apimachinery "set elements order in a list with server-only items 3"
    current = {
        "mergingList": [
            {"name": "1", "other": "a"},
            {"name": "2", "value": "2"},
            {"name": "7"},
            {"name": "9"},
            {"name": "8"},
            {"name": "3", "value": "3"},
            {"name": "4", "value": "4"},
        ]
    }
    patch = {"$setElementOrder/mergingList": [{"name": "2"}, {"name": "1"}, {"name": "4"}, {"name": "3"}]}
    names = [i["name"] for i in _smp(current, patch)["mergingList"]]
    assert names == ["2", "1", "7", "9", "8", "4", "3"]


def test_smp_set_element_order_of_int_list() -> None:
    # apimachinery "set elements order in a int list with server-only items 2"
    current = {"mergingIntList": [1, 2, 9, 3, 4]}
    patch = {"$setElementOrder/mergingIntList": [2, 1, 4, 3]}
    assert _smp(current, patch) == {"mergingIntList": [2, 1, 9, 4, 3]}


def test_smp_delete_and_replace_directives() -> None:
    original = {"mergingList": [{"name": "1"}, {"name": "2", "value": "2"}], "other": "x"}
    assert _smp(original, {"mergingList": [{"name": "1", "$patch": "delete"}]}) == {
        "mergingList": [{"name": "2", "value": "2"}],
        "other": "x",
    }
    assert _smp(original, {"mergingList": [{"name": "3"}, {"$patch": "replace"}]}) == {
        "mergingList": [{"name": "3"}],
        "other": "x",
    }
    assert _smp(original, {"$patch": "replace", "a": 1}) == {"a": 1}
    assert _smp({"m": {"a": 1}, "k": 2}, {"m": {"$patch": "delete"}}) == {"m": {}, "k": 2}


def test_smp_scalar_lists_null_and_atomic_fields() -> None:
    original = {
        "mergingIntList": [1, 2],
        "nonMergingList": [{"name": "a"}, {"name": "b"}],
        "replacedMap": {"a": 1, "b": 2},
        "plainMap": {"a": 1, "b": 2},
        "gone": 1,
    }
    patch = {
        "mergingIntList": [2, 3],
        "nonMergingList": [{"name": "c"}],
        "replacedMap": {"c": 3},
        "plainMap": {"b": None, "c": 3},
        "gone": None,
    }
    assert _smp(original, patch) == {
        "mergingIntList": [1, 2, 3],
        "nonMergingList": [{"name": "c"}],
        "replacedMap": {"c": 3},
        "plainMap": {"a": 1, "c": 3},
    }


def test_smp_delete_from_primitive_list() -> None:
    # apimachinery: deletes whatever the field's strategy; a missing list is not created
    assert _smp({"mergingIntList": [1, 2, 2, 3]}, {"$deleteFromPrimitiveList/mergingIntList": [2]}) == {
        "mergingIntList": [1, 3]
    }
    assert _smp({"x": [1]}, {"$deleteFromPrimitiveList/mergingIntList": [2]}) == {"x": [1]}
    assert _smp({"nonMergingList": ["a", "b"]}, {"$deleteFromPrimitiveList/nonMergingList": ["a"]}) == {
        "nonMergingList": ["b"]
    }


def test_smp_retain_keys() -> None:
    # apimachinery "retainKeys map adds a field and clear a field"
    original = {"retainKeysMap": {"name": "foo", "value": "bar"}}
    patch = {"retainKeysMap": {"$retainKeys": ["name", "other"], "other": "b"}}
    assert _smp(original, patch) == {"retainKeysMap": {"name": "foo", "other": "b"}}
    with pytest.raises(BadRequest, match="invalid patch format of retainKeys"):
        _smp(original, {"retainKeysMap": {"$retainKeys": ["name"], "other": "b"}})


def test_smp_nested_merging_list_and_new_items_lose_directives() -> None:
    original = {"mergingList": [{"name": "1", "nested": [{"name": "a", "v": 1}]}]}
    patch = {
        "mergingList": [
            {"name": "1", "nested": [{"name": "b"}, {"name": "a", "v": None}]},
            {"name": "2", "x": None, "nested": [{"name": "z"}, {"name": "q", "$patch": "delete"}]},
        ]
    }
    assert _smp(original, patch) == {
        "mergingList": [
            {"name": "1", "nested": [{"name": "b"}, {"name": "a"}]},
            {"name": "2", "nested": [{"name": "z"}]},
        ]
    }


def test_smp_errors() -> None:
    with pytest.raises(BadRequest, match="does not contain declared merge key: name"):
        _smp({"mergingList": [{"name": "1"}]}, {"mergingList": [{"value": "x"}]})
    with pytest.raises(BadRequest, match="invalid patch format of setElementOrder list"):
        _smp({}, {"$setElementOrder": []})
    with pytest.raises(PatchRejected):
        _smp({"mergingIntList": [[1]]}, {"mergingIntList": [[2]]})
    with pytest.raises(BadRequest, match="unknown patch type: bogus"):
        _smp({"m": {}}, {"m": {"$patch": "bogus"}})


def test_smp_pod_schema() -> None:
    schema = smp_schema("", "Pod")
    assert schema is not None
    pod = {
        "metadata": {"name": "p", "labels": {"a": "1"}, "finalizers": ["x"]},
        "spec": {
            "containers": [
                {
                    "name": "a",
                    "image": "a:1",
                    "env": [{"name": "E", "value": "1"}],
                    "ports": [{"containerPort": 80}],
                },
                {"name": "b", "image": "b:1"},
            ],
            "tolerations": [{"key": "k", "operator": "Exists"}],
        },
    }
    patch = {
        "metadata": {"labels": {"b": "2"}, "finalizers": ["y"]},
        "spec": {
            "containers": [{"name": "a", "image": "a:2", "env": [{"name": "F", "value": "2"}]}],
            "tolerations": [{"key": "t", "operator": "Exists"}],
        },
    }
    assert strategic_merge_patch(pod, patch, schema) == {
        "metadata": {"name": "p", "labels": {"a": "1", "b": "2"}, "finalizers": ["y", "x"]},
        "spec": {
            "containers": [
                {
                    "name": "a",
                    "image": "a:2",
                    "env": [{"name": "F", "value": "2"}, {"name": "E", "value": "1"}],
                    "ports": [{"containerPort": 80}],
                },
                {"name": "b", "image": "b:1"},
            ],
            "tolerations": [{"key": "t", "operator": "Exists"}],
        },
    }


def test_smp_schemas_cover_builtins_only() -> None:
    for group, kind in [
        ("", "Pod"),
        ("", "Node"),
        ("", "Namespace"),
        ("", "Event"),
        ("apps", "ReplicaSet"),
        ("apps", "Deployment"),
        ("policy", "PodDisruptionBudget"),
        ("scheduling.k8s.io", "PriorityClass"),
        ("coordination.k8s.io", "Lease"),
    ]:
        assert smp_schema(group, kind) is not None
    assert smp_schema("scheduling.koordinator.sh", "Reservation") is None
    assert smp_schema("scheduling.x-k8s.io", "PodGroup") is None


def test_smp_deployment_template_and_pdb_selector() -> None:
    deploy = smp_schema("apps", "Deployment")
    assert deploy is not None
    obj = {"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b"}]}}}}
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "b", "$patch": "delete"}]}}}}
    assert strategic_merge_patch(obj, patch, deploy) == {
        "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "1"}]}}}
    }
    pdb = smp_schema("policy", "PodDisruptionBudget")
    assert pdb is not None
    obj = {"spec": {"selector": {"matchLabels": {"a": "1"}}, "minAvailable": 1}}
    assert strategic_merge_patch(obj, {"spec": {"selector": {"matchLabels": {"b": "2"}}}}, pdb) == {
        "spec": {"selector": {"matchLabels": {"b": "2"}}, "minAvailable": 1}
    }
