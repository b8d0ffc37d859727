"""Camera moves of the preview: orbit about the look-at point, dolly, and the JSON snippet.

Cameras are the scene's ``camera`` dicts (``raytrace/camera.py``: right-handed, y up,
degrees). The preview works on the look-at form: ``center`` (the eye), ``look_at`` and
``up``; a camera given by ``direction`` gets a look-at point ``distance`` along it
(:func:`look_at_form`). Every other key (type, fov, aperture, focus_distance, height) is
kept as it is.

- orbit by ``(yaw, pitch)`` degrees: the eye turns about the look-at point, first about
  the camera's ``up`` axis by ``yaw`` (positive: the eye moves to the camera's right), then about the camera's right axis by ``pitch`` (positive:
  the eye moves up); the distance to the look-at point is kept, and the angle between the
  view direction and ``up`` stays within [1, 179] degrees so the view never flips;
- dolly by ``factor``: the eye moves along the view ray to ``factor`` times its distance
  (above 1: away), never closer than 1e-6 of where it started, and its distance stays
  within :data:`MIN_DISTANCE` .. :data:`MAX_DISTANCE`, so that no number of dollies makes
  the camera non-finite or puts the eye on the look-at point.
"""
import math

import numpy as np

MIN_POLAR_DEG = 1.0           # the view direction stays this far from +-up
MIN_DISTANCE = 1e-9           # the eye's distance from the look-at point after a dolly
MAX_DISTANCE = 1e12


def look_at_form(cam, distance):
    """``cam`` with ``look_at`` (and ``up``) explicit and ``direction`` removed; a camera
    given by ``direction`` looks at the point ``distance`` along its (unit) direction."""
    out = {k: v for k, v in cam.items() if k != "direction"}
    eye = np.asarray(cam["center"], np.float64)
    if "look_at" not in cam:
        d = np.asarray(cam["direction"], np.float64)
        out["look_at"] = _list(eye + d / np.linalg.norm(d) * distance)
    out["center"] = _list(eye)
    out["up"] = _list(np.asarray(cam.get("up", [0.0, 1.0, 0.0]), np.float64))
    return out


def _list(v):
    return [float(x) for x in v]


def _rotate(v, axis, degrees):
    """``v`` rotated about the unit ``axis`` by ``degrees`` (Rodrigues' formula)."""
    a = math.radians(degrees)
    return v * math.cos(a) + np.cross(axis, v) * math.sin(a) + axis * np.dot(axis, v) * (1 - math.cos(a))


def orbit(cam, yaw, pitch):
    """The look-at form camera ``cam`` orbited by ``yaw`` and ``pitch`` degrees (module
    docstring)."""
    eye, target = np.asarray(cam["center"], np.float64), np.asarray(cam["look_at"], np.float64)
    up = np.asarray(cam["up"], np.float64)
    up = up / np.linalg.norm(up)
    offset = eye - target                      # from the look-at point to the eye
    offset = _rotate(offset, up, yaw)
    dist = np.linalg.norm(offset)
    polar = math.degrees(math.acos(np.clip(np.dot(offset / dist, up), -1.0, 1.0)))   # 0: eye above
    new_polar = min(max(polar - pitch, MIN_POLAR_DEG), 180.0 - MIN_POLAR_DEG)
    right = np.cross(up, offset)
    if np.linalg.norm(right) < 1e-12:            # eye exactly on the up axis: any right will do
        right = np.cross(up, [1.0, 0.0, 0.0]) if abs(up[0]) < 0.9 else np.cross(up, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    offset = _rotate(offset, right, new_polar - polar)
    return dict(cam, center=_list(target + offset))


def dolly(cam, factor):
    """The look-at form camera ``cam`` with the eye at ``factor`` times its distance from
    the look-at point (module docstring)."""
    eye, target = np.asarray(cam["center"], np.float64), np.asarray(cam["look_at"], np.float64)
    offset = eye - target
    dist = float(np.linalg.norm(offset))
    if not dist > 0:                          # no view direction to move along
        return dict(cam)
    new = min(max(dist * max(float(factor), 1e-6), MIN_DISTANCE), MAX_DISTANCE)
    return dict(cam, center=_list(target + offset * (new / dist)))


def snippet(cam):
    """The camera as the JSON text of a scene's ``camera`` entry, to paste into a file:
    one key per line, numbers to 7 significant digits."""
    import json

    def text(v):
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(text(x) for x in v) + "]"
        if isinstance(v, float):
            return format(v, ".7g") if math.isfinite(v) else json.dumps(None)
        return json.dumps(v)
    lines = [f"    {json.dumps(k)}: {text(v)}" for k, v in cam.items()]
    return '{\n  "camera": {\n' + ",\n".join(lines) + "\n  }\n}\n"
