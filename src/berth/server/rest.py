"""Kubernetes REST semantics over a Berth Store: paths, verbs, query parameters and Status errors.

One request in, one (HTTP code, JSON body) out, with no transport attached: the HTTP server of
``berth serve`` and in-process clients (tests, tools) share it. Supported: get, list (labelSelector,
fieldSelector, limit/continue over one snapshot: `berth.server.listing`), create, update, patch (by
``Request.content_type``: JSON merge patch, RFC 6902 JSON patch, strategic merge patch for the built-in kinds,
server-side apply; 415 for other types), delete (gracePeriodSeconds, preconditions, propagationPolicy /
orphanDependents: `berth.server.deleteoptions`; answered with the object or a Status as kube's registry
answers), deletecollection, the ``status`` and ``scale`` subresources and the pods'
``eviction`` (policy/v1 Eviction, Berth's eviction API) and ``binding`` (v1 Binding). Watches are served by
`berth.server.app`.

Every write takes ``dryRun=All`` (checked as a real write, nothing stored) and, except delete,
``fieldManager``; options kube refuses are refused the same way (422 on ``CreateOptions.meta.k8s.io``,
``UpdateOptions``, ``PatchOptions`` or ``DeleteOptions``). Creates, updates and non-apply patches record
``metadata.managedFields`` as kube's field manager does (`berth.server.fieldmanager`); server-side apply
records its own (`berth.api.apply`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import msgspec

from berth.api.apply import apply_schema, server_side_apply
from berth.api.contracts import RevisionLister, Store
from berth.api.errors import (
    AlreadyExists,
    BadRequest,
    Conflict,
    Invalid,
    NotFound,
    ResourceExpired,
    StatusError,
    UnsupportedMediaType,
)
from berth.api.kinds import KindInfo, UnknownKindError, all_kinds
from berth.api.labels import compile_label_selector
from berth.api.patches import (
    APPLY_PATCH,
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_MERGE_PATCH,
    json_patch,
    smp_schema,
    strategic_merge_patch,
)
from berth.server import eventsv1
from berth.server.deleteoptions import delete_options
from berth.server.fieldmanager import (
    manager_or_user_agent,
    record_scale,
    record_update,
    validate_field_manager,
)
from berth.server.fieldvalidation import (
    decode_applied,
    decode_body,
    decode_patched,
    field_validation,
    go_value,
)
from berth.server.listing import ListSnapshots, list_options, page_of
from berth.server.media import media_type
from berth.store.memory import LIST_TOO_OLD
from berth.store.mergepatch import merge_patch

Obj = dict[str, Any]
Query = Mapping[str, Sequence[str]]
_SCALABLE = frozenset({"ReplicaSet", "Deployment", "StatefulSet"})


def _body_for(route: Route, obj: Obj) -> Obj:
    """The body of a create or update checked against the path, as kube-apiserver checks it: its kind and
    apiVersion (filled in when absent), its namespace (the path's when absent) and, on an update, its name."""
    info = route.info
    kind = obj.get("kind") or info.kind
    api_version = obj.get("apiVersion") or info.api_version
    if kind != info.kind:
        raise BadRequest(
            f'{kind} in version "{api_version.rpartition("/")[2]}" cannot be handled as a {info.kind}: '
            f"the object's kind does not match the resource of the request"
        )
    if api_version != info.api_version:
        raise BadRequest(
            f"the API version in the data ({api_version}) does not match the expected API version "
            f"({info.api_version})"
        )
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    out = {**obj, "kind": kind, "apiVersion": api_version, "metadata": dict(meta)}
    if route.namespace:
        given = out["metadata"].get("namespace")
        if given and given != route.namespace:
            raise BadRequest(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        out["metadata"]["namespace"] = route.namespace
    if route.name and out["metadata"].get("name") != route.name:
        raise BadRequest(
            f"the name of the object ({out['metadata'].get('name') or ''}) does not match the name on the URL "
            f"({route.name})"
        )
    return out


_RETURNS_DELETED_OBJECT = frozenset({("", "Pod"), ("", "Namespace")})
"""The kinds whose registry answers a delete with the object itself (kube's ``ReturnDeletedObject``)."""


def _deleted_status(info: KindInfo, name: str, uid: object) -> Obj:
    """The Status kube's registry answers for an object deleted at once (``finalizeDelete``): details name
    the resource (its plural, as kube does) and the object's uid."""
    details: Obj = {"name": name}
    if info.group:
        details["group"] = info.group
    details["kind"] = info.plural
    if uid:
        details["uid"] = uid
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}


def _scale_of(obj: Mapping[str, Any]) -> Obj:
    """The autoscaling/v1 Scale of a ReplicaSet or Deployment (its selector as a label-selector string)."""
    meta = obj["metadata"]
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    selector = compile_label_selector(spec.get("selector"))
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": int(spec.get("replicas", 1))},
        "status": {"replicas": int(status.get("replicas") or 0), "selector": str(selector)},
    }


