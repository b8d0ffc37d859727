"""The volumetric path tracer: the path tracer of :mod:`raytrace.kernels.path` with
participating media (Numba). Used for scenes with media or ``null`` surfaces only
(``raytrace.renderer``); a scene without them never compiles this module's kernels.

Each path carries the medium it is in (-1: none), starting from the camera's
(``Media.camera``), and changes it where it passes through a surface: into the
surface's interior when it goes in against the front normal, else into its exterior
(``Media.mat_interior`` / ``mat_exterior`` by material row). Per segment
(Mitsuba 3's ``volpath``, same depth convention):

1. The next surface is found; in a medium, a free flight is sampled up to it
   (:func:`raytrace.kernels.media.medium_flight`: analytic in a homogeneous medium,
   delta tracking against a majorant grid in a grid medium), with the spectral MIS of
   that module (one hero channel per path).
2. A scattering event in the medium is a path vertex like a surface hit: next-event
   estimation with the phase function (Henyey-Greenstein) in place of the BSDF, MIS
   (power heuristic) against phase sampling; then the phase function is sampled (its
   weight is 1). Shadow rays carry transmittance: exact in homogeneous media, ratio
   tracking in grids, through ``null`` surfaces (:func:`~raytrace.kernels.media.
   shadow_transmittance`).
3. A ``null`` surface is crossed without a vertex (no bounce counted, no light sampled):
   only the medium changes. Any other surface is handled as in the path tracer, and a
   BSDF sample that goes through it changes the medium.
4. Vertex ``b`` (scattering events and surface hits, 0-based) samples a light and goes on
   when ``b + 1 < max_depth``; Russian roulette as in the path tracer.

Random numbers: group 0 the pixel position, ``LENS_GROUP`` the lens, ``HERO_GROUP`` the
hero channel; per vertex b, ``1 + 5b`` the free flight arriving at vertex b (distance,
real or null), ``2 + 5b`` the light, ``3 + 5b`` the direction, ``4 + 5b`` the lobe,
``5 + 5b`` Russian roulette; a second flight before the next vertex (after a ``null``
boundary) and every further number of delta and ratio tracking come from ``rng.rand01``
with a per-path counter
(:mod:`raytrace.kernels.media`). So the image depends on the seed only.

Every loop ends: the path loop after ``SAFETY_DEPTH`` vertices and ``MAX_CROSSINGS``
``null`` crossings between two vertices (the path then ends keeping what it gathered, as
at ``max_depth``); delta and ratio tracking at the media step cap
(``layout.MAX_NULL_COLLISIONS``, counted per path): such a path ends with radiance 0
(the whole sample, what it gathered before included, counts as 0, as a non-finite
sample does) and the row kernel adds 1 to its pixel's ``capped`` count.
"""
import math

import numpy as np
from raytrace.jit import helper, row_kernel

from ..layout import M_COLOR, M_IOR, M_TYPE, MAT_NULL, MISS
from .borrow import borrow
from .bsdf import TINY, bsdf_chooses_lobe, bsdf_eval, bsdf_has_smooth
from .emitters import sample_light
from .frame import orthonormal_basis
from .intersect import scene_hit
from .media import (CAPPED, MAX_CROSSINGS, MEDIUM_DIMS, hg_pdf, hg_sample, medium_flight,
                    shadow_transmittance)
from .path import (LENS_GROUP, SAFETY_DEPTH, UNBOUNDED, _add_radiance, arriving_side, camera_sample,
                   emitted_at_hit, emitted_on_miss, mis_weight, rand2, russian_roulette, scatter)
from .rng import rand01
from .surface import base_color, hit_normals
from .threads import next_row, run_rows

INF = math.inf
GROUPS_PER_VERTEX = 5
HERO_GROUP = np.int64(LENS_GROUP + 1)


