"""Render settings: their defaults and limits, merged from a scene and overrides.

Kept apart from the renderer, which imports the kernels: the command line checks its
options here before anything heavy is imported (``--spp -5`` answers at once), and the
renderer re-exports these names.
"""
import contextlib

import numpy as np
from userio.limits import check_memory, check_number

from .errors import SceneError
from .layout import FILTERS, SAMPLERS
from .scene.schema import SETTING_LIMITS

DEFAULTS = {"width": 400, "height": 400, "spp": 1, "filter": "box", "seed": 0,
            "integrator": "whitted", "bounces": 4, "shadows": True, "epsilon": 1e-4,
            "max_depth": -1, "rr_depth": 5, "sampler": "sobol",
            "noise_threshold": None, "min_spp": None, "max_spp": None, "time_budget": None}
OVERRIDES = tuple(DEFAULTS)
ADAPTIVE = ("noise_threshold", "min_spp", "max_spp")   # the path tracer's integrator block
INTEGRATORS = ("whitted", "path")
# memory per pixel: the path tracer's float64 accumulation buffer and float32 image, the
# AOV buffers and the encoded output
BYTES_PER_PIXEL = 24 + 12 + 32 + 8


def integrator_name(asked, override=None):
    """Which integrator renders a scene: ``override`` (the ``integrator`` render option)
    when given, else ``asked`` (the scene's ``integrator.type``), else the default
    (``"whitted"``). The one rule, applied to a loaded scene (:func:`resolve_settings`) and
    to warm-up's peek at a scene file (:func:`raytrace.jit.warmup.integrator_of`); the
    kernels each name runs are :mod:`raytrace.integrators`' table."""
    if override is not None:
        return override
    return asked if asked is not None else DEFAULTS["integrator"]


def resolve_settings(scene, overrides):
    """Merge defaults, the scene's ``image``/``integrator`` sections and overrides
    -> dict of checked settings (names as in :data:`DEFAULTS`)."""
    unknown = set(overrides) - set(OVERRIDES)
    if unknown:
        raise TypeError(f"unknown render option(s): {', '.join(sorted(unknown))}")
    s = dict(DEFAULTS)
    for key in ("width", "height", "spp", "filter", "seed"):
        s[key] = scene.setting("image", key, s[key])
    s["integrator"] = integrator_name(scene.setting("integrator", "type", None))
    for key in ("bounces", "shadows", "epsilon", "max_depth", "rr_depth") + ADAPTIVE:
        s[key] = scene.setting("integrator", key, s[key])
    for key, value in overrides.items():
        if value is not None:
            s[key] = value
    for key in SETTING_LIMITS:
        if s[key] is not None or key not in ADAPTIVE:
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
    _check_sampling_budget(s)
    return s


def _check_sampling_budget(s):
    """Adaptive sampling and the time budget (:mod:`raytrace.film.adaptive`): checked,
    and ``s["max_spp"]`` set to the most passes the render may make (None: ``spp``)."""
    if s["noise_threshold"] is not None:
        s["noise_threshold"] = check_number(s["noise_threshold"], "noise_threshold", lo=0.0, error=SceneError)
    if s["time_budget"] is not None:
        s["time_budget"] = check_number(s["time_budget"], "time", lo=0.0, lo_open=True, error=SceneError)
    adaptive, timed = s["noise_threshold"] is not None, s["time_budget"] is not None
    if (adaptive or timed) and s["integrator"] != "path":
        raise SceneError("noise_threshold" if adaptive else "time",
                         "adaptive sampling and time budgets need the path tracer (integrator 'path')")
    if s["min_spp"] is not None and not adaptive:
        raise SceneError("min_spp", "needs noise_threshold (adaptive sampling)")
    if s["max_spp"] is not None and not (adaptive or timed):
        raise SceneError("max_spp", "needs noise_threshold (adaptive sampling) or a time budget")
    if s["max_spp"] is None and (adaptive or timed):
        s["max_spp"] = SETTING_LIMITS["spp"][1] if timed else s["spp"]
    if adaptive:
        from .film.adaptive import DEFAULT_MIN_SPP
        if s["min_spp"] is None:
            s["min_spp"] = min(DEFAULT_MIN_SPP, s["max_spp"])
        if s["min_spp"] > s["max_spp"]:
            raise SceneError("min_spp", f"must be <= max_spp ({s['max_spp']}), got {s['min_spp']}")


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
    if "noise_threshold" in given:
        check_number(given["noise_threshold"], "noise_threshold", lo=0.0, error=SceneError)
    if "time_budget" in given:
        check_number(given["time_budget"], "time", lo=0.0, lo_open=True, error=SceneError)


def check_highlight(pattern):
    """The ``--highlight`` name (``highlight`` view) on its own: a non-empty string
    (whether it names anything is checked against the loaded scene)."""
    if not isinstance(pattern, str) or not pattern.strip():
        raise SceneError("--highlight", f"needs an object or material name, got {pattern!r}")


@contextlib.contextmanager
def option_errors():
    """Setting errors from overrides, reported under the command-line option's name
    (``width`` -> ``--size``, ``max_spp`` -> ``--max-spp``)."""
    try:
        yield
    except SceneError as exc:
        if exc.file is not None:
            raise
        key = exc.where or ""
        option = "--size" if key in ("width", "height") else key if key.startswith("-") else \
            f"--{key.replace('_', '-')}"
        message = f"{key} {exc.message}" if key in ("width", "height") else exc.message
        raise SceneError(option, message) from None
