"""Name and label syntax checks (apimachinery ``util/validation``), returning error details."""

from __future__ import annotations

import re

__all__ = [
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "label_value_errors",
    "qualified_name_errors",
]

_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_LABEL + r"(\." + _DNS1123_LABEL + ")*")
_QUALIFIED_NAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_RE = re.compile(_QUALIFIED_NAME)

_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '" + _DNS1123_LABEL + r"(\." + _DNS1123_LABEL + ")*')"
)
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '" + _DNS1123_LABEL + "')"
)
_NAME_PART_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '" + _QUALIFIED_NAME + "')"
)
_QUALIFIED_MSG = (
    "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '" + _QUALIFIED_NAME + "') with an optional DNS subdomain prefix and '/' (e.g. "
    "'example.com/MyName')"
)
_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(" + _QUALIFIED_NAME + ")?')"
)


def dns1123_subdomain_errors(value: str) -> list[str]:
    """Problems with *value* as an RFC 1123 subdomain (lowercase alnum, '-', '.'; at most 253 chars)."""
    errs = []
    if len(value) > 253:
        errs.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(_SUBDOMAIN_MSG)
    return errs


def dns1123_label_errors(value: str) -> list[str]:
    """Problems with *value* as an RFC 1123 label (lowercase alnum and '-'; at most 63 chars)."""
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS1123_LABEL_RE.fullmatch(value):
        errs.append(_LABEL_MSG)
    return errs


def qualified_name_errors(value: str) -> list[str]:
    """Problems with *value* as a qualified name (label/annotation key): ``[prefix/]name``."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain_errors(prefix))
    else:
        return [_QUALIFIED_MSG]
    if not name:
        errs.append("name part must be non-empty")
    else:
        if len(name) > 63:
            errs.append("name part must be no more than 63 characters")
        if not _QUALIFIED_NAME_RE.fullmatch(name):
            errs.append(_NAME_PART_MSG)
    return errs


def label_value_errors(value: str) -> list[str]:
    """Problems with *value* as a label value (empty, or a qualified-name part; at most 63 chars)."""
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if value and not _QUALIFIED_NAME_RE.fullmatch(value):
        errs.append(_VALUE_MSG)
    return errs
