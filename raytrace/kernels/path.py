"""The path tracer: unbiased Monte Carlo estimation of radiance with next-event
estimation, multiple importance sampling and Russian roulette, through surfaces and
participating media in one bounce loop (Numba).

One call of :func:`render_pass` adds one sample to every pixel of an accumulation
buffer (the renderer divides by the number of passes): the image refines pass by pass
and can be stopped between passes. Each path is a loop over vertices with its state in
scalars and records (no recursion, no allocation): :func:`trace_path`, with one helper
per step (the split of pbrt's ``Li`` and ``SampleLd``; Mitsuba 3's ``volpath``, same depth
convention).

Per segment:

1. The next surface is found. In a medium a free flight is sampled up to it
   (:func:`raytrace.kernels.media.free_flight`: analytic in a homogeneous medium, delta
   tracking against a majorant grid in a grid medium, with the spectral MIS of that
   module: one hero channel per path).
2. Emission of the surface hit (front side) or of the environment (on a miss) is added,
   weighted by the power heuristic against next-event estimation unless the previous
   vertex was a delta lobe (or this is the camera ray): :func:`emitted_at_hit`,
   :func:`emitted_on_miss`. A ``null`` surface (a boundary of media only) is crossed
   without a vertex: only the medium changes.
3. ``depth + 1 >= max_depth`` ends the path (``max_depth`` 1: emitters only; 2: direct
   light; -1: unbounded). Vertices are surface hits and scattering events in media.
4. Next-event estimation: one light entry (by power), one point or direction on it, a
   shadow ray carrying transmittance; weighted by the power heuristic against BSDF or
   phase sampling (delta lights: 1): :func:`direct_light`.
5. BSDF sampling (phase sampling in a medium: Henyey-Greenstein, weight 1) gives the
   next direction; the throughput takes its weight: :func:`scatter`. A direction through
   a surface enters the medium on its other side.
6. From ``depth >= rr_depth`` Russian roulette continues with probability
   ``min(max(throughput) * eta^2, 0.95)`` and divides by it (``eta``: the product of the
   relative indices crossed, so that radiance compressed inside glass is not killed):
   :func:`russian_roulette`.

The media (``media``: the scene's :class:`~raytrace.layout.Media`, or None) enter only
through the entry points of :mod:`raytrace.kernels.media`, which compile to constants for
None: a scene without media compiles no media code.

Random numbers come from the path's sampler (:mod:`raytrace.kernels.sampler`) in the
order the path asks for them: the pixel position, the lens point (a thin-lens camera),
the hero channel (media); then per segment the free flight's pair (in a medium, the first
flight since the last vertex) and per vertex, not on the last one, the light (the first
number picks the light, then, rescaled, serves the point with the second), the direction,
the lobe (materials with more than one) and Russian roulette (from ``rr_depth``). So an
image depends only on the seed, never on the thread count or the scheduling.

Every loop ends: the path loop after ``SAFETY_DEPTH`` vertices and ``MAX_CROSSINGS``
``null`` crossings between two vertices (the path then ends keeping what it gathered, as
at ``max_depth``); delta and ratio tracking at the media step cap (the sampler's stream,
:mod:`raytrace.kernels.sampler`): such a path ends with radiance 0 (the whole sample,
what it gathered before included, counts as 0, as a non-finite sample does) and the row
kernel adds 1 to its pixel's ``capped`` count.
"""
import math

import numpy as np
from raytrace.jit import helper, unit, row_kernel

from ..layout import ENV_NONE, M_COLOR, M_IOR, MISS, SOBOL
from .borrow import borrow
from .bsdf import TINY, bsdf_chooses_lobe, bsdf_eval, bsdf_has_smooth, bsdf_sample
from .camera_rays import camera_ray, lens_ray
from .emitters import env_lookup, light_pdf_at_hit, sample_light
from .frame import orthonormal_basis
from .intersect import scene_hit
from .media import (MAX_CROSSINGS, camera_medium, free_flight, hero_channel, is_null, medium_beyond, phase_pdf,
                    phase_sample, shadow_transmittance)
from .records import BSDFSample, ShadingPoint
from .rng import grid_cell
from .sampler import camera_2d, capped, group_2d, next_1d, next_2d, path_sampler, skipped_2d
from .sampling import warp
from .surface import base_color, hit_normals
from .threads import next_row, run_rows, written_zeros

