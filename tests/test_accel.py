"""BVH (raytrace.accel) against brute force over all primitives, and against Embree."""
import math

import numpy as np
import pytest
from numba import njit

from conftest import shared_path
from raytrace.accel import any_hit, build_accel, closest_hit, trace_closest_batch
from raytrace.accel.build import CHILD_ROW, STACK_SIZE, WIDTH
from raytrace.accel.traverse import PREFETCH_MIN_NODES, closest_hit_prefetching
from raytrace.shapes import intersect_triangle, intersect_unit_sphere_xf

NO_SPH = (np.zeros((0, 3, 4)), np.zeros((0, 3)), np.zeros((0, 3)))


# ---------------------------------------------------------------- references and helpers

def f32(v):
    """Coordinates rounded to the nearest float32: the triangles the BVH holds."""
    return np.asarray(v, np.float64).astype(np.float32).astype(np.float64)


def brute_closest(v0, v1, v2, w2o, o, d, tmin, tmax):
    """Closest hit per ray over every primitive, the triangles' vertices rounded to float32
    as ``build_accel`` stores them; lowest index wins ties."""
    return _brute_closest(f32(v0), f32(v1), f32(v2), w2o, o, d, tmin, tmax)


@njit(cache=True)
def _brute_closest(v0, v1, v2, w2o, o, d, tmin, tmax):
    """Closest hit per ray over every primitive (shapes.py routines); lowest index wins ties."""
    n = o.shape[0]
    t_out = np.full(n, np.inf)
    kind = np.zeros(n, np.int64)
    idx = np.full(n, -1, np.int64)
    u_out = np.zeros(n)
    v_out = np.zeros(n)
    for r in range(n):
        best = tmax
        for i in range(v0.shape[0]):
            e1 = v1[i] - v0[i]
            e2 = v2[i] - v0[i]
            t, u, v = intersect_triangle(v0[i, 0], v0[i, 1], v0[i, 2], e1[0], e1[1], e1[2],
                                         e2[0], e2[1], e2[2], o[r, 0], o[r, 1], o[r, 2],
                                         d[r, 0], d[r, 1], d[r, 2], tmin, best)
            if t < best:
                best = t
                kind[r] = 1
                idx[r] = i
                u_out[r] = u
                v_out[r] = v
        for s in range(w2o.shape[0]):
            t = intersect_unit_sphere_xf(w2o[s], o[r, 0], o[r, 1], o[r, 2], d[r, 0], d[r, 1],
                                         d[r, 2], tmin, best)
            if t < best:
                best = t
                kind[r] = 2
                idx[r] = s
                u_out[r] = 0.0
                v_out[r] = 0.0
        if kind[r] != 0:
            t_out[r] = best
    return t_out, kind, idx, u_out, v_out


@njit(cache=True)
def accel_closest(acc, o, d, tmin, tmax):
    """``closest_hit`` ray by ray, serially (the way a render kernel calls it)."""
    n = o.shape[0]
    t_out = np.empty(n)
    kind = np.empty(n, np.int64)
    idx = np.empty(n, np.int64)
    u_out = np.empty(n)
    v_out = np.empty(n)
    for r in range(n):
        t_out[r], kind[r], idx[r], u_out[r], v_out[r] = closest_hit(
            acc, o[r, 0], o[r, 1], o[r, 2], d[r, 0], d[r, 1], d[r, 2], tmin, tmax)
    return t_out, kind, idx, u_out, v_out


@njit(cache=True)
def accel_any(acc, o, d, tmin, tmax):
    """``any_hit`` per ray; ``tmax`` (N,)."""
    out = np.empty(o.shape[0], np.bool_)
    for r in range(o.shape[0]):
        out[r] = any_hit(acc, o[r, 0], o[r, 1], o[r, 2], d[r, 0], d[r, 1], d[r, 2], tmin,
                         tmax[r])
    return out


def random_ellipsoids(rng, n, lo=0.0, hi=1.0, size=(0.03, 0.15)):
    """``(w2o (n,3,4), world lo (n,3), world hi (n,3))`` of random affine unit spheres."""
    w2o = np.empty((n, 3, 4))
    blo = np.empty((n, 3))
    bhi = np.empty((n, 3))
    for i in range(n):
        q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        m = q @ np.diag(rng.uniform(*size, 3)) @ np.linalg.qr(rng.normal(size=(3, 3)))[0]
        c = rng.uniform(lo, hi, 3)
        inv = np.linalg.inv(m)
        w2o[i, :, :3] = inv
        w2o[i, :, 3] = -inv @ c
        ext = np.sqrt((m ** 2).sum(axis=1))
        blo[i] = c - ext
        bhi[i] = c + ext
    return w2o, blo, bhi


