"""A kernel edited into something Numba cannot compile: the command line names the user's
file, line and expression in a few lines, exits with status 2, and gives Numba's whole
message only when asked (raytrace/compile/errors.py). Edits are made on a copy of the
package."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from raytrace.jit.errors import short_text

REPO = pathlib.Path(__file__).resolve().parents[1]
BSDF = "raytrace/kernels/bsdf.py"
# (what the edit does, text whose first occurrence is in bsdf_eval, replacement, words the
# message must have)
EDITS = {
    "misspelt name": ("        d = ggx_d(alpha, hx, hy, hz)\n", "        d = ggx_dd(alpha, hx, hy, hz)\n",
                      "name 'ggx_dd' is not defined (misspelt, or not imported into that file?)"),
    "float plus tuple": ("        base = d * g1i / (4.0 * wiz)\n", "        base = d * g1i / (4.0 * wiz) + (hx, hy, hz)\n",
                         "cannot add float64 and UniTuple(float64 x 3)"),
    "wrong argument count": ("        g1i = ggx_g1(alpha, wix, wiy, wiz, i_dot_h)\n",
                             "        g1i = ggx_g1(alpha, wix, wiy, wiz)\n",
                             "ggx_g1(alpha, wx, wy, wz, w_dot_m) called with 4 arguments: "
                             "missing a required argument: 'w_dot_m'"),
}
SCENE = {"camera": {"center": [0, 1, 3], "look_at": [0, 0, 0], "up": [0, 1, 0]},
         "image": {"width": 4, "height": 4, "spp": 1},
         "integrator": {"type": "path"},
         "materials": {"metal": {"type": "rough_conductor", "alpha": 0.2}},
         "lights": [{"type": "point", "position": [0, 3, 1], "color": [10, 10, 10]}],
         "objects": [{"type": "sphere", "radius": 0.5, "material": "metal"}]}


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    root = tmp_path_factory.mktemp("edited")
    for package in ("raytrace", "userio"):
        shutil.copytree(REPO / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "scene.json").write_text(json.dumps(SCENE))
    return root


def render(root, *extra, env=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("RAYTRACE_")}
    e.update(env or {}, PYTHONPATH=str(root))
    return subprocess.run([sys.executable, "-m", "raytrace", *extra, "render", "scene.json", "-o", "out.png", "-q"],
                          cwd=root, env=e, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("case", list(EDITS))
def test_a_typing_error_names_the_file_line_and_expression(copy, case):
    old, new, words = EDITS[case]
    path = copy / BSDF
    original = path.read_text()
    assert original.index(old) < original.index("def bsdf_sample(")     # the edit is in bsdf_eval
    path.write_text(original.replace(old, new, 1))
    line = original[:original.index(old)].count("\n") + 1
    try:
        r = render(copy)
        full = render(copy, "--numba-errors")
        env_full = render(copy, env={"RAYTRACE_NUMBA_ERRORS": "full"})
    finally:
        path.write_text(original)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, r.stderr
    assert lines[0] == f"raytrace: error: kernel code does not compile: {BSDF}, line {line}, in bsdf_eval"
    assert lines[1] == "    " + new.strip()
    assert lines[2] == words
    assert "called from raytrace/kernels/path.py" in r.stderr and "RAYTRACE_NUMBA_ERRORS=full" in lines[-1]
    assert len(lines) <= 6 and "Traceback" not in r.stderr and "During:" not in r.stderr
    assert not (copy / "out.png").exists()
    for verbose in (full, env_full):              # Numba's own text, one flag away
        assert verbose.returncode == 2 and verbose.stderr.startswith(r.stderr.strip().splitlines()[0])
        assert "During:" in verbose.stderr and "Traceback" not in verbose.stderr


def test_the_short_text_falls_back_to_the_first_line_it_understands():
    """A message without a file block (an internal Numba failure) still gives one line."""
    assert short_text("Failed in nopython mode pipeline (step: x)\nSomething odd happened\nDuring: y") == \
        "kernel code does not compile: Something odd happened"
