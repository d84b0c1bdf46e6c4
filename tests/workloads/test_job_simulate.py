"""Jobs through ``berth simulate``: pods, counts, back-off, deadlines, Indexed mode, TTL and defaults."""

from __future__ import annotations

from batch_helpers import NODE, job, pod_template, simulate

COMPLETE = "Reached expected number of succeeded pods"
BACKOFF = "Job has reached the specified backoff limit"
DEADLINE = "Job was active longer than specified deadline"


def _condition(type_: str, reason: str, message: str, at: str) -> dict[str, object]:
    return {
        "type": type_,
        "status": "True",
        "lastProbeTime": at,
        "lastTransitionTime": at,
        "reason": reason,
        "message": message,
    }


def test_completions_run_at_most_parallelism_pods_at_a_time() -> None:
    r = simulate([NODE, job(completions=3, parallelism=2)], "--until", "2m", "-o", "table")
    assert r.exit_code == 0, r.stderr
    assert r.table("NAMESPACE   NAME       READY") == [
        "NAMESPACE   NAME       READY   STATUS      RESTARTS   AGE   NODE",
        "default     pi-bqdcf   0/1     Completed   0          2m    n1",
        "default     pi-cb76t   0/1     Completed   0          2m    n1",
        "default     pi-zv9ng   0/1     Completed   0          90s   n1",
    ]
    assert r.table("NAMESPACE   NAME   STATUS") == [
        "NAMESPACE   NAME   STATUS     COMPLETIONS   DURATION   AGE",
        "default     pi     Complete   3/3           60s        2m",
    ]


def test_job_defaults_selector_status_and_events() -> None:
    r = simulate([NODE, job(completions=3, parallelism=2)], "--until", "2m")
    got = r.get("Job", "pi")
    uid = got["metadata"]["uid"]
    generated = {
        "job-name": "pi",
        "batch.kubernetes.io/job-name": "pi",
        "controller-uid": uid,
        "batch.kubernetes.io/controller-uid": uid,
    }
    assert got["metadata"]["labels"] == generated
    spec = got["spec"]
    assert spec["template"]["metadata"]["labels"] == generated
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert {k: v for k, v in spec.items() if k not in ("template", "selector")} == {
        "completions": 3,
        "parallelism": 2,
        "backoffLimit": 6,
        "completionMode": "NonIndexed",
        "suspend": False,
        "manualSelector": False,
        "podReplacementPolicy": "TerminatingOrFailed",
    }
    assert got["status"] == {
        "conditions": [
            _condition("SuccessCriteriaMet", "CompletionsReached", COMPLETE, "2024-01-01T00:01:00Z"),
            _condition("Complete", "CompletionsReached", COMPLETE, "2024-01-01T00:01:00Z"),
        ],
        "startTime": "2024-01-01T00:00:00Z",
        "completionTime": "2024-01-01T00:01:00Z",
        "succeeded": 3,
        "terminating": 0,
        "uncountedTerminatedPods": {},
        "ready": 0,
    }
    owner = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": "pi",
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    for pod in r.objects("Pod"):
        assert pod["metadata"]["ownerReferences"] == [owner]
        assert pod["metadata"]["labels"] == generated
        assert pod["metadata"]["generateName"] == "pi-"
    assert r.events("SuccessfulCreate", "Completed") == [
        ("00:00:00", "Job/pi", "SuccessfulCreate", "Created pod: pi-cb76t"),
        ("00:00:00", "Job/pi", "SuccessfulCreate", "Created pod: pi-bqdcf"),
        ("00:00:30", "Job/pi", "SuccessfulCreate", "Created pod: pi-zv9ng"),
        ("00:01:00", "Job/pi", "Completed", "Job completed"),
    ]


