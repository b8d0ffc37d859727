"""Participating media in the kernels (Numba, scalar): phase functions, free-flight
sampling, transmittance, optical depth. The media are a :class:`raytrace.layout.Media`
record (``raytrace.scene.media``); formulas and units in ``docs/path-tracing.md``
("Participating media") and ``docs/media.md``.

Extinction ``sigma_t``, scattering ``sigma_s = albedo sigma_t`` per RGB channel, in
1 / world unit. A homogeneous medium has them constant; a grid medium has ``sigma_t(x) =
scale * density(x)``, density trilinear between voxel centres (clamped at the box's
faces, as Mitsuba's ``gridvolume``), zero outside the box.

**Spectral MIS** (the path tracer, :mod:`raytrace.kernels.path`, in a scene with media): a path
picks one *hero* channel h (uniformly, once). Its free flights are sampled for channel h;
the estimate of channel c is ``f_c / ((1/3) sum_k p_k)``, the one-sample MIS (balance
heuristic) of the three channels' sampling densities ``p_k`` of the whole path. The
integrator carries ``beta_c = f_c / p_h`` and the ratios ``r_k = p_k / p_h`` (r_h = 1);
the functions here return the factors one free flight multiplies them by. For grey media
every ratio is 1 and beta_c picks up the albedo: plain delta tracking.

- Homogeneous: distance ``t ~ sigma_t,h exp(-sigma_t,h t)``, analytic (no null
  collisions); a medium that only absorbs (albedo 0) is not sampled at all: the segment
  takes its transmittance ``exp(-sigma_t,c d)`` (nothing scatters, so nothing is lost). Scattering at t < d (the next surface): ``beta_c *= sigma_s,c
  exp(-sigma_t,c t) / p_h``, ``r_k *= sigma_t,k exp(-sigma_t,k t) / p_h``; reaching the
  surface: ``exp(-sigma_t,c d) / exp(-sigma_t,h d)``.
- Grid: delta tracking against a majorant ``mu`` that is constant in each cell of a
  coarse majorant grid and the same for every channel (tentative collisions at rate mu,
  found cell by cell with a 3-D DDA, the optical depth left over carried from cell to
  cell). At a tentative collision with extinction s_k: real with probability ``s_h / mu``
  (``beta_c *= sigma_s,c / s_h``, ``r_k *= s_k / s_h``), else null (``beta_c *= (mu - s_c) /
  (mu - s_h)``, ``r_k *= (mu - s_k) / (mu - s_h)``): Miller et al. 2019's null-scattering
  path integral with spectral MIS.
- Shadow rays: homogeneous exactly, ``exp(-sigma_t d)``; grid by ratio tracking
  (``T_c *= 1 - s_c / mu`` at each tentative collision, rate mu).

Delta tracking (free flights) and ratio tracking (shadow rays) are the two clients of
one walk through the majorant grid, :func:`majorant_walk` (pbrt-v4's ``SampleT_maj``).

Random numbers (:mod:`raytrace.kernels.sampler`): the first distance number and the first
real/null decision of a flight are the path sampler's next 2-D group; every further
number comes from the path's independent stream, so the image depends on the seed only.

Step cap: delta and ratio tracking stop when the path's stream reaches its cap
(``sampler.STREAM_CAP``: ``layout.MAX_NULL_COLLISIONS`` steps) with zero transmittance /
beta factors and a ``capped`` sampler: the integrator then ends the path with radiance 0
and counts its pixel. The majorant-grid DDA (``while t < t1``) needs no cap: each step
enters the next cell along a straight line and it leaves the grid after at most mx + my +
mz.
"""
import math

import numpy as np
from raytrace.jit import helper, unit, row_kernel

from ..layout import (G_ACHANNELS, G_ALBEDO, G_ANX, G_ANY, G_ANZ, G_BLOCK, G_CHANNELS, G_DENSITY,
                      G_MAJORANT, G_MX, G_MY, G_MZ, G_NX, G_NY, G_NZ, M_TYPE, MAT_NULL,
                      MEDIUM_HOMOGENEOUS, MISS)
from .borrow import borrow
from .camera_rays import centre_ray
from .frame import orthonormal_basis
from .intersect import scene_hit, scene_occluded
from .records import MediumEvent, PathSampler
from .sampler import capped, next_1d, next_2d, stream_1d
from .surface import hit_normals
from .threads import next_row, run_rows
from .trig import cos_sin_2pi

