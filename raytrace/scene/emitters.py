"""The path tracer's light sources as flat arrays (built once per scene).

Every emitter is one entry of a discrete distribution chosen in proportion to its
power (next-event estimation picks one entry per shading point):

- each triangle of an emissive shape: ``pi * area * mean(radiance)`` (one-sided);
- each emissive sphere: ``pi * area * mean(radiance)`` (it emits outward);
- point lights: ``4 pi * mean(intensity)``; spot lights ``2 pi (1 - cos(outer angle)) *
  mean(intensity)`` (their cone's solid angle); directional lights: ``pi R^2 * mean(E)``,
  with R the radius of the scene's bounding sphere;
- the environment (constant colour, cube map or lat-long map): ``4 pi^2 R^2 * mean(L)``
  (the power crossing the scene's bounding sphere; pbrt's estimate).

Units (the course's, see ``docs/mitsuba-mapping.md``): a point light of ``color`` I and
``attenuation`` a has radiant intensity ``pi * I / a`` W/sr (``pi * I`` without
attenuation; the path tracer always applies the physical ``1 / d^2`` fall-off); a
directional light of ``color`` I has irradiance ``pi * I``.

The environment (:class:`~raytrace.layout.Environment`, :func:`build_environment`) is
one record for either map. Cube maps are importance sampled texel by texel: each
texel's weight is its mean colour (the largest in its 3 x 3 neighbourhood, because
lookups are bilinear) times its solid angle, plus a floor of 1e-3 of the average so that
no direction has zero density. Lat-long maps cell by cell (the patch between four texel
centres, where the bilinear lookup blends those four texels): weight = the mean of its
four texels' mean colours (the integral of the bilinear blend over the cell, per unit of
(u, v)) times the cell's solid angle, plus the same floor; within a cell directions are
uniform in solid angle, so the density is the cell's probability over its solid angle.
"""
import math
import pathlib

import numpy as np

from ..errors import SceneError
from ..layout import (CONE_NONE, CONE_WIDTH, ENV_CONSTANT, ENV_CUBE, ENV_LATLONG, ENV_NONE,
                      LIGHT_DIRECTIONAL, LIGHT_ENV, LIGHT_POINT, LIGHT_SPHERE, LIGHT_TRIANGLE,
                      Environment, Lights)
from .lights import spot_cone
from .transforms import compose, to_numpy


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
    out = np.empty(buckets, np.int64)
    for k0 in range(0, buckets, _BAND):     # a band at a time: the temporaries stay small
        k = np.arange(k0, min(k0 + _BAND, buckets), dtype=np.float64)
        u = k / buckets
        for _ in range(4):          # one ulp either way at most; a few rounds to be sure
            below = np.nextafter(u, -np.inf)
            u = np.where((k > 0) & (np.floor(below * buckets) >= k), below, u)
            u = np.where(np.floor(u * buckets) < k, np.nextafter(u, np.inf), u)
        out[k0:k0 + len(k)] = np.clip(np.searchsorted(cdf, u, side="right") - 1, 0, max(n - 1, 0))
    return out


_BAND = 1 << 20      # entries (texels, cells) processed at a time by the table builders


def latlong_cell_power(img):
    """(H - 1, W): the integral over each cell of an (H, W, 3) lat-long map of its mean
    colour, in solid angle: the mean of the cell's four texels times its solid angle."""
    h, w = img.shape[:2]
    out = np.empty((h - 1, w))
    for r, power in _cell_power_bands(img):
        out[r:r + len(power)] = power
    return out


def latlong_total_power(img):
    """The sum of :func:`latlong_cell_power` without its (H - 1, W) array (band by band)."""
    return float(sum(power.sum() for _, power in _cell_power_bands(img)))


