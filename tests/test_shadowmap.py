"""Shadow maps (the course's shadow-mapping assignment) against shadow rays."""
import copy

import numpy as np
import pytest

import raytrace

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
    fractions = [off(light, res=r, bias=b) for r, b in ((64, 0.08), (256, 0.03), (2048, 0.01))]
    assert fractions[0] > fractions[1] > fractions[2]
    assert fractions[2] < 0.001 and fractions[0] > 5 * fractions[2] and fractions[0] > 0.002


@pytest.mark.parametrize("light", ["directional", "point"])
def test_no_bias_gives_acne_and_a_large_one_peter_panning(light):
    assert off(light, res=1024, bias=0.0) > 0.05                   # lit surfaces shadow themselves
    assert off(light, res=1024, bias=0.01) < 0.005                  # a good bias does not
    # the sphere's contact shadow: dark under shadow rays, lit under a large bias
    ref = np.asarray(raytrace.render(scene(light), **SIZE)).mean(axis=2)
    far = np.asarray(raytrace.render(scene(light, res=1024, bias=1.0), **SIZE)).mean(axis=2)
    lifted = (ref < 0.2) & (far > ref + 0.1)
    assert lifted.sum() > 10


def test_depths_are_the_distances_seen_from_the_light():
    """Every texel of a directional map over a sphere on a floor stores the distance, along
    the light's direction from the map's plane, to the sphere or else the floor."""
    s = copy.deepcopy(BASE)
    s["objects"] = s["objects"][:2]
    s["lights"] = [dict(LIGHTS["directional"], shadows="map", shadow_map={"resolution": 48})]
    lights = raytrace.load_scene(s).whitted_lights
    res = 48
    depths = lights.depths[:res * res].reshape(res, res)
    o, u, v, (ext, _, _) = lights.shadow_frame[0]
    d = lights.pos_dir[0]
    centre, radius = np.array([0.0, 0.7, 0.0]), 0.7
    on_sphere = 0
    for row in range(res):
        for col in range(res):
            start = o + ((col + 0.5) / res * 2 - 1) * ext * u + (1 - (row + 0.5) / res * 2) * ext * v
            t = -start[1] / d[1]                                     # the floor y = 0
            b = d @ (start - centre)
            disc = b * b - ((start - centre) @ (start - centre) - radius ** 2)
            if disc >= 0:
                t, on_sphere = -b - np.sqrt(disc), on_sphere + 1
            assert abs(depths[row, col] - t) < 1e-9 * t, (row, col)
    assert on_sphere > 50


def test_pcf_softens_the_edges():
    """Visibility along a floor line across the sphere's shadow: 0 or 1 without filtering,
    intermediate values (a penumbra) with pcf, the same far from the edge."""
    from raytrace.kernels.shadowmap import shadow_map_visibility
    xs = np.linspace(-1.5, 1.5, 301)
    vis = {}
    for pcf in (0, 2):
        lights = scene("point", res=256, bias=0.02, pcf=pcf).whitted_lights
        vis[pcf] = np.array([shadow_map_visibility(lights, 0, x, 0.0, -0.4) for x in xs])
    hard, soft = vis[0], vis[2]
    assert set(np.unique(hard)) == {0.0, 1.0}
    between = (soft > 0) & (soft < 1)
    assert between.sum() >= 4 and (hard[soft == 1] == 1).all() and (hard[soft == 0] == 0).all()


def test_the_path_tracer_keeps_its_shadow_rays():
    a = raytrace.render(scene("point", res=32, bias=0.0), integrator="path", **SIZE)
    b = raytrace.render(scene("point"), integrator="path", **SIZE)
    assert np.array_equal(a, b)