@helper
def vertex_light(bvh, geo, lights, env, media, m, surface, p, d, frame, shading, eps, u, rng):
    """Next-event estimation at a path vertex p in medium m -> (radiance (3) without the
    path's throughput, rng counter). ``surface``: a surface hit with ``frame`` = (true
    normal on the arrival side, t1, b1, s: the shading frame, wi: local direction back
    along the ray) and ``shading`` = (material row, base colour, eta); else a scattering
    event in the medium (``shading[0]`` unused), whose phase function is HG with
    ``media.g[m]`` around the travel direction d. ``rng`` = (seed, pixel, sample, counter)."""
    px, py, pz = p
    seed, pixel, sample, rc = rng
    ok, wx, wy, wz, dist, vr, vg, vb, lpdf, ldelta = sample_light(lights, geo, env, px, py, pz, u[0], u[1])
    if not ok:
        return 0.0, 0.0, 0.0, rc
    if surface:
        (gx, gy, gz), (t1x, t1y, t1z), (b1x, b1y, b1z), (sx, sy, sz), (wix, wiy, wiz) = frame
        mat, (cr, cg, cb), eta = shading
        if not wx * gx + wy * gy + wz * gz > 0.0:
            return 0.0, 0.0, 0.0, rc
        fr, fg, fb, dpdf = bsdf_eval(geo.materials, mat, cr, cg, cb, eta, wix, wiy, wiz,
                                     wx * t1x + wy * t1y + wz * t1z, wx * b1x + wy * b1y + wz * b1z,
                                     wx * sx + wy * sy + wz * sz)
        ox, oy, oz = px + eps * gx, py + eps * gy, pz + eps * gz
    else:
        fr = fg = fb = dpdf = hg_pdf(media.g[m], wx * d[0] + wy * d[1] + wz * d[2])
        ox, oy, oz = px, py, pz
    if not fr + fg + fb > 0.0:
        return 0.0, 0.0, 0.0, rc
    if dist < INF:           # to the light point, from the offset origin
        sdx, sdy, sdz = px + dist * wx - ox, py + dist * wy - oy, pz + dist * wz - oz
        length = math.sqrt(sdx * sdx + sdy * sdy + sdz * sdz)
        sdx, sdy, sdz = sdx / length, sdy / length, sdz / length
    else:                    # a direction (environment, directional light)
        sdx, sdy, sdz, length = wx, wy, wz, INF
    t0, t1, t2, rc = shadow_transmittance(bvh, geo, media, m, ox, oy, oz, sdx, sdy, sdz, length, eps,
                                          seed, pixel, sample, rc)
    w = (1.0 if ldelta else mis_weight(lpdf, dpdf)) / lpdf
    return fr * vr * t0 * w, fg * vg * t1 * w, fb * vb * t2 * w, rc


@helper
def surface_frame(geo, hit, px, py, pz, dx, dy, dz):
    """The shading frame of a surface hit on the side the ray arrives from
    (``path.arriving_side``, as in the path tracer): -> (ok, true normal (3) on that side, t1 (3), b1 (3), s (3), wi (3), entering
    (the ray came from the front side), material row, eta, emitter row, cosine at the
    front side). ``ok`` is False when neither normal faces the ray."""
    gx, gy, gz, sx, sy, sz, mat, emit = hit_normals(geo, hit, px, py, pz)
    front = -(gx * dx + gy * dy + gz * dz)
    entering, gx, gy, gz, sx, sy, sz, cos_s = arriving_side(gx, gy, gz, front, sx, sy, sz, dx, dy, dz)
    ior = geo.materials[mat, M_IOR]
    t1x, t1y, t1z, b1x, b1y, b1z = orthonormal_basis(sx, sy, sz)
    wi = (-(dx * t1x + dy * t1y + dz * t1z), -(dx * b1x + dy * b1y + dz * b1z), cos_s)
    return (cos_s > TINY, (gx, gy, gz), (t1x, t1y, t1z), (b1x, b1y, b1z), (sx, sy, sz), wi, entering, mat,
            ior if entering else 1.0 / ior, emit, front)


@helper
def flight(media, m, o, d, tmax, hero, first, sampler, rng, group):
    """The free flight of a segment in medium m (see :func:`medium_flight`): its first two
    numbers from Sobol group ``group`` when ``first`` (the first flight since the last
    vertex), else from the counter. -> (scattered, t, beta factors (3), ratio factors (3), counter)."""
    seed, pixel, sample, rc = rng
    if first:
        u_tau, u_real = rand2(sampler, seed, pixel, sample, group)
    else:
        u_tau = rand01(seed, pixel, sample, MEDIUM_DIMS + rc)
        u_real = rand01(seed, pixel, sample, MEDIUM_DIMS + rc + 1)
        rc += 2
    return medium_flight(media, m, o[0], o[1], o[2], d[0], d[1], d[2], tmax, hero, u_tau, u_real,
                         seed, pixel, sample, rc)


@helper
def leave_vertex(media, m, scattered, px, py, pz, g3, side, eps, mat, entering):
    """(ox, oy, oz, medium) of the ray leaving a vertex at p: in a medium the scatter
    point itself; at a surface p moved ``eps`` along the geometric normal ``g3`` to the
    side the new direction leaves by (``side`` > 0: the front), and through the surface
    the medium on its other side."""
    if scattered:
        return px, py, pz, m
    off = eps if side > 0.0 else -eps
    if side < 0.0:                                              # through the surface
        m = media.mat_interior[mat] if entering else media.mat_exterior[mat]
    return px + off * g3[0], py + off * g3[1], pz + off * g3[2], m


