"""BVH traversal: closest hit and any hit for one ray (Numba, no allocation).

Nodes: the 8 children of a node are slab-tested at once in float32 SIMD against the
float32 boxes of ``build.py``, which are rounded outwards by 4 ulps; the far distances
are widened by 2^-19 relative, so rounding can only add nodes, never lose one. Children
are visited near first; the others wait on an explicit stack with their entry distance
and are dropped once a closer hit is known. In a BVH of ``PREFETCH_MIN_NODES`` nodes
or more (one that outgrows the core's caches), when two or more children are hit, the
records of all of them (nodes, or a leaf's triangle blocks) are prefetched at once
(``lowlevel.prefetch``), so that the cache misses of rays that wander through the tree
overlap instead of coming one after the other (bunny, one thread, incoherent rays:
+3 %, +21 % and +22 % rays per second in three alternating pairs). A small BVH stays in the
caches, where the prefetches were only extra work. Instances' prototypes are walked
without them. ``closest_hit_prefetching`` (the integrators' query) also prefetches the
shading rows of each closer triangle it finds (normals, material), so that what comes
after the walk finds them loaded sooner. Leaves: 4 triangles at a time with the
watertight test of Woop et al. (2013) in float64 on the blocks' float32 vertices (see
``simd.block_hits``), so rays never slip through edges or vertices shared by two
triangles; spheres with
``raytrace.shapes.intersect_unit_sphere_xf``.
"""
import math

import numpy as np
from raytrace.jit import helper, kernel
from numba import carray

from raytrace.accel.build import BLOCK, NODE_ROWS, STACK_SIZE, TRI_ROWS, WIDTH, leaf_count, leaf_kind, leaf_start
from raytrace.accel.lowlevel import (alloca_f32, alloca_f64, alloca_i32, ctz, data_ptr, offset,
                                     prefetch)
from raytrace.accel.simd import block_hits, child_of, node_mask, tri_id_of
from raytrace.layout import LEAF_KIND_TRI, MISS, SPHERE, TRIANGLE, Hit
from raytrace.shapes import intersect_unit_sphere_xf

INF = math.inf
_TFAR_SCALE = np.float32(1.0 + 2.0 ** -19)
_TFAR_SCALE64 = 1.0 + 2.0 ** -19
_TINY = 1e-30   # stands in for a zero direction component in the reciprocal
ROOT = np.int64(0)   # the world BVH's root: an int64, not a literal 0, so that the world's and
                     # the instances' calls of _closest_hit / _any_hit share one compile


@helper(error_model="numpy")
def _rcp(d):
    if d == 0.0:
        return 1.0 / math.copysign(_TINY, d)
    return 1.0 / d


@helper(error_model="numpy")
def _ray_setup(ox, oy, oz, dx, dy, dz, tmin, tmax, box_ray, tri_ray):
    """Per-ray constants for ``node_mask`` (``box_ray``, 14 float32) and ``block_hits``
    (``tri_ray``, 8 float64). Returns the near box rows and the triangle axis order,
    ``(nx, ny, nz, kx, ky, kz)``."""
    ix = _rcp(dx)
    iy = _rcp(dy)
    iz = _rcp(dz)
    box_ray[0] = np.float32(ix)
    box_ray[1] = np.float32(iy)
    box_ray[2] = np.float32(iz)
    box_ray[3] = np.float32(-ox * ix)
    box_ray[4] = np.float32(-oy * iy)
    box_ray[5] = np.float32(-oz * iz)
    box_ray[6] = np.float32(ix * _TFAR_SCALE64)
    box_ray[7] = np.float32(iy * _TFAR_SCALE64)
    box_ray[8] = np.float32(iz * _TFAR_SCALE64)
    box_ray[9] = np.float32(-ox * ix * _TFAR_SCALE64)
    box_ray[10] = np.float32(-oy * iy * _TFAR_SCALE64)
    box_ray[11] = np.float32(-oz * iz * _TFAR_SCALE64)
    ft = np.float32(tmin)
    box_ray[12] = ft if ft <= tmin else np.nextafter(ft, np.float32(-INF))
    box_ray[13] = np.float32(tmax) * _TFAR_SCALE
    # watertight test: kz = dominant axis, (kx, ky) the other two keeping the winding
    if abs(dx) >= abs(dy) and abs(dx) >= abs(dz):
        kx, ky, kz = 1, 2, 0
        ik, d1, d2, o1, o2, ok = ix, dy, dz, oy, oz, ox
    elif abs(dy) >= abs(dz):
        kx, ky, kz = 2, 0, 1
        ik, d1, d2, o1, o2, ok = iy, dz, dx, oz, ox, oy
    else:
        kx, ky, kz = 0, 1, 2
        ik, d1, d2, o1, o2, ok = iz, dx, dy, ox, oy, oz
    if ik < 0.0:
        kx, ky = ky, kx
        d1, d2, o1, o2 = d2, d1, o2, o1
    tri_ray[0] = o1
    tri_ray[1] = o2
    tri_ray[2] = ok
    tri_ray[3] = -d1 * ik
    tri_ray[4] = -d2 * ik
    tri_ray[5] = ik
    tri_ray[6] = tmin
    tri_ray[7] = tmax
    return ((0 if ix >= 0.0 else 1), (2 if iy >= 0.0 else 3), (4 if iz >= 0.0 else 5),
            kx, ky, kz)


