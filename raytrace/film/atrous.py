"""Edge-avoiding à-trous wavelet filter (Dammertz et al. 2010), with the variance-guided
colour weight of SVGF (Schied et al. 2017): the denoiser used without Intel Open Image
Denoise. Numba, parallel over rows.

Each pass convolves with the 5 x 5 B3-spline kernel spread to a step of 2^k pixels
("à trous": with holes) and multiplies every tap by edge-stopping weights:

- normal: ``max(0, n_p . n_q) ** sigma_normal`` (two misses, zero normals, count as equal);
- depth: ``exp(-|z_p - z_q| / (sigma_depth * grad_z_p * distance))``, with ``grad_z`` the
  pixel's own depth step, so slanted surfaces are smoothed along their slope; misses
  (inf) match only misses;
- albedo: ``exp(-|a_p - a_q|^2 / sigma_albedo^2)``;
- colour: ``exp(-|l_p - l_q| / (sigma_color * sqrt(min(var_p, var_q))))``, l the
  luminance, var its variance (the render's per-pixel variance of the mean, carried
  through the passes as ``sum w^2 var / (sum w)^2``, and smoothed over 3 x 3 pixels for
  the weight, as in SVGF). The smaller of the two variances keeps a noisy pixel at the
  edge of a light from gathering the light's radiance. Where the render has no noise
  the filter does nothing.

:func:`atrous` runs it on the illumination (colour divided by albedo) and multiplies the
albedo back, so texture detail is kept.
"""
import math

import numpy as np
from raytrace.jit import helper, kernel
from numba import prange

PASSES = 5
# edge-stopping parameters, in the order the kernels take them (one float64 array)
SIGMAS = {"sigma_normal": 16.0, "sigma_depth": 1.0, "sigma_albedo": 0.3, "sigma_color": 4.0}
S_NORMAL, S_DEPTH, S_ALBEDO, S_COLOR = 0, 1, 2, 3
MIN_ALBEDO = 0.02         # below this the colour is filtered as it is (not demodulated)


@helper
def _b3(i):
    """The B3-spline taps 1/16, 1/4, 3/8, 1/4, 1/16 at offsets -2 .. 2."""
    return 0.375 if i == 0 else (0.25 if abs(i) == 1 else 0.0625)


@helper
def _luminance(c, y, x):
    return 0.2126 * c[y, x, 0] + 0.7152 * c[y, x, 1] + 0.0722 * c[y, x, 2]


@helper
def _normal_weight(n, y, x, v, u, power):
    zp = n[y, x, 0] == 0.0 and n[y, x, 1] == 0.0 and n[y, x, 2] == 0.0
    zq = n[v, u, 0] == 0.0 and n[v, u, 1] == 0.0 and n[v, u, 2] == 0.0
    if zp or zq:
        return 1.0 if zp and zq else 0.0
    d = n[y, x, 0] * n[v, u, 0] + n[y, x, 1] * n[v, u, 1] + n[y, x, 2] * n[v, u, 2]
    return max(0.0, d) ** power


@helper
def _depth_weight(z, grad, y, x, v, u, dist, sigma):
    zp, zq = z[y, x], z[v, u]
    if not (math.isfinite(zp) and math.isfinite(zq)):
        return 1.0 if math.isinf(zp) and math.isinf(zq) else 0.0
    return math.exp(-abs(zp - zq) / (sigma * grad[y, x] * dist + 1e-6 * abs(zp) + 1e-12))


@helper
def _albedo_weight(a, y, x, v, u, sigma):
    d = 0.0
    for k in range(3):
        d += (a[y, x, k] - a[v, u, k]) ** 2
    return math.exp(-d / (sigma * sigma))


