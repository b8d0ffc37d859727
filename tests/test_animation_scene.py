"""Animated scenes: the ``animation`` section's checks, the scene at a time against closed
forms (orbit, T R S, light intensity), skinned clips and cloth bound to the scene time
(cloth frame k is the simulation's state exactly, simulated once and cached on disk),
geometry reuse, tiles bit-identical to the whole render, and one regression frame."""
import copy
import json
import math
import pathlib
import pickle
import re

import imageio.v3 as iio
import numpy as np
import pytest

import particles
import raytrace
from raytrace.animation import AnimatedScene
from raytrace.animation import cloth as cloth_sim
from raytrace.animation.tiles import bands, render_band
from raytrace.animation.timeline import quat_from_axis_angle, quat_to_matrix
from raytrace.image import to_8bit
from raytrace.scene.objects import particles as cloth_plugin

REPO = pathlib.Path(__file__).resolve().parents[1]
SCENES = REPO / "scenes" / "animation"
REFERENCE = REPO / "tests" / "reference" / "animation"


def base_scene(**animation):
    return {
        "camera": {"center": [0, 1, 5], "look_at": [0, 0.5, 0], "fov": 40},
        "image": {"width": 32, "height": 24},
        "lights": [{"type": "point", "name": "key", "position": [2, 4, 3], "color": [10, 20, 30]},
                   {"type": "directional", "name": "sun", "direction": [0, -1, 0]}],
        "objects": [{"type": "plane", "normal": [0, 1, 0]},
                    {"type": "sphere", "name": "ball", "center": [0, 0.5, 0], "radius": 0.5,
                     "transform": [{"translate": [1, 0, 0]}]},
                    {"type": "group", "children": [{"type": "cube", "name": "box"}]}],
        "animation": dict({"end": 1, "fps": 4}, **animation),
    }


def cloth_scene(dt=0.02, fps=10.0, end=0.5):
    return {
        "camera": {"center": [0, 2, 4], "look_at": [0, 0.5, 0]},
        "objects": [{"type": "cloth", "name": "c", "grid": [6, 5], "size": [1, 1], "layout": "horizontal",
                     "center": [0, 1, 0], "pin": "corners", "dt": dt, "integrator": "implicit_euler",
                     "stiffness": 200}],
        "animation": {"end": end, "fps": fps},
    }


# ------------------------------------------------------------------------ validation
def test_example_scenes_load_with_their_frame_counts():
    counts = {p.stem: AnimatedScene.load(p).frame_count for p in sorted(SCENES.glob("*.json"))}
    assert counts == {"cloth_fall": 60, "motion_blur": 8, "orbit": 48, "walk": 48}
    for p in SCENES.glob("*.json"):          # each is a still scene too (render shows it as written)
        assert raytrace.load_scene(p).geometry is not None


BAD = [
    ({"objects": {"nobody": {"translate": {"keys": [[0, [0, 0, 0]]]}}}},
     "animation.objects.nobody", "no object is named 'nobody'"),
    ({"objects": {"ball": {"time": {"keys": [[0, 1]]}}}},
     "animation.objects.ball.time", "only a skinned_mesh with an 'animation'"),
    ({"objects": {"ball": {"translate": {"keys": [[0, [0, 0, 0]], [0, [1, 1, 1]]]}}}},
     "animation.objects.ball.translate.keys[1][0]", "key times must increase"),
    ({"objects": {"ball": {"translate": {"keys": [[0, [0, 0, 0]]], "interpolation": "cubic"}}}},
     "animation.objects.ball.translate.interpolation", "must be one of"),
    ({"objects": {"ball": {"scale": {"keys": [[0, 0]]}}}}, "animation.objects.ball.scale.keys[0][1]",
     "must be a number or a list of 3 numbers"),
    ({"objects": {"box": {"rotate": {"keys": [[0, {"axis": [0, 0, 0], "angle": 3}]]}}}},
     "animation.objects.box.rotate.keys[0][1].axis", "must not be a zero vector"),
    ({"objects": {"ball": {"rotate": {"keys": [[0, [0, 1, 0]]]}}}},
     "animation.objects.ball.rotate.keys[0][1]", "must be an object"),
    ({"end": 0}, "animation.end", "must be greater than start"),
    ({"fps": 0}, "animation.fps", "must be > 0"),
    ({"camera": {"orbit": {}, "center": {"keys": [[0, [0, 1, 5]]]}}}, "animation.camera.center",
     "the orbit sets the camera's center"),
    ({"camera": {"direction": {"keys": [[0, [0, 0, -1]]]}}}, "animation.camera.direction",
     "the camera has 'look_at', not 'direction'"),
    ({"camera": {"height": {"keys": [[0, 2]]}}}, "animation.camera.height", "a perspective camera"),
    ({"lights": {"moon": {"intensity": {"keys": [[0, 1]]}}}}, "animation.lights.moon",
     "no light is named 'moon' (named lights: key, sun)"),
    ({"lights": {"sun": {"position": {"keys": [[0, [0, 1, 0]]]}}}}, "animation.lights.sun.position",
     "a directional light has a direction"),
    ({"lights": {"key": {"intensity": {"keys": [[0, -1]]}}}}, "animation.lights.key.intensity.keys[0][1]",
     "must be >= 0"),
    ({"start": 0, "end": 10000, "fps": 24}, "animation", "frames are more than 100000"),
    ({"fog": 1}, "animation", "unknown key 'fog'"),
]


