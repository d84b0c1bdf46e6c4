"""`berth rbac`: the exact objects it prints, and that they allow every request `berth run` makes.

The second test records, with a transport between the client and a real `berth serve --api-only`, each request
a `berth run` core makes (preflight, informers, leader election, Events, bindings, preemption, a Reservation, an
ElasticQuota, a gang, a PodMigrationJob and a descheduler's eviction), turns each into the (verb, group,
resource, subresource, namespace, name) the API server's RBAC authorizer checks, and asserts the printed
ClusterRole or Role allows it.
"""

from __future__ import annotations

import json
import shutil
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from run_helpers import Served, eventually, running
from typer.testing import CliRunner

from berth.cli import app
from berth.controlplane.run import OPTIONAL_KINDS, Runner, RunOptions, followed_kinds
from berth.descheduler.setup import read_policy
from berth.remote.client import KubeClient
from berth.remote.eventsink import EventSink
from berth.remote.mirror import ClusterMirror
from berth.remote.preflight import check_cluster, serves
from berth.remote.store import RemoteStore

Obj = dict[str, Any]
READ = ["get", "list", "watch"]
PLUGIN_GROUPS = ["scheduling.x-k8s.io", "scheduling.sigs.k8s.io"]
KOORD = "scheduling.koordinator.sh"


def _rbac(*args: str) -> list[Obj]:
    result = CliRunner().invoke(app, ["rbac", *args])
    assert result.exit_code == 0, result.stderr
    if "json" in args:
        doc = json.loads(result.stdout)
        assert (doc["apiVersion"], doc["kind"]) == ("v1", "List")
        return list(doc["items"])
    return list(yaml.safe_load_all(result.stdout))


def _rule(groups: list[str], resources: list[str], verbs: list[str], names: list[str] | None = None) -> Obj:
    rule: Obj = {"apiGroups": groups, "resources": resources}
    if names:
        rule["resourceNames"] = names
    return {**rule, "verbs": verbs}


CLUSTER_RULES = [
    _rule(["", "events.k8s.io"], ["events"], ["create", "patch"]),
    _rule([""], ["nodes", "namespaces", "services", "replicationcontrollers"], READ),
    _rule([""], ["pods"], [*READ, "delete", "patch"]),
    _rule([""], ["pods/binding", "pods/eviction"], ["create"]),
    _rule([""], ["pods/status"], ["patch"]),
    _rule(["scheduling.k8s.io"], ["priorityclasses"], READ),
    _rule(["policy"], ["poddisruptionbudgets"], READ),
    _rule(["apps"], ["replicasets", "deployments", "statefulsets"], READ),
    _rule([KOORD], ["reservations"], [*READ, "create", "update", "delete"]),
    _rule([KOORD], ["reservations/status"], ["update"]),
    _rule([KOORD], ["podmigrationjobs"], [*READ, "create", "update"]),
    _rule([KOORD], ["podmigrationjobs/status"], ["update"]),
    _rule(PLUGIN_GROUPS, ["elasticquotas", "podgroups"], READ),
    _rule(PLUGIN_GROUPS, ["elasticquotas/status", "podgroups/status"], ["patch"]),
    _rule(["authentication.k8s.io"], ["tokenreviews"], ["create"]),
    _rule(["authorization.k8s.io"], ["subjectaccessreviews"], ["create"]),
]


def test_the_objects_printed() -> None:
    docs = _rbac()
    labels = {"app.kubernetes.io/name": "berth", "app.kubernetes.io/component": "scheduler"}
    sa = {"kind": "ServiceAccount", "name": "berth-scheduler", "namespace": "kube-system"}
    rbac = "rbac.authorization.k8s.io"
    assert docs == [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "berth-scheduler", "namespace": "kube-system", "labels": labels},
        },
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "berth-scheduler", "labels": labels},
            "rules": CLUSTER_RULES,
        },
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "berth-scheduler", "labels": labels},
            "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": "berth-scheduler"},
            "subjects": [sa],
        },
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "Role",
            "metadata": {"name": "berth-scheduler", "namespace": "kube-system", "labels": labels},
            "rules": [
                _rule(["coordination.k8s.io"], ["leases"], ["create"]),
                _rule(["coordination.k8s.io"], ["leases"], ["get", "update"], ["berth-scheduler"]),
            ],
        },
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "berth-scheduler", "namespace": "kube-system", "labels": labels},
            "roleRef": {"apiGroup": rbac, "kind": "Role", "name": "berth-scheduler"},
            "subjects": [sa],
        },
    ]
    assert _rbac("-o", "json") == docs


