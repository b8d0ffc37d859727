"""Rendering an animation's frames: in this process, or as tasks of a Dask cluster.

:func:`animate` renders the frames of an animated scene (one frame for a still) into a
folder of numbered images, plus a GIF and an MP4 on request:

- ``workers=1`` (and no client or scheduler): one frame after another in this process;
- ``workers=N`` (N > 1) on Dask (``dask.distributed``): a local cluster of N process
  workers (started with ``spawn``, one task at a time each, Numba limited to
  ``threads_per_worker`` threads so that the workers do not oversubscribe the cores),
  or an existing cluster (``client``, or ``scheduler="tcp://host:port"``);
- by default (no ``workers``, client or scheduler) whatever is faster for the job
  (:func:`local_plan`): a local cluster takes seconds to start (spawned processes
  importing the package and loading the kernels) and renders no faster than this process
  does with all its threads until there is a lot of work, so the frames are rendered here,
  timing the first one or two, and a cluster of one worker per core starts for the rest
  only when they would take more than :data:`CLUSTER_MIN_SECONDS` here.

On Dask the scene (an :class:`~raytrace.animation.scene_at.AnimatedScene`: the scene dict
and the cloth simulations, made once on the client) is sent to every worker once
(``scatter(broadcast=True)``) and stays in its memory; tasks refer to it, so a worker
loads the scene once and keeps its built geometry between tasks. A task renders a chunk
of a few consecutive frames (or, with ``tiles``, one band of rows of one frame) and
returns the encoded images (tiles: float rows); the client writes each frame to a
temporary name and renames it, so a frame file is never torn and never written twice.
Frames of a scene with a ``shutter`` are motion blurred
(:mod:`raytrace.animation.motion_blur`), and so are their tiles (bit-identical to the
whole blurred frame). A worker that dies has its task run again elsewhere (Dask's
``allowed-failures``, 3 here); a frame whose scene is bad input at its time (a track
overshooting there) is reported by its task while the task's other frames go on; a task
that raises anything else is tried once more (``retries``) and then its frames are
reported with the error while the other tasks finish. A rerun skips frames whose files
exist (``force=True`` renders them again).
"""
import contextlib
import logging
import math
import os
import sys
import threading
import time

import numpy as np
from userio.errors import UserError
from userio.outputs import check_output_path, write_bytes_atomic

from .. import renderer as rmod
from ..errors import SceneError
from ..image import RenderedImage, RenderInfo, encode_image
from . import motion_blur
from . import tiles as tiles_mod
from . import video
from .frames import FRAME_FORMATS, Summary, check_out_dir, frame_paths, parse_frames
from .scene_at import AnimatedScene
from .threads import limit_threads

ALLOWED_FAILURES = 3            # worker deaths a task survives on a local cluster
CONNECT_TIMEOUT = 10.0          # seconds to reach a scheduler given by address (--connect-timeout)
# By default a local cluster starts only for more work than this (seconds of rendering in
# this process, projected from the frames timed here). Measured on the development
# machine (2 cores shared with other work, warm kernel cache): a local cluster of 2
# workers took 15 to 20 s more than rendering here before its first frame, and then
# rendered no faster (scenes/animation/orbit.json, 12 and 48 frames at 320 x 240: 26.3 s
# and 44.2 s, here 7.9 s and 16.4 s). A cluster can still win with more cores, or for
# frames whose scene building does not parallelise inside a frame (docs/render-farm.md,
# Costs); below a minute of work its start-up is not won back.
CLUSTER_MIN_SECONDS = 60.0
MAX_CHUNK = 4                   # frames per task at most (default chunking)
_RENDER_LOCK = threading.Lock()  # one render at a time per process (Numba parallelises inside)


# ----------------------------------------------------------------------- worker side
def render_frame(anim, k, overrides, shutter=None):
    """Frame ``k`` of ``anim`` -> RenderedImage, blurred over ``shutter`` ((open, close)
    in frames; None: the scene's; see :mod:`raytrace.animation.motion_blur`)."""
    return motion_blur.render_at(anim, anim.frame_time(k), shutter, **overrides)


def render_frames_task(anim, frames, options):
    """Dask task: render ``frames`` -> [(frame, encoded bytes, non-finite samples, None)],
    or ``(frame, None, 0, error text)`` for a frame whose scene is bad input at its time
    (the same on every try: reported, not retried; the chunk's other frames go on).
    Other exceptions fail the task (Dask retries it)."""
    limit_threads(options["threads"])
    out = []
    with _RENDER_LOCK:
        for k in frames:
            try:
                image = render_frame(anim, k, options["overrides"], options.get("shutter"))
            except UserError as exc:
                out.append((k, None, 0, _error_text(exc)))
                continue
            data = encode_image("frame" + options["suffix"], image, options["encoding"])
            out.append((k, data, image.info.nonfinite, None))
    return out


