"""The JSON Schema of scene files.

Built here as a Python dict from the core object types plus the plug-in types that the
standalone libraries contribute (``raytrace/scene/objects/*.py``). The same schema is
shipped as ``raytrace/scene/scene.schema.json`` for editors; regenerate it with
``python scripts/build_schema.py`` (a test checks that the shipped file is current).
"""
import json
import pathlib

from .animation import ANIMATION_SCHEMA
from .plugins import plugin_object_types

SCHEMA_PATH = pathlib.Path(__file__).with_name("scene.schema.json")

_num = {"type": "number"}
_pos = {"type": "number", "exclusiveMinimum": 0}
_nonneg = {"type": "number", "minimum": 0}
_vec3 = {"$ref": "#/$defs/vec3"}
_color = {"$ref": "#/$defs/color"}

_TRANSFORM_STEP = {
    "type": "object",
    "minProperties": 1,
    "maxProperties": 1,
    "additionalProperties": False,
    "properties": {
        "translate": _vec3,
        "rotate_x": _num,
        "rotate_y": _num,
        "rotate_z": _num,
        "rotate": {
            "type": "object",
            "additionalProperties": False,
            "required": ["axis", "angle"],
            "properties": {"axis": _vec3, "angle": _num},
        },
        "scale": {"oneOf": [_num, _vec3]},
        "matrix": {
            "type": "array", "minItems": 4, "maxItems": 4,
            "items": {"type": "array", "minItems": 4, "maxItems": 4, "items": _num},
        },
    },
}

# type-specific keys of the core object types (common keys are added below)
_CORE_OBJECTS = {
    "sphere": {"properties": {"center": _vec3, "radius": _pos}, "required": []},
    "plane": {"properties": {"normal": _vec3, "offset": _num}, "required": ["normal"]},
    "triangle": {
        "properties": {
            "vertices": {"type": "array", "minItems": 3, "maxItems": 3, "items": _vec3},
            "normals": {"type": "array", "minItems": 3, "maxItems": 3, "items": _vec3},
        },
        "required": ["vertices"],
    },
    "rectangle": {"properties": {}, "required": []},
    "cube": {"properties": {}, "required": []},
    "mesh": {
        "properties": {"file": {"type": "string", "minLength": 1}, "smooth": {"type": "boolean"}},
        "required": ["file"],
    },
    "gltf": {
        "properties": {
            "file": {"type": "string", "minLength": 1},
            "scene": {"type": "integer", "minimum": 0},
            "animation": {"type": ["string", "integer"], "minimum": 0},
            "time": _num,
            "loop": {"type": "boolean"},
        },
        "required": ["file"],
    },
    "group": {
        "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/object"}}},
        "required": ["children"],
    },
    "instance": {"properties": {"prototype": {"type": "string", "minLength": 1}}, "required": ["prototype"]},
}

_COMMON_OBJECT_KEYS = {
    "type": {"type": "string"},
    "material": {"type": "string"},
    "transform": {"type": "array", "items": {"$ref": "#/$defs/transform_step"}},
    "name": {"type": "string"},
    "emission": _color,
    "interior": {"type": "string"},     # media (docs/media.md)
    "exterior": {"type": "string"},
}

_texture_or_color = {"anyOf": [_color, {"$ref": "#/$defs/texture"}]}
_scale2 = {"type": "array", "minItems": 2, "maxItems": 2, "items": _pos}


def _typed(type_key_values):
    """``if type == value then {...}`` branches; ``None`` as a value means "no type key"."""
    branches = []
    for value, props, required in type_key_values:
        then = {"additionalProperties": False, "properties": dict({"type": {}}, **props)}
        if required:
            then["required"] = list(required)
        if value is None:
            cond = {"not": {"required": ["type"]}}
        else:
            cond = {"properties": {"type": {"const": value}}, "required": ["type"]}
        branches.append({"if": cond, "then": then})
    return branches


_PHONG = {
    "diffuse": _texture_or_color,
    "specular": _color,
    "shininess": _nonneg,
    "reflect": _color,
    "transmit": _color,
    "ior": {"type": "number", "exclusiveMinimum": 0},
}

_MATERIAL = {
    "type": "object",
    "properties": {"type": {"enum": ["phong", "diffuse", "conductor", "rough_conductor", "dielectric", "null"]}},
    "allOf": _typed([
        (None, _PHONG, ()),
        ("phong", _PHONG, ()),
        ("diffuse", {"albedo": _texture_or_color}, ()),
        ("conductor", {"reflectance": _texture_or_color}, ()),
        ("rough_conductor", {"reflectance": _texture_or_color,
                             "alpha": {"type": "number", "exclusiveMinimum": 0, "maximum": 4}}, ()),
        ("dielectric", {"ior": {"type": "number", "exclusiveMinimum": 0}}, ()),
        ("null", {}, ()),
    ]),
}

