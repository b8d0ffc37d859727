"""A skinned mesh: skeleton + bind-pose mesh + per-vertex joint influences."""
from dataclasses import dataclass, field

import numpy as np

from .errors import SkinningError
from .geometry import skeleton_mesh, vertex_normals
from .lbs import skin, skinning_matrices
from .skeleton import Skeleton


@dataclass
class SkinnedMesh:
    """Everything needed to pose a character.

    skeleton: :class:`~skinning.skeleton.Skeleton` with J joints.
    vertices (N,3) float64: bind-pose positions; faces (M,3) int64, CCW from outside.
    joints (N,K) int64, weights (N,K) float64: influences (rows sum to 1).
    inverse_bind (J,4,4) float64: ``B_j^-1``, the inverse of joint j's bind world matrix.
    normals (N,3) float64 bind-pose unit normals; computed area-weighted from the faces
    when not given. animations: name -> :class:`~skinning.animation.Animation`.
    source: where it was read from (for messages).
    """

    skeleton: Skeleton
    vertices: np.ndarray
    faces: np.ndarray
    joints: np.ndarray
    weights: np.ndarray
    inverse_bind: np.ndarray
    normals: np.ndarray = None
    animations: dict = field(default_factory=dict)
    source: str = ""

    def __post_init__(self):
        self.vertices = np.ascontiguousarray(self.vertices, dtype=np.float64)
        self.faces = np.ascontiguousarray(self.faces, dtype=np.int64)
        self.joints = np.ascontiguousarray(self.joints, dtype=np.int64)
        self.weights = np.ascontiguousarray(self.weights, dtype=np.float64)
        self.inverse_bind = np.ascontiguousarray(self.inverse_bind, dtype=np.float64)
        n, nj = self.vertices.shape[0], self.skeleton.num_joints
        if self.vertices.shape != (n, 3) or self.faces.ndim != 2 or self.faces.shape[1] != 3:
            raise SkinningError(f"{self.source}: vertices must be (N,3) and faces (M,3)")
        if self.joints.shape != self.weights.shape or self.joints.shape[0] != n:
            raise SkinningError(f"{self.source}: joints {self.joints.shape} and weights "
                                f"{self.weights.shape} must be ({n}, K)")
        if self.inverse_bind.shape != (nj, 4, 4):
            raise SkinningError(f"{self.source}: inverse_bind must be ({nj}, 4, 4)")
        if self.joints.size and (self.joints.min() < 0 or self.joints.max() >= nj):
            raise SkinningError(f"{self.source}: joint index out of range 0..{nj - 1}")
        if self.normals is None:
            self.normals = vertex_normals(self.vertices, self.faces)
        self.normals = np.ascontiguousarray(self.normals, dtype=np.float64)

    @property
    def num_vertices(self):
        return self.vertices.shape[0]

    def skinning_matrices(self, pose=None):
        """``T_j @ B_j^-1`` (J,4,4) for ``pose`` (rest pose when None)."""
        return skinning_matrices(self.skeleton.world_matrices(pose), self.inverse_bind)

    def skin(self, pose=None, normals="transform"):
        """Posed ``(vertices (N,3), normals (N,3))``.

        normals: ``"transform"`` (inverse transpose of each vertex's blended matrix, the
        default), ``"recompute"`` (area-weighted from the posed triangles) or ``None``
        (positions only: returns just the (N,3) vertices).
        """
        m = self.skinning_matrices(pose)          # (J,4,4) contiguous float64
        if normals is None:
            return skin(self.vertices, self.joints, self.weights, m, check=False)
        if normals == "transform":
            return skin(self.vertices, self.joints, self.weights, m, self.normals, check=False)
        if normals == "recompute":
            v = skin(self.vertices, self.joints, self.weights, m, check=False)
            return v, vertex_normals(v, self.faces)
        raise SkinningError(f"normals must be 'transform', 'recompute' or None, got {normals!r}")

    def pose_at(self, animation, time, loop=False):
        """Pose of animation ``animation`` (a name, an index or an Animation) at ``time`` s."""
        if isinstance(animation, (int, np.integer)) and not isinstance(animation, bool):
            names = list(self.animations)
            if not 0 <= animation < len(names):
                raise SkinningError(f"{self.source}: animation {animation} out of range "
                                    f"(there are {len(names)})")
            animation = self.animations[names[animation]]
        elif isinstance(animation, str):
            if animation not in self.animations:
                raise SkinningError(f"{self.source}: no animation named {animation!r} "
                                    f"(have {list(self.animations)})")
            animation = self.animations[animation]
        return animation.sample(self.skeleton, time, loop=loop)

    def skeleton_mesh(self, pose=None, joint_radius=None, bone_radius=None):
        """The posed skeleton as triangles (a sphere per joint, a cylinder per bone)."""
        world = self.skeleton.world_matrices(pose)
        return skeleton_mesh(world[:, :3, 3], self.skeleton.parents, joint_radius, bone_radius)
