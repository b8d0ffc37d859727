"""The Whitted integrator: Phong direct light with shadow rays, mirror reflection and
Fresnel refraction, as an explicit-stack loop (no recursion).

All radiance is linear RGB. Per light: ``L = color / (attenuation * d^2)`` (point) or
``color`` (directional); diffuse ``max(N.L, 0) * L * k_d``; specular
``max(L.R, 0)^s * L * k_s`` with ``R`` the mirror of the eye ray; lights behind the
surface (N.L <= 0) add nothing. Ambient adds ``I_amb * k_d``. A textured ``diffuse``
replaces ``k_d`` by the texture's value at the hit. Emissive shapes add their emission
where they are seen from the front (they do not light other surfaces here).
"""
import math

import numpy as np
from numba import njit, prange

from ..cubemap import cube_rgb
from ..scene.build import (M_DIFFUSE, M_IOR, M_REFLECT, M_SHININESS, M_SPECULAR, M_TEX, M_TRANSMIT,
                           M_TYPE, MAT_DIFFUSE)
from .camera_rays import camera_ray
from .intersect import MISS, PLANE, SPHERE, TRIANGLE, scene_hit, scene_occluded  # noqa: F401
from .rng import rand01
from .sampling import warp
from .surface import base_color, hit_normals

INF = math.inf
MIN_WEIGHT = 1e-5

# params array layout (float64)
P_WIDTH, P_HEIGHT, P_SPP, P_FILTER, P_BOUNCES, P_SHADOWS, P_EPS, P_SEED, P_HAS_CUBE = range(9)
PARAMS_SIZE = 9


@njit(cache=True, inline="always")
def background(bg, cube, has_cube, dx, dy, dz):
    """Radiance (r, g, b) of a ray that escapes: the cube map, else the background colour."""
    if has_cube:
        return cube_rgb(cube, dx, dy, dz)
    return bg[0], bg[1], bg[2]


