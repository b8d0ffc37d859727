"""Counter-based random numbers: a hash of (seed, pixel, sample, dimension).

No state is carried between calls, so every pixel's samples are the same whatever thread
renders it: an image depends only on its seed. The mixer is SplitMix64's finaliser.
"""
import numpy as np
from numba import njit

_K_PIXEL = np.uint64(0x9E3779B97F4A7C15)
_K_SAMPLE = np.uint64(0xBF58476D1CE4E5B9)
_K_DIM = np.uint64(0x94D049BB133111EB)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0   # 2**-53


@njit(cache=True, inline="always")
def mix64(z):
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True, inline="always")
def rand01(seed, pixel, sample, dim):
    """Uniform float64 in [0, 1) for the given counters (all non-negative integers)."""
    z = np.uint64(seed) * _K_DIM + np.uint64(pixel) * _K_PIXEL
    z = mix64(z) + np.uint64(sample) * _K_SAMPLE + np.uint64(dim)
    return float(mix64(z) >> _S11) * _INV53
