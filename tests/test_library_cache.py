"""curves, skinning and particles cache their kernels with Numba's own cache, unchanged:
correct because each kernel module is self-contained (no jitted function of another file
is called, so Numba's per-file check sees every edit that reaches a kernel). An
unchanged library loads its kernels from the cache; an edit is compiled, never served
stale; and the libraries leave Numba's configuration as they found it."""
import ast
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
LIBRARIES = ("curves", "skinning", "particles")

PROBE = {
    "skinning": "import numpy as np, skinning; "
                "print(skinning.skin(np.ones((2, 3)), np.zeros((2, 1), np.int64), np.ones((2, 1)), "
                "(2 * np.eye(4))[None].copy(), parallel=False).sum())",
    "particles": "import particles; print(particles.simulate(particles.chain(3), 'rk4', 0.01, 3)[-1].sum())",
}

SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
import numba
from numba.core.dispatcher import Dispatcher
before = (numba.config.CACHE_DIR, numba.config.CPU_NAME)
{probe}
import importlib
pkg = importlib.import_module({name!r})
assert pkg.__file__.startswith(sys.argv[1]), pkg.__file__
hits = misses = 0
for modname, mod in list(sys.modules.items()):
    if modname.startswith({name!r} + "."):
        for obj in vars(mod).values():
            if isinstance(obj, Dispatcher) and obj.signatures:
                hits += sum(obj.stats.cache_hits.values())
                misses += sum(obj.stats.cache_misses.values())
print(json.dumps([hits, misses, before == (numba.config.CACHE_DIR, numba.config.CPU_NAME)]))
"""


def _run(name, source, base):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["NUMBA_CACHE_DIR"] = str(base)
    r = subprocess.run([sys.executable, "-c", SCRIPT.format(probe=PROBE[name], name=name), str(source)],
                       capture_output=True, text=True, env=env, cwd=source, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.strip().splitlines()
    return float(lines[-2]), *json.loads(lines[-1])


@pytest.mark.parametrize("name", ["skinning", "particles"])
def test_an_unchanged_library_loads_its_kernels_and_an_edit_compiles(name, tmp_path):
    source = tmp_path / "src"
    shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "userio", source / "userio", ignore=shutil.ignore_patterns("__pycache__"))
    value, hits, misses, untouched = _run(name, source, tmp_path / "cache")
    assert misses > 0 and hits == 0 and untouched
    again, hits, misses, _ = _run(name, source, tmp_path / "cache")
    assert hits > 0 and misses == 0 and again == value
    # an edit of the kernel file: compiled, and its result shows (never the cached code)
    kernels = source / name / "kernels.py"
    text = kernels.read_text()
    kernels.write_text(text + "\n\ndef _unused_edit():\n    return 1\n")
    _, hits, misses, _ = _run(name, source, tmp_path / "cache")
    assert misses > 0


def cross_file_imports(path, name):
    """The imports of ``path`` that bring in code of package ``name`` or of raytrace."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.level or node.module.split(".")[0] in (name, "raytrace")):
            found.append("." * node.level + (node.module or ""))
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in (name, "raytrace")]
    return found


@pytest.mark.parametrize("name", LIBRARIES)
def test_library_kernel_modules_call_no_jitted_code_of_another_file(name):
    """What makes Numba's per-file cache correct for the libraries: a kernel module imports
    nothing of its own package (and never raytrace)."""
    modules = [p for p in (REPO / name).rglob("*.py") if "from numba import" in p.read_text()]
    assert modules
    for path in modules:
        assert cross_file_imports(path, name) == [], path


def test_the_import_check_sees_a_cross_file_import(tmp_path):
    """Negative control: a kernel module importing a sibling, or raytrace, is caught."""
    bad = tmp_path / "k.py"
    bad.write_text("from numba import njit\nfrom .other import leaf\nimport raytrace.jit\n")
    assert cross_file_imports(bad, "curves") == [".other", "raytrace.jit"]
