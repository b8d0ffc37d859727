"""Light sampling and light pdfs for next-event estimation and MIS (Numba, scalar).

Lights are the entries of :class:`raytrace.layout.Lights` (built by
``raytrace.scene.emitters``). Sampling picks an
entry with probability ``pmf`` and then a direction from the shading point ``p``:

- triangle: a uniform point on its area; pdf (solid angle) ``d^2 / (A cos_l)``;
- sphere, round and ``p`` outside: a uniform direction in the cone the sphere subtends,
  pdf ``1 / (2 pi (1 - cos_max))``; ellipsoids: a point uniform in the unit sphere's
  area mapped to world space, pdf ``d^2 / (cos_l * dA_world/dA_unit * 4 pi)`` with
  ``dA_world/dA_unit = |det A| |A^-T n|``;
- point and directional lights: delta (pdf = the entry's probability; no MIS); a spot
  light is a point light times its cone's falloff (:func:`cone_falloff`);
- environment (:class:`raytrace.layout.Environment`, seen through its ``to_map``
  rotation): uniform sphere (constant colour), texel by texel (cube map: the texel
  through a guide table, ``guided_entry``, uniform on the face within it), pdf
  ``pmf_texel / (2/S)^2 * (1 + a^2 + b^2)^(3/2)`` on face coordinates (a, b), or cell by
  cell (lat-long map: uniform in solid angle within the cell), pdf ``pmf_cell /
  Omega_cell``. :func:`env_lookup` gives a direction's radiance and density together.

Every returned pdf already includes the entry's selection probability. Area lights
emit from their front side only (``cos_l > 0``); a sample that sees a back side is
rejected (ok = False), which matches the zero radiance a BSDF ray would find there.
"""
import math

import numpy as np
from raytrace.jit import helper, unit, kernel

from ..cubemap import cube_face_xy, face_xy_direction, texel_rgb
from ..envmap import latlong_cell_direction, latlong_rgb
from ..layout import (CONE_LINEAR, CONE_NONE, ENV_CONSTANT, ENV_CUBE, ENV_LATLONG, LIGHT_DIRECTIONAL,
                      LIGHT_POINT, LIGHT_SPHERE, LIGHT_TRIANGLE, TRIANGLE)
from .frame import orthonormal_basis
from .records import LightSample
from .surface import affine
from .trig import cos_sin_2pi

INF = math.inf
INV_4PI = 1.0 / (4.0 * math.pi)
ONE_BELOW = 1.0 - 2.0 ** -53     # the largest double below 1
KIND_TRIANGLE = np.int64(TRIANGLE)   # an int64, as hit.kind is: one compile of light_pdf_at_hit, not two



@helper
def no_light():
    """The LightSample of no sample (nothing faces p, a zero pdf)."""
    return LightSample(False, (0.0, 0.0, 1.0), 0.0, (0.0, 0.0, 0.0), 0.0, False)

@helper
def select_entry(cdf, u):
    """Index i with cdf[i] <= u < cdf[i+1] (entries of zero probability are skipped).

    A binary search for the first cdf entry > u (``np.searchsorted(cdf, u, "right")``,
    whose generic Numba implementation cost a second of compile time)."""
    n = cdf.shape[0] - 1
    lo, hi = 0, cdf.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if cdf[mid] <= u:
            lo = mid + 1
        else:
            hi = mid
    i = lo - 1
    if i < 0:
        return 0
    if i >= n:
        return n - 1
    return i


@helper
def guided_entry(cdf, guide, u):
    """``select_entry(cdf, u)`` in expected constant time, for tables of many entries
    (a cube map's texels): ``guide[k]`` (``guide_table``) is the entry chosen for the
    smallest u of bucket ``k = int(u * K)``, and the scan moves on from there to the
    first cdf entry above u. The same index as the binary search for every u (which, on
    the sky's 98,305-entry table, cost about 150 ns a lookup against 20 here: its last
    dozen steps are mispredicted branches and cache misses)."""
    n = cdf.shape[0] - 1
    k = min(int(u * guide.shape[0]), guide.shape[0] - 1)
    i = guide[k]
    while i < n - 1 and cdf[i + 1] <= u:
        i += 1
    return i


