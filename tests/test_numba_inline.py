"""The fast inliner (``raytrace._numba_inline``): applied, once per function, same results.

Each check runs in a fresh Python process: the inliner is a process-wide change of Numba.
The nested tree below has 3 inline levels and 9 inline call sites but 4 distinct inlined
functions; Numba's own inliner runs an untyped pipeline per transitive call site, ours once
per function.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

TREE = textwrap.dedent("""
    import json, sys, warnings
    warnings.simplefilter("error", RuntimeWarning) if MODE == "strict" else None
    import raytrace.shapes                            # a kernel module: installs the fast inliner
    from raytrace import _numba_inline as ni
    from numba import njit

    @njit(inline="always")
    def leaf(x):
        if x > 1.0:
            return x * 0.5
        return x + 1.0

    @njit(inline="always")
    def mid(x, y):
        a = leaf(x) + leaf(y)
        return a * leaf(a)

    def make_scaled(k):
        @njit(inline="always")
        def scaled(x):                               # a closure: k is a free variable
            return mid(x, k) * k
        return scaled

    scaled = make_scaled(3.0)

    @njit(inline="always")
    def top(x):
        return mid(x, 2.0) - scaled(x) + leaf(x)

    @njit
    def caller(n):
        total = 0.0
        for i in range(n):
            total += top(i * 0.25) + mid(i * 0.5, 1.0)
        return total

    def py_leaf(x):
        return x * 0.5 if x > 1.0 else x + 1.0

    def py_mid(x, y):
        a = py_leaf(x) + py_leaf(y)
        return a * py_leaf(a)

    def py_caller(n):
        return sum(py_mid(i * 0.25, 2.0) - py_mid(i * 0.25, 3.0) * 3.0 + py_leaf(i * 0.25)
                   + py_mid(i * 0.5, 1.0) for i in range(n))

    value = caller(37)
    print(json.dumps({"status": list(ni.status()), "runs": ni.pipeline_runs(),
                      "value": value, "expected": py_caller(37)}))
""")


def run_tree(tmp_path, mode="strict", **env):
    tmp_path.mkdir(parents=True, exist_ok=True)
    script = tmp_path / "tree.py"
    script.write_text(f"MODE = {mode!r}\n" + TREE)
    full_env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), **env)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=full_env,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def test_fast_inliner_is_applied_and_builds_each_function_once(tmp_path):
    result, _ = run_tree(tmp_path)
    assert result["status"] == [True, None], result["status"]
    # leaf, mid, scaled, top: one pipeline each, though inlined at 9 call sites
    assert result["runs"] == 4, result["runs"]
    assert result["value"] == pytest.approx(result["expected"], rel=1e-12)


def test_same_result_as_numbas_own_inliner(tmp_path):
    fast, _ = run_tree(tmp_path / "fast")
    own, _ = run_tree(tmp_path / "own", RAYTRACE_FAST_INLINE="0")
    assert own["status"][0] is False and "RAYTRACE_FAST_INLINE" in own["status"][1]
    assert own["runs"] == 0                          # ours never ran
    assert fast["value"] == own["value"]             # bit for bit


def test_unknown_numba_source_falls_back_with_a_warning(tmp_path):
    """A Numba whose inliner changed gets its own inliner back, and says so."""
    script = tmp_path / "fallback.py"
    script.write_text(textwrap.dedent("""
        import importlib.util, json, pathlib, warnings
        # the module alone: importing the raytrace package would install the inliner first
        package = importlib.util.find_spec("raytrace").submodule_search_locations[0]
        spec = importlib.util.spec_from_file_location(
            "inline_copy", pathlib.Path(package) / "_numba_inline.py")
        ni = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(ni)
        ni.KNOWN_SOURCES.clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            installed, reason = ni.install()
        from numba import njit
        @njit(inline="always")
        def f(x):
            return x + 1
        @njit
        def g(x):
            return f(x) * f(x + 1)
        print(json.dumps([installed, reason, [str(w.message) for w in caught], g(3)]))
    """))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    installed, reason, warned, value = json.loads(out.stdout.strip().splitlines()[-1])
    assert installed is False and "differs" in reason
    assert any("fast inlining not used" in w for w in warned), warned
    assert value == 20


def test_known_source_digest_matches_this_numba():
    """Fails when the installed Numba's inliner is not one whose source was checked: then
    read ``numba/core/inline_closurecall.py`` against ``_splice`` and add the digest."""
    from raytrace import _numba_inline as ni
    assert ni.numba_source_digest() in ni.KNOWN_SOURCES
