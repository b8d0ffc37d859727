"""glTF 2.0 scenes: geometry against trimesh (an independent reader), node hierarchies,
animation and materials against hand computations, cameras and lights, direct rendering,
and one-line errors for bad files.

Models: ``scenes/assets/gltf/BoxTextured.glb`` (Khronos sample, textured box),
``scenes/assets/gltf/still_life.gltf`` (ours: hierarchy, six materials, a mesh used
twice), ``../shared/assets/simple_skin.gltf`` (a skin; skipped without ../shared) and
small files written here with ``gltf_builder``.
"""
import base64
import json
import math
import warnings

import numpy as np
import pytest

import raytrace
from raytrace.errors import SceneError
from raytrace.layout import (M_ALPHA, M_COLOR, M_IOR, M_TEX, M_TYPE, MAT_CONDUCTOR, MAT_DIELECTRIC,
                             MAT_DIFFUSE, MAT_ROUGH_CONDUCTOR)
from raytrace.scene.build import build_geometry
from raytrace.scene.gltf import GltfWarning, direct_scene, load_gltf
from raytrace.scene.validate import validate_scene
from raytrace.textures import texture_rgb

from conftest import REPO, shared_path
from gltf_builder import UBYTE, USHORT, GltfBuilder, box, quad

BOX_GLB = REPO / "scenes" / "assets" / "gltf" / "BoxTextured.glb"
STILL_LIFE = REPO / "scenes" / "assets" / "gltf" / "still_life.gltf"


def srgb_decode(c8):
    """sRGB 8-bit codes -> linear (IEC 61966-2-1)."""
    c = np.asarray(c8, np.float64) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def quat(axis, deg):
    """glTF quaternion [x, y, z, w] for a rotation by ``deg`` about unit ``axis``."""
    h = math.radians(deg) / 2
    return [*(np.asarray(axis, float) * math.sin(h)), math.cos(h)]


def geometry(objects, base, materials=None):
    data = {"camera": {"center": [0, 0, 5], "look_at": [0, 0, 0]}, "materials": materials or {},
            "objects": objects}
    validate_scene(data)
    return build_geometry(data, base)[0]


def placed(geo):
    """(world triangles (N,3,3), world corner normals (N,3,3)) of a Geometry: its world-space
    triangles, then each instance's prototype triangles mapped to world space (a glTF
    mesh placed by several nodes is stored once and instanced)."""
    T = geo.world_tris
    tris = [np.stack([geo.tri_v0[:T], geo.tri_v1[:T], geo.tri_v2[:T]], axis=1)]
    normals = [geo.tri_n[:T]]
    for w2o, proto in zip(geo.inst_w2o, geo.inst_proto):
        t0, t1 = geo.proto_tris[proto]
        o2w = np.linalg.inv(np.vstack([w2o, [0, 0, 0, 1]]))
        local = np.stack([geo.tri_v0[t0:t1], geo.tri_v1[t0:t1], geo.tri_v2[t0:t1]], axis=1)
        tris.append(local @ o2w[:3, :3].T + o2w[:3, 3])
        n = geo.tri_n[t0:t1] @ w2o[:, :3]                       # inverse transpose
        normals.append(n / np.linalg.norm(n, axis=2, keepdims=True))
    return np.concatenate(tris), np.concatenate(normals)


def _rows(tris):
    """Triangles in a fixed order (for comparing sets of triangles)."""
    flat = np.round(tris.reshape(len(tris), -1), 9)
    return flat[np.lexsort(flat.T[::-1])]


def world_triangles(gs):
    """(T,3,3) world-space triangles of a GltfScene, placement by placement."""
    out = []
    for pl in gs.placements:
        for prim in gs.meshes[pl.mesh]:
            v = prim.positions @ pl.matrix[:3, :3].T + pl.matrix[:3, 3]
            out.append(v[prim.faces])
    return np.concatenate(out)


def sorted_rows(a):
    a = np.asarray(a).reshape(len(a), -1)
    return a[np.lexsort(a.T[::-1])]


def one_quad_model(path, material=None, **prim_options):
    g = GltfBuilder()
    prim = quad(g, **prim_options)
    if material is not None:
        g.doc["materials"] = [material]
        prim["material"] = 0
    g.doc["meshes"] = [{"primitives": [prim]}]
    g.doc["nodes"] = [{"mesh": 0}]
    g.doc["scenes"] = [{"nodes": [0]}]
    return g, g.save(path)


# ------------------------------------------------------------------ against trimesh
def test_textured_box_matches_trimesh():
    """BoxTextured.glb: world triangles, corner normals and UVs as trimesh reads them
    (trimesh flips v to OpenGL's convention, we keep glTF's: v_ours = 1 - v_trimesh)."""
    trimesh = pytest.importorskip("trimesh")
    gs = load_gltf(BOX_GLB)
    scene = trimesh.load(BOX_GLB, process=False)
    (name,) = scene.graph.nodes_geometry
    m, geom_name = scene.graph[name]
    tm = scene.geometry[geom_name]
    ref = tm.vertices @ m[:3, :3].T + m[:3, 3]
    ours = world_triangles(gs)
    assert len(ours) == len(tm.faces) == 12
    np.testing.assert_allclose(ours, ref[tm.faces], atol=1e-12)     # same order, same winding
    (prim,) = gs.meshes[0]
    np.testing.assert_array_equal(prim.faces, tm.faces)
    np.testing.assert_allclose(prim.normals, tm.vertex_normals, atol=1e-6)
    np.testing.assert_allclose(prim.uvs[:, 0], tm.visual.uv[:, 0], atol=1e-7)
    np.testing.assert_allclose(prim.uvs[:, 1], 1.0 - tm.visual.uv[:, 1], atol=1e-7)
    # the node's matrix turns z up into y up: the box stays [-0.5, 0.5]^3
    lo, hi = gs.bounds()
    np.testing.assert_allclose(lo, -0.5, atol=1e-7)
    np.testing.assert_allclose(hi, 0.5, atol=1e-7)


