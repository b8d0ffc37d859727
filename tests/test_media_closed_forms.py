"""Participating media against closed forms (docs/media.md, docs/path-tracing.md).

- slab transmittance exp(-sigma_t d): the volumetric path tracer (max_depth 1: what
  reaches an emitter behind the slab unscattered), homogeneous (chromatic: the spectral
  MIS) and on a grid; the transmittance view and the Whitted integrator's Beer-Lambert
  attenuation exactly;
- a white furnace: a medium of albedo 1 in a constant environment of radiance 1 leaves
  every pixel at 1 (homogeneous, chromatic and anisotropic; a grid);
- single scattering in a thin homogeneous slab under a directional light (max_depth 2),
  with its analytic value, for Henyey-Greenstein g = 0.5 and chromatic coefficients;
- the Henyey-Greenstein sampling routine against its density by chi-square tests.

Statistical checks compare the image mean with the closed form in units of its standard
error, estimated from the render's own per-pixel variance (independent sampler, so the
estimate is unbiased); each has a negative control: a slightly wrong closed form (10 %
more extinction, g's sign flipped, albedo 0.97) must fail the same check.
"""
import math

import numpy as np
import pytest

import raytrace
from raytrace.scene.volgrid import write_vol
from raytrace.views import render_view

Z = 5.0     # standard errors allowed


def _slab_scene(medium, thickness=1.5, kind="null", camera_medium=None):
    """An orthographic camera looking down -z through a box of ``medium`` (a null box, or
    a dielectric of ior 1: index-matched) at an emitter of radiance 1 behind it."""
    scene = {
        "camera": {"type": "orthographic", "center": [0, 0, 5], "direction": [0, 0, -1], "height": 1.0},
        "image": {"width": 8, "height": 8, "filter": "box"},
        "integrator": {"type": "path", "max_depth": 1},
        "materials": {"box": {"type": "null"} if kind == "null" else {"type": "dielectric", "ior": 1.0},
                      "black": {"type": "diffuse", "albedo": [0, 0, 0]}},
        "media": {"m": medium},
        "objects": [
            {"type": "rectangle", "material": "black", "emission": [1, 1, 1],
             "transform": [{"translate": [0, 0, -3]}, {"scale": 4}]},
            {"type": "cube", "material": "box", "interior": "m",
             "transform": [{"scale": [3, 3, thickness / 2]}]},
        ],
    }
    return scene


def _mean_and_se(img):
    """Image mean per channel and its standard error (from the per-pixel variance of
    the mean that ``variance=True`` gives; pixels independent)."""
    x = np.asarray(img, np.float64)
    var = np.asarray(img.variance, np.float64)
    n = x.shape[0] * x.shape[1]
    return x.mean(axis=(0, 1)), np.sqrt(var.sum(axis=(0, 1))) / n


def _agrees(mean, se, want):
    return bool(np.all(np.abs(mean - want) <= Z * se + 1e-12))


SIGMA = np.array([0.3, 0.7, 1.5])


@pytest.mark.parametrize("kind", ["homogeneous", "grid"])
def test_slab_transmittance(kind, tmp_path):
    d = 1.5
    if kind == "homogeneous":
        medium = {"type": "homogeneous", "sigma_t": SIGMA.tolist(), "albedo": 0.5}
    else:       # a constant grid of 3 channels: the same extinction inside its box
        write_vol(tmp_path / "c.vol", np.broadcast_to(SIGMA.astype(np.float32), (3, 4, 5, 3)))
        medium = {"type": "heterogeneous", "sigma_t": {"type": "grid", "file": "c.vol"}, "albedo": 0.5,
                  "transform": [{"scale": [3, 3, d / 2]}]}
    scene = raytrace.load_scene(_slab_scene(medium, d), base_dir=tmp_path)
    img = raytrace.render(scene, spp=1024, seed=3, sampler="independent", variance=True)
    mean, se = _mean_and_se(img)
    want = np.exp(-SIGMA * d)
    assert _agrees(mean, se, want), (mean, want, se)
    assert not _agrees(mean, se, np.exp(-1.1 * SIGMA * d))          # negative control
    view = render_view(scene, "transmittance", width=8, height=8)
    # exactly, but for the epsilon (1e-4) by which a ray's origin moves past each boundary
    np.testing.assert_allclose(view.data["optical_depth"], np.broadcast_to(SIGMA * d, (8, 8, 3)), rtol=1e-4)
    np.testing.assert_allclose(view.image, np.broadcast_to(want, (8, 8, 3)), rtol=1e-3)
    assert not np.allclose(view.image, np.exp(-1.01 * SIGMA * d), rtol=1e-3)


