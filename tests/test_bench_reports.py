"""benchmarks/reports.py: the machine facts the benchmark records print.

``OtherLoad`` must see CPU time spent by processes that are not the benchmark's (that is
what makes a ratio against Mitsuba or Embree unreliable) and must not count the
benchmark's own worker processes, which it waits for.
"""
import pathlib
import subprocess
import sys
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))
import reports  # noqa: E402

BUSY = [sys.executable, "-c",
        "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.0: pass"]

needs_proc = pytest.mark.skipif(not pathlib.Path("/proc/stat").exists(),
                                reason="OtherLoad reads Linux /proc/stat")


def _measure(waited):
    """Other cores while a child burns 1 s of CPU: waited for before stop() (the way the
    benchmarks run their workers) or still unwaited then (someone else's process)."""
    load = reports.OtherLoad().start()
    child = subprocess.Popen(BUSY)
    if waited:
        child.wait()
        load.stop()
    else:
        time.sleep(1.2)
        load.stop()
        child.wait()
    return load


@needs_proc
def test_other_load_counts_foreign_processes_not_own_children():
    foreign = _measure(waited=False)
    own = _measure(waited=True)
    # the foreign child kept about one core busy for most of the 1.2 s window
    assert foreign.other >= 0.5, foreign.describe()
    # the same child, waited for, is the benchmark's own: at least half a core less
    assert foreign.other - own.other >= 0.5, (foreign.describe(), own.describe())
    assert foreign.busy
    assert "cores on average" in foreign.describe()


def test_other_load_without_proc_stat_says_so(monkeypatch):
    monkeypatch.setattr(reports, "_cpu_jiffies", lambda: None)
    load = reports.OtherLoad().start().stop()
    assert load.other is None and not load.busy
    assert load.describe() == "other load not measured (no /proc/stat)"


def test_vector_isa_reads_the_widest_flag(monkeypatch, tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    real_path = pathlib.Path

    def fake_path(p, *rest):
        return cpuinfo if p == "/proc/cpuinfo" else real_path(p, *rest)

    monkeypatch.setattr(reports.pathlib, "Path", fake_path)
    for flags, want in [("fpu sse4_2 avx avx2 avx512f avx512bw", "AVX-512"),
                        ("fpu sse4_2 avx avx2 fma", "AVX2"), ("fpu sse4_2 avx", "AVX"),
                        ("fpu sse4_2", "SSE4.2")]:
        cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n")
        assert reports.vector_isa() == want