INF = math.inf
RR_MAX = 0.95             # Russian roulette never continues with more than this (Mitsuba)
SAFETY_DEPTH = 1 << 16    # a path never has more vertices (unbounded max_depth with RR off)
UNBOUNDED = 1 << 62       # max_depth -1
ONE3 = (1.0, 1.0, 1.0)
ZERO3 = (0.0, 0.0, 0.0)


@helper
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


@helper
def _scaled(v, k):
    return v[0] * k, v[1] * k, v[2] * k


@helper
def _times(a, b):
    return a[0] * b[0], a[1] * b[1], a[2] * b[2]


@helper
def _plus(a, b):
    return a[0] + b[0], a[1] + b[1], a[2] + b[2]


@helper
def _along(o, t, d):
    """The point o + t d."""
    return o[0] + t * d[0], o[1] + t * d[1], o[2] + t * d[2]


@helper
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@unit
def camera_sample(cam, settings, filter_table, i, j, s):
    """The camera ray of pixel (row i, column j) for the path sampler ``s`` at its first
    dimension -> (origin, unit direction, the sampler after the camera's numbers).

    One sample per pixel goes through the pixel centre (the pixel group is still
    allocated); otherwise the position is drawn from the filter (an n x n jittered grid
    for the independent sampler when spp = n^2, its cells visited in the order of
    ``rng.grid_cell``, each with the jitter of its cell index). Every sample is uniform
    over the pixel, so the mean of the first k samples is unbiased for every k (adaptive
    renders, time budgets and partial images stop there). A thin-lens camera draws the
    lens point next."""
    width, height, spp = settings.width, settings.height, settings.spp
    if spp == 1:
        fx, fy = 0.0, 0.0
        s = skipped_2d(s)
    else:
        n = int(math.sqrt(spp))
        if n * n == spp and s.kind != SOBOL:         # the cell's own jitter: rng.grid_cell
            row, column = grid_cell(s.seed, s.pixel, s.sample, n)
            u1, u2 = group_2d(s.kind, s.seed, s.pixel, row * n + column, s.dim)
            u1 = (column + u1) / n
            u2 = (row + u2) / n
            s = skipped_2d(s)
        else:
            u1, u2, s = camera_2d(s, spp)
        fx, fy = warp(u1, settings.filter, filter_table), warp(u2, settings.filter, filter_table)
    (ox, oy, oz), (dx, dy, dz) = camera_ray(cam, width, height, j + 0.5 + fx, i + 0.5 + fy)
    if cam.lens_radius > 0.0:
        u1, u2, s = camera_2d(s, spp)
        (ox, oy, oz), (dx, dy, dz) = lens_ray(cam, ox, oy, oz, dx, dy, dz, u1, u2)
    inv = 1.0 / math.sqrt(dx * dx + dy * dy + dz * dz)
    return (ox, oy, oz), (dx * inv, dy * inv, dz * inv), s


@helper
def emitted_on_miss(lights, env, d, prev_pdf, prev_delta, beta):
    """Environment radiance seen by a ray along d that escapes, MIS-weighted against the
    environment's own sampling unless the ray came from a delta lobe (or the camera),
    times the path throughput beta."""
    if env.kind == ENV_NONE:
        return ZERO3
    er, eg, eb, epdf = env_lookup(env, d[0], d[1], d[2])
    w = 1.0
    if not prev_delta and lights.env_entry >= 0:
        w = mis_weight(prev_pdf, lights.pmf[lights.env_entry] * epdf)
    return beta[0] * w * er, beta[1] * w * eg, beta[2] * w * eb


@helper
def emitted_at_hit(lights, geo, hit, sp, pp, p, prev_pdf, prev_delta, beta):
    """Emission of the front side of the emitter hit at p (ShadingPoint ``sp``) from the
    previous vertex pp, MIS-weighted against next-event estimation unless the ray came
    from a delta lobe, times the path throughput beta."""
    w = 1.0
    if not prev_delta:
        lpdf = light_pdf_at_hit(lights, geo, hit.kind, hit.index, pp[0], pp[1], pp[2], p[0], p[1], p[2], sp.front)
        w = mis_weight(prev_pdf, lpdf)
    em = geo.emission
    return beta[0] * w * em[sp.emit, 0], beta[1] * w * em[sp.emit, 1], beta[2] * w * em[sp.emit, 2]