@pytest.mark.parametrize("animation, where, message", BAD, ids=[b[1] + ":" + b[2][:12] for b in BAD])
def test_bad_animations_name_the_field(animation, where, message):
    with pytest.raises(raytrace.SceneError) as info:
        raytrace.load_scene(base_scene(**animation))
    assert info.value.where == where
    assert message in info.value.message


def test_duplicate_names_are_refused():
    data = base_scene(objects={"ball": {"translate": {"keys": [[0, [0, 0, 0]]]}}})
    data["objects"].append({"type": "sphere", "name": "ball"})
    with pytest.raises(raytrace.SceneError, match="2 objects are named 'ball'"):
        raytrace.load_scene(data)


def test_render_command_reports_a_bad_animation(tmp_path, capsys):
    from raytrace.cli import main
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(base_scene(objects={"nobody": {"scale": {"keys": [[0, 2]]}}})))
    assert main(["render", str(path), "-o", str(tmp_path / "x.png")]) == 2
    err = [line for line in capsys.readouterr().err.strip().splitlines()    # a cold cache says so:
           if not re.match(r"raytrace: (compiling .*|.*compiled in [\d.]+ s)$", line)]
    assert err == [f"raytrace: error: {path}: animation.objects.nobody: no object is named 'nobody' "
                   "(named objects: ball, box)"]
    assert not (tmp_path / "x.png").exists()


# ---------------------------------------------------------------- values at a time
def test_orbit_is_the_closed_form_circle():
    anim = AnimatedScene.load(base_scene(camera={"orbit": {"turns": 0.5}}))
    target = np.array([0, 0.5, 0])
    # radius, height, start angle from the scene camera: (0, 1, 5) around (0, 0.5, 0)
    for t in (0.0, 0.25, 0.6, 0.9):
        cam = anim.data_at(t)["camera"]
        a = math.radians(180.0 * t)           # half a turn over the 1 s animation
        assert np.allclose(cam["center"], target + [5 * math.sin(a), 0.5, 5 * math.cos(a)], atol=1e-12)
        assert cam["look_at"] == target.tolist()
    explicit = AnimatedScene.load(base_scene(camera={"orbit": {"target": [1, 0, 0], "radius": 2, "height": 3,
                                                               "start_angle": 90, "turns": -1}}))
    assert np.allclose(explicit.data_at(0.25)["camera"]["center"], [1, 3, 2], atol=1e-12)


