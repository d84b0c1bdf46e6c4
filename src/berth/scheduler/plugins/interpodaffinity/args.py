"""InterPodAffinityArgs: ``hardPodAffinityWeight`` (default 1) and ``ignorePreferredTermsOfExistingPods``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from berth.scheduler.plugins.helpers import as_int, check_fields, invalid

PLUGIN = "InterPodAffinity"
MAX_HARD_POD_AFFINITY_WEIGHT = 100


@dataclass(frozen=True, slots=True)
class InterPodAffinityArgs:
    """The plugin's arguments, defaulted as kube-scheduler defaults them."""

    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


def parse_args(args: Mapping[str, Any]) -> InterPodAffinityArgs:
    """Decode and validate ``pluginConfig`` args (raises ConfigError with kube's field messages)."""
    check_fields(PLUGIN, "", args, ("hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"))
    weight = args.get("hardPodAffinityWeight")
    w = 1 if weight is None else as_int(PLUGIN, "hardPodAffinityWeight", weight)
    if not 0 <= w <= MAX_HARD_POD_AFFINITY_WEIGHT:
        raise invalid(
            PLUGIN, "hardPodAffinityWeight", w, f"not in valid range [0, {MAX_HARD_POD_AFFINITY_WEIGHT}]"
        )
    ignore = args.get("ignorePreferredTermsOfExistingPods", False)
    if not isinstance(ignore, bool):
        raise invalid(PLUGIN, "ignorePreferredTermsOfExistingPods", ignore, "must be a boolean")
    return InterPodAffinityArgs(w, ignore)
