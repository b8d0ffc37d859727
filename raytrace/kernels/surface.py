"""What the integrators need to know about a hit point: normals, texture coordinates,
material row and emitter row (Numba, scalar, no allocation).

``kind`` and ``index`` come from the scene's closest-hit query (``raytrace.layout``
TRIANGLE, SPHERE, PLANE); ``(u, v)`` are a triangle's barycentrics of ``v1`` and ``v2``.

Texture coordinates (Mitsuba's conventions):
- triangles: interpolated per-corner UVs (mesh ``vt``; rectangles ``((x+1)/2, (y+1)/2)``;
  cubes Mitsuba's per-face squares; otherwise the barycentrics ``(u, v)``);
- spheres: ``u = atan2(y, x) / 2 pi`` (in [0, 1)), ``v = acos(z) / pi`` of the hit point on
  the unit sphere in object space (pole on the object's z axis);
- planes: the object-space coordinates along the plane's own axes (see
  ``raytrace.scene.build.plane_axes``), one unit per world unit before the transform.
"""
import math

from raytrace.jit import helper, unit, kernel

from ..layout import M_TEX, SPHERE, TRIANGLE
from ..textures import texture_rgb


@helper
def affine(m, k, px, py, pz):
    """The affine map ``m[k]`` ((3, 4): linear part and translation) applied to point p."""
    return (m[k, 0, 0] * px + m[k, 0, 1] * py + m[k, 0, 2] * pz + m[k, 0, 3],
            m[k, 1, 0] * px + m[k, 1, 1] * py + m[k, 1, 2] * pz + m[k, 1, 3],
            m[k, 2, 0] * px + m[k, 2, 1] * py + m[k, 2, 2] * pz + m[k, 2, 3])


@unit     # inlined by LLVM: compiled once for all kernels
def hit_normals(geo, hit, px, py, pz):
    """-> (geometric normal (3), shading normal (3), material row, emitter row) at the
    world point p of ``hit`` (a :class:`~raytrace.layout.SceneHit`).

    Both normals are unit and as the geometry defines them (not flipped towards the ray);
    the geometric normal points to the shape's front side (the side that emits); the
    shading normal is interpolated (triangles) and may disagree a little with it. On an
    instance, the prototype's object-space normals are mapped to world space by the
    inverse transpose (the transpose of the world->object map) and its "inherit"
    material rows (-1) become the instance's material."""
    if hit.instance < 0:
        return local_normals(geo, hit.kind, hit.index, hit.u, hit.v, px, py, pz)
    k = hit.instance
    m = geo.inst_w2o
    qx, qy, qz = affine(m, k, px, py, pz)
    (gx, gy, gz), (sx, sy, sz), mat, emit = local_normals(geo, hit.kind, hit.index, hit.u, hit.v, qx, qy, qz)
    gx, gy, gz = _normal_to_world(m, k, gx, gy, gz)
    sx, sy, sz = _normal_to_world(m, k, sx, sy, sz)
    if mat < 0:
        mat = geo.inst_mat[k]
    return (gx, gy, gz), (sx, sy, sz), mat, emit


@helper
def _normal_to_world(m, k, nx, ny, nz):
    """Unit world normal of the object-space normal n of instance k (``m`` world->object)."""
    wx = m[k, 0, 0] * nx + m[k, 1, 0] * ny + m[k, 2, 0] * nz
    wy = m[k, 0, 1] * nx + m[k, 1, 1] * ny + m[k, 2, 1] * nz
    wz = m[k, 0, 2] * nx + m[k, 1, 2] * ny + m[k, 2, 2] * nz
    ln = math.sqrt(wx * wx + wy * wy + wz * wz)
    if ln > 0.0:
        return wx / ln, wy / ln, wz / ln
    return nx, ny, nz


