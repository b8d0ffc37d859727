"""Arbitrary output variables (AOVs): what a denoiser, a compositor or a debugging user
needs besides the colour. Numba, scalar, no allocation.

:func:`render_aov_pass` adds one sample per pixel to an AOV buffer (layout in
``raytrace.layout``: albedo, shading normal, depth, world position, UV and a hit
count), with the camera samples of the integrator that made the colour (same pixel
positions, same lens points), so the AOVs carry the same pixel filter.

- depth, position, UV: at the camera ray's first hit (depth along the unit ray);
- albedo and normal: at the first non-specular hit, following mirrors and glass (the
  refracted ray, the mirror one under total internal reflection) up to
  ``MAX_SPECULAR`` times, as denoisers expect; a ray that escapes gives the clamped
  background colour and a zero normal. Normals face the ray. The albedo is the
  material's total reflectance, clamped to 1: the (textured) base colour, plus the
  mirror colour ``reflect`` for a course (Phong) material with a diffuse part.

:func:`render_ids` gives the object and material ids through the pixel centres.
"""
import math

import numpy as np
from raytrace.jit import helper, row_kernel, kernel
from numba import prange

from ..layout import (AOV_ALBEDO, AOV_DEPTH, AOV_HITS, AOV_NORMAL, AOV_POSITION, AOV_UV, M_COLOR, M_DIFFUSE,
                      M_IOR, M_REFLECT, M_TRANSMIT, M_TYPE, MAT_CONDUCTOR, MAT_DIELECTRIC, MAT_PHONG, MISS,
                      PLANE, SPHERE, WHITTED_SAMPLING)
from . import path as pk
from .sampler import path_sampler
from . import whitted as wk
from .borrow import borrow
from .camera_rays import centre_ray
from .emitters import env_radiance
from .intersect import scene_hit
from .surface import base_color, hit_normals, hit_uv
from .threads import next_row, run_rows

INF = math.inf
MAX_SPECULAR = 8


@helper
def is_specular(mats, m):
    """True for a material with only delta lobes (a mirror, glass, a Phong material with
    no diffuse part): AOVs look through it."""
    kind = int(mats[m, M_TYPE])
    if kind == MAT_CONDUCTOR or kind == MAT_DIELECTRIC:
        return True
    if kind == MAT_PHONG:
        return mats[m, M_DIFFUSE] + mats[m, M_DIFFUSE + 1] + mats[m, M_DIFFUSE + 2] <= 0.0 and \
            mats[m, M_REFLECT] + mats[m, M_REFLECT + 1] + mats[m, M_REFLECT + 2] + \
            mats[m, M_TRANSMIT] + mats[m, M_TRANSMIT + 1] + mats[m, M_TRANSMIT + 2] > 0.0
    return False


@helper
def transmits(mats, m):
    """True for a specular material that refracts (glass, a Phong material with
    ``transmit``)."""
    return int(mats[m, M_TYPE]) == MAT_DIELECTRIC or \
        mats[m, M_TRANSMIT] + mats[m, M_TRANSMIT + 1] + mats[m, M_TRANSMIT + 2] > 0.0


@helper
def first_diffuse(bvh, geo, env, hit, ox, oy, oz, dx, dy, dz, eps):
    """(albedo (3), normal facing the ray (3)) at the first non-specular surface along
    the ray whose first hit is ``hit``."""
    mats = geo.materials
    for _ in range(MAX_SPECULAR + 1):
        if hit.kind == MISS:
            r, g, b = env_radiance(env, dx, dy, dz)
            return (min(r, 1.0), min(g, 1.0), min(b, 1.0)), (0.0, 0.0, 0.0)
        px, py, pz = ox + hit.t * dx, oy + hit.t * dy, oz + hit.t * dz
        (_, _, _), (nx, ny, nz), m, _ = hit_normals(geo, hit, px, py, pz)
        entering = nx * dx + ny * dy + nz * dz <= 0.0
        if not entering:
            nx, ny, nz = -nx, -ny, -nz
        if not is_specular(mats, m):
            r, g, b = base_color(geo, m, M_COLOR, hit, px, py, pz)
            if int(mats[m, M_TYPE]) == MAT_PHONG:          # the total: diffuse + mirror
                r, g, b = r + mats[m, M_REFLECT], g + mats[m, M_REFLECT + 1], b + mats[m, M_REFLECT + 2]
            return (min(r, 1.0), min(g, 1.0), min(b, 1.0)), (nx, ny, nz)
        cos_i = -(nx * dx + ny * dy + nz * dz)
        refract = transmits(mats, m)
        sin2_t = 1.0
        if refract:
            eta = 1.0 / mats[m, M_IOR] if entering else mats[m, M_IOR]     # n_i / n_t
            sin2_t = eta * eta * (1.0 - cos_i * cos_i)
        if refract and sin2_t < 1.0:             # refract
            k = eta * cos_i - math.sqrt(1.0 - sin2_t)
            dx, dy, dz = eta * dx + k * nx, eta * dy + k * ny, eta * dz + k * nz
            ox, oy, oz = px - eps * nx, py - eps * ny, pz - eps * nz
        else:                                     # mirror
            dx, dy, dz = dx + 2.0 * cos_i * nx, dy + 2.0 * cos_i * ny, dz + 2.0 * cos_i * nz
            ox, oy, oz = px + eps * nx, py + eps * ny, pz + eps * nz
        inv = 1.0 / math.sqrt(dx * dx + dy * dy + dz * dz)
        dx, dy, dz = dx * inv, dy * inv, dz * inv
        hit = scene_hit(bvh, geo, ox, oy, oz, dx, dy, dz, 0.0, INF)
    return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)


