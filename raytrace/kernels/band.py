"""A band of image rows of the path tracer: one tile of a still split over a render farm.

:func:`render_band_pass` is :func:`raytrace.kernels.path.render_pass` restricted to the
image rows ``row0 .. row1 - 1``. It runs the same row kernel on the same full-image
buffer layout, so every pixel of the band gets exactly the samples (and the same
floating-point sums, in the same order) as in a render of the whole image: a band is
bit-identical to those rows of the full render. (The Whitted integrator needs no such
helper: :func:`raytrace.kernels.whitted.render_rows` already renders a row range.)
"""
import numpy as np

from .path import render_pass


def render_band_pass(accum, nonfinite, counter, sample, row0, row1, bvh, geo, lights, env, cam,
                     settings, filter_table):
    """Add sample ``sample`` of every pixel of image rows [row0, row1) to ``accum``.

    ``accum`` ((H, W, 6) float64) and ``nonfinite`` ((H, W) int64) have the full image's
    shape, as for ``render_pass``, and only the band's rows are touched: allocate them
    with ``np.zeros``, whose pages cost memory only once written. ``counter[0]`` is set to
    ``sample + 1`` when the pass is complete."""
    render_pass(accum, nonfinite, counter, sample, bvh, geo, lights, env, cam, settings, filter_table,
                rows=np.arange(row0, row1, dtype=np.int64))