def test_textured_box_texture_is_the_embedded_png_decoded_from_srgb():
    trimesh = pytest.importorskip("trimesh")
    scene = trimesh.load(BOX_GLB, process=False)
    png = np.asarray(next(iter(scene.geometry.values())).visual.material.baseColorTexture.convert("RGB"))
    geo = geometry([{"type": "gltf", "file": str(BOX_GLB)}], REPO)
    (row,) = set(geo.tri_mat)
    k = int(geo.materials[row, M_TEX])
    assert k >= 0 and geo.materials[row, M_TYPE] == MAT_DIFFUSE
    h, w = png.shape[:2]
    for r, c in [(0, 0), (10, 150), (105, 105), (h - 1, w - 1)]:
        got = texture_rgb(geo.tex_info, geo.tex_texels, k, (c + 0.5) / w, (r + 0.5) / h)
        np.testing.assert_allclose(got, srgb_decode(png[r, c]), rtol=1e-6, atol=1e-7)


def test_textured_box_triangles_carry_their_uvs_into_the_geometry():
    gs = load_gltf(BOX_GLB)
    (prim,) = gs.meshes[0]
    geo = geometry([{"type": "gltf", "file": str(BOX_GLB)}], REPO)
    np.testing.assert_allclose(geo.tri_uv, prim.uvs[prim.faces])
    rot = gs.placements[0].matrix[:3, :3]               # a rotation: z up -> y up
    np.testing.assert_allclose(geo.tri_n, prim.normals[prim.faces] @ rot.T, atol=1e-7)


def test_still_life_matches_trimesh():
    """Our own multi-material model: 6 placements (one mesh twice, one mesh of two
    primitives), the same world triangles as trimesh's scene graph gives."""
    trimesh = pytest.importorskip("trimesh")
    gs = load_gltf(STILL_LIFE)
    scene = trimesh.load(STILL_LIFE, process=False)
    ref = []
    for node in scene.graph.nodes_geometry:
        m, name = scene.graph[node]
        g = scene.geometry[name]
        ref.append((g.vertices @ m[:3, :3].T + m[:3, 3])[g.faces])
    ref = np.concatenate(ref)
    ours = world_triangles(gs)
    assert ours.shape == ref.shape == (5 * 12 + 2 * 2, 3, 3)      # five boxes, two quads
    np.testing.assert_allclose(sorted_rows(ours.round(9)), sorted_rows(ref.round(9)), atol=1e-8)
    assert [p.mesh for p in gs.placements].count(1) == 2            # the red cube, twice
    assert len(gs.meshes[gs.placements[3].mesh]) == 2               # gold + chrome


# ------------------------------------------------------------------ hierarchy by hand
def hierarchy_model(path):
    """parent: T (1, 2, 3), R 90 deg about y; child: T (0, 1, 0), S (2, 1, 1); grandchild:
    a matrix (column-major) that translates by (0, 0, 5); the quad mesh on child and
    grandchild."""
    g = GltfBuilder()
    g.doc["meshes"] = [{"primitives": [quad(g)]}]
    g.doc["nodes"] = [
        {"translation": [1, 2, 3], "rotation": quat([0, 1, 0], 90), "children": [1]},
        {"translation": [0, 1, 0], "scale": [2, 1, 1], "mesh": 0, "children": [2]},
        {"matrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 5, 1], "mesh": 0},
    ]
    g.doc["scenes"] = [{"nodes": [0]}]
    return g.save(path)


def test_node_hierarchy_world_matrices_by_hand(tmp_path):
    gs = load_gltf(hierarchy_model(tmp_path / "h.gltf"))
    assert [p.node for p in gs.placements] == [1, 2]
    p = np.array([1.0, 0.0, 0.0, 1.0])                  # a point of the mesh
    # child: S p = (2, 0, 0); + T = (2, 1, 0); R_y(90): (x, y, z) -> (z, y, -x) = (0, 1, -2);
    # + (1, 2, 3) = (1, 3, 1)
    np.testing.assert_allclose(gs.placements[0].matrix @ p, [1, 3, 1, 1], atol=1e-12)
    # grandchild: (1, 0, 5) -> S: (2, 0, 5) -> T: (2, 1, 5) -> R: (5, 1, -2) -> (6, 3, 1)
    np.testing.assert_allclose(gs.placements[1].matrix @ p, [6, 3, 1, 1], atol=1e-12)


def test_gltf_object_under_a_scene_transform(tmp_path):
    path = hierarchy_model(tmp_path / "h.gltf")
    geo = geometry([{"type": "group", "transform": [{"translate": [10, 0, 0]}],
                     "children": [{"type": "gltf", "file": "h.gltf", "transform": [{"scale": 2}]}]}], tmp_path)
    gs = load_gltf(path)
    want = world_triangles(gs) * 2 + [10, 0, 0]
    got, normals = placed(geo)
    np.testing.assert_allclose(_rows(got), _rows(want), atol=1e-9)
    # normals: the quad faces +z in mesh space; R_y(90) turns it to +x
    np.testing.assert_allclose(normals, np.broadcast_to([1.0, 0, 0], normals.shape), atol=1e-12)


def test_a_scene_without_scenes_shows_its_root_nodes_and_zero_scale_hides(tmp_path):
    g = GltfBuilder()
    g.doc["meshes"] = [{"primitives": [quad(g)]}]
    g.doc["nodes"] = [{"mesh": 0, "children": [1]}, {"mesh": 0, "translation": [0, 0, 1]},
                      {"mesh": 0, "scale": [0, 0, 0]}]
    g.save(tmp_path / "n.glb")
    gs = load_gltf(tmp_path / "n.glb")
    assert [p.node for p in gs.placements] == [0, 1, 2]
    geo = geometry([{"type": "gltf", "file": "n.glb"}], tmp_path)
    assert len(placed(geo)[0]) == 4                       # node 2 (scale 0) is not drawn
    assert len(geo.inst_w2o) == 2 and len(geo.tri_mat) == 2   # the mesh is stored once


# ------------------------------------------------------------------ primitives
def test_indexed_non_indexed_strip_and_fan_give_the_same_triangles(tmp_path):
    """glTF 2.0 spec, 3.7.2.1: strip triangle i = (v_i, v_{i+1+i%2}, v_{i+2-i%2}); fan
    triangle i = (v_{i+1}, v_{i+2}, v_0). Four corners of a square, CCW seen from +z."""
    p = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], float)
    g = GltfBuilder()
    pos = g.accessor(p, "VEC3", minmax=True)
    flat = g.accessor(p[[0, 1, 2, 0, 2, 3]], "VEC3", minmax=True)
    prims = [
        {"attributes": {"POSITION": pos}, "indices": g.accessor(np.array([0, 1, 2, 0, 2, 3]), "SCALAR", UBYTE)},
        {"attributes": {"POSITION": flat}},
        {"attributes": {"POSITION": pos}, "mode": 5, "indices": g.accessor(np.array([1, 2, 0, 3]), "SCALAR", USHORT)},
        {"attributes": {"POSITION": pos}, "mode": 6},
    ]
    g.doc["meshes"] = [{"primitives": prims}]
    g.doc["nodes"] = [{"mesh": 0}]
    g.save(tmp_path / "modes.glb")
    gs = load_gltf(tmp_path / "modes.glb")
    tri = [pr.positions[pr.faces] for pr in gs.meshes[0]]
    expect = p[[[0, 1, 2], [0, 2, 3]]]
    np.testing.assert_allclose(tri[0], expect)
    np.testing.assert_allclose(tri[1], expect)
    np.testing.assert_array_equal(gs.meshes[0][2].faces, [[1, 2, 0], [2, 3, 0]])   # i = 1: (v1, v3, v2)
    np.testing.assert_array_equal(gs.meshes[0][3].faces, [[1, 2, 0], [2, 3, 0]])
    for t in tri:                                         # every one counter-clockwise from +z
        assert (np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0])[:, 2] > 0).all()


