"""The fence around ``raytrace.accel.simd`` (BVH kernels written in LLVM IR).

- The four helpers (SIMD and plain-loop versions, and the public names) against NumPy /
  exact-arithmetic references of the documented arithmetic, bit for bit, on edge cases:
  NaN, inf, empty slots, zero-extent boxes, axis-parallel rays and zero direction
  components, tmin/tmax limits, rays through vertices and edges shared by triangles.
- ``RAYTRACE_SIMD=0`` (a fresh process) gives the same closest hits, any hits and batch
  results bit for bit as the SIMD kernels, on the same rays.
- A broken SIMD kernel (simulated) makes the probe fall back to the loops with one
  warning, and the results stay right.
- The Numba cache folder carries the switches: a forced fallback never loads SIMD code
  from the cache and back.
- The IR helpers load and store through opaque pointers (what llvmlite is moving to).
"""
import ctypes
import json
import math
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
from fractions import Fraction

import numpy as np
import pytest
from numba import njit

from raytrace.jit import modes
from raytrace.accel import simd
from raytrace.accel.build import BLOCK, CHILD_ROW, ID_ROW, NODE_ROWS, TRI_ROWS, WIDTH
from raytrace.accel.lowlevel import data_ptr
from raytrace.accel.simd import same_bits

REPO = pathlib.Path(__file__).resolve().parents[1]
INF = math.inf
FAR = 1.0 + 2.0 ** -19        # the traversal's widening of the far planes
TINY = 1e-30                  # the traversal's stand-in for a zero direction component


# ---------------------------------------------------------------- exact references

def fma32(a, b, c):
    """float32 fused multiply-add, correctly rounded (NumPy): the float64 product of two
    float32 is exact; the float64 sum is rounded to odd (TwoSum error), so that rounding
    it to float32 rounds the exact value once (53 >= 24 + 2 bits)."""
    a, b, c = (np.asarray(x, np.float32).astype(np.float64) for x in (a, b, c))
    with np.errstate(all="ignore"):
        p = a * b
        s = p + c
        bb = s - p
        err = (p - (s - bb)) + (c - bb)           # s + err == p + c exactly
        even = (s.view(np.int64) & 1) == 0
        fix = np.isfinite(err) & (err != 0) & even
        s = np.where(fix, np.nextafter(s, np.where(err > 0, INF, -INF)), s)
    return s.astype(np.float32)


def fma64(a, b, c):
    """float64 fused multiply-add, correctly rounded (exact rational arithmetic)."""
    a, b, c = float(a), float(b), float(c)
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return a * b + c                          # inf / NaN: the same as unfused
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:                                # IEEE: -0 only for (-0) + (-0)
        product_negative = (math.copysign(1, a) * math.copysign(1, b)) < 0
        both_negative_zero = a * b == 0 and product_negative and math.copysign(1, c) < 0
        return -0.0 if both_negative_zero else 0.0
    try:
        return float(exact)                       # correctly rounded
    except OverflowError:
        return math.copysign(INF, exact)


def _vmax(a, b):
    return np.where(a > b, a, b)


def _vmin(a, b):
    return np.where(a < b, a, b)


def node_mask_ref(record, ray, nx, ny, nz):
    """``node_mask`` of one node record ((NODE_ROWS, W) float32) -> (mask, dist)."""
    near = [fma32(record[r], ray[k], ray[3 + k]) for k, r in enumerate((nx, ny, nz))]
    far = [fma32(record[r ^ 1], ray[6 + k], ray[9 + k]) for k, r in enumerate((nx, ny, nz))]
    t0 = _vmax(_vmax(near[0], near[1]), _vmax(near[2], np.full(WIDTH, ray[12])))
    t1 = _vmin(_vmin(far[0], far[1]), _vmin(far[2], np.full(WIDTH, ray[13])))
    mask = sum(1 << c for c in range(WIDTH) if t0[c] <= t1[c])
    return mask, t0.astype(np.float32)


def _div(a, b):
    if b == 0.0:
        return math.copysign(INF, b) * math.copysign(1, a) if a != 0 else math.nan
    return a / b


def block_hits_ref(block, ray, kx, ky, kz):
    """``block_hits`` of one block ((TRI_ROWS, B) float32, widened exactly) -> (mask, t, u, v)."""
    okx, oky, okz, nsx, nsy, sz, tmin, tmax = (float(x) for x in ray)
    mask = 0
    tuv = np.zeros((3, BLOCK))
    for k in range(BLOCK):
        sheared = []
        for vertex in range(3):
            px, py, pz = (float(block[3 * vertex + a, k]) for a in (kx, ky, kz))
            pz = pz - okz
            sheared.append((fma64(nsx, pz, px - okx), fma64(nsy, pz, py - oky), pz))
        (ax, ay, az), (bx, by, bz), (cx, cy, cz) = sheared

        def dop(a, b, c, d):
            w = c * d
            return fma64(a, b, -w) - fma64(c, d, -w)

        u_e, v_e, w_e = dop(cx, by, cy, bx), dop(ax, cy, ay, cx), dop(bx, ay, by, ax)
        lo = float(_vmin(u_e, _vmin(v_e, w_e)))
        hi = float(_vmax(u_e, _vmax(v_e, w_e)))
        det = (u_e + v_e) + w_e
        t_sc = fma64(u_e, az, fma64(v_e, bz, w_e * cz))
        inv = _div(1.0, det)
        t = t_sc * (sz * inv)
        tuv[:, k] = t, v_e * inv, w_e * inv
        if (lo >= 0 or hi <= 0) and (det < 0 or det > 0) and tmin < t < tmax:
            mask |= 1 << k
    return mask, tuv


