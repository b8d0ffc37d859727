"""A scene ready to render: :class:`RenderScene`, everything the integrators read, built
once at load.

:func:`assemble` turns a validated scene dict, its geometry and BVH into a frozen
:class:`RenderScene`: the path tracer's light distribution, the environment with its
sampling tables (a map is read here), the Whitted integrator's punctual lights with their
shadow maps filled, the media, and the files the load read. Nothing is built later, at
render time, and nothing is cached beside the scene: two renders of one scene read the
same arrays, and a file error is the load's error.

Shadow maps are filled at load when a light asks for them (``"shadows": "map"``),
whatever the scene's integrator, so that the Whitted integrator can be chosen by an
override at render time. Only the Whitted integrator reads them; scenes that do not ask
pay nothing (:func:`raytrace.scene.lights.punctual_lights` with no map is a few small
arrays). Filling a map casts rays, a kernel's work, and the scene side never calls
kernels (``tests/test_structure.py``): :func:`assemble` takes the filling function from
its caller, :func:`raytrace.loading.fill_shadow_maps` (``raytrace.load_scene``,
``raytrace.animation.scene_at``).
"""
import dataclasses
import pathlib
from typing import Any, Optional


from ..errors import SceneError
from ..layout import ENV_CUBE, ENV_LATLONG


@dataclasses.dataclass(frozen=True, eq=False)
class RenderScene:
    """A loaded scene, ready to render (frozen: build another with
    :func:`dataclasses.replace`). ``data``: the validated dict (treat as read-only);
    ``base_dir``: the folder its relative paths start from; ``path``: the file it came from
    (or None); ``geometry`` / ``accel``: the kernels' arrays and BVH; ``object_names`` /
    ``material_names`` name the object and material ids (id AOVs, debug views);
    ``media``: :class:`~raytrace.layout.Media` or None; ``environment``:
    :class:`~raytrace.layout.Environment` (background colour or map with its sampling
    tables, ambient light); ``lights``: the path tracer's
    :class:`~raytrace.layout.Lights`; ``whitted_lights``: the Whitted integrator's
    :class:`~raytrace.layout.PunctualLights`, shadow maps filled; ``files``: absolute
    paths of the files the load read (scene file, meshes, MTLs, textures, maps, grids,
    glTF buffers...), in the order first read. ``memo``: what a layer above builds from
    this scene object once and keeps with it (``raytrace.animation.scene_at.animated``:
    its AnimatedScene); not a field of its value: :func:`dataclasses.replace` starts an
    empty one."""
    data: dict
    base_dir: pathlib.Path
    path: Optional[pathlib.Path]
    geometry: Any
    accel: Any
    object_names: list
    material_names: list
    media: Any
    environment: Any
    lights: Any
    whitted_lights: Any
    files: tuple = ()
    memo: dict = dataclasses.field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def name(self):
        """The scene's name in messages: its file, or ``<scene dict>``."""
        return str(self.path) if self.path else "<scene dict>"

    def setting(self, section, key, default):
        """``data[section][key]``, or ``default``."""
        return self.data.get(section, {}).get(key, default)

    @property
    def cube_map(self):
        """The environment map's texels ((6, S, S, 3) cube faces or (1, H, W, 3) a lat-long
        image, float32), or None."""
        env = self.environment
        return env.texels if env.kind in (ENV_CUBE, ENV_LATLONG) else None


def build_environment_of(data, base_dir, name):
    """The :class:`~raytrace.layout.Environment` of the scene dict ``data`` (its
    ``background``; a map is read from ``base_dir``); errors name the scene file ``name``."""
    from .emitters import build_environment
    try:
        return build_environment(data.get("background", {}), base_dir)
    except SceneError as exc:
        raise exc.with_file(name) from None


def assemble(data, base_dir, path, geometry, labels, accel, shadow_maps, files=(), environment=None,
             environment_mean=None):
    """-> :class:`RenderScene` of a validated dict and its built geometry (``labels``:
    :class:`~raytrace.scene.build.Labels`). ``shadow_maps(lights, accel, geometry)``
    fills the depths of the punctual lights that ask for a map (module docstring).
    ``environment``: one already built for the same ``background`` (the scenes of an
    animation at several times share it: the background is not animated), else it is
    built here; ``environment_mean``: its :func:`~raytrace.scene.emitters.environment_mean`
    when the caller keeps it (computed here otherwise). Errors are SceneErrors naming the
    scene file."""
    from .emitters import build_lights, scene_bounds
    from .lights import punctual_lights

    name = str(path) if path else "<scene dict>"
    if environment is None:
        environment = build_environment_of(data, base_dir, name)
    try:
        lights = build_lights(data, geometry, environment, environment_mean)
        asked = data.get("lights", [])
        maps = any(light.get("shadows") == "map" for light in asked)    # bounds: for directional maps only
        punctual = punctual_lights(asked, scene_bounds(geometry)) if maps else punctual_lights(asked)
    except SceneError as exc:
        raise exc.with_file(name) from None
    if (punctual.shadow_map >= 0).any():                 # only where a light asks for a map
        shadow_maps(punctual, accel, geometry)
    return RenderScene(data=data, base_dir=pathlib.Path(base_dir), path=path, geometry=geometry, accel=accel,
                       object_names=list(labels.objects), material_names=list(labels.materials),
                       media=labels.media, environment=environment, lights=lights, whitted_lights=punctual,
                       files=tuple(files))
