"""The MIT 6.837 ray-tracing scene importer (raytrace.scene.course)."""
import json
import math
import os

import numpy as np
import pytest
from conftest import shared_path
from pyglm import glm

from raytrace.errors import SceneError
from raytrace.scene.course import convert_file, main, parse_course_scene

COURSE_SCENES = ["scene01_plane", "scene02_cube", "scene03_sphere", "scene04_axes",
                 "scene05_bunny_200", "scene06_bunny_1k"]
CAMERA = "Camera {\n    center 0 0 10\n    direction 0 0 -1\n    up 0 1 0\n    fov 30\n}\n"


def course(name):
    return shared_path("course", "a4", f"{name}.txt")


def write(tmp_path, text, name="scene.txt"):
    p = tmp_path / name
    p.write_text(text)
    return p


def assert_plain(value, where="scene"):
    """Only dict/list/str/int/float (no numpy scalars, no bools), all numbers finite."""
    if isinstance(value, dict):
        for k, v in value.items():
            assert type(k) is str
            assert_plain(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            assert_plain(v, f"{where}[{i}]")
    else:
        assert type(value) in (str, int, float), f"{where}: {type(value)}"
        if type(value) is float:
            assert math.isfinite(value), where


def walk(objects):
    for o in objects:
        yield o
        yield from walk(o.get("children", []))


# ---------------------------------------------------------------- the real course files

@pytest.mark.parametrize("name", COURSE_SCENES)
def test_course_scene_parses(name):
    scene = parse_course_scene(course(name))
    assert_plain(scene)
    assert json.loads(json.dumps(scene)) == scene
    assert scene["camera"]["type"] == "perspective"
    assert set(scene) == {"camera", "background", "materials", "lights", "objects"}
    for obj in walk(scene["objects"]):
        assert obj.get("material", "material0") in scene["materials"]


def test_every_course_scene_in_the_folder_parses():
    folder = shared_path("course", "a4")
    files = sorted(folder.glob("scene0*.txt"))
    assert len(files) >= len(COURSE_SCENES)
    for f in files:
        assert parse_course_scene(f)["objects"], f


def test_scene01_values():
    s = parse_course_scene(course("scene01_plane"))
    assert s["camera"] == {"type": "perspective", "center": [0, 0, 10],
                           "direction": [0, 0, -1], "up": [0, 1, 0], "fov": 30}
    assert s["background"] == {"color": [0, 0, 0], "ambient": [0.1, 0.1, 0.1]}
    assert s["lights"] == [{"type": "point", "position": [0.0, 5.0, 5.0],
                            "color": [0.9, 0.9, 0.9], "attenuation": 0.025}]
    assert s["materials"] == {
        "material0": {"diffuse": [1, 0, 0], "specular": [1, 1, 1], "shininess": 20},
        "material1": {"diffuse": [0, 1, 0]},
        "material2": {"diffuse": [0, 0, 1]},
        "material3": {"diffuse": [1, 1, 1], "specular": [1, 1, 1], "shininess": 20},
    }
    spheres = [o for o in s["objects"] if o["type"] == "sphere"]
    planes = [o for o in s["objects"] if o["type"] == "plane"]
    assert len(spheres) == 5 and len(planes) == 1 and len(s["objects"]) == 6
    assert [o["radius"] for o in spheres] == [1, 0.75, 0.75, 0.75, 0.75]
    assert [o["material"] for o in spheres] == ["material0", "material1", "material1",
                                                "material2", "material2"]
    assert "transform" not in spheres[0]
    assert [o["transform"] for o in spheres[1:]] == [
        [{"translate": [1, 1, 1]}], [{"translate": [-1, -1, -1]}],
        [{"translate": [-1, 1, -1]}], [{"translate": [1, -1, -1]}]]
    assert planes[0] == {"type": "plane", "normal": [0, 1, 0], "offset": -2,
                         "material": "material3"}


def test_scene02_mesh_and_directional_light_kept_exactly():
    s = parse_course_scene(course("scene02_cube"))
    assert s["objects"] == [{"type": "mesh", "file": "models/cube2.obj",
                             "material": "material0"}]
    assert s["lights"] == [{"type": "directional", "direction": [-0.5, -0.3, -1],
                            "color": [0.9, 0.9, 0.9]}]
    assert s["background"]["color"] == [0.2, 0, 0.6]


def test_scene03_transform_order():
    s = parse_course_scene(course("scene03_sphere"))
    (sphere,) = s["objects"]
    assert sphere == {"type": "sphere", "radius": 1, "material": "material0",
                      "transform": [{"rotate_z": 45}, {"scale": [1, 0.2, 1]}]}
    assert s["camera"]["fov"] == 20


def test_scene04_nested_groups_and_five_steps():
    s = parse_course_scene(course("scene04_axes"))
    assert s["camera"]["direction"] == [-0.16, -0.12, -0.5]
    group, box = s["objects"]
    assert group["type"] == "group"
    assert "transform" not in group and "material" not in group
    axes = group["children"]
    assert [c["type"] for c in axes] == ["mesh"] * 3
    assert [c["material"] for c in axes] == ["material0", "material1", "material2"]
    assert [c["transform"] for c in axes] == [
        [{"translate": [5, 0, 0]}, {"scale": [5, 0.2, 0.2]}],
        [{"translate": [0, 5, 0]}, {"scale": [0.2, 5, 0.2]}],
        [{"translate": [0, 0, 5]}, {"scale": [0.2, 0.2, 5]}]]
    assert box == {"type": "mesh", "file": "models/cube2.obj", "material": "material3",
                   "transform": [{"translate": [4, 3, 1]}, {"rotate_x": 10},
                                 {"rotate_y": 20}, {"rotate_z": 30},
                                 {"scale": [2, 0.5, 3]}]}


def test_scene05_two_directional_lights():
    s = parse_course_scene(course("scene05_bunny_200"))
    assert [l["direction"] for l in s["lights"]] == [[0.2, -1, -0.4], [-7, -5, -5]]
    assert [l["color"] for l in s["lights"]] == [[0.7, 0.7, 0.7], [0.3, 0.3, 0.3]]
    assert s["materials"]["material0"] == {"diffuse": [0.79, 0.66, 0.44],
                                           "specular": [1, 1, 1], "shininess": 20}


def test_scene06_paths_resolve_relative_to_the_scene_folder():
    src = course("scene06_bunny_1k")
    s = parse_course_scene(src)
    cube = src.parent / s["background"]["cube_map"]
    assert s["background"]["cube_map"] == "tex/church"
    for face in ("left", "right", "up", "down", "front", "back"):
        assert (cube / f"{face}.png").is_file()
    (mesh,) = [o for o in s["objects"] if o["type"] == "mesh"]
    assert (src.parent / mesh["file"]).is_file()
    assert mesh["transform"] == [{"translate": [0.5, -2.6, 0]}, {"scale": [12, 12, 12]}]


# ---------------------------------------------------------------- syntax and semantics

def test_braces_on_one_line_tabs_crlf_and_short_numbers(tmp_path):
    text = ("Camera { center 0 0 10 direction -.16 +1.5e-1 -1 up 0 1 0 fov 30 }\r\n"
            "Materials { Material { diffuse 0 1 0 specular 1 1 1 shininess 5 } }\r\n"
            "Scene {\r\n\tNode { Transform { translate 1 1 1 }\r\n"
            "\t  Component<Material> { index 0 } Component<Object> { type sphere } }\r\n}\r\n")
    s = parse_course_scene(write(tmp_path, text))
    assert s["camera"]["direction"] == [-0.16, 0.15, -1]
    assert s["materials"] == {"material0": {"diffuse": [0, 1, 0], "specular": [1, 1, 1],
                                            "shininess": 5}}
    assert s["objects"] == [{"type": "sphere", "material": "material0",
                             "transform": [{"translate": [1, 1, 1]}]}]
    assert "background" not in s and s["lights"] == []


def test_objects_groups_and_transform_replacement(tmp_path):
    text = CAMERA + """Materials { Material { diffuse 1 0 0 } Material { diffuse 0 1 0 } }
Scene {
    Node {
        Transform { translate 9 9 9 }
        Transform { translate 1 0 0 y_rotate 90 }
        Component<Material> { index 1 }
        Component<Object> { type triangle vertex0 0 0 0 vertex1 1 0 0 vertex2 0 1 0 }
        Node { Component<Object> { type plane normal 0 0 1 offset 3 } }
        Node { Node { Component<Material> { index 0 }
                      Component<Object> { type mesh obj_file a/b.obj } } }
        Node { Component<Light> { type point color 1 1 1 } }
    }
    Node { Component<Object> { type sphere radius 2 }
           Node { Component<Light> { type point color 1 1 1 } } }
    Node { Transform { scale 2 2 2 } Node { Component<Material> { index 0 } } }
}
"""
    s = parse_course_scene(write(tmp_path, text))
    group, sphere = s["objects"]
    assert group == {
        "type": "group", "material": "material1",
        "transform": [{"translate": [1, 0, 0]}, {"rotate_y": 90}],
        "children": [
            {"type": "triangle", "vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0]]},
            {"type": "plane", "normal": [0, 0, 1], "offset": 3},
            {"type": "group", "children": [
                {"type": "mesh", "file": "a/b.obj", "material": "material0"}]},
        ]}
    # A node whose children hold no objects stays a plain object.
    assert sphere == {"type": "sphere", "radius": 2}
    # The second Transform replaced the first: the light sits at (1, 0, 0).
    assert s["lights"][0]["position"] == [1.0, 0.0, 0.0]
    assert "attenuation" not in s["lights"][0]


def test_light_two_nodes_deep_matches_hand_computed_product(tmp_path):
    # Parent: T(1,2,3) R_y(90). Child: T(0,0,1) R_z(90). R_y(90) maps (x,y,z) -> (z,y,-x).
    # Point light at the child origin: T(1,2,3) R_y(90) (0,0,1) = (1,2,3) + (1,0,0).
    # Applying each block's lines in the opposite order would give R_y(90) (1,2,4) = (4,2,-1).
    # Directional (0,0,-2): R_z(90) keeps it, R_y(90) gives (-2,0,0), unit (-1,0,0).
    text = CAMERA + """Scene {
    Node {
        Transform { translate 1 2 3
                    y_rotate 90 }
        Node {
            Transform { translate 0 0 1 z_rotate 90 }
            Component<Light> { type point color 1 1 1 attenuation 0.5 }
            Node { Component<Light> { type directional direction 0 0 -2 color 1 1 1 } }
        }
    }
}
"""
    s = parse_course_scene(write(tmp_path, text))
    point, directional = s["lights"]
    np.testing.assert_allclose(point["position"], [2, 2, 3], atol=1e-12)
    assert point["attenuation"] == 0.5
    np.testing.assert_allclose(directional["direction"], [-1, 0, 0], atol=1e-12)
    # The same product written out as 4x4 matrices.
    c, z = 0.0, 1.0  # cos 90, sin 90
    parent = np.array([[1, 0, 0, 1], [0, 1, 0, 2], [0, 0, 1, 3], [0, 0, 0, 1.]]) @ \
        np.array([[c, 0, z, 0], [0, 1, 0, 0], [-z, 0, c, 0], [0, 0, 0, 1.]])
    child = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 1.]]) @ \
        np.array([[c, -z, 0, 0], [z, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.]])
    np.testing.assert_allclose(point["position"], (parent @ child)[:3, 3], atol=1e-12)