def test_namespace_and_name_are_chosen() -> None:
    docs = _rbac("--namespace", "scheduling", "--name", "berth")
    assert [(d["kind"], d["metadata"]["name"], d["metadata"].get("namespace")) for d in docs] == [
        ("ServiceAccount", "berth", "scheduling"),
        ("ClusterRole", "berth", None),
        ("ClusterRoleBinding", "berth", None),
        ("Role", "berth", "scheduling"),
        ("RoleBinding", "berth", "scheduling"),
    ]
    assert docs[2]["subjects"] == [{"kind": "ServiceAccount", "name": "berth", "namespace": "scheduling"}]
    assert docs[3]["rules"][1]["resourceNames"] == ["berth"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--name", "Berth"],
            "error: --name: invalid value \"Berth\": must be a DNS-1123 subdomain (lower case letters, digits, '-' and '.')\n",
        ),
        (
            ["--namespace", "kube.system"],
            "error: --namespace: invalid value \"kube.system\": must be a DNS-1123 label (lower case letters, digits and '-')\n",
        ),
    ],
)
def test_bad_names_are_refused(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["rbac", *args])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", message)


# ----- what berth run asks of the API server ---------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Access:
    """One request as RBAC sees it (the request attributes of a resource request)."""

    verb: str
    group: str
    resource: str
    subresource: str
    namespace: str
    name: str

    def __str__(self) -> str:
        what = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        where = f" in {self.namespace}" if self.namespace else ""
        return f"{self.verb} {what}.{self.group or 'core'} {self.name!r}{where}"


def access_of(method: str, path: str, params: httpx.QueryParams) -> Access:
    """The RBAC attributes of a request (the API server's RequestInfoFactory, for resource paths)."""
    parts = [p for p in path.split("/") if p]
    if parts[0] == "api":
        group, rest = "", parts[2:]
    else:
        assert parts[0] == "apis", path
        group, rest = parts[1], parts[3:]
    namespace = ""
    if rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if method == "GET":
        verb = "get" if name else ("watch" if params.get("watch") in ("1", "true") else "list")
    else:
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}[method]
        if method == "DELETE" and not name:
            verb = "deletecollection"
    return Access(verb, group, resource, subresource, namespace, name)


def allowed(docs: list[Obj], access: Access) -> bool:
    """Whether the ClusterRole, or the Role in its namespace, has a rule allowing `access`."""
    resource = f"{access.resource}/{access.subresource}" if access.subresource else access.resource
    for doc in docs:
        if doc["kind"] == "Role" and doc["metadata"]["namespace"] != access.namespace:
            continue
        if doc["kind"] not in ("Role", "ClusterRole"):
            continue
        for rule in doc["rules"]:
            names = rule.get("resourceNames")
            if (
                access.group in rule["apiGroups"]
                and resource in rule["resources"]
                and access.verb in rule["verbs"]
                and (not names or access.name in names)
            ):
                return True
    return False


