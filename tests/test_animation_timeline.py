"""Keyframe interpolation against closed forms: linear and smooth-step blends, the
Catmull-Rom spline through the keys (exact on quadratics, central differences for even
spacing), quaternion slerp (half-way, shortest arc) and the Catmull-Rom of rotations about
one axis (the scalar spline of the angles)."""
import math

import numpy as np
import pytest

from raytrace.animation.timeline import (Track, frame_count, frame_time, quat_from_axis_angle,
                                         quat_to_matrix, slerp)


def rot_angle(q0, q1):
    """Angle (degrees) of the rotation taking q0 to q1."""
    return math.degrees(2 * math.acos(min(1.0, abs(float(q0 @ q1)))))


def same_rotation(q0, q1, tol=1e-12):
    return abs(abs(float(q0 @ q1)) - 1.0) < tol


def test_linear_and_smooth_between_two_keys():
    lin = Track([1.0, 3.0], [[0.0, 10.0], [4.0, 30.0]])
    smooth = Track([1.0, 3.0], [[0.0, 10.0], [4.0, 30.0]], "smooth")
    assert np.array_equal(lin(2.0), [2.0, 20.0])
    assert np.allclose(lin(1.5), [1.0, 15.0], rtol=0, atol=1e-15)
    # smooth step u^2 (3 - 2u): 0.15625 at u = 1/4, 1/2 at u = 1/2
    assert np.allclose(smooth(1.5), [4 * 0.15625, 10 + 20 * 0.15625], rtol=0, atol=1e-14)
    assert np.allclose(smooth(2.0), [2.0, 20.0], rtol=0, atol=1e-15)
    # zero velocity at the keys (smooth) but not for linear: one-sided differences
    h = 1e-6
    assert abs(smooth(1.0 + h)[0] - smooth(1.0)[0]) / h < 1e-4
    assert abs(lin(1.0 + h)[0] - lin(1.0)[0]) / h == pytest.approx(2.0, rel=1e-6)


def test_holds_outside_the_keys():
    tr = Track([0.0, 1.0, 2.0], [[1.0], [5.0], [2.0]], "catmull_rom")
    assert tr(-3.0)[0] == 1.0 and tr(7.0)[0] == 2.0
    assert Track([4.0], [[9.0]])(0.0)[0] == 9.0 == Track([4.0], [[9.0]])(10.0)[0]


def test_catmull_rom_passes_through_every_key():
    times = [0.0, 0.3, 1.1, 1.5, 2.75]
    values = [[0.0, 1.0, 2.0], [3.0, -1.0, 0.5], [1.0, 1.0, 1.0], [-2.0, 4.0, 0.0], [0.5, 0.5, 9.0]]
    tr = Track(times, values, "catmull_rom")
    for t, v in zip(times, values):
        assert np.allclose(tr(t), v, rtol=0, atol=1e-13)
    # and is continuous through them (left and right limits agree)
    for t in times[1:-1]:
        assert np.allclose(tr(t - 1e-9), tr(t + 1e-9), atol=1e-7)


def test_catmull_rom_is_exact_on_quadratics_with_uneven_keys():
    """Time-parametrised Catmull-Rom has velocity exact for quadratic data at inner keys,
    so on segments between inner keys it reproduces the quadratic (Hermite with exact
    values and slopes)."""
    f = lambda t: 2.0 * t * t - 3.0 * t + 0.5          # noqa: E731
    times = [0.0, 0.4, 1.3, 1.7, 3.0, 3.2]
    tr = Track(times, [[f(t)] for t in times], "catmull_rom")
    for t in np.linspace(times[1], times[-2], 57):
        assert tr(t)[0] == pytest.approx(f(t), abs=1e-12)
    # negative control: a segment touching an end key uses the reflected phantom, not f
    assert abs(tr(0.2)[0] - f(0.2)) > 1e-3


def test_catmull_rom_even_spacing_is_the_hermite_with_central_differences():
    h = 0.5
    p = np.array([1.0, 4.0, 2.0, 7.0, 3.0])
    tr = Track(np.arange(5) * h, p[:, None], "catmull_rom")
    i = 2                                              # segment from key 2 to key 3
    m1, m2 = (p[3] - p[1]) / (2 * h), (p[4] - p[2]) / (2 * h)
    for u in (0.1, 0.25, 0.5, 0.9):
        h00, h10 = 2 * u ** 3 - 3 * u ** 2 + 1, u ** 3 - 2 * u ** 2 + u
        h01, h11 = -2 * u ** 3 + 3 * u ** 2, u ** 3 - u ** 2
        want = h00 * p[i] + h10 * h * m1 + h01 * p[i + 1] + h11 * h * m2
        assert tr((i + u) * h)[0] == pytest.approx(want, abs=1e-12)


