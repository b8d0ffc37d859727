"""The course's own ray-tracing scenes render (skipped when ../shared is absent)."""
import numpy as np
import pytest

import raytrace
from conftest import SHARED, shared_path

SCENES = ["scene01_plane", "scene02_cube", "scene03_sphere", "scene04_axes",
          "scene05_bunny_200", "scene06_bunny_1k"]


@pytest.mark.parametrize("name", SCENES)
def test_course_scene_renders(name):
    path = shared_path("course", "a4", f"{name}.txt")
    scene = raytrace.load_scene(path)
    image = raytrace.render(scene, width=48, height=48, spp=1)
    assert image.shape == (48, 48, 3)
    assert np.isfinite(image).all() and (image >= 0).all()
    bg = np.asarray(scene.setting("background", "color", [0, 0, 0]), np.float32)
    # something other than the background is in view
    assert (np.abs(image - bg).max(axis=2) > 0.05).mean() > 0.02


def test_scene01_values_at_known_pixels():
    """Pixel centres checked by hand against the course's shading model."""
    scene = raytrace.load_scene(shared_path("course", "a4", "scene01_plane.txt"))
    t, n = raytrace.render_aovs(scene, width=101, height=101)
    # the centre ray (0,0,10) -> (0,0,-1) hits the red unit sphere at z = 1: t = 9
    assert t[50, 50] == pytest.approx(9.0, abs=1e-9)
    assert n[50, 50] == pytest.approx([0, 0, 1], abs=1e-9)
    img = raytrace.render(scene, width=101, height=101, spp=1, bounces=0)
    # at (0,0,1): light at (0,5,5): L = (0,5,4)/sqrt(41), N.L = 4/sqrt(41), I = 0.9/(0.025*41)
    # R = (0,0,1): L.R = 4/sqrt(41); colour = ambient*kd + I*(N.L*kd + (L.R)^20*ks)
    nl = 4 / np.sqrt(41)
    i = 0.9 / (0.025 * 41)
    expected = 0.1 * np.array([1, 0, 0]) + i * (nl * np.array([1, 0, 0]) + nl ** 20 * np.ones(3))
    assert img[50, 50] == pytest.approx(expected, rel=1e-5)


def test_convert_command_round_trips(tmp_path):
    import subprocess
    import sys
    src = shared_path("course", "a4", "scene06_bunny_1k.txt")
    out = tmp_path / "sub" / "bunny.json"
    r = subprocess.run([sys.executable, "-m", "raytrace", "convert", str(src), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    a = raytrace.render(raytrace.load_scene(src), width=24, height=24)
    b = raytrace.render(raytrace.load_scene(out), width=24, height=24)
    assert np.array_equal(a, b)
    assert SHARED.exists()