# participating media (docs/media.md; ranges also checked with precise messages by
# raytrace.scene.media.check_ranges, since oneOf can only say "a number or a list")
_coefficient = {"oneOf": [_nonneg, _color]}
_unit = {"type": "number", "minimum": 0, "maximum": 1}
_unit_rgb = {"type": "array", "minItems": 3, "maxItems": 3, "items": _unit}
_GRID = {
    "type": "object", "additionalProperties": False, "required": ["type"],
    "properties": {"type": {"const": "grid"}, "file": {"type": "string", "minLength": 1},
                   "data": {"description": "a (nz, ny, nx) or (nz, ny, nx, channels) array (NumPy or lists)"}},
}
_PHASE = {
    "type": "object", "required": ["type"],
    "properties": {"type": {"enum": ["isotropic", "hg"]}},
    "allOf": _typed([("isotropic", {}, ()),
                     ("hg", {"g": {"type": "number", "exclusiveMinimum": -1, "exclusiveMaximum": 1}}, ("g",))]),
}
_MEDIUM = {
    "type": "object", "required": ["type"],
    "properties": {"type": {"enum": ["homogeneous", "heterogeneous"]}},
    "allOf": _typed([
        ("homogeneous", {"sigma_a": _coefficient, "sigma_s": _coefficient, "sigma_t": _coefficient,
                         "albedo": {"oneOf": [_unit, _unit_rgb]}, "scale": _nonneg, "phase": _PHASE}, ()),
        ("heterogeneous", {"sigma_t": _GRID, "albedo": {"oneOf": [_unit, _unit_rgb, _GRID]}, "scale": _nonneg,
                           "phase": _PHASE,
                           "transform": {"type": "array", "items": {"$ref": "#/$defs/transform_step"}}},
         ("sigma_t",)),
    ]),
}

_TEXTURE = {
    "type": "object",
    "required": ["type"],
    "properties": {"type": {"enum": ["checkerboard", "image"]}},
    "allOf": _typed([
        ("checkerboard", {"color0": _color, "color1": _color, "scale": _scale2}, ()),
        ("image", {"file": {"type": "string", "minLength": 1}, "scale": _scale2}, ("file",)),
    ]),
}

# Integer render settings: (smallest, largest). Scene files and the overrides of the API
# and the command line obey the same limits (raytrace.renderer.resolve_settings).
SETTING_LIMITS = {
    "width": (1, 16384), "height": (1, 16384), "spp": (1, 65536), "seed": (0, 2 ** 63 - 1),
    "bounces": (0, 64), "max_depth": (-1, 65536), "rr_depth": (1, 65536),
    "min_spp": (1, 65536), "max_spp": (1, 65536),
}


def _int_setting(name):
    lo, hi = SETTING_LIMITS[name]
    return {"type": "integer", "minimum": lo, "maximum": hi}


_INTEGRATOR_WHITTED = {
    "bounces": _int_setting("bounces"),
    "shadows": {"type": "boolean"},
    "epsilon": _pos,
}
_INTEGRATOR_PATH = {
    "max_depth": _int_setting("max_depth"),
    "rr_depth": _int_setting("rr_depth"),
    "epsilon": _pos,
    "noise_threshold": {"type": "number", "minimum": 0},
    "min_spp": _int_setting("min_spp"),
    "max_spp": _int_setting("max_spp"),
}


# a light's shadows: shadow rays (default) or a shadow map (Whitted integrator)
_SHADOW_KEYS = {
    "shadows": {"enum": ["rays", "map"]},
    "shadow_map": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "resolution": {"type": "integer", "minimum": 2, "maximum": 8192},
            "bias": {"type": "number", "minimum": 0},
            "pcf": {"type": "integer", "minimum": 0, "maximum": 8},
        },
    },
}


def _object_schema(types):
    """One ``if type == X then {...}`` branch per object type: errors stay specific."""
    branches = []
    for name, spec in types.items():
        props = dict(_COMMON_OBJECT_KEYS)
        props.update(spec["properties"])
        branches.append({
            "if": {"properties": {"type": {"const": name}}, "required": ["type"]},
            "then": {"properties": props, "required": list(spec["required"]),
                     "additionalProperties": False},
        })
    return {
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"enum": sorted(types)}},
        "allOf": branches,
    }