@unit
def env_lookup(env, dx, dy, dz):
    """-> (r, g, b, pdf): the environment's radiance in world direction d (need not be
    unit) and the solid-angle density (without the entry probability) with which
    :func:`sample_environment` picks that direction. Compiled once, inlined by LLVM."""
    kind = env.kind
    if kind == ENV_CONSTANT:
        return env.color[0], env.color[1], env.color[2], INV_4PI
    if kind != ENV_CUBE and kind != ENV_LATLONG:
        return 0.0, 0.0, 0.0, 0.0
    m = env.to_map
    mx = m[0, 0] * dx + m[0, 1] * dy + m[0, 2] * dz
    my = m[1, 0] * dx + m[1, 1] * dy + m[1, 2] * dz
    mz = m[2, 0] * dx + m[2, 1] * dy + m[2, 2] * dz
    if kind == ENV_LATLONG:
        r, g, b, cell = latlong_rgb(env.texels, mx, my, mz)
        return r, g, b, env.density[cell]
    face, x, y = cube_face_xy(mx, my, mz)
    r, g, b = texel_rgb(env.texels, face, x, y)
    s = env.texels.shape[1]
    col = min(max(int(x * s), 0), s - 1)
    row = min(max(int((1.0 - y) * s), 0), s - 1)
    a = 2.0 * x - 1.0
    bb = 2.0 * y - 1.0
    j = 1.0 + a * a + bb * bb
    return r, g, b, env.pmf[(face * s + row) * s + col] * (s * s * 0.25) * j * math.sqrt(j)


@helper
def env_radiance(env, dx, dy, dz):
    """Radiance (r, g, b) of the environment in world direction d (need not be unit)."""
    r, g, b, _ = env_lookup(env, dx, dy, dz)
    return r, g, b


@helper
def env_direction_pdf(env, dx, dy, dz):
    """Solid-angle density of the environment sampler (without the entry probability)
    for the direction d."""
    return env_lookup(env, dx, dy, dz)[3]


@helper
def cone_falloff(cone, i, c):
    """The falloff of cone row ``i`` (``raytrace.layout.CONE_WIDTH``) at the cosine ``c``
    between its axis and the direction from the light: 1 without a cone; Mitsuba's
    ``spot`` (linear in the angle between beam width and cutoff) or glTF's (the square
    of a ramp linear in the cosine)."""
    mode = cone[i, 0]
    if mode == CONE_NONE:
        return 1.0
    if not c > cone[i, 1]:
        return 0.0
    if mode == CONE_LINEAR:
        if c >= cone[i, 2]:
            return 1.0
        return (cone[i, 3] - math.acos(c)) * cone[i, 4]
    t = min(max(c * cone[i, 3] + cone[i, 4], 0.0), 1.0)
    return t * t


@kernel
def _sphere_cone(geo, s, px, py, pz):
    """(c (3): p -> centre, dc2 = |c|^2, r2 = radius^2), r2 = 0 when the sphere is not
    round or p is not outside."""
    r = geo.sph_radius[s]
    cx, cy, cz = geo.sph_center[s, 0] - px, geo.sph_center[s, 1] - py, geo.sph_center[s, 2] - pz
    dc2 = cx * cx + cy * cy + cz * cz
    r2 = r * r
    if r <= 0.0 or dc2 <= r2:
        return (cx, cy, cz), dc2, 0.0
    return (cx, cy, cz), dc2, r2


@kernel
def _ellipsoid_area_factor(geo, s, qx, qy, qz):
    """dA_world / dA_unit at the unit-sphere point q (object space) and the world normal."""
    a = geo.sph_o2w
    w = geo.sph_w2o
    # A^-T q = (w2o linear)^T q
    nx = w[s, 0, 0] * qx + w[s, 1, 0] * qy + w[s, 2, 0] * qz
    ny = w[s, 0, 1] * qx + w[s, 1, 1] * qy + w[s, 2, 1] * qz
    nz = w[s, 0, 2] * qx + w[s, 1, 2] * qy + w[s, 2, 2] * qz
    ln = math.sqrt(nx * nx + ny * ny + nz * nz)
    det = (a[s, 0, 0] * (a[s, 1, 1] * a[s, 2, 2] - a[s, 1, 2] * a[s, 2, 1])
           - a[s, 0, 1] * (a[s, 1, 0] * a[s, 2, 2] - a[s, 1, 2] * a[s, 2, 0])
           + a[s, 0, 2] * (a[s, 1, 0] * a[s, 2, 1] - a[s, 1, 1] * a[s, 2, 0]))
    if ln == 0.0:
        return 0.0, 0.0, 0.0, 1.0
    return abs(det) * ln, nx / ln, ny / ln, nz / ln


