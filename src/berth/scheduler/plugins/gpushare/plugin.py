"""The GPU-sharing plugin set on Berth's scheduling framework.

``Open-Gpu-Share`` (Filter, Reserve/Unreserve, PreBind) accounts fractional GPUs per device from the pods on
each node (their ``alibabacloud.com/gpu-index`` annotation, or the devices chosen at Reserve for pods not bound
yet), filters nodes without enough free devices or of another GPU model, picks device indices at Reserve and
has them written to the pod as ``alibabacloud.com/gpu-index`` with the binding. The score plugins
``RandomScore``, ``DotProductScore``, ``GpuClusteringScore``, ``GpuPackingScore``, ``BestFitScore`` and
``FGDScore`` are the FGD paper's policies. Pods carry their GPU demand as annotations, not as requests.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from berth.scheduler.framework import (
    BINDING_ANNOTATIONS_KEY,
    ConfigError,
    CycleState,
    Handle,
    NodeInfo,
    NodeTable,
    PodInfo,
    Registry,
)
from berth.scheduler.framework.nodetable import IntArray
from berth.scheduler.framework.plugin import Verdicts
from berth.scheduler.framework.status import Status, unresolvable, unschedulable
from berth.scheduler.plugins.gpushare.frag import TypicalPods
from berth.scheduler.plugins.gpushare.policies import (
    BestFitPolicy,
    DotProductPolicy,
    FGDPolicy,
    FragTracker,
    GpuClusteringPolicy,
    GpuPackingPolicy,
    Policy,
    RandomPolicy,
    normalize,
)
from berth.scheduler.plugins.gpushare.state import (
    MAX_DEVICES,
    MILLI,
    GpuCluster,
    GpuPod,
    best_fit_device,
    exclusive_devices,
    parse_gpu_index,
)

NAME = "Open-Gpu-Share"
GPU_MILLI = "alibabacloud.com/gpu-milli"
GPU_COUNT = "alibabacloud.com/gpu-count"
GPU_CARD_MODEL = "alibabacloud.com/gpu-card-model"
GPU_INDEX = "alibabacloud.com/gpu-index"
ERR_GPU = f"Insufficient {GPU_MILLI}"
ERR_MODEL = "node(s) didn't match the requested GPU card model"
_STATE_KEY = NAME + "/devices"
_SUCCESS = Status()


def gpu_pod(pod: PodInfo) -> GpuPod:
    """The pod's CPU, memory and GPU annotations; a bad annotation raises ValueError naming pod and key."""
    ann = (pod.obj.get("metadata") or {}).get("annotations") or {}
    where = f'Pod "{pod.key}"'

    def number(key: str, hi: int) -> int:
        raw = ann.get(key)
        if raw in (None, ""):
            return 0
        try:
            v = int(str(raw))
        except ValueError:
            raise ValueError(f'{where}: metadata.annotations[{key}]: invalid value "{raw}"') from None
        if not 0 <= v <= hi:
            raise ValueError(f"{where}: metadata.annotations[{key}]: {v} is not between 0 and {hi}")
        return v

    milli = number(GPU_MILLI, MILLI)
    count = number(GPU_COUNT, MAX_DEVICES)
    if milli > 0 and count == 0:
        count = 1
    if 0 < milli < MILLI and count > 1:
        raise ValueError(
            f"{where}: metadata.annotations[{GPU_MILLI}]: {milli} is a GPU share but {GPU_COUNT} is {count}"
        )
    models = tuple(m for m in str(ann.get(GPU_CARD_MODEL) or "").split("|") if m)
    return GpuPod(pod.key, pod.requests.get("cpu", 0), pod.requests.get("memory", 0), milli, count, models)


def _node_gpus(node: Mapping[str, Any]) -> tuple[int, str]:
    status = node.get("status") or {}
    alloc = status.get("allocatable") or status.get("capacity") or {}
    try:
        count = int(str(alloc.get(GPU_COUNT, "0")))
    except ValueError:
        count = 0
    model = ((node.get("metadata") or {}).get("labels") or {}).get(GPU_CARD_MODEL, "")
    return min(max(count, 0), MAX_DEVICES), str(model)


