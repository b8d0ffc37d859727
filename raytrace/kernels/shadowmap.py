"""Shadow maps (the course's shadow-mapping assignment), for comparison with shadow rays.

A light with ``"shadows": "map"`` stores, per texel, the depth of the nearest surface
seen from the light; a shading point is in shadow when its own depth, less a bias, is
beyond the stored one (the course's rule: ``d(p) - bias > depth(texel)``). Depths are
made by casting one ray per texel centre from the light (what rasterising the scene
from the light would store at the texel centres):

- directional light: an orthographic map of ``res x res`` texels on the plane through
  ``frame[0]`` spanned by ``frame[1]`` (u) and ``frame[2]`` (v), covering
  ``[-extent, extent]^2`` (``frame[3, 0]``), looking along the light's direction; the
  depth is the distance along that direction from the plane;
- point light: a cube map of six ``res x res`` faces (the order of ``raytrace.cubemap``:
  left, right, up, down, front, back) around the light; the depth is the distance to
  the light.

Lookups use the texel containing the point; ``pcf`` > 0 averages the tests of the
``(2 pcf + 1)^2`` texels around it (percentage-closer filtering), giving soft edges.
Too small a bias makes lit surfaces shadow themselves ("acne"); too large a one lifts
shadows off their casters ("peter-panning").
"""
import math

import numpy as np
from raytrace.jit import helper, kernel
from numba import prange

from ..cubemap import cube_face_xy, face_xy_direction
from ..layout import LIGHT_POINT
from .intersect import scene_hit

INF = math.inf
# the depth stored where the light sees nothing
FAR = 1e300


@helper
def _texel_ray(lights, li, texel):
    """Origin and unit direction of the ray through the centre of texel ``texel`` of
    light ``li``'s map."""
    res = lights.shadow_res[li]
    if lights.kind[li] == LIGHT_POINT:
        face = texel // (res * res)
        rc = texel - face * res * res
        row, col = rc // res, rc - (rc // res) * res
        dx, dy, dz = face_xy_direction(face, (col + 0.5) / res, 1.0 - (row + 0.5) / res)
        ln = math.sqrt(dx * dx + dy * dy + dz * dz)
        return ((lights.pos_dir[li, 0], lights.pos_dir[li, 1], lights.pos_dir[li, 2]),
                (dx / ln, dy / ln, dz / ln))
    f = lights.shadow_frame
    row, col = texel // res, texel - (texel // res) * res
    ext = f[li, 3, 0]
    a = ((col + 0.5) / res * 2.0 - 1.0) * ext
    b = (1.0 - (row + 0.5) / res * 2.0) * ext
    return ((f[li, 0, 0] + a * f[li, 1, 0] + b * f[li, 2, 0],
             f[li, 0, 1] + a * f[li, 1, 1] + b * f[li, 2, 1],
             f[li, 0, 2] + a * f[li, 1, 2] + b * f[li, 2, 2]),
            (lights.pos_dir[li, 0], lights.pos_dir[li, 1], lights.pos_dir[li, 2]))


@kernel(parallel=True)
def fill_shadow_map(depths, li, bvh, geo, lights):
    """Fill light ``li``'s depths (its slice of ``depths``) by casting the texel rays."""
    start = lights.shadow_map[li]
    res = lights.shadow_res[li]
    n = res * res * (6 if lights.kind[li] == LIGHT_POINT else 1)
    for k in prange(n):
        (ox, oy, oz), (dx, dy, dz) = _texel_ray(lights, li, k)
        hit = scene_hit(bvh, geo, ox, oy, oz, dx, dy, dz, 0.0, INF)
        depths[start + k] = hit.t if hit.t < INF else FAR


@helper
def _lookup(lights, li, px, py, pz):
    """(face, column, row, depth of p) of point p in light ``li``'s map (column and row
    as floats; face 0 for a directional light), or face -1 when p is outside the map."""
    res = lights.shadow_res[li]
    if lights.kind[li] == LIGHT_POINT:
        wx = px - lights.pos_dir[li, 0]
        wy = py - lights.pos_dir[li, 1]
        wz = pz - lights.pos_dir[li, 2]
        face, x, y = cube_face_xy(wx, wy, wz)
        return face, x * res, (1.0 - y) * res, math.sqrt(wx * wx + wy * wy + wz * wz)
    f = lights.shadow_frame
    rx, ry, rz = px - f[li, 0, 0], py - f[li, 0, 1], pz - f[li, 0, 2]
    ext = f[li, 3, 0]
    a = (rx * f[li, 1, 0] + ry * f[li, 1, 1] + rz * f[li, 1, 2]) / ext
    b = (rx * f[li, 2, 0] + ry * f[li, 2, 1] + rz * f[li, 2, 2]) / ext
    if abs(a) > 1.0 or abs(b) > 1.0:
        return -1, 0.0, 0.0, 0.0
    d = rx * lights.pos_dir[li, 0] + ry * lights.pos_dir[li, 1] + rz * lights.pos_dir[li, 2]
    return 0, (a + 1.0) * 0.5 * res, (1.0 - b) * 0.5 * res, d


@helper
def shadow_map_visibility(lights, li, px, py, pz):
    """Fraction of light ``li`` that reaches p by its shadow map: 1 lit, 0 in shadow,
    between for percentage-closer filtering."""
    face, x, y, d = _lookup(lights, li, px, py, pz)
    if face < 0:
        return 1.0                                    # outside a directional map: lit
    res = lights.shadow_res[li]
    col, row = min(int(x), res - 1), min(int(y), res - 1)
    k = lights.shadow_pcf[li]
    base = lights.shadow_map[li] + face * res * res
    bias = lights.shadow_bias[li]
    lit = 0
    total = 0
    for r in range(max(row - k, 0), min(row + k, res - 1) + 1):
        for c in range(max(col - k, 0), min(col + k, res - 1) + 1):
            total += 1
            if not d - bias > lights.depths[base + r * res + c]:
                lit += 1
    return lit / total
