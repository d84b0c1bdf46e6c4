"""Scheduler extenders: kube-scheduler's HTTP extenders (filter, prioritize, preempt and bind verbs).

An extender is an HTTP service the scheduler POSTs JSON to, at ``urlPrefix/verb``. The wire types are
those of ``k8s.io/kube-scheduler/extender/v1`` (its Go structs carry no JSON tags, so the keys are the
Go field names: ``Pod``, ``Nodes``, ``NodeNames``, ``FailedNodes``, ``Host``, ``Score`` ...); answers are
read with Go's case-insensitive key matching, so extenders written against either spelling work.

The semantics are kube's (``pkg/scheduler/extender.go`` and ``schedule_one.go``):

* an extender is consulted for a pod only if it manages one of the resources the pod's containers or
  init containers request or limit, or manages none;
* filter runs after the framework's Filter plugins, extender after extender, each on the nodes the
  previous one kept; the nodes it fails get its message as their reason (``FailedAndUnresolvableNodes``
  take precedence and cannot be helped by preemption);
* prioritize adds ``score * weight * MaxNodeScore / MaxExtenderPriority`` to each node's total; its
  errors are ignored (kube logs them);
* the first interested extender with a bind verb binds the pod instead of the Bind plugins;
* a preempt verb narrows the preemption candidates and their victims;
* an error from an ``ignorable`` extender skips that extender; from any other, it fails the attempt.
  Ignorable extenders are called after the others, as kube orders them.

Calls are synchronous (httpx) with the extender's ``httpTimeout``, in every mode.
"""

from __future__ import annotations

import logging
import os
import ssl
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import httpx
import msgspec
import numpy as np

from berth.scheduler.framework.config import ConfigError
from berth.scheduler.framework.extender_config import ExtenderConfig, ExtenderTLSConfig
from berth.scheduler.framework.nodetable import IntArray, NodeTable
from berth.scheduler.framework.plugin import MAX_NODE_SCORE
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.status import SUCCESS, Code, PluginError, Status

__all__ = [
    "EXTENDER_NAME",
    "MAX_EXTENDER_PRIORITY",
    "ExtenderError",
    "Extenders",
    "HTTPExtender",
    "MetaVictims",
]

log = logging.getLogger(__name__)

MIN_EXTENDER_PRIORITY = 0
MAX_EXTENDER_PRIORITY = 10  # extenderv1.MaxExtenderPriority
# kube's framework.ExtenderName: the "plugin" named among a pod's unschedulable plugins when extenders
# filtered nodes out (such a pod is retried on any cluster event)
EXTENDER_NAME = "Extender"

# node name -> (victim pods, number of PodDisruptionBudget violations)
MetaVictims = dict[str, tuple[list[PodInfo], int]]


class ExtenderError(Exception):
    """A failed extender call (transport error, non-200 answer, an ``Error`` in the answer, bad JSON)."""


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return dict(obj)
    raise NotImplementedError(f"cannot encode {type(obj).__name__}")


_encoder = msgspec.json.Encoder(enc_hook=_enc_hook)


def _get(doc: Any, key: str) -> Any:
    """``doc[key]`` matched as Go's encoding/json matches keys: exactly, else case-insensitively."""
    if not isinstance(doc, Mapping):
        return None
    if key in doc:
        return doc[key]
    low = key.lower()
    for k, v in doc.items():
        if isinstance(k, str) and k.lower() == low:
            return v
    return None


