"""The initial objects of a simulation: created before anything runs, through the API server's admission.

The initial objects (the plain objects read beside Scenarios) are the cluster at time 0. An object among them
that kube-apiserver would refuse (its admission, e.g. a pod naming a PriorityClass no input defines, its
validation, or an object of the same name already there) is an error in the input, not an event of the run:
every refusal is reported, in read order, with ``kubectl apply``'s words, and the caller runs nothing.
Objects created by Scenario steps are requests made while the cluster runs; their refusals are the run's
business (it reports them and goes on, as ``kubectl apply`` would).
"""

from __future__ import annotations

from berth.api.errors import StatusError
from berth.sim.scenario import Plan
from berth.store import MemoryStore

__all__ = ["create_initial_objects", "refusal_line"]

ADMITTED_AS_VALIDATED = frozenset({("v1", "Pod"), ("v1", "Node")})
"""(apiVersion, kind) of the objects whose admission (``berth.controlplane.install_admission``) only fills in
values their validation accepts: a pod's scheduling defaults and its priority, preemptionPolicy and
priorityClassName from a PriorityClass (validated when it was created); nothing for a node. Such an object,
validated when its manifest was loaded, is not validated again by the store (the bulk of a large cluster's
initial objects: pods were validated twice)."""


def refusal_line(source: str, error: StatusError) -> str:
    """``kubectl apply``'s report of a refused create of the object read from ``source``."""
    return f'Error from server ({error.reason}): error when creating "{source}": {error.message}'


def create_initial_objects(
    store: MemoryStore, plan: Plan, *, hand_over: bool = False
) -> tuple[list[str], Plan]:
    """Create ``plan``'s initial objects in ``store`` now, in read order, as the API server admits them.

    Returns the refusals (one line per refused object, all of them; empty when every object was created) and
    the plan left to run: the same steps without the initial one, which is done. Objects keep their given
    identity (uid, creationTimestamp), as when the run creates them. The initial objects are those of loaded
    manifests (`berth.api.manifest.load_manifests`), validated already: of the kinds in
    `ADMITTED_AS_VALIDATED`, the store does not validate them again.

    `hand_over`: the caller does not use the plan's initial objects after (a run reading its manifests once):
    when they share nothing (``Step.unshared``) the store keeps them instead of private copies.
    """
    step = plan.initial
    if step is None:
        return [], plan
    refused: list[str] = []
    owned = hand_over and step.unshared
    for obj, source in zip(step.create, step.sources, strict=True):
        try:
            validated = (obj.get("apiVersion"), obj.get("kind")) in ADMITTED_AS_VALIDATED
            store.create(obj, keep_identity=True, validated=validated, owned=owned)
        except StatusError as e:
            refused.append(refusal_line(source, e))
    return refused, Plan(plan.steps[1:], plan.until)
