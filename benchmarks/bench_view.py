"""Live preview latency: from saving the scene file to the first updated image in the page.

    python benchmarks/bench_view.py [--edits 8] [--record]

For each scene, ``raytrace view`` runs on a copy of the scene file in
benchmarks/output/view/ (its ``assets`` folder linked to scenes/assets, so the paths in it
still resolve); once its first image is done, the copy is edited ``--edits`` times (a
material's colour nudged, written as an editor saves: a new file renamed over the old),
each after the previous edit's image was complete. For each edit it measures, from the
rename:

- **first image**: until the event stream announces a frame of the new scene and its PNG
  has been fetched (what a page does: ``GET /frame.png``); this includes noticing the
  change (polling every 0.1 s: 0.05 s on average), reloading the scene and its assets,
  and the first pass (path) or the quarter-size pass (Whitted);
- **done**: until the frame that completes the render (path: the scene's spp; Whitted:
  the full-size image).

Scenes: the Cornell box at 256 x 256 (path tracer, its own 64 spp) and the showcase
(Whitted, 640 x 400, 16 spp, the 5,000-triangle bunny among its objects). Kernels come
from the shipped bundle or the cache (the viewer's compile is not measured: it renders
once before the first edit). Writes benchmarks/output/results/view.md (with --record also
benchmarks/results/view.md).
"""
import argparse
import datetime
import json
import os
import pathlib
import platform
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
from reports import OtherLoad, add_record_flag, cpu_name, write_report  # noqa: E402
from view_helpers import Viewer  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
WORK = REPO / "benchmarks" / "output" / "view"
SCENES = {
    # name: (scene file, extra options, the material whose colour the edits nudge)
    "cornell": ("scenes/cornell_box.json", ["--size", "256", "256", "--spp", "64"], "red"),
    "showcase": ("scenes/showcase.json", [], "red"),
}


def _copy(name, source):
    WORK.mkdir(parents=True, exist_ok=True)
    link = WORK / "assets"
    if not link.exists():
        link.symlink_to(REPO / "scenes" / "assets", target_is_directory=True)
    data = json.loads((REPO / source).read_text())
    data.pop("$schema", None)
    path = WORK / f"{name}.json"
    path.write_text(json.dumps(data))
    return path, data


def _nudge(data, material, k):
    mat = data["materials"][material]
    key = "albedo" if "albedo" in mat else "diffuse"
    base = mat.setdefault("_base", list(mat[key]))
    mat[key] = [min(1.0, c * (0.6 + 0.1 * (k % 4))) for c in base]
    out = json.loads(json.dumps(data))
    out["materials"][material].pop("_base")
    return out


def _save(path, data):
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def measure(name, edits):
    source, options, material = SCENES[name]
    path, data = _copy(name, source)
    viewer = Viewer(path, *options)
    try:
        with viewer.events() as events:
            state = events.next(600)
            while not (state["frame"] and state["frame"]["stage"] == "done" and state["frame"]["current"]):
                assert not state["error"], state["error"]
                state = events.next(600)
            info = dict(state["frame"])
            first, done = [], []
            for k in range(edits):
                generation = state["generation"]
                t0 = time.perf_counter()
                _save(path, _nudge(data, material, k))
                seen_first = None
                while True:
                    state = events.next(600)
                    assert not state["error"], state["error"]
                    f = state["frame"]
                    if f is None or f["generation"] <= generation or not f["current"]:
                        continue
                    if seen_first is None:
                        status, _, _ = viewer.request("GET", f"/frame.png?frame={f['id']}")
                        assert status == 200
                        seen_first = time.perf_counter() - t0
                    if f["stage"] == "done":
                        break
                first.append(seen_first)
                done.append(time.perf_counter() - t0)
    finally:
        viewer.interrupt()
    return info, first, done


def _row(name, info, first, done):
    med = statistics.median
    return (f"| {name} | {info['integrator']}, {info['width']} x {info['height']}, {info['spp_target']} spp | "
            f"{med(first) * 1000:.0f} ms ({min(first) * 1000:.0f}-{max(first) * 1000:.0f}) | "
            f"{med(done):.2f} s ({min(done):.2f}-{max(done):.2f}) |")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--edits", type=int, default=8, help="edits per scene")
    p.add_argument("--scenes", default=",".join(SCENES), help="comma-separated: " + ", ".join(SCENES))
    add_record_flag(p)
    args = p.parse_args()
    load = OtherLoad().start()
    rows = []
    for name in args.scenes.split(","):
        info, first, done = measure(name, args.edits)
        rows.append(_row(name, info, first, done))
        print(rows[-1], flush=True)
    load.stop()
    text = "\n".join([
        "# Live preview latency (raytrace view)", "",
        f"{datetime.date.today()}, {cpu_name()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"{load.describe()}.", "",
        f"Command: `python benchmarks/bench_view.py --edits {args.edits}`. Median (min-max) over the edits "
        "of the time from saving the scene file (a rename over it) to the first updated image fetched as a "
        "page does, and to the finished render.", "",
        "| scene | render | save to first updated image | save to finished image |",
        "|---|---|---|---|", *rows, ""])
    write_report("view", text, args.record)


if __name__ == "__main__":
    main()
