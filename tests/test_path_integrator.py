"""The path tracer against closed forms: furnaces, an interreflection series per
max_depth, light units, sphere lights, an environment map and textures.

Noise: each check renders the scene with 16 seeds. Stratified sampling makes the noise
differ from pixel to pixel (edges of lights are far noisier than flat walls), so each
pixel gets its own standard error, s / sqrt(16) from its 16 values, and the mean of the 16
must lie within 8 of those of the expected value (Student's t with 15 degrees of freedom:
a false alarm about once in 1500 checks of 768 values, if the pixel means were Gaussian;
`test_the_noise_model_is_calibrated` measures it). Image means must lie within 0.5 %
(checked to be well above the noise).
"""
import math

import numpy as np
import pytest

import raytrace
from raytrace.cubemap import cube_lookup, load_cube_map
from conftest import REPO

E = np.array([0.5, 1.0, 2.0])
N_SEEDS = 16


def path_scene(objects, materials=None, background=None, lights=(), max_depth=-1, rr_depth=5,
               camera=None, size=8, spp=64):
    return {
        "camera": camera or {"center": [0, 0, 4], "look_at": [0, 0, 0], "fov": 30},
        "image": {"width": size, "height": size, "spp": spp, "filter": "box"},
        "integrator": {"type": "path", "max_depth": max_depth, "rr_depth": rr_depth},
        "background": background or {},
        "materials": materials or {},
        "lights": list(lights),
        "objects": list(objects),
    }


def seed_renders(scene_dict, n=N_SEEDS, base_dir=None, **kw):
    """Renders with seeds 1 .. n as one float64 array (n, H, W, 3)."""
    scene = raytrace.load_scene(scene_dict, base_dir=base_dir)
    out = []
    for seed in range(1, n + 1):
        img = raytrace.render(scene, seed=seed, **kw)
        assert img.info.nonfinite == 0
        out.append(img.astype(np.float64))
    return np.stack(out)


def check_against(renders, expected, mean_tol=0.005, z=8.0):
    """The renders (n, H, W, 3), one per seed, agree with ``expected`` (broadcastable to
    (H, W, 3)) within each pixel's own noise, and their image mean within ``mean_tol``."""
    n = renders.shape[0]
    expected = np.broadcast_to(np.asarray(expected, np.float64), renders.shape[1:])
    mean = renders.mean(axis=0)
    std_err = renders.std(axis=0, ddof=1) / math.sqrt(n)
    bad = np.abs(mean - expected) > z * std_err + 1e-6 * np.abs(expected)
    assert not bad.any(), (f"{bad.sum()} values off by more than {z} standard errors; worst",
                           (np.abs(mean - expected) / np.maximum(std_err, 1e-300)).max())
    mean_expected = expected.mean(axis=(0, 1))
    noise_of_mean = np.sqrt((std_err ** 2).sum(axis=(0, 1))) / (expected.shape[0] * expected.shape[1])
    assert np.all(noise_of_mean < mean_tol * mean_expected / 4), "too noisy to check the mean"
    np.testing.assert_allclose(mean.mean(axis=(0, 1)), mean_expected, rtol=mean_tol)


@pytest.mark.parametrize("albedo", [1.0, 0.5])
@pytest.mark.parametrize("max_depth", [-1, 2])
def test_white_furnace_diffuse_sphere(albedo, max_depth):
    # A convex object sees only the environment: after one bounce every ray escapes, so
    # L = albedo * E exactly (no geometric series), for any max_depth >= 2.
    s = path_scene([{"type": "sphere", "radius": 1, "material": "m"}],
                   {"m": {"type": "diffuse", "albedo": [albedo] * 3}}, {"color": E.tolist()},
                   max_depth=max_depth, camera={"center": [0, 0, 4], "look_at": [0, 0, 0], "fov": 16})
    renders = seed_renders(s)
    check_against(renders, albedo * E)


@pytest.mark.parametrize("material", [{"type": "dielectric", "ior": 1.5}, {"type": "conductor"},
                                      {"type": "dielectric", "ior": 1.33}])
def test_lossless_objects_vanish_in_a_furnace(material):
    s = path_scene([{"type": "sphere", "radius": 1, "material": "m"},
                    {"type": "cube", "material": "m", "transform": [{"translate": [0.6, 0.6, 1.2]},
                                                                   {"scale": 0.3}]}],
                   {"m": material}, {"color": E.tolist()}, max_depth=200, rr_depth=200, spp=4)
    a, b = seed_renders(s, n=2)
    np.testing.assert_allclose(a, np.broadcast_to(E, a.shape), rtol=1e-9)
    np.testing.assert_allclose(b, a, rtol=1e-12)


