"""A kernel must always end (issue 43): grid media whose majorant dwarfs the density
used to spin for ever in delta tracking; now a path stops at the media step cap
(``raytrace.layout.MAX_NULL_COLLISIONS``), the render finishes and the CLI says how many
pixels had a path cut. And Ctrl-C stops a render within a second (each kernel call
takes a chunk of rows sized to well under a second).

Each render runs the CLI in a subprocess with a generous deadline: a hang fails the test
instead of holding up the suite.
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import interrupts
from raytrace.scene.volgrid import write_vol

REPO = __import__("pathlib").Path(__file__).resolve().parents[1]
DEADLINE_S = 300          # a render that hangs fails here (the kernels compile within it)
CAP_LINE = re.compile(r"^raytrace: (\d+) pixels had paths cut at the media step cap \(MAX_NULL_COLLISIONS\)$")


def _scene(sigma_t, scale, size=16):
    """A null cube of heterogeneous medium ``sigma_t`` (a grid spec), grey background."""
    return {
        "camera": {"center": [0, 0, 4], "look_at": [0, 0, 0], "fov": 30},
        "image": {"width": size, "height": size},
        "integrator": {"type": "path", "max_depth": 4},
        "background": {"color": [0.5, 0.5, 0.5]},
        "materials": {"boundary": {"type": "null"}},
        "media": {"smoke": {"type": "heterogeneous", "sigma_t": sigma_t, "scale": scale, "albedo": 0.8}},
        "objects": [{"type": "cube", "material": "boundary", "interior": "smoke"}],
    }


def _write(folder, scene, grid=None):
    if grid is not None:
        write_vol(folder / "s.vol", np.asarray(grid, np.float32))
    (folder / "scene.json").write_text(json.dumps(scene))
    return folder / "scene.json"


def _render(scene_path, out, *extra):
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "raytrace", "render", str(scene_path), "-o", str(out), *extra],
                          cwd=REPO, capture_output=True, text=True, timeout=DEADLINE_S)
    return proc, time.monotonic() - started


def _capped(stderr):
    counts = [int(m.group(1)) for line in stderr.splitlines() if (m := CAP_LINE.match(line))]
    assert len(counts) <= 1, stderr
    return counts[0] if counts else 0


@pytest.mark.parametrize("case", ["vol_1e30", "data_1e6_scale_1e3"])
def test_formerly_hanging_grids_end_and_say_how_many_pixels_were_cut(case, tmp_path):
    """Issue 43's two hanging inputs: a 3x1x1 .vol of [0, 1e30, 0]; "data" [0, 1e6, 0] with
    scale 1e3 (1e9 null collisions per unit length). Both finish, write the image, and
    print the count of pixels with a capped path (> 0)."""
    if case == "vol_1e30":
        path = _write(tmp_path, _scene({"type": "grid", "file": "s.vol"}, 1.0), grid=[[[0.0, 1e30, 0.0]]])
    else:
        path = _write(tmp_path, _scene({"type": "grid", "data": [[[0, 1e6, 0]]]}, 1e3))
    proc, seconds = _render(path, tmp_path / "out.png")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out.png").exists()
    n = _capped(proc.stderr)
    assert 0 < n <= 16 * 16, proc.stderr
    print(f"{case}: {seconds:.1f} s, {n} pixels capped")


def test_an_ordinary_grid_medium_prints_no_cap_line(tmp_path):
    """Negative control: the same cube of an ordinary grid (ones, scale 2) has no capped path."""
    path = _write(tmp_path, _scene({"type": "grid", "file": "s.vol"}, 2.0), grid=np.ones((3, 3, 3)))
    proc, _ = _render(path, tmp_path / "out.png")
    assert proc.returncode == 0, proc.stderr
    assert _capped(proc.stderr) == 0 and "step cap" not in proc.stderr, proc.stderr


# surfaces only, a pass of several seconds: paths of up to 1000 bounces inside a white sphere
LONG_PASS = {"camera": {"center": [0, 0, 0], "look_at": [0, 0, -1], "fov": 60},
             "image": {"width": 144, "height": 144},
             "integrator": {"type": "path", "max_depth": 1000, "rr_depth": 1000},
             "lights": [{"type": "point", "position": [0.3, 0.3, 0.3], "color": [1, 1, 1]}],
             "materials": {"white": {"type": "diffuse", "albedo": [0.95, 0.95, 0.95]}},
             "objects": [{"type": "sphere", "radius": 2, "material": "white"}]}


@pytest.mark.parametrize("kind", ["media", "surfaces", "adaptive"])
def test_ctrl_c_stops_a_render_within_a_second(kind, tmp_path):
    """A long render (minutes of passes) gets SIGINT once its first pass is done (the
    readiness marker: the partial image it writes after each pass, --write-partial 0): it
    exits 130 within 1.5 s of the signal, with one line on stderr. ``media``: a grid
    medium; ``surfaces``: a scene without media whose one pass takes seconds (a kernel
    call cannot be stopped midway: the pass is taken in chunks of rows); ``adaptive``: the
    same with a noise threshold (its pilot pass of 16 samples per pixel takes a minute)."""
    if kind == "media":
        scene = _scene({"type": "grid", "file": "s.vol"}, 4.0, size=96)
        path = _write(tmp_path, scene, grid=np.random.default_rng(1).random((16, 16, 16)))
    else:
        path = _write(tmp_path, LONG_PASS)
    out = tmp_path / "long.png"
    samples = ["--noise-threshold", "0.01", "--max-spp", "65536"] if kind == "adaptive" else ["--spp", "65536"]
    proc = interrupts.start(["-m", "raytrace", "render", str(path), "-o", str(out), *samples,
                             "--write-partial", "0"], cwd=REPO)
    try:
        end = time.monotonic() + DEADLINE_S
        while not out.exists() and proc.poll() is None and time.monotonic() < end:
            time.sleep(0.01)
        assert out.exists() and proc.poll() is None, "\n".join(proc.lines)
        before = len([line for line in proc.lines if not interrupts.IMPORT_LINE.match(line)])
        sent = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        latency = time.monotonic() - sent
    finally:
        status, lines = interrupts.finish(proc, timeout=30)
    after = lines[before:]
    print(f"SIGINT latency {latency:.2f} s; {after}")
    assert status == 130, lines
    assert latency < 1.5, (latency, lines)
    assert len(after) == 1 and after[0].startswith("raytrace: interrupted"), lines


def test_the_nan_view_paints_the_pixels_cut_at_the_step_cap(tmp_path):
    """The ``nan`` view shows where paths were cut: those pixels cyan, as many as
    ``info.capped`` counts and the view's ``capped`` data holds; its report counts them.
    Control: an ordinary grid paints none and says nothing of the cap."""
    import raytrace
    from raytrace import views
    cut = raytrace.load_scene(_write(tmp_path, _scene({"type": "grid", "file": "s.vol"}, 1.0),
                                     grid=[[[0.0, 1e30, 0.0]]]))
    v = views.render_view(cut, "nan", spp=1)
    painted = (v.image == views.CUT).all(axis=-1)
    assert painted.sum() == (v.data["capped"] > 0).sum() > 0
    assert "cut at the media step cap" in v.report
    plain_dir = tmp_path / "plain"
    plain_dir.mkdir()
    plain = raytrace.load_scene(_write(plain_dir, _scene({"type": "grid", "file": "s.vol"}, 2.0),
                                       grid=np.ones((3, 3, 3))))
    w = views.render_view(plain, "nan", spp=1)
    assert not (w.image == views.CUT).all(axis=-1).any() and not w.data["capped"].any()
    assert "step cap" not in w.report
