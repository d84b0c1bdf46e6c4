"""Reservation-first migration: Koordinator's PodMigrationJob and its MigrationController.

`MigrationController` runs the jobs (reserve the new place, evict, wait for the replacement to bind the
Reservation and be Ready); `request_migration` creates a job for a pod (the descheduler's evictor routes an
eviction through it), `migration_in_flight` and `migration_blocker` say whether it should; the arguments are
`MigrationControllerArgs` (`parse_migration_controller_args` reads Koordinator's wire form).
"""

from berth.descheduler.migration.args import (
    MigrationArgsError,
    MigrationControllerArgs,
    ObjectLimiter,
    PriorityThreshold,
    max_unavailable,
    parse_migration_controller_args,
)
from berth.descheduler.migration.controller import MigrationController
from berth.descheduler.migration.request import (
    migration_blocker,
    migration_in_flight,
    request_migration,
)

__all__ = [
    "MigrationArgsError",
    "MigrationController",
    "MigrationControllerArgs",
    "ObjectLimiter",
    "PriorityThreshold",
    "max_unavailable",
    "migration_blocker",
    "migration_in_flight",
    "parse_migration_controller_args",
    "request_migration",
]
