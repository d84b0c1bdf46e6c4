"""One LowNodeUtilization cycle (DefaultEvictor with nodeFit) over 5 000 nodes and 50 000 pods, and the
re-placing dry run of the same cycle (evict on a copy, recreate, reschedule, report), on objects a loader
has validated (as `berth deschedule` gives them: parsing and validating the input are not timed).

The cluster is skewed: `hot` nodes run at 90% cpu, a middle band at 30%, the rest at about 17%, with every pod
owned by one of 500 ReplicaSets. Targets: the cycle under 2 s of wall time, the dry run under 10 s (issue 12).
Writes benchmarks/results/descheduler_cycle.json.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from report import parse_args, peak_rss_mib, publish  # noqa: E402

from berth.descheduler.cycle import Descheduler  # noqa: E402
from berth.descheduler.policy import load_policy  # noqa: E402
from berth.descheduler.registry import builtin_plugins  # noqa: E402
from berth.gc_policy import tune_for_throughput  # noqa: E402
from berth.sim.deschedule import load_snapshot, plan_descheduling  # noqa: E402
from workloads import make_node  # noqa: E402

NOW = datetime(2024, 1, 1, tzinfo=UTC)
POLICY = {
    "apiVersion": "descheduler/v1alpha2",
    "kind": "DeschedulerPolicy",
    "profiles": [
        {
            "name": "balance",
            "pluginConfig": [
                {"name": "DefaultEvictor", "args": {"nodeFit": True}},
                {
                    "name": "LowNodeUtilization",
                    "args": {
                        "thresholds": {"cpu": 20, "memory": 20, "pods": 20},
                        "targetThresholds": {"cpu": 50, "memory": 50, "pods": 50},
                    },
                },
            ],
            "plugins": {"balance": {"enabled": ["LowNodeUtilization"]}},
        }
    ],
}


def cluster(nodes: int, pods: int, hot: int) -> list[dict[str, Any]]:
    """Nodes, 500 ReplicaSets and `pods` running pods spread hot / middle / cold."""
    objs: list[dict[str, Any]] = [make_node(f"node-{i}") for i in range(nodes)]
    sets = 500
    for r in range(sets):
        objs.append(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {"name": f"rs-{r}", "namespace": "default", "uid": f"rs-uid-{r}"},
                "spec": {
                    "replicas": pods // sets,
                    "selector": {"matchLabels": {"rs": str(r)}},
                    "template": {
                        "metadata": {"labels": {"rs": str(r)}},
                        "spec": {
                            "containers": [
                                {
                                    "name": "c",
                                    "image": "pause",
                                    "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}},
                                }
                            ]
                        },
                    },
                },
            }
        )
    middle = (nodes - hot) // 2
    plan: list[tuple[int, int, str]] = []  # (node, count, cpu)
    plan += [(i, 20, "180m") for i in range(hot)]
    plan += [(i, 12, "100m") for i in range(hot, hot + middle)]
    left = pods - sum(c for _, c, _ in plan)
    cold = list(range(hot + middle, nodes))
    per, extra = divmod(left, len(cold))
    plan += [(node, per + (1 if j < extra else 0), "100m") for j, node in enumerate(cold)]
    k = 0
    for node, count, cpu in plan:
        for _ in range(count):
            if k >= pods:
                break
            r = k % sets
            objs.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"pod-{k}",
                        "namespace": "default",
                        "labels": {"rs": str(r)},
                        "ownerReferences": [
                            {
                                "apiVersion": "apps/v1",
                                "kind": "ReplicaSet",
                                "name": f"rs-{r}",
                                "uid": f"rs-uid-{r}",
                                "controller": True,
                            }
                        ],
                    },
                    "spec": {
                        "nodeName": f"node-{node}",
                        "containers": [
                            {
                                "name": "c",
                                "image": "pause",
                                "resources": {"requests": {"cpu": cpu, "memory": "500Mi"}},
                            }
                        ],
                    },
                    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
                }
            )
            k += 1
    return objs


def main() -> None:
    """Run the cycle and the dry run; print and record the figures."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=50000)
    ap.add_argument("--hot", type=int, default=250)
    args = parse_args(ap)
    tune_for_throughput()  # the collector's thresholds the berth command sets
    objs = cluster(args.nodes, args.pods, args.hot)
    policy = load_policy(POLICY, builtin_plugins())
    store, _ = load_snapshot(objs, now=NOW, validated=True)
    gc.collect()
    t0 = time.perf_counter()
    result = Descheduler(store, policy).run_cycle(NOW.timestamp())
    cycle = time.perf_counter() - t0
    gc.collect()
    t1 = time.perf_counter()
    plan = plan_descheduling(
        objs, policy, now=NOW, validated=True
    )  # as berth deschedule: its loader validated
    dry = time.perf_counter() - t1
    placed = sum(1 for e in plan.evictions if e.replacement is not None and e.replacement[2] is not None)
    publish(
        "descheduler_cycle",
        {
            "nodes": args.nodes,
            "pods": args.pods,
            "hot_nodes": args.hot,
            "cycle_evictions": len(result.evictions),
            "cycle_wall_seconds": round(cycle, 3),
            "cycle_target_seconds": 2.0,
            "dry_run_evictions": len(plan.evictions),
            "dry_run_replacements_placed": placed,
            "dry_run_wall_seconds": round(dry, 3),
            "dry_run_target_seconds": 10.0,
            "peak_rss_mib": peak_rss_mib(),
        },
    )


if __name__ == "__main__":
    main()
