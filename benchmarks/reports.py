"""Where the benchmark reports go (shared by the bench_*.py scripts and run_all.py).

A run writes its Markdown report to ``benchmarks/output/results/<part>.md``, which git
ignores, so benchmarking never changes a committed file. ``--record`` also writes
``benchmarks/results/<part>.md``, the committed record that ``benchmarks/RESULTS.md`` is
gathered from (``python benchmarks/run_all.py --record``).
"""
import contextlib
import io
import pathlib
import platform
import sys

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
