"""The Whitted integrator: Phong direct light with shadow rays, mirror reflection and
Fresnel refraction, as an explicit-stack loop (no recursion).

:func:`trace_ray` pops rays off a stack; each hit is shaded by :func:`direct_phong`
(the course's model, per light :func:`phong`) and pushes its mirror and refracted rays
(:func:`push_secondary`) with their weights.

All radiance is linear RGB. Per light: ``L = color / (attenuation * d^2)`` (point),
the same times the cone's falloff (spot: ``kernels.emitters.cone_falloff``, zero outside
the cone) or ``color`` (directional); diffuse ``max(N.L, 0) * L * k_d``; specular
``max(L.R, 0)^s * L * k_s`` with ``R`` the mirror of the eye ray; lights behind the
surface (N.L <= 0) add nothing. Ambient adds ``I_amb * k_d``. A textured ``diffuse``
replaces ``k_d`` by the texture's value at the hit. Emissive shapes add their emission
where they are seen from the front (they do not light other surfaces here).
"""
import math

import numpy as np
from raytrace.jit import helper, unit, row_kernel

from ..layout import (LIGHT_POINT, M_DIFFUSE, M_IOR, M_REFLECT, M_SHININESS, M_SPECULAR,
                      M_TRANSMIT, M_TYPE, MAT_DIFFUSE, MISS, TRIANGLE)
from .borrow import borrow
from .camera_rays import camera_ray, centre_ray, lens_ray
from .emitters import cone_falloff, env_radiance
from .intersect import scene_hit, scene_occluded
from .media import beer_lambert, camera_medium, is_null, medium_beyond
from .rng import grid_cell, rand01
from .sampling import warp
from .shadowmap import shadow_map_visibility
from .surface import base_color, hit_normals
from .threads import next_row, run_rows

INF = math.inf
MIN_WEIGHT = 1e-5       # rays whose weight falls below this are not traced

# the ray stack: one row per pending ray (ST_MEDIUM: the medium it travels in, -1 none)
ST_ORIGIN, ST_DIR, ST_WEIGHT, ST_DEPTH, ST_MEDIUM = 0, 3, 6, 9, 10
STACK_WIDTH = 11
NULL_STEP = 1.0 / 1024.0   # depth a ray gains crossing a null surface (a boundary of media only)


@helper
def stack_rows(bounces):
    """Rows the ray stack needs for ``bounces`` (each hit pushes at most two rays)."""
    return 2 * bounces + 4


@helper
def push_ray(stack, sp, ox, oy, oz, dx, dy, dz, wr, wg, wb, depth, medium):
    """Push a ray with its weight (r, g, b), depth and medium; returns the new stack size."""
    stack[sp, ST_ORIGIN], stack[sp, ST_ORIGIN + 1], stack[sp, ST_ORIGIN + 2] = ox, oy, oz
    stack[sp, ST_DIR], stack[sp, ST_DIR + 1], stack[sp, ST_DIR + 2] = dx, dy, dz
    stack[sp, ST_WEIGHT], stack[sp, ST_WEIGHT + 1], stack[sp, ST_WEIGHT + 2] = wr, wg, wb
    stack[sp, ST_DEPTH] = depth
    stack[sp, ST_MEDIUM] = medium
    return sp + 1


@helper
def background(env, dx, dy, dz):
    """Radiance (r, g, b) of a ray that escapes: the environment map (cube or lat-long),
    else the background colour."""
    return env_radiance(env, dx, dy, dz)


@helper
def phong(intensity, n_dot_l, l_dot_r, shininess, kd, ks):
    """The course's Phong term for one light and one channel:
    ``I (max(N.L, 0) k_d + max(L.R, 0)^s k_s)``, with ``N.L > 0`` already checked."""
    spec = l_dot_r ** shininess if l_dot_r > 0.0 else 0.0
    return intensity * (n_dot_l * kd + spec * ks)


@helper
def light_direction(lights, li, px, py, pz):
    """-> (ok, unit direction p -> light (3), distance, fall-off factor) of light ``li``:
    ``1 / (attenuation d^2)`` for a point light (1 without attenuation), times the cone's
    falloff for a spot (not ok outside its cone), 1 for a directional one (at infinity)."""
    if lights.kind[li] == LIGHT_POINT:
        lx = lights.pos_dir[li, 0] - px
        ly = lights.pos_dir[li, 1] - py
        lz = lights.pos_dir[li, 2] - pz
        dist = math.sqrt(lx * lx + ly * ly + lz * lz)
        if dist == 0.0:
            return False, (0.0, 0.0, 0.0), 0.0, 0.0
        lx, ly, lz = lx / dist, ly / dist, lz / dist
        ax = lights.axis
        cone = cone_falloff(lights.cone, li, -(ax[li, 0] * lx + ax[li, 1] * ly + ax[li, 2] * lz))
        if not cone > 0.0:
            return False, (0.0, 0.0, 0.0), 0.0, 0.0
        att = lights.attenuation[li]
        fall = cone / (att * dist * dist) if att > 0.0 else cone
        return True, (lx, ly, lz), dist, fall
    return True, (-lights.pos_dir[li, 0], -lights.pos_dir[li, 1], -lights.pos_dir[li, 2]), INF, 1.0


