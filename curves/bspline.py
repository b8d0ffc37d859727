"""B-spline curves of any degree and knot vector (de Boor / Cox-de Boor).

A curve is ``(knots, ctrl, degree)``: ``knots`` (n+p+1,) non-decreasing float64,
``ctrl`` (..., n, d) control points (leading batch dimensions share the knots),
``degree`` p >= 1. The base interval is ``[knots[p], knots[n]]``; parameters outside
it extrapolate the end polynomials (as ``scipy.interpolate.BSpline`` does by default).
A single Bézier curve of degree p is the B-spline with knots ``[0]*(p+1) + [1]*(p+1)``.
"""
import numpy as np

from ._kernels_bspline import bspline_eval


def clamped_knots(n_ctrl, degree, domain=(0.0, 1.0)):
    """Clamped (open) uniform knot vector: ends repeated ``degree+1`` times.

    The curve starts at the first and ends at the last control point.
    Returns (n_ctrl + degree + 1,) float64 spanning ``domain``.
    """
    if n_ctrl < degree + 1:
        raise ValueError(f"{n_ctrl} control points are too few for degree {degree}")
    inner = np.linspace(domain[0], domain[1], n_ctrl - degree + 1)
    return np.concatenate([np.full(degree, float(domain[0])), inner,
                           np.full(degree, float(domain[1]))])


def uniform_knots(n_ctrl, degree):
    """Unclamped uniform knots ``-p, ..., n``: base interval [0, n - p] (one unit per
    segment), the knots of the course's uniform B-spline when ``degree`` is 3."""
    if n_ctrl < degree + 1:
        raise ValueError(f"{n_ctrl} control points are too few for degree {degree}")
    return np.arange(-degree, n_ctrl + 1, dtype=np.float64)


def check_knots(knots, n_ctrl, degree):
    """Validate a knot vector for ``n_ctrl`` control points; return it as float64."""
    k = np.asarray(knots, dtype=np.float64)
    if degree < 1 or int(degree) != degree:
        raise ValueError(f"degree must be an integer >= 1, got {degree}")
    if k.ndim != 1 or k.size != n_ctrl + degree + 1:
        raise ValueError(f"need {n_ctrl + degree + 1} knots for {n_ctrl} control points "
                         f"of degree {degree}, got {k.size}")
    if not np.all(np.isfinite(k)) or np.any(np.diff(k) < 0):
        raise ValueError("knots must be finite and non-decreasing")
    if not k[degree] < k[n_ctrl]:
        raise ValueError("the base interval knots[p]..knots[n] is empty")
    return np.ascontiguousarray(k)


def evaluate_all(knots, ctrl, degree, t, nd=2):
    """Values and derivatives of orders 0..``nd`` at ``t``.

    ctrl: (..., n, d); t: scalar, (m,) shared, or (..., m) per curve.
    Returns a list of nd+1 arrays of shape (..., m, d) float64 ((..., d) for scalar t).
    """
    pts = np.asarray(ctrl, dtype=np.float64)
    batch = pts.shape[:-2]
    n, d = pts.shape[-2:]
    k = check_knots(knots, n, degree)
    c = np.ascontiguousarray(pts.reshape(-1, n, d))
    tt = np.asarray(t, dtype=np.float64)
    if tt.ndim <= 1:
        tflat = np.ascontiguousarray(tt.reshape(1, -1))
        tshape = tt.shape
    else:
        if tt.shape[:-1] != batch:
            raise ValueError(f"parameters of shape {tt.shape} do not match batch {batch}")
        tflat = np.ascontiguousarray(tt.reshape(c.shape[0], -1))
        tshape = tt.shape[-1:]
    out = np.empty((nd + 1, c.shape[0], tflat.shape[1], d))
    bspline_eval(k, c, int(degree), tflat, int(nd), out)
    return [o.reshape(batch + tshape + (d,)) for o in out]


def evaluate(knots, ctrl, degree, t, deriv=0):
    """The curve or its ``deriv``-th derivative at ``t``: (..., m, d) float64."""
    return evaluate_all(knots, ctrl, degree, t, deriv)[deriv]


def evaluate_bezier(ctrl, t, deriv=0):
    """A single Bézier curve of any degree (n = degree+1 points), t in [0, 1]."""
    pts = np.asarray(ctrl, dtype=np.float64)
    p = pts.shape[-2] - 1
    knots = np.concatenate([np.zeros(p + 1), np.ones(p + 1)])
    return evaluate(knots, pts, p, t, deriv)


