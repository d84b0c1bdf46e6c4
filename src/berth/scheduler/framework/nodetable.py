"""The columnar cluster view: one row per node, one numpy column per resource.

The scheduler cache owns one NodeTable and updates its rows in place as nodes and pods come and go;
a scheduling cycle reads the columns directly. ``NodeInfo`` is a thin view of one row for plugins
that work node by node.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from berth.api.resources import node_allocatable
from berth.api.taints import Taint, parse_taints
from berth.scheduler.framework.cycle_state import Overlay
from berth.scheduler.framework.podinfo import PodInfo

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
EPHEMERAL_STORAGE = "ephemeral-storage"
BASE_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)

Port = tuple[str, str, int]

ZONE_LABEL = "topology.kubernetes.io/zone"
ZONE_LABEL_BETA = "failure-domain.beta.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
REGION_LABEL_BETA = "failure-domain.beta.kubernetes.io/region"


class LabelColumn:
    """Node labels of one key as integer codes (-1 where a node lacks the key) plus the value vocabulary."""

    __slots__ = ("codes", "vocab")

    def __init__(self, codes: npt.NDArray[np.int32], vocab: dict[str, int]) -> None:
        self.codes = codes
        self.vocab = vocab

    def mask_in(self, values: tuple[str, ...] | list[str]) -> BoolArray:
        """Nodes whose value for this key is one of ``values``."""
        ids = [self.vocab[v] for v in values if v in self.vocab]
        if not ids:
            return np.zeros(len(self.codes), dtype=np.bool_)
        if len(ids) == 1:
            out: BoolArray = self.codes == ids[0]
            return out
        return np.isin(self.codes, ids)

    def mask_exists(self) -> BoolArray:
        """Nodes that carry this key."""
        return self.codes >= 0


class NodeTable:
    """Structure of arrays over all nodes, updated in place by the cache."""

    def __init__(self, capacity: int = 64) -> None:
        self._cap = capacity
        self.size = 0
        self.generation = 0
        self.layout = 0  # changes whenever rows are added or removed (row indices may shift)
        self.node_version = 0  # changes whenever a node object changes (not when pods come and go)
        # rows whose requests changed, in order; readers remember a position (see rows_changed_since)
        self.change_log: list[int] = []
        self.change_epoch = 0
        # rows whose allocatable, requests or pod count changed, in order (cycle overlays aside: see
        # overlays_applied); readers remember a position (see rows_revalued_since)
        self.value_log: list[int] = []
        self.value_epoch = 0
        # the cycle overlays currently added to the columns, in order (see apply_overlay)
        self.applied_overlays: list[Overlay] = []
        # columns with a lineage overlay's version added, kept in step across cycles (see apply_overlay)
        self._shadows: dict[int, _Shadow] = {}
        self._installed: _Shadow | None = None  # the shadow whose columns the table shows now
        self._pods_versions: dict[str, int] = {}  # node name -> count of pod changes on it
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self.nodes: list[Mapping[str, Any]] = []
        self.labels: list[Mapping[str, str]] = []
        self.taints: list[tuple[Taint, ...]] = []
        self.ports: list[dict[Port, int]] = []
        self.pods: list[dict[str, PodInfo]] = []
        self.allocatable: dict[str, IntArray] = {}
        self.requested: dict[str, IntArray] = {}
        self.nonzero_cpu: IntArray = np.zeros(capacity, dtype=np.int64)
        self.nonzero_memory: IntArray = np.zeros(capacity, dtype=np.int64)
        self.pod_count: IntArray = np.zeros(capacity, dtype=np.int64)
        self.unschedulable: BoolArray = np.zeros(capacity, dtype=np.bool_)
        self.has_taints: BoolArray = np.zeros(capacity, dtype=np.bool_)
        self._label_columns: dict[str, LabelColumn] = {}
        self._zone_order: IntArray | None = None
        for r in BASE_RESOURCES:
            self.ensure_resource(r)

    # ----- columns -------------------------------------------------------------------------
    def ensure_resource(self, resource: str) -> None:
        """Add a zero column for ``resource`` if the table does not have one."""
        if resource not in self.allocatable:
            self.allocatable[resource] = np.zeros(self._cap, dtype=np.int64)
            self.requested[resource] = np.zeros(self._cap, dtype=np.int64)

    def alloc(self, resource: str) -> IntArray:
        """Allocatable of ``resource`` for the live rows (zeros if unknown)."""
        col = self.allocatable.get(resource)
        if col is None:
            return np.zeros(self.size, dtype=np.int64)
        return col[: self.size]

    def req(self, resource: str) -> IntArray:
        """Requested amount of ``resource`` for the live rows (zeros if unknown)."""
        col = self.requested.get(resource)
        if col is None:
            return np.zeros(self.size, dtype=np.int64)
        return col[: self.size]

    def label_column(self, key: str) -> LabelColumn:
        """The integer-coded column of label ``key`` (built lazily, rebuilt after label changes)."""
        col = self._label_columns.get(key)
        if col is None:
            vocab: dict[str, int] = {}
            codes = np.full(self.size, -1, dtype=np.int32)
            for i, labels in enumerate(self.labels):
                v = labels.get(key)
                if v is not None:
                    codes[i] = vocab.setdefault(v, len(vocab))
            col = LabelColumn(codes, vocab)
            self._label_columns[key] = col
        return col

    def _grow(self) -> None:
        new_cap = self._cap * 2

        def grow(a: Any) -> Any:
            out = np.zeros(new_cap, dtype=a.dtype)
            out[: self._cap] = a
            return out

        for r in list(self.allocatable):
            self.allocatable[r] = grow(self.allocatable[r])
            self.requested[r] = grow(self.requested[r])
        self.nonzero_cpu = grow(self.nonzero_cpu)
        self.nonzero_memory = grow(self.nonzero_memory)
        self.pod_count = grow(self.pod_count)
        self.unschedulable = grow(self.unschedulable)
        self.has_taints = grow(self.has_taints)
        self._cap = new_cap

    # ----- nodes ---------------------------------------------------------------------------
    def set_node(self, node: Mapping[str, Any]) -> int:
        """Add or update the row of ``node``; returns its row index."""
        name = node["metadata"]["name"]
        i = self.index.get(name)
        is_new = i is None
        if i is None:
            if self._installed is not None:
                self._materialize(keep=True)
            if self.size == self._cap:
                self._grow()
            i = self.size
            self.size += 1
            self.index[name] = i
            self.names.append(name)
            self.nodes.append(node)
            self.labels.append({})
            self.taints.append(())
            self.ports.append({})
            self.pods.append({})
            self.layout += 1
        self.nodes[i] = node
        labels = (node.get("metadata") or {}).get("labels") or {}
        self.node_version += 1
        if is_new or labels != self.labels[i]:
            self._label_columns.clear()
            self._zone_order = None
        self.labels[i] = labels
        spec = node.get("spec") or {}
        self.taints[i] = parse_taints(spec.get("taints"))
        self.has_taints[i] = bool(self.taints[i])
        self.unschedulable[i] = bool(spec.get("unschedulable"))
        alloc = node_allocatable(node)
        for r in alloc:
            self.ensure_resource(r)
        for r, col in self.allocatable.items():
            col[i] = alloc.get(r, 0)
        self._log_value(i)
        self.generation += 1
        return i

    def remove_node(self, name: str) -> None:
        """Drop the row of node ``name`` (rows after it move up by one)."""
        i = self.index.get(name)
        if i is None:
            return
        if self._installed is not None:
            self._materialize(keep=True)
        del self.index[name]
        last = self.size - 1
        for arrs in (self.allocatable, self.requested):
            for col in arrs.values():
                col[i:last] = col[i + 1 : last + 1]
                col[last] = 0
        for a in (self.nonzero_cpu, self.nonzero_memory, self.pod_count, self.unschedulable, self.has_taints):
            a[i:last] = a[i + 1 : last + 1]
            a[last] = 0
        for lst in (self.names, self.nodes, self.labels, self.taints, self.ports, self.pods):
            del lst[i]
        self.size = last
        for j in range(i, last):
            self.index[self.names[j]] = j
        self._label_columns.clear()
        self._zone_order = None
        self.layout += 1
        self.node_version += 1
        self.generation += 1

    def zone_order(self) -> IntArray | None:
        """Row indices in kube's node-tree order: zones interleaved round-robin, in order of first appearance.

        kube-scheduler walks nodes in this order when it stops after finding enough feasible nodes.
        None when that order is simply the row order (one zone or none).
        """
        if self._zone_order is None:
            zones: dict[str, list[int]] = {}
            for i, labels in enumerate(self.labels):
                zone = labels.get(ZONE_LABEL) or labels.get(ZONE_LABEL_BETA) or ""
                region = labels.get(REGION_LABEL) or labels.get(REGION_LABEL_BETA) or ""
                key = f"{region}:\x00:{zone}" if zone or region else ""
                zones.setdefault(key, []).append(i)
            if len(zones) <= 1:
                self._zone_order = np.zeros(0, dtype=np.int64)
            else:
                lists = list(zones.values())
                order: list[int] = []
                depth = 0
                while len(order) < self.size:
                    for lst in lists:
                        if depth < len(lst):
                            order.append(lst[depth])
                    depth += 1
                self._zone_order = np.asarray(order, dtype=np.int64)
        return self._zone_order if self._zone_order.size else None

    # ----- pods ----------------------------------------------------------------------------
    def add_pod(self, i: int, pod: PodInfo) -> None:
        """Count ``pod`` on row ``i``."""
        self.pods[i][pod.uid] = pod
        self._account(i, pod, 1)

    def remove_pod(self, i: int, pod: PodInfo) -> None:
        """Stop counting ``pod`` on row ``i``."""
        if self.pods[i].pop(pod.uid, None) is not None:
            self._account(i, pod, -1)

    def rows_changed_since(self, epoch: int, position: int) -> list[int] | None:
        """Rows whose requests changed after log ``position`` of ``epoch`` (None: too old, recompute all)."""
        if epoch != self.change_epoch:
            return None
        return self.change_log[position:]

    def rows_revalued_since(self, epoch: int, position: int) -> list[int] | None:
        """Rows whose allocatable, requests or pod count changed after value-log ``position`` of ``epoch``
        (None: too old, recompute all). Cycle overlays are not changes: they are taken back in the cycle."""
        if epoch != self.value_epoch:
            return None
        return self.value_log[position:]

    def _log_value(self, i: int) -> None:
        log = self.value_log
        if len(log) >= 1_000_000:
            log.clear()
            self.value_epoch += 1
        log.append(i)

    def pods_version(self, name: str) -> int:
        """Changes whenever a pod is added to or removed from node ``name``."""
        return self._pods_versions.get(name, 0)

    def _log_change(self, i: int) -> None:
        name = self.names[i]
        self._pods_versions[name] = self._pods_versions.get(name, 0) + 1
        log = self.change_log
        if len(log) >= 1_000_000:
            log.clear()
            self.change_epoch += 1
        log.append(i)
        self._log_value(i)

    def _account(self, i: int, pod: PodInfo, sign: int) -> None:
        for r, v in pod.requests.items():
            col = self.requested.get(r)
            if col is None:
                self.ensure_resource(r)
                col = self.requested[r]
            col[i] += sign * v
        self.nonzero_cpu[i] += sign * pod.nonzero_cpu
        self.nonzero_memory[i] += sign * pod.nonzero_memory
        self.pod_count[i] += sign
        if self._installed is not None:  # the shown columns are a shadow's: count on the table's own too
            self._installed.account(i, pod, sign)
        self._log_change(i)
        if pod.host_ports:
            ports = self.ports[i]
            for p in pod.host_ports:
                n = ports.get(p, 0) + sign
                if n > 0:
                    ports[p] = n
                else:
                    ports.pop(p, None)
        self.generation += 1

    def apply_overlay(self, overlays: list[Overlay], sign: int = 1) -> None:
        """Add (sign 1) or take back (sign -1) a cycle's request deltas (see CycleState.overlay).

        A dense version of an overlay lineage added to a table without overlays is not added row by row:
        the table shows instead columns that hold it (kept per lineage and brought up to date on the rows
        the table or the lineage changed since), and shows its own columns again when it is taken back.
        The values read are the same either way."""
        if sign > 0:
            for ov in overlays:
                if (
                    ov.lineage is not None
                    and ov.rows is None
                    and not self.applied_overlays
                    and self._installed is None
                ):
                    self.applied_overlays.append(ov)
                    self._install(ov)
                    self._add_ports(ov, 1)
                else:
                    self.applied_overlays.append(ov)
                    self._add(ov, 1)
            return
        installed = self._installed
        shown_out = False
        for ov in overlays:
            self.applied_overlays.remove(ov)
            if installed is not None and installed.overlay is ov:
                shown_out = True  # the columns add commutatively: switch back once the others are off
                self._add_ports(ov, -1)
            else:
                self._add(ov, -1)
        if shown_out:
            if self.applied_overlays:
                self._materialize(keep=False)
            else:
                self._show(None)

    def _add(self, ov: Overlay, sign: int) -> None:
        """Add (or take back) ``ov``'s deltas to the shown columns in place."""
        n = self.size
        requested = self.requested
        rows: Any = ov.rows if ov.rows is not None else slice(0, n)
        if ov.rows is not None and len(ov.rows) == 1:
            rows = int(ov.rows[0])  # one row: scalar updates are far cheaper than fancy indexing
        pairs: list[tuple[IntArray | None, IntArray | None]] = [
            (requested.get(r), delta) for r, delta in ov.requested.items()
        ]
        pairs += ((self.nonzero_cpu, ov.nonzero_cpu), (self.nonzero_memory, ov.nonzero_memory))
        pairs.append((self.pod_count, ov.pods))
        if isinstance(rows, int):
            for column, delta in pairs:
                if column is not None and delta is not None:
                    column[rows] += sign * int(delta[0])
        elif sign > 0:
            for column, delta in pairs:
                if column is not None and delta is not None:
                    column[rows] += delta
        else:
            for column, delta in pairs:
                if column is not None and delta is not None:
                    column[rows] -= delta
        self._add_ports(ov, sign)

    def _add_ports(self, ov: Overlay, sign: int) -> None:
        for row, freed in ov.ports:
            used = self.ports[row]
            for port in freed:
                left = used.get(port, 0) - sign * ov.ports_sign
                if left > 0:
                    used[port] = left
                else:
                    used.pop(port, None)

    def _overlay_columns(self, ov: Overlay) -> list[tuple[str, IntArray, IntArray]]:
        """(column name, the table's column, delta) for each column ``ov`` changes."""
        out = [(r, self.requested[r], d) for r, d in ov.requested.items() if r in self.requested]
        for name, col, d in (
            (_NONZERO_CPU, self.nonzero_cpu, ov.nonzero_cpu),
            (_NONZERO_MEMORY, self.nonzero_memory, ov.nonzero_memory),
            (_POD_COUNT, self.pod_count, ov.pods),
        ):
            if d is not None:
                out.append((name, col, d))
        return out

    def _install(self, ov: Overlay) -> None:
        """Show the columns with ``ov`` (a dense version of a lineage) added, brought up to date."""
        lineage = ov.lineage
        assert lineage is not None
        columns = self._overlay_columns(ov)
        sh = self._shadows.get(lineage.serial)
        if sh is None or not sh.fits(self, lineage, columns):
            sh = _Shadow(self, ov, columns)
            self._shadows.pop(lineage.serial, None)
            if len(self._shadows) >= _SHADOWS:
                del self._shadows[next(iter(self._shadows))]
            self._shadows[lineage.serial] = sh
        else:
            changed = self.value_log[sh.value_pos :] + lineage.log[sh.log_pos :]
            sh.update(changed, self.size)
        sh.overlay = ov
        sh.mark(self, lineage)
        self._show(sh)

    def _show(self, sh: _Shadow | None) -> None:
        """Show ``sh``'s columns (None: the table's own)."""
        switched = sh if sh is not None else self._installed
        self._installed = sh
        if switched is None:
            return
        for name, (own, shown, _) in switched.arrays.items():
            col = own if sh is None else shown
            if name == _NONZERO_CPU:
                self.nonzero_cpu = col
            elif name == _NONZERO_MEMORY:
                self.nonzero_memory = col
            elif name == _POD_COUNT:
                self.pod_count = col
            else:
                self.requested[name] = col

    def _materialize(self, *, keep: bool) -> None:
        """Stop showing a shadow's columns while overlays are still applied: the table's own columns take
        the shown values (with the shadow's overlay when ``keep``, else without it), and the shadow is
        dropped."""
        sh = self._installed
        assert sh is not None
        n = self.size
        for own, shown, delta in sh.arrays.values():
            if keep:
                own[:] = shown
            else:
                np.subtract(shown[:n], delta[:n], out=own[:n])
        self._show(None)
        for serial, kept in list(self._shadows.items()):
            if kept is sh:
                del self._shadows[serial]

    # ----- views ---------------------------------------------------------------------------
    def info(self, i: int) -> NodeInfo:
        """A NodeInfo view of row ``i``."""
        return NodeInfo(self, i)

    def __iter__(self) -> Iterator[NodeInfo]:
        return (NodeInfo(self, i) for i in range(self.size))

    def __len__(self) -> int:
        return self.size


