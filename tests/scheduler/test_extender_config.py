"""The ``extenders`` of a KubeSchedulerConfiguration: fields, defaults and kube's validation messages."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from extender_server import running

from berth.scheduler.extender import Extenders, HTTPExtender
from berth.scheduler.framework.config import ConfigError, parse_config
from berth.scheduler.framework.extender_config import (
    DEFAULT_EXTENDER_TIMEOUT,
    ExtenderConfig,
    ExtenderTLSConfig,
    ManagedResource,
)
from berth.scheduler.framework.nodetable import NodeTable
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.status import SUCCESS, Code, Status
from berth.scheduler.plugins.defaultpreemption.extenders import call_extenders
from berth.scheduler.plugins.defaultpreemption.selection import Candidate
from berth.scheduler.plugins.defaultpreemption.victims import Victims
from builders import make_node, make_pod

URL = "http://127.0.0.1:8888/scheduler"


def doc(*extenders: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "extenders": list(extenders),
        **extra,
    }


def test_every_field_is_read(tmp_path: Path) -> None:
    ca = base64.b64encode(b"PEM CA").decode()
    cert, key = tmp_path / "c", tmp_path / "k"
    cert.write_text("cert")
    key.write_text("key")
    conf = parse_config(
        doc(
            {
                "urlPrefix": URL,
                "filterVerb": "filter",
                "preemptVerb": "preempt",
                "prioritizeVerb": "prioritize",
                "bindVerb": "bind",
                "weight": 3,
                "enableHTTPS": True,
                "tlsConfig": {
                    "serverName": "gpu.example.com",
                    "caData": ca,
                    "certFile": str(cert),
                    "keyFile": str(key),
                },
                "httpTimeout": "1m30s",
                "nodeCacheCapable": True,
                "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True}],
                "ignorable": True,
            }
        )
    )
    assert conf.extenders == [
        ExtenderConfig(
            url_prefix=URL,
            filter_verb="filter",
            preempt_verb="preempt",
            prioritize_verb="prioritize",
            bind_verb="bind",
            weight=3,
            enable_https=True,
            tls_config=ExtenderTLSConfig(
                server_name="gpu.example.com", cert_file=str(cert), key_file=str(key), ca_data=b"PEM CA"
            ),
            http_timeout=90.0,
            node_cache_capable=True,
            managed_resources=(ManagedResource("example.com/gpu", True),),
            ignorable=True,
        )
    ]


def test_defaults() -> None:
    (e,) = parse_config(doc({"urlPrefix": URL})).extenders
    assert e == ExtenderConfig(url_prefix=URL)
    assert e.http_timeout == DEFAULT_EXTENDER_TIMEOUT == 5.0
    assert parse_config(doc({"urlPrefix": URL, "httpTimeout": "0s"})).extenders[0].http_timeout == 5.0
    assert parse_config(None).extenders == []


def test_ignored_resources_reach_node_resources_fit_in_every_profile() -> None:
    conf = parse_config(
        doc(
            {"urlPrefix": URL, "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True}]},
            {"urlPrefix": URL, "managedResources": [{"name": "example.com/fpga"}]},
            profiles=[
                {"schedulerName": "a"},
                {
                    "schedulerName": "b",
                    "pluginConfig": [
                        {"name": "NodeResourcesFit", "args": {"ignoredResources": ["example.com/x"]}}
                    ],
                },
            ],
        )
    )
    assert [p.plugin_args["NodeResourcesFit"]["ignoredResources"] for p in conf.profiles] == [
        ["example.com/gpu"],
        ["example.com/gpu"],
    ]


@pytest.mark.parametrize(
    ("extenders", "message"),
    [
        (
            [{"urlPrefix": URL, "prioritizeVerb": "prioritize"}],
            "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it",
        ),
        (
            [{"urlPrefix": URL, "prioritizeVerb": "prioritize", "weight": -2}],
            "extenders[0].weight: Invalid value: -2: must have a positive weight applied to it",
        ),
        (
            [{"urlPrefix": URL, "bindVerb": "bind"}, {"urlPrefix": URL}, {"urlPrefix": URL, "bindVerb": "b"}],
            'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind',
        ),
        (
            [{"urlPrefix": URL, "managedResources": [{"name": "gpu"}]}],
            'extenders[0].managedResources[0].name: Invalid value: "gpu": is an invalid extended resource name',
        ),
        (
            [{"urlPrefix": URL, "managedResources": [{"name": "kubernetes.io/gpu"}]}],
            'extenders[0].managedResources[0].name: Invalid value: "kubernetes.io/gpu": '
            "is an invalid extended resource name",
        ),
        (
            [{"urlPrefix": URL, "managedResources": [{"name": "example.com/"}]}],
            'extenders[0].managedResources[0].name: Invalid value: "example.com/": name part must be non-empty',
        ),
        (
            [
                {"urlPrefix": URL, "managedResources": [{"name": "example.com/gpu"}]},
                {"urlPrefix": URL, "managedResources": [{"name": "example.com/gpu"}]},
            ],
            'extenders[1].managedResources[0].name: Invalid value: "example.com/gpu": '
            "duplicate extender managed resource name",
        ),
        ([{"filterVerb": "filter"}], "extenders[0].urlPrefix: Required value"),
        (
            [{"urlPrefix": "127.0.0.1:80"}],
            'extenders[0].urlPrefix: Invalid value: "127.0.0.1:80": must be an http:// or https:// URL',
        ),
        (
            [{"urlPrefix": URL, "httpTimeout": "5x"}],
            'extenders[0].httpTimeout: Invalid value: "5x": time: unknown unit "x" in duration "5x"',
        ),
        (
            [{"urlPrefix": URL, "httpTimeout": 5}],
            'extenders[0].httpTimeout: Invalid value: 5: must be a duration such as "5s"',
        ),
        (
            [{"urlPrefix": URL, "filterverb": "f"}],
            'strict decoding error: unknown field "extenders[0].filterverb" (did you mean "filterVerb"?)',
        ),
        (
            [{"urlPrefix": URL, "ignorable": "yes"}],
            'extenders[0].ignorable: Invalid value: "yes": must be a boolean',
        ),
        (
            [{"urlPrefix": URL, "tlsConfig": {"insecure": True, "caFile": "/ca"}}],
            "extenders[0].tlsConfig.insecure: Invalid value: true: "
            "specifying a root certificates file with the insecure flag is not allowed",
        ),
        (
            [{"urlPrefix": URL, "tlsConfig": {"caData": "not base64!"}}],
            'extenders[0].tlsConfig.caData: Invalid value: "not base64!": must be a base64-encoded string',
        ),
        (
            {"urlPrefix": URL},
            'extenders: Invalid value: {"urlPrefix": "http://127.0.0.1:8888/scheduler"}: must be a list',
        ),
    ],
)
def test_validation_names_the_field_and_value(extenders: Any, message: str) -> None:
    d = doc()
    d["extenders"] = extenders
    with pytest.raises(ConfigError) as e:
        parse_config(d)
    assert str(e.value) == message


def test_prioritize_without_weight_is_fine_without_prioritize_verb() -> None:
    (e,) = parse_config(doc({"urlPrefix": URL, "filterVerb": "filter"})).extenders
    assert e.weight == 0


def test_ignorable_extenders_are_called_last() -> None:
    made = Extenders(
        [
            ExtenderConfig(url_prefix="http://127.0.0.1:1/a", ignorable=True),
            ExtenderConfig(url_prefix="http://127.0.0.1:1/b"),
            ExtenderConfig(url_prefix="http://127.0.0.1:1/c", ignorable=True),
            ExtenderConfig(url_prefix="http://127.0.0.1:1/d"),
        ]
    )
    assert [e.name[-1] for e in made.all] == ["b", "d", "a", "c"]


def test_interest_follows_managed_resources() -> None:
    ext = HTTPExtender(
        ExtenderConfig(url_prefix=URL, managed_resources=(ManagedResource("example.com/gpu"),))
    )
    assert not ext.is_interested(make_pod("p").req(cpu="1").obj())
    assert ext.is_interested(make_pod("p").req(**{"example.com/gpu": "1"}).obj())
    assert ext.is_interested(make_pod("p").lim(**{"example.com/gpu": "1"}).obj())
    assert HTTPExtender(ExtenderConfig(url_prefix=URL)).is_interested(make_pod("p").obj())


def test_scores_are_scaled_by_weight_and_max_node_score() -> None:
    answers = [{"Host": "n1", "Score": 3}, {"Host": "n2", "Score": 10}, {"Host": "elsewhere", "Score": 10}]
    table = NodeTable()
    for n in ("n0", "n1", "n2"):
        table.set_node(make_node(n).capacity(cpu="1").obj())
    with (
        running({"prio": lambda body: (200, answers)}) as a,
        running({"prio": lambda body: (200, answers[:1])}) as b,
    ):
        made = Extenders(
            [
                ExtenderConfig(url_prefix=a.url, prioritize_verb="prio", weight=2),
                ExtenderConfig(url_prefix=b.url, prioritize_verb="prio", weight=5),
                ExtenderConfig(url_prefix=b.url, filter_verb="prio"),  # no prioritize verb: no call
            ]
        )
        pod = make_pod("p").info()
        got = made.scores(made.for_pod(pod), pod, table, np.array([0, 1, 2]))
    assert got is not None
    # n1: 3*2*10 + 3*5*10; n2: 10*2*10
    assert got.tolist() == [0, 210, 200]
    assert len(b.calls) == 1


class _PreemptHandle:
    def __init__(self, answer: dict[str, tuple[list[PodInfo], int]] | None, status: Status = SUCCESS) -> None:
        self.answer, self.status = answer, status
        self.sent: dict[str, tuple[list[PodInfo], int]] = {}

    def extender_preemption(
        self, pod: PodInfo, victims: dict[str, tuple[list[PodInfo], int]]
    ) -> tuple[dict[str, tuple[list[PodInfo], int]] | None, Status]:
        self.sent = victims
        return self.answer, self.status


def test_call_extenders_keeps_the_dry_run_order_and_the_extenders_victims() -> None:
    a, b, c = (make_pod(n).info() for n in "abc")
    candidates = [Candidate("n1", Victims((a,), 0)), Candidate("n2", Victims((b,), 1))]
    pod = make_pod("x").info()
    handle = _PreemptHandle({"n3": ([c], 0), "n2": ([b, c], 2)})
    kept, s = call_extenders(handle, pod, candidates)  # type: ignore[arg-type]
    assert s == SUCCESS
    assert handle.sent == {"n1": ([a], 0), "n2": ([b], 1)}
    assert kept == [Candidate("n2", Victims((b, c), 2)), Candidate("n3", Victims((c,), 0))]
    # no extender preempts: the candidates stay; an error is passed on
    assert call_extenders(_PreemptHandle(None), pod, candidates) == (candidates, SUCCESS)  # type: ignore[arg-type]
    failed = Status(Code.ERROR, ("boom",), "Extender")
    assert call_extenders(_PreemptHandle(None, failed), pod, candidates) == ([], failed)  # type: ignore[arg-type]
