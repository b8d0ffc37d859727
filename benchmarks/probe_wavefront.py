"""Probe: would a wavefront path tracer (stages over arrays of paths) close the per-path
gap to Mitsuba's LLVM backend on the Cornell box? Run by hand:

    python benchmarks/probe_wavefront.py [--spp 16] [--batch 4096] [--rounds 3] [--stages]

The renderer follows one path at a time (``kernels/path.py``); Mitsuba's ``llvm_ad_rgb``
runs each stage of all paths in 16-wide vector code. This probe renders the benchmark's
Cornell box (256², diffuse walls, one area light, max_depth 8, Russian roulette from
depth 5, next-event estimation with the power heuristic) with one simplified integrator
in five shapes, on one thread, and prints paths per second beside the renderer's own
(``raytrace.render``, Sobol sampler):

- ``scalar``: one path at a time, the closest hit and the shadow ray by a loop over the
  36 triangles; ``scalar_bvh``: the same through the renderer's BVH (``accel``);
- ``wavefront``: a batch of paths advances bounce by bounce; the ray stages are loops
  with the triangles outside and the rays inside, which LLVM's loop vectoriser turns
  into SIMD across rays; shading is one loop over the live paths;
  ``wavefront_bvh``: the same with the ray stages through the BVH, one ray at a time;
- ``wavefront_simd``: every stage a loop over arrays (numbers, light choice, shading
  written with selects only, rays): an attempt at SIMD shading. ``--stages`` also prints
  its time stage by stage (``timed_wavefront_simd``: the same stages driven from Python).

All five do the same arithmetic with the same random numbers (a counter hash of path,
bounce and dimension) and agree to the last bit in the mean; the renderer's image
agrees with them to its noise (``tests/test_probe_wavefront.py``). The integrator is
the renderer's for this scene minus what the scene does not use (textures, other
materials, spheres, environment, Sobol points); it is not the renderer and writes no
image.

What it showed (2026-12-02, AMD EPYC, x86-64-v3 code; ``benchmarks/results/
performance_round.md``): the stage structure alone gains nothing (``wavefront_bvh``
about ``scalar_bvh``); the SIMD intersection loops gain about 17 % on 36 triangles
(``wavefront``), a brute force that does not scale to real meshes; the shading loop is
not vectorised, not even in ``wavefront_simd``: LLVM's remarks say "cannot identify
array bounds" (rows gathered by hit index in a loop that also stores, with no
no-alias information from Numba) and, before the quarter-turn switch of
``cos_sin_2pi`` was replaced by selects, "unsupported switch". The simplified
integrator is itself about 1.3x the renderer per path (``scalar_bvh``).
"""
import argparse
import math
import os
import sys
import time

import numpy as np
from numba import njit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from raytrace.accel import any_hit, closest_hit        # noqa: E402
from raytrace.kernels.trig import (C2, C4, C6, C8, C10, C12, C14, C16, S3, S5, S7, S9,  # noqa: E402
                                   S11, S13, S15)
from raytrace.layout import TRIANGLE                   # noqa: E402

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_K = np.uint64(0x9E3779B97F4A7C15)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0
EPS = 1e-4
INV_PI = 1.0 / math.pi


@njit(cache=True, inline="always")
def rnd(path, dim):
    """Uniform [0, 1) from (path, dim): SplitMix64's finaliser of a counter."""
    z = np.uint64(path) * _K + np.uint64(dim)
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    z = z ^ (z >> _S31)
    return float(z >> _S11) * _INV53


@njit(cache=True, inline="always")
def mis(a, b):
    a2 = a * a
    return a2 / (a2 + b * b)


@njit(cache=True, inline="always")
def camera_ray(cam, width, height, pid, spp):
    """Pinhole camera ray through a uniformly jittered point of the path's pixel."""
    pixel = pid // spp
    i, j = pixel // width, pixel % width
    u = (j + rnd(pid, 0)) / width * 2.0 - 1.0
    v = 1.0 - (i + rnd(pid, 1)) / height * 2.0
    dx = cam[1, 0] + u * cam[2, 0] + v * cam[3, 0]
    dy = cam[1, 1] + u * cam[2, 1] + v * cam[3, 1]
    dz = cam[1, 2] + u * cam[2, 2] + v * cam[3, 2]
    inv = 1.0 / math.sqrt(dx * dx + dy * dy + dz * dz)
    return cam[0, 0], cam[0, 1], cam[0, 2], dx * inv, dy * inv, dz * inv