@helper
def arriving_side(gx, gy, gz, cos_g, sx, sy, sz, dx, dy, dz):
    """The normals of a hit turned to the side the ray (unit d) arrives from: true normal g
    with ``cos_g = -g.d`` as the hit gave them, shading normal s -> (entering (the ray came
    from g's front side), g (3) and s (3) on the arriving side, ``cos_s = -s.d``). A shading
    normal that faces away from the ray is replaced by the true one; the frame is unusable
    when ``cos_s <= TINY`` still."""
    entering = cos_g >= 0.0
    if not entering:
        gx, gy, gz, cos_g = -gx, -gy, -gz, -cos_g
    if sx * gx + sy * gy + sz * gz < 0.0:
        sx, sy, sz = -sx, -sy, -sz
    cos_s = -(sx * dx + sy * dy + sz * dz)
    if cos_s <= TINY:                 # shading normal faces away: use the true one
        sx, sy, sz, cos_s = gx, gy, gz, cos_g
    return entering, (gx, gy, gz), (sx, sy, sz), cos_s


@helper
def shading_point(geo, hit, p, d):
    """The :class:`~raytrace.kernels.records.ShadingPoint` of a surface hit at p by a ray
    along the unit direction d, without its frame (``frame``, ``wi`` zero, ``eta`` 1:
    :func:`framed` adds them once the path goes on from it)."""
    (gx, gy, gz), (sx, sy, sz), mat, emit = hit_normals(geo, hit, p[0], p[1], p[2])
    front = -(gx * d[0] + gy * d[1] + gz * d[2])
    entering, ng, n, cos_s = arriving_side(gx, gy, gz, front, sx, sy, sz, d[0], d[1], d[2])
    return ShadingPoint(cos_s > TINY, ng, (ZERO3, ZERO3, n), (0.0, 0.0, cos_s), entering, mat, 1.0, emit, front)


@helper
def framed(geo, sp, d):
    """``sp`` with its shading frame (t, b, n), ``wi`` in it and the relative index
    ``eta`` across the surface for the ray along d."""
    n = sp.frame[2]
    (tx, ty, tz), (bx, by, bz) = orthonormal_basis(n[0], n[1], n[2])
    wi = (-(d[0] * tx + d[1] * ty + d[2] * tz), -(d[0] * bx + d[1] * by + d[2] * bz), sp.wi[2])
    ior = geo.materials[sp.mat, M_IOR]
    return ShadingPoint(sp.ok, sp.ng, ((tx, ty, tz), (bx, by, bz), n), wi, sp.entering, sp.mat,
                        ior if sp.entering else 1.0 / ior, sp.emit, sp.front)


@helper
def _to_local(frame, w):
    t, b, n = frame
    return _dot(w, t), _dot(w, b), _dot(w, n)


@helper
def _to_world(frame, v):
    t, b, n = frame
    return (v[0] * t[0] + v[1] * b[0] + v[2] * n[0], v[0] * t[1] + v[1] * b[1] + v[2] * n[1],
            v[0] * t[2] + v[1] * b[2] + v[2] * n[2])


@helper
def direct_light(bvh, geo, lights, env, media, m, scattered, sp, color, p, d, eps, u1, u2, s):
    """Next-event estimation at a path vertex p in medium m -> (radiance (3) without the
    path's throughput, the sampler after the shadow ray's numbers). A surface vertex
    (ShadingPoint ``sp``, base colour ``color``) weighs the light by its BSDF and starts the
    shadow ray ``eps`` off the surface; a scattering event in a medium (``scattered``) by
    the medium's phase function around the travel direction d."""
    ls = sample_light(lights, geo, env, p[0], p[1], p[2], u1, u2)
    if not ls.ok:
        return ZERO3, s
    w, dist = ls.wi, ls.dist
    o = p
    if scattered:
        fr = fg = fb = dpdf = phase_pdf(media, m, _dot(w, d))
    else:
        if not _dot(w, sp.ng) > 0.0:
            return ZERO3, s
        lo = _to_local(sp.frame, w)
        fr, fg, fb, dpdf = bsdf_eval(geo.materials, sp.mat, color[0], color[1], color[2], sp.eta,
                                     sp.wi[0], sp.wi[1], sp.wi[2], lo[0], lo[1], lo[2])
        o = _along(p, eps, sp.ng)
    if not fr + fg + fb > 0.0:
        return ZERO3, s
    tr, s = shadow_transmittance(bvh, geo, media, m, o, p, w, dist, eps, s)
    k = (1.0 if ls.delta else mis_weight(ls.pdf, dpdf)) / ls.pdf
    return _scaled(_times(_times((fr, fg, fb), ls.radiance), tr), k), s


