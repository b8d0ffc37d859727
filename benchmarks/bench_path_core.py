"""Path tracer core numbers: compile time, paths per second, thread scaling (Mitsuba optional).

    python benchmarks/bench_path_core.py [--spp 32] [--record]

- first render in a fresh process (``import raytrace``, load scenes/cornell_box.json, one
  64 x 64 path-traced pass) with an empty Numba cache, once loading the shipped kernels
  (``raytrace/prebuilt/``) and once compiling (``RAYTRACE_PREBUILT=0``), then with the
  cache that compile filled (warm);
- paths per second on scenes/cornell_box.json at 256 x 256, max_depth 8, box filter,
  for both samplers and 1 and 2 threads (best of 3 after a warm-up render, the 1- and
  2-thread renders alternating: ``best_interleaved``; the controls below likewise);
- the same for scenes/path_glass.json (dielectrics, a sphere light; max_depth 16);
- two controls for the 2-thread / 1-thread ratios (target >= 1.85x): what the machine
  itself gives, a compute-only row kernel (a chain of multiply-adds per image row, no
  memory traffic) run by the path tracer's own thread runner (``kernels.threads``); and,
  when Mitsuba 3 and its libLLVM are installed (see ``bench_path.py``), Mitsuba
  ``llvm_ad_rgb`` on the same Cornell box (256 x 256, box filter, ``multijitter``, the same
  spp) with Dr.Jit's thread pool set to 1 and 2 threads. Below the machine's ratio no
  renderer can go; a peer's ratio says what a renderer reaches there.

Writes benchmarks/output/results/path_core.md (with ``--record`` also
benchmarks/results/path_core.md). The comparison with Mitsuba (time to a given
error) is benchmarks/bench_path.py.
"""
import argparse
import datetime
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

from reports import OtherLoad, add_record_flag, cpu_name, vector_isa, write_report

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

FIRST_RENDER = """
import time
t0 = time.perf_counter()
import raytrace
t1 = time.perf_counter()
scene = raytrace.load_scene({scene!r})
t2 = time.perf_counter()
raytrace.render(scene, width=64, height=64, spp=1)
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2)
"""


