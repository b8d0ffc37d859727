"""cos and sin of a full turn's fraction, 2 pi u, without calling libm (Numba, scalar).

Every direction the path tracer samples has an azimuth ``phi = 2 pi u``; LLVM turns
``math.cos(phi), math.sin(phi)`` into one call of glibc's ``sincos``, which reduces any
double argument exactly and cost 8 % of a Cornell box render (``benchmarks/
profile_path.py``). Here the argument is known to be ``2 pi u`` with u in [0, 1], so the
reduction is exact and cheap: ``x = 4u`` splits into the nearest quarter turn ``q`` and
a remainder ``t = x - q`` in [-1/2, 1/2] (both exact), and ``r = t pi / 2`` (|r| <= pi/4)
goes through Taylor polynomials to degree 15 (sin) and 16 (cos), whose truncation error
there is below 5e-17. The quarter turn then rotates (cos r, sin r). Error against
``numpy.cos`` / ``numpy.sin`` of ``2 pi u``: a few 1e-16 (``tests/test_trig.py``).
"""
import math

from raytrace.jit import helper

HALF_PI = 0.5 * math.pi
# 1 / k! for the Taylor series: sin odd k = 3 .. 15, cos even k = 2 .. 16
S3, S5, S7, S9 = -1.0 / 6.0, 1.0 / 120.0, -1.0 / 5040.0, 1.0 / 362880.0
S11, S13, S15 = -1.0 / 39916800.0, 1.0 / 6227020800.0, -1.0 / 1307674368000.0
C2, C4, C6, C8 = -0.5, 1.0 / 24.0, -1.0 / 720.0, 1.0 / 40320.0
C10, C12, C14, C16 = -1.0 / 3628800.0, 1.0 / 479001600.0, -1.0 / 87178291200.0, 1.0 / 20922789888000.0


@helper
def cos_sin_2pi(u):
    """-> (cos(2 pi u), sin(2 pi u)) for u in [0, 1] (any finite u works, with less
    accuracy far from it)."""
    x = 4.0 * u
    q = math.floor(x + 0.5)
    r = (x - q) * HALF_PI
    r2 = r * r
    s = r + r * r2 * (S3 + r2 * (S5 + r2 * (S7 + r2 * (S9 + r2 * (S11 + r2 * (S13 + r2 * S15))))))
    c = 1.0 + r2 * (C2 + r2 * (C4 + r2 * (C6 + r2 * (C8 + r2 * (C10 + r2 * (C12 + r2 * (C14 + r2 * C16)))))))
    quarter = int(q) & 3
    if quarter == 0:
        return c, s
    if quarter == 1:
        return -s, c
    if quarter == 2:
        return -c, -s
    return s, -c
