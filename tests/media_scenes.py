"""Scenes with participating media for the Mitsuba 3 cross-check
(``tests/mitsuba_path_scenes.py`` lists them among its reference scenes, translated to
Mitsuba's ``volpath``), and the procedural smoke puff one of them reads.

All are Mitsuba's Cornell box (``scenes/cornell_box.json``) at 64 x 64 with a box filter:

- ``fog_cornell``: the whole scene in homogeneous fog (the top-level ``medium``, the
  camera in it), isotropic;
- ``hg_cube``: the tall box replaced by a ``null`` cube holding a homogeneous scattering
  medium with Henyey-Greenstein g = 0.7;
- ``smoke_grid``: the boxes replaced by a smoke puff on a 32^3 grid (``.vol``, written
  here) in a ``null`` cube of the same box, g = 0.3;
- ``glass_liquid``: the tall box made of glass (ior 1.33), holding a coloured, absorbing liquid (one
  that scattered would be lit through the glass only, by BSDF sampling: caustics whose
  fireflies would cost the test its resolution);
- ``chromatic``: a ``null`` cube of a medium whose extinction and albedo differ strongly
  per channel (the spectral MIS of ``raytrace.kernels.media``).

Negative controls (what the test must tell apart): the fog 10 % denser, g's sign flipped,
the smoke's scale 10 % up, the liquid's coefficients 10 % up, the chromatic medium's
coefficients 10 % up.

The puff is written as a Mitsuba ``.vol`` file into a temporary folder by
:func:`generated_dir`, which both renderers then read: the same file.
"""
import copy
import functools
import pathlib
import tempfile

import numpy as np

PUFF_FILE = "smoke_puff_32.vol"


def smoke_puff(n=32):
    """A procedural smoke puff (n, n, n) float32 density in [0, about 1.3] (z, y, x):
    a squashed ball whose density falls off to zero at its rim, with ripples of the
    position so that it is neither symmetric nor smooth."""
    z, y, x = np.meshgrid(*(np.linspace(-1.0, 1.0, n),) * 3, indexing="ij")
    r = np.sqrt((1.15 * x) ** 2 + (1.4 * (y + 0.1)) ** 2 + (1.1 * z) ** 2)
    ripple = 1.0 + 0.45 * np.sin(6.0 * x + 1.0) * np.cos(5.0 * z - 2.0 * y) + 0.25 * np.sin(9.0 * y)
    return np.ascontiguousarray(np.clip(1.0 - r, 0.0, None) ** 1.2 * np.clip(ripple, 0.0, None) * 1.6,
                                np.float32)


def _puff_vol():
    from raytrace.scene.volgrid import write_vol
    path = pathlib.Path(tempfile.mkdtemp(prefix="raytrace-puff-")) / PUFF_FILE
    write_vol(path, smoke_puff())
    data = path.read_bytes()
    path.unlink()
    path.parent.rmdir()
    return data


GENERATED = {PUFF_FILE: _puff_vol}


@functools.lru_cache(maxsize=None)
def generated_dir():
    """A temporary folder holding every file of GENERATED (written once per process)."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="raytrace-media-scenes-"))
    for name, make in GENERATED.items():
        (folder / name).write_bytes(make())
    return folder


def grid_files(scene):
    """The GENERATED files a scene's media read."""
    out = []
    for med in scene.get("media", {}).values():
        for key in ("sigma_t", "albedo"):
            spec = med.get(key)
            if isinstance(spec, dict) and spec.get("file") in GENERATED:
                out.append(spec["file"])
    return out


def _cornell():
    from mitsuba_path_scenes import cornell_box_scene
    return cornell_box_scene()


def _without_boxes(scene):
    scene["objects"] = [o for o in scene["objects"] if o["type"] != "cube"]
    return scene


def fog_cornell(sigma_t=0.25):
    scene = _cornell()
    scene["media"] = {"fog": {"type": "homogeneous", "sigma_t": sigma_t, "albedo": 0.8}}
    scene["medium"] = "fog"
    return scene


