"""Bicubic tensor-product patches (Bézier and uniform B-spline) and their meshes.

A patch is a (4, 4, 3) grid of control points ``G[i, j]``; the surface is
``S(u, v) = sum_ij b_i(u) b_j(v) G[i, j]`` for (u, v) in [0, 1]^2, with ``b`` the cubic
basis functions of the course's matrices (``basis.basis_matrix``). In the course's
``.spline`` files the 16 points of a patch are listed row by row: point ``4*i + j``
is ``G[i, j]``. Normals are ``S_u x S_v`` normalised (see ``robust_normal`` in
``_kernels_patch`` for the collapsed corners of the teapot's lid and bottom).
"""
import numpy as np

from .basis import basis_matrix, cubic_weights
from ._kernels_patch import patch_grid
from .mesh import Mesh, fill_missing_normals, grid_faces, weld


def as_patches(ctrl):
    """(..., 16, 3) or (..., 4, 4, 3) control points -> (P, 4, 4, 3) float64."""
    c = np.asarray(ctrl, dtype=np.float64)
    if c.shape[-1] != 3:
        raise ValueError(f"patch control points must be 3D, got shape {c.shape}")
    if c.ndim >= 2 and c.shape[-2] == 16:
        c = c.reshape(c.shape[:-2] + (4, 4, 3))
    if c.ndim < 3 or c.shape[-3:] != (4, 4, 3):
        raise ValueError(f"expected (..., 16, 3) or (..., 4, 4, 3) control points, got {c.shape}")
    return np.ascontiguousarray(c.reshape(-1, 4, 4, 3))


def evaluate(ctrl, u, v, basis="bezier"):
    """Points and first partials of every patch at parameter pairs (u[k], v[k]).

    ctrl: (P, 4, 4, 3) (or (P, 16, 3)); u, v: (m,) in [0, 1].
    Returns (S, S_u, S_v), each (P, m, 3) float64.
    """
    G = as_patches(ctrl)
    u = np.atleast_1d(np.asarray(u, dtype=np.float64))
    v = np.atleast_1d(np.asarray(v, dtype=np.float64))
    wu0, wu1 = cubic_weights(basis, u, 0), cubic_weights(basis, u, 1)
    wv0, wv1 = cubic_weights(basis, v, 0), cubic_weights(basis, v, 1)
    S = np.einsum("mi,mj,pijd->pmd", wu0, wv0, G)
    Su = np.einsum("mi,mj,pijd->pmd", wu1, wv0, G)
    Sv = np.einsum("mi,mj,pijd->pmd", wu0, wv1, G)
    return S, Su, Sv


def net_scales(G):
    """Size of each control net: the largest extent of its bounding box, (P,)."""
    return np.ptp(G.reshape(len(G), 16, 3), axis=1).max(axis=1)


def tessellate_grid(ctrl, resolution=16, basis="bezier"):
    """Positions and unit normals on a (resolution+1)^2 grid per patch.

    Returns (pos, nrm), each (P, r+1, r+1, 3) float64; grid index (a, b) is
    (u, v) = (a/r, b/r). Normals where S_u x S_v vanishes use the limits described in
    ``_kernels_patch.robust_normal``; a fully degenerate spot gets a zero normal.
    """
    G = as_patches(ctrl)
    r = int(resolution)
    if r < 1:
        raise ValueError(f"resolution must be >= 1, got {resolution}")
    s = np.arange(r + 1, dtype=np.float64) / r
    pos = np.empty((len(G), r + 1, r + 1, 3))
    nrm = np.empty_like(pos)
    scales = np.maximum(net_scales(G), 1e-300)
    patch_grid(G, basis_matrix(basis), s, s, scales, pos, nrm)
    return pos, nrm


def boundary_indices(n_patches, resolution):
    """Indices of the grid-boundary vertices of every patch in the flat vertex array."""
    r1 = resolution + 1
    mask = np.zeros((r1, r1), bool)
    mask[0, :] = mask[-1, :] = mask[:, 0] = mask[:, -1] = True
    local = np.flatnonzero(mask)
    return (np.arange(n_patches)[:, None] * r1 * r1 + local[None, :]).ravel()


def tessellate(ctrl, resolution=16, basis="bezier", weld_tol=1e-9):
    """An indexed triangle mesh of all patches, with no cracks between neighbours.

    ctrl: (P, 4, 4, 3) or (P, 16, 3); resolution: grid intervals per patch side;
    weld_tol: patch-boundary vertices closer than weld_tol times the model's size
    become one vertex (shared seams, collapsed poles), and triangles that collapse are
    dropped. Faces wind counter-clockwise about S_u x S_v. Returns a ``Mesh``.
    """
    G = as_patches(ctrl)
    pos, nrm = tessellate_grid(G, resolution, basis)
    P = pos.shape[0]
    r = int(resolution)
    per = (r + 1) * (r + 1)
    faces = (grid_faces(r, r)[None, :, :] + (np.arange(P) * per)[:, None, None]).reshape(-1, 3)
    V = pos.reshape(-1, 3)
    N = nrm.reshape(-1, 3)
    size = max(float(np.ptp(G.reshape(-1, 3), axis=0).max()), 1e-300)
    mesh = weld(V, N, faces, weld_tol * size, boundary_indices(P, r))
    normals = fill_missing_normals(mesh.vertices, mesh.faces, mesh.normals)
    return Mesh(mesh.vertices, mesh.faces, normals)