def test_white_furnace_under_a_uniform_cube_map(tmp_path):
    # the cube-map sampler (texel distribution, face Jacobians) against a constant map
    import imageio.v3 as iio
    srgb = np.array([120, 180, 220], np.uint8)
    for face in ("left", "right", "up", "down", "front", "back"):
        iio.imwrite(tmp_path / f"{face}.png", np.tile(srgb, (4, 4, 1)))
    lin = load_cube_map(tmp_path)[0, 0, 0].astype(np.float64)
    s = path_scene([{"type": "sphere", "radius": 1, "material": "m"}],
                   {"m": {"type": "diffuse", "albedo": [0.9, 0.9, 0.9]}}, {"cube_map": str(tmp_path)},
                   camera={"center": [0, 0, 4], "look_at": [0, 0, 0], "fov": 16})
    renders = seed_renders(s)
    check_against(renders, 0.9 * lin)


RHO, LE = 0.6, np.array([1.0, 0.5, 0.25])


def emissive_box(max_depth, rr_depth=5):
    """Inside a closed box whose walls emit LE and reflect with albedo RHO (a mirrored cube
    faces inwards), 16 x 16 pixels at 256 spp."""
    box = {"type": "cube", "material": "m", "emission": LE.tolist(), "transform": [{"scale": [-1, 1, 1]}]}
    return path_scene([box], {"m": {"type": "diffuse", "albedo": [RHO] * 3}}, max_depth=max_depth,
                      rr_depth=rr_depth, camera={"center": [0.2, 0.1, 0.3], "look_at": [0, 0, -1], "fov": 70},
                      size=16, spp=256)


@pytest.mark.parametrize("max_depth,rr_depth", [(1, 5), (2, 5), (3, 5), (4, 1), (-1, 5), (-1, 1)])
def test_interreflection_inside_an_emissive_box_sums_the_series(max_depth, rr_depth):
    # Inside the emissive box the radiance leaving any wall after k bounces is Le rho^k:
    # max_depth d (Mitsuba's meaning) shows Le (1 + rho + ... + rho^(d-1)), unbounded
    # Le / (1 - rho).
    renders = seed_renders(emissive_box(max_depth, rr_depth))
    series = sum(RHO ** k for k in range(max_depth)) if max_depth > 0 else 1 / (1 - RHO)
    if max_depth == 1:
        np.testing.assert_allclose(renders, np.broadcast_to(LE, renders.shape), rtol=1e-12)
        return
    # roulette from the first bounce adds variance: check those means to 1 %
    check_against(renders, LE * series, mean_tol=0.01 if rr_depth == 1 else 0.005)


def test_the_noise_model_is_calibrated():
    # check_against's statistic, (mean of 16 seeds - expected) / standard error, must follow
    # Student's t with 15 degrees of freedom pixel by pixel (Kolmogorov-Smirnov over the
    # 256 green values of the emissive box at max_depth 2). The standard errors differ ten-
    # fold between pixels, which is why one noise level for the whole image cannot serve.
    # Negative controls: a 0.5 % error in the expected value is rejected by the same
    # test, and a 1 % error fails check_against.
    stats = pytest.importorskip("scipy.stats")
    renders = seed_renders(emissive_box(2))
    expected = LE * (1 + RHO)
    green = renders[..., 1]
    std_err = green.std(axis=0, ddof=1) / math.sqrt(N_SEEDS)
    assert std_err.max() > 4 * np.median(std_err)

    def ks_p(exp):
        return stats.kstest(((green.mean(axis=0) - exp) / std_err).ravel(), stats.t(N_SEEDS - 1).cdf).pvalue

    assert ks_p(expected[1]) > 1e-3
    assert ks_p(expected[1] * 1.005) < 1e-6
    check_against(renders, expected)
    with pytest.raises(AssertionError):
        check_against(renders, expected * 1.01)


def test_max_depth_zero_is_black():
    s = path_scene([{"type": "sphere", "emission": [1, 1, 1]}], background={"color": [1, 1, 1]}, max_depth=0)
    assert raytrace.render(raytrace.load_scene(s)).max() == 0.0


LIGHT_SCENE = dict(
    objects=[{"type": "plane", "normal": [0, 1, 0], "offset": 0, "material": "m"},
             {"type": "sphere", "center": [0.7, 0.4, 0.2], "radius": 0.4, "material": "m"}],
    materials={"m": {"type": "diffuse", "albedo": [0.7, 0.5, 0.3]}},
    camera={"center": [0.3, 2.5, 3], "look_at": [0.2, 0, 0], "fov": 50})


@pytest.mark.parametrize("light", [
    {"type": "point", "position": [-0.5, 2, 1], "color": [0.8, 0.9, 1.0], "attenuation": 0.3},
    {"type": "directional", "direction": [0.3, -1, -0.4], "color": [0.8, 0.9, 1.0]},
])
def test_delta_lights_have_the_course_units(light):
    # Direct light only: the path tracer (max_depth 2) equals the Whitted integrator's
    # diffuse term (no ambient, no specular) pixel for pixel, shadows included.
    whitted = dict(path_scene(**LIGHT_SCENE, lights=[light], size=12, spp=1))
    whitted["integrator"] = {"type": "whitted", "bounces": 0}
    path = path_scene(**LIGHT_SCENE, lights=[light], max_depth=2, size=12, spp=1)
    w = raytrace.render(raytrace.load_scene(whitted))
    p = raytrace.render(raytrace.load_scene(path))
    assert w.max() > 0.05
    np.testing.assert_allclose(p, w, rtol=1e-5, atol=1e-7)


