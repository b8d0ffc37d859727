"""The Whitted integrator at single points, against values worked out by hand."""
import numpy as np
import pytest

import raytrace
from scene_helpers import one_pixel_scene

KD = np.array([0.5, 0.2, 0.1])
KS = np.array([0.3, 0.3, 0.3])
AMB = np.array([0.1, 0.1, 0.1])


def pixel(scene, **kw):
    return raytrace.render(raytrace.load_scene(scene), **kw)[0, 0].astype(np.float64)


def phong_scene(extra_objects=(), shadows=True):
    # Unit sphere at the origin; the camera ray hits (0, 0, 1) with N = (0, 0, 1).
    # The light at (3, 0, 5) is 5 away along L = (0.6, 0, 0.8).
    return one_pixel_scene(
        [{"type": "sphere", "radius": 1, "material": "m"}, *extra_objects],
        {"m": {"diffuse": KD.tolist(), "specular": KS.tolist(), "shininess": 10},
         "black": {"diffuse": [0, 0, 0]}},
        lights=[{"type": "point", "position": [3, 0, 5], "color": [10, 10, 10], "attenuation": 0.5}],
        background={"ambient": AMB.tolist()}, bounces=0, shadows=shadows)


def test_phong_at_a_known_point():
    intensity = 10 / (0.5 * 5 ** 2)           # I / (a d^2) = 0.8
    n_dot_l = 0.8
    l_dot_r = 0.8                              # R = mirror of (0,0,-1) about N = (0,0,1)
    expected = AMB * KD + intensity * (n_dot_l * KD + l_dot_r ** 10 * KS)
    assert pixel(phong_scene()) == pytest.approx(expected, rel=1e-6)


def test_point_in_shadow_gets_only_ambient():
    blocker = {"type": "sphere", "center": [1.5, 0, 3], "radius": 0.2, "material": "black"}
    assert pixel(phong_scene([blocker])) == pytest.approx(AMB * KD, rel=1e-6)
    # shadows off: the blocker no longer matters
    assert pixel(phong_scene([blocker], shadows=False)) == pytest.approx(pixel(phong_scene()), rel=1e-6)


def test_light_without_attenuation_does_not_fall_off():
    s = phong_scene()
    del s["lights"][0]["attenuation"]
    expected = AMB * KD + 10 * (0.8 * KD + 0.8 ** 10 * KS)
    assert pixel(s) == pytest.approx(expected, rel=1e-6)


def test_directional_light():
    s = phong_scene()
    s["lights"] = [{"type": "directional", "direction": [0, -0.6, -0.8], "color": [2, 2, 2]}]
    # L = (0, 0.6, 0.8), N.L = 0.8, R = (0,0,1), L.R = 0.8
    expected = AMB * KD + 2 * (0.8 * KD + 0.8 ** 10 * KS)
    assert pixel(s) == pytest.approx(expected, rel=1e-6)


def test_mirror_reflects_a_known_colour():
    # A mirror plane tilted 45 degrees sends the camera ray (down -z) to +y, where an
    # ambient-lit green sphere waits. Seen colour = reflect * ambient * k_d(green).
    s = one_pixel_scene(
        [{"type": "plane", "normal": [0, 1, 1], "offset": 0, "material": "mirror"},
         {"type": "sphere", "center": [0, 4, 0], "radius": 1, "material": "green"}],
        {"mirror": {"specular": [0.9, 0.5, 0.25]}, "green": {"diffuse": [0.2, 0.8, 0.4]}},
        background={"ambient": [1, 1, 1], "color": [0, 0, 0]}, bounces=1)
    assert pixel(s) == pytest.approx([0.9 * 0.2, 0.5 * 0.8, 0.25 * 0.4], rel=1e-6)
    # with no bounces the mirror shows only its own (black) diffuse colour
    assert pixel(s, bounces=0) == pytest.approx([0, 0, 0], abs=1e-12)


def test_refraction_through_a_glass_slab_at_normal_incidence():
    # Slab between z = -0.5 and z = 0.5 (two planes with outward normals), behind it an
    # ambient-lit green plane; black background in front. Every pass through an interface
    # keeps 1 - F, F = ((1 - n) / (1 + n))^2; summing the internal bounces gives
    # T = (1 - F)^2 / (1 - F^2) = (1 - F) / (1 + F).
    n = 1.5
    f = ((1 - n) / (1 + n)) ** 2
    s = one_pixel_scene(
        [{"type": "plane", "normal": [0, 0, 1], "offset": 0.5, "material": "glass"},
         {"type": "plane", "normal": [0, 0, -1], "offset": 0.5, "material": "glass"},
         {"type": "plane", "normal": [0, 0, 1], "offset": -3, "material": "green"}],
        {"glass": {"transmit": [1, 1, 1], "ior": n}, "green": {"diffuse": [0, 1, 0]}},
        background={"ambient": [1, 1, 1]}, bounces=60)
    # rel 1e-5: the kernel drops rays whose weight falls below 1e-5 (here the third
    # internal round trip, 2.4e-6 of the total)
    assert pixel(s) == pytest.approx([0, (1 - f) / (1 + f), 0], rel=1e-5)
    # two bounces: just the straight path through both interfaces
    assert pixel(s, bounces=2) == pytest.approx([0, (1 - f) ** 2, 0], rel=1e-6)


def test_glass_sphere_conserves_energy_in_a_uniform_background():
    # A lossless dielectric in a uniform environment shows the environment exactly
    # up to the energy in paths cut off by `bounces` or by the kernel's 1e-5 weight floor.
    s = one_pixel_scene(
        [{"type": "sphere", "radius": 1, "center": [0.3, 0.2, 0], "material": "glass"}],
        {"glass": {"transmit": [1, 1, 1], "ior": 1.5}},
        background={"color": [0.25, 0.5, 1.0]}, bounces=40)
    assert pixel(s) == pytest.approx([0.25, 0.5, 1.0], rel=1e-5)
