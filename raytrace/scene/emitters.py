"""The path tracer's light sources as flat arrays (built once per scene).

Every emitter is one entry of a discrete distribution chosen in proportion to its
power (next-event estimation picks one entry per shading point):

- each triangle of an emissive shape: ``pi * area * mean(radiance)`` (one-sided);
- each emissive sphere: ``pi * area * mean(radiance)`` (it emits outward);
- point lights: ``4 pi * mean(intensity)``; directional lights: ``pi R^2 * mean(E)``,
  with R the radius of the scene's bounding sphere;
- the environment (constant colour or cube map): ``4 pi^2 R^2 * mean(L)`` (the power
  crossing the scene's bounding sphere; pbrt's estimate).

Units (the course's, see ``docs/mitsuba-mapping.md``): a point light of ``color`` I and
``attenuation`` a has radiant intensity ``pi * I / a`` W/sr (``pi * I`` without
attenuation; the path tracer always applies the physical ``1 / d^2`` fall-off); a
directional light of ``color`` I has irradiance ``pi * I``.

Cube maps are importance sampled texel by texel: each texel's weight is its mean colour
(the largest in its 3 x 3 neighbourhood, because lookups are bilinear) times its solid
angle, plus a floor of 1e-3 of the average so that no direction has zero density.
"""
import math

import numpy as np

from ..layout import (ENV_CONSTANT, ENV_CUBE, ENV_NONE, LIGHT_DIRECTIONAL, LIGHT_ENV, LIGHT_POINT,
                      LIGHT_SPHERE, LIGHT_TRIANGLE, Lights)


def scene_bounds(geo):
    """Centre and radius of the bounding sphere of the world-space shapes and instances."""
    T, S = geo.world_tris, geo.world_spheres
    pts = [geo.tri_v0[:T], geo.tri_v1[:T], geo.tri_v2[:T], geo.sph_lo[:S], geo.sph_hi[:S],
           geo.inst_lo, geo.inst_hi]
    pts = [p for p in pts if len(p)]
    if not pts:
        return np.zeros(3), 1.0
    allp = np.concatenate(pts)
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    return 0.5 * (lo + hi), max(0.5 * float(np.linalg.norm(hi - lo)), 1e-3)


def _ellipsoid_area(lin):
    """Surface area of lin * unit sphere (Knud Thomsen's approximation, within ~1%)."""
    a, b, c = np.linalg.svd(lin, compute_uv=False)
    p = 1.6075
    return 4.0 * math.pi * (((a * b) ** p + (a * c) ** p + (b * c) ** p) / 3.0) ** (1.0 / p)


def texel_solid_angles(s):
    """(S, S) solid angle of each texel of an S x S cube face (at its centre; they sum
    to about 4 pi / 6)."""
    c = (np.arange(s) + 0.5) / s * 2.0 - 1.0
    a, b = np.meshgrid(c, c)
    return (2.0 / s) ** 2 / (1.0 + a * a + b * b) ** 1.5


def cube_texel_weights(cube):
    """(6, S, S) non-negative sampling weights of the cube map's texels (see module docs)."""
    s = cube.shape[1]
    lum = cube.astype(np.float64).mean(axis=3)
    pad = np.pad(lum, ((0, 0), (1, 1), (1, 1)), mode="edge")
    dil = np.zeros_like(lum)
    for dy in range(3):
        for dx in range(3):
            dil = np.maximum(dil, pad[:, dy:dy + s, dx:dx + s])
    w = dil * texel_solid_angles(s)[None]
    total = w.sum()
    floor = 1e-3 * (total / w.size if total > 0 else 1.0)
    return w + floor


def guide_table(cdf, buckets=None):
    """Guide table of ``cdf`` for ``kernels.emitters.guided_entry``: for each of
    ``buckets`` (default: one per entry) k, the entry ``select_entry`` picks for the
    smallest double u with ``int(u * buckets) == k``. The scan from there only moves
    forward, so it must not start past the answer for any u of the bucket: hence the
    smallest u as the kernel computes k, not k / buckets, which can round above it."""
    n = cdf.shape[0] - 1
    buckets = n if buckets is None else buckets
    k = np.arange(buckets, dtype=np.float64)
    u = k / buckets
    for _ in range(4):          # one ulp either way at most; a few rounds to be sure
        below = np.nextafter(u, -np.inf)
        u = np.where((k > 0) & (np.floor(below * buckets) >= k), below, u)
        u = np.where(np.floor(u * buckets) < k, np.nextafter(u, np.inf), u)
    return np.clip(np.searchsorted(cdf, u, side="right") - 1, 0, max(n - 1, 0)).astype(np.int64)


