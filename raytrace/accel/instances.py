"""Two-level acceleration: a BVH over instances, each showing a shared prototype BVH.

A mesh used many times is stored once. :func:`build_scene_accel` builds

- the world BVH over primitives placed in world space (as :func:`build_accel` does);
- one BVH per prototype over its object-space primitives, all packed into shared
  ``proto_*`` arrays (child ids, block and sphere slots rebased; ``inst_root`` gives each
  instance's prototype root node);
- the top-level BVH over the instances' world boxes. It reuses the builder's sphere
  leaves: a "sphere" slot of ``inst_nodes`` holds an instance's world->object map
  (``inst_xf``, the same (3, 4) shape) and its instance index (``inst_id``).

A query (:func:`closest_instance_hit`, :func:`any_instance_hit`) walks the top level;
at an instance it maps the ray into object space (the direction is not renormalised, so
``t`` is the same in both spaces) and runs the one-level traversal from the prototype's
root.

A scene without instances gets its world :class:`~raytrace.accel.build.Accel` itself, not
a :class:`SceneAccel` with empty instance levels: kernels are compiled for the type they
are given, so :func:`instance_hit` and :func:`instance_occluded` (what the integrators
call) compile to a constant miss for it, and a scene without instances never compiles the
instance traversal (about 2.5 s of a cold start). Scenes with instances compile their own
specialisation of each kernel.
"""
from typing import NamedTuple

import numpy as np
from raytrace.jit import helper, kernel
from numba import carray
from numba.extending import overload

from raytrace.accel.build import (BLOCK, CHILD_ROW, ID_ROW, WIDTH, Accel, build_accel, encode_leaf, leaf_count, leaf_kind,
                                  leaf_start)
from raytrace.accel.lowlevel import ctz, data_ptr, offset
from raytrace.accel.simd import child_of, node_mask
from raytrace.accel.traverse import (_TFAR_SCALE, INF, _any_hit, _closest_hit, _push_hit_children, counted_mask,
                                     drop_farther, walk_start)
from raytrace.layout import LEAF_KIND_TRI, MISS, Hit


ONE = np.int64(1)    # a prototype's node count as the traversal sees it (int64: see traverse.ROOT)


SceneAccel = NamedTuple("SceneAccel", [*Accel.__annotations__.items()] + [(name, np.ndarray) for name in (
    "inst_nodes", "inst_xf", "inst_id", "inst_root", "proto_nodes", "proto_tris", "proto_sph", "proto_sph_id")])
SceneAccel.__doc__ = """The world BVH (the fields of :class:`~raytrace.accel.build.Accel`
first, so that ``closest_hit`` takes it as it is) plus the instance levels (see the
module docs): ``inst_nodes`` (N, NODE_ROWS, WIDTH) float32 the top level; ``inst_xf``
(I, 3, 4) leaf-ordered world -> object maps; ``inst_id`` (I,) int64 instance index of
each slot; ``inst_root`` (I,) int64 root node (in ``proto_nodes``) of each slot's
prototype; ``proto_nodes``, ``proto_tris``, ``proto_sph``, ``proto_sph_id``: the
prototype BVHs, concatenated."""


def _rebase(acc, node_off, block_off, sph_off):
    """Child ids of ``acc`` shifted for packing behind earlier BVHs."""
    child = acc.nodes_i[:, CHILD_ROW, :].copy()
    inner = child >= 0
    child[inner] += node_off
    for n, c in zip(*np.nonzero(child < 0)):
        x = child[n, c]
        start = int(leaf_start(x)) + (block_off if leaf_kind(x) == LEAF_KIND_TRI else sph_off)
        child[n, c] = encode_leaf(start, int(leaf_count(x)), int(leaf_kind(x)))
    return child


