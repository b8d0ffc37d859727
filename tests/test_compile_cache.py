"""Kernels cached by dependency key (``raytrace/jit/``): an edit recompiles what it
touched and nothing else, never leaves a stale kernel, a comment compiles nothing, and
undoing an edit gives the original image bit for bit. The edits are made on a copy of
the package, which shares the compiled kernels it has not changed with this checkout
(the cache's subfolders are named within the package)."""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]

# a path-traced Cornell box whose back wall has a checkerboard texture: the texture lookup
# (raytrace/textures.py) is two files away from the integrator (kernels/path.py ->
# kernels/surface.py -> textures.py)
CHECKER = {"type": "checkerboard", "color0": [0.8, 0.2, 0.1], "color1": [0.1, 0.3, 0.9], "scale": [3, 3]}
SWAPPED = dict(CHECKER, color0=CHECKER["color1"], color1=CHECKER["color0"])
# the edit: the lookup gives color1 where it gave color0 (the same image as swapping the
# scene's colours with the unedited code)
LOOKUP = "        c = T_C0 if mu == mv else T_C1\n"
LOOKUP_EDITED = "        c = T_C1 if mu == mv else T_C0\n"

RENDER = """
import json, sys
import numpy as np
from numba.core import event
with event.install_recorder("numba:compile") as rec:
    import raytrace
    scene = raytrace.load_scene(sys.argv[1])
    image = raytrace.render(scene, progress=False)
np.save(sys.argv[2], image)
compiled = sorted({ev.data["dispatcher"].py_func.__module__ + "." + ev.data["dispatcher"].py_func.__qualname__
                   for _, ev in rec.buffer if ev.is_start and hasattr(ev.data["dispatcher"], "py_func")})
print(json.dumps([raytrace.__file__, compiled]))
"""


def scene(texture):
    data = json.loads((REPO / "scenes" / "cornell_box.json").read_text())
    data.pop("$schema", None)
    data["image"] = {"width": 24, "height": 24, "spp": 4, "filter": "box"}
    data["materials"]["checker"] = {"type": "diffuse", "albedo": texture}
    for obj in data["objects"]:
        if obj.get("name") == "back":
            obj["material"] = "checker"
    return data


def render(root, scene_file, out):
    """(image, raytrace functions compiled) of ``scene_file`` rendered by the package at
    ``root``, in a fresh process, with this session's kernel cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAYTRACE_")}
    env["PYTHONPATH"] = str(root)
    r = subprocess.run([sys.executable, "-c", RENDER, str(scene_file), str(out)], cwd=out.parent, env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    where, compiled = json.loads(r.stdout.strip().splitlines()[-1])
    assert pathlib.Path(where).is_relative_to(root)
    return np.load(out), [name for name in compiled if name.startswith("raytrace.")]


def copy_package(dest):
    for package in ("raytrace", "userio"):
        shutil.copytree(REPO / package, dest / package, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def test_edits_recompile_what_they_touch_and_never_leave_a_stale_kernel(tmp_path):
    root = copy_package(tmp_path / "copy")
    plain, swapped = tmp_path / "plain.json", tmp_path / "swapped.json"
    plain.write_text(json.dumps(scene(CHECKER)))
    swapped.write_text(json.dumps(scene(SWAPPED)))
    base, _ = render(root, plain, tmp_path / "base.npy")
    want, _ = render(REPO, swapped, tmp_path / "want.npy")
    assert not np.array_equal(base, want)             # the edit below must show

    # 1. a body edit of a leaf two files away from the integrator
    textures = root / "raytrace" / "textures.py"
    original = textures.read_text()
    assert original.count(LOOKUP) == 1
    # (an unused local that differs from run to run: each run of this test compiles the
    # edit anew, rather than finding it compiled by the last run)
    unique = f"        _this_run = {time.time_ns()}\n"
    textures.write_text(original.replace(LOOKUP, LOOKUP_EDITED + unique))
    edited, compiled = render(root, plain, tmp_path / "edited.npy")
    assert np.array_equal(edited, want)                # exactly what the edit says
    assert "raytrace.textures.texture_rgb" in compiled and "raytrace.kernels.path.path_rows" in compiled
    # (an overload's implementation, "<locals>", is compiled anew inside each caller's compile)
    untouched = [n for n in compiled if n.startswith(("raytrace.accel.", "raytrace.kernels.bsdf",
                                                        "raytrace.kernels.emitters")) and "<locals>" not in n]
    assert not untouched, untouched                    # what the edit did not reach stays cached

    # 2. comments, a docstring and blank lines (moving every kernel below them) compile nothing
    bsdf = root / "raytrace" / "kernels" / "bsdf.py"
    text = bsdf.read_text()
    bsdf.write_text(text.replace('"""BSDFs of the path tracer', '# a comment\n\n"""The BSDFs of the path tracer', 1)
                    .replace("    if mz <= 0.0:\n", "    # below the surface\n    if mz <= 0.0:\n", 1))
    textures.write_text(textures.read_text().replace('"""Linear RGB of texture', '"""The linear RGB of texture'))
    again, compiled = render(root, plain, tmp_path / "again.npy")
    assert compiled == [] and np.array_equal(again, edited)

    # 3. undoing the edit finds the original kernels (nothing compiles) and the original image
    textures.write_text(original)
    undone, compiled = render(root, plain, tmp_path / "undone.npy")
    assert compiled == [] and np.array_equal(undone, base)


CALLER = """
from numba import njit
from callee import leaf

@njit(cache=True)
def kernel(x):
    return leaf(x) + 1.0
"""
CALLEE = """
from numba import njit

@njit(cache=True)
def leaf(x):
    return x * {factor}
"""
RUN = "import caller, sys; print(caller.kernel(1.0))"


def test_numba_own_cache_would_leave_a_stale_kernel(tmp_path):
    """Negative control: the check above catches a stale cache. Numba's own cache, keyed
    by each function's own file, keeps the caller compiled with the old callee from
    another file (1 * 2 + 1 = 3 instead of 1 * 3 + 1 = 4); a fresh compile sees the edit."""
    (tmp_path / "caller.py").write_text(CALLER)
    (tmp_path / "callee.py").write_text(CALLEE.format(factor=2.0))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAYTRACE_", "NUMBA_"))}
    env.update(NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(tmp_path))

    def run():
        r = subprocess.run([sys.executable, "-c", RUN], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        return float(r.stdout)

    assert run() == 3.0
    (tmp_path / "callee.py").write_text(CALLEE.format(factor=3.0))
    assert run() == 3.0                                # stale: the edit does not show
    shutil.rmtree(tmp_path / "cache")
    assert run() == 4.0                                # what the edit says
