"""Lights -> the Whitted integrator's :class:`~raytrace.layout.PunctualLights`, and the
cone of a spot light (both integrators).

``pos_dir`` holds the point light's position or the directional light's unit direction of
travel. Point lights fall off as ``color / (attenuation * d^2)``; ``attenuation`` 0 stores
"no falloff" (the default when the key is absent).

A spot light is a point light with a cone (``axis``, ``cone``: see
:data:`raytrace.layout.CONE_WIDTH`): ``direction`` is its axis, and either Mitsuba's
``cutoff_angle`` / ``beam_width`` (degrees; falloff linear in the angle between them;
the default, 20 and 15 degrees) or glTF's ``inner_cone_angle`` / ``outer_cone_angle``
(degrees; the KHR_lights_punctual spec's smooth falloff) shape it.

A light with ``"shadows": "map"`` gets a shadow map (``raytrace.kernels.shadowmap``):
``shadow_map`` holds ``resolution`` (default 1024; per cube face for a point or spot
light), ``bias`` (world units, default 0.01) and ``pcf`` (filter radius in texels,
default 0). A directional light's map covers the bounding sphere of the scene's finite
shapes; the depths are filled by the renderer (they need the BVH).
"""
import math

import numpy as np

from ..errors import SceneError
from ..layout import (CONE_LINEAR, CONE_NONE, CONE_SMOOTH, CONE_WIDTH, LIGHT_DIRECTIONAL,
                      LIGHT_POINT, PunctualLights)

SHADOW_DEFAULTS = {"resolution": 1024, "bias": 0.01, "pcf": 0}
SPOT_DEFAULT_CUTOFF = 20.0              # degrees, Mitsuba's; beam_width defaults to 3/4 of the cutoff
GLTF_MIN_COS_DELTA = 0.001              # the spec's max(0.001, cos(inner) - cos(outer))


def spot_cone(light, where="lights"):
    """-> (unit axis (3,), cone row (CONE_WIDTH,)) of a light dict; a point or directional
    light has no cone (zeros, CONE_NONE). Angles are checked here too (the schema checks
    each alone): beam_width <= cutoff_angle, inner_cone_angle < outer_cone_angle."""
    cone = np.zeros(CONE_WIDTH)
    if light["type"] != "spot":
        cone[0] = CONE_NONE
        return np.zeros(3), cone
    d = np.asarray(light["direction"], np.float64)
    if np.linalg.norm(d) == 0:
        raise SceneError(f"{where}.direction", "must not be a zero vector")
    axis = d / np.linalg.norm(d)
    if "inner_cone_angle" in light or "outer_cone_angle" in light:
        inner = math.radians(light.get("inner_cone_angle", 0.0))
        outer = math.radians(light.get("outer_cone_angle", 45.0))
        if not inner < outer:
            raise SceneError(f"{where}.inner_cone_angle", f"must be less than outer_cone_angle "
                             f"({math.degrees(outer):g}), got {math.degrees(inner):g}")
        ci, co = math.cos(inner), math.cos(outer)
        p = 1.0 / max(GLTF_MIN_COS_DELTA, ci - co)
        cone[:] = CONE_SMOOTH, co, ci, p, -co * p
        return axis, cone
    cutoff_deg = light.get("cutoff_angle", SPOT_DEFAULT_CUTOFF)
    beam_deg = light.get("beam_width", 0.75 * cutoff_deg)
    if beam_deg > cutoff_deg:
        raise SceneError(f"{where}.beam_width", f"must be at most cutoff_angle ({cutoff_deg:g}), "
                         f"got {beam_deg:g}")
    cutoff, beam = math.radians(cutoff_deg), math.radians(beam_deg)
    inv_width = 1.0 / (cutoff - beam) if cutoff > beam else math.inf
    cone[:] = CONE_LINEAR, math.cos(cutoff), math.cos(beam), cutoff, inv_width
    return axis, cone


def cone_falloff(cone, cos_theta):
    """NumPy twin of ``kernels.emitters.cone_falloff``: the falloff of one cone row at the
    cosine(s) ``cos_theta`` between the axis and the direction from the light."""
    c = np.asarray(cos_theta, np.float64)
    mode, co, ci, p, q = cone
    if mode == CONE_NONE:
        return np.ones_like(c)
    if mode == CONE_LINEAR:
        with np.errstate(invalid="ignore"):
            ramp = (p - np.arccos(np.clip(c, -1, 1))) * q
        inside = np.where(c >= ci, 1.0, ramp)
    else:
        inside = np.clip(c * p + q, 0.0, 1.0) ** 2
    return np.where(c > co, inside, 0.0)


def punctual_lights(lights, bounds=(np.zeros(3), 1.0)):
    """The scene's ``lights`` list -> :class:`~raytrace.layout.PunctualLights` (shadow-map
    depths zero: see ``raytrace.renderer``). ``bounds``: (centre, radius) of the
    scene's finite shapes, for directional maps."""
    n = len(lights)
    kind = np.zeros(n, np.int64)
    pos_dir = np.zeros((n, 3))
    color = np.zeros((n, 3))
    atten = np.zeros(n)
    axis, cone = np.zeros((n, 3)), np.zeros((n, CONE_WIDTH))
    smap, res, bias, pcf = np.full(n, -1, np.int64), np.zeros(n, np.int64), np.zeros(n), np.zeros(n, np.int64)
    frame = np.zeros((n, 4, 3))
    size = 0
    for i, light in enumerate(lights):
        color[i] = light.get("color", [1.0, 1.0, 1.0])
        if light["type"] in ("point", "spot"):
            kind[i] = LIGHT_POINT
            pos_dir[i] = light["position"]
            atten[i] = light.get("attenuation", 0.0)
            axis[i], cone[i] = spot_cone(light, f"lights[{i}]")
        else:
            kind[i] = LIGHT_DIRECTIONAL
            d = np.asarray(light["direction"], np.float64)
            if np.linalg.norm(d) == 0:
                raise SceneError(f"lights[{i}].direction", "must not be a zero vector")
            pos_dir[i] = d / np.linalg.norm(d)
        if light.get("shadows", "rays") == "map":
            opts = dict(SHADOW_DEFAULTS, **light.get("shadow_map", {}))
            smap[i], res[i], bias[i], pcf[i] = size, opts["resolution"], opts["bias"], opts["pcf"]
            size += res[i] * res[i] * (6 if kind[i] == LIGHT_POINT else 1)
            if kind[i] == LIGHT_DIRECTIONAL:
                frame[i] = directional_frame(pos_dir[i], *bounds)
    return PunctualLights(kind, pos_dir, color, atten, smap, res, bias, pcf, frame, np.zeros(max(size, 1)),
                          axis, cone)


def directional_frame(d, centre, radius):
    """(origin, u, v, (extent, 0, 0)) of an orthographic map along unit ``d`` covering
    the sphere (centre, radius): the plane sits 2 radii before the centre."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(d[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(d, helper)
    u /= np.linalg.norm(u)
    v = np.cross(u, d)
    extent = 1.01 * radius
    return np.array([centre - 2.0 * radius * d, u, v, [extent, 0.0, 0.0]])
