"""curves.frames: orthonormal, flip-free frames, closed-curve seams, course files."""
import numpy as np
import pytest
from conftest import shared_path

from curves import read_spline
from curves.curve import Circle, Curve
from curves.frames import curve_frames, frames_2d, is_closed, seam_angle

COURSE_CURVES = ["curve.spline", "polybezier.spline", "polybspline.spline", "artifact1.spline"]


def angles(a, b):
    """Angles between unit rows, accurate for small angles."""
    return 2 * np.arcsin(np.clip(np.linalg.norm(a - b, axis=1) / 2, 0, 1))


def frame_steps(T, N, B):
    """Rotation angle between consecutive frames (radians), (m-1,)."""
    F = np.stack([T, N, B], -1)
    R = np.einsum("kij,kil->kjl", F[:-1], F[1:])
    # |R - I|_F = 2 sqrt(2) sin(angle / 2): accurate for small angles, unlike the trace
    d = np.linalg.norm(R - np.eye(3), axis=(1, 2))
    return 2 * np.arcsin(np.clip(d / (2 * np.sqrt(2)), 0, 1))


def check_frames(T, N, B, tol=1e-12):
    for v in (T, N, B):
        np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1, rtol=0, atol=tol)
    assert np.max(np.abs(np.sum(T * N, axis=1))) < tol
    np.testing.assert_allclose(np.cross(T, N), B, rtol=0, atol=tol)


@pytest.mark.parametrize("name", COURSE_CURVES)
@pytest.mark.parametrize("method", ["rmf", "course"])
def test_course_files_frames_orthonormal_and_continuous(name, method):
    sf = read_spline(shared_path("course", "a1", name))
    s = sf.curve().sample(64)
    T, N, B = s.frames(method)
    check_frames(T, N, B)
    turn = angles(T[1:], T[:-1])
    # no flips, continuous: each frame turns no more than the tangent does (so frames
    # are as continuous as the tangent); the course recurrence stays within 1% of that.
    # (polybezier has a real corner where the tangent turns by 172 degrees.)
    slack = 1e-6 if method == "rmf" else 0.01
    assert np.all(frame_steps(T, N, B) <= turn * (1 + slack) + 1e-9)
    planar = np.all(sf.points[:, 2] == 0) if sf.points.shape[1] == 3 else True
    if planar:           # flat curves keep B = +z and N = the left normal, like the course
        np.testing.assert_allclose(B, np.tile([0, 0, 1.0], (len(B), 1)), atol=1e-12)


def test_closed_course_curve_has_no_seam():
    sf = read_spline(shared_path("course", "a1", "artifact1.spline"))
    s = sf.curve().sample(32)
    assert is_closed(s.points, s.tangents)
    T, N, B = s.frames()
    check_frames(T, N, B)
    np.testing.assert_allclose(N[-1], N[0], rtol=0, atol=1e-2)      # the 0.3 degree corner


def trefoil_bspline(n=12):
    a = 2 * np.pi * np.arange(n) / n
    pts = np.stack([np.sin(a) + 2 * np.sin(2 * a), np.cos(a) - 2 * np.cos(2 * a), -np.sin(3 * a)], 1)
    return Curve(pts, "bspline", closed=True)


@pytest.mark.parametrize("method", ["rmf", "course"])
def test_closed_space_curve_seam_is_spread_along_the_loop(method):
    s = trefoil_bspline().sample(40)
    T, N0, _ = curve_frames(s.points, s.tangents, method, closed=False)
    alpha = seam_angle(T, N0)
    assert abs(alpha) > 0.05                      # a real mismatch to fix
    T, N, B = curve_frames(s.points, s.tangents, method)
    check_frames(T, N, B)
    np.testing.assert_allclose(N[-1], N[0], rtol=0, atol=1e-15)
    steps = frame_steps(T, N, B)
    turn = angles(T[1:], T[:-1])
    # every step turns at most the transported turn plus its share of the seam angle
    share = abs(alpha) * np.linalg.norm(np.diff(s.points, axis=0), axis=1) / \
        np.sum(np.linalg.norm(np.diff(s.points, axis=0), axis=1))
    slack = 1e-6 if method == "rmf" else 0.01
    assert np.all(steps <= turn * (1 + slack) + share + 1e-9)


def test_double_reflection_matches_the_exact_rmf_of_a_helix():
    r, c, m = 1.0, 0.4, 801
    t = np.linspace(0, 4 * np.pi, m)
    P = np.stack([r * np.cos(t), r * np.sin(t), c * t], 1)
    D = np.stack([-r * np.sin(t), r * np.cos(t), np.full(m, c)], 1)
    w = np.hypot(r, c)
    # Frenet frame of the helix and its torsion; the RMF turns against the torsion
    Tf = D / w
    Nf = np.stack([-np.cos(t), -np.sin(t), np.zeros(m)], 1)
    Bf = np.cross(Tf, Nf)
    tau = c / w ** 2
    theta = -tau * w * t                          # -integral of torsion ds
    exact = np.cos(theta)[:, None] * Nf + np.sin(theta)[:, None] * Bf
    T, N, B = curve_frames(P, D, "rmf", closed=False, initial_normal=Nf[0])
    assert np.max(np.linalg.norm(N - exact, axis=1)) < 1e-6
    # the course recurrence is a first-order version of the same frames
    T, Nc, B = curve_frames(P, D, "course", closed=False, initial_normal=Nf[0])
    assert np.max(np.linalg.norm(Nc - exact, axis=1)) < 0.05


def test_frames_2d_and_circle():
    s = Circle(2.0).sample(16)
    T, N = frames_2d(s.tangents)
    np.testing.assert_allclose(N, -s.points / 2.0, atol=1e-12)       # left normal: inward (CCW)
    T3, N3, B3 = s.frames()
    np.testing.assert_allclose(N3[:, :2], N, atol=1e-12)
    np.testing.assert_allclose(B3[:, 2], 1, atol=1e-12)


def test_zero_first_derivative_uses_the_second():
    # a Bézier segment whose first and last control points are doubled: d1 = 0 at the ends
    P = np.array([[0, 0, 0], [0, 0, 0], [1, 1, 0], [2, 0, 0], [3, 1, 0], [4, 1, 0], [4, 1, 0]], float)
    s = Curve(P, "bezier").sample(10)
    assert np.linalg.norm(s.d1[0]) == 0 and np.linalg.norm(s.d1[-1]) == 0
    np.testing.assert_allclose(s.tangents[0], np.array([1, 1, 0]) / np.sqrt(2), atol=1e-12)
    np.testing.assert_allclose(s.tangents[-1], [1, 0, 0], atol=1e-12)
    T, N, B = s.frames()
    assert np.all(np.isfinite(N))


def test_bad_frame_input():
    with pytest.raises(ValueError, match="unknown frame method"):
        curve_frames(np.zeros((3, 3)), np.ones((3, 3)), "frenet")
    with pytest.raises(ValueError, match="zero tangent"):
        curve_frames(np.zeros((3, 3)), np.zeros((3, 3)))
