"""Durations printed as Go's time.Duration.String() prints them."""

from __future__ import annotations

import pytest

from berth.api.duration import go_duration


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (5, "5s"),
        (30, "30s"),
        (60, "1m0s"),
        (300, "5m0s"),
        (90, "1m30s"),
        (90.5, "1m30.5s"),
        (3600, "1h0m0s"),
        (3661.25, "1h1m1.25s"),
        (172801, "48h0m1s"),
        (1.5, "1.5s"),
        (0.5, "500ms"),
        (0.001, "1ms"),
        (0.0015, "1.5ms"),
        (1.5e-6, "1.5µs"),
        (1e-7, "100ns"),
        (-90.5, "-1m30.5s"),
    ],
)
def test_go_duration(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text