@helper
def scatter(geo, media, m, scattered, sp, color, d, u_lobe, u1, u2):
    """The next direction from a vertex: phase sampling in a medium (``scattered``), else
    BSDF sampling at the surface ``sp`` -> :class:`~raytrace.kernels.records.BSDFSample`
    (world ``wo``; ``side`` the cosine with the true normal; not ``ok`` when the sample
    failed or leaves through the wrong side of the true surface: the path ends)."""
    if scattered:
        wo, pdf = phase_sample(media, m, d, u1, u2)
        return BSDFSample(True, wo, ONE3, pdf, False, 1.0, 1.0)
    local = bsdf_sample(geo.materials, sp.mat, color[0], color[1], color[2], sp.eta, sp.wi[0], sp.wi[1], sp.wi[2],
                        u_lobe, u1, u2)
    wr, wg, wb = local.weight
    if not (local.ok and wr + wg + wb > 0.0):
        return BSDFSample(False, ZERO3, ZERO3, 0.0, False, 1.0, 0.0)
    wo = _to_world(sp.frame, local.wo)
    ln = math.sqrt(_dot(wo, wo))
    wo = (wo[0] / ln, wo[1] / ln, wo[2] / ln)
    side = _dot(wo, sp.ng)
    ok = (local.side > 0.0) == (side > 0.0) and side != 0.0
    return BSDFSample(ok, wo, local.weight, local.pdf, local.delta, local.eta, side)


@helper
def russian_roulette(beta, eta_scale, depth, rr_depth, s):
    """-> (continue?, survival probability q, the sampler after): from ``depth >=
    rr_depth`` the path goes on with probability ``min(max(throughput) eta_scale^2,
    RR_MAX)`` (q = 1 before), when the sampler's next number is below it (drawn only
    then); a path with zero throughput always ends."""
    beta_max = max(beta[0], max(beta[1], beta[2]))
    if not beta_max > 0.0:
        return False, 1.0, s
    if depth < rr_depth:
        return True, 1.0, s
    q = min(beta_max * eta_scale * eta_scale, RR_MAX)
    u, s = next_1d(s)
    return u < q, q, s


@helper
def leave_vertex(media, m, scattered, p, sp, side, eps):
    """(origin, medium) of the ray leaving a vertex at p: in a medium the scatter point
    itself; at a surface p moved ``eps`` along the true normal to the side the new
    direction leaves by (``side`` > 0: the arrival side), and through the surface the
    medium on its other side."""
    if scattered:
        return p, m
    if side < 0.0:                                              # through the surface
        return _along(p, -eps, sp.ng), medium_beyond(media, sp.mat, sp.entering)
    return _along(p, eps, sp.ng), m


@helper
def vertex_numbers(s, last, has_lights):
    """-> (light pair, direction pair, the sampler after them) of a vertex (not of a
    ``null`` boundary, which is no vertex); none on the last vertex, no light pair
    without lights."""
    u_light = u_dir = (0.0, 0.0)
    if not last:
        if has_lights:
            u1, u2, s = next_2d(s)
            u_light = (u1, u2)
        u1, u2, s = next_2d(s)
        u_dir = (u1, u2)
    return u_light, u_dir, s