def random_soup(rng, n):
    """n random triangles in [0, 1]^3, sizes spread over two decades."""
    c = rng.random((n, 3))
    s = 10 ** rng.uniform(-2, -0.7, (n, 1, 1))
    tri = c[:, None, :] + s * rng.normal(size=(n, 3, 3))
    return tri[:, 0].copy(), tri[:, 1].copy(), tri[:, 2].copy()


def random_rays(rng, n, lo=-0.5, hi=1.5):
    """Origins in [lo, hi]^3 aimed at random points of [0, 1]^3; |d| from 0.1 to 10."""
    o = rng.uniform(lo, hi, (n, 3))
    d = rng.uniform(0, 1, (n, 3)) - o
    d *= 10 ** rng.uniform(-1, 1, (n, 1)) / np.linalg.norm(d, axis=1)[:, None]
    return o, d


def icosahedron():
    p = (1 + 5 ** 0.5) / 2
    v = np.array([[-1, p, 0], [1, p, 0], [-1, -p, 0], [1, -p, 0], [0, -1, p], [0, 1, p],
                  [0, -1, -p], [0, 1, -p], [p, 0, -1], [p, 0, 1], [-p, 0, -1], [-p, 0, 1]],
                 float)
    f = np.array([[0, 11, 5], [0, 5, 1], [0, 1, 7], [0, 7, 10], [0, 10, 11], [1, 5, 9],
                  [5, 11, 4], [11, 10, 2], [10, 7, 6], [7, 1, 8], [3, 9, 4], [3, 4, 2],
                  [3, 2, 6], [3, 6, 8], [3, 8, 9], [4, 9, 5], [2, 4, 11], [6, 2, 10],
                  [8, 6, 7], [9, 8, 1]])
    return v, f


def icosphere(levels, rng=None, jitter=0.0):
    """Closed triangle mesh: a subdivided icosahedron, optionally jittered radially."""
    v, f = icosahedron()
    v = v / np.linalg.norm(v, axis=1)[:, None]
    verts = list(v)
    for _ in range(levels):
        mid = {}
        nf = []
        for a, b, c in f:
            ids = []
            for i, j in ((a, b), (b, c), (c, a)):
                key = (min(i, j), max(i, j))
                if key not in mid:
                    m = verts[i] + verts[j]
                    verts.append(m / np.linalg.norm(m))
                    mid[key] = len(verts) - 1
                ids.append(mid[key])
            nf += [[a, ids[0], ids[2]], [b, ids[1], ids[0]], [c, ids[2], ids[1]],
                   [ids[0], ids[1], ids[2]]]
        f = np.array(nf)
    v = np.array(verts)
    if jitter:
        v *= 1 + jitter * rng.uniform(-1, 1, (len(v), 1))
    return f32(v), f                 # the vertices the BVH holds (float32)


def assert_same_hits(got, ref, rtol=1e-6):
    t, kind, idx, u, v = got
    rt, rkind, ridx, ru, rv = ref
    np.testing.assert_array_equal(kind, rkind)
    np.testing.assert_array_equal(idx, ridx)
    hit = rkind > 0
    assert np.all(np.isinf(t[~hit]))
    np.testing.assert_allclose(t[hit], rt[hit], rtol=rtol)
    np.testing.assert_allclose(u[hit], ru[hit], atol=1e-9)
    np.testing.assert_allclose(v[hit], rv[hit], atol=1e-9)


def wide_depth(acc):
    """Depth of the wide tree (1 = only the root)."""
    child = acc.nodes_i[:, CHILD_ROW, :]
    valid = acc.nodes[:, 0, :] <= acc.nodes[:, 1, :]
    depth = np.zeros(len(child), np.int64)
    depth[:1] = 1
    for n in range(len(child)):          # children are numbered after their parents
        for c in range(WIDTH):
            if valid[n, c] and child[n, c] > 0:
                depth[child[n, c]] = depth[n] + 1
    return int(depth.max()) if len(depth) else 0


# ---------------------------------------------------------------- scenes

