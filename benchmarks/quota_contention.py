"""Quota contention: 30 ElasticQuotas (min 20 CPU, max 100 CPU) share a 600-CPU cluster under CapacityScheduling.

Per quota: 350 small pods (1 CPU, run 200 ms, one every 100 ms, priority 50), 100 medium pods (5 CPU, 500 ms,
every 500 ms, priority 100) and 50 large pods (20 CPU, 1 s, every 1.2 s, priority 200); run times through the
``berth.dev/duration`` annotation. Prints wall time, admission latency (creation to binding, virtual seconds)
per size, the lowest quota usage (fraction of its min) seen while that quota had pending pods, the longest
time a quota stayed below its min while one of its pending pods would have fitted within it, and the
preemptions (victims get terminationGracePeriodSeconds 1 by default); writes benchmarks/results/quota_contention.json.

The cluster is 15 nodes of 40 CPU: the 30 quotas' mins (20 CPU each) add up to the 600 CPU, so every quota
holding its min as one large pod must be placeable, and a 40-CPU node holds two. With 30-CPU nodes
(``--nodes 20 --node-cpu 30``) at most 20 large pods fit at once, so 10 quotas cannot hold their min that
way whatever the scheduler does.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from report import parse_args, result_path  # noqa: E402

from berth.gc_policy import tune_for_throughput  # noqa: E402
from berth.scheduler.framework.config import parse_config  # noqa: E402
from berth.scheduler.framework.podinfo import PodInfo  # noqa: E402
from berth.scheduler.framework.status import Status  # noqa: E402
from berth.sim.engine import Simulation  # noqa: E402
from berth.sim.scenario import Plan, Step  # noqa: E402
from workloads import make_node, make_pod  # noqa: E402

# name, cpu, duration, count per quota, interval (s), priority
SIZES = (
    ("small", 1, "200ms", 350, 0.1, 50),
    ("medium", 5, "500ms", 100, 0.5, 100),
    ("large", 20, "1s", 50, 1.2, 200),
)


def capacity_config(max_backoff: int = 10) -> Any:
    """kube's default profile with CapacityScheduling at PreFilter and Reserve, and as the PostFilter."""
    return parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "podMaxBackoffSeconds": max_backoff,
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {
                        "preFilter": {"enabled": [{"name": "CapacityScheduling"}]},
                        "postFilter": {
                            "enabled": [{"name": "CapacityScheduling"}],
                            "disabled": [{"name": "*"}],
                        },
                        "reserve": {"enabled": [{"name": "CapacityScheduling"}]},
                    },
                }
            ],
        }
    )


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def main() -> None:
    """Run the benchmark and write its JSON result."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quotas", type=int, default=30)
    ap.add_argument("--nodes", type=int, default=15)
    ap.add_argument("--node-cpu", type=int, default=40)
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of each size's pod count")
    ap.add_argument("--grace", type=int, default=1, help="terminationGracePeriodSeconds of the pods")
    ap.add_argument("--tail", type=float, default=900.0, help="virtual seconds run after the last arrival")
    ap.add_argument(
        "--max-backoff",
        type=int,
        default=10,
        help="podMaxBackoffSeconds of the scheduler (kube's default 10)",
    )
    args = parse_args(ap)
    tune_for_throughput()  # the collector's thresholds the berth command sets

    setup: list[dict[str, Any]] = [
        make_node(f"node-{i}", cpu=str(args.node_cpu), memory="1Ti") for i in range(args.nodes)
    ]
    setup += [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": f"prio-{prio}"},
            "value": prio,
        }
        for *_, prio in SIZES
    ]
    namespaces = [f"team-{q}" for q in range(args.quotas)]
    setup += [
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "ElasticQuota",
            "metadata": {"name": "quota", "namespace": ns},
            "spec": {"min": {"cpu": "20"}, "max": {"cpu": "100"}},
        }
        for ns in namespaces
    ]
    arrivals: dict[float, list[dict[str, Any]]] = {}
    arrived_at: dict[str, tuple[str, float]] = {}  # "ns/name" -> (size, creation time)
    for size, cpu, duration, count, every, prio in SIZES:
        for i in range(max(1, int(count * args.scale))):
            at = round(1.0 + i * every, 3)
            for ns in namespaces:
                p = make_pod(f"{size}-{i}", ns, cpu=str(cpu), memory="100Mi")
                p["metadata"]["annotations"] = {"berth.dev/duration": duration}
                p["spec"]["priorityClassName"] = f"prio-{prio}"
                p["spec"]["terminationGracePeriodSeconds"] = args.grace
                arrivals.setdefault(at, []).append(p)
                arrived_at[f"{ns}/{size}-{i}"] = (size, at)
    total = len(arrived_at)
    last = max(arrivals)

    sim = Simulation(config=capacity_config(args.max_backoff))
    latencies: dict[str, list[float]] = {s[0]: [] for s in SIZES}
    bound_ns: dict[str, int] = dict.fromkeys(namespaces, 0)
    bound_size: dict[tuple[str, str], int] = {(ns, size[0]): 0 for ns in namespaces for size in SIZES}
    counts = {name: max(1, int(count * args.scale)) for name, _, _, count, _, _ in SIZES}

    def on_decision(pod: PodInfo, node: str, status: Status) -> None:
        if node and status.is_success():
            size, t = arrived_at.get(pod.key, ("", 0.0))
            if size:
                latencies[size].append(sim.clock.now() - t)
                bound_ns[pod.namespace] += 1
                bound_size[(pod.namespace, size)] += 1

    sim.scheduler.on_decision = on_decision
    plugin: Any = sim.scheduler.frameworks["default-scheduler"].plugins["CapacityScheduling"]
    lowest: dict[str, Any] = {"fractionOfMin": None, "at": None, "namespace": ""}

    below_since: dict[str, float] = {}
    longest: dict[str, Any] = {"seconds": 0.0, "from": None, "namespace": ""}

    def sample_min_wait() -> None:
        """How long each quota has been below its min while one of its pending pods would fit within it."""
        now = sim.clock.now()
        arrived = {
            name: min(counts[name], int((now - 1.0) / every + 1e-9) + 1) if now >= 1.0 else 0
            for name, _, _, _, every, _ in SIZES
        }
        for ns in namespaces:
            pending = [cpu for name, cpu, *_ in SIZES if arrived[name] > bound_size[(ns, name)]]
            used = plugin.book.infos[ns].used.get("cpu", 0)
            if pending and used + 1000 * min(pending) <= 20_000:
                since = below_since.setdefault(ns, now)
                if now - since > longest["seconds"]:
                    longest.update(
                        {"seconds": round(now - since, 3), "from": round(since, 3), "namespace": ns}
                    )
            else:
                below_since.pop(ns, None)

    def sample() -> None:
        now = sim.clock.now()
        book = plugin.book
        arrived = arrived_per_namespace(now)
        for ns in namespaces:
            pending = arrived - bound_ns[ns]
            if pending <= 0:
                continue
            used = book.infos[ns].used.get("cpu", 0) / 1000
            frac = used / 20
            if lowest["fractionOfMin"] is None or frac < lowest["fractionOfMin"]:
                lowest.update({"fractionOfMin": round(frac, 3), "at": round(now, 3), "namespace": ns})

    arrival_times = sorted(arrivals)
    per_time_count = [len(arrivals[t]) // args.quotas for t in arrival_times]

    def arrived_per_namespace(now: float) -> int:
        """How many pods each namespace has created by ``now`` (every namespace gets the same)."""
        n = 0
        for t, c in zip(arrival_times, per_time_count, strict=True):
            if t > now:
                break
            n += c
        return n

    t = 2.0
    while t <= last + args.tail:
        sim.clock.call_at(t, sample, 5)
        t = round(t + 1.0, 3)
    t = 1.0
    while t <= last + args.tail:
        sim.clock.call_at(t, sample_min_wait, 5)
        t = round(t + 0.1, 3)

    sim.run(Plan([Step(0.0, setup)]), until=0.5)
    gc.collect()
    gc.freeze()
    steps = [Step(at, objs) for at, objs in sorted(arrivals.items())]
    t0 = time.perf_counter()
    sim.run(Plan(steps), until=last + args.tail)
    wall = time.perf_counter() - t0
    sim.events.flush()
    preemptions = sum(1 for e in sim.store.list(("", "Event"))[0] if e.get("reason") == "Preempted")
    admitted = sum(len(v) for v in latencies.values())
    res: dict[str, Any] = {
        "workload": "QuotaContention",
        "quotas": args.quotas,
        "nodes": args.nodes,
        "clusterCPU": args.nodes * args.node_cpu,
        "pods": total,
        "terminationGracePeriodSeconds": args.grace,
        "podMaxBackoffSeconds": args.max_backoff,
        "admitted": admitted,
        "wallSeconds": round(wall, 3),
        "schedulingLoopSeconds": round(sim.scheduler.stats.loop_seconds, 3),
        "attempts": sim.scheduler.stats.attempts,
        "preemptions": preemptions,
        "admissionSeconds": {
            size: {
                "count": len(v),
                "p50": round(_percentile(v, 0.5), 3),
                "p90": round(_percentile(v, 0.9), 3),
                "p99": round(_percentile(v, 0.99), 3),
                "max": round(max(v, default=0.0), 3),
            }
            for size, v in latencies.items()
        },
        "lowestQuotaUsageWhileDemand": lowest,
        # target: at most one large pod's run (1 s); sampled every 100 ms of virtual time
        "longestWaitBelowMinWithFittingPod": longest,
        "peakRSSMiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    print(json.dumps(res, indent=2))
    out = result_path("quota_contention")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2) + "\n")


if __name__ == "__main__":
    main()
