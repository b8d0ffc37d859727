"""Scenes with a latitude-longitude sky and with a spot light, for the Mitsuba 3
cross-check (``tests/mitsuba_path_scenes.py`` lists them among its reference scenes), and
the procedural sky they use.

The sky is made here (small and procedural, no asset is shipped): a 64 x 32 lat-long map
with a blue gradient above the horizon, a brown ground below, a ridge of coloured hills
around the horizon whose height and colour change from column to column (so that a map
turned by one column looks different) and a 2 x 2 texel sun. It is written as a Radiance
``.hdr`` file (RGBE, run-length encoded) into a temporary folder by
:func:`generated_dir`, which both renderers then read: the same file.
"""
import functools
import math
import pathlib
import tempfile

import numpy as np

TEST_SIZE = 64                  # pixels, square: mitsuba_path_scenes.TEST_SIZE

SKY_FILE = "procedural_sky_64x32.hdr"
SKY_SHIFTED_FILE = "procedural_sky_64x32_turned_one_column.hdr"
SKY_SIZE = (32, 64)                      # rows, columns
SUN_TEXEL = (9, 52)                      # row (theta = pi 9 / 31: 38 degrees above the horizon), column
SUN_RADIANCE = (260.0, 230.0, 190.0)


def sky_image(shift=0):
    """The procedural sky (H, W, 3) float32 linear radiance; ``shift`` columns turned
    (``np.roll`` along the columns: the sky rotated by ``shift`` texels, 5.6 degrees each)."""
    h, w = SKY_SIZE
    rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    elevation = 90.0 - 180.0 * rows / (h - 1)                      # degrees, row r at v = r / (H - 1)
    t = np.clip(elevation / 90.0, 0.0, 1.0)[..., None]
    sky = (1 - t) * np.array([0.85, 0.88, 0.95]) + t * np.array([0.18, 0.32, 0.75])
    ground = np.array([0.22, 0.17, 0.12]) * (1.0 + 0.15 * np.cos(cols * 0.7))[..., None]
    img = np.where((elevation >= 0)[..., None], sky, ground)
    # hills: a height (in rows above the horizon) and a colour per column
    rng = np.random.default_rng(37)
    height = np.round(1 + 3 * rng.random(w)).astype(int)
    colours = np.array([[0.15, 0.45, 0.12], [0.55, 0.25, 0.1], [0.35, 0.35, 0.4], [0.6, 0.55, 0.15]])
    colour = colours[rng.integers(0, len(colours), w)]
    horizon = (h - 1) // 2 + 1                                    # first row below the horizon
    for c in range(w):
        img[horizon - height[c]:horizon, c] = colour[c]
    r, c = SUN_TEXEL
    img[r:r + 2, c:c + 2] = SUN_RADIANCE
    return np.ascontiguousarray(np.roll(img, shift, axis=1), np.float32)


def _sky_hdr(shift):
    from raytrace.envmap import hdr_bytes
    return hdr_bytes(sky_image(shift))


GENERATED = {SKY_FILE: lambda: _sky_hdr(0), SKY_SHIFTED_FILE: lambda: _sky_hdr(1)}


@functools.lru_cache(maxsize=None)
def generated_dir():
    """A temporary folder holding every file of GENERATED (written once per process)."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="raytrace-light-scenes-"))
    for name, make in GENERATED.items():
        (folder / name).write_bytes(make())
    return folder


def sky_scene(size=TEST_SIZE, envmap=SKY_FILE):
    """A diffuse floor and two diffuse spheres under the procedural sky (seen around the
    horizon behind them), path traced. (No mirror: the sun's caustics off one would be
    found by BSDF sampling only, fireflies that cost the test its resolution.)"""
    return {
        "camera": {"center": [0.0, 1.2, 4.0], "look_at": [0.0, 0.45, 0.0], "fov": 45},
        "image": {"width": size, "height": size, "spp": 64, "filter": "box"},
        "integrator": {"type": "path", "max_depth": 3, "rr_depth": 5},
        "background": {"envmap": envmap, "scale": 0.4},
        "materials": {"floor": {"type": "diffuse", "albedo": [0.5, 0.5, 0.5]},
                      "grey": {"type": "diffuse", "albedo": [0.7, 0.7, 0.7]},
                      "blue": {"type": "diffuse", "albedo": [0.25, 0.4, 0.75]}},
        "objects": [
            {"type": "rectangle", "material": "floor", "transform": [{"rotate_x": -90}, {"scale": 3}]},
            {"type": "sphere", "center": [-0.7, 0.5, 0.0], "radius": 0.5, "material": "grey"},
            {"type": "sphere", "center": [0.65, 0.45, 0.4], "radius": 0.45, "material": "blue"},
        ],
    }


def spot_scene(size=TEST_SIZE, cone=None):
    """A floor, a back wall, a box and a sphere lit by one spot light from above the
    camera (Mitsuba's cone: cutoff 30 degrees, beam width 15, a wide falloff zone in
    view), path traced, one indirect bounce. ``cone`` replaces the cone's keys."""
    light = {"type": "spot", "position": [0.3, 2.6, 2.2], "direction": [-0.25, -2.6, -2.5],
             "color": [3.0, 2.7, 2.2], "attenuation": 0.6}
    light.update(cone if cone is not None else {"cutoff_angle": 30.0, "beam_width": 15.0})
    return {
        "camera": {"center": [0.0, 1.3, 4.5], "look_at": [0.0, 0.5, 0.0], "fov": 50},
        "image": {"width": size, "height": size, "spp": 64, "filter": "box"},
        "integrator": {"type": "path", "max_depth": 3, "rr_depth": 5},
        "materials": {"floor": {"type": "diffuse", "albedo": [0.6, 0.6, 0.6]},
                      "wall": {"type": "diffuse", "albedo": [0.5, 0.55, 0.6]},
                      "red": {"type": "diffuse", "albedo": [0.7, 0.2, 0.15]}},
        "lights": [light],
        "objects": [
            {"type": "rectangle", "material": "floor", "transform": [{"rotate_x": -90}, {"scale": 3}]},
            {"type": "rectangle", "material": "wall",
             "transform": [{"translate": [0, 1.5, -1.5]}, {"scale": [3, 1.5, 1]}]},
            {"type": "cube", "material": "red",
             "transform": [{"translate": [-0.6, 0.35, -0.2]}, {"rotate_y": 25}, {"scale": 0.35}]},
            {"type": "sphere", "center": [0.6, 0.4, 0.3], "radius": 0.4, "material": "floor"},
        ],
    }


def wrong_falloff_spot_scene(size=TEST_SIZE):
    """:func:`spot_scene` with the same angles read as glTF's cone (inner 15, outer 30
    degrees): the spec's smooth falloff instead of Mitsuba's linear one."""
    return spot_scene(size, cone={"inner_cone_angle": 15.0, "outer_cone_angle": 30.0})


def narrow_spot_scene(size=TEST_SIZE):
    """:func:`spot_scene` with a cutoff one degree narrower (29 degrees)."""
    return spot_scene(size, cone={"cutoff_angle": 29.0, "beam_width": 15.0})
