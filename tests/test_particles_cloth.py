"""Cloth: grid topology, mesh output, long runs at the documented dt, implicit stability."""
import numpy as np
import pytest

import particles as P
from particles.cloth import DOCUMENTED_DT, pinned_indices


@pytest.mark.parametrize("nx,ny", [(2, 2), (5, 3), (64, 64)])
def test_spring_counts(nx, ny):
    structural, shear, flex = P.grid_springs(nx, ny)
    assert len(structural) == (nx - 1) * ny + nx * (ny - 1)
    assert len(shear) == 2 * (nx - 1) * (ny - 1)
    assert len(flex) == max(nx - 2, 0) * ny + nx * max(ny - 2, 0)
    net = P.cloth(grid=(nx, ny))
    q = net.positions(net.initial_state())
    d = np.linalg.norm(q[net.springs[:, 1]] - q[net.springs[:, 0]], axis=1)
    dx, dy = 1.0 / (nx - 1), 1.0 / (ny - 1)
    ns, nsh = len(structural), len(shear)
    assert np.all(np.isclose(d[:ns], dx) | np.isclose(d[:ns], dy))
    np.testing.assert_allclose(d[ns:ns + nsh], np.hypot(dx, dy))
    assert np.all(np.isclose(d[ns + nsh:], 2 * dx) | np.isclose(d[ns + nsh:], 2 * dy))
    assert len({tuple(sorted(p)) for p in net.springs.tolist()}) == len(net.springs)
    if (nx, ny) == (64, 64):
        assert len(net.springs) == 23938               # "about 24k springs"


@pytest.mark.parametrize("layout,normal", [("vertical", [0, 0, 1]), ("horizontal", [0, 1, 0])])
def test_faces_cover_the_grid_counter_clockwise(layout, normal):
    net = P.cloth(grid=(5, 4), size=(2.0, 1.5), layout=layout)
    v, f, n = P.cloth_mesh(net, net.initial_state())
    assert f.shape == (2 * 4 * 3, 3) and f.dtype == np.int64
    cross = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    np.testing.assert_allclose(cross / np.linalg.norm(cross, axis=1)[:, None],
                               np.tile(normal, (len(f), 1)), atol=1e-12)
    assert np.sum(np.linalg.norm(cross, axis=1)) / 2 == pytest.approx(2.0 * 1.5)
    np.testing.assert_allclose(n, np.tile(normal, (len(v), 1)), atol=1e-12)


def test_vertex_normals_are_area_weighted():
    # a roof: a big triangle facing +z and a small one facing +x share the edge 0-1
    v = np.array([[0, 0, 0], [0, 1, 0], [-2, 0, 0], [0, 0, -0.5]], dtype=float)
    f = np.array([[0, 1, 2], [0, 3, 1]])
    n = P.vertex_normals(v, f)
    # twice the areas: 2 and 0.5 -> summed normal (0.5, 0, 2) at the shared vertices
    expected = np.array([0.5, 0.0, 2.0]) / np.hypot(0.5, 2.0)
    np.testing.assert_allclose(n[0], expected)
    np.testing.assert_allclose(n[1], expected)
    np.testing.assert_allclose(n[2], [0, 0, 1])
    np.testing.assert_allclose(n[3], [1, 0, 0])


def test_obj_round_trip(tmp_path):
    net = P.cloth(grid=(4, 3))
    v, f, n = P.cloth_mesh(net, net.initial_state())
    path = tmp_path / "c.obj"
    P.write_obj(path, v, f, n)
    lines = path.read_text().splitlines()
    vs = np.array([[float(t) for t in ln.split()[1:]] for ln in lines if ln.startswith("v ")])
    fs = np.array([[int(t.split("//")[0]) - 1 for t in ln.split()[1:]]
                   for ln in lines if ln.startswith("f ")])
    np.testing.assert_allclose(vs, v, atol=1e-9)
    np.testing.assert_array_equal(fs, f)
    assert sum(ln.startswith("vn ") for ln in lines) == len(v)


def test_32x32_cloth_runs_1e4_steps_at_documented_dt():
    net = P.cloth(grid=(32, 32), layout="horizontal")     # falls, swings, settles
    dt = DOCUMENTED_DT["rk4"]
    t, states = P.simulate(net, "rk4", dt, 10_000, every=1000)
    assert np.all(np.isfinite(states)) and t[-1] == pytest.approx(10.0)
    v = states[:, 3 * net.n:].reshape(len(states), net.n, 3)
    speed = np.linalg.norm(v, axis=2).max(axis=1)
    assert speed.max() > 1.0 and speed[-1] < 0.05       # it fell, swung and settled
    e = np.array([net.energy(x) for x in states])
    assert np.all(np.diff(e) < 0)                       # drag and dampers dissipate
    q = net.positions(states[-1])
    pinned = np.flatnonzero(~net.free)
    np.testing.assert_array_equal(q[pinned], net.positions(states[0])[pinned])


def test_implicit_euler_stable_at_10x_rk4_limit():
    net = P.cloth(grid=(16, 16))
    stable, unstable = P.stable_dt_limit(net, "rk4", 1.0, 1e-3, 0.02, rel=0.05)
    assert 1e-3 < stable < unstable < 0.02
    dt = 10 * unstable
    t, states = P.simulate(net, "implicit_euler", dt, int(np.ceil(3.0 / dt)), every=5)
    assert np.all(np.isfinite(states))
    e = np.array([net.energy(x) for x in states])
    assert np.all(np.diff(e) <= 1e-9)                   # backward Euler only dissipates
    assert P.is_stable(net, "implicit_euler", 20 * unstable, 3.0)
    assert not P.is_stable(net, "rk4", 1.1 * unstable, 1.0)


def test_documented_dts_are_stable_for_32x32():
    net = P.cloth(grid=(32, 32), layout="horizontal")
    for name in ("symplectic_euler", "midpoint", "trapezoid", "implicit_euler"):
        assert P.is_stable(net, name, DOCUMENTED_DT[name], 1.0), name


def test_pin_modes_and_bad_parameters():
    assert pinned_indices(4, 3, "top_corners").tolist() == [8, 11]
    assert pinned_indices(4, 3, "corners").tolist() == [0, 3, 8, 11]
    assert pinned_indices(4, 3, "top_row").tolist() == [8, 9, 10, 11]
    assert pinned_indices(4, 3, [[1, 2], [0, 0]]).tolist() == [9, 0]
    with pytest.raises(P.ParticlesError, match=r"pin: \[i, j\] = \[4, 0\] is outside"):
        P.cloth(grid=(4, 3), pin=[[4, 0]])
    with pytest.raises(P.ParticlesError, match="pin: unknown mode 'left'"):
        P.cloth(pin="left")
    with pytest.raises(P.ParticlesError, match="grid: needs at least 2 x 2"):
        P.cloth(grid=(1, 5))
    with pytest.raises(P.ParticlesError, match="layout"):
        P.cloth(layout="diagonal")
