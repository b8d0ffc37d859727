"""The course-format curve files in examples/course/ (.spline, .swp; no ../shared needed).

Counts, points worked out by hand from the control points (Bernstein and uniform
B-spline weights), text round trips, the surfaces the .swp file builds, and the CLI.
"""
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from curves import mesh, patches, read_spline, read_swp
from curves.io_spline import format_spline, parse_spline

REPO = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "course"
SPLINES = {"bezier.spline": ("bezier", "curve", (7, 3)), "bspline.spline": ("bspline", "curve", (6, 3)),
           "patch.spline": ("bezier", "patch", (32, 3))}


@pytest.mark.parametrize("name", sorted(SPLINES))
def test_spline_files_read_and_round_trip_to_the_same_text(name):
    path = EXAMPLES / name
    sf = read_spline(path)
    assert (sf.basis, sf.kind, sf.points.shape) == SPLINES[name]
    assert list(sf.lines) == list(range(2, 2 + len(sf.points)))     # header on line 1
    # every coordinate in these files is a short decimal, so the writer gives the file back
    assert format_spline(sf.points, sf.basis, sf.kind) == path.read_text()
    again = parse_spline(format_spline(sf.points, sf.basis, sf.kind))
    np.testing.assert_array_equal(again.points, sf.points)


def test_bezier_curve_points_by_hand():
    c = read_spline(EXAMPLES / "bezier.spline").curve()
    assert c.segments == 2 and c.dim == 3
    p, d1, _ = c.evaluate_all(np.array([0.0, 0.5, 1.0, 1.5, 2.0]), 2)
    # B(1/2) = (P0 + 3 P1 + 3 P2 + P3) / 8 per segment; the ends interpolate
    np.testing.assert_allclose(p, [[0, 0, 0], [2, 1.5, 0], [4, 0, 0], [6, -1.5, 0], [8, 0, 0]],
                               atol=1e-12)
    # B'(0) = 3 (P1 - P0); at the join 3 (P3 - P2) = 3 (P4 - P3) = (3, -6, 0): C1
    np.testing.assert_allclose(d1[[0, 2]], [[3, 6, 0], [3, -6, 0]], atol=1e-12)


def test_bspline_curve_points_by_hand():
    c = read_spline(EXAMPLES / "bspline.spline").curve()
    assert c.segments == 3
    P = read_spline(EXAMPLES / "bspline.spline").points
    p, d1, _ = c.evaluate_all(np.array([0.0, 1.0, 3.0]), 2)
    # uniform cubic B-spline: a knot value is (P_i + 4 P_i+1 + P_i+2) / 6, the slope (P_i+2 - P_i) / 2
    np.testing.assert_allclose(p[0], [0, 2 / 3, 0.5], atol=1e-12)
    np.testing.assert_allclose(p[1], (P[1] + 4 * P[2] + P[3]) / 6, atol=1e-12)
    np.testing.assert_allclose(p[2], [2 / 3, 0, 2], atol=1e-12)
    np.testing.assert_allclose(d1[0], (P[2] - P[0]) / 2, atol=1e-12)


def test_patch_file_points_by_hand():
    G = read_spline(EXAMPLES / "patch.spline").patches
    assert G.shape == (2, 4, 4, 3)
    S, Su, Sv = patches.evaluate(G, [0.5, 0.0, 1.0], [0.5, 0.0, 1.0])
    # centre: the four inner control points (height +-1) carry weight (3/8)^2 each -> 0.5625
    np.testing.assert_allclose(S[:, 0], [[1.5, 0.5625, 1.5], [4.5, -0.5625, 1.5]], atol=1e-12)
    np.testing.assert_allclose(S[:, 1], G[:, 0, 0], atol=1e-12)     # corners interpolate
    np.testing.assert_allclose(S[:, 2], G[:, 3, 3], atol=1e-12)
    # the two patches share an edge: patch 0 at v = 1 is patch 1 at v = 0, for every u
    u = np.linspace(0, 1, 9)
    a, _, _ = patches.evaluate(G[:1], u, np.ones_like(u))
    b, _, _ = patches.evaluate(G[1:], u, np.zeros_like(u))
    np.testing.assert_allclose(a, b, atol=1e-12)
    m = patches.tessellate(G, 4)
    assert len(mesh.boundary_edges(m.faces)) == 2 * 4 * 3         # the shared edge is welded


