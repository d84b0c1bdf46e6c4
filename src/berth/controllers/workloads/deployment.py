"""The Deployment controller: ReplicaSets per pod template, rolling or recreate rollouts, status.

As kube-controller-manager's: the new ReplicaSet is ``<deployment>-<pod-template-hash>``; a scaling event
(desired-replicas annotation differs) scales proportionally; RollingUpdate scales the new ReplicaSet up
within maxSurge and old ones down within maxUnavailable; Recreate scales old ones to 0 and waits for their
pods to go before creating the new one; old ReplicaSets beyond revisionHistoryLimit are deleted. Status
carries the replica sums and the Available/Progressing conditions with kube's reasons and messages.
Events: ``ScalingReplicaSet`` ("Scaled up replica set x from 0 to 3", "Scaled down replica set ...").
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from berth.api.conditions import find_condition
from berth.api.errors import AlreadyExists, NotFound, StatusError
from berth.api.labels import LabelSelectorError, Selector, compile_label_selector
from berth.controllers.workloads import rollout as ro
from berth.controllers.workloads.common import (
    DEPLOYMENT_KEY,
    DESIRED_REPLICAS,
    HASH_LABEL,
    REVISION,
    RS_KEY,
    controller_of,
    controller_ref,
    int_field,
    parse_time,
    set_controller,
)
from berth.controllers.workloads.hashing import compute_hash
from berth.controllers.workloads.syncbase import SyncController
from berth.store import copy_object

__all__ = ["DeploymentController"]

Obj = Mapping[str, Any]

_MAX_INT32 = (1 << 31) - 1
_STATUS_FIELDS = (
    "observedGeneration",
    "replicas",
    "updatedReplicas",
    "readyReplicas",
    "availableReplicas",
    "unavailableReplicas",
)


class _Retry(Exception):
    """The sync could not finish; try again after the rate limiter's delay."""


