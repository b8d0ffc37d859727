"""Joint hierarchy, poses and forward kinematics.

A skeleton is flat arrays: joint ``j`` has a parent ``parents[j] < j`` (``-1`` for a root)
and a rest local transform ``T @ R @ S`` (translation, rotation quaternion (w, x, y, z),
scale) relative to its parent. World transforms come from one pass down the tree
(:func:`forward_kinematics`): parents are stored before children, so each joint's
world matrix is its parent's (already computed) times its local matrix.

Matrices are ``(4, 4) float64`` acting on column vectors; units are the model's.
"""
from dataclasses import dataclass, field

import numpy as np

from .errors import SkinningError
from .kernels import fk_kernel
from .rotations import quat_to_matrix


@dataclass
class Pose:
    """Local joint transforms of a skeleton, in the skeleton's joint order.

    translations (J,3) float64, rotations (J,4) float64 unit quaternions (w, x, y, z),
    scales (J,3) float64. A pose *replaces* each joint's local transform (as glTF
    animation does); the course's rest rotations are identities, so there a pose's
    rotation is also the rotation relative to the bind pose.
    """

    translations: np.ndarray
    rotations: np.ndarray
    scales: np.ndarray

    def copy(self):
        return Pose(self.translations.copy(), self.rotations.copy(), self.scales.copy())


@dataclass
class Skeleton:
    """Joint hierarchy.

    names: list of J unique joint names; parents (J,) int64, ``parents[j] < j`` or -1;
    translations (J,3), rotations (J,4) (w, x, y, z), scales (J,3): rest local transform;
    base (J,4,4): fixed transform of the non-joint nodes between joint j and its parent
    joint (for a root: the world transform of the nodes above it); identity for course
    skeletons and usually for glTF ones. ``world[j] = world[parent] @ base[j] @ local[j]``.
    """

    names: list
    parents: np.ndarray
    translations: np.ndarray
    rotations: np.ndarray
    scales: np.ndarray = None
    base: np.ndarray = None
    _index: dict = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        self.parents = np.ascontiguousarray(self.parents, dtype=np.int64)
        nj = self.parents.shape[0]
        if self.parents.ndim != 1 or nj == 0:
            raise SkinningError("skeleton: parents must be a non-empty 1-D array")
        for j, p in enumerate(self.parents):
            if not -1 <= p < j:
                raise SkinningError(f"skeleton: joint {j} has parent {p}; parents must come "
                                    "before their children (or be -1 for a root)")
        self.translations = _shaped(self.translations, (nj, 3), "translations")
        self.rotations = _shaped(self.rotations, (nj, 4), "rotations")
        self.scales = (np.ones((nj, 3)) if self.scales is None
                       else _shaped(self.scales, (nj, 3), "scales"))
        self.base = (np.tile(np.eye(4), (nj, 1, 1)) if self.base is None
                     else _shaped(self.base, (nj, 4, 4), "base"))
        self.names = [str(n) for n in self.names]
        if len(self.names) != nj:
            raise SkinningError(f"skeleton: {len(self.names)} names for {nj} joints")
        self._index = {}
        for j, n in enumerate(self.names):
            if n in self._index:
                raise SkinningError(f"skeleton: joint name {n!r} used twice")
            self._index[n] = j

    @property
    def num_joints(self):
        return self.parents.shape[0]

    def joint_index(self, key):
        """Joint index from a name, an int, or a string of digits; ``KeyError`` if unknown."""
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            if 0 <= key < self.num_joints:
                return int(key)
            raise KeyError(f"joint index {key} out of range 0..{self.num_joints - 1}")
        key = str(key)
        if key in self._index:
            return self._index[key]
        if key.isascii() and key.isdigit() and len(key) <= 18 and int(key) < self.num_joints:
            return int(key)
        raise KeyError(f"unknown joint {key!r} (joints are 0..{self.num_joints - 1}"
                       + (f" or one of {self.names[:8]}{'...' if self.num_joints > 8 else ''})"))

    def rest_pose(self):
        """The rest (bind) pose as a :class:`Pose` (copies)."""
        return Pose(self.translations.copy(), self.rotations.copy(), self.scales.copy())

    def world_matrices(self, pose=None):
        """World transforms (J,4,4) of the joints in ``pose`` (rest pose if None)."""
        pose = self.rest_pose() if pose is None else pose
        local = local_matrices(pose.translations, pose.rotations, pose.scales)
        return forward_kinematics(self.parents, local, self.base)

    def bind_matrices(self):
        """World transforms (J,4,4) of the rest pose (the course's bind matrices ``B_j``)."""
        return self.world_matrices(None)


def _shaped(a, shape, name):
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.shape != shape:
        raise SkinningError(f"skeleton: {name} must have shape {shape}, got {a.shape}")
    return a


def local_matrices(translations, rotations, scales=None):
    """Local transforms ``T @ R @ S`` as (J,4,4) float64.

    translations (J,3), rotations (J,4) quaternions (w, x, y, z), scales (J,3) or None.
    """
    t = np.asarray(translations, dtype=np.float64)
    r = quat_to_matrix(rotations)
    nj = t.shape[0]
    m = np.zeros((nj, 4, 4))
    if scales is None:
        m[:, :3, :3] = r
    else:
        m[:, :3, :3] = r * np.asarray(scales, dtype=np.float64)[:, None, :]
    m[:, :3, 3] = t
    m[:, 3, 3] = 1.0
    return m


def forward_kinematics(parents, local, base=None):
    """World transforms (J,4,4) from local ones in one pass down the tree.

    parents (J,) ints with ``parents[j] < j`` (-1 for roots); local (J,4,4);
    base (J,4,4) or None: fixed transforms between each joint and its parent joint (or the
    world, for roots); identity when None.
    ``world[j] = world[parents[j]] @ base[j] @ local[j]``, ``world[root] = base[root] @ local[root]``.
    """
    parents = np.ascontiguousarray(parents, dtype=np.int64)
    local = np.ascontiguousarray(local, dtype=np.float64)
    nj = parents.shape[0]
    if local.shape != (nj, 4, 4):
        raise SkinningError(f"forward_kinematics: local must be ({nj}, 4, 4), got {local.shape}")
    if np.any(parents >= np.arange(nj)) or np.any(parents < -1):
        raise SkinningError("forward_kinematics: every parent must come before its child")
    if base is None:
        base = np.tile(np.eye(4), (nj, 1, 1))
    out = np.empty((nj, 4, 4))
    fk_kernel(parents, local, np.ascontiguousarray(base, dtype=np.float64), out)
    return out
