"""Loading a scene: file or dict -> validated settings + flat geometry + BVH.

``load_scene`` accepts a path to a ``.json`` scene, a path to a course ``.txt`` scene
(converted on the fly), a glTF 2.0 file (``.gltf`` / ``.glb``, wrapped into a scene with
its camera and lights, see ``docs/gltf.md``), or a dict (paths in it are relative to
``base_dir``, default the current folder). All input errors are raised as SceneError
naming the file and field.
"""
import copy
import json
import pathlib

from userio.textio import read_text

from ..camera import make_camera
from ..errors import SceneError
from .build import build_geometry
from .validate import validate_scene


class Scene:
    """A loaded scene. ``data`` is the validated dict; ``geometry`` and ``accel`` the
    arrays the kernels read; ``path`` the file it came from (or None)."""

    def __init__(self, data, base_dir, path=None):
        self.data = data
        self.base_dir = pathlib.Path(base_dir)
        self.path = path
        self.geometry = None
        self.accel = None

    @property
    def name(self):
        return str(self.path) if self.path else "<scene dict>"

    def setting(self, section, key, default):
        return self.data.get(section, {}).get(key, default)


def read_json(path):
    """Parse a JSON file (UTF-8); syntax errors become SceneError with line and column."""
    text = read_text(path, "scene file", SceneError)
    return parse_json(text, path)


def parse_json(text, path):
    """``json.loads`` with every failure as a SceneError naming ``path``."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SceneError(f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}",
                         file=str(path)) from None
    except RecursionError:
        raise SceneError(None, "invalid JSON: nested too deeply", file=str(path)) from None


def load_scene(source, base_dir=None):
    """Load and validate a scene, build its geometry and BVH. Returns a :class:`Scene`."""
    from ..accel import build_accel

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
        scene = Scene(data, base, path)
        geo = build_geometry(data, base)
        scene.geometry = geo
        scene.accel = build_accel(geo.tri_v0, geo.tri_v1, geo.tri_v2, geo.sph_w2o, geo.sph_lo, geo.sph_hi)
    except SceneError as exc:
        raise exc.with_file(path if path else "<scene dict>") from None
    return scene
