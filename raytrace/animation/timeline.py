"""Keyframe tracks: a value as a function of time, interpolated between keys.

A track holds keys ``(t_i, v_i)`` with strictly increasing times (seconds) and one
interpolation for the whole track:

- ``linear``: ``v_i + u (v_{i+1} - v_i)`` with ``u = (t - t_i) / (t_{i+1} - t_i)``;
- ``smooth``: the same with ``u`` replaced by the smooth step ``u^2 (3 - 2u)`` (eases in
  and out of every key: zero velocity at the keys);
- ``catmull_rom``: the Catmull-Rom spline through the keys, parametrised by the key times
  (Barry and Goldman's pyramid of linear blends, so uneven key spacing is allowed). Its
  velocity at an inner key ``i`` is ``(v_i - v_{i-1}) / (t_i - t_{i-1}) - (v_{i+1} -
  v_{i-1}) / (t_{i+1} - t_{i-1}) + (v_{i+1} - v_i) / (t_{i+1} - t_i)``: the central
  difference ``(v_{i+1} - v_{i-1}) / (2h)`` for even spacing, and exact for values that
  are a quadratic function of time. Beyond the end keys the curve continues straight:
  phantom keys are the end keys reflected (``2 v_0 - v_1`` at ``2 t_0 - t_1``).

Before the first key a track holds the first value, after the last key the last value.

Rotation tracks hold unit quaternions ``(w, x, y, z)`` and blend them by spherical linear
interpolation (slerp) instead of the linear blend: ``linear`` is slerp, ``smooth`` slerp
with the smooth step, ``catmull_rom`` the same pyramid of slerps (a smooth curve on the
rotation sphere through every key). Consecutive keys are put on the same hemisphere
(a key is negated when its dot product with the key before is negative: the same
rotation), so each segment turns the short way (less than 180 degrees): a longer turn
needs more keys. Rotating about one fixed axis, every interpolation gives the rotation by
the same interpolation of the angles.
"""
import bisect
import math

import numpy as np

from ..scene.animation import INTERPOLATIONS

_NEARLY_PARALLEL = 1.0 - 1e-12      # slerp falls back to the linear blend beyond this dot


# ------------------------------------------------------------------------- quaternions
def quat_from_axis_angle(axis, degrees):
    """Unit quaternion (w, x, y, z) of a rotation by ``degrees`` about ``axis`` (any
    non-zero length; right-hand rule)."""
    a = np.asarray(axis, np.float64)
    n = math.sqrt(float(a @ a))
    if not n > 0.0:
        raise ValueError("the rotation axis must not be zero")
    half = math.radians(degrees) / 2.0
    s = math.sin(half) / n
    return np.array([math.cos(half), a[0] * s, a[1] * s, a[2] * s])


def quat_to_matrix(q):
    """(3, 3) rotation matrix of a unit quaternion (w, x, y, z), for column vectors."""
    w, x, y, z = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def slerp(q0, q1, u):
    """Point at ``u`` on the great arc from the unit quaternion ``q0`` to ``q1`` as given
    (the short way round when ``q0 . q1 >= 0``: negate one end first otherwise); ``u``
    outside [0, 1] extrapolates along the same arc. Rotating about one axis, slerp of
    the angles a and b is the rotation by ``a + u (b - a)``."""
    d = float(q0 @ q1)
    s = math.sqrt(max(0.0, 1.0 - d * d))
    if abs(d) > _NEARLY_PARALLEL or s == 0.0:
        q = q0 + u * (q1 - q0)
    else:
        theta = math.atan2(s, d)
        q = (math.sin((1.0 - u) * theta) / s) * q0 + (math.sin(u * theta) / s) * q1
    return q / math.sqrt(float(q @ q))


def _lerp(a, b, u):
    return a + u * (b - a)


# ------------------------------------------------------------------------------ tracks
class Track:
    """Keys ``times`` (k,) strictly increasing and ``values`` (k, d); call with a time
    to get the interpolated (d,) float64 value (see the module docstring)."""

    def __init__(self, times, values, interpolation="linear", rotation=False):
        if interpolation not in INTERPOLATIONS:
            raise ValueError(f"interpolation must be one of {', '.join(INTERPOLATIONS)}")
        self.times = [float(t) for t in times]
        if not self.times or any(b <= a for a, b in zip(self.times, self.times[1:])):
            raise ValueError("key times must be strictly increasing")
        values = np.array(values, np.float64).reshape(len(self.times), -1)
        if rotation:
            values = values / np.linalg.norm(values, axis=1, keepdims=True)
            for i in range(1, len(values)):              # same hemisphere as the key before
                if values[i] @ values[i - 1] < 0.0:
                    values[i] = -values[i]
        self.values = values
        self.interpolation = interpolation
        self.rotation = rotation
        self._mix = slerp if rotation else _lerp

    def __call__(self, t):
        times, values = self.times, self.values
        if t <= times[0] or len(times) == 1:
            return values[0].copy()
        if t >= times[-1]:
            return values[-1].copy()
        i = bisect.bisect_right(times, t) - 1            # times[i] <= t < times[i + 1]
        t0, t1 = times[i], times[i + 1]
        u = (t - t0) / (t1 - t0)
        if self.interpolation == "linear":
            return self._mix(values[i], values[i + 1], u)
        if self.interpolation == "smooth":
            return self._mix(values[i], values[i + 1], u * u * (3.0 - 2.0 * u))
        return self._catmull_rom(i, t)

    def _key(self, i):
        """Key ``i`` with the reflected phantoms at i = -1 and i = k."""
        times, values, k = self.times, self.values, len(self.times)
        if i < 0:
            return 2.0 * times[0] - times[1], self._mix(values[0], values[1], -1.0)
        if i >= k:
            return 2.0 * times[-1] - times[-2], self._mix(values[-1], values[-2], -1.0)
        return times[i], values[i]

    def _catmull_rom(self, i, t):
        """Barry-Goldman pyramid on keys i-1 .. i+2 at t in [t_i, t_{i+1}]."""
        (t0, p0), (t1, p1), (t2, p2), (t3, p3) = (self._key(j) for j in range(i - 1, i + 3))
        mix = self._mix
        a1 = mix(p0, p1, (t - t0) / (t1 - t0))
        a2 = mix(p1, p2, (t - t1) / (t2 - t1))
        a3 = mix(p2, p3, (t - t2) / (t3 - t2))
        b1 = mix(a1, a2, (t - t0) / (t2 - t0))
        b2 = mix(a2, a3, (t - t1) / (t3 - t1))
        return mix(b1, b2, (t - t1) / (t2 - t1))

    @property
    def constant(self):
        """True when every key holds the same value (the track never changes)."""
        return bool(np.all(self.values == self.values[0]))


def frame_count(start, end, fps):
    """Frames of an animation: times ``start + k / fps`` for k = 0, 1, ... while the time
    is before ``end`` (end exclusive; a time within 1e-9 frames of ``end`` counts as
    ``end``)."""
    return max(1, math.ceil((end - start) * fps - 1e-9))


def frame_time(start, fps, k):
    """Scene time (seconds) of frame ``k``: ``start + k / fps``."""
    return start + k / fps