def test_light_world_transform_matches_pyglm(tmp_path):
    text = CAMERA + """Scene {
    Node {
        Transform { translate 0.5 -1 2 x_rotate 33 scale 1 2 0.5 }
        Node {
            Transform { z_rotate -70 translate 3 1 -2 y_rotate 12.5 scale 0.3 0.3 0.3 }
            Component<Light> { type point color 1 1 1 }
            Node { Component<Light> { type directional direction 1 2 3 color 1 1 1 } }
        }
    }
}
"""
    s = parse_course_scene(write(tmp_path, text))
    v = glm.dvec3
    m = glm.dmat4(1.0)  # double precision, GLM's own composition M = M * step
    m = glm.translate(m, v(0.5, -1, 2))
    m = glm.rotate(m, glm.radians(33.0), v(1, 0, 0))
    m = glm.scale(m, v(1, 2, 0.5))
    m = glm.rotate(m, glm.radians(-70.0), v(0, 0, 1))
    m = glm.translate(m, v(3, 1, -2))
    m = glm.rotate(m, glm.radians(12.5), v(0, 1, 0))
    m = glm.scale(m, v(0.3))
    position = m * glm.dvec4(0, 0, 0, 1)
    direction = glm.normalize(glm.dmat3(m) * v(1, 2, 3))
    np.testing.assert_allclose(s["lights"][0]["position"], list(position.xyz), rtol=1e-12)
    np.testing.assert_allclose(s["lights"][1]["direction"], list(direction), rtol=1e-12)
    assert abs(np.linalg.norm(s["lights"][1]["direction"]) - 1) < 1e-12


