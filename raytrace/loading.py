"""``load_scene``: a scene file or dict -> a :class:`~raytrace.scene.ready.RenderScene`,
ready to render.

The scene side (:mod:`raytrace.scene`) reads, checks and builds everything it can without
a kernel; the one part of a ready scene that needs one, the Whitted integrator's shadow
maps (rays cast from each light that asks for a map, ``kernels.shadowmap``), is filled
here, a floor above it, so that the scene side never calls kernels
(``tests/test_structure.py``).
"""
import numpy as np


def fill_shadow_maps(lights, accel, geometry):
    """Fill the depths of every light of ``lights`` (:class:`~raytrace.layout.PunctualLights`)
    that asks for a shadow map, in place, by casting its texel rays through ``accel``."""
    from .kernels.shadowmap import fill_shadow_map
    for li in np.flatnonzero(lights.shadow_map >= 0):
        fill_shadow_map(lights.depths, int(li), accel, geometry, lights)


def load_scene(source, base_dir=None, environment=None):
    """Load a scene file (``.json``, course ``.txt``, glTF ``.gltf`` / ``.glb``) or dict
    (its paths relative to ``base_dir``, default the current folder) -> a frozen
    :class:`~raytrace.scene.ready.RenderScene`: geometry, BVH, lights, environment with its
    sampling tables, shadow maps, media and the list of files read. Every input error is
    a SceneError naming the file and field, raised here, never by a render.
    ``environment``: an :class:`~raytrace.layout.Environment` already built for the same
    ``background`` (another time of one animation), used instead of reading the map again."""
    from .scene.load import build_scene
    return build_scene(source, fill_shadow_maps, base_dir, environment)