class DeploymentController(SyncController):
    """Reconciles Deployments against their ReplicaSets."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        """See SyncController."""
        super().__init__(*args, **kw)
        self.d: Obj = {}

    # ----- entry ------------------------------------------------------------------------------
    def sync(self, namespace: str, name: str) -> None:
        """Run one sync of a Deployment (syncDeployment)."""
        try:
            self.d = self.store.get(DEPLOYMENT_KEY, namespace, name)
        except NotFound:
            self._forget(namespace, name)
            return
        try:
            self._sync()
        except (StatusError, _Retry):
            self._retry_later(namespace, name)
            return
        finally:
            self.d = {}
        self._forget(namespace, name)

    def _sync(self) -> None:
        d = self.d
        spec = d.get("spec") or {}
        sel = spec.get("selector") or {}
        if not sel.get("matchLabels") and not sel.get("matchExpressions"):
            self.recorder.event(
                d,
                "Warning",
                "SelectingAll",
                "This deployment is selecting all pods. A non-empty selector is required.",
            )
            status = dict(d.get("status") or {})
            if int(status.get("observedGeneration") or 0) < int(d["metadata"].get("generation") or 0):
                status["observedGeneration"] = d["metadata"]["generation"]
                self._write_status(status)
            return
        try:
            selector = compile_label_selector(sel)
        except LabelSelectorError:
            return
        rs_list = self._claim_replica_sets(selector)
        if d["metadata"].get("deletionTimestamp"):
            new_rs, old = self._get_all(rs_list, create=False)
            self._sync_status(old, new_rs)
            return
        self._check_paused_conditions()
        if spec.get("paused"):
            self._sync_scaling(rs_list)
            return
        if self._is_scaling_event(rs_list):
            self._sync_scaling(rs_list)
            return
        if ro.is_rolling(self.d):
            self._rollout_rolling(rs_list)
        else:
            self._rollout_recreate(rs_list)

    # ----- ownership --------------------------------------------------------------------------
    def _claim_replica_sets(self, selector: Selector) -> list[Obj]:
        """ClaimReplicaSets: owned+matching kept, owned+not matching released, matching orphans adopted."""
        d = self.d
        uid = d["metadata"]["uid"]
        deleting = bool(d["metadata"].get("deletionTimestamp"))
        items, _ = self.store.list(RS_KEY, d["metadata"].get("namespace", ""))
        out: list[Obj] = []
        for rs in items:
            ref = controller_of(rs)
            matches = selector.matches(rs["metadata"].get("labels") or {})
            if ref is not None and ref.get("uid") == uid:
                if matches:
                    out.append(rs)
                elif not deleting:
                    set_controller(self.store, rs, uid, None, RS_KEY)
            elif ref is None and matches and not deleting:
                adopted = set_controller(self.store, rs, uid, controller_ref(d), RS_KEY)
                if adopted is not None:
                    out.append(adopted)
        return out

    # ----- finding / creating the new ReplicaSet ----------------------------------------------
    def _get_all(self, rs_list: list[Obj], *, create: bool) -> tuple[Obj | None, list[Obj]]:
        """getAllReplicaSetsAndSyncRevision: (new ReplicaSet or None, every old ReplicaSet)."""
        template = (self.d.get("spec") or {}).get("template") or {}
        existing = next(
            (
                rs
                for rs in ro.by_creation(rs_list)
                if ro.equal_ignore_hash((rs.get("spec") or {}).get("template") or {}, template)
            ),
            None,
        )
        old = [rs for rs in rs_list if rs is not existing]
        new_revision = str(max((ro.revision(rs) for rs in old), default=0) + 1)
        if existing is not None:
            return self._sync_existing_new(existing, new_revision), old
        if not create:
            return None, old
        return self._create_new(old, new_revision), old

    def _sync_existing_new(self, rs: Obj, new_revision: str) -> Obj:
        d = self.d
        copy = copy_object(dict(rs))
        annotations: dict[str, str] = copy["metadata"].setdefault("annotations", {})
        changed = ro.copy_annotations(d, annotations)
        changed = ro.set_revision(annotations, new_revision) or changed
        min_ready = int_field(d.get("spec") or {}, "minReadySeconds", 0)
        if changed or int_field(copy.get("spec") or {}, "minReadySeconds", 0) != min_ready:
            if min_ready:
                copy["spec"]["minReadySeconds"] = min_ready
            else:
                copy["spec"].pop("minReadySeconds", None)
            return self.store.update(copy)
        status = self._status_dict()
        needs = self._set_deployment_revision(new_revision)
        if self._has_progress_deadline() and find_condition(status.get("conditions"), "Progressing") is None:
            self._set_condition(
                status,
                "Progressing",
                "True",
                "FoundNewReplicaSet",
                f'Found new replica set "{rs["metadata"]["name"]}"',
            )
            needs = True
        if needs:
            self._write_status(status)
        return rs

    def _create_new(self, old: list[Obj], new_revision: str) -> Obj:
        d = self.d
        meta = d["metadata"]
        spec = d.get("spec") or {}
        status = self._status_dict()
        collision = status.get("collisionCount")
        template = copy_object(dict(spec.get("template") or {}))
        pod_hash = compute_hash(spec.get("template") or {}, collision)
        tmeta = template.setdefault("metadata", {})
        tmeta["labels"] = {**(tmeta.get("labels") or {}), HASH_LABEL: pod_hash}
        selector = copy_object(dict(spec.get("selector") or {}))
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: pod_hash}
        name = f"{meta['name']}-{pod_hash}"
        rs_spec: dict[str, Any] = {"replicas": 0}
        min_ready = int_field(spec, "minReadySeconds", 0)
        if min_ready:
            rs_spec["minReadySeconds"] = min_ready
        rs_spec["selector"] = selector
        rs_spec["template"] = template
        annotations: dict[str, str] = {}
        new_rs: dict[str, Any] = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": name,
                "namespace": meta.get("namespace", "default"),
                "labels": dict(tmeta["labels"]),
                "annotations": annotations,
                "ownerReferences": [controller_ref(d)],
            },
            "spec": rs_spec,
        }
        count = self._new_rs_new_replicas([*old, new_rs], new_rs)
        rs_spec["replicas"] = count
        ro.copy_annotations(d, annotations)
        ro.set_revision(annotations, new_revision)
        ro.set_replicas_annotations(annotations, ro.replicas(d), ro.replicas(d) + ro.max_surge(d))
        new_rs["metadata"]["annotations"] = dict(sorted(annotations.items()))
        already = False
        try:
            created = self.store.create(new_rs)
        except AlreadyExists:
            created = self.store.get(RS_KEY, meta.get("namespace", ""), name)
            ref = controller_of(created)
            tmpl = (created.get("spec") or {}).get("template") or {}
            if (
                ref is None
                or ref.get("uid") != meta["uid"]
                or not ro.equal_ignore_hash(spec.get("template") or {}, tmpl)
            ):
                status["collisionCount"] = int(collision or 0) + 1
                self._write_status(status)
                raise _Retry from None
            already = True
        except StatusError as e:
            msg = f'Failed to create new replica set "{name}": {e}'
            if self._has_progress_deadline():
                self._set_condition(status, "Progressing", "False", "ReplicaSetCreateError", msg)
                with contextlib.suppress(StatusError):
                    self._write_status(status)
            self.recorder.event(d, "Warning", "ReplicaSetCreateError", msg)
            raise
        if not already and count > 0:
            self.recorder.event(
                d, "Normal", "ScalingReplicaSet", f"Scaled up replica set {name} from 0 to {count}"
            )
        needs = self._set_deployment_revision(new_revision)
        if not already and self._has_progress_deadline():
            self._set_condition(
                status, "Progressing", "True", "NewReplicaSetCreated", f'Created new replica set "{name}"'
            )
            needs = True
        if needs:
            self._write_status(status)
        return created

    def _new_rs_new_replicas(self, all_rss: list[Obj], new_rs: Obj) -> int:
        """deploymentutil.NewRSNewReplicas."""
        d = self.d
        if not ro.is_rolling(d):
            return ro.replicas(d)
        current = ro.spec_sum(all_rss)
        max_total = ro.replicas(d) + ro.max_surge(d)
        if current >= max_total:
            return ro.replicas(new_rs)
        up = min(max_total - current, ro.replicas(d) - ro.replicas(new_rs))
        return ro.replicas(new_rs) + up

    # ----- scaling ------------------------------------------------------------------------------
    def _scale_rs(self, rs: Obj, new_scale: int, operation: str | None = None) -> tuple[bool, Obj]:
        """scaleReplicaSet(AndRecordEvent): set replicas and the replica annotations; event when resized."""
        d = self.d
        old_scale = ro.replicas(rs)
        desired = ro.replicas(d)
        maximum = desired + ro.max_surge(d)
        size_changed = old_scale != new_scale
        annotations = dict(rs["metadata"].get("annotations") or {})
        ann_changed = ro.set_replicas_annotations(annotations, desired, maximum)
        if not size_changed and not ann_changed:
            return False, rs
        copy = copy_object(dict(rs))
        copy["spec"]["replicas"] = new_scale
        copy["metadata"]["annotations"] = annotations
        updated = self.store.update(copy)
        if size_changed:
            op = operation or ("up" if old_scale < new_scale else "down")
            self.recorder.event(
                d,
                "Normal",
                "ScalingReplicaSet",
                f"Scaled {op} replica set {rs['metadata']['name']} from {old_scale} to {new_scale}",
            )
        return size_changed, updated

    def _is_scaling_event(self, rs_list: list[Obj]) -> bool:
        new_rs, old = self._get_all(rs_list, create=False)
        desired = ro.replicas(self.d)
        for rs in ro.active([*old, new_rs]):
            want = ro.annotation_int(rs, DESIRED_REPLICAS)
            if want is not None and want != desired:
                return True
        return False

    def _sync_scaling(self, rs_list: list[Obj]) -> None:
        """sync: scale (proportionally) without rolling out; clean up when paused; status."""
        new_rs, old = self._get_all(rs_list, create=False)
        self._scale(new_rs, old)
        if (self.d.get("spec") or {}).get("paused"):
            self._cleanup(old)
        self._sync_status(old, new_rs)

    def _scale(self, new_rs: Obj | None, old: list[Obj]) -> None:
        d = self.d
        desired = ro.replicas(d)
        target = self._active_or_latest(new_rs, old)
        if target is not None:
            if ro.replicas(target) != desired:
                self._scale_rs(target, desired)
            return
        if self._is_saturated(new_rs):
            for rs in ro.active(old):
                self._scale_rs(rs, 0)
            return
        if not ro.is_rolling(d):
            return
        all_rss = ro.active([*old, new_rs])
        allowed = desired + ro.max_surge(d) if desired > 0 else 0
        to_add = allowed - ro.spec_sum(all_rss)
        operation = ""
        if to_add > 0:
            all_rss = ro.by_size(all_rss, newer_first=True)
            operation = "up"
        elif to_add < 0:
            all_rss = ro.by_size(all_rss, newer_first=False)
            operation = "down"
        added = 0
        sizes: list[int] = []
        for rs in all_rss:
            if to_add != 0:
                share = ro.proportion(rs, d, to_add, added)
                sizes.append(ro.replicas(rs) + share)
                added += share
            else:
                sizes.append(ro.replicas(rs))
        for i, rs in enumerate(all_rss):
            if i == 0 and to_add != 0:
                sizes[0] = max(sizes[0] + to_add - added, 0)
            self._scale_rs(rs, sizes[i], operation or None)

    @staticmethod
    def _active_or_latest(new_rs: Obj | None, old: list[Obj]) -> Obj | None:
        if new_rs is None and not old:
            return None
        newest_first = ro.sort_key_new_first(old)
        act = ro.active([*newest_first, new_rs])
        if not act:
            return new_rs if new_rs is not None else newest_first[0]
        return act[0] if len(act) == 1 else None

    def _is_saturated(self, rs: Obj | None) -> bool:
        if rs is None:
            return False
        desired = ro.replicas(self.d)
        return (
            ro.replicas(rs) == desired
            and ro.annotation_int(rs, DESIRED_REPLICAS) == desired
            and ro.status_count(rs, "availableReplicas") == desired
        )

    # ----- rollouts ---------------------------------------------------------------------------
    def _rollout_rolling(self, rs_list: list[Obj]) -> None:
        new_rs, old = self._get_all(rs_list, create=True)
        assert new_rs is not None
        all_rss = [*old, new_rs]
        if self._reconcile_new(all_rss, new_rs):
            self._sync_rollout_status(all_rss, new_rs)
            return
        if self._reconcile_old(all_rss, ro.active(old), new_rs):
            self._sync_rollout_status(all_rss, new_rs)
            return
        if self._complete(self._status_dict()):
            self._cleanup(old)
        self._sync_rollout_status(all_rss, new_rs)

    def _reconcile_new(self, all_rss: list[Obj], new_rs: Obj) -> bool:
        desired = ro.replicas(self.d)
        if ro.replicas(new_rs) == desired:
            return False
        if ro.replicas(new_rs) > desired:
            return self._scale_rs(new_rs, desired)[0]
        return self._scale_rs(new_rs, self._new_rs_new_replicas(all_rss, new_rs))[0]

    def _reconcile_old(self, all_rss: list[Obj], old: list[Obj], new_rs: Obj) -> bool:
        if ro.spec_sum(old) == 0:
            return False
        min_available = ro.replicas(self.d) - ro.max_unavailable(self.d)
        new_unavailable = ro.replicas(new_rs) - ro.status_count(new_rs, "availableReplicas")
        max_scaled_down = ro.spec_sum(all_rss) - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        old, cleaned = self._cleanup_unhealthy(old, max_scaled_down)
        scaled = self._scale_down_old([*old, new_rs], old, min_available)
        return cleaned + scaled > 0

    def _cleanup_unhealthy(self, old: list[Obj], max_cleanup: int) -> tuple[list[Obj], int]:
        old = ro.by_creation(old)
        total = 0
        for i, rs in enumerate(old):
            if total >= max_cleanup:
                break
            size, available = ro.replicas(rs), ro.status_count(rs, "availableReplicas")
            if size == 0 or size == available:
                continue
            down = min(max_cleanup - total, size - available)
            _, old[i] = self._scale_rs(rs, size - down)
            total += down
        return old, total

    def _scale_down_old(self, all_rss: list[Obj], old: list[Obj], min_available: int) -> int:
        available = ro.status_sum(all_rss, "availableReplicas")
        if available <= min_available:
            return 0
        goal = available - min_available
        total = 0
        for rs in ro.by_creation(old):
            if total >= goal:
                break
            size = ro.replicas(rs)
            if size == 0:
                continue
            down = min(size, goal - total)
            self._scale_rs(rs, size - down)
            total += down
        return total

    def _rollout_recreate(self, rs_list: list[Obj]) -> None:
        new_rs, old = self._get_all(rs_list, create=False)
        all_rss: list[Obj] = [*old, *([new_rs] if new_rs is not None else [])]
        scaled = False
        for rs in ro.active(old):
            scaled = self._scale_rs(rs, 0)[0] or scaled
        if scaled or self._old_pods_running(new_rs, old, rs_list):
            self._sync_rollout_status(all_rss, new_rs)
            return
        if new_rs is None:
            new_rs, old = self._get_all(rs_list, create=True)
            assert new_rs is not None
            all_rss = [*old, new_rs]
        self._scale_rs(new_rs, ro.replicas(self.d))
        if self._complete(self._status_dict()):
            self._cleanup(old)
        self._sync_rollout_status(all_rss, new_rs)

    def _old_pods_running(self, new_rs: Obj | None, old: list[Obj], rs_list: list[Obj]) -> bool:
        if ro.status_sum(old, "replicas") > 0:
            return True
        new_uid = new_rs["metadata"]["uid"] if new_rs is not None else None
        for rs in rs_list:
            if rs["metadata"]["uid"] == new_uid:
                continue
            for pod in self.pods.owned_by(rs["metadata"]["uid"]):
                if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                    return True
        return False

    def _cleanup(self, old: list[Obj]) -> None:
        """cleanupDeployment: delete the oldest fully scaled-down ReplicaSets beyond revisionHistoryLimit."""
        limit = int_field(self.d.get("spec") or {}, "revisionHistoryLimit", 10)
        cleanable = [rs for rs in old if not rs["metadata"].get("deletionTimestamp")]
        diff = len(cleanable) - limit
        if diff <= 0:
            return
        for rs in ro.by_revision(cleanable)[:diff]:
            meta = rs["metadata"]
            observed = ro.status_count(rs, "observedGeneration")
            if (
                ro.status_count(rs, "replicas")
                or ro.replicas(rs)
                or int(meta.get("generation") or 0) > observed
            ):
                continue
            with contextlib.suppress(NotFound):
                self.store.delete(RS_KEY, meta.get("namespace", ""), meta["name"])

    # ----- status -----------------------------------------------------------------------------
    def _status_dict(self) -> dict[str, Any]:
        """A private, full (zeros included) copy of the Deployment's status."""
        old = self.d.get("status") or {}
        status: dict[str, Any] = {f: int(old.get(f) or 0) for f in _STATUS_FIELDS}
        status["conditions"] = [dict(c) for c in old.get("conditions") or ()]
        if old.get("collisionCount") is not None:
            status["collisionCount"] = int(old["collisionCount"])
        return status

    def _calculate_status(self, all_rss: list[Obj], new_rs: Obj | None) -> dict[str, Any]:
        d = self.d
        available = ro.status_sum(all_rss, "availableReplicas")
        status = self._status_dict()
        status.update(
            observedGeneration=int(d["metadata"].get("generation") or 0),
            replicas=ro.status_sum(all_rss, "replicas"),
            updatedReplicas=ro.status_count(new_rs, "replicas"),
            readyReplicas=ro.status_sum(all_rss, "readyReplicas"),
            availableReplicas=available,
            unavailableReplicas=max(ro.spec_sum(all_rss) - available, 0),
        )
        if available >= ro.replicas(d) - ro.max_unavailable(d):
            self._set_condition(
                status,
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
            )
        else:
            self._set_condition(
                status,
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
            )
        return status

    def _sync_status(self, old: list[Obj], new_rs: Obj | None) -> None:
        """syncDeploymentStatus: write the calculated status when it changed."""
        all_rss = [*old, *([new_rs] if new_rs is not None else [])]
        status = self._calculate_status(all_rss, new_rs)
        self._write_status(status)

    def _sync_rollout_status(self, all_rss: list[Obj], new_rs: Obj | None) -> None:
        """syncRolloutStatus: the status plus the Progressing condition (complete/progressing/timed out)."""
        d = self.d
        status = self._calculate_status(all_rss, new_rs)
        has_deadline = self._has_progress_deadline()
        if not has_deadline:
            status["conditions"] = [c for c in status["conditions"] if c.get("type") != "Progressing"]
        current = find_condition(self._status_dict().get("conditions"), "Progressing")
        complete_before = (
            status["replicas"] == status["updatedReplicas"]
            and current is not None
            and current.get("reason") == "NewReplicaSetAvailable"
        )
        rs_name = new_rs["metadata"]["name"] if new_rs is not None else None
        subject = (
            f'ReplicaSet "{rs_name}"' if rs_name is not None else f'Deployment "{d["metadata"]["name"]}"'
        )
        if has_deadline and not complete_before:
            if self._complete(status):
                self._set_condition(
                    status,
                    "Progressing",
                    "True",
                    "NewReplicaSetAvailable",
                    f"{subject} has successfully progressed.",
                )
            elif self._progressing(status):
                cond = self._new_condition(
                    "Progressing", "True", "ReplicaSetUpdated", f"{subject} is progressing."
                )
                if current is not None:
                    if current.get("status") == "True":
                        cond["lastTransitionTime"] = current.get("lastTransitionTime")
                    status["conditions"] = [c for c in status["conditions"] if c.get("type") != "Progressing"]
                status["conditions"].append(cond)
            elif self._timed_out(status):
                self._set_condition(
                    status,
                    "Progressing",
                    "False",
                    "ProgressDeadlineExceeded",
                    f"{subject} has timed out progressing.",
                )
        failure = next(
            (
                c
                for rs in all_rss
                for c in (rs.get("status") or {}).get("conditions") or ()
                if c.get("type") == "ReplicaFailure"
            ),
            None,
        )
        if failure is not None:
            self._set_condition(
                status,
                "ReplicaFailure",
                failure.get("status", ""),
                failure.get("reason", ""),
                failure.get("message", ""),
            )
        else:
            status["conditions"] = [c for c in status["conditions"] if c.get("type") != "ReplicaFailure"]
        if _wire(status) == (d.get("status") or {}):
            self._requeue_stuck(status)
            return
        self._write_status(status)

    def _requeue_stuck(self, status: dict[str, Any]) -> None:
        current = find_condition(self._status_dict().get("conditions"), "Progressing")
        if not self._has_progress_deadline() or current is None:
            return
        if self._complete(status) or current.get("reason") == "ProgressDeadlineExceeded":
            return
        updated = parse_time(current.get("lastUpdateTime"))
        if updated is None:
            return
        after = updated + self._deadline() - self._now()
        meta = self.d["metadata"]
        self._requeue(meta.get("namespace", ""), meta["name"], max(after, 0.0) + 1.0)

    def _complete(self, status: Mapping[str, Any]) -> bool:
        """deploymentutil.DeploymentComplete."""
        desired = ro.replicas(self.d)
        return bool(
            status["updatedReplicas"] == desired
            and status["replicas"] == desired
            and status["availableReplicas"] == desired
            and status["observedGeneration"] >= int(self.d["metadata"].get("generation") or 0)
        )

    def _progressing(self, status: Mapping[str, Any]) -> bool:
        """deploymentutil.DeploymentProgressing: some progress since the stored status."""
        old = self._status_dict()
        return bool(
            status["updatedReplicas"] > old["updatedReplicas"]
            or status["replicas"] - status["updatedReplicas"] < old["replicas"] - old["updatedReplicas"]
            or status["readyReplicas"] > old["readyReplicas"]
            or status["availableReplicas"] > old["availableReplicas"]
        )

    def _timed_out(self, status: Mapping[str, Any]) -> bool:
        cond = find_condition(status.get("conditions"), "Progressing")
        if cond is None or cond.get("reason") == "NewReplicaSetAvailable":
            return False
        if cond.get("reason") == "ProgressDeadlineExceeded":
            return True
        updated = parse_time(cond.get("lastUpdateTime"))
        return updated is not None and updated + self._deadline() < self._now()

    def _deadline(self) -> int:
        return int_field(self.d.get("spec") or {}, "progressDeadlineSeconds", 600)

    def _has_progress_deadline(self) -> bool:
        return self._deadline() != _MAX_INT32

    def _check_paused_conditions(self) -> None:
        if not self._has_progress_deadline():
            return
        status = self._status_dict()
        cond = find_condition(status.get("conditions"), "Progressing")
        if cond is not None and cond.get("reason") == "ProgressDeadlineExceeded":
            return
        paused_cond = cond is not None and cond.get("reason") == "DeploymentPaused"
        paused = bool((self.d.get("spec") or {}).get("paused"))
        if paused and not paused_cond:
            self._set_condition(status, "Progressing", "Unknown", "DeploymentPaused", "Deployment is paused")
        elif not paused and paused_cond:
            self._set_condition(
                status, "Progressing", "Unknown", "DeploymentResumed", "Deployment is resumed"
            )
        else:
            return
        self._write_status(status)

    # ----- writes -----------------------------------------------------------------------------
    def _new_condition(self, type_: str, status: str, reason: str, message: str) -> dict[str, Any]:
        now = self.store.timestamp()
        return {
            "type": type_,
            "status": status,
            "lastUpdateTime": now,
            "lastTransitionTime": now,
            "reason": reason,
            "message": message,
        }

    def _set_condition(
        self, status: dict[str, Any], type_: str, value: str, reason: str, message: str
    ) -> None:
        """deploymentutil.SetDeploymentCondition: replace unless status and reason are unchanged."""
        current = find_condition(status.get("conditions"), type_)
        if current is not None and current.get("status") == value and current.get("reason") == reason:
            return
        cond = self._new_condition(type_, value, reason, message)
        if current is not None and current.get("status") == value:
            cond["lastTransitionTime"] = current.get("lastTransitionTime")
        status["conditions"] = [c for c in status["conditions"] if c.get("type") != type_] + [cond]

    def _set_deployment_revision(self, new_revision: str) -> bool:
        annotations = self.d["metadata"].get("annotations") or {}
        if annotations.get(REVISION) == new_revision:
            return False
        copy = copy_object(dict(self.d))
        copy["metadata"]["annotations"] = {**annotations, REVISION: new_revision}
        self.d = self.store.update(copy)
        return True

    def _write_status(self, status: Mapping[str, Any]) -> None:
        wire = _wire(status)
        if wire == (self.d.get("status") or {}):
            return
        self.d = self.store.update_status({**self.d, "status": wire})


def _wire(status: Mapping[str, Any]) -> dict[str, Any]:
    """The status as the API serves it: omitempty drops zero counts and empty conditions."""
    out: dict[str, Any] = {}
    for f in _STATUS_FIELDS:
        if status.get(f):
            out[f] = status[f]
    if status.get("conditions"):
        out["conditions"] = list(status["conditions"])
    if status.get("collisionCount") is not None:
        out["collisionCount"] = status["collisionCount"]
    return out
