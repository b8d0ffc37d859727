"""Poses and animations as JSON (joint name or index -> rotation).

Pose::

    {"units": "degrees",                       # or "radians"; default degrees
     "rotations": {"3": [0, 0, -40],           # Euler (rx, ry, rz): R = Rz Ry Rx,
                   "l_elbow": {"axis": [0, 0, 1], "angle": 30},
                   "neck": {"wxyz": [1, 0, 0, 0]}},   # or {"xyzw": [...]} (glTF order)
     "translations": {"0": [0, 0.1, 0]},       # optional, replaces the local translation
     "scales": {"head": 1.2}}                  # optional, number or [sx, sy, sz]

Animation::

    {"units": "degrees", "interpolation": "linear",   # or "step"
     "keyframes": [{"time": 0, "rotations": {...}, "translations": {...}},
                   {"time": 1.5, "rotations": {...}}]}

Each (joint, property) mentioned in some keyframes becomes one channel keyed at exactly
those keyframes' times. Pose values *replace* the joint's rest local value. Errors name the
file and the JSON path: ``walk.json: keyframes[1].rotations.l_knee: expected 3 numbers, got 2``.
"""
import math
import pathlib

import numpy as np

from .animation import Animation, Channel
from .errors import SkinningFileError, parse_json_text, read_text_file
from .rotations import axis_angle_to_quat, euler_to_quat, quat_from_xyzw, quat_normalize

POSE_KEYS = ("rotations", "translations", "scales")


class _Ctx:
    def __init__(self, source, skeleton):
        self.source = None if source is None else str(source)
        self.skeleton = skeleton

    def fail(self, where, message):
        raise SkinningFileError(self.source, where, message)

    def numbers(self, value, n, where):
        if not isinstance(value, list):
            self.fail(where, f"expected a list of {n} numbers, got {type(value).__name__}")
        if len(value) != n:
            self.fail(where, f"expected {n} numbers, got {len(value)}")
        out = [_finite(v) for v in value]
        if None in out:
            self.fail(where, f"expected {n} finite numbers, got {_short(value)}")
        return np.array(out, dtype=np.float64)

    def number(self, value, where):
        out = _finite(value)
        if out is None:
            self.fail(where, f"expected a finite number, got {_short(value)}")
        return out

    def joint(self, key, where):
        try:
            return self.skeleton.joint_index(key)
        except KeyError as e:
            self.fail(where, e.args[0])

    def object(self, value, where, allowed):
        if not isinstance(value, dict):
            self.fail(where, f"expected an object, got {type(value).__name__}")
        for k in value:
            if k not in allowed:
                self.fail(_join(where, k), f"unknown key (allowed: {', '.join(allowed)})")
        return value