@unit
def direct_phong(bvh, geo, lights, env, m, kd0, kd1, kd2, px, py, pz, nx, ny, nz, rx, ry, rz,
                 shadows, eps):
    """Ambient plus every light's Phong term at p (normal n on the viewer's side, r the
    mirror of the eye ray), when ``shadows`` with a shadow ray per light, or the
    light's shadow map when it has one."""
    mats = geo.materials
    ks0, ks1, ks2 = mats[m, M_SPECULAR], mats[m, M_SPECULAR + 1], mats[m, M_SPECULAR + 2]
    shin = mats[m, M_SHININESS]
    lr, lg, lb = env.ambient[0] * kd0, env.ambient[1] * kd1, env.ambient[2] * kd2
    sx, sy, sz = px + eps * nx, py + eps * ny, pz + eps * nz
    for li in range(lights.kind.shape[0]):
        ok, (lx, ly, lz), dist, fall = light_direction(lights, li, px, py, pz)
        if not ok:
            continue
        ndotl = nx * lx + ny * ly + nz * lz
        if ndotl <= 0.0:
            continue
        if shadows:
            if lights.shadow_map[li] >= 0:           # the course's shadow map
                fall *= shadow_map_visibility(lights, li, px, py, pz)
                if fall <= 0.0:
                    continue
            elif scene_occluded(bvh, geo, sx, sy, sz, lx, ly, lz, 0.0, dist - eps):
                continue
        ldotr = lx * rx + ly * ry + lz * rz
        col = lights.color
        lr += phong(fall * col[li, 0], ndotl, ldotr, shin, kd0, ks0)
        lg += phong(fall * col[li, 1], ndotl, ldotr, shin, kd1, ks1)
        lb += phong(fall * col[li, 2], ndotl, ldotr, shin, kd2, ks2)
    return lr, lg, lb


@helper
def push_secondary(stack, sp, mats, m, entering, cos_i, px, py, pz, nx, ny, nz, dx, dy, dz,
                   rx, ry, rz, wr, wg, wb, depth, eps, media):
    """Push the refracted ray (material with ``transmit``; Schlick's Fresnel, none under
    total internal reflection) and the mirror ray weighted by ``reflect`` times the
    Fresnel share. ``media`` = (the medium the ray came through, the one beyond the
    surface): the mirror ray stays in the first, the refracted ray goes into the second.
    Returns the new stack size."""
    here, beyond = media
    fr = 1.0                                   # share of the mirror ray
    if mats[m, M_TRANSMIT] > 0.0 or mats[m, M_TRANSMIT + 1] > 0.0 or mats[m, M_TRANSMIT + 2] > 0.0:
        ior = mats[m, M_IOR]
        n1, n2 = (1.0, ior) if entering else (ior, 1.0)
        eta = n1 / n2
        sin2_t = eta * eta * (1.0 - cos_i * cos_i)
        if sin2_t < 1.0:                       # else total internal reflection
            cos_t = math.sqrt(1.0 - sin2_t)
            r0 = ((n1 - n2) / (n1 + n2)) ** 2
            c = cos_i if n1 <= n2 else cos_t
            fr = r0 + (1.0 - r0) * (1.0 - c) ** 5
            ft = 1.0 - fr
            tw0, tw1, tw2 = wr * ft * mats[m, M_TRANSMIT], wg * ft * mats[m, M_TRANSMIT + 1], \
                wb * ft * mats[m, M_TRANSMIT + 2]
            if max(tw0, max(tw1, tw2)) > MIN_WEIGHT:
                k = eta * cos_i - cos_t
                sp = push_ray(stack, sp, px - eps * nx, py - eps * ny, pz - eps * nz,
                              eta * dx + k * nx, eta * dy + k * ny, eta * dz + k * nz,
                              tw0, tw1, tw2, depth + 1.0, beyond)
    mw0, mw1, mw2 = wr * fr * mats[m, M_REFLECT], wg * fr * mats[m, M_REFLECT + 1], \
        wb * fr * mats[m, M_REFLECT + 2]
    if max(mw0, max(mw1, mw2)) > MIN_WEIGHT:
        sp = push_ray(stack, sp, px + eps * nx, py + eps * ny, pz + eps * nz, rx, ry, rz,
                      mw0, mw1, mw2, depth + 1.0, here)
    return sp