@helper
def closest_hit(acc, ox, oy, oz, dx, dy, dz, tmin, tmax):
    """Closest hit of the ray ``o + t d`` with ``tmin < t < tmax`` -> :class:`~raytrace.layout.Hit`.

    ``kind`` is MISS (``t = inf``, index -1), TRIANGLE or SPHERE; ``index`` points into
    the original arrays given to ``build_accel``; for triangles the hit point is
    ``(1-u-v) v0 + u v1 + v v2`` (``u = v = 0`` for spheres). ``d`` need not be unit
    length; ``t`` is in units of ``|d|``.

    A thin wrapper, inlined into the caller, that hands raw pointers to
    ``_closest_hit``: passing the six arrays of ``acc`` by value on every call would cost
    more than a fast traversal.
    """
    f64, i64 = data_ptr(acc.sph), data_ptr(acc.sph_id)     # (no hints: never read)
    return _closest_hit(data_ptr(acc.nodes), acc.nodes.shape[0], ROOT, data_ptr(acc.tris),
                        data_ptr(acc.sph), data_ptr(acc.sph_id), False, f64, f64, i64, i64,
                        ox, oy, oz, dx, dy, dz, tmin, tmax, None)


@helper
def closest_hit_counted(acc, ox, oy, oz, dx, dy, dz, tmin, tmax, counts):
    """:func:`closest_hit` that also counts its work into ``counts`` ((2,) int64, added
    to): [0] the nodes whose children are slab-tested, [1] the triangles (a 4-wide
    block: its used lanes) and spheres tested. The same walk: the renders' query is this
    one with ``counts`` None, where the counting compiles away."""
    f64, i64 = data_ptr(acc.sph), data_ptr(acc.sph_id)
    return _closest_hit(data_ptr(acc.nodes), acc.nodes.shape[0], ROOT, data_ptr(acc.tris),
                        data_ptr(acc.sph), data_ptr(acc.sph_id), False, f64, f64, i64, i64,
                        ox, oy, oz, dx, dy, dz, tmin, tmax, counts)


@helper
def closest_hit_prefetching(acc, tri_n, tri_ng, tri_mat, tri_emit, ox, oy, oz, dx, dy, dz, tmin,
                            tmax):
    """:func:`closest_hit` that also starts loading what shading a triangle hit reads next:
    row ``i`` of ``tri_n`` ((T, 3, 3) float64), ``tri_ng`` ((T, 3) float64), ``tri_mat``
    and ``tri_emit`` ((T,) int64), C-contiguous, ``i`` the triangle's original index.

    In a BVH of ``PREFETCH_MIN_NODES`` nodes or more, each time the walk finds a closer
    triangle it prefetches those rows, so that their cache misses overlap the rest of the
    walk instead of following it (glass knot scene, 70,000 triangles: the first load of
    ``tri_n`` after the walk held 10 % of a render's samples). A hint: the same result as
    :func:`closest_hit`."""
    return _closest_hit(data_ptr(acc.nodes), acc.nodes.shape[0], ROOT, data_ptr(acc.tris),
                        data_ptr(acc.sph), data_ptr(acc.sph_id), True, data_ptr(tri_n),
                        data_ptr(tri_ng), data_ptr(tri_mat), data_ptr(tri_emit),
                        ox, oy, oz, dx, dy, dz, tmin, tmax, None)


