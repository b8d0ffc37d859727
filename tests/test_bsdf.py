"""The path tracer's BSDFs against closed forms and numerical quadrature.

Every BSDF lives in a local frame (normal +z, wi.z > 0; see raytrace/kernels/bsdf.py).
Checked for each: the sample weight equals eval / pdf; the pdf integrates to what the
sampler can produce; the Monte Carlo albedo (mean sample weight) equals the quadrature of
f cos over the hemisphere and is <= 1; reciprocity where it holds; delta lobes by their
closed forms (mirror law, Snell's law, Fresnel equations).
"""
import math

import numpy as np
import pytest
from numba import njit

import raytrace  # noqa: F401  (configures the Numba cache)
from raytrace.kernels.bsdf import (bsdf_eval, bsdf_has_smooth, bsdf_sample, fresnel_dielectric, ggx_d,
                                   ggx_g1)
from raytrace.kernels.path import mis_weight
from raytrace.layout import M_COLOR
from raytrace.scene.build import material_table

MATERIALS = {
    "white": {"type": "diffuse", "albedo": [1, 1, 1]},
    "brick": {"type": "diffuse", "albedo": [0.7, 0.3, 0.1]},
    "ggx_smooth": {"type": "rough_conductor", "reflectance": [1, 1, 1], "alpha": 0.1},
    "ggx_mid": {"type": "rough_conductor", "reflectance": [1, 1, 1], "alpha": 0.3},
    "ggx_rough": {"type": "rough_conductor", "reflectance": [1, 1, 1], "alpha": 1.0},
    "gold": {"type": "rough_conductor", "reflectance": [1.0, 0.78, 0.34], "alpha": 0.4},
    "mirror": {"type": "conductor", "reflectance": [0.9, 0.5, 0.25]},
    "glass": {"type": "dielectric", "ior": 1.5},
    "course": {"diffuse": [0.3, 0.2, 0.1], "specular": [0.4, 0.4, 0.4]},
    "course_glass": {"diffuse": [0.1, 0.1, 0.1], "transmit": [0.8, 0.9, 1.0], "ior": 1.4},
}
NAMES, TABLE = material_table(MATERIALS)
ROW = {n: i for i, n in enumerate(NAMES)}
SMOOTH = ["white", "brick", "ggx_smooth", "ggx_mid", "ggx_rough", "gold", "course", "course_glass"]


def colour(name):
    return tuple(TABLE[ROW[name], M_COLOR:M_COLOR + 3])


def direction(theta_deg, phi_deg=30.0):
    t, p = math.radians(theta_deg), math.radians(phi_deg)
    return np.array([math.sin(t) * math.cos(p), math.sin(t) * math.sin(p), math.cos(t)])


@njit(cache=True)
def _sample_many(mats, m, cr, cg, cb, eta, wi, n, seed):
    np.random.seed(seed)
    out = np.zeros((n, 9))
    for k in range(n):
        bs = bsdf_sample(mats, m, cr, cg, cb, eta, wi[0], wi[1], wi[2], np.random.random(), np.random.random(),
                         np.random.random())
        (wox, woy, woz), (wr, wg, wb), pdf, delta, e = bs.wo, bs.weight, bs.pdf, bs.delta, bs.eta
        out[k, 0], out[k, 1], out[k, 2] = wox, woy, woz
        out[k, 3], out[k, 4], out[k, 5] = wr, wg, wb
        out[k, 6], out[k, 7], out[k, 8] = pdf, 1.0 if delta else 0.0, e
    return out


@njit(cache=True)
def _eval_many(mats, m, cr, cg, cb, eta, wi, wos):
    out = np.zeros((wos.shape[0], 4))
    for k in range(wos.shape[0]):
        fr, fg, fb, pdf = bsdf_eval(mats, m, cr, cg, cb, eta, wi[0], wi[1], wi[2],
                                    wos[k, 0], wos[k, 1], wos[k, 2])
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = fr, fg, fb, pdf
    return out


@njit(cache=True)
def _ggx_many(alpha, wi, ms):
    out = np.zeros((ms.shape[0], 2))
    for k in range(ms.shape[0]):
        d = ggx_d(alpha, ms[k, 0], ms[k, 1], ms[k, 2])
        dot = wi[0] * ms[k, 0] + wi[1] * ms[k, 1] + wi[2] * ms[k, 2]
        out[k, 0] = d
        out[k, 1] = ggx_g1(alpha, wi[0], wi[1], wi[2], dot) * max(dot, 0.0) * d
    return out


