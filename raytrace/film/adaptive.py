"""Adaptive sampling for the path tracer: after ``min_spp`` passes over every pixel, a
pass goes only to the pixels whose estimated noise is still at least the threshold.

The noise of a pixel (``--noise-threshold`` compares with it): the relative standard
error of the pixel's mean, estimated from its **judged samples** only, the last block of
4 in every 16 (samples 12-15, 28-31, 44-47, ...), per channel ``c``::

    e_c = sqrt(v_c / n) / max(m_c, floor)        noise = max over c, then over the 3x3
                                                  neighbourhood of the pixel

``m_c`` and ``v_c`` are the mean and the unbiased sample variance of the judged samples,
``n`` the number of samples the pixel holds (all of them: ``sqrt(v_c / n)`` is the
standard error of the image's mean), ``floor`` = ``FLOOR`` (2) times the mean of ``m``
over the image and its channels. So the error is relative for pixels brighter than
twice the image's mean (a light, a highlight) and absolute, in units of the image's
brightness, for the rest: no exposure or unit of the scene changes a decision, black
pixels stop, and the samples go where the squared error is (on the Cornell box at 256 x
256 a floor of 0.05, or of the image mean itself, spent most samples on dark pixels).
The 3x3 maximum keeps a pixel sampling while a neighbour is noisy: an edge or a small
light that the first samples of a pixel missed (zero variance) is still found through
its neighbours. A pixel with fewer than 2 judged samples (``min_spp`` < 14) counts as
noisy.

Bias. A rule that stops a pixel by looking at its samples prefers to stop after lucky
ones: path-traced radiance is skewed, so a pixel whose samples happen to be low also
shows a low variance and stops. So the rule looks at the judged samples only, and the
image of a pixel is the mean of its **other** samples: the stopping time depends on
samples that are not in the estimate, which stays unbiased. The price: a quarter of
every pixel's samples are not in its image (``mean_and_variance``). Measured on the
stored Mitsuba references (64 x 64, 10 seeds, threshold 0.2, the z-test of
``tests/test_adaptive.py``): keeping the judged samples in the image (what production
renderers do) made the glass scene's mean 1.7 % dark (11 standard errors; judging all
samples: 3 %, 35) and the Cornell box's red 0.19 % (3); leaving them out, both are
within 2 standard errors. Why blocks of 4 and not every other sample: the samples are
Owen-scrambled Sobol points, whose odd-numbered points all lie in one half of every
dimension (the lowest index bit sets the first digit), so an image of the even ones
sees half the pixel (it measured 4 times the squared error of an image of as many
consecutive points); aligned blocks of consecutive points are stratified nets over the
whole domain, and so are the 12 points before each judged block. Judging 1 block in 4
rather than 1 in 2 measured a lower RMSE at the same time (``benchmarks/bench_adaptive.py``).

Schedule. Pass ``k`` (0, 1, ...) adds sample ``k`` to every active pixel, so an image
depends on the seed only (never on threads or timing); a pixel once stopped never starts
again, so its samples are always ``0 .. n - 1``, a prefix of its sequence as in a
uniform render. The plan is remade after pass ``min_spp`` and then after every
``max(1, n // 8)`` passes (``n`` passes done): a function of the seed and the image so
far. The passes between two decisions go to the kernel in one call (each active pixel
takes its samples in order: the same sums as one pass at a time, without a call per pass
for the few pixels left at the end). A render ends when no pixel is active, after
``max_spp`` passes, or at the end of a time budget (the CLI's ``--time``); the camera
positions then come from a pattern for ``pattern_spp(max_spp)`` samples (a power of two:
Sobol points), so that the first ``n`` passes do not depend on where the render stops,
and ``--max-spp n`` reproduces a render that a time budget stopped after ``n`` passes.
"""
import numpy as np

from ..layout import JUDGED_BLOCK, JUDGED_EVERY

FLOOR = 2.0           # times the image's mean: below it, the error counts as absolute
TINY = 1e-6           # the smallest floor (an all-black image)
JUDGED_ONLY = True    # False: the rule judges all the samples (the bias test's negative control)
DEFAULT_MIN_SPP = 16  # uniform passes before the first decision (4 judged samples)


def pattern_spp(max_spp):
    """The sample count the camera pattern is made for: the power of two >= ``max_spp``
    (Sobol points for the pixel positions, whose first n do not depend on the total)."""
    return 1 << max(0, int(max_spp - 1).bit_length())