def first_render(cache_dir, shipped=True):
    """Seconds (import, load, render, whole process) of a first render in a fresh process
    with the Numba cache in ``cache_dir``; ``shipped=False`` turns the shipped kernels off
    (``RAYTRACE_PREBUILT=0``), so an empty cache compiles."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), RAYTRACE_PREBUILT="1" if shipped else "0")
    code = FIRST_RENDER.format(scene=str(REPO / "scenes" / "cornell_box.json"))
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    total = time.perf_counter() - t0
    return [float(x) for x in out.stdout.split()] + [total]


def best_interleaved(measure, keys=(1, 2), rounds=3):
    """-> {key: the least of ``rounds`` calls of ``measure(key)``}, the keys alternating
    within each round (1, 2, 1, 2, ...): a slow spell of the machine then falls on both
    thread counts instead of on one of them (the ratios of earlier versions, which timed
    all the 1-thread renders first, moved by 0.2x between runs)."""
    best = dict.fromkeys(keys, float("inf"))
    for _ in range(rounds):
        for key in keys:
            best[key] = min(best[key], measure(key))
    return best


def render_seconds(name, spp, sampler, **size):
    """-> {threads: best wall seconds} for 1 and 2 threads (``best_interleaved``) of one
    render of scenes/NAME.json at ``spp``, box filter, after a warm-up render at each."""
    import numba

    import raytrace
    scene = raytrace.load_scene(REPO / "scenes" / f"{name}.json")
    w, h = size.get("width", 256), size.get("height", 256)
    before = numba.get_num_threads()

    def measure(threads):
        numba.set_num_threads(threads)
        return _timed(raytrace.render, scene, width=w, height=h, spp=spp, filter="box",
                      sampler=sampler)

    try:
        for threads in (1, 2):
            numba.set_num_threads(threads)
            raytrace.render(scene, width=w, height=h, spp=2, filter="box", sampler=sampler)
        return best_interleaved(measure)
    finally:
        numba.set_num_threads(before)


def machine_ratio(rows=256, chain=1_500_000):
    """-> (1-thread seconds, 2-thread seconds) of a compute-only row kernel on
    ``kernels.threads.run_rows`` (``best_interleaved``): per row a dependent chain of
    ``chain`` multiply-adds, no memory traffic, so nothing but the cores themselves (and
    the row runner) limits the ratio."""
    import numba
    import numpy as np
    from numba import njit

    from raytrace.kernels.threads import next_row, run_rows

    @njit(nogil=True)
    def chains(rows, queue, out, n):
        i = next_row(rows, queue)
        while i >= 0:
            x = 1.0 + i
            for _ in range(n):
                x = x * 0.999999 + 1e-6
            out[i] = x
            i = next_row(rows, queue)

    order = np.arange(rows, dtype=np.int64)
    out = np.zeros(rows)
    before = numba.get_num_threads()

    def measure(threads):
        numba.set_num_threads(threads)
        return _timed(run_rows, chains, order, out, chain)

    try:
        for threads in (1, 2):
            numba.set_num_threads(threads)
            run_rows(chains, order, out, 10)                # compile, start the pool
        seconds = best_interleaved(measure)
    finally:
        numba.set_num_threads(before)
    return seconds[1], seconds[2]


def mitsuba_ratio(spp):
    """-> (1-thread seconds, 2-thread seconds) of Mitsuba ``llvm_ad_rgb`` rendering the
    Cornell box of ``bench_path.py`` at ``spp`` (``best_interleaved``, one worker process
    per render), or None without Mitsuba or its libLLVM."""
    import bench_path
    try:
        import mitsuba  # noqa: F401
    except ImportError:
        return None
    if not bench_path.DEFAULT_LLVM.exists():
        return None

    def measure(threads):                    # one worker (one process) per render
        rows = bench_path.run_worker("cornell", "llvm_ad_rgb/multijitter", [spp],
                                     bench_path.DEFAULT_LLVM, extra_env={"BENCH_THREADS": str(threads)})
        return rows[0]["seconds"]

    seconds = best_interleaved(measure)
    return seconds[1], seconds[2]


def _timed(fn, *args, **kw):
    t0 = time.perf_counter()
    fn(*args, **kw)
    return time.perf_counter() - t0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--spp", type=int, default=32, help="samples per pixel of the timed renders (default 32)")
    add_record_flag(p)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as cold:
        compile_t = first_render(cold, shipped=False)
        warm_t = first_render(cold, shipped=False)
    with tempfile.TemporaryDirectory() as cold:
        shipped_t = first_render(cold)
    rows, scaling = [], []
    other_load = OtherLoad().start()
    for name, size in (("cornell_box", {}), ("path_glass", {"width": 256, "height": 192})):
        for sampler in ("sobol", "independent"):
            seconds = render_seconds(name, args.spp, sampler, **size)
            paths = size.get("width", 256) * size.get("height", 256) * args.spp
            for threads in (1, 2):
                t = seconds[threads]
                rows.append(f"| {name} | {sampler} | {threads} | {t:.2f} s | {paths / t / 1e6:.2f} |")
            scaling.append(f"{name} {sampler} {seconds[1] / seconds[2]:.2f}x")
    machine = machine_ratio()
    peer = mitsuba_ratio(args.spp)
    other_load.stop()
    load = os.getloadavg()
    lines = [
        "## Path tracer core: compile time and throughput",
        "",
        f"Command: `python benchmarks/bench_path_core.py --spp {args.spp}`; "
        f"{datetime.datetime.now():%Y-%m-%d %H:%M}, {cpu_name()} ({vector_isa()}), "
        f"{os.cpu_count()} cores (shared with other engineers; while the throughput was "
        f"measured {other_load.describe()}; load average {load[0]:.1f} / {load[1]:.1f} / "
        f"{load[2]:.1f} at the end), Python {platform.python_version()}.",
        "",
        "First render in a fresh process (import, load scenes/cornell_box.json, one 64 x 64 pass):",
        "",
        "| Numba cache | import | load (incl. BVH) | first render | whole process |",
        "|---|---|---|---|---|",
        "| empty, shipped kernels (the default) | " + " | ".join(f"{x:.2f} s" for x in shipped_t) + " |",
        "| empty, compiling (`RAYTRACE_PREBUILT=0`) | " + " | ".join(f"{x:.2f} s" for x in compile_t) + " |",
        "| warm (compiled before) | " + " | ".join(f"{x:.2f} s" for x in warm_t) + " |",
        "",
        f"Throughput, {args.spp} spp, box filter, best of 3, 1 and 2 threads alternating "
        "(cornell_box: 256 x 256, max_depth 8; "
        "path_glass: 256 x 192, max_depth 16):",
        "",
        "| scene | sampler | threads | time | M paths/s |",
        "|---|---|---|---|---|",
        *rows,
        "",
        f"2 threads / 1 thread: {', '.join(scaling)} (target >= 1.85x)."
        + (" **Not a quiet machine**: run again." if other_load.busy else ""),
        "",
        "Controls for that ratio, in the same run:",
        "",
        f"- the machine (a compute-only row kernel on the same thread runner): "
        f"{machine[0]:.2f} s / {machine[1]:.2f} s = **{machine[0] / machine[1]:.2f}x**;",
        (f"- Mitsuba `llvm_ad_rgb`, the Cornell box at {args.spp} spp (`multijitter`): "
         f"{peer[0]:.2f} s / {peer[1]:.2f} s = **{peer[0] / peer[1]:.2f}x**."
         if peer else "- Mitsuba `llvm_ad_rgb`: not measured (Mitsuba 3 or its libLLVM missing; "
                      "see benchmarks/bench_path.py)."),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    write_report("path_core", text, args.record)


if __name__ == "__main__":
    main()