@helper
def trace_path(bvh, geo, lights, env, media, settings, o, d, s):
    """Radiance (r, g, b) arriving at o from direction -d (unit): one path (module
    docstring), its numbers from the path sampler ``s``. ``beta`` is f / p of the hero
    channel, ``ratio`` the other channels' path densities relative to the hero's (all 1
    without media); contributions are weighted by 1 / mean(ratio).
    -> (radiance (3), capped): ``capped`` when the path reached the media step cap (its
    radiance is then 0, module docstring)."""
    max_depth = settings.max_depth if settings.max_depth >= 0 else UNBOUNDED
    eps = settings.epsilon
    hero, s = hero_channel(media, s)
    radiance = ZERO3
    beta = ratio = ONE3
    w_mis = eta_scale = 1.0
    prev_pdf, prev_delta = 1.0, True      # the camera ray counts as a delta lobe
    pp = o
    m = camera_medium(media)
    depth = crossings = 0
    fresh = True                          # no flight since the last vertex: the next pair is the flight's
    has_lights = lights.pmf.shape[0] > 0
    while max_depth > 0:
        hit = scene_hit(bvh, geo, o[0], o[1], o[2], d[0], d[1], d[2], 0.0, INF)
        scattered, t = False, hit.t
        if m >= 0:
            event, s = free_flight(media, m, o, d, hit.t, hero, fresh, s)
            fresh = False
            if capped(s):
                return ZERO3, True
            beta, ratio = _times(beta, event.beta), _times(ratio, event.ratio)
            w_mis = 3.0 / (ratio[0] + ratio[1] + ratio[2])
            scattered, t = event.scattered, event.t
        if not scattered and hit.kind == MISS:
            radiance = _plus(radiance, emitted_on_miss(lights, env, d, prev_pdf, prev_delta, _scaled(beta, w_mis)))
            break
        p = _along(o, t, d)
        last = depth + 1 >= max_depth or depth >= SAFETY_DEPTH
        sp = ShadingPoint(True, ZERO3, (ZERO3, ZERO3, ZERO3), ZERO3, True, -1, 1.0, -1, 0.0)
        if not scattered:
            sp = shading_point(geo, hit, p, d)
            if is_null(media, geo, sp.mat):                     # only a boundary: cross it
                m = medium_beyond(media, sp.mat, sp.entering)
                o = _along(p, -eps, sp.ng)
                crossings += 1
                if crossings > MAX_CROSSINGS:
                    break
                continue
        u_light, u_dir, s = vertex_numbers(s, last, has_lights)      # a vertex: its numbers
        if not scattered and sp.emit >= 0 and sp.front > 0.0:
            radiance = _plus(radiance, emitted_at_hit(lights, geo, hit, sp, pp, p, prev_pdf, prev_delta,
                                                      _scaled(beta, w_mis)))
        if last or not sp.ok:                   # (a scattering event's placeholder sp is ok)
            break
        color = ZERO3
        if not scattered:
            sp = framed(geo, sp, d)
            color = base_color(geo, sp.mat, M_COLOR, hit, p[0], p[1], p[2])
        if has_lights and (scattered or bsdf_has_smooth(geo.materials, sp.mat, color[0], color[1], color[2])):
            light, s = direct_light(bvh, geo, lights, env, media, m, scattered, sp, color, p, d, eps,
                                    u_light[0], u_light[1], s)
            if capped(s):                                       # a shadow ray reached the step cap
                return ZERO3, True
            radiance = _plus(radiance, _times(_scaled(beta, w_mis), light))
        u_lobe = 0.0
        if not scattered and bsdf_chooses_lobe(geo.materials, sp.mat):
            u_lobe, s = next_1d(s)
        bs = scatter(geo, media, m, scattered, sp, color, d, u_lobe, u_dir[0], u_dir[1])
        if not bs.ok:
            break
        beta = _times(beta, bs.weight)
        eta_scale *= bs.eta
        prev_pdf, prev_delta = bs.pdf, bs.delta
        pp = p
        o, m = leave_vertex(media, m, scattered, p, sp, bs.side, eps)
        d = bs.wo
        depth, crossings, fresh = depth + 1, 0, True
        go_on, q, s = russian_roulette(_scaled(beta, w_mis), eta_scale, depth, settings.rr_depth, s)
        if not go_on:
            break
        beta = _scaled(beta, 1.0 / q)
    return radiance, False



@row_kernel
def path_rows(rows, queue, accum, nonfinite, capped_count, active, sample, count, bvh, geo, lights, env, media,
              cam, settings, filter_table):
    """Add samples ``sample .. sample + count - 1`` of every pixel of the rows this thread
    takes from ``queue``, in that order, to ``accum`` (channels 0-2 the radiance, 3-5 its
    square); a sample that comes out NaN or infinite is not added but counted in
    ``nonfinite[i, j]``, one whose path reached the media step cap (it adds radiance 0)
    in ``capped_count[i, j]``. A row kernel of :mod:`raytrace.kernels.threads`.

    Adaptive sampling (:mod:`raytrace.film.adaptive`): ``active`` (H, W) uint8 marks the
    pixels that take these samples (a (1, 1) array: every pixel).

    One function holds the row and pixel loops and (inlined) the path loop: the scene's
    arrays change hands once per call, borrowed (no reference counting per call), and the
    path tracer is compiled once per kind of ``media`` (None or a Media record)."""
    bvh, geo, lights, env, media = borrow(bvh), borrow(geo), borrow(lights), borrow(env), borrow(media)
    accum, nonfinite, capped_count, active = borrow(accum), borrow(nonfinite), borrow(capped_count), borrow(active)
    every_pixel = active.shape[0] == 1
    i = next_row(rows, queue)
    while i >= 0:
        for j in range(accum.shape[1]):
            if not every_pixel and active[i, j] == 0:
                continue
            for k in range(sample, sample + count):
                o, d, s = camera_sample(cam, settings, filter_table, i, j,
                                        path_sampler(settings, i * settings.width + j, k))
                (lr, lg, lb), cut = trace_path(bvh, geo, lights, env, media, settings, o, d, s)
                if cut:
                    capped_count[i, j] += 1
                elif math.isfinite(lr) and math.isfinite(lg) and math.isfinite(lb):
                    _add_radiance(accum, i, j, lr, lg, lb)
                else:
                    nonfinite[i, j] += 1
        i = next_row(rows, queue)


