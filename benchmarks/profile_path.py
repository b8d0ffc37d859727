"""Where the path tracer's time goes: a sampling profile of one render, by compiled function.

    python benchmarks/profile_path.py [--scene cornell|glass] [--spp 32] [--threads 1] [--compile]

Needs Linux ``perf`` (``apt-get install linux-perf``); it samples the software clock
(``cpu-clock``), so it works in virtual machines without hardware counters. The script
renders the scene of ``benchmarks/bench_scenes.py`` once to compile or load the kernels,
then runs ``perf record -p`` on itself for a second render and attributes every sample:

- samples in Numba's compiled code go to the compiled function whose entry point is the
  nearest one below the sample's address (entry points from each dispatcher's
  ``library.get_pointer_to_function``); a function inlined into its caller
  (``inline="always"``, or by LLVM) counts as its caller, so ``path_rows`` holds the
  whole integrator loop (shading, light sampling, the sampler, shadow rays);
- samples elsewhere go to their shared library (``libm``, ``libpython``, the kernel).

Kernels loaded ready-made (the shipped bundle, or Numba's cache) come as one object per
kernel, with only the kernel's own entry point known, so everything counts as
``path_rows``. ``--compile`` compiles them in this process instead (an empty temporary
Numba cache, ``RAYTRACE_PREBUILT=0``; about a minute): then every function Numba
compiles on its own (the BVH traversal ``_closest_hit``, ``bsdf_sample``, ...) has its
own entry point and its own row.

``--annotate FUNCTION`` (a name from the table, e.g. ``kernels.path.path_rows``) also
shows that function's machine code with its samples, instruction by instruction: the
code is read back from the process's memory, from the entry point to the last sampled
address, and disassembled with ``objdump`` (binutils). The hottest instructions are
printed, each after the ones leading up to it; the whole listing goes to
benchmarks/output/profile_<function>.txt. Read it with the sampling's skid in mind: a
sample names the instruction *after* the one that was waiting, so the cost of a slow
load, division or square root shows on the instruction that follows it. Numba emits no
line table; recognise the source by its constants and operations.

Prints a table; nothing else is written (but the ``--annotate`` listing). A profile,
not a benchmark: the shares are what to read, not the seconds.
"""
import argparse
import bisect
import collections
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))


def compiled_functions():
    """-> sorted [(entry address, 'module.function')] of every compiled overload of the
    Numba dispatchers in the loaded ``raytrace`` modules."""
    from numba.core.dispatcher import Dispatcher

    entries = {}
    for modname, mod in list(sys.modules.items()):
        if not modname.startswith("raytrace"):
            continue
        for attr, obj in list(vars(mod).items()):
            if not isinstance(obj, Dispatcher) or obj.__module__ != modname:
                continue
            for cres in obj.overloads.values():
                try:
                    address = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
                except Exception:       # an overload without machine code of its own
                    continue
                if address:
                    entries[address] = f"{modname.removeprefix('raytrace.')}.{attr}"
    return sorted(entries.items())


def record(render, out):
    """Run ``render()`` (-> seconds) under ``perf record -p <this pid>``, samples to
    ``out``; -> its seconds."""
    perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000", "-p",
                             str(os.getpid()), "-o", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(1.0)                       # perf attaches
    seconds = render()
    perf.send_signal(signal.SIGINT)
    _, err = perf.communicate(timeout=120)
    if perf.returncode not in (0, -signal.SIGINT):
        raise SystemExit(f"perf record failed ({perf.returncode}): {err.decode()[-500:]}")
    return seconds


def attribute(data, functions, addresses=None):
    """Counter of sample owner -> samples, from ``perf script`` of ``data``;
    ``addresses`` (a dict), when given, gets owner -> Counter of sampled addresses."""
    text = subprocess.run(["perf", "script", "-i", str(data), "-F", "ip,dso"], capture_output=True,
                          text=True, check=True).stdout
    starts = [a for a, _ in functions]
    names = [n for _, n in functions]
    owners = collections.Counter()
    for line in text.splitlines():
        parts = line.split(None, 1)
        if len(parts) != 2:
            continue
        ip, dso = int(parts[0], 16), parts[1].strip().strip("()")
        if dso.endswith(".so") or ".so." in dso or "kallsyms" in dso or "vdso" in dso:
            owners[f"[{os.path.basename(dso)}]"] += 1
            continue
        i = bisect.bisect_right(starts, ip) - 1
        owner = names[i] if i >= 0 and ip - starts[i] < (1 << 20) else "[other compiled code]"
        owners[owner] += 1
        if addresses is not None:
            addresses.setdefault(owner, collections.Counter())[ip] += 1
    return owners


