"""Checks before `berth run` starts: the server answers, serves every kind Berth follows, and lets it read them.

Each failure is one line for the user: an unreachable server, a server without Berth's custom resources
(``berth crds | kubectl apply -f -`` installs them), a refusal by RBAC (the server's own message, which names the
user, the verb and the resource), or bad credentials.
"""

from __future__ import annotations

from collections.abc import Iterable

from berth.api.errors import Forbidden, NotFound, StatusError, Unauthorized
from berth.api.kinds import KindInfo, all_kinds
from berth.api.watch import ResourceKey
from berth.remote.client import KubeClient, ServerUnreachable
from berth.remote.informer import kind_path

__all__ = ["PreflightError", "check_cluster", "serves"]

_KINDS: dict[ResourceKey, KindInfo] = {(k.group, k.kind): k for k in all_kinds()}


class PreflightError(Exception):
    """The cluster cannot be used as it is; the message says why, in one line."""


def check_cluster(
    client: KubeClient, server: str, kinds: Iterable[ResourceKey], optional: Iterable[ResourceKey] = ()
) -> list[ResourceKey]:
    """List one object of each of `kinds` and `optional` (the verbs the informers need first); PreflightError
    on a failure. Returns the `optional` kinds the server does not serve (they are not a failure)."""
    missing: list[ResourceKey] = []
    for key in optional:
        try:
            client.request("GET", kind_path(_KINDS[key]), params={"limit": "1"})
        except NotFound:
            missing.append(key)
        except (ServerUnreachable, StatusError):
            pass  # the required kinds' checks below report it
    for key in kinds:
        info = _KINDS[key]
        try:
            client.request("GET", kind_path(info), params={"limit": "1"})
        except ServerUnreachable as e:
            raise PreflightError(f"cannot reach the API server at {server}: {e}") from None
        except Unauthorized as e:
            raise PreflightError(f"Error from server (Unauthorized): {e.message}") from None
        except Forbidden as e:
            raise PreflightError(f"Error from server (Forbidden): {e.message}") from None
        except NotFound:
            if info.group in ("", "apps", "policy", "scheduling.k8s.io", "coordination.k8s.io"):
                raise PreflightError(
                    f'the server at {server} does not serve {info.plural} ("{info.api_version}"): '
                    "not a Kubernetes API server?"
                ) from None
            raise PreflightError(
                f"the server at {server} does not serve {info.plural}.{info.group} ({info.api_version}): "
                "install Berth's CustomResourceDefinitions first (berth crds | kubectl apply -f -)"
            ) from None
        except StatusError as e:
            raise PreflightError(f"Error from server ({e.reason}): {e.message}") from None
    return missing


def serves(client: KubeClient, group_version: str) -> bool:
    """Whether the server serves `group_version` (``events.k8s.io/v1``): its discovery document answers (every
    authenticated user may read discovery). An error other than NotFound counts as served: the writes that
    follow report it."""
    try:
        client.request("GET", f"/apis/{group_version}")
    except NotFound:
        return False
    except (ServerUnreachable, StatusError):
        return True
    return True