def _pack_prototypes(parts):
    """Concatenate prototype BVHs -> (nodes, tris, sph, sph_id, roots)."""
    from raytrace.accel.build import _aligned_empty
    n_nodes = sum(len(a.nodes) for a in parts)
    nodes = _aligned_empty((n_nodes,) + parts[0].nodes.shape[1:], np.float32) if parts else \
        np.zeros((0, 8, WIDTH), np.float32)
    n_blocks = sum(len(a.tris) for a in parts)
    tris = _aligned_empty((n_blocks, 10, BLOCK), np.float32)
    sph = np.zeros((sum(len(a.sph) for a in parts), 3, 4))
    sph_id = np.zeros(len(sph), np.int64)
    roots = []
    no = bo = so = 0
    for a in parts:
        nodes[no:no + len(a.nodes)] = a.nodes
        nodes.view(np.int32)[no:no + len(a.nodes), CHILD_ROW, :] = _rebase(a, no, bo, so)
        tris[bo:bo + len(a.tris)] = a.tris
        sph[so:so + len(a.sph)] = a.sph
        sph_id[so:so + len(a.sph)] = a.sph_id
        roots.append(no)
        no, bo, so = no + len(a.nodes), bo + len(a.tris), so + len(a.sph)
    return nodes, tris, sph, sph_id, np.array(roots, np.int64)


def build_scene_accel(geo):
    """The :class:`SceneAccel` of a :class:`raytrace.layout.Geometry`; for a scene
    without instances its world :class:`~raytrace.accel.build.Accel` (see the module
    docs)."""
    T, S = geo.world_tris, geo.world_spheres
    world = build_accel(geo.tri_v0[:T], geo.tri_v1[:T], geo.tri_v2[:T], geo.sph_w2o[:S],
                        geo.sph_lo[:S], geo.sph_hi[:S])
    if len(geo.inst_w2o) == 0:
        return world
    parts = []
    for (t0, t1), (s0, s1) in zip(geo.proto_tris, geo.proto_spheres):
        a = build_accel(geo.tri_v0[t0:t1], geo.tri_v1[t0:t1], geo.tri_v2[t0:t1], geo.sph_w2o[s0:s1],
                        geo.sph_lo[s0:s1], geo.sph_hi[s0:s1])
        ids = a.tris_i[:, ID_ROW, :]
        ids[ids >= 0] += t0                    # triangle ids index the whole geometry
        parts.append(a._replace(sph_id=a.sph_id + s0))
    pnodes, ptris, psph, psph_id, roots = _pack_prototypes(parts)
    top = build_accel(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)), geo.inst_w2o,
                      geo.inst_lo, geo.inst_hi)
    inst_root = roots[geo.inst_proto[top.sph_id]] if len(top.sph_id) else np.zeros(0, np.int64)
    return SceneAccel(*world, inst_nodes=top.nodes, inst_xf=top.sph, inst_id=top.sph_id,
                      inst_root=np.ascontiguousarray(inst_root, np.int64), proto_nodes=pnodes,
                      proto_tris=ptris, proto_sph=np.ascontiguousarray(psph),
                      proto_sph_id=psph_id)


def with_empty_instance_levels(world):
    """A :class:`SceneAccel` holding the ``Accel`` ``world`` and no instances: kernels
    given it are compiled for scenes with instances (``raytrace.jit.warmup`` uses it to
    compile them without running the BVH builder)."""
    f32 = np.zeros((0,) + world.nodes.shape[1:], np.float32)
    return SceneAccel(*world, inst_nodes=f32, inst_xf=np.zeros((0, 3, 4)),
                      inst_id=np.zeros(0, np.int64), inst_root=np.zeros(0, np.int64),
                      proto_nodes=f32.copy(),
                      proto_tris=np.zeros((0,) + world.tris.shape[1:], np.float32),
                      proto_sph=np.zeros((0, 3, 4)), proto_sph_id=np.zeros(0, np.int64))


