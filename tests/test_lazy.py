"""userio.lazy: package attributes loaded on first use, meaning what an eager
``from .module import name`` in ``__init__`` would have made them mean."""
import subprocess
import sys
import textwrap

REPO_ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def _package(tmp_path):
    pkg = tmp_path / "demo"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent("""
        from userio.lazy import lazy_package
        lazy_package(__name__, {"simulate": (".simulate", "simulate"), "Heavy": (".heavy", "Heavy"),
                                "tools": (".tools", None)})
        """))
    (pkg / "simulate.py").write_text("import demo.heavy\ndef simulate():\n    return 'the function'\n")
    (pkg / "heavy.py").write_text("LOADED = True\nclass Heavy:\n    pass\n")
    (pkg / "tools.py").write_text("X = 1\n")
    (pkg / "other.py").write_text("Y = 2\n")
    return pkg


def _run(tmp_path, code):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       env={"PYTHONPATH": f"{tmp_path}:{REPO_ROOT}"})
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_names_load_on_first_use(tmp_path):
    _package(tmp_path)
    out = _run(tmp_path, """
        import sys, demo
        print("demo.heavy" in sys.modules)
        print(demo.Heavy.__name__, "demo.heavy" in sys.modules)
        print(demo.tools.X, demo.other.Y)
        try:
            demo.nothing
        except AttributeError:
            print("AttributeError")
        """)
    assert out == ["False", "Heavy", "True", "1", "2", "AttributeError"]


def test_a_name_equal_to_its_module_means_the_function_whatever_was_imported_first(tmp_path):
    _package(tmp_path)
    out = _run(tmp_path, """
        import demo.simulate            # the submodule first: Python binds it to demo.simulate
        import demo
        print(callable(demo.simulate) and demo.simulate())
        """)
    assert out == ["the", "function"]
    out = _run(tmp_path, """
        import demo
        f = demo.simulate               # the name first
        import demo.simulate
        print(demo.simulate is f)
        """)
    assert out == ["True"]


def test_without_lazy_package_the_submodule_would_shadow_the_name(tmp_path):
    """Negative control: the case above is real (a plain package gets the module)."""
    pkg = _package(tmp_path)
    (pkg / "__init__.py").write_text("")
    out = _run(tmp_path, """
        import demo.simulate, types, demo
        print(isinstance(demo.simulate, types.ModuleType))
        """)
    assert out == ["True"]
