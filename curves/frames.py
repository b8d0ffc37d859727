"""Moving frames (T, N, B) along sampled curves, without flips.

Frames are right-handed and orthonormal: ``B = T x N``. Two methods:

- ``"rmf"`` (default): rotation-minimizing (parallel-transport) frames by double
  reflection; they twist as little as the curve allows.
- ``"course"``: the course recurrence ``N_i = normalize(B_{i-1} x T_i)``,
  ``B_i = normalize(T_i x N_i)``, a first-order approximation of the same frames.

For a closed curve (last sample equals the first, with the same tangent) the frame
that comes back around differs from the first by a rotation ``alpha`` about the
tangent. ``fix_seam`` spreads ``-alpha`` over the loop in proportion to chord length,
so the last frame equals the first and no sample jumps.

2D curves (points (m, 2)) are treated as lying in the plane z = 0: ``N`` is the
tangent turned +90 degrees (left normal) and ``B = (0, 0, 1)``, as in the course.
"""
import numpy as np

from ._kernels_frames import course_recurrence, rmf_double_reflection

METHODS = ("rmf", "course")


def as_3d(points):
    """(m, 2) or (m, 3) -> (m, 3) float64 (2D points get z = 0)."""
    p = np.asarray(points, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] not in (2, 3):
        raise ValueError(f"expected (m, 2) or (m, 3) points, got shape {p.shape}")
    if p.shape[1] == 2:
        p = np.concatenate([p, np.zeros((p.shape[0], 1))], axis=1)
    return np.ascontiguousarray(p)


def unit_rows(v):
    """Rows of ``v`` scaled to unit length (zero rows stay zero)."""
    v = np.asarray(v, dtype=np.float64)
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.divide(v, n, out=np.zeros_like(v), where=n > 0)


def plane_normal(points, tol=1e-9):
    """Unit normal of the plane holding ``points`` (m, 3), or None if not planar.

    A straight line is not planar in this sense (its plane is not unique): None.
    The sign makes the first non-negligible of the z, y, x components positive, so a
    curve in z = 0 gets (0, 0, 1).
    """
    p = as_3d(points)
    c = p - p.mean(axis=0)
    scale = np.max(np.abs(c)) if c.size else 0.0
    if scale == 0.0:
        return None
    _, s, vt = np.linalg.svd(c / scale, full_matrices=False)
    if s.size < 3 or s[1] <= tol * s[0] or s[2] > tol * s[0]:
        return None
    n = vt[2]
    for axis in (2, 1, 0):
        if abs(n[axis]) > 1e-12:
            return n if n[axis] > 0 else -n
    return n


def _initial_normal(points, T0, initial_normal):
    if initial_normal is not None:
        r = np.asarray(initial_normal, dtype=np.float64)
        r = r - np.dot(r, T0) * T0
        if np.linalg.norm(r) < 1e-12:
            raise ValueError("initial_normal is parallel to the first tangent")
        return r / np.linalg.norm(r)
    b = plane_normal(points)
    if b is None or abs(np.dot(b, T0)) > 1e-6:
        # the course's choice: B0 = +z, or +y when the curve starts along z
        b = np.array([0.0, 0.0, 1.0]) if abs(T0[2]) < 0.9 else np.array([0.0, 1.0, 0.0])
    n = np.cross(b, T0)
    return n / np.linalg.norm(n)


def is_closed(points, tangents, tol=1e-9, max_corner=1e-2):
    """True when the last sample equals the first (to ``tol`` times the curve's size)
    and the tangents there agree to ``max_corner`` radians (course files such as
    artifact1.spline close with a 0.3 degree corner)."""
    p = as_3d(points)
    t = unit_rows(as_3d(tangents))
    if len(p) < 3:
        return False
    scale = max(np.ptp(p, axis=0).max(), 1e-300)
    return (np.linalg.norm(p[-1] - p[0]) <= tol * scale
            and float(np.dot(t[-1], t[0])) >= np.cos(max_corner))