def sample(name, wi, n=200_000, eta=1.5, seed=1):
    return _sample_many(TABLE, ROW[name], *colour(name), eta, np.asarray(wi, np.float64), n, seed)


def evaluate(name, wi, wos, eta=1.5):
    return _eval_many(TABLE, ROW[name], *colour(name), eta, np.asarray(wi, np.float64),
                      np.ascontiguousarray(wos, np.float64))


def hemisphere_grid(n_theta=1200, n_phi=600):
    """Midpoint grid over the upper hemisphere in (cos theta, phi): equal solid angles."""
    mu = (np.arange(n_theta) + 0.5) / n_theta
    phi = (np.arange(n_phi) + 0.5) / n_phi * 2 * np.pi
    mu, phi = np.meshgrid(mu, phi, indexing="ij")
    s = np.sqrt(1 - mu * mu)
    dirs = np.stack([s * np.cos(phi), s * np.sin(phi), mu], axis=-1).reshape(-1, 3)
    return dirs, 2 * np.pi / (n_theta * n_phi)


@pytest.mark.parametrize("name", SMOOTH)
@pytest.mark.parametrize("theta", [0.0, 45.0, 80.0])
def test_sample_weight_is_eval_over_pdf(name, theta):
    wi = direction(theta)
    s = sample(name, wi, n=4000)
    smooth = (s[:, 7] == 0) & (s[:, 3:6].sum(axis=1) > 0)
    assert smooth.sum() > 100
    e = evaluate(name, wi, s[smooth, :3])
    np.testing.assert_allclose(s[smooth, 6], e[:, 3], rtol=1e-9)
    np.testing.assert_allclose(s[smooth, 3:6], e[:, :3] / e[:, 3:4], rtol=1e-9)


@pytest.mark.parametrize("name", SMOOTH)
@pytest.mark.parametrize("theta", [10.0, 60.0])
def test_pdf_integrates_to_the_share_of_valid_samples(name, theta):
    # Quadrature of the pdf over the upper hemisphere = probability that the sampler
    # returns a non-delta direction there (1 for Lambert; less for GGX, whose reflected
    # directions can fall below the horizon, and for materials with delta lobes).
    wi = direction(theta)
    dirs, dw = hemisphere_grid()
    integral = evaluate(name, wi, dirs)[:, 3].sum() * dw
    s = sample(name, wi)
    valid = ((s[:, 7] == 0) & (s[:, 3:6].sum(axis=1) > 0)).mean()
    sigma = math.sqrt(max(valid * (1 - valid), 1e-6) / len(s))
    assert integral == pytest.approx(valid, abs=5 * sigma + 2e-3)
    if name in ("white", "brick"):
        assert integral == pytest.approx(1.0, abs=1e-4)


@pytest.mark.parametrize("name", SMOOTH)
@pytest.mark.parametrize("theta", [0.0, 50.0, 85.0])
def test_albedo_matches_quadrature_and_is_at_most_one(name, theta):
    wi = direction(theta)
    s = sample(name, wi)
    mc = s[:, 3:6].mean(axis=0)
    mc_err = s[:, 3:6].std(axis=0) / math.sqrt(len(s))
    dirs, dw = hemisphere_grid()
    quad = evaluate(name, wi, dirs)[:, :3].sum(axis=0) * dw
    delta = s[:, 7] == 1
    if delta.any():                   # delta lobes: add their mean weight (exact per sample)
        quad = quad + (s[:, 3:6] * delta[:, None]).mean(axis=0)
    assert np.all(np.abs(mc - quad) <= 5 * mc_err + 2e-3), (mc, quad)
    if name != "course_glass":        # refraction weights carry 1/eta^2 (radiance)
        assert np.all(mc <= 1 + 5 * mc_err)


def test_lambert_albedo_is_exact():
    s = sample("brick", direction(30.0), n=1000)
    np.testing.assert_allclose(s[:, 3:6], np.tile([0.7, 0.3, 0.1], (1000, 1)), rtol=1e-12)


