"""Ray-shape intersection routines (Numba, scalar, no allocation).

Conventions: a ray is ``o + t d`` with ``t`` in ``(tmin, tmax)``; ``d`` need not be unit
length. Every routine returns the hit distance ``t`` or ``inf`` for a miss.
"""
import math

from raytrace.jit import helper

INF = math.inf


@helper
def intersect_triangle(v0x, v0y, v0z, e1x, e1y, e1z, e2x, e2y, e2z,
                       ox, oy, oz, dx, dy, dz, tmin, tmax):
    """Moller-Trumbore. Triangle given by ``v0`` and edges ``e1 = v1 - v0``, ``e2 = v2 - v0``.

    Returns ``(t, u, v)`` with the hit point ``(1-u-v) v0 + u v1 + v v2``; ``t = inf`` on a miss.
    Two-sided.
    """
    px = dy * e2z - dz * e2y
    py = dz * e2x - dx * e2z
    pz = dx * e2y - dy * e2x
    det = e1x * px + e1y * py + e1z * pz
    if det == 0.0:
        return INF, 0.0, 0.0
    inv = 1.0 / det
    sx = ox - v0x
    sy = oy - v0y
    sz = oz - v0z
    u = (sx * px + sy * py + sz * pz) * inv
    if u < 0.0 or u > 1.0:
        return INF, 0.0, 0.0
    qx = sy * e1z - sz * e1y
    qy = sz * e1x - sx * e1z
    qz = sx * e1y - sy * e1x
    v = (dx * qx + dy * qy + dz * qz) * inv
    if v < 0.0 or u + v > 1.0:
        return INF, 0.0, 0.0
    t = (e2x * qx + e2y * qy + e2z * qz) * inv
    if t <= tmin or t >= tmax:
        return INF, 0.0, 0.0
    return t, u, v


@helper
def intersect_unit_sphere_xf(w2o, ox, oy, oz, dx, dy, dz, tmin, tmax):
    """Sphere given as the unit sphere in object space.

    ``w2o`` is a (3, 4) affine map from world to object space, ``q = w2o[:, :3] p + w2o[:, 3]``.
    The ray is mapped into object space without renormalising ``d``, so ``t`` is the same
    in both spaces. Returns the nearest ``t`` in ``(tmin, tmax)`` (the far root when the
    origin is inside), or ``inf``.
    """
    qox = w2o[0, 0] * ox + w2o[0, 1] * oy + w2o[0, 2] * oz + w2o[0, 3]
    qoy = w2o[1, 0] * ox + w2o[1, 1] * oy + w2o[1, 2] * oz + w2o[1, 3]
    qoz = w2o[2, 0] * ox + w2o[2, 1] * oy + w2o[2, 2] * oz + w2o[2, 3]
    qdx = w2o[0, 0] * dx + w2o[0, 1] * dy + w2o[0, 2] * dz
    qdy = w2o[1, 0] * dx + w2o[1, 1] * dy + w2o[1, 2] * dz
    qdz = w2o[2, 0] * dx + w2o[2, 1] * dy + w2o[2, 2] * dz
    a = qdx * qdx + qdy * qdy + qdz * qdz
    b = qox * qdx + qoy * qdy + qoz * qdz          # half of the usual b
    c = qox * qox + qoy * qoy + qoz * qoz - 1.0
    disc = b * b - a * c
    if disc < 0.0 or a == 0.0:
        return INF
    s = math.sqrt(disc)
    # numerically stable roots
    q = -(b + s) if b >= 0.0 else -(b - s)
    t0 = q / a
    t1 = c / q if q != 0.0 else t0
    if t0 > t1:
        t0, t1 = t1, t0
    if t0 > tmin and t0 < tmax:
        return t0
    if t1 > tmin and t1 < tmax:
        return t1
    return INF


@helper
def intersect_plane(nx, ny, nz, offset, ox, oy, oz, dx, dy, dz, tmin, tmax):
    """Infinite plane ``dot(n, p) = offset``. Returns ``t`` or ``inf`` (parallel rays miss)."""
    denom = nx * dx + ny * dy + nz * dz
    if denom == 0.0:
        return INF
    t = (offset - (nx * ox + ny * oy + nz * oz)) / denom
    if t <= tmin or t >= tmax:
        return INF
    return t
