"""Validation of a scene dict: JSON Schema first, then what a schema cannot say.

Every problem becomes a :class:`~raytrace.errors.SceneError` whose ``where`` is the JSON
path of the offending value, e.g. ``objects[3].radius``.
"""
import json
import math

import jsonschema

from ..errors import SceneError
from .animation import check_animation
from .media import check_media, check_ranges
from .schema import build_schema

_validator = None


def _get_validator():
    global _validator
    if _validator is None:
        _validator = jsonschema.Draft202012Validator(build_schema())
    return _validator


def json_path(parts):
    """``['objects', 3, 'radius']`` -> ``objects[3].radius``."""
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out or "(top level)"


def _describe(err):
    """A short human message for one jsonschema error."""
    v, val = err.validator, err.validator_value
    if v == "type":
        names = val if isinstance(val, list) else [val]
        article = {"integer": "an", "object": "an", "array": "an"}
        return "must be " + " or ".join(f"{article.get(n, 'a')} {n}" for n in names) + \
            f", got {json.dumps(err.instance)[:40]}"
    if v == "exclusiveMinimum":
        return f"must be > {val}"
    if v == "minimum":
        return f"must be >= {val}"
    if v == "exclusiveMaximum":
        return f"must be < {val}"
    if v == "maximum":
        return f"must be <= {val}"
    if v == "enum":
        return "must be one of " + ", ".join(json.dumps(x) for x in val) + \
            f", got {json.dumps(err.instance)[:40]}"
    if v == "additionalProperties":
        allowed = set(err.schema.get("properties", {}))
        extra = sorted(k for k in err.instance if k not in allowed)
        return f"unknown key {', '.join(map(repr, extra))} (allowed: {', '.join(sorted(allowed))})"
    if v == "required":
        missing = [k for k in val if k not in err.instance]
        return f"missing required key {', '.join(map(repr, missing))}"
    if v in ("minItems", "maxItems"):
        n = len(err.instance)
        lo = err.schema.get("minItems")
        hi = err.schema.get("maxItems")
        want = f"{lo}" if lo == hi else f"{lo or 0}..{hi if hi is not None else 'any'}"
        return f"must have {want} items, got {n}"
    if v in ("minProperties", "maxProperties"):
        return "must have exactly one key, e.g. {\"translate\": [0, 1, 0]}"
    if v == "minLength":
        return "must not be empty"
    if v == "oneOf":
        return "must be a number or a list of 3 numbers"
    if v == "anyOf":
        return ("must be an RGB colour [r, g, b] or a texture object "
                "({\"type\": \"checkerboard\" or \"image\", ...})")
    return err.message


def _most_specific(err):
    """For a colour-or-texture ``anyOf`` error, the error of the branch the value was
    meant for (a dict is a texture, a list a colour); otherwise ``err`` itself."""
    while err.validator == "anyOf" and err.context:
        want = dict if isinstance(err.instance, dict) else list
        branch = 1 if want is dict else 0
        subs = [e for e in err.context if e.relative_schema_path and e.relative_schema_path[0] == branch]
        if not isinstance(err.instance, (dict, list)) or not subs:
            return err
        depth = max(len(e.absolute_path) for e in subs)
        err = _errors_sorted([e for e in subs if len(e.absolute_path) == depth])[0]
    return err


def _errors_sorted(errors):
    # Deepest-first path order makes the reported error the most specific one.
    return sorted(errors, key=lambda e: (list(map(str, e.absolute_path)), -len(e.absolute_path)))


MAX_NESTING = 150       # JSON containers inside each other
MAX_GROUP_NESTING = 64  # groups inside groups
MAX_MAGNITUDE = 1e12    # numbers beyond this (but the seed) would overflow in products