@pytest.fixture(scope="module")
def mixed_scene():
    rng = np.random.default_rng(7)
    v0, v1, v2 = random_soup(rng, 300)
    w2o, slo, shi = random_ellipsoids(rng, 15)
    acc = build_accel(v0, v1, v2, w2o, slo, shi)
    return rng, (v0, v1, v2, w2o), acc


# ---------------------------------------------------------------- tests

def test_closest_hit_matches_brute_force(mixed_scene):
    rng, (v0, v1, v2, w2o), acc = mixed_scene
    o, d = random_rays(rng, 4000)
    got = accel_closest(acc, o, d, 0.0, np.inf)
    ref = brute_closest(v0, v1, v2, w2o, o, d, 0.0, np.inf)
    assert 0.2 < np.mean(ref[1] == 1) and 0.05 < np.mean(ref[1] == 2)   # both kinds hit
    assert_same_hits(got, ref)
    tri = ref[1] == 1       # watertight test vs Moller-Trumbore: float64 round-off only
    np.testing.assert_allclose(got[0][tri], ref[0][tri], rtol=1e-12)


def test_tmin_tmax_window(mixed_scene):
    rng, (v0, v1, v2, w2o), acc = mixed_scene
    o, d = random_rays(rng, 2000)
    first = brute_closest(v0, v1, v2, w2o, o, d, 0.0, np.inf)[0]
    tmin = float(np.median(first[np.isfinite(first)]))
    got = accel_closest(acc, o, d, tmin, 3 * tmin)
    ref = brute_closest(v0, v1, v2, w2o, o, d, tmin, 3 * tmin)
    assert_same_hits(got, ref)
    assert np.all((got[0][got[1] > 0] > tmin) & (got[0][got[1] > 0] < 3 * tmin))


def test_batch_equals_single_calls(mixed_scene):
    rng, _, acc = mixed_scene
    o, d = random_rays(rng, 3000)
    single = accel_closest(acc, o, d, 0.0, 5.0)
    batch = trace_closest_batch(acc, o, d, tmax=5.0)
    for a, b in zip(batch, single):
        np.testing.assert_array_equal(a, b)


def test_any_hit_agrees_with_closest(mixed_scene):
    rng, _, acc = mixed_scene
    o, d = random_rays(rng, 4000)
    t = accel_closest(acc, o, d, 0.0, np.inf)[0]
    finite = np.isfinite(t)
    # tmax just below, just above, or unrelated to the closest hit
    tmax = np.where(finite, t * rng.choice([0.5, 0.999, 1.001, 2.0], len(t)),
                    rng.uniform(0.1, 10, len(t)))
    got = accel_any(acc, o, d, 0.0, tmax)
    np.testing.assert_array_equal(got, t < tmax)
    assert 0.2 < got.mean() < 0.8


def test_axis_parallel_rays(mixed_scene):
    rng, (v0, v1, v2, w2o), acc = mixed_scene
    dirs = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1],
                     [1, 1, 0], [0, -1, 2], [3, 0, -1]], float)
    o = rng.uniform(-0.5, 1.5, (4500, 3))
    d = dirs[np.arange(len(o)) % len(dirs)]
    got = accel_closest(acc, o, d, 0.0, np.inf)
    ref = brute_closest(v0, v1, v2, w2o, o, d, 0.0, np.inf)
    assert ref[1].astype(bool).mean() > 0.1
    assert_same_hits(got, ref)


def test_axis_aligned_geometry_hit_along_axes():
    """Flat node boxes (triangles in a plane z = const) hit by rays along z, and
    grazing rays in that plane."""
    rng = np.random.default_rng(3)
    g = np.linspace(0, 1, 21)
    x, y = np.meshgrid(g[:-1], g[:-1])
    x, y = x.ravel(), y.ravel()
    h = g[1]
    z = np.full_like(x, 0.3)
    a = np.stack([x, y, z], 1)
    b = np.stack([x + h, y, z], 1)
    c = np.stack([x + h, y + h, z], 1)
    e = np.stack([x, y + h, z], 1)
    v0, v1, v2 = np.vstack([a, a]), np.vstack([b, c]), np.vstack([c, e])
    acc = build_accel(v0, v1, v2, *NO_SPH)
    n = 3000
    o = np.column_stack([rng.uniform(0, 1, n), rng.uniform(0, 1, n), np.full(n, 2.0)])
    d = np.tile([0.0, 0.0, -1.0], (n, 1))
    o[:200, :2] = rng.integers(0, 21, (200, 2)) * h     # exactly on grid lines / corners
    got = accel_closest(acc, o, d, 0.0, np.inf)
    assert np.all(got[1] == 1), "rays through a flat grid of squares must all hit"
    # the plane z = 0.3 as the blocks hold it (float32)
    np.testing.assert_allclose(got[0], 2.0 - float(np.float32(0.3)), rtol=1e-12)
    ref = brute_closest(v0, v1, v2, NO_SPH[0], o[200:], d[200:], 0.0, np.inf)
    assert_same_hits(tuple(x[200:] for x in got), ref)
    # rays inside the plane see the triangles edge-on: det == 0, no hit
    o2 = np.column_stack([rng.uniform(-1, 0, 100), rng.uniform(0, 1, 100), np.full(100, 0.3)])
    got2 = accel_closest(acc, o2, np.tile([1.0, 0.0, 0.0], (100, 1)), 0.0, np.inf)
    assert np.all(got2[1] == 0)


