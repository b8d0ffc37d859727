"""Counter-based random numbers: a hash of (seed, pixel, sample, dimension).

No state is carried between calls, so every pixel's samples are the same whatever thread
renders it: an image depends only on its seed. The mixer is SplitMix64's finaliser.
"""
import numpy as np
from raytrace.jit import helper

_K_PIXEL = np.uint64(0x9E3779B97F4A7C15)
_K_SAMPLE = np.uint64(0xBF58476D1CE4E5B9)
_K_DIM = np.uint64(0x94D049BB133111EB)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0   # 2**-53


@helper
def mix64(z):
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@helper
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
_Q1, _Q2, _Q4, _Q8, _Q16 = (np.uint64(0xAAAAAAAA), np.uint64(0xCCCCCCCC), np.uint64(0xF0F0F0F0),
                            np.uint64(0xFF00FF00), np.uint64(0xFFFF0000))   # reverse_bits32 of _R1 .. _R16
_LK1, _LK2, _LK3 = np.uint64(0x3D20ADEA), np.uint64(0x05526C56), np.uint64(0x53A22864)
_K_GROUP = np.uint64(0xD6E8FEB86659FD93)
_INV32 = 1.0 / 4294967296.0          # 2**-32
_S32 = np.uint64(32)


@helper
def reverse_bits32(x):
    """Bit reversal of a 32-bit value held in a uint64."""
    x = ((x >> _U1) & _R1) | ((x & _R1) << _U1)
    x = ((x >> _U2) & _R2) | ((x & _R2) << _U2)
    x = ((x >> _U4) & _R4) | ((x & _R4) << _U4)
    x = ((x >> _U8) & _R8) | ((x & _R8) << _U8)
    return ((x >> _U16) & _R16) | ((x & _R16) << _U16)


@helper
def _lk_permutation(x, seed):
    """A 32-bit permutation in which each bit depends only on itself and lower bits."""
    x ^= (x * _LK1) & _M32
    x = (x + seed) & _M32
    x = (x * ((seed >> _U16) | _U1)) & _M32
    x ^= (x * _LK2) & _M32
    x ^= (x * _LK3) & _M32
    return x


@helper
def owen_scramble(x, seed):
    """Nested uniform (Owen) scramble of the 32-bit binary fraction x."""
    return reverse_bits32(_lk_permutation(reverse_bits32(x), seed))


@helper
def group_key(seed, pixel, group):
    """The 64-bit hash of (seed, pixel, group) that keys a 2-D group's scrambles and
    shuffles (``sobol2``, ``cmj2``)."""
    return mix64(np.uint64(seed) * _K_DIM + np.uint64(pixel) * _K_PIXEL + np.uint64(group) * _K_GROUP)


@helper
def _pascal_reversed(y):
    """Second Sobol dimension from the first, both bit-reversed: with y = the sample
    index, the bits of the result reversed are x1 as a binary fraction. The generator
    matrix of x1 is Pascal's triangle mod 2; on the fraction x0 = reverse(y) it is five
    shift-xor steps x ^= (x & R) << k, and reversed each becomes y ^= (y & reverse(R)) >> k."""
    y ^= (y & _Q1) >> _U1
    y ^= (y & _Q2) >> _U2
    y ^= (y & _Q4) >> _U4
    y ^= (y & _Q8) >> _U8
    y ^= (y & _Q16) >> _U16
    return y


@helper
def sobol2(seed, pixel, sample, group):
    """Two uniform floats in [0, 1) (32-bit resolution): point ``sample`` of the
    scrambled Sobol sequence of (seed, pixel, group).

    With rev = 32-bit bit reversal and P_k = ``_lk_permutation`` with key k: the
    shuffled index is ``index = owen_scramble(sample) = rev(P_a(rev(sample)))``
    (Owen-scrambling the index keeps every aligned block of 2^k samples a block);
    Sobol's dimension 0 is ``rev(index)`` and its Owen scramble ``rev(P_b(index))``;
    dimension 1, reversed, is ``_pascal_reversed(index)`` and its Owen scramble
    ``rev(P_c(_pascal_reversed(index)))``: four reversals in all."""
    key = group_key(seed, pixel, group)
    index = owen_scramble(np.uint64(sample) & _M32, key & _M32)
    key2 = mix64(key)
    x0 = reverse_bits32(_lk_permutation(index, key2 & _M32))
    x1 = reverse_bits32(_lk_permutation(_pascal_reversed(index), key2 >> _S32))
    return float(x0) * _INV32, float(x1) * _INV32


# ---------------------------------------------------------------- correlated multi-jitter
# Kensler 2013, "Correlated Multi-Jittered Sampling" (Pixar technical memo 13-01; the
# pattern of Mitsuba 3's ``multijitter`` sampler), in the memo's form for any count: the
# ``count`` samples of a pixel lie one per cell of an m x n grid (count = m n, m the
# divisor of count nearest below its square root: ``grid_columns``) and both x and y are
# stratified into ``count`` strata. So for any count, not only a power of two, an edge
# parallel to an axis is integrated with an error below 1 / count of its step (the first
# ``count`` points of a Sobol sequence, 16 + 4 for 20, allow nearly twice that). Hash-
# based like sobol2: a point is a function of (seed, pixel, sample, group, count).
# Departures from the memo, none of which changes what is stratified: m divides count (the
# memo also allows m n > count, leaving x stratified into m n strata, not count) and the
# jitter comes from one SplitMix64 hash instead of two 32-bit ones. About three times the
# cost of sobol2 (70 ns against 20-25 ns here), so the path tracer uses it once per path, for
# the camera groups.
_KP = (np.uint64(0xE170893D), np.uint64(0x0929EB3F), np.uint64(0x6935FA69), np.uint64(0x74DCB303),
       np.uint64(0x9E501CC3), np.uint64(0xC860A3DF))
