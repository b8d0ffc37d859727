"""Orthonormal frames around a unit vector (Numba, scalar)."""
import math

from raytrace.jit import helper


@helper
def orthonormal_basis(nx, ny, nz):
    """Two unit tangents (t, b) with (t, b, n) right-handed and orthonormal, for a unit n
    (Duff et al. 2017, "Building an orthonormal basis, revisited"; no branch on |n|)."""
    sign = math.copysign(1.0, nz)
    a = -1.0 / (sign + nz)
    b = nx * ny * a
    return (1.0 + sign * nx * nx * a, sign * b, -sign * nx), (b, sign + ny * ny * a, -ny)
