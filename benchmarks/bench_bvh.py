"""BVH speed against Embree on the Stanford bunny, same rays, same thread count.

    python benchmarks/bench_bvh.py [--size 1024] [--repeats 3] [--record] [--out FILE]

Ray sets (built once, fed identically to both engines):
- coherent: a size x size pinhole camera framing the bunny, rays in 16x16 tiles;
- incoherent A: size^2 rays from random points of the bunny's bounding sphere to random
  points of its box;
- incoherent B: one cosine-distributed bounce ray from every primary hit point.
Ours: ``trace_closest_batch`` (a prange over chunks, one ``closest_hit`` call per ray, as
the renderer does) with ``numba.set_num_threads(n)``. Embree (embreex): ``scene.run`` on
float32 arrays, one Python thread per share of the batch. The two engines run
interleaved (ours, Embree, ours, ...) so that load from other processes hits both; each
figure is the best of ``--repeats``. Also: build time, hit agreement, first-call compile
time with an empty Numba cache and load time with a warm one (fresh processes).
Writes the table to benchmarks/output/results/bvh.md (with ``--record`` also
benchmarks/results/bvh.md), or to ``--out``. Skips, and says so, without the bunny
(../shared/assets/bunny.obj) or embreex.
"""
import argparse
import datetime
import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

from reports import OtherLoad, add_record_flag, cpu_name, skipped, vector_isa, write_report

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
SHARED = pathlib.Path(os.environ.get("RT_SHARED_DIR", REPO.parent / "shared"))
BUNNY = SHARED / "assets" / "bunny.obj"

COMPILE_SNIPPET = """
import time
t0 = time.perf_counter()
c0 = time.process_time()
import numpy as np
import raytrace
from raytrace.accel import build_accel, closest_hit, any_hit, trace_closest_batch
t1 = time.perf_counter()
c1 = time.process_time()
v = np.random.default_rng(0).random((50, 3, 3))
acc = build_accel(v[:, 0], v[:, 1], v[:, 2], np.zeros((1, 3, 4)), -np.ones((1, 3)),
                  np.ones((1, 3)))
t2 = time.perf_counter()
c2 = time.process_time()
trace_closest_batch(acc, np.zeros((4, 3)), np.ones((4, 3)))
closest_hit(acc, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, np.inf)
any_hit(acc, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, np.inf)
t3 = time.perf_counter()
c3 = time.process_time()
import pathlib, raytrace._numba_cache as nc
print(t1 - t0, t2 - t1, t3 - t2, c1 - c0, c2 - c1, c3 - c2,
      nc.source_hash(pathlib.Path(raytrace.__file__).parent))
"""


def load_obj(path):
    """Triangles of an OBJ file's ``v``/``f`` lines: (T, 3, 3) float64 (fans for polygons)."""
    verts, faces = [], []
    with open(path) as fh:
        for line in fh:
            if line.startswith("v "):
                verts.append(line.split()[1:4])
            elif line.startswith("f "):
                idx = [int(w.split("/")[0]) for w in line.split()[1:]]
                faces += [(idx[0], idx[k], idx[k + 1]) for k in range(1, len(idx) - 1)]
    v = np.array(verts, dtype=np.float64)
    f = np.array(faces, dtype=np.int64)
    f = np.where(f > 0, f - 1, f + len(v))
    return v[f]


def tile_order(n, tile=16):
    """Pixel (row, col) of an n x n image visited tile by tile."""
    ys, xs = np.mgrid[0:n, 0:n]
    nt = n // tile
    ys = ys[: nt * tile, : nt * tile].reshape(nt, tile, nt, tile).transpose(0, 2, 1, 3).ravel()
    xs = xs[: nt * tile, : nt * tile].reshape(nt, tile, nt, tile).transpose(0, 2, 1, 3).ravel()
    return ys, xs


def camera_rays(lo, hi, n):
    """Pinhole camera on +z looking at the box centre; the box's front face fills the view."""
    c = 0.5 * (lo + hi)
    ext = hi - lo
    dist = 1.5 * np.linalg.norm(ext)
    eye = c + np.array([0.0, 0.0, dist])
    half = 0.5 * max(ext[0], ext[1]) / (dist - 0.5 * ext[2])
    ys, xs = tile_order(n)
    d = np.stack([((xs + 0.5) / n * 2 - 1) * half, (1 - (ys + 0.5) / n * 2) * half,
                  -np.ones(len(xs))], axis=-1)
    return np.broadcast_to(eye, d.shape).copy(), d


def sphere_to_box_rays(lo, hi, n, rng):
    c = 0.5 * (lo + hi)
    radius = 0.5 * np.linalg.norm(hi - lo)
    u = rng.normal(size=(n, 3))
    u /= np.linalg.norm(u, axis=1)[:, None]
    o = c + radius * u
    return o, lo + rng.random((n, 3)) * (hi - lo) - o