def _finite(v):
    """``float(v)`` for a finite JSON number (not a bool), else None (an int too large for
    a float included)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        f = float(v)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


def _short(value, limit=60):
    """``repr(value)`` cut to ``limit`` characters, for one-line messages."""
    try:
        text = repr(value)
    except RecursionError:
        text = "a deeply nested value"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _join(where, key):
    key = str(key)
    if not key.isprintable() or len(key) > 60:
        key = _short(key)
    return f"{where}.{key}" if where else key


def _units(ctx, data, where):
    u = data.get("units", "degrees")
    if u not in ("degrees", "radians"):
        ctx.fail(_join(where, "units"), f"must be 'degrees' or 'radians', got {_short(u)}")
    return u == "degrees"


def _rotation(ctx, value, where, degrees):
    if isinstance(value, list):
        return euler_to_quat(ctx.numbers(value, 3, where), degrees=degrees)
    ctx.object(value, where, ("euler", "wxyz", "xyzw", "axis", "angle"))
    forms = [k for k in ("euler", "wxyz", "xyzw", "axis") if k in value]
    if len(forms) != 1:
        ctx.fail(where, "give exactly one of [rx, ry, rz], euler, wxyz, xyzw, or axis + angle")
    form = forms[0]
    if form != "axis" and "angle" in value:
        ctx.fail(_join(where, "angle"), "only allowed with 'axis'")
    if form == "euler":
        return euler_to_quat(ctx.numbers(value["euler"], 3, _join(where, "euler")), degrees=degrees)
    if form == "axis":
        axis = ctx.numbers(value["axis"], 3, _join(where, "axis"))
        if not np.any(axis):
            ctx.fail(_join(where, "axis"), "axis must not be zero")
        if "angle" not in value:
            ctx.fail(where, "'axis' needs an 'angle'")
        angle = ctx.number(value["angle"], _join(where, "angle"))
        return axis_angle_to_quat(axis, angle, degrees=degrees)
    q = ctx.numbers(value[form], 4, _join(where, form))
    if not np.any(q):
        ctx.fail(_join(where, form), "quaternion must not be zero")
    return quat_normalize(q if form == "wxyz" else quat_from_xyzw(q))


def _pose_entries(ctx, data, where, degrees):
    """Yield (joint, path, value) for the rotations / translations / scales of one pose."""
    for key in POSE_KEYS:
        if key not in data:
            continue
        block = data[key]
        bwhere = _join(where, key)
        if not isinstance(block, dict):
            ctx.fail(bwhere, "expected an object mapping joint name or index to a value")
        for name, value in block.items():
            w = _join(bwhere, name)
            j = ctx.joint(name, w)
            if key == "rotations":
                yield j, "rotation", _rotation(ctx, value, w, degrees)
            elif key == "translations":
                yield j, "translation", ctx.numbers(value, 3, w)
            else:
                s = (np.full(3, ctx.number(value, w)) if not isinstance(value, list)
                     else ctx.numbers(value, 3, w))
                yield j, "scale", s


def pose_from_dict(data, skeleton, source=None, where=""):
    """A :class:`~skinning.skeleton.Pose` from a parsed pose object (rest pose + overrides).

    ``source`` (file name) and ``where`` (JSON path prefix) only label error messages.
    """
    ctx = _Ctx(source, skeleton)
    ctx.object(data, where, ("units", "description") + POSE_KEYS)
    degrees = _units(ctx, data, where)
    pose = skeleton.rest_pose()
    target = {"rotation": pose.rotations, "translation": pose.translations, "scale": pose.scales}
    for j, path, value in _pose_entries(ctx, data, where, degrees):
        target[path][j] = value
    return pose


def animation_from_dict(data, skeleton, source=None, where="", name=None):
    """An :class:`~skinning.animation.Animation` from a parsed animation object."""
    ctx = _Ctx(source, skeleton)
    ctx.object(data, where, ("units", "description", "name", "interpolation", "keyframes"))
    degrees = _units(ctx, data, where)
    interp = data.get("interpolation", "linear")
    if not isinstance(interp, str) or interp.lower() not in ("linear", "step"):
        ctx.fail(_join(where, "interpolation"), f"must be 'linear' or 'step', got {_short(interp)}")
    keys = data.get("keyframes")
    kwhere = _join(where, "keyframes")
    if not isinstance(keys, list) or not keys:
        ctx.fail(kwhere, "expected a non-empty list of keyframes")
    tracks = {}
    last = -math.inf
    for i, key in enumerate(keys):
        w = f"{kwhere}[{i}]"
        ctx.object(key, w, ("time",) + POSE_KEYS)
        if "time" not in key:
            ctx.fail(w, "missing 'time'")
        t = ctx.number(key["time"], _join(w, "time"))
        if t <= last:
            ctx.fail(_join(w, "time"), f"times must strictly increase ({t:g} after {last:g})")
        last = t
        for j, path, value in _pose_entries(ctx, key, w, degrees):
            tracks.setdefault((j, path), ([], []))
            tracks[(j, path)][0].append(t)
            tracks[(j, path)][1].append(value)
    channels = [Channel(j, path, np.array(ts), np.array(vs), interp.upper())
                for (j, path), (ts, vs) in sorted(tracks.items())]
    return Animation(name or data.get("name") or (pathlib.Path(source).stem if source else
                                                  "animation"), channels)


def _read_json(path):
    return parse_json_text(read_text_file(path), path)


def load_pose(path, skeleton):
    """Read a pose JSON file for ``skeleton``; see the module docstring for the format."""
    return pose_from_dict(_read_json(path), skeleton, source=path)


def load_animation(path, skeleton):
    """Read an animation JSON file for ``skeleton``; see the module docstring."""
    return animation_from_dict(_read_json(path), skeleton, source=path)


def pose_to_dict(pose, skeleton, degrees=True, only_changed=True):
    """A pose object (quaternions written as ``wxyz``) for :func:`pose_from_dict`.

    With ``only_changed`` only values that differ from the rest pose are written.
    """
    rest = skeleton.rest_pose()
    out = {"units": "degrees" if degrees else "radians",
           "rotations": {}, "translations": {}, "scales": {}}
    for j, name in enumerate(skeleton.names):
        for key, cur, ref in (("rotations", pose.rotations, rest.rotations),
                              ("translations", pose.translations, rest.translations),
                              ("scales", pose.scales, rest.scales)):
            if only_changed and np.allclose(cur[j], ref[j], rtol=0, atol=1e-12):
                continue
            val = [float(x) for x in cur[j]]
            out[key][name] = {"wxyz": val} if key == "rotations" else val
    return {k: v for k, v in out.items() if v or k == "units"}