PREFETCH_MIN_NODES = 1024         # 256 KB of nodes, with their blocks about 2 MB
_LINE = 64                         # bytes of a cache line (records start on line boundaries)
_NODE_F32 = NODE_ROWS * WIDTH      # float32 elements of a node record (256 bytes)
_BLOCK_F32 = TRI_ROWS * BLOCK      # float32 elements of a triangle block (160 bytes)
_NODE_LINES = _NODE_F32 * 4 // _LINE     # 4


@helper
def _prefetch_children(box, tri, node, mask):
    """Start loading the records of the children of ``node`` in ``mask`` (a node's
    ``_NODE_LINES`` cache lines; every line of a triangle leaf's blocks) so that they
    arrive together, not one after the other as the walk reaches them. A hint: no effect
    on any result."""
    while mask != 0:
        c = ctz(mask)
        mask &= mask - 1
        child = child_of(box, node, c)
        if child >= 0:
            base = np.int64(child) * _NODE_F32
            for line in range(_NODE_LINES):
                prefetch(box, base + (_LINE // 4) * line)
        elif leaf_kind(child) == LEAF_KIND_TRI:
            base = np.int64(leaf_start(child)) * _BLOCK_F32
            end = base + _BLOCK_F32 * leaf_count(child)
            while base < end:               # blocks start 32 bytes into a line or on it
                prefetch(tri, base)
                base += _LINE // 4
            prefetch(tri, end - 1)          # the last line, when a block ends in it


@helper
def walk_start(ox, oy, oz, dx, dy, dz, tmin, tmax):
    """A walk's buffers on the stack of the caller (inlined), set up for the ray ->
    ((box_ray, tri_ray): ``_ray_setup``'s per-ray constants, near box rows (3), the
    triangle axis order (3), (node stack, its entry distances, the children's
    distances), (t, u, v) of a triangle block's lanes)."""
    box_ray = alloca_f32(14)
    tri_ray = alloca_f64(8)
    nx, ny, nz, kx, ky, kz = _ray_setup(ox, oy, oz, dx, dy, dz, tmin, tmax, box_ray, tri_ray)
    st_node = alloca_i32(STACK_SIZE)
    st_t = alloca_f32(STACK_SIZE)
    dist = alloca_f32(WIDTH)
    lanes = (alloca_f64(BLOCK), alloca_f64(BLOCK), alloca_f64(BLOCK))
    return (box_ray, tri_ray), (nx, ny, nz), (kx, ky, kz), (st_node, st_t, dist), lanes


@helper
def counted_mask(box, node, nx, ny, nz, box_ray, dist, counts):
    """``node_mask`` of inner node ``node``, counted in ``counts[0]`` (None: not counted;
    see :func:`closest_hit_counted`)."""
    if counts is not None:
        counts[0] += 1
    return node_mask(box, node, nx, ny, nz, box_ray, dist)


@helper
def drop_farther(st_t, sp, tfar):
    """The size of a closest-hit walk's stack (entry distances in ``st_t``) after dropping
    the nodes on top that cannot hold a hit nearer than ``tfar``."""
    while sp > 0 and st_t[sp - 1] > tfar:
        sp -= 1
    return sp


@helper
def _push_hit_children(box, node, mask, dist, st_node, st_t, sp):
    """Children of ``node`` in ``mask`` (hit bits, at least one), nearest first: returns
    the child to visit next and the new stack size; the others wait on the stack with
    their entry distances, the nearer ones on top."""
    c0 = ctz(mask)
    mask &= mask - 1
    if mask == 0:
        return child_of(box, node, c0), sp
    c1 = ctz(mask)
    mask &= mask - 1
    if mask == 0:
        if dist[c0] > dist[c1]:
            c0, c1 = c1, c0
        st_node[sp] = child_of(box, node, c1)
        st_t[sp] = dist[c1]
        return child_of(box, node, c0), sp + 1
    # three or more: push all, insertion-sort the pushed run (nearest on top), pop one
    base = sp
    st_node[sp] = child_of(box, node, c0)
    st_t[sp] = dist[c0]
    st_node[sp + 1] = child_of(box, node, c1)
    st_t[sp + 1] = dist[c1]
    sp += 2
    while mask != 0:
        c = ctz(mask)
        mask &= mask - 1
        st_node[sp] = child_of(box, node, c)
        st_t[sp] = dist[c]
        sp += 1
    for i in range(base + 1, sp):
        tn = st_node[i]
        td = st_t[i]
        j = i
        while j > base and st_t[j - 1] < td:
            st_node[j] = st_node[j - 1]
            st_t[j] = st_t[j - 1]
            j -= 1
        st_node[j] = tn
        st_t[j] = td
    return st_node[sp - 1], sp - 1


@helper
def used_lanes(tri, blk):
    """How many of block ``blk``'s 4 lanes hold a triangle."""
    n = 0
    for lane in range(BLOCK):
        n += 1 if tri_id_of(tri, blk, lane) >= 0 else 0
    return n


@helper
def _prefetch_shading(tri, blk, k, tri_n, tri_ng, tri_mat, tri_emit):
    """Start loading the rows of lane ``k`` of block ``blk``'s triangle in the shading
    arrays (see :func:`closest_hit_prefetching`)."""
    i = tri_id_of(tri, blk, k)
    prefetch(tri_n, 9 * i)
    prefetch(tri_n, 9 * i + 8)          # 72 bytes: at most two lines
    prefetch(tri_ng, 3 * i)
    prefetch(tri_mat, i)
    prefetch(tri_emit, i)


@kernel(error_model="numpy")
def _closest_hit(box, n_nodes, root, tri, sph, sph_id, hints, tri_n, tri_ng, tri_mat, tri_emit,
                 ox, oy, oz, dx, dy, dz, tmin, tmax, counts):
    """``closest_hit`` on the pointers to ``acc.nodes, acc.tris, acc.sph, acc.sph_id``,
    starting at node ``root`` (0 for a BVH of its own; a prototype's root in the shared
    arrays of ``raytrace.accel.instances``); with ``hints`` (and a large BVH), the
    prefetches of :func:`closest_hit_prefetching` on the pointers ``tri_n`` ..
    ``tri_emit``; ``counts``: None, or the counters of :func:`closest_hit_counted`
    (``counts is not None`` is decided when Numba compiles: the branches go)."""
    if n_nodes == 0 or not (tmin < tmax):
        return Hit(INF, MISS, -1, 0.0, 0.0)
    best_t = tmax
    hit_kind = MISS
    hit_slot = -1
    hit_u = 0.0
    hit_v = 0.0
    (box_ray, tri_ray), (nx, ny, nz), (kx, ky, kz), (st_node, st_t, dist), (tt, uu, vv) = walk_start(
        ox, oy, oz, dx, dy, dz, tmin, best_t)
    sp = 0
    node = np.int32(root)
    prefetching = n_nodes >= PREFETCH_MIN_NODES
    hinting = hints and prefetching
    while True:
        if node >= 0:
            mask = counted_mask(box, node, nx, ny, nz, box_ray, dist, counts)
            if mask != 0:
                if prefetching and mask & (mask - 1) != 0:   # two or more: the others wait
                    _prefetch_children(box, tri, node, mask)
                node, sp = _push_hit_children(box, node, mask, dist, st_node, st_t, sp)
                continue
        elif leaf_kind(node) == LEAF_KIND_TRI:
            s0 = leaf_start(node)
            for blk in range(s0, s0 + leaf_count(node)):
                if counts is not None:
                    counts[1] += used_lanes(tri, blk)
                m = block_hits(tri, blk, kx, ky, kz, tri_ray, tt, uu, vv)
                while m != 0:
                    k = ctz(m)
                    m &= m - 1
                    if tt[k] < best_t:
                        best_t, hit_kind, hit_slot, hit_u, hit_v = tt[k], TRIANGLE, blk * BLOCK + k, uu[k], vv[k]
                        if hinting:
                            _prefetch_shading(tri, blk, k, tri_n, tri_ng, tri_mat, tri_emit)
            tri_ray[7] = best_t
            box_ray[13] = np.float32(best_t) * _TFAR_SCALE
        else:
            s0 = leaf_start(node)
            for s in range(s0, s0 + leaf_count(node)):
                if counts is not None:
                    counts[1] += 1
                t = intersect_unit_sphere_xf(carray(offset(sph, 12 * s), (3, 4)), ox, oy,
                                             oz, dx, dy, dz, tmin, best_t)
                if t < best_t:
                    best_t, hit_kind, hit_slot = t, SPHERE, s
            tri_ray[7] = best_t
            box_ray[13] = np.float32(best_t) * _TFAR_SCALE
        sp = drop_farther(st_t, sp, box_ray[13])
        if sp == 0:
            break
        node, sp = st_node[sp - 1], sp - 1
    if hit_kind == TRIANGLE:
        return Hit(best_t, TRIANGLE, tri_id_of(tri, hit_slot // BLOCK, hit_slot % BLOCK), hit_u, hit_v)
    if hit_kind == SPHERE:
        return Hit(best_t, SPHERE, sph_id[hit_slot], 0.0, 0.0)
    return Hit(INF, MISS, -1, 0.0, 0.0)


@helper
def any_hit(acc, ox, oy, oz, dx, dy, dz, tmin, tmax):
    """True when the ray ``o + t d`` hits anything with ``tmin < t < tmax`` (early exit).

    Inlined into the caller like ``closest_hit``."""
    return _any_hit(data_ptr(acc.nodes), acc.nodes.shape[0], ROOT, data_ptr(acc.tris),
                    data_ptr(acc.sph), ox, oy, oz, dx, dy, dz, tmin, tmax)


@kernel(error_model="numpy")
def _any_hit(box, n_nodes, root, tri, sph, ox, oy, oz, dx, dy, dz, tmin, tmax):
    """``any_hit`` on the pointers to ``acc.nodes, acc.tris, acc.sph``, from node ``root``."""
    if n_nodes == 0 or not (tmin < tmax):
        return False
    (box_ray, tri_ray), (nx, ny, nz), (kx, ky, kz), (st_node, _, dist), (tt, uu, vv) = walk_start(
        ox, oy, oz, dx, dy, dz, tmin, tmax)
    sp = 0
    node = np.int32(root)
    prefetching = n_nodes >= PREFETCH_MIN_NODES
    while True:
        if node >= 0:
            mask = node_mask(box, node, nx, ny, nz, box_ray, dist)
            if prefetching and mask & (mask - 1) != 0:
                _prefetch_children(box, tri, node, mask)
            while mask != 0:
                c = ctz(mask)
                mask &= mask - 1
                st_node[sp] = child_of(box, node, c)
                sp += 1
        elif leaf_kind(node) == LEAF_KIND_TRI:
            s0 = leaf_start(node)
            for blk in range(s0, s0 + leaf_count(node)):
                if block_hits(tri, blk, kx, ky, kz, tri_ray, tt, uu, vv) != 0:
                    return True
        else:
            s0 = leaf_start(node)
            for s in range(s0, s0 + leaf_count(node)):
                t = intersect_unit_sphere_xf(carray(offset(sph, 12 * s), (3, 4)), ox, oy,
                                             oz, dx, dy, dz, tmin, tmax)
                if t < tmax:
                    return True
        if sp == 0:
            return False
        sp -= 1
        node = st_node[sp]
