"""skinning readers: course .skel/.attach/.obj, glTF skins and animations, pose JSON."""
import base64
import json

import numpy as np
import pytest
from conftest import REPO, shared_path
from scipy.interpolate import CubicHermiteSpline

import skinning as sk
from skinning.errors import SkinningFileError

FIG = REPO / "scenes/assets/skinning"


def model1():
    return [shared_path("course", "a2", f"Model1.{e}") for e in ("skel", "attach", "obj")]


def signed_volume(v, f):
    return np.einsum("ij,ij->i", v[f[:, 0]], np.cross(v[f[:, 1]], v[f[:, 2]])).sum() / 6.0


# ---------------------------------------------------------------- course files

def test_model1_counts_and_bind_pose():
    skel, attach, obj = model1()
    m = sk.load_course(skel, attach, obj)
    assert m.skeleton.num_joints == 18
    assert m.num_vertices == 13336 and m.faces.shape == (26668, 3)
    raw = np.loadtxt(attach)                            # columns are joints 1..17
    dense = sk.sparse_to_dense(m.joints, m.weights, 18)
    assert np.all(dense[:, 0] == 0.0)
    np.testing.assert_allclose(dense[:, 1:], raw / raw.sum(axis=1, keepdims=True), atol=1e-15)
    first = np.loadtxt(skel)
    np.testing.assert_allclose(m.skeleton.bind_matrices()[0, :3, 3], first[0, :3])
    np.testing.assert_allclose(m.skeleton.bind_matrices()[2, :3, 3],
                               first[0, :3] + first[1, :3] + first[2, :3])
    assert signed_volume(m.vertices, m.faces) > 0          # faces CCW seen from outside
    v, n = m.skin()
    assert np.abs(v - m.vertices).max() < 1e-6


def test_model1_joint_rotation_moves_attached_vertices_rigidly():
    m = sk.load_course(*model1())
    dense = sk.sparse_to_dense(m.joints, m.weights, 18)
    j = 14                                   # a leaf joint: its fully attached vertices
    full = dense[:, j] == 1.0
    assert full.sum() > 50
    pose = m.skeleton.rest_pose()
    pose.rotations[j] = sk.axis_angle_to_quat([1, 1, 0], 50, degrees=True)
    v = m.skin(pose, normals=None)
    c = m.skeleton.bind_matrices()[j, :3, 3]
    r = sk.quat_to_matrix(pose.rotations[j])
    np.testing.assert_allclose(v[full], c + (m.vertices[full] - c) @ r.T, atol=1e-12)