def test_sparse_accessor_and_normalised_texcoords(tmp_path):
    """KHR_mesh_quantization-style data: UNSIGNED_BYTE normalised UVs (c / 255) and a
    sparse accessor that moves vertex 2 of the quad to z = 0.5."""
    g = GltfBuilder()
    prim = quad(g, uv=False)
    prim["attributes"]["TEXCOORD_0"] = g.accessor(np.array([[0, 255], [255, 255], [255, 0], [51, 0]]),
                                                  "VEC2", UBYTE, normalized=True)
    acc = g.doc["accessors"][prim["attributes"]["POSITION"]]
    acc["sparse"] = {"count": 1, "indices": {"bufferView": g.view(np.array([2], "<u2").tobytes()),
                                             "componentType": USHORT},
                     "values": {"bufferView": g.view(np.array([1, 1, 0.5], "<f4").tobytes())}}
    g.doc["meshes"] = [{"primitives": [prim]}]
    g.doc["nodes"] = [{"mesh": 0}]
    g.doc["extensionsRequired"] = g.doc["extensionsUsed"] = ["KHR_mesh_quantization"]
    g.save(tmp_path / "q.gltf")
    (pr,) = load_gltf(tmp_path / "q.gltf").meshes[0]
    np.testing.assert_allclose(pr.uvs, [[0, 1], [1, 1], [1, 0], [0.2, 0]])
    np.testing.assert_allclose(pr.positions, [[-1, -1, 0], [1, -1, 0], [1, 1, 0.5], [-1, 1, 0]])


def test_missing_normals_give_flat_shading(tmp_path):
    g = GltfBuilder()
    p = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 1]], float)
    g.doc["meshes"] = [{"primitives": [{"attributes": {"POSITION": g.accessor(p, "VEC3")}}]}]
    g.doc["nodes"] = [{"mesh": 0}]
    g.save(tmp_path / "flat.glb")
    geo = geometry([{"type": "gltf", "file": "flat.glb"}], tmp_path)
    n = np.array([0, -1, 1]) / math.sqrt(2)             # (1,0,0) x (0,1,1) normalised
    np.testing.assert_allclose(geo.tri_n[0], [n, n, n], atol=1e-12)


# ------------------------------------------------------------------ materials
def materials_model(path):
    """One mesh, five primitives (quads at x = 0, 3, 6, ...), one material each."""
    g = GltfBuilder()
    g.doc["extensionsUsed"] = ["KHR_materials_transmission", "KHR_materials_ior",
                               "KHR_materials_emissive_strength"]
    g.doc["materials"] = [
        {"name": "Red", "pbrMetallicRoughness": {"baseColorFactor": [0.8, 0.1, 0.05, 1], "metallicFactor": 0}},
        {"name": "Gold", "pbrMetallicRoughness": {"baseColorFactor": [1, 0.78, 0.34, 1], "roughnessFactor": 0.5}},
        {"name": "Mirror", "pbrMetallicRoughness": {"roughnessFactor": 0.0}},
        {"name": "Water", "pbrMetallicRoughness": {"metallicFactor": 0},
         "extensions": {"KHR_materials_transmission": {"transmissionFactor": 1},
                        "KHR_materials_ior": {"ior": 1.33}}},
        {"pbrMetallicRoughness": {"baseColorFactor": [0, 0, 0, 1], "metallicFactor": 0},
         "emissiveFactor": [1, 0.5, 0.25],
         "extensions": {"KHR_materials_emissive_strength": {"emissiveStrength": 4}}},
    ]
    prims = []
    for k in range(5):
        prim = quad(g, uv=False)
        pos = g.doc["accessors"][prim["attributes"]["POSITION"]]
        bv = g.doc["bufferViews"][pos["bufferView"]]
        p = np.frombuffer(bytes(g.data[bv["byteOffset"]:bv["byteOffset"] + bv["byteLength"]]), "<f4").reshape(-1, 3)
        prim["attributes"]["POSITION"] = g.accessor(p + [3.0 * k, 0, 0], "VEC3")
        prim["material"] = k
        prims.append(prim)
    g.doc["meshes"] = [{"primitives": prims}]
    g.doc["nodes"] = [{"mesh": 0}]
    return g.save(path)


