"""v1 ``Service`` validation: the parts kube's ``ValidateService`` checks that matter to Berth (type, ports,
selector). Berth gives Services no addresses; their selectors feed PodTopologySpread's default constraints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.api.checks import Context, dns_label_cached

__all__ = ["default_service", "validate_service"]

_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
_PROTOCOLS = ("SCTP", "TCP", "UDP")


def _port_number(path: str, value: object, ctx: Context) -> None:
    if type(value) is not int:
        ctx.invalid(path, value, "must be an integer")
    if not 1 <= value <= 65535:
        ctx.invalid(path, value, "must be between 1 and 65535, inclusive")


def validate_service(obj: Mapping[str, Any], ctx: Context) -> None:
    """Validate a Service; raises through `ctx` on the first problem."""
    spec = ctx.mapping("spec", obj.get("spec"))
    kind = spec.get("type") or "ClusterIP"
    if kind not in _TYPES:
        ctx.not_supported("spec.type", kind, _TYPES)
    ports = ctx.sequence("spec.ports", spec.get("ports"))
    headless = spec.get("clusterIP") == "None"
    if not ports and kind != "ExternalName" and not headless:
        ctx.required("spec.ports")
    names: set[str] = set()
    for i, raw in enumerate(ports):
        path = f"spec.ports[{i}]"
        port = ctx.mapping(path, raw)
        name = ctx.string(f"{path}.name", port.get("name"))
        if len(ports) > 1 and not name:
            ctx.required(f"{path}.name")
        if name:
            errs = dns_label_cached(name)
            if errs:
                ctx.invalid(f"{path}.name", name, errs[0])
            if name in names:
                ctx.duplicate(f"{path}.name", name)
            names.add(name)
        if port.get("port") is None:
            ctx.required(f"{path}.port")
        _port_number(f"{path}.port", port.get("port"), ctx)
        protocol = port.get("protocol") or "TCP"
        if protocol not in _PROTOCOLS:
            ctx.not_supported(f"{path}.protocol", protocol, _PROTOCOLS)
        target = port.get("targetPort")
        if isinstance(target, int) and not isinstance(target, bool):
            _port_number(f"{path}.targetPort", target, ctx)
        node_port = port.get("nodePort")
        if node_port is not None and node_port != 0:
            _port_number(f"{path}.nodePort", node_port, ctx)
    selector = spec.get("selector")
    if selector is not None:
        ctx.label_map("spec.selector", selector)


def default_service(obj: dict[str, Any]) -> None:
    """v1 SetDefaults_Service (in place; no addresses are allocated): type ClusterIP, sessionAffinity None (a
    ClientIP affinity's timeout 10800 s), each port's protocol TCP and targetPort its port,
    internalTrafficPolicy Cluster (not for ExternalName), externalTrafficPolicy Cluster for NodePort and
    LoadBalancer."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    kind = spec.get("type") or "ClusterIP"
    spec["type"] = kind
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "ClientIP":
        config = spec.get("sessionAffinityConfig")
        if not isinstance(config, dict):
            config = spec["sessionAffinityConfig"] = {}
        client_ip = config.get("clientIP")
        if not isinstance(client_ip, dict):
            client_ip = config["clientIP"] = {}
        client_ip.setdefault("timeoutSeconds", 10800)
    for port in spec.get("ports") or ():
        if not isinstance(port, dict):
            continue
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        if port.get("targetPort") in (None, 0, "") and isinstance(port.get("port"), int):
            port["targetPort"] = port["port"]
    if kind != "ExternalName" and not spec.get("internalTrafficPolicy"):
        spec["internalTrafficPolicy"] = "Cluster"
    if kind in ("NodePort", "LoadBalancer") and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