def test_figure_files_load_and_are_closed_outward():
    m = sk.load_course(FIG / "figure.skel", FIG / "figure.attach", FIG / "figure.obj")
    assert m.skeleton.num_joints == 21 and m.num_vertices > 1000
    assert signed_volume(m.vertices, m.faces) > 0
    edges = np.sort(m.faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
    _, counts = np.unique(edges, axis=0, return_counts=True)
    assert np.all(counts == 2)                                   # closed (watertight)


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


GOOD_SKEL = "0 1 0 -1\n0 0.5 0 0\n0 0.5 0 1\n"
GOOD_OBJ = "v 0 1 0\nv 0 1.5 0\nv 0.1 2 0\nf 1 2 3\n"


@pytest.mark.parametrize("files, message", [
    ({"skel": "0 1 0 -1\n0 0.5 0 2\n0 0.5 0 1\n"},
     "a.skel: line 2: parent 2 comes after this joint (joint 1)"),
    ({"skel": "0 1 0 -1\n0 0.5 0\n"}, "a.skel: line 2: expected 4 values 'tx ty tz parent', got 3"),
    ({"skel": "0 1 0 -1\n0 x 0 0\n"}, "a.skel: line 2: translation: 'x' is not a number"),
    ({"skel": "0 1 0 -1\n0 1 0 0.5\n"}, "a.skel: line 2: parent '0.5' is not an integer"),
    ({"attach": "1 0\n1\n0 1\n"}, "a.attach: line 2: expected 2 weights (joints 1..2), got 1"),
    ({"attach": "1 0\n0.5 0.4\n0 1\n"}, "a.attach: line 2: weights sum to 0.9, expected 1"),
    ({"attach": "1 0\n1.2 -0.2\n0 1\n"}, "a.attach: line 2: negative weight -0.2"),
    ({"attach": "1 0\n0 1\n"}, "a.attach: 2 lines of weights but a.obj has 3 vertices"),
    ({"obj": "v 0 1 0\nv 0 1.5 0\nf 1 2 3\n"}, "a.obj: line 3: face: vertex 3 does not exist"),
    ({"obj": "v 0 1\n"}, "a.obj: line 1: vertex: expected 3 coordinates, got 2"),
])
def test_bad_course_files_name_file_and_line(tmp_path, files, message):
    texts = {"skel": GOOD_SKEL, "attach": "1 0\n0 1\n0 1\n", "obj": GOOD_OBJ, **files}
    paths = {k: write(tmp_path, f"a.{k}", t) for k, t in texts.items()}
    with pytest.raises(SkinningFileError) as err:
        sk.load_course(paths["skel"], paths["attach"], paths["obj"])
    assert str(err.value).startswith(str(tmp_path))
    assert message in str(err.value)


def test_attach_normalize_option_and_blank_lines(tmp_path):
    skel = write(tmp_path, "a.skel", GOOD_SKEL)
    attach = write(tmp_path, "a.attach", "1 0\n\n0.25 0.25\n0 1\n")
    obj = write(tmp_path, "a.obj", GOOD_OBJ)
    m = sk.load_course(skel, attach, obj, normalize=True)
    np.testing.assert_allclose(sk.sparse_to_dense(m.joints, m.weights, 3)[1], [0, 0.5, 0.5])
    with pytest.raises(SkinningFileError, match="a.attach: line 3: weights sum to 0.5"):
        sk.load_course(skel, attach, obj)
    with pytest.raises(SkinningFileError, match="missing.skel: cannot read file"):
        sk.load_course(tmp_path / "missing.skel", attach, obj)


def test_obj_polygons_and_relative_indices(tmp_path):
    p = write(tmp_path, "q.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvn 0 0 1\n"
                                 "f 1/1/1 2/2/1 3/3/1 4/4/1\nf -4 -3 -2\n")
    v, f = sk.read_obj(p)
    np.testing.assert_array_equal(f, [[0, 1, 2], [0, 2, 3], [0, 1, 2]])


# ---------------------------------------------------------------- glTF

def simple_skin():
    return shared_path("assets", "simple_skin.gltf")


def translate(x, y, z):
    m = np.eye(4)
    m[:3, 3] = [x, y, z]
    return m


def rot_z(deg):
    m = np.eye(4)
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    m[:2, :2] = [[c, -s], [s, c]]
    return m


def test_gltf_sample_contents():
    m = sk.load_gltf(simple_skin())
    assert m.skeleton.num_joints == 2 and list(m.skeleton.parents) == [-1, 0]
    assert m.num_vertices == 10 and m.faces.shape == (8, 3)
    np.testing.assert_allclose(m.inverse_bind, [translate(-0.5, -1, 0)] * 2)
    dense = sk.sparse_to_dense(m.joints, m.weights, 2)
    np.testing.assert_allclose(dense[:, 1], [0, 0, 0.25, 0.25, 0.5, 0.5, 0.75, 0.75, 1, 1])
    np.testing.assert_allclose(m.vertices[:, 1], np.repeat([0, 0.5, 1, 1.5, 2], 2))
    anim = m.animations["animation0"]
    assert len(anim.channels) == 1 and anim.channels[0].joint == 1
    assert (anim.start, anim.end) == (0.0, 5.5)


def key_angle(z, w):
    """Rotation angle (degrees) about +z of the file's keyframe quaternion (x=y=0)."""
    return np.degrees(2 * np.arctan2(np.float32(z), np.float32(w)))


# keyframes of simple_skin.gltf, rotation about z as (z, w): times 0, 0.5, ..., 5.5
KEYS = [(0, 1), (0.383, 0.924), (0.707, 0.707), (0.707, 0.707), (0.383, 0.924), (0, 1),
        (0, 1), (-0.383, 0.924), (-0.707, 0.707), (-0.707, 0.707), (-0.383, 0.924), (0, 1)]


@pytest.mark.parametrize("time", [0.0, 0.25, 0.5, 1.25, 2.2, 3.75, 5.5, 7.0])
def test_gltf_joint_matrices_match_hand_computation(time):
    m = sk.load_gltf(simple_skin())
    mats = m.skinning_matrices(m.pose_at(0, time))
    k = min(int(time // 0.5), 10)
    u = min((time - 0.5 * k) / 0.5, 1.0)
    # both keys turn about +z, so slerp is linear in the angle
    angle = (1 - u) * key_angle(*KEYS[k]) + u * key_angle(*KEYS[k + 1])
    world1 = translate(0, 1, 0) @ rot_z(angle)
    np.testing.assert_allclose(mats[0], translate(0, 1, 0) @ translate(-0.5, -1, 0), atol=1e-12)
    np.testing.assert_allclose(mats[1], world1 @ translate(-0.5, -1, 0), atol=1e-6)
    # skinned positions: the reference formula p' = sum_j w_j M_j p
    dense = sk.sparse_to_dense(m.joints, m.weights, 2)
    ph = np.hstack([m.vertices, np.ones((10, 1))])
    ref = (dense[:, :1] * (ph @ mats[0].T) + dense[:, 1:] * (ph @ mats[1].T))[:, :3]
    np.testing.assert_allclose(m.skin(m.pose_at("animation0", time), normals=None), ref,
                               atol=1e-12)


def test_gltf_step_interpolation_and_loop(tmp_path):
    doc = json.loads(simple_skin().read_text())
    doc["animations"][0]["samplers"][0]["interpolation"] = "STEP"
    doc["nodes"][0]["name"] = "mesh"
    doc["nodes"][1]["name"] = "upper"
    doc["nodes"][2]["name"] = "lower"
    p = tmp_path / "step.gltf"
    p.write_text(json.dumps(doc))
    m = sk.load_gltf(p)
    assert m.skeleton.names == ["upper", "lower"]
    for t, key in ((0.4, 0), (0.5, 1), (0.99, 1), (3.9, 7)):
        q = m.pose_at(0, t).rotations[1]
        assert np.degrees(2 * np.arctan2(q[3], q[0])) == pytest.approx(key_angle(*KEYS[key]))
    looped = m.pose_at(0, 0.25 + 5.5, loop=True).rotations[1]
    np.testing.assert_allclose(looped, m.pose_at(0, 0.25).rotations[1])


def test_gltf_parent_order_and_bad_weights(tmp_path):
    doc = json.loads(simple_skin().read_text())
    doc["skins"][0]["joints"] = [2, 1]           # child listed first: reordered on load
    p = tmp_path / "order.gltf"
    p.write_text(json.dumps(doc))
    m = sk.load_gltf(p)
    ref = sk.load_gltf(simple_skin())
    assert list(m.skeleton.parents) == [-1, 0] and m.skeleton.names == ["node1", "node2"]
    # JOINTS_0 now point the other way round, and were remapped with the joints
    dense = sk.sparse_to_dense(m.joints, m.weights, 2)
    np.testing.assert_allclose(dense[:, 0], [0, 0, 0.25, 0.25, 0.5, 0.5, 0.75, 0.75, 1, 1])
    pose = m.pose_at(0, 1.0)
    mats = m.skinning_matrices(pose)
    np.testing.assert_allclose(mats, ref.skinning_matrices(ref.pose_at(0, 1.0)), atol=1e-15)
    v = m.skin(pose, normals=None)
    np.testing.assert_allclose(v[[8, 9]], m.vertices[[8, 9]] - [0.5, 0, 0], atol=1e-15)
    np.testing.assert_allclose(v[[0, 1]], m.vertices[[0, 1]] @ mats[1, :3, :3].T + mats[1, :3, 3],
                               atol=1e-15)
    doc = json.loads(simple_skin().read_text())
    doc["skins"][0]["joints"] = [1]
    p.write_text(json.dumps(doc))
    with pytest.raises(SkinningFileError, match=r"order.gltf: skins\[0\].inverseBindMatrices: "
                                                r"expected 1 MAT4, got 2"):
        sk.load_gltf(p)
    del doc["skins"][0]["inverseBindMatrices"]
    p.write_text(json.dumps(doc))
    with pytest.raises(SkinningFileError, match=r"order.gltf: meshes\[0\].primitives\[0\]"
                                                r".attributes.JOINTS_0: joint index 1 but the "
                                                r"skin has 1 joints"):
        sk.load_gltf(p)

    # a sparse accessor overrides vertex 3's weights with (0.5, 0.2, 0, 0)
    doc = json.loads(simple_skin().read_text())
    blob = np.array([3, 0], "<u2").tobytes() + np.array([0.5, 0.2, 0, 0], "<f4").tobytes()
    doc["buffers"].append({"byteLength": len(blob), "uri": "data:application/octet-stream;base64,"
                           + base64.b64encode(blob).decode()})
    doc["bufferViews"] += [{"buffer": 4, "byteOffset": 0, "byteLength": 4},
                           {"buffer": 4, "byteOffset": 4, "byteLength": 16}]
    doc["accessors"][3]["sparse"] = {"count": 1,
                                     "indices": {"bufferView": 5, "componentType": 5123},
                                     "values": {"bufferView": 6}}
    p.write_text(json.dumps(doc))
    with pytest.raises(SkinningFileError, match=r"order.gltf: meshes\[0\].primitives\[0\]"
                                                r".attributes.WEIGHTS_0: vertex 3: weights sum "
                                                r"to 0.7, expected 1"):
        sk.load_gltf(p)
    m = sk.load_gltf(p, normalize=True)
    np.testing.assert_allclose(m.weights[3, :2], [5 / 7, 2 / 7])


def test_cubic_spline_channel_matches_scipy_hermite():
    times = np.array([0.0, 1.0, 2.5])
    vals = np.array([[0, 0, 0], [1, 2, 0], [0, 1, 3]], float)
    tin = np.array([[1, 0, 0], [0, 1, 1], [2, 0, 0]], float)
    tout = np.array([[0, 1, 0], [1, 0, -1], [0, 0, 1]], float)
    ch = sk.Channel(0, "translation", times, np.stack([tin, vals, tout], axis=1), "CUBICSPLINE")
    for t in (0.3, 1.0, 1.7, 2.4):
        k = int(np.searchsorted(times, t, side="right")) - 1
        seg = CubicHermiteSpline(times[k:k + 2], vals[k:k + 2], np.array([tout[k], tin[k + 1]]))
        np.testing.assert_allclose(ch.sample(t), seg(t), atol=1e-12)
    np.testing.assert_allclose(ch.sample(-1.0), vals[0])
    np.testing.assert_allclose(ch.sample(9.0), vals[-1])


# ---------------------------------------------------------------- pose and animation JSON

@pytest.fixture(scope="module")
def figure():
    return sk.load_course(FIG / "figure.skel", FIG / "figure.attach", FIG / "figure.obj")


def test_pose_rotation_forms_agree(figure):
    s = figure.skeleton
    forms = [
        {"rotations": {"6": [0, 0, 30]}},
        {"units": "radians", "rotations": {"joint6": [0, 0, np.pi / 6]}},
        {"rotations": {"6": {"euler": [0, 0, 30]}}},
        {"rotations": {"6": {"axis": [0, 0, 2], "angle": 30}}},
        {"rotations": {"6": {"wxyz": [np.cos(np.pi / 12), 0, 0, np.sin(np.pi / 12)]}}},
        {"rotations": {"6": {"xyzw": [0, 0, np.sin(np.pi / 12), np.cos(np.pi / 12)]}}},
    ]
    want = sk.euler_to_quat([0, 0, np.pi / 6])
    for d in forms:
        pose = sk.pose_from_dict(d, s)
        np.testing.assert_allclose(pose.rotations[6], want, atol=1e-15)
        np.testing.assert_allclose(np.delete(pose.rotations, 6, axis=0), np.delete(s.rotations, 6, axis=0))
    pose = sk.pose_from_dict({"translations": {"0": [0, 2, 0]}, "scales": {"3": 2}}, s)
    np.testing.assert_allclose(pose.translations[0], [0, 2, 0])
    np.testing.assert_allclose(pose.scales[3], [2, 2, 2])
    back = sk.pose_from_dict(sk.pose_to_dict(pose, s), s)
    np.testing.assert_allclose(back.translations, pose.translations)
    np.testing.assert_allclose(back.scales, pose.scales)


@pytest.mark.parametrize("doc, message", [
    ({"rotations": {"6": [0, 30]}}, "p.json: rotations.6: expected 3 numbers, got 2"),
    ({"rotations": {"elbow": [0, 0, 30]}}, "p.json: rotations.elbow: unknown joint 'elbow'"),
    ({"rotations": {"99": [0, 0, 30]}}, "p.json: rotations.99: unknown joint '99'"),
    ({"rotation": {}}, "p.json: rotation: unknown key"),
    ({"units": "grad"}, "p.json: units: must be 'degrees' or 'radians'"),
    ({"rotations": {"2": {"axis": [0, 0, 0], "angle": 3}}}, "p.json: rotations.2.axis: axis must not be zero"),
    ({"rotations": {"2": {"wxyz": [1, 0, 0, 0], "euler": [0, 0, 0]}}}, "p.json: rotations.2: give exactly one"),
    ({"rotations": {"2": [0, "a", 0]}}, "p.json: rotations.2: expected 3 finite numbers"),
])
def test_bad_pose_json_names_file_and_field(tmp_path, figure, doc, message):
    p = tmp_path / "p.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(SkinningFileError) as err:
        sk.load_pose(p, figure.skeleton)
    assert message in str(err.value)


def test_invalid_json_reports_line(tmp_path, figure):
    p = tmp_path / "bad.json"
    p.write_text('{\n  "rotations": {\n    "3": [0, 0, 1],\n  }\n}\n')
    with pytest.raises(SkinningFileError, match=r"bad.json: line 4: invalid JSON"):
        sk.load_pose(p, figure.skeleton)


def test_animation_json_channels_and_sampling(tmp_path, figure):
    s = figure.skeleton
    doc = {"keyframes": [
        {"time": 0, "rotations": {"6": [0, 0, 0], "14": [10, 0, 0]}},
        {"time": 1, "rotations": {"6": [0, 0, 80]}, "translations": {"0": [0, 1, 0]}},
        {"time": 3, "rotations": {"6": [0, 0, 40], "14": [50, 0, 0]}}]}
    anim = sk.animation_from_dict(doc, s, name="test")
    assert [(c.joint, c.path, len(c.times)) for c in anim.channels] == [
        (0, "translation", 1), (6, "rotation", 3), (14, "rotation", 2)]
    pose = anim.sample(s, 0.5)
    np.testing.assert_allclose(pose.rotations[6], sk.euler_to_quat([0, 0, 40], degrees=True), atol=1e-14)
    np.testing.assert_allclose(pose.rotations[14], sk.euler_to_quat([10 + 40 / 6, 0, 0], True),
                               atol=1e-14)
    np.testing.assert_allclose(pose.translations[0], [0, 1, 0])
    np.testing.assert_allclose(anim.sample(s, 2.0).rotations[6],
                               sk.euler_to_quat([0, 0, 60], degrees=True), atol=1e-14)
    doc["interpolation"] = "step"
    step = sk.animation_from_dict(doc, s)
    np.testing.assert_allclose(step.sample(s, 2.9).rotations[6],
                               sk.euler_to_quat([0, 0, 80], degrees=True), atol=1e-14)
    doc["keyframes"][2]["time"] = 1
    with pytest.raises(SkinningFileError, match=r"keyframes\[2\].time: times must strictly increase"):
        sk.animation_from_dict(doc, s)


def test_shipped_pose_and_animation_load(figure):
    sk.load_pose(FIG / "figure_wave.json", figure.skeleton)
    walk = sk.load_animation(FIG / "figure_walk.json", figure.skeleton)
    assert (walk.start, walk.end) == (0.0, 2.0)
    a, b = walk.sample(figure.skeleton, 0.0), walk.sample(figure.skeleton, 2.0)
    np.testing.assert_allclose(a.rotations, b.rotations)          # the cycle closes
