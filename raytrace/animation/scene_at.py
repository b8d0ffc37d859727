"""A scene at a time: an animated scene -> the complete static scene at any time t.

    anim = AnimatedScene.load("scenes/animation/orbit.json")
    for k in range(anim.frame_count):
        image = raytrace.render(anim.scene_at(anim.frame_time(k)))

    scene = raytrace.load_scene("walk.json")
    still = raytrace.scene_at(scene, 0.5)          # the same from a loaded scene

``scene_at(t)`` works for any time, not only frame times (motion blur samples times
inside the shutter), and is cheap to call often: the scene is validated and its tracks
parsed once; the dict at ``t`` shares every part that does not move with the scene's own
dict; cloth is simulated once for the whole range (:mod:`raytrace.animation.cloth`) and
sampled; skinned models stay loaded (the plug-in's cache). The geometry and its BVH are
rebuilt only when something that shapes them changed since the last call (an object's
transform, emission, clip time or cloth state): an animation of the camera or the lights
alone builds them once. A scene without an ``animation`` is its own scene at every time.
"""
import pathlib
import threading

from userio.reads import recording

from ..camera import make_camera
from ..errors import SceneError
from ..scene.animation import DEFAULT_FPS, frame_range, named_lights, named_objects
from ..scene.build import build_geometry
from ..scene.emitters import environment_mean
from ..loading import fill_shadow_maps
from ..scene.load import read_scene
from ..scene.ready import RenderScene, assemble, build_environment_of
from ..scene.objects import particles as cloth_plugin
from . import cloth as cloth_sim
from .timeline import frame_count, frame_time
from .tracks import CameraTracks, LightTracks, ObjectTracks


def _all_objects(data):
    """(JSON path parts, object) of every object, group children and prototypes included."""
    stack = [(obj, ("objects", i)) for i, obj in enumerate(data.get("objects", []))]
    stack += [(obj, ("prototypes", n)) for n, obj in data.get("prototypes", {}).items()]
    while stack:
        obj, path = stack.pop()
        yield path, obj
        if obj.get("type") == "group":
            stack += [(c, path + ("children", i)) for i, c in enumerate(obj["children"])]


def _where(path):
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else ("." if out else "") + str(p)
    return out


