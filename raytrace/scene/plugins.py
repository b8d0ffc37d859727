"""Object types contributed by the standalone libraries.

Each ``raytrace/scene/objects/<lib>.py`` module defines ``OBJECT_TYPES``: a dict from
type name to ``{"properties": {...}, "required": [...], "build": fn}``, where
``fn(obj, where, scene_dir) -> (vertices (n,3), faces (m,3), normals (n,3) or None)``
returns a triangle mesh in object space. The core applies transform and material.
"""
import importlib

PLUGIN_MODULES = (
    "raytrace.scene.objects.curves",
    "raytrace.scene.objects.skinning",
    "raytrace.scene.objects.particles",
)


def plugin_object_types():
    """Merge ``OBJECT_TYPES`` of every plug-in module that is present."""
    types = {}
    for name in PLUGIN_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:      # the plug-in is not there: nothing to add
                continue
            raise
        types.update(module.OBJECT_TYPES)
    return types