# Single-scattering albedo of GGX with F = 1 (light that would scatter again between
# microfacets, or that the microfacets send below the horizon, is lost; at alpha = 1 and
# normal incidence half the facets reflect downwards). The same quadrature of Mitsuba
# 3.9's roughconductor (material "none", ggx) bsdf.eval gave 0.98603 (coarser grid),
# 0.877333, 0.306853, 0.564506, 0.847003. Also quoted in docs/path-tracing.md.
GGX_ALBEDO = [("ggx_smooth", 0.0, 0.9883), ("ggx_mid", 0.0, 0.8774), ("ggx_rough", 0.0, 0.3069),
              ("ggx_rough", 85.0, 0.5645), ("ggx_mid", 85.0, 0.8470)]


@pytest.mark.parametrize("name,theta,expected", GGX_ALBEDO)
def test_ggx_energy_loss_is_the_known_single_scattering_loss(name, theta, expected):
    dirs, dw = hemisphere_grid(2400, 800)
    albedo = evaluate(name, direction(theta), dirs)[:, 0].sum() * dw
    assert albedo == pytest.approx(expected, abs=2e-3)


@pytest.mark.parametrize("alpha", [0.1, 0.4, 1.0])
@pytest.mark.parametrize("theta", [0.0, 40.0, 75.0])
def test_ggx_normalisation_and_visible_normals(alpha, theta):
    # int D(m) cos(m) dm = 1 and int G1(wi, m) max(0, wi.m) D(m) dm = cos(theta_i)
    # (Heitz 2014), by quadrature in (cos theta_m, phi) with points packed near the pole
    n_t, n_p = 4000, 400
    t = (np.arange(n_t) + 0.5) / n_t
    mu = 1.0 / np.sqrt(1.0 + (alpha * np.tan(t * np.pi / 2)) ** 2)   # cos theta_m, dense where D is
    dmu_dt = np.gradient(mu, t)
    phi = (np.arange(n_p) + 0.5) / n_p * 2 * np.pi
    MU, PHI = np.meshgrid(mu, phi, indexing="ij")
    S = np.sqrt(1 - MU * MU)
    ms = np.stack([S * np.cos(PHI), S * np.sin(PHI), MU], axis=-1).reshape(-1, 3)
    w = (np.abs(dmu_dt)[:, None] / n_t * np.ones((1, n_p)) * 2 * np.pi / n_p).ravel()
    wi = direction(theta)
    vals = _ggx_many(alpha, wi, ms)
    assert (vals[:, 0] * ms[:, 2] * w).sum() == pytest.approx(1.0, abs=2e-3)
    assert (vals[:, 1] * w).sum() == pytest.approx(wi[2], abs=2e-3)


@pytest.mark.parametrize("name", ["white", "brick", "ggx_mid", "gold"])
def test_reciprocity(name):
    rng = np.random.default_rng(3)
    for _ in range(200):
        a = rng.normal(size=3)
        b = rng.normal(size=3)
        a[2], b[2] = abs(a[2]) + 0.05, abs(b[2]) + 0.05
        a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
        fab = evaluate(name, a, b[None])[0, :3] / b[2]
        fba = evaluate(name, b, a[None])[0, :3] / a[2]
        np.testing.assert_allclose(fab, fba, rtol=1e-10, atol=1e-14)


def test_mirror_reflects_with_its_colour():
    wi = direction(35.0, 70.0)
    s = sample("mirror", wi, n=10)
    np.testing.assert_allclose(s[:, :3], np.tile([-wi[0], -wi[1], wi[2]], (10, 1)), atol=1e-15)
    np.testing.assert_allclose(s[:, 3:6], np.tile([0.9, 0.5, 0.25], (10, 1)))
    assert (s[:, 7] == 1).all()
    # a pure delta BSDF evaluates to zero and is not a target for light sampling
    assert np.all(evaluate("mirror", wi, s[:, :3]) == 0)
    assert not bsdf_has_smooth(TABLE, ROW["mirror"], *colour("mirror"))


def fresnel_reference(cos_i, n1, n2):
    """Fresnel equations for unpolarised light, written from the textbook form."""
    sin_t = n1 / n2 * math.sqrt(max(0.0, 1 - cos_i ** 2))
    if sin_t >= 1:
        return 1.0
    cos_t = math.sqrt(1 - sin_t ** 2)
    rs = ((n1 * cos_i - n2 * cos_t) / (n1 * cos_i + n2 * cos_t)) ** 2
    rp = ((n1 * cos_t - n2 * cos_i) / (n1 * cos_t + n2 * cos_i)) ** 2
    return 0.5 * (rs + rp)


