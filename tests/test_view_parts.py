"""The live preview's parts on their own: camera moves (closed forms), the files a scene
is made of, the polling watcher, the noise estimate."""
import json
import math
import os
import threading
import time

import numpy as np
import pytest

from raytrace.view import orbit
from raytrace.view.session import noise_estimate
from raytrace.view.watch import Watcher, load_guarded
from view_helpers import textured_scene, write_scene


# ------------------------------------------------------------------ camera moves
def _cam(center=(0.0, 0.0, 5.0), look_at=(0.0, 0.0, 0.0), up=(0.0, 1.0, 0.0)):
    return {"type": "perspective", "center": list(center), "look_at": list(look_at), "up": list(up), "fov": 40}


def test_orbit_yaw_turns_the_eye_about_up_keeping_the_distance():
    cam = orbit.orbit(_cam(), 90.0, 0.0)
    # eye on +z, up +y: 90 degrees to the camera's right is +x (right = forward x up = +x)
    np.testing.assert_allclose(cam["center"], [5.0, 0.0, 0.0], atol=1e-12)
    assert cam["look_at"] == [0.0, 0.0, 0.0] and cam["fov"] == 40 and cam["type"] == "perspective"
    for yaw, pitch in ((13.0, 0.0), (-170.0, 25.0), (400.0, -60.0)):
        moved = orbit.orbit(_cam(look_at=(1.0, 2.0, -3.0)), yaw, pitch)
        assert math.isclose(np.linalg.norm(np.subtract(moved["center"], [1.0, 2.0, -3.0])),
                            np.linalg.norm(np.subtract([0, 0, 5], [1.0, 2.0, -3.0])), rel_tol=1e-12)


def test_orbit_pitch_raises_the_eye_and_stops_short_of_the_pole():
    up = orbit.orbit(_cam(), 0.0, 30.0)
    np.testing.assert_allclose(up["center"], [0.0, 5 * math.sin(math.radians(30)), 5 * math.cos(math.radians(30))],
                               atol=1e-12)
    top = orbit.orbit(_cam(), 0.0, 200.0)            # clamped: 1 degree from the up axis
    polar = math.degrees(math.acos(top["center"][1] / 5.0))
    assert math.isclose(polar, orbit.MIN_POLAR_DEG, abs_tol=1e-9)
    # and a yaw there still works (the right axis is found from the clamped offset)
    assert np.all(np.isfinite(orbit.orbit(top, 45.0, 5.0)["center"]))


def test_orbit_back_and_forth_is_the_identity():
    cam = _cam(center=(2.0, 1.0, 4.0), look_at=(0.5, 0.2, -0.3), up=(0.0, 1.0, 0.2))
    there = orbit.orbit(orbit.orbit(cam, 37.0, 0.0), -37.0, 0.0)
    np.testing.assert_allclose(there["center"], cam["center"], atol=1e-12)


def test_dolly_scales_the_distance_along_the_view():
    cam = orbit.dolly(_cam(center=(1.0, 2.0, 3.0), look_at=(1.0, 0.0, 3.0)), 0.5)
    np.testing.assert_allclose(cam["center"], [1.0, 1.0, 3.0])
    assert orbit.dolly(_cam(), 0.0)["center"] != [0.0, 0.0, 0.0]     # never onto the look-at point


def test_look_at_form_of_a_direction_camera():
    cam = {"center": [0, 0, 10], "direction": [0, 0, -2], "up": [0, 1, 0], "fov": 30}
    out = orbit.look_at_form(cam, 7.5)
    assert "direction" not in out and out["fov"] == 30
    np.testing.assert_allclose(out["look_at"], [0.0, 0.0, 2.5])


def test_snippet_is_a_scene_camera_entry():
    cam = orbit.orbit(_cam(), 20.0, 10.0)
    back = json.loads(orbit.snippet(cam))["camera"]
    assert set(back) == set(cam)
    np.testing.assert_allclose(back["center"], cam["center"], rtol=1e-6)


# ------------------------------------------------------------------ the files of a scene
def _textured_mesh(folder):
    """An OBJ with an MTL that names a PNG texture (three files besides the scene)."""
    path = folder / "s.json"
    write_scene(path, textured_scene(folder))
    return path


def test_scene_files_are_the_mesh_its_mtl_and_its_texture(tmp_path):
    """``RenderScene.files``: what the preview watches, in the order read, and nothing of
    Python's, the package's or the kernel cache."""
    from raytrace.loading import load_scene
    path = _textured_mesh(tmp_path)
    files = load_scene(path).files
    assert files == tuple(tmp_path / name for name in ("s.json", "q.obj", "m.mtl", "tex/t.png"))
    (tmp_path / "m.mtl").write_text("newmtl painted\nKd 1 0 0\n")          # negative control: no texture
    assert load_scene(path).files == tuple(tmp_path / name for name in ("s.json", "q.obj", "m.mtl"))


