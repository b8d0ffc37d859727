"""The kernels under NUMBA_BOUNDSCHECK=1: an out-of-bounds read raises IndexError instead
of reading whatever memory lies there (grey+alpha cube-map faces once did exactly that
in the Whitted kernel). Small scenes that reach every kernel: both integrators with a cube
map, an image texture, a mesh, a sweep, spheres, a plane, a group; AOVs; a course scene.

Runs in a fresh process with its own (empty) Numba cache, because Numba's cache does not
record whether a kernel was compiled with bounds checks.
"""
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import pathlib, sys
    import numpy as np
    import imageio.v3 as iio
    sys.path.insert(0, sys.argv[2])
    import test_hostile_raytrace as h
    import raytrace
    from numba import njit

    @njit
    def past_the_end(a):            # the probe: bounds checks are really on in this process
        return a[5]
    try:
        past_the_end(np.zeros(3))
        raise SystemExit("NUMBA_BOUNDSCHECK=1 had no effect")
    except IndexError:
        pass
    folder = h.write_inputs(pathlib.Path(sys.argv[1]))
    for face in ("left", "right", "up", "down", "front", "back"):       # grey + alpha faces
        iio.imwrite(folder / "sky" / f"{face}.png", np.full((3, 3, 2), 200, np.uint8))
    scene = raytrace.load_scene(folder / "scene.json")
    for integrator in ("whitted", "path"):
        for spp in (1, 4):
            img = raytrace.render(scene, integrator=integrator, width=9, height=7, spp=spp, filter="gaussian")
            assert np.isfinite(img).all() and img.max() > 0, integrator
    t, n = raytrace.render_aovs(scene, 9, 7)
    assert np.isfinite(t).any()
    course = raytrace.load_scene(folder / "course.txt")
    for integrator in ("whitted", "path"):
        assert np.isfinite(raytrace.render(course, integrator=integrator, width=6, height=6, spp=2)).all()
    print("ok")
""")


def test_kernels_stay_in_bounds(tmp_path):
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    tests_dir = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "in"), tests_dir],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]


def test_bounds_checked_kernels_get_their_own_cache_folder(monkeypatch):
    from raytrace.jit import modes
    monkeypatch.delenv("NUMBA_BOUNDSCHECK", raising=False)
    plain = modes.mode_tag()
    monkeypatch.setenv("NUMBA_BOUNDSCHECK", "1")
    assert modes.mode_tag() == plain + "-boundscheck"