def test_object_tracks_make_t_r_s_before_its_own_transform():
    anim = AnimatedScene.load(base_scene(objects={
        "ball": {"translate": {"keys": [[0, [0, 0, 0]], [1, [0, 2, 0]]]},
                 "scale": {"keys": [[0, 1], [1, 3]]}},
        "box": {"rotate": {"keys": [[0, {"axis": [0, 1, 0], "angle": 0}],
                                    [1, {"axis": [0, 1, 0], "angle": 90}]]}}}))
    scene = anim.scene_at(0.5)
    # sphere: centre (0, 0.5, 0), radius 0.5, own translate (1, 0, 0); then S = 2, T = (0, 1, 0)
    assert np.allclose(scene.geometry.sph_center[0], [2, 2, 0], atol=1e-12)
    assert scene.geometry.sph_radius[0] == pytest.approx(1.0, abs=1e-12)
    box = scene.data["objects"][2]["children"][0]
    want = np.eye(4)
    want[:3, :3] = quat_to_matrix(quat_from_axis_angle([0, 1, 0], 45))
    assert np.allclose(box["transform"][0]["matrix"], want, atol=1e-15)
    c, s = math.cos(math.radians(45)), math.sin(math.radians(45))
    assert np.allclose(want[:3, :3] @ [1, 0, 0], [c, 0, -s], atol=1e-15)    # about +y, right-handed


def test_lights_color_and_intensity():
    anim = AnimatedScene.load(base_scene(lights={
        "key": {"intensity": {"keys": [[0, 1], [1, 0]]}},
        "sun": {"color": {"keys": [[0, [1, 1, 1]], [1, [0, 0, 2]]]}, "direction": {"keys": [[0, [0, -1, 0]], [1, [1, -1, 0]]]}}}))
    lights = anim.data_at(0.25)["lights"]
    assert lights[0]["color"] == pytest.approx([7.5, 15, 22.5])
    assert lights[1]["color"] == pytest.approx([0.75, 0.75, 1.25])
    assert lights[1]["direction"] == pytest.approx([0.25, -1, 0])


def test_catmull_rom_overshoot_is_reported_with_the_time():
    anim = AnimatedScene.load(base_scene(end=3, fps=2, objects={"ball": {"scale": {
        "keys": [[0, 5], [1, 0.01], [2, 0.01], [3, 5]], "interpolation": "catmull_rom"}}}))
    anim.scene_at(1.0)
    with pytest.raises(raytrace.SceneError) as info:
        anim.scene_at(1.5)
    assert info.value.where == "animation.objects.ball.scale"
    assert "at t = 1.5 s" in info.value.message and info.value.file == "<scene dict>"


def test_data_at_shares_what_does_not_move():
    data = base_scene(objects={"ball": {"translate": {"keys": [[0, [0, 0, 0]], [1, [1, 0, 0]]]}}})
    anim = AnimatedScene.load(data)
    frame = anim.data_at(0.5)
    assert "animation" not in frame and "animation" in anim.data
    assert frame["objects"][0] is anim.data["objects"][0]          # the plane did not move
    assert frame["objects"][2] is anim.data["objects"][2]
    assert frame["objects"][1] is not anim.data["objects"][1]
    assert anim.data["objects"][1]["transform"] == [{"translate": [1, 0, 0]}]   # unchanged


def test_geometry_is_built_again_only_when_it_moves():
    still_geo = AnimatedScene.load(base_scene(camera={"orbit": {}}))
    assert still_geo.scene_at(0.0).geometry is still_geo.scene_at(0.7).geometry
    moving = AnimatedScene.load(base_scene(objects={"ball": {"translate": {"keys": [[0, [0, 0, 0]], [0.5, [1, 0, 0]]]}}}))
    a, b, c = moving.scene_at(0.0).geometry, moving.scene_at(0.25).geometry, moving.scene_at(0.75).geometry
    assert a is not b and b is not c
    assert c is moving.scene_at(0.9).geometry                     # after the last key: unchanged


def test_scene_at_on_a_loaded_scene_and_on_a_still():
    scene = raytrace.load_scene(base_scene(camera={"orbit": {"turns": 0.5}}))
    assert raytrace.scene_at(scene, 0.5).data["camera"]["center"] == pytest.approx([5, 1, 0])
    still = raytrace.load_scene({"camera": {"center": [0, 0, 5], "look_at": [0, 0, 0]}})
    assert raytrace.scene_at(still, 3.0) is still


