"""Starting a command: ``--help`` and argument errors never import Numba (so they answer
at once), and Ctrl-C at any moment of startup exits 130 with one line, no traceback and
no file written.

The lazy imports: ``userio/lazy.py`` (packages), the CLIs' heavy imports inside
``userio.cli.run``; kernels declared and cached by ``raytrace/jit/`` (the libraries use
Numba's own cache)."""
import json
import os
import pathlib
import signal
import subprocess
import sys

import pytest
from conftest import REPO
from interrupts import finish, interrupt_after, start

CLIS = {"raytrace": "raytrace.cli", "curves": "curves.cli", "skinning": "skinning.cli",
        "particles": "particles.cli"}

# (command, argv, expected exit status): every help text and argument errors that argparse finds
LIGHT = [
    ("raytrace", ["--help"], 0), ("raytrace", ["render", "--help"], 0), ("raytrace", ["animate", "--help"], 0),
    ("raytrace", ["compare", "--help"], 0), ("raytrace", ["regress", "--help"], 0),
    ("raytrace", ["convergence", "--help"], 0), ("raytrace", ["merge", "--help"], 0),
    ("raytrace", ["convert", "--help"], 0), ("raytrace", [], 2), ("raytrace", ["bogus"], 2),
    ("raytrace", ["render", "scene.json"], 2), ("raytrace", ["render", "s.json", "-o", "o.png", "--spp", "x"], 2),
    ("raytrace", ["render", "s.json", "-o", "o.png", "--filter", "bogus"], 2),
    ("raytrace", ["animate", "s.json"], 2), ("raytrace", ["compare", "a.png"], 2),
    # option values checked by the command before it imports the renderer
    ("raytrace", ["render", "s.json", "-o", "o.png", "--spp", "-5"], 2),
    ("raytrace", ["render", "s.json", "-o", "o.png", "--size", "0", "10"], 2),
    ("raytrace", ["render", "s.json", "-o", "o.txt"], 2),
    ("raytrace", ["render", "s.json", "-o", "o.png", "--aov", "bogus"], 2),
    ("raytrace", ["render", "s.json", "-o", "o.png", "--depth", "d.png", "5", "1"], 2),
    ("raytrace", ["animate", "s.json", "-o", "frames", "--spp", "0"], 2),
    ("raytrace", ["animate", "s.json", "-o", "frames", "--workers", "0"], 2),
    ("raytrace", ["view", "--help"], 0), ("raytrace", ["view", "s.json", "--port", "70000"], 2),
    ("raytrace", ["view", "s.json", "--spp", "0"], 2),
    ("curves", ["--help"], 0), ("curves", ["plot", "--help"], 0), ("curves", ["obj", "--help"], 0),
    ("curves", ["info", "--help"], 0), ("curves", ["plot"], 2),
    ("skinning", ["--help"], 0), ("skinning", ["info", "--help"], 0), ("skinning", ["export", "--help"], 0),
    ("skinning", ["preview", "--help"], 0), ("skinning", ["info", "--bogus"], 2),
    ("particles", ["--help"], 0), ("particles", ["simulate", "--help"], 0), ("particles", ["error", "--help"], 0),
    ("particles", ["energy", "--help"], 0), ("particles", ["stable-dt", "--help"], 0),
    ("particles", ["simulate", "nosuch"], 2), ("particles", ["simulate", "chain", "--steps", "x"], 2),
]

_PROBE = """
import contextlib, io, importlib, json, sys
results = []
for command, module, argv in json.loads(sys.argv[1]):
    main = importlib.import_module(module).main
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            status = main(argv)
        except SystemExit as stop:
            status = stop.code
    heavy = sorted(m for m in ("numba", "llvmlite", "particles.kernels", "skinning.kernels",
                               "curves._kernels_bspline") if m in sys.modules)
    results.append([command, argv, status, heavy])
print(json.dumps(results))
"""


def _probe(runs):
    """Run each (command, argv) in one fresh interpreter, in order -> [command, argv,
    status, heavy modules imported so far]."""
    todo = [[command, CLIS[command], argv] for command, argv in runs]
    out = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(todo)], cwd=REPO, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_help_and_argument_errors_import_no_numba():
    results = _probe([(command, argv) for command, argv, _ in LIGHT])
    for (command, argv, want), (_, _, status, heavy) in zip(LIGHT, results):
        assert status == want, (command, argv, status)
        assert heavy == [], f"{command} {' '.join(argv)} imported {heavy}"


