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


ROLES = ("helper", "unit", "row_kernel", "kernel", "intrinsic")


def jitted_nodes(source):
    """The function definitions of ``source`` declared by a role of ``raytrace.jit`` or as
    an intrinsic."""
    return [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.FunctionDef)
            and any(ast.unparse(d).split("(")[0] in ROLES for d in node.decorator_list)]


def _jitted_functions():
    """(file, name, lines) of every function declared by a role of ``raytrace.jit`` or as
    an intrinsic in raytrace."""
    return [(path.relative_to(REPO), node.name, node.end_lineno - node.lineno + 1)
            for path in sorted(RAYTRACE.rglob("*.py")) for node in jitted_nodes(path.read_text())]


def test_no_kernel_function_is_longer_than_a_screen():
    funcs = _jitted_functions()
    assert len(funcs) > 50                      # the walk found the kernels
    long = [f"{p}:{name} ({n} lines)" for p, name, n in funcs if n > MAX_KERNEL_LINES]
    assert not long, "split these kernels into named helpers: " + ", ".join(long)


def test_the_length_check_sees_long_functions(tmp_path, monkeypatch):
    """Negative control: a long jitted function in the tree is reported."""
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_KERNEL_LINES + 5))
    src = f"from raytrace.jit import helper\n\n@helper\ndef long_kernel():\n{body}\n    return 0\n"
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


def jit_violations(path):
    """What in ``path`` declares or configures compiling outside ``raytrace/jit/``: a
    call or import of ``njit``/``jit``, an assignment to Numba's config or classes."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "numba":
            found += [f"imports numba.{a.name}" for a in node.names if a.name in ("njit", "jit", "generated_jit")]
        elif isinstance(node, ast.Attribute) and node.attr in ("njit", "jit") and \
                isinstance(node.value, ast.Name) and node.value.id == "numba":
            found.append(f"uses numba.{node.attr}")
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                text = ast.unparse(target)
                if text.startswith(("numba.", "config.CACHE", "config.CPU", "dispatcher.", "InlineWorker.")):
                    found.append(f"assigns {text}")
    return found


@pytest.mark.parametrize("path", [p for p in sorted(RAYTRACE.rglob("*.py")) if "jit" not in p.parts],
                         ids=lambda p: str(p.relative_to(RAYTRACE)))
def test_kernels_are_declared_by_role_and_nothing_configures_numba(path):
    """Every kernel is declared through ``raytrace.jit``'s roles (its cache and pipeline
    are set per dispatcher there); nothing outside ``raytrace/jit/`` touches Numba's
    config or classes."""
    assert jit_violations(path) == []


def test_the_role_check_sees_a_hand_written_njit(tmp_path):
    """Negative control for the check above."""
    bad = tmp_path / "bad.py"
    bad.write_text("import numba\nfrom numba import njit\n\n\n@njit(cache=True)\ndef f(x):\n    return x\n\n\n"
                   "numba.config.CACHE_DIR = '/tmp'\ng = numba.njit(f)\n")
    assert jit_violations(bad) == ["imports numba.njit", "assigns numba.config.CACHE_DIR", "uses numba.njit"]


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


# ------------------------------------------------------------- the Numba range tested
def _lower_bounds(pyproject_text):
    """{package: lowest version} of numba and llvmlite in pyproject.toml's dependencies."""
    import re
    return dict(re.findall(r'"(numba|llvmlite)>=([0-9.]+),', pyproject_text))


def _oldest_pins(makefile_text):
    import re
    line = next(line for line in makefile_text.splitlines() if line.startswith("OLDEST_NUMBA"))
    return dict(re.findall(r"(numba|llvmlite)==([0-9.]+)", line))