INF = math.inf
INV_4PI = 1.0 / (4.0 * math.pi)
HG_ISOTROPIC = 1e-4          # |g| below this samples and evaluates the isotropic phase function
MAX_CROSSINGS = 64           # null boundaries one ray may cross (the view; shadow rays)
MARCH_STEP = 0.25            # optical-depth quadrature step, in voxels
SHADOW_END = 1.0 - 1e-6      # shadow rays stop this fraction short of the light point (as the path tracer's)
DELTA, RATIO, DEPTH = 0, 1, 2  # majorant_walk's clients: delta tracking, ratio tracking, optical depth


# ------------------------------------------------------------------ phase function
@helper
def hg_pdf(g, cos_theta):
    """Henyey-Greenstein phase function (= its sampling density, 1/sr) for the angle
    theta between the direction of travel and the scattered direction: ``(1 - g^2) /
    (4 pi (1 + g^2 - 2 g cos theta)^(3/2))``; g > 0 scatters forward, g = 0 is isotropic."""
    if abs(g) < HG_ISOTROPIC:
        return INV_4PI
    denom = 1.0 + g * g - 2.0 * g * cos_theta
    return INV_4PI * (1.0 - g * g) / (denom * math.sqrt(denom))


@helper
def hg_cos(g, u):
    """cos theta of the HG distribution by inversion of its CDF (isotropic for g ~ 0)."""
    if abs(g) < HG_ISOTROPIC:
        return 1.0 - 2.0 * u
    s = (1.0 - g * g) / (1.0 - g + 2.0 * g * u)
    return min(1.0, max(-1.0, (1.0 + g * g - s * s) / (2.0 * g)))


@helper
def hg_sample(g, dx, dy, dz, u1, u2):
    """A scattered direction for travel direction d (unit): -> (w (3), pdf). The sample's
    weight is 1 (the phase function is sampled exactly)."""
    c = hg_cos(g, u1)
    s = math.sqrt(max(0.0, 1.0 - c * c))
    cp, sp = cos_sin_2pi(u2)
    (tx, ty, tz), (bx, by, bz) = orthonormal_basis(dx, dy, dz)
    wx = s * cp * tx + s * sp * bx + c * dx
    wy = s * cp * ty + s * sp * by + c * dy
    wz = s * cp * tz + s * sp * bz + c * dz
    return wx, wy, wz, hg_pdf(g, c)


# ------------------------------------------------------------------ grids
@helper
def _axis(n, x):
    """Trilinear lookup along one axis at voxel coordinate x (centres at i + 0.5),
    clamped: -> (i0, i1, weight of i1)."""
    f = x - 0.5
    i = math.floor(f)
    w = f - i
    i0 = min(max(int(i), 0), n - 1)
    i1 = min(max(int(i) + 1, 0), n - 1)
    return i0, i1, w


@helper
def _trilinear(vox, off, nx, ny, nz, ch, x, y, z):
    """Channels 0, 1, 2 (a 1-channel grid: its value three times) at voxel point (x, y, z)."""
    x0, x1, wx = _axis(nx, x)
    y0, y1, wy = _axis(ny, y)
    z0, z1, wz = _axis(nz, z)
    r = g = b = 0.0
    for k in range(8):
        xi = x1 if k & 1 else x0
        yi = y1 if k & 2 else y0
        zi = z1 if k & 4 else z0
        w = (wx if k & 1 else 1.0 - wx) * (wy if k & 2 else 1.0 - wy) * (wz if k & 4 else 1.0 - wz)
        base = off + ((zi * ny + yi) * nx + xi) * ch
        if ch == 1:
            v = w * vox[base]
            r += v
            g += v
            b += v
        else:
            r += w * vox[base]
            g += w * vox[base + 1]
            b += w * vox[base + 2]
    return r, g, b


@helper
def grid_sigma(media, k, x, y, z):
    """Extinction (3 channels) of grid medium k at voxel point (x, y, z)."""
    row = media.grid
    d0, d1, d2 = _trilinear(media.voxels, row[k, G_DENSITY], row[k, G_NX], row[k, G_NY], row[k, G_NZ],
                            row[k, G_CHANNELS], x, y, z)
    st = media.sigma_t
    return st[k, 0] * d0, st[k, 1] * d1, st[k, 2] * d2


@helper
def grid_albedo(media, k, x, y, z):
    """Single-scattering albedo of grid medium k at voxel point (x, y, z) of its density."""
    row = media.grid
    if row[k, G_ALBEDO] < 0:
        return media.albedo[k, 0], media.albedo[k, 1], media.albedo[k, 2]
    ax, ay, az = row[k, G_ANX], row[k, G_ANY], row[k, G_ANZ]
    return _trilinear(media.voxels, row[k, G_ALBEDO], ax, ay, az, row[k, G_ACHANNELS],
                      x * ax / row[k, G_NX], y * ay / row[k, G_NY], z * az / row[k, G_NZ])


