"""Every command the README shows runs as written on a checkout without ../shared.

The commands are the README's indented code lines that start with ``raytrace`` or
``python -m``. Each input they name must be in the repository (or be written by an
earlier command), each output must go to ``out/`` (ignored by git; never ``renders/``,
which only ``make render`` / ``make renders`` write; no two commands write the same
file), and the commands run: here with ``out/`` redirected to a temporary folder.
"""
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
OUTPUT_OPTIONS = {"-o", "--output", "--normals", "--gif", "--report"}
INPUT_SUFFIXES = {".json", ".txt", ".spline", ".swp", ".obj", ".skel", ".attach", ".png"}


def readme_commands():
    """(tokens, text) of each indented code line that runs one of the project's tools."""
    out = []
    for line in README.splitlines():
        m = re.match(r" {4}((?:raytrace|python -m) .*?)\s*(?:#.*)?$", line)
        if m:
            out.append((shlex.split(m.group(1)), m.group(1)))
    return out


def split_paths(tokens):
    """(inputs, outputs): path-like arguments, outputs being the values of -o, --normals,
    --gif, --report and the FILE of --depth FILE MIN MAX."""
    inputs, outputs = [], []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in OUTPUT_OPTIONS or tok == "--depth":
            outputs.append(tokens[i + 1])
            i += 4 if tok == "--depth" else 2
            continue
        if not tok.startswith("-") and pathlib.PurePosixPath(tok).suffix in INPUT_SUFFIXES:
            inputs.append(tok)
        i += 1
    return inputs, outputs


COMMANDS = readme_commands()


def test_readme_shows_commands_for_every_tool():
    tools = {tokens[0] if tokens[0] == "raytrace" else tokens[2] for tokens, _ in COMMANDS}
    assert {"raytrace", "curves", "skinning", "particles"} <= tools
    assert "make render" in README and "make test" in README
    assert ". .venv/bin/activate" in README


def test_readme_commands_use_repository_files_and_write_to_out():
    written = set()
    for tokens, text in COMMANDS:
        assert "../shared" not in text and "course/a" not in text, text
        inputs, outputs = split_paths(tokens)
        for path in inputs:
            assert (REPO / path).exists() or path in written, f"{text}: {path} is not in the repository"
            assert not pathlib.PurePosixPath(path).is_absolute()
        for path in outputs:
            assert path.startswith("out/"), f"{text}: writes {path} outside out/"
        written.update(outputs)
    assert "out/" in (REPO / ".gitignore").read_text().split()


def test_readme_commands_write_distinct_files():
    # one file per example, so that running them in order leaves each one's output
    outputs = [path for tokens, _ in COMMANDS for path in split_paths(tokens)[1]]
    assert len(outputs) > 10
    assert sorted({p for p in outputs if outputs.count(p) > 1}) == []


def test_readme_python_example_names_existing_files():
    block = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    names = re.findall(r'"([\w./-]+\.(?:json|png|pfm))"', block)
    assert "scenes/showcase.json" in names
    for name in names:
        assert (REPO / name).exists() or name.startswith("out/"), name


def _run_viewer(tokens, text):
    """A ``raytrace view`` command runs until stopped: it must serve its first finished
    image, then stop on Ctrl-C with status 130."""
    from view_helpers import Viewer
    viewer = Viewer(*tokens[2:])
    try:
        state = viewer.wait(lambda s: s["frame"] is not None and s["frame"]["stage"] == "done")
        assert state["error"] == "", text
        code, lines = viewer.interrupt()
        assert code == 130, f"{text}\n{lines}"
    finally:
        viewer.kill()


def test_readme_commands_run(tmp_path):
    out = tmp_path / "out"
    for tokens, text in COMMANDS:
        if tokens[:2] == ["raytrace", "view"]:
            _run_viewer(tokens, text)
            continue
        argv = [str(out / t[4:]) if t.startswith("out/") else t for t in tokens]
        argv = [sys.executable, "-m", "raytrace", *argv[1:]] if argv[0] == "raytrace" \
            else [sys.executable, *argv[1:]]
        r = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
        assert r.returncode == 0, f"{text}\n{r.stderr[-2000:]}"
        for path in split_paths(tokens)[1]:
            assert (out / path[4:]).stat().st_size > 0, f"{text}: no {path}"