def test_catmull_rom_with_two_keys_is_linear():
    tr = Track([0.0, 2.0], [[1.0, 0.0, 0.0], [3.0, 4.0, -2.0]], "catmull_rom")
    for t in (0.3, 1.0, 1.7):
        assert np.allclose(tr(t), [1.0 + t, 2.0 * t, -t], rtol=0, atol=1e-13)


def test_keys_must_increase():
    with pytest.raises(ValueError):
        Track([0.0, 1.0, 1.0], [[0.0], [1.0], [2.0]])
    with pytest.raises(ValueError):
        Track([0.0, 1.0], [[0.0], [1.0]], "cubic")


def test_quaternion_matrix_and_axis_angle():
    q = quat_from_axis_angle([0, 0, 2], 90)            # axis need not be unit
    assert np.allclose(quat_to_matrix(q) @ [1, 0, 0], [0, 1, 0], atol=1e-15)
    assert np.allclose(quat_to_matrix(quat_from_axis_angle([1, 1, 1], 120)) @ [1, 0, 0], [0, 1, 0],
                       atol=1e-15)
    with pytest.raises(ValueError):
        quat_from_axis_angle([0, 0, 0], 10)


def test_slerp_half_way():
    axis = np.array([1.0, 2.0, -0.5])
    q0, q1 = quat_from_axis_angle(axis, 0), quat_from_axis_angle(axis, 90)
    assert same_rotation(slerp(q0, q1, 0.5), quat_from_axis_angle(axis, 45))
    # any two rotations: the half-way point is half the angle from each end
    a, b = quat_from_axis_angle([0, 1, 0], 30), quat_from_axis_angle([1, 0, 1], 100)
    mid = slerp(a, b, 0.5)
    assert rot_angle(a, mid) == pytest.approx(rot_angle(a, b) / 2, abs=1e-9)
    assert rot_angle(mid, b) == pytest.approx(rot_angle(a, b) / 2, abs=1e-9)
    assert np.linalg.norm(mid) == pytest.approx(1.0, abs=1e-15)
    # extrapolation stays on the arc: u = -1 mirrors q1 through q0
    assert same_rotation(slerp(q0, q1, -1.0), quat_from_axis_angle(axis, -90))


def test_rotation_track_takes_the_short_way():
    """Keys 0 and 270 degrees about y: the short way is -90 degrees, so half-way is -45."""
    tr = Track([0.0, 1.0], [quat_from_axis_angle([0, 1, 0], 0), quat_from_axis_angle([0, 1, 0], 270)],
               rotation=True)
    assert same_rotation(tr(0.5), quat_from_axis_angle([0, 1, 0], -45))


def test_rotation_catmull_rom_about_one_axis_is_the_spline_of_the_angles():
    times = [0.0, 0.5, 1.25, 2.0, 2.4]
    angles = [0.0, 40.0, 130.0, 100.0, 250.0]          # steps below 180 degrees
    axis = [0.3, -1.0, 0.2]
    rot = Track(times, [quat_from_axis_angle(axis, a) for a in angles], "catmull_rom", rotation=True)
    scalar = Track(times, [[a] for a in angles], "catmull_rom")
    for t in np.linspace(-0.2, 2.6, 41):
        assert same_rotation(rot(t), quat_from_axis_angle(axis, scalar(t)[0]), tol=1e-11), t
    smooth_rot = Track(times, [quat_from_axis_angle(axis, a) for a in angles], "smooth", rotation=True)
    smooth = Track(times, [[a] for a in angles], "smooth")
    for t in (0.1, 0.9, 1.6, 2.3):
        assert same_rotation(smooth_rot(t), quat_from_axis_angle(axis, smooth(t)[0]), tol=1e-11)


def test_frame_times_end_exclusive():
    assert frame_count(0.0, 2.0, 24.0) == 48
    assert frame_count(0.0, 2.01, 24.0) == 49
    assert frame_count(1.0, 1.5, 10.0) == 5
    assert frame_time(1.0, 10.0, 4) == pytest.approx(1.4)
