"""The tracks of a scene's ``animation`` section, evaluated at a time into scene values.

:class:`CameraTracks`, :class:`LightTracks` and :class:`ObjectTracks` turn the validated
JSON (see :mod:`raytrace.scene.animation`) into :class:`~raytrace.animation.timeline.Track`
objects once, and give the camera dict, light dict or object dict at a time ``t``
(seconds, scene time). Values that must stay positive (field of view, scale, focus
distance) are checked after interpolation: a Catmull-Rom curve may overshoot its keys.
"""
import math

import numpy as np

from ..errors import SceneError
from .timeline import Track, quat_from_axis_angle, quat_to_matrix


def _track(spec, rotation=False):
    times = [k[0] for k in spec["keys"]]
    if rotation:
        values = [quat_from_axis_angle(v["axis"], v["angle"]) for _, v in spec["keys"]]
    else:
        values = [np.atleast_1d(np.asarray(v, np.float64)) for _, v in spec["keys"]]
    return Track(times, values, spec.get("interpolation", "linear"), rotation=rotation)


def _positive(value, where, t, upper=None):
    v = np.asarray(value)
    if not np.all(v > 0.0) or (upper is not None and not np.all(v < upper)):
        v = v.ravel()
        shown = f"{float(v[0]):g}" if v.size == 1 else str([round(float(x), 6) for x in v])
        limits = f"in (0, {upper:g})" if upper is not None else "> 0"
        raise SceneError(where, f"interpolates to {shown} at t = {t:g} s; it must stay {limits} "
                         "(a Catmull-Rom curve overshoots its keys: add keys or use 'smooth')")
    return value


class CameraTracks:
    """The camera at any time: keyed values replace the camera's, an orbit sets
    ``center`` and ``look_at``."""

    def __init__(self, camera, tracks, start, end):
        self.camera = camera
        self.tracks = {k: _track(v) for k, v in tracks.items() if k != "orbit"}
        self.orbit = None
        if "orbit" in tracks:
            o = tracks["orbit"]
            target = np.asarray(o.get("target", camera.get("look_at")), np.float64)
            offset = np.asarray(camera["center"], np.float64) - target
            self.orbit = {
                "target": target,
                "radius": float(o.get("radius", math.hypot(offset[0], offset[2]))),
                "height": float(o.get("height", offset[1])),
                "start_angle": float(o.get("start_angle", math.degrees(math.atan2(offset[0], offset[2])))),
                "degrees_per_second": 360.0 * float(o.get("turns", 1.0)) / (end - start),
                "start": start,
            }

    @property
    def animated(self):
        return bool(self.tracks) or self.orbit is not None

    def orbit_center(self, t):
        """Camera position on the orbit at time t: the target plus ``(r sin a, h, r cos a)``
        with ``a = start_angle + 360 turns (t - start) / (end - start)`` degrees (positive
        turns go round +y by the right-hand rule)."""
        o = self.orbit
        a = math.radians(o["start_angle"] + o["degrees_per_second"] * (t - o["start"]))
        return o["target"] + np.array([o["radius"] * math.sin(a), o["height"], o["radius"] * math.cos(a)])

    def at(self, t):
        cam = dict(self.camera)
        if self.orbit is not None:
            cam["center"] = self.orbit_center(t).tolist()
            cam["look_at"] = self.orbit["target"].tolist()
            cam.pop("direction", None)
        for key, track in self.tracks.items():
            v = track(t)
            where = f"animation.camera.{key}"
            if key == "fov":
                _positive(v[0], where, t, upper=180.0)
            elif key in ("height", "focus_distance"):
                _positive(v[0], where, t)
            elif key == "aperture":
                v = np.maximum(v, 0.0)
            cam[key] = float(v[0]) if len(v) == 1 else v.tolist()
        return cam


class LightTracks:
    """One light at any time: ``color``, ``position``, ``direction`` replace the light's;
    ``intensity`` multiplies its colour."""

    def __init__(self, light, tracks):
        self.light = light
        self.tracks = {k: _track(v) for k, v in tracks.items()}

    def at(self, t):
        light = dict(self.light)
        for key in ("color", "position", "direction"):
            if key in self.tracks:
                v = self.tracks[key](t)
                light[key] = (np.maximum(v, 0.0) if key == "color" else v).tolist()
        if "intensity" in self.tracks:
            scale = max(float(self.tracks["intensity"](t)[0]), 0.0)
            light["color"] = [c * scale for c in light.get("color", [1.0, 1.0, 1.0])]
        return light


class ObjectTracks:
    """One object at any time: ``translate``, ``rotate`` (quaternion slerp) and ``scale``
    make the matrix ``T R S`` put in front of the object's own ``transform`` (so they act
    in its parent's space, after its own transform); ``emission`` replaces its emission;
    ``time`` sets a skinned mesh's clip time. Without a ``time`` track a skinned mesh
    with an ``animation`` plays it in step with the scene (clip time = its ``time`` +
    scene time), and a cloth shows its simulation at the scene time (``cloth``: (dt',
    last simulated time); see :mod:`raytrace.animation.cloth`)."""

    def __init__(self, obj, tracks, name=None, cloth=None):
        self.obj = obj
        self.name = name
        self.tracks = {k: _track(v, rotation=(k == "rotate")) for k, v in tracks.items()}
        self.play_clip = obj["type"] == "skinned_mesh" and "animation" in obj and "time" not in tracks
        self.cloth = cloth

    def matrix(self, t):
        """The animated ``T R S`` (4, 4) at time t, or None when there is none."""
        if not any(k in self.tracks for k in ("translate", "rotate", "scale")):
            return None
        m = np.eye(4)
        if "rotate" in self.tracks:
            m[:3, :3] = quat_to_matrix(self.tracks["rotate"](t))
        if "scale" in self.tracks:
            s = self.tracks["scale"](t)
            _positive(s, f"animation.objects.{self.name}.scale", t)
            m[:3, :3] = m[:3, :3] * (s if len(s) == 3 else s[0])
        if "translate" in self.tracks:
            m[:3, 3] = self.tracks["translate"](t)
        return m

    def values(self, t):
        """What changes at time t, as a hashable tuple (equal tuples: equal objects)."""
        m = self.matrix(t)
        out = [None if m is None else m.tobytes()]
        obj = self.at(t, matrix=m)
        for key in ("emission", "time", "T"):
            v = obj.get(key)
            out.append(tuple(v) if isinstance(v, list) else v)
        return tuple(out)

    def at(self, t, matrix=None):
        obj = dict(self.obj)
        m = self.matrix(t) if matrix is None else matrix
        if m is not None:
            obj["transform"] = [{"matrix": m.tolist()}] + list(self.obj.get("transform", []))
        if "emission" in self.tracks:
            obj["emission"] = np.maximum(self.tracks["emission"](t), 0.0).tolist()
        if "time" in self.tracks:
            obj["time"] = float(self.tracks["time"](t)[0])
        elif self.play_clip:
            obj["time"] = float(self.obj.get("time", 0.0)) + t
        if self.cloth is not None:
            dt, t_max = self.cloth
            obj["T"] = min(max(t, 0.0), t_max)
            obj["dt"] = dt
        return obj
