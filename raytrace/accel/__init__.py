"""BVH acceleration structure: build once, then closest-hit / any-hit queries per ray.

``build_accel(tri_v0, tri_v1, tri_v2, sph_w2o, sph_lo, sph_hi) -> Accel`` (Python),
``closest_hit(acc, ox, oy, oz, dx, dy, dz, tmin, tmax)``, ``closest_hit_prefetching``
(the same, also prefetching the hit triangle's shading rows) and
``any_hit(acc, ...)`` (Numba, callable from other kernels), and
``trace_closest_batch(acc, origins, dirs, tmax)`` (parallel, for many rays at once).
"""
from raytrace.accel.batch import trace_closest_batch
from raytrace.accel.build import Accel, build_accel
from raytrace.accel.traverse import any_hit, closest_hit, closest_hit_prefetching

__all__ = ["Accel", "build_accel", "closest_hit", "closest_hit_prefetching", "any_hit",
           "trace_closest_batch"]
