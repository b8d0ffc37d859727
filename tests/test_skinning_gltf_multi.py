"""Skins that deform several meshes (a character split into torso, head and legs).

The model is written here (``multi_skin``): an armature node above four joints (hips,
spine, head, leg) whose skin deforms three mesh nodes with their own (ignored)
transforms, materials and primitives, plus a second skin (a two-joint prop with its own
mesh), and one animation. Every posed vertex is compared with linear blend skinning
computed by hand from the file's raw buffers: ``p' = sum_j w_j (G_j IBM_j) p`` with
``G_j`` the joint node's global transform (node TRS and keyframes read from the JSON and
the buffer, rotations about one axis interpolated by angle), the mesh node's own
transform ignored as glTF prescribes for skinned meshes. Checked through
``skinning.load_gltf`` (one merged mesh per skin), ``skinning.load_gltf_scene`` (the
parts), the renderer's glTF reader (``{"type": "gltf"}`` objects and direct rendering)
and the ``skinned_mesh`` scene object. ``../shared/assets/simple_skin.gltf`` is used
for the issue's reproduction only (skipped without ../shared).
"""
import base64
import json
import math

import numpy as np
import pytest
from conftest import shared_path
from gltf_builder import FLOAT, UBYTE, USHORT, GltfBuilder
from hostile import run_main

import raytrace
import skinning as sk
from raytrace.errors import SceneError
from raytrace.scene.gltf import load_gltf as rt_load_gltf
from raytrace.scene.objects.skinning import build_skinned_mesh
from skinning.cli import main as skinning_main
from skinning.errors import SkinningError, SkinningFileError

# ------------------------------------------------------------------ the model

ARMATURE = {"translation": [0.2, 0.0, 0.1], "rotation_y": 20.0, "scale": 1.2}
# joint nodes 1..4 (rest local translations); node 0 is the armature (not a joint)
JOINTS = {1: ("hips", 0, [0.0, 1.0, 0.0]), 2: ("spine", 1, [0.0, 0.4, 0.0]),
          3: ("head", 2, [0.0, 0.5, 0.0]), 4: ("leg", 1, [0.0, -0.1, 0.0])}
SKIN0_JOINTS = [3, 1, 4, 2]                # deliberately not parents-first
PROP_JOINTS = {8: ("prop_base", None, [1.5, 1.0, 0.0]), 9: ("prop_tip", 8, [0.0, 0.5, 0.0])}
SKIN1_JOINTS = [9, 8]
MESH_NODES = {5: "torso", 6: "head_mesh", 7: "legs", 10: "prop"}
# emissive colours of the materials (black diffuse otherwise): shirt, badge, head, legs, prop
COLOURS = [[0.9, 0.1, 0.1], [0.1, 0.9, 0.1], [0.1, 0.1, 0.9], [0.9, 0.8, 0.1], [0.7, 0.7, 0.7]]


def axis_angle_matrix(axis, deg):
    """4x4 rotation by ``deg`` degrees about unit ``axis`` (Rodrigues)."""
    k = np.asarray(axis, float)
    a = math.radians(deg)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    m = np.eye(4)
    m[:3, :3] = np.eye(3) + math.sin(a) * kx + (1 - math.cos(a)) * kx @ kx
    return m


def quat_xyzw(axis, deg):
    h = math.radians(deg) / 2
    return [*(np.asarray(axis, float) * math.sin(h)), math.cos(h)]


def translation(t):
    m = np.eye(4)
    m[:3, 3] = t
    return m


def armature_matrix():
    a = ARMATURE
    return (translation(a["translation"]) @ axis_angle_matrix([0, 1, 0], a["rotation_y"])
            @ np.diag([a["scale"]] * 3 + [1.0]))


def box_vertices(centre, half):
    """The 8 corners of a box, then 24 triangles' indices (12 faces, outward)."""
    c, h = np.asarray(centre, float), np.asarray(half, float)
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    faces = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
             [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]]
    return c + corners * h, np.array(faces)


