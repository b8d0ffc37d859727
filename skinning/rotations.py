"""Rotations: Euler angles, unit quaternions, rotation matrices (numpy, vectorised).

Conventions used everywhere in :mod:`skinning`:

- Quaternions are ``(..., 4) float64`` arrays in **(w, x, y, z)** order, the order of
  ``glm.quat(w, x, y, z)``. glTF stores ``[x, y, z, w]``; convert with
  :func:`quat_from_xyzw` / :func:`quat_to_xyzw`.
- Euler angles are ``(..., 3)`` arrays ``(rx, ry, rz)`` in **radians** (pass
  ``degrees=True`` for degrees). The rotation is ``R = Rz(rz) @ Ry(ry) @ Rx(rx)`` acting on
  column vectors: x first, then y, then z, all about the fixed (parent) axes. This is
  exactly ``glm.quat(glm.vec3(rx, ry, rz))``, which the course uses.
- Matrices act on column vectors, ``p' = R @ p``; right-handed, positive angles turn
  counter-clockwise looking down the axis towards the origin.
"""
import numpy as np

IDENTITY_QUAT = np.array([1.0, 0.0, 0.0, 0.0])


def _as_float(a, last, name):
    a = np.asarray(a, dtype=np.float64)
    if a.shape[-1:] != (last,):
        raise ValueError(f"{name}: expected shape (..., {last}), got {a.shape}")
    return a


def quat_normalize(q):
    """Unit quaternions ``(..., 4)``; raises ``ValueError`` for a zero quaternion."""
    q = _as_float(q, 4, "quaternion")
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    if np.any(n == 0.0) or not np.all(np.isfinite(n)):
        # finite entries whose squares overflow: scale by the largest entry first
        big = np.max(np.abs(q), axis=-1, keepdims=True)
        if np.any(big == 0.0) or not np.all(np.isfinite(big)):
            raise ValueError("quaternion: zero or non-finite quaternion cannot be normalised")
        q = q / big
        n = np.linalg.norm(q, axis=-1, keepdims=True)
    return q / n


def quat_from_xyzw(q):
    """glTF order ``[x, y, z, w]`` -> our ``(w, x, y, z)``, shape ``(..., 4)``."""
    q = _as_float(q, 4, "quaternion")
    return np.concatenate([q[..., 3:4], q[..., 0:3]], axis=-1)


def quat_to_xyzw(q):
    """Our ``(w, x, y, z)`` -> glTF order ``[x, y, z, w]``, shape ``(..., 4)``."""
    q = _as_float(q, 4, "quaternion")
    return np.concatenate([q[..., 1:4], q[..., 0:1]], axis=-1)


def quat_multiply(a, b):
    """Hamilton product ``a * b`` (apply ``b`` first, then ``a``), shapes broadcast."""
    a = _as_float(a, 4, "quaternion")
    b = _as_float(b, 4, "quaternion")
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz,
                     aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def euler_to_quat(angles, degrees=False):
    """Euler angles ``(..., 3)`` ``(rx, ry, rz)`` -> unit quaternions ``(..., 4)`` (w, x, y, z).

    ``R = Rz(rz) Ry(ry) Rx(rx)``, identical to ``glm.quat(glm.vec3(rx, ry, rz))``.
    """
    a = _as_float(angles, 3, "euler angles")
    if degrees:
        a = np.radians(a)
    c = np.cos(0.5 * a)
    s = np.sin(0.5 * a)
    cx, cy, cz = np.moveaxis(c, -1, 0)
    sx, sy, sz = np.moveaxis(s, -1, 0)
    return np.stack([cx * cy * cz + sx * sy * sz,
                     sx * cy * cz - cx * sy * sz,
                     cx * sy * cz + sx * cy * sz,
                     cx * cy * sz - sx * sy * cz], axis=-1)


def euler_to_matrix(angles, degrees=False):
    """Euler angles ``(..., 3)`` -> rotation matrices ``(..., 3, 3)``: ``Rz @ Ry @ Rx``."""
    a = _as_float(angles, 3, "euler angles")
    if degrees:
        a = np.radians(a)
    cx, cy, cz = np.moveaxis(np.cos(a), -1, 0)
    sx, sy, sz = np.moveaxis(np.sin(a), -1, 0)
    one, zero = np.ones_like(cx), np.zeros_like(cx)
    rx = np.stack([one, zero, zero, zero, cx, -sx, zero, sx, cx], -1).reshape(a.shape[:-1] + (3, 3))
    ry = np.stack([cy, zero, sy, zero, one, zero, -sy, zero, cy], -1).reshape(a.shape[:-1] + (3, 3))
    rz = np.stack([cz, -sz, zero, sz, cz, zero, zero, zero, one], -1).reshape(a.shape[:-1] + (3, 3))
    return rz @ ry @ rx


