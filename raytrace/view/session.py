"""One preview: a scene file watched, loaded and rendered again and again on a worker thread.

A :class:`Session` owns a worker thread that loads the scene (and then watches the files
it read, ``RenderScene.files``, :mod:`raytrace.view.watch`) and renders it progressively
through the renderer's public API, publishing each step as a :class:`Frame`:

- the path tracer runs :func:`raytrace.renderer.render`'s own progressive loop (one
  pass at a time; adaptive sampling when the scene or the options ask for it): the last
  frame is ``raytrace render``'s image bit for bit. Frames are published after the first
  pass and then at most every :data:`PUBLISH_EVERY` seconds, with the spp, the seconds
  since the render started and the estimated noise (:func:`noise_estimate`);
- Whitted renders a quarter-size, 1-spp image first (``stage`` ``"preview"``, shown
  enlarged), then the full image;
- a debug view (:data:`MODES` other than ``color``) is rendered by
  :func:`raytrace.views.render_view` (display colours, not radiance).

Anything that changes the picture (a watched file, the camera, the time of an animated
scene, the view) bumps the ``generation`` and restarts the work between two passes. A
scene that fails to load or render sets ``error`` (the command line's one line) and keeps
the last good frame; the next change tries again. Every change of the state a page shows
increments ``version``; :meth:`Session.wait` blocks until it moves.

The camera override (orbit, dolly, a camera set by the page) replaces the file's camera
in the preview only; the file is never written.
"""
import copy
import dataclasses
import math
import pathlib
import threading
import time

import numpy as np

from userio.cli import bug_text, error_text

from ..errors import SceneError
from . import code as kernel_code
from . import orbit as camera_moves
from .watch import Watcher, load_guarded, stamps

MODES = ("color", "objects", "materials", "normals", "cost", "nan")
PUBLISH_EVERY = 0.2          # seconds between two published frames of one path-traced render
PREVIEW_SCALE = 4            # Whitted's first image: 1/4 of the width and height


class _Restart(Exception):
    """Raised inside a render when the work it does is out of date."""


@dataclasses.dataclass(frozen=True)
class Frame:
    """A published image. ``image``: (H, W, 3) float32, linear radiance for ``mode``
    ``"color"``, display colours for a debug view; ``stage``: ``"preview"`` (Whitted's
    quarter-size first pass), ``"refining"`` (more passes to come) or ``"done"``;
    ``spp``/``spp_target``: samples per pixel so far / asked for; ``seconds``: since the
    render of this generation started (loading not counted); ``noise``: the path tracer's
    :func:`noise_estimate` (None before 2 passes and for other renders); ``report``: a
    debug view's one line."""
    id: int
    generation: int
    image: np.ndarray
    mode: str
    integrator: str
    stage: str
    spp: int
    spp_target: int
    seconds: float
    noise: float = None
    report: str = ""
    info: object = None

    def png(self, exposure=0.0):
        """The frame as PNG bytes as the page shows it: radiance times 2**``exposure``,
        sRGB-encoded; a debug view's colours as they are."""
        from ..image import encode_image
        if self.mode == "color":
            return encode_image("frame.png", self.image * np.float32(2.0 ** exposure), "srgb")
        return encode_image("frame.png", self.image, "linear")


def noise_estimate(mean, variance):
    """The median over pixels of the relative standard error of the pixel mean (largest
    channel; the denominator at least twice the image's mean, so dark pixels do not
    dominate): a number that falls as 1/sqrt(spp)."""
    floor = max(2.0 * float(mean.mean()), 1e-8)
    rel = np.sqrt(np.maximum(variance, 0.0)) / np.maximum(mean, floor)
    return float(np.median(rel.max(axis=-1)))


