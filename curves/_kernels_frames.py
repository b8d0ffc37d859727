"""Numba kernels for moving frames along sampled curves (scalar code: quick to compile)."""

import numpy as np
from numba import njit


@njit(cache=True)
def rmf_double_reflection(x, T, n0, N, B):
    """Rotation-minimizing frames by double reflection (Wang et al., ACM TOG 2008).

    x: (m, 3) points; T: (m, 3) unit tangents; n0: (3,) unit normal at x[0],
    perpendicular to T[0]. Fills N, B (m, 3) with B = T x N.
    """
    m = x.shape[0]
    r0, r1, r2 = n0[0], n0[1], n0[2]
    for i in range(m):
        if i > 0:
            # reflect (r, t) in the bisector plane of x[i-1], x[i] ...
            t0, t1, t2 = T[i - 1, 0], T[i - 1, 1], T[i - 1, 2]
            v0, v1, v2 = x[i, 0] - x[i - 1, 0], x[i, 1] - x[i - 1, 1], x[i, 2] - x[i - 1, 2]
            c = v0 * v0 + v1 * v1 + v2 * v2
            if c > 1e-300:
                k = 2.0 * (v0 * r0 + v1 * r1 + v2 * r2) / c
                r0, r1, r2 = r0 - k * v0, r1 - k * v1, r2 - k * v2
                k = 2.0 * (v0 * t0 + v1 * t1 + v2 * t2) / c
                t0, t1, t2 = t0 - k * v0, t1 - k * v1, t2 - k * v2
            # ... then in the plane that maps the reflected tangent onto T[i]
            v0, v1, v2 = T[i, 0] - t0, T[i, 1] - t1, T[i, 2] - t2
            c = v0 * v0 + v1 * v1 + v2 * v2
            if c > 1e-300:
                k = 2.0 * (v0 * r0 + v1 * r1 + v2 * r2) / c
                r0, r1, r2 = r0 - k * v0, r1 - k * v1, r2 - k * v2
            # remove rounding drift: exactly perpendicular to T[i], unit length
            k = r0 * T[i, 0] + r1 * T[i, 1] + r2 * T[i, 2]
            r0, r1, r2 = r0 - k * T[i, 0], r1 - k * T[i, 1], r2 - k * T[i, 2]
            k = np.sqrt(r0 * r0 + r1 * r1 + r2 * r2)
            if k > 0.0:
                r0, r1, r2 = r0 / k, r1 / k, r2 / k
        N[i, 0], N[i, 1], N[i, 2] = r0, r1, r2
        B[i, 0] = T[i, 1] * r2 - T[i, 2] * r1
        B[i, 1] = T[i, 2] * r0 - T[i, 0] * r2
        B[i, 2] = T[i, 0] * r1 - T[i, 1] * r0


@njit(cache=True)
def course_recurrence(T, b0, N, B):
    """The course's frames: N_i = normalize(B_{i-1} x T_i), B_i = normalize(T_i x N_i).

    T: (m, 3) unit tangents; b0: (3,) unit binormal guess for the first sample (must
    not be parallel to T[0]). When B_{i-1} is parallel to T_i the previous normal is
    projected instead. Fills N, B (m, 3).
    """
    m = T.shape[0]
    b0_, b1_, b2_ = b0[0], b0[1], b0[2]
    p0 = b1_ * T[0, 2] - b2_ * T[0, 1]
    p1 = b2_ * T[0, 0] - b0_ * T[0, 2]
    p2 = b0_ * T[0, 1] - b1_ * T[0, 0]
    for i in range(m):
        t0, t1, t2 = T[i, 0], T[i, 1], T[i, 2]
        n0 = b1_ * t2 - b2_ * t1
        n1 = b2_ * t0 - b0_ * t2
        n2 = b0_ * t1 - b1_ * t0
        if n0 * n0 + n1 * n1 + n2 * n2 < 1e-24:
            k = p0 * t0 + p1 * t1 + p2 * t2
            n0, n1, n2 = p0 - k * t0, p1 - k * t1, p2 - k * t2
        k = np.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
        n0, n1, n2 = n0 / k, n1 / k, n2 / k
        c0 = t1 * n2 - t2 * n1
        c1 = t2 * n0 - t0 * n2
        c2 = t0 * n1 - t1 * n0
        k = np.sqrt(c0 * c0 + c1 * c1 + c2 * c2)
        b0_, b1_, b2_ = c0 / k, c1 / k, c2 / k
        N[i, 0], N[i, 1], N[i, 2] = n0, n1, n2
        B[i, 0], B[i, 1], B[i, 2] = b0_, b1_, b2_
        p0, p1, p2 = n0, n1, n2
