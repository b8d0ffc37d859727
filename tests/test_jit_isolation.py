"""raytrace is a library: importing it and rendering change nothing of Numba's for the
host program (``raytrace/jit/``). A user's own ``@njit(cache=True)`` function, in a
module of theirs imported after raytrace rendered, compiles for the host processor and
caches where Numba puts it without raytrace; Numba's config and classes are untouched.

The negative control runs the same check in a process that does to Numba what raytrace
0.3.0 did (``numba.config.CACHE_DIR`` and ``CPU_NAME`` set, ``FunctionCache`` replaced)
and shows the check failing."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

REPO = pathlib.Path(__file__).resolve().parents[1]

USER_MODULE = textwrap.dedent("""
    from numba import njit

    @njit(cache=True)
    def user_kernel(x):
        return 2.0 * x + 1.0
""")

CHECK = textwrap.dedent("""
    import json, sys
    import numba
    from numba.core import config, dispatcher
    from numba.core.registry import cpu_target
    before = {"CACHE_DIR": config.CACHE_DIR, "CPU_NAME": config.CPU_NAME,
              "CPU_FEATURES": config.CPU_FEATURES, "FunctionCache": repr(dispatcher.FunctionCache)}
    if sys.argv[1] == "raytrace":
        import raytrace
        scene = raytrace.load_scene({
            "camera": {"center": [0, 1, 0], "direction": [0, -1, 0], "up": [0, 0, -1]},
            "lights": [{"type": "directional", "direction": [0, -1, 0]}],
            "objects": [{"type": "plane", "normal": [0, 1, 0]}]})
        raytrace.render(scene, width=2, height=2, spp=1)
    elif sys.argv[1] == "meddle":             # what raytrace 0.3.0 did to the process
        config.CACHE_DIR = sys.argv[2]
        config.CPU_NAME, config.CPU_FEATURES = "x86-64-v3", ""
        dispatcher.FunctionCache = type("Replaced", (dispatcher.FunctionCache,), {})
    import usermod
    value = usermod.user_kernel(1.0)
    cres = usermod.user_kernel.overloads[next(iter(usermod.user_kernel.overloads))]
    after = {"CACHE_DIR": config.CACHE_DIR, "CPU_NAME": config.CPU_NAME,
             "CPU_FEATURES": config.CPU_FEATURES, "FunctionCache": repr(dispatcher.FunctionCache)}
    print(json.dumps({"before": before, "after": after, "value": value,
                      "cache_class": type(usermod.user_kernel._cache).__name__,
                      "cache_path": usermod.user_kernel._cache.cache_path,
                      "magic": list(cres.library.codegen.magic_tuple()),
                      "host_magic": list(cpu_target.target_context.codegen().magic_tuple())}))
""")


def check(tmp_path, mode):
    work = tmp_path / mode
    work.mkdir()
    (work / "usermod.py").write_text(USER_MODULE)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAYTRACE_", "NUMBA_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(work), str(REPO)])
    r = subprocess.run([sys.executable, "-c", CHECK, mode, str(tmp_path / "elsewhere")], env=env, cwd=work,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    out["pycache"] = sorted(p.name for p in (work / "__pycache__").glob("usermod.user_kernel*"))
    path = pathlib.Path(out["cache_path"])      # relative to the user's folder, where it is inside
    out["cache_path"] = str(path.relative_to(work)) if path.is_relative_to(work) else str(path)
    return out


def differences(out, plain):
    """What differs from a process without raytrace (an empty list: nothing)."""
    found = [f"config {k}: {out['before'][k]!r} -> {out['after'][k]!r}"
             for k in out["before"] if out["before"][k] != out["after"][k]]
    for field in ("cache_class", "cache_path", "value"):
        if out[field] != plain[field]:
            found.append(f"{field}: {out[field]!r}, without raytrace {plain[field]!r}")
    if out["magic"] != out["host_magic"] or out["magic"] != plain["magic"]:
        found.append(f"compiled for {out['magic']}, without raytrace {plain['magic']}")
    if not out["pycache"] or out["pycache"][0].split(".")[:2] != plain["pycache"][0].split(".")[:2]:
        found.append(f"cache files {out['pycache']}, without raytrace {plain['pycache']}")
    return found


def test_a_users_own_njit_function_is_untouched_by_raytrace(tmp_path):
    plain = check(tmp_path, "plain")
    assert plain["cache_class"] == "FunctionCache" and plain["pycache"]
    with_raytrace = check(tmp_path, "raytrace")
    assert differences(with_raytrace, plain) == []
    # negative control: the check sees what 0.3.0 did to the host process
    meddled = check(tmp_path, "meddle")
    found = differences(meddled, plain)
    assert any("CACHE_DIR" in f for f in found) and any("CPU_NAME" in f for f in found)
    assert any("cache_class" in f for f in found) and any("cache_path" in f for f in found)


def test_raytrace_kernels_have_their_own_cache_and_pipeline():
    """Every dispatcher the package declares goes through a role (``raytrace.jit.roles``):
    a KernelCache of its own and, on a checked Numba, the fast-inlining pipeline."""
    import importlib

    from numba.core.dispatcher import Dispatcher

    from raytrace.jit import cache, inline
    modules = ["raytrace.kernels.path", "raytrace.kernels.whitted", "raytrace.kernels.media",
               "raytrace.kernels.sampler",
               "raytrace.kernels.aov", "raytrace.accel.build", "raytrace.accel.stats", "raytrace.film.atrous",
               "raytrace.textures", "raytrace.cubemap", "raytrace.envmap"]
    dispatchers = []
    for name in modules:
        module = importlib.import_module(name)
        dispatchers += [v for v in vars(module).values()
                        if isinstance(v, Dispatcher) and v.py_func.__module__ == name]
    assert len(dispatchers) > 40
    used, reason = inline.status()
    for d in dispatchers:
        assert cache.dispatcher_cache(d) is not None, d
        if used:
            assert d._compiler.pipeline_class is inline.pipeline_class(), d
