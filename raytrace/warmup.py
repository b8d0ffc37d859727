"""Compile the integrator kernel in a second process while this one loads the scene.

With an empty Numba cache a first render pays two compiles one after the other: the BVH
builder (inside ``load_scene``) and the integrator kernel (inside ``render``). On a machine
with two or more cores, :func:`start` compiles the integrator in a child process, which
renders a one-pixel scene with an empty BVH (so it does not compile the builder too) and
thereby fills the on-disk cache; the parent loads the scene meanwhile, then :func:`wait`\\ s
and loads the kernel from the cache. Nothing happens when the kernel is already cached,
with one core, or when ``RAYTRACE_NO_WARMUP`` is set.

:class:`CompileNotice` tells the user while this happens: what compiles and why
("compiling 3 kernels after edits to kernels/bsdf.py: ggx_d", "... first run here"), its
progress and the seconds, then how long it took.
:func:`notice_on_compile` does the same for a block that may or may not compile (a scene
with instances compiles its own specialisation of the integrator, see
``raytrace.accel.instances``; depth and normal images and debug views use kernels of
their own): it listens to Numba's compile events and speaks only when one starts.
:class:`CompileTimer` measures the compiling with the same events, so that renders report
their compile time apart from their render time (``RenderInfo.compile_seconds``).
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


def _builder():
    from .accel import build
    return [build._build_binary, build._plan_wide, build._emit_wide]


def roots(integrator=None, builder=False):
    """The kernels a render starts from (what Numba compiles, with all they call): the
    integrator's row kernel and, with ``builder``, the BVH builder's three."""
    out = _builder() if builder else []
    return out + ([_kernel(integrator)] if integrator else [])


def _dispatcher_cached(dispatcher):
    from .compile import cache, plan
    if cache.dispatcher_cache(dispatcher) is not None:
        return not plan.stale([dispatcher])
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    index = getattr(cache_file, "_index_path", None)
    return index is None or os.path.exists(index)


def is_cached(integrator):
    """True when the integrator's kernels are cached as the code is now (nothing of them
    would compile)."""
    return _dispatcher_cached(_kernel(integrator))


def builder_cached():
    """True when the BVH builder's kernels are in the on-disk cache."""
    return all(_dispatcher_cached(f) for f in _builder())


class CompileTimer:
    """The seconds spent compiling kernels in this process while active (``with``):
    Numba's ``numba:compile`` events (the outermost of nested ones: a kernel compiles the
    functions it calls inside its own event), plus the time spent in :meth:`counting`
    (waiting for the child process that compiles, see :func:`wait`). Loading a kernel from
    the on-disk cache sends no event, so it counts as no compiling.

        with CompileTimer() as timer:
            ...
        timer.seconds, timer.compiled

    ``on_start()`` is called when the first compile of the block starts (in the compiling
    thread). Timers nest: each one sees every compile of its block."""

    def __init__(self, on_start=None):
        self.on_start = on_start
        self.compiled = False        # whether anything was compiled (or counted) in the block
        self._done = 0.0             # seconds of the compiles that ended
        self._depth = 0
        self._t0 = None
        self._lock = threading.Lock()
        self._listener = None

    @property
    def seconds(self):
        """Compile seconds so far (a compile in progress counts up to now)."""
        with self._lock:
            running = time.perf_counter() - self._t0 if self._depth else 0.0
            return self._done + running

    @property
    def compiling(self):
        """True while a compile (or a :meth:`counting` block) is in progress."""
        return self._depth > 0

    def begin(self):
        """A compile starts (nested ones only count once)."""
        with self._lock:
            self._depth += 1
            first = self._depth == 1 and not self.compiled
            if self._depth == 1:
                self._t0 = time.perf_counter()
                self.compiled = True
        if first and self.on_start is not None:
            self.on_start()

    def end(self):
        """The compile started by the matching :meth:`begin` ends."""
        with self._lock:
            if self._depth == 0:
                return
            self._depth -= 1
            if self._depth == 0:
                self._done += time.perf_counter() - self._t0

    @contextlib.contextmanager
    def counting(self):
        """Count the block's wall time as compiling (compiles inside it count once)."""
        self.begin()
        try:
            yield self
        finally:
            self.end()

    def __enter__(self):
        from numba.core import event

        timer = self

        class _Listener(event.Listener):
            def on_start(self, ev):
                timer.begin()

            def on_end(self, ev):
                timer.end()

        self._listener = _Listener()
        event.register("numba:compile", self._listener)
        return self

    def __exit__(self, *exc):
        from numba.core import event
        event.unregister("numba:compile", self._listener)
        while self._depth:             # left in the middle of a compile (an exception)
            self.end()
        return False


