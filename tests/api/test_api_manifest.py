"""Tests for berth.api.manifest: YAML/JSON loading, Lists, directories, validation."""

import gc
import json
from pathlib import Path
from typing import Any

import pytest

from berth.api.errors import InvalidObjectError
from berth.api.manifest import Manifest, ManifestError, load_manifests

POD_YAML = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: c
    resources:
      requests:
        cpu: {cpu}
"""
NODE_YAML = """\
apiVersion: v1
kind: Node
metadata:
  name: {name}
status:
  allocatable: {{cpu: "4", memory: 8Gi}}
"""


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def names(ms: list[Manifest]) -> list[tuple[str, str, str]]:
    return [(m.obj["kind"], m.obj["metadata"].get("namespace", ""), m.obj["metadata"]["name"]) for m in ms]


def test_multi_document_yaml(tmp_path: Path) -> None:
    text = (
        "---\n"
        + NODE_YAML.format(name="n1")
        + "---\n---\n"
        + POD_YAML.format(name="p1", cpu="500m")
        + "...\n"
    )
    f = write(tmp_path / "a.yaml", text)
    ms = load_manifests([f])
    assert names(ms) == [("Node", "", "n1"), ("Pod", "default", "p1")]
    assert [m.source for m in ms] == [f"{f}#0", f"{f}#2"]


def test_single_document_source(tmp_path: Path) -> None:
    f = write(tmp_path / "p.yml", POD_YAML.format(name="p", cpu="1"))
    (m,) = load_manifests([f])
    assert m.source == f
    assert m.obj["metadata"]["namespace"] == "default"
    assert m.obj["spec"]["containers"][0]["resources"]["requests"]["cpu"] == 1


def test_json_list(tmp_path: Path) -> None:
    doc = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "a", "namespace": "x"},
                "spec": {"containers": [{"name": "c"}]},
            },
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}},
            {
                "apiVersion": "v1",
                "kind": "PodList",
                "items": [
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": {"name": "b"},
                        "spec": {"containers": [{"name": "c"}]},
                    }
                ],
            },
        ],
    }
    f = write(tmp_path / "l.json", json.dumps(doc))
    ms = load_manifests([f])
    assert names(ms) == [("Pod", "x", "a"), ("Node", "", "n"), ("Pod", "default", "b")]
    assert [m.source for m in ms] == [f"{f} items[0]", f"{f} items[1]", f"{f} items[2] items[0]"]


def test_directory_order(tmp_path: Path) -> None:
    write(tmp_path / "b.yaml", NODE_YAML.format(name="n-b"))
    write(
        tmp_path / "a" / "z.json",
        json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n-az"}}),
    )
    write(tmp_path / "a" / "c.yml", NODE_YAML.format(name="n-ac"))
    write(tmp_path / "c.txt", "not a manifest")
    write(tmp_path / "10.yaml", NODE_YAML.format(name="n-10"))
    write(tmp_path / "2.yaml", NODE_YAML.format(name="n-2"))
    ms = load_manifests([str(tmp_path)])
    assert [m.obj["metadata"]["name"] for m in ms] == ["n-10", "n-2", "n-ac", "n-az", "n-b"]


def test_paths_in_given_order(tmp_path: Path) -> None:
    b = write(tmp_path / "b.yaml", NODE_YAML.format(name="b"))
    a = write(tmp_path / "a.yaml", NODE_YAML.format(name="a"))
    assert [m.obj["metadata"]["name"] for m in load_manifests([b, a])] == ["b", "a"]


def test_invalid_object_aborts_everything(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", NODE_YAML.format(name="n1"))
    bad = write(tmp_path / "b.yaml", POD_YAML.format(name="p1", cpu="500x"))
    with pytest.raises(InvalidObjectError) as info:
        load_manifests([str(tmp_path)])
    assert (
        str(info.value)
        == f'{bad}: Pod "default/p1": spec.containers[0].resources.requests.cpu: invalid quantity "500x"'
    )
    assert info.value.source == bad


@pytest.mark.parametrize(
    ("filename", "text", "message"),
    [
        ("bad.yaml", "a: [1, 2\nb: 3\n", "{f}:2: invalid YAML: did not find expected ',' or ']'"),
        ("bad.json", '{\n  "a": 1,\n  "b": \n}', "{f}:4: invalid JSON: Expecting value"),
        ("scalar.yaml", "just a string\n", "{f}: expected an object, got str"),
        ("items.json", '{"kind": "List", "items": {"a": 1}}', "{f}: items: expected a list"),
    ],
)
def test_parse_errors(tmp_path: Path, filename: str, text: str, message: str) -> None:
    f = write(tmp_path / filename, text)
    with pytest.raises(ManifestError) as info:
        load_manifests([f])
    assert str(info.value) == message.format(f=f)


def test_missing_path(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.yaml")
    with pytest.raises(ManifestError) as info:
        load_manifests([missing])
    assert str(info.value) == f"{missing}: path does not exist"


def test_unknown_kind_in_list(tmp_path: Path) -> None:
    f = write(
        tmp_path / "l.yaml",
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v9\n  kind: Thing\n  metadata: {name: t}\n",
    )
    with pytest.raises(InvalidObjectError) as info:
        load_manifests([f])
    assert str(info.value) == f'{f} items[0]: Thing "t": apiVersion/kind: Unsupported value: "v9, Kind=Thing"'


def _json_pod(name: str, **container: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80}], **container}]},
    }


@pytest.mark.parametrize(
    ("changed", "message"),
    [
        (
            {"resources": {"requests": {"cpu": "-1"}}},
            'spec.containers[0].resources.requests.cpu: Invalid value: "-1": must be greater than or equal to 0',
        ),
        (  # equal to the others' 80 in Python, but not an integer
            {"ports": [{"containerPort": 80.0}]},
            "spec.containers[0].ports[0].containerPort: Invalid value: 80.0: must be an integer",
        ),
    ],
)
def test_a_json_pod_differing_from_the_others_deep_down_gets_its_own_error(
    tmp_path: Path, changed: dict[str, Any], message: str
) -> None:
    # the pod specs of a JSON file are checked once per distinct spec
    items = [_json_pod("p0"), _json_pod("p1"), _json_pod("p2", **changed), _json_pod("p3")]
    f = write(tmp_path / "pods.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    with pytest.raises(InvalidObjectError) as info:
        load_manifests([f])
    assert str(info.value) == f'{f} items[2]: Pod "default/p2": {message}'


def test_a_json_file_with_nan_is_not_checked_once_per_spec(tmp_path: Path) -> None:
    # only Python's decoder reads NaN, and a NaN would be encoded as the others' null
    pods = [_json_pod("p0"), _json_pod("p1")]
    pods[0]["spec"]["priority"], pods[1]["spec"]["priority"] = None, float("nan")
    f = write(tmp_path / "pods.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}))
    with pytest.raises(InvalidObjectError) as info:
        load_manifests([f])
    assert (
        str(info.value)
        == f'{f} items[1]: Pod "default/p1": spec.priority: Invalid value: nan: must be an integer'
    )


def test_empty_file(tmp_path: Path) -> None:
    f = write(tmp_path / "e.yaml", "---\n# nothing\n")
    assert load_manifests([f]) == []


def test_large_json_list_is_decoded_once_with_the_collector_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """15000 pods in one JSON List: every item loaded, in order, defaulted and attributed; the file goes
    through the fast decoder only (the slow json.loads fallback, kept for error lines, never runs) and the
    cyclic collector stays paused while the objects are built."""
    items: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"pod-{i}", "labels": {"app": f"a{i % 50}"}},
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "resources": {"requests": {"cpu": f"{100 + i % 900}m", "memory": "64Mi"}},
                    }
                ],
                "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
            },
        }
        for i in range(15000)
    ]
    f = write(tmp_path / "big.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    slow_decodes: list[str] = []
    json_loads = json.loads
    monkeypatch.setattr(json, "loads", lambda text, **kw: slow_decodes.append(text) or json_loads(text, **kw))
    gc.collect()  # empty generations: a collection now could only come from the load's allocations
    collections = sum(g["collections"] for g in gc.get_stats())
    ms = load_manifests([f])
    # paused, the ~10^5 allocations trigger at most the one collection that runs once it is back on
    # (left running, they would trigger one every 700)
    assert sum(g["collections"] for g in gc.get_stats()) - collections <= 1
    assert gc.isenabled()
    assert slow_decodes == []
    assert len(ms) == 15000
    assert [m.obj["metadata"]["name"] for m in ms] == [f"pod-{i}" for i in range(15000)]
    assert {m.obj["metadata"]["namespace"] for m in ms} == {"default"}
    assert ms[-1] == Manifest(
        {**items[-1], "metadata": {**items[-1]["metadata"], "namespace": "default"}}, f"{f} items[14999]"
    )
