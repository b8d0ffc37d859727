"""The edit loop: a kernel edited, how long until the next image (whole process).

    python benchmarks/bench_edit_loop.py [--repeat 2] [--only cold,comment,leaf,phong,view] [--record]

Every measurement is a ``raytrace render`` command (or ``raytrace view``) in a fresh
process, run on a **copy of the package** in benchmarks/output/edit_loop/ (edited there,
never in the checkout) with a Numba cache of its own, as a user's shell runs it: Python
writes its bytecode caches (``PYTHONDONTWRITEBYTECODE`` is removed from the children's
environment) and the copy's bytecode is compiled once before the first row. Rows:

- **cold**: the first render with an empty cache and no shipped kernels
  (``RAYTRACE_PREBUILT=0``): the Cornell box at 64 x 64 (path tracer, 4 spp) and the
  Whitted showcase as the README renders it (640 x 400, 16 spp). Run twice when a plan
  of a previous compile exists (``raytrace/jit/parallel.py``): "cold, no plan" with
  an empty cache, and "cold, plan" with an empty cache holding only the compile plan;
- **warm**: the same renders again, nothing to compile;
- **comment**: a comment line appended to ``kernels/bsdf.py`` and a docstring changed,
  then the path render: the row gives the render's time minus the warm one's;
- **leaf**: a body edit of ``ggx_d`` (``kernels/bsdf.py``, a leaf the path tracer's
  rough metal uses; a constant that differs from run to run), then the path render;
- **phong**: the issue's student edit, the specular term of ``phong`` (``kernels/whitted.py``)
  times 0.5 (and a constant that differs from run to run), then the Whitted showcase;
- **anchor** (with ``leaf`` or ``phong``): Mitsuba 3 with a BSDF written in Python,
  edited, next image (``benchmarks/mitsuba_anchor.py``, a fresh process each time); the
  edit rows give their ratio to it, since machines here differ 2-3x from day to day;
- **view**: ``raytrace view`` on the Cornell box (64 x 64) runs; ``ggx_d`` is edited as
  above and the time from the file's save to the first image of the new code in the
  page (the event stream's frame, its PNG fetched) is measured.

Each row's command is printed in the report, with the seconds (best and median of
``--repeat``), the CPU and the load other processes put on it. Writes
benchmarks/output/results/edit_loop.md (with --record also benchmarks/results/edit_loop.md).
"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time

from reports import OtherLoad, add_record_flag, cpu_name, write_report

REPO = pathlib.Path(__file__).resolve().parents[1]
WORK = REPO / "benchmarks" / "output" / "edit_loop"
PATH_SCENE = ["scenes/cornell_box.json", "--size", "64", "64", "--spp", "4"]
WHITTED_SCENE = ["scenes/showcase.json"]
GGX = "    return 1.0 / (math.pi * a2 * t * t)\n"
PHONG = "    return intensity * (n_dot_l * kd + spec * ks)\n"


def setup():
    """A fresh copy of the packages (bytecode compiled) and an empty cache folder."""
    if WORK.exists():
        shutil.rmtree(WORK)
    root = WORK / "src"
    for package in ("raytrace", "userio"):
        shutil.copytree(REPO / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    (WORK / "scenes").symlink_to(REPO / "scenes", target_is_directory=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root)], check=True)
    return root


def env(root, cache, **extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("RAYTRACE_", "NUMBA_CACHE"))}
    e.pop("PYTHONDONTWRITEBYTECODE", None)
    e.update(PYTHONPATH=str(root), NUMBA_CACHE_DIR=str(cache), **extra)
    return e


def command(scene):
    return [sys.executable, "-m", "raytrace", "render", *scene, "-o", str(WORK / "out.png")]


def settle(e, deadline=900):
    """Wait until no background compile (``raytrace.jit.late``: a late-bound render builds
    the full kernel in a detached process, a cold one the late twin) runs on the cache
    of ``e``: each timed command starts on a quiet machine, as after a user's pause."""
    cache = pathlib.Path(e["NUMBA_CACHE_DIR"])
    t_end = time.monotonic() + deadline
    while any(cache.rglob(".building-*")) and time.monotonic() < t_end:
        time.sleep(0.5)


