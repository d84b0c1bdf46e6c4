"""NodeAffinity: nodeSelector + required affinity filter, PreFilter node names, preferred-term scoring, args."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from plugin_helpers import new_state, score_all

from berth.scheduler.framework import Code, ConfigError, PreFilterResult
from berth.scheduler.plugins.nodeaffinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NodeAffinity,
    new,
    parse_args,
)
from builders import affinity_preferred, affinity_required, expr, make_node, make_pod, make_table

NAME_FIELD = "metadata.name"


def _fields(*reqs: dict[str, Any]) -> dict[str, Any]:
    return {"matchFields": list(reqs)}


def _exprs(*reqs: dict[str, Any]) -> dict[str, Any]:
    return {"matchExpressions": list(reqs)}


@pytest.mark.parametrize(
    ("selector", "affinity", "labels", "fits"),
    [
        pytest.param({"foo": "bar"}, None, {}, False, id="missing labels"),
        pytest.param({"foo": "bar"}, None, {"foo": "bar"}, True, id="same labels"),
        pytest.param(
            {"foo": "bar"}, None, {"foo": "bar", "baz": "blah"}, True, id="node labels are superset"
        ),
        pytest.param({"foo": "bar", "baz": "blah"}, None, {"foo": "bar"}, False, id="node labels are subset"),
        pytest.param(
            None,
            affinity_required(_exprs(expr("foo", "In", "bar", "value2"))),
            {"foo": "bar"},
            True,
            id="In matches",
        ),
        pytest.param(
            None, affinity_required(_exprs(expr("kbps", "Gt", "0"))), {"kbps": "6000"}, True, id="Gt matches"
        ),
        pytest.param(
            None,
            affinity_required(_exprs(expr("kbps", "Gt", "0"))),
            {"kbps": "abc"},
            False,
            id="Gt non-integer",
        ),
        pytest.param(
            None, affinity_required(_exprs(expr("kbps", "Lt", "10"))), {"kbps": "-5"}, True, id="Lt matches"
        ),
        pytest.param(
            None, affinity_required(_exprs(expr("kbps", "Lt", "10"))), {}, False, id="Lt missing label"
        ),
        pytest.param(
            None,
            affinity_required(_exprs(expr("mem", "NotIn", "DDR", "DDR2"))),
            {"mem": "DDR3"},
            True,
            id="NotIn matches",
        ),
        pytest.param(
            None, affinity_required(_exprs(expr("mem", "NotIn", "DDR"))), {}, True, id="NotIn absent key"
        ),
        pytest.param(
            None,
            affinity_required(_exprs(expr("GPU", "Exists"))),
            {"GPU": "NVIDIA-GRID-K1"},
            True,
            id="Exists matches",
        ),
        pytest.param(
            None,
            affinity_required(_exprs(expr("GPU", "DoesNotExist"))),
            {"GPU": "x"},
            False,
            id="DoesNotExist",
        ),
        pytest.param(
            None,
            affinity_required(_exprs(expr("foo", "In", "value1", "value2"))),
            {"foo": "bar"},
            False,
            id="In doesn't match",
        ),
        pytest.param(
            None,
            {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": None}}},
            {"foo": "bar"},
            False,
            id="nil terms",
        ),
        pytest.param(None, affinity_required(), {"foo": "bar"}, False, id="empty terms"),
        pytest.param(
            None, affinity_required({"matchExpressions": []}), {"foo": "bar"}, False, id="empty term"
        ),
        pytest.param(None, None, {"foo": "bar"}, True, id="no affinity"),
        pytest.param(
            None,
            affinity_required(_exprs(expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER"))),
            {"GPU": "AMD"},
            False,
            id="ANDed expressions fail",
        ),
        pytest.param(
            None,
            affinity_required(_exprs(expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER"))),
            {"GPU": "NVIDIA"},
            True,
            id="ANDed expressions match",
        ),
        pytest.param(
            None,
            affinity_required(
                _exprs(expr("foo", "In", "bar")), _exprs(expr("diffkey", "In", "wrong", "value2"))
            ),
            {"foo": "bar"},
            True,
            id="ORed terms",
        ),
        pytest.param(
            {"foo": "bar"},
            affinity_required(_exprs(expr("foo", "Exists"))),
            {"foo": "bar"},
            True,
            id="selector and affinity",
        ),
        pytest.param(
            {"foo": "bar"},
            affinity_required(_exprs(expr("foo", "DoesNotExist"))),
            {"foo": "bar"},
            False,
            id="selector matches, affinity doesn't",
        ),
        pytest.param(
            None,
            affinity_required(_exprs(expr("foo", "Bogus", "bar"))),
            {"foo": "bar"},
            False,
            id="bad operator",
        ),
        pytest.param(
            None,
            affinity_required(_fields(expr(NAME_FIELD, "In", "n"))),
            {},
            True,
            id="matchFields name matches",
        ),
        pytest.param(
            None,
            affinity_required(_fields(expr(NAME_FIELD, "In", "other"))),
            {},
            False,
            id="matchFields name differs",
        ),
        pytest.param(
            None,
            affinity_required(_fields(expr(NAME_FIELD, "NotIn", "other"))),
            {},
            True,
            id="matchFields NotIn",
        ),
        pytest.param(
            None,
            affinity_required({**_fields(expr(NAME_FIELD, "In", "n")), **_exprs(expr("foo", "In", "bar"))}),
            {"foo": "baz"},
            False,
            id="fields and expressions ANDed",
        ),
        pytest.param(
            None,
            affinity_required(_fields(expr(NAME_FIELD, "In", "other")), _exprs(expr("foo", "In", "bar"))),
            {"foo": "bar"},
            True,
            id="fields or expressions ORed",
        ),
    ],
)
def test_filter(
    selector: dict[str, str] | None, affinity: dict[str, Any] | None, labels: dict[str, str], fits: bool
) -> None:
    plugin = new({}, None)  # type: ignore[arg-type]
    table = make_table([make_node("n").label(labels).obj(), make_node("zz").label(unrelated="x").obj()])
    pod = make_pod("p").node_selector(selector).affinity(affinity).info()
    state = new_state()
    status = plugin.filter(state, pod, table.info(0))
    verdicts = plugin.filter_nodes(state, pod, table)
    assert verdicts.status_of(0) == status
    assert verdicts.status_of(1) == plugin.filter(state, pod, table.info(1))
    if fits:
        assert status.is_success()
    else:
        assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == (ERR_REASON_POD,)


@pytest.mark.parametrize(
    ("affinity", "selector", "result", "code"),
    [
        pytest.param(None, None, None, Code.SKIP, id="nothing to check"),
        pytest.param(None, {"a": "b"}, None, Code.SUCCESS, id="selector only"),
        pytest.param(
            affinity_required(_fields(expr(NAME_FIELD, "In", "node1"))),
            None,
            frozenset({"node1"}),
            Code.SUCCESS,
            id="one term names a node",
        ),
        pytest.param(
            affinity_required(
                _fields(expr(NAME_FIELD, "In", "node1")), _fields(expr(NAME_FIELD, "In", "node2"))
            ),
            None,
            frozenset({"node1", "node2"}),
            Code.SUCCESS,
            id="terms union",
        ),
        pytest.param(
            affinity_required(_fields(expr(NAME_FIELD, "In", "node1")), _exprs(expr("foo", "Exists"))),
            None,
            None,
            Code.SUCCESS,
            id="a term without names keeps every node",
        ),
        pytest.param(
            affinity_required(_fields(expr(NAME_FIELD, "In", "node1"), expr(NAME_FIELD, "In", "node2"))),
            None,
            None,
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            id="conflicting names",
        ),
        pytest.param(
            affinity_required(_fields(expr(NAME_FIELD, "NotIn", "node1"))),
            None,
            None,
            Code.SUCCESS,
            id="NotIn ignored",
        ),
        pytest.param(affinity_required(), None, None, Code.SUCCESS, id="no terms"),
    ],
)
def test_pre_filter(
    affinity: dict[str, Any] | None,
    selector: dict[str, str] | None,
    result: frozenset[str] | None,
    code: Code,
) -> None:
    plugin = new({}, None)  # type: ignore[arg-type]
    pod = make_pod("p").node_selector(selector).affinity(affinity).info()
    r, status = plugin.pre_filter(new_state(), pod, make_table([]))
    assert status.code == code
    assert (r.node_names if r is not None else None) == result
    if code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        assert status.reasons == (ERR_REASON_CONFLICT,)
    if result is not None:
        assert r == PreFilterResult(result)


ADDED = {
    "addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [_exprs(expr("zone", "In", "z1"))]
        }
    }
}


def test_added_affinity_filter() -> None:
    plugin = new(ADDED, None)  # type: ignore[arg-type]
    table = make_table(
        [
            make_node("a").label(zone="z1", foo="bar").obj(),
            make_node("b").label(zone="z2", foo="bar").obj(),
            make_node("c").label(zone="z1").obj(),
        ]
    )
    pod = make_pod("p").node_selector(foo="bar").info()
    state = new_state()
    _, pre = plugin.pre_filter(state, pod, table)
    assert pre.is_success()
    statuses = [plugin.filter(state, pod, table.info(i)) for i in range(3)]
    assert [s.reasons for s in statuses] == [(), (ERR_REASON_ENFORCED,), (ERR_REASON_POD,)]
    v = plugin.filter_nodes(state, pod, table)
    assert [v.status_of(i) for i in range(3)] == statuses
    # a pod without constraints is not skipped when addedAffinity is set
    _, pre = plugin.pre_filter(state, make_pod("q").info(), table)
    assert pre.is_success()


AFF1 = affinity_preferred((2, _exprs(expr("foo", "In", "bar"))))
AFF2 = affinity_preferred(
    (2, _exprs(expr("foo", "In", "bar"))),
    (4, _exprs(expr("key", "In", "value"))),
    (5, _exprs(expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1"))),
)


@pytest.mark.parametrize(
    ("affinity", "node_labels", "raw", "normalized"),
    [
        pytest.param(
            AFF1,
            [{"key": "value"}, {"key": "value"}, {"key": "value"}],
            [0, 0, 0],
            [0, 0, 0],
            id="no node matches",
        ),
        pytest.param(
            AFF1, [{"foo": "bar"}, {"key": "value"}, {"az": "az1"}], [2, 0, 0], [100, 0, 0], id="one matches"
        ),
        pytest.param(
            AFF2,
            [{"foo": "bar"}, {"foo": "bar", "key": "value", "az": "az1"}, {"key": "value"}],
            [2, 11, 4],
            [18, 100, 36],
            id="different priorities",
        ),
    ],
)
def test_score(
    affinity: dict[str, Any], node_labels: list[dict[str, str]], raw: list[int], normalized: list[int]
) -> None:
    plugin = new({}, None)  # type: ignore[arg-type]
    table = make_table([make_node(f"n{i}").label(labels).obj() for i, labels in enumerate(node_labels)])
    pod = make_pod("p").affinity(affinity).info()
    state, scores = score_all(plugin, pod, table)
    assert scores.tolist() == raw
    assert plugin.normalize_scores(state, pod, scores).tolist() == normalized


def test_pre_score_skips_without_preferred_terms() -> None:
    plugin = new({}, None)  # type: ignore[arg-type]
    assert plugin.pre_score(new_state(), make_pod("p").info(), make_table([]), np.arange(0)).is_skip()
    added = new(
        {
            "addedAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 3, "preference": _exprs(expr("z", "Exists"))}
                ]
            }
        },
        None,  # type: ignore[arg-type]
    )
    table = make_table([make_node("a").label(z="1", foo="bar").obj(), make_node("b").obj()])
    pod = make_pod("p").affinity(AFF1).info()
    state = new_state()
    idx = np.arange(2, dtype=np.int64)
    assert added.pre_score(state, make_pod("q").info(), table, idx).is_success()
    assert added.score_nodes(state, pod, table, idx).tolist() == [5, 0]
    assert [added.score(state, pod, table.info(i)) for i in range(2)] == [5, 0]


def test_args_parsing() -> None:
    assert parse_args({}).added_required is None
    a = parse_args(ADDED)
    assert a.added_required is not None and len(a.added_required.terms) == 1
    assert isinstance(new(ADDED, None), NodeAffinity)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}},
            "NodeAffinity: addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: "
            "Required value: must have at least one node selector term",
        ),
        (
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [_exprs(expr("a", "Foo", "b"))]
                    }
                }
            },
            "NodeAffinity: addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            '.matchExpressions[0].operator: Invalid value: "Foo": not a valid selector operator',
        ),
        (
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [_exprs(expr("a", "In"))]
                    }
                }
            },
            "NodeAffinity: addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            ".matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
        ),
        (
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [_fields(expr("spec.x", "In", "b"))]
                    }
                }
            },
            "NodeAffinity: addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            '.matchFields[0].key: Invalid value: "spec.x": not a valid field selector key',
        ),
        (
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": {}}]
                }
            },
            "NodeAffinity: addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: "
            "must be in the range 1-100",
        ),
        (
            {"addedAffinity": {"bogus": 1}},
            'decoding args for plugin NodeAffinity: strict decoding error: unknown field "addedAffinity.bogus"',
        ),
    ],
)
def test_args_errors(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_args(args)
    assert str(exc.value) == message
