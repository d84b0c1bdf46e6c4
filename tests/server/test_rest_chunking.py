"""List chunking (`limit` / `continue`) as kube-apiserver pages a list: kube's continue tokens, every page
read at the first page's resourceVersion, 410 Expired with an inconsistent continuation once the snapshot is
gone, ListOptions refusals."""

from __future__ import annotations

import base64
import json
from typing import Any

from berth.server.listing import ListSnapshots, encode_continue
from berth.server.rest import Request, RestAPI
from berth.store import MemoryStore
from builders import make_pod

PODS = "/api/v1/namespaces/default/pods"
ALL_PODS = "/api/v1/pods"
TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list."
)


class FakeClock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _page(api: RestAPI, path: str = PODS, **query: str) -> tuple[int, dict[str, Any]]:
    return api.handle(Request("GET", path, {k: [v] for k, v in query.items()}))


def _names(doc: dict[str, Any]) -> list[str]:
    return [item["metadata"]["name"] for item in doc["items"]]


def _token(doc: dict[str, Any]) -> dict[str, Any]:
    raw = doc["metadata"]["continue"]
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
    return decoded


def _store(*names: str, namespace: str = "default") -> MemoryStore:
    store = MemoryStore()
    for name in names:
        store.create(make_pod(name).ns(namespace).obj())
    return store


def test_pages_follow_each_other_and_the_last_has_no_continue() -> None:
    api = RestAPI(_store("e", "a", "d", "b", "c"))
    code, first = _page(api, limit="2")
    meta = first["metadata"]
    assert (code, _names(first), meta["remainingItemCount"], meta["resourceVersion"]) == (
        200,
        ["a", "b"],
        3,
        "5",
    )
    _, second = _page(api, limit="2", **{"continue": meta["continue"]})
    assert (_names(second), second["metadata"]["remainingItemCount"]) == (["c", "d"], 1)
    _, last = _page(api, limit="2", **{"continue": second["metadata"]["continue"]})
    assert (_names(last), last["metadata"]) == (["e"], {"resourceVersion": "5"})
    _, whole = _page(api)
    assert _names(whole) == ["a", "b", "c", "d", "e"]


def test_tokens_are_kubes() -> None:
    store = _store("a", "b", "c")
    store.create(make_pod("x").ns("other").obj())
    api = RestAPI(store)
    _, namespaced = _page(api, limit="2")
    assert _token(namespaced) == {"v": "meta.k8s.io/v1", "rv": 4, "start": "b\x00"}
    _, everywhere = _page(api, ALL_PODS, limit="3")
    assert _token(everywhere) == {"v": "meta.k8s.io/v1", "rv": 4, "start": "default/c\x00"}
    _, rest = _page(api, ALL_PODS, limit="3", **{"continue": everywhere["metadata"]["continue"]})
    assert (_names(rest), rest["metadata"]) == (["x"], {"resourceVersion": "4"})


def test_continued_pages_read_the_first_pages_resource_version() -> None:
    store = _store("a", "b", "c", "d")
    api = RestAPI(store)
    _, first = _page(api, limit="2")
    old_c = store.get(("", "Pod"), "default", "c")
    store.create(make_pod("bb").obj())  # would sort into the next page
    store.delete(("", "Pod"), "default", "d")  # unscheduled: removed at once
    store.patch(("", "Pod"), "default", "c", {"metadata": {"labels": {"changed": "yes"}}})
    _, second = _page(api, limit="2", **{"continue": first["metadata"]["continue"]})
    assert (_names(second), second["metadata"]["resourceVersion"]) == (["c", "d"], "4")
    assert second["items"][0] is old_c
    assert "continue" not in second["metadata"]
    _, fresh = _page(api, limit="10")
    assert (_names(fresh), fresh["metadata"]["resourceVersion"]) == (["a", "b", "bb", "c"], "7")


def test_a_selector_list_has_no_remaining_item_count() -> None:
    store = MemoryStore()
    for name in ("a", "b", "c", "d"):
        store.create(make_pod(name).label(app="web").obj())
    api = RestAPI(store)
    _, first = _page(api, limit="2", labelSelector="app=web")
    assert (_names(first), sorted(first["metadata"])) == (["a", "b"], ["continue", "resourceVersion"])
    _, second = _page(api, limit="2", labelSelector="app=web", **{"continue": first["metadata"]["continue"]})
    assert (_names(second), second["metadata"]) == (["c", "d"], {"resourceVersion": "4"})