def bounce_rays(tris, o, d, t, idx, rng):
    """Cosine-distributed rays leaving the hit points on the side the ray came from."""
    hit = idx >= 0
    p = o[hit] + t[hit, None] * d[hit]
    tri = tris[idx[hit]]
    nrm = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    nrm /= np.linalg.norm(nrm, axis=1)[:, None]
    nrm *= -np.sign(np.einsum("ij,ij->i", nrm, d[hit]))[:, None]
    r = rng.normal(size=nrm.shape)
    r /= np.linalg.norm(r, axis=1)[:, None]
    dirs = nrm + r                     # cosine distributed about nrm
    scale = np.linalg.norm(tris.reshape(-1, 3).max(0) - tris.reshape(-1, 3).min(0))
    return p + 1e-5 * scale * nrm, dirs


def run_embree(scene, o32, d32, nthreads):
    if nthreads == 1:
        t0 = time.perf_counter()
        r = scene.run(o32, d32, output=1)
        return time.perf_counter() - t0, r["primID"], r["tfar"]
    parts = np.array_split(np.arange(len(o32)), nthreads)
    res = [None] * nthreads

    def work(i):
        res[i] = scene.run(o32[parts[i]], d32[parts[i]], output=1)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(nthreads)]
    t0 = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    dt = time.perf_counter() - t0
    return dt, np.concatenate([r["primID"] for r in res]), np.concatenate([r["tfar"] for r in res])


def run_ours(acc, o, d, nthreads):
    import numba

    from raytrace.accel import trace_closest_batch
    numba.set_num_threads(nthreads)
    t0 = time.perf_counter()
    t, kind, idx, u, v = trace_closest_batch(acc, o, d)
    return time.perf_counter() - t0, np.where(kind == 1, idx, -1), t


