"""Kubernetes ``resource.Quantity`` parsing, rounding and formatting (apimachinery semantics).

Parsing follows apimachinery's ``ParseQuantity`` exactly, including its quirks:

* grammar ``<sign><digits>[.<digits>]<suffix>`` where the suffix is a binary-SI suffix
  (``Ki Mi Gi Ti Pi Ei``), a decimal-SI suffix (``n u m "" k M G T P E``) or a decimal exponent
  (``e3``, ``E-3``, ``e+3``); ``.5`` and ``5.`` are accepted, ``1K`` / ``1KB`` / ``""`` / ``" 1"`` are not;
* the parsed value is exact, except that a non-zero value is rounded away from zero to a whole
  number of nano-units (``1e-12`` -> ``1n``) and the magnitude is capped at ``2**63 - 1``;
* ``Value()`` / ``MilliValue()`` round the magnitude *up* (``0.0001`` -> ``1m``, ``0.1Ki`` -> ``103``).

Every parsed quantity is therefore an integer number of nano-units, which is how values are held
internally (:func:`nano_value`); sums of such integers are exact and cheap.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

from berth.api.errors import QuantityError

__all__ = [
    "format_quantity",
    "format_resource",
    "int_value",
    "milli_value",
    "nano_value",
    "parse_quantity",
    "resource_amount",
]

_NANO = 10**9
_MAX_INT64 = (1 << 63) - 1
_MAX_NANO = _MAX_INT64 * _NANO

# sign, integer digits, fraction digits (None when there is no '.'), suffix
_QUANTITY_RE = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)")
_EXPONENT_RE = re.compile(r"[eE]([+-]?[0-9]+)")

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BINARY_FORMAT = (
    ("Ei", 1 << 60),
    ("Pi", 1 << 50),
    ("Ti", 1 << 40),
    ("Gi", 1 << 30),
    ("Mi", 1 << 20),
    ("Ki", 1 << 10),
)


def _interpret_suffix(text: str, suffix: str) -> tuple[int, int]:
    """Return (base, exponent) for a suffix, or raise QuantityError."""
    exponent = _DECIMAL_SUFFIXES.get(suffix)
    if exponent is not None:
        return 10, exponent
    exponent = _BINARY_SUFFIXES.get(suffix)
    if exponent is not None:
        return 2, exponent
    m = _EXPONENT_RE.fullmatch(suffix)
    if m is None:
        raise QuantityError(text, f"unknown suffix {suffix!r}")
    parsed = int(m.group(1))
    if not -(1 << 63) <= parsed < (1 << 63):
        raise QuantityError(text, "exponent out of range")
    # Go converts the int64 exponent to int32 (wrapping).
    return 10, ((parsed + (1 << 31)) % (1 << 32)) - (1 << 31)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _parse_nano(text: str) -> int:
    """Parse a quantity string into an exact signed number of nano-units."""
    if not text:
        raise QuantityError(text, "empty string")
    m = _QUANTITY_RE.fullmatch(text)
    if m is None:
        raise QuantityError(text)
    sign, num, denom, suffix = m.groups()
    denom = denom or ""
    base, exponent = _interpret_suffix(text, suffix)
    if not num and not denom:
        # apimachinery only reads the numeric text on its slow path, which fails on an empty number.
        slow = exponent < -9 if base == 10 else 13 - int(exponent * 3 / 10) < 0
        if slow:
            raise QuantityError(text, "no digits")
        return 0
    digits = int(num + denom) if (num or denom) else 0
    if digits == 0:
        return 0
    if base == 2:
        magnitude = _ceil_div(digits * (1 << exponent) * _NANO, 10 ** len(denom))
    else:
        shift = exponent - len(denom) + 9  # value in nano-units = digits * 10**shift
        ndigits = len(str(digits))
        if shift >= 0:
            magnitude = _MAX_NANO + 1 if shift + ndigits > 40 else digits * 10**shift
        elif shift + ndigits < 0:
            magnitude = 1  # smaller than one nano-unit: rounds up to 1n
        else:
            magnitude = _ceil_div(digits, 10**-shift)
    magnitude = min(magnitude, _MAX_NANO)
    return -magnitude if sign == "-" else magnitude


@lru_cache(maxsize=65536, typed=True)
def nano_value(value: str | int | float) -> int:
    """Return the quantity as an exact signed integer number of nano-units (1e-9).

    Accepts a quantity string or a JSON/YAML number (read as its decimal text); raises
    :class:`QuantityError` on anything else.
    """
    if isinstance(value, str):
        return _parse_nano(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise QuantityError(value, "not a string or number")
    if isinstance(value, float) and not math.isfinite(value):
        raise QuantityError(value, "not a finite number")
    return _parse_nano(str(value) if isinstance(value, int) else repr(value))


def parse_quantity(value: str | int | float) -> Fraction:
    """Parse a Kubernetes quantity into its exact value (after apimachinery's nano rounding and cap)."""
    return Fraction(nano_value(value), _NANO)


def _round_up(nano: int, unit: int) -> int:
    """Divide a nano amount by *unit*, rounding the magnitude up (as int64Amount scaling does)."""
    q = -(-abs(nano) // unit)
    return q if nano >= 0 else -q


def milli_value(value: str | int | float) -> int:
    """Return ``MilliValue()``: the value in thousandths, magnitude rounded up (``"0.0001"`` -> 1)."""
    return _round_up(nano_value(value), 1_000_000)


def int_value(value: str | int | float) -> int:
    """Return ``Value()``: the value as an integer, magnitude rounded up (``"0.1Ki"`` -> 103)."""
    return _round_up(nano_value(value), _NANO)


def resource_amount(resource: str, value: str | int | float) -> int:
    """Return the scheduler's integer amount for *resource*: milli-units for ``cpu``, else ``Value()``."""
    return milli_value(value) if resource == "cpu" else int_value(value)


def _format_fraction(value: Fraction) -> str:
    """Format a non-integer value with the smallest decimal-SI suffix (m, u, n) that keeps it whole."""
    if value < 0:
        return "-" + _format_fraction(-value)
    for suffix, scale in (("m", 1000), ("u", 1_000_000)):
        scaled = value * scale
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    scaled = value * _NANO
    return f"{math.ceil(scaled)}n"


def format_quantity(value: Fraction | int, milli: bool = False) -> str:
    """Format an amount as a canonical, deterministic quantity string.

    * ``milli=True``: *value* counts milli-units (what :func:`milli_value` returns, e.g. cpu);
      whole units print as plain integers (``2000`` -> ``"2"``), others with ``m`` (``500`` -> ``"500m"``).
    * ``milli=False``: *value* is in base units (e.g. bytes); a non-zero integer exactly divisible by
      1024 uses the largest binary suffix dividing it (``1610612736`` -> ``"1536Mi"``), other integers
      print plainly (``1000`` -> ``"1000"``), non-integers use the smallest of ``m``/``u``/``n`` that
      keeps them whole (``Fraction(1, 2)`` -> ``"500m"``; finer values round up to ``n``).

    Every output parses back (:func:`parse_quantity`) to the same value.
    """
    if milli:
        value = Fraction(value) / 1000
        if value.denominator == 1:
            return str(value.numerator)
        return _format_fraction(value)
    if isinstance(value, Fraction):
        if value.denominator != 1:
            return _format_fraction(value)
        value = value.numerator
    if value == 0:
        return "0"
    sign, magnitude = ("-", -value) if value < 0 else ("", value)
    for suffix, unit in _BINARY_FORMAT:
        if magnitude % unit == 0:
            return f"{sign}{magnitude // unit}{suffix}"
    return f"{sign}{magnitude}"


def format_resource(resource: str, amount: int) -> str:
    """Format an amount from :func:`resource_amount` back to a quantity string (inverse of it)."""
    return format_quantity(amount, milli=resource == "cpu")