@kernel
def sphere_light_pdf(geo, s, px, py, pz, qx, qy, qz, cos_l):
    """Solid-angle density (without the entry probability) of sampling point q of emissive
    sphere s from p, where cos_l is the cosine at q between its normal and q -> p."""
    (cx, cy, cz), dc2, r2 = _sphere_cone(geo, s, px, py, pz)
    if r2 > 0.0:
        sin2max = r2 / dc2
        omc = sin2max / (1.0 + math.sqrt(max(0.0, 1.0 - sin2max)))
        return 1.0 / (2.0 * math.pi * omc)
    if cos_l <= 0.0:
        return 0.0
    ox, oy, oz = affine(geo.sph_w2o, s, qx, qy, qz)
    ln = math.sqrt(ox * ox + oy * oy + oz * oz)
    if ln == 0.0:
        return 0.0
    factor, nx, ny, nz = _ellipsoid_area_factor(geo, s, ox / ln, oy / ln, oz / ln)
    if factor <= 0.0:
        return 0.0
    dx, dy, dz = qx - px, qy - py, qz - pz
    return (dx * dx + dy * dy + dz * dz) * INV_4PI / (factor * cos_l)


@unit
def light_pdf_at_hit(lights, geo, kind, idx, px, py, pz, qx, qy, qz, cos_l):
    """Density (solid angle at p, including the entry probability) with which next-event
    estimation would have picked the point q that a BSDF ray from p hit on an emitter
    (kind TRIANGLE or SPHERE); cos_l > 0 is the cosine at q."""
    if kind == TRIANGLE:
        e = lights.tri_entry[idx]
        if e < 0 or cos_l <= 0.0:
            return 0.0
        ax = geo.tri_v1[idx, 0] - geo.tri_v0[idx, 0]
        ay = geo.tri_v1[idx, 1] - geo.tri_v0[idx, 1]
        az = geo.tri_v1[idx, 2] - geo.tri_v0[idx, 2]
        bx = geo.tri_v2[idx, 0] - geo.tri_v0[idx, 0]
        by = geo.tri_v2[idx, 1] - geo.tri_v0[idx, 1]
        bz = geo.tri_v2[idx, 2] - geo.tri_v0[idx, 2]
        cx, cy, cz = ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
        area = 0.5 * math.sqrt(cx * cx + cy * cy + cz * cz)
        if area <= 0.0:
            return 0.0
        dx, dy, dz = qx - px, qy - py, qz - pz
        return lights.pmf[e] * (dx * dx + dy * dy + dz * dz) / (area * cos_l)
    e = lights.sph_entry[idx]
    if e < 0:
        return 0.0
    return lights.pmf[e] * sphere_light_pdf(geo, idx, px, py, pz, qx, qy, qz, cos_l)


@helper
def rescaled(u, start, width):
    """Where u lies in [start, start + width), as a uniform number in [0, 1): a number
    that chose an entry of a cdf, reused for what comes next (kept below 1)."""
    return min(max((u - start) / width, 0.0), ONE_BELOW)


@unit
def sample_light(lights, geo, env, px, py, pz, u1, u2):
    """Pick a light and a direction from p.

    -> :class:`~raytrace.kernels.records.LightSample` (``wi`` the unit direction p ->
    light, ``dist`` the distance to the light point, inf for directional and environment
    lights). Its ``radiance`` is the emitted radiance for area and environment lights and the incident irradiance
    term (intensity / d^2, times a spot's falloff, or the directional irradiance) for
    delta lights; ``env`` the :class:`~raytrace.layout.Environment`; ``pdf``
    includes the selection probability (for delta lights it is that probability).
    ``u1`` picks the entry and then, rescaled to the entry's share of [0, 1) (as
    Mitsuba reuses its emitter sample), serves as the first number of the point (and
    picks the environment map's texel or cell before that); ``u2`` is the point's second
    number."""
    n = lights.pmf.shape[0]
    if n == 0:
        return no_light()
    e = select_entry(lights.cdf, u1)
    pmf = lights.pmf[e]
    if not pmf > 0.0:
        return no_light()
    u1 = rescaled(u1, lights.cdf[e], pmf)
    kind = lights.kind[e]
    idx = lights.index[e]
    if kind == LIGHT_TRIANGLE:
        return sample_triangle_light(lights, geo, idx, px, py, pz, u1, u2)
    if kind == LIGHT_SPHERE:
        return sample_sphere_light(geo, idx, pmf, px, py, pz, u1, u2)
    if kind == LIGHT_POINT:
        return sample_point_light(lights, idx, pmf, px, py, pz)
    if kind == LIGHT_DIRECTIONAL:
        return sample_directional_light(lights, idx, pmf)
    return sample_environment(env, pmf, u1, u2)