def test_point_light_without_attenuation_falls_off_in_the_path_tracer():
    light = {"type": "point", "position": [0, 2, 0], "color": [1, 1, 1]}
    s = path_scene([{"type": "plane", "normal": [0, 1, 0], "material": "m"}],
                   {"m": {"type": "diffuse", "albedo": [0.5, 0.5, 0.5]}}, lights=[light], max_depth=2,
                   camera={"type": "orthographic", "center": [0, 1, 0], "direction": [0, -1, 0],
                           "up": [0, 0, -1], "height": 0.001}, size=1, spp=1)
    p = raytrace.render(raytrace.load_scene(s))[0, 0]
    s["integrator"] = {"type": "whitted", "bounces": 0}
    w = raytrace.render(raytrace.load_scene(s))[0, 0]
    # intensity pi * I, distance 2: L = rho / pi * pi I / 4; Whitted: rho I (no fall-off)
    np.testing.assert_allclose(p, 0.5 / 4, rtol=1e-6)
    np.testing.assert_allclose(w, 0.5, rtol=1e-6)


@pytest.mark.parametrize("scale", [None, [1, 1.0001, 1]])
def test_sphere_light_irradiance(scale):
    # A point on a plane straight below a sphere light of radius r at height d sees a cone
    # of half-angle asin(r / d): E = pi Le (r / d)^2 and L = rho E / pi = rho Le r^2 / d^2.
    # A (barely) non-round sphere is sampled by area instead of by cone: same answer.
    r, d, le, rho = 0.3, 1.5, 20.0, 0.5
    lamp = {"type": "sphere", "radius": r, "center": [0, 0, 0], "emission": [le, le, le], "material": "black",
            "transform": [{"translate": [0, d, 0]}] + ([{"scale": scale}] if scale else [])}
    s = path_scene([{"type": "plane", "normal": [0, 1, 0], "material": "m"}, lamp],
                   {"m": {"type": "diffuse", "albedo": [rho] * 3}, "black": {"type": "diffuse", "albedo": [0, 0, 0]}},
                   max_depth=2, spp=256, size=4,
                   camera={"type": "orthographic", "center": [0, 0.5, 0], "direction": [0, -1, 0],
                           "up": [0, 0, -1], "height": 1e-4})
    renders = seed_renders(s)
    check_against(renders, rho * le * r * r / (d * d), mean_tol=0.01)


def test_environment_map_lighting_matches_quadrature():
    # An upward-facing diffuse square under the sky cube map: L = rho / pi * int L_env cos
    # over the upper hemisphere (quadrature of the bilinear lookup, fine grid in (cos, phi)).
    sky = REPO / "scenes" / "assets" / "sky"
    cube = load_cube_map(sky)
    rho = 0.8
    n_mu, n_phi = 200, 400
    mu = (np.arange(n_mu) + 0.5) / n_mu
    phi = (np.arange(n_phi) + 0.5) / n_phi * 2 * np.pi
    total = np.zeros(3)
    for m in mu:
        s_ = math.sqrt(1 - m * m)
        for p in phi:
            total += cube_lookup(cube, s_ * math.cos(p), m, s_ * math.sin(p)) * m
    expected = rho / math.pi * total * (2 * math.pi / (n_mu * n_phi))
    s = path_scene([{"type": "rectangle", "material": "m", "transform": [{"rotate_x": -90}, {"scale": 0.01}]}],
                   {"m": {"type": "diffuse", "albedo": [rho] * 3}}, {"cube_map": str(sky)}, max_depth=2,
                   spp=256, size=4,
                   camera={"type": "orthographic", "center": [0, 1, 0], "direction": [0, -1, 0],
                           "up": [0, 0, -1], "height": 0.001})
    renders = seed_renders(s)
    check_against(renders, expected, mean_tol=0.01)


def test_textured_albedo_in_a_furnace():
    # an infinite textured plane under a uniform sky: each point shows albedo(uv) * E
    c0, c1 = [0.9, 0.5, 0.1], [0.1, 0.4, 0.8]
    tex = {"type": "checkerboard", "color0": c0, "color1": c1}
    s = path_scene([{"type": "plane", "normal": [0, 0, 1], "material": "m"}],
                   {"m": {"type": "diffuse", "albedo": tex}}, {"color": E.tolist()}, max_depth=2, size=4,
                   camera={"type": "orthographic", "center": [0.5, 0.5, 3], "direction": [0, 0, -1],
                           "height": 1.0}, spp=64)
    renders = seed_renders(s)
    # pixel (i, j) centre sees (x, y) = (j + 0.5) / 4, 1 - (i + 0.5) / 4; box filter: a
    # pixel averages its square, which lies inside one checker cell here
    expected = np.zeros((4, 4, 3))
    for i in range(4):
        for j in range(4):
            x, y = (j + 0.5) / 4, 1 - (i + 0.5) / 4
            expected[i, j] = (c0 if (x > 0.5) == (y > 0.5) else c1)
    check_against(renders, expected * E)