def _check_values(data):
    """One iterative walk over the parsed JSON: every number finite and at most
    MAX_MAGNITUDE in size (but the seed), containers nested at most MAX_NESTING deep
    and groups at most MAX_GROUP_NESTING deep (deeper trees would exhaust Python's
    recursion in the schema check and the geometry builder)."""
    stack = [(data, [], 0, 0)]
    while stack:
        node, path, depth, groups = stack.pop()
        if isinstance(node, bool):
            continue
        if isinstance(node, float) and not math.isfinite(node):
            raise SceneError(json_path(path), f"must be a finite number, got {node}")
        if isinstance(node, (int, float)) and abs(node) > MAX_MAGNITUDE and path[-1:] != ["seed"]:
            raise SceneError(json_path(path), f"must be a number of magnitude <= {MAX_MAGNITUDE:g}, "
                             f"got {node:g}")
        if isinstance(node, (dict, list)) and depth > MAX_NESTING:
            raise SceneError(json_path(path[:2]), f"holds values nested more than {MAX_NESTING} levels deep")
        if isinstance(node, dict):
            if node.get("type") == "group":
                groups += 1
                if groups > MAX_GROUP_NESTING:
                    raise SceneError(json_path(path[:2]), f"holds groups nested more than "
                                     f"{MAX_GROUP_NESTING} deep (merge their transforms)")
            items = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            continue
        for k, v in reversed(list(items)):
            stack.append((v, path + [k], depth + 1, groups))


def _objects(data):
    """Every object of the scene with its JSON path and whether it is inside a prototype,
    group children included, parents before children."""
    stack = [(obj, ["objects", i], False) for i, obj in reversed(list(enumerate(data.get("objects", []))))]
    stack += [(obj, ["prototypes", name], True) for name, obj in reversed(list(data.get("prototypes", {}).items()))]
    while stack:
        obj, path, in_proto = stack.pop()
        yield obj, path, in_proto
        if obj.get("type") == "group":
            children = obj.get("children", [])
            stack += [(c, path + ["children", i], in_proto) for i, c in reversed(list(enumerate(children)))]


def _check_materials(data):
    names = set(data.get("materials", {}))
    for obj, path, _ in _objects(data):
        m = obj.get("material")
        if m is not None and m not in names:
            known = ", ".join(sorted(names)) or "none defined"
            raise SceneError(json_path(path + ["material"]), f"unknown material {m!r} (materials: {known})")


def _check_emission(data):
    """Planes are infinite: they cannot be area lights (an emitting group may not hold one)."""
    def walk(objs, path, emitting):
        for i, obj in enumerate(objs):
            p = path + [i]
            em = obj.get("emission")
            here = emitting if em is None else any(c > 0 for c in em)
            if obj.get("type") == "plane" and here:
                where = p + ["emission"] if em is not None else p
                raise SceneError(json_path(where), "an infinite plane cannot emit (use a rectangle)")
            if obj.get("type") == "instance" and (em is not None or here):
                where = p + ["emission"] if em is not None else p
                raise SceneError(json_path(where), "emission is not supported on instances"
                                 + ("" if em is not None else ", and this one is inside an emitting group")
                                 + " (instanced shapes cannot emit: place the emitter as an ordinary object)")
            if obj.get("type") == "group":
                walk(obj.get("children", []), p + ["children"], here)

    walk(data.get("objects", []), ["objects"], False)


def _check_prototypes(data):
    """Instances name a prototype; prototypes hold no planes (infinite), no instances
    (two levels only) and no emission (instanced shapes are not lights)."""
    protos = data.get("prototypes", {})
    for obj, path, in_proto in _objects(data):
        kind = obj.get("type")
        if kind == "instance":
            if in_proto:
                raise SceneError(json_path(path), "a prototype cannot hold instances (only two levels)")
            if obj["prototype"] not in protos:
                known = ", ".join(sorted(protos)) or "none defined"
                raise SceneError(json_path(path + ["prototype"]),
                                 f"unknown prototype {obj['prototype']!r} (prototypes: {known})")
        if in_proto and kind == "plane":
            raise SceneError(json_path(path), "a prototype cannot hold an infinite plane")
        if in_proto and "emission" in obj:
            raise SceneError(json_path(path + ["emission"]), "instanced shapes cannot emit "
                             "(place an emitter as an ordinary object)")


