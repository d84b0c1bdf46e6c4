"""`MemoryStore.create(keep_identity=True)`: objects loaded as a cluster had them keep uid and
creationTimestamp; a uid given twice is refused; generated uids never take a kept one."""

from __future__ import annotations

import pytest

from berth.api.errors import Invalid
from berth.store import MemoryStore
from builders import make_pod


def _pod(name: str, uid: str | None = None, created: str | None = None) -> dict:
    obj = make_pod(name).obj()
    if uid is not None:
        obj["metadata"]["uid"] = uid
    if created is not None:
        obj["metadata"]["creationTimestamp"] = created
    return obj


def test_kept_identity_and_plain_create() -> None:
    store = MemoryStore(validate=None)
    kept = store.create(_pod("a", "uid-a", "2020-05-01T10:00:00Z"), keep_identity=True)
    plain = store.create(_pod("b", "uid-b", "2020-05-01T10:00:00Z"))
    assert (kept["metadata"]["uid"], kept["metadata"]["creationTimestamp"]) == (
        "uid-a",
        "2020-05-01T10:00:00Z",
    )
    assert plain["metadata"]["uid"] != "uid-b"
    assert plain["metadata"]["creationTimestamp"] == "2024-01-01T00:00:00Z"


def test_a_uid_given_twice_is_invalid_and_nothing_is_written() -> None:
    store = MemoryStore(validate=None)
    store.create(_pod("a", "same"), keep_identity=True)
    with pytest.raises(Invalid) as e:
        store.create(_pod("b", "same"), keep_identity=True)
    assert str(e.value) == 'Pod "b" is invalid: metadata.uid: Duplicate value: "same"'
    assert [p["metadata"]["name"] for p in store.list(("", "Pod"))[0]] == ["a"]


def test_generated_uids_skip_the_kept_ones() -> None:
    first = MemoryStore(validate=None, seed=7).create(_pod("x"))["metadata"]["uid"]
    store = MemoryStore(validate=None, seed=7)
    store.create(_pod("old", first), keep_identity=True)  # a snapshot written by a run with the same seed
    new = store.create(_pod("new"))
    assert new["metadata"]["uid"] != first
