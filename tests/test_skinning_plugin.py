"""skinning: the ray tracer's ``skinned_mesh`` plug-in and the ``python -m skinning`` CLI."""
import numpy as np
import pytest
from conftest import REPO, shared_path
from jsonschema import Draft202012Validator

import skinning as sk
from raytrace.errors import SceneError
from raytrace.scene.objects.skinning import OBJECT_TYPES, build_skinned_mesh
from skinning.cli import main

SCENES = REPO / "scenes"
FIG = {"skel": "assets/skinning/figure.skel", "attach": "assets/skinning/figure.attach",
       "obj": "assets/skinning/figure.obj"}


def build(**obj):
    return build_skinned_mesh({"type": "skinned_mesh", **obj}, "objects[1]", SCENES)


def test_schema_fragment_is_valid_and_accepts_the_scenes():
    spec = OBJECT_TYPES["skinned_mesh"]
    schema = {"type": "object", "properties": {"type": {"const": "skinned_mesh"},
                                               "material": {}, "transform": {},
                                               **spec["properties"]},
              "required": spec["required"], "additionalProperties": False}
    Draft202012Validator.check_schema(schema)
    import json
    for name in ("skinned_figure.json", "skinned_model1.json"):
        for obj in json.loads((SCENES / name).read_text())["objects"]:
            if obj["type"] == "skinned_mesh":
                Draft202012Validator(schema).validate(obj)


def test_posed_mesh_matches_library():
    v, f, n = build(**FIG, pose="assets/skinning/figure_wave.json")
    model = sk.load_course(*[SCENES / FIG[k] for k in ("skel", "attach", "obj")])
    pose = sk.load_pose(SCENES / "assets/skinning/figure_wave.json", model.skeleton)
    ref_v, ref_n = model.skin(pose)
    np.testing.assert_allclose(v, ref_v)
    np.testing.assert_allclose(n, ref_n)
    np.testing.assert_array_equal(f, model.faces)
    assert f.dtype == np.int64 and v.dtype == np.float64
    np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1.0)
    # the waving right hand (joint 12) is raised above the head
    assert v[:, 1].max() > model.vertices[:, 1].max() + 0.05


def test_inline_pose_animation_skeleton_and_flat():
    inline = build(**FIG, pose={"rotations": {"6": [0, 0, 45]}})
    anim = build(**FIG, animation="assets/skinning/figure_walk.json", time=0.5)
    looped = build(**FIG, animation="assets/skinning/figure_walk.json", time=2.5, loop=True)
    np.testing.assert_allclose(anim[0], looped[0], atol=1e-12)
    assert not np.allclose(inline[0], anim[0])
    v, f, n = build(**FIG, show="skeleton", joint_radius=0.04)
    assert f.shape[0] == 21 * 224 + 20 * 24
    v, f, n = build(**FIG, normals="flat")
    assert n is None


@pytest.mark.parametrize("obj, where, message", [
    ({"skel": "nope.skel", "attach": FIG["attach"], "obj": FIG["obj"]},
     "objects[1].skel", "file not found"),
    ({"skel": FIG["skel"], "obj": FIG["obj"]}, "objects[1]", "missing: attach"),
    ({**FIG, "pose": {"rotations": {"99": [0, 0, 1]}}}, "objects[1].pose.rotations.99",
     "unknown joint '99'"),
    ({**FIG, "pose": "assets/skinning/figure_walk.json"}, "objects[1].pose", "unknown key"),
    ({**FIG, "time": 1.0}, "objects[1].time", "needs an 'animation'"),
    ({**FIG, "animation": 0}, "objects[1].animation", "animation 0 out of range"),
    ({**FIG, "gltf": "x.gltf"}, "objects[1].skel", "either 'gltf'"),
])
def test_errors_name_the_field(obj, where, message):
    with pytest.raises(SceneError) as err:
        build(**obj)
    assert err.value.where == where
    assert message in err.value.message


def test_bad_course_file_error_is_rethrown_with_its_line(tmp_path):
    (tmp_path / "a.skel").write_text("0 0 0 -1\n0 1 0 3\n")
    (tmp_path / "a.attach").write_text("1\n")
    (tmp_path / "a.obj").write_text("v 0 0 0\n")
    with pytest.raises(SceneError) as err:
        build_skinned_mesh({"skel": "a.skel", "attach": "a.attach", "obj": "a.obj"}, "objects[0]",
                           tmp_path)
    assert err.value.where == "objects[0].skel"
    assert "a.skel: line 2: parent 3 comes after this joint" in err.value.message


def test_gltf_animation_in_plugin():
    gltf = shared_path("assets", "simple_skin.gltf")
    v, f, n = build_skinned_mesh({"gltf": str(gltf), "animation": 0, "time": 1.0},
                                 "objects[0]", SCENES)
    # at t = 1 s the upper joint is turned 90 degrees about z (key 0.707, 0.707): vertex 8,
    # (0, 2, 0) fully on it, goes to T(0,1,0) Rz(90) T(-0.5,-1,0) p = (-1, 0.5, 0)
    assert v.shape == (10, 3) and f.shape == (8, 3)
    np.testing.assert_allclose(v[8], [-1, 0.5, 0], atol=1e-12)


def test_model1_scene_object_builds():
    shared_path("course", "a2", "Model1.skel")
    import json
    obj = json.loads((SCENES / "skinned_model1.json").read_text())["objects"][1]
    v, f, n = build_skinned_mesh(obj, "objects[1]", SCENES)
    assert v.shape == (13336, 3) and f.shape == (26668, 3)


def test_cli(tmp_path, capsys):
    args = [f"--{k}={SCENES / p}" for k, p in FIG.items()]
    assert main(["info", *args, "--pose", str(SCENES / "assets/skinning/figure_wave.json")]) == 0
    out = capsys.readouterr().out
    assert "21 joints" in out and "joint20" in out
    assert main(["export", *args, "-o", str(tmp_path / "p.obj")]) == 0
    v, f = sk.read_obj(tmp_path / "p.obj")
    assert v.shape[0] > 1000
    png = tmp_path / "p.png"
    assert main(["preview", *args, "--size", "120", "-o", str(png)]) == 0
    import imageio.v3 as iio
    img = iio.imread(png)
    assert img.shape[0] > 50 and img[..., :3].std() > 10          # something was drawn
    assert main(["info", f"--skel={SCENES / FIG['skel']}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("skinning: error: need --gltf") and err.count("\n") == 1
