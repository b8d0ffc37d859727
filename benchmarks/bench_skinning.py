"""Skinning benchmarks (run by hand, or by benchmarks/run_all.py).

    NUMBA_CACHE_DIR=.cache/numba .venv/bin/python benchmarks/bench_skinning.py [--record]

Prints a Markdown report and writes it to benchmarks/output/results/skinning.md (with
``--record`` also benchmarks/results/skinning.md).

1. Linear blend skinning of N vertices (default 10^6) with K influences (default 4) over
   64 joints: the Numba kernel (positions; positions + normals) against the vectorised
   NumPy reference ``skinning.skin_numpy`` on the same data, best of R runs after a warm-up
   (also the kernel forced onto one thread).
2. Pose and skin the course character (``../shared/course/a2/Model1.*``; the shipped
   figure when absent) F times (default 1000): per frame, new Euler angles for every joint
   -> quaternions -> forward kinematics -> skinning matrices -> skinned positions and
   normals (13k vertices: below ``PARALLEL_MIN_SLOTS``, so one thread). Frames per second.
"""
import argparse
import os
import pathlib
import platform
import time

import numpy as np

import skinning as sk
from reports import add_record_flag, captured_stdout, write_report

REPO = pathlib.Path(__file__).resolve().parents[1]
SHARED = pathlib.Path(os.environ.get("RT_SHARED_DIR", REPO.parent / "shared"))


def best_of(fn, repeats):
    fn()                                             # warm-up (and JIT / cache load)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), float(np.median(times))


def bench_lbs(n, k, nj, repeats):
    rng = np.random.default_rng(0)
    points = rng.normal(size=(n, 3))
    normals = rng.normal(size=(n, 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    joints = rng.integers(0, nj, size=(n, k)).astype(np.int64)
    weights = rng.uniform(0.05, 1.0, size=(n, k))
    weights /= weights.sum(axis=1, keepdims=True)
    q = rng.normal(size=(nj, 4))
    mats = sk.local_matrices(rng.normal(size=(nj, 3)), q / np.linalg.norm(q, axis=1, keepdims=True))
    ours = sk.skin(points, joints, weights, mats)
    ref = sk.skin_numpy(points, joints, weights, mats)
    err = float(np.abs(ours - ref).max())
    t_numba, m_numba = best_of(lambda: sk.skin(points, joints, weights, mats), repeats)
    t_one, m_one = best_of(lambda: sk.skin(points, joints, weights, mats, parallel=False), repeats)
    t_normals, m_normals = best_of(lambda: sk.skin(points, joints, weights, mats, normals), repeats)
    t_numpy, m_numpy = best_of(lambda: sk.skin_numpy(points, joints, weights, mats), max(repeats // 3, 2))
    print(f"## LBS: {n:,} vertices x {k} influences, {nj} joints (best / median of runs)")
    print(f"| implementation | best ms | median ms | Mvertices/s |")
    print(f"|---|---|---|---|")
    for name, t, m in (("NumPy reference (skin_numpy, einsum)", t_numpy, m_numpy),
                       ("Numba skin (positions), 1 thread", t_one, m_one),
                       ("Numba skin (positions)", t_numba, m_numba),
                       ("Numba skin (positions + normals)", t_normals, m_normals)):
        print(f"| {name} | {t * 1e3:.1f} | {m * 1e3:.1f} | {n / t / 1e6:.1f} |")
    print(f"\nspeed-up over NumPy (positions): **{t_numpy / t_numba:.1f}x**; "
          f"max |difference| {err:.1e}\n")


def course_character():
    files = [SHARED / "course" / "a2" / f"Model1.{e}" for e in ("skel", "attach", "obj")]
    if not all(f.exists() for f in files):
        print(f"(course character {files[0].parent}/Model1.* not found, ../shared is "
              "optional: timing the shipped figure instead)\n")
        files = [REPO / "scenes/assets/skinning" / f"figure.{e}" for e in ("skel", "attach", "obj")]
    return sk.load_course(*files), files[0].stem


def bench_character(frames):
    model, name = course_character()
    s = model.skeleton
    rng = np.random.default_rng(1)
    amp = rng.uniform(-0.6, 0.6, size=(s.num_joints, 3))
    phase = rng.uniform(0, 2 * np.pi, size=(s.num_joints, 3))
    pose = s.rest_pose()

    def frame(i):
        pose.rotations[:] = sk.euler_to_quat(amp * np.sin(0.05 * i + phase))
        return model.skin(pose)

    frame(0)
    t0 = time.perf_counter()
    for i in range(frames):
        v, n = frame(i)
    dt = time.perf_counter() - t0
    t1 = time.perf_counter()
    for i in range(frames):
        mats = model.skinning_matrices(pose)
    dm = time.perf_counter() - t1
    print(f"## Pose + skin {name}: {s.num_joints} joints, {model.num_vertices:,} vertices, "
          f"{model.joints.shape[1]} influence slots")
    print(f"{frames} frames in {dt:.3f} s: **{frames / dt:.0f} frames/s** "
          f"(positions and normals; of which pose -> skinning matrices alone: "
          f"{dm / frames * 1e6:.0f} us/frame)\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vertices", type=int, default=1_000_000)
    ap.add_argument("--influences", type=int, default=4)
    ap.add_argument("--joints", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--frames", type=int, default=1000)
    add_record_flag(ap)
    args = ap.parse_args()
    with captured_stdout() as report:
        run(args)
    write_report("skinning", report.getvalue(), args.record)


def run(args):
    import numba
    print("# skinning: linear blend skinning and posing\n")
    print(f"Command: `python benchmarks/bench_skinning.py --vertices {args.vertices} "
          f"--influences {args.influences} --joints {args.joints} --repeats {args.repeats} "
          f"--frames {args.frames}`\n")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"numba {numba.__version__} with {numba.get_num_threads()} threads "
          f"({numba.threading_layer() if hasattr(numba, 'threading_layer') else ''}), "
          f"numpy {np.__version__}\n")
    bench_lbs(args.vertices, args.influences, args.joints, args.repeats)
    bench_character(args.frames)


if __name__ == "__main__":
    main()