@helper
def trace_ray(bvh, geo, lights, env, media, ox, oy, oz, dx, dy, dz, bounces, shadows, eps, stack):
    """Radiance (r, g, b) along one camera ray. ``stack``: scratch (stack_rows(bounces),
    STACK_WIDTH). ``media``: the scene's :class:`~raytrace.layout.Media` or None; in a
    medium a ray's weight takes the segment's Beer-Lambert transmittance ``exp(-integral
    of sigma_t)`` (absorption and out-scattering; no in-scattering, and shadow rays are not
    attenuated: ``docs/media.md``), a ``null`` surface is crossed into the medium beyond."""
    mats = geo.materials
    out_r = out_g = out_b = 0.0
    sp = push_ray(stack, 0, ox, oy, oz, dx, dy, dz, 1.0, 1.0, 1.0, 0.0, camera_medium(media))
    while sp > 0:
        sp -= 1
        ox, oy, oz = stack[sp, ST_ORIGIN], stack[sp, ST_ORIGIN + 1], stack[sp, ST_ORIGIN + 2]
        dx, dy, dz = stack[sp, ST_DIR], stack[sp, ST_DIR + 1], stack[sp, ST_DIR + 2]
        wr, wg, wb = stack[sp, ST_WEIGHT], stack[sp, ST_WEIGHT + 1], stack[sp, ST_WEIGHT + 2]
        depth, here = stack[sp, ST_DEPTH], np.int64(stack[sp, ST_MEDIUM])
        inv = 1.0 / math.sqrt(dx * dx + dy * dy + dz * dz)
        dx, dy, dz = dx * inv, dy * inv, dz * inv
        hit = scene_hit(bvh, geo, ox, oy, oz, dx, dy, dz, 0.0, INF)
        if here >= 0:                          # Beer-Lambert along the segment
            ar, ag, ab = beer_lambert(media, here, ox, oy, oz, dx, dy, dz, hit.t)
            wr, wg, wb = wr * ar, wg * ag, wb * ab
        if hit.kind == MISS:
            br, bg, bb = background(env, dx, dy, dz)
            out_r, out_g, out_b = out_r + wr * br, out_g + wg * bg, out_b + wb * bb
            continue
        px, py, pz = ox + hit.t * dx, oy + hit.t * dy, oz + hit.t * dz
        (gx, gy, gz), (nx, ny, nz), m, emit = hit_normals(geo, hit, px, py, pz)
        beyond = medium_beyond(media, m, gx * dx + gy * dy + gz * dz < 0.0)
        if is_null(media, geo, m):             # a boundary of media only: straight on
            sp = push_ray(stack, sp, px + eps * dx, py + eps * dy, pz + eps * dz, dx, dy, dz, wr, wg, wb,
                          depth + NULL_STEP, beyond)
            continue
        cos_i = -(nx * dx + ny * dy + nz * dz)
        entering = cos_i >= 0.0
        if emit >= 0:
            front = cos_i
            if hit.kind == TRIANGLE:      # emission leaves on the side of the true normal
                ng = geo.tri_ng
                front = -(ng[hit.index, 0] * dx + ng[hit.index, 1] * dy + ng[hit.index, 2] * dz)
            if front > 0.0:
                em = geo.emission
                out_r, out_g, out_b = out_r + wr * em[emit, 0], out_g + wg * em[emit, 1], out_b + wb * em[emit, 2]
        if not entering:            # shade the side the ray came from
            nx, ny, nz, cos_i = -nx, -ny, -nz, -cos_i
        if mats[m, M_TYPE] <= MAT_DIFFUSE:      # k_d: colour or texture, times vertex colours
            kd0, kd1, kd2 = base_color(geo, m, M_DIFFUSE, hit, px, py, pz)
        else:
            kd0, kd1, kd2 = mats[m, M_DIFFUSE], mats[m, M_DIFFUSE + 1], mats[m, M_DIFFUSE + 2]
        # mirror direction of the eye ray
        rx, ry, rz = dx + 2.0 * cos_i * nx, dy + 2.0 * cos_i * ny, dz + 2.0 * cos_i * nz
        lr, lg, lb = direct_phong(bvh, geo, lights, env, m, kd0, kd1, kd2, px, py, pz, nx, ny, nz,
                                  rx, ry, rz, shadows, eps)
        out_r, out_g, out_b = out_r + wr * lr, out_g + wg * lg, out_b + wb * lb
        if depth < bounces:
            sp = push_secondary(stack, sp, mats, m, entering, cos_i, px, py, pz, nx, ny, nz,
                                dx, dy, dz, rx, ry, rz, wr, wg, wb, depth, eps, (here, beyond))
    return out_r, out_g, out_b


