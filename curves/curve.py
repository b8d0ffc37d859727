"""Curve descriptions that know how to sample themselves.

``Curve`` (piecewise cubic Bézier / uniform B-spline / Catmull-Rom), ``BSplineCurve``
(any degree and knot vector) and ``Circle`` share one small interface:

- ``dim``: 2 or 3; ``segments``: number of pieces; ``domain``: (t0, t1);
- ``evaluate_all(t, nd)``: list of value and derivative arrays, each (m, dim);
- ``sample(steps)``: ``Samples`` with ``steps`` intervals per piece.
"""
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from . import bspline as _bspline
from . import cubic as _cubic
from .basis import check_basis
from .frames import curve_frames, unit_rows


class Samples(NamedTuple):
    """A sampled curve: params (m,), points, d1, d2 (m, dim) and unit tangents (m, dim)."""
    t: np.ndarray
    points: np.ndarray
    d1: np.ndarray
    d2: np.ndarray
    tangents: np.ndarray

    def frames(self, method="rmf", closed=None, initial_normal=None):
        """(T, N, B) along these samples, each (m, 3); see ``frames.curve_frames``."""
        return curve_frames(self.points, self.tangents, method, closed, initial_normal)


def robust_tangents(points, d1, d2, t_end_mask=None):
    """Unit tangents that survive a vanishing first derivative.

    Where |d1| is below 1e-12 of the curve size the limit direction is used: +d2
    (approached from the right) or -d2 at samples flagged in ``t_end_mask`` (approached
    from the left); if d2 vanishes too, the chord to the neighbouring sample.
    Returns (m, dim) unit rows.
    """
    p = np.asarray(points, dtype=np.float64)
    d1 = np.asarray(d1, dtype=np.float64)
    d2 = np.asarray(d2, dtype=np.float64)
    scale = max(float(np.ptp(p, axis=0).max()) if len(p) else 0.0, 1e-300)
    n1 = np.linalg.norm(d1, axis=1)
    T = unit_rows(d1)
    bad = n1 <= 1e-12 * scale
    if np.any(bad):
        sign = np.ones(len(p))
        if t_end_mask is not None:
            sign[np.asarray(t_end_mask, bool)] = -1.0
        alt = unit_rows(d2 * sign[:, None])
        T[bad] = alt[bad]
        still = bad & (np.linalg.norm(T, axis=1) == 0)
        for i in np.nonzero(still)[0]:
            j = i + 1 if i + 1 < len(p) else i - 1
            chord = (p[j] - p[i]) * (1 if j > i else -1)
            T[i] = chord / np.linalg.norm(chord) if np.linalg.norm(chord) > 0 else 0.0
    return T


class _Sampler:
    def sample(self, steps=16):
        """Sample ``steps`` intervals per piece: (segments*steps + 1) samples."""
        steps = int(steps)
        if steps < 1:
            raise ValueError(f"steps must be >= 1, got {steps}")
        t = self._params(steps)
        p, d1, d2 = self.evaluate_all(t, 2)
        end = np.zeros(len(t), bool)
        end[-1] = True
        return Samples(t, p, d1, d2, robust_tangents(p, d1, d2, end))


