"""Particle benchmarks: 64x64 cloth RK4 steps/s (Numba vs NumPy), implicit Euler vs RK4
wall time per simulated second at their stable step sizes, scene-load cloth times, and
the error-study orders.

    .venv/bin/python benchmarks/bench_particles.py [--quick] [--record]

Prints a Markdown report (about a minute; ``--quick``: shorter timings) and writes it to
benchmarks/output/results/particles.md (with ``--record`` also
benchmarks/results/particles.md).
"""
import argparse
import datetime
import json
import os
import pathlib
import platform
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import particles as P                                        # noqa: E402
from particles.cloth import DOCUMENTED_DT                     # noqa: E402
from particles.reference_numpy import numpy_rk4_step          # noqa: E402
from reports import OtherLoad, add_record_flag, write_report  # noqa: E402


def rate(fn, x, seconds):
    """Steps per second of ``x = fn(x)`` over about ``seconds`` (after one warm-up)."""
    x = fn(x)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        x = fn(x)
        n += 1
    return n / (time.perf_counter() - t0), x


def bench_rk4(grid, seconds):
    net = P.cloth(grid=grid, layout="horizontal")
    x0 = net.initial_state()
    h = 5e-4
    runs = {
        "particles (Numba forces, rk4)": lambda x: P.rk4(x, net, 0.0, h),
        "NumPy, np.add.at scatter": lambda x: numpy_rk4_step(net, x, 0.0, h, "add.at"),
        "NumPy, np.bincount scatter": lambda x: numpy_rk4_step(net, x, 0.0, h, "bincount"),
    }
    rates = {name: rate(fn, x0, seconds)[0] for name, fn in runs.items()}
    # same trajectory: 200 steps each way
    xa, xb = x0.copy(), x0.copy()
    for _ in range(200):
        xa, xb = P.rk4(xa, net, 0.0, h), numpy_rk4_step(net, xb, 0.0, h)
    diff = float(np.abs(xa - xb).max())
    return net, rates, diff


def time_per_sim_second(grid, integrator, dt, duration):
    net = P.cloth(grid=grid, layout="horizontal")
    steps = int(round(duration / dt))
    P.simulate(net, integrator, dt, 2)                         # warm-up / JIT load
    net = P.cloth(grid=grid, layout="horizontal")
    iters = []
    x = net.initial_state()
    t0 = time.perf_counter()
    for k in range(steps):
        x = P.get_integrator(integrator)(x, net, k * dt, dt)
        if integrator == "implicit_euler":
            iters.append(net.last_cg[0])
    wall = time.perf_counter() - t0
    assert np.all(np.isfinite(x))
    return wall / (steps * dt), (np.mean(iters) if iters else None)


def scene_cloth_time(path, index):
    from raytrace.scene.objects.particles import simulate_cloth
    obj = json.loads(pathlib.Path(path).read_text())["objects"][index]
    simulate_cloth(dict(obj, T=0.02))                          # JIT load
    t0 = time.perf_counter()
    simulate_cloth(obj)
    return time.perf_counter() - t0


