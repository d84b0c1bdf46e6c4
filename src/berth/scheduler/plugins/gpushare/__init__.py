"""GPU sharing (Alibaba's open-gpu-share model, as the FGD paper's simulator): per-device accounting of
fractional GPUs, the Open-Gpu-Share Filter/Reserve/PreBind plugin and the paper's placement policies as Score
plugins."""

from __future__ import annotations

from berth.scheduler.plugins.gpushare.plugin import GPU_INDEX, NAME, SCORE_PLUGINS, register

__all__ = ["GPU_INDEX", "NAME", "SCORE_PLUGINS", "register"]
