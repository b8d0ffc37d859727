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


# ---------------------------------------------------------------- scrambled Sobol points
# Owen-scrambled Sobol (0,2)-sequence points, hash-based (Burley 2020, "Practical
# hash-based Owen scrambling", with Vegdahl's 2021 permutation). A point is a function of
# (seed, pixel, sample, group) only, like rand01: no state, thread-count independent.
# Each 2-D group (pixel position, light sample, BSDF sample, ...) has its own scrambles
# and its own shuffle of the sample index, so groups are independent of each other while
# within a group the samples 0..2^k-1 of a pixel form a stratified (0, k, 2)-net.
_M32 = np.uint64(0xFFFFFFFF)
_R1, _R2, _R4, _R8, _R16 = (np.uint64(0x55555555), np.uint64(0x33333333), np.uint64(0x0F0F0F0F),
                            np.uint64(0x00FF00FF), np.uint64(0x0000FFFF))
_U1, _U2, _U4, _U8, _U16 = np.uint64(1), np.uint64(2), np.uint64(4), np.uint64(8), np.uint64(16)
_LK1, _LK2, _LK3 = np.uint64(0x3D20ADEA), np.uint64(0x05526C56), np.uint64(0x53A22864)
_K_GROUP = np.uint64(0xD6E8FEB86659FD93)
_INV32 = 1.0 / 4294967296.0          # 2**-32
_S32 = np.uint64(32)


@njit(cache=True, inline="always")
def reverse_bits32(x):
    """Bit reversal of a 32-bit value held in a uint64."""
    x = ((x >> _U1) & _R1) | ((x & _R1) << _U1)
    x = ((x >> _U2) & _R2) | ((x & _R2) << _U2)
    x = ((x >> _U4) & _R4) | ((x & _R4) << _U4)
    x = ((x >> _U8) & _R8) | ((x & _R8) << _U8)
    return ((x >> _U16) & _R16) | ((x & _R16) << _U16)


@njit(cache=True, inline="always")
def _lk_permutation(x, seed):
    """A 32-bit permutation in which each bit depends only on itself and lower bits."""
    x ^= (x * _LK1) & _M32
    x = (x + seed) & _M32
    x = (x * ((seed >> _U16) | _U1)) & _M32
    x ^= (x * _LK2) & _M32
    x ^= (x * _LK3) & _M32
    return x


@njit(cache=True, inline="always")
def owen_scramble(x, seed):
    """Nested uniform (Owen) scramble of the 32-bit binary fraction x."""
    return reverse_bits32(_lk_permutation(reverse_bits32(x), seed))


@njit(cache=True, inline="always")
def _pascal(x):
    """Second Sobol dimension from the first: x (= the bit-reversed index) times the
    generator matrix of x + 1 (Pascal's triangle mod 2), in five shift-xor steps."""
    x ^= (x & _R1) << _U1
    x ^= (x & _R2) << _U2
    x ^= (x & _R4) << _U4
    x ^= (x & _R8) << _U8
    x ^= (x & _R16) << _U16
    return x & _M32


@njit(cache=True, inline="always")
def sobol2(seed, pixel, sample, group):
    """Two uniform floats in [0, 1) (32-bit resolution): point ``sample`` of the
    scrambled Sobol sequence of (seed, pixel, group)."""
    key = mix64(np.uint64(seed) * _K_DIM + np.uint64(pixel) * _K_PIXEL + np.uint64(group) * _K_GROUP)
    index = owen_scramble(np.uint64(sample) & _M32, key & _M32)
    key2 = mix64(key)
    # dimension 0 is the bit-reversed index: its Owen scramble reverse(P(reverse(x0)))
    # is reverse(P(index))
    x0 = reverse_bits32(_lk_permutation(index, key2 & _M32))
    x1 = owen_scramble(_pascal(reverse_bits32(index)), key2 >> _S32)
    return float(x0) * _INV32, float(x1) * _INV32