def _rotate_about(v, axis, angle):
    """Rodrigues rotation of rows v about unit rows axis by angles (m,)."""
    c = np.cos(angle)[:, None]
    s = np.sin(angle)[:, None]
    along = np.sum(axis * v, axis=1)[:, None] * (1 - c)
    return v * c + np.cross(axis, v) * s + axis * along


def seam_angle(T, N):
    """Signed angle (radians) about T[0] that turns N[-1] into N[0]."""
    n_end = N[-1] - np.dot(N[-1], T[0]) * T[0]
    return float(np.arctan2(np.dot(np.cross(n_end, N[0]), T[0]), np.dot(n_end, N[0])))


def fix_seam(points, T, N, B):
    """Spread the closing twist of a closed curve's frames along its length.

    points, T, N, B: (m, 3). Returns (N', B', alpha, fraction) where alpha is the
    corrected angle and fraction (m,) the cumulative chord-length fraction; frame i
    is turned by ``alpha * fraction[i]`` about T[i], and the last normal is set to the
    first one made perpendicular to the last tangent (exactly the first frame when the
    tangents agree).
    """
    p = as_3d(points)
    alpha = seam_angle(T, N)
    seg = np.linalg.norm(np.diff(p, axis=0), axis=1)
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    frac = cum / cum[-1] if cum[-1] > 0 else np.linspace(0.0, 1.0, len(p))
    N2 = unit_rows(_rotate_about(N, T, alpha * frac))
    B2 = np.cross(T, N2)
    n_last = N2[0] - np.dot(N2[0], T[-1]) * T[-1]
    N2[-1] = n_last / np.linalg.norm(n_last)
    B2[-1] = np.cross(T[-1], N2[-1])
    return N2, B2, alpha, frac


def curve_frames(points, tangents, method="rmf", closed=None, initial_normal=None):
    """Frames along a sampled curve.

    points: (m, 2|3) samples in order; tangents: (m, 2|3) derivatives there (any
    length, non-zero: ``Curve.sample`` gives limit directions where the derivative
    vanishes); method: "rmf" or "course"; closed: None (detect), True or
    False; initial_normal: (3,) optional first normal (projected perpendicular to
    the first tangent). Default first frame: for a planar curve B is the plane's
    normal (so 2D curves get B = +z and N the left normal), otherwise the course's
    B0 = +z.
    Returns (T, N, B), each (m, 3) float64 with unit rows, B = T x N.
    """
    if method not in METHODS:
        raise ValueError(f"unknown frame method {method!r}; expected 'rmf' or 'course'")
    p = as_3d(points)
    T = unit_rows(as_3d(tangents))
    if len(p) != len(T) or len(p) < 1:
        raise ValueError("points and tangents must have the same number of rows (>= 1)")
    zero = np.flatnonzero(~(np.linalg.norm(T, axis=1) > 0))
    if zero.size:
        raise ValueError(f"zero tangent at sample {zero[0]}: the curve stops there "
                         "(do control points coincide?)")
    n0 = _initial_normal(p, T[0], initial_normal)
    N = np.empty_like(p)
    B = np.empty_like(p)
    if method == "rmf":
        rmf_double_reflection(p, T, n0, N, B)
    else:
        course_recurrence(T, np.cross(T[0], n0), N, B)
    if closed is None:
        closed = is_closed(p, T)
    elif closed and not is_closed(p, T):
        raise ValueError("closed=True but the curve does not end where it starts with "
                         "the same tangent")
    if closed:
        N, B, _, _ = fix_seam(p, T, N, B)
    return T, N, B


def frames_2d(tangents):
    """2D frames: unit tangents (m, 2) and left normals (m, 2) (T turned +90 deg)."""
    t = np.asarray(tangents, dtype=np.float64)
    if t.ndim != 2 or t.shape[1] != 2:
        raise ValueError(f"expected (m, 2) tangents, got {t.shape}")
    T = unit_rows(t)
    return T, np.stack([-T[:, 1], T[:, 0]], axis=1)