def build_lights(data, geo, cube=None):
    """Light arrays of a loaded scene: ``data`` its validated dict, ``geo`` its
    :class:`~raytrace.layout.Geometry`, ``cube`` the (6, S, S, 3) cube map or None."""
    center, radius = scene_bounds(geo)
    kinds, index, power = [], [], []
    tri_entry = np.full(len(geo.tri_mat), -1, np.int64)
    sph_entry = np.full(len(geo.sph_mat), -1, np.int64)
    emissive = np.nonzero(geo.tri_emit >= 0)[0]
    if len(emissive):
        e1 = geo.tri_v1[emissive] - geo.tri_v0[emissive]
        e2 = geo.tri_v2[emissive] - geo.tri_v0[emissive]
        area = 0.5 * np.linalg.norm(np.cross(e1, e2), axis=1)
        rad = geo.emission[geo.tri_emit[emissive]].mean(axis=1)
        tri_entry[emissive] = np.arange(len(emissive))
        kinds += [LIGHT_TRIANGLE] * len(emissive)
        index += emissive.tolist()
        power += (math.pi * area * rad).tolist()
    for s in np.nonzero(geo.sph_emit >= 0)[0]:
        sph_entry[s] = len(kinds)
        kinds.append(LIGHT_SPHERE)
        index.append(int(s))
        power.append(math.pi * _ellipsoid_area(geo.sph_o2w[s, :, :3]) * geo.emission[geo.sph_emit[s]].mean())
    delta_pos, delta_val = [], []
    for light in data.get("lights", []):
        color = np.asarray(light.get("color", [1.0, 1.0, 1.0]), np.float64)
        if light["type"] == "point":
            val = math.pi * color / light.get("attenuation", 1.0)
            delta_pos.append(np.asarray(light["position"], np.float64))
            kinds.append(LIGHT_POINT)
            power.append(4.0 * math.pi * val.mean())
        else:
            d = np.asarray(light["direction"], np.float64)
            val = math.pi * color
            delta_pos.append(d / np.linalg.norm(d))
            kinds.append(LIGHT_DIRECTIONAL)
            power.append(math.pi * radius * radius * val.mean())
        delta_val.append(val)
        index.append(len(delta_pos) - 1)
    bg = data.get("background", {})
    env_const = np.asarray(bg.get("color", [0.0, 0.0, 0.0]), np.float64)
    env_kind, env_entry, size = ENV_NONE, -1, 0
    env_pmf = np.ones(1)
    if cube is not None:
        env_kind, size = ENV_CUBE, cube.shape[1]
        w = cube_texel_weights(cube).ravel()
        env_pmf = w / w.sum()
        mean_l = float((cube.astype(np.float64).mean(axis=3) * texel_solid_angles(size)[None]).sum()
                       / (4 * math.pi))
    elif env_const.max() > 0.0:
        env_kind = ENV_CONSTANT
        mean_l = float(env_const.mean())
    if env_kind != ENV_NONE:
        env_entry = len(kinds)
        kinds.append(LIGHT_ENV)
        index.append(0)
        power.append(4.0 * math.pi ** 2 * radius * radius * mean_l)
    power = np.asarray(power, np.float64)
    power = np.where(np.isfinite(power) & (power > 0), power, 0.0)
    total = power.sum()
    pmf = power / total if total > 0 else np.zeros_like(power)
    cdf = np.concatenate([[0.0], np.cumsum(pmf)])
    if total > 0:
        cdf /= cdf[-1]
        cdf[-1] = 1.0
    env_cdf = np.concatenate([[0.0], np.cumsum(env_pmf)])
    env_cdf /= env_cdf[-1]
    env_cdf[-1] = 1.0
    return Lights(
        kind=np.asarray(kinds, np.int64), index=np.asarray(index, np.int64),
        pmf=np.ascontiguousarray(pmf), cdf=np.ascontiguousarray(cdf),
        tri_entry=tri_entry, sph_entry=sph_entry,
        delta_pos=np.ascontiguousarray(np.array(delta_pos, np.float64).reshape(-1, 3)),
        delta_val=np.ascontiguousarray(np.array(delta_val, np.float64).reshape(-1, 3)),
        env_const=np.ascontiguousarray(env_const),
        env_pmf=np.ascontiguousarray(env_pmf), env_cdf=np.ascontiguousarray(env_cdf),
        env_guide=guide_table(env_cdf),
        env_kind=int(env_kind), env_entry=int(env_entry), cube_size=int(size),
    )