class CompileNotice:
    """While kernels compile: what compiles and why, then progress, on stderr.

        with CompileNotice(active, stream=sys.stderr, roots=warmup.roots("path")):
            ...compile...

    The first line comes from :func:`raytrace.compile.plan.explain` for ``roots`` (the
    kernels the block compiles): how many kernels and why ("after edits to
    kernels/bsdf.py: ggx_d", "first run here"); without ``roots``, "compiling kernels".
    On a terminal it then ticks ``[done/total] file: function  T s``, counting the
    stale kernels as Numba's compile events end; elsewhere the line is printed once. The
    closing line gives the seconds. Ticking and closing use one clock: the
    :class:`CompileTimer`'s seconds when there is one (compile events and waits for the
    warm-up child), else the block's wall time; a notice that :meth:`begin` started on
    a compile event (not ``forced``) ticks only while something compiles (so it does not
    draw over a progress bar afterwards)."""

    def __init__(self, active, stream=None, prog="raytrace", timer=None, roots=None):
        self.active = active
        self.stream = sys.stderr if stream is None else stream
        self.prog = prog
        self.timer = timer
        self.roots = roots
        self._stop = threading.Event()
        self._thread = None
        self._forced = True
        self._started = False
        self._stale = {}            # id(dispatcher) -> label, of the kernels expected to compile
        self._pending = []          # the expected kernels not yet in the cache
        self._current = ""
        self._listener = None
        self.seconds = 0.0

    def __enter__(self):
        self.begin()
        return self

    def _describe(self):
        if not self.roots:
            return "compiling kernels"
        try:
            from .compile import plan
            found = plan.explain(self.roots)
        except Exception:     # noqa: BLE001 - only the notice's wording depends on it
            return "compiling kernels"
        self._stale = {id(d): plan.name(d) for d in found.stale}
        self._pending = list(found.stale)
        return found.describe() or "compiling kernels"

    def begin(self, forced=True):
        """Say that compiling starts (once; nothing when not ``active``)."""
        if not self.active or self._started:
            return
        self._started = True
        self._forced = forced
        self._t0 = time.perf_counter()
        self._line = f"{self.prog}: {self._describe()}"
        self._listen()
        tty = getattr(self.stream, "isatty", lambda: False)()
        if tty:
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        else:
            print(self._line + " ...", file=self.stream, flush=True)

    def _listen(self):
        """Count the expected kernels as their compiles end (Numba's compile events)."""
        from numba.core import event
        notice = self

        class _Progress(event.Listener):
            def on_start(self, ev):
                label = notice._stale.get(id(ev.data.get("dispatcher")))
                if label:
                    notice._current = label

            def on_end(self, ev):
                pass
        self._listener = _Progress()
        event.register("numba:compile", self._listener)

    def _elapsed(self):
        if self.timer is None:
            return time.perf_counter() - self._t0
        return self.timer.seconds

    def status(self):
        """``[done/total] file: function``: the expected kernels now in the cache (whichever
        process compiled them: this one or the warm-up child), and the one this process
        compiles now (empty without a plan)."""
        if not self._stale:
            return ""
        from .compile import plan
        self._pending = [d for d in self._pending if not plan.compiled(d)]
        done = len(self._stale) - len(self._pending)
        return f"[{done}/{len(self._stale)}] {self._current}".rstrip()

    def _tick(self):
        shown = False
        while not self._stop.wait(0.5):
            if self.timer is None or self._forced or self.timer.compiling:
                status = self.status()
                print(f"\r\033[K{self._line}{' ' + status if status else ''} {self._elapsed():.0f} s", end="",
                      file=self.stream, flush=True)
                shown = True
            elif shown:
                print("\r\033[K", end="", file=self.stream, flush=True)
                shown = False

    def __exit__(self, *exc):
        self.finish(exc[0])
        return False

    def finish(self, exc_type=None):
        """Close the notice: on success, one line with the seconds spent compiling."""
        if not self._started:
            return
        self._started = False
        self._stop.set()
        if self._listener is not None:
            from numba.core import event
            event.unregister("numba:compile", self._listener)
            self._listener = None
        if self._thread is not None:
            self._thread.join()
            print("\r\033[K", end="", file=self.stream)
        self.seconds = self._elapsed()
        if exc_type is None:
            count = f"{len(self._stale)} kernel{'s' * (len(self._stale) != 1)}" if self._stale else "kernels"
            print(f"{self.prog}: {count} compiled in {self.seconds:.1f} s", file=self.stream, flush=True)


