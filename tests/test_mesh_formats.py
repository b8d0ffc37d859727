"""OBJ with MTL materials and groups, and PLY (ASCII and binary): values against hand
computations and trimesh (an independent reader), and one-line errors for bad files."""
import json

import imageio.v3 as iio
import numpy as np
import pytest

import raytrace
from raytrace.errors import SceneError
from raytrace.layout import (M_COLOR, M_DIFFUSE, M_REFLECT, M_SHININESS, M_SPECULAR, M_TEX,
                             M_TRANSMIT, M_TYPE, MAT_PHONG)
from raytrace.scene.build import build_geometry
from raytrace.scene.meshio import read_mtl, read_obj, read_ply
from raytrace.scene.validate import validate_scene
from raytrace.textures import texture_rgb

from conftest import REPO


def geometry(objects, base, materials=None):
    data = {"camera": {"center": [0, 0, 5], "look_at": [0, 0, 0]}, "materials": materials or {},
            "objects": objects}
    validate_scene(data)
    return build_geometry(data, base)[0]


def srgb_decode(c8):
    c = np.asarray(c8, np.float64) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


# ------------------------------------------------------------------------------ MTL
MTL = """# every statement the reader maps
newmtl matte
Kd 0.5 0.25 0.125
Ka 1 1 1
illum 1
Ks 1 1 1

newmtl plastic
Kd 0.6
Ks 0.3 0.3 0.3
Ns 40
illum 2

newmtl mirror
Kd 0 0 0
Ks 0.9 0.8 0.7
Ns 500
illum 3

newmtl glass
Kd 0.1 0.1 0.1
Ks 1 1 1
Ni 1.45
d 0.2
Tf 1 0.5 1
illum 7

newmtl veil
Kd 0.2 0.4 0.8
Tr 0.75
illum 1

newmtl lamp
Kd 0 0 0
Ke 5 4 3
illum 0

newmtl textured
Kd 0.5 1 1
map_Kd -o 0.1 0.2 -s 2 4 1 -clamp off tex.png
map_Bump bump.png
"""


def test_mtl_statements_map_onto_phong(tmp_path):
    """The mapping of docs/scene-format.md, value by value."""
    iio.imwrite(tmp_path / "tex.png", np.zeros((2, 2, 3), np.uint8))
    (tmp_path / "m.mtl").write_text(MTL)
    m = read_mtl(tmp_path / "m.mtl")
    assert list(m) == ["matte", "plastic", "mirror", "glass", "veil", "lamp", "textured"]
    # illum 1: no specular term at all (Ks ignored)
    assert m["matte"].spec == {"type": "phong", "diffuse": [0.5, 0.25, 0.125], "specular": [0, 0, 0],
                               "shininess": 1.0, "reflect": [0, 0, 0]}
    # illum 2: the Phong highlight, no mirror ray (reflect 0: the path tracer sees Lambert only)
    assert m["plastic"].spec == {"type": "phong", "diffuse": [0.6, 0.6, 0.6], "specular": [0.3, 0.3, 0.3],
                                 "shininess": 40.0, "reflect": [0, 0, 0]}
    # illum 3: + a mirror ray of colour Ks
    assert m["mirror"].spec["reflect"] == [0.9, 0.8, 0.7] and m["mirror"].spec["shininess"] == 500
    # illum 7, d 0.2: refracted ray (1 - d) Tf through ior Ni; colours scaled by d
    g = m["glass"].spec
    np.testing.assert_allclose(g["transmit"], [0.8, 0.4, 0.8])
    np.testing.assert_allclose(g["diffuse"], [0.02] * 3)
    np.testing.assert_allclose(g["specular"], [0.2] * 3)
    assert g["ior"] == 1.45 and g["reflect"] == [1, 1, 1]
    # illum 1 with Tr 0.75 (d = 0.25): see-through without bending (ior 1)
    v = m["veil"].spec
    np.testing.assert_allclose(v["transmit"], [0.75] * 3)
    np.testing.assert_allclose(v["diffuse"], [0.05, 0.1, 0.2])
    assert v["ior"] == 1.0
    np.testing.assert_allclose(m["lamp"].emission, [5, 4, 3])
    assert m["plastic"].emission is None
    t = m["textured"].spec["diffuse"]
    assert t == {"type": "image", "file": str((tmp_path / "tex.png").resolve()), "scale": [2.0, 4.0],
                 "tint": [0.5, 1.0, 1.0]}


