"""benchmarks/reports.py: the machine facts the benchmark records print.

``OtherLoad`` must see CPU time spent by processes that are not the benchmark's (that is
what makes a ratio against Mitsuba or Embree unreliable) and must not count the
benchmark's own worker processes, which it waits for.
"""
import os
import pathlib
import sys
import types

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))
import reports  # noqa: E402

BUSY = [sys.executable, "-c",
        "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.0: pass"]
TOLERANCE = 0.1          # CPU seconds: /proc/stat counts in clock ticks, getrusage exactly

needs_proc = pytest.mark.skipif(not pathlib.Path("/proc/stat").exists(),
                                reason="OtherLoad reads Linux /proc/stat")


def _measure(waited):
    """OtherLoad around a child that burns 1 s of CPU and exits -> (load, the child's CPU
    seconds). ``waited``: the child is reaped before ``stop()`` (the way the benchmarks
    wait for their workers); otherwise it has exited but is reaped only after ``stop()``
    (``os.waitid`` with ``WNOWAIT``), so to ``getrusage`` it is someone else's process.
    The child's CPU time comes from ``wait4``, whatever else the machine is doing."""
    load = reports.OtherLoad().start()
    pid = os.posix_spawn(BUSY[0], BUSY, os.environ)
    if waited:
        usage = os.wait4(pid, 0)[2]
        load.stop()
    else:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        load.stop()
        usage = os.wait4(pid, 0)[2]
    return load, usage.ru_utime + usage.ru_stime


@needs_proc
def test_other_load_counts_foreign_processes_not_own_children():
    """The CPU seconds of an exited but unreaped child are "other", not the benchmark's
    own; the same child reaped is the benchmark's own and not "other". Checked on CPU
    seconds, not on idle cores: other processes' work only adds to ``all_seconds`` and
    ``other_seconds``, so every bound below holds however busy the machine is."""
    foreign, foreign_cpu = _measure(waited=False)
    own, own_cpu = _measure(waited=True)
    assert foreign_cpu >= 0.9 and own_cpu >= 0.9, (foreign_cpu, own_cpu)
    # foreign: the child is in the machine's total and in "other", not in "own" (this
    # process only spawned it and waited)
    assert foreign.all_seconds >= foreign_cpu - TOLERANCE, (foreign.all_seconds, foreign_cpu)
    assert foreign.own_seconds < 0.5 * foreign_cpu, (foreign.own_seconds, foreign_cpu)
    assert foreign.other_seconds >= foreign_cpu - TOLERANCE, (foreign.other_seconds, foreign_cpu)
    # own: the reaped child is counted as the benchmark's own, so "other" lacks it
    assert own.own_seconds >= own_cpu, (own.own_seconds, own_cpu)
    assert own.other_seconds <= own.all_seconds - own_cpu + TOLERANCE, (own.all_seconds, own_cpu)
    # the averages are those CPU seconds over the run's wall time; a core's worth of
    # foreign work (or whatever else kept the child waiting) makes the machine busy
    assert foreign.other == pytest.approx(foreign.other_seconds / foreign.wall)
    assert foreign.busy
    assert "cores on average" in foreign.describe()


def test_other_load_averages_and_the_busy_threshold(monkeypatch):
    """``stop()``'s arithmetic on given readings: other = (all - own) / wall, at least 0;
    steal / wall; busy above BUSY_CORES of the two together."""
    tick = os.sysconf("SC_CLK_TCK")

    def run(all_seconds, steal_seconds, own_seconds, wall):
        jiffies = iter([(1000, 50), (1000 + round(all_seconds * tick), 50 + round(steal_seconds * tick))])
        own = iter([7.0, 7.0 + own_seconds])
        clock = iter([100.0, 100.0 + wall])
        monkeypatch.setattr(reports, "_cpu_jiffies", lambda: next(jiffies))
        monkeypatch.setattr(reports, "_own_cpu_seconds", lambda: next(own))
        monkeypatch.setattr(reports, "time", types.SimpleNamespace(perf_counter=lambda: next(clock)))
        return reports.OtherLoad().start().stop()

    load = run(all_seconds=3.0, steal_seconds=0.0, own_seconds=2.0, wall=2.0)
    assert (load.all_seconds, load.own_seconds, load.other_seconds) == pytest.approx((3.0, 2.0, 1.0))
    assert (load.other, load.steal, load.wall) == pytest.approx((0.5, 0.0, 2.0)) and load.busy
    load = run(all_seconds=2.2, steal_seconds=0.0, own_seconds=2.0, wall=1.0)
    assert load.other == pytest.approx(0.2) and not load.busy
    load = run(all_seconds=2.0, steal_seconds=0.2, own_seconds=2.0, wall=1.0)
    assert load.other == 0.0 and load.steal == pytest.approx(0.2) and not load.busy
    load = run(all_seconds=2.2, steal_seconds=0.1, own_seconds=2.0, wall=1.0)
    assert load.busy                                     # 0.2 + 0.1 cores
    load = run(all_seconds=1.5, steal_seconds=0.0, own_seconds=2.0, wall=1.0)
    assert load.other_seconds == 0.0 and load.other == 0.0    # own counted finer than ticks
    assert load.describe() == ("other processes used 0.00 cores on average during the run, "
                               "the hypervisor's other guests 0.00 (/proc/stat)")


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