@helper
def _add_radiance(sums, i, j, r, g, b):
    """Add a sample to pixel (i, j) of ``sums`` (H, W, 6): the radiance, then its square."""
    sums[i, j, 0] += r
    sums[i, j, 1] += g
    sums[i, j, 2] += b
    sums[i, j, 3] += r * r
    sums[i, j, 4] += g * g
    sums[i, j, 5] += b * b


def render_pass(accum, nonfinite, counter, sample, bvh, geo, lights, env, cam, settings, filter_table,
                rows=None, active=None, count=1, media=None, capped=None):
    """Add sample number ``sample`` (``count`` > 1: samples ``sample .. sample + count - 1``,
    in order) of every pixel to ``accum`` ((H, W, 6) float64: sums
    of the radiance and of its square, per channel), on ``numba.get_num_threads()``
    threads.

    ``rows``: the image rows to render (default: all), visited in the order
    ``(k * settings.row_stride) % H`` so that each thread's share of the rows is spread
    over the image. Samples that come out NaN or infinite are not added;
    ``nonfinite[row, column]`` counts them (a safety net: it should stay 0).
    ``counter[0]`` is set to ``sample + count`` when the pass is complete (also when Ctrl-C
    came during it: :func:`~raytrace.kernels.threads.run_rows` finishes the rows first).
    ``active`` ((H, W) uint8, default every pixel): see :func:`path_rows`. ``media``: the
    scene's :class:`~raytrace.layout.Media` or None (no media code compiled);
    ``capped``: (H, W) int64 counts of samples cut at the media step cap, or None (not
    kept)."""
    if rows is None:
        height = accum.shape[0]
        rows = (np.arange(height, dtype=np.int64) * settings.row_stride) % height
    if active is None:
        active = np.ones((1, 1), np.uint8)
    if capped is None:
        capped = np.zeros(accum.shape[:2], np.int64)     # untouched pages: no memory unless written
    try:
        run_rows(path_rows, rows, accum, nonfinite, capped, active, sample, count, bvh, geo, lights, env, media,
                 cam, settings, filter_table)
    except KeyboardInterrupt:
        counter[0] = sample + count
        raise
    counter[0] = sample + count


def row_stride(height):
    """A stride coprime with ``height`` near 0.618 height (a permutation of the rows)."""
    for s in range(max(1, int(0.618 * height)), 0, -1):
        if math.gcd(s, height) == 1:
            return s
    return 1


def new_buffers(height, width, written=False):
    """Zeroed (accumulation (H, W, 6) float64: radiance sums and sums of squares,
    non-finite counts (H, W) int64, counter (1,) int64). ``written``: for a render of
    every row, the pages are written now (``threads.written_zeros``: the row kernels then
    take no page faults); otherwise they are ``np.zeros``, which cost memory only where a
    band of rows writes them."""
    zeros = written_zeros if written else np.zeros
    return zeros((height, width, 6)), zeros((height, width), np.int64), np.zeros(1, np.int64)


def mean_and_variance(accum, n):
    """-> (mean (H, W, 3), variance of that mean (H, W, 3)) from ``n`` passes of
    ``accum``: the unbiased sample variance of the passes, divided by n (0 for n < 2).
    With the Sobol sampler the passes are stratified, not independent, so this
    over-estimates the variance of the mean (a conservative figure)."""
    mean = accum[..., :3] / n
    if n < 2:
        return mean, np.zeros_like(mean)
    var = np.maximum(accum[..., 3:] / n - mean * mean, 0.0) * (n / (n - 1.0))
    return mean, var / n