def timed(cmd, e):
    """Wall seconds of one command (it must succeed) and its stderr."""
    settle(e)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=WORK, env=e, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr[-3000:]}")
    return wall, r.stderr


def edit(path, old, new):
    text = path.read_text()
    if text.count(old) != 1:
        sys.exit(f"{path}: the text to edit is not there once: {old!r}")
    path.write_text(text.replace(old, new))
    return text


def view_row(root, cache, bsdf, repeat):
    """Seconds from saving an edit of ggx_d to the first frame of the new code fetched
    from a running ``raytrace view`` (its event stream, then /frame.png)."""
    sys.path.insert(0, str(REPO / "tests"))
    from view_helpers import Viewer
    e = env(root, cache)
    viewer = Viewer(WORK / "scenes" / "cornell_box.json", "--size", "64", "64", "--spp", "4", cwd=root,
                    env={k: e[k] for k in ("PYTHONPATH", "NUMBA_CACHE_DIR")})
    out = []
    try:
        state = viewer.wait(lambda s: s["frame"] is not None and s["frame"]["stage"] == "done")
        for _ in range(repeat):
            generation = state["generation"]
            original = bsdf.read_text()
            with viewer.events() as events:
                t0 = time.perf_counter()
                edit(bsdf, GGX, f"    _edit = {time.time_ns()}\n{GGX}")
                while True:
                    state = events.next(600)
                    if state["frame"] is not None and state["frame"]["generation"] > generation and state["frame"]["current"]:
                        viewer.request("GET", "/frame.png")
                        out.append(time.perf_counter() - t0)
                        edited = state["frame"]["generation"]
                        break
                    if state["error"]:
                        sys.exit(f"raytrace view: {state['error']}")
            bsdf.write_text(original)
            state = viewer.wait(lambda s: s["frame"] is not None and s["frame"]["stage"] == "done"
                                and s["frame"]["generation"] > edited and s["frame"]["current"])
    finally:
        viewer.kill()
    return out


