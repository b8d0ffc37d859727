"""Compile the integrator kernel in a second process while this one loads the scene.

With an empty Numba cache a first render pays two compiles one after the other: the BVH
builder (inside ``load_scene``) and the integrator kernel (inside ``render``). On a machine
with two or more cores, :func:`start` compiles the integrator in a child process, which
renders a one-pixel scene with an empty BVH (so it does not compile the builder too) and
thereby fills the on-disk cache; the parent loads the scene meanwhile, then :func:`wait`\\ s
and loads the kernel from the cache. Nothing happens when the kernel is already cached,
with one core, or when ``RAYTRACE_NO_WARMUP`` is set.

:class:`CompileNotice` tells the user while this happens: one line when compiling starts
("compiling kernels, first run only") with the elapsed seconds, and how long it took.
:func:`notice_on_compile` does the same for a block that may or may not compile (a scene
with instances compiles its own specialisation of the integrator, see
``raytrace.accel.instances``): it listens to Numba's compile events and speaks only when
one starts.
"""
import contextlib
import json
import os
import pathlib
import subprocess
import sys
import threading
import time

_CHILD = "import sys, raytrace.warmup as w; w.compile_here(sys.argv[1], sys.argv[2] == '1')"


def _kernel(integrator):
    if integrator == "path":
        from .kernels.path import path_rows
        return path_rows
    from .kernels.whitted import whitted_rows
    return whitted_rows


def _dispatcher_cached(dispatcher):
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    index = getattr(cache_file, "_index_path", None)
    return index is None or os.path.exists(index)


def is_cached(integrator):
    """True when the kernel's cache index exists (some overload was compiled before)."""
    return _dispatcher_cached(_kernel(integrator))


def builder_cached():
    """True when the BVH builder's kernels are in the on-disk cache."""
    from .accel import build
    return all(_dispatcher_cached(f) for f in (build._build_binary, build._plan_wide, build._emit_wide))


class CompileNotice:
    """While compiling on first use: one line on stderr, ticking on a terminal.

        with CompileNotice(active=not warmup.is_cached(kind), stream=sys.stderr):
            ...compile...
    """

    def __init__(self, active, stream=None, prog="raytrace"):
        self.active = active
        self.stream = sys.stderr if stream is None else stream
        self.prog = prog
        self._stop = threading.Event()
        self._thread = None
        self.seconds = 0.0

    def __enter__(self):
        if not self.active:
            return self
        self._t0 = time.perf_counter()
        tty = getattr(self.stream, "isatty", lambda: False)()
        self._line = f"{self.prog}: compiling kernels, first run only (cached afterwards)..."
        if tty:
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        else:
            print(self._line, file=self.stream, flush=True)
        return self

    def _tick(self):
        while not self._stop.wait(0.5):
            print(f"\r{self._line} {time.perf_counter() - self._t0:.0f} s", end="",
                  file=self.stream, flush=True)

    def __exit__(self, *exc):
        if not self.active:
            return False
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            print("\r\033[K", end="", file=self.stream)
        self.seconds = time.perf_counter() - self._t0
        if exc[0] is None:
            print(f"{self.prog}: kernels compiled in {self.seconds:.1f} s", file=self.stream, flush=True)
        return False


@contextlib.contextmanager
def notice_on_compile(enabled=True, stream=None, prog="raytrace"):
    """A :class:`CompileNotice` that starts when Numba starts compiling in this block (a
    ``numba:compile`` event; loading from the cache sends none) and otherwise says
    nothing."""
    if not enabled:
        yield
        return
    from numba.core import event

    notice = CompileNotice(True, stream, prog)

    class _Listener(event.Listener):
        def on_start(self, ev):
            if not hasattr(notice, "_t0"):
                notice.__enter__()

        def on_end(self, ev):
            pass

    try:
        with event.install_listener("numba:compile", _Listener()):
            yield
    except BaseException as exc:
        if hasattr(notice, "_t0"):
            notice.__exit__(type(exc), exc, exc.__traceback__)
        raise
    if hasattr(notice, "_t0"):
        notice.__exit__(None, None, None)


def _peek(scene_path):
    """The scene file's JSON (None when it is not JSON or does not parse)."""
    path = pathlib.Path(scene_path)
    if path.suffix.lower() != ".json":
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError):      # the loader reports these properly
        return None
    return data if isinstance(data, dict) else None


def integrator_of(scene_path, override=None):
    """The integrator a scene file asks for (cheap peek; 'whitted' when unsure)."""
    if override:
        return override
    if pathlib.Path(scene_path).suffix.lower() in (".gltf", ".glb"):
        return "path"                       # glTF files render with the path tracer
    try:
        kind = (_peek(scene_path) or {}).get("integrator", {}).get("type", "whitted")
    except AttributeError:
        return "whitted"
    return kind if kind in ("whitted", "path") else "whitted"


def uses_instances(scene_path):
    """Whether a JSON scene shows a prototype by two or more ``instance`` objects (cheap
    peek; False when unsure): its integrator is then compiled for an accel with instance
    levels (a prototype shown once is placed in world space)."""
    uses = {}

    def walk(objects):
        for obj in objects if isinstance(objects, list) else ():
            if isinstance(obj, dict):
                if obj.get("type") == "instance":
                    name = str(obj.get("prototype"))
                    uses[name] = uses.get(name, 0) + 1
                walk(obj.get("children"))
    walk((_peek(scene_path) or {}).get("objects"))
    return any(n >= 2 for n in uses.values())


def start(integrator, instanced=False):
    """Start the child compile when it would help; returns the process or None.
    ``instanced``: compile for a scene with instances (see :func:`compile_here`)."""
    if os.environ.get("RAYTRACE_NO_WARMUP") or (os.cpu_count() or 1) < 2 or is_cached(integrator):
        return None
    try:
        return subprocess.Popen([sys.executable, "-c", _CHILD, integrator, "1" if instanced else "0"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    except OSError:
        return None


def wait(proc, timeout=300):
    """Wait for the child (if any); a failed or slow child only costs the parent a compile."""
    if proc is None:
        return
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()


def compile_here(integrator, instanced=False):
    """Child side: render one pixel of a scene with an empty BVH (a plane only); with
    ``instanced`` through an accel with (empty) instance levels, so that the kernels are
    compiled for scenes with instances."""
    import raytrace
    from .accel.instances import with_empty_instance_levels
    scene = raytrace.load_scene({
        "camera": {"center": [0, 1, 0], "direction": [0, -1, 0], "up": [0, 0, -1]},
        "integrator": {"type": integrator},
        "lights": [{"type": "directional", "direction": [0, -1, 0]}],
        "objects": [{"type": "plane", "normal": [0, 1, 0]}],
    })
    if instanced:
        scene.accel = with_empty_instance_levels(scene.accel)
    raytrace.render(scene, width=1, height=1, spp=1)