@helper
def sample_triangle_light(lights, geo, idx, px, py, pz, u1, u2):
    """A uniform point on emissive triangle ``idx``; pdf ``d^2 / (A cos_l)`` times the
    entry probability. Fails when p sees the triangle's back."""
    su = math.sqrt(u1)
    b0 = 1.0 - su
    b1 = u2 * su
    b2 = 1.0 - b0 - b1
    v0, v1, v2 = geo.tri_v0, geo.tri_v1, geo.tri_v2
    qx = b0 * v0[idx, 0] + b1 * v1[idx, 0] + b2 * v2[idx, 0]
    qy = b0 * v0[idx, 1] + b1 * v1[idx, 1] + b2 * v2[idx, 1]
    qz = b0 * v0[idx, 2] + b1 * v1[idx, 2] + b2 * v2[idx, 2]
    wx, wy, wz = qx - px, qy - py, qz - pz
    d2 = wx * wx + wy * wy + wz * wz
    if not d2 > 0.0:
        return no_light()
    d = math.sqrt(d2)
    wx, wy, wz = wx / d, wy / d, wz / d
    cos_l = -(geo.tri_ng[idx, 0] * wx + geo.tri_ng[idx, 1] * wy + geo.tri_ng[idx, 2] * wz)
    if cos_l <= 0.0:
        return no_light()
    pdf = light_pdf_at_hit(lights, geo, KIND_TRIANGLE, idx, px, py, pz, qx, qy, qz, cos_l)
    if not (pdf > 0.0 and pdf < INF):
        return no_light()
    e = geo.tri_emit[idx]
    em = geo.emission
    return LightSample(True, (wx, wy, wz), d, (em[e, 0], em[e, 1], em[e, 2]), pdf, False)


@helper
def sample_sphere_light(geo, idx, pmf, px, py, pz, u1, u2):
    """Emissive sphere ``idx``: a direction in the cone it subtends (round, p outside),
    else a point uniform on the unit sphere's area mapped to world space."""
    e = geo.sph_emit[idx]
    er, eg, eb = geo.emission[e, 0], geo.emission[e, 1], geo.emission[e, 2]
    (cx, cy, cz), dc2, r2 = _sphere_cone(geo, idx, px, py, pz)
    if r2 > 0.0:
        dc = math.sqrt(dc2)
        cx, cy, cz = cx / dc, cy / dc, cz / dc
        sin2max = r2 / dc2
        omc = sin2max / (1.0 + math.sqrt(max(0.0, 1.0 - sin2max)))
        one_minus_cos = u1 * omc
        cos_t = 1.0 - one_minus_cos
        sin_t = math.sqrt(max(0.0, one_minus_cos * (2.0 - one_minus_cos)))
        cos_phi, sin_phi = cos_sin_2pi(u2)
        (tx, ty, tz), (bx, by, bz) = orthonormal_basis(cx, cy, cz)
        cp, sp = cos_phi * sin_t, sin_phi * sin_t
        wx = cp * tx + sp * bx + cos_t * cx
        wy = cp * ty + sp * by + cos_t * cy
        wz = cp * tz + sp * bz + cos_t * cz
        # near root of t^2 - 2 t dc cos_t + (dc2 - r2) = 0, in the stable form c / t_far
        disc = max(0.0, r2 - dc2 * (1.0 - cos_t * cos_t))
        t_far = dc * cos_t + math.sqrt(disc)
        dist = (dc2 - r2) / t_far if t_far > 0.0 else 0.0
        pdf = pmf / (2.0 * math.pi * omc)
        if not (dist > 0.0 and pdf < INF):
            return no_light()
        return LightSample(True, (wx, wy, wz), dist, (er, eg, eb), pdf, False)
    oz = 1.0 - 2.0 * u1
    orr = math.sqrt(max(0.0, 1.0 - oz * oz))
    cos_phi, sin_phi = cos_sin_2pi(u2)
    ox, oy = orr * cos_phi, orr * sin_phi
    qx, qy, qz = affine(geo.sph_o2w, idx, ox, oy, oz)
    factor, nx, ny, nz = _ellipsoid_area_factor(geo, idx, ox, oy, oz)
    wx, wy, wz = qx - px, qy - py, qz - pz
    d2 = wx * wx + wy * wy + wz * wz
    if not (d2 > 0.0 and factor > 0.0):
        return no_light()
    d = math.sqrt(d2)
    wx, wy, wz = wx / d, wy / d, wz / d
    cos_l = -(nx * wx + ny * wy + nz * wz)
    if cos_l <= 0.0:
        return no_light()
    pdf = pmf * d2 * INV_4PI / (factor * cos_l)
    if not pdf < INF:
        return no_light()
    return LightSample(True, (wx, wy, wz), d, (er, eg, eb), pdf, False)