def skinned_prim(g, points, joints, weights, material, jtype=USHORT, wtype=FLOAT):
    """A primitive of ``points`` (armature space, mapped to world bind space here)."""
    world = points @ armature_matrix()[:3, :3].T + armature_matrix()[:3, 3]
    _, faces = box_vertices([0, 0, 0], [1, 1, 1])
    w = np.asarray(weights, float)
    if wtype == UBYTE:                        # normalised bytes summing to exactly 255
        w8 = np.floor(w * 255 + 0.5)
        w8[:, 0] = 255 - w8[:, 1:].sum(axis=1)
        wacc = g.accessor(w8, "VEC4", UBYTE, normalized=True)
    else:
        wacc = g.accessor(w, "VEC4")
    return {"attributes": {"POSITION": g.accessor(world, "VEC3", minmax=True),
                           "JOINTS_0": g.accessor(np.asarray(joints), "VEC4", jtype),
                           "WEIGHTS_0": wacc},
            "indices": g.accessor(faces.ravel(), "SCALAR", USHORT), "material": material}


def blend(points, y0, y1):
    """(N,) weight of the upper joint: 0 below ``y0``, 1 above ``y1``, linear between."""
    return np.clip((points[:, 1] - y0) / (y1 - y0), 0.0, 1.0)


def multi_skin(path):
    """Write the model (see the module docstring) to ``path`` (.gltf or .glb)."""
    g = GltfBuilder()
    g.doc["materials"] = [{"name": n, "pbrMetallicRoughness": {"baseColorFactor": [0, 0, 0, 1],
                                                               "metallicFactor": 0},
                           "emissiveFactor": c}
                          for n, c in zip(["shirt", "badge", "skin", "trousers", "wood"], COLOURS)]
    # skin 0 joint slots: 0 head, 1 hips, 2 leg, 3 spine (SKIN0_JOINTS order)
    torso, _ = box_vertices([0, 1.3, 0], [0.25, 0.3, 0.15])
    up = blend(torso, 1.1, 1.5)
    badge, _ = box_vertices([0.08, 1.4, 0.17], [0.06, 0.06, 0.02])
    bup = blend(badge, 1.1, 1.5)
    head, _ = box_vertices([0, 2.05, 0], [0.15, 0.15, 0.15])
    hup = blend(head, 1.9, 2.2)
    legs, _ = box_vertices([0, 0.55, 0], [0.2, 0.4, 0.12])
    lup = blend(legs, 0.5, 0.95)
    prop, _ = box_vertices([1.5, 1.25, 0], [0.05, 0.25, 0.05])
    pup = blend(prop, 1.0, 1.5)
    n8 = np.zeros((8, 2))
    meshes = [
        {"name": "torso", "primitives": [
            skinned_prim(g, torso, np.tile([1, 3, 0, 0], (8, 1)), np.c_[1 - up, up, n8], 0),
            skinned_prim(g, badge, np.tile([3, 1, 0, 0], (8, 1)), np.c_[bup, 1 - bup, n8], 1)]},
        {"name": "head", "primitives": [
            skinned_prim(g, head, np.tile([3, 0, 1, 0], (8, 1)),
                         np.c_[0.7 * (1 - hup), 0.3 + 0.7 * hup, 0 * hup, 0 * hup], 2)]},
        {"name": "legs", "primitives": [
            skinned_prim(g, legs, np.tile([2, 1, 0, 0], (8, 1)), np.c_[1 - lup, lup, n8], 3,
                         jtype=UBYTE, wtype=UBYTE)]},
        {"name": "prop", "primitives": [
            skinned_prim(g, prop, np.tile([1, 0, 0, 0], (8, 1)), np.c_[1 - pup, pup, n8], 4)]},
    ]
    g.doc["meshes"] = meshes
    a = ARMATURE
    nodes = [{"name": "armature", "translation": a["translation"],
              "rotation": quat_xyzw([0, 1, 0], a["rotation_y"]), "scale": [a["scale"]] * 3,
              "children": [1]}]
    for n, (name, _, t) in JOINTS.items():
        nodes.append({"name": name, "translation": t})
    nodes[1]["children"] = [2, 4]
    nodes[2]["children"] = [3]
    nodes += [{"name": "torso", "mesh": 0, "skin": 0, "translation": [3, 0, 0]},
              {"name": "head_mesh", "mesh": 1, "skin": 0, "rotation": quat_xyzw([1, 0, 0], 90)},
              {"name": "legs", "mesh": 2, "skin": 0, "scale": [2, 2, 2]},
              {"name": "prop_base", "translation": PROP_JOINTS[8][2], "children": [9]},
              {"name": "prop_tip", "translation": PROP_JOINTS[9][2]},
              {"name": "prop", "mesh": 3, "skin": 1}]
    g.doc["nodes"] = nodes
    g.doc["scenes"] = [{"nodes": [0, 5, 6, 7, 8, 10]}]
    g.doc["scene"] = 0

    def bind_inverse(joint_nodes, globals_):
        inv = np.stack([np.linalg.inv(globals_[n]) for n in joint_nodes])
        return g.accessor(inv.transpose(0, 2, 1).reshape(-1, 16), "MAT4")   # column-major

    g.doc["skins"] = [{"joints": SKIN0_JOINTS, "skeleton": 1,
                       "inverseBindMatrices": bind_inverse(SKIN0_JOINTS, rest_globals())},
                      {"joints": SKIN1_JOINTS,
                       "inverseBindMatrices": bind_inverse(SKIN1_JOINTS, rest_globals())}]
    samplers, channels = [], []
    for node, target, times, values, interp in CHANNELS:
        if target == "rotation":
            values = [quat_xyzw(axis, deg) for axis, deg in values]
        samplers.append({"input": g.accessor(np.array(times, float), "SCALAR", minmax=True),
                         "output": g.accessor(np.array(values, float),
                                              "VEC4" if target == "rotation" else "VEC3"),
                         "interpolation": interp})
        channels.append({"sampler": len(samplers) - 1, "target": {"node": node, "path": target}})
    g.doc["animations"] = [{"name": "wave", "samplers": samplers, "channels": channels}]
    return g.save(path)


