"""kube's Priority admission on PriorityClasses: at most one globalDefault class."""

from __future__ import annotations

from typing import Any

import pytest

from berth.api.errors import Forbidden
from berth.store import MemoryStore
from berth.store.admission import PRIORITY_CLASS_KEY, pod_admission
from builders import make_pod


def _pc(name: str, value: int, default: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": default,
    }


def _store() -> MemoryStore:
    store = MemoryStore()
    store.add_admission(pod_admission(store))
    return store


def test_a_second_global_default_is_refused_on_create() -> None:
    store = _store()
    store.create(_pc("first", 10, default=True))
    with pytest.raises(Forbidden) as e:
        store.create(_pc("second", 20, default=True))
    assert str(e.value) == (
        'priorityclasses.scheduling.k8s.io "second" is forbidden: PriorityClass first is already marked as '
        "default. Only one default can exist"
    )
    assert (e.value.name, e.value.group, e.value.kind) == ("second", "scheduling.k8s.io", "priorityclasses")
    assert [c["metadata"]["name"] for c in store.list(PRIORITY_CLASS_KEY)[0]] == ["first"]


def test_marking_another_class_default_is_refused_and_the_default_itself_may_be_updated() -> None:
    store = _store()
    store.create(_pc("first", 10, default=True))
    store.create(_pc("second", 20))
    with pytest.raises(Forbidden, match="PriorityClass first is already marked as default"):
        store.patch(PRIORITY_CLASS_KEY, "", "second", {"globalDefault": True})
    updated = store.patch(PRIORITY_CLASS_KEY, "", "first", {"globalDefault": True, "description": "d"})
    assert (updated["globalDefault"], updated["description"]) == (True, "d")
    store.patch(PRIORITY_CLASS_KEY, "", "first", {"globalDefault": False})
    assert store.patch(PRIORITY_CLASS_KEY, "", "second", {"globalDefault": True})["globalDefault"] is True


def test_non_default_classes_and_pods_are_unaffected() -> None:
    store = _store()
    store.create(_pc("a", 1))
    store.create(_pc("b", 2))
    store.create(_pc("c", 3, default=True))
    pod = store.create(make_pod("p").obj())
    assert (pod["spec"]["priorityClassName"], pod["spec"]["priority"]) == ("c", 3)