@helper
def _slab(o, v, n, t0, t1):
    """Clip [t0, t1] to the slab 0 <= o + t v <= n of one axis."""
    if v == 0.0:
        return (t0, t1) if 0.0 <= o <= n else (1.0, 0.0)
    a, b = -o / v, (n - o) / v
    if a > b:
        a, b = b, a
    return max(t0, a), min(t1, b)


@helper
def grid_ray(media, k, ox, oy, oz, dx, dy, dz, tmax):
    """World ray -> voxel space of grid medium k, clipped to its box within [0, tmax]:
    (t0, t1, origin (3), direction (3)); empty when t0 >= t1."""
    a = media.to_grid
    px = a[k, 0, 0] * ox + a[k, 0, 1] * oy + a[k, 0, 2] * oz + a[k, 0, 3]
    py = a[k, 1, 0] * ox + a[k, 1, 1] * oy + a[k, 1, 2] * oz + a[k, 1, 3]
    pz = a[k, 2, 0] * ox + a[k, 2, 1] * oy + a[k, 2, 2] * oz + a[k, 2, 3]
    vx = a[k, 0, 0] * dx + a[k, 0, 1] * dy + a[k, 0, 2] * dz
    vy = a[k, 1, 0] * dx + a[k, 1, 1] * dy + a[k, 1, 2] * dz
    vz = a[k, 2, 0] * dx + a[k, 2, 1] * dy + a[k, 2, 2] * dz
    row = media.grid
    t0, t1 = _slab(px, vx, float(row[k, G_NX]), 0.0, tmax)
    t0, t1 = _slab(py, vy, float(row[k, G_NY]), t0, t1)
    t0, t1 = _slab(pz, vz, float(row[k, G_NZ]), t0, t1)
    return t0, t1, (px, py, pz), (vx, vy, vz)


@helper
def _dda_axis(p, v, cell, block):
    """(step, t of the next cell boundary, t per cell) along one axis (voxel space)."""
    if v > 0.0:
        return 1, ((cell + 1) * block - p) / v, block / v
    if v < 0.0:
        return -1, (cell * block - p) / v, -block / v
    return 0, INF, INF


@helper
def _dda_cell(p, n, block):
    return min(max(int(math.floor(p / block)), 0), n - 1)


@helper
def _dda_start(px, py, pz, vx, vy, vz, t0, block, mx, my, mz):
    """The majorant cell at t0 and the DDA's state: (cell (3), next boundary t (3),
    steps (3), t per cell (3))."""
    x, y, z = px + t0 * vx, py + t0 * vy, pz + t0 * vz
    cx, cy, cz = _dda_cell(x, mx, block), _dda_cell(y, my, block), _dda_cell(z, mz, block)
    sx, nx, dtx = _dda_axis(x, vx, cx, block)
    sy, ny, dty = _dda_axis(y, vy, cy, block)
    sz, nz, dtz = _dda_axis(z, vz, cz, block)
    return (cx, cy, cz), (t0 + nx, t0 + ny, t0 + nz), (sx, sy, sz), (dtx, dty, dtz)


@helper
def _dda_next(cx, cy, cz, nxt_x, nxt_y, nxt_z, sx, sy, sz, dtx, dty, dtz, mx, my, mz):
    """Step into the next majorant cell: -> (still in the grid, cell (3), next boundaries (3))."""
    if nxt_x <= nxt_y and nxt_x <= nxt_z:
        cx += sx
        nxt_x += dtx
        inside = 0 <= cx < mx
    elif nxt_y <= nxt_z:
        cy += sy
        nxt_y += dty
        inside = 0 <= cy < my
    else:
        cz += sz
        nxt_z += dtz
        inside = 0 <= cz < mz
    return inside, (cx, cy, cz), (nxt_x, nxt_y, nxt_z)


# ------------------------------------------------------------------ free flights
@helper
def _exp_neg(s, t):
    """exp(-s t), 1 for s = 0 whatever t (also infinite)."""
    return 1.0 if s == 0.0 else math.exp(-s * t)


@helper
def _through(tmax, f0, f1, f2):
    """The event of a flight that reaches the surface at ``tmax``, beta and the ratios
    multiplied by (f0, f1, f2)."""
    return MediumEvent(False, tmax, (f0, f1, f2), (f0, f1, f2))


