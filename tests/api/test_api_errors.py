"""Status errors: each reason's HTTP code, and a wire Status translated back into the same exception."""

from __future__ import annotations

import pytest

from berth.api.errors import (
    AlreadyExists,
    BadRequest,
    Conflict,
    Forbidden,
    Gone,
    InternalError,
    Invalid,
    NotFound,
    ResourceExpired,
    StatusError,
    TooManyRequests,
    error_from_status,
)


@pytest.mark.parametrize(
    ("error", "code", "reason"),
    [
        (BadRequest("bad"), 400, "BadRequest"),
        (Forbidden.of("pods", "", "p", "no"), 403, "Forbidden"),
        (NotFound.of("pods", "", "p"), 404, "NotFound"),
        (AlreadyExists.of("priorityclasses", "scheduling.k8s.io", "high"), 409, "AlreadyExists"),
        (Conflict.of("pods", "", "p"), 409, "Conflict"),
        (Gone("gone"), 410, "Gone"),
        (ResourceExpired("too old resource version: 1 (5)"), 410, "Expired"),
        (Invalid.of("Pod", "", "p", [("spec.containers", "Required value")]), 422, "Invalid"),
        (TooManyRequests("slow down", retry_after_seconds=10), 429, "TooManyRequests"),
        (InternalError.of("boom"), 500, "InternalError"),
    ],
)
def test_status_round_trip(error: StatusError, code: int, reason: str) -> None:
    assert (error.code, error.reason) == (code, reason)
    back = error_from_status(error.to_status())
    assert type(back) is type(error)
    assert (back.message, back.name, back.group, back.kind) == (
        error.message,
        error.name,
        error.group,
        error.kind,
    )
    assert back.to_status() == error.to_status()


def test_status_without_a_known_reason_falls_back_to_its_code() -> None:
    assert type(error_from_status({"message": "x", "code": 404})) is NotFound
    assert type(error_from_status({"message": "x"}, 429)) is TooManyRequests
    odd = error_from_status({"message": "teapot", "reason": "Teapot", "code": 418})
    assert (type(odd), odd.code, odd.reason, odd.message) == (StatusError, 418, "Teapot", "teapot")


def test_messages_match_the_api_server() -> None:
    assert str(NotFound.of("priorityclasses", "scheduling.k8s.io", "x")) == (
        'priorityclasses.scheduling.k8s.io "x" not found'
    )
    invalid = Invalid.of("Pod", "", "p", [("a", "m1"), ("b", "m2")])
    assert str(invalid) == 'Pod "p" is invalid: [a: m1, b: m2]'