@helper
def trace_volume(bvh, geo, lights, env, media, settings, pixel, sample, ox, oy, oz, dx, dy, dz):
    """Radiance (r, g, b) arriving at o from direction -d (unit): one path (module
    docstring). ``beta`` is f / p of the hero channel, ``r`` the other channels' path
    densities relative to the hero's; contributions are weighted by 1 / mean(r).
    -> (r, g, b, capped): ``capped`` when the path reached the media step cap (its
    radiance is then 0, module docstring)."""
    max_depth = settings.max_depth if settings.max_depth >= 0 else UNBOUNDED
    sampler, seed, eps = settings.sampler, settings.seed, settings.epsilon
    hero = min(int(3.0 * rand2(sampler, seed, pixel, sample, HERO_GROUP)[0]), 2)
    lr = lg = lb = 0.0
    b0 = b1 = b2 = r0 = r1 = r2 = w_mis = eta_scale = 1.0
    prev_pdf, prev_delta = 1.0, True      # the camera ray counts as a delta lobe
    ppx, ppy, ppz = ox, oy, oz
    m = media.camera
    depth = rc = crossings = 0
    fresh = True                          # no flight since the last vertex: its Sobol group is free
    while max_depth > 0:
        group = 1 + GROUPS_PER_VERTEX * depth
        hit = scene_hit(bvh, geo, ox, oy, oz, dx, dy, dz, 0.0, INF)
        scattered, t = False, hit.t
        if m >= 0:
            scattered, t, f0, f1, f2, q0, q1, q2, rc = flight(media, m, (ox, oy, oz), (dx, dy, dz), hit.t, hero,
                                                              fresh, sampler, (seed, pixel, sample, rc), group)
            fresh = False
            if rc == CAPPED:
                return 0.0, 0.0, 0.0, True
            b0, b1, b2, r0, r1, r2 = b0 * f0, b1 * f1, b2 * f2, r0 * q0, r1 * q1, r2 * q2
            w_mis = 3.0 / (r0 + r1 + r2)
        if not scattered and hit.kind == MISS:
            er, eg, eb = emitted_on_miss(lights, env, dx, dy, dz, prev_pdf, prev_delta,
                                         b0 * w_mis, b1 * w_mis, b2 * w_mis)
            lr, lg, lb = lr + er, lg + eg, lb + eb
            break
        px, py, pz = ox + t * dx, oy + t * dy, oz + t * dz
        last = depth + 1 >= max_depth or depth >= SAFETY_DEPTH
        zero = (0.0, 0.0, 0.0)
        ok, g3, t13, b13, s3, wi3, entering, mat, eta, colour = True, zero, zero, zero, zero, zero, True, -1, 1.0, zero
        if not scattered:
            ok, g3, t13, b13, s3, wi3, entering, mat, eta, emit, front = surface_frame(geo, hit, px, py, pz,
                                                                                      dx, dy, dz)
            if geo.materials[mat, M_TYPE] == MAT_NULL:          # only a boundary: cross it
                m = media.mat_interior[mat] if entering else media.mat_exterior[mat]
                ox, oy, oz = px - eps * g3[0], py - eps * g3[1], pz - eps * g3[2]
                crossings += 1
                if crossings > MAX_CROSSINGS:
                    break
                continue
            if emit >= 0 and front > 0.0:
                er, eg, eb = emitted_at_hit(lights, geo, hit, emit, ppx, ppy, ppz, px, py, pz, front,
                                            prev_pdf, prev_delta, b0 * w_mis, b1 * w_mis, b2 * w_mis)
                lr, lg, lb = lr + er, lg + eg, lb + eb
            if not (last or not ok):
                colour = base_color(geo, mat, M_COLOR, hit, px, py, pz)
        if last or not ok:
            break
        ok, dx, dy, dz, wr, wg, wb, prev_pdf, prev_delta, eta_step, side, rc, light = vertex(
            bvh, geo, lights, env, media, m, scattered, (px, py, pz), (dx, dy, dz), (g3, t13, b13, s3, wi3),
            (mat, colour, eta), eps, sampler, (seed, pixel, sample, rc), group)
        if rc == CAPPED:                                        # a shadow ray reached the step cap
            return 0.0, 0.0, 0.0, True
        lr, lg, lb = lr + b0 * w_mis * light[0], lg + b1 * w_mis * light[1], lb + b2 * w_mis * light[2]
        if not ok:
            break
        b0, b1, b2 = b0 * wr, b1 * wg, b2 * wb
        eta_scale *= eta_step
        ppx, ppy, ppz = px, py, pz
        ox, oy, oz, m = leave_vertex(media, m, scattered, px, py, pz, g3, side, eps, mat, entering)
        depth += 1
        crossings = 0
        fresh = True
        go_on, q = russian_roulette(b0 * w_mis, b1 * w_mis, b2 * w_mis, eta_scale, depth, settings.rr_depth,
                                    sampler, seed, pixel, sample, group + 4)
        if not go_on:
            break
        b0, b1, b2 = b0 / q, b1 / q, b2 / q
    return lr, lg, lb, False


