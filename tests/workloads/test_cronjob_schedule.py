"""Cron schedules as kube's CronJob controller reads them (robfig/cron ParseStandard), and Job index strings."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from berth.api.cronjob import ScheduleError, parse_schedule
from berth.controllers.workloads.job import format_indexes, parse_indexes

START = datetime(2024, 1, 1, tzinfo=UTC)  # a Monday


def _times(schedule: str, n: int, start: datetime = START, zone: str | None = None) -> list[str]:
    sched = parse_schedule(schedule)
    tz = ZoneInfo(zone) if zone else UTC
    out: list[str] = []
    t = start
    for _ in range(n):
        nxt = sched.next(t, tz)
        assert nxt is not None
        out.append(nxt.strftime("%Y-%m-%d %H:%M %a"))
        t = nxt
    return out


@pytest.mark.parametrize(
    ("schedule", "expected"),
    [
        ("*/15 * * * *", ["2024-01-01 00:15 Mon", "2024-01-01 00:30 Mon", "2024-01-01 00:45 Mon"]),
        ("0 9-17/4 * * *", ["2024-01-01 09:00 Mon", "2024-01-01 13:00 Mon", "2024-01-01 17:00 Mon"]),
        ("30 2 * * MON-FRI", ["2024-01-01 02:30 Mon", "2024-01-02 02:30 Tue", "2024-01-03 02:30 Wed"]),
        ("0 0 * * sat,sun", ["2024-01-06 00:00 Sat", "2024-01-07 00:00 Sun", "2024-01-13 00:00 Sat"]),
        ("0 0 1 FEB,mar ?", ["2024-02-01 00:00 Thu", "2024-03-01 00:00 Fri", "2025-02-01 00:00 Sat"]),
        ("@hourly", ["2024-01-01 01:00 Mon", "2024-01-01 02:00 Mon", "2024-01-01 03:00 Mon"]),
        ("@weekly", ["2024-01-07 00:00 Sun", "2024-01-14 00:00 Sun", "2024-01-21 00:00 Sun"]),
        ("@yearly", ["2025-01-01 00:00 Wed", "2026-01-01 00:00 Thu", "2027-01-01 00:00 Fri"]),
        ("0 0 29 2 *", ["2024-02-29 00:00 Thu", "2028-02-29 00:00 Tue", "2032-02-29 00:00 Sun"]),
        ("5/20 * * * *", ["2024-01-01 00:05 Mon", "2024-01-01 00:25 Mon", "2024-01-01 00:45 Mon"]),
        ("@every 90m", ["2024-01-01 01:30 Mon", "2024-01-01 03:00 Mon", "2024-01-01 04:30 Mon"]),
    ],
)
def test_next_times(schedule: str, expected: list[str]) -> None:
    assert _times(schedule, 3) == expected


def test_both_day_fields_restricted_match_either() -> None:
    """robfig: day-of-month 13 or any Friday when both are restricted."""
    assert _times("0 0 13 * FRI", 3) == [
        "2024-01-05 00:00 Fri",
        "2024-01-12 00:00 Fri",
        "2024-01-13 00:00 Sat",
    ]


def test_time_zone_and_a_daylight_saving_gap() -> None:
    """02:30 does not exist in New York on 2024-03-10 (clocks jump from 02:00 to 03:00): that day is skipped."""
    start = datetime(2024, 3, 9, tzinfo=UTC)
    assert _times("30 2 * * *", 2, start, "America/New_York") == [
        "2024-03-09 07:30 Sat",
        "2024-03-11 06:30 Mon",
    ]


def test_a_schedule_that_never_fires() -> None:
    assert parse_schedule("0 0 30 2 *").next(START) is None


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        ("", "empty spec string"),
        ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
        ("60 * * * *", "end of range (60) above maximum (59): 60"),
        ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
        ("* * * * 7", "end of range (7) above maximum (6): 7"),
        ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
        ("*/0 * * * *", "step of range should be a positive number: */0"),
        ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
        ("*/2/3 * * * *", "too many slashes: */2/3"),
        ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
        ("@fortnightly", "unrecognized descriptor: @fortnightly"),
    ],
)
def test_schedule_errors(schedule: str, message: str) -> None:
    with pytest.raises(ScheduleError) as e:
        parse_schedule(schedule)
    assert str(e.value) == message


@pytest.mark.parametrize(
    ("indexes", "text"),
    [
        (set(), ""),
        ({0}, "0"),
        ({0, 1}, "0,1"),
        ({0, 1, 2}, "0-2"),
        ({1, 3, 4, 5, 7}, "1,3-5,7"),
        ({7, 8, 9, 11, 12}, "7-9,11,12"),
    ],
)
def test_completed_indexes_text(indexes: set[int], text: str) -> None:
    assert format_indexes(indexes) == text
    assert parse_indexes(text) == indexes