@njit(cache=True)
def trace_ray(acc, geo, lk, lpos, lcol, latt, bg, ambient, cube, has_cube,
              ox, oy, oz, dx, dy, dz, bounces, shadows, eps, stack):
    """Radiance along one camera ray. ``stack`` is scratch space (2 * bounces + 4, 10)."""
    mats = geo.materials
    out = np.zeros(3)
    sp = 0
    stack[0, 0], stack[0, 1], stack[0, 2] = ox, oy, oz
    stack[0, 3], stack[0, 4], stack[0, 5] = dx, dy, dz
    stack[0, 6], stack[0, 7], stack[0, 8], stack[0, 9] = 1.0, 1.0, 1.0, 0.0
    sp = 1
    while sp > 0:
        sp -= 1
        ox, oy, oz = stack[sp, 0], stack[sp, 1], stack[sp, 2]
        dx, dy, dz = stack[sp, 3], stack[sp, 4], stack[sp, 5]
        wr, wg, wb, depth = stack[sp, 6], stack[sp, 7], stack[sp, 8], stack[sp, 9]
        inv = 1.0 / math.sqrt(dx * dx + dy * dy + dz * dz)
        dx, dy, dz = dx * inv, dy * inv, dz * inv
        t, kind, idx, u, v = scene_hit(acc, geo, ox, oy, oz, dx, dy, dz, 0.0, INF)
        if kind == MISS:
            br, bgg, bb = background(bg, cube, has_cube, dx, dy, dz)
            out[0] += wr * br
            out[1] += wg * bgg
            out[2] += wb * bb
            continue
        px, py, pz = ox + t * dx, oy + t * dy, oz + t * dz
        _, _, _, nx, ny, nz, m, emit = hit_normals(geo, kind, idx, u, v, px, py, pz)
        cos_i = -(nx * dx + ny * dy + nz * dz)
        entering = cos_i >= 0.0
        if emit >= 0:
            front = cos_i
            if kind == TRIANGLE:      # emission leaves on the side of the true normal
                front = -(geo.tri_ng[idx, 0] * dx + geo.tri_ng[idx, 1] * dy + geo.tri_ng[idx, 2] * dz)
            if front > 0.0:
                em = geo.emission[emit]
                out[0] += wr * em[0]
                out[1] += wg * em[1]
                out[2] += wb * em[2]
        if not entering:            # shade the side the ray came from
            nx, ny, nz, cos_i = -nx, -ny, -nz, -cos_i
        if mats[m, M_TEX] >= 0.0 and mats[m, M_TYPE] <= MAT_DIFFUSE:   # textured k_d
            kd0, kd1, kd2 = base_color(geo, m, M_DIFFUSE, kind, idx, u, v, px, py, pz)
        else:
            kd0, kd1, kd2 = mats[m, M_DIFFUSE], mats[m, M_DIFFUSE + 1], mats[m, M_DIFFUSE + 2]
        ks = mats[m, M_SPECULAR:M_SPECULAR + 3]
        shin = mats[m, M_SHININESS]
        # mirror direction of the eye ray
        rx, ry, rz = dx + 2.0 * cos_i * nx, dy + 2.0 * cos_i * ny, dz + 2.0 * cos_i * nz
        lr, lg, lb = ambient[0] * kd0, ambient[1] * kd1, ambient[2] * kd2
        sx, sy, sz = px + eps * nx, py + eps * ny, pz + eps * nz
        for li in range(lk.shape[0]):
            if lk[li] == 0:
                lx, ly, lz = lpos[li, 0] - px, lpos[li, 1] - py, lpos[li, 2] - pz
                dist = math.sqrt(lx * lx + ly * ly + lz * lz)
                if dist == 0.0:
                    continue
                lx, ly, lz = lx / dist, ly / dist, lz / dist
                fall = 1.0 / (latt[li] * dist * dist) if latt[li] > 0.0 else 1.0
            else:
                lx, ly, lz = -lpos[li, 0], -lpos[li, 1], -lpos[li, 2]
                dist = INF
                fall = 1.0
            ndotl = nx * lx + ny * ly + nz * lz
            if ndotl <= 0.0:
                continue
            if shadows and scene_occluded(acc, geo, sx, sy, sz, lx, ly, lz, 0.0, dist - eps):
                continue
            ldotr = lx * rx + ly * ry + lz * rz
            spec = ldotr ** shin if ldotr > 0.0 else 0.0
            lr += fall * lcol[li, 0] * (ndotl * kd0 + spec * ks[0])
            lg += fall * lcol[li, 1] * (ndotl * kd1 + spec * ks[1])
            lb += fall * lcol[li, 2] * (ndotl * kd2 + spec * ks[2])
        out[0] += wr * lr
        out[1] += wg * lg
        out[2] += wb * lb
        if depth >= bounces:
            continue
        refl = mats[m, M_REFLECT:M_REFLECT + 3]
        trans = mats[m, M_TRANSMIT:M_TRANSMIT + 3]
        fr = 1.0                                   # share of the mirror ray
        if trans[0] > 0.0 or trans[1] > 0.0 or trans[2] > 0.0:
            ior = mats[m, M_IOR]
            n1, n2 = (1.0, ior) if entering else (ior, 1.0)
            eta = n1 / n2
            sin2_t = eta * eta * (1.0 - cos_i * cos_i)
            if sin2_t < 1.0:                       # else total internal reflection
                cos_t = math.sqrt(1.0 - sin2_t)
                r0 = ((n1 - n2) / (n1 + n2)) ** 2
                c = cos_i if n1 <= n2 else cos_t
                fr = r0 + (1.0 - r0) * (1.0 - c) ** 5
                tr = 1.0 - fr
                tw0, tw1, tw2 = wr * tr * trans[0], wg * tr * trans[1], wb * tr * trans[2]
                if max(tw0, max(tw1, tw2)) > MIN_WEIGHT:
                    k = eta * cos_i - cos_t
                    stack[sp, 0], stack[sp, 1], stack[sp, 2] = px - eps * nx, py - eps * ny, pz - eps * nz
                    stack[sp, 3], stack[sp, 4], stack[sp, 5] = eta * dx + k * nx, eta * dy + k * ny, eta * dz + k * nz
                    stack[sp, 6], stack[sp, 7], stack[sp, 8], stack[sp, 9] = tw0, tw1, tw2, depth + 1.0
                    sp += 1
        mw0, mw1, mw2 = wr * fr * refl[0], wg * fr * refl[1], wb * fr * refl[2]
        if max(mw0, max(mw1, mw2)) > MIN_WEIGHT:
            stack[sp, 0], stack[sp, 1], stack[sp, 2] = sx, sy, sz
            stack[sp, 3], stack[sp, 4], stack[sp, 5] = rx, ry, rz
            stack[sp, 6], stack[sp, 7], stack[sp, 8], stack[sp, 9] = mw0, mw1, mw2, depth + 1.0
            sp += 1
    return out


