"""The stopping rule of adaptive sampling, one pass over the image (Numba).

:func:`stop_converged` is :func:`raytrace.film.adaptive.pixel_noise` followed by
:func:`~raytrace.film.adaptive.neighbourhood_max` and the comparison with the threshold
(their NumPy versions, the reference ``tests/test_adaptive.py`` checks this against):
without the dozen temporary images NumPy makes, a decision at 256 x 256 takes a fraction
of a millisecond instead of about 8 ms, which matters when the last passes sample a few
hundred pixels.
"""
import math

import numpy as np
import raytrace._numba_setup  # noqa: F401  (Numba's cache folder, before any kernel here)
from numba import njit

from ..layout import JUDGED_BLOCK, JUDGED_EVERY


@njit(cache=True, inline="always")
def is_judged(k):
    """Whether sample ``k`` is one the stopping rule judges (``layout.JUDGED_BLOCK``)."""
    return (k // JUDGED_BLOCK) % JUDGED_EVERY == JUDGED_EVERY - 1


@njit(cache=True, inline="always")
def judged_count(n):
    """How many of samples 0 .. n - 1 are judged (``film.adaptive.judged_count``)."""
    period = JUDGED_EVERY * JUDGED_BLOCK
    return (n // period) * JUDGED_BLOCK + max(0, n % period - (JUDGED_EVERY - 1) * JUDGED_BLOCK)


@njit(cache=True, error_model="numpy")
def stop_converged(half, counts, active, noise, threshold, floor_scale, judged_only):
    """Clear ``active[i, j]`` (uint8) of every active pixel whose noise, the largest in
    its 3x3 neighbourhood, is below ``threshold``; -> the number still active.

    ``half`` (H, W, 6): sums of the judged samples (:func:`is_judged`) and of their squares (with ``judged_only`` False: of all the
    samples, the rule the bias test must catch); a pixel with fewer than 2 judged
    samples counts as noisy;
    ``counts`` (H, W) int64: samples per pixel (>= 2); ``noise`` (H, W) float64: scratch,
    receives each pixel's noise ``max_c sqrt(v_c / n) / max(m_c, floor)``, ``floor`` =
    ``floor_scale`` times the mean of ``m`` over the image (``film.adaptive``)."""
    h, w = counts.shape
    total = 0.0
    for i in range(h):
        for j in range(w):
            k = max(judged_count(counts[i, j]) if judged_only else counts[i, j], 1)
            for c in range(3):
                total += half[i, j, c] / k
    floor = max(floor_scale * total / (3.0 * h * w), 1e-6)
    for i in range(h):
        for j in range(w):
            n = counts[i, j]
            k = judged_count(n) if judged_only else n
            if k < 2:
                noise[i, j] = np.inf
                continue
            worst = 0.0
            for c in range(3):
                m = half[i, j, c] / k
                v = max(half[i, j, 3 + c] / k - m * m, 0.0) * (k / max(k - 1.0, 1.0))
                e = math.sqrt(v / n) / max(m, floor)
                worst = max(worst, e)
            noise[i, j] = worst
    left = 0
    for i in range(h):
        for j in range(w):
            if active[i, j] == 0:
                continue
            worst = 0.0
            for a in range(max(i - 1, 0), min(i + 2, h)):
                for b in range(max(j - 1, 0), min(j + 2, w)):
                    worst = max(worst, noise[a, b])
            if worst >= threshold:
                left += 1
            else:
                active[i, j] = np.uint8(0)
    return left
