"""Batched closest-hit queries: many rays in parallel, one ``closest_hit`` call per ray."""
import math

import numpy as np
from raytrace.jit import kernel
from numba import prange

from raytrace.accel.traverse import closest_hit

CHUNK = 256  # rays per parallel work item; keeps neighbouring (coherent) rays together


@kernel(parallel=True)
def _trace_closest_batch(acc, origins, dirs, tmin, tmax, t_out, kind_out, idx_out,
                         u_out, v_out):
    n = origins.shape[0]
    nchunks = (n + CHUNK - 1) // CHUNK
    for c in prange(nchunks):
        for i in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            t, k, idx, u, v = closest_hit(acc, origins[i, 0], origins[i, 1], origins[i, 2],
                                          dirs[i, 0], dirs[i, 1], dirs[i, 2], tmin, tmax)
            t_out[i] = t
            kind_out[i] = k
            idx_out[i] = idx
            u_out[i] = u
            v_out[i] = v


def trace_closest_batch(acc, origins, dirs, tmax=math.inf, tmin=0.0):
    """Closest hits of N rays ``origins[i] + t dirs[i]`` with ``tmin < t < tmax``.

    ``origins, dirs``: (N, 3) float64. Returns ``(t, kind, index, u, v)``, arrays of shape
    (N,): float64, int64, int64, float64, float64, as :func:`closest_hit` per ray. Runs in
    parallel (Numba ``prange`` over chunks of ``CHUNK`` consecutive rays), so keep coherent
    rays next to each other (tiles, not rows of a wide image).
    """
    o = np.ascontiguousarray(origins, dtype=np.float64).reshape(-1, 3)
    d = np.ascontiguousarray(dirs, dtype=np.float64).reshape(-1, 3)
    if o.shape != d.shape:
        raise ValueError(f"trace_closest_batch: origins {o.shape} and dirs {d.shape} differ")
    n = o.shape[0]
    t = np.empty(n)
    kind = np.empty(n, np.int64)
    idx = np.empty(n, np.int64)
    u = np.empty(n)
    v = np.empty(n)
    _trace_closest_batch(acc, o, d, float(tmin), float(tmax), t, kind, idx, u, v)
    return t, kind, idx, u, v
