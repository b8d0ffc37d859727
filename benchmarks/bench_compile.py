"""Cold compile of the first render: how long, and where the time goes.

    python benchmarks/bench_compile.py [--repeat 2] [--size 64] [--scene scenes/cornell_box.json]
                                       [--only cli|parts] [--env NAME=VALUE ...]

Every measurement runs in a fresh process with an empty temporary Numba cache
(``NUMBA_CACHE_DIR``) and ``RAYTRACE_PREBUILT=0`` (no shipped kernels), so everything it
needs is compiled:

- **cli**: ``python -m raytrace render <scene> -o out.png --spp 1 --size 64 64 -q`` with the
  scene's integrator (path) and with ``--integrator whitted``: the user-facing first render,
  end to end (wall seconds, and CPU seconds of the process and every child it waited for,
  which includes the warm-up processes of ``raytrace.jit.warmup`` and
  ``raytrace.jit.parallel``);
- **parts**: the same first render through the Python API in one process with
  ``RAYTRACE_NO_WARMUP=1`` (every compile in this process, one after the other), split
  into ``import raytrace``, ``load_scene`` (the BVH builder's compile), the first
  ``render`` (the integrator and the kernels it calls) and a second ``render`` (the render
  itself, everything cached in memory). Each compile is attributed to its dispatcher with
  Numba's ``numba:compile`` events: *self* seconds exclude the dispatchers it compiled
  inside its own event (its callees), *total* seconds include them; the top ten by self
  seconds are listed, with how many signatures each one compiled. ``LLVM`` is the time
  spent holding Numba's LLVM lock (``numba:llvm_lock``: optimisation and machine code).

``--env NAME=VALUE`` (repeatable) is added to every child's environment (e.g.
``--env NUMBA_OPT=2`` to compare optimisation levels). The CPU model and the load
average are printed first. Writes benchmarks/output/results/compile.md (ignored by git).
"""
import argparse
import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import tempfile
import time

from reports import cpu_name, write_report

REPO = pathlib.Path(__file__).resolve().parents[1]

