"""raytrace: a CPU ray tracer with Numba kernels, driven by JSON scene files.

    import raytrace
    scene = raytrace.load_scene("scenes/showcase.json")
    image = raytrace.render(scene, spp=16)          # (H, W, 3) float32, linear radiance
    raytrace.save_image("out.png", image)           # sRGB-encoded 8-bit PNG

Conventions: right-handed, y up, angles in degrees, linear RGB.
"""
from .errors import SceneError
from .image import save_image
from .renderer import render, render_aovs
from .scene.load import Scene, load_scene

__all__ = ["SceneError", "Scene", "load_scene", "render", "render_aovs", "save_image"]
__version__ = "0.1.0"
