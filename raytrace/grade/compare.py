"""One comparison of an actual image with an expected (reference) image.

LDR and HDR are handled explicitly (``domain``):

- both PNG (LDR): metrics on the sRGB-encoded values, code / (2^bits - 1), computed
  from the integer codes (an 8-bit difference of 8 codes is exactly 8/255);
- both float (HDR: PFM, EXR, NumPy, a render): metrics on the linear values;
- one of each: LDR, the float image first turned into the codes ``raytrace render``
  would write to a PNG of the other's bit depth (clamp to [0, 1], sRGB-encode, round);
- ``domain="ldr"`` or ``"hdr"`` forces one (``"hdr"`` decodes PNGs to linear).

:func:`compare` returns a :class:`Comparison`: the metrics (:mod:`.metrics`), the
criteria checks (:mod:`.criteria`), the optional z-test (:mod:`.ztest`), the per-pixel
difference for the heat map and FLIP's error map.
"""
import dataclasses
import math

import numpy as np

from . import metrics as M
from .criteria import DEFAULT_CRITERIA, parse_criteria
from .errors import GradeError
from .images import HDR, LDR, GradeImage, from_array, from_codes, ldr_codes, read_image
from .ztest import DEFAULT_ALPHA, DEFAULT_MAX_FRACTION, ZTestResult, ztest

DOMAINS = ("auto", "ldr", "hdr")
VARIANCE_SOURCES = ("auto", "measured", "reference")


@dataclasses.dataclass(frozen=True)
class ZTestOptions:
    """What the z-test needs besides the two images. Variances (arrays, paths or None)
    are of each pixel's mean; None takes the image's own (a render's ``variance``, an
    npz's ``std``/``variance``). ``source``: ``"measured"`` uses the actual's variance,
    ``"reference"`` scales the reference's by ``expected_spp / actual_spp``; ``"auto"``
    the first that is available."""
    alpha: float = DEFAULT_ALPHA
    max_fraction: float = DEFAULT_MAX_FRACTION
    actual_variance: object = None
    expected_variance: object = None
    actual_spp: int = None
    expected_spp: int = None
    source: str = "auto"


@dataclasses.dataclass(frozen=True, eq=False)
class Comparison:
    """The outcome of :func:`compare`.

    ``metrics``: name -> float (``ssim`` None below 3 x 3 pixels, ``flip`` None when
    not computed; ``psnr`` inf for equal images). ``checks``: (Criterion, value, holds)
    for each criterion. ``diff``: (H, W) largest channel difference per pixel in working
    units; ``flip_map``: (H, W) FLIP error or None."""
    actual: GradeImage
    expected: GradeImage
    domain: str
    notes: tuple
    metrics: dict
    threshold: float
    criteria: tuple
    checks: tuple
    ztest: ZTestResult
    passed: bool
    diff: np.ndarray
    flip_map: np.ndarray
    code_scale: float           # 255 or 65535 for LDR comparisons of equal bit depth, else None

    @property
    def width(self):
        return self.actual.width

    @property
    def height(self):
        return self.actual.height

    def failures(self):
        """Human-readable reasons for failing (empty when passed)."""
        out = [f"{c.metric} {_fmt(v)} (limit {c.op} {c.limit:.6g})" for c, v, ok in self.checks if not ok]
        if self.ztest is not None and not self.ztest.passed:
            out.append(f"z-test rejects {100 * self.ztest.fraction:.3g} % of pixels "
                       f"(limit {100 * self.ztest.max_fraction:.3g} %)")
        return out

    def verdict(self):
        """``PASS: ...`` or ``FAIL: ...`` on one line."""
        if self.passed:
            parts = [f"{c.metric} {_fmt(v)} {c.op} {c.limit:.6g}" for c, v, _ in self.checks]
            if self.ztest is not None:
                parts.append(f"z-test {100 * self.ztest.fraction:.3g} % <= {100 * self.ztest.max_fraction:.3g} %")
            return "PASS: " + ", ".join(parts)
        return "FAIL: " + "; ".join(self.failures())

    def describe_domain(self):
        if self.domain == LDR:
            bits = f"{int(round(math.log2(self.code_scale + 1)))}-bit " if self.code_scale else ""
            return f"LDR (sRGB-encoded {bits}values, 1 = white)"
        return "HDR (linear values)"

    def report_lines(self):
        """The text report of ``raytrace compare``."""
        lines = [f"{self.actual.name} vs {self.expected.name} (expected): {self.width} x {self.height}, "
                 f"{self.describe_domain()}"]
        lines += [f"  note: {n}" for n in self.notes]
        for name in M.NAMES:
            value = self.metrics.get(name)
            if value is None:
                continue
            lines.append(f"  {name:<7} {_metric_text(name, value, self.code_scale, self.threshold)}")
        if self.ztest is not None:
            lines.append("  " + self.ztest.summary())
        lines.append(self.verdict())
        return lines

    def to_json(self):
        return {
            "actual": self.actual.name, "expected": self.expected.name,
            "width": self.width, "height": self.height, "domain": self.domain, "notes": list(self.notes),
            "threshold": self.threshold,
            "metrics": {k: _json_number(v) for k, v in self.metrics.items()},
            "criteria": [{"metric": c.metric, "op": c.op, "limit": c.limit, "value": _json_number(v),
                          "passed": bool(ok)} for c, v, ok in self.checks],
            "ztest": None if self.ztest is None else self.ztest.to_json(),
            "passed": self.passed,
        }