@helper
def _to_object(xf, s, ox, oy, oz, dx, dy, dz):
    """The ray mapped by the (3, 4) affine map of slot ``s`` (direction not renormalised)."""
    m = carray(offset(xf, 12 * s), (3, 4))
    return (m[0, 0] * ox + m[0, 1] * oy + m[0, 2] * oz + m[0, 3],
            m[1, 0] * ox + m[1, 1] * oy + m[1, 2] * oz + m[1, 3],
            m[2, 0] * ox + m[2, 1] * oy + m[2, 2] * oz + m[2, 3],
            m[0, 0] * dx + m[0, 1] * dy + m[0, 2] * dz,
            m[1, 0] * dx + m[1, 1] * dy + m[1, 2] * dz,
            m[2, 0] * dx + m[2, 1] * dy + m[2, 2] * dz)


@helper
def closest_instance_hit(acc, ox, oy, oz, dx, dy, dz, tmin, tmax):
    """Closest hit among the instances with ``tmin < t < tmax`` -> (Hit, instance); the
    hit's index points into the whole geometry's arrays, ``instance`` is -1 on a miss."""
    return closest_instance_hit_counted(acc, ox, oy, oz, dx, dy, dz, tmin, tmax, None)


@helper
def closest_instance_hit_counted(acc, ox, oy, oz, dx, dy, dz, tmin, tmax, counts):
    """:func:`closest_instance_hit` that adds its work to ``counts`` (None: not counted;
    see ``traverse.closest_hit_counted``): the top level's nodes and the prototypes' walks."""
    if acc.inst_nodes.shape[0] == 0:
        return Hit(INF, MISS, -1, 0.0, 0.0), -1
    return _closest_instance_hit(data_ptr(acc.inst_nodes), data_ptr(acc.inst_xf), data_ptr(acc.inst_id),
                                 data_ptr(acc.inst_root), data_ptr(acc.proto_nodes), data_ptr(acc.proto_tris),
                                 data_ptr(acc.proto_sph), data_ptr(acc.proto_sph_id),
                                 ox, oy, oz, dx, dy, dz, tmin, tmax, counts)


@kernel(error_model="numpy")
def _closest_instance_hit(box, xf, inst_id, inst_root, pbox, ptri, psph, psph_id,
                          ox, oy, oz, dx, dy, dz, tmin, tmax, counts):
    best = Hit(INF, MISS, -1, 0.0, 0.0)
    best_inst = -1
    (box_ray, _), (nx, ny, nz), _, (st_node, st_t, dist), _ = walk_start(ox, oy, oz, dx, dy, dz, tmin, tmax)
    sp = 0
    node = np.int32(0)
    limit = tmax
    while True:
        if node >= 0:
            mask = counted_mask(box, node, nx, ny, nz, box_ray, dist, counts)
            if mask != 0:
                node, sp = _push_hit_children(box, node, mask, dist, st_node, st_t, sp)
                continue
        else:
            s0 = leaf_start(node)
            for s in range(s0, s0 + leaf_count(node)):
                qox, qoy, qoz, qdx, qdy, qdz = _to_object(xf, s, ox, oy, oz, dx, dy, dz)
                # no hints: placeholder pointers of closest_hit's types (float64, int64),
                # so that this walk and the plain query share one compiled _closest_hit
                h = _closest_hit(pbox, ONE, np.int64(inst_root[s]), ptri, psph, psph_id, False, psph, psph,
                                 psph_id, psph_id, qox, qoy, qoz, qdx, qdy, qdz, tmin, limit, counts)
                if h.kind != MISS and h.t < limit:
                    best, best_inst, limit = h, inst_id[s], h.t
            box_ray[13] = np.float32(limit) * _TFAR_SCALE
        sp = drop_farther(st_t, sp, box_ray[13])
        if sp == 0:
            break
        node, sp = st_node[sp - 1], sp - 1
    return best, best_inst


@helper
def any_instance_hit(acc, ox, oy, oz, dx, dy, dz, tmin, tmax):
    """True when some instance is hit with ``tmin < t < tmax``."""
    if acc.inst_nodes.shape[0] == 0:
        return False
    return _any_instance_hit(data_ptr(acc.inst_nodes), data_ptr(acc.inst_xf), data_ptr(acc.inst_root),
                             data_ptr(acc.proto_nodes), data_ptr(acc.proto_tris), data_ptr(acc.proto_sph),
                             ox, oy, oz, dx, dy, dz, tmin, tmax)


