"""Descriptions in the OpenAPI documents (what ``kubectl explain`` prints), in Berth's own words.

Kept short: the kinds, their ``apiVersion``/``kind``/``metadata``/``spec``/``status``, and the first level
of the fields people look up most (ObjectMeta, Pod, Container, Node, Deployment, ReplicaSet). Keys are
`berth.server.protobuf_schema` message names (``core.PodSpec``), or definition names for kube's special
types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = [
    "API_VERSION",
    "DEFINITION_TEXT",
    "FIELD_TEXT",
    "KIND",
    "LIST_METADATA",
    "OBJECT_METADATA",
    "list_items",
    "list_text",
]

API_VERSION: Final = (
    "The versioned schema of this object: GROUP/VERSION, or just VERSION for the core group. The server "
    "converts objects it receives to the versions it stores."
)
KIND: Final = "The type of this object, in CamelCase. It names the schema the server applies to it."
OBJECT_METADATA: Final = (
    "Identity and bookkeeping every object carries: name, namespace, labels, annotations, owners, and the "
    "fields the server sets (uid, resourceVersion, creationTimestamp, ...)."
)
LIST_METADATA: Final = "Information about the list itself: its resourceVersion and the token to continue it."


def list_text(kind: str) -> str:
    """The description of ``<kind>List``."""
    return f"A list of {kind} objects."


def list_items(kind: str) -> str:
    """The description of a List's ``items``."""
    return f"The {kind} objects of the list."


_SPEC = "The desired state, as the user writes it."
_STATUS = "The observed state, written by the system; read-only for users."

