"""Piecewise cubic curves: Bézier, uniform B-spline and Catmull-Rom.

Control points are ``(..., n, d)`` float arrays (any leading batch shape, d = 2 or 3).
The global parameter ``t`` runs over ``[0, nseg]``; segment ``i`` covers ``[i, i+1]``
and uses control points ``stride*i .. stride*i+3`` (stride 3 for Bézier, 1 otherwise).
Derivatives are with respect to this global ``t``. A Bézier curve with n segments has
3n+1 control points, a B-spline or Catmull-Rom curve n+3.
"""
import numpy as np

from . import basis as _basis
from ._kernels_cubic import cubic_eval


def segment_count(n_points, basis):
    """Number of cubic segments for ``n_points`` control points in ``basis``.

    Raises ValueError when the count does not fit (Bézier needs 3n+1, others n+3).
    """
    _basis.check_basis(basis)
    stride = _basis.STRIDE[basis]
    if n_points < 4 or (n_points - 4) % stride:
        need = "3n+1 (4, 7, 10, ...)" if stride == 3 else "at least 4"
        raise ValueError(f"{basis} curve needs {need} control points, got {n_points}")
    return (n_points - 4) // stride + 1


def _prepare(points, t):
    pts = np.asarray(points, dtype=np.float64)
    if pts.ndim < 2:
        raise ValueError(f"control points must have shape (..., n, d), got {pts.shape}")
    batch = pts.shape[:-2]
    n, d = pts.shape[-2:]
    ctrl = np.ascontiguousarray(pts.reshape((-1, n, d)))
    tt = np.asarray(t, dtype=np.float64)
    if tt.ndim <= 1:
        tflat = np.ascontiguousarray(tt.reshape(1, -1))
        tshape = tt.shape
    else:
        if tt.shape[:-1] != batch:
            raise ValueError(f"parameters of shape {tt.shape} do not match the batch "
                             f"shape {batch} of the control points")
        tflat = np.ascontiguousarray(tt.reshape(ctrl.shape[0], -1))
        tshape = tt.shape[-1:]
    return ctrl, tflat, batch, tshape, d


def evaluate_all(points, t, basis="bspline", nd=2):
    """Values and derivatives up to order ``nd`` (0..3) in one pass.

    points: (..., n, d); t: scalar, (m,) shared by all curves, or (..., m) per curve.
    Returns a list of ``nd+1`` arrays, each (..., m, d) float64 (or (..., d) for a
    scalar ``t``): value, first derivative, ... with respect to the global ``t``.
    """
    _basis.check_basis(basis)
    if not 0 <= nd <= 3:
        raise ValueError(f"nd must be 0..3, got {nd}")
    ctrl, tflat, batch, tshape, d = _prepare(points, t)
    segment_count(ctrl.shape[1], basis)
    out = np.empty((nd + 1, ctrl.shape[0], tflat.shape[1], d))
    cubic_eval(ctrl, derivative_matrices(basis, nd), _basis.STRIDE[basis], tflat, out)
    return [o.reshape(batch + tshape + (d,)) for o in out]


def derivative_matrices(basis, nd):
    """(nd+1, 4, 4): the basis matrix of each derivative order 0..nd.

    Order o maps (1, s, s^2, s^3) to the o-th derivatives of the four basis functions:
    column p holds M[:, p+o] * (p+o)! / p!.
    """
    M = _basis.basis_matrix(basis)
    out = np.zeros((nd + 1, 4, 4))
    for o in range(nd + 1):
        for p in range(4 - o):
            out[o, :, p] = M[:, p + o] * np.prod(np.arange(p + 1, p + o + 1))
    return out


def evaluate(points, t, basis="bspline", deriv=0):
    """The curve (``deriv=0``) or its ``deriv``-th derivative (1..3) at ``t``.

    points: (..., n, d) float; t: scalar, (m,) or (..., m). Returns (..., m, d) float64.
    """
    if not 0 <= deriv <= 3:
        raise ValueError(f"deriv must be 0..3, got {deriv}")
    return evaluate_all(points, t, basis, deriv)[deriv]


def close_points(points, basis):
    """Control points of the closed (periodic) version of a B-spline/Catmull-Rom curve.

    ``points``: (..., n, d) with n >= 3. B-spline: appends the first three points
    (n segments). Catmull-Rom: appends the first three points as well, so segment i
    runs from P[i+1] to P[i+2] and the loop passes through every point.
    Bézier curves are closed by making the last control point equal the first.
    """
    pts = np.asarray(points, dtype=np.float64)
    if basis == "bezier":
        raise ValueError("a Bézier curve is closed by repeating its first point last")
    _basis.check_basis(basis)
    if pts.shape[-2] < 3:
        raise ValueError("a closed curve needs at least 3 control points")
    return np.concatenate([pts, pts[..., :3, :]], axis=-2)


def convert_segments(points, src, dst):
    """Per-segment basis change: (..., n, d) points in ``src`` -> (..., nseg, 4, d).

    Each segment's four ``src`` control points become the four ``dst`` control
    points that draw the same cubic (the course's "draw a B-spline with Bézier code").
    """
    pts = np.asarray(points, dtype=np.float64)
    nseg = segment_count(pts.shape[-2], src)
    stride = _basis.STRIDE[src]
    idx = stride * np.arange(nseg)[:, None] + np.arange(4)[None, :]
    groups = pts[..., idx, :]                       # (..., nseg, 4, d)
    return np.einsum("ab,...sbd->...sad", _basis.basis_change(src, dst), groups)


def bspline_to_bezier(points):
    """Uniform cubic B-spline (..., n+3, d) -> piecewise Bézier (..., 3n+1, d), exact."""
    segs = convert_segments(points, "bspline", "bezier")     # (..., nseg, 4, d)
    first = segs[..., :, :3, :].reshape(segs.shape[:-3] + (-1, segs.shape[-1]))
    return np.concatenate([first, segs[..., -1:, 3, :]], axis=-2)


def bezier_to_bspline(points, tol=1e-9):
    """Piecewise Bézier (..., 3n+1, d) -> uniform cubic B-spline (..., n+3, d).

    Exact when the Bézier curve is C2 with uniform parameter spacing (as every
    uniform B-spline is); raises ValueError naming the first joint where it is not,
    with ``tol`` relative to the control polygon's size. For per-segment conversion
    of any curve use ``convert_segments``.
    """
    pts = np.asarray(points, dtype=np.float64)
    nseg = segment_count(pts.shape[-2], "bezier")
    segs = convert_segments(pts, "bezier", "bspline")        # (..., nseg, 4, d)
    out = np.concatenate([segs[..., 0, :3, :], segs[..., :, 3, :]], axis=-2)
    back = bspline_to_bezier(out)
    scale = max(float(np.max(np.abs(pts))), 1e-300)
    err = np.max(np.abs(back - pts), axis=tuple(range(pts.ndim - 2)) + (pts.ndim - 1,))
    bad = np.nonzero(err > tol * scale)[0]
    if bad.size:
        joint = min(int(bad[0]) // 3, nseg - 1)
        raise ValueError(f"piecewise Bézier curve is not C2 near joint {joint} "
                         f"(control point {int(bad[0])}); no uniform B-spline matches it")
    return out
