"""Compile a render's stale kernels in parallel processes, from a recorded plan.

Numba compiles a kernel's callees one after the other, inside the kernel's own typing,
on one core. The leaves of an integrator (scene queries, light sampling, BSDFs, normals,
the camera) do not depend on each other, so on a machine with several cores they can be
compiled at the same time in worker processes, each writing the on-disk cache; the row
kernel then compiles last and loads them. Compiling a function needs its argument types,
which are only known once a render has typed it: after every render that compiled or
loaded the integrator, :func:`record` writes a **plan** (for each root kernel, the units
it is made of: their signatures and which units each calls) beside the cache; the
package also ships the plan of its shipped scenes (``raytrace/prebuilt/plans.pkl``, made
by ``scripts/prebuild_kernels.py``; it holds types, not code, and serves any platform
with the same Numba).

:func:`schedule` takes the stale units of a root (``plan.stale``), joins those that call
one another into groups (one process compiles a group, callees first), and deals the
groups to workers by size (bytecode of everything the group is made of, a proxy for its
compile time), largest first. :func:`start` runs one ``python -c`` worker per non-empty
share; a worker that fails or finds a signature that no longer types costs nothing but
its time: whatever it did not cache, the render compiles itself. Nothing is parallel
without a plan, with one core, or with ``RAYTRACE_NO_WARMUP=1``.
"""
import os
import pathlib
import pickle
import subprocess
import sys

from . import keys, plan as plan_mod

PLAN_FILE = "plans.pkl"
NUMBA_FIELD = "numba version"      # plans hold Numba types: read only by the Numba that wrote them
SHIPPED = pathlib.Path(__file__).resolve().parents[1] / "prebuilt" / PLAN_FILE
MIN_BYTES = 6000         # stale bytecode worth starting workers for (a few seconds of compiling)
_WORKER = "import sys, raytrace.jit.parallel as p; p.work(sys.argv[1])"


def variant_name(root, instanced):
    """The plan's name for ``root`` compiled for a scene with or without instances."""
    return f"{root.py_func.__module__}.{root.py_func.__qualname__}" + ("[instanced]" if instanced else "")


def variant(root, signature):
    """:func:`variant_name` of ``root`` compiled for ``signature`` (instances: a
    ``SceneAccel`` argument)."""
    return variant_name(root, any("SceneAccel" in str(t) for t in signature))


def _unit_name(d):
    return f"{d.py_func.__module__}:{d.py_func.__qualname__}"


def _size(d):
    """Bytecode bytes of ``d`` and of the Numba-inlined helpers it is made of."""
    total, seen, todo = 0, set(), [d]
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        total += len(f.py_func.__code__.co_code)
        todo += [c for c in keys.callees(f.py_func) if c.targetoptions.get("inline") == "always"]
    return total


def describe(root):
    """{variant: [(unit name, [signatures], [names of units it calls], size)]} for every
    signature ``root`` has in this process (callees first)."""
    out = {}
    units = [d for d in plan_mod.closure([root]) if plan_mod.compiled_alone(d) and d is not root]
    names = {id(d): _unit_name(d) for d in units}
    entries = [(names[id(d)], list(d.signatures),
                [names[id(c)] for c in plan_mod.closure(keys.callees(d.py_func)) if id(c) in names and c is not d],
                _size(d)) for d in units]
    for sig in root.signatures:
        out[variant(root, sig)] = entries
    return out


def plan_path():
    """This machine's plans, in the package's cache folder (None without one)."""
    import numba

    from . import cache
    folder = cache.store()       # one file per Numba (plans hold its types): environments share the folder
    return None if folder is None else folder / f"plans-{numba.__version__}.pkl"


def _read(path):
    """The plans in ``path`` ({variant: entries}); none from another Numba (its types)."""
    import numba
    try:
        with open(path, "rb") as f:
            data = pickle.load(f)
    except Exception:       # noqa: BLE001 - a missing or unreadable plan is no plan
        return {}
    if not isinstance(data, dict) or data.get(NUMBA_FIELD) != numba.__version__:
        return {}
    return {k: v for k, v in data.items() if k != NUMBA_FIELD}


def record(root):
    """Keep ``root``'s plan beside the cache (after a render typed it)."""
    path = plan_path()
    if path is None or not root.signatures:
        return
    import numba
    data = _read(path)
    data[NUMBA_FIELD] = numba.__version__
    for name, entries in describe(root).items():
        # a kernel loaded from the cache has no signatures of its callees here (their code
        # came linked into it): keep what the process that compiled them recorded
        before = {e[0]: e[1] for e in data.get(name, [])}
        entries = [(n, sigs or before.get(n, []), calls, size) for n, sigs, calls, size in entries]
        if any(sigs for _, sigs, _, _ in entries):
            data[name] = entries
    from . import folders
    try:     # written whole; two processes recording at once: the last one's plan stays
        folders.write_whole(path, pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
    except OSError:
        pass


def load(name):
    """The plan entries of variant ``name``: this machine's, else the shipped one's."""
    for path in (plan_path(), SHIPPED):
        if path is not None and path.exists():
            entries = _read(path).get(name)
            if entries:
                return entries
    return None


def schedule(entries, stale_names, workers):
    """Deal the stale units of ``entries`` to ``workers`` lists (unit names, callees
    first): units that call one another stay in one list."""
    stale = {e[0]: e for e in entries if e[0] in stale_names}
    parent = {name: name for name in stale}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    for name, (_, _, calls, _) in stale.items():
        for callee in calls:
            if callee in stale:
                parent[find(callee)] = find(name)
    groups = {}
    order = [e[0] for e in entries if e[0] in stale]           # callees first, as recorded
    for name in order:
        groups.setdefault(find(name), []).append(name)
    shares = [[0, []] for _ in range(workers)]
    for group in sorted(groups.values(), key=lambda g: -sum(stale[n][3] for n in g)):
        share = min(shares, key=lambda s: s[0])
        share[0] += sum(stale[n][3] for n in group)
        share[1] += group
    return [names for _, names in shares if names]


def start(roots_and_variants, timeout_per_unit=None):
    """Start workers for the stale units of each (root dispatcher, variant name) that has
    a plan; returns the processes (possibly none)."""
    if os.environ.get("RAYTRACE_NO_WARMUP") or (os.cpu_count() or 1) < 2:
        return []
    todo, sizes = [], 0
    for root, name in roots_and_variants:
        entries = load(name)
        if not entries:
            continue
        stale_names = {_unit_name(d) for d in plan_mod.stale([root]) if d is not root}
        todo.append((entries, stale_names))
        sizes += sum(e[3] for e in entries if e[0] in stale_names)
    if not todo or sizes < MIN_BYTES:
        return []
    procs = []
    workers = min(os.cpu_count() or 2, 4)
    for entries, stale_names in todo:
        for share in schedule(entries, stale_names, workers):
            job = pickle.dumps([(n, next(e[1] for e in entries if e[0] == n)) for n in share])
            try:
                procs.append(subprocess.Popen([sys.executable, "-c", _WORKER, job.hex()],
                                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                              stderr=subprocess.DEVNULL))
            except OSError:
                break
    return procs



def work(job_hex):
    """Worker side: compile each unit of the job for its recorded signatures."""
    import importlib
    for name, signatures in pickle.loads(bytes.fromhex(job_hex)):
        module, qualname = name.split(":", 1)
        try:
            d = importlib.import_module(module)
            for part in qualname.split("."):
                d = getattr(d, part)
            for sig in signatures:
                d.compile(sig)
        except Exception:      # noqa: BLE001 - the render compiles what a worker could not
            continue
