"""Adaptive sampling for the path tracer: a pilot pass over every pixel, then one plan of
how many samples each pixel takes, made from its neighbours' pilot samples, never its
own, so that every sample a pixel takes stays in its image without bias.

**Pilot.** Every pixel takes ``min_spp`` samples (default 16).

**Noise.** Each pixel gets a score, the per-sample noise of its **8 neighbours** (the 3 x 3
block without its centre; at the border the neighbours inside the image), from their
pilot samples, per channel ``c``::

    s^2 = mean over c of  V_c / clamp(M_c, DARK m, BRIGHT m)^2

``V_c`` and ``M_c`` are the means over the neighbours of their samples' variance (unbiased)
and mean, ``m`` the mean of the pilot image over its pixels and channels. So a pixel
brighter than ``BRIGHT`` (1/2) times the image's mean counts its absolute error (in units
of half that mean: what RMSE sees), a darker one its error relative to its brightness
(what the eye sees in shadows; down to ``DARK`` (1/10) times the mean, so that black
pixels stop). No exposure or unit of the scene changes a plan.

**Allocation.** Pixel ``i`` takes ``n_i = max(min_spp, 2^round(log2(lam s_i^EXPONENT)))``
samples, capped at ``max_spp``: a power of two, so that a pixel's points are whole
blocks of its Owen-scrambled Sobol sequence (the first 2^k points are a stratified net;
other counts measured worse per sample). ``lam`` is the smallest for which the predicted
error, ``sqrt(mean_i s_i^2 / n_i)`` (before the ``max_spp`` cap), is at most the
threshold ``T`` (``--noise-threshold``). Why ``EXPONENT`` 0.7 and not 1 (``n_i``
proportional to the standard deviation, what minimises the squared error of independent
samples): Sobol points make a pixel's error fall faster than 1/n where its integrand is
smooth or has one edge (a light's outline), so the noisiest pixels need fewer samples
than their variance says; on the benchmark scenes 0.5-0.8 measured alike and 1 worse
(``docs/adaptive-sampling.md``). A single plan, from the pilot only: a second plan
made from the neighbours' later samples would depend on the pixel's own samples
through the neighbours' counts.

**Unbiased.** Pixels use independent random numbers (their own scrambles), so a
pixel's count is independent of its own samples (up to the image mean in the floor and
``lam``, one number over all pixels), and the mean of the first ``n`` samples of a
pixel is unbiased for every ``n`` (``tests/test_sampling.py``): the image of a pixel is
the mean of all its samples. A rule that looks at a pixel's own samples prefers to stop
after lucky (dark) ones: :data:`OWN_SAMPLES` switches to it, the negative control of
the bias tests.

**Schedule.** Pass ``k`` (0, 1, ...) adds sample ``k`` to every pixel whose plan has
more than ``k`` samples, so an image depends on the seed only (never on threads or
timing), a pixel's samples are always ``0 .. n - 1``, and a render stopped after any
pass (``--time``, Ctrl-C, a partial image) holds ``min(n_i, passes)`` samples per pixel:
still unbiased. The passes between two counts of the plan go to the kernel in one call.
The camera positions come from the pattern for ``pattern_spp(max_spp)`` samples (a
power of two: Sobol points, whose first ``n`` do not depend on the total), and the plan
does not depend on ``max_spp`` except through the cap, so ``--max-spp n`` reproduces a
render that a time budget stopped after ``n`` passes.
"""
import math

import numpy as np

DEFAULT_MIN_SPP = 16  # the pilot: samples every pixel takes before the plan
EXPONENT = 0.7        # n_i ~ s_i^EXPONENT (module docstring)
DARK, BRIGHT = 0.1, 0.5   # the clamp of a pixel's brightness, in units of the image's mean
TINY = 1e-12          # the smallest image mean (an all-black pilot)
OWN_SAMPLES = False   # True: each pixel judged on its own pilot samples (biased; the bias tests' negative control)


def pattern_spp(max_spp):
    """The sample count the camera pattern is made for: the power of two >= ``max_spp``
    (Sobol points for the pixel positions, whose first n do not depend on the total)."""
    return 1 << max(0, int(max_spp - 1).bit_length())


def neighbour_mean(a):
    """The mean of ``a`` ((H, W) or (H, W, C)) over each pixel's 8 neighbours (at the
    border, over those inside the image; a 1-pixel image: 0)."""
    h, w = a.shape[:2]
    total = np.zeros_like(a, dtype=np.float64)
    count = np.zeros((h, w))
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            if di == 0 and dj == 0:
                continue
            dst = (slice(max(0, -di), h - max(0, di)), slice(max(0, -dj), w - max(0, dj)))
            src = (slice(max(0, di), h - max(0, -di)), slice(max(0, dj), w - max(0, -dj)))
            total[dst] += a[src]
            count[dst] += 1.0
    count = np.maximum(count, 1.0)
    return total / (count if a.ndim == 2 else count[..., None])