def test_pbr_materials_map_onto_ours(tmp_path):
    """docs/gltf.md's table: metallic >= 0.5 -> conductor (roughness 0) or rough_conductor
    with alpha = roughness^2; transmission >= 0.5 -> dielectric with KHR_materials_ior;
    else diffuse with the base colour; emission = emissiveFactor x emissiveStrength."""
    materials_model(tmp_path / "mats.gltf")
    geo = geometry([{"type": "gltf", "file": "mats.gltf"}], tmp_path)
    rows = geo.tri_mat.reshape(5, 2)[:, 0]
    assert (geo.tri_mat.reshape(5, 2)[:, 1] == rows).all() and len(set(rows)) == 5
    red, gold, mirror, water, lamp = (geo.materials[r] for r in rows)
    assert red[M_TYPE] == MAT_DIFFUSE
    np.testing.assert_allclose(red[M_COLOR:M_COLOR + 3], [0.8, 0.1, 0.05], rtol=1e-7)
    assert gold[M_TYPE] == MAT_ROUGH_CONDUCTOR and gold[M_ALPHA] == pytest.approx(0.25)
    np.testing.assert_allclose(gold[M_COLOR:M_COLOR + 3], [1, 0.78, 0.34], rtol=1e-7)
    assert mirror[M_TYPE] == MAT_CONDUCTOR                      # metallic defaults to 1
    np.testing.assert_allclose(mirror[M_COLOR:M_COLOR + 3], 1.0)
    assert water[M_TYPE] == MAT_DIELECTRIC and water[M_IOR] == pytest.approx(1.33)
    assert lamp[M_TYPE] == MAT_DIFFUSE
    emit = geo.tri_emit.reshape(5, 2)
    assert (emit[:4] == -1).all() and emit[4, 0] == emit[4, 1] >= 0
    np.testing.assert_allclose(geo.emission[emit[4, 0]], [4, 2, 1])


def test_scene_material_of_the_same_name_and_object_material_override(tmp_path):
    materials_model(tmp_path / "mats.gltf")
    green = {"type": "diffuse", "albedo": [0, 1, 0]}
    geo = geometry([{"type": "gltf", "file": "mats.gltf"}], tmp_path, {"mats.gltf#Red": green})
    np.testing.assert_allclose(geo.materials[geo.tri_mat[0], M_COLOR:M_COLOR + 3], [0, 1, 0])
    geo = geometry([{"type": "gltf", "file": "mats.gltf", "material": "green"}], tmp_path, {"green": green})
    assert len(set(geo.tri_mat)) == 1
    np.testing.assert_allclose(geo.materials[geo.tri_mat[0], M_COLOR:M_COLOR + 3], [0, 1, 0])
    assert geo.tri_emit[8] >= 0                                 # the lamp still emits


def test_base_colour_texture_times_factor_and_metallic_roughness_texture(tmp_path):
    """Texels = sRGB-decoded PNG x baseColorFactor; (u, v) = (0, 0) is the image's top-left
    texel (no flip); metallic and roughness factors times the mean of the B and G channels
    of the (linear) metallicRoughness image."""
    rng = np.random.default_rng(3)
    png = rng.integers(0, 256, (4, 6, 3), dtype=np.uint8)
    mr = np.zeros((2, 2, 3), np.uint8)
    mr[..., 1], mr[..., 2] = [[255, 153], [51, 0]], [[255, 255], [255, 127]]   # mean G 0.45, B 0.8745
    g = GltfBuilder()
    g.png_image(png, embed="uri")
    g.png_image(mr)
    g.doc["textures"] = [{"source": 0}, {"source": 1}]
    prim = quad(g)
    prim["material"] = 0
    g.doc["materials"] = [{"name": "Tex", "pbrMetallicRoughness": {
        "baseColorTexture": {"index": 0}, "baseColorFactor": [0.5, 1.0, 0.25, 1.0],
        "metallicRoughnessTexture": {"index": 1}, "roughnessFactor": 0.5}}]
    g.doc["meshes"] = [{"primitives": [prim]}]
    g.doc["nodes"] = [{"mesh": 0}]
    g.save(tmp_path / "t.gltf")
    geo = geometry([{"type": "gltf", "file": "t.gltf"}], tmp_path)
    row = geo.materials[geo.tri_mat[0]]
    assert row[M_TYPE] == MAT_ROUGH_CONDUCTOR                      # metallic 1 x 0.8745 >= 0.5
    assert row[M_ALPHA] == pytest.approx((0.5 * 0.45) ** 2, rel=1e-6)
    k = int(row[M_TEX])
    for r in range(4):
        for c in range(6):
            got = texture_rgb(geo.tex_info, geo.tex_texels, k, (c + 0.5) / 6, (r + 0.5) / 4)
            np.testing.assert_allclose(got, srgb_decode(png[r, c]) * [0.5, 1.0, 0.25], rtol=1e-6, atol=1e-7)
    # the quad's corner (-1, 1) has TEXCOORD (0, 0): the top-left texel's corner
    corner = np.argwhere(np.all(np.isclose(geo.tri_uv, [0, 0]), axis=2))[0]
    v = [geo.tri_v0, geo.tri_v1, geo.tri_v2][corner[1]][corner[0]]
    np.testing.assert_allclose(v, [-1, 1, 0])


def test_alpha_mask_below_cutoff_hides_the_primitive(tmp_path):
    def count(mode, alpha, cutoff=None):
        mat = {"pbrMetallicRoughness": {"baseColorFactor": [1, 1, 1, alpha]}, "alphaMode": mode}
        if cutoff is not None:
            mat["alphaCutoff"] = cutoff
        one_quad_model(tmp_path / f"{mode}{alpha}{cutoff}.glb", mat)
        return len(geometry([{"type": "gltf", "file": f"{mode}{alpha}{cutoff}.glb"}], tmp_path).tri_mat)

    assert count("MASK", 0.4) == 0                      # default cutoff 0.5
    assert count("MASK", 0.6) == 2
    assert count("MASK", 0.6, cutoff=0.7) == 0
    assert count("BLEND", 0.1) == 2                     # blending is drawn opaque
    assert count("OPAQUE", 0.0) == 2


