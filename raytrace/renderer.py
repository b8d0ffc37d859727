"""Rendering a loaded scene: settings + overrides -> kernel calls -> float image.

Two integrators, chosen by the scene's ``integrator.type`` (or the ``integrator``
override): ``whitted`` renders in bands of rows so that a progress bar can follow;
``path`` renders progressively, one sample per pixel per pass over the whole image, into
an accumulation buffer, so that it can stop cleanly between passes (Ctrl-C, or a
``callback`` raising ``KeyboardInterrupt``) and return the image of the passes done.
Results are :class:`~raytrace.image.RenderedImage`: (H, W, 3) float32 linear radiance,
row 0 at the top, with ``info`` on how they were made.

The scene arrives ready (:class:`~raytrace.scene.ready.RenderScene`: lights,
environment, shadow maps built at load); which kernels run and with which arguments is
:mod:`raytrace.integrators`' table. The path tracer's progressive loop here
(:func:`progressive`) is the one every progressive render goes through: ``render()`` (the
CLI, the Python API, animation frames), the live preview (:mod:`raytrace.view.session`)
and motion-blurred frames (a scene per pass, :mod:`raytrace.animation.motion_blur`).
"""
import contextlib
import math
import signal
import sys
import threading
import time

import numpy as np

from . import integrators
from .integrators import kernel_settings
from .jit import warmup
from .camera import make_camera
from .errors import SceneError
from .film import adaptive as adaptive_sampling
from .image import RenderedImage, RenderInfo
from .kernels import aov as ak
from .kernels import path as pk
from .kernels import whitted as wk
from .kernels.sampling import gaussian_inverse_cdf_table
from .layout import AOV_HITS, AOV_WIDTH, AOVS, FILTERED_AOVS, PATH_SAMPLING, WHITTED_SAMPLING
from .kernels.threads import written_zeros
from .settings import (BYTES_PER_PIXEL, DEFAULTS, INTEGRATORS, OVERRIDES,  # noqa: F401  (re-exported)
                       check_overrides, resolve_settings)


class RenderInterrupted(KeyboardInterrupt):
    """A progressive render stopped early (Ctrl-C or a callback raising KeyboardInterrupt).

    ``image``: (H, W, 3) float32 mean of the ``spp_done`` complete passes, or None when
    none was complete; ``spp_total``: the passes asked for. Uncaught, it behaves like the
    KeyboardInterrupt it is."""

    def __init__(self, image, spp_done, spp_total):
        super().__init__(f"render interrupted after {spp_done} of {spp_total} samples per pixel")
        self.image = image
        self.spp_done = spp_done
        self.spp_total = spp_total