def pilot_scores(accum, n, own=None):
    """The noise score ``s`` (H, W) of every pixel (module docstring) from ``accum``
    ((H, W, 6): sums of the pilot's ``n`` samples per pixel and of their squares).
    ``own`` (default :data:`OWN_SAMPLES`): each pixel's own samples instead of its
    neighbours' (biased)."""
    own = OWN_SAMPLES if own is None else own
    n = float(n)
    mean = accum[..., :3] / n
    var = np.maximum(accum[..., 3:] / n - mean * mean, 0.0) * (n / max(n - 1.0, 1.0))
    image_mean = max(float(mean.mean()), TINY)
    if not own:
        mean, var = neighbour_mean(mean), neighbour_mean(var)
    scale = np.clip(np.abs(mean), DARK * image_mean, BRIGHT * image_mean)
    return np.sqrt((var / (scale * scale)).mean(axis=-1))


def _counts(scores_p, log_lam, min_spp):
    """Counts for lam = 2^log_lam before the max_spp cap: powers of two, at least min_spp."""
    with np.errstate(divide="ignore"):
        k = np.round(log_lam + np.log2(scores_p))
    n = np.exp2(np.clip(k, 0, 62))
    return np.maximum(n, min_spp)


def allocate(scores, threshold, min_spp, max_spp):
    """-> samples per pixel (H, W) int64 for noise ``scores`` (:func:`pilot_scores`): the
    plan of the module docstring (the smallest lam whose predicted error meets
    ``threshold``, found by bisection on log2 lam to 1/1024; threshold 0: every pixel
    ``max_spp``), and whether ``max_spp`` capped it (the threshold not met)."""
    scores = np.asarray(scores, np.float64)
    s2 = scores * scores
    target = float(threshold) ** 2
    if threshold <= 0 or not np.isfinite(s2).all():
        return np.full(scores.shape, max(min_spp, max_spp), np.int64), True

    def error(log_lam):
        return float((s2 / _counts(sp, log_lam, min_spp)).mean())
    sp = scores ** EXPONENT
    positive = sp[sp > 0]
    if positive.size == 0 or error(-1e9) <= target:
        n = np.full(scores.shape, float(min_spp))
    else:
        lo = math.log2(min_spp) - math.log2(positive.max()) - 1.0      # every pixel at min_spp
        hi = 63.0 - math.log2(positive.min())                           # every pixel at 2^62
        for _ in range(64):
            if hi - lo < 1.0 / 1024:
                break
            mid = 0.5 * (lo + hi)
            if error(mid) <= target:
                hi = mid
            else:
                lo = mid
        n = _counts(sp, hi, min_spp)
    capped = bool((n > max_spp).any())
    return np.minimum(n, max(min_spp, max_spp)).astype(np.int64), capped


class Plan:
    """Which pixels the next pass samples (module docstring). ``active`` (H, W) uint8,
    ``counts`` (H, W) int64 samples per pixel so far, ``target`` (H, W) int64 the plan
    (``min_spp`` everywhere until the pilot is done), ``rows``: the image rows holding an
    active pixel (in the renderer's row order), ``done``: no pixel is active."""

    def __init__(self, height, width, threshold, min_spp, max_spp, row_order):
        self.threshold, self.min_spp, self.max_spp = float(threshold), int(min_spp), int(max_spp)
        self.active = np.ones((height, width), np.uint8)
        self.counts = np.zeros((height, width), np.int64)
        self.target = np.full((height, width), min(self.min_spp, self.max_spp), np.int64)
        self.row_order = row_order
        self.rows = row_order
        self.planned = False
        self.stopped_by = "spp"      # or "noise" (the plan met the threshold), "time"

    @property
    def done(self):
        return self.rows.shape[0] == 0

    @property
    def active_fraction(self):
        return float(self.active.mean())

    def chunk(self, passes):
        """How many samples the next kernel call gives each active pixel, after
        ``passes``: up to the next count of the plan."""
        left = self.target[self.active.astype(bool)]
        return int(max(1, (left.min() if left.size else passes + 1) - passes))

    def work(self, count):
        """Samples that a kernel call of ``count`` passes adds (for time estimates)."""
        return int(self.active.sum()) * int(count)

    def after_pass(self, passes, accum, count=1):
        """Count the ``count`` samples just added to the active pixels (``passes`` done in
        all); after the pilot, make the plan from ``accum`` (the sums of the samples)."""
        self.counts += self.active * np.int64(count)
        if not self.planned and passes >= self.min_spp and passes < self.max_spp:
            self.planned = True
            self.target, capped = allocate(pilot_scores(accum, self.min_spp), self.threshold, self.min_spp,
                                           self.max_spp)
            self.stopped_by = "spp" if capped else "noise"
        if passes >= self.max_spp:
            self.active[:] = 0
        else:
            self.active[:] = self.target > passes
        has = self.active.any(axis=1)
        self.rows = self.row_order[has[self.row_order]]

    def add_rows(self, rows, count):
        """Count the ``count`` samples that a pass stopped midway added to the active
        pixels of ``rows`` (the rows it finished); the plan itself does not change."""
        self.counts[rows] += self.active[rows] * np.int64(count)

    def mean_and_variance(self, accum):
        """-> (mean (H, W, 3), variance of that mean (H, W, 3)) of each pixel's samples
        (``kernels.path.mean_and_variance`` with a count per pixel)."""
        n = np.maximum(self.counts, 1)[..., None].astype(np.float64)
        mean = accum[..., :3] / n
        var = np.maximum(accum[..., 3:] / n - mean * mean, 0.0) * (n / np.maximum(n - 1.0, 1.0))
        return mean, np.where(n >= 2, var / n, 0.0)