def _string_map(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ExtenderError(f"json: cannot unmarshal {what}: want an object of strings")
    return dict(value)


def _string_list(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ExtenderError(f"json: cannot unmarshal {what}: want a list of strings")
    return list(value)


def _int(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ExtenderError(f"json: cannot unmarshal {json_repr(value)} into {what} of type int64")
    return value


def json_repr(value: Any) -> str:
    """A value as JSON text (for error messages)."""
    return _encoder.encode(value).decode()


@contextmanager
def _pem_files(*blobs: bytes) -> Iterator[list[str]]:
    """Write PEM blobs to private temporary files (ssl loads client certificates from files only)."""
    paths: list[str] = []
    try:
        for blob in blobs:
            fd, path = tempfile.mkstemp(suffix=".pem")
            paths.append(path)
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
        yield paths
    finally:
        for path in paths:
            os.unlink(path)


def ssl_context(enable_https: bool, tls: ExtenderTLSConfig | None) -> ssl.SSLContext | bool:
    """The TLS verification httpx should use, as kube's makeTransport: with ``enableHTTPS`` and no CA the
    server certificate is not verified; client certificates and CAs come from files or inline data."""
    if tls is None and not enable_https:
        return True
    tls = tls or ExtenderTLSConfig()
    has_ca = bool(tls.ca_file or tls.ca_data)
    ctx = ssl.create_default_context(
        cafile=tls.ca_file or None, cadata=tls.ca_data.decode() if tls.ca_data else None
    )
    if tls.insecure or (enable_https and not has_ca):
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if tls.cert_file or tls.key_file:
        ctx.load_cert_chain(tls.cert_file, tls.key_file or None)
    elif tls.cert_data or tls.key_data:
        with _pem_files(tls.cert_data, tls.key_data) as (cert, key):
            ctx.load_cert_chain(cert, key)
    return ctx


class HTTPExtender:
    """One configured extender and its HTTP client (kube's HTTPExtender)."""

    def __init__(self, config: ExtenderConfig, *, transport: httpx.BaseTransport | None = None) -> None:
        self.config = config
        self.name = config.url_prefix
        self.filter_verb = config.filter_verb
        self.prioritize_verb = config.prioritize_verb
        self.preempt_verb = config.preempt_verb
        self.bind_verb = config.bind_verb
        self.weight = config.weight
        self.ignorable = config.ignorable
        self.node_cache_capable = config.node_cache_capable
        self.managed = frozenset(r.name for r in config.managed_resources)
        self._base = config.url_prefix.rstrip("/")
        tls = config.tls_config
        self._extensions = {"sni_hostname": tls.server_name} if tls is not None and tls.server_name else {}
        try:
            verify = ssl_context(config.enable_https, tls)
        except (OSError, ssl.SSLError) as e:
            raise ConfigError(f'extender "{self.name}": tlsConfig: {e}') from None
        self._client = httpx.Client(verify=verify, timeout=config.http_timeout, transport=transport)

    def __repr__(self) -> str:
        return f"HTTPExtender({self.name})"

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()

    # ----- interest ------------------------------------------------------------------------------
    def is_interested(self, pod: Mapping[str, Any]) -> bool:
        """kube's IsInterested: the extender manages no resources, or one the pod's containers or init
        containers request or limit."""
        if not self.managed:
            return True
        spec = pod.get("spec") or {}
        for key in ("containers", "initContainers"):
            for c in spec.get(key) or ():
                res = c.get("resources") or {}
                for part in ("requests", "limits"):
                    if not self.managed.isdisjoint(res.get(part) or ()):
                        return True
        return False

    # ----- the wire ------------------------------------------------------------------------------
    def send(self, verb: str, args: Mapping[str, Any]) -> Any:
        """POST ``args`` as JSON to ``urlPrefix/verb``; the decoded answer (kube's send)."""
        url = self._base + "/" + verb
        try:
            resp = self._client.post(
                url,
                content=_encoder.encode(args),
                headers={"Content-Type": "application/json"},
                extensions=self._extensions,
            )
        except httpx.TimeoutException:
            raise ExtenderError(
                f'Post "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
            ) from None
        except httpx.HTTPError as e:
            raise ExtenderError(f'Post "{url}": {e}') from None
        if resp.status_code != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {resp.status_code}")
        try:
            return msgspec.json.decode(resp.content)
        except msgspec.DecodeError as e:
            raise ExtenderError(f"invalid answer to {verb} from extender at URL {url}: {e}") from None

    def _node_args(
        self, pod: Mapping[str, Any], names: Sequence[str], nodes: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        """ExtenderArgs: node names to a node-cache-capable extender, else the whole Node objects."""
        if self.node_cache_capable:
            return {"Pod": pod, "Nodes": None, "NodeNames": list(names)}
        return {"Pod": pod, "Nodes": {"metadata": {}, "items": list(nodes)}, "NodeNames": None}

    # ----- verbs ---------------------------------------------------------------------------------
    def filter(
        self, pod: Mapping[str, Any], names: Sequence[str], nodes: Sequence[Mapping[str, Any]]
    ) -> tuple[list[str], dict[str, str], dict[str, str]]:
        """(the nodes kept, FailedNodes, FailedAndUnresolvableNodes) for ``pod`` among ``names`` (whose
        objects are ``nodes``; only needed when the extender is not node-cache-capable)."""
        if not self.filter_verb:
            return list(names), {}, {}
        result = self.send(self.filter_verb, self._node_args(pod, names, nodes))
        err = _get(result, "Error")
        if err:
            raise ExtenderError(str(err))
        known = set(names)
        kept: list[str]
        node_names = _get(result, "NodeNames")
        node_list = _get(result, "Nodes")
        if self.node_cache_capable and node_names is not None:
            kept = _string_list(node_names, "ExtenderFilterResult.NodeNames")
        elif node_list is not None:
            items = _get(node_list, "Items") or []
            if not isinstance(items, list):
                raise ExtenderError("json: cannot unmarshal ExtenderFilterResult.Nodes.items: want a list")
            kept = [str(_get(_get(n, "metadata"), "name") or "") for n in items]
        else:
            kept = []
        for n in kept:
            if n not in known:
                raise ExtenderError(
                    f"extender {json_repr(self.name)} claims a filtered node {json_repr(n)} which is not "
                    "found in the input node list"
                )
        failed = _string_map(_get(result, "FailedNodes"), "ExtenderFilterResult.FailedNodes")
        unresolvable = _string_map(
            _get(result, "FailedAndUnresolvableNodes"), "ExtenderFilterResult.FailedAndUnresolvableNodes"
        )
        return list(dict.fromkeys(kept)), failed, unresolvable

    def prioritize(
        self, pod: Mapping[str, Any], names: Sequence[str], nodes: Sequence[Mapping[str, Any]]
    ) -> list[tuple[str, int]]:
        """The HostPriorityList for ``pod`` over ``names``: (host, score) pairs."""
        if not self.prioritize_verb:
            return [(n, 0) for n in names]
        result = self.send(self.prioritize_verb, self._node_args(pod, names, nodes))
        if result is None:
            return []
        if not isinstance(result, list):
            raise ExtenderError("json: cannot unmarshal object into Go value of type v1.HostPriorityList")
        out: list[tuple[str, int]] = []
        for hp in result:
            host = _get(hp, "Host")
            if not isinstance(host, str):
                raise ExtenderError("json: cannot unmarshal HostPriority.Host: want a string")
            out.append((host, _int(_get(hp, "Score") or 0, "Go struct field HostPriority.Score")))
        return out

    def bind(self, pod: PodInfo, node: str) -> None:
        """Ask the extender to bind ``pod`` to ``node`` (ExtenderBindingArgs)."""
        result = self.send(
            self.bind_verb,
            {"PodName": pod.name, "PodNamespace": pod.namespace, "PodUID": pod.uid, "Node": node},
        )
        err = _get(result, "Error")
        if err:
            raise ExtenderError(str(err))

    def process_preemption(self, pod: PodInfo, victims: MetaVictims, table: NodeTable) -> MetaVictims:
        """The candidates (node → victims) the extender keeps of ``victims``, with the victims it chose;
        kube's ProcessPreemption. Victims are sent as pods, or as UIDs to a node-cache-capable
        extender; the answer always names them by UID and they must be pods of that node."""
        key = "NodeNameToMetaVictims" if self.node_cache_capable else "NodeNameToVictims"
        sent: dict[str, Any] = {}
        for node, (pods, pdb) in victims.items():
            listed = [{"UID": p.uid} for p in pods] if self.node_cache_capable else [p.obj for p in pods]
            sent[node] = {"Pods": listed, "NumPDBViolations": pdb}
        args: dict[str, Any] = {"Pod": pod.obj, "NodeNameToVictims": None, "NodeNameToMetaVictims": None}
        args[key] = sent
        result = self.send(self.preempt_verb, args)
        answer = _get(result, "NodeNameToMetaVictims")
        if answer is None:
            return {}
        if not isinstance(answer, Mapping):
            raise ExtenderError("json: cannot unmarshal ExtenderPreemptionResult.NodeNameToMetaVictims")
        out: MetaVictims = {}
        for node, meta in answer.items():
            row = table.index.get(node)
            if row is None:
                raise ExtenderError(f'nodeinfo not found for node name "{node}"')
            on_node = table.pods[row]
            chosen: list[PodInfo] = []
            for mp in _get(meta, "Pods") or ():
                uid = _get(mp, "UID")
                p = on_node.get(uid) if isinstance(uid, str) else None
                if p is None:
                    raise ExtenderError(
                        f"extender: {self.name} claims to preempt pod (UID: &{{{uid}}}) on node: {node}, "
                        "but the pod is not found on that node"
                    )
                chosen.append(p)
            out[node] = (chosen, _int(_get(meta, "NumPDBViolations") or 0, "MetaVictims.NumPDBViolations"))
        return out


class Extenders:
    """The configured extenders in kube's order (ignorable ones after the others) and the scheduling
    cycle's uses of them. Empty (and false) when none are configured: callers then pay nothing."""

    def __init__(
        self,
        configs: Sequence[ExtenderConfig] = (),
        *,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        made = [HTTPExtender(c, transport=transport) for c in configs]
        self.all: tuple[HTTPExtender, ...] = tuple(
            [e for e in made if not e.ignorable] + [e for e in made if e.ignorable]
        )
        self.has_preemption = any(e.preempt_verb for e in self.all)

    def __bool__(self) -> bool:
        return bool(self.all)

    def close(self) -> None:
        """Close every extender's HTTP client."""
        for e in self.all:
            e.close()

    def for_pod(self, pod: PodInfo) -> tuple[HTTPExtender, ...]:
        """The extenders interested in ``pod``, in calling order."""
        obj = pod.obj
        return tuple(e for e in self.all if e.is_interested(obj))

    # ----- filter --------------------------------------------------------------------------------
    def filter(
        self, interested: Sequence[HTTPExtender], pod: PodInfo, table: NodeTable, rows: IntArray
    ) -> tuple[IntArray, dict[int, Status]]:
        """kube's findNodesThatPassExtenders over the feasible ``rows``: (the rows every interested
        extender kept, in row order; the statuses of the rows they failed). An error from an extender that
        is not ignorable raises PluginError (the attempt fails with an Error status)."""
        index = table.index
        names = [table.names[r] for r in rows.tolist()]
        failed: dict[int, Status] = {}
        for ext in interested:
            if not names:
                break
            if not ext.filter_verb:
                continue
            nodes = () if ext.node_cache_capable else [table.nodes[index[n]] for n in names]
            try:
                kept, fails, unresolvable = ext.filter(pod.obj, names, nodes)
            except ExtenderError as e:
                if ext.ignorable:
                    log.info(
                        "Skipping extender as it returned error and has ignorable flag set: %s: %s",
                        ext.name,
                        e,
                    )
                    continue
                raise PluginError(Status(Code.ERROR, (str(e),), EXTENDER_NAME)) from None
            for node, msg in unresolvable.items():
                row = index.get(node)
                if row is not None:
                    failed[row] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,), EXTENDER_NAME)
            for node, msg in fails.items():
                row = index.get(node)
                if row is not None and node not in unresolvable:
                    failed[row] = Status(Code.UNSCHEDULABLE, (msg,), EXTENDER_NAME)
            names = kept
        out = np.fromiter((index[n] for n in names), dtype=np.int64, count=len(names))
        out.sort()
        return out, failed

    # ----- prioritize ----------------------------------------------------------------------------
    def scores(
        self, interested: Sequence[HTTPExtender], pod: PodInfo, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        """The extenders' part of each row's total score (kube's prioritizeNodes): each host's score *
        the extender's weight * MaxNodeScore/MaxExtenderPriority, summed; None when no interested
        extender prioritizes. An extender's error only loses its scores."""
        prioritizers = [e for e in interested if e.prioritize_verb]
        if not prioritizers:
            return None
        row_list = rows.tolist()
        names = [table.names[r] for r in row_list]
        position = {n: k for k, n in enumerate(names)}
        nodes: list[Mapping[str, Any]] | None = None
        total = np.zeros(len(row_list), dtype=np.int64)
        scale = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
        for ext in prioritizers:
            if not ext.node_cache_capable and nodes is None:
                nodes = [table.nodes[r] for r in row_list]
            try:
                listed = ext.prioritize(pod.obj, names, nodes or ())
            except ExtenderError as e:
                log.info(
                    "Failed to run extender's priority function. No score given by this extender: %s: %s",
                    ext.name,
                    e,
                )
                continue
            for host, score in listed:
                k = position.get(host)
                if k is not None:
                    total[k] += score * ext.weight * scale
        return total

    # ----- bind ----------------------------------------------------------------------------------
    def binds(self, pod: PodInfo) -> bool:
        """Whether an extender with a bind verb is interested in ``pod`` (it, not the Bind plugins, binds)."""
        return any(ext.bind_verb and ext.is_interested(pod.obj) for ext in self.all)

    def bind(self, pod: PodInfo, node: str) -> Status | None:
        """kube's extendersBinding: the status of the first interested binder's bind, or None when no
        extender binds this pod (the Bind plugins then do)."""
        for ext in self.all:
            if not ext.bind_verb or not ext.is_interested(pod.obj):
                continue
            try:
                ext.bind(pod, node)
            except ExtenderError as e:
                if ext.ignorable:
                    log.info(
                        "Skipping extender in bind as it returned error and has ignorable flag set: %s: %s",
                        ext.name,
                        e,
                    )
                    continue
                return Status(Code.ERROR, (str(e),), EXTENDER_NAME)
            return SUCCESS
        return None

    # ----- preempt -------------------------------------------------------------------------------
    def process_preemption(self, pod: PodInfo, victims: MetaVictims, table: NodeTable) -> MetaVictims:
        """kube's callExtenders of preemption: each interested extender with a preempt verb in turn
        narrows the candidates (node → victims). An error from an ignorable extender skips it; from
        another it raises PluginError. Candidates left without victims are an error (dropped when the
        extender is ignorable)."""
        if not victims:
            return victims
        for ext in self.all:
            if not ext.preempt_verb or not ext.is_interested(pod.obj):
                continue
            try:
                answer = ext.process_preemption(pod, victims, table)
            except ExtenderError as e:
                if ext.ignorable:
                    log.info(
                        "Skipped extender as it returned error and has ignorable flag set: %s: %s",
                        ext.name,
                        e,
                    )
                    continue
                raise PluginError(Status(Code.ERROR, (str(e),), EXTENDER_NAME)) from None
            for node in list(answer):
                if not answer[node][0]:
                    if ext.ignorable:
                        del answer[node]
                        continue
                    raise PluginError(
                        Status(
                            Code.ERROR, (f'expected at least one victim pod on node "{node}"',), EXTENDER_NAME
                        )
                    )
            victims = answer
            if not victims:
                break
        return victims
