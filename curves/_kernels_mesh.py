"""Numba kernel for welding nearly coincident vertices."""

import numpy as np
from numba import njit


@njit(cache=True)
def _root(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@njit(cache=True)
def weld_clusters(points, order, key, tol):
    """Union vertices closer than ``tol`` (max-norm) into clusters.

    points: (n, 3); order: argsort of key; key: (n,) projections on a direction with
    unit 1-norm (so two points within ``tol`` have keys within ``tol``).
    Returns rep (n,) int64: the smallest index of each point's cluster.
    """
    n = points.shape[0]
    parent = np.arange(n)
    for a in range(n):
        i = order[a]
        b = a + 1
        while b < n and key[order[b]] - key[i] <= tol:
            j = order[b]
            if (abs(points[i, 0] - points[j, 0]) <= tol and abs(points[i, 1] - points[j, 1]) <= tol
                    and abs(points[i, 2] - points[j, 2]) <= tol):
                ri = _root(parent, i)
                rj = _root(parent, j)
                if ri < rj:
                    parent[rj] = ri
                elif rj < ri:
                    parent[ri] = rj
            b += 1
    rep = np.empty(n, dtype=np.int64)
    for i in range(n):
        rep[i] = _root(parent, i)
    return rep


@njit(cache=True)
def compact(vertices, normals, faces, remap):
    """Apply a vertex merge map and drop what it makes redundant.

    vertices, normals: (n, 3); faces: (m, 3) int64; remap: (n,) each vertex's
    representative (remap[r] == r for representatives). Normals of merged vertices are
    summed onto the representative and normalised (kept as the representative's own
    when the sum vanishes; zero normals stay zero). Faces with a repeated corner are
    dropped, unused vertices removed.
    Returns (vertices', faces', normals').
    """
    n = vertices.shape[0]
    nsum = normals.copy()
    for i in range(n):
        r = remap[i]
        if r != i:
            for d in range(3):
                nsum[r, d] += normals[i, d]
    m = faces.shape[0]
    used = np.zeros(n, dtype=np.bool_)
    keep = np.zeros(m, dtype=np.bool_)
    kept = 0
    for f in range(m):
        a = remap[faces[f, 0]]
        b = remap[faces[f, 1]]
        c = remap[faces[f, 2]]
        if a != b and b != c and a != c:
            keep[f] = True
            kept += 1
            used[a] = True
            used[b] = True
            used[c] = True
    new_index = np.empty(n, dtype=np.int64)
    count = 0
    for i in range(n):
        new_index[i] = count
        if used[i]:
            count += 1
    V = np.empty((count, 3))
    N = np.empty((count, 3))
    for i in range(n):
        if used[i]:
            k = new_index[i]
            length = np.sqrt(nsum[i, 0] ** 2 + nsum[i, 1] ** 2 + nsum[i, 2] ** 2)
            for d in range(3):
                V[k, d] = vertices[i, d]
                N[k, d] = nsum[i, d] / length if length > 1e-12 else normals[i, d]
    F = np.empty((kept, 3), dtype=np.int64)
    k = 0
    for f in range(m):
        if keep[f]:
            for d in range(3):
                F[k, d] = new_index[remap[faces[f, d]]]
            k += 1
    return V, F, N