def test_continue_without_a_limit_reads_the_rest() -> None:
    api = RestAPI(_store("a", "b", "c"))
    _, first = _page(api, limit="1")
    _, rest = _page(api, **{"continue": first["metadata"]["continue"]})
    assert (_names(rest), rest["metadata"]) == (["b", "c"], {"resourceVersion": "3"})


def test_a_gone_snapshot_is_410_with_an_inconsistent_continuation() -> None:
    clock = FakeClock()
    store = _store("a", "b", "c", "d")
    api = RestAPI(store, snapshots=ListSnapshots(now=clock))
    _, first = _page(api, limit="2")
    store.create(make_pod("bb").obj())
    store.delete(("", "Pod"), "default", "d")
    clock.t += 301  # kube compacts etcd every five minutes
    code, gone = _page(api, limit="2", **{"continue": first["metadata"]["continue"]})
    assert (code, gone["reason"], gone["message"]) == (410, "Expired", TOO_OLD)
    assert _token(gone) == {"v": "meta.k8s.io/v1", "rv": -1, "start": "b\x00"}
    _, rest = _page(api, limit="2", **{"continue": gone["metadata"]["continue"]})
    assert (_names(rest), rest["metadata"]) == (["bb", "c"], {"resourceVersion": "6"})


def test_a_gone_snapshot_is_still_served_when_nothing_changed() -> None:
    clock = FakeClock()
    api = RestAPI(_store("a", "b", "c"), snapshots=ListSnapshots(now=clock))
    _, first = _page(api, limit="2")
    clock.t += 301
    code, rest = _page(api, limit="2", **{"continue": first["metadata"]["continue"]})
    assert (code, _names(rest), rest["metadata"]) == (200, ["c"], {"resourceVersion": "3"})


def test_an_evicted_snapshot_is_read_again_at_its_revision() -> None:
    store = _store("a", "b", "c")
    api = RestAPI(store, snapshots=ListSnapshots(capacity=1))
    _, first = _page(api, limit="1")
    store.create(make_pod("aa").obj())  # would sort into the next page
    store.patch(("", "Pod"), "default", "b", {"metadata": {"labels": {"changed": "yes"}}})
    _page(api, ALL_PODS, limit="1")  # a second snapshot evicts the first
    code, second = _page(api, limit="1", **{"continue": first["metadata"]["continue"]})
    assert (code, _names(second), second["metadata"]["resourceVersion"]) == (200, ["b"], "3")
    assert (
        "labels" not in second["items"][0]["metadata"]
        or "changed" not in second["items"][0]["metadata"]["labels"]
    )
    _, last = _page(api, limit="1", **{"continue": second["metadata"]["continue"]})
    assert (_names(last), last["metadata"]) == (["c"], {"resourceVersion": "3"})


def test_a_continue_with_other_selectors_reads_them_at_the_tokens_revision() -> None:
    store = MemoryStore()
    for name in ("a", "b", "c", "d"):
        store.create(make_pod(name).label(tier="web" if name in "bd" else "db").obj())
    api = RestAPI(store)
    _, first = _page(api, limit="1")
    store.patch(("", "Pod"), "default", "c", {"metadata": {"labels": {"tier": "web"}}})
    store.delete(("", "Pod"), "default", "d")
    _, rest = _page(api, labelSelector="tier=web", **{"continue": first["metadata"]["continue"]})
    assert (_names(rest), rest["metadata"]) == (["b", "d"], {"resourceVersion": "4"})


def test_a_token_the_history_no_longer_reaches_is_410() -> None:
    store = MemoryStore(history_size=2)
    for name in ("a", "b", "c"):
        store.create(make_pod(name).obj())
    api = RestAPI(store, snapshots=ListSnapshots(capacity=1))
    _, first = _page(api, limit="1")
    for name in ("x", "y", "z"):
        store.create(make_pod(name).ns("other").obj())
    _page(api, ALL_PODS, limit="1")  # evicts the first snapshot; the history now starts after revision 3
    code, gone = _page(api, limit="1", **{"continue": first["metadata"]["continue"]})
    assert (code, gone["reason"], gone["message"]) == (410, "Expired", TOO_OLD)
    assert _token(gone)["start"] == "a\x00"