def render_tile_task(anim, k, row0, row1, options):
    """Dask task: rows [row0, row1) of frame ``k`` -> (frame, row0, float32 rows,
    non-finite samples, None), or (frame, row0, None, 0, error text) for bad input."""
    limit_threads(options["threads"])
    with _RENDER_LOCK:
        try:
            band, bad = motion_blur.render_band_at(anim, anim.frame_time(k), row0, row1,
                                                   options.get("shutter"), **options["overrides"])
        except UserError as exc:
            return k, row0, None, 0, _error_text(exc)
    return k, row0, band, bad, None


# ----------------------------------------------------------------------- client side
class _Writer:
    """Writes finished frames (temporary name, then rename), counts them, moves the
    progress bar and calls the user's callback(frame, path)."""

    def __init__(self, paths, progress, total, unit, callback):
        self.paths = paths
        self.rendered = []
        self.failed = {}
        self.nonfinite = 0
        self.callback = callback
        self.bar = None
        if progress and total:
            from tqdm import tqdm
            self.bar = tqdm(total=total, unit=unit, desc="animate", file=sys.stderr, leave=False)

    def frame(self, k, data, nonfinite=0):
        write_bytes_atomic(self.paths[k], data)
        self.rendered.append(k)
        self.nonfinite += nonfinite
        if self.callback is not None:
            self.callback(k, self.paths[k])

    def fail(self, frames, exc):
        text = exc if isinstance(exc, str) else _error_text(exc)
        for k in frames:
            self.failed.setdefault(k, text)

    def advance(self, n=1):
        if self.bar is not None:
            self.bar.update(n)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def _error_text(exc):
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first}"[:300]


class _Frame:
    """The bands of one tiled frame as they arrive."""

    def __init__(self, height, width, bands):
        self.image = np.zeros((height, width, 3), np.float32)
        self.missing = len(bands)
        self.nonfinite = 0


def _assembled(settings, part, seconds):
    info = RenderInfo(integrator=settings["integrator"], width=settings["width"], height=settings["height"],
                      spp=settings["spp"], spp_requested=settings["spp"], seed=settings["seed"],
                      nonfinite=part.nonfinite, seconds=seconds)
    return RenderedImage(part.image, info)


def _run_serial(anim, todo, settings, options, tiles, writer):
    overrides, suffix, encoding = options["overrides"], options["suffix"], options["encoding"]
    bands = tiles_mod.bands(settings["height"], tiles)
    for k in todo:
        t0 = time.perf_counter()
        try:
            if tiles > 1:
                part = _Frame(settings["height"], settings["width"], bands)
                for row0, row1 in bands:
                    part.image[row0:row1], bad = motion_blur.render_band_at(
                        anim, anim.frame_time(k), row0, row1, options.get("shutter"), **overrides)
                    part.nonfinite += bad
                    writer.advance()
                image = _assembled(settings, part, time.perf_counter() - t0)
            else:
                image = render_frame(anim, k, overrides, options.get("shutter"))
        except KeyboardInterrupt:
            raise
        except Exception as exc:      # noqa: BLE001 - reported with the frame, the others go on
            writer.fail([k], exc)
            continue
        writer.frame(k, encode_image("frame" + suffix, image, encoding), image.info.nonfinite)
        if tiles <= 1:
            writer.advance()


def _chunks(todo, size):
    return [todo[i:i + size] for i in range(0, len(todo), size)]


