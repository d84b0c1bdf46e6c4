"""Reading a descheduler plugin's ``args`` (and the policy around them) with errors that name the place.

Upstream decodes every plugin's args strictly (unknown fields are errors) and validates them; `ArgsReader`
does both for one mapping: each accessor checks the type and records the field as known, and `finish`
rejects whatever is left, suggesting the nearest known name. Every error is a `PolicyError` whose text
starts with where the value sits (``profile "p": plugin "LowNodeUtilization": args.thresholds.cpu``);
`raise_all` raises several validation errors at once, as upstream aggregates them; `json_type_name` names a
value's JSON type in such messages.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

from berth.api.checks import schema_type
from berth.api.labels import LabelSelectorError, Selector, compile_label_selector
from berth.api.wellknown import parse_duration

__all__ = ["ArgsReader", "PolicyError", "json_type_name"]

_TYPE_META = ("apiVersion", "kind")
"""Args types embed TypeMeta upstream, so their strict decoding accepts these two."""


class PolicyError(ValueError):
    """A DeschedulerPolicy (or plugin args) that cannot be used; the text names profile, plugin and field."""


def json_type_name(value: object) -> str:
    """What a decoded JSON value is called in messages: null, boolean, number, string, array, object."""
    kind = schema_type(value)
    return "number" if kind == "integer" else kind


class ArgsReader:
    """Typed, strict access to one mapping of args; `where` prefixes every error message."""

    def __init__(self, raw: Mapping[str, Any] | None, where: str) -> None:
        """`raw` is the args mapping (None reads as empty); `where` says whose args these are."""
        if raw is not None and not isinstance(raw, Mapping):
            raise PolicyError(f"{where}: must be an object, not {json_type_name(raw)}")
        self.raw: Mapping[str, Any] = raw or {}
        self.where = where
        self._seen: set[str] = set()

    def error(self, field: str, message: str) -> PolicyError:
        """A PolicyError about `field` (a dotted path below this reader)."""
        return PolicyError(f"{self.where}.{field}: {message}" if field else f"{self.where}: {message}")

    def has(self, name: str) -> bool:
        """Whether the field is present (and not null); marks it known."""
        self._seen.add(name)
        return self.raw.get(name) is not None

    def value(self, name: str) -> Any:
        """The raw value of a field (None when absent); marks it known."""
        self._seen.add(name)
        return self.raw.get(name)

    def flag(self, name: str, default: bool = False) -> bool:
        """A boolean field."""
        v = self.value(name)
        if v is None:
            return default
        if not isinstance(v, bool):
            raise self.error(name, f"must be a boolean, not {json_type_name(v)} {v!r}")
        return v

    def integer(self, name: str, default: int | None = None, *, minimum: int | None = None) -> int | None:
        """An integer field (None when absent and no default), at least `minimum` when given."""
        v = self.value(name)
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, int):
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            else:
                raise self.error(name, f"must be an integer, not {json_type_name(v)} {v!r}")
        if minimum is not None and v < minimum:
            raise self.error(name, f"must be at least {minimum}, not {v}")
        return v

    def number(self, name: str, default: float | None = None) -> float | None:
        """A number field (int or float)."""
        v = self.value(name)
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise self.error(name, f"must be a number, not {json_type_name(v)} {v!r}")
        return float(v)

    def string(self, name: str, default: str = "", *, choices: tuple[str, ...] | None = None) -> str:
        """A string field, one of `choices` when given."""
        v = self.value(name)
        if v is None:
            return default
        if not isinstance(v, str):
            raise self.error(name, f"must be a string, not {json_type_name(v)} {v!r}")
        if choices is not None and v not in choices:
            raise self.error(name, f"unsupported value {v!r}: must be one of {', '.join(choices)}")
        return v

    def strings(self, name: str) -> tuple[str, ...]:
        """A list of strings (empty when absent)."""
        v = self.value(name)
        if v is None:
            return ()
        if not isinstance(v, list):
            raise self.error(name, f"must be a list of strings, not {json_type_name(v)}")
        for i, item in enumerate(v):
            if not isinstance(item, str):
                raise self.error(f"{name}[{i}]", f"must be a string, not {json_type_name(item)} {item!r}")
        return tuple(v)

    def integers(self, name: str) -> tuple[int, ...]:
        """A list of integers (empty when absent)."""
        v = self.value(name)
        if v is None:
            return ()
        if not isinstance(v, list):
            raise self.error(name, "must be a list of integers")
        for i, item in enumerate(v):
            if isinstance(item, bool) or not isinstance(item, int):
                raise self.error(f"{name}[{i}]", f"must be an integer, not {item!r}")
        return tuple(v)

    def duration(self, name: str) -> float | None:
        """A Go duration string (``"5m"``) in seconds, None when absent."""
        v = self.string(name)
        if not v:
            return None
        try:
            return parse_duration(v)
        except ValueError:
            raise self.error(name, f"invalid duration {v!r}") from None

    def label_selector(self, name: str) -> Selector | None:
        """A metav1.LabelSelector field compiled, None when absent."""
        v = self.value(name)
        if v is None:
            return None
        if not isinstance(v, Mapping):
            raise self.error(name, f"must be a label selector object, not {json_type_name(v)}")
        sub = ArgsReader(v, f"{self.where}.{name}")
        sub.value("matchLabels")
        sub.value("matchExpressions")
        sub.finish()
        try:
            return compile_label_selector(dict(v))
        except LabelSelectorError as e:
            raise self.error(name, str(e)) from None

    def child(self, name: str) -> ArgsReader:
        """A reader for a nested object field (empty when absent)."""
        v = self.value(name)
        if v is not None and not isinstance(v, Mapping):
            raise self.error(name, f"must be an object, not {json_type_name(v)}")
        return ArgsReader(v, f"{self.where}.{name}")

    def raise_all(self, errors: Sequence[tuple[str, str]]) -> None:
        """Raise the validation errors, each a (field, message) pair, if any: one as it is, several joined."""
        if len(errors) == 1:
            raise self.error(*errors[0])
        if errors:
            raise PolicyError("; ".join(str(self.error(f, m)) for f, m in errors))

    def finish(self) -> None:
        """Reject fields that no accessor asked for (strict decoding), suggesting the nearest known name."""
        unknown = [k for k in self.raw if k not in self._seen and k not in _TYPE_META]
        if not unknown:
            return
        name = str(unknown[0])
        near = difflib.get_close_matches(name, sorted(self._seen), n=1)
        hint = f' (did you mean "{near[0]}"?)' if near else ""
        raise PolicyError(f'{self.where}: strict decoding error: unknown field "{name}"{hint}')