@contextlib.contextmanager
def notice_on_compile(enabled=True, stream=None, prog="raytrace", expect=False, roots=None):
    """A :class:`CompileTimer` over the block (yielded) with a :class:`CompileNotice` that
    starts when Numba starts compiling in it (a ``numba:compile`` event; loading from the
    cache sends none) and otherwise says nothing; ``expect=True`` starts the notice at
    once (a compile is known to come, e.g. in the child process of :func:`start`).
    ``roots``: the kernels the block may compile (the notice then says which and why).
    ``enabled=False``: the timer only, no notice."""
    notice = CompileNotice(enabled, stream, prog, roots=roots)
    timer = CompileTimer(on_start=lambda: notice.begin(forced=False))
    notice.timer = timer
    with timer:
        if expect:
            notice.begin()
        try:
            yield timer
        except BaseException as exc:
            notice.finish(type(exc))
            raise
    notice.finish()


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


def readable_json(scene_path):
    """Whether the scene file is JSON that parses (so :func:`integrator_of` is sure)."""
    return _peek(scene_path) is not None


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
    """Start compiling in other processes when it would help; returns the processes (a
    list, possibly empty), or None when ``RAYTRACE_NO_WARMUP`` is set. With a recorded plan (``raytrace.compile.parallel``) the
    integrator's stale units compile in parallel workers and the row kernel is left to
    :func:`compile_here`; without one, one child compiles the whole integrator.
    ``instanced``: for a scene with instances (see :func:`compile_here`)."""
    if os.environ.get("RAYTRACE_NO_WARMUP"):
        return None
    if (os.cpu_count() or 1) < 2 or is_cached(integrator):
        return []
    from .compile import parallel
    root = _kernel(integrator)
    workers = parallel.start([(root, parallel.variant_name(root, instanced))])
    if workers:
        return workers
    try:
        return [subprocess.Popen([sys.executable, "-c", _CHILD, integrator, "1" if instanced else "0"],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)]
    except OSError:
        return []


def wait(procs, timeout=300, timer=None):
    """Wait for the processes of :func:`start`; a failed or slow one only costs the parent
    a compile. The wait counts as compiling in ``timer`` (a :class:`CompileTimer`)."""
    procs = [p for p in (procs if isinstance(procs, (list, tuple)) else [procs]) if p is not None]
    if not procs:
        return
    deadline = time.perf_counter() + timeout
    with timer.counting() if timer is not None else contextlib.nullcontext():
        for proc in procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.perf_counter()))
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
    from .compile import parallel
    parallel.record(_kernel(integrator))        # the plan that lets the next cold start go parallel