class AnimatedScene:
    """A validated scene with its tracks. ``start``, ``end``, ``fps``: the frame range
    (``fps`` may be overridden); ``frame_count`` frames at ``frame_time(k)``. Picklable
    (for render-farm workers): the pickle carries the scene dict and the cloth
    simulations, never the built geometry."""

    def __init__(self, data, base_dir, path=None, fps=None, cache_dir=None, environment=None):
        self.data = data
        self._environment = environment       # built at the first scene_at, or a loaded scene's
        self._environment_mean = None         # its mean radiance (for the lights), computed once
        self._environment_files = []
        self.base_dir = pathlib.Path(base_dir)
        self.path = path
        self.cache_dir = cache_dir
        anim = data.get("animation")
        if anim is not None:
            self.start, self.end, self.fps = frame_range(anim)
        else:
            self.start, self.end, self.fps = 0.0, None, DEFAULT_FPS
        if fps is not None:
            if not (isinstance(fps, (int, float)) and 0 < fps <= 1000):
                raise SceneError("--fps", f"must be a number in (0, 1000], got {fps!r}")
            self.fps = float(fps)
        self.cloth_positions = {}       # object path -> (steps + 1, n, 3), filled by prepare()
        self._setup()

    # ------------------------------------------------------------------ construction
    @classmethod
    def load(cls, source, base_dir=None, fps=None, cache_dir=None):
        """From a scene file or dict (paths in a dict relative to ``base_dir``, default the
        current folder), validated once. A loaded :class:`~raytrace.scene.ready.RenderScene`
        also works (its dict is used, and its environment shared)."""
        if isinstance(source, RenderScene):
            return cls(source.data, source.base_dir, source.path, fps, cache_dir, source.environment)
        data, base, path = read_scene(source, base_dir)
        try:
            return cls(data, base, path, fps, cache_dir)
        except SceneError as exc:
            raise exc.with_file(path if path else "<scene dict>") from None

    def _setup(self):
        data, anim = self.data, self.data.get("animation", {})
        self.camera = CameraTracks(data["camera"], anim.get("camera", {}), self.start,
                                   self.end if self.end is not None else self.start + 1.0)
        lights = named_lights(data)
        self.lights = {lights[name][0]: LightTracks(data["lights"][lights[name][0]], tracks)
                       for name, tracks in anim.get("lights", {}).items()}
        named = {name: tuple(entries[0][0]) for name, entries in named_objects(data).items()}
        by_path = {named[name]: (name, tracks) for name, tracks in anim.get("objects", {}).items()}
        self.objects = {}
        self.cloth_steps = {}
        animated = "animation" in data
        for path, obj in _all_objects(data):
            name, tracks = by_path.get(path, (None, {}))
            cloth = None
            if animated and obj["type"] == "cloth":
                dt, _ = cloth_sim.step_for(obj.get("dt", cloth_plugin.DEFAULT_DT), self.fps)
                steps = cloth_sim.step_count(self.end, dt)
                self.cloth_steps[path] = steps
                cloth = (dt, steps * dt)
            binding = ObjectTracks(obj, tracks, name, cloth) if animated else None
            if binding is not None and (binding.tracks or binding.play_clip or cloth is not None):
                self.objects[path] = binding
        self._lock = threading.Lock()
        self._built = None              # (fingerprint, geometry, labels, accel) of the last build
        self._provided = False

    def __getstate__(self):
        state = {k: self.__dict__[k] for k in ("data", "base_dir", "path", "cache_dir", "start",
                                               "end", "fps", "cloth_positions")}
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._environment, self._environment_files, self._environment_mean = None, [], None
        self._setup()

    # ------------------------------------------------------------------------ frames
    @property
    def animated(self):
        return self.end is not None

    @property
    def frame_count(self):
        """Frames of the animation (1 for a still)."""
        return frame_count(self.start, self.end, self.fps) if self.animated else 1

    def frame_time(self, k):
        """Scene time (s) of frame ``k``: ``start + k / fps``."""
        return frame_time(self.start, self.fps, k)

    def setting(self, section, key, default):
        """``data[section][key]``, or ``default`` (the settings of every time: the image and
        integrator sections are not animated)."""
        return self.data.get(section, {}).get(key, default)

    @property
    def name(self):
        return str(self.path) if self.path else "<scene dict>"

    # ------------------------------------------------------------------------- cloth
    def prepare(self, notice=None):
        """Simulate (or load from the disk cache) every cloth over the whole range, once.
        Returns how many simulations came from the cache. Called by :meth:`scene_at` when
        needed; call it early to pay the simulation before rendering starts.
        ``notice(where, steps)`` is called before each simulation that is not cached."""
        from_cache = 0
        for path, binding in self.objects.items():
            if binding.cloth is None or path in self.cloth_positions:
                continue
            obj = dict(binding.obj, dt=binding.cloth[0])
            try:
                q, cached = cloth_sim.positions(obj, self.cloth_steps[path], _where(path), self.cache_dir,
                                                notice)
            except SceneError as exc:
                raise exc.with_file(self.name) from None
            self.cloth_positions[path] = q
            from_cache += cached
        return from_cache

    def _provide_cloth(self):
        if self._provided:
            return
        self.prepare()
        for path, binding in self.objects.items():
            if binding.cloth is not None:
                cloth_plugin.provide_states(dict(binding.obj, dt=binding.cloth[0]),
                                            self.cloth_positions[path])
        self._provided = True

    # ------------------------------------------------------------------- time -> scene
    def data_at(self, t):
        """The static scene dict at time ``t`` (seconds): shares every unchanged part with
        the scene's dict (treat it as read-only); no ``animation`` key."""
        t = float(t)
        data = dict(self.data)
        data.pop("animation", None)
        if not self.animated:
            return data
        try:
            if self.camera.animated:
                data["camera"] = self.camera.at(t)
            if self.lights:
                data["lights"] = list(data["lights"])
                for i, tracks in self.lights.items():
                    data["lights"][i] = tracks.at(t)
            copied = set()
            for path, binding in self.objects.items():
                _replace(data, path, binding.at(t), copied)
        except SceneError as exc:
            raise exc.with_file(self.name) from None
        return data

    def _fingerprint(self, t):
        return tuple(binding.values(t) for binding in self.objects.values())

    def scene_at(self, t):
        """The complete static :class:`~raytrace.scene.ready.RenderScene` at time ``t``
        (lights, shadow maps built for that time; the environment, which is not animated,
        built once and shared by every time)."""
        with self._lock:
            self._provide_cloth()
            data = self.data_at(t)
            try:
                make_camera(data["camera"])
            except SceneError as exc:
                raise SceneError("animation.camera", f"at t = {float(t):g} s: {exc}",
                                 file=self.name) from None
            key = self._fingerprint(float(t))
            if self._built is None or self._built[0] != key:
                from ..accel.instances import build_scene_accel
                try:
                    with recording() as read:
                        geometry, labels = build_geometry(data, self.base_dir)
                    self._built = (key, geometry, labels, build_scene_accel(geometry), read.paths)
                except SceneError as exc:
                    raise exc.with_file(self.name) from None
            if self._environment is None:
                with recording() as read:
                    self._environment = build_environment_of(data, self.base_dir, self.name)
                self._environment_files = read.paths
            if self._environment_mean is None:
                self._environment_mean = environment_mean(self._environment)
            _, geometry, labels, accel, files = self._built
            own = [pathlib.Path(self.path).absolute()] if self.path else []
            files = list(dict.fromkeys(own + self._environment_files + files))
            return assemble(data, self.base_dir, self.path, geometry, labels, accel, fill_shadow_maps, files,
                            self._environment, self._environment_mean)


def _replace(data, path, value, copied):
    """Set ``data[path]`` to ``value``, copying (once per call, ``copied`` holds the ids
    of the copies) every container on the way instead of changing the shared ones."""
    node = data
    for key in path[:-1]:
        child = node[key]
        if id(child) not in copied:
            child = list(child) if isinstance(child, list) else dict(child)
            node[key] = child
            copied.add(id(child))
        node = child
    node[path[-1]] = value


def animated(scene, base_dir=None):
    """The :class:`AnimatedScene` of ``scene``: itself, the one kept for a loaded
    :class:`~raytrace.scene.ready.RenderScene` (made once per scene object), or a new one loaded
    from a path or a dict (paths in a dict relative to ``base_dir``)."""
    if isinstance(scene, AnimatedScene):
        return scene
    if isinstance(scene, RenderScene):
        anim = scene.memo.get("animated")          # kept with the scene object, made once
        if anim is None:
            anim = scene.memo["animated"] = AnimatedScene(scene.data, scene.base_dir, scene.path,
                                                          environment=scene.environment)
        return anim
    return AnimatedScene.load(scene, base_dir=base_dir)


def scene_at(scene, t):
    """The static scene at time ``t`` (seconds) of a scene from :func:`raytrace.load_scene`
    (or of an :class:`AnimatedScene`). A scene without an ``animation`` is returned as it is."""
    if isinstance(scene, AnimatedScene):
        return scene.scene_at(t)
    if "animation" not in scene.data:
        return scene
    return animated(scene).scene_at(t)