# ---------------------------------------------------------------- ray constants

def _rcp(x):
    return 1.0 / x if x != 0 else 1.0 / math.copysign(TINY, x)


def box_ray(o, d, tmin=0.0, tmax=INF):
    """``node_mask``'s 14 float32 constants and near rows for the ray ``o + t d``."""
    inv = np.array([_rcp(x) for x in d])
    o = np.asarray(o, float)
    r = np.empty(14, np.float32)
    with np.errstate(all="ignore"):
        r[0:3] = inv
        r[3:6] = -o * inv
        r[6:9] = inv * FAR
        r[9:12] = -o * inv * FAR
    ft = np.float32(tmin)
    r[12] = ft if ft <= tmin else np.nextafter(ft, np.float32(-INF))
    r[13] = np.float32(tmax) * np.float32(FAR)
    return r, tuple(2 * a + (1 if inv[a] < 0 else 0) for a in range(3))


def tri_ray(o, d, tmin=0.0, tmax=INF):
    """``block_hits``' 8 float64 constants and axis order for the ray ``o + t d``."""
    dx, dy, dz = (float(x) for x in d)
    if abs(dx) >= abs(dy) and abs(dx) >= abs(dz):
        kx, ky, kz = 1, 2, 0
    elif abs(dy) >= abs(dz):
        kx, ky, kz = 2, 0, 1
    else:
        kx, ky, kz = 0, 1, 2
    ik = _rcp(d[kz])
    if ik < 0.0:
        kx, ky = ky, kx
    with np.errstate(all="ignore"):
        ray = np.array([o[kx], o[ky], o[kz], -d[kx] * ik, -d[ky] * ik, ik, tmin, tmax], float)
    return ray, (kx, ky, kz)


# ---------------------------------------------------------------- kernels under test

def _node_runner(fn):
    def run(box, nodes, nears, rays, dist, masks):
        p = data_ptr(box)
        for i in range(rays.shape[0]):
            masks[i] = fn(p, nodes[i], nears[i, 0], nears[i, 1], nears[i, 2],
                          data_ptr(rays[i]), data_ptr(dist[i]))
    return njit(run)


def _block_runner(fn):
    def run(tri, blks, axes, rays, tuv, masks):
        p = data_ptr(tri)
        for i in range(rays.shape[0]):
            masks[i] = fn(p, blks[i], axes[i, 0], axes[i, 1], axes[i, 2], data_ptr(rays[i]),
                          data_ptr(tuv[i, 0]), data_ptr(tuv[i, 1]), data_ptr(tuv[i, 2]))
    return njit(run)


def _ids_runner(child_fn, tri_fn):
    def run(box, tri, out):
        n = 0
        for node in range(box.shape[0]):        # array arguments (not pointers)
            for c in range(WIDTH):
                out[n] = child_fn(box, node, c)
                n += 1
        for blk in range(tri.shape[0]):
            for k in range(BLOCK):
                out[n] = tri_fn(tri, blk, k)
                n += 1
    return njit(run)


IMPLEMENTATIONS = ["public", "simd", "loops"]
NODE_FN = {"public": simd.node_mask, "simd": simd._node_mask_simd,
           "loops": simd._node_mask_loops}
BLOCK_FN = {"public": simd.block_hits, "simd": simd._block_hits_simd,
            "loops": simd._block_hits_loops}
IDS_FN = {"public": (simd.child_of, simd.tri_id_of),
          "simd": (simd._child_of_simd, simd._tri_id_of_simd),
          "loops": (simd._child_of_loops, simd._tri_id_of_loops)}
_runners = {}


def run_nodes(impl, box, cases):
    """``cases``: list of (node, ray14, nears) -> (masks, dists)."""
    key = ("node", impl)
    if key not in _runners:
        _runners[key] = _node_runner(NODE_FN[impl])
    n = len(cases)
    nodes = np.array([c[0] for c in cases], np.int64)
    rays = np.array([c[1] for c in cases], np.float32).reshape(n, 14)
    nears = np.array([c[2] for c in cases], np.int64).reshape(n, 3)
    dist = np.zeros((n, WIDTH), np.float32)
    masks = np.zeros(n, np.int64)
    _runners[key](np.ascontiguousarray(box), nodes, nears, rays, dist, masks)
    return masks, dist


def run_blocks(impl, tri, cases):
    """``cases``: list of (block, ray8, axes) -> (masks, tuv (n, 3, B))."""
    key = ("block", impl)
    if key not in _runners:
        _runners[key] = _block_runner(BLOCK_FN[impl])
    n = len(cases)
    blks = np.array([c[0] for c in cases], np.int64)
    rays = np.array([c[1] for c in cases], float).reshape(n, 8)
    axes = np.array([c[2] for c in cases], np.int64).reshape(n, 3)
    tuv = np.zeros((n, 3, BLOCK))
    masks = np.zeros(n, np.int64)
    _runners[key](np.ascontiguousarray(tri), blks, axes, rays, tuv, masks)
    return masks, tuv


