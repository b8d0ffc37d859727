"""Dependency keys (raytrace/compile/keys.py) and the cache that uses them
(raytrace/jit/cache.py), in process: what changes a kernel's key and what does not."""
import importlib
import pathlib
import sys
import textwrap

import pytest

from raytrace.jit import cache, keys, plan

CONSTANTS = """
SCALE = 2.0
UNUSED = 1
"""
LEAF = '''
from numba import njit
from .constants import SCALE


@njit(cache=True)
def leaf(x):
    """Twice x."""
    return x * SCALE


@njit(cache=True)
def other(x):
    return x - 1.0
'''
KERNEL = '''
from numba import njit
from .leaf import leaf


@njit(cache=True)
def kernel(x):
    return leaf(x) + 1.0
'''


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A package ``kt`` (counted as this project's, like ``raytrace``) with a kernel that
    calls a leaf in another module that reads a constant from a third; ``load(**files)``
    writes the files given, imports the package afresh and returns the kernel's and the
    leaf's keys."""
    root = tmp_path / "kt"
    root.mkdir()
    (root / "__init__.py").write_text("")
    monkeypatch.setattr(keys, "PACKAGES", keys.PACKAGES + ("kt",))
    monkeypatch.syspath_prepend(str(tmp_path))
    files = {"constants": CONSTANTS, "leaf": LEAF, "kernel": KERNEL}

    def load(**changes):
        files.update(changes)
        for name, text in files.items():
            (root / f"{name}.py").write_text(textwrap.dedent(text))
        for name in [m for m in sys.modules if m == "kt" or m.startswith("kt.")]:
            del sys.modules[name]
        keys._modules.clear()
        kernel = importlib.import_module("kt.kernel")
        leaf = importlib.import_module("kt.leaf")
        return {"kernel": keys.function_key(kernel.kernel.py_func), "leaf": keys.function_key(leaf.leaf.py_func),
                "other": keys.function_key(leaf.other.py_func)}
    yield load
    for name in [m for m in sys.modules if m == "kt" or m.startswith("kt.")]:
        del sys.modules[name]


def test_the_same_code_gives_the_same_key(package):
    assert package() == package()


def test_comments_docstrings_and_blank_lines_change_no_key(package):
    before = package()
    after = package(leaf=LEAF.replace('"""Twice x."""', '"""Two times x (a new docstring)."""')
                    .replace("@njit(cache=True)\ndef leaf", "# a comment\n\n\n@njit(cache=True)\ndef leaf")
                    .replace("    return x * SCALE", "    # scaled\n    return x * SCALE  # here"))
    assert after == before


def test_a_callee_edited_in_another_file_changes_its_callers_key(package):
    before = package()
    after = package(leaf=LEAF.replace("return x * SCALE", "return x * SCALE + 0.0"))
    assert after["leaf"] != before["leaf"] and after["kernel"] != before["kernel"]
    assert after["other"] == before["other"]            # a function the edit did not touch


def test_a_constant_changes_the_keys_of_what_reads_it_only(package):
    before = package()
    unused = package(constants=CONSTANTS.replace("UNUSED = 1", "UNUSED = 2"))
    assert unused == before
    scaled = package(constants=CONSTANTS.replace("SCALE = 2.0", "SCALE = 3.0"))
    assert scaled["leaf"] != before["leaf"] and scaled["kernel"] != before["kernel"]
    assert scaled["other"] == before["other"]


def test_decorator_options_are_part_of_the_key(package):
    before = package()
    after = package(leaf=LEAF.replace("@njit(cache=True)\ndef leaf", "@njit(cache=True, fastmath=True)\ndef leaf"))
    assert after["leaf"] != before["leaf"] and after["kernel"] != before["kernel"]


def test_a_constant_in_the_body_is_part_of_the_key(package):
    """Python keeps a literal in the code's constants, not its bytecode (which Numba's
    own index key hashes): 0.5 -> 0.25 must still change the key."""
    before = package(leaf=LEAF.replace("return x * SCALE", "return x * 0.5"))
    after = package(leaf=LEAF.replace("return x * SCALE", "return x * 0.25"))
    assert after["leaf"] != before["leaf"] and after["kernel"] != before["kernel"]


def test_run_time_state_of_a_module_is_not_part_of_its_digest(package):
    """A module's lower-case state (a dict a render fills with thread pools) must not enter
    the digests that overloads' callers are keyed by: the key would depend on what the
    process did before the lookup, and a shipped kernel would never be found."""
    package(leaf=LEAF + "\n_pools = {}\nLIMITS = (1, 2)\n")
    leaf = sys.modules["kt.leaf"]
    before = keys.module_digest(leaf)
    leaf._pools["x"] = object()
    keys._modules.clear()
    assert keys.module_digest(leaf) == before
    leaf.LIMITS = (1, 3)                        # an UPPER_CASE constant is content
    keys._modules.clear()
    assert keys.module_digest(leaf) != before


KEY_AFTER_A_RENDER = """
import json, pickle, sys
import imageio.v3 as iio
import numpy as np
import raytrace.kernels.path as p
import raytrace.kernels.whitted as w
from raytrace.jit import keys


def digests():
    return {name: keys._own_digest(module) for name, module in sorted(sys.modules.items())
            if keys.is_ours(module) and not hasattr(module, "__path__")}


def row_keys():
    return [keys.function_key(w.whitted_rows.py_func), keys.function_key(p.path_rows.py_func)]


first, before = row_keys(), digests()
# what a process does: renders (thread pools), reads 8- and 16-bit sRGB images (decode
# tables), pickles a Numba type (as the cache does when it saves a signature: copyreg
# marks the class)
import raytrace
from raytrace.image import read_rgb_image
from raytrace.kernels import borrow
scene = raytrace.load_scene(sys.argv[1])
for integrator in ("whitted", "path"):
    raytrace.render(scene, integrator=integrator, width=8, height=6, spp=1)
for pixels in (np.full((2, 2, 3), 7, np.uint8), np.full((2, 2), 7, np.uint16)):
    iio.imwrite(sys.argv[2], pixels)
    read_rgb_image(sys.argv[2])
if borrow.BorrowedArray is not None:
    from numba import types
    pickle.dumps(borrow.BorrowedArray(types.float64, 1, "C"))
keys.forget()
after = digests()
print(json.dumps({"first": first, "again": row_keys(),
                  "changed": [name for name in before if after.get(name) != before[name]]}))
"""


def test_a_kernels_key_does_not_depend_on_what_the_process_did_before(tmp_path):
    """The row kernels' keys, and the digest of every package module, looked up before
    and after what a process does (renders, whose thread pools are module state; image
    reads; a pickled Numba type) are the same: the shipped bundle, made by renders
    through the command line, is found by a program that imports the kernels first, and
    by a test worker whatever tests ran before. (Before this held for module digests, a
    decode table named like a constant and copyreg's mark on a pickled type made the
    bundle look stale to the worker that ran tests in another order.)"""
    import json
    import subprocess
    repo = pathlib.Path(__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, "-c", KEY_AFTER_A_RENDER, str(repo / "scenes" / "spheres.json"),
                        str(tmp_path / "tex.png")], capture_output=True, text=True, timeout=900, cwd=repo)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.splitlines()[-1])
    assert out["changed"] == []
    assert out["first"] == out["again"]


