"""``load_scene`` returns a scene ready to render (issue 44): a frozen ``RenderScene`` that
already holds the path tracer's lights, the environment with its sampling tables, the
Whitted lights with their shadow maps filled, and the files it read; a file it cannot read
fails the load with one line, never a render."""
import dataclasses
import json
import math
import pathlib

import numpy as np
import pytest

import raytrace
from raytrace import cli
from raytrace.errors import SceneError
from raytrace.layout import ENV_CONSTANT, ENV_LATLONG, LIGHT_DIRECTIONAL, LIGHT_POINT
from raytrace.scene.ready import RenderScene

REPO = pathlib.Path(__file__).resolve().parents[1]
FAR = 1e300          # a shadow map's depth where the light sees nothing (kernels.shadowmap.FAR)


def _scene(**extra):
    data = {"camera": {"center": [0, 1, 4], "look_at": [0, 0, 0]},
            "image": {"width": 8, "height": 8, "spp": 1},
            "lights": [{"type": "point", "position": [0, 3, 0], "color": [2, 3, 4]}],
            "objects": [{"type": "sphere", "center": [0, 0.5, 0], "radius": 0.5}]}
    data.update(extra)
    return data


def _write(path, data):
    path.write_text(json.dumps(data))
    return path


def test_lights_environment_and_files_are_there_after_load(tmp_path):
    path = _write(tmp_path / "s.json", _scene(background={"color": [0.25, 0.5, 1.0]}))
    scene = raytrace.load_scene(path)
    assert isinstance(scene, RenderScene) and raytrace.Scene is RenderScene
    assert scene.files == (path,)
    env = scene.environment
    assert env.kind == ENV_CONSTANT and env.color.tolist() == [0.25, 0.5, 1.0]
    assert scene.cube_map is None
    # the path tracer's lights: the point light (pi * colour / attenuation, 1 by default) and the sky
    lights = scene.lights
    assert lights.kind[0] == LIGHT_POINT and lights.delta_val[0].tolist() == [2 * math.pi, 3 * math.pi, 4 * math.pi]
    assert lights.env_entry == 1 and len(lights.pmf) == 2
    # Whitted's: the colour as given, no falloff, no shadow map
    wl = scene.whitted_lights
    assert wl.kind.tolist() == [LIGHT_POINT] and wl.color[0].tolist() == [2, 3, 4] and wl.attenuation[0] == 0
    assert wl.shadow_map.tolist() == [-1] and wl.depths.tolist() == [0.0]
    black = raytrace.load_scene(_scene())                                  # negative control: no sky
    assert black.lights.env_entry == -1 and len(black.lights.pmf) == 1 and black.files == ()


def test_the_scene_is_frozen(tmp_path):
    scene = raytrace.load_scene(_scene())
    for name, value in (("data", {}), ("lights", None), ("files", ()), ("accel", None)):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(scene, name, value)
    moved = dataclasses.replace(scene, data=dict(scene.data, camera={"center": [0, 1, 5], "look_at": [0, 0, 0]}))
    assert moved.lights is scene.lights and moved.data["camera"]["center"] == [0, 1, 5]   # nothing rebuilt
    assert scene.data["camera"]["center"] == [0, 1, 4]                                     # the original kept


def test_shadow_maps_are_filled_at_load():
    """A directional light straight down onto a square at y = 0: every texel that sees it
    stores the distance from the map's plane (at ``frame[0]``) to y = 0."""
    square = {"type": "rectangle", "transform": [{"rotate_x": -90}, {"scale": 2}]}
    light = {"type": "directional", "direction": [0, -1, 0], "shadows": "map",
             "shadow_map": {"resolution": 16}}
    scene = raytrace.load_scene(_scene(lights=[light], objects=[square]))
    wl = scene.whitted_lights
    assert wl.kind.tolist() == [LIGHT_DIRECTIONAL] and wl.shadow_res.tolist() == [16]
    depths = wl.depths[:256]
    seen = depths < FAR
    assert seen.sum() > 100 and (~seen).sum() > 0          # the square, and the map's corners beyond it
    np.testing.assert_allclose(depths[seen], wl.shadow_frame[0, 0, 1], rtol=0, atol=1e-9)
    rays = raytrace.load_scene(_scene(lights=[dict(light, shadows="rays")], objects=[square]))
    assert rays.whitted_lights.depths.tolist() == [0.0]    # negative control: no map asked, none built


