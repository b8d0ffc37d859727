"""What compiles, why, and how long: on a terminal or not.

:class:`CompileNotice` tells the user while kernels compile: what compiles and why
("compiling 3 kernels after edits to kernels/bsdf.py: ggx_d", "... first run here"),
then each kernel as it is done, then the total. On a terminal one line ticks
(``[done/total] file: function  T s``); on any other stream (a pipe, a log file, the
preview's page) one line is printed per kernel compiled, with its seconds, so a slow
compile is never silent. :func:`notice_on_compile` does the same for a block that may or
may not compile: it listens to Numba's compile events and speaks only when one starts.
:class:`CompileTimer` measures the compiling with the same events, so that renders report
their compile time apart from their render time (``RenderInfo.compile_seconds``).
"""
import contextlib
import sys
import threading
import time


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
    """While kernels compile: what compiles and why, each kernel as it is done, the total.

        with CompileNotice(active, stream=sys.stderr, roots=warmup.roots("path")):
            ...compile...

    The first line comes from :func:`raytrace.jit.plan.explain` for ``roots`` (the
    kernels the block compiles): how many kernels and why ("after edits to
    kernels/bsdf.py: ggx_d", "first run here"); without ``roots``, "compiling kernels".
    A kernel is done when this process's compile of it ends (a Numba compile event) or
    when it appears in the cache (compiled by a warm-up process). On a terminal one line
    ticks ``[done/total] file: function  T s``; elsewhere each kernel done prints a line
    ``[done/total] file: function  S s`` (S: its own compile seconds here, or the time
    since the notice began when another process compiled it). The closing line gives
    the seconds. Ticking and closing use one clock: the :class:`CompileTimer`'s seconds
    when there is one (compile events and waits for the warm-up child), else the
    block's wall time; a notice that :meth:`begin` started on a compile event (not
    ``forced``) ticks only while something compiles (so it does not draw over a progress
    bar afterwards)."""

    def __init__(self, active, stream=None, prog="raytrace", timer=None, roots=None):
        self.active = active
        self.stream = sys.stderr if stream is None else stream
        self.prog = prog
        self.timer = timer
        self.roots = roots
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = None
        self._forced = True
        self._started = False
        self._tty = False
        self._stale = {}            # id(dispatcher) -> label, of the kernels expected to compile
        self._pending = []          # the expected kernels not yet done
        self._starts = {}           # id(dispatcher) -> perf_counter at its compile event's start
        self._current = ""
        self._listener = None
        self.done = []              # (label, seconds) of each kernel done, in order
        self.seconds = 0.0

    def __enter__(self):
        self.begin()
        return self

    def _describe(self):
        if not self.roots:
            return "compiling kernels"
        try:
            from . import plan
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
        self._tty = getattr(self.stream, "isatty", lambda: False)()
        if not self._tty:
            print(self._line + " ...", file=self.stream, flush=True)
        self._thread = threading.Thread(target=self._tick, daemon=True)
        self._thread.start()

    def _listen(self):
        """Note the start and end of each compile (Numba's compile events)."""
        from numba.core import event
        notice = self

        class _Progress(event.Listener):
            def on_start(self, ev):
                d = ev.data.get("dispatcher")
                notice._starts[id(d)] = time.perf_counter()
                from . import late
                label = notice._stale.get(id(late.original(d)))
                if label:
                    notice._current = label

            def on_end(self, ev):
                d = ev.data.get("dispatcher")
                t0 = notice._starts.pop(id(d), None)
                from . import cache, late, plan
                kernel = late.original(d)       # a late twin compiled in its kernel's stead
                if t0 is not None and cache.dispatcher_cache(d) is not None and (
                        id(kernel) in notice._stale or not notice._stale):
                    label = notice._stale.get(id(kernel)) or plan.name(kernel)
                    if kernel is not d:
                        label += " (late twin)"
                    notice._finished(kernel, label, time.perf_counter() - t0)
        self._listener = _Progress()
        event.register("numba:compile", self._listener)

    def _finished(self, dispatcher, label, seconds):
        """One kernel done (compiled here, or found cached): say so off a terminal."""
        with self._lock:
            if any(label == done for done, _ in self.done):
                return
            if dispatcher is not None:
                self._pending = [d for d in self._pending if d is not dispatcher]
            self.done.append((label, seconds))
            total = len(self._stale) or len(self.done)
            line = f"{self.prog}: [{len(self.done)}/{total}] {label} {seconds:.1f} s"
        if not self._tty:
            print(line, file=self.stream, flush=True)

    def _elapsed(self):
        if self.timer is None:
            return time.perf_counter() - self._t0
        return self.timer.seconds

    def _poll(self):
        """Kernels that another process (the warm-up) put in the cache meanwhile."""
        if not self._pending:
            return
        from . import plan
        for d in list(self._pending):
            if id(d) not in self._starts and plan.compiled(d):
                self._finished(d, self._stale[id(d)], time.perf_counter() - self._t0)

    def status(self):
        """``[done/total] file: function``: the expected kernels done (whichever process
        compiled them), and the one this process compiles now (empty without a plan)."""
        if not self._stale:
            return ""
        self._poll()
        return f"[{len(self.done)}/{len(self._stale)}] {self._current}".rstrip()

    def _tick(self):
        shown = False
        while not self._stop.wait(0.5):
            if not self._tty:
                self._poll()
                continue
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
            if self._tty:
                print("\r\033[K", end="", file=self.stream)
        self.seconds = self._elapsed()
        if exc_type is None:
            n = len(self._stale) or len(self.done)
            count = f"{n} kernel{'s' * (n != 1)}" if n else "kernels"
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
