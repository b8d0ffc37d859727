"""Motion blur: a frame rendered over a shutter interval, one scene time per pass.

    "animation": {"start": 0, "end": 2, "fps": 24, "shutter": [-0.25, 0.25], ...}

    image = raytrace.render_at(scene, 0.5)               # the frame at t = 0.5 s, blurred
    image = render_interval(anim, 0.49, 0.51, spp=16)     # over any interval of scene time

Conventions:

- ``shutter: [open, close]`` is in **frames** (units of the frame interval ``1/fps``)
  relative to the frame's time: frame k, at ``t_k``, is exposed over the scene times
  ``[t_k + open/fps, t_k + close/fps]``, with ``-1 <= open <= close <= 1``.
  ``[-0.25, 0.25]`` is film's 180-degree shutter centred on the frame, ``[0, 0.5]`` the
  same opening at the frame's time. No shutter, or one of zero length, is no blur: the
  still at ``t_k + open/fps``. Being in frames, the blur keeps its look under ``--fps``.
- Pass ``s`` (``s = 0 .. spp-1``, the path tracer's sample index) renders the whole image
  with the static scene at one time (:func:`pass_times`)
  ``t_s = t_open + (pi(s) + u_s) / spp * (t_close - t_open)``: one time in each
  ``1/spp`` of the shutter (stratified), ``pi`` a permutation of ``0 .. spp-1`` and
  ``u_s`` in [0, 1), both hashes of the seed and ``s`` (SplitMix64's finaliser, the mixer
  of :mod:`raytrace.kernels.rng`): the image depends on the seed, never on the thread
  count or the wall time. The strata are shuffled so that a pass's time is unrelated to
  where in the pixel its sample lies (Whitted's n x n grid goes row by row with ``s``).
- Path tracer: pass ``s`` is the renderer's own pass ``s`` on ``scene_at(t_s)``: a
  whole frame, or a band of rows, runs the renderer's progressive loop with a scene per
  pass (:func:`raytrace.renderer.progressive`, ``scene_at``, ``rows``: same sample index,
  the sums in the same order). The image converges to the average over the
  shutter and a zero-length shutter gives the still bit for bit.
- Whitted: its integrator makes a pixel's ``spp`` samples in one call, so a blurred
  frame is ``spp`` one-sample renders instead, pass ``s`` with the camera's pixel grid
  shifted by sub-pixel offset ``s`` (stratified on an n x n grid when ``spp = n^2`` and
  warped by the pixel filter, as Whitted's supersampling does, but one offset per pass
  for every pixel: accumulation-buffer anti-aliasing) and a lens sample of its own,
  averaged in float64. A zero-length shutter renders the still (Whitted's own
  supersampling, per-pixel offsets).
- A band of rows of a blurred frame (render-farm tiles, :func:`render_band_at`) is
  bit-identical to the same rows of the whole blurred frame: same passes, same times.

Cost: every pass calls ``scene_at(t_s)`` (geometry and BVH built again when an object
moves), derives the lights again (the path tracer's light distribution; Whitted's shadow
maps) and renders one sample per pixel: a blurred frame costs ``spp`` scene builds on top
of the still's rendering. The blur is made of ``spp`` instants: with too few passes for
the distance travelled it shows as separate copies of the moving object (strobing)
rather than noise.
"""
import math
import time

import numpy as np

from .. import integrators
from .. import renderer as rmod
from ..camera import make_camera
from ..errors import SceneError
from ..image import RenderedImage, RenderInfo
from ..kernels.rng import mix64
from ..kernels.sampling import gaussian_inverse_cdf_table, warp
from ..layout import FILTERS, PERSPECTIVE
from ..scene.animation import check_shutter
from . import tiles as tiles_mod
from .scene_at import animated

__all__ = ["frame_shutter", "pass_times", "render_at", "render_band_at", "render_interval",
           "shutter_interval"]

# ------------------------------------------------------------- counter-based hashing
_MASK = (1 << 64) - 1
_K_SEED = 0x94D049BB133111EB
_K_SAMPLE = 0xBF58476D1CE4E5B9
_STREAM = 0x6D6F74696F6E626C          # "motionbl": a stream of its own, apart from the pixels'
_DIM_TIME, _DIM_SHUFFLE, _DIM_X, _DIM_Y, _DIM_LENS = range(5)


