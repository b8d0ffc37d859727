"""The course's skinning format (.skel / .attach / .obj) on the project's own character,
scenes/assets/skinning/figure.* (made by scripts/make_skinned_figure.py; no ../shared).

The same checks the course's Model1 gets when ../shared is present
(tests/test_skinning_io.py): counts, weights against the raw file, bind-pose joint
positions from the .skel offsets, the bind pose reproducing the mesh, a joint rotation
moving its fully attached vertices rigidly, plus the command line.
"""
import pathlib
import subprocess
import sys

import numpy as np

import skinning as sk

REPO = pathlib.Path(__file__).resolve().parents[1]
FIGURE = REPO / "scenes" / "assets" / "skinning"
FILES = [FIGURE / f"figure.{e}" for e in ("skel", "attach", "obj")]


def count_lines(path, prefix):
    return sum(1 for line in path.read_text().splitlines() if line.startswith(prefix))


def test_figure_counts_weights_and_bind_pose():
    skel, attach, obj = FILES
    m = sk.load_course(skel, attach, obj)
    rows = np.loadtxt(skel)
    assert m.skeleton.num_joints == len(rows) == 21
    assert m.num_vertices == count_lines(obj, "v ") == 2224
    assert m.faces.shape == (count_lines(obj, "f "), 3)
    assert list(m.skeleton.parents) == rows[:, 3].astype(int).tolist()
    raw = np.loadtxt(attach)                                   # columns: joints 1..20
    assert raw.shape == (2224, 20)
    dense = sk.sparse_to_dense(m.joints, m.weights, 21)
    assert np.all(dense[:, 0] == 0.0)                          # the root carries no weight
    np.testing.assert_allclose(dense[:, 1:], raw / raw.sum(axis=1, keepdims=True), atol=1e-15)
    # bind positions: each joint's .skel translation is relative to its parent
    expected = np.zeros((21, 3))
    for j, (x, y, z, parent) in enumerate(rows):
        expected[j] = (expected[int(parent)] if parent >= 0 else 0.0) + np.array([x, y, z])
    np.testing.assert_allclose(m.skeleton.bind_matrices()[:, :3, 3], expected, atol=1e-12)
    v, n = m.skin()
    np.testing.assert_allclose(v, m.vertices, atol=1e-12)      # bind pose = the mesh as read


def test_figure_joint_rotation_moves_its_vertices_rigidly():
    m = sk.load_course(*FILES)
    dense = sk.sparse_to_dense(m.joints, m.weights, 21)
    j = 15                                   # its child joint 16 carries no vertices
    full = dense[:, j] == 1.0
    assert full.sum() == 99
    pose = m.skeleton.rest_pose()
    pose.rotations[j] = sk.axis_angle_to_quat([1, 0, 1], 40, degrees=True)
    v = m.skin(pose, normals=None)
    c = m.skeleton.bind_matrices()[j, :3, 3]
    r = sk.quat_to_matrix(pose.rotations[j])
    np.testing.assert_allclose(v[full], c + (m.vertices[full] - c) @ r.T, atol=1e-12)
    untouched = dense[:, j:].sum(axis=1) == 0.0   # no weight on joint 15 or any later joint
    assert untouched.sum() > 1000
    np.testing.assert_allclose(v[untouched], m.vertices[untouched], atol=1e-12)


def test_cli_info_and_export(tmp_path):
    args = ["--skel", str(FILES[0]), "--attach", str(FILES[1]), "--obj", str(FILES[2])]
    r = subprocess.run([sys.executable, "-m", "skinning", "info", *args], capture_output=True,
                       text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr
    assert "21 joints, 2224 vertices, 4416 triangles" in r.stdout
    out = tmp_path / "posed.obj"
    r = subprocess.run([sys.executable, "-m", "skinning", "export", *args, "--pose",
                        str(FIGURE / "figure_wave.json"), "-o", str(out)],
                       capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr
    assert count_lines(out, "v ") == 2224 and count_lines(out, "f ") == 4416