OBJ = """mtllib m.mtl
v 0 0 0
v 1 0 0
v 1 1 0
v 0 1 0
v 0 0 -1
v 1 0 -1
vt 0 0
vt 1 0
vt 1 1
vt 0 1
f 1/1 2/2 3/3
o left
usemtl plastic
f 1/1 3/3 4/4
usemtl lamp
f 1 5 6
g right
usemtl textured
f 1/1 2/2 3/3 4/4
usemtl plastic
f 2 1 6
"""


def write_obj(folder, obj=OBJ, mtl=MTL):
    iio.imwrite(folder / "tex.png", np.array([[[255, 0, 0], [0, 255, 0]], [[0, 0, 255], [255, 255, 255]]],
                                            np.uint8))
    (folder / "m.mtl").write_text(mtl)
    (folder / "m.obj").write_text(obj)
    return folder / "m.obj"


def test_obj_groups_and_materials(tmp_path):
    mesh = read_obj(write_obj(tmp_path))
    assert mesh.group_names == ["", "left", "right"]
    assert mesh.material_names == ["plastic", "lamp", "textured"]
    np.testing.assert_array_equal(mesh.face_group, [0, 1, 1, 2, 2, 2])      # the quad is two fans
    np.testing.assert_array_equal(mesh.face_material, [-1, 0, 1, 2, 2, 0])
    parts = [(g, m, f.tolist()) for g, m, f in mesh.parts()]
    assert parts == [("", None, [0]), ("left", "plastic", [1]), ("left", "lamp", [2]),
                     ("right", "textured", [3, 4]), ("right", "plastic", [5])]


def test_obj_materials_in_the_geometry(tmp_path):
    """Triangle by triangle: the part's MTL material row (faces before any usemtl: the
    inherited material), Ke as emission, map_Kd as a texture tinted by Kd."""
    write_obj(tmp_path)
    geo = geometry([{"type": "group", "material": "grey", "children": [{"type": "mesh", "file": "m.obj"}]}],
                   tmp_path, {"grey": {"diffuse": [0.3, 0.3, 0.3]}})
    rows = geo.tri_mat
    assert len(rows) == 6
    grey, plastic, lamp, tex = rows[0], rows[1], rows[2], rows[3]
    assert rows[4] == tex and rows[5] == plastic and len({grey, plastic, lamp, tex}) == 4
    np.testing.assert_allclose(geo.materials[grey, M_DIFFUSE:M_DIFFUSE + 3], 0.3)
    p = geo.materials[plastic]
    assert p[M_TYPE] == MAT_PHONG and p[M_SHININESS] == 40
    np.testing.assert_allclose(p[M_DIFFUSE:M_DIFFUSE + 3], 0.6)
    np.testing.assert_allclose(p[M_SPECULAR:M_SPECULAR + 3], 0.3)
    np.testing.assert_allclose(p[M_REFLECT:M_REFLECT + 3], 0.0)
    assert list(geo.tri_emit) == [-1, -1, 0, -1, -1, -1]
    np.testing.assert_allclose(geo.emission[0], [5, 4, 3])
    k = int(geo.materials[tex, M_TEX])
    # texel (row 0, column 1) is green; Kd (0.5, 1, 1) tints it
    got = texture_rgb(geo.tex_info, geo.tex_texels, k, 0.75 / 2, 0.25 / 4)   # -s 2 4: u*2, v*4
    np.testing.assert_allclose(got, [0, 1, 0], atol=1e-7)
    got = texture_rgb(geo.tex_info, geo.tex_texels, k, 0.25 / 2, 0.25 / 4)
    np.testing.assert_allclose(got, [0.5, 0, 0], atol=1e-7)
    # the textured quad keeps its vt (v flipped): corner (1, 1, 0) has vt (1, 1) -> (1, 0);
    # the face without vt gets the barycentric (0, 0), (1, 0), (0, 1)
    np.testing.assert_allclose(geo.tri_uv[2], [[0, 0], [1, 0], [0, 1]])
    tri = 3
    corners = np.stack([geo.tri_v0[tri], geo.tri_v1[tri], geo.tri_v2[tri]])
    c = int(np.argmax(np.all(np.isclose(corners, [1, 1, 0]), axis=1)))
    np.testing.assert_allclose(geo.tri_uv[tri, c], [1, 0])
    # materials the OBJ does not use are not in the table; the glass one is, for nothing
    assert not geo.materials[:, M_TRANSMIT:M_TRANSMIT + 3].any()


