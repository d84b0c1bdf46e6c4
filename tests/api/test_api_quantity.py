"""Tests for berth.api.quantity: kube Quantity grammar, rounding and formatting."""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from berth.api.errors import QuantityError
from berth.api.quantity import (
    format_quantity,
    format_resource,
    int_value,
    milli_value,
    nano_value,
    parse_quantity,
    resource_amount,
)

GI = 1 << 30


@pytest.mark.parametrize(
    ("text", "value", "milli", "whole"),
    [
        ("0", Fraction(0), 0, 0),
        ("1", Fraction(1), 1000, 1),
        ("1.5Gi", Fraction(1610612736), 1610612736000, 1610612736),
        ("500m", Fraction(1, 2), 500, 1),
        ("1e3", Fraction(1000), 1_000_000, 1000),
        ("1E3", Fraction(1000), 1_000_000, 1000),
        ("1e+3", Fraction(1000), 1_000_000, 1000),
        ("2k", Fraction(2000), 2_000_000, 2000),
        ("1E-3", Fraction(1, 1000), 1, 1),
        ("0.0001", Fraction(1, 10000), 1, 1),
        ("-1", Fraction(-1), -1000, -1),
        ("+1", Fraction(1), 1000, 1),
        (".5", Fraction(1, 2), 500, 1),
        ("5.", Fraction(5), 5000, 5),
        ("100Mi", Fraction(100 << 20), (100 << 20) * 1000, 100 << 20),
        ("1.0001", Fraction(10001, 10000), 1001, 2),
        ("0.1Ki", Fraction(512, 5), 102400, 103),
        ("1Ki", Fraction(1024), 1024000, 1024),
        ("1Ei", Fraction(1 << 60), (1 << 60) * 1000, 1 << 60),
        ("1E", Fraction(10**18), 10**21, 10**18),
        ("1n", Fraction(1, 10**9), 1, 1),
        ("1u", Fraction(1, 10**6), 1, 1),
        ("2M", Fraction(2_000_000), 2_000_000_000, 2_000_000),
        ("3G", Fraction(3 * 10**9), 3 * 10**12, 3 * 10**9),
        ("1T", Fraction(10**12), 10**15, 10**12),
        ("1P", Fraction(10**15), 10**18, 10**15),
        ("0.9Gi", Fraction(9 * GI, 10), 966367641600, 966367642),
        ("0.30000000000000004", Fraction(300000001, 10**9), 301, 1),  # rounded up to 1n
        ("1e-12", Fraction(1, 10**9), 1, 1),  # below 1n rounds up to 1n
        ("-0.5", Fraction(-1, 2), -500, -1),  # magnitude rounds up
        ("1e40", Fraction((1 << 63) - 1), ((1 << 63) - 1) * 1000, (1 << 63) - 1),  # capped
        ("007", Fraction(7), 7000, 7),
        ("-", Fraction(0), 0, 0),  # apimachinery accepts a bare sign as zero
        (".", Fraction(0), 0, 0),
        ("Ki", Fraction(0), 0, 0),
        ("m", Fraction(0), 0, 0),
        (2, Fraction(2), 2000, 2),
        (0.5, Fraction(1, 2), 500, 1),
        (1e-05, Fraction(1, 100000), 1, 1),
    ],
)
def test_parse_valid(text: str | int | float, value: Fraction, milli: int, whole: int) -> None:
    assert parse_quantity(text) == value
    assert milli_value(text) == milli
    assert int_value(text) == whole


@pytest.mark.parametrize(
    "text",
    [
        "1K",
        "1KB",
        "",
        " 1",
        "1 ",
        "1e",
        "1.5.5",
        "abc",
        "1m5",
        "1ei3",
        "1Mb",
        "--1",
        "1Pi.",
        "Pi",
        "Ei",
        ".Ei",
        "e-10",
        "0x10",
    ],
)
def test_parse_invalid(text: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert info.value.value == text
    assert str(info.value).startswith(f'invalid quantity "{text}"')


@pytest.mark.parametrize("value", [True, None, float("inf"), float("nan"), [1]])
def test_parse_rejects_non_numbers(value: object) -> None:
    with pytest.raises((QuantityError, TypeError)):
        parse_quantity(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("resource", "text", "amount"),
    [
        ("cpu", "1.5", 1500),
        ("cpu", "100m", 100),
        ("memory", "1Gi", GI),
        ("nvidia.com/gpu", "2", 2),
        ("pods", 110, 110),
    ],
)
def test_resource_amount(resource: str, text: str | int, amount: int) -> None:
    assert resource_amount(resource, text) == amount


@pytest.mark.parametrize(
    ("value", "milli", "text"),
    [
        (500, True, "500m"),
        (2000, True, "2"),
        (1500, True, "1500m"),
        (0, True, "0"),
        (Fraction(1, 2), True, "500u"),
        (GI, False, "1Gi"),
        (800 << 20, False, "800Mi"),
        (1610612736, False, "1536Mi"),
        (1000, False, "1000"),
        (1024, False, "1Ki"),
        (0, False, "0"),
        (-2048, False, "-2Ki"),
        (Fraction(1, 2), False, "500m"),
        (Fraction(3, 2), False, "1500m"),
        (Fraction(1, 10**6), False, "1u"),
        (Fraction(1, 3), False, "333333334n"),
        (Fraction(-1, 4), False, "-250m"),
        (Fraction(4096, 1), False, "4Ki"),
    ],
)
def test_format_quantity(value: Fraction | int, milli: bool, text: str) -> None:
    assert format_quantity(value, milli=milli) == text


def test_format_resource() -> None:
    assert format_resource("cpu", 250) == "250m"
    assert format_resource("memory", 512 << 20) == "512Mi"


_SUFFIXES: dict[str, int | Fraction] = {
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "Ki": 1 << 10,
    "Mi": 1 << 20,
    "Gi": 1 << 30,
    "m": Fraction(1, 1000),
}


@given(st.integers(min_value=0, max_value=10**6), st.sampled_from(sorted(_SUFFIXES)))
def test_integer_with_suffix(n: int, suffix: str) -> None:
    assert parse_quantity(f"{n}{suffix}") == n * _SUFFIXES[suffix]


@given(st.integers(min_value=-(10**15), max_value=10**15))
def test_format_round_trip_bytes(n: int) -> None:
    assert parse_quantity(format_quantity(n)) == n


@given(st.integers(min_value=0, max_value=10**12))
def test_format_round_trip_milli(n: int) -> None:
    assert milli_value(format_quantity(n, milli=True)) == n


@given(st.integers(min_value=0, max_value=10**18), st.integers(min_value=0, max_value=9))
def test_decimal_text_is_exact(whole: int, frac_digits: int) -> None:
    text = f"{whole}.{'5' * frac_digits}" if frac_digits else str(whole)
    expected = Fraction(text)
    nano = expected * 10**9
    assert nano_value(text) == (nano if nano.denominator == 1 else int(nano) + 1)