@njit(cache=True)
def render_row(i, out_row, acc, geo, cam, lk, lpos, lcol, latt, bg, ambient, cube, params,
               filter_table, stack):
    """Render image row ``i`` into ``out_row`` ((W, 3) float32). Kept out of the parallel
    loop so that the parallel kernel stays small and quick to compile."""
    width, height = int(params[P_WIDTH]), int(params[P_HEIGHT])
    spp, fkind = int(params[P_SPP]), int(params[P_FILTER])
    bounces, shadows, eps = int(params[P_BOUNCES]), params[P_SHADOWS] > 0.0, params[P_EPS]
    seed, has_cube = int(params[P_SEED]), params[P_HAS_CUBE] > 0.0
    n = int(math.sqrt(spp))
    if n * n != spp:
        n = 0                     # not a square: independent jitter
    for j in range(width):
        pixel = i * width + j
        cr = cg = cb = 0.0
        for s in range(spp):
            if spp == 1:
                ox_, oy_ = 0.0, 0.0               # one sample: the pixel centre
            else:
                u1 = rand01(seed, pixel, s, 0)
                u2 = rand01(seed, pixel, s, 1)
                if n > 0:
                    u1 = (s % n + u1) / n
                    u2 = (s // n + u2) / n
                ox_, oy_ = warp(u1, fkind, filter_table), warp(u2, fkind, filter_table)
            ro0, ro1, ro2, rd0, rd1, rd2 = camera_ray(cam, width, height, j + 0.5 + ox_, i + 0.5 + oy_)
            c = trace_ray(acc, geo, lk, lpos, lcol, latt, bg, ambient, cube, has_cube,
                          ro0, ro1, ro2, rd0, rd1, rd2, bounces, shadows, eps, stack)
            cr += c[0]
            cg += c[1]
            cb += c[2]
        out_row[j, 0] = cr / spp
        out_row[j, 1] = cg / spp
        out_row[j, 2] = cb / spp


@njit(cache=True, parallel=True)
def render_rows(row0, row1, out, acc, geo, cam, lk, lpos, lcol, latt, bg, ambient, cube,
                params, filter_table):
    """Render image rows [row0, row1) into ``out`` ((row1 - row0, W, 3) float32)."""
    bounces = int(params[P_BOUNCES])
    for r in prange(row1 - row0):
        stack = np.empty((2 * bounces + 4, 10))
        render_row(row0 + r, out[r], acc, geo, cam, lk, lpos, lcol, latt, bg, ambient, cube,
                   params, filter_table, stack)


@njit(cache=True, parallel=True)
def render_aov(out_t, out_n, acc, geo, cam):
    """Depth (distance along the unit camera ray; inf on a miss) and world shading normal
    through each pixel centre."""
    height, width = out_t.shape
    for i in prange(height):
        for j in range(width):
            ox, oy, oz, dx, dy, dz = camera_ray(cam, width, height, j + 0.5, i + 0.5)
            inv = 1.0 / math.sqrt(dx * dx + dy * dy + dz * dz)
            dx, dy, dz = dx * inv, dy * inv, dz * inv
            t, kind, idx, u, v = scene_hit(acc, geo, ox, oy, oz, dx, dy, dz, 0.0, INF)
            out_t[i, j] = t
            if kind != MISS:
                _, _, _, nx, ny, nz, m, _ = hit_normals(geo, kind, idx, u, v, ox + t * dx, oy + t * dy, oz + t * dz)
                out_n[i, j, 0], out_n[i, j, 1], out_n[i, j, 2] = nx, ny, nz
            else:
                out_n[i, j, 0] = out_n[i, j, 1] = out_n[i, j, 2] = 0.0