def _run_dask(client, anim, todo, settings, options, tiles, chunk, retries, writer):
    from dask.distributed import as_completed

    plan = client.scatter(anim, broadcast=True, hash=False)
    jobs = {}
    if tiles > 1:
        bands = tiles_mod.bands(settings["height"], tiles)
        parts = {}
        for k in todo:
            for row0, row1 in bands:
                fut = client.submit(render_tile_task, plan, k, row0, row1, options, retries=retries,
                                    pure=False, key=f"raytrace-tile-{k}-{row0}-{os.urandom(4).hex()}")
                jobs[fut] = [k]
    else:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        size = chunk or max(1, min(MAX_CHUNK, math.ceil(len(todo) / (2 * workers))))
        for frames in _chunks(todo, size):
            fut = client.submit(render_frames_task, plan, frames, options, retries=retries, pure=False,
                                key=f"raytrace-frames-{frames[0]}-{frames[-1]}-{os.urandom(4).hex()}")
            jobs[fut] = frames
    started = {k: time.perf_counter() for k in todo}
    try:
        for fut in as_completed(list(jobs)):
            frames = jobs.pop(fut)
            try:
                result = fut.result()
            except KeyboardInterrupt:
                raise
            except Exception as exc:     # noqa: BLE001 - the task failed on every try
                writer.fail(frames, exc)
                writer.advance(len(frames) if tiles <= 1 else 1)
                continue
            finally:
                fut.release()
            if tiles > 1:
                k, row0, band, bad, error = result
                writer.advance()
                if error is not None:
                    writer.fail([k], error)
                if k in writer.failed:
                    parts.pop(k, None)
                    continue
                part = parts.setdefault(k, _Frame(settings["height"], settings["width"], bands))
                part.image[row0:row0 + band.shape[0]] = band
                part.nonfinite += bad
                part.missing -= 1
                if part.missing == 0:
                    image = _assembled(settings, parts.pop(k), time.perf_counter() - started[k])
                    data = encode_image("frame" + options["suffix"], image, options["encoding"])
                    writer.frame(k, data, image.info.nonfinite)
            else:
                for k, data, bad, error in result:
                    if error is None:
                        writer.frame(k, data, bad)
                    else:
                        writer.fail([k], error)
                writer.advance(len(frames))
    except BaseException:
        client.cancel(list(jobs))
        raise
    finally:
        client.cancel([plan])


@contextlib.contextmanager
def local_cluster(workers, threads_per_worker=1):
    """A Dask client on a new local cluster of ``workers`` process workers (spawned),
    each running one task at a time with Numba limited to ``threads_per_worker``
    threads; closed on exit."""
    import dask
    from dask.distributed import Client, LocalCluster

    env = {"NUMBA_NUM_THREADS": str(threads_per_worker), "OMP_NUM_THREADS": str(threads_per_worker)}
    config = {"distributed.worker.multiprocessing-method": "spawn",
              "distributed.scheduler.allowed-failures": ALLOWED_FAILURES}
    with dask.config.set(config):
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, env=env, silence_logs=logging.ERROR)
        try:
            client = Client(cluster)
            try:
                yield client
            finally:
                client.close()
        finally:
            cluster.close()


