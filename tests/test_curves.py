"""curves: evaluation against SciPy and geomdl, basis conversions, derivatives."""
import numpy as np
import pytest
from geomdl import BSpline as GBSpline
from scipy.interpolate import BPoly, BSpline, CubicHermiteSpline

from curves import basis, bspline, cubic
from curves.curve import BSplineCurve, Curve

RTOL = 1e-12


def rel_err(a, b):
    """max |a - b| / max |b|: the 'relative' in 'agree to 1e-12 relative'."""
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(b)))


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


@pytest.mark.parametrize("dim", [2, 3])
def test_uniform_bspline_matches_scipy(rng, dim):
    n = 17                                               # segments
    P = rng.normal(size=(n + 3, dim))
    t = np.concatenate([rng.uniform(0, n, 400), np.arange(n + 1.0)])
    ref = BSpline(np.arange(-3.0, n + 4), P, 3)
    out = cubic.evaluate_all(P, t, "bspline", 3)
    for d in range(4):
        assert rel_err(out[d], ref(t, d)) < RTOL, d


def test_piecewise_bezier_matches_scipy_bpoly(rng):
    n = 9
    P = rng.normal(size=(3 * n + 1, 3))
    coeffs = np.stack([P[3 * np.arange(n) + a] for a in range(4)])   # (4, n, 3)
    ref = BPoly(coeffs, np.arange(n + 1.0))
    t = np.concatenate([rng.uniform(0, n, 300), [0.0, n]])
    out = cubic.evaluate_all(P, t, "bezier", 3)
    for d in range(4):
        assert rel_err(out[d], ref(t, d)) < RTOL, d


def test_catmull_rom_is_the_hermite_spline_of_central_differences(rng):
    n = 8
    P = rng.normal(size=(n + 3, 2))
    ref = CubicHermiteSpline(np.arange(n + 1.0), P[1:n + 2], (P[2:] - P[:-2]) / 2)
    t = rng.uniform(0, n, 300)
    for d in range(3):
        assert rel_err(cubic.evaluate(P, t, "catmull_rom", d), ref(t, d)) < RTOL
    # it interpolates the inner control points
    np.testing.assert_allclose(cubic.evaluate(P, np.arange(n + 1.0), "catmull_rom"),
                               P[1:n + 2], rtol=0, atol=1e-15)


@pytest.mark.parametrize("degree", [1, 2, 3, 4, 5])
def test_general_bspline_random_knots_matches_scipy(rng, degree):
    n = 14
    knots = np.sort(rng.uniform(-1, 2, n + degree + 1))
    P = rng.normal(size=(n, 3))
    t = np.concatenate([rng.uniform(knots[degree], knots[n], 200), knots[degree:n + 1]])
    ref = BSpline(knots, P, degree)
    out = bspline.evaluate_all(knots, P, degree, t, degree + 1)
    for d in range(degree + 2):
        r = ref(t, d)
        if np.max(np.abs(r)) == 0:
            assert np.max(np.abs(out[d])) == 0
        else:
            assert rel_err(out[d], r) < RTOL, (degree, d)


def test_clamped_knots_with_multiplicity_match_scipy(rng):
    p, n = 3, 12
    inner = np.sort(rng.choice(np.linspace(0.05, 0.95, 7), n - p - 1))   # repeats happen
    inner[3] = inner[4] = inner[5]                                      # multiplicity 3
    knots = np.concatenate([np.zeros(p + 1), inner, np.ones(p + 1)])
    P = rng.normal(size=(n, 3))
    t = np.linspace(0, 1, 301)
    out = bspline.evaluate_all(knots, P, p, t, 2)
    for d in range(3):
        assert rel_err(out[d], BSpline(knots, P, p)(t, d)) < RTOL
    np.testing.assert_array_equal(out[0][0], P[0])                       # clamped ends
    np.testing.assert_allclose(out[0][-1], P[-1], rtol=0, atol=1e-15)


