"""The integrator table: which kernels render a :class:`~raytrace.scene.ready.RenderScene`
with a given integrator, and with which arguments. Every renderer of the package (``render()``
and so the CLI and the Python API, the preview, animation, render-farm tiles, warm-up)
picks its kernels here and nowhere else.

``TABLE[name]`` (``name``: the resolved ``integrator`` setting, ``"path"`` or
``"whitted"``; :func:`raytrace.settings.resolve_settings` decides it from the scene and
the overrides) is an :class:`Integrator`:

- ``progressive``: True for the path tracer, whose passes (one or more samples per pixel
  into an accumulation buffer) the progressive loop of :mod:`raytrace.renderer` runs;
  False for Whitted, rendered in bands of rows, all of a pixel's samples at once;
- ``args(scene, s)``: the kernel arguments after the buffers, for resolved settings ``s``;
- ``passes(scene)``: the function that renders (a pass, or a band of rows);
- ``row_kernel()``: the row kernel it starts from (what warm-up compiles; one for scenes
  with media and without: Numba compiles it for each kind of ``media`` argument).

The path tracer's pass function is chosen by :func:`path_pass` alone (surfaces only, or
surfaces and media).
"""
import dataclasses
import functools
from typing import Callable

import numpy as np

from .camera import make_camera
from .kernels import path as pk
from .kernels.sampling import gaussian_inverse_cdf_table
from .layout import FILTERS, SAMPLERS, Settings


@dataclasses.dataclass(frozen=True)
class Integrator:
    """One row of :data:`TABLE` (module docstring)."""
    name: str
    progressive: bool
    args: Callable
    passes: Callable
    row_kernel: Callable


def kernel_settings(s):
    """The kernels' :class:`~raytrace.layout.Settings` record for resolved settings ``s``."""
    return Settings(width=s["width"], height=s["height"], spp=s["spp"], filter=FILTERS[s["filter"]],
                    seed=s["seed"], epsilon=float(s["epsilon"]), bounces=s["bounces"],
                    shadows=bool(s["shadows"]), max_depth=s["max_depth"], rr_depth=s["rr_depth"],
                    sampler=SAMPLERS[s["sampler"]], row_stride=pk.row_stride(s["height"]))


# ------------------------------------------------------------------------ path tracer
def path_pass(scene):
    """The path tracer's pass function for ``scene``, called as
    ``f(accum, nonfinite, counter, sample, *path_args(scene, s), rows=None, active=None,
    count=1, capped=None)``: ``kernels.path.render_pass`` with the scene's media bound
    (None without participating media or ``null`` surfaces: no media code is compiled)."""
    return functools.partial(pk.render_pass, media=scene.media)


def path_args(scene, s):
    """(bvh, geometry, lights, environment, camera, settings, filter table) of a path pass."""
    return (scene.accel, scene.geometry, scene.lights, scene.environment, make_camera(scene.data["camera"]),
            kernel_settings(s), gaussian_inverse_cdf_table())


def _path_row_kernel():
    return pk.path_rows


def add_pass(scene, s, buffers, sample, rows=None):
    """Add the path tracer's pass ``sample`` of ``scene`` to ``buffers``
    (``(accum, nonfinite, counter)`` from ``kernels.path.new_buffers(H, W)``): the pass the
    progressive loop makes (same kernel, same sums in the same order), for callers that
    change the scene between passes (motion blur). Passes 0 .. n-1 added in order make
    the image ``mean_and_variance(accum, n)``; ``rows=(row0, row1)`` adds the pass to
    those rows only (the same sums for them: render-farm tiles)."""
    accum, nonfinite, counter = buffers
    args = path_args(scene, s)
    band = None if rows is None else np.arange(rows[0], rows[1], dtype=np.int64)
    path_pass(scene)(accum, nonfinite, counter, sample, *args, rows=band)


# ---------------------------------------------------------------------------- Whitted
def whitted_args(scene, s, camera=None):
    """(bvh, geometry, camera, punctual lights, environment, settings, filter table, media)
    of ``kernels.whitted.render_rows(row0, row1, out, *args)``; ``camera``: a
    :class:`~raytrace.layout.Camera` instead of the scene's (motion blur's shifted one)."""
    cam = make_camera(scene.data["camera"]) if camera is None else camera
    return (scene.accel, scene.geometry, cam, scene.whitted_lights, scene.environment, kernel_settings(s),
            gaussian_inverse_cdf_table(), scene.media)


def whitted_rows(scene):
    """The Whitted integrator's band function, ``f(row0, row1, out, *whitted_args(scene, s))``."""
    from .kernels import whitted as wk
    return wk.render_rows


def _whitted_row_kernel():
    from .kernels.whitted import whitted_rows as rows
    return rows


TABLE = {
    # (through the module's names, so that a test can wrap path_pass)
    "path": Integrator("path", True, lambda scene, s: path_args(scene, s), lambda scene: path_pass(scene),
                       _path_row_kernel),
    "whitted": Integrator("whitted", False, lambda scene, s: whitted_args(scene, s), lambda scene: whitted_rows(scene),
                          _whitted_row_kernel),
}


def integrator(name):
    """``TABLE[name]``."""
    return TABLE[name]