@helper
def homogeneous_flight(media, k, tmax, hero, u):
    """Free flight in homogeneous medium k up to the surface at ``tmax`` -> MediumEvent
    (module docstring)."""
    s0, s1, s2 = media.sigma_t[k, 0], media.sigma_t[k, 1], media.sigma_t[k, 2]
    a = media.albedo
    if a[k, 0] == 0.0 and a[k, 1] == 0.0 and a[k, 2] == 0.0:     # absorbs only: exp(-sigma_t d), no sampling
        return MediumEvent(False, tmax, (_exp_neg(s0, tmax), _exp_neg(s1, tmax), _exp_neg(s2, tmax)),
                           (1.0, 1.0, 1.0))
    sh = s0 if hero == 0 else s1 if hero == 1 else s2
    t = -math.log(1.0 - u) / sh if sh > 0.0 else INF
    if t < tmax:
        ph = sh * _exp_neg(sh, t)
        p0, p1, p2 = s0 * _exp_neg(s0, t) / ph, s1 * _exp_neg(s1, t) / ph, s2 * _exp_neg(s2, t) / ph
        return MediumEvent(True, t, (a[k, 0] * p0, a[k, 1] * p1, a[k, 2] * p2), (p0, p1, p2))
    ph = _exp_neg(sh, tmax)
    return _through(tmax, _exp_neg(s0, tmax) / ph, _exp_neg(s1, tmax) / ph, _exp_neg(s2, tmax) / ph)


@helper
def _midpoint_depth(media, k, p, v, ta, tb):
    """The optical depth (3) of grid medium k over the voxel-space segment p + t v, t in
    [ta, tb], by the midpoint rule in steps of at most MARCH_STEP voxels."""
    speed = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])      # voxels per world unit
    n = max(1, int(math.ceil((tb - ta) * speed / MARCH_STEP)))
    h = (tb - ta) / n
    tau0 = tau1 = tau2 = 0.0
    for i in range(n):
        t = ta + (i + 0.5) * h
        s0, s1, s2 = grid_sigma(media, k, p[0] + t * v[0], p[1] + t * v[1], p[2] + t * v[2])
        tau0 += s0 * h
        tau1 += s1 * h
        tau2 += s2 * h
    return tau0, tau1, tau2


@helper
def majorant_walk(media, k, ox, oy, oz, dx, dy, dz, tmax, client, hero, u_real, tau, s):
    """The one walk through grid medium k's majorant grid (pbrt-v4's ``SampleT_maj``):
    cell by cell of the majorant grid (a 3-D DDA) along o + t d, t in [0, tmax], and in a
    cell of majorant mu > 0 what the ``client`` does there:

    - ``DELTA``, delta tracking (a free flight, hero channel ``hero``): tentative
      collisions at rate mu (the optical depth ``tau`` left over carried from cell to
      cell); at one with extinction s_k, real with probability s_h / mu (``u_real``),
      which ends the walk scattered; else null, beta and the ratios times (mu - s_k) /
      (mu - s_h);
    - ``RATIO``, ratio tracking (a shadow ray's transmittance): tentative collisions as
      above, T_k *= 1 - s_k / mu at each;
    - ``DEPTH``, the optical depth (deterministic: the Whitted integrator's Beer-Lambert
      attenuation, the transmittance view): the midpoint rule over the cell's segment in
      steps of at most MARCH_STEP voxels (a cell with mu = 0 holds no extinction).

    Further numbers come from the sampler's stream (``u_real`` and ``tau`` are the first;
    ``DEPTH`` draws none). -> (MediumEvent: ``beta`` holds the transmittance for
    ``RATIO``, the optical depth for ``DEPTH``; the sampler after). At the step cap the
    event has zero factors and the sampler is capped."""
    f0 = f1 = f2 = 0.0 if client == DEPTH else 1.0
    t0, t1, (px, py, pz), (vx, vy, vz) = grid_ray(media, k, ox, oy, oz, dx, dy, dz, tmax)
    if not t0 < t1:
        return _through(tmax, f0, f1, f2), s
    row = media.grid
    block, mx, my, mz = float(row[k, G_BLOCK]), row[k, G_MX], row[k, G_MY], row[k, G_MZ]
    moff = row[k, G_MAJORANT]
    (cx, cy, cz), (nxt_x, nxt_y, nxt_z), (sx, sy, sz), (dtx, dty, dtz) = _dda_start(px, py, pz, vx, vy, vz, t0, block,
                                                                           mx, my, mz)
    t = t0
    while t < t1:
        t_exit = min(min(nxt_x, nxt_y), min(nxt_z, t1))
        mu = media.majorant[moff + (cz * my + cy) * mx + cx]
        if client == DEPTH and mu > 0.0:
            a, b, c = _midpoint_depth(media, k, (px, py, pz), (vx, vy, vz), t, t_exit)
            f0, f1, f2 = f0 + a, f1 + b, f2 + c
        while client != DEPTH and mu > 0.0 and t + tau / mu < t_exit:
            t += tau / mu
            x, y, z = px + t * vx, py + t * vy, pz + t * vz
            s0, s1, s2 = grid_sigma(media, k, x, y, z)
            if client == RATIO:
                f0, f1, f2 = f0 * max(0.0, 1.0 - s0 / mu), f1 * max(0.0, 1.0 - s1 / mu), f2 * max(0.0, 1.0 - s2 / mu)
                if f0 + f1 + f2 == 0.0:
                    return _through(tmax, 0.0, 0.0, 0.0), s
            else:
                s0, s1, s2 = min(s0, mu), min(s1, mu), min(s2, mu)
                sh = s0 if hero == 0 else s1 if hero == 1 else s2
                if u_real * mu < sh:                      # a real collision: scattering
                    a0, a1, a2 = grid_albedo(media, k, x, y, z)
                    r0, r1, r2 = f0 * s0 / sh, f1 * s1 / sh, f2 * s2 / sh
                    return MediumEvent(True, t, (a0 * r0, a1 * r1, a2 * r2), (r0, r1, r2)), s
                nh = mu - sh                              # null: on, beta and the ratios take the same factors
                f0, f1, f2 = f0 * (mu - s0) / nh, f1 * (mu - s1) / nh, f2 * (mu - s2) / nh
                u_real, s = stream_1d(s)
            u, s = stream_1d(s)
            tau = -math.log(1.0 - u)
            if capped(s):                                 # the step cap: the path ends (module docstring)
                return _through(tmax, 0.0, 0.0, 0.0), s
        if mu > 0.0:
            tau -= mu * (t_exit - t)
        t = t_exit
        inside, (cx, cy, cz), (nxt_x, nxt_y, nxt_z) = _dda_next(cx, cy, cz, nxt_x, nxt_y, nxt_z, sx, sy, sz,
                                                            dtx, dty, dtz, mx, my, mz)
        if not inside:
            break
    return _through(tmax, f0, f1, f2), s