class GpuLedger:
    """Each node's free milli per device, rebuilt from the pods counted on it when they change."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[int, int, IntArray, dict[str, int]]] = {}

    def row(self, table: NodeTable, i: int, exclude: str = "") -> tuple[IntArray, dict[str, int]]:
        """(free milli per device, GPU kinds of the pods there) of row ``i``, without the pod ``exclude``
        (a uid: the pod being reserved, already assumed on the node)."""
        name = table.names[i]
        version = table.pods_version(name)
        hit = self._cache.get(name)
        uncached = bool(exclude) and exclude in table.pods[i]
        if not uncached and hit is not None and hit[0] == version and hit[1] == table.node_version:
            return hit[2], hit[3]
        count, _ = _node_gpus(table.nodes[i])
        free = np.where(np.arange(MAX_DEVICES) < count, MILLI, 0).astype(np.int64)
        kinds: dict[str, int] = {}
        for uid, p in table.pods[i].items():
            if uid == exclude:
                continue
            try:
                g = gpu_pod(p)
            except ValueError:
                continue
            if not g.wants_gpu:
                continue
            devices = _devices_of(p, g, free)
            for d in devices:
                free[d] = max(free[d] - g.gpu_milli, 0)
            kinds[g.affinity] = kinds.get(g.affinity, 0) + 1
        if not uncached:
            self._cache[name] = (version, table.node_version, free, kinds)
        return free, kinds

    def forget(self, name: str) -> None:
        """Drop the cached row of node ``name``."""
        self._cache.pop(name, None)

    def view(self, table: NodeTable, rows: IntArray) -> GpuCluster:
        """A GpuCluster over ``rows`` (in that order) with their free CPU, memory and devices."""
        nodes = []
        for i in rows.tolist():
            count, model = _node_gpus(table.nodes[i])
            nodes.append((table.names[i], 0, 0, count, model))
        c = GpuCluster.build(nodes)
        c.cpu_capacity = table.alloc("cpu")[rows]
        c.memory_capacity = table.alloc("memory")[rows]
        c.cpu_free = c.cpu_capacity - table.req("cpu")[rows]
        c.memory_free = c.memory_capacity - table.req("memory")[rows]
        for j, i in enumerate(rows.tolist()):
            free, kinds = self.row(table, i)
            c.gpu_free[j] = free
            c.affinity[j] = dict(kinds)
        return c


def _devices_of(pod: PodInfo, g: GpuPod, free: IntArray) -> tuple[int, ...]:
    ann = (pod.obj.get("metadata") or {}).get("annotations") or {}
    raw = ann.get(GPU_INDEX)
    if raw:
        try:
            return parse_gpu_index(str(raw), f'Pod "{pod.key}"')
        except ValueError:
            pass
    chosen = pod.extra.get(GPU_INDEX)
    if isinstance(chosen, tuple):
        return chosen
    if g.is_share:
        return (best_fit_device(free, g.gpu_milli),)
    return exclusive_devices(free, g.gpu_count)


class OpenGpuShare:
    """Filter / Reserve / Unreserve / PreBind of GPU-sharing pods (see the module docstring)."""

    name = NAME

    def __init__(self, select: str, rng: np.random.Generator, table_of: Callable[[], NodeTable]) -> None:
        """``select``: the device choice for a share (best, worst or random); ``table_of``: the current
        node table (Reserve reads the chosen node's devices there)."""
        self.select = select
        self.rng = rng
        self.ledger = GpuLedger()
        self._table_of = table_of

    def filter_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts:
        """Nodes of an accepted GPU model with ``gpu-count`` devices of ``gpu-milli`` free each."""
        try:
            g = gpu_pod(pod)
        except ValueError as e:
            return Verdicts.single(np.zeros(table.size, dtype=np.bool_), unresolvable(str(e), plugin=NAME))
        if not g.wants_gpu:
            return Verdicts.all_pass(table.size)
        view = self.ledger.view(table, np.arange(table.size, dtype=np.int64))
        model = view.model_ok(g)
        room = (view.gpu_free >= g.gpu_milli).sum(axis=1) >= g.gpu_count
        codes = np.where(model, 0, 1).astype(np.int64)
        return Verdicts(
            model & room, (unschedulable(ERR_GPU, plugin=NAME), unresolvable(ERR_MODEL, plugin=NAME)), codes
        )

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Per-node form of filter_nodes."""
        return self.filter_nodes(state, pod, node.table).status_of(node.index)

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Pick the device indices on ``node_name`` and count them for the pod."""
        g = gpu_pod(pod)
        if not g.wants_gpu:
            return _SUCCESS
        free = self._free_on(node_name, pod.uid)
        if free is None:
            return unschedulable(ERR_GPU, plugin=NAME)
        if self.select == "random" and g.is_share:
            cand = np.flatnonzero(free >= g.gpu_milli)
            devices: tuple[int, ...] = (int(cand[int(self.rng.integers(len(cand)))]),) if len(cand) else ()
        elif self.select == "worst" and g.is_share:
            cand = np.where(free >= g.gpu_milli, free, -1)
            devices = (int(np.argmax(cand)),) if cand.max() >= 0 else ()
        elif g.is_share:
            devices = (best_fit_device(free, g.gpu_milli),) if (free >= g.gpu_milli).any() else ()
        else:
            devices = exclusive_devices(free, g.gpu_count)
        if len(devices) != g.gpu_count:
            return unschedulable(ERR_GPU, plugin=NAME)
        pod.extra[GPU_INDEX] = devices
        state.write(_STATE_KEY, devices)
        self.ledger.forget(node_name)
        return _SUCCESS

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Forget the devices picked at Reserve."""
        pod.extra.pop(GPU_INDEX, None)
        state.delete(_STATE_KEY)
        self.ledger.forget(node_name)

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Have ``alibabacloud.com/gpu-index`` written with the binding."""
        devices = state.get(_STATE_KEY)
        if devices is None:
            return _SUCCESS
        annotations: dict[str, str] = dict(state.get(BINDING_ANNOTATIONS_KEY) or {})
        annotations[GPU_INDEX] = ",".join(str(d) for d in devices)
        state.write(BINDING_ANNOTATIONS_KEY, annotations)
        return _SUCCESS

    def _free_on(self, node_name: str, uid: str) -> IntArray | None:
        table = self._table_of()
        i = table.index.get(node_name)
        if i is None:
            return None
        free, _ = self.ledger.row(table, i, exclude=uid)
        return free.copy()


class GpuScore:
    """One of the paper's policies as a (batched) Score plugin; ``policy`` None is FGD, over ``typical`` or,
    without it, over the shapes of the pods scored so far."""

    def __init__(
        self, name: str, policy: Policy | None, normalized: bool = False, typical: TypicalPods | None = None
    ) -> None:
        self.name = name
        self.policy = policy
        self.normalized = normalized
        self.typical = typical
        self.ledger = GpuLedger()
        self.seen: Counter[GpuPod] = Counter()
        self._counted: set[str] = set()

    def score_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: IntArray) -> IntArray:
        """The policy's scores of rows ``idx``."""
        try:
            g = gpu_pod(pod)
        except ValueError:
            return np.zeros(len(idx), dtype=np.int64)
        view = self.ledger.view(table, np.asarray(idx, dtype=np.int64))
        rows = np.arange(len(idx), dtype=np.int64)
        policy = self.policy
        if policy is None:
            policy = FGDPolicy(FragTracker(self._typical(pod.uid, g), view))
        if isinstance(policy, BestFitPolicy):
            return policy.raw_score(view, g, rows)
        return policy.score(view, g, rows)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        """Per-node form of score_nodes."""
        return int(self.score_nodes(state, pod, node.table, np.asarray([node.index], dtype=np.int64))[0])

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        """BestFitScore's min-max normalisation; the others keep their scores."""
        return normalize(scores) if self.normalized else scores

    def _typical(self, uid: str, g: GpuPod) -> TypicalPods:
        """The configured typical pods, else those of the pods scored so far (each pod counted once)."""
        if self.typical is not None:
            return self.typical
        if uid not in self._counted:
            self._counted.add(uid)
            self.seen[GpuPod("", g.cpu_milli, 0, g.gpu_milli, g.gpu_count, g.gpu_models)] += 1
        return TypicalPods.of(list(self.seen.elements()))