_NONZERO_CPU = "\x00nonzero-cpu"
_NONZERO_MEMORY = "\x00nonzero-memory"
_POD_COUNT = "\x00pod-count"
_SHADOWS = 4  # lineages whose shadow columns a table keeps


class _Shadow:
    """Copies of the columns a lineage overlay changes, with its current version added: for each column,
    (the table's own array, the copy, the delta). Brought up to date on the rows changed since ``mark``."""

    __slots__ = (
        "arrays",
        "cap",
        "layout",
        "lineage_epoch",
        "log_pos",
        "overlay",
        "size",
        "value_epoch",
        "value_pos",
    )

    def __init__(self, table: NodeTable, ov: Overlay, columns: list[tuple[str, IntArray, IntArray]]) -> None:
        n = table.size
        self.arrays: dict[str, tuple[IntArray, IntArray, IntArray]] = {}
        for name, own, delta in columns:
            shown = own.copy()
            shown[:n] += delta
            self.arrays[name] = (own, shown, delta)
        self.overlay = ov
        self.cap = table._cap
        self.layout = table.layout
        self.size = n
        self.value_epoch = self.value_pos = self.lineage_epoch = self.log_pos = 0

    def fits(self, table: NodeTable, lineage: Any, columns: list[tuple[str, IntArray, IntArray]]) -> bool:
        """Whether the copies line up with the table's columns and ``columns`` and can be brought up to
        date from the logs."""
        arrays = self.arrays
        if (
            self.layout != table.layout
            or self.cap != table._cap
            or self.size != table.size
            or self.value_epoch != table.value_epoch
            or self.lineage_epoch != lineage.epoch
            or len(columns) != len(arrays)
        ):
            return False
        for name, own, delta in columns:
            kept = arrays.get(name)
            if kept is None or kept[0] is not own or kept[2] is not delta:
                return False
        return True

    def mark(self, table: NodeTable, lineage: Any) -> None:
        """Remember how far the logs have been read."""
        self.value_epoch = table.value_epoch
        self.value_pos = len(table.value_log)
        self.lineage_epoch = lineage.epoch
        self.log_pos = len(lineage.log)

    def update(self, rows: list[int], n: int) -> None:
        """Recompute the copies on ``rows`` (many: on every row)."""
        if not rows:
            return
        if len(rows) <= 16:
            for row in set(rows):
                for own, shown, delta in self.arrays.values():
                    shown[row] = own[row] + delta[row]
        else:
            for own, shown, delta in self.arrays.values():
                np.add(own[:n], delta[:n], out=shown[:n])

    def account(self, i: int, pod: PodInfo, sign: int) -> None:
        """Count ``pod`` on row ``i`` of the table's own columns (the copies are counted by the table)."""
        arrays = self.arrays
        for name, (own, _, _) in arrays.items():
            if name == _NONZERO_CPU:
                own[i] += sign * pod.nonzero_cpu
            elif name == _NONZERO_MEMORY:
                own[i] += sign * pod.nonzero_memory
            elif name == _POD_COUNT:
                own[i] += sign
            else:
                v = pod.requests.get(name)
                if v:
                    own[i] += sign * v


