"""Numba kernels for B-splines of any degree (Piegl & Tiller, The NURBS Book, A2.1/A2.3)."""

import numpy as np
from numba import njit, prange


@njit(cache=True)
def find_span(knots, n_ctrl, p, u):
    """Index i with knots[i] <= u < knots[i+1], clamped to the base interval [p, n-1]."""
    if u >= knots[n_ctrl]:
        span = n_ctrl - 1
        while span > p and knots[span] == knots[span + 1]:
            span -= 1
        return span
    if u < knots[p]:
        return p
    # guess from the position in the base interval (exact for uniform knots), then
    # check it and its neighbours before falling back to bisection
    a = knots[p]
    g = p + int((u - a) / (knots[n_ctrl] - a) * (n_ctrl - p))
    for cand in (g, g - 1, g + 1):
        if p <= cand < n_ctrl and knots[cand] <= u < knots[cand + 1]:
            return cand
    low = p
    high = n_ctrl
    while high - low > 1:
        mid = (low + high) // 2
        if u < knots[mid]:
            high = mid
        else:
            low = mid
    return low


@njit(cache=True)
def ders_basis(knots, span, u, p, nd, ders, ndu, a, left, right):
    """Non-zero basis functions and their derivatives up to ``nd`` (A2.3).

    Fills ders[k, r] = d^k/du^k N_{span-p+r, p}(u) for k <= nd, r <= p. ndu, a,
    left, right are scratch arrays of shapes (p+1, p+1), (2, p+1), (p+1,), (p+1,).
    """
    ndu[0, 0] = 1.0
    for j in range(1, p + 1):
        left[j] = u - knots[span + 1 - j]
        right[j] = knots[span + j] - u
        saved = 0.0
        for r in range(j):
            ndu[j, r] = right[r + 1] + left[j - r]
            temp = ndu[r, j - 1] / ndu[j, r]
            ndu[r, j] = saved + right[r + 1] * temp
            saved = left[j - r] * temp
        ndu[j, j] = saved
    for j in range(p + 1):
        ders[0, j] = ndu[j, p]
    for k in range(1, nd + 1):
        for j in range(p + 1):
            ders[k, j] = 0.0
    top = min(nd, p)
    for r in range(p + 1):
        s1 = 0
        s2 = 1
        a[0, 0] = 1.0
        for k in range(1, top + 1):
            d = 0.0
            rk = r - k
            pk = p - k
            if r >= k:
                a[s2, 0] = a[s1, 0] / ndu[pk + 1, rk]
                d = a[s2, 0] * ndu[rk, pk]
            j1 = 1 if rk >= -1 else -rk
            j2 = k - 1 if r - 1 <= pk else p - r
            for j in range(j1, j2 + 1):
                a[s2, j] = (a[s1, j] - a[s1, j - 1]) / ndu[pk + 1, rk + j]
                d += a[s2, j] * ndu[rk + j, pk]
            if r <= pk:
                a[s2, k] = -a[s1, k - 1] / ndu[pk + 1, r]
                d += a[s2, k] * ndu[r, pk]
            ders[k, r] = d
            s1, s2 = s2, s1
    fac = float(p)
    for k in range(1, top + 1):
        for j in range(p + 1):
            ders[k, j] *= fac
        fac *= p - k


@njit(cache=True)
def basis_funs(knots, span, u, p, N, left, right):
    """The p+1 non-zero basis functions at u (A2.2): N[r] = N_{span-p+r, p}(u)."""
    N[0] = 1.0
    for j in range(1, p + 1):
        left[j] = u - knots[span + 1 - j]
        right[j] = knots[span + j] - u
        saved = 0.0
        for r in range(j):
            temp = N[r] / (right[r + 1] + left[j - r])
            N[r] = saved + right[r + 1] * temp
            saved = left[j - r] * temp
        N[j] = saved


@njit(cache=True, parallel=True)
def bspline_eval(knots, ctrl, p, t, nd, out):
    """Evaluate C B-spline curves sharing one knot vector, with derivatives.

    knots: (n+p+1,) float64 non-decreasing; ctrl: (C, n, d); p: degree; t: (Ct, m)
    with Ct in {1, C}; nd: highest derivative order. out: (nd+1, C, m, d), filled.
    Parameters outside [knots[p], knots[n]] extrapolate the end polynomials.
    """
    n_curves = ctrl.shape[0]
    n_ctrl = ctrl.shape[1]
    dim = ctrl.shape[2]
    m = t.shape[1]
    shared_t = t.shape[0] == 1
    total = n_curves * m
    chunk = 4096
    n_chunks = (total + chunk - 1) // chunk
    for ch in prange(n_chunks):
        ders = np.empty((nd + 1, p + 1))
        ndu = np.empty((p + 1, p + 1))
        a = np.empty((2, p + 1))
        left = np.empty(p + 1)
        right = np.empty(p + 1)
        stop = min(total, (ch + 1) * chunk)
        for idx in range(ch * chunk, stop):
            c = idx // m
            k = idx - c * m
            u = t[0, k] if shared_t else t[c, k]
            span = find_span(knots, n_ctrl, p, u)
            if nd == 0:
                basis_funs(knots, span, u, p, ders[0], left, right)
            else:
                ders_basis(knots, span, u, p, nd, ders, ndu, a, left, right)
            first = span - p
            for order in range(nd + 1):
                for j in range(dim):
                    acc = 0.0
                    for r in range(p + 1):
                        acc += ders[order, r] * ctrl[c, first + r, j]
                    out[order, c, k, j] = acc
