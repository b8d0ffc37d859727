"""The scene's ``animation`` section: its JSON Schema and the checks a schema cannot make.

    "animation": {"start": 0, "end": 2, "fps": 24, "shutter": [-0.25, 0.25],
                  "camera": {"orbit": {"target": [0, 1, 0], "turns": 1}},
                  "objects": {"box": {"translate": {"keys": [[0, [0, 0, 0]], [2, [0, 1, 0]]],
                                                    "interpolation": "smooth"}}},
                  "lights": {"key": {"intensity": {"keys": [[0, 1], [1, 3]]}}}}

A track is ``{"keys": [[time, value], ...], "interpolation": "linear" | "smooth" |
"catmull_rom"}`` (times in seconds, strictly increasing). Objects and lights are found by
their ``name``. ``shutter`` is the motion-blur interval ``[open, close]`` in frames (units
of the frame interval 1/fps) relative to each frame's time, within [-1, 1] (default
``[0, 0]``: no blur; :mod:`raytrace.animation.motion_blur`). See docs/animation.md for the
meaning of every key; the tracks are evaluated by :mod:`raytrace.animation`.
"""
import math
import numbers

from ..errors import SceneError

INTERPOLATIONS = ("linear", "smooth", "catmull_rom")
MAX_FRAMES = 100_000
DEFAULT_START = 0.0
DEFAULT_FPS = 24.0
SHUTTER_LIMIT = 1       # shutter open and close lie within this many frames of the frame's time

_num = {"type": "number"}
_pos = {"type": "number", "exclusiveMinimum": 0}
_nonneg = {"type": "number", "minimum": 0}
_vec3 = {"$ref": "#/$defs/vec3"}
_color = {"$ref": "#/$defs/color"}
_rotation = {"type": "object", "additionalProperties": False, "required": ["axis", "angle"],
             "properties": {"axis": _vec3, "angle": _num}}
_scale = {"oneOf": [_pos, {"type": "array", "minItems": 3, "maxItems": 3, "items": _pos}]}


def track(value):
    """Schema of a keyframe track whose values match ``value``."""
    key = {"type": "array", "minItems": 2, "maxItems": 2, "prefixItems": [_num, value]}
    return {"type": "object", "additionalProperties": False, "required": ["keys"],
            "properties": {"keys": {"type": "array", "minItems": 1, "items": key},
                           "interpolation": {"enum": list(INTERPOLATIONS)}}}


CAMERA_TRACKS = {
    "center": _vec3, "look_at": _vec3, "direction": _vec3, "up": _vec3,
    "fov": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 180},
    "height": _pos, "aperture": _nonneg, "focus_distance": _pos,
}
OBJECT_TRACKS = {"translate": _vec3, "rotate": _rotation, "scale": _scale, "emission": _color,
                 "time": _num}
LIGHT_TRACKS = {"color": _color, "intensity": _nonneg, "position": _vec3, "direction": _vec3}

_ORBIT = {
    "type": "object", "additionalProperties": False,
    "properties": {"target": _vec3, "turns": _num, "radius": _pos, "height": _num,
                   "start_angle": _num},
}

ANIMATION_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["end"],
    "properties": {
        "start": _num,
        "end": _num,
        "fps": {"type": "number", "exclusiveMinimum": 0, "maximum": 1000},
        "shutter": {"type": "array", "minItems": 2, "maxItems": 2,
                    "items": {"type": "number", "minimum": -SHUTTER_LIMIT, "maximum": SHUTTER_LIMIT}},
        "camera": {"type": "object", "additionalProperties": False,
                   "properties": dict({k: track(v) for k, v in CAMERA_TRACKS.items()}, orbit=_ORBIT)},
        "objects": {"type": "object", "additionalProperties": {
            "type": "object", "additionalProperties": False, "minProperties": 1,
            "properties": {k: track(v) for k, v in OBJECT_TRACKS.items()}}},
        "lights": {"type": "object", "additionalProperties": {
            "type": "object", "additionalProperties": False, "minProperties": 1,
            "properties": {k: track(v) for k, v in LIGHT_TRACKS.items()}}},
    },
}


def _error(parts, message):
    """SceneError at the JSON path ``parts`` (``['animation', 'objects', 'box']`` ->
    ``animation.objects.box``; integers as ``[i]``)."""
    where = ""
    for p in parts:
        where += f"[{p}]" if isinstance(p, int) else ("." if where else "") + str(p)
    return SceneError(where, message)


def frame_range(anim):
    """(start, end, fps) of an animation section, with the defaults."""
    return (float(anim.get("start", DEFAULT_START)), float(anim["end"]),
            float(anim.get("fps", DEFAULT_FPS)))


def check_shutter(value, where="animation.shutter"):
    """A shutter ``[open, close]`` (frames relative to the frame's time) -> (open, close)
    floats; SceneError at ``where`` unless it is two finite numbers with
    ``-1 <= open <= close <= 1`` (what the schema and :func:`check_animation` ask of the
    scene's ``animation.shutter``; for values given to the API or the command line)."""
    try:
        pair = [v for v in value]
    except TypeError:
        pair = None
    if pair is None or len(pair) != 2 or not all(
            isinstance(v, numbers.Real) and not isinstance(v, bool) for v in pair):
        raise SceneError(where, f"must be two numbers [open, close], got {value!r}")
    lo, hi = (float(v) for v in pair)
    for i, v in enumerate((lo, hi)):
        if not math.isfinite(v):
            raise SceneError(f"{where}[{i}]", f"must be a finite number, got {v}")
        if abs(v) > SHUTTER_LIMIT:
            raise SceneError(f"{where}[{i}]", f"must be within -{SHUTTER_LIMIT:g} .. {SHUTTER_LIMIT:g} "
                                              f"frames of the frame's time, got {v:g}")
    if lo > hi:
        raise SceneError(where, f"opens after it closes ([{lo:g}, {hi:g}]): open must be <= close")
    return lo, hi