@unit
def camera_sample(cam, settings, filter_table, i, j, s):
    """The camera ray (direction not normalised) of sample ``s`` of pixel (row i, column
    j): the pixel centre for one sample per pixel, else jittered (dimensions 0 and 1) and
    warped by the filter; a thin lens uses dimensions 2 and 3. When spp = n^2 the
    positions lie on an n x n jittered grid whose cells the samples visit in the order of
    ``rng.grid_cell`` (each sample uniform over the pixel: the mean of any prefix is
    unbiased), with the numbers of the cell's index: the set of a pixel's points is the
    same as in row-major order."""
    width, height, spp = settings.width, settings.height, settings.spp
    pixel = i * width + j
    if spp == 1:
        fx, fy = 0.0, 0.0
    else:
        n = int(math.sqrt(spp))
        row = column = 0
        if n * n == spp:
            row, column = grid_cell(settings.seed, pixel, s, n)
            s = row * n + column
        u1 = rand01(settings.seed, pixel, s, 0)
        u2 = rand01(settings.seed, pixel, s, 1)
        if n * n == spp:
            u1 = (column + u1) / n
            u2 = (row + u2) / n
        fx, fy = warp(u1, settings.filter, filter_table), warp(u2, settings.filter, filter_table)
    (ox, oy, oz), (dx, dy, dz) = camera_ray(cam, width, height, j + 0.5 + fx, i + 0.5 + fy)
    if cam.lens_radius > 0.0:
        (ox, oy, oz), (dx, dy, dz) = lens_ray(cam, ox, oy, oz, dx, dy, dz, rand01(settings.seed, pixel, s, 2),
                                          rand01(settings.seed, pixel, s, 3))
    return (ox, oy, oz), (dx, dy, dz)


@row_kernel
def whitted_rows(rows, queue, out, row0, bvh, geo, cam, lights, env, settings, filter_table, media):
    """Render the image rows this thread takes from ``queue`` into ``out`` (row ``i`` into
    ``out[i - row0]``, (W, 3) float32): a row kernel of :mod:`raytrace.kernels.threads`.
    ``media``: the scene's :class:`~raytrace.layout.Media`, or None (then no media code is
    compiled in: ``kernels.media.beer_lambert`` and its siblings)."""
    bvh, geo, lights, env, media = borrow(bvh), borrow(geo), borrow(lights), borrow(env), borrow(media)
    stack = np.empty((stack_rows(settings.bounces), STACK_WIDTH))
    spp = settings.spp
    i = next_row(rows, queue)
    while i >= 0:
        for j in range(settings.width):
            cr = cg = cb = 0.0
            for s in range(spp):
                (ox, oy, oz), (dx, dy, dz) = camera_sample(cam, settings, filter_table, i, j, s)
                r, g, b = trace_ray(bvh, geo, lights, env, media, ox, oy, oz, dx, dy, dz, settings.bounces,
                                    settings.shadows, settings.epsilon, stack)
                cr += r
                cg += g
                cb += b
            out[i - row0, j, 0] = cr / spp
            out[i - row0, j, 1] = cg / spp
            out[i - row0, j, 2] = cb / spp
        i = next_row(rows, queue)


def render_rows(row0, row1, out, bvh, geo, cam, lights, env, settings, filter_table, media=None):
    """Render image rows [row0, row1) into ``out`` ((row1 - row0, W, 3) float32), on
    ``numba.get_num_threads()`` threads; ``media``: the scene's (``scene.media``) or None."""
    run_rows(whitted_rows, np.arange(row0, row1, dtype=np.int64), out, row0, bvh, geo, cam, lights,
             env, settings, filter_table, media)


@row_kernel
def depth_normal_rows(rows, queue, out_t, out_n, bvh, geo, cam):
    """The rows of :func:`render_aov` this thread takes from ``queue`` (a row kernel)."""
    height, width = out_t.shape
    i = next_row(rows, queue)
    while i >= 0:
        for j in range(width):
            (ox, oy, oz), (dx, dy, dz) = centre_ray(cam, width, height, i, j)
            hit = scene_hit(bvh, geo, ox, oy, oz, dx, dy, dz, 0.0, INF)
            out_t[i, j] = hit.t
            if hit.kind != MISS:
                (_, _, _), (nx, ny, nz), _, _ = hit_normals(geo, hit, ox + hit.t * dx, oy + hit.t * dy,
                                                        oz + hit.t * dz)
                out_n[i, j, 0], out_n[i, j, 1], out_n[i, j, 2] = nx, ny, nz
            else:
                out_n[i, j, 0] = out_n[i, j, 1] = out_n[i, j, 2] = 0.0
        i = next_row(rows, queue)


def render_aov(out_t, out_n, bvh, geo, cam):
    """Depth (distance along the unit camera ray; inf on a miss) and world shading normal
    through each pixel centre, on ``numba.get_num_threads()`` threads."""
    run_rows(depth_normal_rows, np.arange(out_t.shape[0], dtype=np.int64), out_t, out_n, bvh, geo, cam)