def test_failed_pods_back_off_then_exceed_the_backoff_limit() -> None:
    """berth.dev/exit-code 3 fails each pod after 5s; replacements wait 10s, then 20s; the third failure is
    more than backoffLimit 2."""
    bad = job("bad", backoffLimit=2, template=pod_template(duration="5s", exit_code=3))
    r = simulate([NODE, bad], "--until", "2m", "-o", "table")
    assert r.table("NAMESPACE   NAME        READY") == [
        "NAMESPACE   NAME        READY   STATUS   RESTARTS   AGE    NODE",
        "default     bad-bqdcf   0/1     Error    0          105s   n1",
        "default     bad-cb76t   0/1     Error    0          2m     n1",
        "default     bad-zv9ng   0/1     Error    0          80s    n1",
    ]
    assert r.table("NAMESPACE   NAME   STATUS") == [
        "NAMESPACE   NAME   STATUS   COMPLETIONS   DURATION   AGE",
        "default     bad    Failed   0/1           2m         2m",
    ]
    r = simulate([NODE, bad], "--until", "2m")
    assert r.events("SuccessfulCreate", "BackoffLimitExceeded") == [
        ("00:00:00", "Job/bad", "SuccessfulCreate", "Created pod: bad-cb76t"),
        ("00:00:15", "Job/bad", "SuccessfulCreate", "Created pod: bad-bqdcf"),
        ("00:00:40", "Job/bad", "SuccessfulCreate", "Created pod: bad-zv9ng"),
        ("00:00:45", "Job/bad", "BackoffLimitExceeded", BACKOFF),
    ]
    at = "2024-01-01T00:00:45Z"
    assert r.get("Job", "bad")["status"] == {
        "conditions": [
            _condition("FailureTarget", "BackoffLimitExceeded", BACKOFF, at),
            _condition("Failed", "BackoffLimitExceeded", BACKOFF, at),
        ],
        "startTime": "2024-01-01T00:00:00Z",
        "failed": 3,
        "terminating": 0,
        "uncountedTerminatedPods": {},
        "ready": 0,
    }
    pod = r.get("Pod", "bad-cb76t")
    assert pod["status"]["phase"] == "Failed"
    assert pod["status"]["containerStatuses"][0]["state"] == {
        "terminated": {
            "exitCode": 3,
            "reason": "Error",
            "startedAt": "2024-01-01T00:00:00Z",
            "finishedAt": "2024-01-01T00:00:05Z",
        }
    }


def test_on_failure_restarts_count_toward_the_backoff_limit() -> None:
    """restartPolicy OnFailure: the kubelet restarts the container after 10s of CrashLoopBackOff; at the second
    restart (backoffLimit 2) the Job fails and its pod is deleted."""
    crashing = job(backoffLimit=2, template=pod_template(duration="5s", exit_code=1, restart="OnFailure"))
    r = simulate([NODE, crashing], "--until", "12s", "-o", "table")
    assert r.table("NAMESPACE   NAME       READY") == [
        "NAMESPACE   NAME       READY   STATUS             RESTARTS   AGE   NODE",
        "default     pi-cb76t   0/1     CrashLoopBackOff   1          12s   n1",
    ]
    assert r.table("NAMESPACE   NAME   STATUS") == [
        "NAMESPACE   NAME   STATUS    COMPLETIONS   DURATION   AGE",
        "default     pi     Running   0/1           12s        12s",
    ]
    r = simulate([NODE, crashing], "--until", "2m")
    assert r.objects("Pod") == []
    assert r.events("SuccessfulCreate", "SuccessfulDelete", "BackoffLimitExceeded") == [
        ("00:00:00", "Job/pi", "SuccessfulCreate", "Created pod: pi-cb76t"),
        ("00:00:20", "Job/pi", "SuccessfulDelete", "Deleted pod: pi-cb76t"),
        ("00:00:20", "Job/pi", "BackoffLimitExceeded", BACKOFF),
    ]
    assert r.get("Job", "pi")["status"]["failed"] == 1


def test_active_deadline_deletes_the_pods_and_fails_once_they_are_gone() -> None:
    slow = job("slow", activeDeadlineSeconds=20, template=pod_template(duration="1h", grace=5))
    r = simulate([NODE, slow], "--until", "2m")
    assert r.objects("Pod") == []
    assert r.events("SuccessfulCreate", "SuccessfulDelete", "DeadlineExceeded") == [
        ("00:00:00", "Job/slow", "SuccessfulCreate", "Created pod: slow-cb76t"),
        ("00:00:20", "Job/slow", "SuccessfulDelete", "Deleted pod: slow-cb76t"),
        ("00:00:25", "Job/slow", "DeadlineExceeded", DEADLINE),
    ]
    assert r.get("Job", "slow")["status"]["conditions"] == [
        _condition("FailureTarget", "DeadlineExceeded", DEADLINE, "2024-01-01T00:00:20Z"),
        _condition("Failed", "DeadlineExceeded", DEADLINE, "2024-01-01T00:00:25Z"),
    ]
    r = simulate([NODE, slow], "--until", "22s", "-o", "table")
    assert r.table("NAMESPACE   NAME   STATUS") == [
        "NAMESPACE   NAME   STATUS          COMPLETIONS   DURATION   AGE",
        "default     slow   FailureTarget   0/1           22s        22s",
    ]


