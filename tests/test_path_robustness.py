"""The path tracer on scenes built to break it, its determinism, progressive rendering
with interruption (callback and Ctrl-C), and its command line."""
import copy
import json
import os
import re
import signal
import threading

import imageio.v3 as iio
import numba
import numpy as np
import pytest

import raytrace
from raytrace import cli
from raytrace.errors import SceneError
from raytrace.image import read_pfm
from raytrace.kernels import path as pk
from raytrace.kernels.path import mean_and_variance, new_buffers
from raytrace.integrators import add_pass as render_path_pass
from raytrace.renderer import RenderInterrupted, resolve_settings


def scene(objects, materials=None, camera=None, background=None, lights=(), size=12, spp=16, **integ):
    return {"camera": camera or {"center": [0, 1, 5], "look_at": [0, 0.5, 0], "fov": 50},
            "image": {"width": size, "height": size, "spp": spp, "filter": "gaussian"},
            "integrator": dict({"type": "path", "max_depth": 24, "rr_depth": 5}, **integ),
            "background": background or {"color": [0.2, 0.3, 0.4]},
            "materials": copy.deepcopy(materials or {}), "lights": list(lights), "objects": list(objects)}


MATERIALS = {
    "glass": {"type": "dielectric", "ior": 1.5},
    "rough": {"type": "rough_conductor", "reflectance": [0.9, 0.6, 0.3], "alpha": 0.01},
    "very_rough": {"type": "rough_conductor", "reflectance": [1, 1, 1], "alpha": 3.5},
    "white": {"type": "diffuse", "albedo": [0.8, 0.8, 0.8]},
    "mirror": {"type": "conductor"},
    "course": {"diffuse": [0.5, 0.5, 0.5], "specular": [0.5, 0.5, 0.5], "transmit": [0.5, 0.5, 0.5], "ior": 1.2},
}

ZERO_AREA_OBJ = """v 0 0 0
v 1 0 0
v 0 1 0
v 2 0 0
f 1 2 3
f 1 2 4
"""


def hostile_scenes(tmp_path):
    (tmp_path / "zero.obj").write_text(ZERO_AREA_OBJ)
    grazing_cam = {"center": [0, 1e-7, 5], "look_at": [0, 0, -5], "fov": 60}
    return {
        # camera on a plane looking along it; grazing rough metal, glass and lights
        "grazing": scene([{"type": "plane", "normal": [0, 1, 0], "material": "rough"},
                          {"type": "sphere", "center": [0, 0.5, 0], "radius": 0.5, "material": "glass"},
                          {"type": "rectangle", "emission": [5, 5, 5], "material": "white",
                           "transform": [{"translate": [0, 0, -3]}, {"rotate_x": -89.999}]}],
                         MATERIALS, camera=grazing_cam),
        # a mesh light with a zero-area face next to a real one
        "zero_area_light": scene([{"type": "mesh", "file": "zero.obj", "emission": [3, 3, 3], "material": "white"},
                                  {"type": "plane", "normal": [0, 1, 0], "offset": -0.5, "material": "white"}],
                                 MATERIALS),
        # an emissive and a non-emissive rectangle in the same place, and a light inside a wall
        "coincident": scene([{"type": "rectangle", "emission": [4, 4, 4], "material": "white",
                              "transform": [{"translate": [0, 1.5, 0]}, {"rotate_x": 90}]},
                             {"type": "rectangle", "material": "very_rough",
                              "transform": [{"translate": [0, 1.5, 0]}, {"rotate_x": 90}]},
                             {"type": "sphere", "radius": 0.3, "center": [0.5, 0, 0], "emission": [2, 2, 2]},
                             {"type": "cube", "material": "course",
                              "transform": [{"translate": [0.5, 0, 0]}, {"scale": 0.2}]},
                             {"type": "plane", "normal": [0, 1, 0], "offset": -0.5, "material": "white"}],
                            MATERIALS),
        # the camera inside a glass sphere (and inside a diffuse emissive sphere's shell)
        "inside_glass": scene([{"type": "sphere", "radius": 2, "material": "glass"},
                               {"type": "sphere", "radius": 0.2, "center": [0.5, 0.5, -1], "material": "mirror"},
                               {"type": "sphere", "radius": 0.05, "center": [-0.5, 0, -1], "emission": [50, 50, 50]},
                               {"type": "sphere", "radius": 3, "emission": [1, 1, 1], "material": "white"}],
                              MATERIALS, camera={"center": [0, 0, 0.5], "look_at": [0, 0, -1], "fov": 90},
                              lights=[{"type": "point", "position": [0, 0.5, 0], "color": [1, 1, 1],
                                       "attenuation": 1}]),
        # tiny, huge, far and squashed lights; a point light on a surface
        "extreme_lights": scene([{"type": "sphere", "radius": 1e-6, "center": [0, 3, 0], "emission": [1e12] * 3},
                                 {"type": "sphere", "radius": 1, "center": [0, 1e6, 0], "emission": [1e-3] * 3},
                                 {"type": "sphere", "emission": [5, 5, 5],
                                  "transform": [{"translate": [1, 1, 0]}, {"scale": [1e-4, 1, 1]}]},
                                 {"type": "plane", "normal": [0, 1, 0], "material": "course"}],
                                MATERIALS, lights=[{"type": "point", "position": [0, 0, 0], "color": [1, 1, 1]},
                                                   {"type": "directional", "direction": [0, -1, 0],
                                                    "color": [1, 1, 1]}]),
    }


