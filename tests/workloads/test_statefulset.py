"""The StatefulSet controller through ``berth simulate``: ordered names, OrderedReady and Parallel, scaling,
labels, claims and status."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kinds_helpers import node, pod_template, simulate, stateful_set

SLOW = pod_template("db", annotations={"berth.dev/startup": "30s"})
REVISION = "db-7b86685848"


def _scenario(*steps: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "spec": {"steps": list(steps)},
    }


def _scale(at: str, replicas: int) -> dict[str, Any]:
    ref = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "namespace": "default"}
    return {"at": at, "patch": [{**ref, "patch": {"spec": {"replicas": replicas}}}]}


def test_ordered_ready_creates_one_pod_at_a_time(tmp_path: Path) -> None:
    run = simulate(tmp_path, [node("n1"), node("n2"), stateful_set("db", 3, template=SLOW)], "--until", "45s")
    assert run.exit_code == 0, run.stderr
    # db-0 starts at 0s and is Ready at 30s; only then db-1 is made; db-2 waits for db-1
    assert run.placements("db-") == {"db-0": "n2", "db-1": "n1"}
    created = {p["metadata"]["name"]: p["metadata"]["creationTimestamp"] for p in run.objects("Pod")}
    assert created == {"db-0": "2024-01-01T00:00:00Z", "db-1": "2024-01-01T00:00:30Z"}
    assert run.get("StatefulSet", "db")["status"] == {
        "observedGeneration": 1,
        "replicas": 2,
        "readyReplicas": 1,
        "currentReplicas": 2,
        "updatedReplicas": 2,
        "currentRevision": REVISION,
        "updateRevision": REVISION,
        "collisionCount": 0,
        "availableReplicas": 1,
    }
    assert run.messages("db") == [
        ("SuccessfulCreate", "create Pod db-0 in StatefulSet db successful"),
        ("SuccessfulCreate", "create Pod db-1 in StatefulSet db successful"),
    ]


def test_parallel_creates_every_pod_at_once(tmp_path: Path) -> None:
    sts = stateful_set("db", 3, template=SLOW, podManagementPolicy="Parallel")
    run = simulate(tmp_path, [node("n1"), node("n2"), sts], "--until", "45s")
    assert run.exit_code == 0, run.stderr
    assert run.placements("db-") == {"db-0": "n2", "db-1": "n1", "db-2": "n2"}
    status = run.get("StatefulSet", "db")["status"]
    assert (status["replicas"], status["readyReplicas"], status["availableReplicas"]) == (3, 3, 3)


def test_pods_carry_the_set_identity(tmp_path: Path) -> None:
    claim = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    sts = stateful_set("db", 1, volumeClaimTemplates=[claim], ordinals={"start": 5})
    run = simulate(tmp_path, [node("n1"), sts])
    assert run.exit_code == 0, run.stderr
    pod = run.get("Pod", "db-5")
    assert pod["metadata"]["labels"] == {
        "app": "db",
        "controller-revision-hash": run.get("StatefulSet", "db")["status"]["updateRevision"],
        "statefulset.kubernetes.io/pod-name": "db-5",
        "apps.kubernetes.io/pod-index": "5",
    }
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("db-5", "db")
    assert pod["spec"]["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-5"}}]
    (owner,) = pod["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("StatefulSet", "db", True)
    pvc = run.get("PersistentVolumeClaim", "data-db-5")
    assert pvc["metadata"]["labels"] == {"app": "db"}
    assert pvc["spec"]["resources"] == {"requests": {"storage": "1Gi"}}


def test_scale_down_deletes_the_highest_ordinal_first(tmp_path: Path) -> None:
    docs = [node("n1"), node("n2"), stateful_set("db", 3), _scenario(_scale("1m", 1))]
    run = simulate(tmp_path, docs, "--until", "3m")
    assert run.exit_code == 0, run.stderr
    assert run.placements("db-") == {"db-0": "n2"}
    deletes = [m for r, m in run.messages("db") if r == "SuccessfulDelete"]
    assert deletes == [
        "delete Pod db-2 in StatefulSet db successful",
        "delete Pod db-1 in StatefulSet db successful",
    ]
    assert run.get("StatefulSet", "db")["status"]["replicas"] == 1


def test_a_deleted_pod_is_made_again_with_the_same_name(tmp_path: Path) -> None:
    delete = {
        "at": "1m",
        "delete": [{"apiVersion": "v1", "kind": "Pod", "name": "db-1", "namespace": "default"}],
    }
    run = simulate(
        tmp_path, [node("n1"), node("n2"), stateful_set("db", 2), _scenario(delete)], "--until", "2m"
    )
    assert run.exit_code == 0, run.stderr
    assert sorted(run.placements("db-")) == ["db-0", "db-1"]
    # the old db-1 terminates gracefully (30 s); the name is free, and the new db-1 made, only then
    assert run.get("Pod", "db-1")["metadata"]["creationTimestamp"] == "2024-01-01T00:01:30Z"


def test_template_change_rolls_from_the_highest_ordinal(tmp_path: Path) -> None:
    ref = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "namespace": "default"}
    image = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {"name": "c", "image": "img:2", "resources": {"requests": {"cpu": "100m"}}}
                    ]
                }
            }
        }
    }
    docs = [
        node("n1"),
        node("n2"),
        stateful_set("db", 2),
        _scenario({"at": "1m", "patch": [{**ref, "patch": image}]}),
    ]
    run = simulate(tmp_path, docs, "--until", "3m")
    assert run.exit_code == 0, run.stderr
    deletes = [m for r, m in run.messages("db") if r == "SuccessfulDelete"]
    assert deletes == [
        "delete Pod db-1 in StatefulSet db successful",
        "delete Pod db-0 in StatefulSet db successful",
    ]
    images = {p["metadata"]["name"]: p["spec"]["containers"][0]["image"] for p in run.objects("Pod")}
    assert images == {"db-0": "img:2", "db-1": "img:2"}
    status = run.get("StatefulSet", "db")["status"]
    assert status["currentRevision"] == status["updateRevision"]
    assert (status["currentReplicas"], status["updatedReplicas"]) == (2, 2)
    history = sorted((r["revision"], r["metadata"]["name"]) for r in run.objects("ControllerRevision"))
    assert [n for n, _ in history] == [1, 2] and history[1][1] == status["updateRevision"]
    first = run.get("ControllerRevision", history[0][1])
    assert first["metadata"]["labels"] == {"app": "db", "controller.kubernetes.io/hash": history[0][1][3:]}
    assert first["data"]["spec"]["template"]["$patch"] == "replace"
    assert [r["kind"] for r in first["metadata"]["ownerReferences"]] == ["StatefulSet"]


def test_invalid_stateful_set_is_refused(tmp_path: Path) -> None:
    run = simulate(tmp_path, [stateful_set("db", 1, podManagementPolicy="Random")])
    assert run.exit_code == 2
    assert (
        'spec.podManagementPolicy: Unsupported value: "Random": supported values: "OrderedReady", "Parallel"'
        in run.stderr
    )


def test_an_orphan_with_a_member_name_is_adopted(tmp_path: Path) -> None:
    orphan = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "db-0", "labels": {"app": "db"}},
        "spec": {"containers": [{"name": "c", "image": "old"}]},
    }
    stranger = {**orphan, "metadata": {"name": "other-0", "labels": {"app": "db"}}}
    # OnDelete: the adopted pod (of no known revision) is not rolled
    run = simulate(
        tmp_path, [node("n1"), orphan, stranger, stateful_set("db", 2, updateStrategy={"type": "OnDelete"})]
    )
    assert run.exit_code == 0, run.stderr
    pods = {p["metadata"]["name"]: p for p in run.objects("Pod")}
    assert sorted(pods) == ["db-0", "db-1", "other-0"]
    assert pods["db-0"]["spec"]["containers"][0]["image"] == "old"  # adopted, not made again
    assert [r["name"] for r in pods["db-0"]["metadata"]["ownerReferences"]] == ["db"]
    assert "ownerReferences" not in pods["other-0"]["metadata"]
    assert [m for _, m in run.messages("db")] == ["create Pod db-1 in StatefulSet db successful"]