def test_indexed_job_names_labels_and_completed_indexes() -> None:
    idx = job(
        "idx", completions=4, parallelism=2, completionMode="Indexed", template=pod_template(duration="10s")
    )
    r = simulate([NODE, idx], "--until", "1m", "-o", "table")
    assert r.table("NAMESPACE   NAME          READY") == [
        "NAMESPACE   NAME          READY   STATUS      RESTARTS   AGE   NODE",
        "default     idx-0-cb76t   0/1     Completed   0          60s   n1",
        "default     idx-1-bqdcf   0/1     Completed   0          60s   n1",
        "default     idx-2-zv9ng   0/1     Completed   0          50s   n1",
        "default     idx-3-zx5kv   0/1     Completed   0          50s   n1",
    ]
    assert r.table("NAMESPACE   NAME   STATUS") == [
        "NAMESPACE   NAME   STATUS     COMPLETIONS   DURATION   AGE",
        "default     idx    Complete   4/4           20s        60s",
    ]
    r = simulate([NODE, idx], "--until", "15s")
    assert r.get("Job", "idx")["status"] == {
        "startTime": "2024-01-01T00:00:00Z",
        "active": 2,
        "succeeded": 2,
        "terminating": 0,
        "completedIndexes": "0,1",
        "uncountedTerminatedPods": {},
        "ready": 2,
    }
    pod = r.get("Pod", "idx-2-zv9ng")
    assert pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == "2"
    assert pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == "2"
    assert pod["spec"]["hostname"] == "idx-2"
    assert pod["spec"]["containers"][0]["env"] == [
        {
            "name": "JOB_COMPLETION_INDEX",
            "valueFrom": {
                "fieldRef": {"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}
            },
        }
    ]


def test_ttl_after_finished_deletes_the_job_and_its_pods() -> None:
    short = job(ttlSecondsAfterFinished=30, template=pod_template(duration="10s"))
    r = simulate([NODE, short], "--until", "39s")
    assert [o["metadata"]["name"] for o in r.objects("Job") + r.objects("Pod")] == ["pi", "pi-cb76t"]
    r = simulate([NODE, short], "--until", "40s")
    assert r.objects("Job") == []
    assert r.objects("Pod") == []


def test_suspended_job_creates_no_pods() -> None:
    r = simulate([NODE, job(suspend=True)], "--until", "1m", "-o", "table")
    assert "pi-" not in r.stdout
    assert r.table("NAMESPACE   NAME   STATUS") == [
        "NAMESPACE   NAME   STATUS      COMPLETIONS   DURATION   AGE",
        "default     pi     Suspended   0/1                      60s",
    ]


def test_invalid_jobs_are_refused_naming_the_field() -> None:
    cases = [
        (
            job(completionMode="Ordered"),
            'spec.completionMode: Unsupported value: "Ordered": supported values: "NonIndexed", "Indexed"',
        ),
        (
            job(parallelism=2, completionMode="Indexed"),
            "spec.completions: Required value: when completion mode is Indexed",
        ),
        (job(parallelism=-1), "spec.parallelism: Invalid value: -1: must be greater than or equal to 0"),
        (
            job(template=pod_template(restart="Always")),
            'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"',
        ),
        (
            job(selector={"matchLabels": {"app": "x"}}),
            'spec.selector: Invalid value: {"matchLabels": {"app": "x"}}: `selector` not auto-generated',
        ),
    ]
    for manifest, message in cases:
        r = simulate([manifest])
        assert r.exit_code == 2, manifest
        assert 'Job "default/pi": ' + message in r.stderr, r.stderr


def test_resume_starts_the_pods_and_immutable_fields_are_refused() -> None:
    def patch(at: str, spec: dict[str, object]) -> dict[str, object]:
        return {
            "at": at,
            "patch": [{"apiVersion": "batch/v1", "kind": "Job", "name": "pi", "patch": {"spec": spec}}],
        }

    steps = {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "resume"},
        "spec": {"steps": [patch("30s", {"suspend": False}), patch("40s", {"completions": 5})]},
    }
    r = simulate([NODE, job(suspend=True, completions=2, parallelism=2), steps], "--until", "2m")
    assert r.exit_code == 0
    assert r.stderr == (
        'at 40s: Error from server (Invalid): Job.batch "pi" is invalid: spec.completions: Invalid value: 5: '
        "field is immutable\n"
    )
    assert r.events("Suspended", "Resumed", "SuccessfulCreate", "Completed") == [
        ("00:00:00", "Job/pi", "Suspended", "Job suspended"),
        ("00:00:30", "Job/pi", "Resumed", "Job resumed"),
        ("00:00:30", "Job/pi", "SuccessfulCreate", "Created pod: pi-cb76t"),
        ("00:00:30", "Job/pi", "SuccessfulCreate", "Created pod: pi-bqdcf"),
        ("00:01:00", "Job/pi", "Completed", "Job completed"),
    ]
    status = r.get("Job", "pi")["status"]
    assert status["conditions"][0] == {
        "type": "Suspended",
        "status": "False",
        "lastProbeTime": "2024-01-01T00:00:30Z",
        "lastTransitionTime": "2024-01-01T00:00:30Z",
        "reason": "JobResumed",
        "message": "Job resumed",
    }
    assert (status["startTime"], status["completionTime"], status["succeeded"]) == (
        "2024-01-01T00:00:30Z",
        "2024-01-01T00:01:00Z",
        2,
    )
