"""Path tracer speed of this tree against earlier revisions, per path, interleaved.

    python benchmarks/bench_versions.py [--revs f0abe8b e08c36f] [--scenes cornell,glass,instances,smoke]
                                        [--rounds 5] [--spp 16] [--size 256]

Each revision is checked out once into ``benchmarks/output/versions/<rev>`` (a git
worktree; this tree is measured as it is). Per round, every (scene, version) pair runs
in a fresh process, in an order that alternates between rounds: import, load, one
warm-up render of 1 spp (compiles or loads the kernels), then one timed render of
``--spp`` samples per pixel on all cores. The figure is the best round's seconds and
paths per second (width x height x spp / seconds); the ratio is this tree's time over the
revision's (< 1: faster). A revision that cannot render a scene (media before 0.4.0)
shows ``-``. The scenes are ``bench_scenes.py``'s (cornell, glass, smoke) and
scenes/instances.json, at ``--size`` pixels wide.

Writes benchmarks/output/results/versions.md (with ``--record`` also benchmarks/results/).
"""
import argparse
import json
import pathlib
import subprocess
import sys

from reports import OtherLoad, add_record_flag, cpu_name, write_report

REPO = pathlib.Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "output"
sys.path.insert(0, str(REPO))

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import raytrace
spec = json.loads(sys.argv[2])
scene = raytrace.load_scene(spec["scene"], base_dir=spec["base"])
kw = dict(width=spec["width"], height=spec["height"], integrator="path")
raytrace.render(scene, spp=1, **kw)
t0 = time.perf_counter()
raytrace.render(scene, spp=spec["spp"], **kw)
print(time.perf_counter() - t0)
"""


def scene_specs(names, size):
    """{name: (scene dict, base folder, width, height)}."""
    import bench_scenes
    out = {}
    for name in names:
        if name == "instances":
            data = json.loads((REPO / "scenes" / "instances.json").read_text())
            base = REPO / "scenes"
        else:
            data, base = bench_scenes.our_scene(name, size)
        image = data.get("image", {})
        w0, h0 = image.get("width", size), image.get("height", size)
        out[name] = (data, str(base), size, max(1, round(size * h0 / w0)))
    return out


def checkout(rev):
    """A worktree of ``rev`` under benchmarks/output/versions (made once)."""
    folder = OUT / "versions" / rev
    if not folder.exists():
        folder.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(folder), rev], check=True,
                       capture_output=True)
    return folder


def timed(tree, spec, spp):
    data, base, width, height = spec
    arg = json.dumps({"scene": data, "base": base, "width": width, "height": height, "spp": spp})
    r = subprocess.run([sys.executable, "-c", CHILD, str(tree), arg], cwd=tree, capture_output=True, text=True,
                       timeout=1800)
    if r.returncode != 0:
        return None
    return float(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--revs", nargs="+", default=["f0abe8b", "e08c36f"])
    ap.add_argument("--scenes", default="cornell,glass,instances,smoke")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--spp", type=int, default=16)
    ap.add_argument("--size", type=int, default=256)
    add_record_flag(ap)
    args = ap.parse_args()
    specs = scene_specs(args.scenes.split(","), args.size)
    trees = {rev: checkout(rev) for rev in args.revs}
    trees["this tree"] = REPO
    best = {}
    load = OtherLoad()
    load.start()
    for k in range(args.rounds):
        for name, spec in specs.items():
            order = list(trees.items()) if k % 2 == 0 else list(reversed(trees.items()))
            for version, tree in order:
                t = timed(tree, spec, args.spp)
                if t is not None:
                    best[name, version] = min(t, best.get((name, version), float("inf")))
        print(f"round {k + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    load.stop()
    lines = [f"# Path tracer speed by version ({cpu_name()}, {args.rounds} rounds, {args.spp} spp, "
             f"width {args.size})", "", load.describe(), "",
             "| scene | " + " | ".join(f"{v} s (paths/s)" for v in trees) + " | "
             + " | ".join(f"this / {v}" for v in args.revs) + " |",
             "|---" * (1 + len(trees) + len(args.revs)) + "|"]
    for name, spec in specs.items():
        paths = spec[2] * spec[3] * args.spp
        cells = [f"{best[name, v]:.3f} ({paths / best[name, v]:,.0f})" if (name, v) in best else "-" for v in trees]
        ratios = [f"{best[name, 'this tree'] / best[name, v]:.3f}"
                  if (name, v) in best and (name, "this tree") in best else "-" for v in args.revs]
        lines.append(f"| {name} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    write_report("versions", text, args.record)


if __name__ == "__main__":
    main()
