"""The README's user-facing figures, measured in one command.

    python benchmarks/bench_readme.py [--quick] [--no-animate] [--out FILE]

Every figure is the wall time of a whole process, started the way a user starts it
(the ``raytrace`` command next to this Python, else ``python -m raytrace``):

- ``raytrace --help``: median of 5;
- a first render with an empty Numba cache (a fresh temporary ``NUMBA_CACHE_DIR`` per
  run, as on a new machine; the shipped kernels load from the package, or compile when
  they do not fit, which the CLI says and this report notes): ``scenes/showcase.json`` and
  a few other Whitted and path-traced scenes at 64 x 64, 1 sample per pixel
  (``--quick``: showcase and the Cornell box only);
- a warm render: ``scenes/spheres.json`` at 800 x 800, 1 sample per pixel, through the
  CLI, run again with the cache its first run filled (median of 3);
- ``raytrace animate scenes/animation/orbit.json --frames 0:8 --size 160 120`` with the
  default choice of workers and with ``--workers 1`` (``--no-animate`` leaves it out).

The report gives the date, the machine (CPU model, cores, widest vector instructions)
and how busy it was with other work during the run (``reports.OtherLoad``, and the
load average before and after). It is printed and written to ``--out`` (default
``benchmarks/output/readme_figures.md``, which git ignores). About 1-2 minutes on 2
cores when the shipped kernels fit; each first render that compiles adds 25-60 s.
"""
import argparse
import datetime
import json
import os
import pathlib
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from reports import OtherLoad, cpu_name, vector_isa  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "benchmarks" / "output" / "readme_figures.md"
FIRST_SCENES = ["showcase", "spheres", "glass", "cornell_box", "path_glass", "instances"]
QUICK_SCENES = ["showcase", "cornell_box"]
FIRST_SIZE = (64, 64)
WARM_SCENE, WARM_SIZE, WARM_SPP = "spheres", (800, 800), 1
ANIMATION = "scenes/animation/orbit.json"
HELP_RUNS, WARM_RUNS = 5, 3


def raytrace_argv(python=sys.executable):
    """The argv prefix that runs the ``raytrace`` command: the console script installed
    beside ``python`` when there is one, else ``python -m raytrace``."""
    script = pathlib.Path(python).with_name("raytrace")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [str(python), "-m", "raytrace"]


def help_argv(rt):
    return [*rt, "--help"]


def render_argv(rt, scene, png, size, spp=None):
    """``raytrace render`` of ``scenes/<scene>.json`` into ``png`` at ``size`` (W, H)."""
    argv = [*rt, "render", f"scenes/{scene}.json", "-o", str(png), "--size", str(size[0]), str(size[1])]
    if spp is not None:
        argv += ["--spp", str(spp)]
    return argv


def animate_argv(rt, out_dir, workers=None):
    """The README's animation example (8 frames at 160 x 120) into ``out_dir``."""
    argv = [*rt, "animate", ANIMATION, "-o", str(out_dir), "--frames", "0:8", "--size", "160", "120"]
    if workers is not None:
        argv += ["--workers", str(workers)]
    return argv


def shown(argv, rt):
    """A command as the README writes it: ``raytrace ...``, temporary paths as ``OUT``."""
    words = ["raytrace"] + list(argv[len(rt):])
    tmp = tempfile.gettempdir()
    words = [re.sub(r"^" + re.escape(tmp) + r"/[^/]+", "OUT", w) for w in words]
    return shlex.join(words)


def integrator_of(scene):
    """'path' or 'whitted': the integrator ``scenes/<scene>.json`` asks for."""
    data = json.loads((REPO / "scenes" / f"{scene}.json").read_text())
    return data.get("integrator", {}).get("type", "whitted")


def compile_seconds(stderr):
    """Seconds the CLI said it spent compiling kernels (its "kernels compiled in X s"
    and "X s compiling kernels" lines; the largest), or None when it compiled nothing."""
    found = [float(x) for x in re.findall(r"kernels compiled in ([0-9.]+) s", stderr)]
    found += [float(x) for x in re.findall(r"([0-9.]+) s compiling kernels", stderr)]
    return max(found) if found else None


def kernel_note(compiled):
    """What a first render ran on: the shipped kernels, or kernels compiled for ``compiled`` s."""
    return "shipped kernels" if compiled is None else f"kernels compiled: {compiled:.0f} s of it"


def spread(times):
    """'median 1.23 s (1.20-1.31 s, 3 runs)' or '1.23 s' for one run."""
    if len(times) == 1:
        return f"{times[0]:.2f} s"
    return f"median {statistics.median(times):.2f} s ({min(times):.2f}-{max(times):.2f} s, {len(times)} runs)"


def run_timed(argv, env=None):
    """Run ``argv`` in the repository -> (wall seconds, stderr); a failure stops the run."""
    t0 = time.perf_counter()
    r = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{shlex.join(argv)} failed (status {r.returncode}):\n{r.stderr[-2000:]}")
    return dt, r.stderr


def command_line(args):
    """How the report names the run: this script and its options, less ``--out FILE``."""
    keep, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == "--out":
            skip = True
        elif not a.startswith("--out="):
            keep.append(a)
    return shlex.join(["python", "benchmarks/bench_readme.py", *keep])


