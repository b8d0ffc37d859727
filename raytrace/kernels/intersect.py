"""Scene queries shared by the integrators: closest hit and occlusion over the BVH
(triangles, spheres) and the infinite planes, which live outside the BVH."""
import math

from numba import njit

from ..accel import any_hit, closest_hit
from ..layout import PLANE, Hit
from ..shapes import intersect_plane

INF = math.inf


@njit(cache=True, inline="always")
def scene_hit(bvh, geo, ox, oy, oz, dx, dy, dz, tmin, tmax):
    """Closest hit over the BVH and the infinite planes -> :class:`~raytrace.layout.Hit`."""
    hit = closest_hit(bvh, ox, oy, oz, dx, dy, dz, tmin, tmax)
    for p in range(geo.pl_d.shape[0]):
        tp = intersect_plane(geo.pl_n[p, 0], geo.pl_n[p, 1], geo.pl_n[p, 2], geo.pl_d[p],
                             ox, oy, oz, dx, dy, dz, tmin, min(hit.t, tmax))
        if tp < hit.t:
            hit = Hit(tp, PLANE, p, 0.0, 0.0)
    return hit


@njit(cache=True, inline="always")
def scene_occluded(bvh, geo, ox, oy, oz, dx, dy, dz, tmin, tmax):
    """True when anything lies on the ray with tmin < t < tmax."""
    for p in range(geo.pl_d.shape[0]):
        if intersect_plane(geo.pl_n[p, 0], geo.pl_n[p, 1], geo.pl_n[p, 2], geo.pl_d[p],
                           ox, oy, oz, dx, dy, dz, tmin, tmax) < INF:
            return True
    return any_hit(bvh, ox, oy, oz, dx, dy, dz, tmin, tmax)