def _fmt(v):
    return "n/a" if v is None else f"{v:.6g}"


def _json_number(v):
    """None for inf / NaN (JSON has neither): an infinite PSNR means equal images."""
    return None if v is None or not math.isfinite(v) else v


def _metric_text(name, value, code_scale, threshold):
    if name == "psnr":
        return "inf (identical)" if math.isinf(value) else f"{value:.2f} dB"
    if name == "over":
        t = f"{threshold:.4g}" + (f" = {threshold * code_scale:.3g} / {code_scale:.0f}" if code_scale else "")
        return f"{100 * value:.4g} % of pixels (a channel off by more than {t})"
    text = f"{value:.6g}"
    if code_scale and name in ("rmse", "max", "mae", "block"):
        text += f"  ({value * code_scale:.4g} / {code_scale:.0f})"
    return text


def as_image(obj, name, alpha="error"):
    """A :class:`GradeImage` from a path, an array (a render) or a GradeImage."""
    if isinstance(obj, GradeImage):
        return obj
    if isinstance(obj, np.ndarray):
        return from_array(obj, name)
    return read_image(obj, alpha=alpha, what=name)


def _working(a, e, domain):
    """-> (working actual, working expected, difference, code scale or None, notes)."""
    notes = []
    if domain == HDR:
        for img in (a, e):
            if img.kind == LDR:
                notes.append(f"{img.name}: PNG values decoded from sRGB to linear")
        return a.linear, e.linear, a.linear - e.linear, None, notes
    bits = [img.bits for img in (a, e) if img.kind == LDR]
    target = max(bits) if bits else 8
    codes = []
    for img in (a, e):
        if img.kind == HDR:
            notes.append(f"{img.name}: float image clamped to [0, 1], sRGB-encoded and rounded to "
                         f"{target} bits (as a PNG of it would be)")
            img = from_codes(img.name, ldr_codes(img.linear, target), target)
        codes.append((img.codes, img.bits))
    (ca, ba), (ce, be) = codes
    if ba == be:
        top = float((1 << ba) - 1)
        return ca / top, ce / top, (ca - ce) / top, top, notes
    notes.append(f"bit depths differ ({ba} and {be}): compared as values in [0, 1]")
    wa, we = ca / float((1 << ba) - 1), ce / float((1 << be) - 1)
    return wa, we, wa - we, None, notes


def _variance_image(obj, name, shape):
    if obj is None:
        return None
    img = as_image(obj, name) if not isinstance(obj, np.ndarray) else None
    values = obj if img is None else img.linear
    if img is not None and img.kind == LDR:
        raise GradeError(None, "a variance must be a float image (.exr, .pfm, .npy, .npz)", file=img.name)
    values = np.asarray(values, np.float64)
    if values.ndim == 2:
        values = np.repeat(values[..., None], 3, axis=2)
    if values.shape != shape:
        raise GradeError(None, f"{name} is {values.shape[1]} x {values.shape[0]}, the images "
                               f"{shape[1]} x {shape[0]}")
    if not np.isfinite(values).all() or (values < 0).any():
        raise GradeError(None, f"{name}: variances must be finite and >= 0")
    return values