@unit
def _free_flight(media, k, ox, oy, oz, dx, dy, dz, tmax, hero, fresh, s):
    """Free flight from o along the unit direction d in medium k up to the next surface at
    ``tmax`` (may be infinite) -> (MediumEvent, sampler): its first two numbers are the
    sampler's next 2-D group when ``fresh`` (the first flight since the last vertex), else
    from the stream."""
    if fresh:
        u_tau, u_real, s = next_2d(s)
    else:
        u_tau, s = stream_1d(s)
        u_real, s = stream_1d(s)
    if media.kind[k] == MEDIUM_HOMOGENEOUS:
        return homogeneous_flight(media, k, tmax, hero, u_tau), s
    return majorant_walk(media, k, ox, oy, oz, dx, dy, dz, tmax, DELTA, hero, u_real, -math.log(1.0 - u_tau), s)


# ------------------------------------------------------------------ transmittance
@helper
def medium_transmittance(media, k, ox, oy, oz, dx, dy, dz, tmax, s):
    """Transmittance (3) of medium k along o + t d (d unit), t in [0, tmax]: exact for a
    homogeneous medium, ratio tracking in a grid -> (T (3), sampler)."""
    if media.kind[k] == MEDIUM_HOMOGENEOUS:
        st = media.sigma_t
        return (_exp_neg(st[k, 0], tmax), _exp_neg(st[k, 1], tmax), _exp_neg(st[k, 2], tmax)), s
    u, s = stream_1d(s)
    event, s = majorant_walk(media, k, ox, oy, oz, dx, dy, dz, tmax, RATIO, 0, 0.0, -math.log(1.0 - u), s)
    return event.beta, s


@helper
def crossed_medium(geo, media, hit, px, py, pz, dx, dy, dz):
    """(null surface?, the medium on the far side, true normal (3)) of a surface hit by a
    ray along d: the interior when d goes in against the front normal, else the exterior."""
    (gx, gy, gz), (_, _, _), mat, _ = hit_normals(geo, hit, px, py, pz)
    null = geo.materials[mat, M_TYPE] == MAT_NULL
    if gx * dx + gy * dy + gz * dz < 0.0:
        return null, media.mat_interior[mat], (gx, gy, gz)
    return null, media.mat_exterior[mat], (gx, gy, gz)


