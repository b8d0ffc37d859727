"""Traversal cost of single rays: how many BVH nodes and primitives a closest-hit query
visits (the debug view's heat map; not used for rendering).

It is the renders' own walk, counting: ``traverse.closest_hit_counted`` and
``instances.closest_instance_hit_counted`` (the queries the integrators run, with their
counters compiled away). Every node whose children are slab-tested counts 1, every leaf
triangle tested counts 1 (a 4-wide block counts its used lanes), a sphere 1. Rays that
reach instances add the top level's nodes and their prototypes' walks.
"""
import numpy as np
from raytrace.jit import kernel
from numba import prange
from numba.extending import overload

from raytrace.accel.instances import closest_instance_hit_counted, has_instance_levels
from raytrace.accel.traverse import INF, closest_hit_counted


def instance_cost(acc, ox, oy, oz, dx, dy, dz, tmin, tmax, counts):
    """Add the instance levels' work for the ray to ``counts`` (nothing for an ``Accel``:
    a scene without instances). Numba kernels only."""
    raise TypeError("instance_cost is called from Numba kernels only")


@overload(instance_cost, inline="never")
def _instance_cost_impl(acc, ox, oy, oz, dx, dy, dz, tmin, tmax, counts):
    if has_instance_levels(acc):
        def walk(acc, ox, oy, oz, dx, dy, dz, tmin, tmax, counts):
            closest_instance_hit_counted(acc, ox, oy, oz, dx, dy, dz, tmin, tmax, counts)
        return walk
    return lambda acc, ox, oy, oz, dx, dy, dz, tmin, tmax, counts: None


@kernel
def ray_cost(acc, ox, oy, oz, dx, dy, dz):
    """(nodes, primitives) a closest-hit query of the ray visits, world BVH and
    instances together."""
    counts = np.zeros(2, np.int64)
    hit = closest_hit_counted(acc, ox, oy, oz, dx, dy, dz, 0.0, INF, counts)
    instance_cost(acc, ox, oy, oz, dx, dy, dz, 0.0, hit.t, counts)
    return counts[0], counts[1]


@kernel(parallel=True)
def cost_batch(acc, origins, dirs, nodes_out, prims_out):
    """:func:`ray_cost` of N rays (origins, dirs (N, 3)) into two (N,) int64 arrays."""
    for i in prange(origins.shape[0]):
        nodes_out[i], prims_out[i] = ray_cost(acc, origins[i, 0], origins[i, 1], origins[i, 2],
                                              dirs[i, 0], dirs[i, 1], dirs[i, 2])