# ----------------------------------------------------------------- skinned and cloth
def test_skinned_clip_plays_with_the_scene_time():
    anim = AnimatedScene.load(SCENES / "walk.json")
    t = 0.8
    frame = anim.data_at(t)
    walker = frame["objects"][1]
    assert walker["time"] == pytest.approx(t)
    # the same still written by hand: clip at 0.8 s, translated along the track
    still = copy.deepcopy(anim.data)
    del still["animation"]
    x = -1.6 + 3.2 * t / 2
    still["objects"][1]["time"] = t
    still["objects"][1]["transform"] = [{"translate": [x, 0, 0]}, {"rotate_y": 90}]
    still["objects"] = still["objects"][:3]                       # without the cloth
    by_hand = raytrace.load_scene(still, base_dir=SCENES).geometry
    animated = anim.scene_at(t).geometry
    n = len(by_hand.tri_v0)
    for name in ("tri_v0", "tri_v1", "tri_v2", "tri_n"):
        assert np.allclose(getattr(animated, name)[:n], getattr(by_hand, name), rtol=0, atol=1e-12), name
    assert not np.allclose(anim.scene_at(0.0).geometry.tri_v0[:n], animated.tri_v0[:n])


def test_time_track_retimes_the_clip():
    data = json.loads((SCENES / "walk.json").read_text())
    data["animation"]["objects"]["walker"] = {"time": {"keys": [[0, 0.5], [2, 0.5]]}}
    anim = AnimatedScene.load(data, base_dir=SCENES)
    assert anim.data_at(1.3)["objects"][1]["time"] == 0.5
    assert anim.data_at(1.3)["objects"][1]["transform"] == [{"rotate_y": 90}]


@pytest.mark.parametrize("dt, steps_per_frame", [(0.02, 5), (0.03, 4)])
def test_cloth_frame_k_is_the_simulation_state_exactly(tmp_path, dt, steps_per_frame):
    anim = AnimatedScene.load(cloth_scene(dt=dt), cache_dir=tmp_path)
    step = 1.0 / (10.0 * steps_per_frame)
    obj = anim.data["objects"][0]
    for k in (0, 1, 3, 4):
        steps = k * steps_per_frame
        net = cloth_plugin.cloth_network(obj)            # a fresh cloth for each run
        _, states = particles.simulate(net, "implicit_euler", step, steps, every=max(steps, 1))
        want = states[-1][:3 * net.n].reshape(net.n, 3)
        frame = anim.data_at(anim.frame_time(k))["objects"][0]
        v, faces, _ = cloth_plugin.build_cloth(frame, "objects[0]", ".")
        assert np.array_equal(v, want), k
        geo = anim.scene_at(anim.frame_time(k)).geometry
        held = want.astype(np.float32).astype(np.float64)     # the renderer's float32 vertices
        assert np.array_equal(geo.tri_v0, held[faces[:, 0]]) and np.array_equal(geo.tri_v2, held[faces[:, 2]])
    # half a step after frame 1: the blend of the states on each side of it
    t = anim.frame_time(1) + 0.5 * step
    q = anim.cloth_positions[("objects", 0)]
    i = steps_per_frame
    v, _, _ = cloth_plugin.build_cloth(anim.data_at(t)["objects"][0], "objects[0]", ".")
    assert np.allclose(v, 0.5 * (q[i] + q[i + 1]), rtol=0, atol=1e-12)


def test_cloth_is_simulated_once_and_reused_from_disk(tmp_path, monkeypatch):
    calls = []
    real = cloth_sim.simulate_positions
    monkeypatch.setattr(cloth_sim, "simulate_positions", lambda *a: calls.append(a) or real(*a))
    first = AnimatedScene.load(cloth_scene(), cache_dir=tmp_path)
    assert first.prepare() == 0 and len(calls) == 1
    for k in range(first.frame_count):
        first.scene_at(first.frame_time(k))
    assert len(calls) == 1                                   # not per frame
    assert len(list(tmp_path.glob("cloth-*.npy"))) == 1
    second = AnimatedScene.load(cloth_scene(), cache_dir=tmp_path)
    assert second.prepare() == 1 and len(calls) == 1         # from the disk cache
    assert np.array_equal(second.cloth_positions[("objects", 0)], first.cloth_positions[("objects", 0)])
    other = AnimatedScene.load(cloth_scene(fps=12.0), cache_dir=tmp_path)
    assert other.prepare() == 0 and len(calls) == 2           # another step: another simulation
    # a render-farm worker gets the simulation with the scene and never simulates
    worker = pickle.loads(pickle.dumps(first))
    cloth_plugin._provided.clear()
    monkeypatch.setattr(cloth_sim, "simulate_positions", lambda *a: pytest.fail("simulated again"))
    monkeypatch.setattr(cloth_plugin, "simulate_cloth", lambda *a: pytest.fail("simulated again"))
    geo = worker.scene_at(worker.frame_time(3)).geometry
    assert np.array_equal(geo.tri_v0, first.scene_at(first.frame_time(3)).geometry.tri_v0)


