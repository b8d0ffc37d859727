"""Light sampling for next-event estimation, and its agreement with the pdf that MIS
uses when a BSDF ray finds the same light.

For every sampled direction the density returned by ``sample_light`` must equal the one
``light_pdf_at_hit`` / ``env_direction_pdf`` give for the point a ray in that direction
hits: then the two MIS weights of a direction sum to 1 and the estimator is unbiased.
Each sampler's density must integrate to the solid angle it covers: E[1/pdf] equals the
analytic solid angle of a triangle (Van Oosterom & Strackee) or a sphere's cone, a
hit-or-miss estimate for an ellipsoid, and 4 pi for environments.
"""
import math

import numpy as np
import pytest
from numba import njit

import raytrace
from raytrace.kernels.emitters import env_direction_pdf, light_pdf_at_hit, sample_light
from raytrace.kernels.intersect import scene_hit
from raytrace.kernels.path import mis_weight
from raytrace.kernels.surface import hit_normals
from raytrace.layout import SPHERE, TRIANGLE
from conftest import REPO


@njit(cache=True)
def _pdf_at_hits(acc, lights, geo, p, dirs):
    """For each direction: (t, pdf that MIS uses for what the ray hits; -1 if no emitter)."""
    out = np.zeros((dirs.shape[0], 2))
    for k in range(dirs.shape[0]):
        hit = scene_hit(acc, geo, p[0], p[1], p[2], dirs[k, 0], dirs[k, 1], dirs[k, 2], 0.0, np.inf)
        t, kind, idx = hit.t, hit.kind, hit.index
        out[k, 0] = t
        out[k, 1] = -1.0
        if kind == TRIANGLE or kind == SPHERE:
            qx, qy, qz = p[0] + t * dirs[k, 0], p[1] + t * dirs[k, 1], p[2] + t * dirs[k, 2]
            (gx, gy, gz), (sx, sy, sz), mat, emit = hit_normals(geo, hit, qx, qy, qz)
            cos_l = -(gx * dirs[k, 0] + gy * dirs[k, 1] + gz * dirs[k, 2])
            if emit >= 0 and cos_l > 0.0:
                out[k, 1] = light_pdf_at_hit(lights, geo, kind, idx, p[0], p[1], p[2], qx, qy, qz, cos_l)
    return out


@njit(cache=True)
def _draw(lights, geo, env, p, n, seed):
    """(n, 8): ok, w (3), dist, pdf, delta, 0."""
    np.random.seed(seed)
    out = np.zeros((n, 8))
    for k in range(n):
        ls = sample_light(
            lights, geo, env, p[0], p[1], p[2], np.random.random(), np.random.random())
        ok, (wx, wy, wz), dist, (vr, vg, vb), pdf, delta = ls
        out[k, 0] = 1.0 if ok else 0.0
        out[k, 1], out[k, 2], out[k, 3], out[k, 4], out[k, 5] = wx, wy, wz, dist, pdf
        out[k, 6] = 1.0 if delta else 0.0
    return out


@njit(cache=True)
def _env_pdfs(env, dirs):
    out = np.zeros(dirs.shape[0])
    for k in range(dirs.shape[0]):
        out[k] = env_direction_pdf(env, dirs[k, 0], dirs[k, 1], dirs[k, 2])
    return out


def load(objects, lights=(), background=None):
    scene = raytrace.load_scene({"camera": {"center": [0, 0, 9], "look_at": [0, 0, 0]},
                                 "background": background or {}, "lights": list(lights),
                                 "objects": list(objects)}, base_dir=REPO / "scenes")
    return scene, scene.lights, scene.environment


MIXED = dict(
    objects=[
        {"type": "rectangle", "emission": [4, 3, 2], "transform": [{"translate": [0, 2, 0]}, {"rotate_x": 90},
                                                                  {"scale": 0.5}]},
        {"type": "sphere", "center": [1.5, 0.5, -1], "radius": 0.4, "emission": [1, 2, 3]},
        {"type": "sphere", "emission": [2, 2, 2],
         "transform": [{"translate": [-1.5, 0.3, -0.5]}, {"rotate_z": 30}, {"scale": [0.6, 0.25, 0.4]}]},
        {"type": "triangle", "vertices": [[-1, -1, -2], [1, -1, -2], [0, 0.5, -2]], "emission": [0.5, 0.5, 0.5]},
        {"type": "sphere", "center": [0, -0.2, 1.2], "radius": 0.3},          # an occluder, not a light
    ],
    lights=[{"type": "point", "position": [0, 3, 3], "color": [1, 1, 1], "attenuation": 0.5},
            {"type": "directional", "direction": [0, -1, 0.2], "color": [1, 1, 1]}],
    background={"color": [0.2, 0.3, 0.4]})