def check_nodes(box, cases):
    """All implementations agree bit for bit with ``node_mask_ref``; returns the masks."""
    ref = [node_mask_ref(box[node], ray, *nears) for node, ray, nears in cases]
    ref_masks = np.array([m for m, _ in ref], np.int64)
    ref_dist = np.array([d for _, d in ref], np.float32).reshape(len(cases), WIDTH)
    for impl in IMPLEMENTATIONS:
        masks, dist = run_nodes(impl, box, cases)
        bad = np.flatnonzero(masks != ref_masks)
        assert bad.size == 0, (impl, bad[:5], masks[bad[:5]], ref_masks[bad[:5]])
        assert same_bits(dist, ref_dist), impl
    return ref_masks


def check_blocks(tri, cases):
    """All implementations agree bit for bit with ``block_hits_ref``; returns the masks
    and t, u, v."""
    ref = [block_hits_ref(tri[blk], ray, *axes) for blk, ray, axes in cases]
    ref_masks = np.array([m for m, _ in ref], np.int64)
    ref_tuv = np.array([t for _, t in ref]).reshape(len(cases), 3, BLOCK)
    for impl in IMPLEMENTATIONS:
        masks, tuv = run_blocks(impl, tri, cases)
        bad = np.flatnonzero(masks != ref_masks)
        assert bad.size == 0, (impl, bad[:5], masks[bad[:5]], ref_masks[bad[:5]])
        assert same_bits(tuv, ref_tuv), impl
    return ref_masks, ref_tuv


def node_records(lo, hi):
    """(N, NODE_ROWS, W) float32 records from child boxes lo, hi (N, W, 3)."""
    box = np.zeros((lo.shape[0], NODE_ROWS, WIDTH), np.float32)
    for a in range(3):
        box[:, 2 * a] = lo[:, :, a]
        box[:, 2 * a + 1] = hi[:, :, a]
    return box


