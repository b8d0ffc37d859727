"""Instancing: prototypes stored once, placed by instances through a two-level BVH.
An instanced scene renders exactly like the same scene written out copy by copy."""
import copy

import numpy as np
import pytest

import raytrace
from raytrace.accel import closest_hit
from raytrace.accel.instances import any_instance_hit, closest_instance_hit
from raytrace.scene.emitters import build_lights

BASE = {
    "camera": {"center": [0.5, 2.5, 7], "look_at": [0, 0.3, 0], "fov": 40},
    "background": {"color": [0.2, 0.25, 0.3]},
    "lights": [{"type": "point", "position": [3, 5, 4], "color": [1, 1, 1]}],
    "materials": {
        "red": {"diffuse": [0.9, 0.2, 0.1], "specular": [0.3, 0.3, 0.3], "shininess": 30},
        "blue": {"type": "diffuse", "albedo": [0.1, 0.2, 0.9]},
        "checks": {"type": "diffuse", "albedo": {"type": "checkerboard", "scale": [4, 4]}},
        "lamp": {"type": "diffuse", "albedo": [0, 0, 0]},
    },
}
PROTO = {"type": "group", "children": [
    {"type": "cube", "transform": [{"scale": [0.3, 0.2, 0.4]}]},
    {"type": "sphere", "center": [0, 0.55, 0], "radius": 0.3, "material": "blue"},
    {"type": "mesh", "file": "../scenes/assets/cube.obj", "transform": [{"translate": [0.5, 0, 0]}, {"scale": 0.15}]},
]}
PLACES = [([{"translate": [x, 0, z]}, {"rotate_y": 25 * x + 10 * z}, {"scale": [1, 1 + 0.2 * x, 1]}], m)
          for (x, z), m in zip([(-1.6, -1), (0, -1.2), (1.6, -0.8), (-0.8, 0.8), (0.9, 0.9)],
                               ["red", "checks", None, "checks", "red"])]
EXTRA = [{"type": "plane", "normal": [0, 1, 0], "offset": -0.2, "material": "checks"},
         {"type": "rectangle", "material": "lamp", "emission": [4, 4, 4],
          "transform": [{"translate": [-1, 3, 1]}, {"rotate_x": 90}, {"scale": 0.5}]}]


def instanced():
    objs = []
    for xf, m in PLACES:
        inst = {"type": "instance", "prototype": "thing", "transform": xf}
        if m:
            inst["material"] = m
        objs.append(inst)
    return dict(BASE, prototypes={"thing": PROTO}, objects=objs + EXTRA)


def flattened():
    objs = []
    for xf, m in PLACES:
        g = dict(copy.deepcopy(PROTO), transform=xf)
        if m:
            g["material"] = m
        objs.append(g)
    return dict(BASE, objects=objs + EXTRA)


