"""The sampler of one path: its next 1-D and 2-D numbers (pbrt-v4's ``Sampler::Get1D`` /
``Get2D``, Mitsuba 3's ``sampler.next_1d()`` / ``next_2d()``), Numba.

A path's numbers are a function of (seed, pixel, sample, dimension) only, so an image
depends on the seed alone, never on the thread count. Dimensions are handed out in the
order the path asks for them, as 2-D groups (a 1-D number is the first coordinate of the
next group): group 0 is the position in the pixel, then the thin lens's point when the
camera has one, then the hero channel when the scene has media, then per vertex what the
path tracer draws there, in its order (``kernels.path``). Nothing numbers a group by hand.

- ``sobol`` (the default): group g of a pixel is an Owen-scrambled Sobol (0,2)-sequence
  of its own (``rng.sobol2``): the pixel's samples are stratified in every group. The
  camera groups use correlated multi-jittered points when spp is not a power of two
  (``rng.cmj2``: stratified into spp strata along each axis; :func:`camera_2d`).
- ``independent``: ``rng.rand01`` of dimensions 2g and 2g + 1; the pixel positions then
  lie on an n x n jittered grid when spp = n^2, its cells visited in the order of
  ``rng.grid_cell`` (every prefix of the samples is unbiased).

The independent *stream* of a path is for numbers whose count is not known in advance:
delta and ratio tracking's further collisions (``kernels.media``): ``rng.rand01`` of
dimension ``STREAM_DIMS + k`` for the k-th number, far above any group's. It ends at
``STREAM_CAP`` numbers (``layout.MAX_NULL_COLLISIONS`` two-number steps): the sampler
then says ``capped`` and the path must end (its sample counts as capped). The count
itself is the mark: a stream number costs one add, no test (a test there made the smoke
scene 5 % slower, ``benchmarks/bench_versions.py``).
"""
import numpy as np
from raytrace.jit import helper, unit

from ..layout import MAX_NULL_COLLISIONS, SOBOL
from .records import PathSampler
from .rng import cmj2, rand01, sobol2

STREAM_DIMS = np.int64(1 << 40)                 # rand01 dimensions of the stream (far above the groups')
STREAM_CAP = np.int64(2 * MAX_NULL_COLLISIONS)  # numbers a path may draw from its stream


@helper
def path_sampler(settings, pixel, sample):
    """The sampler of sample ``sample`` of pixel ``pixel`` (row-major index), at its first
    dimension."""
    return PathSampler(settings.sampler, settings.seed, pixel, sample, np.int64(0), np.int64(0))


@unit
def group_2d(kind, seed, pixel, sample, group):
    """The two numbers of 2-D group ``group`` of (seed, pixel, sample) for sampler ``kind``.

    Inlined by LLVM (``forceinline``), not by Numba: compiled once, it keeps the path
    kernel's Numba IR (and its compile time) small and runs as fast."""
    if kind == SOBOL:
        return sobol2(seed, pixel, sample, group)
    return rand01(seed, pixel, sample, 2 * group), rand01(seed, pixel, sample, 2 * group + 1)


@helper
def _advanced(s, groups):
    return PathSampler(s.kind, s.seed, s.pixel, s.sample, s.dim + groups, s.stream)


@helper
def skipped_2d(s):
    """The sampler after one 2-D group that the caller drew itself (or not at all: a
    render of one sample per pixel takes the pixel centre)."""
    return _advanced(s, 1)


@helper
def next_2d(s):
    """-> (u1, u2, the sampler after them): the next 2-D group's numbers."""
    u1, u2 = group_2d(s.kind, s.seed, s.pixel, s.sample, s.dim)
    return u1, u2, _advanced(s, 1)


@helper
def next_1d(s):
    """-> (u, the sampler after it): the first number of the next 2-D group."""
    u = group_2d(s.kind, s.seed, s.pixel, s.sample, s.dim)[0]
    return u, _advanced(s, 1)


@helper
def camera_2d(s, spp):
    """-> (u1, u2, the sampler after them) for a camera group (pixel position, lens point)
    of a render of ``spp`` samples per pixel: with the Sobol sampler and spp not a power
    of two, correlated multi-jittered points, stratified into spp strata along each axis
    (the first 20 Sobol points, 16 + 4, are not, and the edges of bright emitters in view
    dominate an image's error); else :func:`next_2d`."""
    if s.kind == SOBOL and spp & (spp - 1) != 0:
        u1, u2 = cmj2(s.seed, s.pixel, s.sample, s.dim, spp)
        return u1, u2, _advanced(s, 1)
    return next_2d(s)


@helper
def stream_1d(s):
    """-> (u, the sampler after it): the next number of the path's independent stream;
    once ``STREAM_CAP`` numbers are drawn the sampler is ``capped``."""
    u = rand01(s.seed, s.pixel, s.sample, STREAM_DIMS + s.stream)
    return u, PathSampler(s.kind, s.seed, s.pixel, s.sample, s.dim, s.stream + 1)


@helper
def capped(s):
    """Whether the path reached the step cap of its stream (it must end)."""
    return s.stream >= STREAM_CAP
