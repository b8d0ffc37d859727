"""raytrace: a CPU ray tracer with Numba kernels, driven by JSON scene files.

    import raytrace
    scene = raytrace.load_scene("scenes/showcase.json")
    image = raytrace.render(scene, spp=16)          # (H, W, 3) float32, linear radiance
    raytrace.save_image("out.png", image)           # sRGB-encoded 8-bit PNG
    image = raytrace.render(scene, spp=16, aovs=["albedo", "normal"], denoise=True)
    raytrace.save_exr("out.exr", image, scene)      # colour + AOV layers, linear float
    frame = raytrace.render_at(scene, 0.5)          # an animated scene at t = 0.5 s, motion blurred

Conventions: right-handed, y up, angles in degrees, linear RGB.
"""
import pathlib as _pathlib

from . import _numba_cache, _numba_inline

_numba_cache.configure(_pathlib.Path(__file__).parent)   # before any kernel is compiled
_numba_inline.install()   # nested inline="always" helpers built once each, not per call site

from .errors import SceneError  # noqa: E402
from .image import save_image  # noqa: E402
from .renderer import RenderInterrupted, render, render_aovs  # noqa: E402
from .scene.load import Scene, load_scene  # noqa: E402
from .animation import animate, render_at, scene_at  # noqa: E402
from .film.aov_files import read_render as read_exr, write_exr as save_exr  # noqa: E402
from .film.denoise import denoise  # noqa: E402
from .notebook import show  # noqa: E402

__all__ = ["SceneError", "Scene", "RenderInterrupted", "animate", "load_scene", "render", "render_aovs",
           "render_at", "save_image", "scene_at", "save_exr", "read_exr", "denoise", "show"]
__version__ = "0.1.0"