DEFINITION_TEXT: Final[Mapping[str, str]] = {
    # kinds
    "core.Pod": (
        "A group of containers that share a node, a network identity and volumes. The scheduler picks its node; "
        "the kubelet runs it there."
    ),
    "core.Node": "A machine that runs pods, with its capacity, taints and health as reported by its kubelet.",
    "core.Namespace": "A named scope for namespaced objects; names are unique within a namespace.",
    "core.Event": "A record of something that happened to an object, such as a failed scheduling attempt.",
    "core.Binding": "Assigns a pod to a node; POSTed to a pod's binding subresource by a scheduler.",
    "scheduling.PriorityClass": (
        "A named pod priority. Pods name it in priorityClassName; higher values are scheduled first and may "
        "preempt lower ones."
    ),
    "policy.PodDisruptionBudget": (
        "Limits how many pods of a set may be down at once through voluntary disruptions such as evictions "
        "and drains."
    ),
    "policy.Eviction": (
        "A request to evict a pod, POSTed to its eviction subresource; refused while a disruption budget "
        "forbids it."
    ),
    "apps.ReplicaSet": "Keeps a number of identical pods, created from its template, running.",
    "apps.Deployment": (
        "Declarative updates for pods: manages ReplicaSets, rolling from one pod template to the next."
    ),
    "coordination.Lease": "A lock held by one holder for a time, used for leader election and heartbeats.",
    "apps.StatefulSet": (
        "Runs pods with stable, ordered identities (<name>-0, <name>-1, ...), created and removed in order."
    ),
    "apps.DaemonSet": "Runs one pod from its template on every node that its pods may run on.",
    "core.Service": (
        "A stable name and address for the pods its selector picks; its selector also spreads them by default."
    ),
    "core.PersistentVolumeClaim": "A request for storage, bound to a PersistentVolume that satisfies it.",
    "batch.Job": "Runs pods from its template until a number of them succeed, retrying failed ones up to a limit.",
    "batch.CronJob": "Creates a Job from its template at each time of a cron schedule.",
    "autoscaling.Scale": "The replica count of a scalable object, read and written through its scale subresource.",
    "meta.Status": "The result of an operation that returns no object, such as an error or a deletion.",
    "meta.DeleteOptions": "Options of a delete: grace period, preconditions, propagation to dependents, dry run.",
    "meta.WatchEvent": "One event of a watch stream: its type and the object it concerns.",
    # specs and statuses
    "core.PodSpec": "What a pod runs and where it may run.",
    "core.PodStatus": "What is known about a pod: its phase, conditions, IPs and containers' states.",
    "core.PodTemplateSpec": "The pods a workload creates: their metadata and spec.",
    "core.Container": "One container of a pod: the image to run, its command, environment, ports and resources.",
    "core.NodeSpec": "How a node is configured for scheduling: taints, unschedulable, pod CIDRs.",
    "core.NodeStatus": "What is known about a node: capacity, allocatable resources, conditions, addresses.",
    "core.NamespaceSpec": "The namespace's finalizers.",
    "core.NamespaceStatus": "The namespace's phase (Active or Terminating) and conditions.",
    "apps.ReplicaSetSpec": "How many pods, which pods belong to the set and the template new pods are made from.",
    "apps.ReplicaSetStatus": "The counts of the set's pods by state, and its conditions.",
    "apps.DeploymentSpec": "How many pods, their template, and how a change of template is rolled out.",
    "apps.DeploymentStatus": "The rollout's progress: counts of pods by state, and conditions.",
    "policy.PodDisruptionBudgetSpec": "Which pods the budget covers and how many of them must stay available.",
    "policy.PodDisruptionBudgetStatus": "How many disruptions the budget allows now, written by its controller.",
    "coordination.LeaseSpec": "Who holds the lease, since when, and for how long.",
    "autoscaling.ScaleSpec": "The desired replica count.",
    "autoscaling.ScaleStatus": "The current replica count and the selector of the pods counted.",
    # common parts
    "meta.ObjectMeta": "Metadata every persisted object has.",
    "meta.ListMeta": "Metadata of a list: resourceVersion and continue token.",
    "meta.LabelSelector": (
        "Selects objects by labels: matchLabels and matchExpressions must all match; an empty selector "
        "matches everything."
    ),
    "core.ResourceRequirements": "Compute resources a container asks for (requests) and may not exceed (limits).",
    # special types
    "io.k8s.apimachinery.pkg.api.resource.Quantity": (
        "An amount of a resource: a number with an optional suffix, binary (Ki, Mi, Gi, ...) or decimal (m, k, "
        "M, G, ...), e.g. 500m, 2, 1.5Gi."
    ),
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "An integer or a string (such as a percentage, 25%).",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": "A timestamp in RFC 3339 form, to the second (UTC).",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": "A timestamp in RFC 3339 form, to the microsecond (UTC).",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1": "A set of fields, in server-side apply's field-set format.",
    "io.k8s.apimachinery.pkg.runtime.RawExtension": "An embedded object of any kind.",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch": "The body of a PATCH request, in the format its content type names.",
}
"""Message (or special definition) → the description of its definition."""

