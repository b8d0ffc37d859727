"""Keyframed animation: channels of translations, rotations or scales sampled at any time.

A :class:`Channel` animates one property of one joint, as glTF does:
``path`` is ``"translation"`` (values (K,3)), ``"rotation"`` (values (K,4), quaternions
(w, x, y, z)) or ``"scale"`` (values (K,3)); ``times`` (K,) seconds, strictly increasing.
Interpolation (glTF names):

- ``LINEAR``: lerp for vectors, shortest-arc slerp for rotations;
- ``STEP``: hold the value of the last key at or before t;
- ``CUBICSPLINE``: Hermite spline; ``values`` is then (K, 3, C) with rows
  (in-tangent, value, out-tangent) per key, tangents in units per second.

Before the first key a channel holds its first value, after the last key its last value
(or wraps, with ``loop=True`` in :meth:`Animation.sample`).
"""
from dataclasses import dataclass, field

import numpy as np

from .errors import SkinningError
from .rotations import quat_normalize, slerp

PATH_SIZES = {"translation": 3, "rotation": 4, "scale": 3}
INTERPOLATIONS = ("LINEAR", "STEP", "CUBICSPLINE")


@dataclass
class Channel:
    joint: int
    path: str
    times: np.ndarray
    values: np.ndarray
    interpolation: str = "LINEAR"

    def __post_init__(self):
        if self.path not in PATH_SIZES:
            raise SkinningError(f"channel: path must be one of {list(PATH_SIZES)}, got {self.path!r}")
        if self.interpolation not in INTERPOLATIONS:
            raise SkinningError(f"channel: interpolation must be one of {INTERPOLATIONS}, "
                                f"got {self.interpolation!r}")
        self.times = np.asarray(self.times, dtype=np.float64).ravel()
        self.values = np.asarray(self.values, dtype=np.float64)
        c = PATH_SIZES[self.path]
        k = self.times.shape[0]
        want = (k, 3, c) if self.interpolation == "CUBICSPLINE" else (k, c)
        if k == 0 or self.values.shape != want:
            raise SkinningError(f"channel (joint {self.joint} {self.path}): expected values of "
                                f"shape {want} for {k} keys, got {self.values.shape}")
        if np.any(np.diff(self.times) <= 0.0):
            raise SkinningError(f"channel (joint {self.joint} {self.path}): key times must "
                                "strictly increase")

    def sample(self, t):
        """Value of the channel at time ``t`` (seconds), shape (3,) or (4,)."""
        times, v = self.times, self.values
        cubic = self.interpolation == "CUBICSPLINE"
        key_value = (lambda i: v[i, 1]) if cubic else (lambda i: v[i])  # noqa: E731
        if t <= times[0] or times.shape[0] == 1:
            out = key_value(0)
        elif t >= times[-1]:
            out = key_value(-1)
        else:
            i = int(np.searchsorted(times, t, side="right")) - 1
            dt = times[i + 1] - times[i]
            u = (t - times[i]) / dt
            if self.interpolation == "STEP":
                out = v[i]
            elif cubic:
                u2, u3 = u * u, u * u * u
                out = ((2 * u3 - 3 * u2 + 1) * v[i, 1] + (u3 - 2 * u2 + u) * dt * v[i, 2]
                       + (-2 * u3 + 3 * u2) * v[i + 1, 1] + (u3 - u2) * dt * v[i + 1, 0])
            elif self.path == "rotation":
                out = slerp(v[i], v[i + 1], u)
            else:
                out = (1.0 - u) * v[i] + u * v[i + 1]
        out = np.array(out, dtype=np.float64)
        if self.path != "rotation":
            return out
        try:
            return quat_normalize(out)
        except ValueError:      # cubic-spline tangents that carry the value through zero
            raise SkinningError(f"channel (joint {self.joint} rotation): at time {t:g} the "
                                "interpolated quaternion is zero or not finite") from None


@dataclass
class Animation:
    """A named set of channels. ``start`` / ``end``: first and last key time of all channels."""

    name: str
    channels: list = field(default_factory=list)

    @property
    def start(self):
        return min((c.times[0] for c in self.channels), default=0.0)

    @property
    def end(self):
        return max((c.times[-1] for c in self.channels), default=0.0)

    def sample(self, skeleton, time, loop=False, pose=None):
        """The :class:`~skinning.skeleton.Pose` at ``time`` seconds.

        Joints and properties without a channel keep their value in ``pose`` (default: the
        skeleton's rest pose). ``loop=True`` wraps ``time`` into [start, end).
        """
        t = float(time)
        if not np.isfinite(t):
            raise SkinningError(f"animation {self.name!r}: time must be finite, got {time!r}")
        if loop and self.end > self.start:
            t = self.start + (t - self.start) % (self.end - self.start)
        out = skeleton.rest_pose() if pose is None else pose.copy()
        target = {"translation": out.translations, "rotation": out.rotations,
                  "scale": out.scales}
        for ch in self.channels:
            if not 0 <= ch.joint < skeleton.num_joints:
                raise SkinningError(f"animation {self.name!r}: channel targets joint {ch.joint}, "
                                    f"skeleton has {skeleton.num_joints}")
            target[ch.path][ch.joint] = ch.sample(t)
        return out
