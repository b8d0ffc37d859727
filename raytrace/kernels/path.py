"""The path tracer: unbiased Monte Carlo estimation of radiance with next-event
estimation, multiple importance sampling and Russian roulette (Numba).

One call of :func:`render_pass` adds one sample to every pixel of an accumulation
buffer (the renderer divides by the number of passes): the image refines pass by pass
and can be stopped between passes. Each path is a loop over bounces with its state in
scalars (no recursion, no allocation).

Per bounce (Mitsuba 3's ``path`` integrator, same depth convention):

1. Emission of the surface hit (front side) or of the environment (on a miss) is added,
   weighted by the power heuristic against next-event estimation unless the previous
   bounce was a delta lobe (or this is the camera ray).
2. ``depth + 1 >= max_depth`` ends the path (``max_depth`` 1: emitters only; 2: direct
   light; -1: unbounded).
3. Next-event estimation: one light entry (by power), one point or direction on it, a
   shadow ray; weighted by the power heuristic against BSDF sampling (delta lights: 1).
4. BSDF sampling gives the next direction; the throughput takes its weight.
5. From ``depth >= rr_depth`` Russian roulette continues with probability
   ``min(max(throughput) * eta^2, 0.95)`` and divides by it (``eta``: the product of the
   relative indices crossed, so that radiance compressed inside glass is not killed).

Random numbers come in 2-D groups, each a function of (seed, pixel, sample, group) only,
so an image depends only on the seed, never on the thread count or the scheduling:
group 0 is the position in the pixel; bounce ``b`` uses group ``1 + 4b`` for the point on
the light, ``2 + 4b`` for the BSDF direction, ``3 + 4b`` for choosing the light and the
BSDF lobe, and ``4 + 4b`` for Russian roulette. The default ``sobol`` sampler draws the
groups from Owen-scrambled Sobol points (``rng.sobol2``: the samples of a pixel are
stratified in every group; the roulette stays independent), ``independent`` from
``rng.rand01`` (dims ``2 group`` and ``2 group + 1``; pixel positions then on an n x n
jittered grid when spp is a square, as in the Whitted integrator).
"""
import math

import numpy as np
from numba import njit, prange

from ..scene.build import M_COLOR, M_IOR
from ..scene.emitters import ENV_NONE, I_ENV_ENTRY, I_ENV_KIND
from .borrow import borrow
from .bsdf import TINY, bsdf_eval, bsdf_has_smooth, bsdf_sample
from .camera_rays import camera_ray
from .emitters import env_direction_pdf, env_radiance, light_pdf_at_hit, sample_light
from .frame import orthonormal_basis
from .intersect import MISS, scene_hit, scene_occluded
from .rng import rand01, sobol2
from .sampling import warp
from .surface import base_color, hit_normals

INF = math.inf
RR_MAX = 0.95             # Russian roulette never continues with more than this (Mitsuba)
SHADOW_END = 1.0 - 1e-6   # shadow rays stop this fraction short of the light point
SAFETY_DEPTH = 1 << 16    # a path never has more bounces (unbounded max_depth with RR off)
GROUPS_PER_BOUNCE = 4
INDEPENDENT, SOBOL = 0, 1
SAMPLERS = {"independent": INDEPENDENT, "sobol": SOBOL}

# params array layout (float64)
(P_WIDTH, P_HEIGHT, P_SPP, P_FILTER, P_SEED, P_MAX_DEPTH, P_RR_DEPTH, P_EPS,
 P_ROW_STRIDE, P_SAMPLER) = range(10)
PARAMS_SIZE = 10


@njit(cache=True, inline="always")
def rand2(sampler, seed, pixel, sample, group):
    """Two uniform numbers of 2-D group ``group`` (see the module docstring)."""
    if sampler == SOBOL:
        return sobol2(seed, pixel, sample, group)
    return rand01(seed, pixel, sample, 2 * group), rand01(seed, pixel, sample, 2 * group + 1)


@njit(cache=True, inline="always")
def mis_weight(a, b):
    """Power heuristic a^2 / (a^2 + b^2) for the strategy of density a, safe for 0 and inf."""
    if not a > 0.0:
        return 0.0
    if not b > 0.0:
        return 1.0
    if a == INF:
        return 0.5 if b == INF else 1.0
    if a >= b:
        r = b / a
        return 1.0 / (1.0 + r * r)
    r = a / b
    r2 = r * r
    return r2 / (1.0 + r2)