__all__ = ["Request", "RestAPI", "Route", "query_value", "resolve"]


@dataclass(frozen=True, slots=True)
class Route:
    """What a request path names: the kind, the namespace, the object name and the subresource."""

    info: KindInfo
    namespace: str
    name: str
    subresource: str


@dataclass(frozen=True, slots=True)
class Request:
    """One API request, transport-free."""

    method: str
    path: str
    query: Query
    body: bytes = b""
    content_type: str = ""
    """The Content-Type header; PATCH dispatches on it (empty means a JSON merge patch)."""
    user_agent: str = ""
    """The User-Agent header: its program name is the field manager of a write without ``fieldManager``."""


def _by_resource() -> dict[tuple[str, str, str], KindInfo]:
    return {(k.group, k.version, k.plural): k for k in all_kinds()}


_RESOURCES = _by_resource()


def _not_found(path: str) -> StatusError:
    return NotFound(f"the server could not find the requested resource ({path})")


def resolve(path: str) -> Route:
    """The Route of an API path (``/api/v1/namespaces/ns/pods/name/eviction``); NotFound when unknown."""
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        raise _not_found(path)
    namespace = ""
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 3:
        raise _not_found(path)
    info = _RESOURCES.get((group, version, rest[0]))
    if info is None or (namespace and not info.namespaced):
        raise _not_found(path)
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""
    return Route(info, namespace, name, sub)


def query_value(query: Query, key: str) -> str | None:
    """The last value of query parameter `key` (None when absent), as kube reads repeated parameters."""
    values = query.get(key)
    return values[-1] if values else None


_decode_json = msgspec.json.Decoder().decode


def _json_body(body: bytes) -> Obj:
    try:
        doc = _decode_json(body or b"{}")
    except (msgspec.DecodeError, UnicodeDecodeError) as e:
        raise BadRequest(f"the request body is not valid JSON: {e}") from None
    if not isinstance(doc, dict):
        raise BadRequest("the request body must be a JSON object")
    return doc


_PATCH_ATTEMPTS = 5
"""kube-apiserver's patcher retries a patch this many times on a write conflict."""

_CR_PATCH_TYPES = (JSON_PATCH, MERGE_PATCH)
_BUILTIN_PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH)


def _patch_types(info: KindInfo) -> tuple[str, ...]:
    """The patch media types the kind accepts (strategic merge patch only for built-in kinds)."""
    return _BUILTIN_PATCH_TYPES if smp_schema(info.group, info.kind) is not None else _CR_PATCH_TYPES


def _json_document(body: bytes) -> Any:
    try:
        return _decode_json(body or b"null")
    except (msgspec.DecodeError, UnicodeDecodeError) as e:
        raise BadRequest(f"the request body is not valid JSON: {e}") from None


