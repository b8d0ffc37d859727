"""curves: surfaces of revolution, sweeps and bicubic patches (meshes and normals)."""
import json
import pathlib

import numpy as np
import pytest
from conftest import shared_path
from geomdl import BSpline as GBSpline
from scipy.interpolate import BSpline

from curves import mesh, patches, surfaces
from curves.curve import Circle, Curve
from curves.io_patches import read_patch_json
from curves.io_spline import read_spline

REPO = pathlib.Path(__file__).resolve().parents[1]
TEAPOT_JSON = REPO / "scenes" / "assets" / "teapot_patches.json"


def check_mesh(m):
    """Finite unit normals, valid indices, faces wound counter-clockwise about them."""
    assert np.all(np.isfinite(m.vertices)) and np.all(np.isfinite(m.normals))
    np.testing.assert_allclose(np.linalg.norm(m.normals, axis=1), 1, atol=1e-12)
    assert m.faces.min() >= 0 and m.faces.max() < len(m.vertices)
    fn = mesh.face_normals(m.vertices, m.faces)
    fn /= np.linalg.norm(fn, axis=1)[:, None]
    agree = np.einsum("fd,fkd->fk", fn, m.normals[m.faces])
    assert agree.min() > 0, agree.min()


def torus_check(m, R, r, axis):
    """Vertices at distance r from the centre circle (radius R about ``axis``), normals
    pointing away from it."""
    v = m.vertices
    a = np.asarray(axis, float)
    radial = v - np.outer(v @ a, a)
    c = radial / np.linalg.norm(radial, axis=1)[:, None] * R
    d = v - c
    np.testing.assert_allclose(np.linalg.norm(d, axis=1), r, rtol=0, atol=1e-12)
    np.testing.assert_allclose(m.normals, d / r, rtol=0, atol=1e-12)


def test_revolved_circle_is_an_exact_watertight_torus():
    s = Circle(0.5).sample(24)
    m = surfaces.revolve(s.points + [2.0, 0.0], s.tangents, 40)
    assert len(m.vertices) == 24 * 40
    assert mesh.is_watertight(m.faces)
    torus_check(m, 2.0, 0.5, [0, 1, 0])
    check_mesh(m)


def test_revolved_closed_bspline_profile_is_watertight():
    a = 2 * np.pi * np.arange(7) / 7
    loop = np.stack([1.5 + 0.4 * np.cos(a) + 0.1 * np.sin(2 * a), 0.6 * np.sin(a)], 1)
    m = surfaces.surface_of_revolution(Curve(loop, "bspline", closed=True), 36, 8)
    assert mesh.is_watertight(m.faces)
    assert len(mesh.boundary_edges(m.faces)) == 0
    check_mesh(m)


def test_profile_touching_the_axis_closes_at_the_poles():
    k = 4 * (np.sqrt(2) - 1) / 3                         # quarter-circle Bézier handle
    semi = Curve([[0, -1], [k, -1], [1, -k], [1, 0], [1, k], [k, 1], [0, 1]], "bezier")
    m = surfaces.surface_of_revolution(semi, 32, 16)
    assert mesh.is_watertight(m.faces)
    check_mesh(m)
    top = np.argmax(m.vertices[:, 1])
    bottom = np.argmin(m.vertices[:, 1])
    np.testing.assert_allclose(m.normals[top], [0, 1, 0], atol=1e-15)
    np.testing.assert_allclose(m.normals[bottom], [0, -1, 0], atol=1e-15)
    # the Bézier quarter circle is within 2.7e-4 of the unit sphere
    assert np.abs(np.linalg.norm(m.vertices, axis=1) - 1).max() < 3e-4


def test_profile_crossing_the_axis_is_refused():
    with pytest.raises(ValueError, match="x >= 0"):
        surfaces.surface_of_revolution(Circle(1.0), 8, 8)


def test_swept_circle_along_circle_is_an_exact_watertight_torus():
    m = surfaces.generalized_cylinder(Circle(0.3), Circle(1.5), 20, 48)
    assert mesh.is_watertight(m.faces)
    torus_check(m, 1.5, 0.3, [0, 0, 1])
    check_mesh(m)


def trefoil():
    a = 2 * np.pi * np.arange(12) / 12
    return Curve(np.stack([np.sin(a) + 2 * np.sin(2 * a), np.cos(a) - 2 * np.cos(2 * a),
                           -np.sin(3 * a)], 1), "bspline", closed=True)