@helper
def vertex(bvh, geo, lights, env, media, m, scattered, p, d, frame, shading, eps, sampler, rng, group):
    """A path vertex: next-event estimation, then the next direction (phase function in a
    medium, BSDF on a surface). -> (ok, direction (3), weight (3), pdf, is_delta, eta
    crossed, side (> 0: the arrival side of the surface), counter, light (3): the
    estimate without the throughput)."""
    seed, pixel, sample, rc = rng
    mat, (cr, cg, cb), eta = shading
    lt = (0.0, 0.0, 0.0)
    if lights.pmf.shape[0] > 0 and (scattered or bsdf_has_smooth(geo.materials, mat, cr, cg, cb)):
        u = rand2(sampler, seed, pixel, sample, group + 1)
        l0, l1, l2, rc = vertex_light(bvh, geo, lights, env, media, m, not scattered, p, d, frame, shading,
                                      eps, u, (seed, pixel, sample, rc))
        lt = (l0, l1, l2)
    u1, u2 = rand2(sampler, seed, pixel, sample, group + 2)
    if scattered:
        wx, wy, wz, pdf = hg_sample(media.g[m], d[0], d[1], d[2], u1, u2)
        return True, wx, wy, wz, 1.0, 1.0, 1.0, pdf, False, 1.0, 1.0, rc, lt
    u_lobe = 0.0
    if bsdf_chooses_lobe(geo.materials, mat):
        u_lobe = rand2(sampler, seed, pixel, sample, group + 3)[0]
    g, t1, b1, s, wi = frame
    ok, dx, dy, dz, wr, wg, wb, pdf, delta, eta_step, side = scatter(geo, mat, (cr, cg, cb), eta, t1, b1, s, g,
                                                                     wi, u_lobe, u1, u2)
    return ok, dx, dy, dz, wr, wg, wb, pdf, delta, eta_step, side, rc, lt


@row_kernel
def volpath_rows(rows, queue, accum, nonfinite, capped, active, sample, count, bvh, geo, lights, env, cam,
                 settings, filter_table, media):
    """:func:`raytrace.kernels.path.path_rows` with the volumetric path loop
    (:func:`trace_volume`): the same buffers, adaptive sampling and row queue, and
    ``capped`` (H, W) int64: per pixel, the samples whose path reached the media step
    cap (they add radiance 0)."""
    bvh, geo, lights, env, media = borrow(bvh), borrow(geo), borrow(lights), borrow(env), borrow(media)
    accum, nonfinite, capped, active = borrow(accum), borrow(nonfinite), borrow(capped), borrow(active)
    every_pixel = active.shape[0] == 1
    i = next_row(rows, queue)
    while i >= 0:
        for j in range(accum.shape[1]):
            if not every_pixel and active[i, j] == 0:
                continue
            for k in range(sample, sample + count):
                ox, oy, oz, dx, dy, dz = camera_sample(cam, settings, filter_table, i, j, k)
                lr, lg, lb, cut = trace_volume(bvh, geo, lights, env, media, settings, i * settings.width + j,
                                               k, ox, oy, oz, dx, dy, dz)
                if cut:
                    capped[i, j] += 1
                elif math.isfinite(lr) and math.isfinite(lg) and math.isfinite(lb):
                    _add_radiance(accum, i, j, lr, lg, lb)
                else:
                    nonfinite[i, j] += 1
        i = next_row(rows, queue)


def render_pass(accum, nonfinite, counter, sample, bvh, geo, lights, env, cam, settings, filter_table,
                rows=None, active=None, count=1, media=None, capped=None):
    """:func:`raytrace.kernels.path.render_pass` for a scene with ``media``
    (:class:`raytrace.layout.Media`): the same arguments and buffers; ``capped``: (H, W)
    int64 counts of samples cut at the media step cap (:func:`volpath_rows`), or None
    (not kept)."""
    if rows is None:
        height = accum.shape[0]
        rows = (np.arange(height, dtype=np.int64) * settings.row_stride) % height
    if active is None:
        active = np.ones((1, 1), np.uint8)
    if capped is None:
        capped = np.zeros(accum.shape[:2], np.int64)     # untouched pages: no memory unless written
    try:
        run_rows(volpath_rows, rows, accum, nonfinite, capped, active, sample, count, bvh, geo, lights, env, cam,
                 settings, filter_table, media)
    except KeyboardInterrupt:
        counter[0] = sample + count
        raise
    counter[0] = sample + count
