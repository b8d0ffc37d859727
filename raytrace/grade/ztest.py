"""A per-pixel two-sample z-test for Monte Carlo images (after Mitsuba 3's render tests).

For every pixel and channel, with A and R the actual and reference means and V_A, V_R
the variances of those means (not of single samples):

    z = (A - R) / sqrt(V_A + V_R + (f * max(|A|, |R|))^2),    p = erfc(|z| / sqrt(2))

``f`` (1e-3) keeps pixels without noise (a background, an emitter seen directly, which
both renders get exactly) from being judged on their last bits, and covers references
stored as float16 (2^-11 relative). The test makes N = pixels x channels decisions, so
each is made at the Sidak-corrected level ``1 - (1 - alpha)^(1/N)``: with independent
pixels and exact variances, a correct image has at least one rejection with probability
``alpha`` (0.01 by default). A pixel is rejected when any of its channels is, and the
image passes when the fraction of rejected pixels is at most ``max_fraction`` (0.25 %,
Mitsuba's 99.75 % of pixels), which leaves room for the rare pixel whose noise is far
from Gaussian (a firefly).

Where V_A comes from: the actual render's own variance estimate (``raytrace render
--variance``), or, Mitsuba's way, the reference's scaled to the actual's sample count:
V_A = V_R * spp_R / spp_A (better when the actual has few samples: its own estimate is
noisy and misses rare bright paths). Use the ``independent`` sampler for images that
are z-tested, with an spp that is not a perfect square: the Sobol sampler's passes and
the jittered n x n pixel grid at spp = n^2 make the variance estimate too large (a
test that passes too easily).
"""
import dataclasses
import math

import numpy as np

DEFAULT_ALPHA = 0.01
DEFAULT_MAX_FRACTION = 0.0025
REL_FLOOR = 1e-3


@dataclasses.dataclass(frozen=True, eq=False)
class ZTestResult:
    """Outcome of :func:`ztest`. Arrays: ``variance``, ``z``, ``p`` (H, W, 3); ``rejected`` (H, W)."""
    alpha: float
    level: float              # per-decision (Sidak) level
    z_critical: float         # |z| above which a decision rejects
    tests: int
    max_fraction: float
    fraction: float           # rejected pixels / pixels
    rejected_pixels: int
    min_p: float
    passed: bool
    variance_source: str
    variance: np.ndarray      # V_A + V_R + floor: the z denominator squared
    z: np.ndarray
    p: np.ndarray
    rejected: np.ndarray

    def summary(self):
        verdict = "pass" if self.passed else "FAIL"
        return (f"z-test: {self.rejected_pixels} of {self.rejected.size} pixels rejected "
                f"({100 * self.fraction:.3g} %, limit {100 * self.max_fraction:.3g} %) at alpha "
                f"{self.alpha:g} (Sidak per-test level {self.level:.2g}, |z| > {self.z_critical:.2f}; "
                f"min p {self.min_p:.2g}; actual variance {self.variance_source}): {verdict}")

    def to_json(self):
        return {"alpha": self.alpha, "level": self.level, "z_critical": self.z_critical, "tests": self.tests,
                "max_fraction": self.max_fraction, "fraction": self.fraction,
                "rejected_pixels": self.rejected_pixels, "pixels": int(self.rejected.size),
                "min_p": self.min_p, "passed": self.passed, "variance_source": self.variance_source}


def erfc(x):
    """Complementary error function of an array, relative error < 1.2e-7 everywhere
    (Chebyshev fit, Numerical Recipes' ``erfcc``)."""
    x = np.asarray(x, np.float64)
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = (-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
            -0.82215223 + t * 0.17087277)))))))))
    r = t * np.exp(poly)
    return np.where(x >= 0, r, 2.0 - r)


def sidak_level(alpha, n):
    """Per-decision level for ``n`` decisions at family-wise level ``alpha``."""
    return -math.expm1(math.log1p(-alpha) / n)


def z_critical(level):
    """|z| with two-sided p-value ``level`` (bisection on math.erfc)."""
    lo, hi = 0.0, 40.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if math.erfc(mid / math.sqrt(2.0)) > level:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def ztest(actual, actual_var, expected, expected_var, alpha=DEFAULT_ALPHA, max_fraction=DEFAULT_MAX_FRACTION,
          rel_floor=REL_FLOOR, variance_source="measured"):
    """Run the test on (H, W, 3) linear means and variances of the means -> :class:`ZTestResult`."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0.0 <= max_fraction < 1.0:
        raise ValueError(f"max_fraction must be in [0, 1), got {max_fraction}")
    a, va, r, vr = (np.asarray(x, np.float64) for x in (actual, actual_var, expected, expected_var))
    total = va + vr + np.square(rel_floor * np.maximum(np.abs(a), np.abs(r))) + 1e-300
    z = (a - r) / np.sqrt(total)
    p = erfc(np.abs(z) / math.sqrt(2.0))
    n = z.size
    level = sidak_level(alpha, n)
    zc = z_critical(level)
    rejected = (np.abs(z) > zc).any(axis=2)
    fraction = float(rejected.mean())
    return ZTestResult(alpha=alpha, level=level, z_critical=zc, tests=n, max_fraction=max_fraction,
                       fraction=fraction, rejected_pixels=int(rejected.sum()), min_p=float(p.min()),
                       passed=fraction <= max_fraction, variance_source=variance_source, variance=total, z=z, p=p,
                       rejected=rejected)