def test_dielectric_fresnel_snell_and_total_internal_reflection():
    n = 1.5
    assert fresnel_dielectric(1.0, n)[0] == pytest.approx(((n - 1) / (n + 1)) ** 2, rel=1e-12)
    for deg in (0, 20, 45, 70, 89):
        c = math.cos(math.radians(deg))
        assert fresnel_dielectric(c, n)[0] == pytest.approx(fresnel_reference(c, 1.0, n), rel=1e-10)
        assert fresnel_dielectric(c, 1 / n)[0] == pytest.approx(fresnel_reference(c, n, 1.0), rel=1e-10)
        # reciprocity of the Fresnel factor: F(theta_i, n) = F(theta_t, 1/n)
        f, cos_t = fresnel_dielectric(c, n)
        assert fresnel_dielectric(cos_t, 1 / n)[0] == pytest.approx(f, rel=1e-9, abs=1e-12)
    critical = math.degrees(math.asin(1 / n))
    assert fresnel_dielectric(math.cos(math.radians(critical + 0.5)), 1 / n) == (1.0, 0.0)
    assert fresnel_dielectric(math.cos(math.radians(critical - 0.5)), 1 / n)[0] < 1.0


@pytest.mark.parametrize("theta", [0.0, 30.0, 60.0, 85.0])
@pytest.mark.parametrize("eta", [1.5, 1 / 1.5])
def test_dielectric_sampling_is_lossless_and_obeys_snell(theta, eta):
    wi = direction(theta)
    s = sample("glass", wi, n=100_000, eta=eta)
    refl = s[:, 2] > 0
    f = fresnel_dielectric(wi[2], eta)[0]
    assert refl.mean() == pytest.approx(f, abs=5 * math.sqrt(f * (1 - f) / len(s)) + 1e-9)
    np.testing.assert_allclose(s[refl, :3], np.tile([-wi[0], -wi[1], wi[2]], (refl.sum(), 1)), atol=1e-14)
    # energy: reflected weight 1, refracted 1/eta^2 (radiance), so weight * eta^2 is 1
    np.testing.assert_allclose(s[:, 3] * s[:, 8] ** 2, 1.0, rtol=1e-12)
    if (~refl).any():
        t = s[~refl, :3]
        sin_i = math.sqrt(1 - wi[2] ** 2)
        np.testing.assert_allclose(np.hypot(t[:, 0], t[:, 1]), sin_i / eta, rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(np.linalg.norm(t, axis=1), 1.0, rtol=1e-12)
        # the refracted ray stays in the plane of incidence, on the far side
        assert np.all(t[:, 0] * wi[0] + t[:, 1] * wi[1] <= 1e-15)


def test_course_material_lobes_add_up():
    # phong + transmit: E[weight] = k_d + F reflect + (1 - F) transmit / eta^2
    wi = direction(40.0)
    eta = 1.4
    s = sample("course_glass", wi, n=400_000, eta=eta)
    f = fresnel_dielectric(wi[2], eta)[0]
    expected = np.array([0.1, 0.1, 0.1]) + f * 1.0 + (1 - f) * np.array([0.8, 0.9, 1.0]) / eta ** 2
    err = s[:, 3:6].std(axis=0) / math.sqrt(len(s))
    assert np.all(np.abs(s[:, 3:6].mean(axis=0) - expected) < 5 * err)


def test_mis_weights_of_two_strategies_sum_to_one():
    rng = np.random.default_rng(0)
    pairs = list(rng.exponential(size=(500, 2))) + [(0.0, 1.0), (1.0, 0.0), (math.inf, 2.0),
                                                    (1e300, 1e-300), (1e-300, 1e-300)]
    for a, b in pairs:
        wa, wb = mis_weight(a, b), mis_weight(b, a)
        assert 0.0 <= wa <= 1.0 and 0.0 <= wb <= 1.0
        assert wa + wb == pytest.approx(1.0, abs=1e-12)
        if 1e-150 < a < 1e150 and 1e-150 < b < 1e150:
            assert wa == pytest.approx(a * a / (a * a + b * b), rel=1e-12)
    assert mis_weight(0.0, 0.0) == 0.0
