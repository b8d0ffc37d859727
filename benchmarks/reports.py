"""Where the benchmark reports go (shared by the bench_*.py scripts and run_all.py).

A run writes its Markdown report to ``benchmarks/output/results/<part>.md``, which git
ignores, so benchmarking never changes a committed file. ``--record`` also writes
``benchmarks/results/<part>.md``, the committed record that ``benchmarks/RESULTS.md`` is
gathered from (``python benchmarks/run_all.py --record``).
"""
import contextlib
import io
import os
import pathlib
import platform
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
OUTPUT = HERE / "output" / "results"      # every run (ignored by git)
RECORDED = HERE / "results"               # --record only (committed)


def add_record_flag(parser):
    parser.add_argument(
        "--record", action="store_true",
        help="also write the committed record benchmarks/results/<part>.md (default: only "
             "benchmarks/output/results/<part>.md, which git ignores)")


def write_report(part, text, record):
    """Write ``text`` to output/results/<part>.md, and to results/<part>.md if ``record``."""
    targets = [OUTPUT / f"{part}.md"] + ([RECORDED / f"{part}.md"] if record else [])
    for path in targets:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text if text.endswith("\n") else text + "\n")
        print(f"wrote {path.relative_to(REPO)}")
    return targets


def skipped(part, reason):
    """Say that a benchmark (or part of one) did not run; returns the message."""
    message = f"{part}: skipped: {reason}"
    print(message, flush=True)
    return message


class _Tee(io.TextIOBase):
    def __init__(self, stream):
        self.stream = stream
        self.buffer = io.StringIO()

    def write(self, s):
        self.stream.write(s)
        self.buffer.write(s)
        return len(s)

    def flush(self):
        self.stream.flush()


@contextlib.contextmanager
def captured_stdout():
    """Print as usual and keep a copy: ``with captured_stdout() as out: ...; out.getvalue()``."""
    tee = _Tee(sys.stdout)
    with contextlib.redirect_stdout(tee):
        yield tee.buffer


def cpu_name():
    """The CPU's model name (Linux ``/proc/cpuinfo``), else what ``platform`` knows."""
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def vector_isa():
    """The widest x86 vector instruction set the CPU offers ("AVX-512", "AVX2", "AVX",
    "SSE4.2"; Linux ``/proc/cpuinfo``), else the machine type. Mitsuba's ``llvm_ad_rgb``
    (Dr.Jit) and Embree vectorise as wide as the CPU allows, so ratios against them
    depend on it."""
    try:
        text = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.machine()
    flags = set()
    for line in text.splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    for flag, name in (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("avx", "AVX"),
                       ("sse4_2", "SSE4.2")):
        if flag in flags:
            return name
    return platform.machine()


VECTOR_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512dq", "avx512cd", "avx512bw",
                "avx512vl", "avx512ifma", "avx512vbmi", "avx512_vbmi2", "avx512_vnni",
                "avx512_bitalg", "avx512_vpopcntdq", "avx512_bf16", "avx512_fp16", "amx_tile")


def vector_extensions():
    """The CPU's x86 vector extensions (flags of Linux ``/proc/cpuinfo``, among
    ``VECTOR_FLAGS``), e.g. ``["sse4_2", "avx", "avx2", "fma", "avx512f", ...]``; [] when
    unknown."""
    try:
        text = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    for line in text.splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            return [f for f in VECTOR_FLAGS if f in flags]
    return []


def _cpu_jiffies():
    """(busy, steal) jiffies of all CPUs since boot (Linux ``/proc/stat``), or None."""
    try:
        fields = pathlib.Path("/proc/stat").read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    if fields[0] != "cpu" or len(fields) < 9:
        return None
    user, nice, system, idle, iowait, irq, softirq, steal = map(int, fields[1:9])
    return user + nice + system + irq + softirq, steal


def _own_cpu_seconds():
    """CPU seconds of this process and its children that have been waited for."""
    import resource          # Unix only: imported where /proc/stat was found
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class OtherLoad:
    """How busy the machine was with other work while a benchmark ran: the CPU time of
    all processes (``/proc/stat``) less this process's and its finished children's
    (``getrusage``), in cores on average; and the time the hypervisor gave to other
    machines (steal). ``start()``, run, ``stop()``, then ``describe()`` / ``busy``.
    On other systems ``describe()`` says it was not measured.

    After ``stop()`` the CPU seconds behind the averages are kept too: ``all_seconds``
    (every process, ``/proc/stat``), ``own_seconds`` (this process and its waited-for
    children) and ``other_seconds`` (the difference, at least 0), over ``wall`` seconds."""

    BUSY_CORES = 0.25        # more than this on average: not a quiet machine

    def __init__(self):
        self.other = self.steal = None
        self.all_seconds = self.own_seconds = self.other_seconds = self.wall = None

    def start(self):
        self._t0 = time.perf_counter()
        self._j0 = _cpu_jiffies()
        self._own0 = _own_cpu_seconds() if self._j0 is not None else 0.0
        return self

    def stop(self):
        wall = time.perf_counter() - self._t0
        j1 = _cpu_jiffies()
        if self._j0 is None or j1 is None or wall <= 0:
            return self
        tick = os.sysconf("SC_CLK_TCK")
        self.wall = wall
        self.all_seconds = (j1[0] - self._j0[0]) / tick
        self.own_seconds = _own_cpu_seconds() - self._own0
        self.other_seconds = max(0.0, self.all_seconds - self.own_seconds)
        self.other = self.other_seconds / wall
        self.steal = (j1[1] - self._j0[1]) / tick / wall
        return self

    @property
    def busy(self):
        return self.other is not None and self.other + self.steal > self.BUSY_CORES

    def describe(self):
        if self.other is None:
            return "other load not measured (no /proc/stat)"
        return (f"other processes used {self.other:.2f} cores on average during the run, "
                f"the hypervisor's other guests {self.steal:.2f} (/proc/stat)")
