"""The live preview's render loop in this process (:class:`raytrace.view.session.Session`):
what it publishes, how it restarts, and that its images are the renderer's."""
import json

import numpy as np
import pytest

import raytrace
from raytrace.errors import SceneError
from raytrace.view.session import Session
from view_helpers import path_scene, probe_scene, textured_scene, wait_state, write_png, write_scene


@pytest.fixture
def open_session():
    sessions = []

    def make(path, **overrides):
        s = Session(path, overrides)
        sessions.append(s)
        return s
    yield make
    for s in sessions:
        s.close()


def _done(generation=None):
    def ok(state):
        f = state["frame"]
        return f is not None and f["stage"] == "done" and f["current"] and \
            (generation is None or f["generation"] >= generation)
    return ok


def test_path_preview_refines_to_the_cli_image_bit_for_bit(tmp_path, open_session):
    path = tmp_path / "p.json"
    write_scene(path, path_scene(spp=8))
    session = open_session(path)
    seen = []
    state = wait_state(session, lambda s: seen.append(s["frame"]) or _done()(s))
    frames = [f for f in seen if f is not None]
    assert frames[0]["spp"] >= 1 and frames[-1]["spp"] == 8 and frames[-1]["spp_target"] == 8
    assert all(f["integrator"] == "path" for f in frames)
    assert [f["stage"] for f in frames if f["stage"] != "done"] == ["refining"] * (len(frames) - 1)
    want = raytrace.render(raytrace.load_scene(path))
    np.testing.assert_array_equal(session.frame.image, np.asarray(want))
    assert state["frame"]["noise"] is not None and state["frame"]["noise"] > 0


def test_path_preview_samples_adaptively_when_the_scene_asks(tmp_path, open_session):
    """The preview runs render()'s loop: a scene with a noise threshold is sampled
    adaptively (fewer samples on average than its max_spp), and the last frame is the
    command line's image bit for bit."""
    path = tmp_path / "a.json"
    data = path_scene(spp=8)
    data["integrator"].update(noise_threshold=0.2, min_spp=4, max_spp=64)
    write_scene(path, data)
    session = open_session(path)
    state = wait_state(session, _done())
    info = session.frame.info
    want = raytrace.render(raytrace.load_scene(path))
    np.testing.assert_array_equal(session.frame.image, np.asarray(want))
    assert info.stopped_by == "noise" and info.spp_mean == want.info.spp_mean and 4 <= info.spp_mean < 64
    assert state["frame"]["spp_target"] == 64
    write_scene(path, path_scene(spp=8))                  # negative control: no threshold, uniform
    wait_state(session, _done(state["generation"] + 1))
    assert session.frame.info.stopped_by == "spp" and session.frame.info.spp_mean == 8.0


def test_path_noise_estimate_falls_with_samples(tmp_path, open_session):
    path = tmp_path / "p.json"
    write_scene(path, path_scene(spp=64))
    session = open_session(path)
    noises = {}
    wait_state(session, lambda s: (s["frame"] and s["frame"]["noise"] is not None and
                                   noises.setdefault(s["frame"]["spp"], s["frame"]["noise"])) and _done()(s))
    low, high = min(noises), max(noises)
    assert high == 64
    if low < 16:       # published early enough to compare: 1/sqrt(spp), within a generous factor
        assert noises[high] < noises[low] * (low / high) ** 0.5 * 2.0
    assert noises[high] < 0.5


def test_whitted_shows_a_quarter_size_preview_first(tmp_path, open_session):
    path = tmp_path / "w.json"
    write_scene(path, probe_scene(size=(64, 48)))
    session = open_session(path)
    stages = []
    wait_state(session, lambda s: (s["frame"] and stages.append(s["frame"]["stage"])) or _done()(s))
    assert stages[0] == "preview" and stages[-1] == "done"
    want = raytrace.render(raytrace.load_scene(path))
    np.testing.assert_array_equal(session.frame.image, np.asarray(want))


def test_an_edit_changes_only_the_pixels_of_the_edited_sphere(tmp_path, open_session):
    path = tmp_path / "w.json"
    write_scene(path, probe_scene())
    session = open_session(path)
    first = wait_state(session, _done())
    before = session.frame.image.copy()
    left = session.pixel(14, 24)
    assert left["object"].endswith("(left_ball)") and left["material"] == "left"
    write_scene(path, probe_scene(left=(0.1, 0.9, 0.1)))
    wait_state(session, _done(first["generation"] + 1))
    after = session.frame.image
    ids = raytrace.render(raytrace.load_scene(path), aovs=["object_id"]).aovs["object_id"]
    names = raytrace.load_scene(path).object_names
    left_id = [k for k, n in enumerate(names) if n.endswith("(left_ball)")][0]
    changed = np.any(before != after, axis=-1)
    on_left = ids == left_id
    assert changed.sum() > 100                       # the probe reaches the picture
    assert not np.any(changed & ~on_left)            # nothing else moved, bit for bit
    assert np.all(changed[on_left])                  # and every pixel of the sphere changed
    assert after[24, 14, 1] > after[24, 14, 0]       # to green