def test_cloth_cache_rejects_a_damaged_file(tmp_path):
    anim = AnimatedScene.load(cloth_scene(), cache_dir=tmp_path)
    anim.prepare()
    (path,) = tmp_path.glob("cloth-*.npy")
    path.write_bytes(b"not an array")
    again = AnimatedScene.load(cloth_scene(), cache_dir=tmp_path)
    assert again.prepare() == 0                               # simulated again, file replaced
    assert np.load(path).shape == anim.cloth_positions[("objects", 0)].shape


# ------------------------------------------------------------------- tiles, frames
@pytest.mark.parametrize("integrator, name", [("whitted", "spheres"), ("whitted", "shadow_map"),
                                              ("path", "cornell_box")])
def test_tiles_are_bit_identical_to_the_whole_render(integrator, name):
    scene = raytrace.load_scene(REPO / "scenes" / f"{name}.json")
    opts = dict(width=24, height=19, spp=3, integrator=integrator, seed=5)
    full = np.asarray(raytrace.render(scene, **opts))
    parts = [render_band(scene, r0, r1, **opts) for r0, r1 in bands(19, 4)]
    assert bands(19, 4) == [(0, 5), (5, 10), (10, 14), (14, 19)]
    assert np.array_equal(np.concatenate([p[0] for p in parts]), full)
    # negative control: another seed changes the pixels
    assert full[5:10].max() > 0.0
    other = render_band(scene, 5, 10, **dict(opts, seed=6))[0]
    assert not np.array_equal(other, full[5:10])
    with pytest.raises(ValueError):
        render_band(scene, 10, 30, **opts)


def test_regression_frame(output_dir):
    """Frame 12 of the walk (clip at 0.5 s, cloth falling) at 96 x 72 against its reference;
    tolerances as in test_regression. Update: python scripts/update_animation_references.py"""
    image = render_reference_frame()
    ref = REFERENCE / "walk_0012.png"
    expected = iio.imread(ref)[..., :3].astype(int)
    actual = to_8bit(image).astype(int)
    assert actual.shape == expected.shape
    diff = np.abs(actual - expected)
    mean, frac_off = diff.mean(), (diff.max(axis=2) > 8).mean()
    if mean > 1.0 or frac_off > 0.005:
        iio.imwrite(output_dir / "actual.png", actual.astype(np.uint8))
        pytest.fail(f"walk frame 12: mean |diff| {mean:.2f}, {100 * frac_off:.2f}% of pixels off by > 8")


def render_reference_frame():
    anim = AnimatedScene.load(SCENES / "walk.json")
    return raytrace.render(anim.scene_at(anim.frame_time(12)), width=96, height=72)


def test_a_loaded_scene_keeps_its_animation_with_it():
    """``scene_at`` on a loaded scene makes its AnimatedScene once and keeps it on the
    scene object (no module-level cache): twice the same one; a scene made from it by
    ``dataclasses.replace`` (another camera) starts without it, and another load of the
    same file has its own."""
    import dataclasses
    from raytrace.animation.scene_at import animated
    path = REPO / "scenes" / "animation" / "orbit.json"
    scene = raytrace.load_scene(path)
    first = animated(scene)
    assert animated(scene) is first and scene.memo["animated"] is first
    moved = dataclasses.replace(scene, data=dict(scene.data))
    assert moved.memo == {} and animated(moved) is not first
    assert animated(raytrace.load_scene(path)) is not first
    np.testing.assert_array_equal(raytrace.scene_at(scene, 0.5).geometry.sph_center,
                                  first.scene_at(0.5).geometry.sph_center)
