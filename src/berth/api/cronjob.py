"""batch/v1 CronJob: cron schedules, the API server's defaults, and validation.

`parse_schedule` reads a schedule as kube's CronJob controller does (robfig/cron's ParseStandard): five fields
(minute, hour, day of month, month, day of week) with ``*``/``?``, lists, ranges, steps and the names
``JAN``-``DEC`` / ``SUN``-``SAT``, or a descriptor (``@yearly``, ``@annually``, ``@monthly``, ``@weekly``,
``@daily``, ``@midnight``, ``@hourly``, ``@every <duration>``). As robfig, when both day fields are restricted
a day matches either of them, otherwise both. Errors carry robfig's messages. A schedule's times are read in a
time zone (``spec.timeZone``, UTC when absent).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from berth.api.checks import Context
from berth.api.job import validate_job_spec
from berth.api.wellknown import parse_duration

__all__ = [
    "CONCURRENCY_POLICIES",
    "SCHEDULED_TIMESTAMP",
    "Schedule",
    "ScheduleError",
    "default_cron_job",
    "load_time_zone",
    "parse_schedule",
    "validate_cron_job",
]

CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")
SCHEDULED_TIMESTAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"
"""The annotation on a Job a CronJob made: its scheduled time (RFC 3339, in the CronJob's time zone)."""
MAX_NAME_LENGTH = 52
"""A CronJob's name leaves room for the ``-<minutes>`` suffix of its Jobs' names within 63 characters."""

_STAR = 1 << 63
_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    )
}
_DAYS = {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
_FIELDS: tuple[tuple[int, int, Mapping[str, int]], ...] = (
    (0, 59, {}),
    (0, 23, {}),
    (1, 31, {}),
    (1, 12, _MONTHS),
    (0, 6, _DAYS),
)
_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_SEARCH_YEARS = 5
"""robfig gives up looking for a matching time after five years (a schedule such as Feb 30 never fires)."""


class ScheduleError(ValueError):
    """A schedule that does not parse; the message is robfig/cron's."""


@dataclass(frozen=True, slots=True)
class Schedule:
    """A parsed schedule: bit sets per field (`every` seconds for ``@every``)."""

    minute: int
    hour: int
    dom: int
    month: int
    dow: int
    every: float = 0.0

    def next(self, after: datetime, zone: tzinfo = UTC) -> datetime | None:
        """The first time strictly after `after` that the schedule names, read in `zone` (UTC-aware result);
        None when there is none within five years."""
        if self.every:
            whole = after.replace(microsecond=0)
            return (whole + timedelta(seconds=self.every)).astimezone(UTC)
        local = after.astimezone(zone).replace(second=0, microsecond=0, tzinfo=None) + timedelta(minutes=1)
        limit = local.year + _SEARCH_YEARS
        while local.year <= limit:
            if not self.month >> local.month & 1:
                year, month = (local.year + 1, 1) if local.month == 12 else (local.year, local.month + 1)
                local = datetime(year, month, 1)
                continue
            if not self._day_matches(local):
                local = datetime(local.year, local.month, local.day) + timedelta(days=1)
                continue
            if not self.hour >> local.hour & 1:
                local = local.replace(minute=0) + timedelta(hours=1)
                continue
            if not self.minute >> local.minute & 1:
                local += timedelta(minutes=1)
                continue
            aware = local.replace(tzinfo=zone)
            back = aware.astimezone(UTC).astimezone(zone).replace(tzinfo=None)
            if back != local:  # a wall time the zone skips (a DST gap): not a time at all
                local += timedelta(minutes=1)
                continue
            return aware.astimezone(UTC)
        return None

    def _day_matches(self, t: datetime) -> bool:
        dom = bool(self.dom >> t.day & 1)
        dow = bool(self.dow >> ((t.weekday() + 1) % 7) & 1)
        if self.dom & _STAR or self.dow & _STAR:
            return dom and dow
        return dom or dow


def _number(text: str, names: Mapping[str, int], expr: str) -> int:
    value = names.get(text.lower())
    if value is not None:
        return value
    if not re.fullmatch(r"[+-]?\d+", text):
        raise ScheduleError(
            f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax'
        )
    number = int(text)
    if number < 0:
        raise ScheduleError(f"negative number ({number}) not allowed: {expr}")
    return number


def _range(expr: str, lo: int, hi: int, names: Mapping[str, int]) -> int:
    """robfig's getRange: one comma-separated part of a field as a bit set."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    extra = 0
    if low_and_high[0] in ("*", "?"):
        start, end, extra = lo, hi, _STAR
    else:
        start = _number(low_and_high[0], names, expr)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _number(low_and_high[1], names, expr)
        else:
            raise ScheduleError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _number(range_and_step[1], {}, expr)
        if single:  # "N/step" means "N-max/step"
            end = hi
        if step > 1:
            extra = 0
    else:
        raise ScheduleError(f"too many slashes: {expr}")
    if start < lo:
        raise ScheduleError(f"beginning of range ({start}) below minimum ({lo}): {expr}")
    if end > hi:
        raise ScheduleError(f"end of range ({end}) above maximum ({hi}): {expr}")
    if start > end:
        raise ScheduleError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ScheduleError(f"step of range should be a positive number: {expr}")
    bits = 0
    for i in range(start, end + 1, step):
        bits |= 1 << i
    return bits | extra


def _field(text: str, lo: int, hi: int, names: Mapping[str, int]) -> int:
    bits = 0
    for part in text.split(","):
        bits |= _range(part, lo, hi, names)
    return bits


def parse_schedule(text: str) -> Schedule:
    """A standard cron schedule or descriptor (see the module docstring); ScheduleError with robfig's message."""
    spec = text.strip()
    if not spec:
        raise ScheduleError("empty spec string")
    if spec.startswith("TZ=") or spec.startswith("CRON_TZ="):
        _, _, spec = spec.partition(" ")
        spec = spec.strip()
    if spec.startswith("@"):
        if spec.startswith("@every "):
            try:
                seconds = parse_duration(spec[len("@every ") :].strip())
            except ValueError as e:
                raise ScheduleError(f"failed to parse duration {spec}: {e}") from None
            return Schedule(0, 0, 0, 0, 0, every=max(float(int(seconds)), 1.0))
        expanded = _DESCRIPTORS.get(spec.lower())
        if expanded is None:
            raise ScheduleError(f"unrecognized descriptor: {spec}")
        spec = expanded
    fields = spec.split()
    if len(fields) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    bits = [_field(f, lo, hi, names) for f, (lo, hi, names) in zip(fields, _FIELDS, strict=True)]
    return Schedule(*bits)


def load_time_zone(name: str | None) -> tzinfo:
    """The zone a CronJob's ``timeZone`` names (UTC when None); ValueError with Go's message when unknown."""
    if name is None:
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name}") from None


