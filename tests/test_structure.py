"""The package's shape: the one-way data flow between the loader and the kernels, and
kernels short enough to read on one screen."""
import ast
import pathlib

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
