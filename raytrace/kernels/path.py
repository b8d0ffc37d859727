"""The path tracer: unbiased Monte Carlo estimation of radiance with next-event
estimation, multiple importance sampling and Russian roulette (Numba).

One call of :func:`render_pass` adds one sample to every pixel of an accumulation
buffer (the renderer divides by the number of passes): the image refines pass by pass
and can be stopped between passes. Each path is a loop over bounces with its state in
scalars (no recursion, no allocation): :func:`trace_path`, with one helper per step
(the split of pbrt's ``Li`` and ``SampleLd``).

Per bounce (Mitsuba 3's ``path`` integrator, same depth convention):

1. Emission of the surface hit (front side) or of the environment (on a miss) is added,
   weighted by the power heuristic against next-event estimation unless the previous
   bounce was a delta lobe (or this is the camera ray): :func:`emitted_at_hit`,
   :func:`emitted_on_miss`.
2. ``depth + 1 >= max_depth`` ends the path (``max_depth`` 1: emitters only; 2: direct
   light; -1: unbounded).
3. Next-event estimation: one light entry (by power), one point or direction on it, a
   shadow ray; weighted by the power heuristic against BSDF sampling (delta lights: 1):
   :func:`direct_light`.
4. BSDF sampling gives the next direction; the throughput takes its weight:
   :func:`scatter`.
5. From ``depth >= rr_depth`` Russian roulette continues with probability
   ``min(max(throughput) * eta^2, 0.95)`` and divides by it (``eta``: the product of the
   relative indices crossed, so that radiance compressed inside glass is not killed):
   :func:`russian_roulette`.

Random numbers come in 2-D groups, each a function of (seed, pixel, sample, group) only,
so an image depends only on the seed, never on the thread count or the scheduling:
group 0 is the position in the pixel, ``LENS_GROUP`` the point on a thin lens; bounce
``b`` uses group ``1 + 4b`` for choosing the light and the point on it (the first number
picks the light, then, rescaled, serves the point), ``2 + 4b`` for the BSDF direction,
``3 + 4b`` (its first number) for choosing the BSDF lobe, drawn only for materials with
more than one, and ``4 + 4b`` (its first number) for Russian roulette. The default
``sobol`` sampler draws the groups from Owen-scrambled Sobol points (``rng.sobol2``: the
samples of a pixel are stratified in every group), except the camera groups when spp is
not a power of two: those come from correlated multi-jittered points (``rng.cmj2``;
:func:`camera_rand2`); ``independent`` from ``rng.rand01`` (dims ``2 group`` and
``2 group + 1``; pixel positions then on an n x n jittered grid when spp is a square, as
in the Whitted integrator, visited in an order whose every prefix is unbiased:
``rng.grid_cell``).
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
from .intersect import scene_hit, scene_occluded
from .rng import cmj2, grid_cell, rand01, sobol2
from .sampling import warp
from .surface import base_color, hit_normals
from .threads import next_row, run_rows, written_zeros

INF = math.inf
RR_MAX = 0.95             # Russian roulette never continues with more than this (Mitsuba)
SHADOW_END = 1.0 - 1e-6   # shadow rays stop this fraction short of the light point
SAFETY_DEPTH = 1 << 16    # a path never has more bounces (unbounded max_depth with RR off)
UNBOUNDED = 1 << 62       # max_depth -1
GROUPS_PER_BOUNCE = 4
PIXEL_GROUP = np.int64(0)        # the position in the pixel's 2-D group
LENS_GROUP = np.int64(1 << 24)   # the thin lens's (far above any bounce's groups)
# (int64 values, not Python ints: a literal argument would make rand2 compile once more)


@unit
def rand2(sampler, seed, pixel, sample, group):
    """Two uniform numbers of 2-D group ``group`` (see the module docstring).

    Inlined by LLVM (``forceinline``), not by Numba (``inline="always"``): the six
    Numba-inlined copies were half of the path kernel's Numba IR and of its compile time;
    compiled once and inlined in LLVM, it runs as fast."""
    if sampler == SOBOL:
        return sobol2(seed, pixel, sample, group)
    return rand01(seed, pixel, sample, 2 * group), rand01(seed, pixel, sample, 2 * group + 1)


@helper
def camera_rand2(sampler, seed, pixel, sample, group, spp):
    """The two numbers of a camera group (pixel position, lens point) for sample
    ``sample`` of ``spp``: with the Sobol sampler, Sobol points when spp is a power of
    two, else correlated multi-jittered ones (``rng.cmj2``), stratified into spp strata
    along each axis for any spp (the first 20 Sobol points, 16 + 4, are not, and the
    edges of bright emitters in view dominate an image's error)."""
    if sampler == SOBOL and spp & (spp - 1) != 0:
        return cmj2(seed, pixel, sample, group, spp)
    return rand2(sampler, seed, pixel, sample, group)


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


@unit
def camera_sample(cam, settings, filter_table, i, j, sample):
    """The camera ray of sample ``sample`` of pixel (row i, column j), unit direction.

    One sample per pixel goes through the pixel centre; otherwise the position is drawn
    from the filter (an n x n jittered grid for the independent sampler when spp = n^2,
    its cells visited in the order of ``rng.grid_cell``, each with the jitter of its cell
    index). Every sample is uniform over the pixel, so the mean of the first k samples is
    unbiased for every k (adaptive renders, time budgets and partial images stop there).
    A thin-lens camera draws the lens point from group ``LENS_GROUP``."""
    width, height, spp = settings.width, settings.height, settings.spp
    pixel = i * width + j
    if spp == 1:
        fx, fy = 0.0, 0.0
    else:
        n = int(math.sqrt(spp))
        if n * n == spp and settings.sampler != SOBOL:     # the cell's own jitter: rng.grid_cell
            row, column = grid_cell(settings.seed, pixel, sample, n)
            u1, u2 = rand2(settings.sampler, settings.seed, pixel, row * n + column, PIXEL_GROUP)
            u1 = (column + u1) / n
            u2 = (row + u2) / n
        else:
            u1, u2 = camera_rand2(settings.sampler, settings.seed, pixel, sample, PIXEL_GROUP, spp)
        fx, fy = warp(u1, settings.filter, filter_table), warp(u2, settings.filter, filter_table)
    ox, oy, oz, dx, dy, dz = camera_ray(cam, width, height, j + 0.5 + fx, i + 0.5 + fy)
    if cam.lens_radius > 0.0:
        u1, u2 = camera_rand2(settings.sampler, settings.seed, i * width + j, sample, LENS_GROUP, spp)
        ox, oy, oz, dx, dy, dz = lens_ray(cam, ox, oy, oz, dx, dy, dz, u1, u2)
    inv = 1.0 / math.sqrt(dx * dx + dy * dy + dz * dz)
    return ox, oy, oz, dx * inv, dy * inv, dz * inv


@helper
def emitted_on_miss(lights, env, dx, dy, dz, prev_pdf, prev_delta, beta_r, beta_g, beta_b):
    """Environment radiance seen by a ray that escapes, MIS-weighted against the
    environment's own sampling unless the ray came from a delta lobe (or the camera),
    times the path throughput beta."""
    if env.kind == ENV_NONE:
        return 0.0, 0.0, 0.0
    er, eg, eb, epdf = env_lookup(env, dx, dy, dz)
    w = 1.0
    if not prev_delta and lights.env_entry >= 0:
        w = mis_weight(prev_pdf, lights.pmf[lights.env_entry] * epdf)
    return beta_r * w * er, beta_g * w * eg, beta_b * w * eb


@helper
def emitted_at_hit(lights, geo, hit, emit, ppx, ppy, ppz, px, py, pz, cos_g, prev_pdf, prev_delta,
                   beta_r, beta_g, beta_b):
    """Emission of the front side of an emitter hit from the previous vertex pp,
    MIS-weighted against next-event estimation unless the ray came from a delta lobe,
    times the path throughput beta."""
    w = 1.0
    if not prev_delta:
        lpdf = light_pdf_at_hit(lights, geo, hit.kind, hit.index, ppx, ppy, ppz, px, py, pz, cos_g)
        w = mis_weight(prev_pdf, lpdf)
    em = geo.emission
    return beta_r * w * em[emit, 0], beta_g * w * em[emit, 1], beta_b * w * em[emit, 2]


@helper
def direct_light(bvh, geo, lights, env, mat, color, eta, p, g, t1, b1, s, wi, eps, u1, u2,
                 beta):
    """Next-event estimation at p: one light sample, its BSDF value and a shadow ray.

    Vectors are 3-tuples. The frame is (t1, b1, s) with s the shading normal on the
    arrival side, g the true normal on that side; wi the local direction back along the
    ray; ``color`` the material's base colour. Returns the radiance contribution (r, g, b)
    times the path throughput ``beta``."""
    px, py, pz = p
    gx, gy, gz = g
    t1x, t1y, t1z = t1
    b1x, b1y, b1z = b1
    sx, sy, sz = s
    cr, cg, cb = color
    wix, wiy, wiz = wi
    beta_r, beta_g, beta_b = beta
    ok, wx, wy, wz, dist, vr, vg, vb, lpdf, ldelta = sample_light(
        lights, geo, env, px, py, pz, u1, u2)
    if not (ok and wx * gx + wy * gy + wz * gz > 0.0):
        return 0.0, 0.0, 0.0
    lox = wx * t1x + wy * t1y + wz * t1z
    loy = wx * b1x + wy * b1y + wz * b1z
    loz = wx * sx + wy * sy + wz * sz
    fr, fg, fb, bpdf = bsdf_eval(geo.materials, mat, cr, cg, cb, eta, wix, wiy, wiz, lox, loy, loz)
    if not fr + fg + fb > 0.0:
        return 0.0, 0.0, 0.0
    sox, soy, soz = px + eps * gx, py + eps * gy, pz + eps * gz
    if dist < INF:           # the segment to the light point, stopping just short of it
        qx, qy, qz = px + dist * wx, py + dist * wy, pz + dist * wz
        sdx, sdy, sdz, tmax = qx - sox, qy - soy, qz - soz, SHADOW_END
    else:                    # a direction (environment, directional light)
        sdx, sdy, sdz, tmax = wx, wy, wz, INF
    if scene_occluded(bvh, geo, sox, soy, soz, sdx, sdy, sdz, 0.0, tmax):
        return 0.0, 0.0, 0.0
    w = (1.0 if ldelta else mis_weight(lpdf, bpdf)) / lpdf
    return beta_r * fr * vr * w, beta_g * fg * vg * w, beta_b * fb * vb * w


@helper
def scatter(geo, mat, color, eta, t1, b1, s, g, wi, u_lobe, u1, u2):
    """BSDF sampling: the next direction (world, unit) and the sample's weight.

    Vectors and the frame as in :func:`direct_light`.
    -> (ok, direction (3), weight (r, g, b), pdf, is_delta, eta crossed, side): ``side``
    > 0 when the direction leaves on the arrival side of the true normal g. ``ok`` is
    False for a failed sample or one that leaves through the wrong side of the true
    surface (the path ends)."""
    t1x, t1y, t1z = t1
    b1x, b1y, b1z = b1
    sx, sy, sz = s
    gx, gy, gz = g
    lox, loy, loz, wr, wg, wb, bpdf, bdelta, beta = bsdf_sample(
        geo.materials, mat, color[0], color[1], color[2], eta, wi[0], wi[1], wi[2], u_lobe, u1, u2)
    if not (wr + wg + wb > 0.0):
        return False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, False, 1.0, 0.0
    ndx = lox * t1x + loy * b1x + loz * sx
    ndy = lox * t1y + loy * b1y + loz * sy
    ndz = lox * t1z + loy * b1z + loz * sz
    ln = math.sqrt(ndx * ndx + ndy * ndy + ndz * ndz)
    ndx, ndy, ndz = ndx / ln, ndy / ln, ndz / ln
    side = ndx * gx + ndy * gy + ndz * gz
    ok = (loz > 0.0) == (side > 0.0) and side != 0.0
    return ok, ndx, ndy, ndz, wr, wg, wb, bpdf, bdelta, beta, side


@helper
def russian_roulette(beta_r, beta_g, beta_b, eta_scale, depth, rr_depth, sampler, seed, pixel, sample,
                     group):
    """-> (continue?, survival probability q): from ``depth >= rr_depth`` the path goes
    on with probability ``min(max(throughput) eta_scale^2, RR_MAX)`` (q = 1 before),
    when the first number of 2-D group ``group`` is below it (drawn only then); a path
    with zero throughput always ends."""
    beta_max = max(beta_r, max(beta_g, beta_b))
    if not beta_max > 0.0:
        return False, 1.0
    if depth < rr_depth:
        return True, 1.0
    q = min(beta_max * eta_scale * eta_scale, RR_MAX)
    return rand2(sampler, seed, pixel, sample, group)[0] < q, q


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
    return entering, gx, gy, gz, sx, sy, sz, cos_s


@helper
def trace_path(bvh, geo, lights, env, settings, pixel, sample, ox, oy, oz, dx, dy, dz):
    """Radiance (r, g, b) arriving at o from direction -d (unit): one path."""
    max_depth = settings.max_depth if settings.max_depth >= 0 else UNBOUNDED
    sampler, seed, eps = settings.sampler, settings.seed, settings.epsilon
    lr = lg = lb = 0.0
    beta_r = beta_g = beta_b = 1.0        # path throughput
    eta_scale = 1.0                       # product of relative indices crossed
    prev_pdf, prev_delta = 1.0, True      # the camera ray counts as a delta lobe
    ppx, ppy, ppz = ox, oy, oz
    depth = 0
    while max_depth > 0:
        hit = scene_hit(bvh, geo, ox, oy, oz, dx, dy, dz, 0.0, INF)
        if hit.kind == MISS:
            er, eg, eb = emitted_on_miss(lights, env, dx, dy, dz, prev_pdf, prev_delta,
                                         beta_r, beta_g, beta_b)
            lr, lg, lb = lr + er, lg + eg, lb + eb
            break
        px, py, pz = ox + hit.t * dx, oy + hit.t * dy, oz + hit.t * dz
        # this bounce's numbers first: computed while the hit's rows of the scene arrays
        # (normals, material) come from memory, not after them; none on the last bounce
        last = depth + 1 >= max_depth or depth >= SAFETY_DEPTH
        group = 1 + GROUPS_PER_BOUNCE * depth
        u_dir = u_light = (0.0, 0.0)
        if not last:
            u_dir = rand2(sampler, seed, pixel, sample, group + 1)
            if lights.pmf.shape[0] > 0:
                u_light = rand2(sampler, seed, pixel, sample, group)
        gx, gy, gz, sx, sy, sz, mat, emit = hit_normals(geo, hit, px, py, pz)
        cos_g = -(gx * dx + gy * dy + gz * dz)
        if emit >= 0 and cos_g > 0.0:
            er, eg, eb = emitted_at_hit(lights, geo, hit, emit, ppx, ppy, ppz, px, py, pz, cos_g,
                                        prev_pdf, prev_delta, beta_r, beta_g, beta_b)
            lr, lg, lb = lr + er, lg + eg, lb + eb
        if last:
            break
        entering, gx, gy, gz, sx, sy, sz, cos_s = arriving_side(gx, gy, gz, cos_g, sx, sy, sz, dx, dy, dz)
        if cos_s <= TINY:
            break
        ior = geo.materials[mat, M_IOR]
        eta = ior if entering else 1.0 / ior
        cr, cg, cb = base_color(geo, mat, M_COLOR, hit, px, py, pz)
        t1x, t1y, t1z, b1x, b1y, b1z = orthonormal_basis(sx, sy, sz)
        wix = -(dx * t1x + dy * t1y + dz * t1z)
        wiy = -(dx * b1x + dy * b1y + dz * b1z)
        wiz = cos_s
        if lights.pmf.shape[0] > 0 and bsdf_has_smooth(geo.materials, mat, cr, cg, cb):
            u1, u2 = u_light
            er, eg, eb = direct_light(bvh, geo, lights, env, mat, (cr, cg, cb), eta, (px, py, pz),
                                      (gx, gy, gz), (t1x, t1y, t1z), (b1x, b1y, b1z), (sx, sy, sz),
                                      (wix, wiy, wiz), eps, u1, u2, (beta_r, beta_g, beta_b))
            lr, lg, lb = lr + er, lg + eg, lb + eb
        u_lobe = 0.0
        if bsdf_chooses_lobe(geo.materials, mat):
            u_lobe = rand2(sampler, seed, pixel, sample, group + 2)[0]
        u1, u2 = u_dir
        ok, dx, dy, dz, wr, wg, wb, prev_pdf, prev_delta, eta_step, side = scatter(
            geo, mat, (cr, cg, cb), eta, (t1x, t1y, t1z), (b1x, b1y, b1z), (sx, sy, sz), (gx, gy, gz),
            (wix, wiy, wiz), u_lobe, u1, u2)
        if not ok:
            break
        beta_r, beta_g, beta_b = beta_r * wr, beta_g * wg, beta_b * wb
        eta_scale *= eta_step
        ppx, ppy, ppz = px, py, pz
        off = eps if side > 0.0 else -eps
        ox, oy, oz = px + off * gx, py + off * gy, pz + off * gz
        depth += 1
        go_on, q = russian_roulette(beta_r, beta_g, beta_b, eta_scale, depth, settings.rr_depth,
                                    sampler, seed, pixel, sample, group + 3)
        if not go_on:
            break
        beta_r, beta_g, beta_b = beta_r / q, beta_g / q, beta_b / q
    return lr, lg, lb


@row_kernel
def path_rows(rows, queue, accum, nonfinite, active, sample, count, bvh, geo, lights, env, cam, settings,
              filter_table):
    """Add samples ``sample .. sample + count - 1`` of every pixel of the rows this thread
    takes from ``queue``, in that order, to ``accum`` (channels 0-2 the radiance, 3-5 its
    square); a sample that comes out NaN or infinite is not added but counted in
    ``nonfinite[i, j]``. A row kernel of
    :mod:`raytrace.kernels.threads`.

    Adaptive sampling (:mod:`raytrace.film.adaptive`): ``active`` (H, W) uint8 marks the
    pixels that take these samples (a (1, 1) array: every pixel).

    One function holds the row and pixel loops and (inlined) the path loop: the scene's
    arrays change hands once per call, borrowed (no reference counting per call), and the
    path tracer is compiled once."""
    bvh, geo, lights, env = borrow(bvh), borrow(geo), borrow(lights), borrow(env)
    accum, nonfinite, active = borrow(accum), borrow(nonfinite), borrow(active)
    every_pixel = active.shape[0] == 1
    i = next_row(rows, queue)
    while i >= 0:
        for j in range(accum.shape[1]):
            if not every_pixel and active[i, j] == 0:
                continue
            for k in range(sample, sample + count):
                _add_sample(accum, nonfinite, i, j, k, bvh, geo, lights, env, cam, settings, filter_table)
        i = next_row(rows, queue)


@helper
def _add_sample(accum, nonfinite, i, j, sample, bvh, geo, lights, env, cam, settings, filter_table):
    """Sample ``sample`` of pixel (i, j) into ``accum``."""
    ox, oy, oz, dx, dy, dz = camera_sample(cam, settings, filter_table, i, j, sample)
    lr, lg, lb = trace_path(bvh, geo, lights, env, settings, i * settings.width + j, sample,
                            ox, oy, oz, dx, dy, dz)
    if math.isfinite(lr) and math.isfinite(lg) and math.isfinite(lb):
        _add_radiance(accum, i, j, lr, lg, lb)
    else:
        nonfinite[i, j] += 1


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
                rows=None, active=None, count=1):
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
    ``active`` ((H, W) uint8, default every pixel): see :func:`path_rows`."""
    if rows is None:
        height = accum.shape[0]
        rows = (np.arange(height, dtype=np.int64) * settings.row_stride) % height
    if active is None:
        active = np.ones((1, 1), np.uint8)
    try:
        run_rows(path_rows, rows, accum, nonfinite, active, sample, count, bvh, geo, lights, env, cam,
                 settings, filter_table)
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
