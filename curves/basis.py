"""Cubic basis matrices and exact conversions between them.

Convention (the course's): a cubic segment with control points ``G = [P0 P1 P2 P3]``
(stacked as rows, shape (4, d)) is ``P(s) = sum_r (M @ T(s))[r] * G[r]`` with
``T(s) = (1, s, s^2, s^3)`` and the local parameter ``s`` in [0, 1]. Rows of ``M``
belong to control points, columns to powers of ``s``.
"""
import numpy as np

_MATRICES = {
    "bezier": np.array([[1.0, -3.0, 3.0, -1.0],
                        [0.0, 3.0, -6.0, 3.0],
                        [0.0, 0.0, 3.0, -3.0],
                        [0.0, 0.0, 0.0, 1.0]]),
    "bspline": np.array([[1.0, -3.0, 3.0, -1.0],
                         [4.0, 0.0, -6.0, 3.0],
                         [1.0, 3.0, 3.0, -3.0],
                         [0.0, 0.0, 0.0, 1.0]]) / 6.0,
    "catmull_rom": np.array([[0.0, -1.0, 2.0, -1.0],
                             [2.0, 0.0, -5.0, 3.0],
                             [0.0, 1.0, 4.0, -3.0],
                             [0.0, 0.0, -1.0, 1.0]]) / 2.0,
}

#: How many control points a piecewise curve advances per segment.
STRIDE = {"bezier": 3, "bspline": 1, "catmull_rom": 1}

BASES = tuple(_MATRICES)

# Exact rational basis changes, P_dst = C @ P_src for one segment's 4 points (rows).
_BSPLINE_TO_BEZIER = np.array([[1.0, 4.0, 1.0, 0.0],
                               [0.0, 4.0, 2.0, 0.0],
                               [0.0, 2.0, 4.0, 0.0],
                               [0.0, 1.0, 4.0, 1.0]]) / 6.0
_BEZIER_TO_BSPLINE = np.array([[6.0, -7.0, 2.0, 0.0],
                               [0.0, 2.0, -1.0, 0.0],
                               [0.0, -1.0, 2.0, 0.0],
                               [0.0, 2.0, -7.0, 6.0]])
_CATMULL_ROM_TO_BEZIER = np.array([[0.0, 6.0, 0.0, 0.0],
                                   [-1.0, 6.0, 1.0, 0.0],
                                   [0.0, 1.0, 6.0, -1.0],
                                   [0.0, 0.0, 6.0, 0.0]]) / 6.0
_BEZIER_TO_CATMULL_ROM = np.array([[6.0, -6.0, 0.0, 1.0],
                                   [1.0, 0.0, 0.0, 0.0],
                                   [0.0, 0.0, 0.0, 1.0],
                                   [1.0, 0.0, -6.0, 6.0]])
_EXACT = {("bspline", "bezier"): _BSPLINE_TO_BEZIER,
          ("bezier", "bspline"): _BEZIER_TO_BSPLINE,
          ("catmull_rom", "bezier"): _CATMULL_ROM_TO_BEZIER,
          ("bezier", "catmull_rom"): _BEZIER_TO_CATMULL_ROM}


def check_basis(name):
    """Return ``name`` if it is a known cubic basis, else raise ValueError."""
    if name not in _MATRICES:
        raise ValueError(f"unknown basis {name!r}; expected one of {', '.join(BASES)}")
    return name


def basis_matrix(name):
    """The 4x4 basis matrix ``M`` of ``name`` ('bezier', 'bspline', 'catmull_rom').

    Returns a new (4, 4) float64 array (rows: control points, columns: 1, s, s^2, s^3).
    """
    return _MATRICES[check_basis(name)].copy()


def basis_change(src, dst):
    """The (4, 4) matrix ``C`` with ``G_dst = C @ G_src`` for one cubic segment.

    ``G`` holds a segment's four control points as rows. The Bézier <-> B-spline pair
    and the Catmull-Rom <-> Bézier pair use exact small rational entries, so a round
    trip returns the input to rounding; B-spline <-> Catmull-Rom goes through Bézier.
    In general ``C = (M_dst^T)^-1 M_src^T``.
    """
    check_basis(src)
    check_basis(dst)
    if src == dst:
        return np.eye(4)
    if (src, dst) in _EXACT:
        return _EXACT[(src, dst)].copy()
    return _EXACT[("bezier", dst)] @ _EXACT[(src, "bezier")]


def power_basis(s, deriv=0):
    """Rows ``d^k/ds^k (1, s, s^2, s^3)`` for the local parameters ``s``.

    ``s``: (m,) float64. Returns (m, 4) float64.
    """
    s = np.asarray(s, dtype=np.float64)
    z = np.zeros_like(s)
    o = np.ones_like(s)
    if deriv == 0:
        cols = (o, s, s * s, s * s * s)
    elif deriv == 1:
        cols = (z, o, 2.0 * s, 3.0 * s * s)
    elif deriv == 2:
        cols = (z, z, 2.0 * o, 6.0 * s)
    elif deriv == 3:
        cols = (z, z, z, 6.0 * o)
    else:
        cols = (z, z, z, z)
    return np.stack(cols, axis=-1)


def cubic_weights(name, s, deriv=0):
    """Weights of the four control points at local parameters ``s``: (m, 4) float64."""
    return power_basis(s, deriv) @ basis_matrix(name).T