def tri_blocks(v0, v1, v2):
    """(ceil(n / B), TRI_ROWS, B) float32 blocks of triangles (unused lanes zero; the
    vertices rounded to float32, as ``build_accel`` does)."""
    n = len(v0)
    nb = -(-n // BLOCK)
    tri = np.zeros((nb, TRI_ROWS, BLOCK), np.float32)
    for t in range(n):
        for v, vert in enumerate((v0, v1, v2)):
            tri[t // BLOCK, 3 * v:3 * v + 3, t % BLOCK] = vert[t]
    tri.view(np.int32)[:, ID_ROW] = -1
    return tri


DIRECTIONS = [(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, 0, -1), (0.0, -0.0, 1.0),
              (1, 1, 0), (0, -1, 1), (0.3, -0.2, 0.9), (-0.5, 0.5, 0.1), (2e-8, 1, -3e-9),
              (1e-300, 0.0, -1.0), (0, 0, 0)]


# ---------------------------------------------------------------- node_mask

def test_node_mask_random_boxes_match_reference():
    rng = np.random.default_rng(1)
    lo = rng.uniform(-1, 0.5, (6, WIDTH, 3))
    hi = lo + rng.uniform(0, 1, (6, WIDTH, 3))
    hi[0, 0] = lo[0, 0]                                  # a point box
    hi[1, :4, 2] = lo[1, :4, 2]                          # flat boxes
    lo[2, 5:], hi[2, 5:] = INF, -INF                     # empty slots
    box = node_records(lo, hi)
    cases = []
    windows = [(0.0, INF), (-INF, INF), (0.0, 0.5), (0.9, 1.1), (2.0, INF), (1.0, 1.0)]
    for _ in range(400):
        node = rng.integers(0, 6)
        c = rng.integers(0, 5 if node == 2 else WIDTH)   # not at an empty slot
        target = lo[node, c] + rng.uniform(-0.3, 1.3, 3) * (hi[node, c] - lo[node, c])
        o = rng.uniform(-2, 2, 3)
        s = 10.0 ** rng.uniform(-3, 3)
        d = (target - o) * s                             # aimed at a point at t = 1 / s
        d[rng.random(3) < 0.15] = 0.0                    # zero direction components
        tmin, tmax = windows[rng.integers(0, len(windows))]
        ray, nears = box_ray(o, d, tmin / s, tmax / s)
        cases.append((int(node), ray, nears))
    masks = check_nodes(box, cases)
    assert 0.2 < np.mean(masks != 0) < 0.9               # both outcomes well represented


def test_node_mask_empty_slots_never_hit():
    lo = np.full((1, WIDTH, 3), INF)
    hi = np.full((1, WIDTH, 3), -INF)
    lo[0, 0], hi[0, 0] = -1.0, 1.0                       # slot 0 a real box
    box = node_records(lo, hi)
    cases = [(0, *box_ray(o, d, tmin, tmax)) for d in DIRECTIONS
             for o in [(0, 0, 0), (5, -3, 2), (-0.0, 0.0, 0.0)]
             for tmin, tmax in [(0.0, INF), (-INF, INF)]]
    masks = check_nodes(box, cases)
    assert np.all(masks & ~1 == 0)                       # never an empty slot
    hits_from_inside = masks[[i for i, c in enumerate(cases) if c[1][3:6].any() == 0]]
    assert np.all(hits_from_inside & 1)                  # the real box around the origin


def test_node_mask_point_boxes_hit_by_rays_through_them():
    """A zero-extent (point) box is hit by a ray through it: entry and exit distance are
    equal, and the widened far planes keep the exit at or after the entry."""
    rng = np.random.default_rng(2)
    pts = rng.integers(-8, 9, (WIDTH, 3)) / 8.0          # exact in float32
    box = node_records(pts[None], pts[None])             # W point boxes
    dirs = [(1, 1, 1), (-1, 0.5, 2), (0.5, -2, -1), (-1, -1, 1), (4, 0.25, -0.5)]
    cases = [(0, *box_ray(pts[c] - 2.0 * np.asarray(d, float), d))
             for d in dirs for c in range(WIDTH)]
    masks = check_nodes(box, cases)
    for k, case in enumerate(cases):
        assert masks[k] >> (k % WIDTH) & 1, case
    _, dist = run_nodes("public", box, cases)
    assert np.all(dist[np.arange(len(cases)), np.arange(len(cases)) % WIDTH] == 2.0)


def test_node_mask_axis_parallel_rays_inside_and_outside_the_slab():
    lo = np.zeros((1, WIDTH, 3))
    hi = np.ones((1, WIDTH, 3))
    shift = np.arange(WIDTH)[:, None] * np.array([2.0, 0.0, 0.0])
    box = node_records(lo + shift, hi + shift)           # unit boxes along x, 2 apart
    cases, want = [], []
    for c in range(WIDTH):
        for y, z, inside in [(0.5, 0.5, True), (0.999, 0.001, True), (1.5, 0.5, False),
                             (0.5, -0.25, False)]:
            for d in [(1.0, 0.0, 0.0), (-1.0, -0.0, 0.0)]:
                o = (2.0 * c + 0.5, y, z)                # inside box c along x
                cases.append((0, *box_ray(o, d)))
                want.append(inside)
    masks = check_nodes(box, cases)
    for k, (case, inside) in enumerate(zip(cases, want)):
        c = k // 8
        assert bool(masks[k] >> c & 1) == inside, (c, case)


def test_node_mask_tmin_tmax_window_and_entry_distances():
    lo = np.array([[[2.0 * c, -1, -1] for c in range(WIDTH)]])
    hi = lo + np.array([1.0, 2.0, 2.0])                  # box c spans t in [2c, 2c + 1]
    box = node_records(lo, hi)
    ray = lambda tmin, tmax: (0, *box_ray((0.0, 0.0, 0.0), (1.0, 0.0, 0.0), tmin, tmax))
    cases = [ray(0.0, INF), ray(4.5, INF), ray(0.0, 3.5), ray(4.5, 6.5), ray(7.2, 7.4),
             ray(15.5, INF), ray(0.0, 0.0)]
    masks = check_nodes(box, cases)
    assert masks[0] == 0xFF
    assert masks[1] == 0xFC                               # boxes ending before 4.5 dropped
    assert masks[2] == 0x03
    assert masks[3] == 0x0C
    assert masks[4] == 0x00                               # between boxes 3 and 4
    assert masks[5] == 0x00                               # after the last box
    assert masks[6] == 0x01                               # t = 0 touches box 0 only
    _, dist = run_nodes("public", box, cases[:2])
    np.testing.assert_array_equal(dist[0], 2.0 * np.arange(WIDTH))
    assert dist[1][2] == 4.5                              # entry clipped to tmin


def test_node_mask_nan_and_inf():
    rng = np.random.default_rng(3)
    lo = rng.uniform(-1, 0, (2, WIDTH, 3))
    hi = lo + 1.0
    lo[1, 0, 0] = np.nan                                  # a NaN box coordinate
    hi[1, 1] = INF                                        # an unbounded box
    lo[1, 2] = -INF
    box = node_records(lo, hi)
    cases = []
    for o, d in [((np.nan, 0, 0), (1, 0, 0)), ((0, 0, 0), (np.nan, 1, 0)),
                 ((INF, 0, 0), (-1, 0, 0)), ((0, -INF, 0), (0, 1, 0)), ((0, 0, 0), (INF, 1, 1)),
                 ((0, 0, 0), (1, 1, 1)), ((0.2, 0.3, -5), (0, 0, 1))]:
        for node in range(2):
            cases.append((node, *box_ray(o, d)))
    check_nodes(box, cases)


# ---------------------------------------------------------------- block_hits

def fan(n, center=(0.0, 0.0, 0.0), radius=1.0, z=0.0):
    """n triangles around a shared centre vertex, each sharing edges with its neighbours
    (coordinates exact in float32, as the blocks hold them)."""
    ang = 2 * np.pi * np.arange(n) / n + 0.1
    rim = np.stack([radius * np.cos(ang), radius * np.sin(ang), np.full(n, z)], axis=1)
    rim = rim.astype(np.float32).astype(float)
    c = np.broadcast_to(np.asarray(center, np.float32).astype(float), (n, 3))
    return c.copy(), rim.copy(), np.roll(rim, -1, axis=0)


def test_block_hits_random_triangles_match_reference():
    rng = np.random.default_rng(4)
    n = 40
    c = rng.uniform(-1, 1, (n, 1, 3))
    v = c + 0.6 * rng.normal(size=(n, 3, 3))
    v[5] = v[5, 0]                                        # a zero-size triangle
    v[6, 2] = 0.5 * (v[6, 0] + v[6, 1])                   # a degenerate one (compared only)
    tri = tri_blocks(v[:, 0], v[:, 1], v[:, 2])           # the last block has unused lanes
    cases = []
    windows = [(0.0, INF), (-INF, INF), (0.0, 0.5), (0.9, 1.1), (2.0, INF)]
    for _ in range(300):
        t = rng.integers(0, n)
        b = rng.uniform(-0.2, 1.0, 2)
        target = v[t, 0] + b[0] * (v[t, 1] - v[t, 0]) + b[1] * (v[t, 2] - v[t, 0])
        o = rng.uniform(-2, 2, 3)
        s = 10.0 ** rng.uniform(-2, 2)
        d = (target - o) * s                             # aimed at a point at t = 1 / s
        d[rng.random(3) < 0.1] = 0.0
        tmin, tmax = windows[rng.integers(0, len(windows))]
        ray, axes = tri_ray(o, d, tmin / s, tmax / s)
        cases.append((int(t // BLOCK), ray, axes))
    masks, _ = check_blocks(tri, cases)
    assert 0.1 < np.mean(masks != 0) < 0.9
    lanes = [(c[0], k) for c, m in zip(cases, masks) for k in range(BLOCK) if m >> k & 1]
    assert all(blk * BLOCK + k < n for blk, k in lanes)   # no unused lane ever hit
    assert not any(blk * BLOCK + k == 5 for blk, k in lanes)


def test_block_hits_watertight_at_shared_vertices_and_edges():
    """Rays aimed at the shared centre vertex and at points of the shared edges of a
    closed fan hit at least one of its triangles, from every direction."""
    rng = np.random.default_rng(5)
    v0, v1, v2 = fan(8, center=(0.1, -0.2, 0.3), z=0.3)
    tri = tri_blocks(v0, v1, v2)
    targets = [v0[0]] + [v0[0] + s * (v1[k] - v0[0]) for k in range(8)
                         for s in (0.25, 0.5, 0.8125)]
    cases = []
    for p in targets:
        for d in list(DIRECTIONS[:-1]) + list(rng.normal(size=(6, 3))):
            d = np.asarray(d, float)
            if abs(d[2]) < 1e-3:                         # parallel to the fan's plane
                continue
            ray, axes = tri_ray(p - 3.0 * d, d)
            cases += [(0, ray, axes), (1, ray, axes)]
    masks, tuv = check_blocks(tri, cases)
    hits = (masks[0::2] != 0) | (masks[1::2] != 0)
    assert np.all(hits), np.flatnonzero(~hits)[:10]
    t = np.where(masks[:, None] >> np.arange(BLOCK) & 1, tuv[:, 0], np.nan)
    np.testing.assert_allclose(np.nanmin(t.reshape(-1, 2 * BLOCK), axis=1), 3.0, rtol=1e-12)


def test_block_hits_tmin_tmax_are_strict():
    v0, v1, v2 = fan(4)
    tri = tri_blocks(v0, v1, v2)
    o, d = np.array([0.2, 0.1, 2.0]), np.array([0.0, 0.0, -1.0])
    ray, axes = tri_ray(o, d)
    (m,), tuv = run_blocks("public", tri, [(0, ray, axes)])
    k = int(np.log2(m))
    assert m == 1 << k
    t = tuv[0, 0, k]
    assert abs(t - 2.0) < 1e-12
    windows = [(0.0, t), (0.0, np.nextafter(t, INF)), (t, INF), (np.nextafter(t, -INF), INF),
               (t, t), (-INF, INF)]
    cases = [(0, tri_ray(o, d, a, b)[0], axes) for a, b in windows]
    masks, _ = check_blocks(tri, cases)
    assert [bool(x >> k & 1) for x in masks] == [False, True, False, True, False, True]


def test_block_hits_nan_and_inf_never_hit():
    v0, v1, v2 = fan(4)
    v0 = v0.copy()
    v0[3] = [np.nan, 0, 0]                                # a NaN vertex in lane 3
    tri = tri_blocks(v0, v1, v2)
    cases = []
    for o, d in [((np.nan, 0.1, 2), (0, 0, -1)), ((0.1, 0.1, 2), (np.nan, 0, -1)),
                 ((0.1, 0.1, INF), (0, 0, -1)), ((0.1, 0.1, 2), (0, 0, -INF)),
                 ((0.1, 0.1, 2), (0, 0, 0)), ((0.1, 0.1, -INF), (0, 0, 1))]:
        ray, axes = tri_ray(np.array(o, float), np.array(d, float))
        cases.append((0, ray, axes))
    masks, _ = check_blocks(tri, cases)
    assert np.all(masks[[0, 1, 2, 3, 5]] == 0), masks     # (0, 0, 0): compared only
    # lane 3 (NaN vertex) is never hit, the others are for a plain ray through the fan
    ok_cases = [(0, *tri_ray(np.array([x, y, 2.0]), np.array([0, 0, -1.0])))
                for x, y in [(0.3, 0.3), (-0.3, 0.3), (-0.3, -0.3), (0.3, -0.3)]]
    masks, _ = check_blocks(tri, ok_cases)
    assert np.all(masks & 8 == 0) and np.count_nonzero(masks) >= 2


# ---------------------------------------------------------------- ids

def test_child_and_triangle_ids_keep_every_bit_pattern():
    """Ids read back exactly, NaN bit patterns (quiet and signalling) included."""
    child = np.array([[0, 1, -1, 2 ** 31 - 1, -2 ** 31, 0x7F800001, -8388607, 0x7FC00000],
                      [~5, ~(1 << 27), 12345, -2, 0x7F800000, -0x00800000, 3, 4]], np.int64)
    ids = np.array([[5, -1, 2 ** 31 - 1, -2 ** 31], [0x7F800001, -(2 ** 22) - 3,
                                                     0x7FC00000, 1]], np.int64)
    box = np.zeros((2, NODE_ROWS, WIDTH), np.float32)
    box.view(np.int32)[:, CHILD_ROW] = child.astype(np.int32)
    tri = np.zeros((2, TRI_ROWS, BLOCK), np.float32)
    tri.view(np.int32)[:, ID_ROW] = ids.astype(np.int32)
    want = np.concatenate([child.astype(np.int32).ravel(), ids.ravel()])
    for impl in IMPLEMENTATIONS:
        key = ("ids", impl)
        if key not in _runners:
            _runners[key] = _ids_runner(*IDS_FN[impl])
        out = np.zeros(want.size, np.int64)
        _runners[key](box, tri, out)
        np.testing.assert_array_equal(out, want, err_msg=impl)


# ---------------------------------------------------------------- the switch, end to end

def run_python(code, cache_dir, source=REPO, **env_vars):
    """Run ``code`` in a fresh Python (``raytrace`` from ``source``, the rest of the
    repository and ``tests`` importable) with the Numba cache under ``cache_dir``;
    returns (its last stdout line as JSON, stderr)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAYTRACE_")}
    env.update(NUMBA_CACHE_DIR=str(cache_dir),
               PYTHONPATH=os.pathsep.join(map(str, (source, REPO, REPO / "tests"))),
               **env_vars)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cache_dir.parent,
                       env=env, capture_output=True, text=True, timeout=1500)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


TRACE_ALL = """
    import json, warnings
    import numpy as np
    warnings.simplefilter("always")
    from test_simd import trace_all
    from raytrace.accel import simd
    np.savez({out!r}, **trace_all())
    print(json.dumps([simd.simd_in_use()]))
    """


def fence_scene_and_rays():
    """A BVH over a random soup, a closed icosphere and ellipsoids, and rays: random ones,
    axis-parallel ones, ones aimed exactly at shared vertices and edge midpoints, ones
    with zero, NaN or infinite components."""
    from test_accel import icosphere, random_ellipsoids, random_rays, random_soup
    from raytrace.accel import build_accel

    rng = np.random.default_rng(11)
    s0, s1, s2 = random_soup(rng, 300)
    v, f = icosphere(2)
    v = 0.3 * v + 0.5
    tris = [np.concatenate([s0, v[f[:, 0]]]), np.concatenate([s1, v[f[:, 1]]]),
            np.concatenate([s2, v[f[:, 2]]])]
    w2o, lo, hi = random_ellipsoids(rng, 20)
    acc = build_accel(*tris, w2o, lo, hi)
    o, d = random_rays(rng, 3000)
    targets = np.concatenate([v, 0.5 * (v[f[:, 0]] + v[f[:, 1]])])
    o2 = rng.uniform(-1, 2, (len(targets), 3))
    axis = np.repeat(np.eye(3), 100, axis=0) * rng.choice([-1.0, 1.0], (300, 1))
    o3 = rng.uniform(0, 1, (300, 3)) - 2.0 * axis
    odd_o = np.array([[0.5, 0.5, -1], [np.nan, 0.5, -1], [0.5, 0.5, -INF], [0.5, 0.5, -1],
                      [0.5, 0.5, -1], [0.5, 0.5, 0.5], [0.5, 0.5, -1]])
    odd_d = np.array([[0, 0, 1], [0, 0, 1], [0, 0, 1], [np.nan, 0, 1], [INF, 1, 1],
                      [0, 0, 0], [1e-300, -0.0, 1e300]])
    return acc, np.concatenate([o, o2, o3, odd_o]), np.concatenate([d, targets - o2, axis, odd_d])


def trace_all():
    """closest_hit, any_hit and trace_closest_batch on ``fence_scene_and_rays`` for a few
    [tmin, tmax] windows -> dict of arrays."""
    from test_accel import accel_any, accel_closest
    from raytrace.accel import trace_closest_batch

    acc, o, d = fence_scene_and_rays()
    out = {}
    for w, (tmin, tmax) in enumerate([(0.0, INF), (0.3, 1.7), (1e-9, 0.5), (1.0, 1.0)]):
        for name, a in zip("tkiuv", accel_closest(acc, o, d, tmin, tmax)):
            out[f"closest_{name}_{w}"] = np.asarray(a)
        for name, a in zip("tkiuv", trace_closest_batch(acc, o, d, tmax, tmin)):
            out[f"batch_{name}_{w}"] = np.asarray(a)
        out[f"any_{w}"] = accel_any(acc, o, d, tmin, np.full(len(o), tmax))
    return out


def test_stored_probe_results_are_what_the_loops_give():
    """The runtime probe compares the SIMD kernels with ``simd_probe.npz`` (so that a cold
    start does not compile the loops too): the loops must still give exactly those
    values, and the probe must see hits, misses and both kinds of ids."""
    got = simd._probe_results(False)
    for name, a, b in zip(simd.PROBE_NAMES, got, simd.probe_expected()):
        assert same_bits(a, b), name
    masks, dist, hits, tuv, ids = got
    child_bits = np.unpackbits(masks.astype(np.uint8))
    assert 0 < child_bits.sum() < child_bits.size and 0 < np.count_nonzero(hits) < hits.size
    assert np.isinf(dist).any() and np.isfinite(dist).any()
    assert (ids < 0).any() and (ids > 2 ** 24).any()      # beyond float32's exact integers


@pytest.mark.skipif(not simd.simd_in_use(), reason="the SIMD kernels are off in this process")
@pytest.mark.parametrize("field", range(5))
def test_probe_rejects_one_flipped_bit(monkeypatch, field):
    """Negative control of the runtime probe: one bit changed in one stored value makes it
    fall back to the loops, with the warning."""
    stored = [a.copy() for a in simd.probe_expected()]
    flat = stored[field].reshape(-1).view(np.uint8)
    flat[3] ^= 1                                          # a low mantissa / value bit
    monkeypatch.setattr(simd, "probe_expected", lambda: tuple(stored))
    monkeypatch.setattr(simd, "_simd_ok", None)
    with pytest.warns(RuntimeWarning, match="differ from the plain loops"):
        assert not simd.simd_in_use()


def test_forced_loops_give_the_same_hits_as_simd(tmp_path):
    """The same rays through the whole traversal in this process and in a fresh one with
    the other setting of ``RAYTRACE_SIMD``: bit for bit the same hits."""
    here = trace_all()
    other = "0" if simd.simd_in_use() else "1"
    (in_use,), err = run_python(TRACE_ALL.format(out=str(tmp_path / "other.npz")),
                                tmp_path / "cache", RAYTRACE_SIMD=other)
    assert in_use == (other == "1") != simd.simd_in_use()
    assert "RuntimeWarning" not in err
    there = np.load(tmp_path / "other.npz")
    assert sorted(there.files) == sorted(here)
    for key in here:
        assert same_bits(here[key], there[key]), key
    assert np.mean(here["closest_k_0"] != 0) > 0.3        # plenty of hits compared


BROKEN_SIMD = """
    import json, warnings
    import numpy as np
    import raytrace.accel.simd as simd

    def broken(*args):
        raise AttributeError("'PointerType' object has no attribute 'pointee'")

    simd._vfma = broken            # what a removed llvmlite API would do to the codegen
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from test_simd import trace_all
        result = trace_all()
    print(json.dumps([simd.simd_in_use(), [str(w.message) for w in caught
                                           if issubclass(w.category, RuntimeWarning)],
                      int(np.count_nonzero(result["closest_k_0"]))]))
    """


def test_broken_simd_falls_back_with_one_warning(tmp_path):
    # RAYTRACE_PREBUILT=0: the shipped kernels would be loaded, and the codegen never run
    (in_use, messages, hits), _ = run_python(BROKEN_SIMD, tmp_path / "cache", RAYTRACE_PREBUILT="0")
    assert not in_use
    assert len(messages) == 1 and "plain loops" in messages[0] and "pointee" in messages[0]
    here = trace_all()
    assert hits == np.count_nonzero(here["closest_k_0"]) > 0


CACHE_STATS = """
    import json, os
    import numba
    from numba.core.dispatcher import Dispatcher
    import raytrace
    from raytrace.accel import batch, simd, traverse
    from test_simd import fence_scene_and_rays
    from raytrace.accel import trace_closest_batch
    acc, o, d = fence_scene_and_rays()
    trace_closest_batch(acc, o[:50], d[:50])
    hits = misses = 0
    for mod in (traverse, batch):
        for obj in vars(mod).values():
            if isinstance(obj, Dispatcher) and obj.signatures:
                hits += sum(obj.stats.cache_hits.values())
                misses += sum(obj.stats.cache_misses.values())
    from raytrace.jit import cache
    print(json.dumps([str(cache.store()), simd.simd_in_use(), hits, misses,
                      raytrace.__file__]))
    """


def _files(folder):
    return {p.name: p.stat().st_mtime_ns for p in pathlib.Path(folder).rglob("*") if p.is_file()}


def test_cache_folders_keep_simd_and_loops_apart(tmp_path):
    # a frozen copy of the package: its kernels (their dependency keys) must not
    # change between the runs, whatever happens to the working tree meanwhile
    source = tmp_path / "src"
    shutil.copytree(REPO / "raytrace", source / "raytrace",
                    ignore=shutil.ignore_patterns("__pycache__"))
    base = tmp_path / "cache"

    def run(**env):   # RAYTRACE_PREBUILT=0: the test is about what compiles into which folder
        return run_python(CACHE_STATS, base, source=source, RAYTRACE_PREBUILT="0", **env)[0]

    simd_dir, on, hits, misses, origin = run()
    assert origin == str(source / "raytrace" / "__init__.py")
    assert on and simd_dir.endswith("-simd-borrow") and misses > 0
    simd_files = _files(simd_dir)
    assert any(name.endswith(".nbk") for name in simd_files)
    # forced loops: nothing loaded from the SIMD kernels' cache
    loops_dir, on, hits, misses, _ = run(RAYTRACE_SIMD="0")
    assert not on and loops_dir.endswith("-nosimd-borrow")
    assert loops_dir.replace("-nosimd-", "-simd-") == simd_dir
    assert hits == 0 and misses > 0
    # ... but the loops' own cache works (so "no hits" above is not vacuous)
    again, _, hits, _, _ = run(RAYTRACE_SIMD="0")
    assert again == loops_dir and hits > 0
    # and the SIMD folder is untouched by the loop runs and still serves SIMD runs
    assert _files(simd_dir) == simd_files
    again, on, hits, _, _ = run()
    assert again == simd_dir and on and hits > 0
    # vice versa: with only the loops' kernels cached, a SIMD run compiles its own
    shutil.rmtree(simd_dir)
    again, on, hits, misses, _ = run()
    assert again == simd_dir and on and hits == 0 and misses > 0


@pytest.mark.parametrize("simd_value, borrow_value, tag", [
    (None, None, "simd-borrow"), ("0", None, "nosimd-borrow"), ("off", "0", "nosimd-noborrow"),
    ("1", "false", "simd-noborrow"), ("yes", "no", "simd-noborrow")])
def test_mode_tag_names_the_switches(monkeypatch, simd_value, borrow_value, tag):
    for name, value in (("RAYTRACE_SIMD", simd_value), ("RAYTRACE_BORROW", borrow_value)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    assert modes.mode_tag() == tag


def test_unknown_switch_value_warns_and_counts_as_on(monkeypatch):
    monkeypatch.setenv("RAYTRACE_SIMD", "fast")
    with pytest.warns(RuntimeWarning, match="RAYTRACE_SIMD='fast' not understood"):
        assert modes.switch_on("RAYTRACE_SIMD")


def test_the_switches_are_part_of_every_key_and_of_the_cache_folder():
    """A kernel compiled with one mode is never loaded for the other: the mode tag is in
    every dependency key's salt and names the cache folder (``raytrace/jit/cache.py``)."""
    from raytrace.jit import cache, keys
    tag = modes.mode_tag()
    assert keys.salt().endswith("|" + tag)
    if cache.store() is not None:
        assert cache.store().name == f"kernels-{tag}"


# ---------------------------------------------------------------- opaque pointers

def test_ir_helpers_load_and_store_through_opaque_pointers():
    """``_vload`` / ``_store`` / ``_load_at`` build valid IR for opaque (``ptr``) and typed
    pointer arguments alike, and the code moves the right elements. (LLVM before 17,
    llvmlite 0.44, has no opaque pointers: typed ones only there.)"""
    import llvmlite.binding as llvm
    from llvmlite import ir

    f32, i64 = ir.FloatType(), ir.IntType(64)
    mod = ir.Module(name="fence")
    mod.triple = llvm.get_process_triple()
    variants = [("typed", ir.PointerType(f32))]
    if llvm.llvm_version_info[0] >= 17:
        variants.append(("opaque", ir.PointerType()))
    for name, pty in variants:
        fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [pty, pty, i64]), name=name)
        b = ir.IRBuilder(fn.append_basic_block())
        src, dst, index = fn.args
        vec = simd._vload(b, src, index, f32, WIDTH)
        first_as_int = simd._load_at(b, src, index, f32, ir.IntType(32))
        vec = b.insert_element(vec, b.bitcast(first_as_int, f32), ir.Constant(ir.IntType(32), 1))
        simd._store(b, vec, dst, align=4)
        b.ret_void()
    text = str(mod)
    if len(variants) == 2:
        assert "load <8 x float>, ptr %" in text and "store <8 x float> %" in text
        assert "bitcast ptr" not in text                  # opaque: no casts needed
    module = llvm.parse_assembly(text)
    module.verify()
    machine = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
    for name, _ in variants:
        f = proto(engine.get_function_address(name))
        a = np.arange(20, dtype=np.float32)
        out = np.zeros(WIDTH, np.float32)
        f(a.ctypes.data, out.ctypes.data, 5)
        np.testing.assert_array_equal(out, [5, 5, 7, 8, 9, 10, 11, 12], err_msg=name)


def test_prefetch_emits_the_instruction_and_changes_no_result():
    """``lowlevel.prefetch`` is a hint: it must reach the machine code (the trick works)
    and must leave the values read unchanged, even for addresses past the data."""
    from raytrace.accel.lowlevel import prefetch, prefetch_emitted

    @njit
    def summed(a, ahead):
        p = data_ptr(a)
        s = 0.0
        for i in range(a.size):
            prefetch(p, i + ahead)          # up to `ahead` elements past the end
            s += a[i]
        return s

    a = np.arange(1000.0)
    assert summed(a, 64) == a.sum()
    assert summed(a, 10 ** 6) == a.sum()
    assert prefetch_emitted()
    asm = summed.inspect_asm(summed.signatures[0])
    import platform
    if platform.machine() in ("x86_64", "AMD64"):
        assert "prefetcht0" in asm
    else:
        assert "prfm" in asm or "prefetch" in asm.lower()