def _check_file_objects(data):
    """``gltf`` objects: a .gltf/.glb file, ``time`` and ``loop`` only with an ``animation``."""
    for obj, p, _ in _objects(data):
        if obj.get("type") != "gltf":
            continue
        if not obj["file"].lower().endswith((".gltf", ".glb")):
            raise SceneError(json_path(p + ["file"]), f"a gltf object needs a .gltf or .glb file, "
                             f"got {obj['file']!r} (meshes: type 'mesh')")
        for key in ("time", "loop"):
            if key in obj and "animation" not in obj:
                raise SceneError(json_path(p + [key]), f"'{key}' needs an 'animation'")


def _check_background(bg):
    """One environment map at most; ``scale`` and ``transform`` only with one."""
    if "cube_map" in bg and "envmap" in bg:
        raise SceneError("background.envmap", "give one of 'cube_map' (a folder of six faces) or "
                         "'envmap' (a latitude-longitude image), not both")
    for key in ("scale", "transform"):
        if key in bg and "cube_map" not in bg and "envmap" not in bg:
            raise SceneError(f"background.{key}", "applies to an environment map: give 'envmap' or "
                             "'cube_map' (the background colour has neither)")
    if "transform" in bg:
        from .emitters import environment_rotation
        environment_rotation(bg["transform"])


def _check_spots(data):
    """A spot light's cone is Mitsuba's (cutoff_angle, beam_width) or glTF's
    (inner_cone_angle, outer_cone_angle), not both; the angles are ordered."""
    for i, light in enumerate(data.get("lights", [])):
        if light.get("type") != "spot":
            continue
        mitsuba = [k for k in ("cutoff_angle", "beam_width") if k in light]
        gltf = [k for k in ("inner_cone_angle", "outer_cone_angle") if k in light]
        if mitsuba and gltf:
            raise SceneError(f"lights[{i}].{gltf[0]}", f"give Mitsuba's cone ({', '.join(mitsuba)}) or "
                             f"glTF's (inner_cone_angle, outer_cone_angle), not both")
        from .lights import spot_cone
        spot_cone(light, f"lights[{i}]")


def _check_camera(cam):
    has_dir, has_at = "direction" in cam, "look_at" in cam
    if has_dir == has_at:
        raise SceneError("camera", "give exactly one of 'direction' or 'look_at'")
    if cam.get("type", "perspective") == "orthographic" and "fov" in cam:
        raise SceneError("camera.fov", "an orthographic camera has 'height', not 'fov'")
    if cam.get("type", "perspective") == "perspective" and "height" in cam:
        raise SceneError("camera.height", "a perspective camera has 'fov', not 'height'")
    if cam.get("type", "perspective") == "orthographic":
        for key in ("aperture", "focus_distance"):
            if key in cam:
                raise SceneError(f"camera.{key}", "only a perspective camera has a lens")
    elif cam.get("aperture", 0) > 0 and "focus_distance" not in cam and "look_at" not in cam:
        raise SceneError("camera.focus_distance", "needed with 'aperture' and 'direction' "
                         "(with 'look_at' the default is the distance to that point)")


def validate_scene(data):
    """Raise SceneError for the first problem in ``data`` (a parsed scene dict)."""
    if not isinstance(data, dict):
        raise SceneError("(top level)", "a scene must be a JSON object")
    _check_values(data)
    check_ranges(data)                     # media: coefficients, albedos, g (precise messages)
    errors = list(_get_validator().iter_errors(data))
    if errors:
        # ``if/then`` branches report both the branch error and nothing else; pick the
        # deepest error so that the message names the actual field.
        best = max(errors, key=lambda e: len(e.absolute_path))
        deepest = [e for e in errors if len(e.absolute_path) == len(best.absolute_path)]
        err = _most_specific(_errors_sorted(deepest)[0])
        raise SceneError(json_path(list(err.absolute_path)), _describe(err))
    _check_camera(data["camera"])
    _check_background(data.get("background", {}))
    _check_spots(data)
    _check_materials(data)
    _check_emission(data)
    _check_prototypes(data)
    _check_file_objects(data)
    check_media(data)
    check_animation(data)
