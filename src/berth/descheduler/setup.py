"""The descheduler as a command or a simulation sets it up: the built-in plugins, Koordinator's
MigrationController at the ``evict`` extension point, and a policy read from a file.

A profile that enables ``MigrationController`` under ``plugins.evict`` (as koord-descheduler's profiles do)
hands each of its evictions to a PodMigrationJob instead of the eviction API: the job reserves a place for
the pod elsewhere first and evicts only once the Reservation is Available. The pod is refused (skipped) when
the controller would not take it (its Filter: a job already in flight, a pod that may never move, a
workload at its limit).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.api.contracts import Store
from berth.descheduler.args import PolicyError
from berth.descheduler.cycle import MigrateFactory
from berth.descheduler.evictor import Migrate
from berth.descheduler.migration import (
    MigrationArgsError,
    MigrationControllerArgs,
    migration_blocker,
    parse_migration_controller_args,
    request_migration,
)
from berth.descheduler.policy import EVICT, MIGRATION_CONTROLLER, Policy, read_policy_file
from berth.descheduler.registry import builtin_plugins

__all__ = ["migration_args", "migration_factory", "read_policy"]


def _migration_controller_args(raw: Mapping[str, Any] | None, where: str) -> MigrationControllerArgs:
    """MigrationControllerArgs from a pluginConfig entry; errors become PolicyErrors."""
    try:
        return parse_migration_controller_args(raw or {}, where)
    except MigrationArgsError as e:
        raise PolicyError(str(e)) from None


def read_policy(path: str) -> Policy:
    """Load and validate a DeschedulerPolicy file against the built-in plugins; raises PolicyError."""
    return read_policy_file(
        path, builtin_plugins(), extra_args={MIGRATION_CONTROLLER: _migration_controller_args}
    )


def migration_args(policy: Policy) -> MigrationControllerArgs | None:
    """The MigrationControllerArgs of the first profile that migrates (None: no profile does)."""
    for profile in policy.profiles:
        if MIGRATION_CONTROLLER in profile.enabled(EVICT):
            args = profile.args[MIGRATION_CONTROLLER]
            assert isinstance(args, MigrationControllerArgs)
            return args
    return None


def migration_factory(store: Store) -> MigrateFactory:
    """The `Descheduler`'s ``migrate``: each profile's MigrationController creates PodMigrationJobs in `store`."""

    def factory(name: str, args: Any) -> Migrate:
        if name != MIGRATION_CONTROLLER or not isinstance(args, MigrationControllerArgs):
            raise PolicyError(f"{name} is not an evict plugin")

        def migrate(pod: dict[str, Any], plugin: str, reason: str) -> str | None:
            why = migration_blocker(store, pod, args)
            if why is not None:
                return why
            request_migration(store, pod, args=args, reason=reason, now=store.timestamp(), trigger=plugin)
            return None

        return migrate

    return factory