@njit(cache=True, inline="always")
def moller_trumbore(ax, ay, az, e1x, e1y, e1z, e2x, e2y, e2z, ox, oy, oz, dx, dy, dz):
    """-> (t, hit) of the ray o + t d with the triangle (a, a + e1, a + e2), both sides,
    t > 0; straight-line code (LLVM vectorises the ray loops that call it)."""
    px = dy * e2z - dz * e2y
    py = dz * e2x - dx * e2z
    pz = dx * e2y - dy * e2x
    det = e1x * px + e1y * py + e1z * pz
    inv = 1.0 / det
    sx, sy, sz = ox - ax, oy - ay, oz - az
    u = (sx * px + sy * py + sz * pz) * inv
    qx = sy * e1z - sz * e1y
    qy = sz * e1x - sx * e1z
    qz = sx * e1y - sy * e1x
    v = (dx * qx + dy * qy + dz * qz) * inv
    tt = (e2x * qx + e2y * qy + e2z * qz) * inv
    return tt, (det != 0.0) & (u >= 0.0) & (v >= 0.0) & (u + v <= 1.0) & (tt > 0.0)


@njit(cache=True, inline="always")
def tri_test(v0, e1, e2, t, ox, oy, oz, dx, dy, dz):
    """``moller_trumbore`` for triangle t of the flat arrays."""
    return moller_trumbore(v0[t, 0], v0[t, 1], v0[t, 2], e1[t, 0], e1[t, 1], e1[t, 2],
                           e2[t, 0], e2[t, 1], e2[t, 2], ox, oy, oz, dx, dy, dz)


@njit(cache=True, inline="always")
def cos_sin_2pi_selects(u):
    """``kernels.trig.cos_sin_2pi`` with the quarter turn applied by selects (no switch:
    LLVM does not vectorise loops holding one)."""
    x = 4.0 * u
    q = math.floor(x + 0.5)
    r = (x - q) * (0.5 * math.pi)
    r2 = r * r
    s = r + r * r2 * (S3 + r2 * (S5 + r2 * (S7 + r2 * (S9 + r2 * (S11 + r2 * (S13 + r2 * S15))))))
    c = 1.0 + r2 * (C2 + r2 * (C4 + r2 * (C6 + r2 * (C8 + r2 * (C10 + r2 * (C12 + r2 * (C14 + r2 * C16)))))))
    quarter = int(q) & 3
    odd = (quarter & 1) != 0
    c1 = -s if odd else c
    s1 = c if odd else s
    neg = (quarter & 2) != 0
    return (-c1 if neg else c1), (-s1 if neg else s1)


@njit(cache=True, inline="always")
def light_sample(v0, e1, e2, ng, lt, larea, px, py, pz, nx, ny, nz, u1, u2):
    """A uniform point q on light triangle lt seen from p with normal n -> (q, the
    shadow ray's origin p + EPS n, the cosines at q and at p, the light's solid-angle
    pdf (all lights' area ``larea``), the squared distance)."""
    su = math.sqrt(u1)
    b1, b2 = 1.0 - su, u2 * su
    qx = v0[lt, 0] + b1 * e1[lt, 0] + b2 * e2[lt, 0]
    qy = v0[lt, 1] + b1 * e1[lt, 1] + b2 * e2[lt, 1]
    qz = v0[lt, 2] + b1 * e1[lt, 2] + b2 * e2[lt, 2]
    sox, soy, soz = px + EPS * nx, py + EPS * ny, pz + EPS * nz
    wx, wy, wz = qx - px, qy - py, qz - pz
    d2 = wx * wx + wy * wy + wz * wz
    inv = 1.0 / math.sqrt(d2)
    wx, wy, wz = wx * inv, wy * inv, wz * inv
    cos_l = -(ng[lt, 0] * wx + ng[lt, 1] * wy + ng[lt, 2] * wz)
    cos_s = nx * wx + ny * wy + nz * wz
    return qx, qy, qz, sox, soy, soz, cos_l, cos_s, d2 / (larea * cos_l)


@njit(cache=True, inline="always")
def cosine_direction(nx, ny, nz, u3, u4):
    """A cosine-weighted direction around the unit normal n (Duff et al.'s frame) ->
    (direction, its local z = cos theta)."""
    r = math.sqrt(u3)
    c4, s4 = cos_sin_2pi_selects(u4)
    lx, ly = r * c4, r * s4
    lz = math.sqrt(max(0.0, 1.0 - u3))
    sgn = 1.0 if nz >= 0.0 else -1.0
    a = -1.0 / (sgn + nz)
    b = nx * ny * a
    t1x, t1y, t1z = 1.0 + sgn * nx * nx * a, sgn * b, -sgn * nx
    t2x, t2y, t2z = b, sgn + ny * ny * a, -ny
    return (lx * t1x + ly * t2x + lz * nx, lx * t1y + ly * t2y + lz * ny,
            lx * t1z + ly * t2z + lz * nz, lz)


