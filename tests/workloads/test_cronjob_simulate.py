"""CronJobs through ``berth simulate`` on the virtual clock (which starts at 2024-01-01T00:00:00Z)."""

from __future__ import annotations

from batch_helpers import NODE, cron_job, pod_template, simulate

FORBID = "Not starting job because prior execution is running and concurrency policy is Forbid"


def test_jobs_named_by_scheduled_minute_and_history_trimmed() -> None:
    r = simulate([NODE, cron_job()], "--until", "11m")
    assert r.exit_code == 0, r.stderr
    assert r.events("SuccessfulCreate", "SawCompletedJob", "SuccessfulDelete") == [
        ("00:02:00", "CronJob/tick", "SuccessfulCreate", "Created job tick-28401122"),
        ("00:02:00", "Job/tick-28401122", "SuccessfulCreate", "Created pod: tick-28401122-cb76t"),
        (
            "00:02:30",
            "CronJob/tick",
            "SawCompletedJob",
            "Saw completed job: tick-28401122, condition: Complete",
        ),
        ("00:04:00", "CronJob/tick", "SuccessfulCreate", "Created job tick-28401124"),
        ("00:04:00", "Job/tick-28401124", "SuccessfulCreate", "Created pod: tick-28401124-bqdcf"),
        (
            "00:04:30",
            "CronJob/tick",
            "SawCompletedJob",
            "Saw completed job: tick-28401124, condition: Complete",
        ),
        ("00:06:00", "CronJob/tick", "SuccessfulCreate", "Created job tick-28401126"),
        ("00:06:00", "Job/tick-28401126", "SuccessfulCreate", "Created pod: tick-28401126-zv9ng"),
        (
            "00:06:30",
            "CronJob/tick",
            "SawCompletedJob",
            "Saw completed job: tick-28401126, condition: Complete",
        ),
        ("00:08:00", "CronJob/tick", "SuccessfulCreate", "Created job tick-28401128"),
        ("00:08:00", "Job/tick-28401128", "SuccessfulCreate", "Created pod: tick-28401128-zx5kv"),
        (
            "00:08:30",
            "CronJob/tick",
            "SawCompletedJob",
            "Saw completed job: tick-28401128, condition: Complete",
        ),
        ("00:08:30", "CronJob/tick", "SuccessfulDelete", "Deleted job tick-28401122"),
        ("00:10:00", "CronJob/tick", "SuccessfulCreate", "Created job tick-28401130"),
        ("00:10:00", "Job/tick-28401130", "SuccessfulCreate", "Created pod: tick-28401130-wbzg9"),
        (
            "00:10:30",
            "CronJob/tick",
            "SawCompletedJob",
            "Saw completed job: tick-28401130, condition: Complete",
        ),
        ("00:10:30", "CronJob/tick", "SuccessfulDelete", "Deleted job tick-28401124"),
    ]
    cj = r.get("CronJob", "tick")
    assert cj["status"] == {
        "lastScheduleTime": "2024-01-01T00:10:00Z",
        "lastSuccessfulTime": "2024-01-01T00:10:30Z",
    }
    assert {k: v for k, v in cj["spec"].items() if k != "jobTemplate"} == {
        "schedule": "*/2 * * * *",
        "concurrencyPolicy": "Allow",
        "suspend": False,
        "successfulJobsHistoryLimit": 3,
        "failedJobsHistoryLimit": 1,
    }
    assert [j["metadata"]["name"] for j in r.objects("Job")] == [
        "tick-28401126",
        "tick-28401128",
        "tick-28401130",
    ]
    assert [p["metadata"]["name"] for p in r.objects("Pod")] == [
        "tick-28401126-zv9ng",
        "tick-28401128-zx5kv",
        "tick-28401130-wbzg9",
    ]
    made = r.get("Job", "tick-28401130")["metadata"]
    assert made["annotations"] == {"batch.kubernetes.io/cronjob-scheduled-timestamp": "2024-01-01T00:10:00Z"}
    assert made["ownerReferences"] == [
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "name": "tick",
            "uid": cj["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]


def test_cronjob_table() -> None:
    r = simulate([NODE, cron_job()], "--until", "11m", "-o", "table")
    assert r.table("NAMESPACE   NAME   SCHEDULE") == [
        "NAMESPACE   NAME   SCHEDULE      TIMEZONE   SUSPEND   ACTIVE   LAST SCHEDULE   AGE",
        "default     tick   */2 * * * *   <none>     False     0        60s             11m",
    ]
    assert r.table("NAMESPACE   NAME            STATUS") == [
        "NAMESPACE   NAME            STATUS     COMPLETIONS   DURATION   AGE",
        "default     tick-28401126   Complete   1/1           30s        5m",
        "default     tick-28401128   Complete   1/1           30s        3m",
        "default     tick-28401130   Complete   1/1           30s        60s",
    ]


def test_forbid_skips_while_a_job_runs_then_starts_the_missed_time() -> None:
    long = cron_job(schedule="* * * * *", concurrencyPolicy="Forbid", template=pod_template(duration="150s"))
    r = simulate([NODE, long], "--until", "5m")
    assert r.events("SuccessfulCreate", "SawCompletedJob", "JobAlreadyActive", "Completed") == [
        ("00:01:00", "CronJob/tick", "SuccessfulCreate", "Created job tick-28401121"),
        ("00:01:00", "Job/tick-28401121", "SuccessfulCreate", "Created pod: tick-28401121-cb76t"),
        ("00:03:30", "Job/tick-28401121", "Completed", "Job completed"),
        (
            "00:03:30",
            "CronJob/tick",
            "SawCompletedJob",
            "Saw completed job: tick-28401121, condition: Complete",
        ),
        ("00:03:30", "CronJob/tick", "SuccessfulCreate", "Created job tick-28401123"),
        ("00:03:30", "Job/tick-28401123", "SuccessfulCreate", "Created pod: tick-28401123-bqdcf"),
        ("00:02:00", "CronJob/tick", "JobAlreadyActive", FORBID),  # seen again at 00:03, 00:04, 00:05
    ]
    already = next(e for e in r.objects("Event") if e["reason"] == "JobAlreadyActive")
    assert (already["count"], already["lastTimestamp"]) == (4, "2024-01-01T00:05:00Z")


def test_replace_deletes_the_running_job() -> None:
    long = cron_job(schedule="* * * * *", concurrencyPolicy="Replace", template=pod_template(duration="150s"))
    r = simulate([NODE, long], "--until", "3m")
    assert r.events("SuccessfulCreate", "SuccessfulDelete") == [
        ("00:01:00", "CronJob/tick", "SuccessfulCreate", "Created job tick-28401121"),
        ("00:01:00", "Job/tick-28401121", "SuccessfulCreate", "Created pod: tick-28401121-cb76t"),
        ("00:02:00", "CronJob/tick", "SuccessfulDelete", "Deleted job tick-28401121"),
        ("00:02:00", "CronJob/tick", "SuccessfulCreate", "Created job tick-28401122"),
        ("00:02:00", "Job/tick-28401122", "SuccessfulCreate", "Created pod: tick-28401122-bqdcf"),
        ("00:03:00", "CronJob/tick", "SuccessfulDelete", "Deleted job tick-28401122"),
        ("00:03:00", "CronJob/tick", "SuccessfulCreate", "Created job tick-28401123"),
        ("00:03:00", "Job/tick-28401123", "SuccessfulCreate", "Created pod: tick-28401123-zv9ng"),
    ]
    status = r.get("CronJob", "tick")["status"]
    job = r.get("Job", "tick-28401123")
    assert status == {
        "active": [
            {
                "kind": "Job",
                "namespace": "default",
                "name": "tick-28401123",
                "uid": job["metadata"]["uid"],
                "apiVersion": "batch/v1",
                "resourceVersion": status["active"][0]["resourceVersion"],
            }
        ],
        "lastScheduleTime": "2024-01-01T00:03:00Z",
    }
    assert [j["metadata"]["name"] for j in r.objects("Job")] == ["tick-28401123"]
    assert [
        p["metadata"]["name"] for p in r.objects("Pod") if not p["metadata"].get("deletionTimestamp")
    ] == ["tick-28401123-zv9ng"]


def test_suspended_cronjob_creates_nothing() -> None:
    r = simulate([NODE, cron_job(suspend=True)], "--until", "10m", "-o", "table")
    assert r.table("NAMESPACE   NAME   SCHEDULE") == [
        "NAMESPACE   NAME   SCHEDULE      TIMEZONE   SUSPEND   ACTIVE   LAST SCHEDULE   AGE",
        "default     tick   */2 * * * *   <none>     True      0        <none>          10m",
    ]
    assert "tick-" not in r.stdout


def test_time_zone_reads_the_schedule_in_that_zone() -> None:
    """09:30 in Tokyo is 00:30 UTC, 30 minutes after the virtual clock starts."""
    r = simulate([NODE, cron_job(schedule="30 9 * * *", timeZone="Asia/Tokyo")], "--until", "31m")
    assert [
        (j["metadata"]["name"], j["metadata"]["annotations"], j["metadata"]["creationTimestamp"])
        for j in r.objects("Job")
    ] == [
        (
            "tick-28401150",
            {"batch.kubernetes.io/cronjob-scheduled-timestamp": "2024-01-01T09:30:00+09:00"},
            "2024-01-01T00:30:00Z",
        )
    ]


def test_too_many_missed_times_warns_and_runs_the_latest() -> None:
    old = cron_job(schedule="* * * * *")
    old["metadata"]["creationTimestamp"] = "2023-12-30T00:00:00Z"
    r = simulate([NODE, old], "--until", "30s")
    assert r.events("TooManyMissedTimes", "SuccessfulCreate") == [
        (
            "00:00:00",
            "CronJob/tick",
            "TooManyMissedTimes",
            "too many missed start times: 2880. Set or decrease .spec.startingDeadlineSeconds or check clock skew",
        ),
        ("00:00:00", "CronJob/tick", "SuccessfulCreate", "Created job tick-28401120"),
        ("00:00:00", "Job/tick-28401120", "SuccessfulCreate", "Created pod: tick-28401120-cb76t"),
    ]


def test_starting_deadline_bounds_the_missed_times() -> None:
    old = cron_job(schedule="* * * * *", startingDeadlineSeconds=120)
    old["metadata"]["creationTimestamp"] = "2023-12-30T00:00:00Z"
    r = simulate([NODE, old], "--until", "30s")
    assert r.events("TooManyMissedTimes") == []
    assert [j["metadata"]["name"] for j in r.objects("Job")] == ["tick-28401120"]


def test_invalid_cronjobs_are_refused_naming_the_field() -> None:
    cases = [
        (
            cron_job(schedule="61 * * * *"),
            'spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61',
        ),
        (
            cron_job(schedule="* * *"),
            'spec.schedule: Invalid value: "* * *": expected exactly 5 fields, found 3: [* * *]',
        ),
        (
            cron_job(schedule="TZ=UTC * * * * *"),
            'spec.schedule: Invalid value: "TZ=UTC * * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone '
            "field instead",
        ),
        (
            cron_job(timeZone="Mars/Olympus"),
            'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus',
        ),
        (
            cron_job(concurrencyPolicy="Sometimes"),
            'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"',
        ),
        (
            cron_job(template=pod_template(restart="Always")),
            'spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: '
            '"OnFailure", "Never"',
        ),
    ]
    for manifest, message in cases:
        r = simulate([manifest])
        assert r.exit_code == 2, manifest
        assert 'CronJob "default/tick": ' + message in r.stderr, r.stderr
