"""Who may read `berth run`'s ``/metrics``: kube-scheduler's delegated authentication and authorization.

kube-scheduler's secure port asks the API server about each bearer token it is shown: a ``TokenReview``
(``authentication.k8s.io/v1``) says who the token belongs to, a ``SubjectAccessReview``
(``authorization.k8s.io/v1``) whether that user may ``get`` the non-resource path; answers are cached for 10 s
(its ``--authentication-token-webhook-cache-ttl`` and the authorizer's allowed/denied TTLs). Its health paths
(``/healthz``, ``/readyz``, ``/livez``: ``--authorization-always-allow-paths``) need nothing.

`DelegatedAuthorizer` does the same, plus one shortcut: the token `berth run` itself uses (its kubeconfig's, or
its service account's) is let in without asking, so that ``/metrics`` can be read against a server that serves
no reviews (``berth serve``). A refusal is a metav1.Status as kube-scheduler answers it: 401 ``Unauthorized``
without a usable token, 403 ``forbidden: User "<name>" cannot get path "/metrics"`` for a user the review does
not allow.
"""

from __future__ import annotations

import hmac
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from berth.api.errors import StatusError
from berth.remote.client import KubeClient, ServerUnreachable

__all__ = ["CACHE_TTL", "DelegatedAuthorizer", "Refusal"]

log = logging.getLogger(__name__)

CACHE_TTL = 10.0
"""Seconds a review's answer is reused (kube's delegated authentication and authorization cache TTLs)."""
MAX_CACHED = 1024
"""Tokens remembered at most (the oldest half is forgotten beyond it)."""

Obj = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Refusal:
    """A request refused: the HTTP code and the metav1.Status body."""

    code: int
    status: Obj


def _status(code: int, reason: str, message: str) -> Refusal:
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    return Refusal(code, body)


UNAUTHORIZED = _status(401, "Unauthorized", "Unauthorized")


class DelegatedAuthorizer:
    """Decides whether the bearer token of a request may ``get`` a path, asking the API server through
    `client` (None: only `own` is let in); `own()` gives berth run's own Authorization header."""

    def __init__(
        self,
        client: KubeClient | None,
        own: Callable[[], str | None],
        *,
        ttl: float = CACHE_TTL,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        """Review through `client`; answers kept `ttl` seconds of `now`."""
        self.client = client
        self.own = own
        self.ttl = ttl
        self.now = now
        self.reviews = 0
        """TokenReviews sent (a cached answer sends none)."""
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, str], tuple[float, Refusal | None]] = {}

    def __call__(self, header: str | None, path: str = "/metrics") -> Refusal | None:
        """None when the token of Authorization `header` may get `path`, else the refusal."""
        scheme, _, token = (header or "").strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return UNAUTHORIZED
        mine = self._own_token()
        if mine and hmac.compare_digest(token.encode(), mine.encode()):
            return None
        if self.client is None:
            return UNAUTHORIZED
        key = (token, path)
        at = self.now()
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None and at - cached[0] < self.ttl:
            return cached[1]
        answer = self._review(token, path)
        with self._lock:
            if len(self._cache) >= MAX_CACHED:
                for old in list(self._cache)[: MAX_CACHED // 2]:
                    del self._cache[old]
            self._cache[key] = (at, answer)
        return answer

    def _own_token(self) -> str | None:
        try:
            header = self.own()
        except Exception as e:  # a credential plugin that fails now: the reviews still decide
            log.warning("cannot read berth run's own credentials: %s", e)
            return None
        if not header:
            return None
        scheme, _, token = header.partition(" ")
        return token.strip() if scheme.lower() == "bearer" else None

    def _review(self, token: str, path: str) -> Refusal | None:
        """A TokenReview, then a SubjectAccessReview of ``get`` on `path`."""
        assert self.client is not None
        self.reviews += 1
        try:
            review = self.client.request(
                "POST",
                "/apis/authentication.k8s.io/v1/tokenreviews",
                body={
                    "apiVersion": "authentication.k8s.io/v1",
                    "kind": "TokenReview",
                    "spec": {"token": token},
                },
            )
        except (StatusError, ServerUnreachable) as e:
            log.warning("Unable to authenticate the request due to an error: %s", e)
            return UNAUTHORIZED
        status = review.get("status") or {}
        if not status.get("authenticated"):
            return UNAUTHORIZED
        user = status.get("user") or {}
        name = str(user.get("username") or "")
        spec: Obj = {
            "user": name,
            "groups": list(user.get("groups") or []),
            "nonResourceAttributes": {"path": path, "verb": "get"},
        }
        if user.get("uid"):
            spec["uid"] = user["uid"]
        if user.get("extra"):
            spec["extra"] = user["extra"]
        try:
            access = self.client.request(
                "POST",
                "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                body={"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec},
            )
        except (StatusError, ServerUnreachable) as e:
            log.warning("Authorization error (user=%s, verb=get, path=%s): %s", name, path, e)
            access = {}
        if (access.get("status") or {}).get("allowed"):
            return None
        return _status(403, "Forbidden", f'forbidden: User "{name}" cannot get path "{path}"')