def _cell_power_bands(img):
    """(first row, (rows, W) cell power) of :func:`latlong_cell_power`, a band of rows at
    a time: no float64 copy of the map."""
    from ..envmap import cell_solid_angles
    h, w = img.shape[:2]
    solid = cell_solid_angles(h, w)
    band = max(1, _BAND // w)
    for r in range(0, h - 1, band):
        lum = img[r:r + band + 1].astype(np.float64).mean(axis=2)
        right = np.roll(lum, -1, axis=1)                # column i + 1, wrapping
        mean4 = 0.25 * (lum[:-1] + right[:-1] + lum[1:] + right[1:])
        yield r, mean4 * solid[r:r + band, None]


def latlong_cell_weights(img):
    """(H - 1, W) non-negative sampling weights of the cells of an (H, W, 3) lat-long map
    (see the module docs), the floor included."""
    return _latlong_weights(img)[0]


def _latlong_weights(img):
    """(:func:`latlong_cell_weights`, the sum of :func:`latlong_cell_power`)."""
    w = latlong_cell_power(img)
    total = w.sum()
    floor = 1e-3 * (total / w.size if total > 0 else 1.0)
    w += floor
    return w, total


def _tables(weights):
    """pmf, cdf (normalised, cdf[-1] = 1) and guide table of non-negative weights (the pmf
    is computed in place: a float64 ``weights`` array given becomes it)."""
    pmf = np.ascontiguousarray(weights, np.float64).ravel()
    pmf /= pmf.sum()
    cdf = np.empty(len(pmf) + 1)
    cdf[0] = 0.0
    np.cumsum(pmf, out=cdf[1:])
    cdf /= cdf[-1]
    cdf[-1] = 1.0
    return pmf, cdf, guide_table(cdf)


def environment_rotation(steps, where="background.transform"):
    """The (3, 3) rotation of an environment's ``transform`` steps (map -> world, as
    Mitsuba's ``to_world``); anything but a rotation is refused."""
    m = to_numpy(compose(steps, where.rsplit(".", 1)[0]))
    r = m[:3, :3]
    if (np.abs(r.T @ r - np.eye(3)).max() > 1e-9 or np.linalg.det(r) < 0
            or np.abs(m[:3, 3]).max() > 0 or np.abs(m[3] - [0, 0, 0, 1]).max() > 0):
        raise SceneError(where, "must be a rotation (an environment has no position, size or mirror "
                                "image: use rotate_x, rotate_y, rotate_z, rotate or a rotation matrix)")
    return r


def build_environment(background, base_dir):
    """The scene's :class:`~raytrace.layout.Environment` from its ``background`` dict
    (validated): ``color``, ``ambient``, a ``cube_map`` folder or an ``envmap`` image
    (relative to ``base_dir``) with its ``scale`` and ``transform``."""
    from ..cubemap import load_cube_map
    from ..envmap import MAX_TEXELS, MIN_HEIGHT, MIN_WIDTH, cell_solid_angles, read_environment_image

    color = np.asarray(background.get("color", [0.0, 0.0, 0.0]), np.float64)
    ambient = np.asarray(background.get("ambient", [0.0, 0.0, 0.0]), np.float64)
    to_map = np.ascontiguousarray(environment_rotation(background.get("transform")).T)
    one = np.ones(1)
    if "cube_map" in background:
        texels = load_cube_map(pathlib.Path(base_dir) / background["cube_map"])
        kind = ENV_CUBE
    elif "envmap" in background:
        img = read_environment_image(pathlib.Path(base_dir) / background["envmap"], "background.envmap",
                                     limit=MAX_TEXELS)
        if img.shape[1] < MIN_WIDTH or img.shape[0] < MIN_HEIGHT:
            raise SceneError("background.envmap", f"environment map {background['envmap']} is "
                             f"{img.shape[1]} x {img.shape[0]} texels; it needs at least "
                             f"{MIN_WIDTH} x {MIN_HEIGHT}")
        texels, kind = img[None], ENV_LATLONG
    else:
        kind = ENV_CONSTANT if color.max() > 0.0 else ENV_NONE
        return Environment(kind, color, ambient, np.zeros((1, 1, 1, 3), np.float32), to_map, one,
                           np.array([0.0, 1.0]), np.zeros(1, np.int64), one)
    scale = float(background.get("scale", 1.0))
    if scale != 1.0:
        np.multiply(texels, np.float32(scale), out=texels)      # the map just read: scaled in place
        if not np.isfinite(texels).all():
            raise SceneError("background.scale", f"{scale:g} times the map's largest value "
                             f"({float(texels.max() / scale):g}) overflows float32")
    texels = np.ascontiguousarray(texels, np.float32)
    if kind == ENV_CUBE:
        pmf, cdf, guide = _tables(cube_texel_weights(texels))
        density = one
    else:
        h, w = texels.shape[1:3]
        weights, _ = _latlong_weights(texels[0])
        pmf, cdf, guide = _tables(weights)          # pmf is weights, normalised in place
        del weights
        density = np.ascontiguousarray((pmf.reshape(h - 1, w) / cell_solid_angles(h, w)[:, None]).ravel())
    return Environment(kind, color, ambient, texels, to_map, pmf, cdf, guide, density)


def environment_mean(env):
    """The mean radiance (over channels and the sphere of directions) of an environment."""
    if env.kind == ENV_CONSTANT:
        return float(env.color.mean())
    if env.kind == ENV_CUBE:
        size = env.texels.shape[1]
        return float((env.texels.astype(np.float64).mean(axis=3) * texel_solid_angles(size)[None]).sum()
                     / (4 * math.pi))
    if env.kind == ENV_LATLONG:
        return latlong_total_power(env.texels[0]) / (4 * math.pi)
    return 0.0


def build_lights(data, geo, env=None, env_mean=None):
    """Light arrays of a loaded scene: ``data`` its validated dict, ``geo`` its
    :class:`~raytrace.layout.Geometry`, ``env`` its :class:`~raytrace.layout.Environment`
    (:func:`build_environment`; None: the background colour only, no map); ``env_mean``:
    :func:`environment_mean` of ``env`` when the caller has it (a map's sum takes a pass
    over its texels: the scenes of an animation share one environment)."""
    if env is None:
        bg = {k: v for k, v in data.get("background", {}).items() if k in ("color", "ambient")}
        env = build_environment(bg, ".")
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
    delta_pos, delta_val, delta_axis, delta_cone = [], [], [], []
    for i, light in enumerate(data.get("lights", [])):
        color = np.asarray(light.get("color", [1.0, 1.0, 1.0]), np.float64)
        axis, cone = spot_cone(light, f"lights[{i}]")
        if light["type"] in ("point", "spot"):
            val = math.pi * color / light.get("attenuation", 1.0)
            delta_pos.append(np.asarray(light["position"], np.float64))
            kinds.append(LIGHT_POINT)
            solid_angle = 4.0 * math.pi if cone[0] == CONE_NONE else 2.0 * math.pi * (1.0 - cone[1])
            power.append(solid_angle * val.mean())
        else:
            d = np.asarray(light["direction"], np.float64)
            val = math.pi * color
            delta_pos.append(d / np.linalg.norm(d))
            kinds.append(LIGHT_DIRECTIONAL)
            power.append(math.pi * radius * radius * val.mean())
        delta_val.append(val)
        delta_axis.append(axis)
        delta_cone.append(cone)
        index.append(len(delta_pos) - 1)
    env_entry = -1
    if env.kind != ENV_NONE:
        env_entry = len(kinds)
        kinds.append(LIGHT_ENV)
        index.append(0)
        mean = environment_mean(env) if env_mean is None else env_mean
        power.append(4.0 * math.pi ** 2 * radius * radius * mean)
    power = np.asarray(power, np.float64)
    power = np.where(np.isfinite(power) & (power > 0), power, 0.0)
    total = power.sum()
    pmf = power / total if total > 0 else np.zeros_like(power)
    cdf = np.concatenate([[0.0], np.cumsum(pmf)])
    if total > 0:
        cdf /= cdf[-1]
        cdf[-1] = 1.0

    def rows(values, width):
        return np.ascontiguousarray(np.array(values, np.float64).reshape(-1, width))

    return Lights(
        kind=np.asarray(kinds, np.int64), index=np.asarray(index, np.int64),
        pmf=np.ascontiguousarray(pmf), cdf=np.ascontiguousarray(cdf),
        tri_entry=tri_entry, sph_entry=sph_entry,
        delta_pos=rows(delta_pos, 3), delta_val=rows(delta_val, 3),
        delta_axis=rows(delta_axis, 3), delta_cone=rows(delta_cone, CONE_WIDTH),
        env_entry=int(env_entry),
    )