@unit
def _shadow_transmittance(bvh, geo, media, m, ox, oy, oz, dx, dy, dz, dist, eps, s):
    """Transmittance (3) of a shadow ray from o along the unit direction d to the light
    point at ``dist`` (stopping SHADOW_END of the way; infinite: a direction, the
    environment or a directional light), starting in medium m (-1: none): a surface
    blocks it, but a ``null`` one, which it crosses into the medium on its far side
    (then aiming at the light point again from the origin moved past it) -> (T (3), sampler)."""
    t0 = t1 = t2 = 1.0
    qx, qy, qz = ox + dist * dx, oy + dist * dy, oz + dist * dz      # the light point (finite dist)
    for _ in range(MAX_CROSSINGS):
        tmax = dist * SHADOW_END
        if m < 0:            # no medium: only a null surface on the way needs the closest hit
            if not scene_occluded(bvh, geo, ox, oy, oz, dx, dy, dz, 0.0, tmax):
                return (t0, t1, t2), s
            if not media.has_null:
                return (0.0, 0.0, 0.0), s
        hit = scene_hit(bvh, geo, ox, oy, oz, dx, dy, dz, 0.0, tmax)
        seg = tmax if hit.kind == MISS else hit.t
        if m >= 0:
            (a, b, c), s = medium_transmittance(media, m, ox, oy, oz, dx, dy, dz, seg, s)
            t0, t1, t2 = t0 * a, t1 * b, t2 * c
            if t0 + t1 + t2 == 0.0:
                return (0.0, 0.0, 0.0), s
        if hit.kind == MISS:
            return (t0, t1, t2), s
        px, py, pz = ox + seg * dx, oy + seg * dy, oz + seg * dz
        null, m, (gx, gy, gz) = crossed_medium(geo, media, hit, px, py, pz, dx, dy, dz)
        if not null:
            return (0.0, 0.0, 0.0), s
        off = eps if gx * dx + gy * dy + gz * dz > 0.0 else -eps
        ox, oy, oz = px + off * gx, py + off * gy, pz + off * gz
        if dist < INF:
            dx, dy, dz = qx - ox, qy - oy, qz - oz
            dist = math.sqrt(dx * dx + dy * dy + dz * dz)
            dx, dy, dz = dx / dist, dy / dist, dz / dist
    return (0.0, 0.0, 0.0), s


# ------------------------------------------------------------------ optical depth
@unit
def optical_depth(media, k, ox, oy, oz, dx, dy, dz, tmax):
    """Optical depth (3 channels) of medium k along o + t d (d unit), t in [0, tmax]:
    ``sigma_t tmax`` for a homogeneous medium (infinite when tmax is and sigma_t > 0),
    for a grid the midpoint rule in steps of at most MARCH_STEP voxels over each majorant
    cell the ray crosses (:func:`majorant_walk`'s ``DEPTH`` client; deterministic: the
    Whitted integrator's Beer-Lambert attenuation and the transmittance view)."""
    st = media.sigma_t
    if media.kind[k] == MEDIUM_HOMOGENEOUS:
        return (0.0 if st[k, 0] == 0.0 else st[k, 0] * tmax, 0.0 if st[k, 1] == 0.0 else st[k, 1] * tmax,
                0.0 if st[k, 2] == 0.0 else st[k, 2] * tmax)
    event, _ = majorant_walk(media, k, ox, oy, oz, dx, dy, dz, tmax, DEPTH, 0, 0.0, 0.0,
                             PathSampler(0, 0, 0, 0, 0, 0))
    return event.beta


@row_kernel
def optical_depth_rows(rows, queue, out, bvh, geo, cam, media, eps):
    """The transmittance view (a row kernel): per pixel centre, the optical depth (3
    channels) along the camera ray into ``out`` (H, W, 3), through the media it meets
    from the camera's, across ``null`` boundaries, up to the first other surface (or
    infinity); ``out[..., 3]`` counts the null boundaries crossed."""
    bvh, geo, media = borrow(bvh), borrow(geo), borrow(media)
    height, width = out.shape[0], out.shape[1]
    i = next_row(rows, queue)
    while i >= 0:
        for j in range(width):
            (ox, oy, oz), (dx, dy, dz) = centre_ray(cam, width, height, i, j)
            m = media.camera
            tau0 = tau1 = tau2 = 0.0
            crossed = 0
            for _ in range(MAX_CROSSINGS):
                hit = scene_hit(bvh, geo, ox, oy, oz, dx, dy, dz, 0.0, INF)
                if m >= 0:
                    a, b, c = optical_depth(media, m, ox, oy, oz, dx, dy, dz, hit.t)
                    tau0, tau1, tau2 = tau0 + a, tau1 + b, tau2 + c
                if hit.kind == MISS:
                    break
                px, py, pz = ox + hit.t * dx, oy + hit.t * dy, oz + hit.t * dz
                null, m, (gx, gy, gz) = crossed_medium(geo, media, hit, px, py, pz, dx, dy, dz)
                if not null:
                    break
                crossed += 1
                off = eps if gx * dx + gy * dy + gz * dz > 0.0 else -eps
                ox, oy, oz = px + off * gx, py + off * gy, pz + off * gz
            out[i, j, 0], out[i, j, 1], out[i, j, 2], out[i, j, 3] = tau0, tau1, tau2, crossed
        i = next_row(rows, queue)