@pytest.mark.parametrize("kind", ["null", "dielectric"])
def test_whitted_beer_lambert(kind):
    """Whitted: the emitter seen through the box is exp(-sigma_t d) times its radiance,
    deterministically; without the medium it is 1."""
    d = 1.5
    scene = _slab_scene({"type": "homogeneous", "sigma_t": SIGMA.tolist(), "albedo": 0.9}, d, kind)
    scene["integrator"] = {"type": "whitted", "bounces": 4}
    img = np.asarray(raytrace.render(raytrace.load_scene(scene)), np.float64)
    np.testing.assert_allclose(img, np.broadcast_to(np.exp(-SIGMA * d), img.shape), rtol=1e-3)
    del scene["objects"][1]["interior"]
    clear = np.asarray(raytrace.render(raytrace.load_scene(scene)), np.float64)
    np.testing.assert_allclose(clear, 1.0, rtol=1e-3)


def _furnace_scene(medium, base):
    return {
        "camera": {"center": [0, 0, 4], "look_at": [0, 0, 0], "fov": 35},
        "image": {"width": 12, "height": 12, "filter": "box"},
        "integrator": {"type": "path", "max_depth": -1, "rr_depth": 5},
        "background": {"color": [1, 1, 1]},
        "materials": {"boundary": {"type": "null"}},
        "media": {"m": medium},
        "objects": [{"type": "sphere", "radius": 1.0, "material": "boundary", "interior": "m"}],
    }


@pytest.mark.parametrize("kind", ["chromatic_hg", "grid"])
def test_white_furnace(kind, tmp_path):
    """An albedo-1 medium in a constant environment of radiance 1: 1 everywhere."""
    if kind == "grid":
        z, y, x = np.meshgrid(*(np.linspace(-1, 1, 16),) * 3, indexing="ij")
        write_vol(tmp_path / "g.vol", np.clip(1.2 - np.sqrt(x * x + y * y + z * z), 0, None) * 3.0)
        medium = {"type": "heterogeneous", "sigma_t": {"type": "grid", "file": "g.vol"}, "albedo": 1.0,
                  "phase": {"type": "hg", "g": -0.3}}
    else:
        medium = {"type": "homogeneous", "sigma_t": [0.5, 1.5, 4.0], "albedo": 1.0,
                  "phase": {"type": "hg", "g": 0.6}}
    results = {}
    for albedo in (1.0, 0.97):
        medium = dict(medium, albedo=albedo)
        scene = raytrace.load_scene(_furnace_scene(medium, tmp_path), base_dir=tmp_path)
        img = raytrace.render(scene, spp=256, seed=5, sampler="independent", variance=True)
        results[albedo] = _mean_and_se(img)
        assert img.info.nonfinite == 0
    mean, se = results[1.0]
    assert _agrees(mean, se, 1.0), results[1.0]
    mean, se = results[0.97]
    assert not _agrees(mean, se, 1.0), results[0.97]          # a little absorption shows


def _single_scattering(sigma_t, albedo, g, mu_v, mu_l, cos_theta, d):
    """Radiance of single scattering (per channel) from a slab of thickness d lit by a
    directional light of irradiance 1, seen at mu_v (cosine to the normal) with the light
    at mu_l, the scattering angle theta: sigma_s p(theta) (1 - exp(-sigma_t d (1/mu_v +
    1/mu_l))) / (sigma_t (1 + mu_v / mu_l))."""
    p = (1 - g * g) / (4 * math.pi * (1 + g * g - 2 * g * cos_theta) ** 1.5)
    return albedo * sigma_t * p * (1 - np.exp(-sigma_t * d * (1 / mu_v + 1 / mu_l))) / (sigma_t * (1 + mu_v / mu_l))