def test_the_probe_sees_numba_when_a_command_imports_it(tmp_path):
    """Negative control: a command that runs a simulation imports the kernels, and the
    probe above says so."""
    out = tmp_path / "c.npz"
    (result,) = _probe([("particles", ["simulate", "chain", "--steps", "2", "-o", str(out)])])
    assert result[2] == 0 and "numba" in result[3] and "particles.kernels" in result[3]


# long-running commands (so that the Ctrl-C cannot come after the end)
def _long_commands(tmp):
    return {
        "raytrace": ["-m", "raytrace", "render", "scenes/spheres.json", "-o", f"{tmp}/o.png",
                     "--size", "1600", "1600", "--spp", "256"],
        "particles": ["-m", "particles", "simulate", "chain", "--steps", "100000000", "--every", "1000000",
                      "-o", f"{tmp}/c.npz"],
        "curves": ["-m", "curves", "obj", "examples/course/patch.spline", "--resolution", "1500",
                   "-o", f"{tmp}/p.obj"],
        "skinning": ["-m", "skinning", "preview", "--skel", "scenes/assets/skinning/figure.skel",
                     "--attach", "scenes/assets/skinning/figure.attach",
                     "--obj", "scenes/assets/skinning/figure.obj", "--size", "4096", "-o", f"{tmp}/f.png"],
    }


