"""The control plane: the scheduler, the controllers and the simulated kubelet around one embedded store,
as the simulator runs them on virtual time and `berth serve` on real time."""

from berth.controlplane.plane import ControlPlane

__all__ = ["ControlPlane"]