def compile_times():
    """(import, build, traversal) wall then CPU seconds in fresh processes: empty cache,
    then warm. The shipped kernels are off (``RAYTRACE_PREBUILT=0``): the empty-cache run
    measures compiling.

    The package keys its Numba cache on a hash of all its sources, so a warm run only
    counts when no source file changed in between (others edit the tree); else retry."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(REPO), RAYTRACE_PREBUILT="0")

        def run():
            r = subprocess.run([sys.executable, "-c", COMPILE_SNIPPET], env=env, cwd=REPO,
                               capture_output=True, text=True, check=True)
            words = r.stdout.split()
            return [float(x) for x in words[:6]], words[6]

        cold, h = run()
        for _ in range(3):
            warm, h2 = run()
            if h2 == h:
                break
            h = h2
    return cold, warm


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=1024, help="camera image size (default 1024)")
    ap.add_argument("--repeats", type=int, default=3, help="timed repeats, best kept")
    ap.add_argument("--threads", default="1,2", help="thread counts (default 1,2)")
    ap.add_argument("--obj", default=str(BUNNY), help="mesh (default: the Stanford bunny)")
    add_record_flag(ap)
    ap.add_argument("--out", help="write the Markdown table to this file instead ('-': "
                                  "print only)")
    args = ap.parse_args(argv)
    if not pathlib.Path(args.obj).exists():
        skipped("bench_bvh", f"{args.obj} not found (../shared is optional)")
        return 0
    try:
        from embreex import rtcore_scene as rtcs
        from embreex.mesh_construction import TriangleMesh
    except ImportError:
        skipped("bench_bvh", "embreex is not installed (pip install embreex)")
        return 0
    from raytrace.accel import build_accel, trace_closest_batch

    load0 = os.getloadavg()
    other_load = OtherLoad().start()
    cold, warm = compile_times()
    tris = load_obj(args.obj)
    empty3, empty34 = np.zeros((0, 3)), np.zeros((0, 3, 4))
    builds = []
    for _ in range(3):
        t0 = time.perf_counter()
        acc = build_accel(tris[:, 0], tris[:, 1], tris[:, 2], empty34, empty3, empty3)
        builds.append(time.perf_counter() - t0)
    soup_rng = np.random.default_rng(0)
    centres = soup_rng.random((1_000_000, 1, 3))
    soup = centres + 0.003 * soup_rng.normal(size=(1_000_000, 3, 3))
    t0, c0 = time.perf_counter(), time.process_time()
    build_accel(soup[:, 0], soup[:, 1], soup[:, 2], empty34, empty3, empty3)
    soup_build = time.perf_counter() - t0
    soup_cpu = time.process_time() - c0
    del soup, centres
    t0 = time.perf_counter()
    scene = rtcs.EmbreeScene()
    TriangleMesh(scene, tris.astype(np.float32))
    emb_build = time.perf_counter() - t0

    rng = np.random.default_rng(1)
    lo, hi = tris.reshape(-1, 3).min(0), tris.reshape(-1, 3).max(0)
    o_c, d_c = camera_rays(lo, hi, args.size)
    o_a, d_a = sphere_to_box_rays(lo, hi, args.size * args.size, rng)
    t, kind, idx, _, _ = trace_closest_batch(acc, o_c, d_c)
    o_b, d_b = bounce_rays(tris, o_c, d_c, t, np.where(kind == 1, idx, -1), rng)
    sets = [("coherent camera rays (tiles)", o_c, d_c),
            ("incoherent A: sphere -> box", o_a, d_a),
            ("incoherent B: bounce rays", o_b, d_b)]
    nthreads = [int(x) for x in args.threads.split(",")]
    run_ours(acc, o_c[:1000], d_c[:1000], max(nthreads))     # compile / warm up
    rows = []
    for name, o, d in sets:
        o32, d32 = o.astype(np.float32), d.astype(np.float32)
        for nt in nthreads:
            best_e = best_o = np.inf
            for _ in range(args.repeats):
                dt, ours_id, ours_t = run_ours(acc, o, d, nt)
                best_o = min(best_o, dt)
                dt, emb_id, emb_t = run_embree(scene, o32, d32, nt)
                best_e = min(best_e, dt)
            same = np.mean(ours_id == emb_id)
            both = (ours_id >= 0) & (ours_id == emb_id)
            rel = np.abs(ours_t[both] - emb_t[both]) / np.maximum(np.abs(emb_t[both]), 1e-30)
            n = len(o)
            rows.append((name, nt, n, n / best_o / 1e6, n / best_e / 1e6, best_e / best_o,
                         same, np.mean(ours_id >= 0), float(np.max(rel)) if rel.size else 0.0))
            print(f"{name:32s} threads {nt}: ours {rows[-1][3]:6.2f} Mrays/s, embree "
                  f"{rows[-1][4]:6.2f} Mrays/s, ratio {rows[-1][5]:.2f}, same primID "
                  f"{same:.5f}", flush=True)
    load1 = os.getloadavg()
    other_load.stop()
    print(other_load.describe())

    cmd = "python benchmarks/bench_bvh.py" + "".join(
        f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    cpu = f"{cpu_name()}, {vector_isa()}"
    lines = [
        "## BVH (raytrace/accel) against Embree",
        "",
        f"Command: `{cmd}`  ",
        f"Date: {datetime.date.today().isoformat()}  ",
        f"Machine: {os.cpu_count()} cores ({cpu}), shared with other engineers; "
        f"{other_load.describe()}; load average {load0[0]:.2f} before, {load1[0]:.2f} after "
        f"(this run included). The engines run interleaved, best of {args.repeats}.  ",
        f"Mesh: {pathlib.Path(args.obj).name}, {len(tris)} triangles. Embree: embreex "
        f"`scene.run` (rtcIntersect1 per ray), float32 rays. Ours: `trace_closest_batch` "
        f"(one `closest_hit` call per ray, float64 rays).",
        "",
        "| rays | threads | N | ours Mrays/s | Embree Mrays/s | ours / Embree | same primID "
        "| hit fraction | max rel. t diff |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, nt, n, mo, me, ratio, same, hitf, rel in rows:
        lines.append(f"| {name} | {nt} | {n} | {mo:.2f} | {me:.2f} | {ratio:.2f} | "
                     f"{same:.5f} | {hitf:.3f} | {rel:.1e} |")
    lines.append("")
    for nt in nthreads:
        worst = min((r for r in rows if r[1] == nt), key=lambda r: r[5])
        lines.append(
            f"Target, {nt} thread(s): every ray class >= 1.0x Embree: "
            f"{'met' if worst[5] >= 1.0 else 'NOT met'} (worst {worst[5]:.2f}x, {worst[0]}).  ")
    if other_load.busy:
        lines.append(f"**Not a quiet machine**: {other_load.describe()}; run again.  ")
    lines += [
        "",
        f"Build (warm, best of 3): ours {min(builds) * 1e3:.0f} ms "
        f"({acc.nodes.shape[0]} nodes, {acc.tris.shape[0]} 4-triangle blocks); Embree "
        f"{emb_build * 1e3:.0f} ms (including embreex's copies). Ours on 1,000,000 random "
        f"small triangles in the unit cube: {soup_build:.2f} s wall, {soup_cpu:.2f} s CPU.  ",
        f"Fresh process, empty Numba cache, shipped kernels off (wall / CPU): import {cold[0]:.2f} / {cold[3]:.2f} s,"
        f" first build (compiles) {cold[1]:.2f} / {cold[4]:.2f} s, first traversal calls "
        f"(compile `closest_hit`, `any_hit`, `trace_closest_batch`) {cold[2]:.2f} / "
        f"{cold[5]:.2f} s.  ",
        f"Fresh process, warm Numba cache (wall / CPU): import {warm[0]:.2f} / {warm[3]:.2f} s, "
        f"first build {warm[1]:.2f} / {warm[4]:.2f} s, first traversal calls {warm[2]:.2f} / "
        f"{warm[5]:.2f} s.",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out is None:
        write_report("bvh", text, args.record)
    elif args.out != "-":
        pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(args.out).write_text(text)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
