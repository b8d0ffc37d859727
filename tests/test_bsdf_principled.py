"""Our ``rough_conductor`` against Mitsuba 3's ``principled`` BSDF with ``metallic: 1``.

Mitsuba's principled BSDF, fully metallic, is GGX with visible-normal sampling, separable
Smith masking and Schlick's Fresnel with F0 = ``base_color`` (its other lobes are
weighted by 1 - metallic), and alpha = roughness^2. Ours is the same with F0 =
``reflectance`` and ``alpha`` given directly. Both ``eval`` (f cos theta_o) and ``pdf``
are compared for several colours, roughnesses and pairs of directions; controls with
another alpha convention, colour or anisotropy must not match. Skips without Mitsuba.
"""
import math

import numpy as np
import pytest

mi = pytest.importorskip("mitsuba")

import raytrace  # noqa: E402,F401  (configures the Numba cache)
from raytrace.kernels.bsdf import bsdf_eval  # noqa: E402
from raytrace.layout import M_COLOR  # noqa: E402
from raytrace.scene.build import material_table  # noqa: E402

COLOURS = [(1.0, 1.0, 1.0), (1.0, 0.78, 0.34), (0.2, 0.5, 0.9), (0.05, 0.05, 0.05)]
ROUGHNESS = [0.1, 0.3, 0.5, 0.8, 1.0]
# (theta_i, phi_i, theta_o, phi_o) in degrees: near-specular, off-specular, grazing
PAIRS = [(0, 0, 30, 180), (30, 0, 30, 180), (60, 10, 20, 200), (80, 0, 75, 180),
         (45, 0, 60, 90), (10, 0, 85, 30), (70, 40, 50, 250)]
RTOL = 1e-5          # Mitsuba's scalar_rgb computes in float32


@pytest.fixture(scope="module", autouse=True)
def variant():
    mi.set_variant("scalar_rgb")


def direction(theta_deg, phi_deg):
    t, p = math.radians(theta_deg), math.radians(phi_deg)
    return (math.sin(t) * math.cos(p), math.sin(t) * math.sin(p), math.cos(t))


def ours(colour, alpha, wi, wo):
    """-> (f cos_o r, g, b, pdf) of our rough_conductor, through the kernel."""
    names, table = material_table({"m": {"type": "rough_conductor", "reflectance": list(colour),
                                         "alpha": alpha}})
    m = names.index("m")
    cr, cg, cb = table[m, M_COLOR:M_COLOR + 3]
    return np.array(bsdf_eval(table, m, cr, cg, cb, 1.0, *wi, *wo))


def principled(colour, roughness, wi, wo, **extra):
    """-> (f cos_o r, g, b, pdf) of Mitsuba's principled BSDF with metallic 1."""
    bsdf = mi.load_dict({"type": "principled", "metallic": 1.0, "roughness": roughness,
                         "base_color": {"type": "rgb", "value": list(colour)}, **extra})
    si = mi.SurfaceInteraction3f()
    si.wi = mi.Vector3f(*wi)
    si.n = mi.Vector3f(0, 0, 1)
    si.sh_frame = mi.Frame3f(si.n)
    ctx = mi.BSDFContext()
    value = bsdf.eval(ctx, si, mi.Vector3f(*wo))
    return np.array([value[0], value[1], value[2], bsdf.pdf(ctx, si, mi.Vector3f(*wo))])


def all_cases():
    for colour in COLOURS:
        for rough in ROUGHNESS:
            for ti, pi_, to, po in PAIRS:
                yield colour, rough, direction(ti, pi_), direction(to, po)


@pytest.mark.parametrize("colour", COLOURS)
@pytest.mark.parametrize("roughness", ROUGHNESS)
def test_rough_conductor_is_fully_metallic_principled(colour, roughness):
    for ti, pi_, to, po in PAIRS:
        wi, wo = direction(ti, pi_), direction(to, po)
        a, m = ours(colour, roughness ** 2, wi, wo), principled(colour, roughness, wi, wo)
        assert m[3] > 0.0                             # a direction the lobe reaches
        np.testing.assert_allclose(a, m, rtol=RTOL, err_msg=f"{ti, pi_, to, po}")