def test_rays_from_inside_spheres():
    rng = np.random.default_rng(11)
    w2o, slo, shi = random_ellipsoids(rng, 40, size=(0.02, 0.05))
    acc = build_accel(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)), w2o, slo, shi)
    centres = 0.5 * (slo + shi)
    o = np.repeat(centres, 20, axis=0)
    d = rng.normal(size=o.shape)
    got = accel_closest(acc, o, d, 0.0, np.inf)
    ref = brute_closest(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)), w2o, o, d, 0.0,
                        np.inf)
    assert np.all(ref[1] == 2)
    assert_same_hits(got, ref)
    # from its centre each ray leaves its own ellipsoid first, unless another one overlaps
    own = np.repeat(np.arange(40), 20)
    assert np.mean(got[2] == own) > 0.9


def test_empty_scene():
    z3, z34 = np.zeros((0, 3)), np.zeros((0, 3, 4))
    acc = build_accel(z3, z3, z3, z34, z3, z3)
    assert closest_hit(acc, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, np.inf) == (math.inf, 0, -1,
                                                                            0.0, 0.0)
    assert not any_hit(acc, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, np.inf)
    t, kind, idx, u, v = trace_closest_batch(acc, np.zeros((5, 3)), np.ones((5, 3)))
    assert np.all(np.isinf(t)) and np.all(kind == 0) and np.all(idx == -1)
    t, kind, idx, u, v = trace_closest_batch(acc, np.zeros((0, 3)), np.zeros((0, 3)))
    assert t.shape == (0,)


def test_degenerate_triangles_never_hit():
    rng = np.random.default_rng(5)
    v0, v1, v2 = random_soup(rng, 60)
    # zero area, exactly: collinear on a line with exact coordinates, repeated vertices
    p = rng.integers(0, 8, (40, 3)) / 8.0
    q = rng.integers(0, 8, (40, 3)) / 8.0
    deg0 = np.vstack([p[:20], p[20:30], p[30:]])
    deg1 = np.vstack([q[:20], p[20:30], q[30:]])
    deg2 = np.vstack([2 * q[:20] - p[:20], p[20:30], q[30:]])
    V0, V1, V2 = np.vstack([v0, deg0]), np.vstack([v1, deg1]), np.vstack([v2, deg2])
    acc = build_accel(V0, V1, V2, *NO_SPH)
    # rays aimed at points of the degenerate triangles, from random directions
    target = deg0 + rng.uniform(0, 1, (40, 1)) * (deg1 - deg0)
    target = np.repeat(target, 25, axis=0)
    o = target + rng.normal(size=target.shape)
    got = accel_closest(acc, o, target - o, 0.0, np.inf)
    assert not np.any((got[1] == 1) & (got[2] >= 60))
    assert not np.any(accel_any(acc, o, target - o, 0.0, np.full(len(o), np.inf))
                      & (got[1] == 0))
    ref = brute_closest(v0, v1, v2, NO_SPH[0], o, target - o, 0.0, np.inf)
    assert_same_hits(got, ref)
    # a scene of degenerate triangles only is an empty scene
    acc2 = build_accel(deg0, deg1, deg2, *NO_SPH)
    assert acc2.nodes.shape[0] == 0
    assert not np.any(accel_any(acc2, o, target - o, 0.0, np.full(len(o), np.inf)))