# ------------------------------------------------------------------------- rendering
def render(scene, progress=False, callback=None, variance=False, aovs=(), denoise=False,
           partial=None, partial_seconds=60.0, partial_first=False, **overrides):
    """Render ``scene`` (from :func:`raytrace.load_scene`) -> :class:`RenderedImage`
    ((H, W, 3) float32 linear radiance with ``info``).

    ``variance=True`` (path tracer only) also gives ``image.variance``: (H, W, 3)
    float32, the estimated variance of each pixel's mean, from the spread of the passes
    (see :func:`raytrace.kernels.path.mean_and_variance`; use the ``independent``
    sampler for an unbiased estimate, Sobol over-estimates).

    ``aovs``: names from :data:`raytrace.layout.AOVS` (``albedo``, ``normal``,
    ``depth``, ``position``, ``uv``, ``object_id``, ``material_id``, ``samples``);
    ``image.aovs`` then maps each to an array (H, W, 3|2) float32 or (H, W) float32 /
    int32. The filtered ones use the colour's camera samples (see
    :mod:`raytrace.kernels.aov`), the ids the pixel centres.

    Overrides: ``width``, ``height``, ``spp``, ``filter``, ``seed``, ``integrator``
    (``"whitted"`` or ``"path"``), Whitted's ``bounces``, ``shadows``, the path
    tracer's ``max_depth``, ``rr_depth``, ``sampler`` (``"sobol"``, the default, or
    ``"independent"``), and ``epsilon`` (ray offset, both).
    ``progress=True`` shows a tqdm bar on stderr. ``callback(done, total)`` is called
    after every band of rows (Whitted) or every pass (path; ``done`` = samples per
    pixel so far). The path tracer stops after the current pass on Ctrl-C (or when
    ``callback`` raises KeyboardInterrupt) and raises :class:`RenderInterrupted`
    carrying the image of the passes done.

    ``denoise`` (path tracer): ``True``/``"auto"``, ``"oidn"`` or ``"atrous"`` returns the
    denoised image (see :mod:`raytrace.film.denoise`; ``variance`` and ``aovs`` are those
    of the render). ``partial(image)`` (path tracer) is called with the image of the
    passes done so far at most every ``partial_seconds`` seconds (``raytrace render
    --write-partial``), and with ``partial_first`` also after the first kernel call (the
    live preview); its ``variance`` is set as for ``variance=True``.
    """
    s = resolve_settings(scene, overrides)
    passes = integrators.integrator(s["integrator"]).progressive     # else Whitted's bands of rows
    aovs = check_aovs(aovs)
    for name, what, wanted in (("variance", "a variance estimate", variance), ("denoise", "denoising", denoise),
                               ("partial", "partial images", partial is not None)):
        if wanted and not passes:
            raise SceneError(name, f"{what} needs the path tracer (integrator 'path')")
    asked = aovs
    if denoise:
        from .film.denoise import GUIDES, resolve
        denoise, aovs = resolve(denoise), tuple(dict.fromkeys(aovs + GUIDES))
    t0 = time.perf_counter()
    var = None
    with warmup.CompileTimer() as compiling:        # first runs: kept out of info.seconds
        aov_buf = (written_zeros((s["height"], s["width"], AOV_WIDTH)) if set(aovs) & set(FILTERED_AOVS)
                   else None)
        if passes:
            image, var, done, nonfinite, plan, capped = progressive(
                scene, s, progress, callback, (t0, compiling), aov_buf,
                partial and (partial, partial_seconds, partial_first))
        else:
            image, done, nonfinite, plan, capped = (_render_whitted(scene, s, progress, callback), s["spp"],
                                                    np.zeros(1, np.int64), None, None)
            if aov_buf is not None:
                for sample in range(s["spp"]):
                    _aov_pass(scene, s, aov_buf, sample, WHITTED_SAMPLING)
        if aovs:
            aov_images = finish_aovs(scene, s, aovs, aov_buf, done, nonfinite, plan)
    stopped_by = "" if not passes else "time" if s["time_budget"] is not None else "spp"
    out = RenderedImage(image, _info(s, done, int(nonfinite.sum()), (t0, compiling), plan, stopped_by,
                                     _capped_pixels(capped)))
    out.capped = capped
    if variance or denoise:
        out.variance = var
    if aovs:
        out.aovs = aov_images
    if denoise:
        from .film.denoise import denoise as denoise_image
        out = denoise_image(out, denoise)
        out.variance = var if variance else None
        out.aovs = {name: out.aovs[name] for name in asked}
    return out


def check_aovs(aovs):
    """The requested AOV names as a tuple (SceneError for an unknown one)."""
    names = (aovs,) if isinstance(aovs, str) else tuple(aovs or ())
    for name in names:
        if name not in AOVS:
            raise SceneError("aovs", f"unknown AOV {name!r} (known: {', '.join(AOVS)})")
    return tuple(dict.fromkeys(names))


def _aov_pass(scene, s, buf, sample, sampling):
    ak.render_aov_pass(buf, sample, scene.accel, scene.geometry, scene.environment,
                       make_camera(scene.data["camera"]), kernel_settings(s), gaussian_inverse_cdf_table(),
                       sampling)