def judged_count(n):
    """How many of samples 0 .. n - 1 the rule judges (``n``: int or int array)."""
    b, e = JUDGED_BLOCK, JUDGED_EVERY
    return (n // (e * b)) * b + np.maximum(0, n % (e * b) - (e - 1) * b)


def pixel_noise(half, n):
    """The noise of every pixel (module docstring), (H, W) float64, before the 3x3
    maximum: the NumPy statement of the rule (``kernels.adaptive.stop_converged`` applies
    it). ``half``: (H, W, 6) sums of the judged samples (radiance, then its square);
    ``n``: (H, W) samples per pixel."""
    kc = judged_count(n)
    k = np.maximum(kc, 1)[..., None].astype(np.float64)
    mean = half[..., :3] / k
    var = np.maximum(half[..., 3:] / k - mean * mean, 0.0) * (k / np.maximum(k - 1.0, 1.0))
    floor = max(FLOOR * float(mean.mean()), TINY)
    err = np.sqrt(var / np.maximum(n, 1)[..., None]) / np.maximum(mean, floor)
    return np.where(kc >= 2, err.max(axis=-1), np.inf)


def neighbourhood_max(a):
    """The maximum of ``a`` (H, W) over each pixel's 3x3 neighbourhood (edges: the part
    inside the image)."""
    out = a.copy()
    np.maximum(out[1:], a[:-1], out=out[1:])
    np.maximum(out[:-1], a[1:], out=out[:-1])
    rows = out.copy()
    np.maximum(out[:, 1:], rows[:, :-1], out=out[:, 1:])
    np.maximum(out[:, :-1], rows[:, 1:], out=out[:, :-1])
    return out


class Plan:
    """Which pixels the next pass samples (module docstring). ``active`` (H, W) uint8,
    ``counts`` (H, W) int64 samples per pixel so far, ``rows``: the image rows holding
    an active pixel (in the renderer's row order), ``done``: no pixel is active."""

    def __init__(self, height, width, threshold, min_spp, max_spp, row_order):
        self.threshold, self.min_spp, self.max_spp = float(threshold), int(min_spp), int(max_spp)
        self.active = np.ones((height, width), np.uint8)
        self.counts = np.zeros((height, width), np.int64)
        self._noise = np.empty((height, width))      # the kernel's scratch
        self.row_order = row_order
        self.rows = row_order
        self.stopped_by = "spp"      # or "noise" (every pixel below the threshold), "time"
        self._next_plan = self.min_spp

    @property
    def done(self):
        return self.rows.shape[0] == 0

    @property
    def active_fraction(self):
        return float(self.active.mean())

    def chunk(self, passes):
        """How many samples the next kernel call gives each active pixel, after
        ``passes``: up to the next decision (the first ``min_spp`` in one call)."""
        return max(1, min(self._next_plan, self.max_spp) - passes)

    def after_pass(self, passes, half, accum, count=1):
        """Count the ``count`` samples just added to the active pixels (``passes`` done in
        all) and, when due, decide again on ``half`` (the judged samples' sums;
        ``accum``, all of them, only when :data:`JUDGED_ONLY` is switched off)."""
        judged = half if JUDGED_ONLY else accum
        self.counts += self.active * np.int64(count)
        if passes >= self.max_spp:
            self.active[:] = 0
        elif passes >= self._next_plan:
            from ..kernels.adaptive import stop_converged
            stop_converged(judged, self.counts, self.active, self._noise, self.threshold, FLOOR, JUDGED_ONLY)
            self._next_plan = passes + max(1, passes // 8)
        else:
            return
        has = self.active.any(axis=1)
        self.rows = self.row_order[has[self.row_order]]
        if self.done and passes < self.max_spp:
            self.stopped_by = "noise"

    def mean_and_variance(self, accum, half):
        """-> (mean (H, W, 3), variance of that mean (H, W, 3)) of each pixel's samples
        that the rule did not judge (``accum - half``; ``kernels.path.mean_and_variance``
        with a count per pixel)."""
        accum = accum - half
        n = np.maximum(self.counts - judged_count(self.counts), 1)[..., None].astype(np.float64)
        mean = accum[..., :3] / n
        var = np.maximum(accum[..., 3:] / n - mean * mean, 0.0) * (n / np.maximum(n - 1.0, 1.0))
        return mean, np.where(n >= 2, var / n, 0.0)