def test_a_broken_edit_keeps_the_last_image_and_the_fix_resumes(tmp_path, open_session):
    path = tmp_path / "w.json"
    write_scene(path, probe_scene())
    session = open_session(path)
    good = wait_state(session, _done())
    image, frame_id = session.frame.image.copy(), session.frame.id
    text = json.dumps(probe_scene(), indent=1)
    write_scene(path, text[:len(text) // 2])                       # saved half-way through typing
    broken = wait_state(session, lambda s: s["error"] != "", errors=True)
    assert broken["error"].startswith(f"{path}:") and "\n" not in broken["error"]
    assert "Traceback" not in broken["error"]
    assert session.frame.id == frame_id and np.array_equal(session.frame.image, image)
    bad = probe_scene()
    bad["objects"][0]["radius"] = -1                               # valid JSON, bad value
    write_scene(path, bad)
    field = wait_state(session, lambda s: "radius" in s["error"], errors=True)
    assert field["error"].startswith(f"{path}: objects[0].radius:")
    write_scene(path, probe_scene(right=(0.9, 0.9, 0.1)))
    fixed = wait_state(session, lambda s: s["error"] == "" and _done(good["generation"] + 3)(s), errors=True)
    assert fixed["frame"]["id"] > frame_id
    assert not np.array_equal(session.frame.image, image)


def test_assets_are_watched(tmp_path, open_session):
    path = tmp_path / "t.json"
    write_scene(path, textured_scene(tmp_path, shade=200))
    session = open_session(path)
    first = wait_state(session, _done())
    assert {p.split("/")[-1] for p in first["watched"]} == {"t.json", "q.obj", "m.mtl", "t.png"}
    before = session.frame.image.copy()
    write_png(tmp_path / "tex" / "t.png", 60)                      # the texture only
    wait_state(session, _done(first["generation"] + 1))
    after = session.frame.image
    centre = (12, 12)
    assert after[centre].mean() < before[centre].mean() * 0.5
    (tmp_path / "m.mtl").write_text("newmtl painted\nKd 1 0 0\nmap_Kd tex/t.png\n")   # the MTL, in place
    second = session.state()["generation"]
    wait_state(session, _done(second + 1))
    assert session.frame.image[centre][1] == 0 and session.frame.image[centre][0] > 0


def test_an_environment_map_edit_re_renders(tmp_path, open_session):
    """The preview watches ``RenderScene.files``: the scene, and the map its background
    reads; a new map re-renders, brighter by the map's factor where the sky is seen."""
    from raytrace.envmap import hdr_bytes
    sky = tmp_path / "sky.hdr"
    sky.write_bytes(hdr_bytes(np.full((8, 16, 3), 0.25, np.float32)))
    path = tmp_path / "e.json"
    data = path_scene(spp=2)
    data["background"] = {"envmap": "sky.hdr"}
    write_scene(path, data)
    session = open_session(path)
    first = wait_state(session, _done())
    assert sorted(first["watched"]) == sorted(str(p) for p in raytrace.load_scene(path).files)
    assert {p.split("/")[-1] for p in first["watched"]} == {"e.json", "sky.hdr"}
    before = session.frame.image.copy()
    sky.write_bytes(hdr_bytes(np.full((8, 16, 3), 1.0, np.float32)))      # 4 times brighter
    wait_state(session, _done(first["generation"] + 1))
    after = session.frame.image
    np.testing.assert_allclose(after[0, 0], 4.0 * before[0, 0], rtol=1e-6)    # a corner sees the sky only
    assert np.array_equal(after, np.asarray(raytrace.render(raytrace.load_scene(path))))


def test_camera_orbit_dolly_and_reset(tmp_path, open_session):
    path = tmp_path / "w.json"
    write_scene(path, probe_scene())
    session = open_session(path)
    first = wait_state(session, _done())
    original = session.frame.image.copy()
    assert first["camera"]["center"] == [0.0, 0.0, 6.0] and not first["camera_overridden"]
    session.orbit(40.0, 0.0)
    moved = wait_state(session, _done(first["generation"] + 1))
    assert moved["camera_overridden"] and moved["camera"]["center"][0] > 3.0
    assert not np.array_equal(session.frame.image, original)
    session.dolly(0.5)
    near = wait_state(session, _done(moved["generation"] + 1))
    assert np.isclose(np.linalg.norm(near["camera"]["center"]), 3.0)
    assert json.loads(path.read_text())["camera"]["center"] == [0, 0, 6]       # the file is untouched
    session.reset_camera()
    back = wait_state(session, _done(near["generation"] + 1))
    assert not back["camera_overridden"]
    np.testing.assert_array_equal(session.frame.image, original)
    with pytest.raises(SceneError, match="dolly"):
        session.dolly(-1.0)
    with pytest.raises(SceneError, match="camera.up"):
        session.set_camera({"center": [0, 0, 5], "look_at": [0, 0, 0], "up": [0, 0, 1]})


def test_camera_kept_across_file_edits(tmp_path, open_session):
    path = tmp_path / "w.json"
    write_scene(path, probe_scene())
    session = open_session(path)
    first = wait_state(session, _done())
    session.orbit(30.0, 10.0)
    moved = wait_state(session, _done(first["generation"] + 1))
    write_scene(path, probe_scene(left=(0.2, 0.2, 0.9)))
    edited = wait_state(session, _done(moved["generation"] + 1))
    assert edited["camera"] == moved["camera"] and edited["camera_overridden"]


def test_debug_views_and_back(tmp_path, open_session):
    path = tmp_path / "w.json"
    write_scene(path, probe_scene())
    session = open_session(path)
    first = wait_state(session, _done())
    colour = session.frame.image.copy()
    session.set_mode("objects")
    view = wait_state(session, _done(first["generation"] + 1))
    assert view["frame"]["mode"] == "objects" and "2 objects" in view["frame"]["report"]
    objects = raytrace.views.render_view(raytrace.load_scene(path), "objects")
    np.testing.assert_array_equal(session.frame.image, objects.image)
    session.set_mode("nan")
    nan = wait_state(session, _done(view["generation"] + 1))
    assert nan["frame"]["report"].startswith("no NaN or infinite samples")
    session.set_mode("color")
    back = wait_state(session, _done(nan["generation"] + 1))
    assert back["frame"]["mode"] == "color"
    np.testing.assert_array_equal(session.frame.image, colour)
    with pytest.raises(SceneError, match="mode"):
        session.set_mode("wireframe")


def test_animated_scene_time(tmp_path, open_session):
    data = probe_scene()
    data["objects"][0]["name"] = "mover"
    data["animation"] = {"start": 0, "end": 2, "objects": {"mover": {"translate": {"keys": [[0, [0, 0, 0]],
                                                                                          [2, [0, 1.5, 0]]]}}}}
    path = tmp_path / "a.json"
    write_scene(path, data)
    session = open_session(path)
    first = wait_state(session, _done())
    assert first["time_range"] == [0.0, 2.0] and first["time"] == 0.0
    at0 = session.frame.image.copy()
    session.set_time(2.0)
    later = wait_state(session, _done(first["generation"] + 1))
    assert later["time"] == 2.0
    want = raytrace.render(raytrace.scene_at(raytrace.load_scene(path), 2.0))
    np.testing.assert_array_equal(session.frame.image, np.asarray(want))
    assert not np.array_equal(at0, session.frame.image)
    with pytest.raises(SceneError, match="within 0 .. 2"):
        session.set_time(3.0)


def test_time_refused_for_a_still(tmp_path, open_session):
    path = tmp_path / "w.json"
    write_scene(path, probe_scene())
    session = open_session(path)
    state = wait_state(session, _done())
    assert state["time_range"] is None
    with pytest.raises(SceneError, match="not animated"):
        session.set_time(0.0)


def test_save_writes_png_and_exr_without_replacing(tmp_path, open_session):
    from raytrace.film.aov_files import read_render
    path = tmp_path / "p.json"
    write_scene(path, path_scene(spp=4))
    session = open_session(path)
    wait_state(session, _done())
    out = tmp_path / "saved"
    out.mkdir()
    png = session.save("png", out)
    png2 = session.save("png", out, exposure=1.0)
    exr = session.save("exr", out)
    assert [p.name for p in (png, png2, exr)] == ["p-view-001.png", "p-view-002.png", "p-view-001.exr"]
    import imageio.v3 as iio
    from raytrace.image import to_8bit
    np.testing.assert_array_equal(iio.imread(png), to_8bit(session.frame.image))
    np.testing.assert_array_equal(iio.imread(png2), to_8bit(session.frame.image * 2.0))
    layers, meta = read_render(exr)
    np.testing.assert_array_equal(layers["color"], session.frame.image)
    assert int(meta["spp"]) == 4 and meta["view"] == "color"
    with pytest.raises(SceneError, match="png or exr"):
        session.save("jpg", out)