def _checked_patch_result(route: Route, current: Obj, patched: Any) -> Obj:
    """The patched object, checked as kube's patcher does: still an object with this kind, name and
    namespace (a missing apiVersion, kind or namespace is taken from the current object)."""
    if not isinstance(patched, dict) or not isinstance(patched.get("metadata", {}), dict):
        raise Invalid.of(
            route.info.kind,
            route.info.group,
            route.name,
            [("patch", "the patched object is not a valid object")],
        )
    out = dict(patched)
    for field in ("apiVersion", "kind"):
        value = out.get(field)
        if not value:
            out[field] = current.get(field)
        elif value != current.get(field):
            raise BadRequest(
                f"the {field} of the patched object ({value}) does not match {current.get(field)}"
            )
    meta = out["metadata"] = dict(out.get("metadata") or {})
    name = meta.get("name")
    if name != route.name:
        raise BadRequest(
            f"the name of the object ({name or ''}) does not match the name on the URL ({route.name})"
        )
    current_ns = current.get("metadata", {}).get("namespace")
    if not route.info.namespaced or not meta.get("namespace"):
        if current_ns:
            meta["namespace"] = current_ns
        else:
            meta.pop("namespace", None)
    elif meta["namespace"] != current_ns:
        raise BadRequest(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    return out


def _grace(query: Query, body: Obj) -> int | None:
    text = query_value(query, "gracePeriodSeconds")
    value = body.get("gracePeriodSeconds") if text is None else text
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise BadRequest(f'invalid gracePeriodSeconds "{value}"') from None


def _dry_run(query: Query, body: Obj) -> bool:
    values = list(query.get("dryRun") or ()) + list(body.get("dryRun") or ())
    return "All" in values


def _go_strings(values: Sequence[str]) -> str:
    """Go's ``%#v`` of a ``[]string`` (how kube 1.32 prints an unsupported dryRun value)."""
    return "[]string{" + ", ".join(json.dumps(v, ensure_ascii=False) for v in values) + "}"


def _dry_run_causes(values: Sequence[Any]) -> list[tuple[str, str]]:
    """apimachinery's ``ValidateDryRun``: every value must be ``All``."""
    if all(v == "All" for v in values):
        return []
    shown = _go_strings([str(v) for v in values])
    return [("dryRun", f'Unsupported value: {shown}: supported values: "All"')]


_FIELD_VALIDATION = ("", "Ignore", "Strict", "Warn")


def _first(query: Query, key: str) -> str | None:
    """The first value of a query parameter (kube's parameter codec reads the first of repeated values)."""
    values = query.get(key)
    return values[0] if values else None


def _write_options(query: Query, options: str, patch_type: str | None = None) -> tuple[bool, str]:
    """(dry run, fieldManager) of a create, update or patch; raises Invalid on ``<options>.meta.k8s.io``
    for what apimachinery's ValidateCreateOptions / ValidateUpdateOptions / ValidatePatchOptions refuse:
    ``force`` on a non-apply patch, no fieldManager on an apply patch, a fieldManager over 128 bytes or with
    unprintable characters, a dryRun other than ``All``, an unknown fieldValidation."""
    manager = _first(query, "fieldManager") or ""
    causes: list[tuple[str, str]] = []
    if patch_type == APPLY_PATCH:
        if not manager:
            causes.append(("fieldManager", "Required value: is required for apply patch"))
    elif patch_type is not None and "force" in query:
        causes.append(("force", "Forbidden: may not be specified for non-apply patch"))
    causes += validate_field_manager(manager)
    dry = list(query.get("dryRun") or ())
    causes += _dry_run_causes(dry)
    validation = _first(query, "fieldValidation") or ""
    if validation not in _FIELD_VALIDATION:
        supported = ", ".join(json.dumps(v) for v in _FIELD_VALIDATION)
        causes.append(
            ("fieldValidation", f"Unsupported value: {json.dumps(validation)}: supported values: {supported}")
        )
    if causes:
        raise Invalid.of(options, "meta.k8s.io", "", causes)
    return bool(dry), manager


def _delete_dry_run(query: Query, body: Obj, has_body: bool) -> bool:
    """The dryRun of a delete (DeleteOptions from the body when there is one, else from the query),
    validated as ValidateDeleteOptions does."""
    values = body.get("dryRun") if has_body else query.get("dryRun")
    dry = list(values) if isinstance(values, list | tuple) else ([] if values is None else [values])
    causes = _dry_run_causes(dry)
    if causes:
        raise Invalid.of("DeleteOptions", "meta.k8s.io", "", causes)
    return bool(dry)


def _force(query: Query) -> bool:
    """The ``force`` of an apply patch as kube decodes a bool parameter: false only for ``false`` or ``0``."""
    value = _first(query, "force")
    return value is not None and value != "0" and value.lower() != "false"


class RestAPI:
    """Serves Kubernetes API requests from ``store``."""

    def __init__(self, store: Store, *, snapshots: ListSnapshots | None = None) -> None:
        """Serve `store`; `snapshots` keeps the lists that paginated reads started from (default: kube's
        five minutes)."""
        self.store = store
        self.snapshots = snapshots if snapshots is not None else ListSnapshots()
        self._warnings: list[str] = []

    def handle(self, request: Request) -> tuple[int, Obj]:
        """(HTTP code, JSON body) for ``request``; API errors become metav1.Status bodies."""
        code, doc, _ = self.handle_with_warnings(request)
        return code, doc

    def handle_with_warnings(self, request: Request) -> tuple[int, Obj, list[str]]:
        """(HTTP code, JSON body, warnings) for ``request``: the warnings are the texts of the response's
        ``Warning`` headers (unknown fields under ``fieldValidation=Warn``)."""
        self._warnings = []
        try:
            code, doc = self._dispatch(request)
        except StatusError as e:
            code, doc = e.code, e.to_status()
        except UnknownKindError as e:
            err = BadRequest(str(e))
            code, doc = err.code, err.to_status()
        return code, doc, self._warnings

    def _dispatch(self, req: Request) -> tuple[int, Obj]:
        route = resolve(req.path)
        key = (route.info.group, route.info.kind)
        if key == eventsv1.KEY:  # the core Events, in the newer shape
            return eventsv1.handle(self._dispatch, req)
        method = req.method.upper()
        if route.subresource in ("eviction", "binding"):
            if method != "POST" or route.info.kind != "Pod":
                raise _not_found(req.path)
            return self._evict(route, req) if route.subresource == "eviction" else self._bind(route, req)
        if route.subresource == "scale" and route.info.kind in _SCALABLE and route.name:
            return self._scale(route, req)
        if route.subresource not in ("", "status"):
            raise _not_found(req.path)
        ns = route.namespace
        if method == "GET":
            if route.name:
                return 200, self.store.get(key, ns, route.name)
            return 200, self._list(route, req.query)
        if method == "POST" and not route.name:
            dry, manager = _write_options(req.query, "CreateOptions")
            obj = _body_for(route, _json_body(req.body))
            obj = decode_body(obj, field_validation(req.query), route.info.kind, self._warnings)
            obj = self._track(route, None, obj, manager_or_user_agent(manager, req.user_agent))
            return 201, self.store.create(obj, dry_run=dry)
        if method == "PUT" and route.name:
            dry, manager = _write_options(req.query, "UpdateOptions")
            obj = _body_for(route, _json_body(req.body))
            obj = decode_body(obj, field_validation(req.query), route.info.kind, self._warnings)
            manager = manager_or_user_agent(manager, req.user_agent)
            if route.subresource == "status":
                if not route.info.has_status:
                    return 200, self.store.update_status(obj, dry_run=dry)  # NotFound
                current = self.store.get(key, ns, route.name)
                obj = self._status_write(route, current, obj, manager)
                return 200, self.store.update_status(obj, dry_run=dry)
            current = self.store.get(key, ns, route.name)
            return 200, self.store.update(self._track(route, current, obj, manager), dry_run=dry)
        if method == "PATCH" and route.name and media_type(req.content_type) == APPLY_PATCH:
            return self._apply(route, req)
        if method == "PATCH" and route.name:
            return 200, self._patch(route, req)
        if method == "DELETE" and route.name and not route.subresource:
            return self._delete(route, req)
        if method == "DELETE" and not route.name:
            return 200, self._delete_collection(route, req)
        raise _not_found(req.path)

    def _delete(self, route: Route, req: Request) -> tuple[int, Obj]:
        """DELETE of one object, answered as kube-apiserver answers it: pods and namespaces with the object,
        other kinds with a Success Status naming the object when it is gone at once and with the object
        when it stays (finalizers: Foreground, Orphan, its own); 202 instead of 200 when it stays and the
        request said ``orphanDependents: false``."""
        info = route.info
        key = (info.group, info.kind)
        body = _json_body(req.body) if req.body else {}
        options = delete_options(req.query, body, bool(req.body))
        dry = _delete_dry_run(req.query, body, bool(req.body))
        result = self.store.delete(
            key,
            route.namespace,
            route.name,
            grace_period_seconds=_grace(req.query, body),
            uid=options.uid,
            resource_version=options.resource_version,
            propagation=options.propagation,
            dry_run=dry,
        )
        meta = result.get("metadata") or {}
        if dry:
            gone = not meta.get("finalizers") and not meta.get("deletionGracePeriodSeconds")
        else:
            gone = not self._exists(key, route.namespace, route.name, meta.get("uid"))
        if gone and key not in _RETURNS_DELETED_OBJECT:
            return 200, _deleted_status(info, route.name, meta.get("uid"))
        code = 202 if not gone and options.orphan_dependents is False else 200
        return code, result

    def _exists(self, key: tuple[str, str], namespace: str, name: str, uid: object) -> bool:
        try:
            current = self.store.get(key, namespace, name)
        except NotFound:
            return False
        return bool(current["metadata"].get("uid") == uid)

    def _list(self, route: Route, query: Query) -> Obj:
        """A list, or one page of it (``limit`` / ``continue``, `berth.server.listing`)."""
        info = route.info
        labels = query_value(query, "labelSelector") or ""
        fields = query_value(query, "fieldSelector") or ""
        read = list_options(query)
        read.check(self.store.revision)
        key = (info.group, info.kind)
        store = self.store

        def reader(revision: int | None) -> tuple[list[Obj], str]:
            if revision is None:
                return store.list(
                    key, route.namespace or None, label_selector=labels or None, field_selector=fields or None
                )
            if isinstance(store, RevisionLister):
                return store.list_at(
                    key,
                    revision,
                    route.namespace or None,
                    label_selector=labels or None,
                    field_selector=fields or None,
                )
            if revision == store.revision:
                return reader(None)
            raise ResourceExpired(LIST_TOO_OLD)

        page = page_of(
            self.snapshots,
            resource=key,
            namespace=route.namespace,
            namespaced=info.namespaced,
            selectors=(labels, fields),
            read=read,
            reader=reader,
        )
        return {
            "apiVersion": info.api_version,
            "kind": f"{info.kind}List",
            "metadata": page.metadata(),
            "items": page.items,
        }

    def _delete_collection(self, route: Route, req: Request) -> Obj:
        """deletecollection as kube's registry runs it: list what the selectors (and ``limit`` /
        ``continue``) select, delete each with the request's DeleteOptions (grace period, preconditions,
        propagation policy, dry run; an object gone meanwhile is skipped, any other error ends the request
        with that error) and answer the list as read."""
        key = (route.info.group, route.info.kind)
        body = _json_body(req.body) if req.body else {}
        options = delete_options(req.query, body, bool(req.body))
        dry = _delete_dry_run(req.query, body, bool(req.body))
        grace = _grace(req.query, body)
        listed = self._list(route, req.query)
        for obj in listed["items"]:
            meta = obj["metadata"]
            try:
                self.store.delete(
                    key,
                    meta.get("namespace") or "",
                    meta["name"],
                    grace_period_seconds=grace,
                    uid=options.uid,
                    resource_version=options.resource_version,
                    propagation=options.propagation,
                    dry_run=dry,
                )
            except NotFound:  # deleted meanwhile
                continue
        return listed

    def _scale(self, route: Route, req: Request) -> tuple[int, Obj]:
        """The autoscaling/v1 Scale of a ReplicaSet or Deployment: read it, or set spec.replicas (PUT or a
        merge / strategic merge / JSON patch of the Scale)."""
        key = (route.info.group, route.info.kind)
        method = req.method.upper()
        current = self.store.get(key, route.namespace, route.name)
        if method == "GET":
            return 200, _scale_of(current)
        if method not in ("PUT", "PATCH"):
            raise _not_found(req.path)
        scale = _scale_of(current)
        media = media_type(req.content_type)
        if method == "PUT":
            dry, manager = _write_options(req.query, "UpdateOptions")
            wanted = _json_body(req.body)
        elif media == JSON_PATCH:
            dry, manager = _write_options(req.query, "PatchOptions", media)
            wanted = json_patch(scale, _json_document(req.body))
        else:
            dry, manager = _write_options(req.query, "PatchOptions", media)
            wanted = merge_patch(scale, _json_body(req.body))
        replicas = (wanted.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise Invalid.of(
                "Scale",
                "autoscaling",
                route.name,
                [("spec.replicas", f"Invalid value: {replicas}: must be greater than or equal to 0")],
            )
        rv = (wanted.get("metadata") or {}).get("resourceVersion")
        if rv and rv != current["metadata"].get("resourceVersion"):
            raise Conflict.of(route.info.plural, route.info.group, route.name)
        new = {
            **current,
            "metadata": dict(current["metadata"]),
            "spec": {**(current.get("spec") or {}), "replicas": replicas},
        }
        entries = record_scale(
            current,
            replicas,
            manager=manager_or_user_agent(manager, req.user_agent),
            now=self.store.timestamp(),
        )
        if entries is not None:
            if entries:
                new["metadata"]["managedFields"] = entries
            else:
                new["metadata"].pop("managedFields", None)
        return 200, _scale_of(self.store.update(new, dry_run=dry))

    def _patch(self, route: Route, req: Request) -> Obj:
        """PATCH by content type (JSON merge patch, JSON patch, strategic merge patch): the patch is applied
        to the current object here and the result written back with its resourceVersion (retried on
        Conflict), with the patcher's managedFields; 415 for other types, then the options are checked."""
        media = media_type(req.content_type)
        key = (route.info.group, route.info.kind)
        schema = smp_schema(*key)
        if media not in ("", MERGE_PATCH, JSON_PATCH) and not (
            media == STRATEGIC_MERGE_PATCH and schema is not None
        ):
            raise UnsupportedMediaType.of(_patch_types(route.info))
        dry, manager = _write_options(req.query, "PatchOptions", media or MERGE_PATCH)
        mutate: Callable[[Obj], Any]
        if media == JSON_PATCH:
            mutate = partial(json_patch, operations=_json_document(req.body))
        elif media == STRATEGIC_MERGE_PATCH and schema is not None:
            mutate = partial(strategic_merge_patch, patch=_json_body(req.body), schema=schema)
        else:
            mutate = partial(merge_patch, patch=_json_body(req.body))
        mutate = self._decoding(mutate, req, by_path=media == STRATEGIC_MERGE_PATCH)
        return self._patch_current(route, mutate, manager_or_user_agent(manager, req.user_agent), dry)

    def _decoding(self, mutate: Callable[[Obj], Any], req: Request, *, by_path: bool) -> Callable[[Obj], Any]:
        """`mutate` followed by the request's fieldValidation of the patched object (the patch shown as kube's
        Invalid shows it: Go's map of a strategic merge patch, else the patched object's JSON)."""
        directive = field_validation(req.query)
        start = len(self._warnings)

        def patched(current: Obj) -> Any:
            result = mutate(current)
            del self._warnings[start:]  # a retried patch warns once

            def shown() -> str:
                if by_path:
                    return go_value(_json_document(req.body))
                return json.dumps(result, separators=(",", ":"), ensure_ascii=False)

            return decode_patched(result, directive, self._warnings, shown, by_path=by_path)

        return patched

    def _track(self, route: Route, current: Obj | None, obj: Obj, manager: str, subresource: str = "") -> Obj:
        """`obj` (a private top-level and metadata copy) with the managedFields `manager`'s write records."""
        info = route.info
        return record_update(
            current,
            obj,
            manager=manager,
            schema=apply_schema(info.group, info.kind),
            has_status=info.has_status,
            now=self.store.timestamp(),
            subresource=subresource,
        )

    def _status_write(self, route: Route, current: Obj, obj: Obj, manager: str) -> Obj:
        """The object a status write of `obj` makes of `current` (its status replaced, `obj`'s
        resourceVersion as the precondition), with the managedFields of the write (an empty list when
        none are left, so that the store drops them)."""
        new = {k: v for k, v in current.items() if k != "status"}
        if "status" in obj:
            new["status"] = obj["status"]
        meta = new["metadata"] = dict(current["metadata"])
        meta["resourceVersion"] = obj["metadata"].get("resourceVersion")
        new = self._track(route, current, new, manager, "status")
        new["metadata"].setdefault("managedFields", [])
        return new

    def _apply(self, route: Route, req: Request) -> tuple[int, Obj]:
        """Server-side apply (``application/apply-patch+yaml``, query ``fieldManager`` and ``force``): create
        the object from the configuration when absent (201), else merge it with field ownership (200); the
        write carries the read resourceVersion and a concurrent write retries, up to kube's five attempts.
        A dry run goes through the store's checks like the real write."""
        dry, manager = _write_options(req.query, "PatchOptions", APPLY_PATCH)
        force = _force(req.query)
        info = route.info
        key = (info.group, info.kind)
        config = decode_applied(_body_for(route, _json_body(req.body)), apply_schema(*key))
        wanted = config["metadata"].get("resourceVersion")
        apply = partial(
            server_side_apply,
            applied=config,
            schema=apply_schema(*key),
            manager=manager,
            force=force,
            subresource=route.subresource,
        )
        for attempt in range(_PATCH_ATTEMPTS):
            try:
                current: Obj | None = self.store.get(key, route.namespace, route.name)
            except NotFound:
                if route.subresource or wanted:
                    raise
                current = None
            rv = current["metadata"].get("resourceVersion") if current is not None else None
            if wanted and wanted != rv:
                raise Conflict.of(info.plural, info.group, route.name)
            result, changed = apply(current, now=self.store.timestamp())
            try:
                if current is None:
                    return 201, self.store.create(result, dry_run=dry)
                if not changed:
                    return 200, current
                result["metadata"]["resourceVersion"] = rv
                if route.subresource == "status":
                    result["metadata"].setdefault("managedFields", [])
                    return 200, self.store.update_status(result, dry_run=dry)
                return 200, self.store.update(result, dry_run=dry)
            except (Conflict, AlreadyExists):
                if wanted or attempt == _PATCH_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _patch_current(self, route: Route, mutate: Callable[[Obj], Any], manager: str, dry_run: bool) -> Obj:
        """Read, patch and write back the object (its status for the status subresource), recording the
        write in managedFields for `manager`.

        A resourceVersion the patch sets is a precondition (Conflict when stale); otherwise the read version
        is written and a concurrent write retries, up to kube's five attempts.
        """
        info = route.info
        key = (info.group, info.kind)
        for attempt in range(_PATCH_ATTEMPTS):
            current = self.store.get(key, route.namespace, route.name)
            patched = _checked_patch_result(route, current, mutate(current))
            rv = current.get("metadata", {}).get("resourceVersion")
            wanted = patched["metadata"].get("resourceVersion")
            if wanted and wanted != rv:
                raise Conflict.of(info.plural, info.group, route.name)
            patched["metadata"]["resourceVersion"] = rv
            try:
                if route.subresource == "status":
                    if not info.has_status:
                        return self.store.update_status(patched, dry_run=dry_run)  # NotFound
                    status = self._status_write(route, current, patched, manager)
                    return self.store.update_status(status, dry_run=dry_run)
                return self.store.update(self._track(route, current, patched, manager), dry_run=dry_run)
            except Conflict:
                if wanted or attempt == _PATCH_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _evict(self, route: Route, req: Request) -> tuple[int, Obj]:
        body = _json_body(req.body)
        options = body.get("deleteOptions") or {}
        self.store.evict(
            route.namespace,
            route.name,
            dry_run=_dry_run(req.query, options),
            grace_period_seconds=_grace({}, options),
        )
        return 201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}

    def _bind(self, route: Route, req: Request) -> tuple[int, Obj]:
        body = _json_body(req.body)
        meta = body.get("metadata") or {}
        target = body.get("target") or {}
        if not target.get("name"):
            raise Invalid.of("Binding", "", route.name, [("target.name", "Required value")])
        self.store.bind(
            route.namespace,
            route.name,
            str(target["name"]),
            uid=meta.get("uid") or None,
            annotations=meta.get("annotations") or None,
        )
        return 201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