def render_optical_depth(out, bvh, geo, cam, media, eps):
    """:func:`optical_depth_rows` over every row of ``out`` ((H, W, 4) float64), on
    ``numba.get_num_threads()`` threads."""
    run_rows(optical_depth_rows, np.arange(out.shape[0], dtype=np.int64), out, bvh, geo, cam, media, eps)


# ------------------------------------------------------------------ the integrators' entry points
# The integrators take the scene's Media record, or None for a scene without media: the
# entry points below compile to constants for None (overloads chosen by the argument's
# type, as raytrace.accel.instances does for scenes without instances), so such a scene
# never compiles the media code. The path tracer needs them all, the Whitted integrator
# the first four.
@helper
def _camera_medium(media):
    return media.camera


@helper
def _medium_beyond(media, mat, entering):
    return media.mat_interior[mat] if entering else media.mat_exterior[mat]


@helper
def _is_null(media, geo, mat):
    return media.has_null and geo.materials[mat, M_TYPE] == MAT_NULL


@helper
def _beer_lambert(media, m, ox, oy, oz, dx, dy, dz, t):
    tau0, tau1, tau2 = optical_depth(media, m, ox, oy, oz, dx, dy, dz, t)
    return math.exp(-tau0), math.exp(-tau1), math.exp(-tau2)


@helper
def _shadow_segment(o, p, w, dist):
    """The unnormalised shadow ray from o to the light point p + dist w, ``t`` in [0,
    SHADOW_END) -> (direction, SHADOW_END); for dist inf the direction w, INF."""
    if dist < INF:
        return (p[0] + dist * w[0] - o[0], p[1] + dist * w[1] - o[1], p[2] + dist * w[2] - o[2]), SHADOW_END
    return w, INF


@helper
def _shadow_ray(o, p, w, dist):
    """The shadow ray from o to the light point p + dist w -> (unit direction, length);
    for dist inf the direction w, INF."""
    if dist < INF:
        d, _ = _shadow_segment(o, p, w, dist)
        length = math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
        return (d[0] / length, d[1] / length, d[2] / length), length
    return w, INF


@helper
def _hero_channel(media, s):
    u, s = next_1d(s)
    return min(int(3.0 * u), 2), s


@helper
def _phase_sample(media, m, d, u1, u2):
    wx, wy, wz, pdf = hg_sample(media.g[m], d[0], d[1], d[2], u1, u2)
    return (wx, wy, wz), pdf


def _none(media):
    from numba import types
    return isinstance(media, (types.NoneType, types.Omitted))


def _stub(name, doc):
    def stub(*args):
        raise TypeError(f"{name} is called from Numba kernels only")
    stub.__name__ = stub.__qualname__ = name
    stub.__doc__ = doc
    return stub


camera_medium = _stub("camera_medium", "The medium the camera is in (-1: none, or no media at all).")
medium_beyond = _stub("medium_beyond", "The medium behind a surface of material row ``mat`` for a ray "
                      "that goes through it (``entering``: against its front normal): the interior, "
                      "else the exterior; -1 without media.")
is_null = _stub("is_null", "Whether material row ``mat`` is a ``null`` surface (a boundary only).")
beer_lambert = _stub("beer_lambert", "Transmittance exp(-optical depth) (3) of medium m along o + t d, "
                     "t in [0, t] (Beer-Lambert; :func:`optical_depth`); 1 without media.")
hero_channel = _stub("hero_channel", "(hero, sampler): the path's hero channel 0-2 from the sampler's next "
                     "number (spectral MIS, module docstring); 0 and no number drawn without media.")
free_flight = _stub("free_flight", "(MediumEvent, sampler) of the segment o + t d, t < tmax, in medium m "
                    "(:func:`_free_flight`); without media the surface is reached, factors 1.")