def test_a_class_pickled_keeps_its_modules_digest(package):
    """copyreg's ``__slotnames__`` on a class whose instance was pickled is not content.
    Control: a method edited in the same class changes the digest."""
    import pickle
    cls = "\nclass Shape:\n    SIDES = 3\n\n    def area(self):\n        return 1.0\n"
    package(leaf=LEAF + cls)
    leaf = sys.modules["kt.leaf"]
    before = keys.module_digest(leaf)
    pickle.dumps(leaf.Shape())
    assert "__slotnames__" in vars(leaf.Shape)      # what Python does (else: nothing to test)
    keys._modules.clear()
    assert keys.module_digest(leaf) == before
    package(leaf=LEAF + cls.replace("return 1.0", "return 2.0"))
    assert keys.module_digest(sys.modules["kt.leaf"]) != before


def test_every_kernel_is_cached_by_its_dependency_key():
    """Each of raytrace's dispatchers has its own KernelCache, whose file names carry the
    function's current dependency key."""
    from raytrace.kernels.path import path_rows
    the_cache = cache.dispatcher_cache(path_rows)
    assert the_cache is not None
    dep = keys.function_key(path_rows.py_func)
    assert the_cache.file_name(dep, ("t", "c", ""), ()).startswith(f"path.path_rows.{dep[:16]}.")