class NodeInfo:
    """A thin view of one NodeTable row: the node object, its labels, taints, resources and pods."""

    __slots__ = ("index", "table")

    def __init__(self, table: NodeTable, index: int) -> None:
        self.table = table
        self.index = index

    @property
    def name(self) -> str:
        """The node's name."""
        return self.table.names[self.index]

    @property
    def node(self) -> Mapping[str, Any]:
        """The node object (wire form, read-only)."""
        return self.table.nodes[self.index]

    @property
    def labels(self) -> Mapping[str, str]:
        """The node's labels."""
        return self.table.labels[self.index]

    @property
    def taints(self) -> tuple[Taint, ...]:
        """The node's taints."""
        return self.table.taints[self.index]

    @property
    def unschedulable(self) -> bool:
        """Whether spec.unschedulable is set."""
        return bool(self.table.unschedulable[self.index])

    @property
    def pods(self) -> Mapping[str, PodInfo]:
        """Pods counted on the node (bound and assumed), by uid."""
        return self.table.pods[self.index]

    @property
    def used_ports(self) -> Mapping[Port, int]:
        """Host ports in use on the node with their use counts."""
        return self.table.ports[self.index]

    @property
    def pod_count(self) -> int:
        """Number of pods counted on the node."""
        return int(self.table.pod_count[self.index])

    def allocatable(self, resource: str) -> int:
        """Allocatable amount of ``resource`` (milli for cpu)."""
        col = self.table.allocatable.get(resource)
        return 0 if col is None else int(col[self.index])

    def requested(self, resource: str) -> int:
        """Requested amount of ``resource`` by the pods on the node (milli for cpu)."""
        col = self.table.requested.get(resource)
        return 0 if col is None else int(col[self.index])

    @property
    def nonzero_cpu(self) -> int:
        """Requested milli-cpu with kube's non-zero defaults (for scoring)."""
        return int(self.table.nonzero_cpu[self.index])

    @property
    def nonzero_memory(self) -> int:
        """Requested memory with kube's non-zero defaults (for scoring)."""
        return int(self.table.nonzero_memory[self.index])

    def __repr__(self) -> str:
        return f"NodeInfo({self.name})"


