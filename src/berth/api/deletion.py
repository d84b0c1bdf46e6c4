"""Deletion options as kube-apiserver reads them: propagation policies and the garbage collector's finalizers.

A delete names how the object's dependents (objects whose ``metadata.ownerReferences`` point at it) are treated:

* ``Background``: the owner goes at once; the garbage collector then deletes the dependents.
* ``Foreground``: the owner gets the ``foregroundDeletion`` finalizer and a deletionTimestamp and stays until the
  garbage collector has deleted every dependent whose reference to it has ``blockOwnerDeletion: true``.
* ``Orphan``: the owner gets the ``orphan`` finalizer; the garbage collector removes its ownerReferences from
  the dependents, then the finalizer, and the owner goes.

With no policy, a finalizer the object already carries decides, else the kind's default (``Background`` for every
kind Berth serves, as for apps/v1 in kube). The legacy ``orphanDependents`` is ``Orphan`` (true) or
``Background`` (false) and may not be combined with a policy. These rules are apiserver's
``deletionFinalizersForGarbageCollection`` (``shouldOrphanDependents`` / ``shouldDeleteDependents``) and
``ValidateDeleteOptions``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

__all__ = [
    "BACKGROUND",
    "FINALIZER_DELETE_DEPENDENTS",
    "FINALIZER_ORPHAN_DEPENDENTS",
    "FOREGROUND",
    "ORPHAN",
    "PROPAGATION_POLICIES",
    "delete_option_causes",
    "deletion_finalizers",
    "effective_propagation",
]

FOREGROUND = "Foreground"
BACKGROUND = "Background"
ORPHAN = "Orphan"
PROPAGATION_POLICIES = (FOREGROUND, BACKGROUND, ORPHAN)
"""metav1.DeletionPropagation values, in the order kube's validation message lists them."""

FINALIZER_ORPHAN_DEPENDENTS = "orphan"
"""metav1.FinalizerOrphanDependents: the garbage collector orphans the dependents, then removes it."""
FINALIZER_DELETE_DEPENDENTS = "foregroundDeletion"
"""metav1.FinalizerDeleteDependents: the garbage collector deletes the blocking dependents, then removes it."""


def _go_value(value: object) -> str:
    """How kube's field errors print a DeletionPropagation (Go's ``%#v`` of a named string type)."""
    return json.dumps(value if isinstance(value, str) else str(value), ensure_ascii=False)


def delete_option_causes(propagation: object, orphan_dependents: object = None) -> list[tuple[str, str]]:
    """The (field, message) causes ``ValidateDeleteOptions`` reports for these options (dryRun aside): an
    Invalid of kind ``DeleteOptions.meta.k8s.io`` with name ``""`` when not empty."""
    causes: list[tuple[str, str]] = []
    if propagation is None:
        return causes
    shown = _go_value(propagation)
    if orphan_dependents is not None:
        causes.append(
            (
                "propagationPolicy",
                f"Invalid value: {shown}: orphanDependents and deletionPropagation cannot be both set",
            )
        )
    if propagation not in PROPAGATION_POLICIES:
        supported = ", ".join(json.dumps(p) for p in (*PROPAGATION_POLICIES, "nil"))
        causes.append(("propagationPolicy", f"Unsupported value: {shown}: supported values: {supported}"))
    return causes


def effective_propagation(propagation: str | None, orphan_dependents: bool | None) -> str | None:
    """The policy the options mean: the legacy ``orphanDependents`` true is ``Orphan``, false ``Background``
    (neither finalizer), else `propagation` (None: decided by the object's finalizers and its kind)."""
    if orphan_dependents is not None:
        return ORPHAN if orphan_dependents else BACKGROUND
    return propagation


def _first_gc_finalizer(finalizers: Sequence[str]) -> str | None:
    for f in finalizers:
        if f in (FINALIZER_ORPHAN_DEPENDENTS, FINALIZER_DELETE_DEPENDENTS):
            return f
    return None


def deletion_finalizers(
    finalizers: Sequence[str], propagation: str | None, *, default_orphan: bool = False
) -> list[str] | None:
    """The finalizers a delete with `propagation` leaves on an object carrying `finalizers`, or None when they
    stay as they are (the same set).

    Both garbage-collector finalizers are taken off, then ``orphan`` is added for ``Orphan`` and
    ``foregroundDeletion`` for ``Foreground``; with no policy the first of them the object already carries
    stays, else the kind's default (`default_orphan`: kube's OrphanDependents default, which no kind Berth
    serves has).
    """
    if propagation is None:
        first = _first_gc_finalizer(finalizers)
        orphan = first == FINALIZER_ORPHAN_DEPENDENTS or (first is None and default_orphan)
        foreground = first == FINALIZER_DELETE_DEPENDENTS
    else:
        orphan = propagation == ORPHAN
        foreground = propagation == FOREGROUND
    new = [f for f in finalizers if f not in (FINALIZER_ORPHAN_DEPENDENTS, FINALIZER_DELETE_DEPENDENTS)]
    if orphan:
        new.append(FINALIZER_ORPHAN_DEPENDENTS)
    if foreground:
        new.append(FINALIZER_DELETE_DEPENDENTS)
    if set(new) == set(finalizers):
        return None
    return new
