"""Which fields each KubeSchedulerConfiguration version has (strict decoding, per version)."""

from __future__ import annotations

from typing import Any

import pytest

from berth.scheduler.framework.config import ConfigError, parse_config

GROUP = "kubescheduler.config.k8s.io"


def _doc(version: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{version}", "kind": "KubeSchedulerConfiguration", **fields}


@pytest.mark.parametrize(
    ("version", "fields", "unknown"),
    [
        ("v1", {"delayCacheUntilActive": True}, None),
        ("v1beta3", {"delayCacheUntilActive": True}, "delayCacheUntilActive"),
        ("v1beta2", {"healthzBindAddress": "0.0.0.0:10251", "metricsBindAddress": ""}, None),
        ("v1beta3", {"healthzBindAddress": "0.0.0.0:10251"}, "healthzBindAddress"),
        ("v1", {"metricsBindAddress": ""}, "metricsBindAddress"),
        ("v1beta3", {"profiles": [{"plugins": {"multiPoint": {}}}]}, None),
        ("v1beta2", {"profiles": [{"plugins": {"preEnqueue": {}}}]}, None),
        ("v1beta1", {"profiles": [{"plugins": {"preEnqueue": {}}}]}, "profiles[0].plugins.preEnqueue"),
        ("v1", {"profiles": [{"percentageOfNodesToScore": 50}]}, None),
        ("v1beta2", {"profiles": [{"percentageOfNodesToScore": 50}]}, "profiles[0].percentageOfNodesToScore"),
        (
            "v1",
            {"leaderElection": {"leaderElect": False, "leaseDuraton": "15s"}},
            "leaderElection.leaseDuraton",
        ),
        ("v1", {"clientConnection": {"kubeconfig": "k", "qps": 50, "burst": 100}}, None),
        (
            "v1",
            {"extenders": [{"urlPrefix": "http://x", "tlsConfig": {"insecure": True, "key": ""}}]},
            "extenders[0].tlsConfig.key",
        ),
    ],
)
def test_fields_per_version(version: str, fields: dict[str, Any], unknown: str | None) -> None:
    doc = _doc(version, **fields)
    if unknown is None:
        parse_config(doc)
        return
    with pytest.raises(ConfigError) as e:
        parse_config(doc)
    assert str(e.value).startswith(f'strict decoding error: unknown field "{unknown}"')


def test_every_unknown_field_is_listed_in_document_order() -> None:
    doc = _doc("v1", parallelisn=4, profiles=[{"schedulerNam": "a", "plugins": {"scor": {}}}])
    with pytest.raises(ConfigError) as e:
        parse_config(doc)
    assert str(e.value) == (
        'strict decoding error: unknown field "parallelisn" (did you mean "parallelism"?), '
        'unknown field "profiles[0].schedulerNam" (did you mean "schedulerName"?), '
        'unknown field "profiles[0].plugins.scor" (did you mean "score"?)'
    )


def test_the_deprecation_notice_is_returned_not_printed() -> None:
    assert parse_config(_doc("v1")).warnings == []
    assert parse_config(_doc("v1beta3")).warnings == [
        "KubeSchedulerConfiguration v1beta3 is deprecated in v1.26, will be removed in v1.29"
    ]