def _env_scene(tmp_path, name):
    return _write(tmp_path / "scene.json", _scene(background={"envmap": name}))


def _grid_scene(tmp_path, name):
    return _write(tmp_path / "scene.json", _scene(
        media={"smoke": {"type": "heterogeneous", "sigma_t": {"type": "grid", "file": name}}},
        materials={"boundary": {"type": "null"}},
        objects=[{"type": "cube", "material": "boundary", "interior": "smoke"}]))


def _texture_scene(tmp_path, name):
    return _write(tmp_path / "scene.json", _scene(
        materials={"t": {"type": "diffuse", "albedo": {"type": "image", "file": name}}},
        objects=[{"type": "sphere", "radius": 0.5, "material": "t"}]))


def _write_asset(path):
    from raytrace.envmap import hdr_bytes
    if path.suffix == ".hdr":
        path.write_bytes(hdr_bytes(np.full((4, 8, 3), 0.5, np.float32)))
    elif path.suffix == ".npy":
        np.save(path, np.ones((2, 2, 2), np.float32))
    else:
        import imageio.v3 as iio
        iio.imwrite(path, np.full((2, 2, 3), 128, np.uint8))


@pytest.mark.parametrize("make, name, line", [
    (_env_scene, "sky.hdr", "background.envmap: environment map file not found: {dir}/sky.hdr"),
    (_texture_scene, "wood.png", "materials.t.albedo.file: texture file not found: {dir}/wood.png"),
    (_grid_scene, "smoke.npy", "media.smoke.sigma_t.file: file not found: {dir}/smoke.npy"),
])
def test_a_missing_file_fails_the_load_with_one_line(tmp_path, capsys, make, name, line):
    """The map, texture or grid is read at load: a missing one is the load's SceneError
    (naming the scene file and the field), and the command line's one line with status 2."""
    path = make(tmp_path, name)
    want = f"{path}: " + line.format(dir=tmp_path)
    with pytest.raises(SceneError) as info:
        raytrace.load_scene(path)
    assert str(info.value) == want
    assert cli.main(["render", str(path), "-o", str(tmp_path / "out.png"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [f"raytrace: error: {want}"] and "Traceback" not in err
    _write_asset(tmp_path / name)                                          # negative control: it loads
    scene = raytrace.load_scene(path)
    assert scene.files == (path, tmp_path / name)
    if name.endswith(".hdr"):
        assert scene.environment.kind == ENV_LATLONG and scene.cube_map.shape == (1, 4, 8, 3)


@pytest.mark.parametrize("scene, names", [
    ("gltf_still_life.json", ["gltf_still_life.json", "still_life.gltf", "still_life.bin"]),
    ("skinned_figure.json", ["skinned_figure.json", "figure.skel", "figure.attach", "figure.obj",
                             "figure_wave.json", "figure_walk.json"]),
])
def test_files_of_a_model_the_reader_keeps_in_memory(scene, names):
    """The glTF and skinned-model readers keep their last model; a load served from it
    still lists the model's files (the preview watches them)."""
    from raytrace.scene import gltf
    from raytrace.scene.objects import skinning
    path = REPO / "scenes" / scene
    gltf._cache.clear()
    skinning._cache.clear()
    first = raytrace.load_scene(path).files                     # read from the files
    second = raytrace.load_scene(path).files                    # from the readers' memory
    assert [p.name for p in first] == names and second == first
    assert first[0] == path.absolute() and all(p.is_file() for p in first)
