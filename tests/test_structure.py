"""The package's shape: the one-way data flow between the loader and the kernels, and
kernels short enough to read on one screen."""
import ast
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
RAYTRACE = REPO / "raytrace"
MAX_KERNEL_LINES = 80


def _imports(path):
    """Absolute module names imported by ``path`` (relative imports resolved)."""
    tree = ast.parse(path.read_text())
    package = ".".join(path.relative_to(REPO).with_suffix("").parts[:-1])
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            names.append(mod)
            names += [f"{mod}.{a.name}" for a in node.names]
    return names


def _files(folder):
    return sorted((RAYTRACE / folder).rglob("*.py"))


@pytest.mark.parametrize("path", _files("kernels"), ids=lambda p: p.name)
def test_kernels_do_not_import_the_scene_side(path):
    bad = [m for m in _imports(path) if m.startswith("raytrace.scene") or m in ("raytrace.renderer", "raytrace.cli")]
    assert not bad, f"{path.name} imports {bad}: kernels read raytrace.layout, never the loader"


@pytest.mark.parametrize("path", _files("accel"), ids=lambda p: p.name)
def test_accel_does_not_import_kernels_or_scene(path):
    bad = [m for m in _imports(path) if m.startswith(("raytrace.kernels", "raytrace.scene"))]
    assert not bad, f"{path.name} imports {bad}: accel sits below the kernels"


@pytest.mark.parametrize("path", _files("scene"), ids=lambda p: p.name)
def test_scene_side_does_not_import_kernels(path):
    bad = [m for m in _imports(path) if m.startswith(("raytrace.kernels", "raytrace.renderer"))]
    assert not bad, f"{path.name} imports {bad}: the loader fills raytrace.layout, never calls kernels"


@pytest.mark.parametrize("lib", ["curves", "skinning", "particles", "userio"])
def test_libraries_never_import_raytrace(lib):
    for path in sorted((REPO / lib).rglob("*.py")):
        bad = [m for m in _imports(path) if m and m.split(".")[0] == "raytrace"]
        assert not bad, f"{path.relative_to(REPO)} imports {bad}"


def _jitted_functions():
    """(file, name, lines) of every function decorated with njit / intrinsic in raytrace."""
    out = []
    for path in sorted(RAYTRACE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(
                    "njit" in ast.unparse(d) or "intrinsic" in ast.unparse(d) for d in node.decorator_list):
                out.append((path.relative_to(REPO), node.name, node.end_lineno - node.lineno + 1))
    return out


def test_no_kernel_function_is_longer_than_a_screen():
    funcs = _jitted_functions()
    assert len(funcs) > 50                      # the walk found the kernels
    long = [f"{p}:{name} ({n} lines)" for p, name, n in funcs if n > MAX_KERNEL_LINES]
    assert not long, "split these kernels into named helpers: " + ", ".join(long)


def test_the_length_check_sees_long_functions(tmp_path, monkeypatch):
    """Negative control: a long jitted function in the tree is reported."""
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_KERNEL_LINES + 5))
    src = f"from numba import njit\n\n@njit(cache=True)\ndef long_kernel():\n{body}\n    return 0\n"
    fake = tmp_path / "raytrace"
    fake.mkdir()
    (fake / "k.py").write_text(src)
    monkeypatch.setattr(__import__(__name__), "RAYTRACE", fake)
    monkeypatch.setattr(__import__(__name__), "REPO", tmp_path)
    funcs = _jitted_functions()
    assert [n for _, name, n in funcs if name == "long_kernel"][0] > MAX_KERNEL_LINES


# ------------------------------------------------- Numba's cache set up before any kernel
def _top_level_imports(path):
    """(line, module) of the module-level imports of ``path``, in order."""
    out = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            out.append((node.lineno, node.module))
    return out


def _uses_numba(module):
    return module.split(".")[0] in ("numba", "llvmlite")


@pytest.mark.parametrize("path", [p for p in sorted(RAYTRACE.rglob("*.py"))
                                  if any(_uses_numba(m) for _, m in _top_level_imports(p))
                                  and p.name not in ("_numba_setup.py", "_numba_inline.py", "_numba_cache.py")],
                         ids=lambda p: str(p.relative_to(RAYTRACE)))
def test_raytrace_kernel_modules_set_up_numba_first(path):
    """``import raytrace`` is lazy (``--help`` imports no Numba), so each module that
    imports Numba must choose the cache folder itself before its kernels are decorated."""
    imports = _top_level_imports(path)
    first_numba = min(line for line, m in imports if _uses_numba(m))
    setup = [line for line, m in imports if m == "raytrace._numba_setup"]
    assert setup and setup[0] < first_numba, f"{path.name}: import raytrace._numba_setup before Numba"


def _njit_lines(tree):
    return [node.lineno for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef,))
            and any("njit" in ast.unparse(d) for d in node.decorator_list)]


@pytest.mark.parametrize("path", [p for lib in ("curves", "skinning", "particles")
                                  for p in sorted((REPO / lib).glob("*.py")) if "@njit" in p.read_text()],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_library_kernel_modules_scope_their_cache_folder(path):
    """A library's kernels cache into its own folder however the module is first imported:
    a KernelCacheScope opened before the first ``@njit`` and closed at the end."""
    tree = ast.parse(path.read_text())
    opened = [n.lineno for n in tree.body if isinstance(n, ast.Assign)
              and "KernelCacheScope(" in ast.unparse(n.value)]
    assert opened and opened[0] < min(_njit_lines(tree)), path.name
    last = tree.body[-1]
    assert isinstance(last, ast.Expr) and ast.unparse(last) == "_cache.close()", path.name


def test_the_fences_see_a_module_that_does_not_set_up(tmp_path, monkeypatch):
    """Negative control for the two checks above."""
    bad = tmp_path / "bad.py"
    bad.write_text("import numpy as np\nfrom numba import njit\nimport raytrace._numba_setup\n\n\n"
                   "@njit(cache=True)\ndef f(x):\n    return x\n")
    with pytest.raises(AssertionError):
        test_raytrace_kernel_modules_set_up_numba_first(bad)
    with pytest.raises(AssertionError):
        test_library_kernel_modules_scope_their_cache_folder(bad)


# ------------------------------------------------------------- the user's test command
def _make_recipe(target):
    """The recipe lines of ``target`` in the Makefile."""
    lines = (REPO / "Makefile").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    recipe = []
    for line in lines[start + 1:]:
        if not line.startswith("\t"):
            break
        recipe.append(line.strip())
    return recipe


def test_make_test_changes_nothing_outside_the_checkout():
    """``make test`` (the README's command) installs into .venv only: no system packages,
    no sudo; CI installs what optional tests need in .ci/run, then calls exactly it."""
    recipe = " ".join(_make_recipe("test"))
    assert recipe and "pytest" in recipe
    for word in ("apt-get", "apt ", "sudo", "dnf ", "yum ", "brew ", "--user"):
        assert word not in recipe, word
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.lstrip().startswith("#")]
    assert ci[-1] == "make test"


def test_the_recipe_reader_sees_a_system_install(tmp_path, monkeypatch):
    """Negative control: a recipe that calls apt-get fails the check above."""
    (tmp_path / "Makefile").write_text("test: x\n\tapt-get install -y chromium\n\tpytest\n")
    (tmp_path / ".ci").mkdir()
    (tmp_path / ".ci" / "run").write_text("make test\n")
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    with pytest.raises(AssertionError):
        test_make_test_changes_nothing_outside_the_checkout()
