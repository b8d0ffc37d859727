"""curves, skinning and particles keep their compiled kernels in folders named after their
source (userio.numba_cache): an edit of any file of a library starts a fresh folder, so a
cached kernel is never one compiled from other code; an unchanged library loads its kernels
from the cache. Each check runs a frozen copy of the library in fresh processes."""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

from userio import numba_cache

REPO = pathlib.Path(__file__).resolve().parents[1]

# imports the library (from the copy first on sys.path), runs one kernel, and reports
# where its kernels' cache lives and the dispatchers' cache hits and misses
PROBE = {
    "skinning": "import numpy as np, skinning; "
                "skinning.skin(np.zeros((2, 3)), np.zeros((2, 1), np.int64), np.ones((2, 1)), "
                "np.eye(4)[None].copy(), parallel=False)",
    "particles": "import particles; particles.simulate(particles.chain(3), 'rk4', 0.01, 3)",
}

SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
import numba
from numba.core.dispatcher import Dispatcher
{probe}
import importlib
pkg = importlib.import_module({name!r})
assert pkg.__file__.startswith(sys.argv[1]), pkg.__file__
hits = misses = 0
folders = set()
for modname, mod in list(sys.modules.items()):
    if not modname.startswith({name!r} + "."):
        continue
    for obj in vars(mod).values():
        if isinstance(obj, Dispatcher) and obj.signatures:
            hits += sum(obj.stats.cache_hits.values())
            misses += sum(obj.stats.cache_misses.values())
            folders.add(str(obj._cache._cache_path))
print(json.dumps([sorted(folders), hits, misses, numba.config.CACHE_DIR]))
"""


def _run(name, source, base):
    # RAYTRACE_PREBUILT=0: the shipped kernels (tests/test_prebuilt.py) would be loaded
    env = dict(os.environ, NUMBA_CACHE_DIR=str(base), RAYTRACE_PREBUILT="0")
    r = subprocess.run([sys.executable, "-c", SCRIPT.format(probe=PROBE[name], name=name), str(source)],
                       capture_output=True, text=True, env=env, cwd=source)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", ["skinning", "particles"])
def test_an_edit_anywhere_in_a_library_starts_a_fresh_cache_folder(name, tmp_path):
    source = tmp_path / "src"
    shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "userio", source / "userio", ignore=shutil.ignore_patterns("__pycache__"))
    base = tmp_path / "cache"
    folders, hits, misses, after = _run(name, source, base)
    digest = numba_cache.source_hash(source / name)
    assert folders and all(f.startswith(str(base / f"{name}-{digest}")) for f in folders), folders
    assert misses > 0 and hits == 0                          # compiled, into that folder
    assert after != str(base / f"{name}-{digest}")           # CACHE_DIR restored after the import
    again = _run(name, source, base)
    assert again[0] == folders and again[1] > 0 and again[2] == 0   # loaded: the cache works
    # a file without any kernel (the errors module) changes: a fresh folder, nothing loaded
    errors = source / name / "errors.py"
    errors.write_text(errors.read_text() + "\n# edited\n")
    edited, hits, misses, _ = _run(name, source, base)
    assert edited != folders and hits == 0 and misses > 0
    assert all(f.startswith(str(base / f"{name}-{numba_cache.source_hash(source / name)}")) for f in edited)


def test_each_library_imports_its_kernels_inside_its_own_folder(tmp_path):
    """In one process the libraries and raytrace each keep their folder, whatever the
    import order."""
    code = textwrap.dedent("""
        import json, numba, raytrace, curves, skinning, particles
        from numba.core.dispatcher import Dispatcher
        import curves._kernels_cubic as kc, skinning.kernels as ks, particles.kernels as kp
        import raytrace.kernels.path as rp
        out = {}
        for name, mod in (("curves", kc), ("skinning", ks), ("particles", kp), ("raytrace", rp)):
            d = next(o for o in vars(mod).values() if isinstance(o, Dispatcher) and o._cache is not None
                     and getattr(o._cache, "_cache_path", None))
            out[name] = str(d._cache._cache_path)
        print(json.dumps(out))
        """)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO)
    assert r.returncode == 0, r.stderr[-2000:]
    paths = json.loads(r.stdout.strip().splitlines()[-1])
    for name in ("curves", "skinning", "particles"):
        top = pathlib.Path(paths[name]).relative_to(tmp_path / "cache").parts[0]
        assert top == f"{name}-{numba_cache.source_hash(REPO / name)}", (name, top)
    assert pathlib.Path(paths["raytrace"]).relative_to(tmp_path / "cache").parts[0].startswith("raytrace-")


def test_raytrace_cache_folder_follows_layout_py(tmp_path):
    """``raytrace/layout.py`` holds constants the kernels bake in but imports no Numba: an
    edit of it must still start a fresh cache folder (and an edit of a pure-Python module
    such as the CLI must not)."""
    from raytrace import _numba_cache
    source = tmp_path / "raytrace"
    shutil.copytree(REPO / "raytrace", source, ignore=shutil.ignore_patterns("__pycache__", "prebuilt"))
    before = _numba_cache.source_hash(source)
    assert not {"numba", "llvmlite"} & set(_imported_roots(source / "layout.py"))   # what makes it special
    (source / "cli.py").write_text((source / "cli.py").read_text() + "\n# edited\n")
    assert _numba_cache.source_hash(source) == before
    (source / "layout.py").write_text((source / "layout.py").read_text() + "\nEXTRA = 1\n")
    assert _numba_cache.source_hash(source) != before


def _imported_roots(path):
    import ast
    tree = ast.parse(path.read_text())
    return [a.name.split(".")[0] for n in tree.body if isinstance(n, ast.Import) for a in n.names] + \
        [n.module.split(".")[0] for n in tree.body if isinstance(n, ast.ImportFrom) and n.module and not n.level]
