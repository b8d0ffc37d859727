"""Tiny scenes for shading tests: one pixel, an orthographic camera down -z."""


def one_pixel_scene(objects, materials, lights=(), background=None, bounces=4, shadows=True,
                    center=(0, 0, 5), direction=(0, 0, -1)):
    return {
        "camera": {"type": "orthographic", "center": list(center), "direction": list(direction),
                   "up": [0, 1, 0], "height": 0.01},
        "image": {"width": 1, "height": 1, "spp": 1},
        "integrator": {"bounces": bounces, "shadows": shadows},
        "background": background or {},
        "materials": materials,
        "lights": list(lights),
        "objects": list(objects),
    }
