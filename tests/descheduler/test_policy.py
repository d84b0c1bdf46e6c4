"""DeschedulerPolicy v1alpha2 loading: defaults, case-sensitive field names (the strict codec), and every refusal naming
the profile, the plugin and the field."""

from __future__ import annotations

from typing import Any

import pytest

from berth.descheduler.args import PolicyError
from berth.descheduler.evictor import Limits
from berth.descheduler.policy import load_policy
from berth.descheduler.registry import builtin_plugins


def policy(*profiles: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {
        "apiVersion": "descheduler/v1alpha2",
        "kind": "DeschedulerPolicy",
        "profiles": list(profiles),
        **top,
    }


def profile(name: str = "p", configs: list[dict[str, Any]] | None = None, **plugins: Any) -> dict[str, Any]:
    return {"name": name, "pluginConfig": configs or [], "plugins": plugins}


def load(doc: dict[str, Any]) -> Any:
    return load_policy(doc, builtin_plugins(), source="policy.yaml")


def test_default_evictor_is_added_first_at_both_filter_points() -> None:
    got = load(
        policy(
            profile(
                configs=[{"name": "PodLifeTime", "args": {"maxPodLifeTimeSeconds": 60}}],
                deschedule={"enabled": ["PodLifeTime"]},
            )
        )
    )
    (p,) = got.profiles
    assert p.enabled("filter") == ("DefaultEvictor",)
    assert p.enabled("preEvictionFilter") == ("DefaultEvictor",)
    assert p.enabled("deschedule") == ("PodLifeTime",)
    assert set(p.args) == {"PodLifeTime", "DefaultEvictor"}


def test_limits_grace_and_node_selector() -> None:
    got = load(
        policy(
            profile(),
            maxNoOfPodsToEvictPerNode=2,
            maxNoOfPodsToEvictPerNamespace=3,
            maxNoOfPodsToEvictTotal=4,
            gracePeriodSeconds=0,
            nodeSelector="pool=a",
        )
    )
    assert got.limits == Limits(per_node=2, per_namespace=3, total=4)
    assert got.grace_period_seconds == 0
    assert got.node_selector is not None and got.node_selector.matches({"pool": "a"})
    assert not got.node_selector.matches({"pool": "b"})


def test_field_names_are_case_sensitive_as_the_strict_codec() -> None:
    doc = policy(profile(configs=[{"name": "PodLifeTime", "args": {"maxPodLifeTimeSeconds": 60}}]))
    doc["profiles"][0]["plugins"] = {"preevictionfilter": {"enabled": []}}
    with pytest.raises(PolicyError) as e:
        load(doc)
    assert str(e.value) == (
        'policy.yaml: profile "p": plugins: strict decoding error: unknown field "preevictionfilter" '
        '(did you mean "preEvictionFilter"?)'
    )


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            policy(profile(deschedule={"enabled": ["PodLifeTim"]})),
            "policy.yaml: profile \"p\": profile 'p' configures deschedule extension point of non-existing "
            "plugins: 'PodLifeTim' (did you mean \"PodLifeTime\"?)",
        ),
        (
            policy(profile(deschedule={"enabled": ["PodLifeTime"]})),
            'policy.yaml: profile "p": plugin "PodLifeTime" is enabled at deschedule but has no pluginConfig '
            "entry (unable to find 'PodLifeTime' plugin config)",
        ),
        (
            policy(profile(configs=[{"name": "Nope"}])),
            "policy.yaml: profile \"p\": plugin 'Nope' in pluginConfig not registered",
        ),
        (
            policy(profile(configs=[{"name": "PodLifeTime", "args": {"maxPodLifeTimeSecond": 5}}])),
            'policy.yaml: profile "p": plugin "PodLifeTime": args: strict decoding error: unknown field '
            '"maxPodLifeTimeSecond" (did you mean "maxPodLifeTimeSeconds"?)',
        ),
        (
            policy(profile(), maxNoOfPodsToEvictPerNode=-1),
            "policy.yaml: DeschedulerPolicy.maxNoOfPodsToEvictPerNode: must be at least 0, not -1",
        ),
        (
            policy(profile(), maxNoOfPodsToEvictTotl=1),
            'policy.yaml: DeschedulerPolicy: strict decoding error: unknown field "maxNoOfPodsToEvictTotl" '
            '(did you mean "maxNoOfPodsToEvictTotal"?)',
        ),
        (
            {"apiVersion": "descheduler/v1alpha1", "kind": "DeschedulerPolicy", "strategies": {}},
            "policy.yaml: DeschedulerPolicy.apiVersion: unsupported 'descheduler/v1alpha1': must be "
            "'descheduler/v1alpha2' (the v1alpha1 strategies format was removed upstream; write profiles)",
        ),
        (
            policy(profile(), profile()),
            "policy.yaml: profiles[1].name: duplicate profile name 'p'",
        ),
        (
            policy(
                profile(
                    balance={"enabled": ["PodLifeTime"]},
                    configs=[{"name": "PodLifeTime", "args": {"maxPodLifeTimeSeconds": 1}}],
                )
            ),
            "policy.yaml: profile \"p\": profile 'p' configures balance extension point of non-existing "
            "plugins: 'PodLifeTime'",
        ),
        (
            policy(profile(), nodeSelector="a in (b"),
            "policy.yaml: DeschedulerPolicy.nodeSelector: invalid selector 'a in (b'",
        ),
    ],
)
def test_bad_policies_name_the_place(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(PolicyError) as e:
        load(doc)
    assert str(e.value).startswith(message)
