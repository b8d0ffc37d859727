"""Surfaces of revolution and generalized cylinders (sweeps) as triangle meshes.

Profiles are 2D curves ``(x, y)``. Normals follow the course: the profile's *right*
normal ``(y', -x')`` (the negated curve normal ``N = B x T`` with ``B = +z``), so a
profile that runs upwards at x > 0, or a counter-clockwise closed profile such as the
course's ``circ``, gets outward normals. Faces wind counter-clockwise about the normals.

- Surface of revolution: the profile (x >= 0: x is the distance from the axis, y the
  height) turns about the +y axis: ``S(t, theta) = (x cos theta, y, x sin theta)``.
- Sweep: the profile is placed in the normal plane of the sweep curve's frames,
  ``S(t, s) = C(s) + x(t) N(s) + y(t) B(s)`` (the course's generalized cylinder).

Samples that land on each other (a closed profile's ends, a closed sweep's ends,
profile points on the axis) are welded, so a closed profile gives a watertight mesh.
"""
import numpy as np

from .frames import as_3d, curve_frames, fix_seam, is_closed, seam_angle, unit_rows
from .mesh import Mesh, fill_missing_normals, grid_faces, weld


def _profile(points, tangents):
    p = np.asarray(points, dtype=np.float64)
    t = np.asarray(tangents, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] < 2 or p.shape != t.shape or len(p) < 2:
        raise ValueError(f"profile needs (m, 2) points and tangents with m >= 2, got "
                         f"{p.shape} and {t.shape}")
    if p.shape[1] == 3:
        if np.any(p[:, 2] != 0) or np.any(t[:, 2] != 0):
            raise ValueError("profile must be a 2D curve (z = 0)")
        p, t = p[:, :2], t[:, :2]
    return np.ascontiguousarray(p), unit_rows(t)


def revolve(points, tangents, steps, weld_tol=1e-9):
    """Surface of revolution of a sampled profile about the y axis.

    points: (m, 2) profile samples (x >= 0); tangents: (m, 2) profile derivatives
    (direction only); steps: number of angular intervals (>= 3). weld_tol: relative
    tolerance for merging coincident vertices. Returns a ``Mesh``.
    """
    p, t = _profile(points, tangents)
    steps = int(steps)
    if steps < 3:
        raise ValueError(f"a surface of revolution needs steps >= 3, got {steps}")
    size = max(float(np.ptp(p, axis=0).max()), float(np.abs(p).max()), 1e-300)
    if np.any(p[:, 0] < -weld_tol * size):
        k = int(np.argmax(p[:, 0] < -weld_tol * size))
        raise ValueError(f"profile sample {k} has x = {p[k, 0]:.6g} < 0; a profile must "
                         "stay on the x >= 0 side of the axis")
    m = len(p)
    theta = 2.0 * np.pi * np.arange(steps) / steps
    c, s = np.cos(theta), np.sin(theta)
    V = np.empty((m, steps + 1, 3))
    V[:, :steps, 0] = p[:, :1] * c
    V[:, :steps, 1] = p[:, 1:2]
    V[:, :steps, 2] = p[:, :1] * s
    n2 = np.stack([t[:, 1], -t[:, 0]], axis=1)          # right normal of the profile
    N = np.empty_like(V)
    N[:, :steps, 0] = n2[:, :1] * c
    N[:, :steps, 1] = n2[:, 1:2]
    N[:, :steps, 2] = n2[:, :1] * s
    V[:, steps] = V[:, 0]                               # the seam column, exact copy
    N[:, steps] = N[:, 0]
    faces = grid_faces(m - 1, steps)
    mesh = weld(V.reshape(-1, 3), N.reshape(-1, 3), faces, weld_tol * size)
    return Mesh(mesh.vertices, mesh.faces,
                fill_missing_normals(mesh.vertices, mesh.faces, mesh.normals))


