"""Scene plug-in: Bézier patches, surfaces of revolution and sweeps from :mod:`curves`.

    {"type": "bezier_patches", "file": "assets/teapot_patches.json", "resolution": 16}
    {"type": "bezier_patches", "patches": [[[x, y, z], ... 16 points], ...]}
    {"type": "surface_of_revolution", "profile": CURVE, "steps": 48, "samples": 16}
    {"type": "sweep", "profile": CURVE, "path": CURVE, "frames": "rmf"}

A CURVE is one of
    {"basis": "bezier"|"bspline"|"catmull_rom", "points": [[x, y(, z)], ...], "closed": false}
    {"degree": 2, "knots": [...], "points": [...]}        (a B-spline of any degree)
    {"circle": 0.5}                                       (the course's circ)
    {"file": "profile.spline"}                            (a .spline curve file)
Profiles are 2D (x, y): a surface of revolution turns the profile (x >= 0) about the
object's +y axis; a sweep places it in the path's (N, B) frames. Normals follow the
profile's right side (outwards for profiles running up, or counter-clockwise loops).
``samples`` / ``profile_samples`` / ``path_samples``: intervals per curve piece;
``resolution``: intervals per patch side; ``smooth: false`` gives flat shading.
"""
import pathlib

import numpy as np

from raytrace.errors import SceneError

import curves
from curves.errors import CurveFileError

_INT = {"type": "integer", "minimum": 1, "maximum": 4096}
_POINT = {"type": "array", "minItems": 2, "maxItems": 3, "items": {"type": "number"}}
_CURVE = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "basis": {"enum": ["bezier", "bspline", "catmull_rom"]},
        "points": {"type": "array", "minItems": 2, "items": _POINT},
        "closed": {"type": "boolean"},
        "degree": {"type": "integer", "minimum": 1, "maximum": 10},
        "knots": {"type": "array", "minItems": 4, "items": {"type": "number"}},
        "circle": {"type": "number", "exclusiveMinimum": 0},
        "file": {"type": "string", "minLength": 1},
    },
}
_PATCH = {"type": "array", "minItems": 16, "maxItems": 16,
          "items": {"type": "array", "minItems": 3, "maxItems": 3, "items": {"type": "number"}}}


def _file(obj_value, where, scene_dir):
    p = pathlib.Path(scene_dir) / obj_value
    if not p.is_file():
        raise SceneError(where, f"file not found: {p}")
    return p


def _curve(spec, where, scene_dir):
    """A curves curve object from a CURVE spec (see the module docstring)."""
    given = [k for k in ("points", "circle", "file") if k in spec]
    if len(given) != 1:
        raise SceneError(where, "give exactly one of 'points', 'circle' or 'file'")
    try:
        if "circle" in spec:
            extra = [k for k in spec if k != "circle"]
            if extra:
                raise SceneError(f"{where}.{extra[0]}", "not used with 'circle'")
            return curves.Circle(float(spec["circle"]))
        if "file" in spec:
            path = _file(spec["file"], f"{where}.file", scene_dir)
            try:
                sf = curves.read_spline(path)
            except CurveFileError as e:
                raise SceneError(f"{where}.file", str(e)) from None
            if sf.kind != "curve":
                raise SceneError(f"{where}.file", f"{path.name} holds patches, not a curve")
            return curves.Curve(sf.points, sf.basis, bool(spec.get("closed", False)))
        if len({len(p) for p in spec["points"]}) != 1:
            raise SceneError(f"{where}.points", "all points need the same number of coordinates")
        pts = np.array(spec["points"], dtype=np.float64)
        if "knots" in spec or "degree" in spec:
            if "knots" not in spec or "degree" not in spec:
                raise SceneError(where, "a general B-spline needs both 'degree' and 'knots'")
            if spec.get("basis", "bspline") != "bspline" or spec.get("closed"):
                raise SceneError(where, "'knots' curves are open B-splines (no 'basis', 'closed')")
            return curves.BSplineCurve(spec["knots"], pts, int(spec["degree"]))
        return curves.Curve(pts, spec.get("basis", "bspline"), bool(spec.get("closed", False)))
    except SceneError:
        raise
    except ValueError as e:             # the library's own checks (counts, knots, ...)
        raise SceneError(where, str(e)) from None


def _result(mesh, obj):
    normals = mesh.normals if obj.get("smooth", True) else None
    return mesh.vertices, mesh.faces, normals


def build_patches(obj, where, scene_dir):
    """bezier_patches -> (vertices, faces, normals)."""
    if ("file" in obj) == ("patches" in obj):
        raise SceneError(where, "give exactly one of 'patches' or 'file'")
    if "file" in obj:
        path = _file(obj["file"], f"{where}.file", scene_dir)
        try:
            patches, basis = curves.read_patches(path)
        except CurveFileError as e:
            raise SceneError(f"{where}.file", str(e)) from None
        if "basis" in obj and obj["basis"] != basis:
            raise SceneError(f"{where}.basis", f"the file holds {basis} patches")
    else:
        patches = np.array(obj["patches"], dtype=np.float64)
        basis = obj.get("basis", "bezier")
    mesh = curves.patches.tessellate(patches, obj.get("resolution", 16), basis)
    return _result(mesh, obj)


def build_revolution(obj, where, scene_dir):
    """surface_of_revolution -> (vertices, faces, normals)."""
    profile = _curve(obj["profile"], f"{where}.profile", scene_dir)
    if profile.dim != 2:
        raise SceneError(f"{where}.profile", "the profile must be a 2D curve ([x, y] points)")
    try:
        mesh = curves.surface_of_revolution(profile, obj.get("steps", 32), obj.get("samples", 16))
    except SceneError:
        raise
    except ValueError as e:
        raise SceneError(f"{where}.profile", str(e)) from None
    return _result(mesh, obj)


def build_sweep(obj, where, scene_dir):
    """sweep -> (vertices, faces, normals)."""
    profile = _curve(obj["profile"], f"{where}.profile", scene_dir)
    if profile.dim != 2:
        raise SceneError(f"{where}.profile", "the profile must be a 2D curve ([x, y] points)")
    path = _curve(obj["path"], f"{where}.path", scene_dir)
    try:
        mesh = curves.generalized_cylinder(profile, path, obj.get("profile_samples", 16),
                                           obj.get("path_samples", 16),
                                           obj.get("frames", "rmf"))
    except ValueError as e:
        raise SceneError(f"{where}.path", str(e)) from None
    return _result(mesh, obj)


OBJECT_TYPES = {
    "bezier_patches": {
        "properties": {
            "patches": {"type": "array", "minItems": 1, "items": _PATCH},
            "file": {"type": "string", "minLength": 1},
            "basis": {"enum": ["bezier", "bspline"]},
            "resolution": {"type": "integer", "minimum": 1, "maximum": 512},
            "smooth": {"type": "boolean"},
        },
        "required": [],
        "build": build_patches,
    },
    "surface_of_revolution": {
        "properties": {
            "profile": _CURVE,
            "steps": {"type": "integer", "minimum": 3, "maximum": 4096},
            "samples": _INT,
            "smooth": {"type": "boolean"},
        },
        "required": ["profile"],
        "build": build_revolution,
    },
    "sweep": {
        "properties": {
            "profile": _CURVE,
            "path": _CURVE,
            "profile_samples": _INT,
            "path_samples": _INT,
            "frames": {"enum": ["rmf", "course"]},
            "smooth": {"type": "boolean"},
        },
        "required": ["profile", "path"],
        "build": build_sweep,
    },
}