def test_make_test_runs_the_kernels_on_the_oldest_numba_allowed():
    """``make test``'s second environment pins exactly pyproject.toml's lower bounds, and
    runs test files that exist."""
    bounds = _lower_bounds((REPO / "pyproject.toml").read_text())
    assert set(bounds) == {"numba", "llvmlite"}
    assert _oldest_pins((REPO / "Makefile").read_text()) == bounds
    recipe = _make_recipe("test")
    assert any("$(OLDEST)/bin/python -m pytest" in line and "$(KERNEL_TESTS)" in line for line in recipe)
    text = (REPO / "Makefile").read_text()
    listed = text.split("KERNEL_TESTS :=", 1)[1].split("\n$(OLDEST)", 1)[0].replace("\\", " ").split()
    assert len(listed) > 10 and all((REPO / name).is_file() for name in listed), listed


def test_the_pin_check_sees_a_mismatch():
    """Negative control: a Makefile pinning another Numba than the lower bound."""
    bounds = _lower_bounds('"numba>=0.61.2,<0.69", "llvmlite>=0.44.0,<0.51"')
    assert _oldest_pins("OLDEST_NUMBA := numba==0.60.0 llvmlite==0.44.0\n") != bounds


def test_the_package_says_the_version_pyproject_gives():
    import tomllib

    import raytrace
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert raytrace.__version__ == version


# ------------------------------------------------- records, not tuples; nothing written twice
MAX_FLAT_RETURN = 4


def wide_returns(path):
    """(function, n) for each function of ``path`` that returns a flat tuple of more than
    MAX_FLAT_RETURN values (a nested tuple counts its top level: a direction is one)."""
    out = []
    for fn in ast.walk(ast.parse(path.read_text())):
        if isinstance(fn, ast.FunctionDef):
            widest = max((len(r.value.elts) for r in ast.walk(fn)
                          if isinstance(r, ast.Return) and isinstance(r.value, ast.Tuple)), default=0)
            if widest > MAX_FLAT_RETURN:
                out.append((fn.name, widest))
    return out


def test_no_kernel_returns_more_than_four_loose_values():
    """A kernel function's result of more than four values is a record
    (``raytrace.kernels.records``) or nested tuples: a reader never counts commas."""
    wide = [f"{p.name}: {name} returns {n}" for p in _files("kernels") for name, n in wide_returns(p)]
    assert not wide, "; ".join(wide)


def test_the_return_check_sees_a_wide_tuple(tmp_path):
    """Negative control: five loose values are reported, two nested triples are not."""
    src = tmp_path / "k.py"
    src.write_text("def f(a):\n    return a, a, a, a, a\n\ndef g(a):\n    return (a, a, a), (a, a, a)\n")
    assert wide_returns(src) == [("f", 5)]


MIN_REPEAT = 6          # lines: a block this long must not stand twice
_SKIP = {"(", ")", "[", "]", "{", "}", "):", "]:", "),", "],", "else:", "try:", "finally:", "pass"}


def _shape(line):
    """A line with its names, numbers and strings replaced: what it does, not with what."""
    import io
    import keyword
    import tokenize
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(line).readline):
            if tok.type == tokenize.NAME:
                out.append(tok.string if keyword.iskeyword(tok.string) else "n")
            elif tok.type == tokenize.NUMBER:
                out.append("0")
            elif tok.type == tokenize.STRING:
                out.append("s")
            elif tok.type == tokenize.OP:
                out.append(tok.string)
    except (tokenize.TokenError, IndentationError):
        return line.strip()
    return " ".join(out)


def code_lines(path):
    """(line number, shape) of the lines of ``path`` that count: code outside docstrings,
    not blank, comment, import, lone punctuation or a record's field declaration."""
    tree = ast.parse(path.read_text())
    doc = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node) is not None:
            d = node.body[0]
            doc.update(range(d.lineno, d.end_lineno + 1))
        elif isinstance(node, ast.AnnAssign) and node.value is None:
            doc.update(range(node.lineno, node.end_lineno + 1))
    out = []
    for k, text in enumerate(path.read_text().splitlines(), 1):
        s = text.split("#")[0].strip() if "'" not in text and '"' not in text else text.strip()
        if k in doc or not s or s.startswith(("#", "import ", "from ", "@")) or s in _SKIP:
            continue
        shape = _shape(s)
        if len(shape.split()) > 3:      # thin lines (``x: int``, ``return x``, ``break``) do not count
            out.append((k, shape))
    return out