@pytest.mark.parametrize("degree", [2, 3, 4])
def test_general_bspline_matches_geomdl(rng, degree):
    n = 9
    inner = np.sort(rng.uniform(0, 1, n - degree - 1))
    knots = np.concatenate([np.zeros(degree + 1), inner, np.ones(degree + 1)])
    P = rng.normal(size=(n, 3))
    g = GBSpline.Curve()
    g.degree = degree
    g.ctrlpts = P.tolist()
    g.knotvector = knots.tolist()
    t = np.concatenate([rng.uniform(0, 1, 40), [0.0, 1.0]])
    ref = np.array([g.derivatives(float(u), order=2) for u in t])      # (m, 3, 3)
    out = bspline.evaluate_all(knots, P, degree, t, 2)
    for d in range(3):
        assert rel_err(out[d], ref[:, d]) < RTOL, d


def test_bezier_any_degree_matches_bpoly(rng):
    P = rng.normal(size=(7, 3))                          # degree 6
    ref = BPoly(P[:, None, :], [0.0, 1.0])
    t = rng.uniform(0, 1, 100)
    for d in range(3):
        assert rel_err(bspline.evaluate_bezier(P, t, d), ref(t, d)) < RTOL


def test_vectorised_over_curves_and_parameters(rng):
    P = rng.normal(size=(2, 3, 10, 3))                   # 6 curves, 7 segments each
    t_shared = rng.uniform(0, 7, 50)
    t_each = rng.uniform(0, 7, (2, 3, 50))
    shared = cubic.evaluate(P, t_shared, "bspline", 1)
    each = cubic.evaluate(P, t_each, "bspline", 0)
    assert shared.shape == each.shape == (2, 3, 50, 3)
    for a in range(2):
        for b in range(3):
            np.testing.assert_array_equal(shared[a, b], cubic.evaluate(P[a, b], t_shared, "bspline", 1))
            np.testing.assert_array_equal(each[a, b], cubic.evaluate(P[a, b], t_each[a, b]))
    knots = bspline.uniform_knots(10, 3)
    gen = bspline.evaluate(knots, P, 3, t_each + 0.0, 0)
    np.testing.assert_allclose(gen, each, rtol=0, atol=1e-13)


@pytest.mark.parametrize("src", basis.BASES)
@pytest.mark.parametrize("dst", basis.BASES)
def test_basis_change_round_trip_and_same_curve(rng, src, dst):
    G = rng.normal(size=(4, 3))
    C, Cinv = basis.basis_change(src, dst), basis.basis_change(dst, src)
    np.testing.assert_allclose(Cinv @ (C @ G), G, rtol=0, atol=1e-14)
    s = np.linspace(0, 1, 11)
    np.testing.assert_allclose(cubic.evaluate(C @ G, s, dst), cubic.evaluate(G, s, src),
                               rtol=0, atol=1e-14)


def test_exact_matrices_are_the_textbook_ones():
    assert np.array_equal(basis.basis_change("bspline", "bezier") * 6,
                          [[1, 4, 1, 0], [0, 4, 2, 0], [0, 2, 4, 0], [0, 1, 4, 1]])
    np.testing.assert_allclose(basis.basis_change("bezier", "bspline"),
                               np.linalg.inv(basis.basis_change("bspline", "bezier")), atol=1e-14)


def test_piecewise_conversion_round_trip(rng):
    P = rng.normal(size=(12, 3))                          # 9 B-spline segments
    Z = cubic.bspline_to_bezier(P)
    assert Z.shape == (28, 3)
    t = rng.uniform(0, 9, 200)
    np.testing.assert_allclose(cubic.evaluate(Z, t, "bezier"), cubic.evaluate(P, t), atol=1e-14)
    np.testing.assert_allclose(cubic.bezier_to_bspline(Z), P, rtol=0, atol=1e-13)
    # per-segment conversion draws the same curve
    segs = cubic.convert_segments(P, "bspline", "catmull_rom")
    for i in range(9):
        s = np.linspace(0, 1, 7)
        np.testing.assert_allclose(cubic.evaluate(segs[i], s, "catmull_rom"),
                                   cubic.evaluate(P, i + s), atol=1e-13)


def test_bezier_that_is_not_c2_is_refused(rng):
    Z = rng.normal(size=(7, 3))
    with pytest.raises(ValueError, match="not C2 near joint"):
        cubic.bezier_to_bspline(Z)