def hg_cube(g=0.7):
    scene = _cornell()
    boxes = [o for o in scene["objects"] if o["type"] == "cube"]
    short, tall = boxes[0], copy.deepcopy(boxes[1])
    _without_boxes(scene)
    scene["materials"]["boundary"] = {"type": "null"}
    scene["media"] = {"haze": {"type": "homogeneous", "sigma_t": 4.0, "albedo": 0.97,
                               "phase": {"type": "hg", "g": g}}}
    tall.update(material="boundary", interior="haze")
    scene["objects"] += [short, tall]
    return scene


SMOKE_BOX = [{"translate": [0.0, -0.35, 0.0]}, {"scale": [0.7, 0.62, 0.7]}]


def smoke_grid(scale=7.0):
    scene = _without_boxes(_cornell())
    scene["materials"]["boundary"] = {"type": "null"}
    scene["media"] = {"smoke": {"type": "heterogeneous", "sigma_t": {"type": "grid", "file": PUFF_FILE},
                                "scale": scale, "albedo": 0.9, "phase": {"type": "hg", "g": 0.3},
                                "transform": SMOKE_BOX}}
    scene["objects"].append({"type": "cube", "name": "smoke box", "material": "boundary", "interior": "smoke",
                             "transform": SMOKE_BOX})
    return scene


def _big_light(scene, factor=2.5):
    """The light quad ``factor`` times wider and deeper, its radiance divided by factor^2
    (the same power): caustics through glass, which only BSDF sampling finds, then come
    from a larger light, with fewer fireflies."""
    light = next(o for o in scene["objects"] if o.get("name") == "light")
    light["transform"] = light["transform"] + [{"scale": [factor, factor, 1.0]}]
    light["emission"] = [c / factor ** 2 for c in light["emission"]]
    return scene


def glass_liquid(k=1.0):
    scene = _big_light(_cornell())
    boxes = [o for o in scene["objects"] if o["type"] == "cube"]
    _without_boxes(scene)
    scene["materials"]["glass"] = {"type": "dielectric", "ior": 1.33}
    scene["media"] = {"liquid": {"type": "homogeneous", "sigma_a": [k * 0.8, k * 1.8, k * 2.8],
                                 "sigma_s": [0.0, 0.0, 0.0]}}
    tall = copy.deepcopy(boxes[1])
    tall.update(name="glass of liquid", material="glass", interior="liquid")
    scene["objects"] += [boxes[0], tall]
    return scene


def chromatic(k=1.0):
    scene = _cornell()
    boxes = [o for o in scene["objects"] if o["type"] == "cube"]
    _without_boxes(scene)
    scene["materials"]["boundary"] = {"type": "null"}
    scene["media"] = {"tinted": {"type": "homogeneous", "sigma_a": [k * 0.1, k * 0.6, k * 2.0],
                                 "sigma_s": [k * 4.5, k * 1.8, k * 0.4]}}
    tall = copy.deepcopy(boxes[1])
    tall.update(material="boundary", interior="tinted")
    scene["objects"] += [boxes[0], tall]
    return scene


# name -> (scene builder, {name: builder of a deliberately wrong scene})
MEDIA_SCENES = {
    "fog_cornell": (fog_cornell, {"fog_cornell_denser": lambda: fog_cornell(0.25 * 1.1)}),
    "hg_cube": (hg_cube, {"hg_cube_g_flipped": lambda: hg_cube(-0.7)}),
    "smoke_grid": (smoke_grid, {"smoke_grid_scale_up": lambda: smoke_grid(7.0 * 1.1)}),
    "glass_liquid": (glass_liquid, {"glass_liquid_denser": lambda: glass_liquid(1.1)}),
    "chromatic": (chromatic, {"chromatic_denser": lambda: chromatic(1.1)}),
}
