"""Benchmarks of the curves library (run by hand, not a test).

    NUMBA_CACHE_DIR=.cache/numba .venv/bin/python benchmarks/bench_curves.py [--repeat 7] [--record]

1. Evaluate 10^6 parameters of a 100-segment uniform cubic B-spline in 3D: our
   uniform kernel and our general de Boor kernel against scipy.interpolate.BSpline
   (compiled) and a plain NumPy version, all in one run, with 1 and all threads.
2. Tessellate the Utah teapot (32 Bézier patches) at 64x64 per patch, warm.
Prints a Markdown report (times are the best of --repeat runs after one warm-up) and
writes it to benchmarks/output/results/curves.md (with --record also
benchmarks/results/curves.md).
"""
import argparse
import datetime
import os
import pathlib
import platform
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numba  # noqa: E402
from scipy.interpolate import BSpline  # noqa: E402

from curves import basis, bspline, cubic, patches  # noqa: E402
from curves.io_patches import read_patch_json  # noqa: E402
from reports import add_record_flag, captured_stdout, write_report  # noqa: E402


def best(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def numpy_uniform_bspline(P, t):
    """Plain NumPy: segment index, power basis, 4-point gather."""
    nseg = len(P) - 3
    seg = np.clip(np.floor(t).astype(np.int64), 0, nseg - 1)
    s = t - seg
    w = basis.power_basis(s) @ basis.basis_matrix("bspline").T          # (m, 4)
    idx = seg[:, None] + np.arange(4)[None, :]
    return np.einsum("mk,mkd->md", w, P[idx])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--params", type=int, default=1_000_000)
    add_record_flag(ap)
    args = ap.parse_args()
    with captured_stdout() as report:
        run(args)
    write_report("curves", report.getvalue(), args.record)


def run(args):
    rng = np.random.default_rng(0)
    nseg = 100
    P = rng.normal(size=(nseg + 3, 3))
    t = rng.uniform(0, nseg, args.params)
    knots = bspline.uniform_knots(nseg + 3, 3)
    ref = BSpline(knots, P, 3)
    threads = numba.get_num_threads()
    rows = []
    expect = ref(t)
    checks = {"ours (uniform kernel)": lambda: cubic.evaluate(P, t, "bspline"),
              "ours (general de Boor)": lambda: bspline.evaluate(knots, P, 3, t),
              "NumPy baseline": lambda: numpy_uniform_bspline(P, t)}
    for name, fn in checks.items():
        err = np.max(np.abs(fn() - expect)) / np.max(np.abs(expect))
        assert err < 1e-12, (name, err)
    rows.append(("scipy.interpolate.BSpline (compiled)", 1, best(lambda: ref(t), args.repeat)))
    rows.append(("NumPy baseline", 1, best(checks["NumPy baseline"], args.repeat)))
    for n in sorted({1, threads}):
        numba.set_num_threads(n)
        for name in ("ours (uniform kernel)", "ours (general de Boor)"):
            rows.append((name, n, best(checks[name], args.repeat)))
    numba.set_num_threads(threads)

    G, _, _ = read_patch_json(REPO / "scenes" / "assets" / "teapot_patches.json")
    m = patches.tessellate(G, 64)
    grid = best(lambda: patches.tessellate_grid(G, 64), args.repeat)
    full = best(lambda: patches.tessellate(G, 64), args.repeat)

    print("## curves: B-spline evaluation and patch tessellation\n")
    print(f"Command: `python benchmarks/bench_curves.py --repeat {args.repeat} --params "
          f"{args.params}`\n")
    print(f"date: {datetime.date.today()}, machine: {platform.machine()} "
          f"{os.cpu_count()} cores, Python {platform.python_version()}, numpy "
          f"{np.__version__}, numba {numba.__version__}, numba threads {threads}\n")
    print(f"### Evaluate {args.params:,} parameters, 100-segment cubic B-spline (3D)\n")
    print("| method | threads | time (ms) | vs SciPy |")
    print("|---|---|---|---|")
    scipy_time = rows[0][2]
    for name, n, sec in rows:
        print(f"| {name} | {n} | {sec * 1e3:.1f} | {scipy_time / sec:.2f}x |")
    print("\n### Teapot tessellation, 32 patches at 64x64 (warm)\n")
    print("| step | time (ms) |")
    print("|---|---|")
    print(f"| positions + normals (kernel) | {grid * 1e3:.1f} |")
    print(f"| full mesh (+ faces, seam welding, compaction) | {full * 1e3:.1f} |")
    print(f"\nmesh: {len(m.vertices):,} vertices, {len(m.faces):,} triangles")


if __name__ == "__main__":
    main()
