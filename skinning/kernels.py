"""Numba kernels: forward kinematics, linear blend skinning, area-weighted normals.

Plain contiguous arrays in and out; the public, checked wrappers live in
:mod:`skinning.skeleton`, :mod:`skinning.lbs` and :mod:`skinning.geometry`.
Matrices are ``4x4`` acting on column vectors (``p' = M @ [p, 1]``).
"""

import numpy as np
from numba import njit, prange


@njit(cache=True)
def fk_kernel(parents, local, base, out):
    """World transforms in one pass down the tree.

    parents (J,) int64 with ``parents[j] < j`` (-1 for roots); local (J,4,4) float64;
    base (J,4,4) float64, a fixed transform between a joint and its parent joint (the
    parent's world, for a root; usually identity); out (J,4,4) float64 receives
    ``world[j] = world[parents[j]] @ base[j] @ local[j]`` (``base[j] @ local[j]`` for roots).
    """
    nj = parents.shape[0]
    tmp = np.empty((4, 4))
    for j in range(nj):
        for r in range(4):
            for c in range(4):
                acc = 0.0
                for k in range(4):
                    acc += base[j, r, k] * local[j, k, c]
                tmp[r, c] = acc
        p = parents[j]
        if p < 0:
            out[j] = tmp
        else:
            for r in range(4):
                for c in range(4):
                    acc = 0.0
                    for k in range(4):
                        acc += out[p, r, k] * tmp[k, c]
                    out[j, r, c] = acc


@njit(cache=True)
def _skin_point(i, points, joints, weights, mats, out):
    """``out[i] = sum_k w_ik M_{j_ik} [p_i, 1]``; zero weights are skipped."""
    x = points[i, 0]
    y = points[i, 1]
    z = points[i, 2]
    ax = 0.0
    ay = 0.0
    az = 0.0
    for k in range(joints.shape[1]):
        w = weights[i, k]
        if w == 0.0:
            continue
        j = joints[i, k]
        ax += w * (mats[j, 0, 0] * x + mats[j, 0, 1] * y + mats[j, 0, 2] * z + mats[j, 0, 3])
        ay += w * (mats[j, 1, 0] * x + mats[j, 1, 1] * y + mats[j, 1, 2] * z + mats[j, 1, 3])
        az += w * (mats[j, 2, 0] * x + mats[j, 2, 1] * y + mats[j, 2, 2] * z + mats[j, 2, 3])
    out[i, 0] = ax
    out[i, 1] = ay
    out[i, 2] = az


@njit(cache=True)
def _skin_point_normal(i, points, normals, joints, weights, mats, out_p, out_n):
    """Blend ``A = sum_k w_k M_k``; ``out_p[i] = A p``, ``out_n[i] ~ cof(A) n`` (unit).

    The cofactor matrix is ``det(A) * A^-T``: the normal goes through the inverse transpose
    (sign-corrected when ``det < 0``). If A's 3x3 part is singular, ``A @ n`` is used.
    """
    a00 = 0.0
    a01 = 0.0
    a02 = 0.0
    a03 = 0.0
    a10 = 0.0
    a11 = 0.0
    a12 = 0.0
    a13 = 0.0
    a20 = 0.0
    a21 = 0.0
    a22 = 0.0
    a23 = 0.0
    for k in range(joints.shape[1]):
        w = weights[i, k]
        if w == 0.0:
            continue
        j = joints[i, k]
        a00 += w * mats[j, 0, 0]
        a01 += w * mats[j, 0, 1]
        a02 += w * mats[j, 0, 2]
        a03 += w * mats[j, 0, 3]
        a10 += w * mats[j, 1, 0]
        a11 += w * mats[j, 1, 1]
        a12 += w * mats[j, 1, 2]
        a13 += w * mats[j, 1, 3]
        a20 += w * mats[j, 2, 0]
        a21 += w * mats[j, 2, 1]
        a22 += w * mats[j, 2, 2]
        a23 += w * mats[j, 2, 3]
    x = points[i, 0]
    y = points[i, 1]
    z = points[i, 2]
    out_p[i, 0] = a00 * x + a01 * y + a02 * z + a03
    out_p[i, 1] = a10 * x + a11 * y + a12 * z + a13
    out_p[i, 2] = a20 * x + a21 * y + a22 * z + a23
    c00 = a11 * a22 - a12 * a21
    c01 = a12 * a20 - a10 * a22
    c02 = a10 * a21 - a11 * a20
    c10 = a02 * a21 - a01 * a22
    c11 = a00 * a22 - a02 * a20
    c12 = a01 * a20 - a00 * a21
    c20 = a01 * a12 - a02 * a11
    c21 = a02 * a10 - a00 * a12
    c22 = a00 * a11 - a01 * a10
    det = a00 * c00 + a01 * c01 + a02 * c02
    nx = normals[i, 0]
    ny = normals[i, 1]
    nz = normals[i, 2]
    if det != 0.0:
        s = 1.0 if det > 0.0 else -1.0
        mx = s * (c00 * nx + c01 * ny + c02 * nz)
        my = s * (c10 * nx + c11 * ny + c12 * nz)
        mz = s * (c20 * nx + c21 * ny + c22 * nz)
    else:
        mx = a00 * nx + a01 * ny + a02 * nz
        my = a10 * nx + a11 * ny + a12 * nz
        mz = a20 * nx + a21 * ny + a22 * nz
    length = np.sqrt(mx * mx + my * my + mz * mz)
    if length > 0.0:
        mx /= length
        my /= length
        mz /= length
    out_n[i, 0] = mx
    out_n[i, 1] = my
    out_n[i, 2] = mz


