"""Lights -> the Whitted integrator's :class:`~raytrace.layout.PunctualLights`.

``pos_dir`` holds the point light's position or the directional light's unit direction of
travel. Point lights fall off as ``color / (attenuation * d^2)``; ``attenuation`` 0 stores
"no falloff" (the default when the key is absent).

A light with ``"shadows": "map"`` gets a shadow map (``raytrace.kernels.shadowmap``):
``shadow_map`` holds ``resolution`` (default 1024; per cube face for a point light),
``bias`` (world units, default 0.01) and ``pcf`` (filter radius in texels, default 0).
A directional light's map covers the bounding sphere of the scene's finite shapes;
the depths are filled by the renderer (they need the BVH).
"""
import numpy as np

from ..errors import SceneError
from ..layout import LIGHT_DIRECTIONAL, LIGHT_POINT, PunctualLights

SHADOW_DEFAULTS = {"resolution": 1024, "bias": 0.01, "pcf": 0}


def punctual_lights(lights, bounds=(np.zeros(3), 1.0)):
    """The scene's ``lights`` list -> :class:`~raytrace.layout.PunctualLights` (shadow-map
    depths zero: see ``raytrace.renderer``). ``bounds``: (centre, radius) of the
    scene's finite shapes, for directional maps."""
    n = len(lights)
    kind = np.zeros(n, np.int64)
    pos_dir = np.zeros((n, 3))
    color = np.zeros((n, 3))
    atten = np.zeros(n)
    smap, res, bias, pcf = np.full(n, -1, np.int64), np.zeros(n, np.int64), np.zeros(n), np.zeros(n, np.int64)
    frame = np.zeros((n, 4, 3))
    size = 0
    for i, light in enumerate(lights):
        color[i] = light.get("color", [1.0, 1.0, 1.0])
        if light["type"] == "point":
            kind[i] = LIGHT_POINT
            pos_dir[i] = light["position"]
            atten[i] = light.get("attenuation", 0.0)
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
    return PunctualLights(kind, pos_dir, color, atten, smap, res, bias, pcf, frame, np.zeros(max(size, 1)))


def directional_frame(d, centre, radius):
    """(origin, u, v, (extent, 0, 0)) of an orthographic map along unit ``d`` covering
    the sphere (centre, radius): the plane sits 2 radii before the centre."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(d[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(d, helper)
    u /= np.linalg.norm(u)
    v = np.cross(u, d)
    extent = 1.01 * radius
    return np.array([centre - 2.0 * radius * d, u, v, [extent, 0.0, 0.0]])
