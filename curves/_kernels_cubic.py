"""Numba kernel for piecewise cubic curves given by a 4x4 basis matrix."""
import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def cubic_eval(ctrl, weights, stride, t, out):
    """Evaluate piecewise cubics and their derivatives.

    ctrl: (C, n, d) float64 control points of C curves; weights: (K, 4, 4) with
    weights[o] the basis matrix of derivative order o (rows: control points, columns:
    powers 1, s, s^2, s^3 of the local parameter); stride: control points per segment
    step (3 Bézier, 1 B-spline/Catmull-Rom); t: (Ct, m) global parameters, Ct in
    {1, C}, segment i covering [i, i+1]. out: (K, C, m, d) float64, filled in place.
    Parameters outside [0, nseg] extrapolate the first/last segment.
    """
    n_curves = ctrl.shape[0]
    n_ctrl = ctrl.shape[1]
    dim = ctrl.shape[2]
    K = weights.shape[0]
    m = t.shape[1]
    shared_t = t.shape[0] == 1
    nseg = (n_ctrl - 4) // stride + 1
    total = n_curves * m
    chunk = 2048
    for ch in prange((total + chunk - 1) // chunk):
        start = ch * chunk
        stop = min(total, start + chunk)
        c = start // m
        k = start - c * m
        for _ in range(start, stop):
            x = t[0, k] if shared_t else t[c, k]
            seg = int(np.floor(x))
            if seg < 0:
                seg = 0
            elif seg > nseg - 1:
                seg = nseg - 1
            s = x - seg
            s2 = s * s
            s3 = s2 * s
            base = seg * stride
            for o in range(K):
                W = weights[o]
                w0 = W[0, 0] + W[0, 1] * s + W[0, 2] * s2 + W[0, 3] * s3
                w1 = W[1, 0] + W[1, 1] * s + W[1, 2] * s2 + W[1, 3] * s3
                w2 = W[2, 0] + W[2, 1] * s + W[2, 2] * s2 + W[2, 3] * s3
                w3 = W[3, 0] + W[3, 1] * s + W[3, 2] * s2 + W[3, 3] * s3
                for j in range(dim):
                    out[o, c, k, j] = (w0 * ctrl[c, base, j] + w1 * ctrl[c, base + 1, j]
                                       + w2 * ctrl[c, base + 2, j] + w3 * ctrl[c, base + 3, j])
            k += 1
            if k == m:
                k = 0
                c += 1