def test_single_scattering_slab():
    a, b = math.radians(35.0), math.radians(20.0)     # light and view angles from the normal (+y)
    light = [math.sin(a), -math.cos(a), 0.0]          # direction of travel, down and to +x
    view = [-math.sin(b), -math.cos(b), 0.0]          # the camera looks down and to -x
    d, g = 0.15, 0.5
    sigma = np.array([0.8, 2.0, 4.0])
    albedo = np.array([0.9, 0.7, 0.5])
    scene = {
        "camera": {"type": "orthographic", "center": [3 * math.sin(b), 3 * math.cos(b), 0.0],
                   "direction": view, "height": 0.5},
        "image": {"width": 10, "height": 10, "filter": "box"},
        "integrator": {"type": "path", "max_depth": 2},
        "lights": [{"type": "directional", "direction": light, "color": [1 / math.pi] * 3}],
        "materials": {"boundary": {"type": "null"}},
        "media": {"slab": {"type": "homogeneous", "sigma_s": (albedo * sigma).tolist(),
                           "sigma_a": ((1 - albedo) * sigma).tolist(), "phase": {"type": "hg", "g": g}}},
        "objects": [{"type": "cube", "material": "boundary", "interior": "slab",
                     "transform": [{"translate": [0, -d / 2, 0]}, {"scale": [40, d / 2, 40]}]}],
    }
    img = raytrace.render(raytrace.load_scene(scene), spp=1024, seed=2, sampler="independent", variance=True)
    mean, se = _mean_and_se(img)
    cos_theta = -float(np.dot(light, view))
    want = _single_scattering(sigma, albedo, g, math.cos(b), math.cos(a), cos_theta, d)
    assert _agrees(mean, se, want), (mean, want, se)
    flipped = _single_scattering(sigma, albedo, -g, math.cos(b), math.cos(a), cos_theta, d)
    assert not _agrees(mean, se, flipped), (mean, flipped, se)


# ---------------------------------------------------------------- the phase function
def _hg_samples(g, n, seed):
    from numba import njit

    from raytrace.kernels.media import hg_sample

    @njit
    def run(g, d, u, out):
        for k in range(u.shape[0]):
            out[k, 0], out[k, 1], out[k, 2], out[k, 3] = hg_sample(g, d[0], d[1], d[2], u[k, 0], u[k, 1])

    d = np.array([0.36, -0.48, 0.8])
    u = np.random.default_rng(seed).random((n, 2))
    out = np.empty((n, 4))
    run(g, d, u, out)
    return d, out


def hg_cdf(g, mu):
    """P(cos theta <= mu) for Henyey-Greenstein (isotropic for g = 0)."""
    if abs(g) < 1e-9:
        return (mu + 1) / 2
    return (1 - g * g) / (2 * g) * ((1 + g * g - 2 * g * mu) ** -0.5 - 1 / (1 + g))


@pytest.mark.parametrize("g", [0.0, 0.7, -0.4, 0.95])
def test_hg_sampling_matches_its_density(g):
    """Samples of ``kernels.media.hg_sample``: the cosine to the travel direction follows
    the HG distribution (chi-square over 40 bins of equal probability), the azimuth is
    uniform (chi-square over cos x azimuth cells), the returned pdf is the HG density,
    which integrates to 1; the distribution of -g is rejected."""
    stats = pytest.importorskip("scipy.stats")
    from raytrace.kernels.media import hg_pdf
    n = 200_000
    d, out = _hg_samples(g, n, seed=11)
    w = out[:, :3]
    np.testing.assert_allclose(np.linalg.norm(w, axis=1), 1.0, atol=1e-12)
    cos = w @ d
    edges = np.array([-1.0] + [_inverse_cdf(g, q) for q in np.linspace(0, 1, 41)[1:-1]] + [1.0])
    counts, _ = np.histogram(cos, edges)
    assert stats.chisquare(counts).pvalue > 1e-4
    if abs(g) > 0.05:          # the distribution of -g is told apart
        wrong = np.diff([hg_cdf(-g, e) for e in edges]) * n
        assert stats.chisquare(counts, wrong).pvalue < 1e-12
    # azimuth around d: uniform, also within each band of cos
    t = np.cross(d, [0.0, 0.0, 1.0])
    t /= np.linalg.norm(t)
    b = np.cross(d, t)
    phi = np.arctan2(w @ b, w @ t)
    band = np.digitize(cos, edges[::8][1:-1])
    cells, _, _ = np.histogram2d(band, phi, bins=[5, 12], range=[[-0.5, 4.5], [-np.pi, np.pi]])
    assert stats.chisquare(cells.ravel()).pvalue > 1e-4
    np.testing.assert_allclose(out[:2000, 3], [hg_pdf(g, c) for c in cos[:2000]], rtol=1e-9)
    mu = np.linspace(-1, 1, 200001)
    integral = 2 * np.pi * np.trapezoid([hg_pdf(g, m) for m in mu], mu)
    assert abs(integral - 1.0) < 1e-4


