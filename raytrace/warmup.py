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
"""
import json
import os
import pathlib
import subprocess
import sys
import threading
import time

_CHILD = "import sys, raytrace.warmup as w; w.compile_here(sys.argv[1])"


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


def integrator_of(scene_path, override=None):
    """The integrator a scene file asks for (cheap peek; 'whitted' when unsure)."""
    if override:
        return override
    path = pathlib.Path(scene_path)
    if path.suffix.lower() in (".gltf", ".glb"):
        return "path"                       # glTF files render with the path tracer
    if path.suffix.lower() != ".json":
        return "whitted"
    try:
        kind = json.loads(path.read_text()).get("integrator", {}).get("type", "whitted")
    except (OSError, ValueError, AttributeError):
        return "whitted"
    return kind if kind in ("whitted", "path") else "whitted"


def start(integrator):
    """Start the child compile when it would help; returns the process or None."""
    if os.environ.get("RAYTRACE_NO_WARMUP") or (os.cpu_count() or 1) < 2 or is_cached(integrator):
        return None
    try:
        return subprocess.Popen([sys.executable, "-c", _CHILD, integrator],
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


def compile_here(integrator):
    """Child side: render one pixel of a scene with an empty BVH (a plane only)."""
    import raytrace
    scene = raytrace.load_scene({
        "camera": {"center": [0, 1, 0], "direction": [0, -1, 0], "up": [0, 0, -1]},
        "integrator": {"type": integrator},
        "lights": [{"type": "directional", "direction": [0, -1, 0]}],
        "objects": [{"type": "plane", "normal": [0, 1, 0]}],
    })
    raytrace.render(scene, width=1, height=1, spp=1)
