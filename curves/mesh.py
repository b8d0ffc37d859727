"""Indexed triangle meshes: grids, welding, checks and OBJ export.

A mesh is ``Mesh(vertices (n, 3) float64, faces (m, 3) int64, normals (n, 3) float64
unit)``; faces wind counter-clockwise seen from the side the normals point to.
"""
from typing import NamedTuple

import numpy as np
from userio.outputs import write_bytes_atomic

from ._kernels_mesh import compact, weld_clusters

# a generic direction (unit 1-norm) so that few points share a key
_KEY_DIR = np.array([0.5257311121, 0.3090169944, 0.1652518935])
_KEY_DIR = _KEY_DIR / np.abs(_KEY_DIR).sum()


class Mesh(NamedTuple):
    """vertices (n, 3) float64, faces (m, 3) int64 CCW, normals (n, 3) float64 unit."""
    vertices: np.ndarray
    faces: np.ndarray
    normals: np.ndarray


def grid_faces(nu, nv, offset=0):
    """Triangles of a (nu+1) x (nv+1) vertex grid, vertex (i, j) = offset + i*(nv+1) + j.

    Each cell (i, j) gives (i,j), (i+1,j), (i+1,j+1) and (i,j), (i+1,j+1), (i,j+1):
    counter-clockwise about the direction of d/du x d/dv when u runs along i.
    Returns (2*nu*nv, 3) int64.
    """
    i, j = np.meshgrid(np.arange(nu), np.arange(nv), indexing="ij")
    a = (offset + i * (nv + 1) + j).ravel()
    b = a + (nv + 1)
    c = b + 1
    d = a + 1
    f = np.empty((2 * a.size, 3), dtype=np.int64)
    f[0::2, 0], f[0::2, 1], f[0::2, 2] = a, b, c
    f[1::2, 0], f[1::2, 1], f[1::2, 2] = a, c, d
    return f


def face_normals(vertices, faces):
    """Unnormalised face normals (m, 3): cross(v1 - v0, v2 - v0), length = 2*area."""
    v = vertices[faces]
    return np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])


def weld(vertices, normals, faces, tol, candidates=None):
    """Merge vertices within ``tol`` (max-norm) of each other into one.

    vertices, normals: (n, 3); faces: (m, 3); candidates: optional index array of the
    vertices that may merge (e.g. patch boundaries); others are kept as they are.
    Merged vertices keep the first copy's position and the normalised sum of the
    copies' normals (the first copy's normal if they cancel). Faces that lose a corner
    (two equal indices) are dropped; unused vertices are removed.
    Returns a ``Mesh``.
    """
    vertices = np.ascontiguousarray(vertices, dtype=np.float64)
    normals = np.ascontiguousarray(normals, dtype=np.float64)
    n = len(vertices)
    cand = np.arange(n) if candidates is None else np.unique(np.asarray(candidates, np.int64))
    pts = np.ascontiguousarray(vertices[cand])
    key = pts @ _KEY_DIR
    order = np.argsort(key, kind="stable")
    rep_local = weld_clusters(pts, order, key, float(tol))
    remap = np.arange(n)
    remap[cand] = cand[rep_local]
    V, F, N = compact(vertices, normals, np.ascontiguousarray(faces, dtype=np.int64), remap)
    return Mesh(V, F, N)


def fill_missing_normals(vertices, faces, normals):
    """Replace zero (or non-finite) normals by the area-weighted mean of the adjacent
    face normals, and +y where that vanishes too. Returns (n, 3) unit normals."""
    nrm = np.array(normals, dtype=np.float64)
    length = np.linalg.norm(nrm, axis=1)
    bad = ~np.isfinite(length) | (length < 1e-12)
    if np.any(bad):
        acc = np.zeros_like(nrm)
        fn = face_normals(vertices, faces)
        for k in range(3):
            np.add.at(acc, faces[:, k], fn)
        a = np.linalg.norm(acc, axis=1)
        fix = bad & (a > 0)
        nrm[fix] = acc[fix] / a[fix, None]
        nrm[bad & ~fix] = (0.0, 1.0, 0.0)
        length = np.linalg.norm(nrm, axis=1)
    return nrm / length[:, None]


def edge_counts(faces):
    """Undirected edges (k, 2) (sorted pairs) and how many faces use each (k,)."""
    f = np.asarray(faces, dtype=np.int64)
    e = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    e.sort(axis=1)
    return np.unique(e, axis=0, return_counts=True)


def boundary_edges(faces):
    """Edges used by exactly one face: (k, 2) int64."""
    e, c = edge_counts(faces)
    return e[c == 1]


def is_watertight(faces):
    """True when every edge is shared by exactly two faces, with opposite directions
    (a closed, consistently oriented surface)."""
    f = np.asarray(faces, dtype=np.int64)
    if len(f) == 0:
        return False
    e, c = edge_counts(f)
    if not np.all(c == 2):
        return False
    directed = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    return len(np.unique(directed, axis=0)) == len(directed)


def format_obj(mesh, comment=None):
    """The text of ``mesh`` as Wavefront OBJ (``v``, ``vn``, ``f a//a b//b c//c``, 1-based)."""
    v, f, n = mesh
    lines = []
    if comment:
        lines += [f"# {line}" for line in str(comment).splitlines()]
    lines += [f"v {x:.9g} {y:.9g} {z:.9g}" for x, y, z in v]
    if n is not None:
        lines += [f"vn {x:.6f} {y:.6f} {z:.6f}" for x, y, z in n]
        lines += [f"f {a}//{a} {b}//{b} {c}//{c}" for a, b, c in f + 1]
    else:
        lines += [f"f {a} {b} {c}" for a, b, c in f + 1]
    return "\n".join(lines) + "\n"


def write_obj(path, mesh, comment=None):
    """Write ``mesh`` as Wavefront OBJ (see :func:`format_obj`) through a temporary file
    and a rename: a failure leaves no half-written file."""
    write_bytes_atomic(path, format_obj(mesh, comment).encode("utf-8"))
