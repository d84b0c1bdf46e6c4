"""Label selectors: apimachinery `labels.Selector` / `labels.Requirement` and `metav1.LabelSelector`.

`compile_label_selector` turns a wire-form ``metav1.LabelSelector`` dict into a `Selector`; `parse_selector`
parses the string form used by kubectl and ``?labelSelector=``. Both validate keys and values like the API server.
Selectors are immutable and hashable; `Selector.matches` is the hot path and is precompiled.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from berth.api import names

__all__ = [
    "LabelSelectorError",
    "Requirement",
    "Selector",
    "compile_label_selector",
    "everything",
    "label_value_errors",
    "nothing",
    "parse_selector",
    "qualified_name_errors",
    "selector_from_set",
]

_Labels = Mapping[str, str]
_Matcher = Callable[[_Labels], bool]


class LabelSelectorError(ValueError):
    """A label selector (wire form or string form) is invalid; names the field path and the value."""

    def __init__(self, path: str, value: object, message: str) -> None:
        """Record `path` (e.g. ``matchExpressions[0].values``; "" for string selectors), `value` and `message`."""
        self.path = path
        self.value = value
        self.message = message
        super().__init__(self._render())

    def _render(self) -> str:
        if not self.path:
            return self.message
        return f"{self.path}: Invalid value: {_fmt_value(self.value)}: {self.message}"


def _fmt_value(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


# --- key / value validation (k8s.io/apimachinery/pkg/util/validation, in berth.api.names) -----------------


@lru_cache(maxsize=8192)
def qualified_name_errors(key: str) -> tuple[str, ...]:
    """Why `key` is not a valid label key (a Kubernetes qualified name); empty when it is valid."""
    return tuple(names.qualified_name_errors(key))


@lru_cache(maxsize=8192)
def label_value_errors(value: str) -> tuple[str, ...]:
    """Why `value` is not a valid label value; empty when it is valid."""
    return tuple(names.label_value_errors(value))


# --- Requirement ------------------------------------------------------------------------------------------

# Operator spellings accepted, mapped to the canonical (string-form / selection.Operator) spelling.
_CANONICAL_OP: dict[str, str] = {
    "In": "in",
    "NotIn": "notin",
    "Exists": "exists",
    "DoesNotExist": "!",
    "Gt": "gt",
    "Lt": "lt",
    "in": "in",
    "notin": "notin",
    "exists": "exists",
    "!": "!",
    "=": "=",
    "==": "==",
    "!=": "!=",
    "gt": "gt",
    "lt": "lt",
    ">": "gt",
    "<": "lt",
}
_INT64_RE = re.compile(r"[+-]?[0-9]+")
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


def _parse_int64(s: str) -> int | None:
    """strconv.ParseInt(s, 10, 64), None on error."""
    if not _INT64_RE.fullmatch(s):
        return None
    v = int(s)
    return v if _INT64_MIN <= v <= _INT64_MAX else None


def _never(labels: _Labels) -> bool:
    return False


def _build_matcher(key: str, op: str, values: tuple[str, ...]) -> _Matcher:
    """A closure answering Requirement.matches for canonical operator `op`."""
    if op in ("=", "==", "in"):
        if len(values) == 1:
            only = values[0]
            return lambda labels: labels.get(key) == only
        vals = frozenset(values)
        return lambda labels: labels.get(key) in vals
    if op in ("!=", "notin"):
        if len(values) == 1:
            only = values[0]
            return lambda labels: labels.get(key) != only
        nvals = frozenset(values)
        return lambda labels: labels.get(key) not in nvals
    if op == "exists":
        return lambda labels: key in labels
    if op == "!":
        return lambda labels: key not in labels
    # gt / lt: both sides must be int64; exactly one value
    if len(values) != 1:
        return _never
    bound = _parse_int64(values[0])
    if bound is None:
        return _never
    greater = op == "gt"

    def compare(labels: _Labels) -> bool:
        raw = labels.get(key)
        if raw is None:
            return False
        v = _parse_int64(raw)
        if v is None:
            return False
        return v > bound if greater else v < bound

    return compare


@dataclass(frozen=True, slots=True)
class Requirement:
    """One selector term: `key` `operator` `values`.

    Operators: metav1 form ``In, NotIn, Exists, DoesNotExist`` (and ``Gt, Lt``) or string form ``=, ==, !=,
    in, notin, exists, !, gt (>), lt (<)``. ``NotIn`` / ``!=`` / ``!`` match when the key is absent; ``Gt`` /
    ``Lt`` compare as int64 and fail when the label is absent or not an integer. Construct directly for an
    unvalidated requirement; the selector builders validate.
    """

    key: str
    operator: str
    values: tuple[str, ...]
    _fn: _Matcher = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Precompile the matcher; unknown operators are rejected."""
        op = _CANONICAL_OP.get(self.operator)
        if op is None:
            raise LabelSelectorError(
                "operator", self.operator, f"operator '{self.operator}' is not recognized"
            )
        if not isinstance(self.values, tuple):
            object.__setattr__(self, "values", tuple(self.values))
        object.__setattr__(self, "_fn", _build_matcher(self.key, op, self.values))

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a label set satisfies this requirement."""
        return self._fn(labels)

    @property
    def canonical_operator(self) -> str:
        """The operator in string-form spelling (``in``, ``notin``, ``exists``, ``!``, ``=``, ``gt`` ...)."""
        return _CANONICAL_OP[self.operator]

    def __str__(self) -> str:
        """The string form as apimachinery prints it (values sorted), e.g. ``env in (a,b)`` or ``!k``."""
        op = _CANONICAL_OP[self.operator]
        if op == "!":
            return "!" + self.key
        if op == "exists":
            return self.key
        vals = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        if op == "in":
            return f"{self.key} in ({vals})"
        if op == "notin":
            return f"{self.key} notin ({vals})"
        sym = {"=": "=", "==": "==", "!=": "!=", "gt": ">", "lt": "<"}[op]
        return f"{self.key}{sym}{vals}"


def _validated(key: str, op: str, values: tuple[str, ...], path: str) -> Requirement:
    """labels.NewRequirement: validate key, value count for the operator and every value."""
    pfx = path + "." if path else ""
    errs = qualified_name_errors(key) if isinstance(key, str) else ("must be a string",)
    if errs:
        raise LabelSelectorError(pfx + "key", key, "; ".join(errs))
    canon = _CANONICAL_OP[op]
    vpath = pfx + "values"
    if canon in ("in", "notin"):
        if not values:
            raise LabelSelectorError(vpath, [], "for 'in', 'notin' operators, values set can't be empty")
    elif canon in ("=", "==", "!="):
        if len(values) != 1:
            raise LabelSelectorError(
                vpath, list(values), "exact-match compatibility requires one single value"
            )
    elif canon in ("exists", "!"):
        if values:
            raise LabelSelectorError(
                vpath, list(values), "values set must be empty for exists and does not exist"
            )
    else:
        if len(values) != 1:
            raise LabelSelectorError(
                vpath, list(values), "for 'Gt', 'Lt' operators, exactly one value is required"
            )
        if not isinstance(values[0], str) or _parse_int64(values[0]) is None:
            raise LabelSelectorError(
                vpath + "[0]", values[0], "for 'Gt', 'Lt' operators, the value must be an integer"
            )
    for i, v in enumerate(values):
        if not isinstance(v, str):
            raise LabelSelectorError(f"{vpath}[{i}]", v, "must be a string")
        verrs = label_value_errors(v)
        if verrs:
            raise LabelSelectorError(f"{vpath}[{i}]", v, "; ".join(verrs))
    return Requirement(key, op, values)


# --- Selector ---------------------------------------------------------------------------------------------


class Selector:
    """An immutable AND of requirements (sorted by key); also the special "nothing" selector."""

    __slots__ = ("_eq", "_hash", "_nothing", "_reqs", "_rest")

    def __init__(self, requirements: Iterable[Requirement] = (), *, _nothing: bool = False) -> None:
        """Build a selector from requirements (stably sorted by key, as apimachinery does)."""
        reqs = tuple(sorted(requirements, key=lambda r: r.key))
        self._reqs = reqs
        self._nothing = _nothing
        eq: list[tuple[str, str]] = []
        rest: list[_Matcher] = []
        for r in reqs:
            op = _CANONICAL_OP[r.operator]
            if op in ("=", "==", "in") and len(r.values) == 1:
                eq.append((r.key, r.values[0]))
            else:
                rest.append(r._fn)
        self._eq = tuple(eq)
        self._rest = tuple(rest)
        self._hash = hash((_nothing, reqs))

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a label set satisfies every requirement (never, for the nothing selector)."""
        if self._nothing:
            return False
        get = labels.get
        for k, v in self._eq:
            if get(k) != v:
                return False
        for fn in self._rest:  # noqa: SIM110 - a plain loop beats all(genexpr) on this hot path
            if not fn(labels):
                return False
        return True

    @property
    def requirements(self) -> tuple[Requirement, ...]:
        """The requirements, sorted by key (empty for everything and nothing)."""
        return self._reqs

    @property
    def equalities(self) -> tuple[tuple[str, str], ...]:
        """The (key, value) pairs a matching label set must hold exactly (from ``=``, ``==`` and
        single-valued ``in``); an index on them narrows the candidates."""
        return self._eq

    def is_everything(self) -> bool:
        """True when the selector has no requirements and matches every label set."""
        return not self._nothing and not self._reqs

    def is_nothing(self) -> bool:
        """True for the selector that matches no label set (a nil metav1.LabelSelector)."""
        return self._nothing

    def __str__(self) -> str:
        """Canonical string form (requirements joined by ","); "" for everything and, like upstream, nothing."""
        return ",".join(str(r) for r in self._reqs)

    def __repr__(self) -> str:
        """Debug representation that distinguishes nothing from everything."""
        if self._nothing:
            return "Selector(<nothing>)"
        return f"Selector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        """Structural equality."""
        if not isinstance(other, Selector):
            return NotImplemented
        return self._nothing == other._nothing and self._reqs == other._reqs

    def __hash__(self) -> int:
        """Hash consistent with equality."""
        return self._hash


_EVERYTHING = Selector()
_NOTHING = Selector(_nothing=True)


def everything() -> Selector:
    """The selector matching every label set."""
    return _EVERYTHING


def nothing() -> Selector:
    """The selector matching no label set."""
    return _NOTHING


def selector_from_set(labels: Mapping[str, str]) -> Selector:
    """Equality selector for a label set (labels.SelectorFromSet; not validated); {} → everything."""
    if not labels:
        return _EVERYTHING
    return Selector(Requirement(k, "=", (v,)) for k, v in labels.items())


_METAV1_OPS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


def compile_label_selector(sel: Mapping[str, Any] | None) -> Selector:
    """Compile a wire-form metav1.LabelSelector: None → nothing, {} → everything; raises LabelSelectorError."""
    if sel is None:
        return _NOTHING
    match_labels = sel.get("matchLabels") or {}
    match_exprs = sel.get("matchExpressions") or []
    if not match_labels and not match_exprs:
        return _EVERYTHING
    if not isinstance(match_labels, Mapping):
        raise LabelSelectorError("matchLabels", match_labels, "must be an object")
    if not isinstance(match_exprs, list):
        raise LabelSelectorError("matchExpressions", match_exprs, "must be a list")
    reqs: list[Requirement] = []
    for k, v in match_labels.items():
        kerrs = qualified_name_errors(k) if isinstance(k, str) else ("must be a string",)
        if kerrs:
            raise LabelSelectorError("matchLabels", k, "; ".join(kerrs))
        verrs = label_value_errors(v) if isinstance(v, str) else ("must be a string",)
        if verrs:
            raise LabelSelectorError(f"matchLabels[{k}]", v, "; ".join(verrs))
        reqs.append(Requirement(k, "=", (v,)))
    for i, expr in enumerate(match_exprs):
        path = f"matchExpressions[{i}]"
        if not isinstance(expr, Mapping):
            raise LabelSelectorError(path, expr, "must be an object")
        raw_op = expr.get("operator")
        op = _METAV1_OPS.get(raw_op) if isinstance(raw_op, str) else None
        if op is None:
            raise LabelSelectorError(
                path + ".operator", raw_op, f"{_fmt_value(raw_op)} is not a valid label selector operator"
            )
        values = expr.get("values") or ()
        if not isinstance(values, (list, tuple)):
            raise LabelSelectorError(path + ".values", values, "must be a list")
        reqs.append(_validated(expr.get("key", ""), op, tuple(values), path))
    return Selector(reqs)


# --- string form parser (labels.Parse) --------------------------------------------------------------------

_SPECIAL = frozenset("=!(),><")
_WS = frozenset(" \t\r\n")
# token kinds
_ID, _END, _OPEN, _CLOSE, _COMMA, _NOT, _EQ, _DEQ, _NEQ, _GT, _LT, _IN, _NOTIN = range(13)
_LITERALS = {
    ")": _CLOSE,
    ",": _COMMA,
    "!": _NOT,
    "==": _DEQ,
    "=": _EQ,
    ">": _GT,
    "in": _IN,
    "<": _LT,
    "!=": _NEQ,
    "notin": _NOTIN,
    "(": _OPEN,
}
_BINARY_OPS = "in, notin, =, ==, !=, gt, lt"


def _lex(s: str) -> list[tuple[int, str]]:
    """Tokenize a selector string like apimachinery's lexer (keywords only when a whole word)."""
    out: list[tuple[int, str]] = []
    i, n = 0, len(s)
    while True:
        while i < n and s[i] in _WS:
            i += 1
        if i >= n:
            out.append((_END, ""))
            return out
        if s[i] in _SPECIAL:
            # longest run of special symbols that still forms a known token
            j, tok, lit = i, -1, ""
            while j < n and s[j] in _SPECIAL:
                cand = s[i : j + 1]
                t = _LITERALS.get(cand)
                if t is not None:
                    tok, lit = t, cand
                elif tok != -1:
                    break
                j += 1
            # every single special symbol is a token, so tok is always set here
            out.append((tok, lit))
            i += len(lit)
        else:
            j = i
            while j < n and s[j] not in _SPECIAL and s[j] not in _WS:
                j += 1
            word = s[i:j]
            out.append((_LITERALS.get(word, _ID), word))
            i = j