FIELD_TEXT: Final[Mapping[str, Mapping[str, str]]] = {
    "core.Pod": {
        "spec": "The pod's desired state: containers, volumes, scheduling constraints.",
        "status": "The pod's observed state, written by the scheduler and the kubelet.",
    },
    "core.Node": {
        "spec": "The node's configuration for scheduling.",
        "status": "The node's observed state, reported by its kubelet.",
    },
    "core.Namespace": {"spec": _SPEC, "status": _STATUS},
    "apps.ReplicaSet": {
        "spec": "The pods the set should run.",
        "status": "The pods the set runs now, written by its controller.",
    },
    "apps.Deployment": {
        "spec": "The pods the deployment should run and how to roll out changes.",
        "status": "The rollout's observed state, written by the deployment controller.",
    },
    "policy.PodDisruptionBudget": {"spec": _SPEC, "status": _STATUS},
    "coordination.Lease": {"spec": "The lease's holder and timing."},
    "apps.StatefulSet": {
        "spec": "The pods the set should run, their order and their volume claims.",
        "status": "The pods the set runs now, written by its controller.",
    },
    "apps.DaemonSet": {
        "spec": "The pods to run on each eligible node.",
        "status": "How many nodes run the daemon pod, written by its controller.",
    },
    "core.Service": {"spec": _SPEC, "status": _STATUS},
    "core.PersistentVolumeClaim": {"spec": _SPEC, "status": _STATUS},
    "batch.Job": {
        "spec": "The pods the job runs: how many must succeed, how many at once, and when it gives up.",
        "status": "The job's pods by outcome, and its conditions, written by the job controller.",
    },
    "batch.CronJob": {
        "spec": "The schedule, and the template of the Jobs it creates.",
        "status": "The Jobs running now and when the last one was scheduled, written by its controller.",
    },
    "autoscaling.Scale": {"spec": "The desired replica count.", "status": _STATUS},
    "core.Binding": {"target": "The node to bind the pod to (kind Node and its name)."},
    "policy.Eviction": {"deleteOptions": "How the pod is deleted once the eviction is allowed."},
    "scheduling.PriorityClass": {
        "value": "The priority of the pods naming this class; higher is more important.",
        "globalDefault": "Whether pods naming no class get this one; at most one class may set it.",
        "description": "Free text: when to use this class.",
        "preemptionPolicy": "PreemptLowerPriority (the default) or Never: whether these pods may preempt others.",
    },
    "core.Event": {
        "involvedObject": "The object the event is about.",
        "reason": "A short CamelCase reason, such as FailedScheduling.",
        "message": "What happened, for humans.",
        "type": "Normal or Warning.",
        "count": "How many times the event occurred.",
        "firstTimestamp": "When the event was first seen.",
        "lastTimestamp": "When the event was last seen.",
        "source": "The component that reported the event.",
    },
    "meta.ObjectMeta": {
        "name": "The object's name, unique for its kind within its namespace; cannot be changed.",
        "generateName": "A prefix for a name the server completes with random characters, when name is empty.",
        "namespace": "The namespace of a namespaced object; default when not set.",
        "selfLink": "Deprecated; not set.",
        "uid": "A unique id the server assigns at creation; never reused.",
        "resourceVersion": (
            "An opaque version the server changes on every write; sent back on update to detect conflicts."
        ),
        "generation": "A counter of changes to the desired state, set by the server.",
        "creationTimestamp": "When the object was created, set by the server.",
        "deletionTimestamp": "When the object will be deleted; set by the server when deletion is requested.",
        "deletionGracePeriodSeconds": "The grace period of the pending deletion, in seconds.",
        "labels": "Key/value pairs for selecting and grouping objects.",
        "annotations": "Key/value pairs for tools and users; not used for selection.",
        "ownerReferences": "The objects this one depends on; it is garbage-collected when they are gone.",
        "finalizers": "Tasks that must finish (and remove their entry) before the object is deleted.",
        "managedFields": "Which manager owns which fields, for server-side apply; maintained by the server.",
    },
    "core.PodSpec": {
        "volumes": "Volumes the containers can mount.",
        "containers": "The containers of the pod; at least one.",
        "restartPolicy": "When the kubelet restarts exited containers: Always (default), OnFailure or Never.",
        "terminationGracePeriodSeconds": "Seconds given to the containers to stop after a delete; 30 by default.",
        "activeDeadlineSeconds": "Seconds the pod may be active before it is failed.",
        "dnsPolicy": "How the pod's DNS is configured: ClusterFirst (default), Default, None, ...",
        "nodeSelector": "Labels a node must have for the pod to be scheduled on it.",
        "serviceAccountName": "The service account the pod runs as.",
        "serviceAccount": "Deprecated alias of serviceAccountName.",
        "nodeName": "The node the pod runs on. Set by the scheduler; set it yourself to skip scheduling.",
        "hostNetwork": "Use the node's network namespace.",
        "hostPID": "Use the node's process namespace.",
        "hostIPC": "Use the node's IPC namespace.",
        "securityContext": "Security settings for all containers of the pod.",
        "imagePullSecrets": "Secrets holding registry credentials for pulling the images.",
        "hostname": "The pod's hostname; the pod name by default.",
        "subdomain": "The pod's DNS subdomain.",
        "affinity": "Node affinity, pod affinity and pod anti-affinity constraints.",
        "schedulerName": "The scheduler that places the pod; default-scheduler by default.",
        "initContainers": "Containers run one after the other to completion before the containers start.",
        "automountServiceAccountToken": "Whether the service account token is mounted.",
        "tolerations": "The node taints the pod tolerates.",
        "hostAliases": "Extra entries for the pod's /etc/hosts.",
        "priorityClassName": "The PriorityClass giving the pod its priority.",
        "priority": "The pod's priority, filled in from priorityClassName at admission.",
        "dnsConfig": "DNS settings added to those of dnsPolicy.",
        "shareProcessNamespace": "Share one process namespace among the containers.",
        "readinessGates": "Extra conditions that must be True for the pod to be ready.",
        "runtimeClassName": "The RuntimeClass to run the pod with.",
        "enableServiceLinks": "Whether services are exposed to the containers as environment variables.",
        "preemptionPolicy": "PreemptLowerPriority (default) or Never: whether the pod may preempt others.",
        "overhead": "Resources the pod's sandbox uses on top of its containers', counted by the scheduler.",
        "topologySpreadConstraints": "How the pod's group must be spread across zones, nodes or other domains.",
        "ephemeralContainers": "Debugging containers added to a running pod.",
        "setHostnameAsFQDN": "Use the fully qualified domain name as hostname.",
        "os": "The operating system the pod needs.",
        "hostUsers": "Use the node's user namespace (true by default).",
        "schedulingGates": "While any gate is listed, the pod is not scheduled.",
        "resourceClaims": "Dynamic resource claims the containers may use.",
        "resources": "Resources for the whole pod, shared by its containers.",
        "hostnameOverride": "A hostname to use instead of the pod's name.",
        "schedulingGroup": "The pod group the pod is scheduled with.",
        "evictionResponders": "Components that handle the pod's eviction, by priority.",
    },
    "core.PodStatus": {
        "phase": "Pending, Running, Succeeded, Failed or Unknown.",
        "conditions": "PodScheduled, Initialized, ContainersReady, Ready, ... with their status and reason.",
        "message": "Why the pod is in its phase, for humans.",
        "reason": "Why the pod is in its phase, in CamelCase (e.g. Evicted).",
        "hostIP": "The IP of the pod's node.",
        "podIP": "The pod's IP.",
        "startTime": "When the kubelet accepted the pod.",
        "containerStatuses": "The state of each container.",
        "qosClass": "Guaranteed, Burstable or BestEffort, from the containers' requests and limits.",
        "initContainerStatuses": "The state of each init container.",
        "nominatedNodeName": "The node the pod preempted others on and is expected to land on.",
        "podIPs": "The pod's IPs (IPv4 and IPv6).",
        "ephemeralContainerStatuses": "The state of each ephemeral container.",
        "resize": "The state of a requested in-place resize.",
        "resourceClaimStatuses": "The resource claims made for the pod.",
        "hostIPs": "The node's IPs.",
        "observedGeneration": "The pod generation this status reflects.",
        "extendedResourceClaimStatus": "The claim backing extended resources.",
        "allocatedResources": "Resources the node allocated to the pod.",
        "resources": "Resources actually applied to the pod.",
        "nodeAllocatableResourceClaimStatuses": "Claims for node-allocatable resources.",
        "volumeHealth": "Health of the pod's volumes.",
    },
    "core.Container": {
        "name": "The container's name, unique in the pod.",
        "image": "The image to run.",
        "command": "The entrypoint; the image's ENTRYPOINT when not set.",
        "args": "Arguments to the entrypoint; the image's CMD when not set.",
        "workingDir": "The working directory; the image's when not set.",
        "ports": "Ports the container listens on (informative).",
        "env": "Environment variables.",
        "resources": "The compute resources the container requests and is limited to.",
        "volumeMounts": "Volumes of the pod mounted into the container.",
        "livenessProbe": "Restart the container when this check fails.",
        "readinessProbe": "Mark the container unready while this check fails.",
        "lifecycle": "Actions run after start and before stop.",
        "terminationMessagePath": "File whose content becomes the termination message.",
        "imagePullPolicy": "Always, IfNotPresent or Never.",
        "securityContext": "Security settings of the container.",
        "stdin": "Keep a stdin open.",
        "stdinOnce": "Close stdin after the first client detaches.",
        "tty": "Allocate a TTY.",
        "envFrom": "Environment variables taken from ConfigMaps or Secrets.",
        "terminationMessagePolicy": "File (default) or FallbackToLogsOnError.",
        "volumeDevices": "Block devices of the pod exposed to the container.",
        "startupProbe": "Hold the other probes until this check succeeds.",
        "resizePolicy": "How the container is resized in place, per resource.",
        "restartPolicy": "For init containers: Always makes it a sidecar.",
        "restartPolicyRules": "Rules deciding whether an exited container is restarted.",
    },
    "core.NodeSpec": {
        "podCIDR": "The pod IP range of the node.",
        "externalID": "Deprecated.",
        "providerID": "The node's ID at its cloud provider.",
        "unschedulable": "Keep new pods off the node (kubectl cordon sets it).",
        "taints": "Taints that repel pods not tolerating them.",
        "configSource": "Deprecated.",
        "podCIDRs": "The pod IP ranges of the node (IPv4 and IPv6).",
        "podPreemptionPolicy": "How the node's pods may be preempted.",
    },
    "core.NodeStatus": {
        "capacity": "The node's total resources.",
        "allocatable": "The resources available to pods: what the scheduler fits pods into.",
        "phase": "Deprecated.",
        "conditions": "Ready, MemoryPressure, DiskPressure, PIDPressure, ... with their status.",
        "addresses": "The node's hostname and IP addresses.",
        "daemonEndpoints": "Ports of the kubelet.",
        "nodeInfo": "Versions and ids of the node's software.",
        "images": "Images on the node (ImageLocality scores them).",
        "volumesInUse": "Volumes attached and mounted.",
        "volumesAttached": "Volumes attached.",
        "config": "Deprecated.",
        "runtimeHandlers": "The container runtime handlers available.",
        "features": "Features the node supports.",
        "declaredFeatures": "Features the node declares.",
    },
    "apps.DeploymentSpec": {
        "replicas": "How many pods to run; 1 by default.",
        "selector": "The labels of the pods the deployment manages; must match the template's labels.",
        "template": "The pods to create.",
        "strategy": "How to replace old pods with new ones: RollingUpdate (default) or Recreate.",
        "minReadySeconds": "Seconds a new pod must be ready before it counts as available.",
        "revisionHistoryLimit": "How many old ReplicaSets to keep for rollback; 10 by default.",
        "paused": "Stop rolling out changes of the template.",
        "progressDeadlineSeconds": "Seconds without progress before the rollout is reported as failed.",
    },
    "apps.DeploymentStatus": {
        "observedGeneration": "The deployment generation this status reflects.",
        "replicas": "Pods of the deployment, old and new.",
        "updatedReplicas": "Pods from the current template.",
        "availableReplicas": "Pods ready for at least minReadySeconds.",
        "unavailableReplicas": "Pods still missing to reach the desired count.",
        "conditions": "Available, Progressing and ReplicaFailure, with their status.",
        "readyReplicas": "Pods ready.",
        "collisionCount": "Collisions of template hashes, used to name new ReplicaSets.",
        "terminatingReplicas": "Pods being terminated.",
    },
    "apps.ReplicaSetSpec": {
        "replicas": "How many pods to run; 1 by default.",
        "selector": "The labels of the pods the set owns; must match the template's labels.",
        "template": "The pods to create.",
        "minReadySeconds": "Seconds a new pod must be ready before it counts as available.",
    },
    "apps.ReplicaSetStatus": {
        "replicas": "Pods the set has now.",
        "fullyLabeledReplicas": "Pods whose labels match the template's.",
        "observedGeneration": "The set generation this status reflects.",
        "readyReplicas": "Pods ready.",
        "availableReplicas": "Pods ready for at least minReadySeconds.",
        "conditions": "ReplicaFailure, with its status.",
        "terminatingReplicas": "Pods being terminated.",
    },
}
"""Message → json field → the description of that field."""