def _mix64(z):
    """SplitMix64's finaliser on a Python int (the kernels' ``rng.mix64``)."""
    return int(mix64(np.uint64(z)))


def _hash(seed, s, dim):
    z = _mix64((int(seed) * _K_SEED + _STREAM) & _MASK)
    return _mix64((z + int(s) * _K_SAMPLE + dim) & _MASK)


def _rand01(seed, s, dim):
    """Uniform float in [0, 1) from (seed, pass, dimension)."""
    return (_hash(seed, s, dim) >> 11) * (1.0 / 9007199254740992.0)


def pass_times(t_open, t_close, spp, seed):
    """The scene time of each pass: (spp,) float64, ``t_s = t_open + (pi(s) + u_s) / spp *
    (t_close - t_open)`` (see the module docstring). All equal ``t_open`` when the
    interval has zero length."""
    perm = list(range(spp))
    for i in range(spp - 1, 0, -1):                  # Fisher-Yates, hashed
        j = min(int(_rand01(seed, i, _DIM_SHUFFLE) * (i + 1)), i)
        perm[i], perm[j] = perm[j], perm[i]
    u = np.array([_rand01(seed, s, _DIM_TIME) for s in range(spp)])
    frac = (np.asarray(perm, np.float64) + u) / spp
    return t_open + frac * (t_close - t_open)


# ----------------------------------------------------------------------- shutters
def frame_shutter(scene, shutter=None, option="shutter"):
    """(open, close) in frames: ``shutter`` when given (checked: SceneError naming
    ``option``), else the scene's ``animation.shutter`` (checked with the scene), else
    (0.0, 0.0)."""
    if shutter is not None:
        return check_shutter(shutter, option)
    data = scene.data.get("animation") or {}
    lo, hi = data.get("shutter", (0.0, 0.0))
    return float(lo), float(hi)


def shutter_interval(anim, t, shutter):
    """Scene times (t_open, t_close) of the frame at time ``t`` with ``shutter`` (frames)."""
    return t + shutter[0] / anim.fps, t + shutter[1] / anim.fps


# ----------------------------------------------------------------------- rendering
def render_at(scene, t, shutter=None, callback=None, **overrides):
    """The frame at scene time ``t`` as the camera records it -> RenderedImage: motion
    blurred over ``shutter`` (``(open, close)`` in frames; None: the scene's
    ``animation.shutter``), the still at ``t`` without one (or with a zero-length one).
    ``scene``: an AnimatedScene, a loaded Scene, a path or a dict. ``callback(done,
    total)`` after each pass of a blurred frame. Overrides as for :func:`raytrace.render`."""
    anim = animated(scene)
    lo, hi = frame_shutter(anim, shutter)
    t = float(t)
    if lo == hi:
        return rmod.render(anim.scene_at(t + lo / anim.fps), callback=callback, **overrides)
    t0, t1 = shutter_interval(anim, t, (lo, hi))
    return render_interval(anim, t0, t1, callback=callback, **overrides)


def render_band_at(scene, t, row0, row1, shutter=None, **overrides):
    """Rows [row0, row1) of :func:`render_at` -> ((row1 - row0, W, 3) float32, samples
    dropped as non-finite), bit-identical to those rows of the whole frame."""
    anim = animated(scene)
    lo, hi = frame_shutter(anim, shutter)
    t = float(t)
    if lo == hi:
        return tiles_mod.render_band(anim.scene_at(t + lo / anim.fps), row0, row1, **overrides)
    t0, t1 = shutter_interval(anim, t, (lo, hi))
    image, bad, _ = _render(anim, t0, t1, (row0, row1), overrides, None)
    return image, bad


def render_interval(scene, t_open, t_close, callback=None, **overrides):
    """The image averaged over the scene times [t_open, t_close] (seconds) -> RenderedImage
    (one time per pass, see the module docstring; ``t_open == t_close`` runs the same
    passes at one time: the still, bit for bit, for the path tracer)."""
    anim = animated(scene)
    start = time.perf_counter()
    image, bad, s = _render(anim, t_open, t_close, None, overrides, callback)
    info = RenderInfo(integrator=s["integrator"], width=s["width"], height=s["height"], spp=s["spp"],
                      spp_requested=s["spp"], seed=s["seed"], nonfinite=bad,
                      seconds=time.perf_counter() - start)
    return RenderedImage(image, info)