def test_lists_at_a_resource_version() -> None:
    store = _store("a", "b", "c")  # revisions 1-3
    store.patch(("", "Pod"), "default", "a", {"metadata": {"labels": {"v": "2"}}})  # 4
    store.delete(("", "Pod"), "default", "b")  # 5
    store.create(make_pod("d").obj())  # 6
    api = RestAPI(store)
    # Exact, and kube's legacy exact read (a limit with a resourceVersion and no match)
    for query in (
        {"resourceVersion": "3", "resourceVersionMatch": "Exact"},
        {"resourceVersion": "3", "limit": "5"},
    ):
        code, doc = _page(api, **query)
        assert (code, _names(doc), doc["metadata"]["resourceVersion"]) == (200, ["a", "b", "c"], "3"), query
        assert "v" not in (doc["items"][0]["metadata"].get("labels") or {})  # a before its patch
    _, at4 = _page(api, resourceVersion="4", resourceVersionMatch="Exact", labelSelector="v=2")
    assert (_names(at4), at4["metadata"]["resourceVersion"]) == (["a"], "4")
    _, paged = _page(api, resourceVersion="4", limit="2")
    assert (_names(paged), paged["metadata"]["remainingItemCount"]) == (["a", "b"], 1)
    _, rest = _page(api, limit="2", **{"continue": paged["metadata"]["continue"]})
    assert (_names(rest), rest["metadata"]) == (["c"], {"resourceVersion": "4"})
    # not older than: the current state
    for query in ({"resourceVersion": "2"}, {"resourceVersion": "2", "resourceVersionMatch": "NotOlderThan"}):
        _, doc = _page(api, **query)
        assert (_names(doc), doc["metadata"]["resourceVersion"]) == (["a", "c", "d"], "6"), query
    code, ahead = _page(api, resourceVersion="9", resourceVersionMatch="Exact")
    assert (code, ahead["reason"], ahead["message"], ahead["details"]) == (
        504,
        "Timeout",
        "Timeout: Too large resource version: 9, current: 6",
        {
            "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
            "retryAfterSeconds": 1,
        },
    )
    assert _page(api, resourceVersion="7")[0] == 504


def test_a_list_older_than_the_history_is_410() -> None:
    store = MemoryStore(history_size=2)
    for name in ("a", "b", "c", "d"):
        store.create(make_pod(name).obj())
    api = RestAPI(store)
    assert _names(_page(api, resourceVersion="2", resourceVersionMatch="Exact")[1]) == ["a", "b"]
    code, doc = _page(api, resourceVersion="1", resourceVersionMatch="Exact")
    assert (code, doc["reason"], doc["message"]) == (
        410,
        "Expired",
        "The resourceVersion for the provided list is too old.",
    )


def test_refused_list_options() -> None:
    api = RestAPI(_store("a", "b"))
    token = encode_continue(2, "a\x00")
    cases = [
        (
            {"continue": "not-ours"},
            400,
            "invalid continue token: continue key is not valid: the token is not JSON",
        ),
        (
            {"continue": encode_continue(0, "a\x00")},
            400,
            "invalid continue token: continue key is not valid: incorrect encoded start resourceVersion "
            "(version meta.k8s.io/v1)",
        ),
        (
            {"continue": encode_continue(2, "")},
            400,
            "invalid continue token: continue key is not valid: encoded start key empty (version meta.k8s.io/v1)",
        ),
        (
            {"continue": encode_continue(2, "../x\x00")},
            400,
            "invalid continue token: continue key is not valid: ../x\x00",
        ),
        (
            {"continue": token, "resourceVersion": "2"},
            400,
            "specifying resource version is not allowed when using continue",
        ),
        (
            {"continue": token, "resourceVersionMatch": "NotOlderThan"},
            422,
            'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is '
            "forbidden unless resourceVersion is provided, resourceVersionMatch: Forbidden: resourceVersionMatch is "
            "forbidden when continue is provided]",
        ),
        (
            {"resourceVersion": "0", "resourceVersionMatch": "Exact"},
            422,
            'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is '
            'forbidden for resourceVersion "0"',
        ),
        (
            {"resourceVersion": "1", "resourceVersionMatch": "exact"},
            422,
            'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "exact": supported '
            'values: "Exact", "NotOlderThan", ""',
        ),
        ({"resourceVersion": "x1"}, 400, 'invalid resource version: "x1"'),
        ({"limit": "ten"}, 400, 'invalid limit "ten"'),
    ]
    for query, code, message in cases:
        got, doc = _page(api, **query)
        assert (got, doc["message"]) == (code, message), query