shadow_transmittance = _stub("shadow_transmittance", "(T (3), sampler) of the shadow ray from o (p moved off "
                             "its surface, or p) to the light point p + dist w (w unit; dist inf: the "
                             "direction w) in medium m (:func:`_shadow_transmittance`); without media 0 "
                             "or 1: occluded or not.")
phase_pdf = _stub("phase_pdf", "The phase function of medium m at cos theta (= its sampling density, "
                  "1/sr); 0 without media.")
phase_sample = _stub("phase_sample", "(wo (3), pdf): a direction scattered by medium m for travel "
                     "direction d (its weight is 1); without media d itself, pdf 0.")


_INLINED = {"forceinline": True, "error_model": "numpy"}   # an entry point: compiled alone, inlined by LLVM


def _register():
    from numba.extending import overload

    # without media: constants (lambdas compiled with the caller, no function of this module).
    # The path tracer's entry points are compiled alone and inlined by LLVM (forceinline,
    # _INLINED): plain calls did not fold their constants for media=None into the bounce
    # loop (the Cornell box rendered 20 % slower, benchmarks/bench_versions.py), and
    # inlined at Numba's IR level (inline="always") they cost 0.4 s of each path_rows
    # compile. shadow_transmittance, the one on the hot path of every vertex, is inlined at
    # the IR level all the same: forceinlined it left the glass knot 4 % slower.
    @overload(camera_medium, jit_options=_INLINED)
    def _camera_medium_impl(media):
        if _none(media):
            return lambda media: np.int64(-1)
        return lambda media: _camera_medium(media)

    @overload(medium_beyond, jit_options=_INLINED)
    def _medium_beyond_impl(media, mat, entering):
        if _none(media):
            return lambda media, mat, entering: np.int64(-1)
        return lambda media, mat, entering: _medium_beyond(media, mat, entering)

    @overload(is_null, jit_options=_INLINED)
    def _is_null_impl(media, geo, mat):
        if _none(media):
            return lambda media, geo, mat: False
        return lambda media, geo, mat: _is_null(media, geo, mat)

    @overload(beer_lambert, inline="never")
    def _beer_lambert_impl(media, m, ox, oy, oz, dx, dy, dz, t):
        if _none(media):
            return lambda media, m, ox, oy, oz, dx, dy, dz, t: (1.0, 1.0, 1.0)
        return lambda media, m, ox, oy, oz, dx, dy, dz, t: _beer_lambert(media, m, ox, oy, oz, dx, dy, dz, t)

    @overload(hero_channel, jit_options=_INLINED)
    def _hero_channel_impl(media, s):
        if _none(media):
            return lambda media, s: (0, s)
        return lambda media, s: _hero_channel(media, s)

    @overload(free_flight, jit_options=_INLINED)
    def _free_flight_impl(media, m, o, d, tmax, hero, fresh, s):
        if _none(media):
            return lambda media, m, o, d, tmax, hero, fresh, s: (_through(tmax, 1.0, 1.0, 1.0), s)
        return lambda media, m, o, d, tmax, hero, fresh, s: _free_flight(media, m, o[0], o[1], o[2], d[0], d[1],
                                                                         d[2], tmax, hero, fresh, s)

    @overload(shadow_transmittance, inline="always")
    def _shadow_transmittance_impl(bvh, geo, media, m, o, p, w, dist, eps, s):
        if _none(media):
            def unoccluded(bvh, geo, media, m, o, p, w, dist, eps, s):
                d, tmax = _shadow_segment(o, p, w, dist)
                if scene_occluded(bvh, geo, o[0], o[1], o[2], d[0], d[1], d[2], 0.0, tmax):
                    return (0.0, 0.0, 0.0), s
                return (1.0, 1.0, 1.0), s
            return unoccluded

        def transmitted(bvh, geo, media, m, o, p, w, dist, eps, s):
            d, length = _shadow_ray(o, p, w, dist)
            return _shadow_transmittance(bvh, geo, media, m, o[0], o[1], o[2], d[0], d[1], d[2], length, eps, s)
        return transmitted

    @overload(phase_pdf, jit_options=_INLINED)
    def _phase_pdf_impl(media, m, cos_theta):
        if _none(media):
            return lambda media, m, cos_theta: 0.0
        return lambda media, m, cos_theta: hg_pdf(media.g[m], cos_theta)

    @overload(phase_sample, jit_options=_INLINED)
    def _phase_sample_impl(media, m, d, u1, u2):
        if _none(media):
            return lambda media, m, d, u1, u2: (d, 0.0)
        return lambda media, m, d, u1, u2: _phase_sample(media, m, d, u1, u2)


_register()
