"""Hierarchical modelling and linear blend skinning (numpy in and out, Numba kernels).

Standalone: never imports ``raytrace``. Conventions: y up, right-handed, column vectors
(``p' = M @ p``), quaternions (w, x, y, z) as in ``glm.quat(w, x, y, z)``, Euler angles
``(rx, ry, rz)`` with ``R = Rz @ Ry @ Rx`` like ``glm.quat(glm.vec3(rx, ry, rz))``, radians
in the API and degrees by default in JSON. See ``docs/skinning.md``.

Typical use::

    from skinning import load_course, load_pose
    model = load_course("Model1.skel", "Model1.attach", "Model1.obj")
    pose = load_pose("wave.json", model.skeleton)
    vertices, normals = model.skin(pose)
"""
from userio.lazy import lazy_package as _lazy_package

from .errors import SkinningError, SkinningFileError

# imported on first use (userio.lazy): `python -m skinning --help` never imports Numba; each
# kernel module caches with Numba's own cache (its kernels are single-file: never stale)
_lazy_package(__name__, {
    "Animation": (".animation", "Animation"),
    "Channel": (".animation", "Channel"),
    "load_course": (".course", "load_course"),
    "read_attach": (".course", "read_attach"),
    "read_obj": (".course", "read_obj"),
    "read_skel": (".course", "read_skel"),
    "write_obj": (".course", "write_obj"),
    "cylinder_mesh": (".geometry", "cylinder_mesh"),
    "skeleton_mesh": (".geometry", "skeleton_mesh"),
    "sphere_mesh": (".geometry", "sphere_mesh"),
    "vertex_normals": (".geometry", "vertex_normals"),
    "PrimitiveRange": (".gltf", "PrimitiveRange"),
    "SkinnedPart": (".gltf", "SkinnedPart"),
    "SkinnedScene": (".gltf", "SkinnedScene"),
    "load_gltf": (".gltf", "load_gltf"),
    "load_gltf_scene": (".gltf", "load_gltf_scene"),
    "merge_models": (".gltf", "merge_models"),
    "skin": (".lbs", "skin"),
    "skin_numpy": (".lbs", "skin_numpy"),
    "skinning_matrices": (".lbs", "skinning_matrices"),
    "SkinnedMesh": (".model", "SkinnedMesh"),
    "animation_from_dict": (".posefile", "animation_from_dict"),
    "load_animation": (".posefile", "load_animation"),
    "load_pose": (".posefile", "load_pose"),
    "pose_from_dict": (".posefile", "pose_from_dict"),
    "pose_to_dict": (".posefile", "pose_to_dict"),
    "axis_angle_to_quat": (".rotations", "axis_angle_to_quat"),
    "euler_to_matrix": (".rotations", "euler_to_matrix"),
    "euler_to_quat": (".rotations", "euler_to_quat"),
    "matrix_to_quat": (".rotations", "matrix_to_quat"),
    "quat_from_xyzw": (".rotations", "quat_from_xyzw"),
    "quat_multiply": (".rotations", "quat_multiply"),
    "quat_normalize": (".rotations", "quat_normalize"),
    "quat_to_matrix": (".rotations", "quat_to_matrix"),
    "quat_to_xyzw": (".rotations", "quat_to_xyzw"),
    "slerp": (".rotations", "slerp"),
    "Pose": (".skeleton", "Pose"),
    "Skeleton": (".skeleton", "Skeleton"),
    "forward_kinematics": (".skeleton", "forward_kinematics"),
    "local_matrices": (".skeleton", "local_matrices"),
    "dense_to_sparse": (".weights", "dense_to_sparse"),
    "normalize_weights": (".weights", "normalize_weights"),
    "sparse_to_dense": (".weights", "sparse_to_dense"),
})

__all__ = [
    "Animation", "Channel", "Pose", "PrimitiveRange", "SkinnedMesh", "SkinnedPart",
    "SkinnedScene", "Skeleton", "SkinningError", "SkinningFileError", "animation_from_dict",
    "axis_angle_to_quat", "cylinder_mesh", "dense_to_sparse", "euler_to_matrix",
    "euler_to_quat", "forward_kinematics", "load_animation", "load_course", "load_gltf",
    "load_gltf_scene", "load_pose", "local_matrices", "matrix_to_quat", "merge_models",
    "normalize_weights", "pose_from_dict", "pose_to_dict", "quat_from_xyzw", "quat_multiply",
    "quat_normalize", "quat_to_matrix", "quat_to_xyzw", "read_attach", "read_obj", "read_skel",
    "skeleton_mesh", "skin", "skin_numpy", "skinning_matrices", "slerp", "sparse_to_dense",
    "sphere_mesh", "vertex_normals", "write_obj",
]