@pytest.mark.parametrize("levels", [0, 2])
def test_closed_mesh_has_no_leaks(levels):
    """Rays through shared vertices and edges of a closed mesh into its inside always hit."""
    rng = np.random.default_rng(levels)
    v, f = icosphere(levels, rng, jitter=0.05)
    acc = build_accel(v[f[:, 0]], v[f[:, 1]], v[f[:, 2]], *NO_SPH)
    edges = np.unique(np.sort(np.vstack([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]), 1), axis=0)
    s = rng.uniform(0, 1, (len(edges), 1))
    targets = np.vstack([v, 0.5 * (v[edges[:, 0]] + v[edges[:, 1]]),
                         v[edges[:, 0]] + s * (v[edges[:, 1]] - v[edges[:, 0]])])
    targets = np.repeat(targets, 8, axis=0)
    # from inside (near the centre) out through the target, and from outside in through
    # the target towards an inside point (a ray that only grazes a silhouette vertex may
    # rightly miss, so none of those)
    inside = 0.3 * rng.uniform(-1, 1, targets.shape)
    into = inside - targets
    o_out = targets - 5 * into / np.linalg.norm(into, axis=1)[:, None]
    for o in (o_out, inside, np.zeros_like(targets)):
        got = accel_closest(acc, o, targets - o, 0.0, np.inf)
        assert np.all(got[1] == 1), f"{np.sum(got[1] != 1)} rays leaked through the mesh"
        assert np.all(got[0] <= 1.0 + 1e-9)          # at the target or before it
        assert np.all(accel_any(acc, o, targets - o, 0.0, np.full(len(o), np.inf)))
    # plain Moller-Trumbore (shapes.py) does leak on these rays: the test has teeth
    ref = brute_closest(v[f[:, 0]], v[f[:, 1]], v[f[:, 2]], NO_SPH[0], inside,
                        targets - inside, 0.0, np.inf)
    assert np.sum(ref[1] == 0) > 10


def test_many_identical_triangles_and_deep_trees():
    rng = np.random.default_rng(9)
    # 3000 copies of one triangle: no SAH split exists, the builder splits by index
    t0 = np.tile([0.0, 0.0, 0.0], (3000, 1))
    t1 = np.tile([1.0, 0.0, 0.0], (3000, 1))
    t2 = np.tile([0.0, 1.0, 0.0], (3000, 1))
    acc = build_accel(t0, t1, t2, *NO_SPH)
    o = np.column_stack([rng.uniform(0, 0.5, 100), rng.uniform(0, 0.4, 100), np.ones(100)])
    got = accel_closest(acc, o, np.tile([0.0, 0.0, -1.0], (100, 1)), 0.0, np.inf)
    assert np.all(got[1] == 1)
    np.testing.assert_allclose(got[0], 1.0, rtol=1e-12)
    # nested triangles shrinking geometrically (in parallel planes): SAH chains, the
    # depth stays bounded
    k = np.arange(400)[:, None]
    s = 0.9 ** k
    lift = 0.5 + [0.0, 0.0, 0.001] * k
    v0, v1, v2 = lift, s * [1.0, 0.0, 0.1] + lift, s * [0.0, 1.0, 0.2] + lift
    acc = build_accel(v0, v1, v2, *NO_SPH)
    assert (WIDTH - 1) * wide_depth(acc) + 1 <= STACK_SIZE
    o, d = random_rays(rng, 2000, 0.4, 1.6)
    assert_same_hits(accel_closest(acc, o, d, 0.0, np.inf),
                     brute_closest(v0, v1, v2, NO_SPH[0], o, d, 0.0, np.inf))


def test_bad_input_names_the_argument():
    z3 = np.zeros((0, 3))
    with pytest.raises(ValueError, match="tri_v1"):
        build_accel(np.zeros((4, 3)), np.zeros((4, 2)), np.zeros((4, 3)), *NO_SPH)
    with pytest.raises(ValueError, match="lengths differ"):
        build_accel(np.zeros((4, 3)), np.zeros((3, 3)), np.zeros((4, 3)), *NO_SPH)
    with pytest.raises(ValueError, match="sph_lo"):
        build_accel(z3, z3, z3, np.zeros((2, 3, 4)), np.zeros((2, 4)), np.zeros((2, 3)))


def embree_ids(tris, o, d):
    rtcs = pytest.importorskip("embreex.rtcore_scene")
    from embreex.mesh_construction import TriangleMesh
    scene = rtcs.EmbreeScene()
    TriangleMesh(scene, tris.astype(np.float32))
    r = scene.run(o.astype(np.float32), d.astype(np.float32), output=1)
    return r["primID"], r["tfar"]


