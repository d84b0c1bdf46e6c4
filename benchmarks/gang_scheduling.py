"""Gang scheduling: 1000 PodGroups of 8 pods on 5000 scheduler_perf nodes, with a Coscheduling profile.

Prints pods/s of the scheduling loop (Permit waits included: a gang binds when its 8th member is
assumed) and writes benchmarks/results/gang_scheduling.json.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from report import parse_args, peak_rss_mib, publish  # noqa: E402

from berth.gc_policy import tune_for_throughput  # noqa: E402
from berth.scheduler.framework.config import parse_config  # noqa: E402
from berth.sim.engine import Simulation  # noqa: E402
from berth.sim.scenario import Plan, Step  # noqa: E402
from workloads import make_node, make_pod  # noqa: E402

GROUP_LABEL = "scheduling.x-k8s.io/pod-group"


def coscheduling_config() -> Any:
    """kube's default profile with Coscheduling replacing PrioritySort and enabled at every other point."""
    return parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {
                        "queueSort": {
                            "enabled": [{"name": "Coscheduling"}],
                            "disabled": [{"name": "PrioritySort"}],
                        },
                        "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                    },
                }
            ],
        }
    )


def main() -> None:
    """Run the benchmark and write its JSON result."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--gangs", type=int, default=1000)
    ap.add_argument("--size", type=int, default=8)
    args = parse_args(ap)
    tune_for_throughput()  # the collector's thresholds the berth command sets
    setup: list[dict[str, Any]] = [make_node(f"node-{i}") for i in range(args.nodes)]
    groups: list[dict[str, Any]] = []
    pods: list[dict[str, Any]] = []
    for g in range(args.gangs):
        name = f"gang-{g}"
        groups.append(
            {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": {"name": name, "namespace": "gangs"},
                "spec": {"minMember": args.size},
            }
        )
        for m in range(args.size):
            p = make_pod(f"{name}-{m}", "gangs")
            p["metadata"]["labels"] = {GROUP_LABEL: name}
            pods.append(p)
    sim = Simulation(config=coscheduling_config())
    sim.run(Plan([Step(0.0, setup + groups)]), until=0.0)
    gc.collect()
    gc.freeze()
    before, loop_before = sim.scheduler.stats.scheduled, sim.scheduler.stats.loop_seconds
    t0 = time.perf_counter()
    sim.apply_step(Step(0.0, pods))
    sim.run_until_idle()
    wall = time.perf_counter() - t0
    scheduled = sim.scheduler.stats.scheduled - before
    loop = sim.scheduler.stats.loop_seconds - loop_before
    total = args.gangs * args.size
    assert scheduled == total, f"only {scheduled} of {total} pods scheduled"
    res = {
        "workload": "GangScheduling",
        "nodes": args.nodes,
        "gangs": args.gangs,
        "gangSize": args.size,
        "pods": total,
        "schedulingLoopSeconds": round(loop, 3),
        "podsPerSecondLoop": round(total / loop, 1),
        "wallSecondsIncludingStoreAndControllers": round(wall, 3),
        "podsPerSecondWall": round(total / wall, 1),
        "peakRSSMiB": peak_rss_mib(),
    }
    publish("gang_scheduling", res)


if __name__ == "__main__":
    main()
