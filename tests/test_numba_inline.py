"""The fast inliner (``raytrace/jit/inline.py``): used by raytrace's dispatchers (their
``pipeline_class``), once per function, same results; never by anyone else's.

Each check runs in a fresh Python process (the inliner keeps IR for the process's life).
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
    from raytrace.jit import inline as ni
    from numba import njit
    pipeline = ni.pipeline_class()                    # None where not used (switched off, unchecked Numba)
    ours = {"pipeline_class": pipeline} if pipeline else {}

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

    def caller_py(n):
        total = 0.0
        for i in range(n):
            total += top(i * 0.25) + mid(i * 0.5, 1.0)
        return total

    caller = njit(**ours)(caller_py)                  # as raytrace's roles declare a kernel
    users_caller = njit(caller_py)                    # a user's own function: Numba's pipeline

    def py_leaf(x):
        return x * 0.5 if x > 1.0 else x + 1.0

    def py_mid(x, y):
        a = py_leaf(x) + py_leaf(y)
        return a * py_leaf(a)

    def py_caller(n):
        return sum(py_mid(i * 0.25, 2.0) - py_mid(i * 0.25, 3.0) * 3.0 + py_leaf(i * 0.25)
                   + py_mid(i * 0.5, 1.0) for i in range(n))

    value = caller(37)
    runs = ni.pipeline_runs()
    users_value = users_caller(37)
    print(json.dumps({"status": list(ni.status()), "runs": runs, "runs_after_user": ni.pipeline_runs(),
                      "value": value, "users_value": users_value, "expected": py_caller(37)}))
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


def test_a_users_own_function_keeps_numbas_inliner(tmp_path):
    """The user's dispatcher, compiled after raytrace's in the same process, ran none of
    the fast inliner's pipelines (negative control: raytrace's own caller ran four)."""
    result, _ = run_tree(tmp_path)
    assert result["runs"] == 4 and result["runs_after_user"] == 4
    assert result["users_value"] == result["value"]


def test_same_result_as_numbas_own_inliner(tmp_path):
    fast, _ = run_tree(tmp_path / "fast")
    own, _ = run_tree(tmp_path / "own", RAYTRACE_FAST_INLINE="0")
    assert own["status"][0] is False and "RAYTRACE_FAST_INLINE" in own["status"][1]
    assert own["runs"] == 0                          # ours never ran
    assert fast["value"] == own["value"]             # bit for bit


def test_unknown_numba_source_falls_back_with_a_warning(tmp_path):
    """A Numba whose inliner changed: raytrace's kernels get Numba's own pipeline, and
    this is said once."""
    script = tmp_path / "fallback.py"
    script.write_text(textwrap.dedent("""
        import json, warnings
        from raytrace.jit import inline as ni
        ni.KNOWN_SOURCES.clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first = ni.pipeline_class()
            second = ni.pipeline_class()
        used, reason = ni.status()
        from raytrace.kernels.bsdf import ggx_d
        print(json.dumps([first, second, used, reason, [str(w.message) for w in caught],
                          ggx_d._compiler.pipeline_class.__name__, ggx_d(0.5, 0.0, 0.0, 1.0)]))
    """))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    first, second, used, reason, warned, pipeline, value = json.loads(out.stdout.strip().splitlines()[-1])
    assert first is None and second is None and used is False and "differs" in reason
    assert sum("fast inlining not used" in w for w in warned) == 1, warned
    assert pipeline == "Compiler"                     # Numba's own
    assert value == pytest.approx(1.0 / (3.141592653589793 * 0.25))


def test_known_source_digest_matches_this_numba():
    """Fails when the installed Numba's inliner is not one whose source was checked: then
    read ``numba/core/inline_closurecall.py`` against ``_splice`` and add the digest."""
    from raytrace.jit import inline as ni
    assert ni.numba_source_digest() in ni.KNOWN_SOURCES
