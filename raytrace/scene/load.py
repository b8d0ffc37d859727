"""Loading a scene: file or dict -> validated settings + flat geometry + BVH.

``load_scene`` accepts a path to a ``.json`` scene, a path to a course ``.txt`` scene
(converted on the fly), a glTF 2.0 file (``.gltf`` / ``.glb``, wrapped into a scene with
its camera and lights, see ``docs/gltf.md``), or a dict (paths in it are relative to
``base_dir``, default the current folder). All input errors are raised as SceneError
naming the file and field.
"""
import copy
import pathlib

from userio.textio import read_json as read_json_file

from ..camera import make_camera
from ..errors import SceneError
from .build import build_geometry
from .validate import validate_scene


class Scene:
    """A loaded scene. ``data`` is the validated dict; ``geometry`` and ``accel`` the
    arrays the kernels read; ``path`` the file it came from (or None);
    ``object_names`` / ``material_names`` name the object and material ids (the id
    AOVs, ``--view`` modes)."""

    def __init__(self, data, base_dir, path=None):
        self.data = data
        self.base_dir = pathlib.Path(base_dir)
        self.path = path
        self.geometry = None
        self.accel = None
        self.object_names = []
        self.material_names = []
        self.media = None            # raytrace.layout.Media, None without media

    @property
    def name(self):
        return str(self.path) if self.path else "<scene dict>"

    def setting(self, section, key, default):
        return self.data.get(section, {}).get(key, default)


def read_json(path):
    """Parse a JSON file (UTF-8); every failure is a SceneError naming the file (syntax
    errors with line and column)."""
    return read_json_file(path, "scene file", SceneError)


def read_scene(source, base_dir=None):
    """A scene file (JSON, course ``.txt``, glTF rendered directly) or dict -> (its dict,
    validated: schema and camera; the folder its paths are relative to; the file's path or
    None). A dict is copied; its paths are relative to ``base_dir`` (default the current
    folder). Errors are SceneErrors naming the file."""
    path = None
    if isinstance(source, dict):
        data = copy.deepcopy(source)
        base = pathlib.Path(base_dir) if base_dir is not None else pathlib.Path.cwd()
    else:
        path = pathlib.Path(source)
        base = pathlib.Path(base_dir) if base_dir is not None else path.parent
        if path.suffix.lower() == ".txt":
            from .course import parse_course_scene
            if not path.is_file():
                raise SceneError(None, "file not found", file=str(path))
            data = parse_course_scene(path)
        elif path.suffix.lower() in (".gltf", ".glb"):
            from .gltf import direct_scene
            data = direct_scene(path)       # camera, lights and one gltf object
            base = path.parent
        else:
            data = read_json(path)
    try:
        validate_scene(data)
        make_camera(data["camera"])          # checks the view direction and up vector
    except SceneError as exc:
        raise exc.with_file(path if path else "<scene dict>") from None
    return data, base, path


def load_scene(source, base_dir=None):
    """Load and validate a scene (see :func:`read_scene`), build its geometry and BVH.
    Returns a :class:`Scene`."""
    from ..accel.instances import build_scene_accel

    data, base, path = read_scene(source, base_dir)
    try:
        scene = Scene(data, base, path)
        geo, labels = build_geometry(data, base)
        scene.geometry = geo
        scene.object_names, scene.material_names = labels.objects, labels.materials
        scene.media = labels.media
        scene.accel = build_scene_accel(geo)
    except SceneError as exc:
        raise exc.with_file(path if path else "<scene dict>") from None
    return scene