def shown(cmd, note=""):
    return "`" + " ".join(["python"] + [str(c).replace(str(WORK) + "/", "").replace(str(REPO) + "/", "") for c in cmd[1:]]) + "`" + note


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--only", default="cold,comment,leaf,phong,view")
    add_record_flag(p)
    args = p.parse_args()
    only = set(args.only.split(","))
    root = setup()
    cache = WORK / "cache"
    rows = []
    load = OtherLoad().start()
    head = [f"# The edit loop: a kernel edited, the next image ({time.strftime('%Y-%m-%d')})", "",
            f"- CPU: {cpu_name()}, {os.cpu_count()} logical cores; Python {sys.version.split()[0]}",
            f"- load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
            "- every command in a fresh process, on a copy of the package in benchmarks/output/edit_loop/src "
            "(PYTHONPATH), with its own Numba cache (NUMBA_CACHE_DIR); bytecode caches written as a user's "
            "shell does", ""]
    print("\n".join(head), flush=True)

    def add(name, cmd, seconds, note=""):
        rows.append((name, shown(cmd, note), seconds))
        print(f"  {name}: {' / '.join(f'{s:.1f}' for s in seconds)} s", flush=True)

    path_cmd, whitted_cmd = command(PATH_SCENE), command(WHITTED_SCENE)
    if "cold" in only:
        for label, cmd in (("path", path_cmd), ("Whitted", whitted_cmd)):
            secs, plan_secs = [], []
            for _ in range(args.repeat):
                shutil.rmtree(cache, ignore_errors=True)
                secs.append(timed(cmd, env(root, cache, RAYTRACE_PREBUILT="0"))[0])
                plans = list(cache.glob("raytrace-numba/kernels-*/plans-*.pkl"))
                if plans:              # the same with only this machine's compile plan in the cache
                    keep, rel = plans[0].read_bytes(), plans[0].relative_to(cache)
                    shutil.rmtree(cache)
                    (cache / rel).parent.mkdir(parents=True)
                    (cache / rel).write_bytes(keep)
                    plan_secs.append(timed(cmd, env(root, cache, RAYTRACE_PREBUILT="0"))[0])
            add(f"cold first render, {label}, no plan", cmd, secs, " with RAYTRACE_PREBUILT=0, empty cache")
            if plan_secs:
                add(f"cold first render, {label}, this machine's compile plan", cmd, plan_secs,
                    " with RAYTRACE_PREBUILT=0, empty cache but plans.pkl")
    # warm the cache for the edit rows
    for cmd in (path_cmd, whitted_cmd):
        timed(cmd, env(root, cache))
    warm_path = [timed(path_cmd, env(root, cache))[0] for _ in range(args.repeat)]
    warm_whitted = [timed(whitted_cmd, env(root, cache))[0] for _ in range(args.repeat)]
    add("warm render, path", path_cmd, warm_path)
    add("warm render, Whitted", whitted_cmd, warm_whitted)
    bsdf = root / "raytrace" / "kernels" / "bsdf.py"
    whitted = root / "raytrace" / "kernels" / "whitted.py"
    if "comment" in only:
        secs = []
        for k in range(args.repeat):
            original = bsdf.read_text()
            bsdf.write_text(original.replace('"""BSDFs of the path tracer', f'"""The BSDFs ({k}) of the path tracer', 1)
                            + f"\n# a comment {time.time_ns()}\n")
            secs.append(timed(path_cmd, env(root, cache))[0] - statistics.median(warm_path))
            bsdf.write_text(original)
        add("comment-only edit of kernels/bsdf.py: next render minus a warm render", path_cmd, secs)
    anchor = None
    if {"leaf", "phong"} & set(only):
        # the anchor, timed in this sitting: Mitsuba 3 with a BSDF written in Python, edited
        # (a value that differs each run), next image (benchmarks/mitsuba_anchor.py)
        script = REPO / "benchmarks" / "mitsuba_anchor.py"
        cmd = [sys.executable, str(script), str(WORK / "anchor.png"), "scalar_rgb"]
        try:
            import mitsuba  # noqa: F401
            secs = [timed(cmd + [str(time.time_ns() % 1000)], env(root, cache))[0] for _ in range(args.repeat)]
            anchor = statistics.median(secs)
            add("anchor: Mitsuba 3 (scalar_rgb), a BSDF written in Python edited, next Cornell box 64 x 64, 4 spp",
                cmd, secs)
        except ImportError:
            print("  (mitsuba is not installed: no anchor row; pip install -e '.[reference]')")

    def versus(secs):
        return f" ({statistics.median(secs) / anchor:.1f}x the anchor)" if anchor else ""

    if "leaf" in only:
        secs = []
        for _ in range(args.repeat):
            original = edit(bsdf, GGX, f"    _edit = {time.time_ns()}\n    return 1.0 / (math.pi * a2 * t * t)\n")
            secs.append(timed(path_cmd, env(root, cache))[0])
            bsdf.write_text(original)
        add("body edit of ggx_d (kernels/bsdf.py), next path render" + versus(secs), path_cmd, secs)
    if "phong" in only:
        secs = []
        for _ in range(args.repeat):
            original = edit(whitted, PHONG, f"    _edit = {time.time_ns()}\n"
                                            "    return intensity * (n_dot_l * kd + 0.5 * spec * ks)\n")
            secs.append(timed(whitted_cmd, env(root, cache))[0])
            whitted.write_text(original)
        add("body edit of phong (kernels/whitted.py, specular x 0.5), next Whitted showcase render"
            + versus(secs), whitted_cmd, secs)
    if "view" in only:
        secs = view_row(root, cache, bsdf, args.repeat)
        rows.append(("raytrace view: a body edit of ggx_d saved -> the first image of the new code in the page",
                     "`python -m raytrace view scenes/cornell_box.json --size 64 64 --spp 4 --no-browser`, "
                     "ggx_d edited as in the row above", secs))
        print(f"  view: {' / '.join(f'{x:.1f}' for x in secs)} s", flush=True)
    load.stop()
    text = list(head) + ["| what | command | seconds (best / median) |", "|---|---|---:|"]
    for name, cmd, seconds in rows:
        text.append(f"| {name} | {cmd} | {min(seconds):.1f} / {statistics.median(seconds):.1f} |")
    text += ["", f"- other load during the run: {load.describe()}",
             f"- load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"]
    print("\n".join(text[len(head):]))
    write_report("edit_loop", "\n".join(text), args.record)


if __name__ == "__main__":
    main()