def test_general_to_bezier_and_back(rng):
    p, n = 3, 10
    knots = np.sort(rng.uniform(0, 1, n + p + 1))          # unclamped, random
    P = rng.normal(size=(n, 3))
    breaks, segs = bspline.to_bezier(knots, P, p)
    assert segs.shape == (len(breaks) - 1, p + 1, 3)
    for i in range(len(breaks) - 1):
        u = np.linspace(breaks[i], breaks[i + 1], 9)
        s = (u - breaks[i]) / (breaks[i + 1] - breaks[i])
        assert rel_err(bspline.evaluate_bezier(segs[i], s), BSpline(knots, P, p)(u)) < 1e-12
    k2, P2, p2 = bspline.from_bezier(segs, breaks)
    u = rng.uniform(breaks[0], breaks[-1], 100)
    assert rel_err(bspline.evaluate(k2, P2, p2, u), BSpline(knots, P, p)(u)) < 1e-12
    b3, segs3 = bspline.to_bezier(k2, P2, p2)               # Bézier -> B-spline -> Bézier
    np.testing.assert_allclose(segs3, segs, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(b3, breaks)


def test_knot_insertion_keeps_the_curve(rng):
    knots = bspline.clamped_knots(8, 3)
    P = rng.normal(size=(8, 2))
    k2, P2 = bspline.insert_knot(knots, P, 3, 0.37, times=2)
    assert P2.shape == (10, 2)
    u = np.linspace(0, 1, 101)
    assert rel_err(bspline.evaluate(k2, P2, 3, u), bspline.evaluate(knots, P, 3, u)) < 1e-14


def test_derivative_control_points(rng):
    knots = np.sort(rng.uniform(0, 1, 9 + 4 + 1))
    P = rng.normal(size=(9, 3))
    kd, Q, q = bspline.derivative_ctrl(knots, P, 4)
    u = rng.uniform(knots[4], knots[9], 50)
    assert rel_err(bspline.evaluate(kd, Q, q, u), bspline.evaluate(knots, P, 4, u, 1)) < 1e-12


@pytest.mark.parametrize("name", basis.BASES)
def test_derivatives_converge_like_central_differences(rng, name):
    P = rng.normal(size=(13, 3))
    t = rng.uniform(0.1, 3.9, 40)                          # inside segments (smooth)
    t = t[np.abs(t - np.round(t)) > 0.02]
    exact1 = cubic.evaluate(P, t, name, 1)
    exact2 = cubic.evaluate(P, t, name, 2)
    errs = []
    for h in (1e-2, 5e-3):
        fd1 = (cubic.evaluate(P, t + h, name) - cubic.evaluate(P, t - h, name)) / (2 * h)
        fd2 = (cubic.evaluate(P, t + h, name, 1) - cubic.evaluate(P, t - h, name, 1)) / (2 * h)
        errs.append((np.max(np.abs(fd1 - exact1)), np.max(np.abs(fd2 - exact2))))
        # cubic: the central difference of the derivative is exact up to the h^2 term
    ratio1 = errs[0][0] / errs[1][0]
    assert 3.6 < ratio1 < 4.4                              # second-order convergence
    assert errs[1][1] < 1e-10 * np.max(np.abs(exact2))     # quadratic d1: exact
    assert errs[1][0] < 1e-3 * np.max(np.abs(exact1))


def test_curve_objects_and_closed_curves(rng):
    pts = rng.normal(size=(6, 3))
    closed = Curve(pts, "bspline", closed=True)
    assert closed.segments == 6
    s = closed.sample(8)
    np.testing.assert_allclose(s.points[-1], s.points[0], atol=1e-14)
    np.testing.assert_allclose(s.d1[-1], s.d1[0], atol=1e-13)
    cr = Curve(pts, "catmull_rom", closed=True)
    np.testing.assert_allclose(cr.evaluate_all(np.arange(6.0), 0)[0], np.roll(pts, -1, 0), atol=1e-14)
    g = BSplineCurve(bspline.clamped_knots(6, 2), pts, 2)
    assert g.segments == 4 and g.domain == (0.0, 1.0)
    assert len(g.sample(5).t) == 21
    with pytest.raises(ValueError, match="3n\\+1"):
        Curve(pts, "bezier")
    with pytest.raises(ValueError, match="need 10 knots"):
        BSplineCurve(np.arange(5.0), pts, 3)
