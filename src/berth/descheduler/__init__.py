"""The descheduler: components that move pods by evicting them (node drain, cordon and uncordon, ...)."""

from berth.descheduler.drain import Drain, DrainError, DrainResult, cordon, drain, set_unschedulable, uncordon

__all__ = ["Drain", "DrainError", "DrainResult", "cordon", "drain", "set_unschedulable", "uncordon"]