class _Parser:
    __slots__ = ("pos", "toks")

    def __init__(self, s: str) -> None:
        self.toks = _lex(s)
        self.pos = 0

    def look(self, values: bool = True) -> tuple[int, str]:
        tok, lit = self.toks[self.pos]
        if values and tok in (_IN, _NOTIN):
            tok = _ID
        return tok, lit

    def take(self, values: bool = True) -> tuple[int, str]:
        tok, lit = self.look(values)
        if self.pos < len(self.toks) - 1:
            self.pos += 1
        return tok, lit

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self.look()
            if tok in (_ID, _NOT):
                reqs.append(self.requirement())
                t, lt = self.take()
                if t == _END:
                    return reqs
                if t == _COMMA:
                    t2, l2 = self.look()
                    if t2 not in (_ID, _NOT):
                        raise ValueError(f"found '{l2}', expected: identifier after ','")
                else:
                    raise ValueError(f"found '{lt}', expected: ',' or 'end of string'")
            elif tok == _END:
                return reqs
            else:
                raise ValueError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def requirement(self) -> Requirement:
        try:
            return self._requirement()
        except ValueError as e:
            raise ValueError(f"unable to parse requirement: {e}") from None

    def _requirement(self) -> Requirement:
        op = ""
        tok, lit = self.take()
        if tok == _NOT:
            op = "!"
            tok, lit = self.take()
        if tok != _ID:
            raise ValueError(f"found '{lit}', expected: identifier")
        key = lit
        errs = qualified_name_errors(key)
        if errs:
            raise LabelSelectorError("key", key, "; ".join(errs))
        if op == "!":
            return _validated(key, "!", (), "")
        nxt, _ = self.look()
        if nxt in (_END, _COMMA):
            return _validated(key, "exists", (), "")
        t, lt = self.take(values=False)
        op = {_IN: "in", _EQ: "=", _DEQ: "==", _GT: "gt", _LT: "lt", _NOTIN: "notin", _NEQ: "!="}.get(t, "")
        if not op:
            raise ValueError(f"found '{lt}', expected: {_BINARY_OPS}")
        values = self.value_set() if op in ("in", "notin") else self.exact_value()
        return _validated(key, op, tuple(sorted(values)), "")

    def value_set(self) -> set[str]:
        tok, lit = self.take()
        if tok != _OPEN:
            raise ValueError(f"found '{lit}' expected: '('")
        tok, lit = self.look()
        if tok in (_ID, _COMMA):
            s = self.identifiers()
            if self.take()[0] != _CLOSE:
                raise ValueError(f"found '{lit}', expected: ')'")
            return s
        if tok == _CLOSE:
            self.take()
            return {""}
        raise ValueError(f"found '{lit}', expected: ',', ')' or identifier")

    def identifiers(self) -> set[str]:
        s: set[str] = set()
        while True:
            tok, lit = self.take()
            if tok == _ID:
                s.add(lit)
                t2, l2 = self.look()
                if t2 == _COMMA:
                    continue
                if t2 == _CLOSE:
                    return s
                raise ValueError(f"found '{l2}', expected: ',' or ')'")
            if tok == _COMMA:
                if not s:
                    s.add("")
                t2, _ = self.look()
                if t2 == _CLOSE:
                    s.add("")
                    return s
                if t2 == _COMMA:
                    self.take()
                    s.add("")
            else:
                raise ValueError(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        tok, _ = self.look()
        if tok in (_END, _COMMA):
            return {""}
        tok, lit = self.take()
        if tok == _ID:
            return {lit}
        raise ValueError(f"found '{lit}', expected: identifier")


@lru_cache(maxsize=4096)
def parse_selector(s: str) -> Selector:
    """Parse the string form ("a=b,c!=d,e in (x,y),!f,g,h>3"); "" → everything; raises LabelSelectorError."""
    try:
        reqs = _Parser(s).parse()
    except ValueError as e:
        raise LabelSelectorError("", s, str(e)) from None
    return Selector(reqs) if reqs else _EVERYTHING