@njit(cache=True)
def render_row(accum, i, sample, acc, geo, lights, cube, cam, params, filter_table):
    """Add sample ``sample`` of every pixel of row ``i`` to ``accum`` and return how many
    came out NaN or infinite (those are not added).

    One function holds the pixel loop and the path loop, with the helpers inlined: the
    scene's arrays then change hands once per row (every call that takes them costs an
    atomic reference-count update per array), and the path tracer is compiled once."""
    height, width = accum.shape[0], accum.shape[1]
    spp, fkind = int(params[P_SPP]), int(params[P_FILTER])
    seed = int(params[P_SEED])
    max_depth = int(params[P_MAX_DEPTH])
    if max_depth < 0:
        max_depth = 1 << 62
    rr_depth = int(params[P_RR_DEPTH])
    eps = params[P_EPS]
    sampler = int(params[P_SAMPLER])
    n = int(math.sqrt(spp))
    if n * n != spp or sampler == SOBOL:
        n = 0                     # not a square (or Sobol points): no n x n grid
    acc, geo, lights, cube = borrow(acc), borrow(geo), borrow(lights), borrow(cube)
    mats = geo.materials
    env_kind = int(lights.info[I_ENV_KIND])
    env_entry = int(lights.info[I_ENV_ENTRY])
    n_lights = lights.pmf.shape[0]
    bad = 0
    for j in range(width):
        pixel = i * width + j
        if spp == 1:
            fx, fy = 0.0, 0.0                 # one sample: the pixel centre
        else:
            u1, u2 = rand2(sampler, seed, pixel, sample, 0)
            if n > 0:
                u1 = (sample % n + u1) / n
                u2 = (sample // n + u2) / n
            fx, fy = warp(u1, fkind, filter_table), warp(u2, fkind, filter_table)
        ox, oy, oz, dx, dy, dz = camera_ray(cam, width, height, j + 0.5 + fx, i + 0.5 + fy)
        inv = 1.0 / math.sqrt(dx * dx + dy * dy + dz * dz)
        dx, dy, dz = dx * inv, dy * inv, dz * inv
        # ---- one path: radiance arriving at o from direction -d
        lr = lg = lb = 0.0
        tr = tg = tb = 1.0
        eta_acc = 1.0
        prev_pdf = 1.0
        prev_delta = True
        ppx, ppy, ppz = ox, oy, oz
        depth = 0
        while max_depth > 0:
            t, kind, idx, hu, hv = scene_hit(acc, geo, ox, oy, oz, dx, dy, dz, 0.0, INF)
            if kind == MISS:
                if env_kind != ENV_NONE:
                    er, eg, eb = env_radiance(lights, cube, dx, dy, dz)
                    w = 1.0
                    if not prev_delta and env_entry >= 0:
                        lpdf = lights.pmf[env_entry] * env_direction_pdf(lights, dx, dy, dz)
                        w = mis_weight(prev_pdf, lpdf)
                    lr += tr * w * er
                    lg += tg * w * eg
                    lb += tb * w * eb
                break
            px, py, pz = ox + t * dx, oy + t * dy, oz + t * dz
            gx, gy, gz, sx, sy, sz, mat, emit = hit_normals(geo, kind, idx, hu, hv, px, py, pz)
            cos_g = -(gx * dx + gy * dy + gz * dz)
            if emit >= 0 and cos_g > 0.0:
                em = geo.emission
                w = 1.0
                if not prev_delta:
                    w = mis_weight(prev_pdf, light_pdf_at_hit(lights, geo, kind, idx, ppx, ppy, ppz,
                                                              px, py, pz, cos_g))
                lr += tr * w * em[emit, 0]
                lg += tg * w * em[emit, 1]
                lb += tb * w * em[emit, 2]
            if depth + 1 >= max_depth or depth >= SAFETY_DEPTH:
                break
            # the frame on the side the ray arrives from
            entering = cos_g >= 0.0
            if not entering:
                gx, gy, gz, cos_g = -gx, -gy, -gz, -cos_g
            if sx * gx + sy * gy + sz * gz < 0.0:
                sx, sy, sz = -sx, -sy, -sz
            cos_s = -(sx * dx + sy * dy + sz * dz)
            if cos_s <= TINY:                 # shading normal faces away: use the true one
                sx, sy, sz, cos_s = gx, gy, gz, cos_g
                if cos_s <= TINY:
                    break
            ior = mats[mat, M_IOR]
            eta = ior if entering else 1.0 / ior
            cr, cg, cb = base_color(geo, mat, M_COLOR, kind, idx, hu, hv, px, py, pz)
            t1x, t1y, t1z, b1x, b1y, b1z = orthonormal_basis(sx, sy, sz)
            wix = -(dx * t1x + dy * t1y + dz * t1z)
            wiy = -(dx * b1x + dy * b1y + dz * b1z)
            wiz = cos_s
            group = 1 + GROUPS_PER_BOUNCE * depth
            u_light, u_lobe = rand2(sampler, seed, pixel, sample, group + 2)
            # next-event estimation
            if n_lights > 0 and bsdf_has_smooth(mats, mat, cr, cg, cb):
                u1, u2 = rand2(sampler, seed, pixel, sample, group)
                ok, wx, wy, wz, dist, vr, vg, vb, lpdf, ldelta = sample_light(
                    lights, geo, cube, px, py, pz, u_light, u1, u2)
                if ok and wx * gx + wy * gy + wz * gz > 0.0:
                    lox = wx * t1x + wy * t1y + wz * t1z
                    loy = wx * b1x + wy * b1y + wz * b1z
                    loz = wx * sx + wy * sy + wz * sz
                    fr, fg, fb, bpdf = bsdf_eval(mats, mat, cr, cg, cb, eta, wix, wiy, wiz, lox, loy, loz)
                    if fr + fg + fb > 0.0:
                        sox, soy, soz = px + eps * gx, py + eps * gy, pz + eps * gz
                        if dist < INF:
                            qx, qy, qz = px + dist * wx, py + dist * wy, pz + dist * wz
                            blocked = scene_occluded(acc, geo, sox, soy, soz, qx - sox, qy - soy, qz - soz,
                                                     0.0, SHADOW_END)
                        else:
                            blocked = scene_occluded(acc, geo, sox, soy, soz, wx, wy, wz, 0.0, INF)
                        if not blocked:
                            s = (1.0 if ldelta else mis_weight(lpdf, bpdf)) / lpdf
                            lr += tr * fr * vr * s
                            lg += tg * fg * vg * s
                            lb += tb * fb * vb * s
            # BSDF sampling
            u1, u2 = rand2(sampler, seed, pixel, sample, group + 1)
            lox, loy, loz, wr, wg, wb, bpdf, bdelta, beta = bsdf_sample(
                mats, mat, cr, cg, cb, eta, wix, wiy, wiz, u_lobe, u1, u2)
            if not (wr + wg + wb > 0.0):
                break
            ndx = lox * t1x + loy * b1x + loz * sx
            ndy = lox * t1y + loy * b1y + loz * sy
            ndz = lox * t1z + loy * b1z + loz * sz
            ln = math.sqrt(ndx * ndx + ndy * ndy + ndz * ndz)
            ndx, ndy, ndz = ndx / ln, ndy / ln, ndz / ln
            side = ndx * gx + ndy * gy + ndz * gz
            if (loz > 0.0) != (side > 0.0) or side == 0.0:
                break                          # leaves through the wrong side of the true surface
            tr *= wr
            tg *= wg
            tb *= wb
            eta_acc *= beta
            prev_pdf = bpdf
            prev_delta = bdelta
            ppx, ppy, ppz = px, py, pz
            off = eps if side > 0.0 else -eps
            ox, oy, oz = px + off * gx, py + off * gy, pz + off * gz
            dx, dy, dz = ndx, ndy, ndz
            depth += 1
            tmax = max(tr, max(tg, tb))
            if not tmax > 0.0:
                break
            if depth >= rr_depth:
                q = min(tmax * eta_acc * eta_acc, RR_MAX)
                if not rand01(seed, pixel, sample, 2 * (group + 3)) < q:
                    break
                tr /= q
                tg /= q
                tb /= q
        if math.isfinite(lr) and math.isfinite(lg) and math.isfinite(lb):
            accum[i, j, 0] += lr
            accum[i, j, 1] += lg
            accum[i, j, 2] += lb
        else:
            bad += 1
    return bad


@njit(cache=True, parallel=True)
def render_pass(accum, nonfinite, counter, sample, acc, geo, lights, cube, cam, params, filter_table):
    """Add sample number ``sample`` of every pixel to ``accum`` ((H, W, 3) float64).

    Rows are visited in the order ``(k * stride) % H`` so that each thread's share of
    the rows is spread over the image. Samples that come out NaN or infinite are not
    added; ``nonfinite[row]`` counts them (a safety net: it should stay 0).
    ``counter[0]`` is set to ``sample + 1`` when the pass is complete."""
    height = accum.shape[0]
    stride = int(params[P_ROW_STRIDE])
    for k in prange(height):
        i = (k * stride) % height
        nonfinite[i] += render_row(accum, i, sample, acc, geo, lights, cube, cam, params, filter_table)
    counter[0] = sample + 1


def row_stride(height):
    """A stride coprime with ``height`` near 0.618 height (a permutation of the rows)."""
    for s in range(max(1, int(0.618 * height)), 0, -1):
        if math.gcd(s, height) == 1:
            return s
    return 1


def new_buffers(height, width):
    """Zeroed (accumulation (H, W, 3) float64, non-finite counts (H,) int64, counter (1,) int64)."""
    return np.zeros((height, width, 3)), np.zeros(height, np.int64), np.zeros(1, np.int64)
