"""Small statistics shared by the analyses' benchmarks (traceback metrics, Semantic Chameleon rates).

Kept in `_util` because two analyses that must not import each other both report Wilson intervals.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

Z95 = 1.959963984540054  # the standard normal's 97.5 % quantile


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """95 % Wilson score interval for `successes` in `n` trials, clipped to [0, 1].

    Wilson rather than the normal approximation because the benchmarks' rates sit near 0 or 1 on tens
    of trials, where p +- z*sqrt(p(1-p)/n) collapses to a zero-width or out-of-range interval.
    No trials (n <= 0) carry no information: the whole of [0, 1]."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_interval(values: Sequence[float], resamples: int = 2000, seed: int = 0) -> tuple[float, float] | None:
    """95 % percentile-bootstrap interval of a mean (seeded, so a results file is reproducible).

    Bootstrap rather than mean +- z*sd/sqrt(n) because per-event Char F1 is bounded and lumpy (many
    events near 1, a few at 0): the normal interval can run past 1. None for no values."""
    if not values:
        return None
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choice(values) for _ in range(n)) / n for _ in range(resamples))
    return (round(means[int(0.025 * resamples)], 4), round(means[int(0.975 * resamples) - 1], 4))
