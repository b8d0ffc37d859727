"""raytrace: a CPU ray tracer with Numba kernels, driven by JSON scene files.

    import raytrace
    scene = raytrace.load_scene("scenes/showcase.json")
    image = raytrace.render(scene, spp=16)          # (H, W, 3) float32, linear radiance
    raytrace.save_image("out.png", image)           # sRGB-encoded 8-bit PNG
    image = raytrace.render(scene, spp=16, aovs=["albedo", "normal"], denoise=True)
    raytrace.save_exr("out.exr", image, scene)      # colour + AOV layers, linear float
    frame = raytrace.render_at(scene, 0.5)          # an animated scene at t = 0.5 s, motion blurred

Conventions: right-handed, y up, angles in degrees, linear RGB.

The names below are imported on first use (PEP 562), so ``import raytrace`` and the
command line's ``--help`` do not import Numba; kernels are declared, compiled and cached
by ``raytrace/jit/``, which changes nothing of Numba's for the rest of the program.
"""
from userio.lazy import lazy_package as _lazy_package

from .errors import SceneError

__all__ = ["SceneError", "Scene", "RenderScene", "RenderInterrupted", "animate", "load_scene", "render", "render_aovs",
           "render_at", "save_image", "scene_at", "save_exr", "read_exr", "denoise", "show"]
__version__ = "0.4.0"   # pyproject.toml's version (tests/test_structure.py checks they agree)

_lazy_package(__name__, {
    "save_image": (".image", "save_image"),
    "RenderInterrupted": (".renderer", "RenderInterrupted"),
    "render": (".renderer", "render"),
    "render_aovs": (".renderer", "render_aovs"),
    "Scene": (".scene.ready", "RenderScene"),
    "RenderScene": (".scene.ready", "RenderScene"),
    "load_scene": (".loading", "load_scene"),
    "animate": (".animation", "animate"),
    "render_at": (".animation", "render_at"),
    "scene_at": (".animation", "scene_at"),
    "read_exr": (".film.aov_files", "read_render"),
    "save_exr": (".film.aov_files", "write_exr"),
    "denoise": (".film.denoise", "denoise"),
    "show": (".notebook", "show"),
})