@pytest.mark.parametrize("point", [(0, 0, 0), (0.3, -0.5, 0.8), (-1.0, 1.2, -0.2)])
def test_sampled_pdf_equals_the_pdf_mis_uses_for_the_hit(point):
    scene, lights, environ = load(**MIXED)
    p = np.array(point, np.float64)
    s = _draw(lights, scene.geometry, environ, p, 20000, 7)
    ok = s[:, 0] == 1
    assert ok.mean() > 0.5
    area = ok & (s[:, 6] == 0) & np.isfinite(s[:, 4])
    hits = _pdf_at_hits(scene.accel, lights, scene.geometry, p, np.ascontiguousarray(s[area, 1:4]))
    visible = np.abs(hits[:, 0] - s[area, 4]) <= 1e-9 * s[area, 4]
    occluded = hits[:, 0] < s[area, 4] * (1 - 1e-9)
    assert np.all(visible | occluded), "a sampled light point must be what the ray hits (or behind it)"
    assert visible.sum() > 1000
    # equal to rounding, except where a ray grazes a curved light: its hit point (found by
    # intersection) then has a normal, hence cos_l, known to fewer digits (3e-6 seen)
    rel = np.abs(hits[visible, 1] / s[area, 5][visible] - 1)
    assert (rel <= 1e-9).mean() > 0.995 and rel.max() < 1e-4
    # environment samples: the same density as the MIS lookup of their direction
    env = ok & (s[:, 6] == 0) & ~np.isfinite(s[:, 4])
    assert env.sum() > 50
    env_pdf = lights.pmf[lights.env_entry] * _env_pdfs(environ, np.ascontiguousarray(s[env, 1:4]))
    np.testing.assert_allclose(env_pdf, s[env, 5], rtol=1e-12)
    # so for any BSDF density b, w_light(pdf) + w_bsdf(b) = 1 along each sampled direction
    b = np.abs(s[area, 3][visible]) / math.pi
    for lp, mp, bp in zip(s[area, 5][visible], hits[visible, 1], b):
        assert mis_weight(lp, bp) + mis_weight(bp, mp) == pytest.approx(1.0, abs=1e-12)


def triangle_solid_angle(p, a, b, c):
    """Van Oosterom & Strackee (1983)."""
    a, b, c = np.asarray(a) - p, np.asarray(b) - p, np.asarray(c) - p
    la, lb, lc = np.linalg.norm(a), np.linalg.norm(b), np.linalg.norm(c)
    num = abs(np.dot(a, np.cross(b, c)))
    den = la * lb * lc + np.dot(a, b) * lc + np.dot(a, c) * lb + np.dot(b, c) * la
    return 2 * math.atan2(num, den)


def mean_inverse_pdf(lights, geo, environ, p, n=200_000):
    s = _draw(lights, geo, environ, np.asarray(p, np.float64), n, 3)
    contrib = np.where(s[:, 0] == 1, 1.0 / np.where(s[:, 5] > 0, s[:, 5], 1.0), 0.0)
    return contrib.mean(), contrib.std() / math.sqrt(n)


def test_triangle_sampling_covers_its_solid_angle():
    verts = [[-0.3, 1.0, -0.4], [0.8, 1.3, 0.2], [0.1, 0.9, 0.9]]
    scene, lights, environ = load([{"type": "triangle", "vertices": verts, "emission": [1, 1, 1]}])
    p = np.array([0.1, -0.2, 0.1])
    # the triangle's normal (v1 - v0) x (v2 - v0) must face p for it to be seen
    n = np.cross(np.subtract(verts[1], verts[0]), np.subtract(verts[2], verts[0]))
    assert np.dot(n, p - verts[0]) > 0
    est, err = mean_inverse_pdf(lights, scene.geometry, environ, p)
    assert est == pytest.approx(triangle_solid_angle(p, *verts), abs=4 * err + 1e-12)
    # seen from behind (p mirrored through its plane), a one-sided emitter offers nothing
    nn = n / np.linalg.norm(n)
    behind = p - 2 * np.dot(p - verts[0], nn) * nn
    est_back, _ = mean_inverse_pdf(lights, scene.geometry, environ, behind, n=2000)
    assert est_back == 0.0


@pytest.mark.parametrize("distance", [1.5, 40.0, 1e4])
def test_sphere_cone_sampling_covers_its_solid_angle(distance):
    r = 0.5
    scene, lights, environ = load([{"type": "sphere", "radius": r, "emission": [1, 1, 1]}])
    est, err = mean_inverse_pdf(lights, scene.geometry, environ, [0, 0, distance], n=20000)
    sin2 = (r / distance) ** 2
    expected = 2 * math.pi * sin2 / (1 + math.sqrt(1 - sin2))
    assert est == pytest.approx(expected, rel=1e-9)      # the cone pdf is constant