def insert_knot(knots, ctrl, degree, u, times=1):
    """Boehm knot insertion: the same curve with ``u`` inserted ``times`` times.

    ctrl: (..., n, d). Returns (new_knots, new_ctrl) with n + times control points.
    The multiplicity of ``u`` may not exceed ``degree``.
    """
    k = np.asarray(knots, dtype=np.float64)
    P = np.asarray(ctrl, dtype=np.float64)
    p = int(degree)
    for _ in range(int(times)):
        n = P.shape[-2]
        check_knots(k, n, p)
        if not k[p] <= u <= k[n]:
            raise ValueError(f"knot {u} lies outside the base interval [{k[p]}, {k[n]}]")
        if np.count_nonzero(k == u) >= p:
            raise ValueError(f"knot {u} already has multiplicity {p}")
        span = int(np.searchsorted(k, u, side="right") - 1)
        if span >= n:
            span = n - 1
            while span > p and k[span] == k[span + 1]:
                span -= 1
        newP = np.empty(P.shape[:-2] + (n + 1, P.shape[-1]))
        newP[..., : span - p + 1, :] = P[..., : span - p + 1, :]
        newP[..., span + 1:, :] = P[..., span:, :]
        for i in range(span - p + 1, span + 1):
            alpha = (u - k[i]) / (k[i + p] - k[i])
            newP[..., i, :] = alpha * P[..., i, :] + (1.0 - alpha) * P[..., i - 1, :]
        k = np.insert(k, span + 1, u)
        P = newP
    return k, P


def to_bezier(knots, ctrl, degree):
    """Split a B-spline into Bézier segments by knot insertion (exact).

    Returns (breaks, segments): breaks (s+1,) the distinct knots of the base
    interval, segments (..., s, p+1, d) the Bézier control points of each piece,
    which on [breaks[i], breaks[i+1]] equals the B-spline.
    """
    p = int(degree)
    P = np.asarray(ctrl, dtype=np.float64)
    k = check_knots(knots, P.shape[-2], p)
    n = P.shape[-2]
    a, b = k[p], k[n]
    # clamp the ends (multiplicity p+1 at a and b), then fill interior knots to p
    for u, target in ((a, p), (b, p)):
        have = np.count_nonzero(k == u)
        if have < target:
            k, P = insert_knot(k, P, p, u, target - have)
    breaks = np.unique(k[(k >= a) & (k <= b)])
    for u in breaks[1:-1]:
        have = np.count_nonzero(k == u)
        if have < p:
            k, P = insert_knot(k, P, p, u, p - have)
    # Bézier point i of piece j is the blossom f(a_j^(p-i), a_(j+1)^i), i.e. control
    # point (last index of knot a) - p + p*j + i once every break has multiplicity p.
    start = int(np.searchsorted(k, a, side="right")) - 1 - p
    nseg = breaks.size - 1
    idx = start + p * np.arange(nseg)[:, None] + np.arange(p + 1)[None, :]
    return breaks, P[..., idx, :]


def from_bezier(segments, breaks=None):
    """Piecewise Bézier segments -> an equivalent B-spline (exact, C0 knots).

    segments: (..., s, p+1, d) with each segment's last point equal to the next one's
    first; breaks: (s+1,) increasing, default 0..s. Returns (knots, ctrl, degree) with
    interior knots of multiplicity p and ctrl (..., s*p+1, d).
    """
    S = np.asarray(segments, dtype=np.float64)
    s, q = S.shape[-3], S.shape[-2]
    p = q - 1
    br = np.arange(s + 1, dtype=np.float64) if breaks is None else np.asarray(breaks, float)
    if br.shape != (s + 1,) or np.any(np.diff(br) <= 0):
        raise ValueError(f"breaks must be {s + 1} increasing numbers")
    gaps = np.abs(S[..., 1:, 0, :] - S[..., :-1, p, :])
    scale = max(float(np.max(np.abs(S))), 1e-300)
    if gaps.size and np.max(gaps) > 1e-12 * scale:
        raise ValueError("Bézier segments do not join (last point != next first point)")
    ctrl = np.concatenate([S[..., :, :p, :].reshape(S.shape[:-3] + (s * p, S.shape[-1])),
                           S[..., -1:, p, :]], axis=-2)
    knots = np.concatenate([np.full(p + 1, br[0]), np.repeat(br[1:-1], p),
                            np.full(p + 1, br[-1])])
    return knots, ctrl, p


def derivative_ctrl(knots, ctrl, degree):
    """Control points and knots of the derivative curve (degree p-1), exact.

    Returns (knots', ctrl', p-1) with ctrl' (..., n-1, d).
    """
    p = int(degree)
    P = np.asarray(ctrl, dtype=np.float64)
    k = check_knots(knots, P.shape[-2], p)
    n = P.shape[-2]
    denom = k[p + 1: n + p] - k[1:n]
    with np.errstate(divide="ignore", invalid="ignore"):
        fac = np.where(denom > 0, p / np.where(denom > 0, denom, 1.0), 0.0)
    Q = fac[:, None] * (P[..., 1:, :] - P[..., :-1, :])
    return k[1:-1].copy(), Q, p - 1