@dataclass(frozen=True, eq=False)
class Curve(_Sampler):
    """A piecewise cubic curve in the course's sense.

    points: (n, 2|3) control points; basis: 'bezier' (3n+1 points), 'bspline' or
    'catmull_rom' (n+3 points, or n >= 3 when closed); closed: for B-spline and
    Catmull-Rom, wrap the control points into a loop. Parameter t in [0, segments].
    """
    points: np.ndarray
    basis: str = "bspline"
    closed: bool = False
    ctrl: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        check_basis(self.basis)
        pts = np.asarray(self.points, dtype=np.float64)
        if pts.ndim != 2 or pts.shape[1] not in (2, 3):
            raise ValueError(f"control points must have shape (n, 2) or (n, 3), got {pts.shape}")
        object.__setattr__(self, "points", pts)
        wrap = self.closed and self.basis != "bezier"
        ctrl = _cubic.close_points(pts, self.basis) if wrap else pts
        if self.closed and self.basis == "bezier" and not np.array_equal(pts[0], pts[-1]):
            raise ValueError("a closed Bézier curve must end at its first control point")
        _cubic.segment_count(len(ctrl), self.basis)
        object.__setattr__(self, "ctrl", ctrl)

    @property
    def dim(self):
        return self.points.shape[1]

    @property
    def segments(self):
        return _cubic.segment_count(len(self.ctrl), self.basis)

    @property
    def domain(self):
        return 0.0, float(self.segments)

    def evaluate_all(self, t, nd=2):
        """Value and derivatives up to ``nd`` at global parameters t: list of (m, dim)."""
        return _cubic.evaluate_all(self.ctrl, t, self.basis, nd)

    def _params(self, steps):
        return np.arange(self.segments * steps + 1, dtype=np.float64) / steps


@dataclass(frozen=True, eq=False)
class BSplineCurve(_Sampler):
    """A B-spline of any degree: knots (n+p+1,), points (n, 2|3), degree p."""
    knots: np.ndarray
    points: np.ndarray
    degree: int = 3

    def __post_init__(self):
        pts = np.asarray(self.points, dtype=np.float64)
        if pts.ndim != 2 or pts.shape[1] not in (2, 3):
            raise ValueError(f"control points must have shape (n, 2) or (n, 3), got {pts.shape}")
        object.__setattr__(self, "points", pts)
        object.__setattr__(self, "knots", _bspline.check_knots(self.knots, len(pts), self.degree))

    @property
    def dim(self):
        return self.points.shape[1]

    @property
    def breaks(self):
        k = self.knots
        n, p = len(self.points), self.degree
        return np.unique(k[p:n + 1])

    @property
    def segments(self):
        return len(self.breaks) - 1

    @property
    def domain(self):
        b = self.breaks
        return float(b[0]), float(b[-1])

    def evaluate_all(self, t, nd=2):
        return _bspline.evaluate_all(self.knots, self.points, self.degree, t, nd)

    def _params(self, steps):
        b = self.breaks
        s = np.arange(steps) / steps
        t = (b[:-1, None] + (b[1:] - b[:-1])[:, None] * s[None, :]).ravel()
        return np.concatenate([t, b[-1:]])


@dataclass(frozen=True, eq=False)
class Circle(_Sampler):
    """The course's ``circ``: a counter-clockwise circle of ``radius`` about the origin
    in the xy-plane, starting at (radius, 0); t in [0, 1] is the fraction of a turn."""
    radius: float

    def __post_init__(self):
        if not np.isfinite(self.radius) or self.radius <= 0:
            raise ValueError(f"circle radius must be > 0, got {self.radius}")

    dim = property(lambda self: 2)
    segments = property(lambda self: 1)
    domain = property(lambda self: (0.0, 1.0))

    def evaluate_all(self, t, nd=2):
        a = 2.0 * np.pi * np.asarray(t, dtype=np.float64)
        c, s = np.cos(a), np.sin(a)
        w = 2.0 * np.pi
        out = [np.stack([c, s], -1) * self.radius,
               np.stack([-s, c], -1) * (self.radius * w),
               np.stack([-c, -s], -1) * (self.radius * w * w),
               np.stack([s, -c], -1) * (self.radius * w ** 3)]
        return out[:nd + 1]

    def _params(self, steps):
        return np.arange(steps + 1, dtype=np.float64) / steps

    def sample(self, steps=16):
        s = super().sample(steps)
        # close exactly: cos/sin of 2*pi are not exactly (1, 0)
        s.points[-1] = s.points[0]
        s.d1[-1] = s.d1[0]
        s.d2[-1] = s.d2[0]
        s.tangents[-1] = s.tangents[0]
        return s
