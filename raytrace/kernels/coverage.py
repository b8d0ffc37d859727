"""Partly transparent surfaces: whether a hit surface is there for a ray (Numba, scalar).

A material row with a ``cutout`` texture (``raytrace.layout.MATERIAL``) has a coverage
``a`` in [0, 1] at each point: the red channel of that texture at the hit's texture
coordinates (glTF: base colour alpha times the texture's alpha, bilinear). Then

- ``cutoff >= 0`` (glTF ``MASK``): the surface is there where ``a >= cutoff``, a hole
  elsewhere, for every ray alike (camera, bounce and shadow rays);
- ``cutoff < 0`` (glTF ``BLEND``, stochastic transparency): the surface is there with
  probability ``a``, drawn per ray and primitive from a hash of the ray's origin and
  direction. Averaged over a pixel's samples, the pixel converges to ``a`` times the
  surface's radiance plus ``1 - a`` times what lies behind it (alpha blending "over"),
  and shadows are ``a``-dense. The draw is a function of the ray only, so an image still
  depends on the seed alone.

The scene queries (``raytrace.kernels.intersect``) step past hits that are not there.
"""
import math

import numpy as np
from raytrace.jit import helper

from ..layout import M_CUTOFF, M_CUTOUT
from ..textures import texture_rgb
from .rng import mix64
from .surface import hit_material, hit_uv

_BIAS = 4611686018427387904.0       # 2^62: shifts the scaled coordinates to positive integers
_LIMIT = 4.0e18
_INV53 = 1.0 / 9007199254740992.0   # 2^-53
_S11 = np.uint64(11)


@helper
def _key(v, scale):
    """A coordinate as a non-negative integer (``v * scale`` rounded, clamped)."""
    return np.uint64(np.int64(min(max(v * scale, -_LIMIT), _LIMIT) + _BIAS))


@helper
def ray_uniform(ox, oy, oz, dx, dy, dz, index):
    """A uniform number in [0, 1) drawn from the ray and a primitive index (no state)."""
    z = mix64(_key(ox, 1048576.0) ^ np.uint64(index))
    z = mix64(z ^ _key(oy, 1048576.0))
    z = mix64(z ^ _key(oz, 1048576.0))
    z = mix64(z ^ _key(dx, 1099511627776.0))
    z = mix64(z ^ _key(dy, 1099511627776.0))
    z = mix64(z ^ _key(dz, 1099511627776.0))
    return float(z >> _S11) * _INV53


@helper
def covered(geo, hit, ox, oy, oz, dx, dy, dz):
    """Whether the surface of ``hit`` (not a miss) is there for the ray o + t d."""
    mats = geo.materials
    mat = hit_material(geo, hit)
    tex = int(mats[mat, M_CUTOUT])
    if tex < 0:
        return True
    tu, tv = hit_uv(geo, hit, ox + hit.t * dx, oy + hit.t * dy, oz + hit.t * dz)
    a, _, _ = texture_rgb(geo.tex_info, geo.tex_texels, tex, tu, tv)
    cutoff = mats[mat, M_CUTOFF]
    if cutoff >= 0.0:
        return a >= cutoff
    if not math.isfinite(a):
        return True
    return ray_uniform(ox, oy, oz, dx, dy, dz, hit.index) < a