# (node, path, key times, key values, interpolation); rotations as (axis, degrees)
CHANNELS = [
    (1, "translation", [0, 2], [[0, 1, 0], [0.3, 1, 0]], "LINEAR"),
    (2, "rotation", [0, 1, 2], [([0, 0, 1], 0), ([0, 0, 1], 30), ([0, 0, 1], -20)], "LINEAR"),
    (3, "rotation", [0, 2], [([0, 1, 0], 0), ([0, 1, 0], 60)], "LINEAR"),
    (4, "rotation", [0.5, 1.5], [([1, 0, 0], 0), ([1, 0, 0], -40)], "STEP"),
    (5, "translation", [0, 2], [[3, 0, 0], [3, 1, 0]], "LINEAR"),       # a mesh node: ignored
    (9, "rotation", [0, 1.5], [([1, 0, 0], 0), ([1, 0, 0], 90)], "LINEAR"),
]


def rest_globals():
    """Global rest transforms of the joint nodes (from the values the model is built of)."""
    out = {}
    for n, (_, parent, t) in {**JOINTS, **PROP_JOINTS}.items():
        above = armature_matrix() if parent == 0 else np.eye(4) if parent is None else out[parent]
        out[n] = above @ translation(t)
    return out


# ------------------------------------------------------------ the hand computation
class RawFile:
    """The written file read back with json, base64 and numpy only."""

    def __init__(self, path):
        self.doc = json.loads(path.read_text())
        self.blob = base64.b64decode(self.doc["buffers"][0]["uri"].split(",", 1)[1])

    def accessor(self, k):
        acc = self.doc["accessors"][k]
        bv = self.doc["bufferViews"][acc["bufferView"]]
        dtype = {5121: "u1", 5123: "<u2", 5126: "<f4"}[acc["componentType"]]
        n = {"SCALAR": 1, "VEC3": 3, "VEC4": 4, "MAT4": 16}[acc["type"]]
        start = bv.get("byteOffset", 0) + acc.get("byteOffset", 0)
        a = np.frombuffer(self.blob, dtype, acc["count"] * n, start).reshape(acc["count"], n)
        a = a.astype(np.float64)
        return a / 255.0 if acc.get("normalized") else a

    def channel_value(self, node, path, t):
        """Value of the animation's channel on (node, path) at t, or None."""
        anim = self.doc["animations"][0]
        for ch in anim["channels"]:
            if ch["target"] == {"node": node, "path": path}:
                smp = anim["samplers"][ch["sampler"]]
                times = self.accessor(smp["input"])[:, 0]
                vals = self.accessor(smp["output"])
                i = int(np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(times) - 1))
                if t <= times[0] or t >= times[-1] or smp["interpolation"] == "STEP":
                    return ("key", vals[0 if t <= times[0] else -1 if t >= times[-1] else i])
                u = (t - times[i]) / (times[i + 1] - times[i])
                return ("lerp", vals[i], vals[i + 1], u)
        return None

    def local(self, n, t):
        """Node n's local matrix at time t (the rotations are about one axis per channel:
        slerp between them turns the angle linearly)."""
        node = self.doc["nodes"][n]
        tr = np.array(node.get("translation", [0, 0, 0]), float)
        q = np.array(node.get("rotation", [0, 0, 0, 1]), float)
        s = np.array(node.get("scale", [1, 1, 1]), float)
        v = self.channel_value(n, "translation", t)
        if v is not None:
            tr = v[1] if v[0] == "key" else (1 - v[3]) * v[1] + v[3] * v[2]
        v = self.channel_value(n, "rotation", t)
        if v is not None and v[0] == "key":
            q = v[1]
        rot = quat_matrix(q)
        if v is not None and v[0] == "lerp":            # both keys turn about one axis
            q0, q1 = v[1], v[2]
            axis = q1[:3] if np.any(q1[:3]) else q0[:3]
            axis = axis / np.linalg.norm(axis)
            a0, a1 = (2 * math.atan2(np.dot(k[:3], axis), k[3]) for k in (q0, q1))
            rot = axis_angle_matrix(axis, math.degrees((1 - v[3]) * a0 + v[3] * a1))
        return translation(tr) @ rot @ np.diag([*s, 1.0])

    def global_(self, n, t):
        parent = {c: p for p, nd in enumerate(self.doc["nodes"]) for c in nd.get("children", [])}
        m = self.local(n, t)
        while n in parent:
            n = parent[n]
            m = self.local(n, t) @ m
        return m

    def posed(self, mesh_node, t):
        """[(posed positions (n,3), faces, material)] per primitive of the node's mesh."""
        node = self.doc["nodes"][mesh_node]
        skin = self.doc["skins"][node["skin"]]
        ibm = self.accessor(skin["inverseBindMatrices"]).reshape(-1, 4, 4).transpose(0, 2, 1)
        mats = np.stack([self.global_(j, t) @ ibm[k] for k, j in enumerate(skin["joints"])])
        out = []
        for prim in self.doc["meshes"][node["mesh"]]["primitives"]:
            a = prim["attributes"]
            p = self.accessor(a["POSITION"])
            j = self.accessor(a["JOINTS_0"]).astype(int)
            w = self.accessor(a["WEIGHTS_0"])
            ph = np.c_[p, np.ones(len(p))]
            q = np.einsum("vk,vkij,vj->vi", w, mats[j], ph)[:, :3]
            faces = self.accessor(prim["indices"]).astype(int).reshape(-1, 3)
            out.append((q, faces, prim["material"]))
        return out


