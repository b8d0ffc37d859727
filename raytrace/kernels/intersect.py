"""Scene queries shared by the integrators: closest hit and occlusion over the BVH
(triangles, spheres) and the infinite planes, which live outside the BVH."""
import math

from numba import njit

from ..accel import any_hit, closest_hit
from .shapes import intersect_plane

INF = math.inf
MISS, TRIANGLE, SPHERE, PLANE = 0, 1, 2, 3


@njit(cache=True, inline="always")
def scene_hit(acc, geo, ox, oy, oz, dx, dy, dz, tmin, tmax):
    """Closest hit over the BVH and the infinite planes -> (t, kind, index, u, v)."""
    t, kind, idx, u, v = closest_hit(acc, ox, oy, oz, dx, dy, dz, tmin, tmax)
    for p in range(geo.pl_d.shape[0]):
        tp = intersect_plane(geo.pl_n[p, 0], geo.pl_n[p, 1], geo.pl_n[p, 2], geo.pl_d[p],
                             ox, oy, oz, dx, dy, dz, tmin, min(t, tmax))
        if tp < t:
            t, kind, idx, u, v = tp, PLANE, p, 0.0, 0.0
    return t, kind, idx, u, v


@njit(cache=True, inline="always")
def scene_occluded(acc, geo, ox, oy, oz, dx, dy, dz, tmin, tmax):
    """True when anything lies on the ray with tmin < t < tmax."""
    for p in range(geo.pl_d.shape[0]):
        if intersect_plane(geo.pl_n[p, 0], geo.pl_n[p, 1], geo.pl_n[p, 2], geo.pl_d[p],
                           ox, oy, oz, dx, dy, dz, tmin, tmax) < INF:
            return True
    return any_hit(acc, ox, oy, oz, dx, dy, dz, tmin, tmax)