# ------------------------------------------------------------------ animation
def animated_model(path):
    """Node 0 (mesh): translation LINEAR (0,0,0) -> (4,0,0) over t in [0, 2]; rotation
    LINEAR 0 -> 90 deg about y; node 1 (mesh, child): scale STEP 1 -> 3 at t = 1;
    translation CUBICSPLINE (0,0,0) -> (0,4,0) with zero tangents over [0, 2]."""
    g = GltfBuilder()
    g.doc["meshes"] = [{"primitives": [quad(g)]}]
    g.doc["nodes"] = [{"mesh": 0, "children": [1]}, {"mesh": 0, "translation": [0, 0, 7]}]
    t = g.accessor(np.array([0.0, 2.0]), "SCALAR", minmax=True)
    t3 = g.accessor(np.array([0.0, 1.0, 2.0]), "SCALAR", minmax=True)
    cubic = np.zeros((6, 3))
    cubic[4] = [0, 4, 0]                                # rows: in, value, out per key
    g.doc["animations"] = [{"name": "move", "samplers": [
        {"input": t, "output": g.accessor(np.array([[0, 0, 0], [4, 0, 0]], float), "VEC3")},
        {"input": t, "output": g.accessor(np.array([[0, 0, 0, 1], quat([0, 1, 0], 90)]), "VEC4")},
        {"input": t3, "output": g.accessor(np.array([[1, 1, 1], [3, 3, 3], [3, 3, 3]], float), "VEC3"),
         "interpolation": "STEP"},
        {"input": t, "output": g.accessor(cubic, "VEC3"), "interpolation": "CUBICSPLINE"}],
        "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}},
                     {"sampler": 1, "target": {"node": 0, "path": "rotation"}},
                     {"sampler": 2, "target": {"node": 1, "path": "scale"}},
                     {"sampler": 3, "target": {"node": 1, "path": "translation"}},
                     {"sampler": 0, "target": {"node": 1, "path": "weights"}}]}]
    return g.save(path)


IGNORED_WEIGHTS = r"a\.glb: a weights channel animates a node without morph targets; ignored \(animations\[0\]\.channels\[4\]\)"


def load_animated(path, **kwargs):
    """load_gltf of :func:`animated_model` with an animation: its weights channel warns."""
    with pytest.warns(GltfWarning, match=IGNORED_WEIGHTS):
        return load_gltf(path, **kwargs)


def test_animation_channels_sampled_by_hand(tmp_path):
    path = animated_model(tmp_path / "a.glb")
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # no animation: nothing to warn about
        still = load_gltf(path)
    np.testing.assert_allclose(still.placements[1].matrix[:3, 3], [0, 0, 7])
    gs = load_animated(path, animation="move", time=0.5)
    m0, m1 = gs.placements[0].matrix, gs.placements[1].matrix
    np.testing.assert_allclose(m0[:3, 3], [1, 0, 0], atol=1e-12)           # a quarter of the way
    c, s = math.cos(math.radians(22.5)), math.sin(math.radians(22.5))       # slerp: a quarter of 90
    np.testing.assert_allclose(m0[:3, :3], [[c, 0, s], [0, 1, 0], [-s, 0, c]], atol=1e-12)
    # child: STEP scale 1 before t = 1; Hermite with zero tangents at u = 1/4:
    # 3u^2 - 2u^3 = 0.15625 of the way -> y = 0.625 (and its own z of 7 is replaced)
    local = np.linalg.inv(m0) @ m1
    np.testing.assert_allclose(local, [[1, 0, 0, 0], [0, 1, 0, 0.625], [0, 0, 1, 0], [0, 0, 0, 1]], atol=1e-12)
    later = load_animated(path, animation=0, time=1.5)
    local = np.linalg.inv(later.placements[0].matrix) @ later.placements[1].matrix
    np.testing.assert_allclose(np.diag(local)[:3], [3, 3, 3], atol=1e-12)  # STEP: 3 from t = 1
    looped = load_animated(path, animation=0, time=2.5, loop=True)
    np.testing.assert_allclose(looped.placements[0].matrix, gs.placements[0].matrix, atol=1e-12)
    clamped = load_animated(path, animation=0, time=9.0)
    np.testing.assert_allclose(clamped.placements[0].matrix[:3, 3], [4, 0, 0])


def test_animated_scene_object(tmp_path):
    animated_model(tmp_path / "a.glb")
    with pytest.warns(GltfWarning, match=IGNORED_WEIGHTS):
        geo = geometry([{"type": "gltf", "file": "a.glb", "animation": "move", "time": 2.0}], tmp_path)
    corners = placed(geo)[0][:2]                                            # the first quad
    np.testing.assert_allclose(corners.reshape(-1, 3).mean(axis=0), [4, 0, 0], atol=1e-9)
    with pytest.raises(SceneError, match=r"objects\[0\]\.animation: a\.glb has no animation named 'jump'"):
        geometry([{"type": "gltf", "file": "a.glb", "animation": "jump"}], tmp_path)
    with pytest.raises(SceneError, match=r"objects\[0\]\.animation: animation 3 out of range"):
        geometry([{"type": "gltf", "file": "a.glb", "animation": 3}], tmp_path)
    with pytest.raises(SceneError, match=r"objects\[0\]\.time: 'time' needs an 'animation'"):
        geometry([{"type": "gltf", "file": "a.glb", "time": 1.0}], tmp_path)
    with pytest.raises(SceneError, match=r"objects\[0\]\.scene: scene 2 out of range"):
        geometry([{"type": "gltf", "file": "a.glb", "scene": 2}], tmp_path)


