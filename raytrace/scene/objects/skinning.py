"""Scene plug-in: ``skinned_mesh`` objects (posed characters) built by :mod:`skinning`.

    {"type": "skinned_mesh", "skel": "a.skel", "attach": "a.attach", "obj": "a.obj",
     "pose": "wave.json", "show": "mesh"}
    {"type": "skinned_mesh", "gltf": "skin.gltf", "animation": 0, "time": 1.25}

The character is either the course triple (``skel`` + ``attach`` + ``obj``) or a glTF 2.0
file (``gltf``, optional ``skin`` index): every mesh the skin deforms, as one mesh, or
only the mesh of ``node`` (a glTF node index or name). Its pose is the bind pose, or ``pose`` (a pose
JSON file, or the same object inline), or ``animation`` at ``time`` seconds (an animation
JSON file ending in ``.json``, or a glTF animation name or index; ``loop`` wraps the time).
``show``: ``mesh`` (default) or ``skeleton`` (a sphere per joint, a cylinder per bone).
``normals``: ``transform`` (default; blended-matrix inverse transpose), ``recompute``
(area-weighted from the posed triangles) or ``flat``. Paths are relative to the scene.
"""
import pathlib

from raytrace.errors import SceneError
from userio.reads import note, recording

import skinning
from skinning.errors import SkinningError, SkinningFileError

_FILE_KEYS = ("skel", "attach", "obj", "gltf")
_cache = {}


def _path(obj, key, where, scene_dir):
    p = pathlib.Path(scene_dir) / obj[key]
    if not p.is_file():
        raise SceneError(f"{where}.{key}", f"file not found: {p}")
    return p.resolve()


def _load_model(obj, where, scene_dir):
    course = [k for k in ("skel", "attach", "obj") if k in obj]
    for k in ("skin", "node"):
        if k in obj and "gltf" not in obj:
            raise SceneError(f"{where}.{k}", "only used with 'gltf'")
    if "gltf" in obj:
        if course:
            raise SceneError(f"{where}.{course[0]}", "give either 'gltf' or 'skel'/'attach'/'obj'")
        paths = {"gltf": _path(obj, "gltf", where, scene_dir)}
    elif len(course) == 3:
        paths = {k: _path(obj, k, where, scene_dir) for k in ("skel", "attach", "obj")}
    else:
        missing = [k for k in ("skel", "attach", "obj") if k not in obj]
        raise SceneError(f"{where}", "a skinned_mesh needs 'gltf', or all of 'skel', 'attach' "
                                     f"and 'obj' (missing: {', '.join(missing)})")
    normalize = bool(obj.get("normalize_weights", False))
    key = (tuple((k, str(p), p.stat().st_mtime_ns) for k, p in paths.items()),
           obj.get("skin"), obj.get("node"), normalize)
    if key in _cache:
        for p in _cache[key][1]:           # the files the cached model was read from (a scene's files)
            note(p)
        return _cache[key][0]
    with recording() as read:
        try:
            if "gltf" in paths:
                model = skinning.load_gltf(paths["gltf"], skin=obj.get("skin"),
                                           normalize=normalize, node=obj.get("node"))
            else:
                model = skinning.load_course(paths["skel"], paths["attach"], paths["obj"],
                                             normalize=normalize)
        except SkinningError as e:
            if "node" in obj and not isinstance(e, SkinningFileError):
                raise SceneError(f"{where}.node", str(e)) from None   # no such node
            field = next((k for k, p in paths.items()
                          if isinstance(e, SkinningFileError) and e.path
                          and pathlib.Path(e.path).resolve() == p), next(iter(paths)))
            raise SceneError(f"{where}.{field}", str(e)) from None
    _cache.clear()                           # keep one model: scenes rarely hold more
    _cache[key] = (model, read.paths)
    return model


def _pose(model, obj, where, scene_dir):
    if "pose" in obj and "animation" in obj:
        raise SceneError(f"{where}.pose", "give 'pose' or 'animation', not both")
    if "time" in obj and "animation" not in obj:
        raise SceneError(f"{where}.time", "'time' needs an 'animation'")
    try:
        if "pose" in obj:
            pose = obj["pose"]
            if isinstance(pose, dict):
                return skinning.pose_from_dict(pose, model.skeleton, where=f"{where}.pose")
            return skinning.load_pose(_path(obj, "pose", where, scene_dir), model.skeleton)
        if "animation" in obj:
            anim = obj["animation"]
            if isinstance(anim, str) and anim.endswith(".json"):
                anim = skinning.load_animation(_path(obj, "animation", where, scene_dir),
                                               model.skeleton)
            return model.pose_at(anim, obj.get("time", 0.0), loop=obj.get("loop", False))
    except SkinningFileError as e:
        if e.path is None:                   # inline pose: e.where is its JSON path
            raise SceneError(e.where or f"{where}.pose", e.message) from None
        raise SceneError(f"{where}.{'pose' if 'pose' in obj else 'animation'}", str(e)) from None
    except SkinningError as e:
        raise SceneError(f"{where}.{'pose' if 'pose' in obj else 'animation'}", str(e)) from None
    return None


def build_skinned_mesh(obj, where, scene_dir):
    """-> (vertices (n,3) float64, faces (m,3) int64 CCW, normals (n,3) unit or None)."""
    model = _load_model(obj, where, scene_dir)
    pose = _pose(model, obj, where, scene_dir)
    try:
        if obj.get("show", "mesh") == "skeleton":
            return model.skeleton_mesh(pose, obj.get("joint_radius"), obj.get("bone_radius"))
        mode = obj.get("normals", "transform")
        if mode == "flat":
            return model.skin(pose, normals=None), model.faces, None
        v, n = model.skin(pose, normals=mode)
        return v, model.faces, n
    except SkinningError as e:
        raise SceneError(where, str(e)) from None


_radius = {"type": "number", "exclusiveMinimum": 0}

OBJECT_TYPES = {
    "skinned_mesh": {
        "properties": {
            "skel": {"type": "string", "description": "course .skel file"},
            "attach": {"type": "string", "description": "course .attach file"},
            "obj": {"type": "string", "description": "course bind-pose .obj file"},
            "gltf": {"type": "string", "description": "glTF 2.0 file with a skin"},
            "skin": {"type": "integer", "minimum": 0, "description": "glTF skin index"},
            "node": {"type": ["integer", "string"],
                     "description": "glTF node (index or name): only its mesh (default: "
                                    "every mesh the skin deforms)"},
            "pose": {"type": ["string", "object"],
                     "description": "pose JSON file, or the pose object inline"},
            "animation": {"type": ["string", "integer"],
                          "description": "animation JSON file (.json), or glTF animation "
                                         "name or index"},
            "time": {"type": "number", "description": "animation time in seconds"},
            "loop": {"type": "boolean", "description": "wrap time into the animation"},
            "show": {"enum": ["mesh", "skeleton"]},
            "normals": {"enum": ["transform", "recompute", "flat"]},
            "joint_radius": _radius,
            "bone_radius": _radius,
            "normalize_weights": {"type": "boolean",
                                  "description": "rescale weights that do not sum to 1"},
        },
        "required": [],
        "build": build_skinned_mesh,
    },
}
