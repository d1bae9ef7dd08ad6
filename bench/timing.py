"""Timing shared by the benchmarks that print a median (imported as a sibling module, as
each benchmark runs as a script from ``bench/``)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_ms(call: Callable[[], object], rounds: int) -> float:
    """The median of ``rounds`` timed calls of ``call`` in milliseconds, after one warm-up."""
    call()  # warm
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)