def test_skinned_mesh_is_posed_by_the_skinning_library():
    """simple_skin.gltf (two joints: node 1 at (0, 1, 0), its child node 2 rotating): the
    posed vertices are sum_j w_j G_j IBM_j p with everything read here with pygltflib and
    numpy (joint matrices by hand: G_0 = T(0, 1, 0), G_1 = G_0 R(key)). At a key time the
    rotation is the key's quaternion exactly."""
    import pygltflib
    path = shared_path("assets", "simple_skin.gltf")
    g = pygltflib.GLTF2().load(str(path))

    def read(k, dtype, n):
        acc = g.accessors[k]
        bv = g.bufferViews[acc.bufferView]
        data = base64.b64decode(g.buffers[bv.buffer].uri.split(",", 1)[1])
        item = np.dtype(dtype)
        return np.ndarray((acc.count, n), item, data, (bv.byteOffset or 0) + (acc.byteOffset or 0),
                          (bv.byteStride or item.itemsize * n, item.itemsize)).astype(float)

    attrs = g.meshes[0].primitives[0].attributes
    p = read(attrs.POSITION, "<f4", 3)
    joints, weights = read(attrs.JOINTS_0, "<u2", 4).astype(int), read(attrs.WEIGHTS_0, "<f4", 4)
    ibm = read(g.skins[0].inverseBindMatrices, "<f4", 16).reshape(-1, 4, 4).transpose(0, 2, 1)
    smp = g.animations[0].samplers[0]
    times, keys = read(smp.input, "<f4", 1)[:, 0], read(smp.output, "<f4", 4)
    k = int(np.argmax(np.abs(keys[:, 2]) > 0.3))          # a key with a clear rotation
    x, y, z, w = keys[k] / np.linalg.norm(keys[k])
    rot = np.eye(4)
    rot[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                   [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                   [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    g0 = np.eye(4)
    g0[:3, 3] = [0, 1, 0]
    joint_m = np.stack([g0 @ ibm[0], g0 @ rot @ ibm[1]])  # skin.joints = [node 1, node 2]
    ph = np.hstack([p, np.ones((len(p), 1))])
    want = np.einsum("vk,vkij,vj->vi", weights, joint_m[joints], ph)[:, :3]

    gs = load_gltf(path, animation=0, time=float(times[k]))
    (pl,) = gs.placements
    np.testing.assert_allclose(pl.matrix, np.eye(4))     # posed in world space: node ignored
    (prim,) = gs.meshes[pl.mesh]
    assert abs(want - p).max() > 0.3                     # the pose does move vertices
    np.testing.assert_allclose(prim.positions, want, atol=1e-6)
    np.testing.assert_array_equal(prim.faces, load_gltf(path).meshes[0][0].faces)


# ------------------------------------------------------------------ cameras, lights, direct
def camera_light_model(path, cameras=True, lights=True):
    g = GltfBuilder()
    g.doc["meshes"] = [{"primitives": [box(g, 0.5)]}]
    nodes = [{"mesh": 0, "translation": [0, 0.5, 0]}]
    if cameras:
        g.doc["cameras"] = [{"type": "perspective", "perspective": {"yfov": 0.6, "aspectRatio": 2.0, "znear": 0.1}},
                            {"type": "orthographic", "orthographic": {"xmag": 3, "ymag": 1.5, "znear": 0, "zfar": 9}}]
        nodes += [{"camera": 0, "translation": [0, 1, 5], "rotation": quat([1, 0, 0], -30)},
                  {"camera": 1, "translation": [2, 0, 0]}]
    if lights:
        g.doc["extensionsUsed"] = ["KHR_lights_punctual"]
        g.doc["extensions"] = {"KHR_lights_punctual": {"lights": [
            {"type": "point", "color": [1, 0.5, 0.5], "intensity": 10},
            {"type": "directional", "intensity": 3},
            {"type": "spot", "intensity": 2, "spot": {"outerConeAngle": 0.5}}]}}
        nodes += [{"translation": [1, 2, 3], "extensions": {"KHR_lights_punctual": {"light": 0}}},
                  {"rotation": quat([1, 0, 0], -90), "extensions": {"KHR_lights_punctual": {"light": 1}}},
                  {"translation": [0, 4, 0], "extensions": {"KHR_lights_punctual": {"light": 2}}}]
    g.doc["nodes"] = nodes
    g.doc["scenes"] = [{"nodes": list(range(len(nodes)))}]
    return g.save(path)


def test_direct_scene_uses_the_first_camera_and_the_lights(tmp_path):
    data = direct_scene(camera_light_model(tmp_path / "cl.glb"))
    cam = data["camera"]
    assert cam["type"] == "perspective" and cam["fov"] == pytest.approx(math.degrees(0.6))
    np.testing.assert_allclose(cam["center"], [0, 1, 5])
    c, s = math.cos(math.radians(30)), math.sin(math.radians(30))
    np.testing.assert_allclose(cam["direction"], [0, -s, -c], atol=1e-12)   # -z tilted down by 30 deg
    np.testing.assert_allclose(cam["up"], [0, c, -s], atol=1e-12)
    assert (data["image"]["width"], data["image"]["height"]) == (800, 400)   # aspectRatio 2
    point, sun, spot = data["lights"]
    # intensity in cd taken as W/sr: ours is pi * color / attenuation W/sr
    assert point == {"type": "point", "position": [1, 2, 3], "color": [10, 5, 5], "attenuation": math.pi}
    np.testing.assert_allclose(sun["direction"], [0, -1, 0], atol=1e-12)     # -z turned down
    np.testing.assert_allclose(sun["color"], [3 / math.pi] * 3)              # irradiance pi * color = 3
    assert spot["type"] == "spot" and spot["position"] == [0, 4, 0] and spot["color"] == [2, 2, 2]
    assert spot["attenuation"] == math.pi and spot["direction"] == [0, 0, -1]     # the node's -z
    assert spot["inner_cone_angle"] == 0 and spot["outer_cone_angle"] == pytest.approx(math.degrees(0.5))
    assert data["background"] == {}
    validate_scene(data)
    assert data["objects"] == [{"type": "gltf", "file": "cl.glb"}]


def test_still_life_direct_scene_takes_its_camera_and_light():
    data = direct_scene(STILL_LIFE)
    c, s = math.cos(math.radians(18)), math.sin(math.radians(18))
    np.testing.assert_allclose(data["camera"]["center"], [0, 1.6, 4.2])
    np.testing.assert_allclose(data["camera"]["direction"], [0, -s, -c], atol=1e-12)
    assert (data["image"]["width"], data["image"]["height"]) == (600, 400)
    (light,) = data["lights"]
    assert light["type"] == "point" and light["attenuation"] == math.pi
    np.testing.assert_allclose(light["position"], [1.5, 2.5, 2.0])
    np.testing.assert_allclose(light["color"], [12.0, 11.4, 10.8])       # intensity 12 x colour


def test_orthographic_camera(tmp_path):
    from raytrace.scene.gltf import _Doc, camera_dict
    doc = _Doc(tmp_path / "x.gltf", {}, None)
    cam, aspect = camera_dict(doc, np.eye(4), {"type": "orthographic", "orthographic": {"xmag": 3, "ymag": 1.5}},
                              "cameras[1]")
    assert cam["type"] == "orthographic" and cam["height"] == 3.0 and aspect == 2.0
    np.testing.assert_allclose(cam["direction"], [0, 0, -1])


def test_direct_scene_defaults_frame_the_scene_and_light_it(tmp_path):
    data = direct_scene(camera_light_model(tmp_path / "plain.glb", cameras=False, lights=False))
    validate_scene(data)
    assert data["lights"] and data["background"]["color"] == [0.45, 0.45, 0.45]
    cam = data["camera"]
    eye, target = np.array(cam["center"]), np.array(cam["look_at"])
    np.testing.assert_allclose(target, [0, 0.5, 0])
    fwd = (target - eye) / np.linalg.norm(target - eye)
    half = math.radians(cam["fov"]) / 2
    for corner in np.array(np.meshgrid([-0.5, 0.5], [0, 1], [-0.5, 0.5])).T.reshape(-1, 3):
        d = corner - eye
        angle = math.acos(np.dot(d, fwd) / np.linalg.norm(d))
        assert angle < half                               # every corner is in the view cone


def test_direct_render_of_an_emissive_glb(tmp_path):
    """A black diffuse quad emitting (0.6, 0.3, 0.1) filling the default camera's view:
    the centre pixel is exactly its emission (the path tracer sees emitters directly and a
    black diffuse surface reflects nothing; a black *metal*, glTF's default metallic 1,
    would add Schlick's grazing reflection)."""
    g = GltfBuilder()
    g.doc["materials"] = [{"pbrMetallicRoughness": {"baseColorFactor": [0, 0, 0, 1], "metallicFactor": 0},
                           "emissiveFactor": [0.6, 0.3, 0.1]}]
    prim = quad(g, 1.0, uv=False)
    prim["material"] = 0
    g.doc["meshes"] = [{"primitives": [prim]}]
    g.doc["nodes"] = [{"mesh": 0, "scale": [20, 20, 1]}]
    path = g.save(tmp_path / "glow.glb")
    scene = raytrace.load_scene(path)
    assert scene.setting("integrator", "type", None) == "path"
    image = raytrace.render(scene, width=9, height=9, spp=1)
    np.testing.assert_allclose(image[4, 4], [0.6, 0.3, 0.1], rtol=1e-6)


# ------------------------------------------------------------------ bad input
def bad_cases():
    """name -> (edit(folder) that writes m.gltf / m.glb, expected file, expected message part)."""
    def base(folder, suffix=".gltf", external=False, material=None):
        g = GltfBuilder()
        prim = quad(g)
        if material:
            g.doc["materials"] = [material]
            prim["material"] = 0
        g.doc["meshes"] = [{"primitives": [prim]}]
        g.doc["nodes"] = [{"mesh": 0}]
        g.doc["scenes"] = [{"nodes": [0]}]
        return g, g.save(folder / f"m{suffix}", external_bin=external)

    def edit_json(fn, **kw):
        def run(folder):
            _, path = base(folder, **kw)
            doc = json.loads(path.read_text())
            fn(doc)
            path.write_text(json.dumps(doc))
            return path
        return run

    def edit_bytes(fn, suffix):
        """Change the bytes of m.glb, m.gltf or (suffix .bin) the m.gltf's external m.bin."""
        def run(folder):
            _, path = base(folder, suffix=".gltf" if suffix == ".bin" else suffix, external=suffix == ".bin")
            target = folder / f"m{suffix}"
            data = fn(target.read_bytes())
            if data is None:
                target.unlink()
            else:
                target.write_bytes(data)
            return path
        return run

    def non_finite(attr, row):
        def run(folder):
            g, path = base(folder, ".glb")
            acc = g.doc["accessors"][g.doc["meshes"][0]["primitives"][0]["attributes"][attr]]
            bv = g.doc["bufferViews"][acc["bufferView"]]
            width = {"POSITION": 3, "NORMAL": 3, "TEXCOORD_0": 2}[attr]
            off = bv["byteOffset"] + 4 * width * row
            g.data[off:off + 4] = np.float32(np.nan).tobytes()
            return g.save(path)
        return run

    tex_material = {"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}
    return {
        "missing_buffer": (edit_bytes(lambda d: None, ".bin"), "m.gltf", "buffers[0].uri: file not found"),
        "out_of_range_accessor": (edit_json(lambda d: d["accessors"][0].update(count=40)),
                                  "m.gltf", "accessors[0]: needs bytes up to"),
        "view_past_buffer": (edit_json(lambda d: d["bufferViews"][0].update(byteOffset=10 ** 6)),
                             "m.gltf", "bufferViews[0]: bytes"),
        "required_extension": (edit_json(lambda d: d.update(extensionsRequired=["KHR_draco_mesh_compression"])),
                               "m.gltf", "extensionsRequired[0]: the file requires extension "
                                         "'KHR_draco_mesh_compression'"),
        "truncated_glb": (edit_bytes(lambda d: d[:len(d) - 40], ".glb"), "m.glb", "truncated file"),
        "truncated_glb_header": (edit_bytes(lambda d: d[:10], ".glb"), "m.glb", "truncated GLB file"),
        "truncated_bin": (edit_bytes(lambda d: d[:50], ".bin"), "m.gltf", "buffers[0]: has 50 bytes"),
        "nan_position": (non_finite("POSITION", 2), "m.glb",
                         "meshes[0].primitives[0].attributes.POSITION (accessors[0]): non-finite number in vertex 2"),
        "nan_normal": (non_finite("NORMAL", 1), "m.glb",
                       "attributes.NORMAL (accessors[2]): non-finite number in normal 1"),
        "nan_texcoord": (non_finite("TEXCOORD_0", 3), "m.glb",
                         "attributes.TEXCOORD_0 (accessors[3]): non-finite number in texture coordinate 3"),
        "not_utf8": (edit_bytes(lambda d: d.replace(b'"asset"', b'"asset\xe9"', 1), ".gltf"),
                     "m.gltf", "line 2: not UTF-8 text"),
        "bad_json": (edit_bytes(lambda d: d[:-2], ".gltf"), "m.gltf", "invalid JSON"),
        "cycle": (edit_json(lambda d: d["nodes"].append({"children": [0]}) or d["nodes"][0].update(children=[1])),
                  "m.gltf", "nodes[0]: is reached twice"),
        "lines_mode": (edit_json(lambda d: d["meshes"][0]["primitives"][0].update(mode=1)),
                       "m.gltf", "meshes[0].primitives[0].mode: mode 1 (LINES): only triangles"),
        "index_out_of_range": (edit_json(lambda d: d["accessors"][1].update(count=1, componentType=5125)),
                               "m.gltf", "meshes[0].primitives[0].indices: vertex index 65536 out of range"),
        "missing_image": (edit_json(lambda d: d.update(images=[{"uri": "gone.png"}], textures=[{"source": 0}]),
                                    material=tex_material), "m.gltf", "images[0].uri: file not found"),
        "broken_image": (edit_json(lambda d: d.update(images=[{"uri": "data:image/png;base64,aGVsbG8="}],
                                                      textures=[{"source": 0}]), material=tex_material),
                         "m.gltf", "images[0]: cannot read image"),
        "bad_base64": (edit_json(lambda d: d["buffers"][0].update(uri="data:application/octet-stream;base64,%%")),
                       "m.gltf", "buffers[0].uri: bad base64"),
        "wrong_type": (edit_json(lambda d: d["accessors"][0].update(count="4")),
                       "m.gltf", "accessors[0].count: must be an integer >= 1, got '4'"),
        "missing_texture": (edit_json(lambda d: None, material=tex_material), "m.gltf",
                            "baseColorTexture.index: refers to textures[0], but the file has 0"),
        "old_version": (edit_json(lambda d: d["asset"].update(version="1.0")), "m.gltf", "asset.version"),
        "colour_out_of_range": (edit_json(lambda d: None, material={"pbrMetallicRoughness": {
            "baseColorFactor": [2, 0, 0, 1]}}), "m.gltf", "materials[0].pbrMetallicRoughness.baseColorFactor"),
        "not_an_object": (edit_bytes(lambda d: b"[1, 2]", ".gltf"), "m.gltf", "a glTF file must hold a JSON object"),
    }


@pytest.mark.parametrize("case", sorted(bad_cases()))
def test_bad_gltf_gives_one_line_naming_file_and_path(case, tmp_path):
    make, file, message = bad_cases()[case]
    path = make(tmp_path)
    with pytest.raises(SceneError) as err:
        raytrace.load_scene(path)
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith(str(tmp_path / file) + ": "), text
    assert message in text, text


def test_bad_gltf_inside_a_scene_names_the_gltf_file(tmp_path):
    g = GltfBuilder()
    g.doc["meshes"] = [{"primitives": [dict(quad(g), mode=0)]}]
    g.doc["nodes"] = [{"mesh": 0}]
    g.save(tmp_path / "points.glb")
    (tmp_path / "s.json").write_text(json.dumps({"camera": {"center": [0, 0, 5], "look_at": [0, 0, 0]},
                                                 "objects": [{"type": "gltf", "file": "points.glb"}]}))
    with pytest.raises(SceneError, match=r"points\.glb: meshes\[0\]\.primitives\[0\]\.mode: mode 0 \(POINTS\)"):
        raytrace.load_scene(tmp_path / "s.json")
    (tmp_path / "t.json").write_text(json.dumps({"camera": {"center": [0, 0, 5], "look_at": [0, 0, 0]},
                                                 "objects": [{"type": "gltf", "file": "nothere.glb"}]}))
    with pytest.raises(SceneError, match=r"t\.json: objects\[0\]\.file: file not found"):
        raytrace.load_scene(tmp_path / "t.json")
    (tmp_path / "u.json").write_text(json.dumps({"camera": {"center": [0, 0, 5], "look_at": [0, 0, 0]},
                                                 "objects": [{"type": "gltf", "file": "m.obj"}]}))
    with pytest.raises(SceneError, match=r"u\.json: objects\[0\]\.file: a gltf object needs a \.gltf or \.glb"):
        raytrace.load_scene(tmp_path / "u.json")


def test_command_line_refuses_a_truncated_glb_with_one_line(tmp_path, capsys):
    from raytrace import cli
    data = BOX_GLB.read_bytes()
    (tmp_path / "cut.glb").write_bytes(data[:len(data) // 2])
    status = cli.main(["render", str(tmp_path / "cut.glb"), "-o", str(tmp_path / "out.png"), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1, err
    assert "cut.glb: GLB header: truncated file" in err[0]
    assert not (tmp_path / "out.png").exists()
