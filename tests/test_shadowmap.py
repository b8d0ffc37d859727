"""Shadow maps (the course's shadow-mapping assignment) against shadow rays."""
import copy

import numpy as np
import pytest

import raytrace
from raytrace.renderer import whitted_lights

BASE = {"camera": {"center": [0, 3, 6], "look_at": [0, 0.5, 0], "fov": 40},
        "background": {"color": [0.1, 0.1, 0.12], "ambient": [0.1, 0.1, 0.1]},
        "materials": {"white": {"diffuse": [0.8, 0.8, 0.8]}, "red": {"diffuse": [0.9, 0.2, 0.1]}},
        "objects": [{"type": "plane", "normal": [0, 1, 0], "material": "white"},
                    {"type": "sphere", "center": [0, 0.7, 0], "radius": 0.7, "material": "red"},
                    {"type": "cube", "transform": [{"translate": [-1.6, 0.4, 0.5]}, {"rotate_y": 30},
                                                   {"scale": 0.4}], "material": "white"}]}
LIGHTS = {"directional": {"type": "directional", "direction": [-0.4, -1, -0.3], "color": [0.9, 0.9, 0.9]},
          "point": {"type": "point", "position": [2, 3, 2], "color": [4, 4, 4], "attenuation": 1}}
SIZE = dict(width=120, height=90, spp=1)


def scene(light, res=None, bias=0.01, pcf=0):
    s = copy.deepcopy(BASE)
    s["lights"] = [dict(LIGHTS[light])]
    if res:
        s["lights"][0].update(shadows="map", shadow_map={"resolution": res, "bias": bias, "pcf": pcf})
    return raytrace.load_scene(s)


def off(light, **kw):
    """Fraction of pixels where the shadow-mapped image differs from the ray-traced one."""
    ref = np.asarray(raytrace.render(scene(light), **SIZE))
    img = np.asarray(raytrace.render(scene(light, **kw), **SIZE))
    return (np.abs(img - ref).max(axis=2) > 0.02).mean()


@pytest.mark.parametrize("light", ["directional", "point"])
def test_shadow_map_converges_to_shadow_rays(light):
    fractions = [off(light, res=r, bias=b) for r, b in ((64, 0.05), (256, 0.02), (2048, 0.005))]
    assert fractions[0] > fractions[1] > fractions[2]
    assert fractions[2] < 0.003 and fractions[0] > 0.005


@pytest.mark.parametrize("light", ["directional", "point"])
def test_no_bias_gives_acne_and_a_large_one_peter_panning(light):
    assert off(light, res=1024, bias=0.0) > 0.2                    # lit surfaces shadow themselves
    # the sphere's contact shadow: dark under shadow rays, lit under a large bias
    ref = np.asarray(raytrace.render(scene(light), **SIZE)).mean(axis=2)
    far = np.asarray(raytrace.render(scene(light, res=1024, bias=0.6), **SIZE)).mean(axis=2)
    lifted = (ref < 0.2) & (far > ref + 0.1)
    assert lifted.sum() > 10


def test_depths_are_the_distances_seen_from_the_light():
    s = scene("directional", res=64)
    lights = whitted_lights(s)
    d = lights.depths[:64 * 64].reshape(64, 64)
    frame = lights.shadow_frame[0]
    direction = lights.pos_dir[0]
    # the texel at the map's centre looks along the light's direction from the plane's
    # origin: it meets the sphere (or the floor) at a distance found by hand
    o = frame[0]
    c, r = np.array([0.0, 0.7, 0.0]), 0.7
    b = direction @ (o - c)
    t_sphere = -b - np.sqrt(b * b - ((o - c) @ (o - c) - r * r))
    assert abs(d[31:33, 31:33].min() - t_sphere) < 0.05            # within a texel's slope
    # a corner texel sees the floor y = 0: distance -(o_y + a u_y + b v_y) / d_y
    ext = frame[3, 0]
    a_, b_ = (0.5 / 64 * 2 - 1) * ext, (1 - 0.5 / 64 * 2) * ext
    start = o + a_ * frame[1] + b_ * frame[2]
    assert abs(d[0, 0] - (-start[1] / direction[1])) < 1e-9


def test_pcf_softens_the_edges():
    hard = np.asarray(raytrace.render(scene("point", res=256, bias=0.02), **SIZE)).mean(axis=2)
    soft = np.asarray(raytrace.render(scene("point", res=256, bias=0.02, pcf=2), **SIZE)).mean(axis=2)
    ref = np.asarray(raytrace.render(scene("point"), **SIZE)).mean(axis=2)
    lit, dark = ref.max(), np.percentile(ref, 5)
    between = lambda img: ((img > dark + 0.1 * (lit - dark)) & (img < lit - 0.3 * (lit - dark))).sum()  # noqa
    assert between(soft) > between(hard)


def test_the_path_tracer_keeps_its_shadow_rays():
    a = raytrace.render(scene("point", res=32, bias=0.0), integrator="path", **SIZE)
    b = raytrace.render(scene("point"), integrator="path", **SIZE)
    assert np.array_equal(a, b)
