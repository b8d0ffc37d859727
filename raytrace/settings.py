"""Render settings: their defaults and limits, merged from a scene and overrides.

Kept apart from the renderer, which imports the kernels: the command line checks its
options here before anything heavy is imported (``--spp -5`` answers at once), and the
renderer re-exports these names.
"""
import numpy as np
from userio.limits import check_memory, check_number

from .errors import SceneError
from .layout import FILTERS, SAMPLERS
from .scene.schema import SETTING_LIMITS

DEFAULTS = {"width": 400, "height": 400, "spp": 1, "filter": "box", "seed": 0,
            "integrator": "whitted", "bounces": 4, "shadows": True, "epsilon": 1e-4,
            "max_depth": -1, "rr_depth": 5, "sampler": "sobol"}
OVERRIDES = tuple(DEFAULTS)
INTEGRATORS = ("whitted", "path")
# memory per pixel: the path tracer's float64 accumulation buffer and float32 image, the
# AOV buffers and the encoded output
BYTES_PER_PIXEL = 24 + 12 + 32 + 8


def resolve_settings(scene, overrides):
    """Merge defaults, the scene's ``image``/``integrator`` sections and overrides
    -> dict of checked settings (names as in :data:`DEFAULTS`)."""
    unknown = set(overrides) - set(OVERRIDES)
    if unknown:
        raise TypeError(f"unknown render option(s): {', '.join(sorted(unknown))}")
    s = dict(DEFAULTS)
    for key in ("width", "height", "spp", "filter", "seed"):
        s[key] = scene.setting("image", key, s[key])
    s["integrator"] = scene.setting("integrator", "type", s["integrator"])
    for key in ("bounces", "shadows", "epsilon", "max_depth", "rr_depth"):
        s[key] = scene.setting("integrator", key, s[key])
    for key, value in overrides.items():
        if value is not None:
            s[key] = value
    for key in SETTING_LIMITS:
        s[key] = _integer_setting(key, s[key])
    check_memory(s["width"] * s["height"] * BYTES_PER_PIXEL,
                 f"a {s['width']} x {s['height']} image", "size", error=SceneError)
    if not isinstance(s["shadows"], (bool, np.bool_)):
        raise SceneError("shadows", f"must be true or false, got {s['shadows']!r}")
    if s["filter"] not in FILTERS:
        raise SceneError("filter", f"must be one of {', '.join(FILTERS)}, got {s['filter']!r}")
    if s["sampler"] not in SAMPLERS:
        raise SceneError("sampler", f"must be one of {', '.join(SAMPLERS)}, got {s['sampler']!r}")
    if s["integrator"] not in INTEGRATORS:
        raise SceneError("integrator", f"must be one of {', '.join(INTEGRATORS)}, got {s['integrator']!r}")
    s["epsilon"] = check_number(s["epsilon"], "epsilon", lo=0.0, lo_open=True, error=SceneError)
    return s


def _integer_setting(key, value):
    """``value`` as an int within SETTING_LIMITS[key], else SceneError."""
    lo, hi = SETTING_LIMITS[key]
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
        raise SceneError(key, f"must be an integer >= {lo}, got {value!r}")
    if value > hi:
        raise SceneError(key, f"must be an integer <= {hi}, got {value!r}")
    return int(value)


def check_overrides(overrides):
    """Check override values on their own (before a scene is loaded): the same limits as
    :func:`resolve_settings` applies to the merged settings."""
    given = {k: v for k, v in overrides.items() if v is not None}
    for key in SETTING_LIMITS:
        if key in given:
            _integer_setting(key, given[key])
    if "width" in given and "height" in given:
        check_memory(given["width"] * given["height"] * BYTES_PER_PIXEL,
                     f"a {given['width']} x {given['height']} image", "size", error=SceneError)
    if "epsilon" in given:
        check_number(given["epsilon"], "epsilon", lo=0.0, lo_open=True, error=SceneError)