def repeated_blocks(paths, n=MIN_REPEAT):
    """Pairs of places among ``paths`` where ``n`` consecutive counted lines have the same
    shape -> ["a.py:10 ~ b.py:40", ...]: one entry per run, at its first line."""
    lines = {p.name: code_lines(p) for p in paths}
    where = {}
    for name, counted in lines.items():
        for i in range(len(counted) - n + 1):
            where.setdefault(tuple(shape for _, shape in counted[i:i + n]), []).append((name, i))
    matched = set()
    for places in where.values():
        for k, (a, i) in enumerate(places):
            for b, j in places[k + 1:]:
                if a != b or abs(i - j) >= n:
                    matched.add((a, i, b, j))
    return [f"{a}:{lines[a][i][0]} ~ {b}:{lines[b][j][0]}" for a, i, b, j in sorted(matched)
            if (a, i - 1, b, j - 1) not in matched]


def test_no_block_of_six_lines_stands_twice_in_the_kernels_or_the_bvh():
    """No block of six or more lines (the same lines, or the same shape with other names)
    repeats inside ``raytrace/kernels/`` and ``raytrace/accel/``: what is the same is one
    function (the BVH's cost statistics are the renders' walk with counters, not a copy)."""
    repeats = repeated_blocks(_files("kernels") + _files("accel"))
    assert not repeats, "; ".join(repeats)


def test_the_repeat_check_sees_a_renamed_copy(tmp_path):
    """Negative control: a block copied with other names is found (from its ``def``); two
    blocks that differ in the shape of their middle line are not."""
    block = "\n".join(f"    {v} = a{k} * b + c[{k}]" if k != 3 else f"    if {v} > 0:\n        {v} += 1"
                      for k, v in enumerate("uvwxyz"))
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text(f"def f(a0, a1, a2, a3, a4, a5, b, c):\n{block}\n    return u\n")
    b.write_text(f"def g(a0, a1, a2, a3, a4, a5, b, c):\n{block.replace('u =', 'p =').replace('* b', '* q')}\n"
                 "    return p\n")
    assert repeated_blocks([a, b]) == ["a.py:1 ~ b.py:1"]
    b.write_text(f"def g(a0, a1, a2, a3, a4, a5, b, c):\n{block.replace('if x > 0', 'while x > 0')}\n"
                 "    return u\n")
    assert repeated_blocks([a, b]) == []


def record_builds(source, names):
    """(function, line) of each jitted function in ``source`` that calls a constructor in
    ``names`` or ``._replace``."""
    found = []
    for node in jitted_nodes(source):
        for call in ast.walk(node):
            if isinstance(call, ast.Call):
                f = call.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
                if name in names or name == "_replace":
                    found.append((node.name, call.lineno))
    return found


def test_no_kernel_builds_a_scene_record():
    """The contract a late twin relies on when it stores each scene record once per
    row-kernel call (``raytrace.jit.late.SCENE_RECORDS``): records are built in Python,
    never in a kernel."""
    from raytrace.jit import late
    names = {name for _, name in late.SCENE_RECORDS}
    found = [(str(path.relative_to(REPO)),) + f for path in sorted(RAYTRACE.rglob("*.py"))
             for f in record_builds(path.read_text(), names)]
    assert found == []


def test_the_record_check_sees_a_kernel_that_builds_one():
    from raytrace.jit import late
    names = {name for _, name in late.SCENE_RECORDS}
    control = "@helper\ndef f(geo):\n    return Geometry(*geo)\n\n@unit\ndef g(a):\n    return a._replace(x=1)\n"
    assert record_builds(control, names) == [("f", 3), ("g", 7)]