def check_against_embree(tris, rng, n):
    acc = build_accel(tris[:, 0], tris[:, 1], tris[:, 2], *NO_SPH)
    lo, hi = tris.reshape(-1, 3).min(0), tris.reshape(-1, 3).max(0)
    c, radius = 0.5 * (lo + hi), 0.5 * np.linalg.norm(hi - lo)
    u = rng.normal(size=(n, 3))
    o = c + radius * u / np.linalg.norm(u, axis=1)[:, None]
    d = lo + rng.random((n, 3)) * (hi - lo) - o
    emb_id, emb_t = embree_ids(tris, o, d)
    t, kind, idx, _, _ = trace_closest_batch(acc, o, d)
    ours = np.where(kind == 1, idx, -1)
    assert 0.3 < np.mean(ours >= 0)
    assert np.mean(ours == emb_id) > 0.999
    both = (ours == emb_id) & (ours >= 0)
    np.testing.assert_allclose(t[both], emb_t[both], rtol=1e-4)


def test_same_hits_as_embree_random_mesh():
    pytest.importorskip("embreex")
    rng = np.random.default_rng(2)
    v, f = icosphere(4, rng, jitter=0.1)
    check_against_embree(v[f], rng, 20000)


def test_same_hits_as_embree_bunny():
    pytest.importorskip("embreex")
    path = shared_path("assets", "bunny.obj")
    verts, faces = [], []
    for line in open(path):
        if line.startswith("v "):
            verts.append(line.split()[1:4])
        elif line.startswith("f "):
            faces.append([int(w.split("/")[0]) - 1 for w in line.split()[1:4]])
    tris = np.array(verts, float)[np.array(faces)]
    check_against_embree(tris, np.random.default_rng(4), 20000)


@njit(cache=True)
def _closest_both(acc, tri_n, tri_ng, tri_mat, tri_emit, o, d, out):
    """Per ray: (t, kind, index, u, v) of closest_hit in out[0], of
    closest_hit_prefetching in out[1]."""
    for r in range(o.shape[0]):
        a = closest_hit(acc, o[r, 0], o[r, 1], o[r, 2], d[r, 0], d[r, 1], d[r, 2], 0.0, np.inf)
        b = closest_hit_prefetching(acc, tri_n, tri_ng, tri_mat, tri_emit, o[r, 0], o[r, 1],
                                    o[r, 2], d[r, 0], d[r, 1], d[r, 2], 0.0, np.inf)
        out[0, r, 0], out[0, r, 1], out[0, r, 2], out[0, r, 3], out[0, r, 4] = a.t, a.kind, a.index, a.u, a.v
        out[1, r, 0], out[1, r, 1], out[1, r, 2], out[1, r, 3], out[1, r, 4] = b.t, b.kind, b.index, b.u, b.v


def test_prefetching_closest_hit_finds_the_same_hits_in_a_large_bvh():
    """The shading prefetches (``closest_hit_prefetching``, used by the integrators) run
    only in a BVH of PREFETCH_MIN_NODES nodes or more; there they must change nothing."""
    rng = np.random.default_rng(5)
    n = 40000
    c = rng.uniform(-1, 1, (n, 1, 3))
    tri = c + rng.normal(scale=0.03, size=(n, 3, 3))
    acc = build_accel(tri[:, 0], tri[:, 1], tri[:, 2], *NO_SPH)
    assert acc.nodes.shape[0] >= PREFETCH_MIN_NODES
    tri_n = np.ascontiguousarray(rng.normal(size=(n, 3, 3)))
    tri_ng = np.ascontiguousarray(rng.normal(size=(n, 3)))
    tri_mat = np.arange(n, dtype=np.int64)
    tri_emit = -np.ones(n, np.int64)
    o = rng.uniform(-1.5, 1.5, (4000, 3))
    d = rng.normal(size=(4000, 3))
    out = np.zeros((2, 4000, 5))
    _closest_both(acc, tri_n, tri_ng, tri_mat, tri_emit, o, d, out)
    assert (out[0, :, 1] == 1).mean() > 0.3            # many rays hit a triangle
    np.testing.assert_array_equal(out[0], out[1])
    # and the hits are right: brute force over every triangle agrees on the index
    bt, _, bidx, _, _ = brute_closest(tri[:, 0], tri[:, 1], tri[:, 2], NO_SPH[0], o[:300], d[:300],
                                      0.0, np.inf)
    hit = np.isfinite(bt)
    assert np.array_equal(out[1, :300, 2][hit], bidx[hit])