def error_study_lines():
    from particles.study import convergence, energy_drift
    lines = ["| integrator | theory | circle | spring | pendulum (vs DOP853) |",
             "|---|---|---|---|---|"]
    try:
        results = {n: convergence(n) for n in ("circle", "spring", "pendulum")}
    except P.ParticlesError as exc:                     # scipy missing: no pendulum
        lines = [f"(pendulum skipped: {exc})", ""] + lines
        results = {n: convergence(n) for n in ("circle", "spring")}
    for name in P.INTEGRATORS:
        cells = [f"{results[s]['integrators'][name]['order']:.3f}" if s in results else "-"
                 for s in ("circle", "spring", "pendulum")]
        label = "rk45 (vs mean step)" if name == "rk45" else name
        lines.append(f"| {label} | {P.ORDERS[name]} | " + " | ".join(cells) + " |")
    drift = energy_drift("oscillator")
    lines += ["", "Relative energy error of the harmonic oscillator after 10^5 steps of "
              "dt = 0.01:", "", "| integrator | final | max |", "|---|---|---|"]
    for name, r in drift["integrators"].items():
        lines.append(f"| {name} | {r['rel_error'][-1]:.2e} | {max(r['rel_error']):.2e} |")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="shorter timings")
    add_record_flag(ap)
    args = ap.parse_args()
    sec = 1.0 if args.quick else 3.0
    other_load = OtherLoad().start()
    machine = platform.processor() or platform.machine()
    command = "python benchmarks/bench_particles.py" + (" --quick" if args.quick else "")
    out = [
        "# particles", "",
        f"Command: `{command}`. Date: {datetime.date.today()}. Machine: {machine}, "
        f"{os.cpu_count()} cores, shared with other jobs (load average "
        f"{os.getloadavg()[0]:.1f} at the start), NUMBA_NUM_THREADS="
        f"{os.environ.get('NUMBA_NUM_THREADS', 'default')}, Numba kernels from the cache.",
        ""]

    def emit(*lines):
        for line in lines:
            print(line, flush=True)
            out.append(line)

    for line in out:
        print(line)
    net, rates, diff = bench_rk4((64, 64), sec)
    ours = rates["particles (Numba forces, rk4)"]
    worst = min(ours / r for name, r in rates.items() if name.startswith("NumPy"))
    emit(f"## RK4 on a 64x64 cloth ({net.n} particles, {len(net.springs)} springs)", "",
         "Default cloth, horizontal layout, dt = 5e-4 s, each timed for "
         f"{sec:g} s. particles = the generic `rk4` step on `SpringNetwork` (forces in one "
         "Numba kernel); NumPy = `particles/reference_numpy.py`, the same model fully "
         "vectorised.", "",
         "| implementation | RK4 steps/s | particles speed-up |", "|---|---|---|")
    for name, r in rates.items():
        emit(f"| {name} | {r:.0f} | {ours / r:.1f}x |")
    emit("", f"Max state difference after 200 steps (Numba vs NumPy add.at): {diff:.2e}. "
         f"Target >= 5x over NumPy: {'met' if worst >= 5 else 'NOT met'} "
         f"(smallest ratio {worst:.1f}x).", "")

    emit("## Implicit Euler vs RK4 at their stable dt (64x64 cloth, falling)", "")
    probe = P.cloth(grid=(64, 64), layout="horizontal")
    lo, hi = P.stable_dt_limit(probe, "rk4", 0.5, 2e-4, 2e-3, rel=0.05)
    dt_rk4 = round(0.8 * lo, 6)
    dur = 0.5 if args.quick else 1.0
    emit(f"RK4 stability limit (bisection over 0.5 s runs): between {lo:.2e} and "
         f"{hi:.2e} s. Implicit Euler: Baraff-Witkin, Jacobi-PCG, cg_tol 1e-4, warm start; "
         f"{dur:g} s simulated each.", "",
         "| integrator | dt (s) | wall s per simulated s | mean CG iterations |",
         "|---|---|---|---|")
    w, _ = time_per_sim_second((64, 64), "rk4", dt_rk4, dur)
    emit(f"| rk4 | {dt_rk4:g} (0.8x limit) | {w:.2f} | - |")
    for dt in (0.005, 0.01, 0.02, 0.04):
        w, it = time_per_sim_second((64, 64), "implicit_euler", dt, dur)
        emit(f"| implicit_euler | {dt:g} ({dt / lo:.0f}x rk4 limit) | {w:.2f} | {it:.0f} |")
    emit("", "A CG iteration costs about one force evaluation and the iteration count "
         "grows like sqrt(h^2 k / m), so implicit Euler pays off per simulated second only "
         "at large steps; its point is that it stays stable far beyond RK4's limit.", "")

    emit("## Other timings", "")
    net = P.cloth(grid=(32, 32), layout="horizontal")
    P.simulate(net, "rk4", 1e-3, 2)
    t0 = time.perf_counter()
    P.simulate(net, "rk4", DOCUMENTED_DT["rk4"], 10_000, every=1000)
    emit(f"- 32x32 cloth, 10^4 RK4 steps at the documented dt={DOCUMENTED_DT['rk4']:g} "
         f"(`simulate`, with blow-up checks): {time.perf_counter() - t0:.2f} s")
    for scene, idx in (("scenes/cloth_drape.json", 2), ("scenes/cloth_wind.json", 3)):
        took = scene_cloth_time(REPO / scene, idx)
        emit(f"- scene-load cloth simulation, `{scene}`: {took:.2f} s")
    from raytrace.scene.objects.particles import simulate_cloth
    t0 = time.perf_counter()
    simulate_cloth({"type": "cloth"})
    emit(f"- plug-in default cloth (16x16, implicit_euler, dt 0.01, T 2): "
         f"{time.perf_counter() - t0:.2f} s", "")

    emit("## Error study (accuracy)", "",
         "`python -m particles error --system NAME -o OUT.png` fits these slopes "
         "(log-log, asymptotic range); see docs/particles.md.", "")
    emit(*error_study_lines())
    emit("", f"While it ran, {other_load.stop().describe()}.")
    print()
    write_report("particles", "\n".join(out) + "\n", args.record)


if __name__ == "__main__":
    main()
