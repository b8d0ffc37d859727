"""Animation on a render farm: frames per minute serially and on a local Dask cluster, the
cost of a task, and what is shipped.

    python benchmarks/bench_animate.py [--frames 48] [--size 320 240] [--record]

The scene is ``scenes/animation/walk.json`` (a skinned figure walking, a cloth falling on
a ball; Whitted, 1 spp): ``--frames`` frames at ``--size``. Kernels are compiled before
timing (the first run of a machine pays that once). Measured:

- the cloth simulation over the whole range (once) and its load from the disk cache;
- ``scene_at`` per call (what motion blur would pay per time sample);
- frames per minute: here with 1 Numba thread, here with all cores, and on a local
  cluster of 2 process workers x 1 thread (its start-up timed apart);
- scheduling overhead per task: 200 no-op tasks shaped like real ones (the scattered
  scene, a chunk of frame numbers, the options), submitted together (throughput) and
  one at a time (round trip);
- bytes shipped: the scene sent once per worker, a task's arguments, a frame's result
  (PNG bytes) and a tile's (float rows).

Writes benchmarks/output/results/animate.md (``--record``: also benchmarks/results/).
"""
import argparse
import datetime
import os
import pathlib
import pickle
import platform
import sys
import tempfile
import time

from reports import OtherLoad, add_record_flag, write_report

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
SCENE = REPO / "scenes" / "animation" / "walk.json"


def noop_task(anim, frames, options):
    """A task with a real task's arguments that renders nothing."""
    return len(frames)


def warm_worker(anim):
    """Load the kernels in a worker (from the on-disk cache) with a tiny render."""
    import raytrace
    raytrace.render(anim.scene_at(0.0), width=8, height=6)


def cpu_seconds():
    """User + system CPU seconds of this process so far (all its threads)."""
    t = os.times()
    return t.user + t.system