def default_cron_job(obj: dict[str, Any]) -> None:
    """batch/v1 SetDefaults_CronJob, in place."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for field, default in (
        ("concurrencyPolicy", "Allow"),
        ("suspend", False),
        ("successfulJobsHistoryLimit", 3),
        ("failedJobsHistoryLimit", 1),
    ):
        if spec.get(field) is None:
            spec[field] = default


def _validate_time_zone(value: object, ctx: Context) -> None:
    if value is None:
        return
    path = "spec.timeZone"
    if not isinstance(value, str) or not value:
        ctx.invalid(path, value, "timeZone must be nil or non-empty string")
    if value.lower() == "local":
        ctx.invalid(
            path,
            value,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        )
    try:
        load_time_zone(value)
    except ValueError as e:
        ctx.invalid(path, value, str(e))


def validate_cron_job(obj: Mapping[str, Any], ctx: Context) -> None:
    """ValidateCronJobCreate: name length, schedule, time zone, policies, limits and the job template."""
    name = str((obj.get("metadata") or {}).get("name") or "")
    if len(name) > MAX_NAME_LENGTH:
        ctx.invalid("metadata.name", name, f"must be no more than {MAX_NAME_LENGTH} characters")
    spec = ctx.mapping("spec", obj.get("spec"))
    schedule = spec.get("schedule")
    if not schedule:
        ctx.required("spec.schedule")
    if not isinstance(schedule, str):
        ctx.invalid("spec.schedule", schedule, "must be a string")
    try:
        parse_schedule(schedule)
    except ScheduleError as e:
        ctx.invalid("spec.schedule", schedule, str(e))
    if "TZ" in schedule:
        ctx.invalid(
            "spec.schedule", schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
        )
    _validate_time_zone(spec.get("timeZone"), ctx)
    for field in ("startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        value = spec.get(field)
        if value is not None and ctx.integer(f"spec.{field}", value) < 0:
            ctx.invalid(f"spec.{field}", value, "must be greater than or equal to 0")
    policy = spec.get("concurrencyPolicy")
    if policy == "":
        ctx.required("spec.concurrencyPolicy")
    if policy is not None and policy not in CONCURRENCY_POLICIES:
        ctx.not_supported("spec.concurrencyPolicy", policy, CONCURRENCY_POLICIES)
    suspend = spec.get("suspend")
    if suspend is not None and not isinstance(suspend, bool):
        ctx.invalid("spec.suspend", suspend, "must be a boolean")
    template = ctx.mapping("spec.jobTemplate", spec.get("jobTemplate"))
    job_spec = ctx.mapping("spec.jobTemplate.spec", template.get("spec"))
    validate_job_spec("spec.jobTemplate.spec", job_spec, ctx)
    if job_spec.get("selector") is not None:
        ctx.invalid(
            "spec.jobTemplate.spec.selector", job_spec.get("selector"), "`selector` will be auto-generated"
        )
    if job_spec.get("manualSelector") is True:
        ctx.not_supported("spec.jobTemplate.spec.manualSelector", True, ("nil", "false"))