@pytest.mark.parametrize("name", ["grazing", "zero_area_light", "coincident", "inside_glass", "extreme_lights"])
@pytest.mark.parametrize("sampler", ["sobol", "independent"])
def test_no_nan_or_infinite_pixel(tmp_path, name, sampler):
    s = raytrace.load_scene(hostile_scenes(tmp_path)[name], base_dir=tmp_path)
    img = raytrace.render(s, sampler=sampler)
    assert img.info.nonfinite == 0, "a sample came out NaN or infinite (and was dropped)"
    assert np.isfinite(img).all() and (img >= 0).all()
    assert img.max() > 0


def test_zero_area_faces_do_not_become_lights(tmp_path):
    s = raytrace.load_scene(hostile_scenes(tmp_path)["zero_area_light"], base_dir=tmp_path)
    lights = s.lights
    assert len(s.geometry.tri_mat) == 1 and len(lights.pmf) == 2      # the triangle and the sky
    assert np.all(lights.pmf > 0)


@pytest.mark.parametrize("spp", [8, 6])      # 6: the camera samples are multi-jittered (rng.cmj2)
def test_same_image_whatever_the_thread_count(spp):
    s = raytrace.load_scene(scene([{"type": "sphere", "center": [0, 0.5, 0], "radius": 0.5, "material": "glass"},
                                   {"type": "plane", "normal": [0, 1, 0], "material": "white"},
                                   {"type": "rectangle", "emission": [3, 3, 3],
                                    "transform": [{"translate": [0, 2, 0]}, {"rotate_x": 90}]}],
                                  MATERIALS, size=16, spp=spp))
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = raytrace.render(s)
        numba.set_num_threads(max(2, before))
        many = raytrace.render(s)
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(one, many)
    other_seed = raytrace.render(s, seed=5)
    assert not np.array_equal(one, other_seed)
    assert abs(one.mean() - other_seed.mean()) < 0.05 * one.mean()


def small_path_scene(spp):
    return raytrace.load_scene(scene([{"type": "sphere", "center": [0, 0.5, 0], "radius": 0.5, "material": "white"},
                                      {"type": "plane", "normal": [0, 1, 0], "material": "white"}],
                                     MATERIALS, size=8, spp=spp))


def test_interrupt_from_the_callback_returns_the_passes_done():
    s = small_path_scene(spp=10)
    seen = []

    def stop_after_three(done, total):
        seen.append((done, total))
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(RenderInterrupted) as info:
        raytrace.render(s, callback=stop_after_three)
    assert seen == [(1, 10), (2, 10), (3, 10)]
    assert info.value.spp_done == 3 and info.value.spp_total == 10
    # the image is the mean of the render's passes 0, 1, 2, added one by one here
    settings = resolve_settings(s, {})
    buffers = new_buffers(8, 8)
    for sample in range(3):
        render_path_pass(s, settings, buffers, sample)
    np.testing.assert_array_equal(info.value.image, mean_and_variance(buffers[0], 3)[0].astype(np.float32))
    # 10 is not a power of two, so the pixel positions are those of 10 correlated
    # multi-jittered samples, not the first three of a render asked for 3 ...
    assert not np.array_equal(info.value.image, raytrace.render(s, spp=3))
    assert isinstance(info.value, KeyboardInterrupt)


def test_interrupted_power_of_two_render_equals_a_shorter_one():
    """... while with a power of two every sample comes from the Sobol sequence, whose
    first samples do not depend on how many were asked for."""
    s = small_path_scene(spp=16)

    def stop_after_four(done, total):
        if done == 4:
            raise KeyboardInterrupt

    with pytest.raises(RenderInterrupted) as info:
        raytrace.render(s, callback=stop_after_four)
    np.testing.assert_array_equal(info.value.image, raytrace.render(s, spp=4))


def write_scene(tmp_path, spp, size=8):
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(scene([{"type": "sphere", "center": [0, 0.5, 0], "radius": 0.5, "material": "white"},
                                      {"type": "plane", "normal": [0, 1, 0], "material": "white"}],
                                     MATERIALS, size=size, spp=spp)))
    return path