@njit(cache=True, inline="always")
def shade(scene, depth, max_depth, rr_depth, pid, ox, oy, oz, dx, dy, dz, t, idx, prev_pdf,
          tr, tg, tb):
    """One bounce at the hit (t, idx) of a live path: -> (emitted r, g, b; the shadow ray
    (origin, direction, its contribution r, g, b, valid); the next ray, throughput, pdf
    and whether the path goes on)."""
    v0, e1, e2, ng, alb, emit, le, lcdf, ltri, larea = scene
    px, py, pz = ox + t * dx, oy + t * dy, oz + t * dz
    nx, ny, nz = ng[idx, 0], ng[idx, 1], ng[idx, 2]
    cos_g = -(nx * dx + ny * dy + nz * dz)
    er = eg = eb = 0.0
    if emit[idx] >= 0 and cos_g > 0.0:
        w = 1.0
        if depth > 0:
            lpdf = t * t / (larea * cos_g)
            w = mis(prev_pdf, lpdf)
        er, eg, eb = w * tr * le[0], w * tg * le[1], w * tb * le[2]
    if cos_g < 0.0:
        nx, ny, nz, cos_g = -nx, -ny, -nz, -cos_g
    dim = 2 + 8 * depth
    go_on = depth + 1 < max_depth
    # next-event estimation: a light triangle by area, a uniform point on it
    u0, u1, u2 = rnd(pid, dim), rnd(pid, dim + 1), rnd(pid, dim + 2)
    k = 0
    while k < lcdf.shape[0] - 2 and lcdf[k + 1] <= u0:
        k += 1
    lt = ltri[k]
    qx, qy, qz, sox, soy, soz, cos_l, cos_s, lpdf = light_sample(v0, e1, e2, ng, lt, larea, px, py,
                                                                 pz, nx, ny, nz, u1, u2)
    sr = sg = sb = 0.0
    shadow = go_on and cos_l > 0.0 and cos_s > 0.0
    if shadow:
        bpdf = cos_s * INV_PI
        f = cos_s * INV_PI * mis(lpdf, bpdf) / lpdf
        sr, sg, sb = tr * alb[idx, 0] * le[0] * f, tg * alb[idx, 1] * le[1] * f, tb * alb[idx, 2] * le[2] * f
    sdx, sdy, sdz = qx - sox, qy - soy, qz - soz
    # cosine-weighted direction in the frame of n
    u3, u4, u5 = rnd(pid, dim + 3), rnd(pid, dim + 4), rnd(pid, dim + 5)
    ndx, ndy, ndz, lz = cosine_direction(nx, ny, nz, u3, u4)
    tr, tg, tb = tr * alb[idx, 0], tg * alb[idx, 1], tb * alb[idx, 2]
    pdf = lz * INV_PI
    if go_on and depth + 1 >= rr_depth:
        q = min(max(tr, max(tg, tb)), 0.95)
        go_on = u5 < q
        tr, tg, tb = tr / q, tg / q, tb / q
    go_on = go_on and lz > 0.0
    return (er, eg, eb, sox, soy, soz, sdx, sdy, sdz, sr, sg, sb, shadow,
            sox, soy, soz, ndx, ndy, ndz, tr, tg, tb, pdf, go_on)


