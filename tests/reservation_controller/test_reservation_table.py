"""The Reservation table (kubectl get reservations): NAME, PHASE, AGE, NODE, TTL, EXPIRES."""

from typing import Any

from berth.sim.output import to_tables


def res(name: str, spec: dict[str, Any], status: dict[str, Any] | None, created: str) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "Reservation",
        "metadata": {"name": name, "creationTimestamp": created},
        "spec": spec,
    }
    if status is not None:
        obj["status"] = status
    return obj


def test_reservation_table() -> None:
    objects = [
        res(
            "reservation-demo",
            {"ttl": "1h"},
            {"phase": "Available", "nodeName": "node-0"},
            "2024-01-01T00:00:00Z",
        ),
        res(
            "r-pending",
            {"ttl": "24h", "expires": "2024-01-02T00:00:00Z"},
            {"phase": "Pending"},
            "2024-01-01T00:01:00Z",
        ),
        res("r-new", {}, None, "2024-01-01T00:01:28Z"),
    ]
    assert to_tables(objects, "2024-01-01T00:01:28Z") == (
        "NAME               PHASE       AGE   NODE     TTL   EXPIRES\n"
        "reservation-demo   Available   88s   node-0   1h\n"
        "r-pending          Pending     28s            24h   2024-01-02T00:00:00Z\n"
        "r-new                          0s\n"
    )


def test_reservation_table_wide_has_the_same_columns() -> None:
    objects = [res("r1", {"ttl": "0"}, {"phase": "Failed", "nodeName": "n1"}, "2024-01-01T00:00:00Z")]
    assert to_tables(objects, "2024-01-01T03:00:00Z", wide=True) == (
        "NAME   PHASE    AGE   NODE   TTL   EXPIRES\nr1     Failed   3h    n1     0\n"
    )