@pytest.fixture(scope="module")
def scenes(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scene")
    import pathlib
    base = pathlib.Path(__file__).resolve().parent
    return (raytrace.load_scene(instanced(), base_dir=base), raytrace.load_scene(flattened(), base_dir=base))


@pytest.mark.parametrize("integrator", ["whitted", "path"])
def test_instanced_scene_renders_like_the_flattened_one(scenes, integrator):
    a, b = scenes
    kw = dict(width=48, height=36, spp=4, integrator=integrator, max_depth=4)
    ia, ib = raytrace.render(a, **kw), raytrace.render(b, **kw)
    assert np.asarray(ia).max() > 0.05
    # the same hits up to rounding in the object-space intersection
    diff = np.abs(np.asarray(ia, np.float64) - np.asarray(ib, np.float64))
    assert (diff > 1e-4).mean() < 0.002 and diff.mean() < 1e-5, (diff.max(), (diff > 1e-4).mean())


def test_depth_and_normals_match_the_flattened_scene(scenes):
    a, b = scenes
    ta, na = raytrace.render_aovs(a, 64, 48)
    tb, nb = raytrace.render_aovs(b, 64, 48)
    hit = np.isfinite(ta)
    assert np.array_equal(hit, np.isfinite(tb)) and hit.mean() > 0.3
    assert np.abs(ta[hit] - tb[hit]).max() < 1e-9 * ta[hit].max()
    # a prototype's vertices are float32 in object space, the copies' in world space
    # (docs/scene-format.md): face normals agree to float32's precision (measured 1.5e-7)
    assert np.abs(na - nb).max() < 1e-6


def test_prototype_is_stored_once(scenes):
    a, b = scenes
    ga, gb = a.geometry, b.geometry
    n = len(PLACES)
    proto_tris = int(ga.proto_tris[0, 1] - ga.proto_tris[0, 0])
    assert len(ga.inst_w2o) == n and len(ga.proto_tris) == 1
    assert len(ga.tri_mat) == ga.world_tris + proto_tris
    assert len(gb.tri_mat) == gb.world_tris == ga.world_tris + n * proto_tris
    assert len(ga.sph_mat) == 1 and len(gb.sph_mat) == n


def test_instance_material_fills_only_the_prototypes_unset_materials(scenes):
    ga = scenes[0].geometry
    rows = {"red": 1, "blue": 2, "checks": 3}
    t0, t1 = ga.proto_tris[0]
    assert (ga.tri_mat[t0:t1] == -1).all()                  # the cube and the mesh inherit
    assert ga.sph_mat[0] == rows["blue"]                     # the sphere keeps its own
    assert ga.inst_mat.tolist() == [rows["red"], rows["checks"], 0, rows["checks"], rows["red"]]


def test_light_bounds_see_the_instances(scenes):
    a, b = scenes
    la = build_lights(a.data, a.geometry)
    lb = build_lights(b.data, b.geometry)
    # the directional-light and environment powers depend on the scene's bounding sphere;
    # the lamp's area is that of its float32 vertices in each scene (measured 2e-8 apart)
    assert np.allclose(la.pmf, lb.pmf, rtol=1e-6, atol=0)


def test_instance_queries_against_brute_force():
    """closest_instance_hit / any_instance_hit against every instance's prototype BVH
    queried one by one with its own object-space ray."""
    rng = np.random.default_rng(4)
    tris = rng.normal(size=(40, 3, 3)) * 0.5
    protos = {"soup": {"type": "group", "children": [
        {"type": "triangle", "vertices": t.tolist()} for t in tris] + [{"type": "sphere", "radius": 0.3}]}}
    places = [{"type": "instance", "prototype": "soup",
               "transform": [{"translate": rng.uniform(-3, 3, 3).tolist()},
                             {"rotate": {"axis": rng.normal(size=3).tolist(), "angle": float(rng.uniform(0, 360))}},
                             {"scale": rng.uniform(0.5, 2, 3).tolist()}]} for _ in range(12)]
    scene = raytrace.load_scene(dict(BASE, materials={}, prototypes=protos, objects=places))
    acc, geo = scene.accel, scene.geometry
    hits = 0
    for _ in range(300):
        o = rng.uniform(-6, 6, 3)
        d = rng.uniform(-3, 3, 3) - o
        hit, inst = closest_instance_hit(acc, *o, *d, 0.0, np.inf)
        best_t, best_i = np.inf, -1
        for i in range(len(geo.inst_w2o)):
            m = geo.inst_w2o[i]
            oo, dd = m[:, :3] @ o + m[:, 3], m[:, :3] @ d
            t0, t1 = geo.proto_tris[0]
            h = _brute(geo, oo, dd, t0, t1)
            if h < best_t:
                best_t, best_i = h, i
        assert (inst >= 0) == np.isfinite(best_t)
        assert any_instance_hit(acc, *o, *d, 0.0, np.inf) == np.isfinite(best_t)
        if inst >= 0:
            hits += 1
            assert inst == best_i and abs(hit.t - best_t) < 1e-9 * max(1.0, best_t)
            assert not any_instance_hit(acc, *o, *d, 0.0, hit.t * (1 - 1e-9))
    assert hits > 30
    # the world BVH of this scene is empty: every hit came through the instances
    assert closest_hit(acc, 0.0, 0.0, 10.0, 0.0, 0.0, -1.0, 0.0, np.inf).kind == 0


def _brute(geo, o, d, t0, t1):
    """Nearest t of the ray against triangles [t0, t1) and the prototype's one sphere."""
    best = np.inf
    for k in range(t0, t1):
        v0, v1, v2 = geo.tri_v0[k], geo.tri_v1[k], geo.tri_v2[k]
        e1, e2 = v1 - v0, v2 - v0
        p = np.cross(d, e2)
        det = e1 @ p
        if abs(det) < 1e-14:
            continue
        s = o - v0
        u = (s @ p) / det
        q = np.cross(s, e1)
        v = (d @ q) / det
        t = (e2 @ q) / det
        if u >= 0 and v >= 0 and u + v <= 1 and t > 0:
            best = min(best, t)
    s0 = geo.proto_spheres[0, 0]
    w = geo.sph_w2o[s0]
    qo, qd = w[:, :3] @ o + w[:, 3], w[:, :3] @ d
    a, b, c = qd @ qd, qo @ qd, qo @ qo - 1
    disc = b * b - a * c
    if disc >= 0:
        for t in ((-b - np.sqrt(disc)) / a, (-b + np.sqrt(disc)) / a):
            if t > 0:
                best = min(best, t)
                break
    return best


@pytest.mark.parametrize("mutate,message", [
    (lambda s: s["objects"][0].update(prototype="nope"), r"objects\[0\]\.prototype: unknown prototype 'nope'"),
    (lambda s: s["prototypes"]["thing"]["children"].append({"type": "plane", "normal": [0, 1, 0]}),
     r"prototypes\.thing\.children\[3\]: a prototype cannot hold an infinite plane"),
    (lambda s: s["prototypes"]["thing"]["children"][1].update(emission=[1, 1, 1]),
     r"prototypes\.thing\.children\[1\]\.emission: instanced shapes cannot emit"),
    (lambda s: s["prototypes"]["thing"]["children"].append({"type": "instance", "prototype": "thing"}),
     r"prototypes\.thing\.children\[3\]: a prototype cannot hold instances"),
])
def test_bad_prototypes_and_instances(mutate, message):
    import pathlib
    s = instanced()
    s["prototypes"] = copy.deepcopy(s["prototypes"])
    mutate(s)
    with pytest.raises(raytrace.SceneError, match=message):
        raytrace.load_scene(s, base_dir=pathlib.Path(__file__).resolve().parent)


def test_an_empty_prototype_shows_nothing():
    import pathlib
    s = instanced()
    s["prototypes"] = dict(s["prototypes"], empty={"type": "group", "children": []})
    s["objects"] += [{"type": "instance", "prototype": "empty"}] * 3
    scene = raytrace.load_scene(s, base_dir=pathlib.Path(__file__).resolve().parent)
    assert len(scene.geometry.inst_w2o) == len(PLACES)


def test_a_prototype_used_once_is_placed_in_world_space():
    import pathlib
    base = pathlib.Path(__file__).resolve().parent
    one = dict(instanced(), objects=instanced()["objects"][:1] + EXTRA)
    flat = dict(flattened(), objects=flattened()["objects"][:1] + EXTRA)
    a, b = raytrace.load_scene(one, base_dir=base), raytrace.load_scene(flat, base_dir=base)
    assert len(a.geometry.inst_w2o) == 0 and a.geometry.world_tris == b.geometry.world_tris
    kw = dict(width=32, height=24, spp=2, integrator="path")
    assert np.array_equal(raytrace.render(a, **kw), raytrace.render(b, **kw))