def build_schema():
    """Return the full scene schema as a dict (core types + plug-in types)."""
    types = dict(_CORE_OBJECTS)
    for name, spec in plugin_object_types().items():
        types[name] = {"properties": spec["properties"], "required": spec.get("required", [])}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "raytrace scene",
        "description": "Scene file of the raytrace toolkit; see docs/scene-format.md. "
                       "Right-handed, y up, angles in degrees, linear RGB colours.",
        "type": "object",
        "additionalProperties": False,
        "required": ["camera"],
        "properties": {
            "$schema": {"type": "string"},
            "camera": {
                "type": "object",
                "additionalProperties": False,
                "required": ["center"],
                "properties": {
                    "type": {"enum": ["perspective", "orthographic"]},
                    "center": _vec3,
                    "direction": _vec3,
                    "look_at": _vec3,
                    "up": _vec3,
                    "fov": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 180},
                    "height": _pos,
                    "aperture": {"type": "number", "minimum": 0},
                    "focus_distance": _pos,
                    "medium": {"type": "string"},
                },
            },
            "image": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "width": _int_setting("width"),
                    "height": _int_setting("height"),
                    "spp": _int_setting("spp"),
                    "filter": {"enum": ["box", "tent", "gaussian"]},
                    "seed": _int_setting("seed"),
                },
            },
            "integrator": {
                "type": "object",
                "properties": {"type": {"enum": ["whitted", "path"]}},
                "allOf": _typed([(None, _INTEGRATOR_WHITTED, ()), ("whitted", _INTEGRATOR_WHITTED, ()),
                                 ("path", _INTEGRATOR_PATH, ())]),
            },
            "background": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "color": _color,
                    "ambient": _color,
                    "cube_map": {"type": "string", "minLength": 1},
                    "envmap": {"type": "string", "minLength": 1},
                    "scale": _nonneg,
                    "transform": {"type": "array", "items": {"$ref": "#/$defs/transform_step"}},
                },
            },
            "materials": {
                "type": "object",
                "additionalProperties": {"$ref": "#/$defs/material"},
            },
            "lights": {"type": "array", "items": {"$ref": "#/$defs/light"}},
            "objects": {"type": "array", "items": {"$ref": "#/$defs/object"}},
            "prototypes": {"type": "object", "additionalProperties": {"$ref": "#/$defs/object"}},
            "media": {"type": "object", "additionalProperties": _MEDIUM},
            "medium": {"type": "string"},
            "animation": ANIMATION_SCHEMA,
        },
        "$defs": {
            "vec3": {"type": "array", "minItems": 3, "maxItems": 3, "items": _num},
            "color": {"type": "array", "minItems": 3, "maxItems": 3, "items": _nonneg},
            "transform_step": _TRANSFORM_STEP,
            "material": _MATERIAL,
            "texture": _TEXTURE,
            "light": {
                "type": "object",
                "required": ["type"],
                "properties": {"type": {"enum": ["point", "spot", "directional"]}},
                "allOf": [
                    {"if": {"properties": {"type": {"const": "point"}}},
                     "then": {"additionalProperties": False, "required": ["position"],
                              "properties": {"type": {}, "position": _vec3, "color": _color,
                                             "attenuation": _pos, "name": {"type": "string"},
                                             **_SHADOW_KEYS}}},
                    {"if": {"properties": {"type": {"const": "spot"}}},
                     "then": {"additionalProperties": False, "required": ["position", "direction"],
                              "properties": {"type": {}, "position": _vec3, "direction": _vec3,
                                             "color": _color, "attenuation": _pos,
                                             "cutoff_angle": {"type": "number", "exclusiveMinimum": 0,
                                                              "maximum": 180},
                                             "beam_width": {"type": "number", "minimum": 0, "maximum": 180},
                                             "inner_cone_angle": {"type": "number", "minimum": 0,
                                                                  "exclusiveMaximum": 90},
                                             "outer_cone_angle": {"type": "number", "exclusiveMinimum": 0,
                                                                  "maximum": 90},
                                             "name": {"type": "string"}, **_SHADOW_KEYS}}},
                    {"if": {"properties": {"type": {"const": "directional"}}},
                     "then": {"additionalProperties": False, "required": ["direction"],
                              "properties": {"type": {}, "direction": _vec3, "color": _color,
                                             "name": {"type": "string"}, **_SHADOW_KEYS}}},
                ],
            },
            "object": _object_schema(types),
        },
    }


def main():
    SCHEMA_PATH.write_text(json.dumps(build_schema(), indent=2) + "\n")
    print(f"wrote {SCHEMA_PATH}")


if __name__ == "__main__":
    main()
