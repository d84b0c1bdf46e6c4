"""List chunking (`limit` / `continue`) as kubectl's `--chunk-size` pages through a list."""

from __future__ import annotations

from berth.server.rest import Request, RestAPI
from berth.store import MemoryStore
from builders import make_pod

PODS = "/api/v1/namespaces/default/pods"


def _page(api: RestAPI, **query: str) -> tuple[int, dict[str, object]]:
    return api.handle(Request("GET", PODS, {k: [v] for k, v in query.items()}))


def _names(doc: dict[str, object]) -> list[str]:
    return [item["metadata"]["name"] for item in doc["items"]]  # type: ignore[index, union-attr]


def test_pages_follow_each_other_and_the_last_has_no_continue() -> None:
    store = MemoryStore()
    for name in ("e", "a", "d", "b", "c"):
        store.create(make_pod(name).obj())
    api = RestAPI(store)
    code, first = _page(api, limit="2")
    meta = first["metadata"]
    assert (code, _names(first), meta["remainingItemCount"]) == (200, ["a", "b"], 3)  # type: ignore[index]
    _, second = _page(api, limit="2", **{"continue": meta["continue"]})  # type: ignore[index]
    assert (_names(second), second["metadata"]["remainingItemCount"]) == (["c", "d"], 1)  # type: ignore[index]
    _, last = _page(api, limit="2", **{"continue": second["metadata"]["continue"]})  # type: ignore[index]
    assert _names(last) == ["e"]
    assert "continue" not in last["metadata"]  # type: ignore[operator]
    _, whole = _page(api)
    assert _names(whole) == ["a", "b", "c", "d", "e"]


def test_a_foreign_continue_token_is_a_bad_request() -> None:
    code, doc = _page(RestAPI(MemoryStore()), limit="2", **{"continue": "not-ours"})
    assert (code, doc["reason"], doc["message"]) == (
        400,
        "BadRequest",
        "continue key is not valid: it was not produced by this server",
    )