@kernel
def _filter_pixel(src, var, guide_var, albedo, normal, z, grad, y, x, step, sig, out, out_var):
    h, w = src.shape[0], src.shape[1]
    lp = _luminance(src, y, x)
    acc0 = acc1 = acc2 = 0.0
    wsum = 0.0
    vsum = 0.0
    for j in range(-2, 3):
        v = y + j * step
        if v < 0 or v >= h:
            continue
        for i in range(-2, 3):
            u = x + i * step
            if u < 0 or u >= w:
                continue
            wt = _b3(j) * _b3(i)
            if i != 0 or j != 0:
                dist = step * math.sqrt(i * i + j * j)
                wt *= _normal_weight(normal, y, x, v, u, sig[S_NORMAL])
                wt *= _depth_weight(z, grad, y, x, v, u, dist, sig[S_DEPTH])
                wt *= _albedo_weight(albedo, y, x, v, u, sig[S_ALBEDO])
                scale = sig[S_COLOR] * math.sqrt(max(min(guide_var[y, x], guide_var[v, u]), 0.0)) + 1e-10
                wt *= math.exp(-abs(lp - _luminance(src, v, u)) / scale)
            acc0 += wt * src[v, u, 0]
            acc1 += wt * src[v, u, 1]
            acc2 += wt * src[v, u, 2]
            wsum += wt
            vsum += wt * wt * var[v, u]
    out[y, x, 0] = acc0 / wsum
    out[y, x, 1] = acc1 / wsum
    out[y, x, 2] = acc2 / wsum
    out_var[y, x] = vsum / (wsum * wsum)


@kernel(parallel=True)
def atrous_pass(src, var, guide_var, albedo, normal, z, grad, step, sig, out, out_var):
    """One filter pass with holes of ``step`` pixels: ``src`` (H, W, 3) and its luminance
    variance ``var`` (H, W) -> ``out``, ``out_var``; ``guide_var``: the variance the colour
    weight uses (``var`` smoothed); ``sig``: the :data:`SIGMAS` values."""
    for y in prange(src.shape[0]):
        for x in range(src.shape[1]):
            _filter_pixel(src, var, guide_var, albedo, normal, z, grad, y, x, step, sig, out, out_var)


@kernel(parallel=True)
def depth_gradient(z, grad):
    """Per pixel the larger depth change to a finite 4-neighbour (0 where there is none)."""
    h, w = z.shape
    for y in prange(h):
        for x in range(w):
            g = 0.0
            if math.isfinite(z[y, x]):
                for dy, dx in ((0, 1), (0, -1), (1, 0), (-1, 0)):
                    v, u = y + dy, x + dx
                    if 0 <= v < h and 0 <= u < w and math.isfinite(z[v, u]):
                        g = max(g, abs(z[v, u] - z[y, x]))
            grad[y, x] = g


def smooth3(a):
    """``a`` (H, W) convolved with the 3 x 3 kernel [1 2 1]^T [1 2 1] / 16, edges repeated:
    a pixel whose samples all agreed by chance (variance 0) gets its neighbours' noise level."""
    p = np.pad(a, 1, mode="edge")
    rows = p[:-2] + 2.0 * p[1:-1] + p[2:]
    return np.ascontiguousarray((rows[:, :-2] + 2.0 * rows[:, 1:-1] + rows[:, 2:]) / 16.0)


def atrous(color, albedo, normal, depth, variance, passes=PASSES, **sigmas):
    """Denoise ``color`` (H, W, 3, linear) guided by ``albedo`` (H, W, 3), ``normal`` (H, W, 3),
    ``depth`` (H, W, inf on a miss) and ``variance`` ((H, W, 3) variance of each pixel's
    mean) -> (H, W, 3) float32. ``sigmas`` override :data:`SIGMAS` by name."""
    unknown = set(sigmas) - set(SIGMAS)
    if unknown:
        raise TypeError(f"unknown filter parameter(s): {', '.join(sorted(unknown))}")
    sig = np.array([sigmas.get(k, v) for k, v in SIGMAS.items()], np.float64)
    color = np.asarray(color, np.float64)
    albedo = np.ascontiguousarray(albedo, np.float64)
    normal = np.ascontiguousarray(normal, np.float64)
    z = np.ascontiguousarray(depth, np.float64)
    demod = np.where(albedo > MIN_ALBEDO, albedo, 1.0)
    src = np.ascontiguousarray(color / demod)
    lum = np.array([0.2126, 0.7152, 0.0722])
    var = np.ascontiguousarray((np.asarray(variance, np.float64) / demod ** 2) @ (lum * lum))
    grad = np.empty_like(z)
    depth_gradient(z, grad)
    out, out_var = np.empty_like(src), np.empty_like(var)
    for k in range(passes):
        atrous_pass(src, var, smooth3(var), albedo, normal, z, grad, 2 ** k, sig, out, out_var)
        src, out = out, src
        var, out_var = out_var, var
    return (src * demod).astype(np.float32)