def test_schlick_term_is_in_both():
    # the colour enters through Schlick's F = c + (1 - c)(1 - wi.h)^5: at grazing
    # incidence a dark metal's reflection rises far above c; both agree on it
    wi, wo = direction(80, 0), direction(80, 180)        # h = n, wi.h = cos 80 degrees
    a, m = ours((0.05, 0.05, 0.05), 0.09, wi, wo), principled((0.05, 0.05, 0.05), 0.3, wi, wo)
    white = ours((1, 1, 1), 0.09, wi, wo)
    f = 0.05 + 0.95 * (1 - math.cos(math.radians(80))) ** 5
    assert a[0] / white[0] == pytest.approx(f, rel=1e-12)
    assert m[0] / white[0] == pytest.approx(f, rel=RTOL)
    assert f > 0.3


def relative_gap(a, m):
    return np.max(np.abs(a[:3] - m[:3]) / np.maximum(m[:3], 1e-12))


def test_negative_control_alpha_equal_to_roughness_does_not_match():
    gaps = [relative_gap(ours(c, r, wi, wo), principled(c, r, wi, wo))
            for c, r, wi, wo in all_cases() if r < 1.0]        # (alpha = r^2 = r at r = 1)
    assert min(gaps) > 0.01


def test_negative_control_another_colour_does_not_match():
    gaps = [relative_gap(ours((0.9, 0.7, 0.3), r * r, wi, wo), principled(c, r, wi, wo))
            for c, r, wi, wo in all_cases() if c != (0.9, 0.7, 0.3)]
    assert min(gaps) > 0.01


def test_negative_control_anisotropy_does_not_match():
    # our GGX is isotropic; principled's `anisotropic` stretches alpha along x and y
    wi, wo = direction(30, 0), direction(40, 170)
    a = ours((1.0, 0.78, 0.34), 0.25, wi, wo)
    assert relative_gap(a, principled((1.0, 0.78, 0.34), 0.5, wi, wo)) < RTOL
    assert relative_gap(a, principled((1.0, 0.78, 0.34), 0.5, wi, wo, anisotropic=0.5)) > 0.01


def test_tint_and_specular_do_not_act_on_a_full_metal():
    # principled's `spec_tint` and `specular` (its dielectric F0) are weighted by
    # 1 - metallic: with metallic 1 they change nothing, so they need no counterpart
    wi, wo = direction(30, 0), direction(40, 170)
    base = principled((1.0, 0.78, 0.34), 0.5, wi, wo)
    for extra in ({"spec_tint": 0.8}, {"specular": 0.9}, {"specular": 0.1}):
        np.testing.assert_allclose(principled((1.0, 0.78, 0.34), 0.5, wi, wo, **extra), base, rtol=1e-6)
    # control: with metallic below 1 they do
    half = mi.load_dict({"type": "principled", "metallic": 0.5, "roughness": 0.5, "specular": 0.9,
                         "base_color": {"type": "rgb", "value": [1.0, 0.78, 0.34]}})
    half_low = mi.load_dict({"type": "principled", "metallic": 0.5, "roughness": 0.5, "specular": 0.1,
                             "base_color": {"type": "rgb", "value": [1.0, 0.78, 0.34]}})
    si = mi.SurfaceInteraction3f()
    si.wi = mi.Vector3f(*wi)
    si.n = mi.Vector3f(0, 0, 1)
    si.sh_frame = mi.Frame3f(si.n)
    ctx = mi.BSDFContext()
    v1, v2 = half.eval(ctx, si, mi.Vector3f(*wo)), half_low.eval(ctx, si, mi.Vector3f(*wo))
    assert abs(v1[0] - v2[0]) > 0.01 * abs(v2[0])