# ---------------------------------------------------------------- convert_file

def test_convert_file_rewrites_paths_for_another_folder(tmp_path):
    src = course("scene06_bunny_1k")
    dst = tmp_path / "out" / "deeper" / "bunny.json"
    scene = convert_file(src, dst)
    assert json.loads(dst.read_text()) == scene
    assert os.listdir(dst.parent) == ["bunny.json"]  # no temporary file left
    cube = dst.parent / scene["background"]["cube_map"]
    assert os.path.samefile(cube, src.parent / "tex" / "church")
    (mesh,) = [o for o in scene["objects"] if o["type"] == "mesh"]
    assert not os.path.isabs(mesh["file"])
    assert os.path.samefile(dst.parent / mesh["file"], src.parent / "models" / "bunny_1k.obj")


def test_convert_file_nested_mesh_paths(tmp_path):
    src = course("scene04_axes")
    dst = tmp_path / "axes.json"
    scene = convert_file(src, dst)
    files = [o["file"] for o in walk(scene["objects"]) if o["type"] == "mesh"]
    assert len(files) == 4
    for f in files:
        assert os.path.samefile(tmp_path / f, src.parent / "models" / "cube2.obj")


def test_failed_conversion_leaves_no_file(tmp_path):
    src = write(tmp_path, CAMERA + "Scene {\n    Node {\n", "bad.txt")
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(SceneError):
        convert_file(src, out / "bad.json")
    assert os.listdir(out) == []
    old = out / "keep.json"
    old.write_text("{}")
    with pytest.raises(SceneError):
        convert_file(src, old)
    assert old.read_text() == "{}" and os.listdir(out) == ["keep.json"]


