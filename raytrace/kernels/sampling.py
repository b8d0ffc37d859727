"""Pixel sample positions: stratified jitter warped by the reconstruction filter.

Samples are drawn *from* the filter (filter importance sampling), so every sample has
weight 1 and a pixel is the plain mean of its samples. Filters are separable:
box (radius 0.5 px), tent (radius 1 px), Gaussian (sigma 0.5 px, truncated at 1.5 px;
sigma 0.5 px is the course's 5-tap kernel on 3x3 sub-pixels).
"""
import math

import numpy as np
from raytrace.jit import helper

from ..layout import BOX, FILTERS, GAUSSIAN, TENT  # noqa: F401  (FILTERS: names -> kinds)

GAUSS_SIGMA, GAUSS_RADIUS = 0.5, 1.5
_TABLE_SIZE = 1025


def gaussian_inverse_cdf_table(n=_TABLE_SIZE):
    """Inverse CDF of the truncated Gaussian on [-radius, radius], tabulated on u in [0, 1]."""
    x = np.linspace(-GAUSS_RADIUS, GAUSS_RADIUS, 20001)
    pdf = np.exp(-0.5 * (x / GAUSS_SIGMA) ** 2) - math.exp(-0.5 * (GAUSS_RADIUS / GAUSS_SIGMA) ** 2)
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (pdf[1:] + pdf[:-1]) * np.diff(x))])
    cdf /= cdf[-1]
    return np.interp(np.linspace(0.0, 1.0, n), cdf, x)


@helper
def warp(u, kind, table):
    """Map u in [0, 1) to a pixel offset distributed like the filter."""
    if kind == BOX:
        return u - 0.5
    if kind == TENT:
        if u < 0.5:
            return -1.0 + math.sqrt(2.0 * u)
        return 1.0 - math.sqrt(2.0 * (1.0 - u))
    f = u * (table.shape[0] - 1)
    i = min(int(f), table.shape[0] - 2)
    a = f - i
    return table[i] * (1.0 - a) + table[i + 1] * a
