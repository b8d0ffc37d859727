"""Loading a scene: file or dict -> a :class:`~raytrace.scene.ready.RenderScene`, ready
to render (:func:`build_scene`; ``raytrace.load_scene``, :mod:`raytrace.loading`, calls it
with the shadow-map filler, a kernel the scene side never calls itself).

``load_scene`` accepts a path to a ``.json`` scene, a path to a course ``.txt`` scene
(converted on the fly), a glTF 2.0 file (``.gltf`` / ``.glb``, wrapped into a scene with
its camera and lights, see ``docs/gltf.md``), or a dict (paths in it are relative to
``base_dir``, default the current folder). Every file the scene names is opened, read
and checked here, once: all input errors are raised at load as SceneError naming the
file and field, never during a render.
"""
import copy
import pathlib

from userio.reads import recording
from userio.textio import read_json as read_json_file

from ..camera import make_camera
from ..errors import SceneError
from .build import build_geometry
from .ready import assemble
from .validate import validate_scene


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


def build_scene(source, shadow_maps, base_dir=None, environment=None):
    """Load and validate a scene (see :func:`read_scene`), build its geometry, BVH,
    lights, environment (with its sampling tables), shadow maps (filled by
    ``shadow_maps``, see :func:`raytrace.scene.ready.assemble`) and media -> a frozen
    :class:`~raytrace.scene.ready.RenderScene` whose ``files`` lists every file read.
    ``environment``: an :class:`~raytrace.layout.Environment` already built for the same
    ``background`` (``scene.environment`` of another time of one animation), used instead
    of reading the map again."""
    from ..accel.instances import build_scene_accel

    with recording() as read:
        data, base, path = read_scene(source, base_dir)
        try:
            geo, labels = build_geometry(data, base)
            accel = build_scene_accel(geo)
        except SceneError as exc:
            raise exc.with_file(path if path else "<scene dict>") from None
        return assemble(data, base, path, geo, labels, accel, shadow_maps, read.paths, environment)
