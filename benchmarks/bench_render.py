"""End-to-end render timings of the ray tracer.

    python benchmarks/bench_render.py [--record]

Measures, each in a fresh process through the CLI:
- first render with an empty Numba cache (cold) and with a filled one (warm):
  scenes/spheres.json at 800x800, 1 sample per pixel;
- the course bunny scenes (../shared/course/a4/scene05_bunny_200.txt and
  scene06_bunny_1k.txt) at 800x800 with 3x3 jittered samples (9 spp, Gaussian filter)
  and 4 bounces, warm cache; skipped, and said so, when ../shared is absent.
Writes benchmarks/output/results/render.md (with --record also benchmarks/results/render.md).
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

from reports import add_record_flag, skipped, write_report

REPO = pathlib.Path(__file__).resolve().parents[1]
SHARED = pathlib.Path(os.environ.get("RT_SHARED_DIR", REPO.parent / "shared"))
OUT = REPO / "benchmarks" / "output"


def cli_time(args, cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "raytrace", "render", *args, "--quiet"], env=env,
                       capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(r.stderr)
    return dt


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_record_flag(ap)
    opts = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    rows, notes = [], []
    simple = [str(REPO / "scenes" / "spheres.json"), "-o", str(OUT / "spheres_800.png"),
              "--size", "800", "800", "--spp", "1"]
    with tempfile.TemporaryDirectory() as cold_dir:
        cold = cli_time(simple, cold_dir)
        warm = min(cli_time(simple, cold_dir) for _ in range(3))
    rows.append(("spheres.json 800x800, 1 spp, fresh process, empty Numba cache (compile)", cold, "< 15 s"))
    rows.append(("spheres.json 800x800, 1 spp, fresh process, warm cache (best of 3)", warm, "< 1.5 s"))
    cache = os.environ.get("NUMBA_CACHE_DIR", str(REPO / ".cache" / "numba"))
    for name in ("scene05_bunny_200", "scene06_bunny_1k"):
        src = SHARED / "course" / "a4" / f"{name}.txt"
        if not src.exists():
            notes.append(skipped(f"bench_render {name}", f"{src} not found (../shared is optional)"))
            continue
        args = [str(src), "-o", str(OUT / f"{name}_800.png"), "--size", "800", "800", "--spp", "9",
                "--filter", "gaussian", "--bounces", "4"]
        cli_time(args, cache)                      # make sure this path is compiled
        best = min(cli_time(args, cache) for _ in range(2))
        rows.append((f"course {name} 800x800, 3x3 jittered (9 spp, Gaussian), 4 bounces, warm", best, ""))
    lines = [
        "## Ray tracer: end-to-end render times",
        "",
        f"Command: `python benchmarks/bench_render.py`; {datetime.date.today()}, "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}.",
        "Wall time of a whole `raytrace render` process (start-up, load, BVH, render, PNG write).",
        "",
        "| what | wall time | target |",
        "|---|---|---|",
    ]
    lines += [f"| {what} | {t:.2f} s | {target} |" for what, t, target in rows]
    if notes:
        lines += [""] + [f"Not measured: {n}." for n in notes]
    text = "\n".join(lines) + "\n"
    print(text)
    write_report("render", text, opts.record)


if __name__ == "__main__":
    main()
