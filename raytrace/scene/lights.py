"""Lights -> the Whitted integrator's :class:`~raytrace.layout.PunctualLights`.

``pos_dir`` holds the point light's position or the directional light's unit direction of
travel. Point lights fall off as ``color / (attenuation * d^2)``; ``attenuation`` 0 stores
"no falloff" (the default when the key is absent).
"""
import numpy as np

from ..errors import SceneError
from ..layout import LIGHT_DIRECTIONAL, LIGHT_POINT, PunctualLights


def punctual_lights(lights):
    """The scene's ``lights`` list -> :class:`~raytrace.layout.PunctualLights`."""
    n = len(lights)
    kind = np.zeros(n, np.int64)
    pos_dir = np.zeros((n, 3))
    color = np.zeros((n, 3))
    atten = np.zeros(n)
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
    return PunctualLights(kind, pos_dir, color, atten)