def _inverse_cdf(g, q):
    lo, hi = -1.0, 1.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if hg_cdf(g, mid) < q:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _trilinear_numpy(vox, x):
    """Trilinear density of a (nz, ny, nx) grid at voxel points x (N, 3) (centres at
    i + 0.5, clamped at the faces), written out in NumPy."""
    n = np.array(vox.shape[::-1])
    f = x - 0.5
    i0 = np.floor(f).astype(int)
    w = f - i0
    lo, hi = np.clip(i0, 0, n - 1), np.clip(i0 + 1, 0, n - 1)
    out = np.zeros(len(x))
    for corner in range(8):
        pick = [(hi if corner >> a & 1 else lo)[:, a] for a in range(3)]
        weight = np.prod([w[:, a] if corner >> a & 1 else 1 - w[:, a] for a in range(3)], axis=0)
        out += weight * vox[pick[2], pick[1], pick[0]]
    return out


def test_grid_optical_depth_is_the_integral_of_the_density(tmp_path):
    """The optical depth of a grid (majorant_walk's DEPTH client: the midpoint rule over
    each majorant cell the ray crosses, cells of zero majorant skipped) against the
    integral of the trilinear density along the ray, computed in NumPy with 200,000
    midpoints; a ramp with an empty third and a bump, along three rays. Control: a 5 %
    denser grid's answer differs."""
    from raytrace.kernels.media import optical_depth
    from raytrace.layout import G_DENSITY, G_NX, G_NY, G_NZ
    z, y, x = np.mgrid[:6, :5, :16]
    density = np.where(x < 5, 0.0, x / 4.0 + np.exp(-((x - 11) ** 2 + (y - 2) ** 2) / 3.0)).astype(np.float32)
    write_vol(tmp_path / "g.vol", density)
    medium = {"type": "heterogeneous", "sigma_t": {"type": "grid", "file": "g.vol"}, "scale": 0.7,
              "albedo": 0.5, "transform": [{"scale": [2, 1, 1]}]}
    media = raytrace.load_scene(_slab_scene(medium, 1.0), base_dir=tmp_path).media
    row = media.grid[0]
    n = (row[G_NX], row[G_NY], row[G_NZ])
    vox = media.voxels[row[G_DENSITY]:row[G_DENSITY] + n[0] * n[1] * n[2]].reshape(n[2], n[1], n[0])
    a = media.to_grid[0]
    for o, d in [((-3.0, 0.1, 0.2), (1.0, 0.0, 0.0)), ((-3.0, -0.9, -0.7), (0.8, 0.36, 0.48)),
                 ((0.5, 2.0, 0.1), (0.0, -1.0, 0.0))]:
        o, d = np.array(o), np.array(d) / np.linalg.norm(d)
        tmax = 6.0
        got = np.array(optical_depth(media, 0, *o, *d, tmax))
        t = (np.arange(200_000) + 0.5) * (tmax / 200_000)
        pts = (o + t[:, None] * d) @ a[:, :3].T + a[:, 3]
        inside = np.all((pts >= 0) & (pts <= np.array(n)), axis=1)
        want = media.sigma_t[0] * (_trilinear_numpy(vox, pts[inside]).sum() * tmax / 200_000)
        assert want.max() > 0.5, want                                   # the ray meets the medium
        np.testing.assert_allclose(got, want, rtol=2e-3)
        assert not np.allclose(got, 1.05 * want, rtol=2e-3)             # negative control
