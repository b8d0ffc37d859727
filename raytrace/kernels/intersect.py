"""Scene queries shared by the integrators: closest hit and occlusion over the world BVH
(triangles, spheres), the instances (``raytrace.accel.instances``) and the infinite
planes, which live outside the BVH. ``bvh`` is a ``SceneAccel``, or for a scene without
instances its world ``Accel`` (then no instance traversal is compiled in).

Surfaces with a coverage texture (``raytrace.kernels.coverage``) are stepped past where
they are not there: the query goes on from the hit's ``t`` (at most ``MAX_LAYERS`` holes
per ray; the next surface after that many counts as there). Without such materials
(``geo.cutouts == 0``) each query is one traversal."""
import math

from raytrace.jit import helper, unit

from ..accel import any_hit, closest_hit_prefetching
from ..accel.instances import instance_hit, instance_occluded
from ..layout import MISS, PLANE, SceneHit
from ..shapes import intersect_plane
from .coverage import covered

INF = math.inf
MAX_LAYERS = 64


@unit
def scene_hit(bvh, geo, ox, oy, oz, dx, dy, dz, tmin, tmax):
    """Closest hit over the BVH, the instances and the infinite planes whose surface is
    there for this ray -> :class:`~raytrace.layout.SceneHit`."""
    layers = 0
    searching = True
    hit = SceneHit(tmax, MISS, -1, 0.0, 0.0, -1)
    while searching:                 # one traversal call site: compiled once per kernel
        hit = _closest(bvh, geo, ox, oy, oz, dx, dy, dz, tmin, tmax)
        searching = (geo.cutouts > 0 and hit.kind != MISS and layers < MAX_LAYERS
                     and not covered(geo, hit, ox, oy, oz, dx, dy, dz))
        tmin = hit.t
        layers += 1
    return hit


@helper
def _closest(bvh, geo, ox, oy, oz, dx, dy, dz, tmin, tmax):
    """The closest hit of any surface (covered or not)."""
    h = closest_hit_prefetching(bvh, geo.tri_n, geo.tri_ng, geo.tri_mat, geo.tri_emit, ox, oy, oz,
                                dx, dy, dz, tmin, tmax)
    hit = SceneHit(h.t, h.kind, h.index, h.u, h.v, -1)
    g, inst = instance_hit(bvh, ox, oy, oz, dx, dy, dz, tmin, min(hit.t, tmax))
    if inst >= 0 and g.t < hit.t:
        hit = SceneHit(g.t, g.kind, g.index, g.u, g.v, inst)
    for p in range(geo.pl_d.shape[0]):
        tp = intersect_plane(geo.pl_n[p, 0], geo.pl_n[p, 1], geo.pl_n[p, 2], geo.pl_d[p],
                             ox, oy, oz, dx, dy, dz, tmin, min(hit.t, tmax))
        if tp < hit.t:
            hit = SceneHit(tp, PLANE, p, 0.0, 0.0, -1)
    return hit


@unit
def scene_occluded(bvh, geo, ox, oy, oz, dx, dy, dz, tmin, tmax):
    """True when a surface that is there lies on the ray with tmin < t < tmax."""
    if geo.cutouts > 0:
        return scene_hit(bvh, geo, ox, oy, oz, dx, dy, dz, tmin, tmax).kind != MISS
    for p in range(geo.pl_d.shape[0]):
        if intersect_plane(geo.pl_n[p, 0], geo.pl_n[p, 1], geo.pl_n[p, 2], geo.pl_d[p],
                           ox, oy, oz, dx, dy, dz, tmin, tmax) < INF:
            return True
    if any_hit(bvh, ox, oy, oz, dx, dy, dz, tmin, tmax):
        return True
    return instance_occluded(bvh, ox, oy, oz, dx, dy, dz, tmin, tmax)