class Recorder(httpx.BaseTransport):
    """Forwards every request, noting what RBAC would check of it."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.lock = threading.Lock()
        self.seen: set[Access] = set()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if len([p for p in path.split("/") if p]) > (2 if path.startswith("/api/") else 3):
            access = access_of(request.method, path, request.url.params)
            with self.lock:
                self.seen.add(access)
        # else discovery, which every authenticated user may read (system:discovery)
        return self.inner.handle_request(request)


POLICY = {
    "apiVersion": "descheduler/v1alpha2",
    "kind": "DeschedulerPolicy",
    "profiles": [
        {
            "name": "old",
            "pluginConfig": [
                {
                    "name": "PodLifeTime",
                    "args": {"maxPodLifeTimeSeconds": 1, "namespaces": {"include": ["old"]}},
                }
            ],
            "plugins": {"deschedule": {"enabled": ["PodLifeTime"]}},
        }
    ],
}


def _node(name: str, cpu: str) -> Obj:
    alloc = {"cpu": cpu, "memory": "16Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": {"allocatable": alloc}}


def _pod(name: str, ns: str, cpu: str, *, labels: dict[str, str] | None = None, **spec: Any) -> Obj:
    meta: Obj = {"name": name, "namespace": ns, "labels": labels or {}}
    if spec.pop("evictable", False):  # passes the migration controller's checks
        meta["annotations"] = {"descheduler.alpha.kubernetes.io/evict": "true"}
    owner = spec.pop("owner", None)
    if owner:
        meta["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": owner,
                "uid": f"uid-{owner}",
                "controller": True,
            }
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "schedulerName": "berth-scheduler",
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}],
            **spec,
        },
    }


def _get(served: Served, path: str) -> Obj:
    with served.client() as c:
        doc: Obj = c.get(path).json()
        return doc


def _dump(served: Served, recorder: Recorder) -> None:
    """What the cluster holds and what was asked of it (printed when the scenario does not get through)."""
    for p in _get(served, "/api/v1/pods")["items"]:
        print(
            "pod",
            p["metadata"]["namespace"],
            p["metadata"]["name"],
            p["spec"].get("nodeName"),
            p.get("status"),
        )
    for e in _get(served, "/api/v1/events")["items"]:
        print("event", e["involvedObject"]["name"], e["reason"], e["message"])
    print("requests", sorted(str(a) for a in recorder.seen))


def _scenario(served: Served) -> Iterator[str]:
    """Objects that make every component act; yields what to wait for after each step."""
    ns = {"apiVersion": "v1", "kind": "Namespace"}
    served.apply(
        *({**ns, "metadata": {"name": n}} for n in ("team", "gang", "old")),
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "low"},
            "value": 10,
        },
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        },
        _node("n1", "4"),
        _node("n2", "1"),
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "ElasticQuota",
            "metadata": {"name": "team", "namespace": "team"},
            "spec": {"min": {"cpu": "1"}, "max": {"cpu": "1"}},
        },
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": "pair", "namespace": "gang"},
            "spec": {"minMember": 2},
        },
        {
            "apiVersion": f"{KOORD}/v1alpha1",
            "kind": "Reservation",
            "metadata": {"name": "r1"},
            "spec": {
                "template": {
                    "metadata": {"namespace": "default"},
                    "spec": {
                        "schedulerName": "berth-scheduler",
                        "containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}],
                    },
                },
                "owners": [{"labelSelector": {"matchLabels": {"app": "owner"}}}],
                "ttl": "1h",
            },
        },
    )
    served.apply(
        _pod("q", "team", "500m"),
        *(_pod(f"g{i}", "gang", "250m", labels={"scheduling.x-k8s.io/pod-group": "pair"}) for i in range(2)),
        _pod("owner", "default", "500m", labels={"app": "owner"}),
        _pod("aged", "old", "250m", owner="aged"),
        _pod("moved", "default", "250m", owner="moved", evictable=True),
    )
    yield "the first pods are bound"
    served.apply(
        {
            "apiVersion": f"{KOORD}/v1alpha1",
            "kind": "PodMigrationJob",
            "metadata": {"name": "move"},
            "spec": {"podRef": {"namespace": "default", "name": "moved"}, "mode": "ReservationFirst"},
        },
        _pod("low", "default", "1500m", priorityClassName="low"),
        _pod("huge", "default", "64"),  # fits nowhere: FailedScheduling
    )
    yield "the aged pod evicted, the moved one migrated"
    served.apply(_pod("urgent", "default", "2500m", priorityClassName="high"))
    yield "urgent preempts lower-priority pods"


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")
def test_every_request_of_berth_run_is_allowed_by_the_printed_roles(tmp_path: Path) -> None:
    docs = _rbac()
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text(yaml.safe_dump(POLICY))
    with running(tmp_path / "data", "--api-only", log=tmp_path / "serve.log") as served:
        ctx = ssl.create_default_context(cafile=str(served.ca))
        recorder = Recorder(httpx.HTTPTransport(verify=ctx))
        client = KubeClient(served.url, token=served.token, transport=recorder)
        events_client = KubeClient(served.url, token=served.token, transport=recorder)
        options = RunOptions(
            descheduler=read_policy(str(policy_file)),
            descheduling_interval=1.0,
            lease_duration=3.0,
            renew_deadline=2.0,
            retry_period=0.5,
        )
        kinds = followed_kinds(options.controllers, True)
        missing = check_cluster(client, served.url, kinds, OPTIONAL_KINDS)
        sink = EventSink()
        mirror = ClusterMirror(
            RemoteStore(client),
            (*kinds, *(k for k in OPTIONAL_KINDS if k not in missing)),
            absent=missing,
            events=(RemoteStore(events_client), sink),
            events_v1=serves(client, "events.k8s.io/v1"),
            bind_workers=2,
        )
        runner = Runner(mirror, options)
        thread = threading.Thread(target=runner.run, daemon=True)
        thread.start()
        try:
            eventually(lambda: runner.plane is not None)
            steps = _scenario(served)
            next(steps)
            eventually(lambda: all(p["spec"].get("nodeName") for p in _get(served, "/api/v1/pods")["items"]))
            next(steps)

            def moved() -> bool:  # the descheduler evicted "aged", the PodMigrationJob "moved"
                names = {p["metadata"]["name"]: p for p in _get(served, "/api/v1/pods")["items"]}
                return (
                    "aged" not in names
                    and "moved" not in names
                    and bool(names["low"]["spec"].get("nodeName"))
                )

            eventually(moved)
            next(steps)

            def urgent_bound() -> bool:
                pods = {
                    p["metadata"]["name"]: p for p in _get(served, "/api/v1/namespaces/default/pods")["items"]
                }
                return bool(pods["urgent"]["spec"].get("nodeName"))

            eventually(urgent_bound, seconds=60)
        except AssertionError:
            _dump(served, recorder)
            raise
        finally:
            runner.stop()
            thread.join(30)
            sink.close()
            events_client.close()
            client.close()
        assert not thread.is_alive()
    assert runner.errors == 0
    denied = sorted(str(a) for a in recorder.seen if not allowed(docs, a))
    assert denied == []
    # every write granted was made, but for those this scenario does not reach
    made = {(a.verb, a.group, _resource(a)) for a in recorder.seen}
    made.add(("patch", "events.k8s.io", "events"))  # a repeated Event's series: made or not, as timing has it
    assert sorted(_granted_writes(docs) - made) == NOT_REACHED


NOT_REACHED = [
    ("create", "", "events"),  # v1 Events: for a server without events.k8s.io/v1
    ("create", "authentication.k8s.io", "tokenreviews"),  # /metrics read with another token than berth run's
    ("create", "authorization.k8s.io", "subjectaccessreviews"),
    (
        "create",
        "scheduling.koordinator.sh",
        "podmigrationjobs",
    ),  # the descheduler's MigrationController evictor
    ("delete", "scheduling.koordinator.sh", "reservations"),  # a Reservation's expiry or a migration's end
    ("patch", "", "events"),  # (v1 Events)
    ("patch", "", "pods"),  # pre-allocated reservations, recorded explanations
    ("patch", "scheduling.sigs.k8s.io", "elasticquotas/status"),  # the older group, not served here
    ("patch", "scheduling.sigs.k8s.io", "podgroups/status"),
    ("update", "scheduling.koordinator.sh", "reservations"),  # a migration labels its Reservation
]


def _resource(a: Access) -> str:
    return f"{a.resource}/{a.subresource}" if a.subresource else a.resource


def _granted_writes(docs: list[Obj]) -> set[tuple[str, str, str]]:
    """(verb, group, resource) of every write a rule of the roles grants."""
    out: set[tuple[str, str, str]] = set()
    for doc in docs:
        for rule in doc.get("rules") or ():
            for verb in rule["verbs"]:
                if verb in ("get", "list", "watch"):
                    continue
                out |= {(verb, g, r) for g in rule["apiGroups"] for r in rule["resources"]}
    return out
