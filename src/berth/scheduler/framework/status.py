"""Plugin result codes and the Status value every extension point returns."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Code(IntEnum):
    """Result code of a plugin call, as the Scheduling Framework defines them."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6


@dataclass(frozen=True, slots=True)
class Status:
    """The outcome of one plugin call: a code, human-readable reasons and the plugin that produced it."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def message(self) -> str:
        """The reasons joined with ", " (kube's Status.Message)."""
        return ", ".join(self.reasons)

    def is_success(self) -> bool:
        """True for Success (kube also counts a nil status as success)."""
        return self.code == Code.SUCCESS

    def is_rejected(self) -> bool:
        """True for Unschedulable, UnschedulableAndUnresolvable and Pending."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    def is_skip(self) -> bool:
        """True when the plugin asked to be skipped for this pod."""
        return self.code == Code.SKIP

    def with_plugin(self, plugin: str) -> Status:
        """The same status attributed to ``plugin``."""
        if self.plugin == plugin:
            return self
        return Status(self.code, self.reasons, plugin)


SUCCESS = Status()
SKIP = Status(Code.SKIP)


def unschedulable(*reasons: str, plugin: str = "") -> Status:
    """An Unschedulable status (preemption may help)."""
    return Status(Code.UNSCHEDULABLE, reasons, plugin)


def unresolvable(*reasons: str, plugin: str = "") -> Status:
    """An UnschedulableAndUnresolvable status (preemption cannot help)."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons, plugin)


def error(*reasons: str, plugin: str = "") -> Status:
    """An internal Error status."""
    return Status(Code.ERROR, reasons, plugin)


class PluginError(RuntimeError):
    """A plugin returned an Error status; the cycle is aborted and the pod retried with backoff."""

    def __init__(self, status: Status) -> None:
        super().__init__(f"plugin {status.plugin!r} failed: {status.message}")
        self.status = status