def _run_ztest(a, e, opts):
    if a.kind != HDR or e.kind != HDR:
        png = a.name if a.kind == LDR else e.name
        raise GradeError(None, "the z-test needs float images (.exr, .pfm, .npy, .npz): PNG values are "
                               "quantised", file=png)
    vr = _variance_image(opts.expected_variance, "expected variance", e.linear.shape)
    vr = e.variance if vr is None else vr
    if vr is None:
        raise GradeError("--expected-variance", f"the z-test needs the variance of the reference "
                                                f"{e.name} (a variance image, or an npz with 'std')")
    va = _variance_image(opts.actual_variance, "actual variance", a.linear.shape)
    va = a.variance if va is None else va
    source = "measured"
    if opts.source == "reference" or (opts.source == "auto" and va is None):
        n_a = opts.actual_spp or a.spp
        n_r = opts.expected_spp or e.spp
        if not n_a or not n_r:
            raise GradeError("--actual-variance", "the z-test needs the actual image's variance, or both "
                                                  "sample counts (--actual-spp, --expected-spp) to scale "
                                                  "the reference's")
        va = vr * (float(n_r) / float(n_a))
        source = f"reference's x {n_r}/{n_a} spp"
    elif va is None:
        raise GradeError("--actual-variance", f"no variance for the actual image {a.name}")
    return ztest(a.linear, va, e.linear, vr, alpha=opts.alpha, max_fraction=opts.max_fraction,
                 variance_source=source)


def compare(actual, expected, criteria=None, threshold=M.DEFAULT_THRESHOLD, domain="auto", alpha="error",
            flip=True, ztest=None):
    """Compare ``actual`` with ``expected`` -> :class:`Comparison`.

    ``actual``, ``expected``: paths (.png, .pfm, .exr, .npy, .npz), arrays (uint8 /
    uint16 codes or float linear radiance, e.g. a render) or :class:`GradeImage`.
    ``criteria``: anything :func:`~raytrace.grade.criteria.parse_criteria` reads
    (default: mean |diff| <= 1/255 and <= 0.5 % of pixels over 8/255); with ``ztest``
    and no criteria only the z-test decides. ``threshold``: the per-pixel difference
    counted by ``over``. ``alpha``: PNG/EXR alpha handling (:mod:`.images`).
    ``flip=False`` skips FLIP (its value is then None). ``ztest``: None, True or
    :class:`ZTestOptions`. Different sizes and unreadable files raise GradeError."""
    if domain not in DOMAINS:
        raise ValueError(f"domain must be one of {DOMAINS}, got {domain!r}")
    threshold = float(threshold)
    if not (threshold >= 0 and math.isfinite(threshold)):
        raise GradeError("--threshold", f"must be a finite number >= 0, got {threshold}")
    a = as_image(actual, "actual", alpha)
    e = as_image(expected, "expected", alpha)
    if (a.height, a.width) != (e.height, e.width):
        raise GradeError(None, f"sizes differ: {a.name} is {a.width} x {a.height}, {e.name} is "
                               f"{e.width} x {e.height}")
    if domain == "auto":
        domain = HDR if a.kind == HDR and e.kind == HDR else LDR
    wa, we, d, code_scale, notes = _working(a, e, domain)
    peak = 1.0 if domain == LDR else (float(we.max()) if we.max() > 0 else 1.0)
    values = M.error_metrics(d, we, threshold, peak)
    span = 1.0 if domain == LDR else float(we.max() - we.min()) or 1.0
    from .ssim import ssim
    values["ssim"] = ssim(wa, we, span)
    fmap = None
    values["flip"] = None
    if flip:
        from .flip import flip as flip_metric
        values["flip"], fmap = flip_metric(wa, we, domain)
    zres = None
    if ztest is not None and ztest is not False:
        opts = ztest if isinstance(ztest, ZTestOptions) else ZTestOptions()
        zres = _run_ztest(a, e, opts)
    if criteria is None:
        criteria = () if zres is not None else DEFAULT_CRITERIA
    elif criteria != ():
        criteria = parse_criteria(criteria)
    missing = [c.metric for c in criteria if c.metric == "flip" and values["flip"] is None]
    if missing:
        raise GradeError("--metric", "flip is a criterion but was not computed")
    checks = tuple((c, values[c.metric], c.holds(values[c.metric])) for c in criteria)
    passed = all(ok for _, _, ok in checks) and (zres is None or zres.passed)
    notes = [f"{img.name}: {n}" for img in (a, e) for n in img.notes] + notes
    return Comparison(actual=a, expected=e, domain=domain, notes=tuple(notes),
                      metrics=values, threshold=threshold, criteria=tuple(criteria), checks=checks, ztest=zres,
                      passed=passed, diff=M.pixel_difference(d), flip_map=fmap, code_scale=code_scale)


__all__ = ["compare", "Comparison", "ZTestOptions", "as_image"]