def with_cache(cache_dir):
    return dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))


def machine_facts():
    import numba
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_name(),
        "isa": vector_isa(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numba": numba.__version__,
    }


def format_report(facts, rows, command, load, load_before, load_after, busy=False, seconds=None):
    """The Markdown report. ``rows``: (what, figure, command) tuples; ``load``: the
    OtherLoad description; ``load_before``/``after``: 1-minute load averages."""
    lines = [
        "## README figures",
        "",
        f"Command: `{command}`; {facts['date']}; {facts['cpu']} ({facts['isa']}), "
        f"{facts['cores']} cores; Python {facts['python']}, Numba {facts['numba']}.  ",
        f"Load: {load}; load average {load_before:.2f} before, {load_after:.2f} after "
        f"(this run included).  ",
        "Wall time of whole processes, as a user runs them (`OUT`: a temporary folder).",
    ]
    if busy:
        lines.append(f"**Not a quiet machine**: {load}; run again.  ")
    lines += ["", "| what | figure | command |", "|---|---|---|"]
    lines += [f"| {what} | {figure} | `{cmd}` |" for what, figure, cmd in rows]
    if seconds is not None:
        lines += ["", f"The whole run took {seconds:.0f} s."]
    return "\n".join(lines) + "\n"


def measure(quick=False, animate=True, log=print):
    """Run every measurement -> (rows, facts, load, load_before, load_after, busy, seconds)."""
    rt = raytrace_argv()
    rows = []
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    other = OtherLoad().start()
    with tempfile.TemporaryDirectory(prefix="bench_readme_") as tmp:
        tmp = pathlib.Path(tmp)

        times = [run_timed(help_argv(rt))[0] for _ in range(HELP_RUNS)]
        rows.append(("`raytrace --help`", spread(times), shown(help_argv(rt), rt)))
        log(f"--help: {spread(times)}")

        for scene in QUICK_SCENES if quick else FIRST_SCENES:
            cache = tempfile.mkdtemp(prefix="numba_", dir=tmp)
            argv = render_argv(rt, scene, tmp / f"{scene}.png", FIRST_SIZE, spp=1)
            dt, err = run_timed(argv, with_cache(cache))
            note = kernel_note(compile_seconds(err))
            what = (f"first render, empty Numba cache: `{scene}.json` ({integrator_of(scene)}), "
                    f"{FIRST_SIZE[0]} x {FIRST_SIZE[1]}, 1 spp")
            rows.append((what, f"{dt:.2f} s ({note})", shown(argv, rt)))
            log(f"first render {scene}: {dt:.2f} s ({note})")

        cache = tempfile.mkdtemp(prefix="numba_", dir=tmp)
        argv = render_argv(rt, WARM_SCENE, tmp / f"{WARM_SCENE}.png", WARM_SIZE, spp=WARM_SPP)
        dt, err = run_timed(argv, with_cache(cache))           # fills the cache
        note = kernel_note(compile_seconds(err))
        size = f"{WARM_SIZE[0]} x {WARM_SIZE[1]}, {WARM_SPP} spp"
        rows.append((f"first render, empty Numba cache: `{WARM_SCENE}.json` ({integrator_of(WARM_SCENE)}), {size}",
                     f"{dt:.2f} s ({note})", shown(argv, rt)))
        warm = [run_timed(argv, with_cache(cache)) for _ in range(WARM_RUNS)]
        times = [t for t, _ in warm]
        recompiled = sum(compile_seconds(err) is not None for _, err in warm)
        figure = spread(times) + (f" (kernels compiled again in {recompiled} of {WARM_RUNS} runs: "
                                  "sources edited during the run?)" if recompiled else "")
        rows.append((f"warm render (the same cache, run again): `{WARM_SCENE}.json`, {size}",
                     figure, shown(argv, rt)))
        log(f"{WARM_SCENE} {WARM_SIZE}: first {dt:.2f} s, warm {spread(times)}")

        if animate:
            for workers, label in ((None, "default (here; a local cluster only for long jobs)"), (1, "`--workers 1`")):
                out_dir = tmp / f"orbit_{workers or 'default'}"     # new and empty: no frame is skipped
                argv = animate_argv(rt, out_dir, workers)
                dt, _ = run_timed(argv, with_cache(cache))
                rows.append((f"`raytrace animate` orbit, 8 frames at 160 x 120, {label}, warm cache",
                             f"{dt:.2f} s", shown(argv, rt)))
                log(f"animate ({label}): {dt:.2f} s")
    other.stop()
    return (rows, machine_facts(), other.describe(), load_before, os.getloadavg()[0], other.busy,
            time.perf_counter() - started)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="first renders of showcase and the Cornell box only")
    ap.add_argument("--no-animate", action="store_true", help="leave out the raytrace animate timings")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="Markdown report (default: %(default)s)")
    args = ap.parse_args(argv)
    command = command_line(argv if argv is not None else sys.argv[1:])
    rows, facts, load, before, after, busy, seconds = measure(args.quick, not args.no_animate)
    text = format_report(facts, rows, command, load, before, after, busy, seconds)
    print()
    print(text)
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