@contextlib.contextmanager
def _client_for(client, scheduler, workers, threads, connect_timeout=None):
    if client is not None:
        yield client
        return
    from dask.distributed import Client
    if scheduler is not None:
        try:
            c = Client(scheduler, timeout=CONNECT_TIMEOUT if connect_timeout is None else connect_timeout)
        except (OSError, TimeoutError, ValueError) as exc:
            seconds = CONNECT_TIMEOUT if connect_timeout is None else connect_timeout
            raise OSError(f"cannot reach the Dask scheduler {scheduler} within {seconds:g} s "
                          f"(--connect-timeout): {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
        try:
            yield c
        finally:
            c.close()
        return
    with local_cluster(workers, threads or 1) as c:
        yield c


def _warm_kernels(anim, first, integrator, tiled):
    """Compile (or load) the kernels in this process before local workers start, so that
    they load them from the on-disk cache instead of all compiling them at once: the BVH
    builder (with the first frame's scene, which also checks it), the integrator and, for
    tiles of a path-traced frame, the band kernel."""
    from ..jit import warmup
    media = anim.scene_at(anim.frame_time(first)).media is not None
    if not warmup.is_cached(integrator, media):
        warmup.compile_here(integrator, media=media)
    if tiled and integrator == "path":
        from ..loading import load_scene
        tiny = load_scene({"camera": {"center": [0, 1, 0], "direction": [0, -1, 0], "up": [0, 0, -1]},
                           "integrator": {"type": "path"},
                           "objects": [{"type": "plane", "normal": [0, 1, 0]}]})
        tiles_mod.render_band(tiny, 0, 1, width=1, height=1, spp=1)


def local_plan(frames_left, frame_seconds, frames_timed, cores, min_seconds=None):
    """The default's choice after timing ``frames_timed`` frames here, the last in
    ``frame_seconds`` (compiling excluded), with ``frames_left`` still to render on a
    machine of ``cores`` cores -> ``"here"`` (render the rest in this process),
    ``"cluster"`` (start a local cluster for the rest) or ``"time"`` (render one more frame
    here first: the first one pays one-off costs, loading the kernels and the scene's
    assets, and would over-estimate the rest).

    A cluster only when the rest would take more than ``min_seconds`` (default
    :data:`CLUSTER_MIN_SECONDS`) here, on two cores or more, for two frames or more."""
    if min_seconds is None:
        min_seconds = CLUSTER_MIN_SECONDS
    if frames_left < 2 or cores < 2 or frames_left * frame_seconds <= min_seconds:
        return "here"
    return "cluster" if frames_timed >= 2 else "time"


def _frames(n):
    return f"{n} frame{'s' if n != 1 else ''}"


def _render_here_first(anim, todo, settings, options, tiles, writer, notice, cores, workers):
    """The default run: render frames here, timing them, until :func:`local_plan` decides
    -> the frames left for a local cluster (empty: all were rendered here)."""
    from ..jit import warmup
    if notice is not None:
        notice(f"rendering {_frames(len(todo))} here" + (
            "" if len(todo) < 2 or cores < 2 else
            f" (a local Dask cluster of {workers} workers starts only if the rest would take "
            f"over {CLUSTER_MIN_SECONDS:.0f} s)"))
    limit_threads(options["threads"])
    left = list(todo)
    decision, timed, spent = "time", 0, 0.0
    with warmup.notice_on_compile(notice is not None) as compiling:    # frames here may compile
        while left and decision == "time":
            t0, c0 = time.perf_counter(), compiling.seconds
            _run_serial(anim, left[:1], settings, options, tiles, writer)
            spent = max(0.0, time.perf_counter() - t0 - (compiling.seconds - c0))
            left, timed = left[1:], timed + 1
            decision = local_plan(len(left), spent, timed, cores)
        if left and decision == "here":
            _run_serial(anim, left, settings, options, tiles, writer)
            left = []
    if left and notice is not None:
        notice(f"starting a local Dask cluster with {workers} workers for the other "
               f"{_frames(len(left))} (about {len(left) * spent:.0f} s of work here)...")
    return left


def _check_options(anim, settings, suffix, tiles, gif, mp4):
    if suffix not in FRAME_FORMATS:
        names = ", ".join(f[1:] for f in FRAME_FORMATS)
        raise SceneError("--format", f"must be one of {names}, got {suffix!r}")
    if suffix == ".exr":
        from ..film.exr import _openexr
        _openexr()                    # SceneError now, not once per frame, when OpenEXR is missing
    if not (isinstance(tiles, int) and 1 <= tiles <= 4096):
        raise SceneError("--tiles", f"must be a whole number from 1 to 4096, got {tiles!r}")
    if gif is not None:
        check_output_path(gif, "--gif", video.VIDEO_FORMATS["gif"], SceneError, "video")
    if mp4 is not None:
        check_output_path(mp4, "--mp4", video.VIDEO_FORMATS["mp4"], SceneError, "video")
        video.check_mp4_size(settings["width"], settings["height"])


def _video_fps(anim, selection):
    """Frames per second of a video of ``selection``: real time (the animation's fps
    divided by the selection's step when it has one)."""
    steps = {b - a for a, b in zip(selection, selection[1:])}
    return anim.fps / steps.pop() if len(steps) == 1 else anim.fps


def check_request(anim, frames, format, tiles, gif, mp4, overrides):
    """What :func:`animate` checks before rendering anything (the command line asks first,
    before it compiles): -> (resolved settings, the frames selected, the frames' suffix);
    SceneError naming the option otherwise."""
    settings = rmod.resolve_settings(anim, overrides)
    count = anim.frame_count
    if frames is None:
        selection = list(range(count))
    elif isinstance(frames, str):
        selection = parse_frames(frames, count)
    else:
        selection = [int(k) for k in frames]
        if not selection or not all(0 <= k < count for k in selection):
            raise SceneError("frames", f"frame numbers must be in 0 .. {count - 1}")
    suffix = "." + str(format).lower().lstrip(".")
    _check_options(anim, settings, suffix, tiles, gif, mp4)
    return settings, selection, suffix


def animate(scene, out_dir, client=None, *, scheduler=None, workers=None, threads_per_worker=None,
            frames=None, tiles=1, chunk=None, force=False, format="png", encoding="srgb",
            gif=None, mp4=None, fps=None, shutter=None, progress=False, callback=None,
            notice=None, base_dir=None, cache_dir=None, retries=1, connect_timeout=None, **overrides):
    """Render the frames of ``scene`` (a path, a dict, a loaded Scene or an AnimatedScene)
    into ``out_dir`` as ``frame_0000.png``, ... -> :class:`~raytrace.animation.frames.Summary`.

    ``frames``: ``"A:B[:STEP]"`` or a list of frame numbers (default all); ``fps``
    overrides the animation's; ``format``: ``png``, ``pfm`` or ``exr``; ``tiles``: split
    every frame into that many bands of rows (one task each); ``chunk``: frames per task
    (default up to 4); ``shutter``: ``(open, close)`` in frames, replacing the scene's
    ``animation.shutter`` (``(0, 0)``: no motion blur; see
    :mod:`raytrace.animation.motion_blur`); ``force``: render frames whose files exist;
    ``gif``, ``mp4``: video files made from the frames of the selection when none failed.
    Execution:
    ``client`` (a ``dask.distributed.Client``), else ``scheduler`` (an address), else
    ``workers`` (1 renders here without Dask, N > 1 on a local cluster of N workers;
    default: here, or a local cluster of one worker per core when the frames timed here
    show that the rest is long, see :func:`local_plan`);
    ``threads_per_worker``: Numba threads per worker (default 1 on a cluster, all cores
    here). ``callback(frame, path)`` after each frame is written (raising
    KeyboardInterrupt there stops the run); ``progress`` shows a bar on stderr;
    ``notice(line)`` is told where the frames render (here, or which cluster) before the
    wait (the command line prints it on stderr).
    Render ``overrides`` as for :func:`raytrace.render` (``width``, ``spp``, ``seed``...).
    Frames that fail are listed in the summary (``summary.failed``); bad input raises
    :class:`~raytrace.SceneError` before anything is rendered."""
    t0 = time.perf_counter()
    rmod.check_overrides(overrides)
    anim = scene if isinstance(scene, AnimatedScene) else AnimatedScene.load(
        scene, base_dir=base_dir, fps=fps, cache_dir=cache_dir)
    settings, selection, suffix = check_request(anim, frames, format, tiles, gif, mp4, overrides)
    count = anim.frame_count
    shutter = motion_blur.frame_shutter(anim, shutter)
    out = check_out_dir(out_dir)
    paths = frame_paths(out, selection, count, suffix)
    todo = [k for k in selection if force or not paths[k].exists()]
    skipped = sorted(set(selection) - set(todo))
    options = {"overrides": {k: v for k, v in overrides.items() if v is not None}, "suffix": suffix,
               "encoding": encoding, "threads": threads_per_worker, "shutter": shutter}
    writer = _Writer(paths, progress, len(todo) * (tiles if tiles > 1 else 1),
                     "tile" if tiles > 1 else "frame", callback)
    try:
        if todo:
            anim.prepare()
            cores = os.cpu_count() or 1
            local = client is None and scheduler is None
            if local and workers is None:
                todo = _render_here_first(anim, todo, settings, options, tiles, writer, notice, cores, cores)
                workers = cores
            elif local and workers <= 1:
                from ..jit import warmup
                if notice is not None:
                    notice(f"rendering {_frames(len(todo))} here")
                limit_threads(threads_per_worker)
                with warmup.notice_on_compile(notice is not None):     # frames here may compile
                    _run_serial(anim, todo, settings, options, tiles, writer)
                todo = []
            elif local:
                if notice is not None:
                    notice(f"starting a local Dask cluster with {workers} workers for {_frames(len(todo))}...")
                _warm_kernels(anim, todo[0], settings["integrator"], tiles > 1)
            elif notice is not None:
                where = f"the Dask cluster at {scheduler}" if client is None else "the Dask client's cluster"
                notice(f"sending {_frames(len(todo))} to {where}")
            if todo:
                options["threads"] = threads_per_worker or 1
                with _client_for(client, scheduler, workers, options["threads"], connect_timeout) as c:
                    _run_dask(c, anim, todo, settings, options, tiles, chunk, retries, writer)
    finally:
        writer.close()
    videos = []
    if not writer.failed:
        files = [paths[k] for k in selection]
        rate = _video_fps(anim, selection)
        if gif is not None:
            video.write_gif(gif, files, rate)
            videos.append(str(gif))
        if mp4 is not None:
            video.write_mp4(mp4, files, rate)
            videos.append(str(mp4))
    return Summary(rendered=sorted(writer.rendered), skipped=skipped, failed=dict(writer.failed),
                   paths=paths, videos=videos, seconds=time.perf_counter() - t0, nonfinite=writer.nonfinite)
