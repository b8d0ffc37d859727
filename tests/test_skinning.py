"""skinning: rotations, forward kinematics, linear blend skinning, weights, geometry."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation, Slerp

import skinning as sk
from skinning.errors import SkinningError

try:
    from pyglm import glm
except ImportError:                                    # older PyGLM
    import glm

REPO_FIGURE = ["scenes/assets/skinning/figure.skel", "scenes/assets/skinning/figure.attach",
               "scenes/assets/skinning/figure.obj"]


@pytest.fixture(scope="module")
def figure():
    from conftest import REPO
    return sk.load_course(*[REPO / p for p in REPO_FIGURE])


def random_quats(rng, n):
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


# ---------------------------------------------------------------- rotations

def test_euler_matches_glm_quat_of_vec3():
    rng = np.random.default_rng(1)
    for a in rng.uniform(-np.pi, np.pi, size=(20, 3)):
        q = glm.dquat(glm.dvec3(*a))
        np.testing.assert_allclose(sk.euler_to_quat(a), [q.w, q.x, q.y, q.z], atol=1e-14)
        m = glm.mat3_cast(q)                       # glm matrices index as m[column][row]
        ref = np.array([[m[c][r] for c in range(3)] for r in range(3)])
        np.testing.assert_allclose(sk.quat_to_matrix(sk.euler_to_quat(a)), ref, atol=1e-13)


def test_euler_order_is_rz_ry_rx_extrinsic_xyz():
    rng = np.random.default_rng(2)
    a = rng.uniform(-3, 3, size=(50, 3))
    ref = Rotation.from_euler("xyz", a).as_matrix()     # lower case: extrinsic x, y, z
    np.testing.assert_allclose(sk.euler_to_matrix(a), ref, atol=1e-13)
    np.testing.assert_allclose(sk.quat_to_matrix(sk.euler_to_quat(a)), ref, atol=1e-13)
    np.testing.assert_allclose(sk.euler_to_quat(np.degrees(a), degrees=True), sk.euler_to_quat(a),
                               atol=1e-14)
    # a single angle: 90 degrees about z takes +x to +y
    np.testing.assert_allclose(sk.euler_to_matrix([0, 0, 90], degrees=True) @ [1, 0, 0],
                               [0, 1, 0], atol=1e-15)


def test_quaternion_algebra_against_scipy():
    rng = np.random.default_rng(3)
    a, b = random_quats(rng, 30), random_quats(rng, 30)
    ra, rb = (Rotation.from_quat(sk.quat_to_xyzw(q)) for q in (a, b))
    np.testing.assert_allclose(sk.quat_to_matrix(sk.quat_multiply(a, b)),
                               (ra * rb).as_matrix(), atol=1e-13)
    rot = Rotation.from_quat(sk.quat_to_xyzw(a))
    np.testing.assert_allclose(sk.quat_to_matrix(a), rot.as_matrix(), atol=1e-13)
    back = sk.matrix_to_quat(rot.as_matrix())
    np.testing.assert_allclose(np.abs(np.sum(back * a, axis=1)), 1.0, atol=1e-12)
    # near-180-degree rotations take the other branches of Shepperd's method
    for axis in np.eye(3):
        q = sk.axis_angle_to_quat(axis, np.pi - 1e-9)
        np.testing.assert_allclose(abs(np.dot(sk.matrix_to_quat(sk.quat_to_matrix(q)), q)), 1,
                                   atol=1e-12)
    axes, angles = rng.normal(size=(10, 3)), rng.uniform(-3, 3, 10)
    ref = Rotation.from_rotvec(axes / np.linalg.norm(axes, axis=1, keepdims=True) * angles[:, None])
    np.testing.assert_allclose(sk.quat_to_matrix(sk.axis_angle_to_quat(axes, angles)),
                               ref.as_matrix(), atol=1e-13)
    np.testing.assert_array_equal(sk.quat_from_xyzw([1, 2, 3, 4]), [4, 1, 2, 3])


def test_slerp_against_scipy_and_shortest_arc():
    rng = np.random.default_rng(4)
    q0, q1 = random_quats(rng, 1)[0], random_quats(rng, 1)[0]
    ts = np.linspace(0, 1, 7)
    ref = Slerp([0, 1], Rotation.from_quat(sk.quat_to_xyzw(np.array([q0, q1]))))(ts)
    ours = np.array([sk.slerp(q0, q1, t) for t in ts])
    np.testing.assert_allclose(sk.quat_to_matrix(ours), ref.as_matrix(), atol=1e-12)
    # -q1 is the same rotation: slerp must take the same (short) path
    np.testing.assert_allclose(sk.quat_to_matrix(sk.slerp(q0, -q1, 0.3)),
                               sk.quat_to_matrix(sk.slerp(q0, q1, 0.3)), atol=1e-12)
    # constant angular speed: 10 -> 170 degrees about y at t = 0.25 is 50 degrees
    a = sk.slerp(sk.axis_angle_to_quat([0, 1, 0], 10, True), sk.axis_angle_to_quat([0, 1, 0], 170, True), 0.25)
    np.testing.assert_allclose(a, sk.axis_angle_to_quat([0, 1, 0], 50, True), atol=1e-14)
    np.testing.assert_allclose(sk.slerp(q0, q0, 0.5), q0, atol=1e-15)


# ---------------------------------------------------------------- forward kinematics

def random_tree(rng, nj):
    parents = np.array([-1] + [int(rng.integers(0, j)) for j in range(1, nj)])
    t = rng.normal(size=(nj, 3))
    r = random_quats(rng, nj)
    s = rng.uniform(0.5, 2, size=(nj, 3))
    return parents, t, r, s


def test_forward_kinematics_matches_walk_to_root():
    rng = np.random.default_rng(5)
    parents, t, r, s = random_tree(rng, 25)
    local = sk.local_matrices(t, r, s)
    np.testing.assert_allclose(local[:, :3, :3], Rotation.from_quat(sk.quat_to_xyzw(r)).as_matrix()
                               * s[:, None, :], atol=1e-14)
    base = np.tile(np.eye(4), (25, 1, 1))
    base[0, :3, 3] = [1, 2, 3]
    base[7, :3, :3] = sk.euler_to_matrix([0.1, 0.2, 0.3])
    world = sk.forward_kinematics(parents, local, base)
    for j in range(25):
        m, k = np.eye(4), j
        while k >= 0:                                  # the slow way: walk up to the root
            m = base[k] @ local[k] @ m
            k = parents[k]
        np.testing.assert_allclose(world[j], m, atol=1e-12)


def test_skeleton_rejects_parent_after_child():
    with pytest.raises(SkinningError, match="joint 1 has parent 2"):
        sk.Skeleton(["a", "b", "c"], [-1, 2, 0], np.zeros((3, 3)), np.tile([1.0, 0, 0, 0], (3, 1)))
    with pytest.raises(SkinningError, match="before its child"):
        sk.forward_kinematics([-1, 1], np.tile(np.eye(4), (2, 1, 1)))


def test_joint_lookup(figure):
    s = figure.skeleton
    assert s.joint_index("joint6") == 6 and s.joint_index("6") == 6 and s.joint_index(6) == 6
    with pytest.raises(KeyError, match="out of range"):
        s.joint_index(21)
    with pytest.raises(KeyError, match="unknown joint 'elbow'"):
        s.joint_index("elbow")


# ---------------------------------------------------------------- skinning

def test_rest_pose_reproduces_bind_mesh(figure):
    v, n = figure.skin()
    assert np.abs(v - figure.vertices).max() < 1e-6
    assert np.abs(n - figure.normals).max() < 1e-6


def test_single_joint_rotation_is_rigid_about_the_joint(figure):
    j, angle = 6, 37.0                                    # left elbow, about z
    pose = figure.skeleton.rest_pose()
    pose.rotations[j] = sk.euler_to_quat([0, 0, angle], degrees=True)
    v, n = figure.skin(pose)
    centre = figure.skeleton.bind_matrices()[j, :3, 3]
    rot = Rotation.from_euler("z", angle, degrees=True).as_matrix()
    dense = sk.sparse_to_dense(figure.joints, figure.weights, figure.skeleton.num_joints)
    subtree = [6, 7, 8]
    moved = dense[:, subtree].sum(axis=1) == 1.0        # fully attached to elbow and below
    still = dense[:, subtree].sum(axis=1) == 0.0
    assert moved.sum() > 100 and still.sum() > 1000
    np.testing.assert_allclose(v[moved], centre + (figure.vertices[moved] - centre) @ rot.T,
                               atol=1e-12)
    np.testing.assert_allclose(n[moved], figure.normals[moved] @ rot.T, atol=1e-12)
    np.testing.assert_allclose(v[still], figure.vertices[still], atol=1e-15)
    # the elbow joint itself does not move, and a point on the forearm turns by the angle
    hand = figure.skeleton.world_matrices(pose)[8, :3, 3]
    rest_hand = figure.skeleton.bind_matrices()[8, :3, 3]
    cosang = np.dot(hand - centre, rest_hand - centre) / np.linalg.norm(rest_hand - centre) ** 2
    assert np.degrees(np.arccos(cosang)) == pytest.approx(angle, abs=1e-9)


def einsum_reference(points, dense, mats, normals):
    """Plain NumPy LBS with dense weights: p' = sum_j w_j M_j p; n' ~ inv(A)^T n."""
    ph = np.hstack([points, np.ones((len(points), 1))])
    p = np.einsum("nj,jab,nb->na", dense, mats, ph)[:, :3]
    a = np.einsum("nj,jab->nab", dense, mats[:, :3, :3])
    n = np.einsum("nba,nb->na", np.linalg.inv(a), normals)      # inv(A)^T n
    return p, n / np.linalg.norm(n, axis=1, keepdims=True)


def test_random_poses_match_einsum_reference():
    rng = np.random.default_rng(7)
    nj, n, k = 12, 3000, 4
    parents, t, r, s = random_tree(rng, nj)
    skel = sk.Skeleton([f"j{i}" for i in range(nj)], parents, t, r)
    inverse_bind = np.linalg.inv(skel.bind_matrices())
    points = rng.normal(size=(n, 3))
    normals = rng.normal(size=(n, 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    joints = np.stack([rng.choice(nj, k, replace=False) for _ in range(n)])
    weights = rng.uniform(0, 1, size=(n, k)) ** 2
    weights[:, 3] = 0.0                                 # a padded slot
    weights /= weights.sum(axis=1, keepdims=True)
    dense = sk.sparse_to_dense(joints, weights, nj)
    for _ in range(3):
        pose = sk.Pose(rng.normal(size=(nj, 3)), random_quats(rng, nj),
                       rng.uniform(0.5, 1.5, size=(nj, 3)))
        mats = sk.skinning_matrices(skel.world_matrices(pose), inverse_bind)
        ref_p, ref_n = einsum_reference(points, dense, mats, normals)
        ok = np.abs(np.linalg.det(np.einsum("nj,jab->nab", dense, mats[:, :3, :3]))) > 1e-6
        for parallel in (False, True):
            p, nn = sk.skin(points, joints, weights, mats, normals, parallel=parallel)
            np.testing.assert_allclose(p, ref_p, atol=1e-10)
            np.testing.assert_allclose(nn[ok], ref_n[ok], atol=1e-8)
            np.testing.assert_allclose(sk.skin(points, joints, weights, mats, parallel=parallel),
                                       ref_p, atol=1e-10)
        np.testing.assert_allclose(sk.skin_numpy(points, joints, weights, mats), ref_p, atol=1e-10)


def test_recomputed_normals_are_area_weighted_normals_of_posed_mesh(figure):
    pose = figure.skeleton.rest_pose()
    pose.rotations[14] = sk.euler_to_quat([60, 0, 0], degrees=True)
    v, n = figure.skin(pose, normals="recompute")
    np.testing.assert_allclose(n, sk.vertex_normals(v, figure.faces))
    v2, n2 = figure.skin(pose)                        # transformed normals stay close
    assert np.median(np.sum(n * n2, axis=1)) > 0.99
    np.testing.assert_array_equal(figure.skin(pose, normals=None), v)


def test_skin_checks_shapes_and_indices():
    p = np.zeros((2, 3))
    with pytest.raises(SkinningError, match="joint indices span 0..5"):
        sk.skin(p, [[0], [5]], [[1.0], [1.0]], np.tile(np.eye(4), (3, 1, 1)))
    with pytest.raises(SkinningError, match="must both be"):
        sk.skin(p, [[0, 1], [0, 1]], [[1.0], [1.0]], np.tile(np.eye(4), (3, 1, 1)))


# ---------------------------------------------------------------- weights

def test_normalize_weights_rules():
    w = np.array([[0.5, 0.5004], [0.2, 0.8]])
    np.testing.assert_allclose(sk.normalize_weights(w).sum(axis=1), 1.0, atol=1e-15)
    with pytest.raises(SkinningError, match="vertex 1: negative weight -0.1"):
        sk.normalize_weights([[1.0, 0.0], [1.1, -0.1]])
    with pytest.raises(SkinningError, match="vertex 0: weights sum to 0.9"):
        sk.normalize_weights([[0.4, 0.5]])
    np.testing.assert_allclose(sk.normalize_weights([[0.4, 0.4]], fix=True), [[0.5, 0.5]])
    with pytest.raises(SkinningError, match="all weights are zero"):
        sk.normalize_weights([[0.0, 0.0]], fix=True)


def test_dense_sparse_round_trip():
    rng = np.random.default_rng(8)
    dense = rng.uniform(size=(50, 9)) * (rng.uniform(size=(50, 9)) < 0.3)
    dense[:, 0] += 0.01
    j, w = sk.dense_to_sparse(dense)
    assert j.shape[1] == (dense > 0).sum(axis=1).max()
    np.testing.assert_allclose(sk.sparse_to_dense(j, w, 9), dense)
    j2, w2 = sk.dense_to_sparse(dense, max_influences=2)
    np.testing.assert_allclose(w2.sum(axis=1), dense.sum(axis=1))
    assert np.all(w2[:, 0] >= w2[:, 1])
    np.testing.assert_array_equal(j2[:, 0], np.argmax(dense, axis=1))


# ---------------------------------------------------------------- geometry

def signed_volume(v, f):
    a, b, c = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
    return np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0


def test_sphere_and_cylinder_are_outward():
    v, f, n = sk.sphere_mesh([1, 2, 3], 0.5, slices=64, stacks=32)
    vol = signed_volume(v - [1, 2, 3], f)
    assert vol == pytest.approx(4 / 3 * np.pi * 0.125, rel=5e-3)
    np.testing.assert_allclose(n, (v - [1, 2, 3]) / 0.5, atol=1e-15)
    vn = sk.vertex_normals(v, f)
    assert np.min(np.sum(vn * n, axis=1)) > 0.99
    v, f, n = sk.cylinder_mesh([0, 0, 0], [0, 2, 0], 0.5, slices=32)
    face_n = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    centroid = v[f].mean(axis=1)
    radial = centroid * [1, 0, 1]
    assert np.all(np.sum(face_n * radial, axis=1) > 0)


def test_skeleton_mesh(figure):
    pose = figure.skeleton.rest_pose()
    pose.rotations[5] = sk.euler_to_quat([0, 0, -60], degrees=True)
    world = figure.skeleton.world_matrices(pose)
    v, f, n = figure.skeleton_mesh(pose, joint_radius=0.03, bone_radius=0.01)
    nj = figure.skeleton.num_joints
    bones = int(np.sum([np.linalg.norm(world[j, :3, 3] - world[p, :3, 3]) > 1e-9
                        for j, p in enumerate(figure.skeleton.parents) if p >= 0]))
    assert bones == nj - 1
    assert f.shape[0] == nj * 2 * 16 * 7 + bones * 2 * 12
    np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1.0)
    # every sphere vertex lies 0.03 from its joint: the first sphere is around joint 0
    np.testing.assert_allclose(np.linalg.norm(v[:114] - world[0, :3, 3], axis=1), 0.03)
    # zero-length bones are skipped
    v, f, n = sk.skeleton_mesh([[0, 0, 0], [0, 0, 0], [0, 1, 0]], [-1, 0, 1], 0.1)
    assert f.shape[0] == 3 * 224 + 1 * 2 * 12
