"""Transform steps -> 4x4 matrices, with PyGLM (double precision).

Column-vector convention, ``p' = M p``. Steps compose left to right, ``M = S1 * S2 * ...``,
so the last step acts on the points first (GLM's ``M = glm.translate(M, v)`` style, as in
the course files). Angles are in degrees.
"""
import math

from pyglm import glm
import numpy as np

from ..errors import SceneError


def step_matrix(step):
    """One transform step (a one-key dict, already schema-checked) as a ``glm.dmat4``."""
    (kind, value), = step.items()
    eye = glm.dmat4(1.0)
    if kind == "translate":
        return glm.translate(eye, glm.dvec3(*value))
    if kind in ("rotate_x", "rotate_y", "rotate_z"):
        axis = {"rotate_x": (1, 0, 0), "rotate_y": (0, 1, 0), "rotate_z": (0, 0, 1)}[kind]
        return glm.rotate(eye, math.radians(value), glm.dvec3(*axis))
    if kind == "rotate":
        axis = glm.dvec3(*value["axis"])
        if glm.length(axis) == 0.0:
            raise ValueError("rotate.axis must not be zero")
        return glm.rotate(eye, math.radians(value["angle"]), glm.normalize(axis))
    if kind == "scale":
        s = (value, value, value) if isinstance(value, (int, float)) else value
        return glm.scale(eye, glm.dvec3(*s))
    if kind == "matrix":
        rows = np.asarray(value, dtype=np.float64)
        return glm.dmat4(*rows.T.ravel())          # glm takes columns
    raise ValueError(f"unknown transform step {kind!r}")


def compose(steps, where):
    """Matrix of a ``transform`` list; raises SceneError naming the bad step."""
    m = glm.dmat4(1.0)
    for i, step in enumerate(steps or ()):
        try:
            s = step_matrix(step)
        except ValueError as exc:
            raise SceneError(f"{where}.transform[{i}]", str(exc)) from None
        m = m * s
    return m


def to_numpy(m):
    """``glm.dmat4`` -> (4, 4) float64 array in math (row-major) layout."""
    return np.array(m, dtype=np.float64)


def check_invertible(m, where):
    """Raise SceneError when the linear part of ``m`` (4x4 ndarray) is (nearly) singular."""
    a = m[:3, :3]
    scale = max(np.abs(a).max(), 1e-300)
    det = np.linalg.det(a / scale)
    if not np.isfinite(det) or abs(det) < 1e-12 or abs(m[3] - [0, 0, 0, 1]).max() > 1e-12:
        raise SceneError(where, "transform is singular (a zero scale?) or not affine")
