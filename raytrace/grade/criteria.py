"""Tolerances: which metric must stay within which limit.

A criterion ``metric <= limit`` (``>=`` for ``psnr`` and ``ssim``, which grow with
similarity). A comparison passes when every criterion holds. Written as text
``"mae<=1/255,over<=0.02,block<=4/255"`` (``=`` means the metric's own direction; numbers may be
fractions ``a/b``), as a dict ``{"mae": 0.0039, "over": 0.005}``, or as parallel
metric and tolerance lists (the command line's ``--metric rmse --tolerance 0.01``).
"""
import dataclasses
import math
import re

from .errors import GradeError
from .metrics import HIGHER_IS_BETTER, NAMES

_SLACK = 1e-9        # relative: a value equal to its limit up to float rounding holds


@dataclasses.dataclass(frozen=True)
class Criterion:
    metric: str
    limit: float

    @property
    def op(self):
        return ">=" if self.metric in HIGHER_IS_BETTER else "<="

    def holds(self, value):
        """Whether ``value`` of the metric is within the limit (None, NaN: no)."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return False
        slack = _SLACK * abs(self.limit) + 1e-15
        return value >= self.limit - slack if self.op == ">=" else value <= self.limit + slack

    def __str__(self):
        return f"{self.metric} {self.op} {self.limit:.6g}"




def parse_number(text, where="--tolerance"):
    """A finite number, written plainly or as a fraction ``a/b``."""
    if isinstance(text, bool):
        raise GradeError(where, f"must be a number, got {text!r}")
    if isinstance(text, (int, float)):
        value = float(text)
    else:
        s = str(text).strip()
        try:
            if "/" in s:
                num, den = s.split("/", 1)
                value = float(num) / float(den)
            else:
                value = float(s)
        except (ValueError, ZeroDivisionError):
            raise GradeError(where, f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise GradeError(where, f"must be a finite number, got {text!r}")
    return value


def _metric(name, where):
    name = str(name).strip().lower()
    if name not in NAMES:
        raise GradeError(where, f"unknown metric {name!r} (use {', '.join(NAMES)})")
    return name


def _criterion(metric, value, where):
    c = Criterion(_metric(metric, where), parse_number(value, where))
    if c.metric != "psnr" and c.limit < 0:
        raise GradeError(where, f"{c.metric}: the tolerance must be >= 0, got {c.limit:g}")
    return c


def parse_criteria(spec, metrics=None, where="--tolerance"):
    """Criteria from ``spec`` (text, dict, number or list; see the module docs) and,
    for bare numbers, the parallel ``metrics`` (a name, a comma list or a list).
    -> tuple of :class:`Criterion`."""
    if isinstance(metrics, str):
        metrics = [m for m in metrics.split(",") if m.strip()]
    if isinstance(spec, dict):
        return tuple(_criterion(k, v, where) for k, v in spec.items())
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        spec = [spec]
    if isinstance(spec, str):
        spec = [s for s in spec.split(",") if s.strip()]
    if not isinstance(spec, (list, tuple)) or not spec:
        raise GradeError(where, f"expected a tolerance, got {spec!r}")
    if all(isinstance(s, Criterion) for s in spec):
        return tuple(spec)
    named = [isinstance(s, str) and re.search(r"[<>=]", s) for s in spec]
    if all(named):
        out = []
        for s in spec:
            m = re.fullmatch(r"\s*([A-Za-z_]+)\s*(<=|>=|=)\s*(\S+)\s*", s)
            if not m:
                raise GradeError(where, f"cannot read {s.strip()!r} (write e.g. rmse<=0.01)")
            c = _criterion(m.group(1), m.group(3), where)
            if m.group(2) != "=" and m.group(2) != c.op:
                raise GradeError(where, f"{c.metric} is checked as {c.op} (it "
                                        f"{'grows' if c.op == '>=' else 'shrinks'} with similarity)")
            out.append(c)
        return tuple(out)
    if any(named):
        raise GradeError(where, "mix of named (rmse<=0.01) and bare tolerances")
    if not metrics:
        raise GradeError(where, "a bare tolerance needs --metric (or write metric<=value)")
    if len(metrics) != len(spec):
        raise GradeError(where, f"{len(spec)} tolerance(s) for {len(metrics)} metric(s)")
    return tuple(_criterion(m, v, where) for m, v in zip(metrics, spec))


def format_criteria(criteria):
    return ", ".join(str(c) for c in criteria)


# the project's own image-regression rule (docs/grading.md, "The default rule"): mean
# |diff| <= 1 code, at most 2 % of the pixels off by more than 8 codes (8-bit sRGB; the
# threshold of ``over`` is 8/255), and no 8 x 8 block whose mean moved by more than 4
# codes: another seed's anti-aliasing noise passes, a halved specular term does not
DEFAULT_TOLERANCE = "mae<=1/255,over<=0.02,block<=4/255"
DEFAULT_CRITERIA = parse_criteria(DEFAULT_TOLERANCE)
