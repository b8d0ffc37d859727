"""Camera description -> the few numbers the kernels need.

Right-handed, y up. ``forward`` is the unit view direction, ``right = forward x up``
normalised, ``up' = right x forward``. A perspective camera maps pixel centre offsets to
``forward + x * right + y * up'`` with ``y`` spanning ``tan(fov/2)`` (fov vertical, degrees)
and ``x`` the same times width/height. An orthographic camera moves the ray origin over
a ``height`` by ``height * width/height`` window instead.
"""
import math

import numpy as np

from .errors import SceneError
from .layout import ORTHOGRAPHIC, PERSPECTIVE, Camera


def make_camera(cam):
    """The scene's ``camera`` dict -> :class:`raytrace.layout.Camera`.

    ``half_height`` is ``tan(fov/2)`` for perspective and ``height/2`` for orthographic.
    """
    eye = np.asarray(cam["center"], np.float64)
    if "look_at" in cam:
        fwd = np.asarray(cam["look_at"], np.float64) - eye
        where = "camera.look_at"
    else:
        fwd = np.asarray(cam["direction"], np.float64)
        where = "camera.direction"
    fwd_raw = fwd.copy()
    n = np.linalg.norm(fwd)
    if n == 0:
        raise SceneError(where, "the view direction is zero (look_at equals center?)")
    fwd /= n
    up = np.asarray(cam.get("up", [0, 1, 0]), np.float64)
    right = np.cross(fwd, up)
    rn = np.linalg.norm(right)
    if rn < 1e-9 * max(np.linalg.norm(up), 1e-300):
        raise SceneError("camera.up", "must not be zero or parallel to the view direction")
    right /= rn
    up2 = np.cross(right, fwd)
    kind = ORTHOGRAPHIC if cam.get("type") == "orthographic" else PERSPECTIVE
    if kind == PERSPECTIVE:
        half_h = math.tan(math.radians(cam.get("fov", 45.0)) / 2)
    else:
        half_h = cam.get("height", 2.0) / 2
    lens = float(cam.get("aperture", 0.0)) if kind == PERSPECTIVE else 0.0
    focus = float(cam.get("focus_distance", np.linalg.norm(fwd_raw) if "look_at" in cam else 1.0))
    return Camera(int(kind), *(float(x) for x in (*eye, *fwd, *right, *up2)), float(half_h), lens, focus)