@njit(cache=True, error_model="numpy")
def render_scalar(scene, cam, width, height, spp, max_depth, rr_depth, out, acc, use_bvh):
    """One path at a time; closest hit and shadow rays by brute force or, with
    ``use_bvh``, through the renderer's BVH."""
    v0, e1, e2 = scene[0], scene[1], scene[2]
    ntri = v0.shape[0]
    total = 0.0
    for pid in range(width * height * spp):
        ox, oy, oz, dx, dy, dz = camera_ray(cam, width, height, pid, spp)
        tr = tg = tb = 1.0
        lr = lg = lb = 0.0
        prev_pdf = 1.0
        for depth in range(max_depth):
            best, idx = math.inf, -1
            if use_bvh:
                hit = closest_hit(acc, ox, oy, oz, dx, dy, dz, 0.0, math.inf)
                if hit.kind == TRIANGLE:
                    best, idx = hit.t, hit.index
            else:
                for t in range(ntri):
                    tt, ok = tri_test(v0, e1, e2, t, ox, oy, oz, dx, dy, dz)
                    if ok and tt < best:
                        best, idx = tt, t
            if idx < 0:
                break
            (er, eg, eb, sox, soy, soz, sdx, sdy, sdz, sr, sg, sb, shadow, ox, oy, oz, dx, dy, dz,
             tr, tg, tb, prev_pdf, go_on) = shade(scene, depth, max_depth, rr_depth, pid, ox, oy, oz,
                                                  dx, dy, dz, best, idx, prev_pdf, tr, tg, tb)
            lr, lg, lb = lr + er, lg + eg, lb + eb
            if shadow:
                blocked = False
                if use_bvh:
                    blocked = any_hit(acc, sox, soy, soz, sdx, sdy, sdz, 0.0, 1.0 - 1e-6)
                else:
                    for t in range(ntri):
                        tt, ok = tri_test(v0, e1, e2, t, sox, soy, soz, sdx, sdy, sdz)
                        if ok and tt < 1.0 - 1e-6:
                            blocked = True
                            break
                if not blocked:
                    lr, lg, lb = lr + sr, lg + sg, lb + sb
            if not go_on:
                break
        out[pid // spp] += lr + lg + lb
        total += lr + lg + lb
    return total


@njit(cache=True, error_model="numpy")
def closest_stage(v0, e1, e2, n, ox, oy, oz, dx, dy, dz, tbest, idx):
    """Closest hits of rays 0..n-1: triangles outside, rays inside (SIMD across rays)."""
    for r in range(n):
        tbest[r] = math.inf
        idx[r] = -1
    for t in range(v0.shape[0]):
        ax, ay, az = v0[t, 0], v0[t, 1], v0[t, 2]
        e1x, e1y, e1z = e1[t, 0], e1[t, 1], e1[t, 2]
        e2x, e2y, e2z = e2[t, 0], e2[t, 1], e2[t, 2]
        for r in range(n):
            tt, ok = moller_trumbore(ax, ay, az, e1x, e1y, e1z, e2x, e2y, e2z, ox[r], oy[r], oz[r],
                                     dx[r], dy[r], dz[r])
            ok = ok & (tt < tbest[r])
            tbest[r] = tt if ok else tbest[r]
            idx[r] = t if ok else idx[r]


@njit(cache=True, error_model="numpy")
def occluded_stage(v0, e1, e2, n, ox, oy, oz, dx, dy, dz, tmax, blocked):
    """Shadow segments 0..n-1, t in (0, tmax[r]) (tmax 0: no ray): triangles outside,
    rays inside (SIMD across rays)."""
    for r in range(n):
        blocked[r] = False
    for t in range(v0.shape[0]):
        ax, ay, az = v0[t, 0], v0[t, 1], v0[t, 2]
        e1x, e1y, e1z = e1[t, 0], e1[t, 1], e1[t, 2]
        e2x, e2y, e2z = e2[t, 0], e2[t, 1], e2[t, 2]
        for r in range(n):
            tt, ok = moller_trumbore(ax, ay, az, e1x, e1y, e1z, e2x, e2y, e2z, ox[r], oy[r], oz[r],
                                     dx[r], dy[r], dz[r])
            blocked[r] = blocked[r] | (ok & (tt < tmax[r]))


@njit(cache=True, error_model="numpy")
def closest_stage_bvh(acc, n, ox, oy, oz, dx, dy, dz, tbest, idx):
    """Closest hits of rays 0..n-1 through the renderer's BVH, one ray at a time."""
    for r in range(n):
        hit = closest_hit(acc, ox[r], oy[r], oz[r], dx[r], dy[r], dz[r], 0.0, math.inf)
        tbest[r] = hit.t
        idx[r] = hit.index if hit.kind == TRIANGLE else -1


@njit(cache=True, error_model="numpy")
def occluded_stage_bvh(acc, n, ox, oy, oz, dx, dy, dz, blocked):
    """Shadow segments 0..n-1 through the renderer's BVH, one ray at a time."""
    for r in range(n):
        blocked[r] = any_hit(acc, ox[r], oy[r], oz[r], dx[r], dy[r], dz[r], 0.0, 1.0 - 1e-6)


@njit(cache=True, error_model="numpy")
def start_batch(cam, width, height, spp, first, n, slot_base, pid, slot, ox, oy, oz, dx, dy, dz,
                tr, tg, tb, lr, lg, lb, pdf):
    """Paths first .. first + n - 1 at their camera rays, in slots 0 .. n - 1 of the
    batch arrays (``slot``: where each path's radiance goes, from ``slot_base``)."""
    for k in range(n):
        pid[k] = first + k
        slot[k] = slot_base + k
        ox[k], oy[k], oz[k], dx[k], dy[k], dz[k] = camera_ray(cam, width, height, first + k, spp)
        tr[k] = tg[k] = tb[k] = 1.0
        lr[k] = lg[k] = lb[k] = 0.0
        pdf[k] = 1.0


@njit(cache=True, error_model="numpy")
def render_wavefront(scene, cam, width, height, spp, max_depth, rr_depth, batch, out, acc,
                     use_bvh):
    """Batches of ``batch`` paths advance bounce by bounce, stage by stage; the ray
    stages by brute force (SIMD across rays) or, with ``use_bvh``, through the
    renderer's BVH one ray at a time."""
    v0, e1, e2 = scene[0], scene[1], scene[2]
    ox, oy, oz = np.empty(batch), np.empty(batch), np.empty(batch)
    dx, dy, dz = np.empty(batch), np.empty(batch), np.empty(batch)
    sox, soy, soz = np.empty(batch), np.empty(batch), np.empty(batch)
    sdx, sdy, sdz = np.empty(batch), np.empty(batch), np.empty(batch)
    sr, sg, sb = np.empty(batch), np.empty(batch), np.empty(batch)
    sowner = np.empty(batch, np.int64)
    stmax = np.full(batch, 1.0 - 1e-6)      # shadow segments stop just short of the light
    blocked = np.empty(batch, np.bool_)
    tr, tg, tb = np.empty(batch), np.empty(batch), np.empty(batch)
    lr, lg, lb = np.empty(batch), np.empty(batch), np.empty(batch)
    pdf = np.empty(batch)
    pid = np.empty(batch, np.int64)
    slot = np.empty(batch, np.int64)       # live path k -> its radiance slot
    tbest = np.empty(batch)
    idx = np.empty(batch, np.int64)
    total = 0.0
    n_paths = width * height * spp
    for first in range(0, n_paths, batch):
        n = min(batch, n_paths - first)
        start_batch(cam, width, height, spp, first, n, 0, pid, slot, ox, oy, oz, dx, dy, dz,
                    tr, tg, tb, lr, lg, lb, pdf)
        live = n
        for depth in range(max_depth):
            if live == 0:
                break
            if use_bvh:
                closest_stage_bvh(acc, live, ox, oy, oz, dx, dy, dz, tbest, idx)
            else:
                closest_stage(v0, e1, e2, live, ox, oy, oz, dx, dy, dz, tbest, idx)
            ns = 0
            keep = 0
            for k in range(live):
                if idx[k] < 0:
                    continue
                (er, eg, eb, a0, a1, a2, b0, b1, b2, c0, c1, c2, shadow, o0, o1, o2, d0, d1, d2,
                 t0, t1, t2, p, go_on) = shade(scene, depth, max_depth, rr_depth, pid[k], ox[k], oy[k],
                                               oz[k], dx[k], dy[k], dz[k], tbest[k], idx[k], pdf[k],
                                               tr[k], tg[k], tb[k])
                s = slot[k]
                lr[s] += er
                lg[s] += eg
                lb[s] += eb
                if shadow:
                    sox[ns], soy[ns], soz[ns] = a0, a1, a2
                    sdx[ns], sdy[ns], sdz[ns] = b0, b1, b2
                    sr[ns], sg[ns], sb[ns] = c0, c1, c2
                    sowner[ns] = s
                    ns += 1
                if go_on:                   # compaction: live paths move to the front
                    ox[keep], oy[keep], oz[keep] = o0, o1, o2
                    dx[keep], dy[keep], dz[keep] = d0, d1, d2
                    tr[keep], tg[keep], tb[keep] = t0, t1, t2
                    pdf[keep] = p
                    pid[keep] = pid[k]
                    slot[keep] = s
                    keep += 1
            if use_bvh:
                occluded_stage_bvh(acc, ns, sox, soy, soz, sdx, sdy, sdz, blocked)
            else:
                occluded_stage(v0, e1, e2, ns, sox, soy, soz, sdx, sdy, sdz, stmax, blocked)
            for k in range(ns):
                if not blocked[k]:
                    s = sowner[k]
                    lr[s] += sr[k]
                    lg[s] += sg[k]
                    lb[s] += sb[k]
            live = keep
        for k in range(n):
            v = lr[k] + lg[k] + lb[k]
            out[(first + k) // spp] += v
            total += v
    return total


@njit(cache=True, error_model="numpy")
def rng_stage(n, depth, pid, u):
    """The bounce's six numbers of live paths 0..n-1 into u (6, batch)."""
    dim = 2 + 8 * depth
    for j in range(6):
        for k in range(n):
            u[j, k] = rnd(pid[k], dim + j)


@njit(cache=True, error_model="numpy")
def light_choice_stage(lcdf, n, u, choice):
    """The light entry of each live path: the number of cdf steps at or below u[0]."""
    for k in range(n):
        choice[k] = 0
    for entry in range(1, lcdf.shape[0] - 1):
        c = lcdf[entry]
        for k in range(n):
            choice[k] += 1 if c <= u[0, k] else 0


@njit(cache=True, error_model="numpy")
def shade_stage(scene, depth, max_depth, rr_depth, n, u, choice, ox, oy, oz, dx, dy, dz, tbest,
                idx, pdf, tr, tg, tb, lr, lg, lb, sray, sval, alive):
    """``shade`` of live paths 0..n-1 without branches (selects only), so that LLVM can
    vectorise the loop: emission into lr..lb, the shadow ray into sray (7, batch: origin,
    direction, tmax; tmax 0 when there is none) with its value in sval (3, batch), the
    next ray, throughput and pdf in place, ``alive`` whether the path goes on."""
    v0, e1, e2, ng, alb, emit, le, lcdf, ltri, larea = scene
    for k in range(n):
        hit = idx[k] >= 0
        i = idx[k] if hit else 0
        t = tbest[k] if hit else 0.0
        px, py, pz = ox[k] + t * dx[k], oy[k] + t * dy[k], oz[k] + t * dz[k]
        nx, ny, nz = ng[i, 0], ng[i, 1], ng[i, 2]
        cos_g = -(nx * dx[k] + ny * dy[k] + nz * dz[k])
        lit = hit and emit[i] >= 0 and cos_g > 0.0
        lpdf_hit = t * t / (larea * cos_g)
        w = 1.0 if depth == 0 else mis(pdf[k], lpdf_hit)
        w = w if lit else 0.0
        lr[k] += w * tr[k] * le[0]
        lg[k] += w * tg[k] * le[1]
        lb[k] += w * tb[k] * le[2]
        flip = cos_g < 0.0
        nx, ny, nz = (-nx if flip else nx), (-ny if flip else ny), (-nz if flip else nz)
        go_on = hit and depth + 1 < max_depth
        qx, qy, qz, sox, soy, soz, cos_l, cos_s, lpdf = light_sample(
            v0, e1, e2, ng, ltri[choice[k]], larea, px, py, pz, nx, ny, nz, u[1, k], u[2, k])
        shadow = go_on and cos_l > 0.0 and cos_s > 0.0
        bpdf = cos_s * INV_PI
        f = cos_s * INV_PI * mis(lpdf, bpdf) / lpdf
        f = f if shadow else 0.0
        sval[0, k] = tr[k] * alb[i, 0] * le[0] * f
        sval[1, k] = tg[k] * alb[i, 1] * le[1] * f
        sval[2, k] = tb[k] * alb[i, 2] * le[2] * f
        sray[0, k], sray[1, k], sray[2, k] = sox, soy, soz
        sray[3, k], sray[4, k], sray[5, k] = qx - sox, qy - soy, qz - soz
        sray[6, k] = (1.0 - 1e-6) if shadow else 0.0
        ox[k], oy[k], oz[k] = sox, soy, soz
        dx[k], dy[k], dz[k], lz = cosine_direction(nx, ny, nz, u[3, k], u[4, k])
        ntr, ntg, ntb = tr[k] * alb[i, 0], tg[k] * alb[i, 1], tb[k] * alb[i, 2]
        pdf[k] = lz * INV_PI
        rr = go_on and depth + 1 >= rr_depth
        q = min(max(ntr, max(ntg, ntb)), 0.95)
        q = q if rr else 1.0
        go_on = go_on and (u[5, k] < q or not rr) and lz > 0.0
        tr[k], tg[k], tb[k] = ntr / q, ntg / q, ntb / q
        alive[k] = go_on


@njit(cache=True)
def simd_buffers(batch):
    """The batch arrays of ``wavefront_simd`` (uninitialised): ray origin and direction,
    throughput, radiance, pdf, closest t (float64, each (batch,)); path id, radiance slot,
    hit index, light choice (int64); the numbers u (6, batch), the shadow rays (7, batch)
    and their values (3, batch); blocked and alive flags."""
    f = [np.empty(batch) for _ in range(14)]
    i = [np.empty(batch, np.int64) for _ in range(4)]
    return (f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12], f[13],
            i[0], i[1], i[2], i[3], np.empty((6, batch)), np.empty((7, batch)), np.empty((3, batch)),
            np.empty(batch, np.bool_), np.empty(batch, np.bool_))


@njit(cache=True, error_model="numpy")
def render_wavefront_simd(scene, cam, width, height, spp, max_depth, rr_depth, batch, out):
    """The wavefront with every stage a loop that LLVM can vectorise: the numbers, the
    light choice, the shading (selects, no branches), the rays by brute force; only the
    compaction of live paths is serial."""
    v0, e1, e2, lcdf = scene[0], scene[1], scene[2], scene[7]
    (ox, oy, oz, dx, dy, dz, tr, tg, tb, lr, lg, lb, pdf, tbest, pid, slot, idx, choice, u, sray,
     sval, blocked, alive) = simd_buffers(batch)
    total = 0.0
    n_paths = width * height * spp
    for first in range(0, n_paths, batch):
        n = min(batch, n_paths - first)
        start_batch(cam, width, height, spp, first, n, first, pid, slot, ox, oy, oz, dx, dy, dz,
                    tr, tg, tb, lr, lg, lb, pdf)
        live = n
        for depth in range(max_depth):
            if live == 0:
                break
            closest_stage(v0, e1, e2, live, ox, oy, oz, dx, dy, dz, tbest, idx)
            rng_stage(live, depth, pid, u)
            light_choice_stage(lcdf, live, u, choice)
            shade_stage(scene, depth, max_depth, rr_depth, live, u, choice, ox, oy, oz, dx, dy, dz,
                        tbest, idx, pdf, tr, tg, tb, lr, lg, lb, sray, sval, alive)
            occluded_stage(v0, e1, e2, live, sray[0], sray[1], sray[2], sray[3], sray[4], sray[5],
                           sray[6], blocked)
            live, added = compact_stage(live, spp, sray, sval, blocked, alive, ox, oy, oz, dx, dy, dz,
                                        tr, tg, tb, lr, lg, lb, pdf, pid, slot, out)
            total += added
    return total


@njit(cache=True, error_model="numpy")
def compact_stage(live, spp, sray, sval, blocked, alive, ox, oy, oz, dx, dy, dz, tr, tg, tb, lr, lg,
                  lb, pdf, pid, slot, out):
    """Serial: the unblocked shadow rays' values added to their paths, the live paths
    moved to the front of the arrays, the ended ones' radiance into ``out``. -> (live
    paths, the radiance added to ``out``)."""
    keep = 0
    total = 0.0
    for k in range(live):
        if sray[6, k] > 0.0 and not blocked[k]:
            lr[k] += sval[0, k]
            lg[k] += sval[1, k]
            lb[k] += sval[2, k]
        if alive[k]:
            ox[keep], oy[keep], oz[keep] = ox[k], oy[k], oz[k]
            dx[keep], dy[keep], dz[keep] = dx[k], dy[k], dz[k]
            tr[keep], tg[keep], tb[keep] = tr[k], tg[k], tb[k]
            lr[keep], lg[keep], lb[keep] = lr[k], lg[k], lb[k]
            pdf[keep], pid[keep], slot[keep] = pdf[k], pid[k], slot[k]
            keep += 1
        else:
            v = lr[k] + lg[k] + lb[k]
            out[slot[k] // spp] += v
            total += v
    return keep, total


STAGES = ("start", "closest", "rng", "choice", "shade", "occluded", "compact")


def timed_wavefront_simd(scene, cam, width, height, spp, batch, out, max_depth=8, rr_depth=5):
    """``render_wavefront_simd`` driven from Python, each stage call timed (CPU time of
    the process; one thread) -> ({stage: seconds}, path-bounces): where the shape's time
    goes. Adds the same radiance to ``out``."""
    v0, e1, e2, lcdf = scene[0], scene[1], scene[2], scene[7]
    (ox, oy, oz, dx, dy, dz, tr, tg, tb, lr, lg, lb, pdf, tbest, pid, slot, idx, choice, u, sray,
     sval, blocked, alive) = simd_buffers(batch)
    seconds = dict.fromkeys(STAGES, 0.0)
    clock = time.process_time
    bounces = 0
    n_paths = width * height * spp
    for first in range(0, n_paths, batch):
        n = min(batch, n_paths - first)
        t = clock()
        start_batch(cam, width, height, spp, first, n, first, pid, slot, ox, oy, oz, dx, dy, dz,
                    tr, tg, tb, lr, lg, lb, pdf)
        seconds["start"] += clock() - t
        live = n
        for depth in range(max_depth):
            if live == 0:
                break
            bounces += live
            t0 = clock()
            closest_stage(v0, e1, e2, live, ox, oy, oz, dx, dy, dz, tbest, idx)
            t1 = clock()
            rng_stage(live, depth, pid, u)
            t2 = clock()
            light_choice_stage(lcdf, live, u, choice)
            t3 = clock()
            shade_stage(scene, depth, max_depth, rr_depth, live, u, choice, ox, oy, oz, dx, dy, dz,
                        tbest, idx, pdf, tr, tg, tb, lr, lg, lb, sray, sval, alive)
            t4 = clock()
            occluded_stage(v0, e1, e2, live, sray[0], sray[1], sray[2], sray[3], sray[4], sray[5],
                           sray[6], blocked)
            t5 = clock()
            live = compact_stage(live, spp, sray, sval, blocked, alive, ox, oy, oz, dx, dy, dz,
                                 tr, tg, tb, lr, lg, lb, pdf, pid, slot, out)[0]
            t6 = clock()
            for name, a, b in zip(STAGES[1:], (t0, t1, t2, t3, t4, t5), (t1, t2, t3, t4, t5, t6)):
                seconds[name] += b - a
    return seconds, bounces


def cornell_arrays():
    """The benchmark's Cornell box as the probe's flat arrays and pinhole camera."""
    import bench_scenes
    import raytrace
    from raytrace.camera import make_camera
    from raytrace.layout import M_COLOR
    d, base = bench_scenes.our_scene("cornell")
    scene = raytrace.load_scene(d, base_dir=base)
    g = scene.geometry
    v0 = np.ascontiguousarray(g.tri_v0)
    e1 = np.ascontiguousarray(g.tri_v1 - g.tri_v0)
    e2 = np.ascontiguousarray(g.tri_v2 - g.tri_v0)
    alb = np.ascontiguousarray(g.materials[g.tri_mat, M_COLOR:M_COLOR + 3])
    lights = np.flatnonzero(g.tri_emit >= 0)
    area = 0.5 * np.linalg.norm(np.cross(e1[lights], e2[lights]), axis=1)
    cdf = np.concatenate([[0.0], np.cumsum(area) / area.sum()])
    le = np.ascontiguousarray(g.emission[g.tri_emit[lights[0]]])
    arrays = (v0, e1, e2, np.ascontiguousarray(g.tri_ng), alb, np.ascontiguousarray(g.tri_emit), le,
              cdf, lights.astype(np.int64), float(area.sum()))
    c = d["camera"]
    eye = np.array(c["center"], float)
    fwd = np.array(c["look_at"], float) - eye
    fwd /= np.linalg.norm(fwd)
    right = np.cross(fwd, np.array(c["up"], float))
    right /= np.linalg.norm(right)
    up = np.cross(right, fwd)
    h = math.tan(math.radians(c["fov"]) / 2)
    cam = np.array([eye, fwd, right * h, up * h])
    return scene, arrays, cam


SHAPES = {
    "scalar": lambda a, cam, acc, w, h, spp, batch, out: render_scalar(a, cam, w, h, spp, 8, 5, out, acc, False),
    "scalar_bvh": lambda a, cam, acc, w, h, spp, batch, out: render_scalar(a, cam, w, h, spp, 8, 5, out, acc, True),
    "wavefront": lambda a, cam, acc, w, h, spp, batch, out: render_wavefront(a, cam, w, h, spp, 8, 5, batch, out,
                                                                             acc, False),
    "wavefront_bvh": lambda a, cam, acc, w, h, spp, batch, out: render_wavefront(a, cam, w, h, spp, 8, 5, batch,
                                                                                 out, acc, True),
    "wavefront_simd": lambda a, cam, acc, w, h, spp, batch, out: render_wavefront_simd(a, cam, w, h, spp, 8, 5,
                                                                                       batch, out),
}


def render_shape(name, arrays, cam, acc, width, height, spp, batch=4096):
    """The probe's image in shape ``name``: (height * width,) sums over each pixel's spp
    paths of the radiance summed over the channels."""
    out = np.zeros(width * height)
    SHAPES[name](arrays, cam, acc, width, height, spp, batch, out)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spp", type=int, default=16)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--stages", action="store_true",
                    help="also time each stage of wavefront_simd (timed_wavefront_simd)")
    args = ap.parse_args(argv)
    import numba
    import raytrace
    numba.set_num_threads(1)
    scene, arrays, cam = cornell_arrays()
    acc = scene.accel
    w = h = 256
    n = w * h * args.spp
    for name in SHAPES:                                               # compile
        render_shape(name, arrays, cam, acc, 8, 8, 1, args.batch)
    raytrace.render(scene, width=64, height=64, spp=1, sampler="sobol")
    best = dict.fromkeys(list(SHAPES) + ["renderer"], math.inf)
    means = {}
    for _ in range(args.rounds):
        for name in SHAPES:
            t0 = time.process_time()
            img = render_shape(name, arrays, cam, acc, w, h, args.spp, args.batch)
            best[name] = min(best[name], time.process_time() - t0)
            means[name] = img.sum() / n
        t0 = time.process_time()
        image = raytrace.render(scene, width=w, height=h, spp=args.spp, sampler="sobol")
        best["renderer"] = min(best["renderer"], time.process_time() - t0)
        means["renderer"] = float(np.asarray(image, np.float64).sum(axis=2).mean())
    print(f"Cornell box 256², {args.spp} spp, one thread, CPU time, best of {args.rounds}")
    print("| shape | s | M paths/s | mean radiance (sum of channels) |\n|---|---|---|---|")
    for name, sec in best.items():
        print(f"| {name} | {sec:.3f} | {n / sec / 1e6:.2f} | {means[name]:.5f} |")
    ref = means["scalar"]
    assert all(abs(means[k] - ref) <= 1e-9 * ref for k in SHAPES), "the shapes must agree"
    if args.stages:
        print_stages(arrays, cam, w, h, args.spp, args.batch, args.rounds)


def print_stages(arrays, cam, w, h, spp, batch, rounds):
    """The stage table of ``timed_wavefront_simd``, the round with the least total time."""
    best = None
    for _ in range(rounds):
        seconds, bounces = timed_wavefront_simd(arrays, cam, w, h, spp, batch, np.zeros(w * h))
        if best is None or sum(seconds.values()) < sum(best[0].values()):
            best = seconds, bounces
    seconds, bounces = best
    total, n = sum(seconds.values()), w * h * spp
    print(f"\nwavefront_simd by stage: {total:.3f} s, {n / total / 1e6:.2f} M paths/s, "
          f"{bounces / n:.2f} bounces per path (best of {rounds})")
    print("| stage | s | share | ns per path and bounce | ns per path |\n|---|---|---|---|---|")
    for name, sec in seconds.items():
        print(f"| {name} | {sec:.3f} | {sec / total:.1%} | {sec / bounces * 1e9:.1f} | "
              f"{sec / n * 1e9:.1f} |")


if __name__ == "__main__":
    main()
