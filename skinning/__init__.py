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
import pathlib as _pathlib

from userio.numba_cache import kernel_cache as _kernel_cache

# every kernel module first, inside the package's own content-keyed Numba cache folder
# (userio.numba_cache: an edit anywhere in the package never runs stale cached code)
with _kernel_cache("skinning", _pathlib.Path(__file__).parent):
    from . import kernels  # noqa: F401

from .animation import Animation, Channel
from .course import load_course, read_attach, read_obj, read_skel, write_obj
from .errors import SkinningError, SkinningFileError
from .geometry import cylinder_mesh, skeleton_mesh, sphere_mesh, vertex_normals
from .gltf import (PrimitiveRange, SkinnedPart, SkinnedScene, load_gltf, load_gltf_scene,
                   merge_models)
from .lbs import skin, skin_numpy, skinning_matrices
from .model import SkinnedMesh
from .posefile import (animation_from_dict, load_animation, load_pose, pose_from_dict,
                       pose_to_dict)
from .rotations import (axis_angle_to_quat, euler_to_matrix, euler_to_quat, matrix_to_quat,
                        quat_from_xyzw, quat_multiply, quat_normalize, quat_to_matrix,
                        quat_to_xyzw, slerp)
from .skeleton import Pose, Skeleton, forward_kinematics, local_matrices
from .weights import dense_to_sparse, normalize_weights, sparse_to_dense

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
