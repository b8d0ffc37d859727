"""Rendering a loaded scene: settings + overrides -> kernel calls -> float image.

The image is rendered in bands of rows so that a progress bar can follow and Ctrl-C stops
between bands. Results are (H, W, 3) float32 linear radiance, row 0 at the top.
"""
import math
import sys

import numpy as np

from .camera import camera_array
from .cubemap import load_cube_map
from .errors import SceneError
from .kernels import whitted as wk
from .kernels.sampling import FILTERS, gaussian_inverse_cdf_table
from .scene.lights import light_arrays

DEFAULTS = {"width": 400, "height": 400, "spp": 1, "filter": "box", "seed": 0,
            "bounces": 4, "shadows": True, "epsilon": 1e-4}
OVERRIDES = tuple(DEFAULTS)


def resolve_settings(scene, overrides):
    """Merge defaults, the scene's ``image``/``integrator`` sections and overrides."""
    unknown = set(overrides) - set(OVERRIDES)
    if unknown:
        raise TypeError(f"unknown render option(s): {', '.join(sorted(unknown))}")
    s = dict(DEFAULTS)
    for key in ("width", "height", "spp", "filter", "seed"):
        s[key] = scene.setting("image", key, s[key])
    for key in ("bounces", "shadows", "epsilon"):
        s[key] = scene.setting("integrator", key, s[key])
    for key, value in overrides.items():
        if value is not None:
            s[key] = value
    checks = {"width": 1, "height": 1, "spp": 1, "bounces": 0, "seed": 0}
    for key, lo in checks.items():
        if not isinstance(s[key], (int, np.integer)) or s[key] < lo:
            raise SceneError(key, f"must be an integer >= {lo}, got {s[key]!r}")
    if s["filter"] not in FILTERS:
        raise SceneError("filter", f"must be one of {', '.join(FILTERS)}, got {s['filter']!r}")
    return s


def _environment(scene):
    bg = np.asarray(scene.setting("background", "color", [0.0, 0.0, 0.0]), np.float64)
    ambient = np.asarray(scene.setting("background", "ambient", [0.0, 0.0, 0.0]), np.float64)
    cube_rel = scene.setting("background", "cube_map", None)
    if cube_rel is not None:
        if getattr(scene, "_cube", None) is None:
            try:
                scene._cube = load_cube_map(scene.base_dir / cube_rel)
            except SceneError as exc:
                raise exc.with_file(scene.name) from None
        cube = scene._cube
    else:
        cube = np.zeros((6, 1, 1, 3), np.float32)
    return bg, ambient, cube, cube_rel is not None


def render(scene, progress=False, **overrides):
    """Render ``scene`` (from :func:`raytrace.load_scene`) -> (H, W, 3) float32 linear.

    Overrides: ``width``, ``height``, ``spp``, ``filter``, ``seed``, ``bounces``,
    ``shadows``, ``epsilon``. ``progress=True`` shows a tqdm bar on stderr.
    """
    s = resolve_settings(scene, overrides)
    cam = camera_array(scene.data["camera"])
    lk, lpos, lcol, latt = light_arrays(scene.data.get("lights", []))
    bg, ambient, cube, has_cube = _environment(scene)
    params = np.zeros(wk.PARAMS_SIZE)
    params[wk.P_WIDTH], params[wk.P_HEIGHT] = s["width"], s["height"]
    params[wk.P_SPP], params[wk.P_FILTER] = s["spp"], FILTERS[s["filter"]]
    params[wk.P_BOUNCES], params[wk.P_SHADOWS] = s["bounces"], 1.0 if s["shadows"] else 0.0
    params[wk.P_EPS], params[wk.P_SEED], params[wk.P_HAS_CUBE] = s["epsilon"], s["seed"], float(has_cube)
    table = gaussian_inverse_cdf_table()
    h, w = s["height"], s["width"]
    image = np.zeros((h, w, 3), np.float32)
    # ~1/64 of the image per band, at least a few rows, so the bar moves smoothly
    band = max(4, math.ceil(h / 64))
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=h, unit="row", desc="render", file=sys.stderr, leave=False)
    try:
        for row0 in range(0, h, band):
            row1 = min(h, row0 + band)
            wk.render_rows(row0, row1, image[row0:row1], scene.accel, scene.geometry, cam,
                           lk, lpos, lcol, latt, bg, ambient, cube, params, table)
            if bar is not None:
                bar.update(row1 - row0)
    finally:
        if bar is not None:
            bar.close()
    return image


def render_aovs(scene, width=None, height=None):
    """Depth and normals through pixel centres -> (t (H, W) float64, inf on a miss,
    normals (H, W, 3) float64 world-space unit, zero on a miss)."""
    s = resolve_settings(scene, {"width": width, "height": height})
    cam = camera_array(scene.data["camera"])
    t = np.empty((s["height"], s["width"]))
    n = np.empty((s["height"], s["width"], 3))
    wk.render_aov(t, n, scene.accel, scene.geometry, cam)
    return t, n