@pytest.mark.parametrize("method", ["rmf", "course"])
def test_tube_along_a_closed_knot_is_watertight_with_radial_normals(method):
    r = 0.2
    path = trefoil()
    m = surfaces.generalized_cylinder(Circle(r), path, 16, 24, method=method)
    assert mesh.is_watertight(m.faces)
    check_mesh(m)
    # a tube's normal is radial: stepping back by r along it lands on a path sample
    centre = m.vertices - r * m.normals
    samples = path.sample(24).points
    dist = np.min(np.linalg.norm(centre[:, None, :] - samples[None, :, :], axis=2), axis=1)
    assert dist.max() < 1e-12


@pytest.mark.parametrize("closed_path", [False, True])
def test_sweep_normals_are_the_cross_product_of_the_partials(closed_path):
    # non-circular open profile: compare with central differences of S(t, s) on the grid;
    # along a closed path the frames carry the seam twist, which the normals include
    prof = Curve([[0.1, 0], [0.3, 0.05], [0.35, 0.2], [0.15, 0.3], [0.0, 0.25]], "bspline")
    if closed_path:
        path = trefoil()
    else:
        path = Curve([[0, 0, 0], [1, 0, 0.3], [2, 1, 0.2], [2, 2, 1], [1, 3, 1.5], [0, 3, 1]],
                     "bspline")
    n_p, n_s = 64, 96
    m = surfaces.generalized_cylinder(prof, path, n_p, n_s)
    rows = 2 * n_p + 1
    V = m.vertices.reshape(rows, -1, 3)
    Nrm = m.normals.reshape(V.shape)
    if closed_path:        # the last column was welded onto the first: differences wrap
        assert V.shape[1] == path.segments * n_s
        Ss = np.roll(V, -1, axis=1) - np.roll(V, 1, axis=1)
        St = V[2:] - V[:-2]
        Ss, Nrm = Ss[1:-1], Nrm[1:-1]
    else:
        St = V[2:, 1:-1] - V[:-2, 1:-1]
        Ss = V[1:-1, 2:] - V[1:-1, :-2]
        Nrm = Nrm[1:-1, 1:-1]
    fd = np.cross(St, Ss)
    fd /= np.linalg.norm(fd, axis=2)[..., None]
    err = np.linalg.norm(fd - Nrm, axis=2)
    # measured 6e-5 (the differences' own h^2 error); leaving out the seam twist's
    # term in S_s gives 0.034 on the closed path, a wrong sign 0.069
    assert err.max() < 5e-4


def random_patches(rng, n=3):
    return rng.normal(size=(n, 4, 4, 3))


@pytest.mark.parametrize("seed", [1, 2])
def test_bezier_patch_matches_geomdl(seed):
    rng = np.random.default_rng(seed)
    G = random_patches(rng, 1)[0]
    s = GBSpline.Surface()
    s.degree_u = s.degree_v = 3
    s.ctrlpts_size_u = s.ctrlpts_size_v = 4
    s.ctrlpts = G.reshape(16, 3).tolist()
    s.knotvector_u = s.knotvector_v = [0, 0, 0, 0, 1, 1, 1, 1]
    u, v = rng.uniform(0, 1, 25), rng.uniform(0, 1, 25)
    S, Su, Sv = (a[0] for a in patches.evaluate(G, u, v))
    ref = np.array([s.derivatives(float(a), float(b), order=1) for a, b in zip(u, v)])
    for ours, (i, j) in ((S, (0, 0)), (Su, (1, 0)), (Sv, (0, 1))):
        assert np.max(np.abs(ours - ref[:, i, j])) < 1e-12 * np.max(np.abs(ref[:, i, j]))


def test_bspline_patch_matches_scipy_tensor_product():
    rng = np.random.default_rng(3)
    G = rng.normal(size=(4, 4, 3))
    knots = np.arange(-3.0, 5.0)                          # one uniform cubic piece on [0, 1]
    u, v = rng.uniform(0, 1, 20), rng.uniform(0, 1, 20)
    S, Su, Sv = (a[0] for a in patches.evaluate(G, u, v, "bspline"))
    for k in range(20):
        rows = BSpline(knots, G.transpose(1, 0, 2), 3)(v[k])   # along v for every i
        col = BSpline(knots, rows, 3)
        np.testing.assert_allclose(S[k], col(u[k]), rtol=0, atol=1e-13)
        np.testing.assert_allclose(Su[k], col(u[k], 1), rtol=0, atol=1e-12)
        dv = BSpline(knots, BSpline(knots, G.transpose(1, 0, 2), 3)(v[k], 1), 3)(u[k])
        np.testing.assert_allclose(Sv[k], dv, rtol=0, atol=1e-12)


