"""BVH construction: binned SAH binary tree, collapsed optimally into 8-wide nodes.

Steps (all Numba, no recursion):

1. ``_build_binary``: top-down binned SAH (``NBINS`` bins per axis) over primitive boxes,
   down to leaves of at most ``BIN_LEAF`` primitives that never mix triangles and
   spheres. Below depth ``MAX_SAH_DEPTH`` nodes split at the index median, which bounds
   the depth (and so the traversal stack) for any input.
2. ``_plan_wide``: dynamic programming over the binary tree picks, for every subtree,
   the cheapest (SAH) way to cover it with wide nodes of up to ``WIDTH`` children and
   leaves of up to ``MAX_LEAF_TRIS`` triangles (Ylitie et al. 2017).
3. ``_emit_wide``: writes the nodes depth first and packs leaf triangles 4 at a time
   into structure-of-arrays blocks of their float32 vertices (unused lanes are zero-area
   and never hit); the traversal tests them in float64.

Node boxes are stored in float32, rounded outwards by 4 ulps so that the float32 slab
test in ``traverse.py`` stays conservative. Node records (256 bytes) and triangle blocks
(160 bytes) start on 64- and 32-byte boundaries. Float32 vertices (as in Embree and
Mitsuba) halve the blocks: the bunny's 5.8 MB of float64 blocks outgrew the L2 cache
five times over, and incoherent rays spent a quarter of their walk waiting for them.
"""
import math
from typing import NamedTuple

import numpy as np
from raytrace.jit import helper, kernel

from raytrace.layout import LEAF_KIND_SPH, LEAF_KIND_TRI

WIDTH = 8          # children per node
BLOCK = 4          # triangles per leaf block
NBINS = 16         # SAH bins per axis (32 measured no better on the bunny)
BIN_LEAF = 4       # binary tree: at most this many primitives per leaf
MAX_LEAF_TRIS = 16  # wide tree: at most this many triangles (4 blocks) per leaf
MAX_LEAF_SPH = 4   # wide tree: at most this many spheres per leaf
# Relative costs for the surface area heuristic: one wide node test, one 4-triangle
# block test, one sphere test (measured: node and block cost about the same).
COST_NODE = 1.0
COST_BLOCK = 1.0
COST_SPHERE = 1.0
MAX_SAH_DEPTH = 48  # deeper binary nodes split at the index median: depth <= 48 + log2(P)
STACK_SIZE = (WIDTH - 1) * (MAX_SAH_DEPTH + 32) + 1  # enough for any tree built here
NODE_ROWS = 8      # node record rows: 6 box rows, child ids, padding
CHILD_ROW = 6
TRI_ROWS = 10      # block rows: v0 xyz, v1 xyz, v2 xyz, triangle ids
ID_ROW = 9


# leaf child ids (raytrace.layout: ~(start << 4 | count << 1 | kind))
@helper
def encode_leaf(start, count, kind):
    """The (negative) int32 child id of a leaf of ``count`` items from ``start``."""
    return ~np.int32((start << 4) | (count << 1) | kind)


@helper
def leaf_kind(child):
    """LEAF_KIND_TRI or LEAF_KIND_SPH of a leaf child id (< 0)."""
    return (~child) & 1


@helper
def leaf_count(child):
    """Number of triangle blocks or spheres of a leaf child id."""
    return ((~child) >> 1) & 7


@helper
def leaf_start(child):
    """First triangle block or sphere slot of a leaf child id."""
    return (~child) >> 4


class Accel(NamedTuple):
    """An 8-wide BVH over triangles and spheres; numpy arrays only (passed to Numba).

    ``nodes``: (N, 8, 8) float32; per node the rows ``lo_x, hi_x, lo_y, hi_y, lo_z, hi_z``
    of its 8 child boxes (empty slots: ``lo = +inf, hi = -inf``), then row 6 holding the
    child ids as int32 bits (``>= 0`` an inner node, ``< 0`` a leaf, see
    ``raytrace.layout.encode_leaf``) and a
    padding row. ``nodes_i``: the same memory viewed as int32.
    ``tris``: (B, 10, 4) float32 leaf-ordered blocks of 4 triangles, rows ``v0 x,y,z,
    v1 x,y,z, v2 x,y,z`` and the original triangle index as int32 bits (-1 in unused
    lanes); ``tris_i``: the same memory viewed as int32.
    ``sph``: (S, 3, 4) float64 leaf-ordered world->object maps; ``sph_id``: (S,) int64
    original sphere index. N == 0 for an empty scene.
    """
    nodes: np.ndarray
    nodes_i: np.ndarray
    tris: np.ndarray
    tris_i: np.ndarray
    sph: np.ndarray
    sph_id: np.ndarray