def axis_angle_to_quat(axis, angle, degrees=False):
    """Rotation by ``angle`` about ``axis`` (``(..., 3)``, need not be unit) -> ``(..., 4)``."""
    axis = _as_float(axis, 3, "axis")
    n = np.linalg.norm(axis, axis=-1, keepdims=True)
    if np.any(n == 0.0):
        raise ValueError("axis: zero-length rotation axis")
    angle = np.asarray(angle, dtype=np.float64)
    if degrees:
        angle = np.radians(angle)
    half = 0.5 * angle[..., None]
    return np.concatenate([np.cos(half), np.sin(half) * axis / n], axis=-1)


def quat_to_matrix(q):
    """Quaternions ``(..., 4)`` (w, x, y, z; normalised here) -> rotations ``(..., 3, 3)``."""
    w, x, y, z = np.moveaxis(quat_normalize(q), -1, 0)
    m = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                  2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                  2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)
    return m.reshape(w.shape + (3, 3))


def matrix_to_quat(m):
    """Rotation matrices ``(..., 3, 3)`` -> unit quaternions ``(..., 4)`` with ``w >= 0``.

    Shepperd's method (the largest of w, x, y, z picks the stable formula).
    """
    m = np.asarray(m, dtype=np.float64)
    if m.shape[-2:] != (3, 3):
        raise ValueError(f"rotation matrix: expected shape (..., 3, 3), got {m.shape}")
    flat = m.reshape(-1, 3, 3)
    out = np.empty((flat.shape[0], 4))
    for i, r in enumerate(flat):
        tr = r[0, 0] + r[1, 1] + r[2, 2]
        cand = np.array([tr, r[0, 0], r[1, 1], r[2, 2]])
        k = int(np.argmax(cand))
        if k == 0:
            s = 2.0 * np.sqrt(max(1.0 + tr, 0.0))
            q = [0.25 * s, (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s]
        elif k == 1:
            s = 2.0 * np.sqrt(max(1.0 + r[0, 0] - r[1, 1] - r[2, 2], 0.0))
            q = [(r[2, 1] - r[1, 2]) / s, 0.25 * s, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s]
        elif k == 2:
            s = 2.0 * np.sqrt(max(1.0 + r[1, 1] - r[0, 0] - r[2, 2], 0.0))
            q = [(r[0, 2] - r[2, 0]) / s, (r[0, 1] + r[1, 0]) / s, 0.25 * s, (r[1, 2] + r[2, 1]) / s]
        else:
            s = 2.0 * np.sqrt(max(1.0 + r[2, 2] - r[0, 0] - r[1, 1], 0.0))
            q = [(r[1, 0] - r[0, 1]) / s, (r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, 0.25 * s]
        q = np.array(q)
        out[i] = q if q[0] >= 0 else -q
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out.reshape(m.shape[:-2] + (4,))


def slerp(q0, q1, t):
    """Spherical linear interpolation from ``q0`` to ``q1`` at ``t`` in [0, 1], shortest arc.

    ``q0``, ``q1``: ``(..., 4)`` unit quaternions; ``t`` broadcasts against ``(...)``.
    When ``dot(q0, q1) < 0`` one end is negated (same rotation, shorter path). Nearly
    equal quaternions fall back to a normalised lerp.
    """
    q0 = quat_normalize(q0)
    q1 = quat_normalize(q1)
    t = np.asarray(t, dtype=np.float64)[..., None]
    d = np.sum(q0 * q1, axis=-1, keepdims=True)
    q1 = np.where(d < 0.0, -q1, q1)
    d = np.abs(d)
    theta = np.arccos(np.clip(d, -1.0, 1.0))
    sin_t = np.sin(theta)
    small = sin_t < 1e-9
    safe = np.where(small, 1.0, sin_t)
    w0 = np.where(small, 1.0 - t, np.sin((1.0 - t) * theta) / safe)
    w1 = np.where(small, t, np.sin(t * theta) / safe)
    return quat_normalize(w0 * q0 + w1 * q1)