def test_ctrl_c_writes_the_image_so_far(tmp_path, capsys, monkeypatch):
    """SIGINT while the render runs: status 130 and the image of the passes done. The
    signal is sent from another thread as soon as the first pass is done, so it arrives
    at whatever point the render has reached then (mid-pass or between passes), never
    before the render started, however slowly the machine runs."""
    path = write_scene(tmp_path, spp=65536, size=32)       # minutes of work: it must be cut short
    out = tmp_path / "out.pfm"
    first_pass, finished = threading.Event(), threading.Event()
    render_pass = pk.render_pass

    def counted_pass(*args, **kwargs):
        render_pass(*args, **kwargs)
        first_pass.set()
    monkeypatch.setattr(pk, "render_pass", counted_pass)

    def ctrl_c():
        first_pass.wait()
        if not finished.is_set():
            os.kill(os.getpid(), signal.SIGINT)
    sender = threading.Thread(target=ctrl_c, daemon=True)
    sender.start()
    try:
        status = cli.main(["render", str(path), "-o", str(out), "--quiet"])
    finally:
        finished.set()
        first_pass.set()                                   # releases the sender if no pass ran
        sender.join()
    err = capsys.readouterr().err
    assert status == 130
    match = re.search(r"interrupted after (\d+) of 65536 samples per pixel; wrote", err)
    assert match and 1 <= int(match.group(1)) < 65536, err
    img = read_pfm(out)
    assert img.shape == (32, 32, 3) and np.isfinite(img).all() and img.max() > 0
    assert not list(tmp_path.glob(".out.pfm.*")), "no temporary file may be left behind"


def test_cli_renders_a_path_scene_and_rejects_bad_options(tmp_path, capsys):
    path = write_scene(tmp_path, spp=4)
    out = tmp_path / "out.png"
    assert cli.main(["render", str(path), "-o", str(out), "--max-depth", "3", "--sampler", "independent"]) == 0
    assert iio.imread(out).shape == (8, 8, 3)
    capsys.readouterr()
    assert cli.main(["render", str(path), "-o", str(out), "--max-depth", "-5"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "raytrace: error: --max-depth: must be an integer >= -1, got -5"
    assert cli.main(["render", str(path), "-o", str(out), "--rr-depth", "0"]) == 2


@pytest.mark.parametrize("edit,pattern", [
    (lambda s: s["integrator"].update(bounces=3), r"integrator: unknown key 'bounces'"),
    (lambda s: s["integrator"].update(max_depth=-2), r"integrator\.max_depth: must be >= -1"),
    (lambda s: s["objects"].append({"type": "plane", "normal": [0, 1, 0], "emission": [1, 1, 1]}),
     r"objects\[2\]\.emission: an infinite plane cannot emit"),
    (lambda s: s["materials"].update(m={"type": "rough_conductor", "roughness": 0.1}),
     r"materials\.m: unknown key 'roughness'"),
    (lambda s: s["materials"].update(m={"type": "diffuse", "albedo": {"type": "checkerboard", "colour0": [1, 0, 0]}}),
     r"materials\.m\.albedo: unknown key 'colour0'"),
    (lambda s: s["materials"].update(m={"type": "diffuse", "albedo": [1, 0]}), r"materials\.m\.albedo: must have 3"),
    (lambda s: s["objects"].append({"type": "cube", "radius": 1}), r"objects\[2\]: unknown key 'radius'"),
])
def test_new_keys_are_validated(tmp_path, edit, pattern):
    s = scene([{"type": "sphere", "material": "white"}, {"type": "rectangle"}], MATERIALS)
    edit(s)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(s))
    with pytest.raises(SceneError, match=pattern):
        raytrace.load_scene(path)


def test_uniform_render_batches_samples_into_calls_with_the_same_image(monkeypatch):
    """Without a callback a uniform render hands the kernel several samples per call
    (renderer._chunk: the first pass in chunks of rows, timed, then whole passes batched);
    the image is the per-pass render's bit for bit."""
    from raytrace import integrators
    s = small_path_scene(spp=16)
    height = s.setting("image", "height", None)
    per_pass = raytrace.render(s, callback=lambda done, total: None)
    calls = []                                    # (samples, rows) of each kernel call
    original = integrators.path_pass

    def recording(scene):
        call = original(scene)

        def counted(*args, count=1, rows=None, **kw):
            calls.append((count, height if rows is None else len(rows)))
            return call(*args, count=count, rows=rows, **kw)
        return counted

    monkeypatch.setattr(integrators, "path_pass", recording)
    batched = raytrace.render(s)
    assert calls[0][0] == 1 and max(c for c, _ in calls) > 1
    assert sum(c * r for c, r in calls) == 16 * height          # every row, 16 samples
    np.testing.assert_array_equal(np.asarray(batched), np.asarray(per_pass))
    calls.clear()
    raytrace.render(s, callback=lambda done, total: None)
    assert all(c == 1 for c, _ in calls) and sum(r for _, r in calls) == 16 * height  # a callback sees every pass