def test_obj_material_on_the_object_replaces_the_mtl(tmp_path):
    write_obj(tmp_path)
    (tmp_path / "m.mtl").unlink()                      # not even read
    geo = geometry([{"type": "mesh", "file": "m.obj", "material": "grey"}], tmp_path,
                   {"grey": {"diffuse": [0.3, 0.3, 0.3]}})
    assert len(set(geo.tri_mat)) == 1 and (geo.tri_emit == -1).all()
    with pytest.raises(SceneError, match=r"m\.obj: line 1: mtllib 'm\.mtl': file not found: .*give the mesh"):
        geometry([{"type": "mesh", "file": "m.obj"}], tmp_path)


def test_scene_material_named_after_an_mtl_material_wins(tmp_path):
    write_obj(tmp_path)
    geo = geometry([{"type": "mesh", "file": "m.obj"}], tmp_path,
                   {"m.obj#plastic": {"type": "diffuse", "albedo": [0, 0, 1]}})
    np.testing.assert_allclose(geo.materials[geo.tri_mat[1], M_COLOR:M_COLOR + 3], [0, 0, 1])


def test_smooth_normals_are_computed_per_group(tmp_path):
    """Two triangles at a right angle sharing the edge (0,0,0)-(1,0,0): in one group the
    shared corners average the face normals; in two groups each keeps its own."""
    verts = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 1 0 1\n"
    (tmp_path / "one.obj").write_text(verts + "f 1 2 3\nf 2 1 4\n")
    (tmp_path / "two.obj").write_text(verts + "g a\nf 1 2 3\ng b\nf 2 1 4\n")
    one = geometry([{"type": "mesh", "file": "one.obj", "smooth": True}], tmp_path)
    two = geometry([{"type": "mesh", "file": "two.obj", "smooth": True}], tmp_path)
    s = np.sqrt(0.5)
    np.testing.assert_allclose(one.tri_n[0, 0], [0, s, s], atol=1e-12)     # (0,0,1) and (0,1,0) averaged
    np.testing.assert_allclose(two.tri_n[0, 0], [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(two.tri_n[1, 0], [0, 1, 0], atol=1e-12)


@pytest.mark.parametrize("edit, file, message", [
    (lambda o, m: (o.replace("usemtl lamp", "usemtl lamp2"), m), "m.obj",
     "line 16: usemtl 'lamp2': no such material in m.mtl"),
    (lambda o, m: (o.replace("mtllib m.mtl\n", ""), m), "m.obj",
     "line 13: usemtl 'plastic': no mtllib line names a material file"),
    (lambda o, m: (o, m.replace("Ns 40", "Ns forty")), "m.mtl", "line 11: Ns needs numbers"),
    (lambda o, m: (o, m.replace("Ns 40", "Ns nan")), "m.mtl", "line 11: Ns needs numbers >= 0 and <= 1e+12"),
    (lambda o, m: (o, m.replace("Kd 0.6", "Kd 0.6 0.1")), "m.mtl", "line 9: Kd needs 1 or 3 numbers, got 2"),
    (lambda o, m: (o, "Kd 1 1 1\n" + m), "m.mtl", "line 1: 'Kd' before any 'newmtl'"),
    (lambda o, m: (o, m.replace("d 0.2", "d 1.5")), "m.mtl", "line 24: d must be in [0, 1]"),
    (lambda o, m: (o, m.replace("illum 3", "illum 2.5")), "m.mtl", "line 18: illum must be an integer"),
    (lambda o, m: (o, m.replace("tex.png", "gone.png")), "m.mtl", "line 40: map_Kd: texture file not found"),
    (lambda o, m: (o, m.replace("Ke 5 4 3", "Ke 5 4 3 \xe9")), "m.mtl", "line 35: not UTF-8 text"),
])
def test_bad_obj_and_mtl_give_one_line(tmp_path, edit, file, message):
    obj, mtl = edit(OBJ, MTL)
    write_obj(tmp_path, obj, "")
    (tmp_path / "m.mtl").write_bytes(mtl.encode("latin-1"))
    (tmp_path / "s.json").write_text(json.dumps({"camera": {"center": [0, 0, 5], "look_at": [0, 0, 0]},
                                                 "objects": [{"type": "mesh", "file": "m.obj"}]}))
    with pytest.raises(SceneError) as err:
        raytrace.load_scene(tmp_path / "s.json")
    text = str(err.value)
    assert "\n" not in text and text.startswith(str(tmp_path / file) + ": "), text
    assert message in text, text


# ------------------------------------------------------------------------------ PLY
def ply_data(with_extras=True):
    """A unit square (a quad face) and a triangle below it; normals and (s, t)."""
    plyfile = pytest.importorskip("plyfile")
    props = [("x", "f4"), ("y", "f4"), ("z", "f4")]
    if with_extras:
        props += [("nx", "f4"), ("ny", "f4"), ("nz", "f4"), ("s", "f4"), ("t", "f4"), ("red", "u1")]
    v = np.zeros(5, props)
    v["x"], v["y"], v["z"] = [0, 1, 1, 0, 0.5], [0, 0, 1, 1, -1], [0, 0, 0, 0, 0.5]
    if with_extras:
        v["nz"] = 1.0
        v["s"], v["t"] = [0, 1, 1, 0, 0.5], [0, 0, 1, 1, 0.25]
    f = np.empty(2, [("vertex_indices", "O")])
    f["vertex_indices"] = [np.array([0, 1, 2, 3], np.int32), np.array([4, 1, 0], np.int32)]
    return plyfile.PlyData([plyfile.PlyElement.describe(v, "vertex"), plyfile.PlyElement.describe(f, "face")])


@pytest.mark.parametrize("form", ["ascii", "binary_little_endian", "binary_big_endian"])
def test_ply_reads_vertices_fans_normals_and_uvs(tmp_path, form):
    data = ply_data()
    data.text = form == "ascii"
    if form != "ascii":
        data.byte_order = "<" if form == "binary_little_endian" else ">"
    data.write(str(tmp_path / "m.ply"))
    mesh = read_ply(tmp_path / "m.ply")
    np.testing.assert_allclose(mesh.vertices[4], [0.5, -1, 0.5])
    np.testing.assert_array_equal(mesh.faces, [[0, 1, 2], [0, 2, 3], [4, 1, 0]])   # the quad as a fan
    np.testing.assert_allclose(mesh.corner_normals, np.broadcast_to([0, 0, 1.0], (3, 3, 3)))
    np.testing.assert_allclose(mesh.corner_uvs[2], [[0.5, 0.75], [1, 1], [0, 1]])  # v flipped: 1 - t


def test_ply_matches_trimesh(tmp_path):
    """trimesh reads faces of one size only: the quad's triangle is dropped here."""
    trimesh = pytest.importorskip("trimesh")
    data = ply_data(with_extras=False)
    data["face"].data = data["face"].data[1:]
    data.write(str(tmp_path / "m.ply"))
    mesh = read_ply(tmp_path / "m.ply")
    tm = trimesh.load(tmp_path / "m.ply", process=False)
    np.testing.assert_allclose(mesh.vertices, tm.vertices)
    ours = mesh.vertices[mesh.faces]
    theirs = tm.vertices[tm.faces]
    area = lambda t: np.linalg.norm(np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]), axis=1).sum() / 2  # noqa: E731
    assert len(ours) == len(theirs) == 1
    # the triangle (0.5,-1,0.5), (1,0,0), (0,0,0): |(0, 0.5, 1)| / 2
    assert area(ours) == pytest.approx(area(theirs)) == pytest.approx(0.5 * np.sqrt(1.25))
    ours_n = np.cross(ours[:, 1] - ours[:, 0], ours[:, 2] - ours[:, 0])
    theirs_n = np.cross(theirs[:, 1] - theirs[:, 0], theirs[:, 2] - theirs[:, 0])
    np.testing.assert_allclose(np.sort(ours_n, axis=0), np.sort(theirs_n, axis=0), atol=1e-12)


