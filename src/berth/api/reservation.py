"""Koordinator ``Reservation`` (``scheduling.koordinator.sh/v1alpha1``): keys, owner matching, pod-side
annotations, expiry rules and validation.

Mirrors Koordinator's ``apis/scheduling/v1alpha1/reservation_types.go``, ``apis/extension/reservation.go``
and ``pkg/util/reservation``: owners are ORed and the fields inside one owner ANDed (empty parts are
wildcards); a pod's ``reservation-affinity`` annotation restricts which reservations it may use (and its
presence means it must use one); ``ttl`` ``0`` disables expiry, otherwise the reservation expires at the
earlier of ``expires`` and creation + ``ttl``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from berth.api.checks import Context, is_schema_type, schema_type_message
from berth.api.errors import InvalidObjectError
from berth.api.labels import LabelSelectorError, Selector, compile_label_selector, selector_from_set
from berth.api.meta import namespaced_name
from berth.api.names import label_value_errors, qualified_name_errors
from berth.api.nodeselector import NodeSelectorTerm, compile_term, parse_int64
from berth.api.podspec import validate_pod_spec
from berth.api.resources import node_allocatable, pod_requests
from berth.api.taints import (
    EFFECT_NO_EXECUTE,
    EFFECT_NO_SCHEDULE,
    TAINT_EFFECTS,
    Taint,
    Toleration,
    parse_taints,
    parse_tolerations,
)
from berth.api.wellknown import parse_go_duration

__all__ = [
    "ALLOCATE_POLICIES",
    "ALLOCATE_POLICY_ALIGNED",
    "ALLOCATE_POLICY_DEFAULT",
    "ALLOCATE_POLICY_RESTRICTED",
    "ANNOTATION_EXACT_MATCH_RESERVATION",
    "ANNOTATION_PRE_ALLOCATABLE_PRIORITY",
    "ANNOTATION_RESERVATION_AFFINITY",
    "ANNOTATION_RESERVATION_ALLOCATED",
    "CONDITION_READY",
    "CONDITION_SCHEDULED",
    "DEFAULT_TTL",
    "DEFAULT_TTL_SECONDS",
    "LABEL_PRE_ALLOCATABLE",
    "LABEL_RESERVATION_IGNORED",
    "LABEL_RESERVATION_ORDER",
    "PHASE_AVAILABLE",
    "PHASE_FAILED",
    "PHASE_PENDING",
    "PHASE_SUCCEEDED",
    "PHASE_WAITING",
    "PRE_ALLOCATION_MODES",
    "PRE_ALLOCATION_MODE_CLUSTER",
    "PRE_ALLOCATION_MODE_DEFAULT",
    "REASON_AVAILABLE",
    "REASON_EXPIRED",
    "REASON_SCHEDULED",
    "REASON_SUCCEEDED",
    "REASON_UNSCHEDULABLE",
    "RESERVATION_API_VERSION",
    "RESERVATION_GROUP",
    "RESERVATION_KEY",
    "OwnerMatcher",
    "ReservationAffinity",
    "allocate_policy",
    "allocated_annotation_value",
    "compile_owners",
    "exact_match",
    "expiry",
    "is_active",
    "is_allocate_once",
    "is_available",
    "is_reservation_ignored",
    "is_unschedulable",
    "parse_allocated",
    "parse_exact_match",
    "parse_reservation_affinity",
    "parse_rfc3339",
    "reservation_allocatable",
    "reservation_order",
    "reservation_requests",
    "reservation_taints",
    "ttl_seconds",
    "validate_reservation",
]

RESERVATION_GROUP = "scheduling.koordinator.sh"
RESERVATION_API_VERSION = "scheduling.koordinator.sh/v1alpha1"
RESERVATION_KEY = (RESERVATION_GROUP, "Reservation")

ANNOTATION_RESERVATION_ALLOCATED = "scheduling.koordinator.sh/reservation-allocated"
ANNOTATION_RESERVATION_AFFINITY = "scheduling.koordinator.sh/reservation-affinity"
LABEL_RESERVATION_IGNORED = "scheduling.koordinator.sh/reservation-ignored"
ANNOTATION_EXACT_MATCH_RESERVATION = "scheduling.koordinator.sh/exact-match-reservation"
LABEL_RESERVATION_ORDER = "scheduling.koordinator.sh/reservation-order"
LABEL_PRE_ALLOCATABLE = "pod.koordinator.sh/is-pre-allocatable"
ANNOTATION_PRE_ALLOCATABLE_PRIORITY = "pod.koordinator.sh/pre-allocatable-priority"

PHASE_PENDING = "Pending"
PHASE_AVAILABLE = "Available"
PHASE_WAITING = "Waiting"
PHASE_SUCCEEDED = "Succeeded"
PHASE_FAILED = "Failed"

CONDITION_SCHEDULED = "Scheduled"
CONDITION_READY = "Ready"
REASON_SCHEDULED = "Scheduled"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_AVAILABLE = "Available"
REASON_SUCCEEDED = "Succeeded"
REASON_EXPIRED = "Expired"

ALLOCATE_POLICY_DEFAULT = ""
ALLOCATE_POLICY_ALIGNED = "Aligned"
ALLOCATE_POLICY_RESTRICTED = "Restricted"
ALLOCATE_POLICIES = (ALLOCATE_POLICY_ALIGNED, ALLOCATE_POLICY_RESTRICTED)
"""The enum of spec.allocatePolicy (``""``, the deprecated Default, is also accepted)."""

PRE_ALLOCATION_MODE_DEFAULT = "Default"
PRE_ALLOCATION_MODE_CLUSTER = "Cluster"
PRE_ALLOCATION_MODES = (PRE_ALLOCATION_MODE_DEFAULT, PRE_ALLOCATION_MODE_CLUSTER)

DEFAULT_TTL = "24h"
DEFAULT_TTL_SECONDS = 86400.0

_EMPTY: Mapping[str, Any] = {}
_DEFAULT_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
_DO_NOT_SCHEDULE = frozenset((EFFECT_NO_SCHEDULE, EFFECT_NO_EXECUTE))


# --- owners -----------------------------------------------------------------------------------------------

_PodPredicate = Callable[[Mapping[str, Any]], bool]


def _str_field(d: Mapping[str, Any], key: str) -> str:
    v = d.get(key)
    return v if isinstance(v, str) else ""


def _object_predicate(ref: Mapping[str, Any]) -> _PodPredicate | None:
    """corev1.ObjectReference matching a pod: uid, name, namespace, apiVersion (kind ignored); "" = any."""
    uid = _str_field(ref, "uid")
    name = _str_field(ref, "name")
    namespace = _str_field(ref, "namespace")
    api_version = _str_field(ref, "apiVersion")
    if not (uid or name or namespace or api_version):
        return None

    def match(pod: Mapping[str, Any]) -> bool:
        md = pod.get("metadata") or _EMPTY
        if name and md.get("name") != name:
            return False
        if namespace and (md.get("namespace") or "default") != namespace:
            return False
        if uid and md.get("uid") != uid:
            return False
        return not api_version or pod.get("apiVersion") == api_version

    return match


def _controller_predicate(ref: Mapping[str, Any]) -> _PodPredicate:
    """ReservationControllerReference: any ownerReference matching uid/name/kind/apiVersion/controller."""
    namespace = _str_field(ref, "namespace")
    uid = _str_field(ref, "uid")
    name = _str_field(ref, "name")
    kind = _str_field(ref, "kind")
    api_version = _str_field(ref, "apiVersion")
    raw_controller = ref.get("controller")
    controller = raw_controller if isinstance(raw_controller, bool) else None

    def match(pod: Mapping[str, Any]) -> bool:
        md = pod.get("metadata") or _EMPTY
        if namespace and (md.get("namespace") or "default") != namespace:
            return False
        for owner in md.get("ownerReferences") or ():
            if controller is not None:
                oc = owner.get("controller")
                if oc is None or bool(oc) != controller:
                    continue
            if uid and owner.get("uid") != uid:
                continue
            if name and owner.get("name") != name:
                continue
            if kind and owner.get("kind") != kind:
                continue
            if api_version and owner.get("apiVersion") != api_version:
                continue
            return True
        return False

    return match


def _always(pod: Mapping[str, Any]) -> bool:
    return True


def _never(pod: Mapping[str, Any]) -> bool:
    return False


def _owner_predicate(index: int, owner: Mapping[str, Any]) -> _PodPredicate:
    """One owner: its object, controller and labelSelector parts ANDed (absent parts match everything)."""
    parts: list[_PodPredicate] = []
    obj = owner.get("object")
    if isinstance(obj, Mapping):
        p = _object_predicate(obj)
        if p is not None:
            parts.append(p)
    ctrl = owner.get("controller")
    if isinstance(ctrl, Mapping):
        parts.append(_controller_predicate(ctrl))
    raw_sel = owner.get("labelSelector")
    if raw_sel is not None:
        try:
            selector = compile_label_selector(raw_sel)
        except LabelSelectorError as e:
            path = f"owners[{index}].labelSelector" + (f".{e.path}" if e.path else "")
            raise LabelSelectorError(path, e.value, e.message) from None
        if not selector.is_everything():
            sel_matches = selector.matches

            def by_labels(pod: Mapping[str, Any]) -> bool:
                return sel_matches((pod.get("metadata") or _EMPTY).get("labels") or _EMPTY)

            parts.append(by_labels)
    if not parts:
        return _always
    if len(parts) == 1:
        return parts[0]
    frozen = tuple(parts)
    return lambda pod: all(p(pod) for p in frozen)


class OwnerMatcher:
    """Compiled ``spec.owners``: a pod matches when any owner matches it (identical specs share one matcher)."""

    __slots__ = ("_preds", "signature")

    def __init__(self, signature: str, predicates: tuple[_PodPredicate, ...]) -> None:
        """Use :func:`compile_owners`; *signature* is the canonical JSON of the owners list."""
        self.signature = signature
        self._preds = predicates

    def matches(self, pod: Mapping[str, Any]) -> bool:
        """Whether *pod* (wire form) is one of the owners this spec admits (no owners: nothing matches)."""
        for p in self._preds:  # noqa: SIM110 - a plain loop beats any(genexpr) on this hot path
            if p(pod):
                return True
        return False

    @property
    def matches_everything(self) -> bool:
        """True when some owner has no constraint at all (``owners: [{}]``)."""
        return _always in self._preds

    def __eq__(self, other: object) -> bool:
        """Matchers are equal when their owner specs are."""
        if not isinstance(other, OwnerMatcher):
            return NotImplemented
        return self.signature == other.signature

    def __hash__(self) -> int:
        """Hash of the signature."""
        return hash(self.signature)

    def __repr__(self) -> str:
        """Debug representation."""
        return f"OwnerMatcher({self.signature})"


_OWNER_CACHE: dict[str, OwnerMatcher] = {}
_OWNER_CACHE_MAX = 65536
# the same matchers by the owners' repr (equal reprs of JSON data: equal data), read before the canonical JSON
# is made
_OWNER_BY_REPR: dict[str, OwnerMatcher] = {}


def compile_owners(owners: Sequence[Mapping[str, Any]] | None) -> OwnerMatcher:
    """Compile ``spec.owners`` (cached by its canonical JSON); raises LabelSelectorError for a bad selector."""
    quick = repr(owners)
    known = _OWNER_BY_REPR.get(quick)
    if known is not None:
        return known
    matcher = _compile_owners(owners)
    if len(_OWNER_BY_REPR) >= _OWNER_CACHE_MAX:
        _OWNER_BY_REPR.clear()
    _OWNER_BY_REPR[quick] = matcher
    return matcher


def _compile_owners(owners: Sequence[Mapping[str, Any]] | None) -> OwnerMatcher:
    signature = json.dumps(owners, sort_keys=True, separators=(",", ":"), default=str)
    cached = _OWNER_CACHE.get(signature)
    if cached is not None:
        return cached
    preds: tuple[_PodPredicate, ...] = ()
    if owners:
        preds = tuple(
            _owner_predicate(i, o) if isinstance(o, Mapping) else _never for i, o in enumerate(owners)
        )
    matcher = OwnerMatcher(signature, preds)
    if len(_OWNER_CACHE) >= _OWNER_CACHE_MAX:
        _OWNER_CACHE.clear()
    _OWNER_CACHE[signature] = matcher
    return matcher


# --- pod-side annotations and labels ---------------------------------------------------------------------


def _annotation_error(pod: Mapping[str, Any], key: str, value: object, detail: str) -> InvalidObjectError:
    return InvalidObjectError(
        str(pod.get("kind") or "Pod"),
        namespaced_name(pod),
        f"metadata.annotations[{key}]",
        value,
        f"Invalid value: {json.dumps(value)}: {detail}",
    )


def _annotations(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return (obj.get("metadata") or _EMPTY).get("annotations") or _EMPTY


def _json_annotation(pod: Mapping[str, Any], key: str, raw: object) -> Any:
    if not isinstance(raw, str):
        raise _annotation_error(pod, key, raw, "must be a string")
    try:
        return json.loads(raw)
    except ValueError as e:
        raise _annotation_error(pod, key, raw, f"invalid JSON: {e}") from None


@dataclass(frozen=True, slots=True)
class ReservationAffinity:
    """A pod's ``reservation-affinity`` annotation, compiled.

    ``name`` (when set) selects one reservation by name and nothing else is checked; otherwise
    ``selector`` (``reservationSelector``, an equality selector) and ``required_terms`` (the ORed
    ``reservationSelectorTerms``) must both match the reservation's labels overlaid on its node's labels,
    the reservation's name standing in for the node name of ``matchFields``. ``has_required`` records that
    ``requiredDuringSchedulingIgnoredDuringExecution`` was given (with no terms it matches nothing).
    ``tolerations`` tolerate reservation taints (see :meth:`untolerated_taint`).
    """

    name: str | None
    selector: Selector | None
    required_terms: tuple[NodeSelectorTerm, ...]
    tolerations: tuple[Toleration, ...]
    has_required: bool = False

    def matches(
        self,
        reservation_name: str,
        reservation_labels: Mapping[str, str],
        *,
        node_labels: Mapping[str, str] | None = None,
    ) -> bool:
        """Whether a reservation (name, labels; optionally its node's labels underneath) satisfies the affinity."""
        if self.name:
            return reservation_name == self.name
        if node_labels:
            labels: Mapping[str, str] = {**node_labels, **reservation_labels}
        else:
            labels = reservation_labels
        if self.selector is not None and not self.selector.matches(labels):
            return False
        if self.required_terms or self.has_required:
            return any(t.matches(labels, reservation_name) for t in self.required_terms)
        return True

    def untolerated_taint(self, taints: Sequence[Taint]) -> Taint | None:
        """The first NoSchedule/NoExecute reservation taint the affinity's tolerations do not tolerate."""
        for taint in taints:
            if taint.effect in _DO_NOT_SCHEDULE and not any(t.tolerates(taint) for t in self.tolerations):
                return taint
        return None


def _check_term(pod: Mapping[str, Any], key: str, raw: str, i: int, term: NodeSelectorTerm) -> None:
    """nodeaffinity.NewNodeSelector refuses terms whose requirements cannot be parsed."""
    for r in term.match_expressions:
        if not r.label_parse_ok:
            raise _annotation_error(
                pod,
                key,
                raw,
                f"reservationSelectorTerms[{i}].matchExpressions: invalid requirement "
                f'"{r.key} {r.operator} {list(r.values)}"',
            )
    for r in term.match_fields:
        if not r.field_parse_ok:
            raise _annotation_error(
                pod,
                key,
                raw,
                f"reservationSelectorTerms[{i}].matchFields: invalid requirement "
                f'"{r.key} {r.operator} {list(r.values)}"',
            )


def parse_reservation_affinity(pod: Mapping[str, Any]) -> ReservationAffinity | None:
    """The pod's reservation affinity; None when it has no annotation. An empty annotation is an empty affinity.

    Raises InvalidObjectError naming the annotation when its JSON is malformed or mistyped.
    """
    annotations = _annotations(pod)
    key = ANNOTATION_RESERVATION_AFFINITY
    if key not in annotations:
        return None
    raw = annotations[key]
    if raw == "":
        return ReservationAffinity(None, None, (), ())
    data = _json_annotation(pod, key, raw)
    if data is None:
        return ReservationAffinity(None, None, (), ())
    if not isinstance(data, dict):
        raise _annotation_error(pod, key, raw, "must be a JSON object")
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        raise _annotation_error(pod, key, raw, "name: must be a string")
    sel_raw = data.get("reservationSelector")
    selector: Selector | None = None
    if sel_raw is not None:
        if not isinstance(sel_raw, dict) or not all(isinstance(v, str) for v in sel_raw.values()):
            raise _annotation_error(pod, key, raw, "reservationSelector: must be a map of strings")
        if sel_raw:
            selector = selector_from_set(sel_raw)
    req_raw = data.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms: tuple[NodeSelectorTerm, ...] = ()
    has_required = req_raw is not None
    if req_raw is not None:
        if not isinstance(req_raw, dict):
            raise _annotation_error(
                pod, key, raw, "requiredDuringSchedulingIgnoredDuringExecution: must be an object"
            )
        terms_raw = req_raw.get("reservationSelectorTerms") or []
        if not isinstance(terms_raw, list) or not all(isinstance(t, dict) for t in terms_raw):
            raise _annotation_error(pod, key, raw, "reservationSelectorTerms: must be a list of objects")
        try:
            terms = tuple(compile_term(t) for t in terms_raw)
        except (AttributeError, TypeError) as e:
            raise _annotation_error(pod, key, raw, f"reservationSelectorTerms: {e}") from None
        for i, term in enumerate(terms):
            _check_term(pod, key, raw, i, term)
    tol_raw = data.get("tolerations")
    tolerations: tuple[Toleration, ...] = ()
    if tol_raw is not None:
        if not isinstance(tol_raw, list) or not all(isinstance(t, dict) for t in tol_raw):
            raise _annotation_error(pod, key, raw, "tolerations: must be a list of objects")
        try:
            tolerations = parse_tolerations(tol_raw)
        except (TypeError, ValueError) as e:
            raise _annotation_error(pod, key, raw, f"tolerations: {e}") from None
    return ReservationAffinity(name or None, selector, terms, tolerations, has_required)


def is_reservation_ignored(pod: Mapping[str, Any]) -> bool:
    """Whether the pod carries ``scheduling.koordinator.sh/reservation-ignored: "true"``."""
    labels = (pod.get("metadata") or _EMPTY).get("labels")
    return labels is not None and labels.get(LABEL_RESERVATION_IGNORED) == "true"


def parse_exact_match(pod: Mapping[str, Any]) -> tuple[str, ...] | None:
    """``exact-match-reservation`` ``{"resourceNames": [...]}``: resources whose request must equal the
    reservation's allocatable. None when the annotation is missing or empty; raises InvalidObjectError when
    it is malformed."""
    key = ANNOTATION_EXACT_MATCH_RESERVATION
    raw = _annotations(pod).get(key)
    if not raw:
        return None
    data = _json_annotation(pod, key, raw)
    if data is None:
        return ()
    if not isinstance(data, dict):
        raise _annotation_error(pod, key, raw, "must be a JSON object")
    names = data.get("resourceNames")
    if names is None:
        return ()
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise _annotation_error(pod, key, raw, "resourceNames: must be a list of strings")
    return tuple(names)


def exact_match(
    requests: Mapping[str, int], allocatable: Mapping[str, int], resource_names: Sequence[str] | None
) -> bool:
    """Koordinator's ExactMatchReservation: each named resource is in both and equal, or in neither.

    As upstream, a resource absent from both ends the check with a match (later names are not checked).
    """
    if not resource_names:
        return True
    for name in resource_names:
        in_r = name in allocatable
        in_p = name in requests
        if not in_r or not in_p:
            return not in_r and not in_p
        if allocatable[name] != requests[name]:
            return False
    return True


def _go_json_string(s: str) -> str:
    """A JSON string as Go's encoding/json writes it (HTML characters escaped)."""
    out = json.dumps(s, ensure_ascii=False)
    return out.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def allocated_annotation_value(name: str, uid: str) -> str:
    """The ``reservation-allocated`` value as Koordinator writes it: ``{"name":"r1","uid":"..."}`` (empty
    fields omitted)."""
    parts = []
    if name:
        parts.append(f'"name":{_go_json_string(name)}')
    if uid:
        parts.append(f'"uid":{_go_json_string(uid)}')
    return "{" + ",".join(parts) + "}"


def parse_allocated(pod: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(name, uid)`` from the pod's ``reservation-allocated`` annotation.

    None when the annotation is missing or not a JSON object (Koordinator's readers skip such pods).
    """
    raw = _annotations(pod).get(ANNOTATION_RESERVATION_ALLOCATED)
    if raw is None or not isinstance(raw, str):
        return None
    return _parse_allocated_value(raw)


@functools.lru_cache(maxsize=4096)
def _parse_allocated_value(raw: str) -> tuple[str, str] | None:
    """`parse_allocated` of the annotation's value ``raw``; kept for the values seen last, as every version of
    an owner pod (bound, started, ...) carries the same one and each of its watch events reads it again."""
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if data is None:
        return ("", "")
    if not isinstance(data, dict):
        return None
    name, uid = data.get("name"), data.get("uid")
    if (name is not None and not isinstance(name, str)) or (uid is not None and not isinstance(uid, str)):
        return None
    return (name or "", uid or "")


# --- reservation spec accessors ---------------------------------------------------------------------------


def _spec(reservation: Mapping[str, Any]) -> Mapping[str, Any]:
    return reservation.get("spec") or _EMPTY


def reservation_requests(reservation: Mapping[str, Any]) -> dict[str, int]:
    """``pod_requests`` of ``spec.template.spec`` (cpu milli, other resources integer; zeros dropped).

    Raises InvalidObjectError naming the reservation and the ``spec.template.spec...`` path of a bad quantity.
    """
    template = _spec(reservation).get("template")
    if not isinstance(template, Mapping):
        return {}
    pod_spec = template.get("spec")
    if not isinstance(pod_spec, Mapping):
        return {}
    try:
        return pod_requests({"spec": pod_spec})
    except InvalidObjectError as e:
        raise InvalidObjectError(
            str(reservation.get("kind") or "Reservation"),
            namespaced_name(reservation),
            "spec.template." + e.path,
            e.value,
            e.message,
        ) from None


def reservation_allocatable(reservation: Mapping[str, Any]) -> dict[str, int]:
    """What the reservation holds: ``status.allocatable`` once it is Available on a node, else its requests.

    (Koordinator's ReservationRequests.) Amounts as :func:`reservation_requests`.
    """
    status = reservation.get("status") or _EMPTY
    if status.get("phase") == PHASE_AVAILABLE and status.get("nodeName"):
        alloc = status.get("allocatable")
        if isinstance(alloc, Mapping):
            try:
                return node_allocatable({"status": {"allocatable": alloc}})
            except InvalidObjectError as e:
                raise InvalidObjectError(
                    str(reservation.get("kind") or "Reservation"),
                    namespaced_name(reservation),
                    e.path,
                    e.value,
                    e.message,
                ) from None
    return reservation_requests(reservation)


def reservation_taints(reservation: Mapping[str, Any]) -> tuple[Taint, ...]:
    """``spec.taints`` as Taint values."""
    taints = _spec(reservation).get("taints")
    return parse_taints(taints) if isinstance(taints, list) else ()


def ttl_seconds(reservation: Mapping[str, Any]) -> float | None:
    """``spec.ttl`` in seconds: the CRD default ``24h`` when absent, None when ``0`` (never expires).

    Raises InvalidObjectError for an unparseable duration.
    """
    ttl = _spec(reservation).get("ttl")
    if ttl is None:
        return DEFAULT_TTL_SECONDS
    seconds = _parse_ttl(reservation, ttl)
    return None if seconds == 0 else seconds


def _parse_ttl(reservation: Mapping[str, Any], ttl: object) -> float:
    if not isinstance(ttl, str):
        raise InvalidObjectError(
            "Reservation",
            namespaced_name(reservation),
            "spec.ttl",
            ttl,
            schema_type_message("spec.ttl", ttl, "string"),
        )
    try:
        return parse_go_duration(ttl)
    except ValueError as e:
        raise InvalidObjectError(
            "Reservation",
            namespaced_name(reservation),
            "spec.ttl",
            ttl,
            f"Invalid value: {json.dumps(ttl)}: {e}",
        ) from None


_RFC3339_RE = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})"
)


def parse_rfc3339(text: str) -> datetime:
    """Parse an RFC 3339 timestamp (``2024-01-01T00:00:00Z``, fractions and offsets allowed) to aware UTC.

    Raises ValueError for anything else.
    """
    m = _RFC3339_RE.fullmatch(text) if isinstance(text, str) else None
    if m is None:
        raise ValueError(f"invalid RFC 3339 time {text!r}")
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    frac = m.group(7)
    micro = int((frac[1:] + "000000")[:6]) if frac else 0
    zone = m.group(8)
    if zone == "Z":
        offset = timedelta(0)
    else:
        oh, om = int(zone[1:3]), int(zone[4:6])
        if oh > 23 or om > 59:
            raise ValueError(f"invalid RFC 3339 time {text!r}")
        offset = timedelta(hours=oh, minutes=om) * (1 if zone[0] == "+" else -1)
    try:
        local = datetime(year, month, day, hour, minute, second, micro, tzinfo=UTC)
    except ValueError:
        raise ValueError(f"invalid RFC 3339 time {text!r}") from None
    return local - offset


def expiry(
    reservation: Mapping[str, Any], created_at: float, *, epoch: datetime | None = None
) -> float | None:
    """The clock time at which the reservation expires, or None when it never does.

    ``ttl: 0`` disables expiry (even with ``expires``). Otherwise it is the earlier of ``expires`` and
    ``created_at`` + ``ttl``; with neither field the CRD default ``24h`` applies. *created_at* is the clock
    time of ``metadata.creationTimestamp``; ``expires`` is converted to clock time through *epoch* (the
    clock's zero as a datetime) when given, else relative to ``creationTimestamp``. Raises
    InvalidObjectError for a bad ``ttl`` or ``expires``.
    """
    spec = _spec(reservation)
    ttl = spec.get("ttl")
    expires = spec.get("expires")
    ttl_s = _parse_ttl(reservation, ttl) if ttl is not None else None
    if ttl_s == 0:
        return None
    deadlines: list[float] = []
    if expires is not None:
        deadlines.append(_expires_clock(reservation, expires, created_at, epoch))
    if ttl_s is not None:
        deadlines.append(created_at + ttl_s)
    elif expires is None:
        deadlines.append(created_at + DEFAULT_TTL_SECONDS)
    return min(deadlines)


def _expires_clock(
    reservation: Mapping[str, Any], expires: object, created_at: float, epoch: datetime | None
) -> float:
    try:
        when = parse_rfc3339(expires)  # type: ignore[arg-type]
    except ValueError:
        raise InvalidObjectError(
            "Reservation",
            namespaced_name(reservation),
            "spec.expires",
            expires,
            f"Invalid value: {json.dumps(expires)}: spec.expires in body must be of type date-time: "
            f"{json.dumps(expires)}",
        ) from None
    if epoch is not None:
        return (when - epoch).total_seconds()
    created_ts = (reservation.get("metadata") or _EMPTY).get("creationTimestamp")
    if isinstance(created_ts, str):
        try:
            created = parse_rfc3339(created_ts)
        except ValueError:
            created = None
        if created is not None:
            # creationTimestamp has whole seconds: it names the second created_at falls in
            return float(int(created_at // 1)) + (when - created).total_seconds()
    return (when - _DEFAULT_EPOCH).total_seconds()


def allocate_policy(reservation: Mapping[str, Any]) -> str:
    """``spec.allocatePolicy``: ``""`` (Default, deprecated: treated as Aligned by the plugin), ``Aligned`` or
    ``Restricted``."""
    policy = _spec(reservation).get("allocatePolicy")
    return policy if isinstance(policy, str) else ""


def is_available(reservation: Mapping[str, Any]) -> bool:
    """Scheduled on a node and in phase Available (IsReservationAvailable)."""
    status = reservation.get("status") or _EMPTY
    return bool(status.get("nodeName")) and status.get("phase") == PHASE_AVAILABLE


def is_active(reservation: Mapping[str, Any]) -> bool:
    """Scheduled on a node and Available or Waiting (IsReservationActive)."""
    status = reservation.get("status") or _EMPTY
    return bool(status.get("nodeName")) and status.get("phase") in (PHASE_AVAILABLE, PHASE_WAITING)


def is_unschedulable(reservation: Mapping[str, Any]) -> bool:
    """New pods may not allocate it: ``spec.unschedulable`` or the reservation is being deleted."""
    if (reservation.get("metadata") or _EMPTY).get("deletionTimestamp"):
        return True
    return bool(_spec(reservation).get("unschedulable"))


def reservation_order(reservation: Mapping[str, Any]) -> int:
    """The ``reservation-order`` label as an int64 (lower is preferred); 0 when absent or not an integer."""
    labels = (reservation.get("metadata") or _EMPTY).get("labels") or _EMPTY
    raw = labels.get(LABEL_RESERVATION_ORDER)
    if not isinstance(raw, str):
        return 0
    value = parse_int64(raw)
    return value if value is not None else 0


def is_allocate_once(reservation: Mapping[str, Any]) -> bool:
    """``spec.allocateOnce`` (default true)."""
    v = _spec(reservation).get("allocateOnce")
    return True if v is None else bool(v)


# --- validation -------------------------------------------------------------------------------------------


def _typed(ctx: Context, path: str, value: object, expected: str) -> None:
    if not is_schema_type(value, expected):
        ctx.fail(path, value, schema_type_message(path, value, expected))


def _validate_owner(ctx: Context, path: str, owner: object) -> None:
    _typed(ctx, path, owner, "object")
    assert isinstance(owner, Mapping)
    given = [k for k in ("object", "controller", "labelSelector") if owner.get(k) is not None]
    if not given:
        ctx.fail(path, owner, f"Invalid value: 0: {path} in body should have at least 1 properties")
    obj = owner.get("object")
    if obj is not None:
        _typed(ctx, f"{path}.object", obj, "object")
        for k, v in obj.items():
            if v is not None and not isinstance(v, str):
                _typed(ctx, f"{path}.object.{k}", v, "string")
    ctrl = owner.get("controller")
    if ctrl is not None:
        cpath = f"{path}.controller"
        _typed(ctx, cpath, ctrl, "object")
        for k in ("apiVersion", "kind", "name", "uid"):
            if ctrl.get(k) is None:
                ctx.required(f"{cpath}.{k}")
            _typed(ctx, f"{cpath}.{k}", ctrl.get(k), "string")
        ns = ctrl.get("namespace")
        if ns is not None:
            _typed(ctx, f"{cpath}.namespace", ns, "string")
        for k in ("controller", "blockOwnerDeletion"):
            if ctrl.get(k) is not None:
                _typed(ctx, f"{cpath}.{k}", ctrl.get(k), "boolean")
    sel = owner.get("labelSelector")
    if sel is not None:
        spath = f"{path}.labelSelector"
        _typed(ctx, spath, sel, "object")
        try:
            compile_label_selector(sel)
        except LabelSelectorError as e:
            if e.path:
                ctx.fail(f"{spath}.{e.path}", e.value, f"Invalid value: {_fmt(e.value)}: {e.message}")
            ctx.invalid(spath, sel, e.message)


def _fmt(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _validate_taints(ctx: Context, path: str, value: object) -> None:
    _typed(ctx, path, value, "array")
    assert isinstance(value, list)
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(value):
        tpath = f"{path}[{i}]"
        _typed(ctx, tpath, t, "object")
        key = t.get("key")
        if key is None:
            ctx.required(f"{tpath}.key")
        _typed(ctx, f"{tpath}.key", key, "string")
        if not key:
            ctx.required(f"{tpath}.key")
        errs = qualified_name_errors(key)
        if errs:
            ctx.invalid(f"{tpath}.key", key, errs[0])
        val = t.get("value")
        if val is not None:
            _typed(ctx, f"{tpath}.value", val, "string")
            errs = label_value_errors(val)
            if errs:
                ctx.invalid(f"{tpath}.value", val, errs[0])
        effect = t.get("effect")
        if effect is None:
            ctx.required(f"{tpath}.effect")
        _typed(ctx, f"{tpath}.effect", effect, "string")
        if effect not in TAINT_EFFECTS:
            ctx.not_supported(f"{tpath}.effect", effect, TAINT_EFFECTS)
        if (key, effect) in seen:
            ctx.duplicate(tpath, f"{key}:{effect}", "taints must be unique by key and effect pair")
        seen.add((key, effect))


def validate_reservation(obj: Mapping[str, Any], ctx: Context) -> None:
    """Validate a Reservation (CRD schema + template as a pod spec); raises through *ctx* (a validation Context)."""
    spec = obj.get("spec")
    if spec is None:
        ctx.required("spec.template")
    _typed(ctx, "spec", spec, "object")
    template = spec.get("template")
    if template is None:
        ctx.required("spec.template")
    _typed(ctx, "spec.template", template, "object")
    owners = spec.get("owners")
    if owners is None:
        ctx.required("spec.owners")
    _typed(ctx, "spec.owners", owners, "array")
    if not owners:
        ctx.required("spec.owners")
    for i, owner in enumerate(owners):
        _validate_owner(ctx, f"spec.owners[{i}]", owner)
    tmeta = template.get("metadata")
    if tmeta is not None:
        _typed(ctx, "spec.template.metadata", tmeta, "object")
        if tmeta.get("labels") is not None:
            ctx.label_map("spec.template.metadata.labels", tmeta.get("labels"))
    validate_pod_spec("spec.template.spec", template.get("spec"), ctx)
    try:
        reservation_requests(obj)
    except InvalidObjectError as e:
        ctx.fail(e.path, e.value, e.message)
    ttl = spec.get("ttl")
    if ttl is not None:
        _typed(ctx, "spec.ttl", ttl, "string")
        try:
            parse_go_duration(ttl)
        except ValueError as e:
            ctx.invalid("spec.ttl", ttl, str(e))
    expires = spec.get("expires")
    if expires is not None:
        _typed(ctx, "spec.expires", expires, "string")
        try:
            parse_rfc3339(expires)
        except ValueError:
            ctx.invalid(
                "spec.expires", expires, f"spec.expires in body must be of type date-time: {_fmt(expires)}"
            )
    for flag in ("allocateOnce", "preAllocation", "unschedulable"):
        if spec.get(flag) is not None:
            _typed(ctx, f"spec.{flag}", spec.get(flag), "boolean")
    policy = spec.get("allocatePolicy")
    if policy is not None:
        _typed(ctx, "spec.allocatePolicy", policy, "string")
        if policy and policy not in ALLOCATE_POLICIES:
            ctx.not_supported("spec.allocatePolicy", policy, ALLOCATE_POLICIES)
    pap = spec.get("preAllocationPolicy")
    if pap is not None:
        _typed(ctx, "spec.preAllocationPolicy", pap, "object")
        mode = pap.get("mode")
        if mode is not None:
            _typed(ctx, "spec.preAllocationPolicy.mode", mode, "string")
            if mode not in PRE_ALLOCATION_MODES:
                ctx.not_supported("spec.preAllocationPolicy.mode", mode, PRE_ALLOCATION_MODES)
        if pap.get("enableMultiple") is not None:
            _typed(ctx, "spec.preAllocationPolicy.enableMultiple", pap.get("enableMultiple"), "boolean")
    if spec.get("taints") is not None:
        _validate_taints(ctx, "spec.taints", spec.get("taints"))