@njit(cache=True, parallel=True)
def skin_points_kernel(points, joints, weights, mats, out):
    """Linear blend skinning of positions, parallel over vertices.

    points (N,3) float64, joints (N,K) int64, weights (N,K) float64,
    mats (J,4,4) float64 skinning matrices ``world_j @ inverse_bind_j``; out (N,3).
    """
    for i in prange(points.shape[0]):
        _skin_point(i, points, joints, weights, mats, out)


@njit(cache=True)
def skin_points_serial(points, joints, weights, mats, out):
    """:func:`skin_points_kernel` on one thread (for small meshes)."""
    for i in range(points.shape[0]):
        _skin_point(i, points, joints, weights, mats, out)


@njit(cache=True, parallel=True)
def skin_points_normals_kernel(points, normals, joints, weights, mats, out_p, out_n):
    """Skin positions and unit normals (N,3), parallel over vertices."""
    for i in prange(points.shape[0]):
        _skin_point_normal(i, points, normals, joints, weights, mats, out_p, out_n)


@njit(cache=True)
def skin_points_normals_serial(points, normals, joints, weights, mats, out_p, out_n):
    """:func:`skin_points_normals_kernel` on one thread (for small meshes)."""
    for i in range(points.shape[0]):
        _skin_point_normal(i, points, normals, joints, weights, mats, out_p, out_n)


@njit(cache=True)
def vertex_normals_kernel(vertices, faces, out):
    """Area-weighted vertex normals: each face adds its unnormalised cross product
    ``(b - a) x (c - a)`` (twice its area times its unit normal) to its three corners,
    then every sum is normalised. Vertices on no face (or only degenerate faces) get 0.
    vertices (N,3) float64, faces (M,3) int64 CCW from outside, out (N,3) float64."""
    out[:, :] = 0.0
    for f in range(faces.shape[0]):
        a = faces[f, 0]
        b = faces[f, 1]
        c = faces[f, 2]
        ux = vertices[b, 0] - vertices[a, 0]
        uy = vertices[b, 1] - vertices[a, 1]
        uz = vertices[b, 2] - vertices[a, 2]
        vx = vertices[c, 0] - vertices[a, 0]
        vy = vertices[c, 1] - vertices[a, 1]
        vz = vertices[c, 2] - vertices[a, 2]
        nx = uy * vz - uz * vy
        ny = uz * vx - ux * vz
        nz = ux * vy - uy * vx
        for v in (a, b, c):
            out[v, 0] += nx
            out[v, 1] += ny
            out[v, 2] += nz
    for i in range(out.shape[0]):
        length = np.sqrt(out[i, 0] ** 2 + out[i, 1] ** 2 + out[i, 2] ** 2)
        if length > 0.0:
            out[i, 0] /= length
            out[i, 1] /= length
            out[i, 2] /= length