@pytest.mark.parametrize("command", list(CLIS))
def test_ctrl_c_while_numba_is_imported_exits_130_with_one_line(command, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    proc = start(_long_commands(out)[command], cwd=REPO)
    seen = interrupt_after(proc, r"\|\s+numba\.\w")           # an import inside numba's has finished
    status, lines = finish(proc)
    assert seen, lines
    assert status == 130, lines
    assert lines == [f"{command}: interrupted; nothing written"], lines
    assert list(out.iterdir()) == []


def _raytrace_starts(tmp):
    """``raytrace`` commands that run long enough for a Ctrl-C during their start to land
    before their end: the console script a user runs (its first import is ``raytrace.cli``)
    and ``python -m raytrace``."""
    script = str(pathlib.Path(sys.executable).with_name("raytrace"))
    render = ["render", "scenes/spheres.json", "-o", f"{tmp}/o.png", "--size", "1600", "1600", "--spp", "256"]
    return {
        "script render": [script, *render],
        "script view": [script, "view", "scenes/spheres.json", "--no-browser", "--save-dir", tmp],
        "script animate": [script, "animate", "scenes/animation/orbit.json", "-o", f"{tmp}/frames",
                           "--frames", "0:64", "--size", "800", "600"],
        "module render": ["-m", "raytrace", *render],
    }


@pytest.mark.parametrize("start_as", ["script render", "script view", "script animate", "module render"])
def test_ctrl_c_while_numpy_is_imported_exits_130_with_one_line(start_as, tmp_path):
    """Issue 39, row 15: NumPy is the first heavy import of every ``raytrace`` command; a
    Ctrl-C while it is imported (0.2-0.3 s after the start) ends with the one line, never
    a traceback: the entry module imports nothing heavy before the handler is in place."""
    out = tmp_path / "out"
    out.mkdir()
    proc = start(_raytrace_starts(str(out))[start_as], cwd=REPO)
    seen = interrupt_after(proc, r"\|\s+numpy\.\w")                # an import inside numpy's has finished
    status, lines = finish(proc)
    assert seen, lines
    assert status == 130, lines
    assert lines == ["raytrace: interrupted; nothing written"], lines
    assert list(out.iterdir()) == []


# a program started from a terminal: Python's own SIGINT handler, even where this test
# process ignores SIGINT (an xdist worker, a job a non-interactive shell put in the background)
_TERMINAL = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"

_TURNED = _TERMINAL + """
import signal, sys
from userio.cli import run

def body(convert):
    try:
        signal.raise_signal(signal.SIGINT)          # Ctrl-C, here and now
    except KeyboardInterrupt:
        if convert:                                 # what NumPy's import makes of it
            raise ImportError("PyCapsule_Import could not import module 'datetime'") from None
        raise
    return 0

sys.exit(run("tool", body, sys.argv[1] == "convert"))
"""


@pytest.mark.parametrize("how", ["convert", "plain"])
def test_an_interrupt_turned_into_another_error_is_still_130(how):
    """A library that turns the KeyboardInterrupt into another error (NumPy's import makes
    an ImportError of it) still ends as an interrupt, not as an internal error."""
    out = subprocess.run([sys.executable, "-c", _TURNED, how], cwd=REPO, capture_output=True, text=True,
                         timeout=120)
    assert (out.returncode, out.stderr) == (130, "tool: interrupted; nothing written\n")


def test_an_error_without_an_interrupt_is_still_a_bug():
    """Negative control: the same ImportError without a Ctrl-C is a bug (status 3)."""
    body = _TURNED.replace("signal.raise_signal(signal.SIGINT)", "raise KeyboardInterrupt")
    out = subprocess.run([sys.executable, "-c", body, "convert"], cwd=REPO, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 3 and out.stderr.startswith("tool: internal error (a bug"), out.stderr


_IN_EXEC = _TERMINAL + """
import sys
import userio.cli
from userio.cli import run

if sys.argv[1] == "unfixed":                        # the control: the mark is left in place
    userio.cli._forget_unhandled_interrupt = lambda: None

def body():
    # Ctrl-C inside a string exec, as when it lands in a dataclass or namedtuple Numba makes
    exec("import signal; signal.raise_signal(signal.SIGINT)", {})
    return 0

sys.exit(run("tool", body))
"""


@pytest.mark.parametrize("how", ["fixed", "unfixed"])
def test_an_interrupt_inside_a_string_exec_still_exits_130_under_dash_m(how, tmp_path):
    """CPython marks a KeyboardInterrupt that ends a string ``exec`` as unhandled even when
    it is caught, and ``python -m`` then ends by SIGINT (-2) instead of the status the
    program returns: the rare ``-2 == 130`` of the Ctrl-C-while-importing tests. ``run``
    clears the mark (status 130); the control without it shows CPython's -2, and fails
    once a CPython no longer does this (then the clearing can go)."""
    (tmp_path / "interrupted_tool.py").write_text(_IN_EXEC)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-m", "interrupted_tool", how], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.stderr == "tool: interrupted; nothing written\n"
    assert out.returncode == (130 if how == "fixed" else -signal.SIGINT)


def test_the_entry_module_imports_nothing_heavy():
    """What the console script imports before main() puts the handler in place: the
    standard library's light modules and the project's error types, never NumPy."""
    out = subprocess.run([sys.executable, "-c", "import sys; import raytrace.cli; "
                          "print(sorted(m for m in sys.modules if m.split('.')[0] in "
                          "('numpy', 'numba', 'raytrace', 'userio')))"],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert eval(out.stdout) == ["raytrace", "raytrace.cli", "raytrace.errors", "userio", "userio.cli",
                                "userio.errors", "userio.lazy"]


def _help_text(module, argv, capsys):
    import importlib
    with pytest.raises(SystemExit):
        importlib.import_module(module).main([*argv, "--help"])
    return " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("command,argv", [("raytrace", ["render"]), ("raytrace", ["animate"]),
                                          ("raytrace", ["merge"]), ("raytrace", ["regress"]),
                                          ("particles", ["simulate"]), ("skinning", ["preview"]),
                                          ("curves", ["plot"])])
def test_switches_show_no_default(command, argv, capsys):
    """A switch (--no-shadows, --quiet) has no value to default: "(default: True)" after
    "no shadow rays" told the opposite of what the switch does."""
    text = _help_text(CLIS[command], argv, capsys)
    assert "(default: True)" not in text and "(default: False)" not in text


@pytest.mark.parametrize("argv", [["render"], ["animate"]])
def test_scene_argument_names_every_format_read(argv, capsys):
    from raytrace.scene import load
    text = _help_text("raytrace.cli", argv, capsys)
    assert "scene file (.json, a course .txt, or a glTF .gltf/.glb)" in text
    source = __import__("inspect").getsource(load.read_scene)       # the reader takes each of them
    assert '".txt"' in source and '(".gltf", ".glb")' in source


def test_the_switch_check_sees_a_default_on_a_switch(capsys):
    """Negative control: argparse's own formatter prints the default of a switch."""
    import argparse
    p = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--no-shadows", dest="shadows", action="store_false", help="no shadow rays")
    assert "(default: True)" in " ".join(p.format_help().split())