def finish_aovs(scene, s, names, buf, done, nonfinite, plan=None):
    """name -> array of the AOVs asked for (see :func:`render`); ``plan``: the
    :class:`~raytrace.film.adaptive.Plan` of an adaptive render (its AOV passes are the
    first ``min_spp``, its sample counts per pixel), else None."""
    out = {}
    h, w = s["height"], s["width"]
    if buf is not None:
        n = max(min(done, s["min_spp"]) if plan is not None else done, 1)
        hits = buf[..., AOV_HITS]
        with np.errstate(invalid="ignore", divide="ignore"):
            for name in names:
                if name not in FILTERED_AOVS:
                    continue
                col, k = FILTERED_AOVS[name]
                if name in ("albedo", "normal"):
                    a = buf[..., col:col + k] / n
                else:
                    a = np.where(hits[..., None] > 0, buf[..., col:col + k] / hits[..., None],
                                 np.inf if name == "depth" else 0.0)
                out[name] = np.ascontiguousarray(a[..., 0] if k == 1 else a, np.float32)
    if "object_id" in names or "material_id" in names:
        obj, mat = np.empty((h, w), np.int64), np.empty((h, w), np.int64)
        ak.render_ids(obj, mat, scene.accel, scene.geometry, make_camera(scene.data["camera"]))
        for name, ids in (("object_id", obj), ("material_id", mat)):
            if name in names:
                out[name] = ids.astype(np.int32)
    if "samples" in names:
        total = plan.counts if plan is not None else done
        out["samples"] = (total - np.broadcast_to(nonfinite, (h, w)) if nonfinite.ndim == 2
                          else np.broadcast_to(total, (h, w))).astype(np.int32)
    return {name: out[name] for name in names}


def _info(s, done, nonfinite, clock, plan=None, stopped_by="", capped=0):
    """``clock``: (start time, :class:`raytrace.jit.notice.CompileTimer` of the render);
    ``plan``: an adaptive render's :class:`~raytrace.film.adaptive.Plan`, or None;
    ``capped``: pixels with a path cut at the media step cap."""
    t0, compiling = clock
    spent = compiling.seconds
    if plan is not None:
        stopped_by = plan.stopped_by
    return RenderInfo(integrator=s["integrator"], width=s["width"], height=s["height"],
                      spp=done, spp_requested=s["max_spp"] if plan is not None else s["spp"], seed=s["seed"],
                      nonfinite=nonfinite, seconds=max(0.0, time.perf_counter() - t0 - spent),
                      compile_seconds=spent, spp_mean=float(plan.counts.mean()) if plan is not None else None,
                      stopped_by=stopped_by, capped=int(capped))


def _progress_bar(progress, total, unit, desc):
    if not progress:
        return None
    from tqdm import tqdm
    return tqdm(total=total, unit=unit, desc=desc, file=sys.stderr, leave=False)


def _render_whitted(scene, s, progress, callback):
    whitted = integrators.integrator("whitted")
    render_rows, args = whitted.passes(scene), whitted.args(scene, s)
    h, w = s["height"], s["width"]
    image = np.zeros((h, w, 3), np.float32)
    # ~1/64 of the image per band, at least a few rows, so the bar moves smoothly
    band = max(4, math.ceil(h / 64))
    bar = _progress_bar(progress, h, "row", "render")
    try:
        for row0 in range(0, h, band):
            row1 = min(h, row0 + band)
            render_rows(row0, row1, image[row0:row1], *args)
            if bar is not None:
                bar.update(row1 - row0)
            if callback is not None:
                callback(row1, h)
    finally:
        if bar is not None:
            bar.close()
    return image


