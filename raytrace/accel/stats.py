"""Traversal cost of single rays: how many BVH nodes and triangles a closest-hit query
visits (the debug view's heat map; not used for rendering).

The walk is the one of ``traverse._closest_hit`` (nearest child first, far children
dropped once a closer hit is known) with counters: every node whose children are
slab-tested counts 1, every leaf triangle tested counts 1 (a 4-wide block counts its
used lanes), a sphere 1. Rays that reach instances add the top level's nodes and their
prototype's walk.
"""
import math

import numpy as np
from raytrace.jit import helper, kernel
from numba import carray, prange

from raytrace.accel.build import BLOCK, leaf_count, leaf_kind, leaf_start
from raytrace.accel.instances import by_instance_levels
from raytrace.accel.lowlevel import alloca_f32, alloca_f64, alloca_i32, ctz, data_ptr, offset
from raytrace.accel.simd import block_hits, node_mask, tri_id_of
from raytrace.accel.traverse import STACK_SIZE, WIDTH, _TFAR_SCALE, _push_hit_children, _ray_setup
from raytrace.layout import LEAF_KIND_TRI
from raytrace.shapes import intersect_unit_sphere_xf

INF = math.inf


@kernel(error_model="numpy")
def _walk_cost(box, n_nodes, root, tri, sph, ox, oy, oz, dx, dy, dz, tmin, tmax):
    """-> (nearest t, nodes tested, triangles and spheres tested) from node ``root``."""
    if n_nodes == 0 or not (tmin < tmax):
        return INF, 0, 0
    best_t = tmax
    box_ray = alloca_f32(14)
    tri_ray = alloca_f64(8)
    nx, ny, nz, kx, ky, kz = _ray_setup(ox, oy, oz, dx, dy, dz, tmin, best_t, box_ray, tri_ray)
    st_node = alloca_i32(STACK_SIZE)
    st_t = alloca_f32(STACK_SIZE)
    dist = alloca_f32(WIDTH)
    tt = alloca_f64(BLOCK)
    uu = alloca_f64(BLOCK)
    vv = alloca_f64(BLOCK)
    sp = 0
    node = np.int32(root)
    nodes = prims = 0
    while True:
        if node >= 0:
            nodes += 1
            mask = node_mask(box, node, nx, ny, nz, box_ray, dist)
            if mask != 0:
                node, sp = _push_hit_children(box, node, mask, dist, st_node, st_t, sp)
                continue
        else:
            s0 = leaf_start(node)
            if leaf_kind(node) == LEAF_KIND_TRI:
                for blk in range(s0, s0 + leaf_count(node)):
                    for lane in range(BLOCK):
                        prims += 1 if tri_id_of(tri, blk, lane) >= 0 else 0
                    m = block_hits(tri, blk, kx, ky, kz, tri_ray, tt, uu, vv)
                    while m != 0:
                        k = ctz(m)
                        m &= m - 1
                        best_t = min(best_t, tt[k])
            else:
                for s in range(s0, s0 + leaf_count(node)):
                    prims += 1
                    best_t = min(best_t, intersect_unit_sphere_xf(carray(offset(sph, 12 * s), (3, 4)),
                                                                  ox, oy, oz, dx, dy, dz, tmin, best_t))
            tri_ray[7] = best_t
            box_ray[13] = np.float32(best_t) * _TFAR_SCALE
        while sp > 0 and st_t[sp - 1] > box_ray[13]:
            sp -= 1
        if sp == 0:
            break
        sp -= 1
        node = st_node[sp]
    return best_t, nodes, prims


@kernel(error_model="numpy")
def _instance_cost(acc, ox, oy, oz, dx, dy, dz, tmin, tmax):
    """-> (nearest t, nodes, primitives) of the instance levels (top and prototypes)."""
    n_top = acc.inst_nodes.shape[0]
    if n_top == 0:
        return tmax, 0, 0
    box = data_ptr(acc.inst_nodes)
    box_ray = alloca_f32(14)
    tri_ray = alloca_f64(8)
    nx, ny, nz, _, _, _ = _ray_setup(ox, oy, oz, dx, dy, dz, tmin, tmax, box_ray, tri_ray)
    st_node = alloca_i32(STACK_SIZE)
    st_t = alloca_f32(STACK_SIZE)
    dist = alloca_f32(WIDTH)
    sp = 0
    node = np.int32(0)
    best_t = tmax
    nodes = prims = 0
    while True:
        if node >= 0:
            nodes += 1
            mask = node_mask(box, node, nx, ny, nz, box_ray, dist)
            if mask != 0:
                node, sp = _push_hit_children(box, node, mask, dist, st_node, st_t, sp)
                continue
        else:
            s0 = leaf_start(node)
            for s in range(s0, s0 + leaf_count(node)):
                m = acc.inst_xf[s]
                qo = m[:, 0] * ox + m[:, 1] * oy + m[:, 2] * oz + m[:, 3]
                qd = m[:, 0] * dx + m[:, 1] * dy + m[:, 2] * dz
                t, n, p = _walk_cost(data_ptr(acc.proto_nodes), 1, acc.inst_root[s], data_ptr(acc.proto_tris),
                                     data_ptr(acc.proto_sph), qo[0], qo[1], qo[2], qd[0], qd[1], qd[2],
                                     tmin, best_t)
                nodes += n
                prims += p
                best_t = min(best_t, t)
            box_ray[13] = np.float32(best_t) * _TFAR_SCALE
        while sp > 0 and st_t[sp - 1] > box_ray[13]:
            sp -= 1
        if sp == 0:
            break
        sp -= 1
        node = st_node[sp]
    return best_t, nodes, prims


@helper
def _no_instance_cost(acc, ox, oy, oz, dx, dy, dz, tmin, tmax):
    return tmax, 0, 0


instance_cost = by_instance_levels(
    "instance_cost", _instance_cost, _no_instance_cost,
    """:func:`_instance_cost` for either accel type; ``(tmax, 0, 0)`` for an ``Accel``
    (a scene without instances). Numba kernels only.""")


@kernel
def ray_cost(acc, ox, oy, oz, dx, dy, dz):
    """(nodes, primitives) a closest-hit query of the ray visits, world BVH and
    instances together."""
    t, nodes, prims = _walk_cost(data_ptr(acc.nodes), acc.nodes.shape[0], 0, data_ptr(acc.tris),
                                 data_ptr(acc.sph), ox, oy, oz, dx, dy, dz, 0.0, INF)
    _, n2, p2 = instance_cost(acc, ox, oy, oz, dx, dy, dz, 0.0, t)
    return nodes + n2, prims + p2


@kernel(parallel=True)
def cost_batch(acc, origins, dirs, nodes_out, prims_out):
    """:func:`ray_cost` of N rays (origins, dirs (N, 3)) into two (N,) int64 arrays."""
    for i in prange(origins.shape[0]):
        nodes_out[i], prims_out[i] = ray_cost(acc, origins[i, 0], origins[i, 1], origins[i, 2],
                                              dirs[i, 0], dirs[i, 1], dirs[i, 2])