@pytest.mark.parametrize("basis", ["bezier", "bspline"])
def test_patch_normals_are_the_normalised_cross_product(basis):
    rng = np.random.default_rng(4)
    G = random_patches(rng, 3)
    r = 6
    pos, nrm = patches.tessellate_grid(G, r, basis)
    s = np.arange(r + 1) / r
    uu, vv = np.meshgrid(s, s, indexing="ij")
    S, Su, Sv = patches.evaluate(G, uu.ravel(), vv.ravel(), basis)
    n = np.cross(Su, Sv)
    n /= np.linalg.norm(n, axis=2)[..., None]
    np.testing.assert_allclose(pos.reshape(3, -1, 3), S, rtol=0, atol=1e-13)
    np.testing.assert_allclose(nrm.reshape(3, -1, 3), n, rtol=0, atol=1e-12)


def test_collapsed_patch_edge_gets_the_limit_normal():
    # a dome quarter whose u = 0 edge collapses to the pole (like the teapot lid)
    k = 0.55
    G = np.zeros((4, 4, 3))
    ring = lambda rad, y: np.array([[rad, y, 0], [rad, y, k * rad], [k * rad, y, rad], [0, y, rad]])
    G[0] = ring(0.0, 1.0)
    G[1] = ring(0.5, 1.0)
    G[2] = ring(1.0, 0.5)
    G[3] = ring(1.0, 0.0)
    G = np.ascontiguousarray(G[:, ::-1])                   # v from +z to +x: outwards
    pos, nrm = patches.tessellate_grid(G, 8)
    assert np.all(np.isfinite(nrm))
    np.testing.assert_allclose(np.linalg.norm(nrm, axis=-1), 1, atol=1e-12)
    np.testing.assert_allclose(pos[0, 0], np.tile([0, 1, 0], (9, 1)), rtol=0, atol=1e-15)
    np.testing.assert_allclose(nrm[0, 0], np.tile([0, 1, 0], (9, 1)), rtol=0, atol=1e-12)
    # the limit along the collapsed edge equals the normal just inside it
    s = np.arange(9) / 8
    _, Su, Sv = patches.evaluate(G, np.full(9, 1e-7), s)
    inside = np.cross(Su, Sv)[0]
    inside /= np.linalg.norm(inside, axis=1)[:, None]
    np.testing.assert_allclose(nrm[0, 0], inside, atol=1e-6)
    # a patch edge that is collapsed at u = 1 and v = 0 / 1: same limits, right signs
    for flipped in (G[::-1, ::-1], G.transpose(1, 0, 2), G.transpose(1, 0, 2)[::-1, ::-1]):
        p2, n2 = patches.tessellate_grid(np.ascontiguousarray(flipped), 8)
        at_pole = np.all(np.abs(p2[0] - [0, 1, 0]) < 1e-15, axis=-1)
        assert at_pole.sum() == 9
        S, Su, Sv = patches.evaluate(flipped, [0.5], [0.5])
        sign = np.sign(np.cross(Su, Sv)[0, 0, 1])               # which side is "out"
        np.testing.assert_allclose(n2[0][at_pole], np.tile([0, sign, 0], (9, 1)), atol=1e-12)


def teapot():
    G, basis, meta = read_patch_json(TEAPOT_JSON)
    return G


def patch_edges(G):
    """The control points of the four boundary curves of every patch: (P, 4, 4, 3)."""
    return np.stack([G[:, 0, :], G[:, 3, :], G[:, :, 0], G[:, :, 3]], axis=1)


def test_teapot_data_keeps_its_attribution():
    data = json.loads(TEAPOT_JSON.read_text())
    assert "Alexander Enzmann" in data["attribution"]
    assert "CC BY 3.0" in data["license"]
    assert len(data["patches"]) == 32