def annotate(name, functions, addresses, total, top=12, before=10):
    """-> (printed summary, full listing) of function ``name``'s machine code with its
    samples per instruction (see the module docstring)."""
    import ctypes

    entry = dict((n, a) for a, n in functions).get(name)
    hits = addresses.get(name)
    if entry is None or not hits:
        return f"--annotate: no samples in {name!r}", ""
    if shutil.which("objdump") is None:
        return "--annotate needs objdump (apt-get install binutils)", ""
    code = ctypes.string_at(entry, max(hits) - entry + 16)   # the function's own pages
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(code)
        f.flush()
        text = subprocess.run(["objdump", "-D", "-b", "binary", "-mi386:x86-64",
                               f"--adjust-vma={entry:#x}", f.name], capture_output=True,
                              text=True, check=True).stdout
    rows = []                                               # (samples, offset, instruction)
    for line in text.splitlines():
        head, _, rest = line.partition(":")
        try:
            address = int(head.strip(), 16)
        except ValueError:
            continue
        fields = rest.split("\t")           # '', bytes, instruction (continued bytes: no third)
        if len(fields) >= 3:
            rows.append((hits.get(address, 0), address - entry, fields[-1].strip()))
    own = sum(hits.values())
    listing = "\n".join(f"{n:7d} {off:7x}  {ins}" for n, off, ins in rows)
    out = [f"{name}: {own} samples ({100 * own / total:.1f} % of all), {len(code)} bytes read; "
           f"its {top} hottest places, each the instructions up to a hot one "
           "(share of all samples, offset from the entry point, instruction):"]
    shown = set()
    for k in sorted(range(len(rows)), key=lambda k: -rows[k][0]):
        if len(out) > 1 + top * (before + 2) or rows[k][0] == 0:
            break
        if k in shown:                        # already in the window of a hotter one
            continue
        window = range(max(0, k - before), min(len(rows), k + 3))
        shown.update(window)
        out.append("")
        for n, off, ins in (rows[i] for i in window):
            mark = f"{100 * n / total:5.1f} %" if n else "       "
            out.append(f"  {mark} {off:6x}  {ins}")
    return "\n".join(out), listing


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scene", choices=("cornell", "glass", "smoke"), default="cornell")
    ap.add_argument("--spp", type=int, default=32)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--compile", action="store_true",
                    help="compile the kernels in this process (one row per compiled function)")
    ap.add_argument("--annotate", metavar="FUNCTION",
                    help="also show this function's instructions with their samples")
    args = ap.parse_args(argv)
    if shutil.which("perf") is None:
        raise SystemExit("profile_path.py needs Linux perf (apt-get install linux-perf)")
    if args.compile:                      # before Numba reads its configuration
        os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="profile_path_cache_")
        os.environ["RAYTRACE_PREBUILT"] = "0"
    import numba

    import bench_scenes
    import raytrace

    numba.set_num_threads(args.threads)
    d, base = bench_scenes.our_scene(args.scene, args.size)
    scene = raytrace.load_scene(d, base_dir=base)
    raytrace.render(scene, spp=1, seed=9)               # compile or load the kernels
    functions = compiled_functions()

    def render():
        t0 = time.perf_counter()
        raytrace.render(scene, spp=args.spp, seed=1)
        return time.perf_counter() - t0

    with tempfile.TemporaryDirectory() as tmp:
        data = pathlib.Path(tmp) / "perf.data"
        seconds = record(render, data)
        addresses = {}
        owners = attribute(data, functions, addresses)
    total = sum(owners.values())
    paths = args.size * args.size * args.spp
    if args.compile:
        shutil.rmtree(os.environ["NUMBA_CACHE_DIR"], ignore_errors=True)
    print(f"{args.scene}, {args.size}x{args.size}, {args.spp} spp, {args.threads} thread(s): "
          f"{seconds:.2f} s, {paths / seconds / 1e6:.2f} M paths/s; {total} samples "
          f"(the render and the 1 s before it)")
    print("| share | where |\n|---|---|")
    for name, n in owners.most_common(20):
        print(f"| {100 * n / total:5.1f} % | {name} |")
    if args.annotate:
        summary, listing = annotate(args.annotate, functions, addresses, total)
        print()
        print(summary)
        if listing:
            out = REPO / "benchmarks" / "output" / f"profile_{args.annotate}.txt"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(listing + "\n")
            print(f"\nwhole listing: {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
