"""Scene plug-in: ``cloth`` objects, simulated by :mod:`particles` at scene-load time.

    {"type": "cloth", "grid": [24, 24], "size": [2, 2], "layout": "horizontal",
     "center": [0, 1.6, 0], "pin": "none",
     "sphere": {"center": [0, 0.8, 0], "radius": 0.6},
     "integrator": "implicit_euler", "dt": 0.01, "T": 2.5}

A cloth of ``grid`` particles over ``size`` metres starts flat (``layout``: ``vertical``
in the xy plane, ``horizontal`` in the xz plane; ``center``), with ``pin`` particles
fixed (``none``, ``top_corners``, ``corners``, ``top_row`` or ``[[i, j], ...]``). It is
simulated with ``integrator`` at step ``dt`` to time ``T`` under ``gravity``, ``drag``,
optional ``wind`` and an optional ``sphere`` collider (show it with a ``sphere`` object of
the same centre and radius and the same transform). The result is a triangle mesh in
object space with area-weighted smooth normals (``"smooth": false`` for flat shading).
Keys not given take :data:`particles.cloth.DEFAULTS`; see docs/particles.md.

In an animated scene (:mod:`raytrace.animation`) the cloth is simulated once over the
whole time range and handed to this plug-in (:func:`provide_states`), which then samples
that simulation at the object's ``T`` instead of simulating again.
"""
import json
import math

import numpy as np

from raytrace.errors import SceneError

import particles
from particles.cloth import DEFAULTS, PIN_MODES
from particles.errors import ParticlesError, UnstableSimulationError

_num = {"type": "number"}
_pos = {"type": "number", "exclusiveMinimum": 0}
_nonneg = {"type": "number", "minimum": 0}
_vec3 = {"type": "array", "minItems": 3, "maxItems": 3, "items": _num}
_pair = {"type": "array", "minItems": 2, "maxItems": 2}

DEFAULT_DT = 0.01
DEFAULT_T = 2.0
DEFAULT_INTEGRATOR = "implicit_euler"
MAX_STEPS = 100_000

PROPERTIES = {
    "grid": dict(_pair, items={"type": "integer", "minimum": 2, "maximum": 256}),
    "size": dict(_pair, items=_pos),
    "layout": {"enum": ["vertical", "horizontal"]},
    "center": _vec3,
    "pin": {"oneOf": [
        {"enum": list(PIN_MODES)},
        {"type": "array", "items": dict(_pair, items={"type": "integer", "minimum": 0})},
    ]},
    "mass": _pos,
    "stiffness": _nonneg,
    "shear_stiffness": _nonneg,
    "flex_stiffness": _nonneg,
    "damping": _nonneg,
    "drag": _nonneg,
    "gravity": _vec3,
    "wind": _vec3,
    "wind_coeff": _nonneg,
    "sphere": {
        "type": "object", "additionalProperties": False, "required": ["radius"],
        "properties": {"center": _vec3, "radius": _pos,
                       "friction": {"type": "number", "minimum": 0, "maximum": 1},
                       "margin": _nonneg},
    },
    "integrator": {"enum": list(particles.INTEGRATORS) + list(particles.ALIASES)},
    "dt": _pos,
    "T": _nonneg,
    "smooth": {"type": "boolean"},
}

_cache = {}
_FACTORY_KEYS = ("grid", "size", "layout", "center", "pin", "mass", "stiffness",
                 "shear_stiffness", "flex_stiffness", "damping", "drag", "gravity", "wind",
                 "wind_coeff")


def cloth_network(obj):
    """The :class:`particles.SpringNetwork` (with its collider) a cloth object describes."""
    kwargs = {k: obj[k] for k in _FACTORY_KEYS if k in obj}
    if "sphere" in obj:
        s = obj["sphere"]
        kwargs["sphere"] = (s.get("center", [0.0, 0.0, 0.0]), s["radius"])
        kwargs["friction"] = s.get("friction", 0.5)
        kwargs["sphere_margin"] = s.get("margin", 0.01 * s["radius"])
    return particles.cloth(**kwargs)