@helper
def sample_point_light(lights, idx, pmf, px, py, pz):
    """Point light ``idx`` (a delta): irradiance term ``intensity / d^2``, times the cone's
    falloff for a spot (fails outside the cone)."""
    wx = lights.delta_pos[idx, 0] - px
    wy = lights.delta_pos[idx, 1] - py
    wz = lights.delta_pos[idx, 2] - pz
    d2 = wx * wx + wy * wy + wz * wz
    if not d2 > 0.0:
        return no_light()
    d = math.sqrt(d2)
    wx, wy, wz = wx / d, wy / d, wz / d
    ax = lights.delta_axis
    fall = cone_falloff(lights.delta_cone, idx, -(ax[idx, 0] * wx + ax[idx, 1] * wy + ax[idx, 2] * wz))
    if not fall > 0.0:
        return no_light()
    f = fall / d2
    val = lights.delta_val
    return LightSample(True, (wx, wy, wz), d, (val[idx, 0] * f, val[idx, 1] * f, val[idx, 2] * f), pmf, True)


@helper
def sample_directional_light(lights, idx, pmf):
    """Directional light ``idx`` (a delta): towards the light, at infinity."""
    val = lights.delta_val
    pos = lights.delta_pos
    return LightSample(True, (-pos[idx, 0], -pos[idx, 1], -pos[idx, 2]), INF, (val[idx, 0], val[idx, 1], val[idx, 2]),
                       pmf, True)


@helper
def sample_environment(env, pmf, u1, u2):
    """The environment: a cube-map texel (a lat-long cell) by its weight (``u1``) and a
    point in it (``u1`` rescaled to its share, and ``u2``), or a uniform direction for a
    constant colour. The density is :func:`env_lookup`'s for the direction found, so a
    BSDF ray in that direction gets the same MIS weight."""
    kind = env.kind
    if kind == ENV_CUBE or kind == ENV_LATLONG:
        t = guided_entry(env.cdf, env.guide, u1)
        u1 = rescaled(u1, env.cdf[t], env.pmf[t])
        h, w = env.texels.shape[1], env.texels.shape[2]
        if kind == ENV_LATLONG:
            mx, my, mz = latlong_cell_direction(h, w, t, u1, u2)
        else:
            face = t // (h * w)
            rc = t - face * h * w
            row = rc // w
            col = rc - row * w
            mx, my, mz = face_xy_direction(face, (col + u1) / w, 1.0 - (row + u2) / h)
            ln = math.sqrt(mx * mx + my * my + mz * mz)
            mx, my, mz = mx / ln, my / ln, mz / ln
        m = env.to_map            # a rotation: world = to_map^T map
        wx = m[0, 0] * mx + m[1, 0] * my + m[2, 0] * mz
        wy = m[0, 1] * mx + m[1, 1] * my + m[2, 1] * mz
        wz = m[0, 2] * mx + m[1, 2] * my + m[2, 2] * mz
    else:
        wz = 1.0 - 2.0 * u1
        rr = math.sqrt(max(0.0, 1.0 - wz * wz))
        cos_phi, sin_phi = cos_sin_2pi(u2)
        wx, wy = rr * cos_phi, rr * sin_phi
    er, eg, eb, epdf = env_lookup(env, wx, wy, wz)
    pdf = pmf * epdf
    if not pdf > 0.0:
        return no_light()
    return LightSample(True, (wx, wy, wz), INF, (er, eg, eb), pdf, False)