def test_swp_file_curves_and_surfaces():
    swp = read_swp(EXAMPLES / "vase.swp")
    assert [(c.kind, c.name, c.steps) for c in swp.curves] == [
        ("bsp2", "profile", 8), ("circ", "tube", 8), ("bez3", "handle", 6)]
    assert [(s.kind, s.name, s.profile.name, s.sweep.name if s.sweep else None)
            for s in swp.surfaces] == [("srev", "vase", "profile", None),
                                       ("gcyl", "grip", "tube", "handle")]
    profile = swp.curves[0].curve
    assert profile.segments == 3 and profile.dim == 2
    # first profile point (0.3 + 4 * 0.9 + 0.9, 0 + 4 * 0.2 + 0.9) / 6
    np.testing.assert_allclose(profile.evaluate_all(np.array([0.0]), 1)[0][0], [0.8, 1.7 / 6], atol=1e-12)


def test_swp_surface_of_revolution_follows_the_profile():
    swp = read_swp(EXAMPLES / "vase.swp")
    vase = dict(swp.meshes())["vase"]
    prof = swp.curves[0].curve.sample(8).points                 # 3 segments x 8 + 1 = 25 rings
    assert len(vase.vertices) == 25 * 16 and len(vase.faces) == 24 * 16 * 2
    ry = np.stack([np.hypot(vase.vertices[:, 0], vase.vertices[:, 2]), vase.vertices[:, 1]], 1)
    dist = np.linalg.norm(ry[:, None, :] - prof[None, :, :], axis=2)
    assert dist.min(axis=1).max() < 1e-12                      # every vertex on a profile circle
    assert np.all(np.bincount(dist.argmin(axis=1), minlength=25) == 16)
    assert len(mesh.boundary_edges(vase.faces)) == 2 * 16      # open at the top and the bottom
    assert np.all(np.isfinite(vase.normals))


def test_swp_generalized_cylinder_is_a_tube_around_the_handle():
    swp = read_swp(EXAMPLES / "vase.swp")
    grip = dict(swp.meshes())["grip"]
    centres = swp.curves[2].curve.sample(6).points              # one Bezier segment: 7 rings
    assert len(grip.vertices) == 7 * 8
    dist = np.linalg.norm(grip.vertices[:, None, :] - centres[None, :, :], axis=2)
    on_ring = np.abs(dist - 0.06) < 1e-9                         # circ radius 0.06
    assert np.all(on_ring.sum(axis=0) == 8) and np.all(on_ring.sum(axis=1) == 1)


@pytest.mark.parametrize("name, facts", [("bezier.spline", ["7 control points", "2 segment"]),
                                         ("bspline.spline", ["6 control points", "3 segment"]),
                                         ("patch.spline", ["2 bezier patches"]),
                                         ("vase.swp", ["srev vase", "gcyl grip"])])
def test_cli_info_and_plot(tmp_path, name, facts):
    r = subprocess.run([sys.executable, "-m", "curves", "info", str(EXAMPLES / name)],
                       capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr
    for fact in facts:
        assert fact in r.stdout, r.stdout
    out = tmp_path / "plot.png"
    r = subprocess.run([sys.executable, "-m", "curves", "plot", str(EXAMPLES / name), "-o", str(out),
                        "--dpi", "60"], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr
    import imageio.v3 as iio
    img = iio.imread(out)
    assert img.shape[0] > 200 and img.shape[1] > 200 and float(np.std(img[..., :3])) > 5