def simulation_key(obj):
    """The keys that decide a cloth object's motion (all but ``T``, ``smooth`` and the
    object's type, material, transform and name) as canonical JSON text."""
    return json.dumps({k: v for k, v in obj.items()
                       if k not in ("type", "material", "transform", "name", "T", "smooth")},
                      sort_keys=True)


# Simulations given by provide_states (raytrace.animation): key -> positions at every step
_provided = {}
MAX_PROVIDED = 8


def provide_states(obj, positions):
    """Hand the plug-in the particle positions ``(k + 1, n, 3)`` of the cloth ``obj``
    after 0, 1, ..., k steps of its ``dt`` (one simulation of a whole time range, made by
    :mod:`raytrace.animation.cloth`). From then on a cloth object with the same
    :func:`simulation_key` and a ``T`` within ``k dt`` is sampled from them instead of
    simulated: exactly the state after ``T / dt`` steps when that is a whole number (to
    1e-9), else the linear blend of the two states around ``T``."""
    key = simulation_key(obj)
    _provided.pop(key, None)
    _provided[key] = np.asarray(positions, np.float64)
    while len(_provided) > MAX_PROVIDED:
        _provided.pop(next(iter(_provided)))


def _provided_mesh(obj):
    """``(vertices, faces, normals)`` at ``T`` from provided states, or None."""
    positions = _provided.get(simulation_key(obj))
    if positions is None:
        return None
    u = obj.get("T", DEFAULT_T) / obj.get("dt", DEFAULT_DT)
    k = round(u)
    if abs(u - k) <= 1e-9 * max(1.0, abs(u)):
        if not 0 <= k < len(positions):
            return None
        q = positions[k].copy()
    else:
        k = math.floor(u)
        if not 0 <= k < len(positions) - 1:
            return None
        q = positions[k] + (u - k) * (positions[k + 1] - positions[k])
    nx, ny = obj.get("grid", DEFAULTS["grid"])
    faces = particles.grid_triangles(nx, ny)
    return q, faces, particles.vertex_normals(q, faces)


def simulate_cloth(obj):
    """Simulate the cloth an object describes; returns ``(vertices, faces, normals)``."""
    net = cloth_network(obj)
    dt = obj.get("dt", DEFAULT_DT)
    steps = int(round(obj.get("T", DEFAULT_T) / dt))
    if steps > MAX_STEPS:
        raise ParticlesError("T", f"T / dt = {steps} steps is more than {MAX_STEPS}; "
                             "raise dt (implicit_euler is stable at large dt) or lower T")
    _, states = particles.simulate(net, obj.get("integrator", DEFAULT_INTEGRATOR), dt, steps,
                                   every=max(steps, 1))
    return particles.cloth_mesh(net, states[-1])


def build_cloth(obj, where, scene_dir):
    """Plug-in build function: ``(vertices (n,3), faces (m,3), normals (n,3) or None)``."""
    provided = _provided_mesh(obj)
    if provided is not None:
        vertices, faces, normals = provided
        return vertices, faces, (normals if obj.get("smooth", True) else None)
    key = json.dumps({k: v for k, v in obj.items()
                      if k not in ("type", "material", "transform", "name")}, sort_keys=True)
    if key not in _cache:
        try:
            _cache[key] = simulate_cloth(obj)
        except UnstableSimulationError as exc:
            raise SceneError(f"{where}.dt", exc.message) from None
        except ParticlesError as exc:
            field, _, rest = exc.message.partition(":")
            field = field.split()[0].split("[")[0] if field.strip() else ""
            if field in PROPERTIES and rest:
                raise SceneError(f"{where}.{field}", rest.strip()) from None
            if exc.where in PROPERTIES:
                raise SceneError(f"{where}.{exc.where}", exc.message) from None
            raise SceneError(where, str(exc)) from None
        if len(_cache) > 8:
            _cache.pop(next(iter(_cache)))
    vertices, faces, normals = _cache[key]
    return vertices.copy(), faces.copy(), (normals.copy() if obj.get("smooth", True) else None)


OBJECT_TYPES = {
    "cloth": {"properties": PROPERTIES, "required": [], "build": build_cloth},
}
