"""Admission defaults of Reservations (store/reservation_defaults.py) and how the store applies them."""

from typing import Any

import pytest

from berth.api.reservation import RESERVATION_KEY
from berth.store import MemoryStore
from berth.store.reservation_defaults import reservation_admission


def reservation(
    spec_extra: dict[str, Any] | None = None, status: dict[str, Any] | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "template": {"spec": {"containers": [{"name": "c"}]}},
        "owners": [{"object": {"name": "p"}}],
    }
    spec.update(spec_extra or {})
    obj: dict[str, Any] = {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "Reservation",
        "metadata": {"name": "r1"},
        "spec": spec,
    }
    if status is not None:
        obj["status"] = status
    return obj


@pytest.mark.parametrize(
    ("spec_extra", "status", "expected_spec", "expected_status"),
    [
        ({}, None, {"ttl": "24h", "allocateOnce": True}, {"phase": "Pending"}),
        (
            {"ttl": "1h", "allocateOnce": False},
            None,
            {"ttl": "1h", "allocateOnce": False},
            {"phase": "Pending"},
        ),
        ({"ttl": "0"}, None, {"ttl": "0", "allocateOnce": True}, {"phase": "Pending"}),
        # the CRD default applies whenever ttl is missing, also next to expires
        (
            {"expires": "2024-01-02T00:00:00Z"},
            None,
            {"expires": "2024-01-02T00:00:00Z", "ttl": "24h", "allocateOnce": True},
            {"phase": "Pending"},
        ),
        (
            {"preAllocationPolicy": {}},
            {"phase": "Available"},
            {
                "preAllocationPolicy": {"mode": "Default", "enableMultiple": False},
                "ttl": "24h",
                "allocateOnce": True,
            },
            {"phase": "Available"},
        ),
        ({}, {}, {"ttl": "24h", "allocateOnce": True}, {"phase": "Pending"}),
    ],
)
def test_defaults_on_create(
    spec_extra: dict[str, Any],
    status: dict[str, Any] | None,
    expected_spec: dict[str, Any],
    expected_status: dict[str, Any],
) -> None:
    admit = reservation_admission()
    obj = admit("CREATE", reservation(spec_extra, status), None)
    base = reservation()["spec"]
    assert obj["spec"] == {**base, **expected_spec}
    assert obj["status"] == expected_status


def test_update_defaults_spec_but_not_status() -> None:
    admit = reservation_admission()
    obj = admit("UPDATE", reservation({}, {"phase": ""}), None)
    assert obj["spec"]["ttl"] == "24h"
    assert obj["status"] == {"phase": ""}


def test_other_objects_pass_through() -> None:
    admit = reservation_admission()
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}}
    assert admit("CREATE", pod, None) == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {},
    }


def test_store_applies_defaults() -> None:
    store = MemoryStore()
    store.add_admission(reservation_admission())
    created = store.create(reservation())
    assert created["spec"]["ttl"] == "24h"
    assert created["spec"]["allocateOnce"] is True
    assert created["status"] == {"phase": "Pending"}
    assert store.get(RESERVATION_KEY, "", "r1")["spec"]["ttl"] == "24h"