@helper
def local_normals(geo, kind, idx, u, v, px, py, pz):
    """:func:`hit_normals` in the primitive's own space (world space, or a prototype's
    object space with p given there)."""
    if kind == TRIANGLE:
        w = 1.0 - u - v
        n = geo.tri_n                      # (no row views: each costs a reference count)
        sx = w * n[idx, 0, 0] + u * n[idx, 1, 0] + v * n[idx, 2, 0]
        sy = w * n[idx, 0, 1] + u * n[idx, 1, 1] + v * n[idx, 2, 1]
        sz = w * n[idx, 0, 2] + u * n[idx, 1, 2] + v * n[idx, 2, 2]
        ln = math.sqrt(sx * sx + sy * sy + sz * sz)
        gx, gy, gz = geo.tri_ng[idx, 0], geo.tri_ng[idx, 1], geo.tri_ng[idx, 2]
        if ln > 0.0:
            sx, sy, sz = sx / ln, sy / ln, sz / ln
        else:
            sx, sy, sz = gx, gy, gz
        return (gx, gy, gz), (sx, sy, sz), geo.tri_mat[idx], geo.tri_emit[idx]
    if kind == SPHERE:
        qx, qy, qz = affine(geo.sph_w2o, idx, px, py, pz)
        a = geo.sph_w2o
        nx = a[idx, 0, 0] * qx + a[idx, 1, 0] * qy + a[idx, 2, 0] * qz
        ny = a[idx, 0, 1] * qx + a[idx, 1, 1] * qy + a[idx, 2, 1] * qz
        nz = a[idx, 0, 2] * qx + a[idx, 1, 2] * qy + a[idx, 2, 2] * qz
        ln = math.sqrt(nx * nx + ny * ny + nz * nz)
        if ln > 0.0:
            nx, ny, nz = nx / ln, ny / ln, nz / ln
        else:
            nx, ny, nz = 0.0, 0.0, 1.0
        return (nx, ny, nz), (nx, ny, nz), geo.sph_mat[idx], geo.sph_emit[idx]
    nx, ny, nz = geo.pl_n[idx, 0], geo.pl_n[idx, 1], geo.pl_n[idx, 2]
    return (nx, ny, nz), (nx, ny, nz), geo.pl_mat[idx], -1


@kernel
def sphere_uv(qx, qy, qz):
    """Mitsuba's sphere UVs of a point q on (or near) the unit sphere."""
    ln = math.sqrt(qx * qx + qy * qy + qz * qz)
    if ln == 0.0:
        return 0.0, 0.0
    phi = math.atan2(qy, qx)
    if phi < 0.0:
        phi += 2.0 * math.pi
    cz = min(1.0, max(-1.0, qz / ln))
    return phi / (2.0 * math.pi), math.acos(cz) / math.pi


@helper
def hit_uv(geo, hit, px, py, pz):
    """Texture coordinates (tu, tv) of ``hit`` at the world point p (an instance's in its
    prototype's object space)."""
    if hit.instance >= 0:
        px, py, pz = affine(geo.inst_w2o, hit.instance, px, py, pz)
    return local_uv(geo, hit.kind, hit.index, hit.u, hit.v, px, py, pz)


@kernel
def local_uv(geo, kind, idx, u, v, px, py, pz):
    """Texture coordinates (tu, tv) at a hit in the primitive's own space (see the
    module docstring)."""
    if kind == TRIANGLE:
        w = 1.0 - u - v
        t = geo.tri_uv
        return (w * t[idx, 0, 0] + u * t[idx, 1, 0] + v * t[idx, 2, 0],
                w * t[idx, 0, 1] + u * t[idx, 1, 1] + v * t[idx, 2, 1])
    if kind == SPHERE:
        qx, qy, qz = affine(geo.sph_w2o, idx, px, py, pz)
        return sphere_uv(qx, qy, qz)
    m = geo.pl_uv
    return (m[idx, 0, 0] * px + m[idx, 0, 1] * py + m[idx, 0, 2] * pz + m[idx, 0, 3],
            m[idx, 1, 0] * px + m[idx, 1, 1] * py + m[idx, 1, 2] * pz + m[idx, 1, 3])


@unit
def base_color(geo, mat, col, hit, px, py, pz):
    """The material's colour slot ``col`` (a column of the material table), replaced by its
    texture's value at ``hit`` (world point p) when the material has one, times the
    triangle's vertex colours when it has them."""
    mats = geo.materials
    tex = int(mats[mat, M_TEX])
    if tex < 0:
        r, g, b = mats[mat, col], mats[mat, col + 1], mats[mat, col + 2]
    else:
        tu, tv = hit_uv(geo, hit, px, py, pz)
        r, g, b = texture_rgb(geo.tex_info, geo.tex_texels, tex, tu, tv)
    if hit.kind == TRIANGLE and geo.corner_colors.shape[0] > 0:
        row = geo.tri_color_row[hit.index]
        if row >= 0:
            c = geo.corner_colors
            w = 1.0 - hit.u - hit.v
            r *= w * c[row, 0, 0] + hit.u * c[row, 1, 0] + hit.v * c[row, 2, 0]
            g *= w * c[row, 0, 1] + hit.u * c[row, 1, 1] + hit.v * c[row, 2, 1]
            b *= w * c[row, 0, 2] + hit.u * c[row, 1, 2] + hit.v * c[row, 2, 2]
    return r, g, b


@helper
def hit_material(geo, hit):
    """Material row of ``hit`` (an instance's own row for its prototype's "inherit" rows)."""
    if hit.kind == TRIANGLE:
        mat = geo.tri_mat[hit.index]
    elif hit.kind == SPHERE:
        mat = geo.sph_mat[hit.index]
    else:
        mat = geo.pl_mat[hit.index]
    if mat < 0 and hit.instance >= 0:
        mat = geo.inst_mat[hit.instance]
    return mat
