"""berth.api: Kubernetes objects (plain wire-form dicts) and their rules.

Quantities, taints/tolerations, node selectors/affinity, pod requests, the kind registry,
metadata helpers, well-known keys, validation and manifest loading. Imports nothing else of Berth.
"""

from berth.api.errors import InvalidObjectError, QuantityError
from berth.api.kinds import KindInfo, UnknownKindError, all_kinds, kind_by_plural_or_short, lookup_kind
from berth.api.labels import LabelSelectorError, Selector, compile_label_selector, parse_selector
from berth.api.manifest import Manifest, ManifestError, load_manifests
from berth.api.meta import (
    get_annotations,
    get_labels,
    get_name,
    get_namespace,
    namespaced_name,
    object_key,
)
from berth.api.nodeselector import (
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredTerm,
    RequiredNodeAffinity,
    compile_node_selector,
    compile_preferred_terms,
    preferred_score,
    required_node_affinity,
)
from berth.api.quantity import (
    format_quantity,
    format_resource,
    int_value,
    milli_value,
    nano_value,
    parse_quantity,
    resource_amount,
)
from berth.api.resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    container_ports,
    node_allocatable,
    pod_nonzero_requests,
    pod_requests,
)
from berth.api.taints import (
    Taint,
    Toleration,
    find_untolerated,
    parse_taints,
    parse_tolerations,
    tolerates_all,
)
from berth.api.validation import register_validator, validate_object
from berth.api.wellknown import parse_duration

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "InvalidObjectError",
    "KindInfo",
    "LabelSelectorError",
    "Manifest",
    "ManifestError",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "PreferredTerm",
    "QuantityError",
    "RequiredNodeAffinity",
    "Selector",
    "Taint",
    "Toleration",
    "UnknownKindError",
    "all_kinds",
    "compile_label_selector",
    "compile_node_selector",
    "compile_preferred_terms",
    "container_ports",
    "find_untolerated",
    "format_quantity",
    "format_resource",
    "get_annotations",
    "get_labels",
    "get_name",
    "get_namespace",
    "int_value",
    "kind_by_plural_or_short",
    "load_manifests",
    "lookup_kind",
    "milli_value",
    "namespaced_name",
    "nano_value",
    "node_allocatable",
    "object_key",
    "parse_duration",
    "parse_quantity",
    "parse_selector",
    "parse_taints",
    "parse_tolerations",
    "pod_nonzero_requests",
    "pod_requests",
    "preferred_score",
    "register_validator",
    "required_node_affinity",
    "resource_amount",
    "tolerates_all",
    "validate_object",
]