def run(fn, client=None):
    """(wall seconds, CPU seconds, load average after) of fn(), which must succeed. CPU:
    this process's, plus the workers' when ``client`` is given."""
    c0 = cpu_seconds() + (sum(client.run(cpu_seconds).values()) if client else 0.0)
    summary, seconds = timed(fn)
    c1 = cpu_seconds() + (sum(client.run(cpu_seconds).values()) if client else 0.0)
    assert summary.ok and summary.rendered
    return seconds, c1 - c0, os.getloadavg()[0]


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=48)
    ap.add_argument("--size", type=int, nargs=2, default=[320, 240], metavar=("W", "H"))
    ap.add_argument("--repeat", type=int, default=2, help="runs of each kind (the best is reported)")
    add_record_flag(ap)
    args = ap.parse_args()
    other_load = OtherLoad().start()

    import numba
    import raytrace
    from raytrace.animation import AnimatedScene
    from raytrace.animation.farm import animate, local_cluster

    w, h = args.size
    sel = f"0:{args.frames}"
    lines = ["## Animation and render farm (`benchmarks/bench_animate.py`)", "",
             f"Command: `python benchmarks/bench_animate.py --frames {args.frames} --size {w} {h}`; "
             f"{datetime.date.today()}, {platform.machine()}, {os.cpu_count()} cores "
             f"(shared with other work: load average {os.getloadavg()[0]:.1f} at the start), "
             f"Python {platform.python_version()}, Numba {numba.__version__}.", "",
             f"Scene `scenes/animation/walk.json`: {args.frames} frames at {w} x {h}, Whitted, 1 spp "
             "(skinned walk, cloth 20 x 20 falling on a ball).", ""]
    print("\n".join(lines), flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        anim = AnimatedScene.load(SCENE, cache_dir=tmp / "cache")
        _, sim_s = timed(anim.prepare)
        again = AnimatedScene.load(SCENE, cache_dir=tmp / "cache")
        _, load_s = timed(again.prepare)
        steps = next(iter(anim.cloth_positions.values())).shape[0] - 1
        raytrace.render(anim.scene_at(0.0), width=w, height=h)          # compile / load kernels
        ts = [0.5 + 0.001 * i for i in range(100)]
        _, at_s = timed(lambda: [anim.scene_at(t) for t in ts])
        rows = [f"- cloth simulated once over the range ({steps} steps): {sim_s:.2f} s; "
                f"loaded from the disk cache: {1000 * load_s:.1f} ms",
                f"- `scene_at(t)` (skinned mesh, cloth, geometry and BVH rebuilt): {1000 * at_s / len(ts):.1f} ms "
                "per call", ""]
        print("\n".join(rows), flush=True)

        t_start = time.perf_counter()
        with local_cluster(2, threads_per_worker=1) as client:
            client.wait_for_workers(2)
            start_s = time.perf_counter() - t_start
            _, warm_s = timed(lambda: client.run(warm_worker, anim))
            runs = {"serial1": [], "serialN": [], "farm": []}
            for rep in range(args.repeat):                 # interleaved: the machine is shared
                numba.set_num_threads(1)
                runs["serial1"].append(run(lambda: animate(anim, tmp / "serial1", workers=1, threads_per_worker=1,
                                                           frames=sel, force=True, width=w, height=h)))
                numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
                runs["serialN"].append(run(lambda: animate(anim, tmp / "serialN", workers=1, frames=sel,
                                                           force=True, width=w, height=h)))
                runs["farm"].append(run(lambda: animate(anim, tmp / "farm", client=client, frames=sel, force=True,
                                                        width=w, height=h, threads_per_worker=1), client))
            plan = client.scatter(anim, broadcast=True, hash=False)
            options = {"overrides": {"width": w, "height": h}, "suffix": ".png", "encoding": "srgb", "threads": 1}
            n = 200
            t0 = time.perf_counter()
            futs = [client.submit(noop_task, plan, [k, k + 1, k + 2, k + 3], options, pure=False) for k in range(n)]
            client.gather(futs)
            per_task = (time.perf_counter() - t0) / n
            lat = []
            for k in range(30):
                t0 = time.perf_counter()
                client.submit(noop_task, plan, [k], options, pure=False).result()
                lat.append(time.perf_counter() - t0)
            lat.sort()
        best = {k: min(v) for k, v in runs.items()}
        t1, c1 = best["serial1"][:2]
        table = [f"| run | wall (s), best of {args.repeat} | frames / min | speed-up | CPU s per frame "
                 "| CPU per frame vs 1 thread | load average after each run |",
                 "|---|---:|---:|---:|---:|---:|---|"]
        names = {"serial1": "here, 1 Numba thread",
                 "serialN": f"here, {numba.config.NUMBA_NUM_THREADS} Numba threads",
                 "farm": "local Dask cluster, 2 workers x 1 thread"}
        for key, name in names.items():
            t, c, _ = best[key]
            loads = ", ".join(f"{r[2]:.1f}" for r in runs[key])
            table.append(f"| {name} | {t:.1f} | {60 * args.frames / t:.1f} | {t1 / t:.2f} | "
                         f"{c / args.frames:.3f} | {c / c1:.2f} | {loads} |")
        table += ["", "CPU seconds count every thread of the process (for the cluster: the client and both "
                  "workers). On an otherwise idle machine the wall time of a run is its CPU time divided by the "
                  "cores it can use; on a shared one the wall times measure the other work as much as this.",
                  "", f"The cluster's start-up ({start_s:.1f} s: scheduler and 2 spawned workers) and each worker's "
                  f"first kernel load from the on-disk cache ({warm_s:.1f} s, the two in parallel) are paid once per "
                  "run and are not in its row."]
        frame_bytes = [p.stat().st_size for p in sorted((tmp / "farm").glob("frame_*.png"))]
        plan_bytes = len(pickle.dumps(anim))
        arg_bytes = len(pickle.dumps(([0, 1, 2, 3], options)))
        tile_bytes = w * (h // 4) * 3 * 4
    print("\n".join(table), flush=True)
    overhead = [
        "", "Per task:", "",
        f"- scheduling overhead: {1000 * per_task:.2f} ms per task ({n} no-op tasks submitted together), "
        f"{1000 * lat[len(lat) // 2]:.1f} ms median round trip for one task submitted and awaited alone",
        f"- shipped once per worker: the scene with its cloth simulation, {plan_bytes / 1024:.0f} KiB pickled",
        f"- shipped per task: its arguments, {arg_bytes} bytes pickled (frame numbers and options; the scene "
        "goes by reference)",
        f"- returned per frame: the encoded PNG, {sum(frame_bytes) / len(frame_bytes) / 1024:.1f} KiB on "
        f"average ({w} x {h}); per tile (a quarter of the rows, float32): {tile_bytes / 1024:.0f} KiB",
        "", "All frames of the three runs are written by the client (temporary name, rename); the farm's "
        "frames are bit-identical to the serial ones (tests/test_animation_farm.py)."]
    other_load.stop()
    overhead += ["", f"While it ran, {other_load.describe()}."]
    print("\n".join(overhead), flush=True)
    write_report("animate", "\n".join(lines + rows + table + overhead), args.record)


if __name__ == "__main__":
    main()