PARTS = r"""
import json, sys, time
t0 = time.perf_counter()
from numba.core import event
events = []          # (name, args, total, self, depth) per dispatcher compile
stack = []           # open frames: [kind, name, args, start, nested seconds, nested compile seconds]
own = {}             # (kind, name) -> self seconds (kind: pass or llvm)
llvm = [0, 0.0, None]

def _push(kind, name, args=""):
    stack.append([kind, name, args, time.perf_counter(), 0.0, 0.0])

def _pop():
    kind, name, args, start, child, child_compile = stack.pop()
    total = time.perf_counter() - start
    if stack:
        stack[-1][4] += total
    if kind == "compile":
        for frame in reversed(stack):
            if frame[0] == "compile":
                frame[5] += total
                break
        return kind, name, args, total, total - child_compile
    return kind, name, args, total, total - child

def _timed(cls, attr, label):
    # time a codegen method as a frame of its own (measurement only)
    original = getattr(cls, attr)
    def wrapper(*a, **k):
        _push("codegen", label)
        try:
            return original(*a, **k)
        finally:
            kind, name, args, total, mine = _pop()
            own[(kind, name)] = own.get((kind, name), 0.0) + mine
    setattr(cls, attr, wrapper)

from numba.core import codegen as _cg
for _attr, _label in (("_optimize_functions", "LLVM function passes"),
                      ("_optimize_final_module", "LLVM module passes"),
                      ("_finalize_specific", "machine code (MCJIT)"),
                      ("serialize_using_object_code", "object code for the cache")):
    if hasattr(_cg.CPUCodeLibrary, _attr):
        _timed(_cg.CPUCodeLibrary, _attr, _label)

class Compile(event.Listener):
    def on_start(self, ev):
        d = ev.data["dispatcher"]
        f = getattr(d, "py_func", None)
        name = getattr(f, "__qualname__", None) or str(d)
        _push("compile", f"{getattr(f, '__module__', '')}.{name}", str(ev.data["args"]))
    def on_end(self, ev):
        kind, name, args, total, mine = _pop()
        depth = sum(1 for fr in stack if fr[0] == "compile")
        events.append((name, args, total, mine, depth))

class Pass(event.Listener):
    def on_start(self, ev):
        _push("pass", ev.data["name"].split(" [")[0])
    def on_end(self, ev):
        kind, name, args, total, mine = _pop()
        own[(kind, name)] = own.get((kind, name), 0.0) + mine

class Llvm(event.Listener):
    def on_start(self, ev):
        llvm[0] += 1
        if llvm[0] == 1:
            llvm[2] = time.perf_counter()
            where = next((fr[1] for fr in reversed(stack) if fr[0] in ("codegen", "pass")), "other")
            _push("llvm", f"LLVM in {where}")
    def on_end(self, ev):
        llvm[0] -= 1
        if llvm[0] == 0:
            llvm[1] += time.perf_counter() - llvm[2]
            kind, name, args, total, mine = _pop()
            own[(kind, name)] = own.get((kind, name), 0.0) + mine

event.register("numba:compile", Compile())
event.register("numba:run_pass", Pass())
event.register("numba:llvm_lock", Llvm())
phase_marks = []
def mark(name):
    phase_marks.append((name, time.perf_counter(), len(events), llvm[1]))
mark("start")
import raytrace
mark("import raytrace")
scene = raytrace.load_scene(sys.argv[1])
mark("load_scene (BVH builder)")
kw = dict(width=int(sys.argv[2]), height=int(sys.argv[2]), spp=1)
if sys.argv[3] != "-":
    kw["integrator"] = sys.argv[3]
try:
    raytrace.render(scene, **kw)
except TypeError:                     # no integrator keyword: set it on the scene
    scene.settings["integrator"] = sys.argv[3]
    raytrace.render(scene, width=kw["width"], height=kw["height"], spp=1)
mark("first render (integrator + kernels)")
raytrace.render(scene, **kw)
mark("second render (no compiling)")
phases = []
for (a, ta, ea, la), (b, tb, eb, lb) in zip(phase_marks, phase_marks[1:]):
    top = [e for e in events[ea:eb] if e[4] == 0]
    phases.append((b, tb - ta, sum(e[2] for e in top), lb - la))
print("@@" + json.dumps({"phases": phases, "events": events, "llvm": llvm[1],
                         "passes": sorted(((k[1], v) for k, v in own.items()), key=lambda kv: -kv[1])}))
"""


def cpu_seconds_children():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_child(argv, env_extra, cache=None):
    """Run ``argv`` with an empty cache; (wall s, CPU s incl. its children, stdout, stderr)."""
    tmp = tempfile.mkdtemp(prefix="bench-compile-")
    env = dict(os.environ, NUMBA_CACHE_DIR=cache or tmp, RAYTRACE_PREBUILT="0",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.update(env_extra)
    c0 = cpu_seconds_children()
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=REPO)
    wall = time.perf_counter() - t0
    cpu = cpu_seconds_children() - c0
    shutil.rmtree(tmp, ignore_errors=True)
    if proc.returncode:
        sys.exit(f"failed ({proc.returncode}): {' '.join(argv)}\n{proc.stderr[-3000:]}")
    return wall, cpu, proc.stdout, proc.stderr


def cli_runs(scene, size, repeat, env_extra, integrators=("path", "whitted")):
    rows = []
    out = pathlib.Path(tempfile.gettempdir()) / "bench_compile.png"
    for integrator in integrators:
        argv = [sys.executable, "-m", "raytrace", "render", scene, "-o", str(out), "--spp", "1",
                "--size", str(size), str(size), "-q"]
        if integrator == "whitted":
            argv += ["--integrator", "whitted"]
        for k in range(repeat):
            wall, cpu, _, _ = run_child(argv, env_extra)
            rows.append((integrator, k + 1, wall, cpu))
            print(f"  cli {integrator:8s} run {k + 1}: {wall:6.1f} s wall  {cpu:6.1f} s CPU", flush=True)
    return rows