@helper
def _half_area(lx, ly, lz, hx, hy, hz):
    ex = hx - lx
    ey = hy - ly
    ez = hz - lz
    if ex < 0.0 or ey < 0.0 or ez < 0.0:
        return 0.0
    return ex * ey + ey * ez + ez * ex


@helper
def _leaf_cost(n, kind):
    if kind == LEAF_KIND_TRI:
        return COST_BLOCK * ((n + BLOCK - 1) // BLOCK)
    return COST_SPHERE * n


@helper
def _grown(lx, ly, lz, hx, hy, hz, lo, hi, p):
    """The box (lo (3), hi (3)) grown by row p of ``lo`` and ``hi``."""
    return ((min(lx, lo[p, 0]), min(ly, lo[p, 1]), min(lz, lo[p, 2])),
            (max(hx, hi[p, 0]), max(hy, hi[p, 1]), max(hz, hi[p, 2])))


@helper
def _range_bounds(order, a, b, lo, hi, cen, kind, box, cbox):
    """Box (``box``: lo xyz, hi xyz) and centroid box (``cbox``) of ``order[a:b]``;
    returns how many of those primitives are triangles."""
    lx = ly = lz = clx = cly = clz = math.inf
    hx = hy = hz = chx = chy = chz = -math.inf
    ntri = 0
    for i in range(a, b):
        p = order[i]
        (lx, ly, lz), (hx, hy, hz) = _grown(lx, ly, lz, hx, hy, hz, lo, hi, p)
        (clx, cly, clz), (chx, chy, chz) = _grown(clx, cly, clz, chx, chy, chz, cen, cen, p)
        if kind[p] == LEAF_KIND_TRI:
            ntri += 1
    box[0], box[1], box[2], box[3], box[4], box[5] = lx, ly, lz, hx, hy, hz
    cbox[0], cbox[1], cbox[2], cbox[3], cbox[4], cbox[5] = clx, cly, clz, chx, chy, chz
    return ntri


@helper
def _best_split(order, a, b, lo, hi, cen, kind, cbox, bins, sweep):
    """Binned SAH over the three axes for ``order[a:b]``.

    Returns ``(cost, axis, k)``: split after bin k on that axis, cost = sum over both
    sides of area * leaf cost (``inf``, axis -1 when all centroids coincide).
    ``bins`` (3, NBINS, 8) and ``sweep`` (NBINS,) are scratch.
    """
    for ax in range(3):
        for k in range(NBINS):
            for c in range(3):
                bins[ax, k, c] = math.inf
                bins[ax, k, 3 + c] = -math.inf
            bins[ax, k, 6] = 0.0        # primitives in the bin
            bins[ax, k, 7] = 0.0        # triangles in the bin
    scale = np.empty(3)
    for ax in range(3):
        ext = cbox[3 + ax] - cbox[ax]
        scale[ax] = NBINS / ext if ext > 0.0 else 0.0
    s0, s1, s2 = scale[0], scale[1], scale[2]
    c0, c1, c2 = cbox[0], cbox[1], cbox[2]
    for i in range(a, b):
        p = order[i]
        tri = 1.0 if kind[p] == LEAF_KIND_TRI else 0.0
        for ax in range(3):
            sc = s0 if ax == 0 else (s1 if ax == 1 else s2)
            if sc == 0.0:
                continue
            k = int((cen[p, ax] - (c0 if ax == 0 else (c1 if ax == 1 else c2))) * sc)
            k = min(max(k, 0), NBINS - 1)
            for c in range(3):
                bins[ax, k, c] = min(bins[ax, k, c], lo[p, c])
                bins[ax, k, 3 + c] = max(bins[ax, k, 3 + c], hi[p, c])
            bins[ax, k, 6] += 1.0
            bins[ax, k, 7] += tri
    best = math.inf
    best_axis = -1
    best_k = 0
    swept = np.empty(6)
    for ax in range(3):
        if cbox[3 + ax] - cbox[ax] <= 0.0:
            continue
        for side in range(2):           # 0: sweep from the right, 1: from the left
            for c in range(3):
                swept[c] = math.inf
                swept[3 + c] = -math.inf
            n = 0
            nt = 0
            for j in range(NBINS - 1):
                k = NBINS - 1 - j if side == 0 else j
                for c in range(3):
                    swept[c] = min(swept[c], bins[ax, k, c])
                    swept[3 + c] = max(swept[3 + c], bins[ax, k, 3 + c])
                n += int(bins[ax, k, 6])
                nt += int(bins[ax, k, 7])
                cost = _half_area(swept[0], swept[1], swept[2], swept[3], swept[4], swept[5]) * (
                    _leaf_cost(nt, LEAF_KIND_TRI) + _leaf_cost(n - nt, LEAF_KIND_SPH))
                if side == 0:
                    sweep[k] = cost if n > 0 else math.inf
                elif n > 0 and n < b - a:
                    cost += sweep[k + 1]
                    if cost < best:
                        best = cost
                        best_axis = ax
                        best_k = k
    return best, best_axis, best_k


@helper
def _partition(order, a, b, cen, kind, axis, k, cbox):
    """Reorder ``order[a:b]`` so that primitives in bins <= k of ``axis`` come first
    (axis 3: triangles first); returns the split index."""
    lo = 0.0
    scale = 0.0
    if axis < 3:
        lo = cbox[axis]
        scale = NBINS / (cbox[3 + axis] - lo)
    i = a
    j = b - 1
    while i <= j:
        p = order[i]
        if axis == 3:
            left = kind[p] == LEAF_KIND_TRI
        else:
            left = min(max(int((cen[p, axis] - lo) * scale), 0), NBINS - 1) <= k
        if left:
            i += 1
        else:
            order[i] = order[j]
            order[j] = p
            j -= 1
    return i


@helper
def _split_point(order, a, b, lo, hi, cen, kind, box, cbox, bins, sweep, nt, depth):
    """Where to split ``order[a:b]`` (reordering it), or -1 when the node stays a leaf.

    Binned SAH down to ``MAX_SAH_DEPTH``; a small node becomes a leaf when that is no
    dearer than splitting; triangles and spheres are separated when mixed; the index
    median when the centroids coincide or the tree is too deep."""
    n = b - a
    mixed = nt != 0 and nt != n
    cost = math.inf
    axis = -1
    k = 0
    if depth < MAX_SAH_DEPTH:
        cost, axis, k = _best_split(order, a, b, lo, hi, cen, kind, cbox, bins, sweep)
    if not mixed and n <= BIN_LEAF:
        area = _half_area(box[0], box[1], box[2], box[3], box[4], box[5])
        leaf = _leaf_cost(n, LEAF_KIND_TRI if nt > 0 else LEAF_KIND_SPH)
        if area <= 0.0 or leaf * area <= COST_NODE * area + cost:
            return -1
    if mixed and (axis < 0 or n <= BIN_LEAF):
        axis = 3                           # separate triangles from spheres
    if axis < 0:
        return a + n // 2                  # centroids coincide, or too deep: by index
    m = _partition(order, a, b, cen, kind, axis, k, cbox)
    if m == a or m == b:
        m = a + n // 2
    return m


@kernel
def _build_binary(lo, hi, kind):
    """Binned SAH binary BVH over P primitive boxes ``lo, hi`` (P, 3) with ``kind`` (P,).

    Returns ``(nlo, nhi, left, right, start, count, ntris, order)``: node boxes (M, 3),
    children (-1 for a leaf), each node's primitive range ``order[start:start+count]``
    (subtrees own contiguous ranges) and how many of them are triangles; ``order`` (P,)
    is the primitive permutation. Children always have larger indices than parents.
    """
    P = lo.shape[0]
    M = max(2 * P - 1, 1)
    nbox = np.empty((M, 6))
    left = np.empty(M, np.int64)
    right = np.empty(M, np.int64)
    start = np.empty(M, np.int64)
    count = np.empty(M, np.int64)
    ntris = np.empty(M, np.int64)
    order = np.empty(P, np.int64)
    cen = np.empty((P, 3))
    for i in range(P):
        order[i] = i
        for c in range(3):
            cen[i, c] = 0.5 * (lo[i, c] + hi[i, c])
    cbox = np.empty(6)
    bins = np.empty((3, NBINS, 8))
    sweep = np.empty(NBINS)
    stack = np.empty((P + 2, 4), np.int64)     # node, first, end, depth
    stack[0, 0] = 0
    stack[0, 1] = 0
    stack[0, 2] = P
    stack[0, 3] = 0
    sp = 1
    nnodes = 1
    while sp > 0:
        sp -= 1
        node, a, b, depth = stack[sp, 0], stack[sp, 1], stack[sp, 2], stack[sp, 3]
        n = b - a
        nt = _range_bounds(order, a, b, lo, hi, cen, kind, nbox[node], cbox)
        start[node] = a
        count[node] = n
        ntris[node] = nt
        left[node] = right[node] = -1
        mixed = nt != 0 and nt != n
        if n == 1 and not mixed:
            continue
        m = _split_point(order, a, b, lo, hi, cen, kind, nbox[node], cbox, bins, sweep, nt, depth)
        if m < 0:
            continue                           # a leaf
        left[node] = nnodes
        right[node] = nnodes + 1
        stack[sp, 0] = nnodes + 1              # right child: [m, b)
        stack[sp, 1] = m
        stack[sp, 2] = b
        stack[sp + 1, 0] = nnodes              # left child: [a, m), processed first
        stack[sp + 1, 1] = a
        stack[sp + 1, 2] = m
        stack[sp, 3] = stack[sp + 1, 3] = depth + 1
        sp += 2
        nnodes += 2
    nlo = np.empty((nnodes, 3))
    nhi = np.empty((nnodes, 3))
    for i in range(nnodes):
        for c in range(3):
            nlo[i, c] = nbox[i, c]
            nhi[i, c] = nbox[i, 3 + c]
    return nlo, nhi, left[:nnodes], right[:nnodes], start[:nnodes], count[:nnodes], \
        ntris[:nnodes], order


@kernel
def _plan_wide(nlo, nhi, left, right, count, ntris):
    """Optimal collapse of the binary tree into WIDTH-wide nodes (dynamic programming).

    ``cost[n, i]`` is the least SAH cost of covering node n's subtree with at most i
    roots (each a leaf or a wide node); ``split[n, i]`` says how: 0 = use i - 1 roots,
    k > 0 = k roots from the left child and i - k from the right. ``split[n, 1]`` is the
    split of the WIDTH slots of n itself when it becomes a wide node; ``leaf[n]`` says
    n becomes a leaf instead (after Ylitie et al. 2017, "Efficient incoherent ray
    traversal on GPUs through compressed wide BVHs").
    """
    M = nlo.shape[0]
    W = WIDTH
    cost = np.empty((M, W + 1))
    split = np.zeros((M, W + 1), np.int64)
    leaf = np.zeros(M, np.bool_)
    dcost = np.empty(W + 1)
    dk = np.zeros(W + 1, np.int64)
    for n in range(M - 1, -1, -1):
        area = _half_area(nlo[n, 0], nlo[n, 1], nlo[n, 2], nhi[n, 0], nhi[n, 1], nhi[n, 2])
        c = count[n]
        nt = ntris[n]
        leaf_cost = math.inf
        if nt == c and c <= MAX_LEAF_TRIS:
            leaf_cost = area * _leaf_cost(c, LEAF_KIND_TRI)
        elif nt == 0 and c <= MAX_LEAF_SPH:
            leaf_cost = area * _leaf_cost(c, LEAF_KIND_SPH)
        lc = left[n]
        if lc < 0:
            leaf[n] = True
            for i in range(1, W + 1):
                cost[n, i] = leaf_cost
            continue
        rc = right[n]
        for i in range(2, W + 1):
            best = math.inf
            bk = 1
            for k in range(1, i):
                v = cost[lc, k] + cost[rc, i - k]
                if v < best:
                    best = v
                    bk = k
            dcost[i] = best
            dk[i] = bk
        inner = area * COST_NODE + dcost[W]
        if leaf_cost <= inner:
            leaf[n] = True
            cost[n, 1] = leaf_cost
        else:
            cost[n, 1] = inner
            split[n, 1] = dk[W]
        for i in range(2, W + 1):
            if cost[n, i - 1] <= dcost[i]:
                cost[n, i] = cost[n, i - 1]
            else:
                cost[n, i] = dcost[i]
                split[n, i] = dk[i]
    return split, leaf


@helper
def _f32_down(x):
    """A float32 value a few ulps below ``x`` (conservative lower box bound)."""
    f = np.float32(x)
    for _ in range(4):
        f = np.nextafter(f, np.float32(-np.inf))
    return f


@helper
def _f32_up(x):
    """A float32 value a few ulps above ``x`` (conservative upper box bound)."""
    f = np.float32(x)
    for _ in range(4):
        f = np.nextafter(f, np.float32(np.inf))
    return f


@helper
def _wide_children(bnode, left, right, split, leaf, kids, ex_node, ex_slots):
    """The up to WIDTH binary nodes that become the children of the wide node made from
    binary node ``bnode`` (the plan's split of its slots), written to ``kids``; returns
    how many. ``ex_node``, ``ex_slots`` are scratch."""
    if leaf[bnode]:
        kids[0] = bnode            # the root is a leaf: one child
        return 1
    # expand (left, k) and (right, W - k) into at most W roots
    ex_node[0] = right[bnode]
    ex_slots[0] = WIDTH - split[bnode, 1]
    ex_node[1] = left[bnode]
    ex_slots[1] = split[bnode, 1]
    esp = 2
    nk = 0
    while esp > 0:
        esp -= 1
        m = ex_node[esp]
        i = ex_slots[esp]
        while i >= 2 and split[m, i] == 0:
            i -= 1
        if i == 1:
            kids[nk] = m
            nk += 1
            continue
        k = split[m, i]
        ex_node[esp] = right[m]
        ex_slots[esp] = i - k
        ex_node[esp + 1] = left[m]
        ex_slots[esp + 1] = k
        esp += 2
    return nk


@helper
def _pack_triangles(tri, tri_id, nblk, order, a, n, v0, v1, v2):
    """Copy the triangles ``order[a:a+n]`` into blocks from ``nblk`` (unused lanes: a
    zero triangle, never hit). Returns the leaf's child id and the new block count."""
    nb = (n + BLOCK - 1) // BLOCK
    for i in range(nb * BLOCK):
        blk = nblk + i // BLOCK
        lane = i % BLOCK
        if i < n:
            t = order[a + i]
            tri_id[blk, lane] = t
            for r in range(3):
                tri[blk, r, lane] = v0[t, r]
                tri[blk, 3 + r, lane] = v1[t, r]
                tri[blk, 6 + r, lane] = v2[t, r]
        else:
            tri_id[blk, lane] = -1
            for r in range(9):
                tri[blk, r, lane] = 0.0
    return encode_leaf(nblk, nb, LEAF_KIND_TRI), nblk + nb


@helper
def _pack_spheres(sph, sph_id, nsp, order, a, n, ntri, sph_w2o):
    """Copy the spheres ``order[a:a+n]`` (primitive ids from ``ntri`` on) to slots from
    ``nsp``. Returns the leaf's child id and the new slot count."""
    for i in range(n):
        s = order[a + i] - ntri
        sph_id[nsp + i] = s
        for r in range(3):
            for q in range(4):
                sph[nsp + i, r, q] = sph_w2o[s, r, q]
    return encode_leaf(nsp, n, LEAF_KIND_SPH), nsp + n


@kernel
def _emit_wide(nlo, nhi, left, right, start, count, order, kind, ntri, split, leaf,
               v0, v1, v2, sph_w2o):
    """Write the planned wide nodes and pack the leaf primitives, depth first.

    Returns ``(box (N, NODE_ROWS, W) float32 without child ids, child (N, W) int32,
    tri (B, TRI_ROWS, 4) float64 without ids (exactly float32 values), tri_id (B, 4) int64,
    sph, sph_id)`` (``_pack`` stores the blocks in float32 with int32 ids).
    """
    M = nlo.shape[0]
    box = np.empty((M, NODE_ROWS, WIDTH), np.float32)
    child = np.zeros((M, WIDTH), np.int32)
    P = order.shape[0]
    tri = np.empty((P, TRI_ROWS, BLOCK))   # at most one block per triangle; only the
    tri_id = np.empty((P, BLOCK), np.int64)  # blocks written below are ever touched
    sph = np.empty((P - ntri, 3, 4))
    sph_id = np.empty(P - ntri, np.int64)
    nblk = np.int64(0)     # int64, not the literal 0: typing the loop from a literal
    nsp = np.int64(0)      # would compile _pack_triangles / _pack_spheres twice
    st_bin = np.empty(M + 1, np.int64)     # pending (binary node, wide node) pairs
    st_wide = np.empty(M + 1, np.int64)
    st_bin[0] = 0
    st_wide[0] = 0
    sp = 1
    nwide = 1
    kids = np.empty(WIDTH, np.int64)
    ex_node = np.empty(2 * WIDTH + 2, np.int64)
    ex_slots = np.empty(2 * WIDTH + 2, np.int64)
    while sp > 0:
        sp -= 1
        wnode = st_wide[sp]
        nk = _wide_children(st_bin[sp], left, right, split, leaf, kids, ex_node, ex_slots)
        for c in range(WIDTH):
            box[wnode, 7, c] = 0.0
            if c >= nk:                     # empty slot: a box that nothing enters
                for r in range(3):
                    box[wnode, 2 * r, c] = np.inf
                    box[wnode, 2 * r + 1, c] = -np.inf
                child[wnode, c] = 0
                continue
            k = kids[c]
            for r in range(3):
                box[wnode, 2 * r, c] = _f32_down(nlo[k, r])
                box[wnode, 2 * r + 1, c] = _f32_up(nhi[k, r])
            if not leaf[k]:
                child[wnode, c] = nwide
                st_bin[sp] = k
                st_wide[sp] = nwide
                sp += 1
                nwide += 1
            elif kind[order[start[k]]] == LEAF_KIND_TRI:
                child[wnode, c], nblk = _pack_triangles(tri, tri_id, nblk, order, start[k], count[k],
                                                        v0, v1, v2)
            else:
                child[wnode, c], nsp = _pack_spheres(sph, sph_id, nsp, order, start[k], count[k],
                                                     ntri, sph_w2o)
    return box[:nwide], child[:nwide], tri[:nblk], tri_id[:nblk], sph, sph_id


def _as_rows(name, a, tail):
    """``a`` as a C-contiguous float64 array of shape (n,) + tail; size-0 input -> n = 0."""
    a = np.asarray(a, dtype=np.float64)
    if a.size == 0:
        return np.zeros((0,) + tail)
    if a.shape[1:] != tail or a.ndim != 1 + len(tail):
        raise ValueError(f"build_accel: {name} must have shape (n, {', '.join(map(str, tail))}),"
                         f" got {a.shape}")
    return np.ascontiguousarray(a)


def float32_vertices(v):
    """Vertices rounded to the nearest float32 (beyond its range: inf), kept as float64:
    the values the triangle blocks hold."""
    with np.errstate(over="ignore"):
        return np.asarray(v, np.float64).astype(np.float32).astype(np.float64)


def build_accel(tri_v0, tri_v1, tri_v2, sph_w2o, sph_lo, sph_hi):
    """Build the BVH over T triangles and S spheres.

    ``tri_v0, tri_v1, tri_v2``: (T, 3) float64 world-space vertices, rounded to the
    nearest float32 for the triangle blocks (the scene builder rounds them so already,
    so that shading sees the same triangles). ``sph_w2o``: (S, 3, 4)
    float64 world->object affine maps of unit spheres at the origin (``q = A p + b``,
    ``A = w2o[:, :3]``, ``b = w2o[:, 3]``). ``sph_lo, sph_hi``: (S, 3) float64 world boxes.
    T and/or S may be 0. Triangles with an exactly zero cross product ``e1 x e2`` (zero
    area) and primitives with non-finite numbers are left out: they are never hit.
    Returns an :class:`Accel`; hits report indices into the arrays given here.
    """
    v0 = _as_rows("tri_v0", tri_v0, (3,))
    v1 = _as_rows("tri_v1", tri_v1, (3,))
    v2 = _as_rows("tri_v2", tri_v2, (3,))
    w2o = _as_rows("sph_w2o", sph_w2o, (3, 4))
    slo = _as_rows("sph_lo", sph_lo, (3,))
    shi = _as_rows("sph_hi", sph_hi, (3,))
    if not len(v0) == len(v1) == len(v2):
        raise ValueError(f"build_accel: tri_v0, tri_v1, tri_v2 lengths differ "
                         f"({len(v0)}, {len(v1)}, {len(v2)})")
    if len(v0) > 2 ** 31 - 1:
        raise ValueError(f"build_accel: {len(v0)} triangles; the blocks hold int32 ids "
                         f"(at most 2**31 - 1 triangles)")
    if not len(w2o) == len(slo) == len(shi):
        raise ValueError(f"build_accel: sph_w2o, sph_lo, sph_hi lengths differ "
                         f"({len(w2o)}, {len(slo)}, {len(shi)})")
    # the blocks hold float32 vertices: round first, so that the boxes and the zero-area
    # test are those of the triangles the traversal tests
    v0, v1, v2 = (float32_vertices(v) for v in (v0, v1, v2))
    cross = np.cross(v1 - v0, v2 - v0)
    tri_keep = np.flatnonzero(np.any(cross != 0.0, axis=1)
                              & np.all(np.isfinite(np.hstack([v0, v1, v2])), axis=1))
    sph_keep = np.flatnonzero(np.all(np.isfinite(w2o.reshape(-1, 12)), axis=1)
                              & np.all(np.isfinite(slo), axis=1)
                              & np.all(np.isfinite(shi), axis=1))
    v0, v1, v2 = v0[tri_keep], v1[tri_keep], v2[tri_keep]
    w2o, slo, shi = w2o[sph_keep], slo[sph_keep], shi[sph_keep]
    T = len(v0)
    S = len(w2o)
    if T + S == 0:
        return _pack(np.zeros((0, NODE_ROWS, WIDTH), np.float32), np.zeros((0, WIDTH), np.int32),
                     np.zeros((0, TRI_ROWS, BLOCK)), np.zeros((0, BLOCK), np.int64),
                     np.zeros((0, 3, 4)), np.zeros(0, np.int64))
    lo = np.concatenate([np.minimum(np.minimum(v0, v1), v2), slo])
    hi = np.concatenate([np.maximum(np.maximum(v0, v1), v2), shi])
    kind = np.concatenate([np.zeros(T, np.int64), np.ones(S, np.int64)])
    nlo, nhi, left, right, start, count, ntris, order = _build_binary(lo, hi, kind)
    split, leaf = _plan_wide(nlo, nhi, left, right, count, ntris)
    box, child, tri, tri_id, sph, sph_id = _emit_wide(
        nlo, nhi, left, right, start, count, order, kind, T, split, leaf, v0, v1, v2, w2o)
    tri_id = np.where(tri_id >= 0, tri_keep[np.maximum(tri_id, 0)], -1)
    return _pack(box, child, tri, tri_id, sph, sph_keep[sph_id])


def _aligned_empty(shape, dtype, align=64):
    """An uninitialised C-contiguous array whose data starts on an ``align``-byte boundary."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(n + align, np.uint8)
    off = (-raw.ctypes.data) % align
    return raw[off:off + n].view(dtype).reshape(shape)


def _pack(box, child, tri, tri_id, sph, sph_id):
    """Aligned node and block arrays with the ids stored in their spare rows."""
    nodes = _aligned_empty(box.shape, np.float32)
    nodes[...] = box
    nodes_i = nodes.view(np.int32)
    nodes_i[:, CHILD_ROW, :] = child
    tris = _aligned_empty(tri.shape, np.float32)
    tris[:, :ID_ROW] = tri[:, :ID_ROW]      # exact: the vertices are float32 values
    tris_i = tris.view(np.int32)
    tris_i[:, ID_ROW, :] = tri_id
    return Accel(nodes, nodes_i, tris, tris_i, np.ascontiguousarray(sph),
                 np.ascontiguousarray(sph_id))