def test_the_plan_names_what_an_edit_made_stale():
    """Nothing is stale once a render compiled (or loaded) the path tracer; a plan's
    wording names edits, first runs and what merely is not cached."""
    import raytrace
    from raytrace.kernels.path import path_rows
    scene = raytrace.load_scene({"camera": {"center": [0, 1, 0], "direction": [0, -1, 0], "up": [0, 0, -1]},
                                 "integrator": {"type": "path"},
                                 "lights": [{"type": "directional", "direction": [0, -1, 0]}],
                                 "objects": [{"type": "plane", "normal": [0, 1, 0]}]})
    raytrace.render(scene, width=2, height=2, spp=1)
    assert plan.explain([path_rows]).stale == []
    assert plan.Plan([path_rows], ["kernels/bsdf.py: ggx_d"], False).describe() == \
        "compiling 1 kernel after edits to kernels/bsdf.py: ggx_d"
    assert "first run here" in plan.Plan([path_rows, path_rows], [], True).describe()
    assert plan.Plan([], [], False).describe() == ""


def test_the_parallel_schedule_keeps_callers_with_callees_and_balances_sizes():
    from raytrace.jit import parallel
    entries = [("a", [], [], 100), ("b", [], ["a"], 50), ("c", [], [], 120), ("d", [], [], 30),
               ("e", [], ["d"], 10), ("f", [], [], 5)]
    shares = parallel.schedule(entries, {"a", "b", "c", "d", "e"}, workers=2)
    assert sorted(map(sorted, shares)) == [["a", "b"], ["c", "d", "e"]]      # 150 and 160 bytes
    assert shares[0].index("a") < shares[0].index("b") if "a" in shares[0] else True   # callees first
    assert parallel.schedule(entries, {"f"}, workers=4) == [["f"]]
    assert parallel.schedule(entries, set(), workers=2) == []


_STATE_MAKERS = ("dict", "list", "set", "defaultdict", "OrderedDict", "WeakKeyDictionary",
                 "WeakValueDictionary", "deque")


def _run_time_state_named_as_constants(source):
    """Module-level names in UPPER_CASE bound to an empty container (a cache a process
    fills): [(line, name)]."""
    import ast
    found = []
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else []
        value = getattr(node, "value", None)
        maker = getattr(getattr(value, "func", None), "id", getattr(getattr(value, "func", None), "attr", None))
        empty = (isinstance(value, ast.Dict) and not value.keys) \
            or (isinstance(value, (ast.List, ast.Set)) and not value.elts) \
            or (isinstance(value, ast.Call) and maker in _STATE_MAKERS
                and (maker == "defaultdict" or not (value.args or value.keywords)))
        for target in targets:
            name = getattr(target, "id", None)
            if empty and name and name.strip("_").isupper():
                found.append((node.lineno, name))
    return found


def test_run_time_state_is_named_in_lower_case():
    """Module digests (the keys of overloads' callers) take UPPER_CASE values as content
    and leave lower-case state out: a cache named like a constant would make every key
    depend on what the process did before. Control: such a line is found."""
    repo = pathlib.Path(__file__).resolve().parents[1]
    assert _run_time_state_named_as_constants("_TABLES = {}\nLIMITS = (1, 2)\n_seen = set()\nQ = deque()\n") == \
        [(1, "_TABLES"), (4, "Q")]
    offenders = [f"{path.relative_to(repo)}:{line}: {name}"
                 for path in sorted((repo / "raytrace").rglob("*.py"))
                 for line, name in _run_time_state_named_as_constants(path.read_text())]
    assert offenders == []


_PATCHED_KEYS = []


def test_a_key_looked_up_while_a_module_is_patched_is_the_patched_codes(monkeypatch):
    """What the conftest's ``_keys_of_patched_code_forgotten`` is for: the path row
    kernel's key, looked up while ``simd.probe_expected`` is patched (as
    tests/test_simd.py does), is not the real one. The next test checks it is forgotten."""
    from raytrace.accel import simd
    from raytrace.kernels.path import path_rows
    real = keys.function_key(path_rows.py_func)
    keys.forget()
    monkeypatch.setattr(simd, "probe_expected", lambda: ())
    patched = keys.function_key(path_rows.py_func)
    assert patched != real
    _PATCHED_KEYS.append((real, patched))


def test_keys_of_patched_code_are_forgotten_after_the_test():
    if not _PATCHED_KEYS:
        pytest.skip("needs the test above to run first, in this process")
    from raytrace.kernels.path import path_rows
    real, patched = _PATCHED_KEYS[0]
    assert keys.function_key(path_rows.py_func) == real != patched