def parts_run(scene, size, integrator, env_extra):
    env = dict(env_extra, RAYTRACE_NO_WARMUP="1")
    wall, cpu, stdout, _ = run_child([sys.executable, "-c", PARTS, scene, str(size), integrator], env)
    data = json.loads(stdout.split("@@", 1)[1])
    return wall, cpu, data


def describe_parts(label, wall, cpu, data, top=10):
    lines = [f"### parts: {label} ({wall:.1f} s wall, {cpu:.1f} s CPU for the whole process, "
             f"{data['llvm']:.1f} s in LLVM)", "",
             "| phase | seconds | compiling | LLVM |", "|---|---:|---:|---:|"]
    for name, secs, comp, llvm in data["phases"]:
        lines.append(f"| {name} | {secs:.2f} | {comp:.2f} | {llvm:.2f} |")
    per = {}
    for name, args, total, own, depth in data["events"]:
        p = per.setdefault(name, [0.0, 0.0, 0, set()])
        p[0] += own
        p[1] += total
        p[2] += 1
        p[3].add(args)
    lines += ["", f"{len(data['events'])} compiles of {len(per)} dispatchers; top {top} by self seconds:", "",
              "| dispatcher | self s | total s | compiles |", "|---|---:|---:|---:|"]
    for name, (own, total, n, sigs) in sorted(per.items(), key=lambda kv: -kv[1][0])[:top]:
        lines.append(f"| {name} | {own:.2f} | {total:.2f} | {n} |")
    twice = {k: v for k, v in per.items() if v[2] > 1}
    if twice:
        lines += ["", "compiled for more than one signature: " +
                  ", ".join(f"{k.rsplit('.', 1)[-1]} x{v[2]} ({v[0]:.2f} s)"
                            for k, v in sorted(twice.items(), key=lambda kv: -kv[1][0]))]
    lines += ["", "self seconds per compiler pass ('LLVM in X': holding Numba's LLVM lock inside X), top 10: " +
              ", ".join(f"{name} {secs:.1f}" for name, secs in data.get("passes", [])[:30])]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scene", default="scenes/cornell_box.json")
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--only", choices=("cli", "parts"))
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--integrator", choices=("path", "whitted"),
                        help="measure this integrator only (default: both)")
    parser.add_argument("--json", help="also dump the raw numbers to this file")
    args = parser.parse_args()
    env_extra = dict(item.split("=", 1) for item in args.env)

    head = [f"# Cold compile (empty cache, RAYTRACE_PREBUILT=0)", "",
            f"- CPU: {cpu_name()}, {os.cpu_count()} logical cores",
            f"- load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
            f"- scene: {args.scene}, {args.size}x{args.size}, 1 spp"
            + (f"; env: {' '.join(args.env)}" if args.env else ""), ""]
    print("\n".join(head), flush=True)
    raw = {"env": env_extra}
    text = list(head)
    if args.only in (None, "cli"):
        rows = cli_runs(args.scene, args.size, args.repeat, env_extra,
                        (args.integrator,) if args.integrator else ("path", "whitted"))
        raw["cli"] = rows
        text += ["## raytrace render (CLI, warm-up child included)", "",
                 "| integrator | run | wall s | CPU s |", "|---|---:|---:|---:|"]
        text += [f"| {i} | {k} | {w:.1f} | {c:.1f} |" for i, k, w, c in rows]
        text.append("")
    if args.only in (None, "parts"):
        raw["parts"] = {}
        chosen = {"path": ("-",), "whitted": ("whitted",), None: ("-", "whitted")}[args.integrator]
        for integrator in chosen:
            wall, cpu, data = parts_run(args.scene, args.size, integrator, env_extra)
            label = "scene's integrator (path)" if integrator == "-" else integrator
            raw["parts"][integrator] = (wall, cpu, data)
            block = describe_parts(label, wall, cpu, data)
            print(block + "\n", flush=True)
            text += [block, ""]
    text.append(f"- load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(text[-1])
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(raw, default=list))
    write_report("compile", "\n".join(text), False)


if __name__ == "__main__":
    main()