def test_ply_in_a_scene(tmp_path):
    ply_data().write(str(tmp_path / "m.ply"))
    geo = geometry([{"type": "mesh", "file": "m.ply", "transform": [{"translate": [0, 0, 1]}]}], tmp_path)
    assert len(geo.tri_mat) == 3
    np.testing.assert_allclose(geo.tri_v0[2], [0.5, -1, 1.5])


def _binary_ply(tmp_path):
    data = ply_data()
    data.write(str(tmp_path / "m.ply"))
    return (tmp_path / "m.ply").read_bytes()


def _ascii_ply(tmp_path):
    data = ply_data()
    data.text = True
    data.write(str(tmp_path / "m.ply"))
    return (tmp_path / "m.ply").read_text()


@pytest.mark.parametrize("case", ["truncated_binary", "malformed_ascii", "nan_vertex", "nan_uv", "index_out_of_range",
                                  "huge_count", "not_ascii_header", "no_faces", "two_vertex_face", "bad_type",
                                  "negative_list_length"])
def test_bad_ply_gives_one_line(tmp_path, case):
    if case == "truncated_binary":
        data, message = _binary_ply(tmp_path)[:-5], "element 'face' row 1"
    elif case == "malformed_ascii":
        text = _ascii_ply(tmp_path)
        lines = text.splitlines()
        head = lines.index("end_header")
        lines[head + 2] = lines[head + 2].replace("1", "one", 1)             # the second vertex
        data, message = ("\n".join(lines) + "\n").encode(), f"line {head + 3}: "
    elif case == "nan_vertex":
        data, message = _ascii_ply(tmp_path).replace("0.5 -1 0.5", "0.5 nan 0.5").encode(), \
            "element 'vertex': non-finite number in vertex 4"
    elif case == "nan_uv":
        text = _ascii_ply(tmp_path)
        lines = text.splitlines()
        head = lines.index("end_header")
        parts = lines[head + 1].split()
        parts[6] = "inf"
        lines[head + 1] = " ".join(parts)
        data, message = ("\n".join(lines) + "\n").encode(), "element 'vertex' (s, t): non-finite number in vertex 0"
    elif case == "index_out_of_range":
        data, message = _ascii_ply(tmp_path).replace("3 4 1 0", "3 4 1 9").encode(), \
            "element 'face' row 1: vertex index out of range (there are 5 vertices)"
    elif case == "huge_count":
        data, message = _binary_ply(tmp_path).replace(b"element vertex 5", b"element vertex 5000000000"), \
            "truncated file: the header announces"
    elif case == "not_ascii_header":
        data, message = _binary_ply(tmp_path).replace(b"property float x", b"property float \xe9"), \
            "line 4: the PLY header must be ASCII"
    elif case == "no_faces":
        data, message = b"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\n" \
                        b"property float z\nend_header\n0 0 0\n", "needs 'vertex' and 'face' elements"
    elif case == "two_vertex_face":
        data, message = _ascii_ply(tmp_path).replace("3 4 1 0", "2 4 1").encode(), \
            "element 'face' row 1: a face needs at least 3 vertices"
    elif case == "bad_type":
        data, message = _binary_ply(tmp_path).replace(b"property float x", b"property flaot x"), \
            "line 4: PLY header: field type 'flaot'"
    else:                                       # found by tests/test_hostile_assets.py
        data, message = _ascii_ply(tmp_path).replace("3 4 1 0", "-1 4 1 0").encode(), "cannot read PLY"
    (tmp_path / "m.ply").write_bytes(data)
    (tmp_path / "s.json").write_text(json.dumps({"camera": {"center": [0, 0, 5], "look_at": [0, 0, 0]},
                                                 "objects": [{"type": "mesh", "file": "m.ply"}]}))
    with pytest.raises(SceneError) as err:
        raytrace.load_scene(tmp_path / "s.json")
    text = str(err.value)
    assert "\n" not in text and text.startswith(str(tmp_path / "m.ply") + ": "), text
    assert message in text, text


def test_example_obj_scene_asset_reads():
    mesh = read_obj(REPO / "scenes" / "assets" / "mtl" / "shapes.obj")
    assert mesh.group_names[1:] == ["floor", "red_cube", "mirror", "glass", "veil", "lamp"]
    assert set(mesh.materials) == {"tiles", "red_plastic", "mirror", "glass", "veil", "lamp"}
