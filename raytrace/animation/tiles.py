"""Image tiles: render a band of rows of a frame, bit-identical to the same rows of the
whole render, so that one big still can be split into tasks of a render farm.

A tile is the full image's camera cropped to rows ``row0 .. row1 - 1``: every pixel keeps
its index in the full image, hence its random numbers and its samples (the path
tracer's passes are accumulated in the same order, the Whitted integrator's pixels are
independent). Tiles are full-width bands: both integrators already work row by row.
"""
import numpy as np

from .. import integrators
from .. import renderer as rmod


def bands(height, count):
    """``count`` row ranges [(row0, row1), ...] covering ``height`` rows, as even as they
    can be (no more bands than rows)."""
    count = max(1, min(int(count), height))
    edges = [round(k * height / count) for k in range(count + 1)]
    return list(zip(edges[:-1], edges[1:]))


def render_band(scene, row0, row1, **overrides):
    """Rows [row0, row1) of ``raytrace.render(scene, **overrides)`` -> ((row1 - row0, W, 3)
    float32 linear radiance, samples dropped as non-finite). Same overrides as render."""
    s = rmod.resolve_settings(scene, overrides)
    if not 0 <= row0 < row1 <= s["height"]:
        raise ValueError(f"rows [{row0}, {row1}) are not inside the image's {s['height']} rows")
    integrator = integrators.integrator(s["integrator"])
    if not integrator.progressive:
        out = np.zeros((row1 - row0, s["width"], 3), np.float32)
        integrator.passes(scene)(row0, row1, out, *integrator.args(scene, s))
        return out, 0
    return rmod.uniform_rows(scene, s, rows=(row0, row1))