def _typical_arg(args: Mapping[str, Any]) -> TypicalPods | None:
    raw = args.get("typicalPods")
    if raw is None:
        return None
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"FGDScore: typicalPods: must be a non-empty list, got {raw!r}")
    pods: list[GpuPod] = []
    for k, item in enumerate(raw):
        if not isinstance(item, Mapping):
            raise ConfigError(f"FGDScore: typicalPods[{k}]: must be a mapping")
        try:
            shape = GpuPod(
                "",
                int(item.get("cpuMilli", 0)),
                0,
                int(item.get("gpuMilli", 0)),
                int(item.get("gpuCount", 1 if item.get("gpuMilli") else 0)),
                tuple(m for m in str(item.get("gpuCardModel", "")).split("|") if m),
            )
            weight = int(item.get("count", 1))
        except (TypeError, ValueError):
            raise ConfigError(f"FGDScore: typicalPods[{k}]: invalid number in {dict(item)!r}") from None
        pods.extend([shape] * weight)
    return TypicalPods.of(pods, threshold=100)


def _new_share(args: Mapping[str, Any], handle: Handle) -> OpenGpuShare:
    select = str(args.get("gpuSelMethod", "best"))
    if select not in ("best", "worst", "random"):
        raise ConfigError(f'{NAME}: gpuSelMethod: must be best, worst or random, got "{select}"')
    return OpenGpuShare(select, np.random.default_rng(handle.rng.getrandbits(64)), handle.node_table)


def _score_factory(name: str) -> Callable[[Mapping[str, Any], Handle], GpuScore]:
    def new(args: Mapping[str, Any], handle: Handle) -> GpuScore:
        if name == "RandomScore":
            return GpuScore(name, RandomPolicy(np.random.default_rng(handle.rng.getrandbits(64))))
        if name == "DotProductScore":
            return GpuScore(name, DotProductPolicy())
        if name == "GpuClusteringScore":
            return GpuScore(name, GpuClusteringPolicy())
        if name == "GpuPackingScore":
            return GpuScore(name, GpuPackingPolicy())
        if name == "BestFitScore":
            return GpuScore(name, BestFitPolicy(), normalized=True)
        return GpuScore(name, None, typical=_typical_arg(args))

    return new


SCORE_PLUGINS = (
    "RandomScore",
    "DotProductScore",
    "GpuClusteringScore",
    "GpuPackingScore",
    "BestFitScore",
    "FGDScore",
)


def register(registry: Registry) -> None:
    """Add Open-Gpu-Share and the six GPU score plugins to ``registry``."""
    registry.register(NAME, _new_share)
    for name in SCORE_PLUGINS:
        registry.register(name, _score_factory(name))


__all__ = [
    "GPU_INDEX",
    "NAME",
    "SCORE_PLUGINS",
    "GpuLedger",
    "GpuScore",
    "OpenGpuShare",
    "gpu_pod",
    "register",
]