class _StopFlag:
    """While active (main thread only), the first SIGINT only sets ``requested``; a second
    one raises KeyboardInterrupt as usual."""

    def __init__(self, notice=None):
        self.requested = False
        self.notice = notice
        self._old = None

    def _handler(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        if self.notice is not None:
            self.notice()

    @contextlib.contextmanager
    def active(self):
        install = threading.current_thread() is threading.main_thread()
        if install:
            try:
                self._old = signal.signal(signal.SIGINT, self._handler)
            except ValueError:          # not allowed here (embedded interpreter)
                install = False
        try:
            yield self
        finally:
            if install:
                signal.signal(signal.SIGINT, self._old)


def progressive(scene, s, progress, callback, clock, aov_buf=None, partial=None, scene_at=None, rows=None):
    """The progressive render loop (a progressive integrator of :mod:`raytrace.integrators`:
    the path tracer) -> (image or None, its variance, passes done, per-pixel counts of samples dropped
    as non-finite, the adaptive :class:`~raytrace.film.adaptive.Plan` or None, pixels
    with a path cut at the media step cap).
    ``aov_buf`` (or None) receives an AOV sample per pass (adaptive: the first
    ``min_spp``); ``partial``: None or (function, seconds, first), see :func:`render`;
    ``clock``: see :func:`_info`. With ``s["time_budget"]`` and no noise threshold the
    spp comes from :func:`_spp_for_budget` (``s["spp"]`` is set to it). ``scene_at(k)``
    (or None): the scene of pass ``k``, for a scene that changes between passes (motion
    blur, :mod:`raytrace.animation.motion_blur`; ``scene`` is pass 0's): one sample per
    kernel call, uniform (no noise threshold, no time budget in ``s``). ``rows``: None, or
    ``(row0, row1)``: a uniform render of those rows only (render-farm tiles, motion-blur
    bands; the image's other rows stay 0), the same sums as the whole render's.

    Each pass (an adaptive one: the rows holding an active pixel) is taken in chunks of
    rows, each call sized to :data:`BATCH_SECONDS` at the last call's speed (the first: a
    few rows), so that Ctrl-C is seen between chunks, well within a second, however slow
    a pass is (a kernel call cannot be stopped midway). Stopped inside a pass, the rows
    that pass finished keep its samples (their mean is over those samples more; an
    adaptive render counts them per pixel)."""
    integrator = integrators.integrator(s["integrator"])
    run = integrator.passes(scene)
    adaptive = s["noise_threshold"] is not None
    budget = s["time_budget"]
    if budget is not None and not adaptive:
        s["spp"] = _spp_for_budget(scene, s, integrator, clock)
    h, w = s["height"], s["width"]
    spp = s["max_spp"] if adaptive else s["spp"]
    s_pattern = dict(s, spp=adaptive_sampling.pattern_spp(spp)) if adaptive else s   # the camera's
    args = integrator.args(scene, s_pattern)
    settings = args[5]
    accum, nonfinite, counter = pk.new_buffers(h, w, written=True)
    media = scene.media is not None
    capped = np.zeros((h, w), np.int64) if media else None
    extra = {"capped": capped} if media else {}
    order = (np.arange(h, dtype=np.int64) * settings.row_stride) % h     # render_pass's own row order
    if rows is not None:
        if adaptive:
            raise ValueError("a band of rows renders uniformly (no noise threshold)")
        order = order[(order >= rows[0]) & (order < rows[1])]
    plan = None
    if adaptive:
        plan = adaptive_sampling.Plan(h, w, s["noise_threshold"], s["min_spp"], spp,
                                      (np.arange(h, dtype=np.int64) * settings.row_stride) % h)
    bar = _progress_bar(progress, spp, "pass" if adaptive else "spp", "path")
    note = (lambda: bar.write("stopping after this pass (Ctrl-C again to stop now)", file=sys.stderr)) \
        if bar is not None else None
    stop = _StopFlag(note)
    interrupted = False
    last_partial = -math.inf if partial and partial[2] else time.perf_counter()
    last_pass, last_work = 0.0, 1
    row_rate = None             # seconds per row and sample of the last call
    cut = None                  # a uniform render stopped inside a pass: (rows that pass finished, its samples)
    try:
        with stop.active():
            sample = 0
            while sample < spp:
                if stop.requested or (plan is not None and plan.done):
                    break
                batch = callback is None and not partial and scene_at is None
                if scene_at is not None:           # this pass's scene, same kernels and arguments
                    now = scene_at(sample)
                    run, args = integrator.passes(now), integrator.args(now, s_pattern)
                pass_rows = plan.rows if plan is not None else order
                count, rows_per_call = _chunk(plan.chunk(sample) if plan is not None else spp - sample,
                                              pass_rows.shape[0], row_rate, batch)
                if adaptive and budget is not None and sample > 0 and \
                        _elapsed(clock) + last_pass * plan.work(count) / last_work > budget:
                    plan.stopped_by = "time"        # the next call, at the last one's speed, would not fit
                    break
                work = plan.work(count) if plan is not None else count
                started = time.perf_counter()
                n_pass = pass_rows.shape[0]
                done_rows = 0
                try:
                    while done_rows < n_pass:
                        if stop.requested:
                            break
                        chunk = pass_rows[done_rows:done_rows + rows_per_call]
                        called = time.perf_counter()
                        try:
                            run(accum, nonfinite, counter, sample, *args, rows=chunk,
                                active=plan and plan.active, count=count, **extra)
                        finally:       # the call finished its rows, even through Ctrl-C
                            done_rows += chunk.shape[0]
                            counter[0] = sample
                        row_rate = max(time.perf_counter() - called, 1e-9) / (chunk.shape[0] * count)
                        if count == 1:
                            rows_per_call = _chunk(1, n_pass, row_rate, False)[1]
                finally:
                    if done_rows < n_pass:          # stopped inside the pass
                        if plan is not None:
                            plan.add_rows(pass_rows[:done_rows], count)
                        else:
                            cut = (pass_rows[:done_rows], count)
                    elif plan is not None:
                        plan.after_pass(sample + count, accum, count)
                if done_rows < n_pass:
                    break
                counter[0] = sample + count
                last_pass, last_work = time.perf_counter() - started, max(work, 1)
                if aov_buf is not None:
                    for k in range(sample, min(sample + count, s["min_spp"]) if plan is not None else sample + count):
                        _aov_pass(scene, s_pattern, aov_buf, k, PATH_SAMPLING)
                sample += count
                if bar is not None:
                    bar.update(count)
                    if plan is not None:
                        bar.set_postfix_str(f"{plan.active_fraction:.0%} of pixels active", refresh=False)
                if callback is not None:
                    callback(int(counter[0]), spp)
                if partial and time.perf_counter() - last_partial >= partial[1] and sample < spp:
                    mean, part_var = _mean_and_variance(accum, int(counter[0]), plan)
                    part = RenderedImage(mean.astype(np.float32),
                                         _info(s, int(counter[0]), int(nonfinite.sum()), clock, plan,
                                               capped=_capped_pixels(capped)))
                    part.variance = part_var.astype(np.float32)
                    partial[0](part)
                    last_partial = time.perf_counter()
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if bar is not None:
            bar.close()
    done = int(counter[0])
    image = var = None
    if done > 0:
        if cut is not None and cut[0].shape[0] > 0:
            mean, var = _mean_and_variance_rows(accum, done, cut)
        else:
            mean, var = _mean_and_variance(accum, done, plan)
        image, var = mean.astype(np.float32), var.astype(np.float32)
    if (interrupted or stop.requested) and done < spp and not (plan is not None and plan.done):
        if image is not None:
            image = RenderedImage(image, _info(s, done, int(nonfinite.sum()), clock, plan,
                                               capped=_capped_pixels(capped)))
            image.variance, image.capped = var, capped
        raise RenderInterrupted(image, done, spp)
    return image, var, done, nonfinite, plan, capped


def uniform_rows(scene, s, rows=None, callback=None, scene_at=None):
    """A uniform render (``s`` without its noise threshold and time budget: ``s["spp"]``
    passes) through :func:`progressive`, without a progress bar -> (the image of ``rows``
    (``(row0, row1)``; None: all) float32, its count of non-finite samples). What a
    render-farm tile and a motion-blurred band or frame render."""
    from .jit.notice import CompileTimer
    uniform = dict(s, noise_threshold=None, time_budget=None)
    with CompileTimer() as compiling:
        image, _, _, nonfinite, _, _ = progressive(scene, uniform, False, callback, (time.perf_counter(), compiling),
                                                   scene_at=scene_at, rows=rows)
    row0, row1 = rows if rows is not None else (0, s["height"])
    return image[row0:row1], int(nonfinite[row0:row1].sum())


def _capped_pixels(capped):
    """Pixels with at least one path cut at the media step cap (``capped``: None or (H, W))."""
    return 0 if capped is None else int(np.count_nonzero(capped))


FIRST_CHUNK_ROWS = 2     # per thread: a uniform render's first call, before any is timed


def _chunk(left, height, row_rate, batch):
    """A render's next call -> (samples per pixel, rows per call): the whole pass
    (``height`` rows: the image's, an adaptive pass's active ones), with as many samples
    as fit in :data:`BATCH_SECONDS` (at most ``left``; one unless ``batch``: a callback or
    partial images want every pass), when one pass fits; else one sample, and as many
    rows as fit (at least one). ``row_rate``: seconds per row and sample of the last call
    (None: none yet). A call takes its samples pixel by pixel, which measured 3-7 % faster
    than a call per sample (Cornell box 256 x 256 and path_glass 256 x 192 at 32 spp, 1
    and 2 threads) and gives the same image bit for bit."""
    from .kernels.threads import thread_count
    if row_rate is None:
        return 1, min(height, FIRST_CHUNK_ROWS * thread_count(height))
    per_pass = row_rate * height
    if per_pass <= BATCH_SECONDS:
        return (max(1, min(left, int(BATCH_SECONDS / per_pass))) if batch else 1), height
    return 1, max(1, min(height, int(BATCH_SECONDS / row_rate)))


def _mean_and_variance_rows(accum, done, cut):
    """:func:`_mean_and_variance` of a uniform render stopped inside a pass: ``done``
    passes everywhere, and the rows ``cut[0]`` have ``cut[1]`` samples more."""
    n = np.full((accum.shape[0], 1, 1), float(done))
    n[cut[0]] += cut[1]
    mean = accum[..., :3] / n
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.where(n >= 2, np.maximum(accum[..., 3:] / n - mean * mean, 0.0) * (n / (n - 1.0)), 0.0)
    return mean, var / n


BATCH_SECONDS = 0.25     # a uniform render's kernel call, once the first pass has timed one sample


def _mean_and_variance(accum, done, plan):
    return plan.mean_and_variance(accum) if plan is not None else pk.mean_and_variance(accum, done)


def _elapsed(clock):
    """Seconds of rendering since the clock started, compiling not counted."""
    t0, compiling = clock
    return time.perf_counter() - t0 - compiling.seconds


def _spp_for_budget(scene, s, integrator, clock):
    """The spp of a uniform render that fits the rest of ``s["time_budget"]``: one
    timed pass of pixel-centre samples into scratch buffers (not kept), then as many
    passes as the rest of the budget holds at that speed (at least 1, at most
    ``s["max_spp"]``). The render is then exactly the ``--spp N`` render: the camera
    pattern is made for N samples."""
    h, w = s["height"], s["width"]
    accum, nonfinite, counter = pk.new_buffers(h, w)
    started = _elapsed(clock)
    integrator.passes(scene)(accum, nonfinite, counter, 0, *integrator.args(scene, dict(s, spp=1)))
    per_pass = max(_elapsed(clock) - started, 1e-6)
    left = s["time_budget"] - _elapsed(clock)
    return int(min(s["max_spp"], max(1, left // per_pass)))


def render_aovs(scene, width=None, height=None):
    """Depth and normals through pixel centres -> (t (H, W) float64, inf on a miss,
    normals (H, W, 3) float64 world-space unit, zero on a miss)."""
    s = resolve_settings(scene, {"width": width, "height": height})
    cam = make_camera(scene.data["camera"])
    t = np.empty((s["height"], s["width"]))
    n = np.empty((s["height"], s["width"], 3))
    wk.render_aov(t, n, scene.accel, scene.geometry, cam)
    return t, n