def _render(anim, t_open, t_close, rows, overrides, callback):
    """-> (float32 image of ``rows`` (all when None), non-finite samples, settings)."""
    t_open, t_close = float(t_open), float(t_close)
    if not (math.isfinite(t_open) and math.isfinite(t_close) and t_open <= t_close):
        raise SceneError("shutter", f"the interval [{t_open:g}, {t_close:g}] s must be finite "
                                    "with open <= close")
    s = rmod.resolve_settings(anim, overrides)
    h = s["height"]
    row0, row1 = rows if rows is not None else (0, h)
    if not 0 <= row0 < row1 <= h:
        raise ValueError(f"rows [{row0}, {row1}) are not inside the image's {h} rows")
    times = pass_times(t_open, t_close, s["spp"], s["seed"])
    passes = _path_passes if integrators.integrator(s["integrator"]).progressive else _whitted_passes
    image, bad = passes(anim, s, times, rows, callback)
    return image, bad, s


def _scenes(anim, times):
    """The scene at each pass time (they share one environment: ``anim.scene_at`` builds
    it once)."""
    for t in times:
        yield anim.scene_at(t)


def _path_passes(anim, s, times, rows, callback):
    """The path tracer's passes, pass ``k`` on the scene at ``times[k]``, through the
    renderer's progressive loop (:func:`raytrace.renderer.progressive`): the whole frame,
    or the band of ``rows`` (as render-farm tiles do)."""
    first = anim.scene_at(times[0])
    return rmod.uniform_rows(first, s, rows, callback,
                             scene_at=lambda k: first if k == 0 else anim.scene_at(times[k]))


def pixel_offset(s, sample, table=None):
    """Whitted pass ``sample``'s sub-pixel offset (fx, fy) in pixels: (0, 0) for one
    sample per pixel, else jittered (on an n x n grid when spp = n^2) and warped by the
    filter, as the Whitted kernel places a pixel's samples."""
    spp, seed = s["spp"], s["seed"]
    if spp == 1:
        return 0.0, 0.0
    u1, u2 = _rand01(seed, sample, _DIM_X), _rand01(seed, sample, _DIM_Y)
    n = math.isqrt(spp)
    if n * n == spp:
        u1, u2 = (sample % n + u1) / n, (sample // n + u2) / n
    table = gaussian_inverse_cdf_table() if table is None else table
    kind = FILTERS[s["filter"]]
    return float(warp(u1, kind, table)), float(warp(u2, kind, table))


def shifted_camera(cam, fx, fy, width, height):
    """``cam`` (a :class:`~raytrace.layout.Camera`) whose pixel (x, y) is the original's
    (x + fx, y + fy): the image plane moved in its own plane (perspective: the direction
    to the image centre, still at distance 1 along the view axis, so the plane in focus
    is unchanged; orthographic: the eye)."""
    a = 2.0 * fx / width * cam.half_height * (width / height)
    b = -2.0 * fy / height * cam.half_height
    dx = a * cam.right_x + b * cam.up_x
    dy = a * cam.right_y + b * cam.up_y
    dz = a * cam.right_z + b * cam.up_z
    if cam.kind == PERSPECTIVE:
        return cam._replace(forward_x=cam.forward_x + dx, forward_y=cam.forward_y + dy,
                            forward_z=cam.forward_z + dz)
    return cam._replace(eye_x=cam.eye_x + dx, eye_y=cam.eye_y + dy, eye_z=cam.eye_z + dz)


def _whitted_passes(anim, s, times, rows, callback):
    h, w, spp = s["height"], s["width"], s["spp"]
    row0, row1 = rows if rows is not None else (0, h)
    table = gaussian_inverse_cdf_table()
    whitted = integrators.integrator("whitted")
    total = np.zeros((row1 - row0, w, 3))
    out = np.empty((row1 - row0, w, 3), np.float32)
    for sample, scene in enumerate(_scenes(anim, times)):
        fx, fy = pixel_offset(s, sample, table)
        cam = shifted_camera(make_camera(scene.data["camera"]), fx, fy, w, h)
        one = dict(s, spp=1, seed=_hash(s["seed"], sample, _DIM_LENS) >> 1)
        whitted.passes(scene)(row0, row1, out, *integrators.whitted_args(scene, one, cam))
        total += out
        if callback is not None:
            callback(sample + 1, spp)
    return (total / spp).astype(np.float32), 0
