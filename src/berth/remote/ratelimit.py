"""Client-side throttling of API requests: client-go's token bucket (``--kube-api-qps``/``--kube-api-burst``).

The bucket holds up to `burst` tokens and starts full; it refills at `qps` tokens per second; every request
takes one, waiting for it when the bucket is empty (client-go's ``tokenBucketPassiveRateLimiter.Wait``). A
`qps` of zero or less disables throttling. Safe to share between threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["DEFAULT_BURST", "DEFAULT_QPS", "TokenBucket"]

DEFAULT_QPS = 50.0
"""kube-scheduler's ``--kube-api-qps`` (its ``clientConnection.qps``)."""
DEFAULT_BURST = 100
"""kube-scheduler's ``--kube-api-burst`` (its ``clientConnection.burst``)."""


class TokenBucket:
    """A token bucket of `burst` tokens refilled at `qps` per second (no limit when `qps` <= 0)."""

    def __init__(
        self,
        qps: float,
        burst: int,
        *,
        now: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Validate as client-go does: a throttled bucket needs a positive burst (ValueError otherwise)."""
        if qps > 0 and burst < 1:
            raise ValueError(f"burst must be positive when qps is positive (qps={qps:g}, burst={burst})")
        self.qps = float(qps)
        self.burst = int(burst)
        self._now = now
        self._sleep = sleep
        self._tokens = float(burst)
        self._last = now()
        self._lock = threading.Lock()
        self.waited = 0.0
        """Seconds callers have spent waiting for tokens, in total (for reports)."""

    @property
    def unlimited(self) -> bool:
        """True when the bucket never makes anyone wait."""
        return self.qps <= 0

    def reserve(self) -> float:
        """Take a token now (the bucket may go into debt); the seconds the caller must wait before using it."""
        if self.unlimited:
            return 0.0
        with self._lock:
            now = self._now()
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1.0
            if self._tokens >= 0:
                return 0.0
            return -self._tokens / self.qps

    def wait(self) -> None:
        """Take a token, sleeping until it is available."""
        delay = self.reserve()
        if delay > 0:
            self.waited += delay
            self._sleep(delay)