def sweep(profile_points, profile_tangents, path_points, path_tangents, path_d1=None,
          path_d2=None, method="rmf", closed=None, initial_normal=None, weld_tol=1e-9):
    """Generalized cylinder: a 2D profile swept along a 2D or 3D path.

    profile_points, profile_tangents: (m, 2); path_points, path_tangents: (k, 2|3)
    path samples and their (non-zero) tangents; path_d1, path_d2: (k, 2|3) optional
    first and second derivatives. method: frame method ("rmf" or "course"); closed:
    None detects a closed path (its frames then close without a jump, see
    ``frames.fix_seam``); initial_normal: optional first frame normal.
    Normals are ``S_t x S_s`` normalised, with ``S_s`` from the path's derivatives and
    the frames' rotation (exact for exact rotation-minimizing frames); without
    d1/d2 (or where S_t x S_s vanishes) they are the profile's right normal placed in
    the frame, the course's choice. Returns a ``Mesh``.
    """
    p, t = _profile(profile_points, profile_tangents)
    C = as_3d(path_points)
    T0 = as_3d(path_tangents)
    exact = path_d1 is not None and path_d2 is not None
    D1 = as_3d(path_d1) if exact else T0
    D2 = as_3d(path_d2) if exact else np.zeros_like(T0)
    if not (len(C) == len(T0) == len(D1) == len(D2)) or len(C) < 2:
        raise ValueError("path points, tangents, d1 and d2 must have the same length >= 2")
    T, N, B = curve_frames(C, T0, method, closed=False, initial_normal=initial_normal)
    if closed is None:
        closed = is_closed(C, T0)
    omega = np.zeros(len(C))
    speed = np.linalg.norm(D1, axis=1)
    if closed:
        alpha = seam_angle(T, N)
        N, B, _, _ = fix_seam(C, T, N, B)
        length = np.sum(np.linalg.norm(np.diff(C, axis=0), axis=1))
        omega = alpha * speed / length if length > 0 else omega
    # frame derivatives along the path: rotation-minimizing part plus seam twist
    with np.errstate(divide="ignore", invalid="ignore"):
        Tp = (D2 - np.sum(D2 * T, axis=1)[:, None] * T) / speed[:, None]
    Tp = np.nan_to_num(Tp)
    Np = -np.sum(Tp * N, axis=1)[:, None] * T + omega[:, None] * B
    Bp = -np.sum(Tp * B, axis=1)[:, None] * T - omega[:, None] * N
    x, y = p[:, 0][:, None, None], p[:, 1][:, None, None]
    V = C[None] + x * N[None] + y * B[None]                         # (m, k, 3)
    St = t[:, 0][:, None, None] * N[None] + t[:, 1][:, None, None] * B[None]
    Ss = D1[None] + x * Np[None] + y * Bp[None]
    nrm = np.cross(St, Ss)
    length = np.linalg.norm(nrm, axis=2)
    fallback = unit_rows(t[:, 1][:, None, None] * N[None] - t[:, 0][:, None, None] * B[None])
    size = max(float(np.ptp(V.reshape(-1, 3), axis=0).max()), 1e-300)
    bad = (length <= 1e-12 * size * np.maximum(speed[None, :], 1e-300)) | (not exact)
    nrm = np.where(bad[..., None], fallback, nrm / np.maximum(length, 1e-300)[..., None])
    m, k = V.shape[:2]
    faces = grid_faces(m - 1, k - 1)
    mesh = weld(V.reshape(-1, 3), nrm.reshape(-1, 3), faces, weld_tol * size)
    return Mesh(mesh.vertices, mesh.faces,
                fill_missing_normals(mesh.vertices, mesh.faces, mesh.normals))


def surface_of_revolution(profile, steps=32, samples=16, weld_tol=1e-9):
    """Revolve a curve object (``Curve``, ``BSplineCurve``, ``Circle``) with ``samples``
    intervals per piece and ``steps`` angular intervals. Returns a ``Mesh``."""
    if profile.dim != 2:
        raise ValueError("the profile of a surface of revolution must be a 2D curve")
    s = profile.sample(samples)
    return revolve(s.points, s.tangents, steps, weld_tol)


def generalized_cylinder(profile, path, profile_samples=16, path_samples=16,
                         method="rmf", closed=None, weld_tol=1e-9):
    """Sweep a 2D curve object along a 2D/3D curve object. Returns a ``Mesh``."""
    if profile.dim != 2:
        raise ValueError("the profile of a generalized cylinder must be a 2D curve")
    ps = profile.sample(profile_samples)
    cs = path.sample(path_samples)
    return sweep(ps.points, ps.tangents, cs.points, cs.tangents, cs.d1, cs.d2, method,
                 closed, weld_tol=weld_tol)
