"""The Scheduling Framework: plugin contract, statuses, cycle state, node table, profiles and runtime."""

from berth.scheduler.framework.config import ConfigError, SchedulerConfig, parse_config
from berth.scheduler.framework.cycle_state import BINDING_ANNOTATIONS_KEY, CycleState, Overlay
from berth.scheduler.framework.nodetable import NodeInfo, NodeTable
from berth.scheduler.framework.plugin import (
    MAX_NODE_SCORE,
    ClusterEvent,
    Handle,
    NodeStatusMap,
    PostFilterResult,
    PreFilterResult,
    Verdicts,
    default_normalize,
)
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.registry import Registry
from berth.scheduler.framework.runtime import FilterOutcome, Framework, ScoreOutcome
from berth.scheduler.framework.status import Code, PluginError, Status

__all__ = [
    "BINDING_ANNOTATIONS_KEY",
    "MAX_NODE_SCORE",
    "ClusterEvent",
    "Code",
    "ConfigError",
    "CycleState",
    "FilterOutcome",
    "Framework",
    "Handle",
    "NodeInfo",
    "NodeStatusMap",
    "NodeTable",
    "Overlay",
    "PluginError",
    "PodInfo",
    "PostFilterResult",
    "PreFilterResult",
    "Registry",
    "SchedulerConfig",
    "ScoreOutcome",
    "Status",
    "Verdicts",
    "default_normalize",
    "parse_config",
]
