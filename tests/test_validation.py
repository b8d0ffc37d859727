"""Bad input: clear errors naming the file and the JSON path; no traceback, no output."""
import copy
import json
import subprocess
import sys

import pytest

import raytrace
from raytrace.errors import SceneError

BASE = {
    "camera": {"center": [0, 0, 5], "direction": [0, 0, -1], "fov": 40},
    "image": {"width": 8, "height": 6},
    "materials": {"red": {"diffuse": [1, 0, 0]}},
    "lights": [{"type": "point", "position": [0, 5, 5], "color": [1, 1, 1], "attenuation": 0.1}],
    "objects": [{"type": "sphere", "radius": 1, "material": "red"},
                {"type": "triangle", "vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0]]}],
}


def edited(fn):
    s = copy.deepcopy(BASE)
    fn(s)
    return s


CASES = [
    (lambda s: s["objects"][0].update(radius=-1), r"objects\[0\]\.radius: must be > 0"),
    (lambda s: s["objects"][0].update(radius="big"), r"objects\[0\]\.radius: must be a number"),
    (lambda s: s["materials"]["red"].update(colour=[1, 0, 0]), r"materials\.red: unknown key 'colour'"),
    (lambda s: s.update(lights=[{"type": "area", "position": [0, 0, 0]}]), r"lights\[0\]\.type: must be one of"),
    (lambda s: s["objects"].append({"type": "cone"}), r"objects\[2\]\.type: must be one of"),
    (lambda s: s["camera"].update(fov=200), r"camera\.fov: must be < 180"),
    (lambda s: s["camera"].pop("direction"), r"camera: give exactly one of"),
    (lambda s: s["camera"].update(up=[0, 0, -2]), r"camera\.up: must not be zero or parallel"),
    (lambda s: s["image"].update(width=0), r"image\.width: must be >= 1"),
    (lambda s: s["objects"][0].update(center=[1, 2]), r"objects\[0\]\.center: must have 3 items, got 2"),
    (lambda s: s["objects"][0].update(material="blue"), r"objects\[0\]\.material: unknown material 'blue'"),
    (lambda s: s["objects"][1].update(vertices=[[0, 0, 0], [1, 1, 1], [2, 2, 2]]),
     r"objects\[1\]\.vertices: degenerate triangle"),
    (lambda s: s["objects"][0].update(transform=[{"scale": [1, 1, 0]}]), r"objects\[0\]\.transform: .*singular"),
    (lambda s: s["objects"][0].update(transform=[{"translate": [1, 1, 1], "scale": 2}]),
     r"objects\[0\]\.transform\[0\]: must have exactly one key"),
    (lambda s: s["objects"].append({"type": "mesh", "file": "nope.obj"}), r"objects\[2\]\.file: file not found"),
    (lambda s: s["objects"][0].update(radius=float("nan")), r"objects\[0\]\.radius: must be a finite number"),
    (lambda s: s["objects"][0].update(center=[0, float("inf"), 0]), r"objects\[0\]\.center\[1\]: must be a finite"),
    (lambda s: s["lights"][0].update(color=[-1, 0, 0]), r"lights\[0\]\.color\[0\]: must be >= 0"),
    (lambda s: s.update(extra=1), r"\(top level\): unknown key 'extra'"),
]


@pytest.mark.parametrize("mutate,pattern", CASES)
def test_errors_name_the_file_and_field(tmp_path, mutate, pattern):
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(edited(mutate)))
    with pytest.raises(SceneError) as info:
        raytrace.load_scene(path)
    msg = str(info.value)
    assert msg.startswith(str(path) + ": "), msg
    assert __import__("re").search(pattern, msg), msg


def test_base_scene_is_valid(tmp_path):
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(BASE))
    assert raytrace.render(raytrace.load_scene(path)).shape == (6, 8, 3)


def test_json_syntax_error_names_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{\n  "camera": {"center": [0, 0, 5],}\n}\n')
    with pytest.raises(SceneError, match=r"bad\.json: line 2 column \d+: invalid JSON"):
        raytrace.load_scene(path)


def test_bad_obj_file_names_line(tmp_path):
    (tmp_path / "m.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n")
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(edited(lambda s: s["objects"].append({"type": "mesh", "file": "m.obj"}))))
    with pytest.raises(SceneError, match=r"m\.obj: line 4: face refers to vertex 7, but there are 3"):
        raytrace.load_scene(path)


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "raytrace", *args], capture_output=True, text=True)


def test_cli_error_exits_2_without_traceback_or_output(tmp_path):
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(edited(lambda s: s["objects"][0].update(radius=0))))
    out = tmp_path / "out.png"
    r = run_cli("render", str(path), "-o", str(out), "--quiet")
    assert r.returncode == 2
    assert r.stderr.strip() == f"raytrace: error: {path}: objects[0].radius: must be > 0"
    assert "Traceback" not in r.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == [path]


def test_cli_rejects_unknown_output_format_before_rendering(tmp_path):
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(BASE))
    r = run_cli("render", str(path), "-o", str(tmp_path / "out.jpg"))
    assert r.returncode == 2 and "unsupported image format" in r.stderr


def test_cli_renders_colour_depth_and_normals(tmp_path):
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(BASE))
    r = run_cli("render", str(path), "-o", str(tmp_path / "c.png"), "--size", "16", "12", "--spp", "4",
                "--depth", str(tmp_path / "d.png"), "3", "6", "--normals", str(tmp_path / "n.png"),
                "--no-shadows", "--bounces", "2", "--seed", "3", "--quiet")
    assert r.returncode == 0, r.stderr
    import imageio.v3 as iio
    c, d, n = (iio.imread(tmp_path / f) for f in ("c.png", "d.png", "n.png"))
    assert c.shape == d.shape == n.shape == (12, 16, 3)
    # the four pixels around the image centre straddle the sphere's nearest point, 4 from
    # the eye: depth about (4 - 3) / 3 -> 85; their mean normal is (0, 0, 1) -> (128, 128, 255)
    centre = (slice(5, 7), slice(7, 9))
    assert abs(d[centre][..., 0].astype(float).mean() - 255 / 3) <= 3
    assert abs(n[centre].reshape(4, 3).astype(float).mean(axis=0) - [127.5, 127.5, 255]).max() <= 3
