"""Intersection routines against closed-form answers."""
import math

import numpy as np
import pytest

from raytrace.shapes import intersect_plane, intersect_triangle, intersect_unit_sphere_xf

INF = math.inf


def sphere_w2o(center, radius):
    w2o = np.zeros((3, 4))
    w2o[:, :3] = np.eye(3) / radius
    w2o[:, 3] = -np.asarray(center, float) / radius
    return w2o


def test_sphere_hit_from_outside_and_inside():
    w2o = sphere_w2o([0, 0, -5], 2.0)
    assert intersect_unit_sphere_xf(w2o, 0, 0, 0, 0, 0, -1, 0.0, INF) == pytest.approx(3.0, rel=1e-15)
    # from the centre the far root is the only one ahead
    assert intersect_unit_sphere_xf(w2o, 0, 0, -5, 0, 0, -1, 0.0, INF) == pytest.approx(2.0, rel=1e-15)
    # a non-unit direction scales t
    assert intersect_unit_sphere_xf(w2o, 0, 0, 0, 0, 0, -2, 0.0, INF) == pytest.approx(1.5, rel=1e-15)
    # tangent-ish miss, behind, and tmax cut-off
    assert intersect_unit_sphere_xf(w2o, 2.0001, 0, 0, 0, 0, -1, 0.0, INF) == INF
    assert intersect_unit_sphere_xf(w2o, 0, 0, 0, 0, 0, 1, 0.0, INF) == INF
    assert intersect_unit_sphere_xf(w2o, 0, 0, 0, 0, 0, -1, 0.0, 2.9) == INF


def test_sphere_oblique_hit_matches_closed_form():
    rng = np.random.default_rng(1)
    for _ in range(100):
        c = rng.normal(size=3) * 3
        r = rng.uniform(0.2, 2)
        o = c + rng.normal(size=3) * 0 + np.array([0, 0, 10.0])
        target = c + rng.uniform(-0.7, 0.7, 3) * r / np.sqrt(3)
        d = target - o
        d /= np.linalg.norm(d)
        t = intersect_unit_sphere_xf(sphere_w2o(c, r), *o, *d, 0.0, INF)
        p = o + t * d
        assert np.linalg.norm(p - c) == pytest.approx(r, rel=1e-12)
        # nearest root: the quadratic's smaller solution
        b = d @ (o - c)
        assert t == pytest.approx(-b - math.sqrt(b * b - (o - c) @ (o - c) + r * r), rel=1e-12)


def test_triangle_barycentrics_and_edges():
    v0, v1, v2 = np.array([0.0, 0, 0]), np.array([2.0, 0, 0]), np.array([0.0, 2, 0])
    e1, e2 = v1 - v0, v2 - v0
    t, u, v = intersect_triangle(*v0, *e1, *e2, 0.5, 0.25, 3.0, 0, 0, -1, 0.0, INF)
    assert (t, u, v) == pytest.approx((3.0, 0.25, 0.125))
    # two-sided
    t2, _, _ = intersect_triangle(*v0, *e1, *e2, 0.5, 0.25, -3.0, 0, 0, 1, 0.0, INF)
    assert t2 == pytest.approx(3.0)
    # just outside the hypotenuse u + v > 1
    assert intersect_triangle(*v0, *e1, *e2, 1.01, 1.0, 3.0, 0, 0, -1, 0.0, INF)[0] == INF
    # parallel ray and degenerate triangle
    assert intersect_triangle(*v0, *e1, *e2, 0.5, 0.25, 3.0, 1, 0, 0, 0.0, INF)[0] == INF
    assert intersect_triangle(*v0, *e1, *(2 * e1), 0.5, 0.0, 3.0, 0, 0, -1, 0.0, INF)[0] == INF


def test_plane():
    # plane y = -2, i.e. dot((0,1,0), p) = -2
    assert intersect_plane(0, 1, 0, -2, 0, 0, 0, 0, -1, 0, 0.0, INF) == 2.0
    assert intersect_plane(0, 1, 0, -2, 0, 0, 0, 0, 1, 0, 0.0, INF) == INF
    assert intersect_plane(0, 1, 0, -2, 0, 0, 0, 1, 0, 0, 0.0, INF) == INF
    assert intersect_plane(0, 2, 0, -4, 0, 0, 0, 0, -0.5, 0, 0.0, INF) == 4.0