class AdjustedNodeInfo(NodeInfo):
    """A NodeInfo as it would be with some pods removed from the node and others added (a what-if view
    for preemption dry runs); the table itself is not touched."""

    __slots__ = ("_added", "_deltas", "_nz_cpu", "_nz_mem", "_pods", "_ports", "_removed")

    def __init__(
        self, table: NodeTable, index: int, removed: Sequence[PodInfo], added: Sequence[PodInfo] = ()
    ) -> None:
        super().__init__(table, index)
        deltas: dict[str, int] = {}
        nz_cpu = nz_mem = 0
        for sign, group in ((-1, removed), (1, added)):
            for p in group:
                for r, v in p.requests.items():
                    deltas[r] = deltas.get(r, 0) + sign * v
                nz_cpu += sign * p.nonzero_cpu
                nz_mem += sign * p.nonzero_memory
        self._deltas = deltas
        self._nz_cpu = nz_cpu
        self._nz_mem = nz_mem
        self._pods = len(added) - len(removed)
        self._removed = removed
        self._added = added
        self._ports: dict[Port, int] | None = None

    def requested(self, resource: str) -> int:
        """Requested amount of ``resource`` in this what-if view."""
        return super().requested(resource) + self._deltas.get(resource, 0)

    @property
    def pod_count(self) -> int:
        """Pods counted on the node in this what-if view."""
        return int(self.table.pod_count[self.index]) + self._pods

    @property
    def nonzero_cpu(self) -> int:
        """Non-zero requested milli-cpu in this what-if view."""
        return int(self.table.nonzero_cpu[self.index]) + self._nz_cpu

    @property
    def nonzero_memory(self) -> int:
        """Non-zero requested memory in this what-if view."""
        return int(self.table.nonzero_memory[self.index]) + self._nz_mem

    @property
    def used_ports(self) -> Mapping[Port, int]:
        """Host ports in use in this what-if view."""
        if self._ports is None:
            ports = dict(self.table.ports[self.index])
            for sign, group in ((-1, self._removed), (1, self._added)):
                for p in group:
                    for port in p.host_ports:
                        left = ports.get(port, 0) + sign
                        if left > 0:
                            ports[port] = left
                        else:
                            ports.pop(port, None)
            self._ports = ports
        return self._ports

    @property
    def pods(self) -> Mapping[str, PodInfo]:
        """Pods counted on the node in this what-if view."""
        out = {uid: p for uid, p in self.table.pods[self.index].items()}
        for p in self._removed:
            out.pop(p.uid, None)
        for p in self._added:
            out[p.uid] = p
        return out