_KS = (np.uint64(0x51633E2D), np.uint64(0x68BC21EB), np.uint64(0x02E5BE93))
_U5, _U11, _U23, _U27 = np.uint64(5), np.uint64(11), np.uint64(23), np.uint64(27)


@helper
def kensler_permute(i, count, p):
    """Element i (a uint64 below ``count``) of a pseudo-random permutation of
    0 .. count-1 chosen by the 32-bit key p: Kensler's hash, a bijection on the smallest
    power of two >= count, applied until the value falls below ``count`` (cycle walking),
    then rotated by p (without the rotation the hash alone favours some outputs for
    small counts: ``test_rng`` sees it)."""
    w = np.uint64(count - 1)
    w |= w >> _U1
    w |= w >> _U2
    w |= w >> _U4
    w |= w >> _U8
    w |= w >> _U16
    while True:
        i ^= p
        i = (i * _KP[0]) & _M32
        i ^= p >> _U16
        i ^= (i & w) >> _U4
        i ^= p >> _U8
        i = (i * _KP[1]) & _M32
        i ^= p >> _U23
        i ^= (i & w) >> _U1
        i = (i * ((p >> _U27) | _U1)) & _M32
        i = (i * _KP[2]) & _M32
        i ^= (i & w) >> _U11
        i = (i * _KP[3]) & _M32
        i ^= (i & w) >> _U2
        i = (i * _KP[4]) & _M32
        i ^= (i & w) >> _U2
        i = (i * _KP[5]) & _M32
        i &= w
        i ^= i >> _U5
        if i < np.uint64(count):
            return (i + p) % np.uint64(count)


@helper
def grid_columns(count):
    """m for the m x n grid of ``count`` = m n points: the largest divisor of count in
    floor(sqrt(count)) - 3 .. floor(sqrt(count)), else 1 (then the points are a Latin
    hypercube: still one per stratum along each axis)."""
    m0 = int(np.sqrt(float(count)))
    for m in range(m0, max(m0 - 4, 1), -1):
        if count % m == 0:
            return m
    return 1


@helper
def cmj2(seed, pixel, sample, group, count):
    """Two uniform floats in [0, 1): point ``sample`` (0 <= sample < count) of the
    correlated multi-jittered pattern of ``count`` points of (seed, pixel, group)."""
    p = group_key(seed, pixel, group) & _M32
    m = grid_columns(count)
    n = count // m
    s = kensler_permute(np.uint64(sample), count, (p * _KS[0]) & _M32)
    sm = np.uint64(m)
    sx = kensler_permute(s % sm, m, (p * _KS[1]) & _M32)
    sy = kensler_permute(s // sm, n, (p * _KS[2]) & _M32)
    j = mix64((np.uint64(p) << _S32) ^ s)
    jx, jy = float(j >> _S32) * _INV32, float(j & _M32) * _INV32
    return (float(sx) + (float(sy) + jx) / n) / m, (float(s) + jy) / count


# ---------------------------------------------------------------- jittered grid order
# The order in which a pixel's samples visit the cells of an n x n jittered grid (the
# independent sampler's and the Whitted integrator's pixel positions when spp = n^2).
# Row-major order (sample k in cell (k mod n, k div n)) put the first n samples of every
# pixel in its top 1/n strip: any image made of a prefix of the samples (an adaptive
# render, a time budget, a partial image, the live preview) was biased. Here sample
# k = a n + b (round a, b = 0 .. n-1) lies in column P(b), row Q((b + R(a)) mod n), with
# P, Q, R permutations of 0 .. n-1 drawn per pixel (``kensler_permute``): each round of n
# samples has one sample in every row and every column (a Latin square over the rounds:
# all n^2 cells are visited once), and each sample's cell is uniform over the grid, so
# the mean of any prefix is unbiased.
_GRID_GROUP = np.uint64(0x6A09E667)      # the key of the permutations (not a Sobol group)


@helper
def grid_cell(seed, pixel, sample, n):
    """(row, column) of the cell of sample ``sample`` (< n^2) of (seed, pixel) on its
    n x n jittered grid, in the order above (one hash, three short permutations, one
    integer division: this runs once per camera sample)."""
    p = group_key(seed, pixel, _GRID_GROUP) & _M32
    un = np.uint64(n)
    k = np.uint64(sample)
    a = k // un
    b = k - a * un
    column = kensler_permute(b, n, (p * _KS[0]) & _M32)
    shifted = b + kensler_permute(a, n, (p * _KS[1]) & _M32)
    if shifted >= un:
        shifted -= un
    row = kensler_permute(shifted, n, (p * _KS[2]) & _M32)
    return np.int64(row), np.int64(column)