def test_load_guarded_returns_the_error_and_what_was_read_before(tmp_path):
    from raytrace.errors import SceneError
    from raytrace.loading import load_scene
    path = _textured_mesh(tmp_path)
    scene, files, error = load_guarded(load_scene, path)                     # negative control: it loads
    assert error is None and files == list(scene.files)
    (tmp_path / "q.obj").write_text("mtllib m.mtl\nv 0 0 0\nf 1 2 3\n")      # a face of missing vertices
    scene, files, error = load_guarded(load_scene, path)
    assert scene is None and isinstance(error, SceneError)
    assert files[:2] == [tmp_path / "s.json", tmp_path / "q.obj"]


def test_reads_are_recorded_per_thread_and_nested(tmp_path):
    """``userio.reads``: a note goes to every record open on its own thread, none other,
    and outside a record it does nothing."""
    from userio.reads import note, recording
    started, release = threading.Event(), threading.Event()

    def other():
        started.wait(30)
        note(tmp_path / "b.txt")
        release.set()
    thread = threading.Thread(target=other)
    thread.start()
    with recording() as outer:
        with recording() as inner:
            started.set()
            assert release.wait(30)
            note(tmp_path / "a.txt")
        note(str(tmp_path / "c.txt"))
        note(tmp_path / "a.txt")                                              # once only
    thread.join()
    note(tmp_path / "d.txt")
    assert inner.paths == [tmp_path / "a.txt"]
    assert outer.paths == [tmp_path / "a.txt", tmp_path / "c.txt"]


# ------------------------------------------------------------------ the watcher
class _Changes:
    def __init__(self):
        self.seen = []
        self.cond = threading.Condition()

    def __call__(self, paths):
        with self.cond:
            self.seen.append(sorted(paths))
            self.cond.notify_all()

    def next(self, deadline=30.0):
        with self.cond:
            assert self.cond.wait_for(lambda: self.seen, deadline), "no change seen before the deadline"
            return self.seen.pop(0)


@pytest.mark.parametrize("how", ["rewrite", "replace", "delete", "touch"])
def test_watcher_sees_each_kind_of_change(tmp_path, how):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("one")
    b.write_text("two")
    changes = _Changes()
    w = Watcher(changes, interval=0.02)
    try:
        w.watch([a, b])
        if how == "rewrite":
            a.write_text("ONE")                 # same size: the time stamp tells
        elif how == "replace":                  # an editor's save: a new file renamed over
            (tmp_path / "a.tmp").write_text("one")
            os.replace(tmp_path / "a.tmp", a)
        elif how == "delete":
            a.unlink()
        else:
            st = a.stat()
            os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
        assert changes.next() == [a]
        b.write_text("three")                   # and later changes are seen too
        assert changes.next() == [b]
    finally:
        w.close()


def test_watcher_counts_a_change_made_before_watch_from_the_stamps_given(tmp_path):
    """A file edited while the scene was being read (stamped before) is a change."""
    from raytrace.view.watch import stamps
    a = tmp_path / "a.txt"
    a.write_text("one")
    before = stamps([a])
    a.write_text("one, edited")
    changes = _Changes()
    w = Watcher(changes, interval=0.02)
    try:
        w.watch([a], before)
        assert changes.next() == [a]
    finally:
        w.close()


def test_watcher_is_quiet_without_changes(tmp_path):
    """Negative control for the tests above: untouched files give no change in 20 polls."""
    a = tmp_path / "a.txt"
    a.write_text("one")
    changes = _Changes()
    w = Watcher(changes, interval=0.005)
    try:
        w.watch([a])
        start = w.polls
        end = time.monotonic() + 60
        while w.polls < start + 20 and time.monotonic() < end:   # however slow the machine
            time.sleep(0.01)
        assert w.polls >= start + 20
        assert changes.seen == []
    finally:
        w.close()


# ------------------------------------------------------------------ the noise estimate
def test_noise_estimate_closed_form():
    mean = np.full((4, 4, 3), 0.5)
    var = np.full((4, 4, 3), 0.01)          # standard error 0.1 over a mean of 0.5 -> 0.2 ...
    # ... but the denominator is at least twice the image's mean (1.0): 0.1
    assert math.isclose(noise_estimate(mean, var), 0.1)
    var[..., 1] = 0.04                      # the largest channel counts
    assert math.isclose(noise_estimate(mean, var), 0.2)
    mean[:2] = 10.0                         # the floor rises with the image's mean (5.25)
    assert math.isclose(noise_estimate(mean, var), 0.2 / 10.5)


def test_the_preview_watches_the_code_only_a_restart_loads():
    """An edit of raytrace/jit/ or raytrace/view/ is watched (and named as needing a
    restart), not ignored; a kernel file is reloaded without one (negative control)."""
    import raytrace
    from raytrace.view import code
    root = code.package_dir()
    watched = set(code.watched())
    for rel in ("jit/cache.py", "view/session.py", "kernels/bsdf.py"):
        assert root / rel in watched
    assert code.restart_needed([root / "jit" / "cache.py", root / "view" / "server.py"]) == \
        [root / "jit" / "cache.py", root / "view" / "server.py"]
    assert code.restart_needed([root / "kernels" / "bsdf.py"]) == []
    assert raytrace.__file__