def quat_matrix(q):
    x, y, z, w = q / np.linalg.norm(q)
    m = np.eye(4)
    m[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                 [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                 [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    return m


TIMES = [0.0, 0.4, 1.0, 1.7, 3.0]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("multi")
    path = multi_skin(folder / "character.gltf")
    multi_skin(folder / "character.glb")
    return path, RawFile(path)


def hand(raw, nodes, t):
    """Posed positions of ``nodes``' meshes, all primitives concatenated in order."""
    return np.vstack([q for n in nodes for q, _, _ in raw.posed(n, t)])


# ------------------------------------------------------------------ the example

def test_reproduction_second_node_with_the_skin_is_skinned(tmp_path):
    src = shared_path("assets", "simple_skin.gltf")
    doc = json.loads(src.read_text())
    doc["nodes"].append({"skin": 0, "mesh": 0, "translation": [9, 9, 9]})
    doc["scenes"][0]["nodes"].append(len(doc["nodes"]) - 1)
    p = tmp_path / "two.gltf"
    p.write_text(json.dumps(doc))
    one = sk.load_gltf(src)
    two = sk.load_gltf(p)
    assert one.num_vertices == 10 and two.num_vertices == 20
    assert two.faces.shape == (16, 3) and two.faces[8:].min() == 10
    pose = two.pose_at(0, 1.25)
    v = two.skin(pose, normals=None)
    want = one.skin(one.pose_at(0, 1.25), normals=None)
    assert abs(want - one.vertices).max() > 0.3                # the pose moves vertices
    np.testing.assert_allclose(v, np.vstack([want, want]), atol=1e-12)
    gs = rt_load_gltf(p, animation=0, time=1.25)
    assert len(gs.placements) == 2
    for pl in gs.placements:
        np.testing.assert_allclose(pl.matrix, np.eye(4))
        np.testing.assert_allclose(gs.meshes[pl.mesh][0].positions, want, atol=1e-12)


# ------------------------------------------------------------------ the skinning library

@pytest.mark.parametrize("t", TIMES)
def test_merged_skin_matches_hand_skinning(model, t):
    path, raw = model
    m = sk.load_gltf(path)
    assert m.num_vertices == 32 and m.faces.shape == (48, 3)
    assert m.skeleton.names == ["hips", "leg", "spine", "head"]       # parents first
    assert list(m.skeleton.parents) == [-1, 0, 0, 2]
    v = m.skin(m.pose_at("wave", t), normals=None)
    want = hand(raw, [5, 6, 7], t)
    np.testing.assert_allclose(v, want, atol=2e-6)
    if t > 0:
        assert abs(want - hand(raw, [5, 6, 7], 0.0)).max() > 0.05    # the pose moves it
    prop = sk.load_gltf(path, skin=1)
    np.testing.assert_allclose(prop.skin(prop.pose_at(0, t), normals=None), hand(raw, [10], t),
                               atol=2e-6)


def test_rest_pose_is_the_bind_pose(model):
    """The inverse bind matrices invert the rest globals (armature included): at rest the
    posed mesh is the file's positions, although every mesh node has a transform (up to
    the float32 rounding of the stored matrices)."""
    path, raw = model
    m = sk.load_gltf(path)
    np.testing.assert_allclose(m.skin(None, normals=None), m.vertices, atol=1e-6)
    np.testing.assert_allclose(hand(raw, [5, 6, 7], 0.0), m.vertices, atol=2e-6)


@pytest.mark.parametrize("t", TIMES)
def test_scene_parts_match_hand_skinning(model, t):
    path, raw = model
    scene = sk.load_gltf_scene(path)
    assert [(p.node, p.name, p.mesh, p.skin) for p in scene.parts] == [
        (5, "torso", 0, 0), (6, "head_mesh", 1, 0), (7, "legs", 2, 0), (10, "prop", 3, 1)]
    assert scene.skins == [0, 1] and scene.num_vertices == 40 and scene.animations == ["wave"]
    poses = scene.pose_at("wave", t)
    results = scene.skin(poses)
    for part, (v, n) in zip(scene.parts, results):
        want = raw.posed(part.node, t)
        np.testing.assert_allclose(v, np.vstack([q for q, _, _ in want]), atol=2e-6)
        np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1.0, atol=1e-12)
        # the primitives keep their ranges, faces and materials
        assert len(part.primitives) == len(want)
        for pr, (q, faces, material) in zip(part.primitives, want):
            assert (pr.num_vertices, pr.num_faces, pr.material) == (len(q), len(faces), material)
            np.testing.assert_array_equal(
                part.model.faces[pr.first_face:pr.first_face + pr.num_faces] - pr.first_vertex,
                faces)
    assert [pr.material for p in scene.parts for pr in p.primitives] == [0, 1, 2, 3, 4]
    # parts of one skin share one skeleton; the merged model is their concatenation
    assert scene.parts[0].model.skeleton is scene.parts[2].model.skeleton
    merged = scene.merged(0)
    np.testing.assert_allclose(merged.skin(poses[0], normals=None),
                               np.vstack([r[0] for r in results[:3]]), atol=1e-12)


def test_scene_loop_keeps_the_skins_in_step(model):
    """The animation's joint channels span 0..2 s over both skins (the prop's own channel
    ends at 1.5 s): looped, 2.5 s is 0.5 s for both. The single-skin model wraps by its
    own channels (2.5 s -> 1.0 s for the prop)."""
    path, raw = model
    scene = sk.load_gltf_scene(path)
    poses = scene.pose_at(0, 2.5, loop=True)
    for part, v in zip(scene.parts, scene.skin(poses, normals=None)):
        np.testing.assert_allclose(v, hand(raw, [part.node], 0.5), atol=2e-6)
    prop = sk.load_gltf(path, skin=1)
    np.testing.assert_allclose(prop.skin(prop.pose_at(0, 2.5, loop=True), normals=None),
                               hand(raw, [10], 1.0), atol=2e-6)


def test_choosing_one_node(model):
    path, raw = model
    by_name = sk.load_gltf(path, node="head_mesh")
    by_index = sk.load_gltf(path, node=6)
    for m in (by_name, by_index):
        assert m.num_vertices == 8
        np.testing.assert_allclose(m.skin(m.pose_at(0, 1.7), normals=None), hand(raw, [6], 1.7),
                                   atol=2e-6)
    prop = sk.load_gltf(path, node="prop")                     # the node's skin: 1
    assert prop.skeleton.names == ["prop_base", "prop_tip"]
    scene = sk.load_gltf_scene(path, nodes=["legs", 5])
    assert [p.node for p in scene.parts] == [7, 5] and scene.part("legs").node == 7
    with pytest.raises(SkinningFileError, match=r"character.gltf: nodes\[0\]: is not a skinned mesh"):
        sk.load_gltf(path, node=0)
    with pytest.raises(SkinningError, match=r"node 'prop' uses skin 1, not skin 0"):
        sk.load_gltf(path, skin=0, node="prop")
    with pytest.raises(SkinningError, match=r"no node named 'tail'"):
        sk.load_gltf(path, node="tail")
    with pytest.raises(SkinningError, match=r"node 11 does not exist \(there are 11\)"):
        sk.load_gltf_scene(path, nodes=[11])
    with pytest.raises(SkinningError, match=r"no skinned part for node 'armature'"):
        scene.part("armature")


def test_skinning_cli_counts_every_mesh(model, capsys):
    path, _ = model
    r = run_main(skinning_main, ["info", "--gltf", path], capsys)
    assert r.status == 0
    assert "4 joints, 32 vertices, 48 triangles" in r.out


# ------------------------------------------------------------------ the renderer

@pytest.mark.parametrize("t", [0.4, 1.7])
def test_renderer_poses_every_mesh(model, t):
    path, raw = model
    glb = path.with_suffix(".glb")
    gs = rt_load_gltf(glb, animation="wave", time=t)
    skinned = {pl.node: pl for pl in gs.placements}
    assert sorted(skinned) == [5, 6, 7, 10]
    for node, pl in skinned.items():
        np.testing.assert_allclose(pl.matrix, np.eye(4))     # posed in world space
        prims = gs.meshes[pl.mesh]
        want = raw.posed(node, t)
        assert len(prims) == len(want)
        for prim, (q, faces, material) in zip(prims, want):
            np.testing.assert_allclose(prim.positions, q, atol=2e-6)
            np.testing.assert_array_equal(prim.faces, faces)
            assert prim.material == material
            assert gs.materials[material].emission is not None
    names = [gs.materials[p.material].name for pl in gs.placements for p in gs.meshes[pl.mesh]]
    assert names == ["shirt", "badge", "skin", "trousers", "wood"]


def test_direct_render_shows_every_mesh_in_its_material(model):
    """Each material emits its own colour over black diffuse: the path tracer sees an
    emitter directly as exactly its emission, so every mesh of the skin shows up as
    pixels of exactly its colour (the badge is small; the rest are large)."""
    path, _ = model
    scene = raytrace.load_scene(path.with_suffix(".glb"))
    image = np.asarray(raytrace.render(scene, width=48, height=48, spp=1))
    counts = [int(np.all(np.abs(image[..., :3] - c) < 1e-5, axis=-1).sum()) for c in COLOURS]
    assert all(c >= 3 for c in counts), counts
    assert counts[0] > 20 and counts[3] > 20, counts          # torso and legs are large


def test_skinned_mesh_object_takes_all_meshes_or_one(model):
    path, raw = model
    obj = {"gltf": path.name, "animation": "wave", "time": 1.0}
    v, f, n = build_skinned_mesh(obj, "objects[0]", path.parent)
    np.testing.assert_allclose(v, hand(raw, [5, 6, 7], 1.0), atol=2e-6)
    assert f.shape == (48, 3) and n.shape == (32, 3)
    v, f, n = build_skinned_mesh({**obj, "node": "legs"}, "objects[0]", path.parent)
    np.testing.assert_allclose(v, hand(raw, [7], 1.0), atol=2e-6)
    assert f.shape == (12, 3)
    v, f, n = build_skinned_mesh({**obj, "skin": 1}, "objects[0]", path.parent)
    np.testing.assert_allclose(v, hand(raw, [10], 1.0), atol=2e-6)
    with pytest.raises(SceneError, match=r"objects\[0\]\.node: .*no node named 'tail'"):
        build_skinned_mesh({**obj, "node": "tail"}, "objects[0]", path.parent)
    with pytest.raises(SceneError, match=r"objects\[0\]\.node: only used with 'gltf'"):
        build_skinned_mesh({"skel": "a", "attach": "b", "obj": "c", "node": 1}, "objects[0]",
                           path.parent)


# ------------------------------------------------------------------ bad files

def edited(tmp_path, model, edit, name="bad.gltf"):
    path, _ = model
    doc = json.loads(path.read_text())
    edit(doc)
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


def with_blob(doc, blob):
    doc["buffers"][0]["uri"] = ("data:application/octet-stream;base64,"
                                + base64.b64encode(bytes(blob)).decode())


def test_bad_second_mesh_names_the_file_and_accessor(tmp_path, model, capsys):
    """A joint index past the skin in the head mesh (the second part) and a NaN position
    in the legs mesh (the third): one-line errors naming the file, the accessor and the
    mesh, from the library, the renderer and the command line."""
    path, raw = model
    attrs = raw.doc["meshes"][1]["primitives"][0]["attributes"]
    acc = raw.doc["accessors"][attrs["JOINTS_0"]]
    blob = bytearray(raw.blob)
    at = raw.doc["bufferViews"][acc["bufferView"]]["byteOffset"] + 2 * 8   # vertex 2, slot 0
    blob[at:at + 2] = np.array([7], "<u2").tobytes()
    p = edited(tmp_path, model, lambda doc: with_blob(doc, blob))
    msg = (r"bad.gltf: meshes\[1\].primitives\[0\].attributes.JOINTS_0: joint index 7 but "
           r"the skin has 4 joints")
    with pytest.raises(SkinningFileError, match=msg):
        sk.load_gltf(p)
    with pytest.raises(SceneError, match=msg) as e:
        rt_load_gltf(p, animation=0, time=0.5)
    assert "\n" not in str(e.value)
    assert sk.load_gltf(p, skin=1).num_vertices == 8          # the other skin is fine

    pos = raw.doc["meshes"][2]["primitives"][0]["attributes"]["POSITION"]
    acc = raw.doc["accessors"][pos]
    blob = bytearray(raw.blob)
    at = raw.doc["bufferViews"][acc["bufferView"]]["byteOffset"] + 3 * 12 + 4   # vertex 3, y
    blob[at:at + 4] = np.array([np.nan], "<f4").tobytes()
    p = edited(tmp_path, model, lambda doc: with_blob(doc, blob), "nan.gltf")
    with pytest.raises(SkinningFileError, match=rf"nan.gltf: accessors\[{pos}\]: non-finite number "
                       rf"in element 3 .*used as meshes\[2\].primitives\[0\].attributes.POSITION"):
        sk.load_gltf_scene(p)
    with pytest.raises(SceneError, match=rf"nan.gltf: .*accessors\[{pos}\]"):
        rt_load_gltf(p)
    r = run_main(skinning_main, ["info", "--gltf", p], capsys)
    assert r.status == 2 and r.err.count("\n") == 1 and f"accessors[{pos}]" in r.err, r.err


def test_bad_skin_reference_of_another_part(tmp_path, model):
    def edit(doc):
        doc["nodes"][7]["skin"] = 5

    p = edited(tmp_path, model, edit)
    with pytest.raises(SkinningFileError, match=r"bad.gltf: nodes\[7\].skin: skin 5 does not "
                                                r"exist \(there are 2\)"):
        sk.load_gltf_scene(p)
    with pytest.raises(SceneError, match=r"bad.gltf: nodes\[7\].skin: refers to skins\[5\], but "
                                         r"the file has 2"):
        rt_load_gltf(p)
    assert sk.load_gltf(p).num_vertices == 24               # skin 0 is now torso and head
