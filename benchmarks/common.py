"""What several benchmarks share (run them from the repository's folder with
PYTHONPATH=.)."""
from __future__ import annotations

import time


def best_time(func, repeats=5) -> float:
    """The shortest wall time (s) of `repeats` calls of func()."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - t0)
    return best