@row_kernel
def aov_rows(rows, queue, buf, sample, bvh, geo, env, cam, settings, filter_table, sampling):
    """Add sample ``sample`` of every pixel of the rows this thread takes from ``queue`` to
    the AOV buffer (a row kernel of :mod:`raytrace.kernels.threads`)."""
    bvh, geo, env = borrow(bvh), borrow(geo), borrow(env)
    i = next_row(rows, queue)
    while i >= 0:
        for j in range(buf.shape[1]):
            if sampling == WHITTED_SAMPLING:
                (ox, oy, oz), (dx, dy, dz) = wk.camera_sample(cam, settings, filter_table, i, j, sample)
                inv = 1.0 / math.sqrt(dx * dx + dy * dy + dz * dz)
                dx, dy, dz = dx * inv, dy * inv, dz * inv
            else:
                (ox, oy, oz), (dx, dy, dz), _ = pk.camera_sample(cam, settings, filter_table, i, j,
                                                                 path_sampler(settings, i * settings.width + j, sample))
            hit = scene_hit(bvh, geo, ox, oy, oz, dx, dy, dz, 0.0, INF)
            if hit.kind != MISS:
                px, py, pz = ox + hit.t * dx, oy + hit.t * dy, oz + hit.t * dz
                tu, tv = hit_uv(geo, hit, px, py, pz)
                buf[i, j, AOV_DEPTH] += hit.t
                buf[i, j, AOV_POSITION] += px
                buf[i, j, AOV_POSITION + 1] += py
                buf[i, j, AOV_POSITION + 2] += pz
                buf[i, j, AOV_UV] += tu
                buf[i, j, AOV_UV + 1] += tv
                buf[i, j, AOV_HITS] += 1.0
            (ar, ag, ab), (nx, ny, nz) = first_diffuse(bvh, geo, env, hit, ox, oy, oz, dx, dy, dz, settings.epsilon)
            buf[i, j, AOV_ALBEDO] += ar
            buf[i, j, AOV_ALBEDO + 1] += ag
            buf[i, j, AOV_ALBEDO + 2] += ab
            buf[i, j, AOV_NORMAL] += nx
            buf[i, j, AOV_NORMAL + 1] += ny
            buf[i, j, AOV_NORMAL + 2] += nz
        i = next_row(rows, queue)


def render_aov_pass(buf, sample, bvh, geo, env, cam, settings, filter_table, sampling):
    """Add sample number ``sample`` of every pixel to ``buf`` ((H, W, AOV_WIDTH) float64)
    with the camera samples of ``sampling`` (PATH_SAMPLING or WHITTED_SAMPLING), on
    ``numba.get_num_threads()`` threads."""
    run_rows(aov_rows, np.arange(buf.shape[0], dtype=np.int64), buf, sample, bvh, geo, env, cam,
             settings, filter_table, sampling)


@helper
def object_id(geo, hit):
    """The object id of a hit (-1 for a miss); an instance's for hits inside one."""
    if hit.kind == MISS:
        return -1
    if hit.instance >= 0:
        return geo.inst_obj[hit.instance]
    if hit.kind == SPHERE:
        return geo.sph_obj[hit.index]
    if hit.kind == PLANE:
        return geo.pl_obj[hit.index]
    return geo.tri_obj[hit.index]


@kernel(parallel=True)
def render_ids(obj_out, mat_out, bvh, geo, cam):
    """Object and material ids through each pixel centre (-1 where the ray escapes)."""
    height, width = obj_out.shape
    for i in prange(height):
        for j in range(width):
            (ox, oy, oz), (dx, dy, dz) = centre_ray(cam, width, height, i, j)
            hit = scene_hit(bvh, geo, ox, oy, oz, dx, dy, dz, 0.0, INF)
            obj_out[i, j] = object_id(geo, hit)
            mat = -1
            if hit.kind != MISS:
                (_, _, _), (_, _, _), mat, _ = hit_normals(geo, hit, ox + hit.t * dx, oy + hit.t * dy, oz + hit.t * dz)
            mat_out[i, j] = mat