def named_objects(data):
    """{name: [(JSON path parts, object, inside a prototype?)]} of every named object,
    group children and prototypes included."""
    found = {}
    stack = [(obj, ["objects", i], False) for i, obj in enumerate(data.get("objects", []))]
    stack += [(obj, ["prototypes", n], True) for n, obj in data.get("prototypes", {}).items()]
    while stack:
        obj, path, in_proto = stack.pop()
        if "name" in obj:
            found.setdefault(obj["name"], []).append((path, obj, in_proto))
        if obj.get("type") == "group":
            stack += [(c, path + ["children", i], in_proto) for i, c in enumerate(obj["children"])]
    return found


def named_lights(data):
    """{name: [index, ...]} of the named lights."""
    found = {}
    for i, light in enumerate(data.get("lights", [])):
        if "name" in light:
            found.setdefault(light["name"], []).append(i)
    return found


def _check_keys(tracks, where):
    for key, tr in tracks.items():
        if key == "orbit":
            continue
        times = [k[0] for k in tr["keys"]]
        for i in range(1, len(times)):
            if not times[i] > times[i - 1]:
                raise _error(where + [key, "keys", i, 0], f"key times must increase "
                                     f"({times[i]:g} comes after {times[i - 1]:g})")
        if key == "rotate":
            for i, (_, value) in enumerate(tr["keys"]):
                if not any(value["axis"]):
                    raise _error(where + [key, "keys", i, 1, "axis"], "must not be a zero vector")


def _unique(found, name, where, what):
    if name not in found:
        known = ", ".join(sorted(found)) or "none"
        raise _error(where, f"no {what} is named {name!r} (named {what}s: {known})")
    if len(found[name]) > 1:
        raise _error(where, f"{len(found[name])} {what}s are named {name!r}; an animated "
                             f"{what} needs a name of its own")
    return found[name][0]


def _check_camera(cam, tracks):
    where = ["animation", "camera"]
    ortho = cam.get("type", "perspective") == "orthographic"
    for key in tracks:
        if key == "orbit":
            continue
        if key in ("look_at", "direction") and "orbit" not in tracks and key not in cam:
            other = "direction" if key == "look_at" else "look_at"
            raise _error(where + [key], f"the camera has '{other}', not '{key}': animate "
                                 f"'{other}', or give the camera a '{key}'")
        if ortho and key in ("fov", "aperture", "focus_distance"):
            raise _error(where + [key], "an orthographic camera has no " + key)
        if not ortho and key == "height":
            raise _error(where + [key], "a perspective camera has 'fov', not 'height'")
    orbit = tracks.get("orbit")
    if orbit is None:
        return
    for key in ("center", "look_at", "direction"):
        if key in tracks:
            raise _error(where + [key], "the orbit sets the camera's center and look_at; "
                                 "give one or the other")
    if "target" not in orbit and "look_at" not in cam:
        raise _error(where + ["orbit", "target"], "needed: the camera has no look_at")
    if "radius" not in orbit:
        target = orbit.get("target", cam.get("look_at"))
        dx, dz = cam["center"][0] - target[0], cam["center"][2] - target[2]
        if dx * dx + dz * dz == 0.0:
            raise _error(where + ["orbit", "radius"], "needed: the camera is straight "
                                 "above or below the target")


def _check_objects(data, bindings):
    found = named_objects(data)
    for name, tracks in bindings.items():
        where = ["animation", "objects", name]
        path, obj, in_proto = _unique(found, name, where, "object")
        _check_keys(tracks, where)
        if "time" in tracks and not (obj["type"] == "skinned_mesh" and "animation" in obj):
            raise _error(where + ["time"], "only a skinned_mesh with an 'animation' "
                                 f"has a clip time ({'.'.join(map(str, path))} is a {obj['type']})")
        if "emission" in tracks and obj["type"] == "plane":
            raise _error(where + ["emission"], "an infinite plane cannot emit (use a rectangle)")
        if "emission" in tracks and in_proto:
            raise _error(where + ["emission"], "instanced shapes cannot emit")


def _check_lights(data, bindings):
    found = named_lights(data)
    for name, tracks in bindings.items():
        where = ["animation", "lights", name]
        i = _unique(found, name, where, "light")
        _check_keys(tracks, where)
        kind = data["lights"][i]["type"]
        if "position" in tracks and kind not in ("point", "spot"):
            raise _error(where + ["position"], "a directional light has a direction, not a position")
        if "direction" in tracks and kind not in ("directional", "spot"):
            raise _error(where + ["direction"], "a point light has a position, not a direction")


def check_animation(data):
    """Raise :class:`~raytrace.errors.SceneError` for the first problem of ``data["animation"]`` (a
    scene that passed the schema); nothing when there is none."""
    anim = data.get("animation")
    if anim is None:
        return
    start, end, fps = frame_range(anim)
    if not end > start:
        raise _error(["animation", "end"], f"must be greater than start ({start:g})")
    if (end - start) * fps > MAX_FRAMES:
        raise _error(["animation"], f"{(end - start) * fps:.0f} frames are more than {MAX_FRAMES}")
    if "shutter" in anim:
        check_shutter(anim["shutter"])
    tracks = anim.get("camera", {})
    _check_keys(tracks, ["animation", "camera"])
    _check_camera(data["camera"], tracks)
    _check_objects(data, anim.get("objects", {}))
    _check_lights(data, anim.get("lights", {}))
