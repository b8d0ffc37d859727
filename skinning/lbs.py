"""Linear blend skinning: ``p' = sum_j w_j T_j B_j^-1 p``.

``T_j`` is joint j's world transform in the current pose, ``B_j^-1`` its inverse bind
matrix; their product is the *skinning matrix* ``M_j`` (:func:`skinning_matrices`).
Normals are moved by the inverse transpose of the blended matrix ``A = sum_j w_j M_j``
(per vertex, see :func:`skin`).
"""
import numpy as np

from .errors import SkinningError
from .kernels import (skin_points_kernel, skin_points_normals_kernel,
                      skin_points_normals_serial, skin_points_serial)

PARALLEL_MIN_SLOTS = 1 << 18
"""Below this many influence slots (N * K) skinning runs on one thread: the fork/join of a
parallel loop costs more than it saves there, and far more when the cores are busy."""


def skinning_matrices(world, inverse_bind):
    """``M_j = world_j @ inverse_bind_j``: (J,4,4) float64 from two (J,4,4) arrays."""
    return np.ascontiguousarray(np.matmul(world, inverse_bind), dtype=np.float64)


def _check(points, joints, weights, matrices):
    points = np.ascontiguousarray(points, dtype=np.float64)
    joints = np.ascontiguousarray(joints, dtype=np.int64)
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    matrices = np.ascontiguousarray(matrices, dtype=np.float64)
    if points.ndim != 2 or points.shape[1] != 3:
        raise SkinningError(f"skin: points must be (N, 3), got {points.shape}")
    n = points.shape[0]
    if joints.ndim != 2 or joints.shape[0] != n or weights.shape != joints.shape:
        raise SkinningError(f"skin: joints {joints.shape} and weights {weights.shape} must "
                            f"both be ({n}, K)")
    if matrices.ndim != 3 or matrices.shape[1:] != (4, 4):
        raise SkinningError(f"skin: matrices must be (J, 4, 4), got {matrices.shape}")
    if joints.size:
        lo, hi = int(joints.min()), int(joints.max())
        if lo < 0 or hi >= matrices.shape[0]:
            raise SkinningError(f"skin: joint indices span {lo}..{hi} but there are "
                                f"{matrices.shape[0]} matrices")
    return points, joints, weights, matrices


def skin(points, joints, weights, matrices, normals=None, check=True, parallel=None):
    """Skin points (and optionally normals) with a Numba kernel (parallel over vertices).

    points (N,3) float64 bind-pose positions; joints (N,K) int indices into ``matrices``;
    weights (N,K) float64 (assumed valid: see :func:`skinning.weights.normalize_weights`);
    matrices (J,4,4) skinning matrices ``T_j @ B_j^-1``; normals (N,3) unit or None.

    Returns the skinned points (N,3), or ``(points, normals)`` when normals are given.
    Normals use the inverse transpose of the per-vertex blended matrix: exact for rigid and
    affine parts, needs no mesh connectivity, and keeps hard edges (split vertices) hard.
    ``check=False`` skips the shape and index checks (for callers that validated once,
    like :class:`~skinning.model.SkinnedMesh`); bad indices then read out of bounds.
    ``parallel``: None picks threads when ``N * K >= PARALLEL_MIN_SLOTS``; True / False force.
    """
    if check:
        points, joints, weights, matrices = _check(points, joints, weights, matrices)
    if parallel is None:
        parallel = joints.size >= PARALLEL_MIN_SLOTS
    out = np.empty_like(points)
    if normals is None:
        (skin_points_kernel if parallel else skin_points_serial)(points, joints, weights,
                                                                 matrices, out)
        return out
    normals = np.ascontiguousarray(normals, dtype=np.float64)
    if normals.shape != points.shape:
        raise SkinningError(f"skin: normals must be {points.shape}, got {normals.shape}")
    out_n = np.empty_like(normals)
    (skin_points_normals_kernel if parallel else skin_points_normals_serial)(
        points, normals, joints, weights, matrices, out, out_n)
    return out, out_n


def skin_numpy(points, joints, weights, matrices):
    """Vectorised NumPy linear blend skinning (the baseline the kernel must beat).

    Same arguments and result as :func:`skin` without normals: blends the (N,3,4)
    matrices with ``einsum`` and applies them.
    """
    points, joints, weights, matrices = _check(points, joints, weights, matrices)
    blended = np.einsum("nk,nkij->nij", weights, matrices[joints, :3, :])
    return np.einsum("nij,nj->ni", blended[:, :, :3], points) + blended[:, :, 3]
