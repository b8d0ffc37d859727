"""Instancing: memory of many copies of one mesh, and the cost of the instance level.

    python benchmarks/bench_instances.py [--copies 1000] [--size 256] [--record]

- Memory: a fresh process loads and renders a scene of ``--copies`` instances of a
  70k-triangle mesh (the Stanford bunny from ../shared, or, without it, a generated
  sphere of the same triangle count) and reports its peak resident memory (ru_maxrss),
  next to a process that loads and renders the mesh once, and to the size the same
  copies would take written out one by one (the flattened geometry and BVH of one copy,
  measured, times the copies; not built, it would not fit).
- Speed: one and two instances against the same copies placed directly in world space,
  both integrators, the same rays (best of 5 each, interleaved). A prototype used once
  is placed in world space by the loader, so the first row measures that rule; the
  second measures the instance level itself.

Writes benchmarks/output/results/instances.md (``--record``: benchmarks/results/).
"""
import argparse
import datetime
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

from reports import OtherLoad, add_record_flag, write_report

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
BUNNY = REPO.parent / "shared" / "assets" / "bunny.obj"

CHILD = """
import json, resource, sys, time
import numpy as np
import raytrace
t0 = time.perf_counter()
scene = raytrace.load_scene(json.loads(sys.argv[1]), base_dir=sys.argv[2])
t1 = time.perf_counter()
raytrace.render(scene, width=int(sys.argv[3]), height=int(sys.argv[3]), spp=1, integrator="path", max_depth=3)
t2 = time.perf_counter()
geo, acc = scene.geometry, scene.accel
arrays = [a for a in list(geo) + list(acc) if hasattr(a, "nbytes")]
nbytes = sum(a.nbytes for a in arrays if not any(b is not a and np.shares_memory(a, b) and a.base is not None
                                                  for b in arrays))
print(json.dumps({"rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "load_s": t1 - t0,
                  "render_s": t2 - t1, "scene_mib": nbytes / 2 ** 20, "triangles": int(len(geo.tri_mat))}))
"""


def mesh_file(folder):
    """The bunny, or a generated sphere of about 70k triangles."""
    if BUNNY.is_file():
        return BUNNY, "Stanford bunny, 69,666 triangles (../shared/assets/bunny.obj)"
    import numpy as np
    n = 187                                   # 2 n (n - 1) ~ 70k triangles
    th, ph = np.meshgrid(np.linspace(0, np.pi, n), np.linspace(0, 2 * np.pi, n))
    v = np.stack([np.sin(th) * np.cos(ph), np.cos(th), np.sin(th) * np.sin(ph)], -1).reshape(-1, 3) * 0.1
    idx = np.arange(n * n).reshape(n, n)
    a, b, c, d = idx[:-1, :-1], idx[1:, :-1], idx[1:, 1:], idx[:-1, 1:]
    f = np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)]) + 1
    path = folder / "sphere70k.obj"
    path.write_text("".join(f"v {x:.6f} {y:.6f} {z:.6f}\n" for x, y, z in v)
                    + "".join(f"f {i} {j} {k}\n" for i, j, k in f))
    return path, f"generated sphere, {len(f)} triangles (../shared absent)"


def scene(mesh, copies, instanced):
    side = max(1, int(round(copies ** 0.5)))
    objs = []
    for k in range(copies):
        xf = [{"translate": [0.25 * (k % side - side / 2), 0, -0.25 * (k // side)]}, {"rotate_y": (37 * k) % 360}]
        objs.append({"type": "instance", "prototype": "m", "transform": xf} if instanced
                    else {"type": "mesh", "file": str(mesh), "transform": xf})
    out = {"camera": {"center": [0, 1.2, 1.5], "look_at": [0, 0, -0.25 * side / 2], "fov": 50},
           "lights": [{"type": "directional", "direction": [-0.3, -1, -0.4]}], "objects": objs}
    if instanced:
        out["prototypes"] = {"m": {"type": "mesh", "file": str(mesh)}}
    return out


def child_run(data, folder, size):
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(data), str(folder), str(size)],
                         capture_output=True, text=True, check=True, cwd=REPO)
    return json.loads(out.stdout.strip().splitlines()[-1])


def speed(mesh, folder, size, copies):
    """Seconds per render (best of 5, interleaved) of ``copies`` instances vs as many
    copies of the mesh in world space."""
    import raytrace
    scenes = {k: raytrace.load_scene(scene(mesh, copies, k), base_dir=folder) for k in (True, False)}
    rows = []
    for integrator, spp in (("whitted", 4), ("path", 8)):
        kw = dict(width=size, height=size, spp=spp, integrator=integrator)
        for s in scenes.values():
            raytrace.render(s, **kw)
        best = {True: 1e9, False: 1e9}
        for _ in range(5):
            for k, s in scenes.items():
                t0 = time.perf_counter()
                raytrace.render(s, **kw)
                best[k] = min(best[k], time.perf_counter() - t0)
        rows.append(f"| {copies} | {integrator}, {spp} spp | {best[False]:.3f} s | {best[True]:.3f} s | "
                    f"{best[False] / best[True]:.2f}x |")
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--copies", type=int, default=1000)
    p.add_argument("--size", type=int, default=256, help="image size for the renders (default 256)")
    add_record_flag(p)
    args = p.parse_args()
    other_load = OtherLoad().start()
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp)
        mesh, what = mesh_file(folder)
        one = child_run(scene(mesh, 1, False), folder, args.size)
        many = child_run(scene(mesh, args.copies, True), folder, args.size)
        rows = speed(mesh, folder, args.size, 1) + speed(mesh, folder, args.size, 2)
    flat_mib = one["scene_mib"] * args.copies
    lines = [
        "## Instancing: memory and speed",
        "",
        f"Command: `python benchmarks/bench_instances.py --copies {args.copies} --size {args.size}`; "
        f"{datetime.datetime.now():%Y-%m-%d %H:%M}, {platform.machine()}, {os.cpu_count()} cores "
        f"(load average {os.getloadavg()[0]:.1f} at the end). Mesh: {what}.",
        "",
        "| scene | triangles stored | scene arrays + BVH | peak RSS (whole process) | load | first render |",
        "|---|---|---|---|---|---|",
        f"| the mesh once | {one['triangles']:,} | {one['scene_mib']:.1f} MiB | {one['rss_mib']:.0f} MiB | "
        f"{one['load_s']:.2f} s | {one['render_s']:.2f} s |",
        f"| {args.copies} instances | {many['triangles']:,} | {many['scene_mib']:.1f} MiB | "
        f"{many['rss_mib']:.0f} MiB | {many['load_s']:.2f} s | {many['render_s']:.2f} s |",
        f"| {args.copies} copies written out (estimate) | {one['triangles'] * args.copies:,} | "
        f"{flat_mib / 1024:.1f} GiB | - | - | - |",
        "",
        f"Instances against the same copies placed in world space, {args.size} x {args.size}, best of 5 "
        "(a prototype used once is placed in world space by the loader, so 1 instance is the world-space "
        "scene; 2 instances share one prototype through the instance level):",
        "",
        "| copies | render | world space | instances | ratio (world / instances) |",
        "|---|---|---|---|---|",
        *rows,
        "",
        f"While it ran, {other_load.stop().describe()}.",
    ]
    text = "\n".join(lines)
    print(text)
    write_report("instances", text, args.record)


if __name__ == "__main__":
    main()