def test_cli(tmp_path, capsys):
    good = write(tmp_path, CAMERA, "good.txt")
    assert main([str(good), str(tmp_path / "good.json")]) == 0
    assert json.loads((tmp_path / "good.json").read_text())["camera"]["fov"] == 30
    bad = write(tmp_path, CAMERA + "Materials {\n Material { diffuse 1 }\n}\n", "bad.txt")
    assert main([str(bad), str(tmp_path / "bad.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.txt: line 8:" in err
    assert not (tmp_path / "bad.json").exists()


# ---------------------------------------------------------------- errors

ERRORS = {
    # name: (text, line or None, fragment of the message)
    "unknown block": (CAMERA + "\nLights {\n}\n", 8, "unknown block 'Lights'"),
    "unknown block in node": (CAMERA + "Scene {\n  Node {\n    Component<Camera> { }\n"
                              "  }\n}\n", 9, "unknown block 'Component<Camera>' in Node"),
    "unknown keyword": (CAMERA + "Materials {\n  Material {\n    difuse 1 0 0\n  }\n}\n",
                        9, "unknown keyword 'difuse' in Material"),
    "keyword case": ("Camera {\n  Center 0 0 10\n}\n", 2, "unknown keyword 'Center'"),
    "too few values": (CAMERA + "Background {\n  color 0 0\n}\n", 8,
                       "'color' expects 3 numbers, got 2"),
    "too many values": (CAMERA + "Materials { Material {\n shininess 20 30 } }\n", 8,
                        "'shininess' expects 1 number, got 2"),
    "value on next line": (CAMERA + "Background {\n  color 0 0\n  0\n}\n", 8,
                           "expects 3 numbers, got 2"),
    "non-numeric": (CAMERA + "Scene {\n  Node {\n    Component<Object> {\n"
                    "      type sphere\n      radius one\n    }\n  }\n}\n", 11,
                    "expects numbers, got 'one'"),
    "not finite": (CAMERA + "Background {\n  color 0 1e999 0\n}\n", 8,
                   "expects numbers, got '1e999'"),
    "nan": (CAMERA + "Background {\n  color 0 nan 0\n}\n", 8, "got 'nan'"),
    "non-integer index": (CAMERA + "Scene { Node {\n  Component<Material> { index 1.0 }\n"
                          "} }\n", 8, "'index' expects an integer, got '1.0'"),
    "unclosed block": (CAMERA + "Materials {\n  Material { diffuse 1 0 0 }\n}\n"
                       "Scene {\n  Node {\n  }\n", 10, "'Scene' block opened here is never"),
    "missing close brace": (CAMERA + "Materials {\n  Material { diffuse 1 0 0 }\n"
                            "Scene {\n}\n", 9, "unknown block 'Scene' in Materials"),
    "extra brace": (CAMERA + "Scene {\n}\n}\n", 9, "unmatched '}'"),
    "missing open brace": (CAMERA + "Scene\n  Node { }\n}\n", 7, "expected '{' after 'Scene'"),
    "stray open brace": (CAMERA + "Materials {\n  {\n  }\n}\n", 8, "unexpected '{'"),
    "index out of range": (CAMERA + "Materials { Material { diffuse 1 0 0 } }\n"
                           "Scene {\n  Node {\n    Component<Material> { index 1 }\n"
                           "  }\n}\n", 10, "material index 1 out of range (materials: 0..0)"),
    "negative index": (CAMERA + "Scene {\n  Node { Component<Material> { index -1 } }\n}\n",
                       8, "material index -1 out of range (materials: none defined)"),
    "missing camera": ("Background {\n  color 0 0 0\n}\n", None, "no Camera block"),
    "second camera": (CAMERA + CAMERA, 7, "second 'Camera' block (the first is on line 1)"),
    "camera without direction": ("\nCamera { center 0 0 1 }\n", 2,
                                 "Camera: missing 'direction'"),
    "unknown light type": (CAMERA + "Scene {\n  Node {\n    Component<Light> {\n"
                           "      type spot\n      color 1 1 1\n    }\n  }\n}\n", 10,
                           "unknown light type 'spot'"),
    "unknown object type": (CAMERA + "Scene {\n  Node {\n    Component<Object> {\n"
                            "      type cone\n    }\n  }\n}\n", 10,
                            "unknown object type 'cone'"),
    "object without type": (CAMERA + "Scene {\n  Node {\n    Component<Object> {\n"
                            "      radius 1\n    }\n  }\n}\n", 9,
                            "Component<Object> has no 'type'"),
    "light without type": (CAMERA + "Scene {\n  Node {\n    Component<Light> {\n"
                           "      color 1 1 1\n    }\n  }\n}\n", 9,
                           "Component<Light> has no 'type'"),
    "key of another type": (CAMERA + "Scene {\n  Node {\n    Component<Object> {\n"
                            "      type sphere\n      offset 2\n    }\n  }\n}\n", 11,
                            "'offset' does not apply to a sphere object"),
    "plane without normal": (CAMERA + "Scene {\n  Node {\n    Component<Object> {\n"
                             "      type plane offset 2\n    }\n  }\n}\n", 9,
                             "plane object needs 'normal'"),
    "second component": (CAMERA + "Scene {\n  Node {\n"
                         "    Component<Object> { type sphere }\n"
                         "    Component<Object> { type sphere }\n  }\n}\n", 10,
                         "second Component<Object> in one Node (the first is on line 9)"),
    "repeated keyword": (CAMERA + "Materials {\n  Material {\n    diffuse 1 0 0\n"
                         "    diffuse 0 1 0\n  }\n}\n", 10,
                         "'diffuse' given twice (first on line 9)"),
    "directional light scaled to zero": (CAMERA + "Scene {\n  Node {\n"
                                         "    Transform { scale 0 0 0 }\n"
                                         "    Component<Light> { type directional "
                                         "direction 1 0 0 color 1 1 1 }\n  }\n}\n", 10,
                                         "transforms its direction to zero"),
}


@pytest.mark.parametrize("kind", ERRORS)
def test_errors_name_file_and_line(tmp_path, kind):
    text, line, fragment = ERRORS[kind]
    path = write(tmp_path, text, "broken_scene.txt")
    with pytest.raises(SceneError) as info:
        parse_course_scene(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}: ")
    if line is None:
        assert msg == f"{path}: {fragment}" and info.value.where is None
    else:
        assert msg.startswith(f"{path}: line {line}: "), msg
        assert info.value.where == f"line {line}"
    assert fragment in msg, msg


def test_missing_file_is_a_scene_error(tmp_path):
    with pytest.raises(SceneError, match="nowhere.txt: scene file not found"):
        parse_course_scene(tmp_path / "nowhere.txt")


# ---------------------------------------------------------------- our loader accepts them

@pytest.mark.parametrize("name", COURSE_SCENES)
def test_converted_scene_passes_our_loader(tmp_path, name):
    load = pytest.importorskip("raytrace.loading")
    src = course(name)
    dst = tmp_path / f"{name}.json"
    scene = convert_file(src, dst)
    from_file = load.load_scene(dst)               # the JSON file, paths relative to it
    from_dict = load.load_scene(parse_course_scene(src), base_dir=src.parent)
    assert from_file.data["lights"] == from_dict.data["lights"] == scene["lights"]