def test_ellipsoid_area_sampling_covers_its_solid_angle():
    obj = {"type": "sphere", "emission": [1, 1, 1],
           "transform": [{"translate": [0.2, 0.1, -1.5]}, {"rotate_y": 40}, {"scale": [0.9, 0.3, 0.5]}]}
    scene, lights, environ = load([obj])
    assert scene.geometry.sph_radius[0] == 0.0          # an ellipsoid: sampled by area
    p = np.array([0.0, 0.0, 0.5])
    est, err = mean_inverse_pdf(lights, scene.geometry, environ, p)
    # reference: the fraction of uniformly random directions from p that hit it
    rng = np.random.default_rng(1)
    d = rng.normal(size=(400_000, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    hits = _pdf_at_hits(scene.accel, lights, scene.geometry, p, d)
    frac = (hits[:, 1] > 0).mean()
    ref, ref_err = 4 * math.pi * frac, 4 * math.pi * math.sqrt(frac * (1 - frac) / len(d))
    assert est == pytest.approx(ref, abs=4 * math.hypot(err, ref_err))


@pytest.mark.parametrize("background", [{"color": [0.3, 0.2, 0.1]}, {"cube_map": "assets/sky"}])
def test_environment_sampling_covers_the_sphere(background):
    scene, lights, environ = load([], background=background)
    est, err = mean_inverse_pdf(lights, scene.geometry, environ, [0, 0, 0])
    assert est == pytest.approx(4 * math.pi, abs=4 * err + 1e-9)
    # and its density integrates to 1 (quadrature on a fine (cos, phi) grid)
    n_mu, n_phi = 600, 1200
    mu = (np.arange(n_mu) + 0.5) / n_mu * 2 - 1
    phi = (np.arange(n_phi) + 0.5) / n_phi * 2 * math.pi
    MU, PHI = np.meshgrid(mu, phi, indexing="ij")
    S = np.sqrt(1 - MU * MU)
    dirs = np.ascontiguousarray(np.stack([S * np.cos(PHI), MU, S * np.sin(PHI)], -1).reshape(-1, 3))
    integral = _env_pdfs(environ, dirs).sum() * 4 * math.pi / dirs.shape[0]
    assert integral == pytest.approx(1.0, abs=5e-3)


def test_cube_map_sampling_follows_the_map(tmp_path):
    # one bright face (sRGB 255 -> 1.0) and five dark ones (sRGB 10 -> 0.003): the up face
    # should get 1 / (1 + 5 * 0.003035) of the samples (equal solid angles; the 1e-3
    # floor changes this by < 1e-3)
    import imageio.v3 as iio
    for face in ("left", "right", "up", "down", "front", "back"):
        iio.imwrite(tmp_path / f"{face}.png", np.full((8, 8, 3), 255 if face == "up" else 10, np.uint8))
    scene, lights, environ = load([], background={"cube_map": str(tmp_path)})
    s = _draw(lights, scene.geometry, environ, np.zeros(3), 20000, 5)
    d = s[:, 1:4]
    on_up = (d[:, 1] > np.abs(d[:, 0])) & (d[:, 1] > np.abs(d[:, 2]))
    dark = ((10 / 255 + 0.055) / 1.055) ** 2.4
    expected = 1 / (1 + 5 * dark)
    assert on_up.mean() == pytest.approx(expected, abs=5 * math.sqrt(expected * (1 - expected) / len(d)) + 1e-3)


def test_lights_are_chosen_in_proportion_to_power():
    big = {"type": "rectangle", "emission": [3, 3, 3], "transform": [{"translate": [0, 2, 0]}, {"scale": 2}]}
    small = {"type": "rectangle", "emission": [1, 2, 3], "transform": [{"translate": [0, -2, 0]}, {"scale": 0.5}]}
    dark = {"type": "rectangle", "emission": [0, 0, 0], "transform": [{"translate": [3, 0, 0]}]}
    scene, lights, environ = load([big, small, dark],
                               lights=[{"type": "point", "position": [0, 0, 0], "color": [1, 1, 1]}])
    # rectangle: 2 triangles; power pi * area * mean(radiance); point light 4 pi * pi * I
    p_big = math.pi * 16 * 3
    p_small = math.pi * 1 * 2
    p_point = 4 * math.pi * math.pi
    total = p_big + p_small + p_point
    kinds = lights.kind
    assert len(kinds) == 5 and (scene.geometry.tri_emit >= 0).sum() == 4      # the dark one is no light
    assert lights.pmf[:2].sum() == pytest.approx(p_big / total)
    assert lights.pmf[2:4].sum() == pytest.approx(p_small / total)
    assert lights.pmf[4] == pytest.approx(p_point / total)
    assert lights.cdf[-1] == 1.0 and np.all(np.diff(lights.cdf) >= 0)
