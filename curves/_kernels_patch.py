"""Numba kernels for bicubic tensor-product patches."""

import numpy as np
from numba import njit


@njit(cache=True)
def _weights(M, s, order, w):
    """w[r] = d^order/ds^order of basis function r at s (M: rows points, cols powers)."""
    if order == 0:
        p0, p1, p2, p3 = 1.0, s, s * s, s * s * s
    elif order == 1:
        p0, p1, p2, p3 = 0.0, 1.0, 2.0 * s, 3.0 * s * s
    else:
        p0, p1, p2, p3 = 0.0, 0.0, 2.0, 6.0 * s
    for r in range(4):
        w[r] = M[r, 0] * p0 + M[r, 1] * p1 + M[r, 2] * p2 + M[r, 3] * p3


@njit(cache=True)
def _partials(G, M, u, v, out):
    """out rows: S, S_u, S_v, S_uv, S_uu, S_vv at (u, v) for one patch G (4, 4, 3)."""
    wu = np.empty((3, 4))
    wv = np.empty((3, 4))
    for o in range(3):
        _weights(M, u, o, wu[o])
        _weights(M, v, o, wv[o])
    # (derivative order in u, order in v) for each output row
    ou = (0, 1, 0, 1, 2, 0)
    ov = (0, 0, 1, 1, 0, 2)
    for q in range(6):
        for d in range(3):
            acc = 0.0
            for i in range(4):
                row = 0.0
                for j in range(4):
                    row += wv[ov[q], j] * G[i, j, d]
                acc += wu[ou[q], i] * row
            out[q, d] = acc


@njit(cache=True)
def _cross_into(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit(cache=True)
def robust_normal(G, M, u, v, scale, out):
    """Unit normal of patch G at (u, v), also where S_u x S_v vanishes.

    1. n = S_u x S_v when |n| > 1e-10 * scale^2.
    2. A collapsed edge (one partial vanishes, e.g. the teapot's lid and bottom poles):
       the limit of the normal along the edge, n = S_u x S_uv if S_v vanishes
       (sign + at u < 1/2, - at u >= 1/2) or S_uv x S_v if S_u vanishes (sign by v).
    3. Otherwise the normal a short step (1e-6, 1e-4, 1e-2 of the parameter range)
       towards the patch centre. 4. If all vanish: zero (the caller falls back to face
       normals). Never NaN.
    """
    part = np.empty((6, 3))
    n = np.empty(3)
    _partials(G, M, u, v, part)
    _cross_into(part[1], part[2], n)
    thr = 1e-10 * scale * scale
    nl = np.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
    if nl <= thr:
        lu = np.sqrt(part[1, 0] ** 2 + part[1, 1] ** 2 + part[1, 2] ** 2)
        lv = np.sqrt(part[2, 0] ** 2 + part[2, 1] ** 2 + part[2, 2] ** 2)
        if lv < lu:
            _cross_into(part[1], part[3], n)
            sign = 1.0 if u < 0.5 else -1.0
        else:
            _cross_into(part[3], part[2], n)
            sign = 1.0 if v < 0.5 else -1.0
        for d in range(3):
            n[d] *= sign
        nl = np.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
        step = 1e-6
        su = 1.0 if u < 0.5 else -1.0
        sv = 1.0 if v < 0.5 else -1.0
        while nl <= thr and step < 0.1:
            _partials(G, M, u + su * step, v + sv * step, part)
            _cross_into(part[1], part[2], n)
            nl = np.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
            step *= 100.0
    if nl <= thr:
        out[0] = 0.0
        out[1] = 0.0
        out[2] = 0.0
    else:
        for d in range(3):
            out[d] = n[d] / nl


@njit(cache=True)
def patch_grid(ctrl, M, us, vs, scales, pos, nrm):
    """Tessellate patches on a parameter grid.

    ctrl: (P, 4, 4, 3) control points, ctrl[p, i, j] weighted by basis i in u and j in
    v; M: (4, 4) basis matrix; us: (nu,), vs: (nv,) parameters in [0, 1]; scales: (P,)
    size of each control net (for the degeneracy threshold).
    pos, nrm: (P, nu, nv, 3) filled with positions and unit normals.
    """
    P = ctrl.shape[0]
    nu = us.shape[0]
    nv = vs.shape[0]
    wu = np.empty((2, nu, 4))
    wv = np.empty((2, nv, 4))
    for o in range(2):
        for a in range(nu):
            _weights(M, us[a], o, wu[o, a])
        for b in range(nv):
            _weights(M, vs[b], o, wv[o, b])
    for job in range(P * nu):
        p = job // nu
        a = job - p * nu
        thr = 1e-10 * scales[p] * scales[p]
        # rows R0 = sum_i wu0[i] G[i, :], R1 = sum_i wu1[i] G[i, :]
        R = np.zeros((2, 4, 3))
        for o in range(2):
            for i in range(4):
                w = wu[o, a, i]
                for j in range(4):
                    for d in range(3):
                        R[o, j, d] += w * ctrl[p, i, j, d]
        su = np.empty(3)
        sv = np.empty(3)
        n = np.empty(3)
        for b in range(nv):
            for d in range(3):
                acc = 0.0
                accu = 0.0
                accv = 0.0
                for j in range(4):
                    acc += wv[0, b, j] * R[0, j, d]
                    accu += wv[0, b, j] * R[1, j, d]
                    accv += wv[1, b, j] * R[0, j, d]
                pos[p, a, b, d] = acc
                su[d] = accu
                sv[d] = accv
            _cross_into(su, sv, n)
            nl = np.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
            if nl > thr:
                for d in range(3):
                    nrm[p, a, b, d] = n[d] / nl
            else:
                robust_normal(ctrl[p], M, us[a], vs[b], scales[p], nrm[p, a, b])