def test_teapot_has_no_cracks_and_closed_poles():
    G = teapot()
    r = 12
    m = patches.tessellate(G, r)
    check_mesh(m)
    # unshared patch edges (from the control net): the holes of the teapot (mouth, lid
    # rim, spout and handle ends). All other edges must be stitched by shared vertices.
    E = patch_edges(G).reshape(-1, 4, 3)
    degenerate = np.all(np.abs(E - E[:, :1]) == 0, axis=(1, 2))
    keys = [tuple(np.round(min(e.ravel().tolist(), e[::-1].ravel().tolist()), 9)) for e in E]
    uses = {k: keys.count(k) for k in keys}
    open_edges = [i for i, k in enumerate(keys) if uses[k] == 1 and not degenerate[i]]
    assert len(open_edges) == 16 and degenerate.sum() == 8
    boundary = mesh.boundary_edges(m.faces)
    assert len(boundary) == 16 * r
    # ... and every boundary mesh edge lies on one of those open patch edges
    s = np.arange(r + 1) / r
    open_curves = []
    for i in open_edges:
        w = np.stack([(1 - s) ** 3, 3 * s * (1 - s) ** 2, 3 * s ** 2 * (1 - s), s ** 3], 1)
        open_curves.append(w @ E[i])
    open_pts = np.concatenate(open_curves)
    ends = m.vertices[boundary.ravel()]
    d = np.min(np.linalg.norm(ends[:, None] - open_pts[None], axis=2), axis=1)
    assert d.max() < 1e-12
    # the tessellations of shared edges agree before welding (identical to rounding)
    pos, _ = patches.tessellate_grid(G, r)
    rims = np.stack([pos[:, 0], pos[:, -1], pos[:, :, 0], pos[:, :, -1]], 1).reshape(-1, r + 1, 3)
    for i, k in enumerate(keys):
        if uses[k] == 2 and not degenerate[i]:
            j = next(j for j in range(len(keys)) if keys[j] == k and j != i)
            a, b = rims[i], rims[j]
            err = min(np.abs(a - b).max(), np.abs(a - b[::-1]).max())
            assert err < 1e-14
    # the lid top and the bottom centre are single vertices with vertical normals
    on_axis = np.hypot(m.vertices[:, 0], m.vertices[:, 2]) < 1e-12
    assert on_axis.sum() == 2
    for i in np.nonzero(on_axis)[0]:
        up = 1.0 if m.vertices[i, 1] > 1 else -1.0
        np.testing.assert_allclose(m.normals[i], [0, up, 0], atol=1e-12)


def test_teapot_faces_outwards():
    m = patches.tessellate(teapot(), 8)
    x, y, z = m.vertices.T
    body = (y > 0.5) & (y < 2.0) & (np.hypot(x, z) > 1.6) & (np.abs(z) > 0.8)  # not spout/handle
    radial = m.vertices[body] * [1, 0, 1]
    assert np.all(np.sum(m.normals[body] * radial, axis=1) > 0)
    v = m.vertices[m.faces]
    volume = np.sum(np.einsum("fd,fd->f", v[:, 0], np.cross(v[:, 1], v[:, 2]))) / 6
    assert volume > 0
    directed = np.concatenate([m.faces[:, [0, 1]], m.faces[:, [1, 2]], m.faces[:, [2, 0]]])
    assert len(np.unique(directed, axis=0)) == len(directed)     # consistently oriented


def test_converter_reproduces_the_shipped_teapot():
    import sys
    sys.path.insert(0, str(REPO / "scripts"))
    import convert_teapot
    text = shared_path("assets", "teapot.inc").read_text()
    raw = convert_teapot.parse_pov_patches(text)
    assert raw[11, 1, 2, 1] == 1.2                    # the typo, as shipped by POV-Ray
    G = convert_teapot.to_y_up_outward(convert_teapot.fix_typos(raw))
    np.testing.assert_array_equal(G, teapot())
    with pytest.raises(ValueError, match="line 3: patch 0 has 15 points"):
        convert_teapot.parse_pov_patches("\n\nbicubic_patch { " + "<1,2,3> " * 15 + "}", "t.inc")


def test_teapot_is_four_fold_symmetric():
    G = teapot()
    body = G[4:12]                                     # two rings of four quarters
    for ring in (body[:4], body[4:]):
        a = ring[0]
        for q in ring[1:]:
            # rotating one quarter by a multiple of 90 degrees about y gives another
            ok = any(np.allclose(np.stack([c * a[..., 0] + s * a[..., 2], a[..., 1],
                                           -s * a[..., 0] + c * a[..., 2]], -1), q, atol=1e-12)
                     for c, s in ((0, 1), (-1, 0), (0, -1)))
            assert ok


def test_course_teapot_is_the_same_teapot_at_quarter_size():
    course = read_spline(shared_path("course", "a1", "teapot.spline")).patches
    ours = teapot()
    z_up = np.stack([ours[..., 0], 0.0 - ours[..., 2], ours[..., 1]], -1).transpose(0, 2, 1, 3)
    np.testing.assert_allclose(course, 0.25 * z_up, rtol=0, atol=1e-12)