class Session:
    """The preview of ``scene_path`` (module docstring). ``overrides``: render options as
    for :func:`raytrace.render` (``width``, ``height``, ``spp``, ``integrator``...);
    ``log``: a stream for one-line notices (errors, reloads, compiling), or None."""

    def __init__(self, scene_path, overrides=None, watch_interval=0.1, log=None):
        self.scene_path = pathlib.Path(scene_path)
        self.overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
        self.log = log
        self._cond = threading.Condition()
        self._wake = threading.Event()
        self._closed = False
        self.version = 0
        self.generation = 0
        self.frame = None
        self._load_error = ""             # the last load's one line ("" when it loaded)
        self._render_error = ""           # the last render's
        self.message = "loading"
        self._last_logged = None
        self._reload = True
        self._camera = None              # the preview's camera (look-at form), or None: the file's
        self._file_camera = None
        self._time = None
        self._time_range = None
        self._mode = "color"
        self._scene = None
        self._ids = {}                    # generation -> (object ids, material ids), the last few
        self._save_lock = threading.Lock()
        self.watcher = Watcher(self._files_changed, watch_interval)
        self.watcher.watch([self.scene_path])
        self._code_changed = []           # kernel sources edited since the code was last loaded
        self._timer = None                # the worker's CompileTimer, while it loads or renders
        self.code_watcher = Watcher(self._sources_changed, watch_interval)
        self.code_watcher.watch(kernel_code.watched())
        self._thread = threading.Thread(target=self._run, name="raytrace-view-render", daemon=True)
        self._thread.start()
        self._wake.set()

    # ------------------------------------------------------------------ requests (any thread)
    def _bump(self, reload=False, **changes):
        with self._cond:
            for name, value in changes.items():
                setattr(self, name, value)
            if reload:
                self._reload = True
            self.generation += 1
            self.version += 1
            self._cond.notify_all()
        self._wake.set()

    def _files_changed(self, paths):
        self._bump(reload=True)

    def _sources_changed(self, paths):
        with self._cond:
            self._code_changed += [p for p in paths if p not in self._code_changed]
        self._bump(reload=True)

    def orbit(self, yaw, pitch):
        """Turn the preview's camera about its look-at point (degrees, see
        :mod:`raytrace.view.orbit`)."""
        cam = self.camera
        if cam is None:
            raise SceneError("camera", "no scene is loaded yet")
        self._bump(_camera=camera_moves.orbit(cam, _number(yaw, "orbit"), _number(pitch, "orbit")))

    def dolly(self, factor):
        """Move the preview's eye to ``factor`` times its distance from the look-at point."""
        cam = self.camera
        if cam is None:
            raise SceneError("camera", "no scene is loaded yet")
        factor = _number(factor, "dolly")
        if not factor > 0:
            raise SceneError("dolly", f"must be > 0, got {factor!r}")
        self._bump(_camera=camera_moves.dolly(cam, factor))

    def set_camera(self, cam):
        """Use the camera dict ``cam`` (a scene's ``camera`` entry) in the preview."""
        from ..camera import make_camera
        from ..scene.validate import validate_scene
        if not isinstance(cam, dict):
            raise SceneError("camera", "must be an object")
        if self._scene is None:
            raise SceneError("camera", "no scene is loaded yet")
        validate_scene(dict(self._scene.data, camera=cam))
        make_camera(cam)
        self._bump(_camera=camera_moves.look_at_form(cam, self._look_distance(cam)))

    def reset_camera(self):
        """Back to the scene file's camera."""
        self._bump(_camera=None)

    def set_mode(self, mode):
        """Show the colour image (``"color"``) or a debug view (:data:`MODES`)."""
        if mode not in MODES:
            raise SceneError("mode", f"must be one of {', '.join(MODES)}, got {mode!r}")
        self._bump(_mode=mode)

    def set_time(self, t):
        """Show an animated scene at time ``t`` (seconds, within its range)."""
        t = _number(t, "time")
        rng = self._time_range
        if rng is None:
            raise SceneError("time", "the scene is not animated")
        if not rng[0] <= t <= rng[1]:
            raise SceneError("time", f"must be within {rng[0]:g} .. {rng[1]:g} s, got {t:g}")
        self._bump(_time=t)

    @property
    def camera(self):
        """The camera the preview renders with (look-at form), None before a load."""
        with self._cond:
            return copy.deepcopy(self._camera if self._camera is not None else self._file_camera)

    def state(self):
        """What a page shows, as JSON-ready values (``version`` first)."""
        with self._cond:
            f = self.frame
            out = {"version": self.version, "generation": self.generation, "error": self.error,
                   "message": self.message, "scene": str(self.scene_path), "mode": self._mode,
                   "modes": list(MODES), "camera": self._camera if self._camera is not None else self._file_camera,
                   "camera_overridden": self._camera is not None, "time": self._time,
                   "time_range": list(self._time_range) if self._time_range else None,
                   "watched": [str(p) for p in self.watcher.paths], "frame": None}
            if f is not None:
                out["frame"] = {"id": f.id, "generation": f.generation, "mode": f.mode,
                                "integrator": f.integrator, "stage": f.stage, "spp": f.spp,
                                "spp_target": f.spp_target, "seconds": round(f.seconds, 3),
                                "noise": f.noise, "report": f.report, "width": f.image.shape[1],
                                "height": f.image.shape[0], "current": f.generation == self.generation}
            return copy.deepcopy(out)

    def wait(self, after_version, timeout):
        """Block until ``version`` exceeds ``after_version`` (or ``timeout`` seconds pass,
        or the session closes) -> :meth:`state`."""
        with self._cond:
            self._cond.wait_for(lambda: self.version > after_version or self._closed, timeout)
        return self.state()

    @property
    def error(self):
        """The one line of the last failure to load or render ("" when there is none)."""
        return self._load_error or self._render_error

    @property
    def closed(self):
        return self._closed

    def pixel(self, x, y):
        """The pixel (column ``x``, row ``y``) of the current frame: its value (linear
        radiance, or the debug view's colour) and, where it is inside the image, the
        object's and material's names (None on the background or where unknown)."""
        with self._cond:
            f, ids, scene = self.frame, self._ids, self._scene
        if f is None:
            raise SceneError("pixel", "no image yet")
        h, w = f.image.shape[:2]
        if not (0 <= x < w and 0 <= y < h):
            raise SceneError("pixel", f"({x}, {y}) is outside the {w} x {h} image")
        out = {"x": x, "y": y, "value": [float(v) for v in f.image[y, x]], "object": None, "material": None}
        ids = ids.get(f.generation)
        if ids is not None and scene is not None and y < ids[0].shape[0]:
            obj, mat = int(ids[0][y, x]), int(ids[1][y, x])
            out["object"] = scene.object_names[obj] if 0 <= obj < len(scene.object_names) else None
            out["material"] = scene.material_names[mat] if 0 <= mat < len(scene.material_names) else None
        return out

    def save(self, fmt, folder, exposure=0.0):
        """Write the current frame to ``folder`` as ``<scene>-view-NNN.png|exr`` (the first
        free number, taken atomically: nothing is replaced, no symlink followed,
        :func:`raytrace.view.savefile.write_new`) through the renderer's encoders -> the
        path. PNG: sRGB-encoded with ``exposure`` (stops) applied, debug views as shown;
        EXR: linear radiance (or the view's colours) as rendered, without exposure."""
        from ..image import encode_image
        from .savefile import write_new
        if fmt not in ("png", "exr"):
            raise SceneError("format", f"must be png or exr, got {fmt!r}")
        exposure = _number(exposure, "exposure")
        f = self.frame
        if f is None:
            raise SceneError("save", "no image yet")
        with self._save_lock:
            if fmt == "png":
                data = f.png(exposure)
            else:
                meta = {"view": f.mode, "spp": f.spp, "integrator": f.integrator, "scene": str(self.scene_path)}
                if f.info is not None:
                    meta = dict(dataclasses.asdict(f.info), view=f.mode, scene=str(self.scene_path))
                data = encode_image("frame.exr", f.image, metadata=meta)
            return write_new(folder, f"{self.scene_path.stem}-view-", f".{fmt}", data)

    def close(self):
        """Stop watching and rendering (waits a few seconds for the worker's current pass)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._wake.set()
        self.watcher.close()
        self.code_watcher.close()
        self._thread.join(timeout=10)

    # ------------------------------------------------------------------ the worker
    def _say(self, text):
        if self.log is not None and text != self._last_logged:
            print(f"raytrace view: {text}", file=self.log, flush=True)
        self._last_logged = text

    def _set(self, **changes):
        with self._cond:
            for name, value in changes.items():
                setattr(self, name, value)
            self.version += 1
            self._cond.notify_all()

    def _check(self, generation):
        if self._closed or self.generation != generation:
            raise _Restart

    def _run(self):
        from ..jit import warmup
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._closed:
                return
            with self._cond:
                generation, reload = self.generation, self._reload
                self._reload = False
            stage = "_load_error"
            done = threading.Event()
            try:
                if reload and self._code_changed:
                    self._reload_code()
                with warmup.CompileTimer(on_start=lambda: self._compiling(done)) as self._timer:
                    if reload:                      # (loading compiles the BVH builder)
                        self._load(generation)
                    stage = "_render_error"
                    if self._scene is not None:
                        self._render(generation)
            except _Restart:
                continue
            except Exception as exc:  # noqa: BLE001 - every failure becomes the page's one line
                line = error_line(exc)
                self._say(f"error: {line}")
                self._set(**{stage: line, "message": ""})
            finally:
                done.set()
                self._timer = None

    def _reload_code(self):
        """After an edit of the package's code: import it afresh (:mod:`.code`)."""
        with self._cond:
            changed, self._code_changed = self._code_changed, []
        shown = ", ".join(sorted({kernel_code.shown(p) for p in changed}))
        later = kernel_code.restart_needed(changed)
        if later:
            self._say(f"{', '.join(kernel_code.shown(p) for p in later)} changed: start raytrace view "
                      f"again to use it (the preview's own code)")
        kernel_code.unload()
        self.code_watcher.watch(kernel_code.watched())
        self._say(f"{shown} changed: loading the code")
        self._set(message=f"{shown} changed: loading the code", _render_error="")

    def _load(self, generation):
        from ..animation.scene_at import animated
        from ..loading import load_scene
        from ..jit import warmup
        self._set(message="loading")
        before = stamps([self.scene_path, *self.watcher.paths])
        integrator = self.overrides.get("integrator")
        with warmup.ahead(self.scene_path, integrator, timer=self._timer) as ahead:   # the CLI's warm-up
            scene, files, error = load_guarded(load_scene, self.scene_path)
            ahead.compile = error is None
        # the scene's own path, not where a symlink at it points (that may be /dev/zero);
        # loaded: the files it read (scene.files)
        watched = {self.scene_path.absolute(), *files}
        if scene is None:                     # a failed load keeps watching what it had
            watched |= {p.absolute() for p in before}
        self.watcher.watch(sorted(watched), {p.absolute(): s for p, s in before.items()})
        if error is not None:
            raise error
        anim = animated(scene) if "animation" in scene.data else None
        rng = (anim.start, anim.end) if anim is not None and anim.end is not None else None
        with self._cond:
            self._scene = scene
            self._ids = {}
            self._time_range = rng
            if rng is None:
                self._time = None
            elif self._time is None or not rng[0] <= self._time <= rng[1]:
                self._time = rng[0]
        if self._load_error:
            self._say(f"{self.scene_path} loaded")
        self._last_logged = None
        self._set(_load_error="")

    def _scene_now(self):
        """The scene to render: at the chosen time, with the preview's camera."""
        from ..animation.scene_at import scene_at
        scene = self._scene
        if self._time is not None:
            scene = scene_at(scene, self._time)     # shares the loaded scene's environment
        file_cam = scene.data["camera"]
        with self._cond:
            self._file_camera = camera_moves.look_at_form(file_cam, self._look_distance(file_cam, scene))
            cam = self._camera
        if cam is None:
            return scene
        return dataclasses.replace(scene, data=dict(scene.data, camera=cam))    # nothing rebuilt

    def _look_distance(self, cam, scene=None):
        """How far along a ``direction`` camera its look-at point is: the focus distance
        when given, else the distance to the middle of the scene's bounds along the view
        (at least 1)."""
        if "look_at" in cam:
            return 1.0
        if "focus_distance" in cam:
            return float(cam["focus_distance"])
        from ..scene.emitters import scene_bounds
        scene = scene or self._scene
        lo, hi = scene_bounds(scene.geometry)
        eye, d = np.asarray(cam["center"], np.float64), np.asarray(cam["direction"], np.float64)
        along = float(np.dot((np.asarray(lo) + np.asarray(hi)) / 2 - eye, d / np.linalg.norm(d)))
        return along if math.isfinite(along) and along > 1.0 else 1.0

    def _render(self, generation):
        from ..integrators import integrator
        from ..renderer import resolve_settings
        scene = self._scene_now()
        s = resolve_settings(scene, self.overrides)
        self._set(message="rendering", _render_error="")
        if self._mode != "color":
            self._render_view(scene, s, generation)
        elif integrator(s["integrator"]).progressive:
            self._render_path(scene, s, generation)
        else:
            self._render_whitted(scene, s, generation)
        self._set(message="")

    def _compiling(self, done):
        """Numba started compiling: the compile notice (``raytrace.jit.notice``: what and
        why, then one line per kernel compiled with its seconds), each line shown in the
        page's ``message`` and said in the terminal, until the work of this generation is
        ``done``."""
        from ..jit import notice, warmup
        roots = warmup.roots(builder=True)
        try:
            if self._scene is not None:
                from ..renderer import resolve_settings
                roots = warmup.roots(resolve_settings(self._scene, self.overrides)["integrator"], builder=True)
        except Exception:     # noqa: BLE001 - only the wording depends on it
            pass
        session = self

        class _Lines:
            """The notice's stream: each line to the terminal, and to the page while the
            generation works (its closing line only to the terminal)."""

            def write(self, text):
                line = text.strip().removeprefix("raytrace: ")
                if line:
                    session._say(line)
                    if not done.is_set():
                        session._set(message=line)

            def flush(self):
                pass

            def isatty(self):
                return False

        shown = notice.CompileNotice(True, stream=_Lines(), timer=self._timer, roots=roots)
        shown.begin(forced=False)
        threading.Thread(target=lambda: (done.wait(), shown.finish()), name="raytrace-view-compiling",
                         daemon=True).start()

    def _publish(self, generation, image, **fields):
        with self._cond:
            if self.generation != generation:
                raise _Restart
            fid = (self.frame.id + 1) if self.frame is not None else 1
            self.frame = Frame(id=fid, generation=generation, image=image, mode=self._mode, **fields)
            self.message = ""
            self.version += 1
            self._cond.notify_all()

    def _ids_for(self, scene, generation):
        """Object and material ids through the pixel centres (hover names)."""
        from ..views import id_images
        obj, mat = id_images(scene, **{k: v for k, v in self.overrides.items() if k in ("width", "height")})
        with self._cond:
            self._ids[generation] = (obj, mat)
            for old in sorted(self._ids)[:-4]:
                del self._ids[old]

    def _render_whitted(self, scene, s, generation):
        from ..renderer import render
        t0 = time.perf_counter()
        h, w = s["height"], s["width"]

        def check(done, total):
            self._check(generation)

        ov = dict(self.overrides, integrator="whitted")
        small = render(scene, callback=check, **dict(ov, width=max(1, w // PREVIEW_SCALE),
                                                     height=max(1, h // PREVIEW_SCALE), spp=1))
        rows = np.minimum(np.arange(h) * small.shape[0] // h, small.shape[0] - 1)
        cols = np.minimum(np.arange(w) * small.shape[1] // w, small.shape[1] - 1)
        self._publish(generation, np.ascontiguousarray(np.asarray(small)[rows][:, cols]), integrator="whitted",
                      stage="preview", spp=1, spp_target=s["spp"], seconds=time.perf_counter() - t0)
        self._ids_for(scene, generation)
        image = render(scene, callback=check, **ov)
        self._publish(generation, np.asarray(image), integrator="whitted", stage="done", spp=s["spp"],
                      spp_target=s["spp"], seconds=time.perf_counter() - t0, info=image.info)

    def _render_path(self, scene, s, generation):
        """The renderer's progressive loop (:func:`raytrace.renderer.render`, adaptive
        sampling included), one pass per kernel call: each pass checks that the work is
        still current, partial images are published as frames."""
        from ..renderer import render
        t0 = time.perf_counter()
        target = s["max_spp"] if s["noise_threshold"] is not None else s["spp"]
        ids_done = []

        def check(done, total):
            self._check(generation)

        def publish(image, stage):
            n = image.info.spp
            noise = noise_estimate(np.asarray(image), image.variance) if n >= 2 and image.variance is not None \
                else None
            self._publish(generation, np.asarray(image), integrator="path", stage=stage, spp=n, spp_target=target,
                          seconds=time.perf_counter() - t0, noise=noise, info=image.info)
            if not ids_done:
                self._ids_for(scene, generation)
                ids_done.append(True)

        image = render(scene, callback=check, variance=True, partial=lambda part: publish(part, "refining"),
                       partial_seconds=PUBLISH_EVERY, partial_first=True, **self.overrides)
        publish(image, "done")

    def _render_view(self, scene, s, generation):
        from ..views import render_view
        t0 = time.perf_counter()
        view = render_view(scene, self._mode, **self.overrides)
        self._publish(generation, np.ascontiguousarray(view.image, np.float32), integrator=s["integrator"],
                      stage="done", spp=s["spp"], spp_target=s["spp"], seconds=time.perf_counter() - t0,
                      report=view.report)
        self._ids_for(scene, generation)


def _number(value, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SceneError(where, f"must be a finite number, got {value!r}")
    return float(value)


def error_line(exc):
    """The command line's one line for an exception (bad input, an I/O failure, or a bug);
    for edited kernel code that does not compile or load, its short block."""
    from ..jit.errors import is_compile_error, kernel_error
    if is_compile_error(exc):
        return str(kernel_error(exc))
    broken = kernel_code.syntax_error_text(exc)
    if broken is not None:
        return f"kernel code does not load: {broken}"
    return error_text(exc) or f"internal error (a bug): {bug_text(exc)}"
