"""Scene object types contributed by the standalone libraries (plug-ins).

``curves.py`` (Bézier patches, surfaces of revolution, sweeps), ``skinning.py`` (skinned
meshes and skeletons), ``particles.py`` (simulated cloth). Each defines ``OBJECT_TYPES``;
see :mod:`raytrace.scene.plugins`.
"""
