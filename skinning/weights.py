"""Skinning weights: validation, normalisation, dense <-> sparse influences.

Sparse influences are two ``(N, K)`` arrays: ``joints`` (int64 joint indices) and
``weights`` (float64). Unused slots have weight 0 (their joint index is 0 and ignored).
"""
import numpy as np

from .errors import SkinningError

SUM_TOLERANCE = 1e-3
"""Row sums within this of 1 are silently rescaled to exactly 1 (files round weights)."""


def row_problem(row_weights, tol=SUM_TOLERANCE):
    """Why one vertex's weights are bad (a string), or None when they are acceptable."""
    w = np.asarray(row_weights, dtype=np.float64)
    if not np.all(np.isfinite(w)):
        return "weights must be finite numbers"
    if np.any(w < 0.0):
        j = int(np.argmax(w < 0.0))
        return f"negative weight {w[j]:g} (slot {j})"
    s = float(w.sum())
    if abs(s - 1.0) > tol:
        return f"weights sum to {s:.6g}, expected 1 (within {tol:g})"
    return None


def normalize_weights(weights, tol=SUM_TOLERANCE, fix=False):
    """Checked copy of ``weights`` (N,K) with every row summing to exactly 1.

    Rows must be finite and non-negative (``SkinningError`` otherwise). Rows whose sum is
    within ``tol`` of 1 are rescaled; a row further off is an error unless ``fix=True``,
    which rescales any row with a positive sum. A row of zeros is always an error (the
    vertex would collapse to the origin).
    """
    w = np.array(weights, dtype=np.float64, copy=True)
    if w.ndim != 2:
        raise SkinningError(f"weights: expected shape (N, K), got {w.shape}")
    if not np.all(np.isfinite(w)):
        i = int(np.argwhere(~np.isfinite(w))[0, 0])
        raise SkinningError(f"weights: vertex {i}: weights must be finite numbers")
    if np.any(w < 0.0):
        i, k = np.argwhere(w < 0.0)[0]
        raise SkinningError(f"weights: vertex {i}: negative weight {w[i, k]:g}")
    s = w.sum(axis=1)
    zero = np.flatnonzero(s == 0.0)
    if zero.size:
        raise SkinningError(f"weights: vertex {zero[0]}: all weights are zero "
                            f"({zero.size} such vertices)")
    if not fix:
        bad = np.flatnonzero(np.abs(s - 1.0) > tol)
        if bad.size:
            i = bad[0]
            raise SkinningError(f"weights: vertex {i}: weights sum to {s[i]:.6g}, expected 1 "
                                f"within {tol:g} ({bad.size} such vertices; "
                                "pass normalize=True to rescale)")
    w /= s[:, None]
    return w


def dense_to_sparse(dense, max_influences=None):
    """Dense weights (N, J) -> (joints (N,K) int64, weights (N,K) float64).

    K is the largest number of non-zero weights on one vertex, or ``max_influences``
    if given: then only the largest K weights of each vertex are kept and the row is
    rescaled to sum to its original total. Slots are ordered by decreasing weight.
    """
    d = np.asarray(dense, dtype=np.float64)
    if d.ndim != 2:
        raise SkinningError(f"weights: expected shape (N, J), got {d.shape}")
    nnz = (d != 0.0).sum(axis=1)
    k = max(int(nnz.max()) if d.size else 0, 1)
    if max_influences is not None:
        k = min(k, int(max_influences))
    order = np.argsort(-d, axis=1, kind="stable")[:, :k]
    w = np.take_along_axis(d, order, axis=1)
    if max_influences is not None:
        total = d.sum(axis=1)
        kept = w.sum(axis=1)
        scale = np.divide(total, kept, out=np.ones_like(total), where=kept > 0)
        w = w * scale[:, None]
    joints = np.where(w != 0.0, order, 0).astype(np.int64)
    return np.ascontiguousarray(joints), np.ascontiguousarray(w)


def sparse_to_dense(joints, weights, num_joints):
    """(joints (N,K), weights (N,K)) -> dense (N, num_joints); repeated joints add up."""
    joints = np.asarray(joints, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.float64)
    dense = np.zeros((joints.shape[0], num_joints))
    rows = np.repeat(np.arange(joints.shape[0]), joints.shape[1])
    np.add.at(dense, (rows, joints.ravel()), weights.ravel())
    return dense