@kernel(error_model="numpy")
def _any_instance_hit(box, xf, inst_root, pbox, ptri, psph, ox, oy, oz, dx, dy, dz, tmin, tmax):
    (box_ray, _), (nx, ny, nz), _, (st_node, _, dist), _ = walk_start(ox, oy, oz, dx, dy, dz, tmin, tmax)
    sp = 0
    node = np.int32(0)
    while True:
        if node >= 0:
            mask = node_mask(box, node, nx, ny, nz, box_ray, dist)
            while mask != 0:
                c = ctz(mask)
                mask &= mask - 1
                st_node[sp] = child_of(box, node, c)
                sp += 1
        else:
            s0 = leaf_start(node)
            for s in range(s0, s0 + leaf_count(node)):
                qox, qoy, qoz, qdx, qdy, qdz = _to_object(xf, s, ox, oy, oz, dx, dy, dz)
                if _any_hit(pbox, ONE, np.int64(inst_root[s]), ptri, psph, qox, qoy, qoz, qdx, qdy, qdz,
                            tmin, tmax):
                    return True
        if sp == 0:
            return False
        sp -= 1
        node = st_node[sp]


def has_instance_levels(acc):
    """Whether ``acc`` (a :class:`SceneAccel` or an ``Accel``, or their Numba type) has
    instance levels."""
    return "inst_nodes" in getattr(acc, "fields", getattr(acc, "_fields", ()))


def by_instance_levels(name, with_levels, without, doc):
    """A function ``name(acc, ox, oy, oz, dx, dy, dz, tmin, tmax)`` for Numba kernels that
    compiles to ``with_levels`` (a jitted function of the same arguments) when ``acc`` is
    a :class:`SceneAccel` and to ``without`` when it is an ``Accel`` (no instances)."""
    def stub(acc, ox, oy, oz, dx, dy, dz, tmin, tmax):
        raise TypeError(f"{name} is called from Numba kernels only")
    stub.__name__ = stub.__qualname__ = name
    stub.__doc__ = doc

    # inline="never": the choice is a separate tiny function (LLVM still inlines it; no
    # difference measured on the Cornell box or scenes/instances.json). Inlined at Numba's
    # IR level inside scene_hit's coverage loop, the lambda's variables tripped Numba's
    # NumbaIRAssumptionWarning ("... is not in scope", a pedantic check) on cold compiles.
    @overload(stub, inline="never")
    def _impl(acc, ox, oy, oz, dx, dy, dz, tmin, tmax):
        chosen = with_levels if has_instance_levels(acc) else without
        return lambda acc, ox, oy, oz, dx, dy, dz, tmin, tmax: chosen(acc, ox, oy, oz, dx, dy, dz,
                                                                      tmin, tmax)
    return stub


@kernel
def _no_instance_hit(acc, ox, oy, oz, dx, dy, dz, tmin, tmax):
    """The miss of a scene without instances (a call, not an inlined tuple: Numba's
    parfors array analysis rejects the inlined one in ``prange`` kernels)."""
    return Hit(INF, MISS, -1, 0.0, 0.0), -1


@helper
def _not_occluded(acc, ox, oy, oz, dx, dy, dz, tmin, tmax):
    return False


instance_hit = by_instance_levels(
    "instance_hit", closest_instance_hit, _no_instance_hit,
    """:func:`closest_instance_hit` for either accel type; a constant miss (Hit, -1) for
    an ``Accel`` (no instances). Numba kernels only.""")
instance_occluded = by_instance_levels(
    "instance_occluded", any_instance_hit, _not_occluded,
    """:func:`any_instance_hit` for either accel type; False for an ``Accel``. Numba
    kernels only.""")


__all__ = ["SceneAccel", "build_scene_accel", "closest_instance_hit", "any_instance_hit", "Accel",
           "by_instance_levels", "has_instance_levels", "instance_hit", "instance_occluded"]
