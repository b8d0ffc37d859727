"""glTF features read by the loader alone: KHR_materials_emissive_strength (rendered),
KHR_texture_transform and texCoord sets (the geometry's texture coordinates and texels),
morph targets (mesh / node / animated weights: the loaded vertices and normals), the
alpha modes' coverage textures, the warnings for what is not read (COLOR_0 alpha,
extensions only used) and the
refusal of unsupported required extensions. Expected values are computed here by hand."""
import math
import warnings

import numpy as np
import pytest

import raytrace
from raytrace.errors import SceneError
from raytrace.layout import M_CUTOFF, M_CUTOUT, M_TEX
from raytrace.scene.gltf import GltfWarning, load_gltf
from raytrace.scene.build import build_geometry
from raytrace.scene.validate import validate_scene
from raytrace.textures import texture_rgb

from gltf_builder import GltfBuilder, quad


def srgb_decode(c8):
    """sRGB 8-bit codes -> linear (IEC 61966-2-1)."""
    c = np.asarray(c8, np.float64) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def geometry(file, base):
    data = {"camera": {"center": [0, 0, 5], "look_at": [0, 0, 0]}, "materials": {},
            "objects": [{"type": "gltf", "file": file}]}
    validate_scene(data)
    return build_geometry(data, base)[0]


def save(g, prims, path, materials=None, node=None, extra=None):
    """One mesh of ``prims`` on one node (``node``: its other keys) -> the saved path."""
    if materials is not None:
        g.doc["materials"] = materials
    g.doc["meshes"] = [{"primitives": prims}]
    g.doc["nodes"] = [{"mesh": 0, **(node or {})}]
    g.doc["scenes"] = [{"nodes": [0]}]
    g.doc.update(extra or {})
    return g.save(path)


def recorded(fn, *args, **kw):
    """(fn's result, the GltfWarning messages it gave)."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        result = fn(*args, **kw)
    return result, [str(w.message) for w in got if issubclass(w.category, GltfWarning)]


def gltf_warnings(path, **kw):
    """The GltfWarning messages of loading ``path`` (a fresh file: not cached)."""
    return recorded(load_gltf, path, **kw)[1]


# ------------------------------------------------------- KHR_materials_emissive_strength
def test_emissive_strength_times_factor_times_texture_seen_directly(tmp_path):
    """A black diffuse quad filling the view, emissiveFactor (0.5, 0.25, 0.1) x
    emissiveStrength 3 x a one-texel emissive texture of sRGB code (200, 120, 255): the
    path tracer returns an emitter's radiance for a directly seen point, and a black
    diffuse surface adds nothing, so the centre pixel is the product exactly."""
    code = np.array([200, 120, 255])
    expected = np.array([0.5, 0.25, 0.1]) * 3.0 * srgb_decode(code)

    def render(strength):
        g = GltfBuilder()
        g.texture(g.png_image(code.reshape(1, 1, 3)))
        mat = {"pbrMetallicRoughness": {"baseColorFactor": [0, 0, 0, 1], "metallicFactor": 0},
               "emissiveFactor": [0.5, 0.25, 0.1], "emissiveTexture": {"index": 0}}
        extra = {}
        if strength is not None:
            mat["extensions"] = {"KHR_materials_emissive_strength": {"emissiveStrength": strength}}
            extra = {"extensionsUsed": ["KHR_materials_emissive_strength"]}
        prim = quad(g, uv=False)
        prim["material"] = 0
        path = save(g, [prim], tmp_path / f"glow{strength}.glb", [mat], {"scale": [20, 20, 1]}, extra)
        return raytrace.render(raytrace.load_scene(path), width=9, height=9, spp=1)[4, 4]

    np.testing.assert_allclose(render(3.0), expected, rtol=1e-5)
    np.testing.assert_allclose(render(None), expected / 3.0, rtol=1e-5)     # strength defaults to 1


# ------------------------------------------------------------- KHR_texture_transform
TEX = np.arange(4 * 4 * 3).reshape(4, 4, 3).astype(np.uint8) * 5 + 10     # 16 distinct texels


def textured_quad(tmp_path, name, info, uv1=None):
    """A quad (TEXCOORD_0 the usual corners; ``uv1``: a TEXCOORD_1) with a diffuse
    material whose baseColorTexture is ``info`` (the 4x4 TEX)."""
    g = GltfBuilder()
    g.texture(g.png_image(TEX))
    prim = quad(g)
    if uv1 is not None:
        prim["attributes"]["TEXCOORD_1"] = g.accessor(uv1, "VEC2")
    prim["material"] = 0
    mat = {"pbrMetallicRoughness": {"baseColorTexture": info, "metallicFactor": 0}}
    return save(g, [prim], tmp_path / name, [mat],
                extra={"extensionsUsed": ["KHR_texture_transform"]})


UV0 = np.array([[0, 1], [1, 1], [1, 0], [0, 0]], float)       # quad()'s TEXCOORD_0 at its corners
CORNERS = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], float)


def corner_uvs(geo):
    """The texture coordinates the geometry gives each of the quad's four corners."""
    verts = np.stack([geo.tri_v0, geo.tri_v1, geo.tri_v2], axis=1)
    out = np.full((4, 2), np.nan)
    for t in range(len(verts)):
        for c in range(3):
            k = int(np.argmin(np.linalg.norm(CORNERS - verts[t, c], axis=1)))
            out[k] = geo.tri_uv[t, c]
    return out


def test_texture_transform_maps_the_texture_coordinates(tmp_path):
    """offset (0.375, 0.625), rotation 90 degrees, scale (0.5, 2): by the extension's
    definition u' = ox + cos(r) 0.5 u + sin(r) 2 v, v' = oy - sin(r) 0.5 u + cos(r) 2 v,
    i.e. u' = 0.375 + 2 v, v' = 0.625 - 0.5 u; the quad's centre (u, v) = (0.5, 0.5) lands
    on (1.375, 0.375): the centre of texel (column 1, row 1) of the repeating 4x4 image."""
    info = {"index": 0, "extensions": {"KHR_texture_transform": {
        "offset": [0.375, 0.625], "rotation": math.pi / 2, "scale": [0.5, 2.0]}}}
    geo = geometry(textured_quad(tmp_path, "tt.gltf", info).name, tmp_path)
    u, v = UV0[:, 0], UV0[:, 1]
    np.testing.assert_allclose(corner_uvs(geo), np.stack([0.375 + 2 * v, 0.625 - 0.5 * u], axis=1), atol=1e-12)
    k = int(geo.materials[geo.tri_mat[0], M_TEX])
    centre = corner_uvs(geo).mean(axis=0)                    # affine: the corners' mean is the centre's
    np.testing.assert_allclose(centre, [1.375, 0.375], atol=1e-12)
    np.testing.assert_allclose(texture_rgb(geo.tex_info, geo.tex_texels, k, *centre),
                               srgb_decode(TEX[1, 1]), rtol=1e-5)
    assert not np.allclose(srgb_decode(TEX[1, 1]), srgb_decode(TEX[1, 2]))   # a texel apart differs
    # negative control: without the extension the corners keep TEXCOORD_0
    plain = geometry(textured_quad(tmp_path, "plain.gltf", {"index": 0}).name, tmp_path)
    np.testing.assert_allclose(corner_uvs(plain), UV0, atol=1e-12)


def test_texture_transform_texcoord_overrides_the_info(tmp_path):
    """The extension's own texCoord 1 wins over the info's texCoord 0."""
    uv1 = np.array([[0.1, 0.2], [0.3, 0.2], [0.3, 0.4], [0.1, 0.4]])
    info = {"index": 0, "texCoord": 0, "extensions": {"KHR_texture_transform": {
        "texCoord": 1, "offset": [1.0, 0.0]}}}
    geo = geometry(textured_quad(tmp_path, "tc.gltf", info, uv1).name, tmp_path)
    np.testing.assert_allclose(corner_uvs(geo), uv1 + [1.0, 0.0], atol=1e-7)


def test_required_texture_transform_is_accepted_and_draco_refused_by_name(tmp_path):
    info = {"index": 0, "extensions": {"KHR_texture_transform": {"scale": [2.0, 2.0]}}}
    path = textured_quad(tmp_path, "req.gltf", info)
    text = path.read_text().replace('"extensionsUsed"', '"extensionsRequired": ["KHR_texture_transform"], '
                                                         '"extensionsUsed"')
    path.write_text(text)
    np.testing.assert_allclose(corner_uvs(geometry("req.gltf", tmp_path)), 2 * UV0, atol=1e-12)
    path.write_text(text.replace('"extensionsRequired": ["KHR_texture_transform"]',
                                 '"extensionsRequired": ["KHR_draco_mesh_compression"]'))
    with pytest.raises(SceneError) as err:
        raytrace.load_scene(path)
    assert "req.gltf" in str(err.value) and "extensionsRequired[0]" in str(err.value)
    assert "KHR_draco_mesh_compression" in str(err.value) and "not support" in str(err.value)


# --------------------------------------------------------------------- texCoord sets
def test_texcoord_1_reads_the_second_set(tmp_path):
    """TEXCOORD_0 and TEXCOORD_1 differ: texCoord 1 gives TEXCOORD_1's values (and texels
    there), texCoord 0 (the negative control) TEXCOORD_0's."""
    uv1 = np.array([[0.625, 0.125], [0.875, 0.125], [0.875, 0.375], [0.625, 0.375]])
    geo = geometry(textured_quad(tmp_path, "one.gltf", {"index": 0, "texCoord": 1}, uv1).name, tmp_path)
    np.testing.assert_allclose(corner_uvs(geo), uv1, atol=1e-7)
    k = int(geo.materials[geo.tri_mat[0], M_TEX])
    # (0.625, 0.125) is the centre of texel column 2, row 0
    np.testing.assert_allclose(texture_rgb(geo.tex_info, geo.tex_texels, k, 0.625, 0.125),
                               srgb_decode(TEX[0, 2]), rtol=1e-5)
    zero = geometry(textured_quad(tmp_path, "zero.gltf", {"index": 0, "texCoord": 0}, uv1).name, tmp_path)
    np.testing.assert_allclose(corner_uvs(zero), UV0, atol=1e-12)


def test_a_missing_texcoord_set_warns_and_uses_set_0(tmp_path):
    path = textured_quad(tmp_path, "missing.gltf", {"index": 0, "texCoord": 1})
    got = gltf_warnings(path)
    assert len(got) == 1 and "TEXCOORD_1" in got[0] and "TEXCOORD_0 is used" in got[0]
    np.testing.assert_allclose(corner_uvs(geometry("missing.gltf", tmp_path)), UV0, atol=1e-12)


# --------------------------------------------------------------------- morph targets
DP = np.array([[0, 0, 0], [0, 0, 0], [0.4, 0.6, 2.0], [0, 0, 0]])     # moves corner 2 only
DN = np.array([[0, 0, 0], [0, 0, 0], [0, 0, 0], [1.0, 0, -1.0]])      # tilts corner 3's normal


def morph_model(path, mesh_weights=None, node_weights=None, animation=None):
    """quad() with two morph targets: 0 moves corner 2 by DP, 1 changes corner 3's normal
    by DN. ``animation``: (times, interpolation, flat weight outputs)."""
    g = GltfBuilder()
    prim = quad(g, uv=False)
    prim["targets"] = [{"POSITION": g.accessor(DP, "VEC3")}, {"NORMAL": g.accessor(DN, "VEC3")}]
    node = {} if node_weights is None else {"weights": node_weights}
    save(g, [prim], path, node=node)
    if mesh_weights is not None:
        g.doc["meshes"][0]["weights"] = mesh_weights
    if animation is not None:
        times, interp, out = animation
        g.doc["animations"] = [{"samplers": [
            {"input": g.accessor(np.asarray(times, float), "SCALAR", minmax=True),
             "output": g.accessor(np.asarray(out, float), "SCALAR"), "interpolation": interp}],
            "channels": [{"sampler": 0, "target": {"node": 0, "path": "weights"}}]}]
    return g.save(path)


def morphed(path, **kw):
    prim = load_gltf(path, **kw).meshes[0][0]
    return prim.positions, prim.normals


def test_mesh_weights_move_a_vertex_and_blend_normals(tmp_path):
    """weights (0.5, 1): corner 2 moves by 0.5 DP (halfway), corner 3's normal is
    normalise((0, 0, 1) + DN) = (1, 0, 0); the other corners stay."""
    base = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], float)
    pos, nrm = morphed(morph_model(tmp_path / "m.glb", mesh_weights=[0.5, 1.0]))
    np.testing.assert_allclose(pos, base + 0.5 * DP, atol=1e-7)
    np.testing.assert_allclose(pos[2], [1.2, 1.3, 1.0], atol=1e-7)
    np.testing.assert_allclose(nrm[:3], [[0, 0, 1]] * 3, atol=1e-7)
    np.testing.assert_allclose(nrm[3], [1, 0, 0], atol=1e-7)
    # weight 0.5 on the normal target: (0.5, 0, 0.5) normalised
    _, nrm = morphed(morph_model(tmp_path / "h.glb", mesh_weights=[0.0, 0.5]))
    np.testing.assert_allclose(nrm[3], np.array([1, 0, 1]) / math.sqrt(2), atol=1e-7)
    # negative control: no weights -> the base shape
    pos, nrm = morphed(morph_model(tmp_path / "b.glb"))
    np.testing.assert_allclose(pos, base, atol=1e-7)
    np.testing.assert_allclose(nrm, [[0, 0, 1]] * 4, atol=1e-7)


def test_node_weights_override_mesh_weights_in_the_rendered_geometry(tmp_path):
    path = morph_model(tmp_path / "n.glb", mesh_weights=[1.0, 0.0], node_weights=[0.25, 0.0])
    geo = geometry(path.name, tmp_path)
    verts = np.concatenate([geo.tri_v0, geo.tri_v1, geo.tri_v2])
    moved = np.array([1, 1, 0]) + 0.25 * DP[2]
    assert np.isclose(verts, moved, atol=1e-7).all(axis=1).any()
    assert not np.isclose(verts, [1, 1, 0] + DP[2], atol=1e-7).all(axis=1).any()   # mesh weight 1 not used


def test_animated_weights_at_and_between_keyframes(tmp_path):
    """LINEAR keys t = 0, 2, 4 with weights (0, 0), (1, 0), (0.5, 1): at the keyframe t = 2
    weight 1 (corner 2 fully moved), at t = 1 halfway, at t = 3 (0.75, 0.5); STEP holds the
    earlier key; without the animation the node's weights (0, 0) hold."""
    out = [0, 0, 1, 0, 0.5, 1]
    path = morph_model(tmp_path / "a.glb", node_weights=[0.0, 0.0], animation=([0, 2, 4], "LINEAR", out))
    corner = np.array([1.0, 1.0, 0.0])
    for t, w in ((2.0, 1.0), (1.0, 0.5), (3.0, 0.75), (9.0, 0.5)):
        pos, _ = morphed(path, animation=0, time=t)
        np.testing.assert_allclose(pos[2], corner + w * DP[2], atol=1e-7, err_msg=f"t={t}")
    _, nrm = morphed(path, animation=0, time=3.0)                 # normal weight 0.5
    np.testing.assert_allclose(nrm[3], np.array([1, 0, 1]) / math.sqrt(2), atol=1e-7)
    pos, _ = morphed(path)
    np.testing.assert_allclose(pos[2], corner, atol=1e-7)
    step = morph_model(tmp_path / "s.glb", animation=([0, 2, 4], "STEP", out))
    np.testing.assert_allclose(morphed(step, animation=0, time=3.9)[0][2], corner + DP[2], atol=1e-7)


def test_cubic_spline_weights_with_zero_tangents(tmp_path):
    """CUBICSPLINE keys 0 -> 1 over [0, 2], zero tangents: at t = 0.5 the Hermite basis
    gives -2 u^3 + 3 u^2 with u = 0.25, i.e. 0.15625."""
    out = np.zeros((2, 3, 2))
    out[1, 1, 0] = 1.0                                   # key 1's value of target 0
    path = morph_model(tmp_path / "c.glb", animation=([0, 2], "CUBICSPLINE", out.ravel()))
    pos, _ = morphed(path, animation=0, time=0.5)
    np.testing.assert_allclose(pos[2], [1, 1, 0] + 0.15625 * DP[2], atol=1e-7)


def test_bad_weights_are_refused_with_their_path(tmp_path):
    path = morph_model(tmp_path / "w.gltf", mesh_weights=[0.5])
    with pytest.raises(SceneError) as err:
        load_gltf(path)
    assert "meshes[0].weights: has 1 weights, the mesh has 2 morph targets" in str(err.value)
    path = morph_model(tmp_path / "x.gltf", animation=([0, 2], "LINEAR", [0, 0, 1]))
    with pytest.raises(SceneError) as err:
        load_gltf(path, animation=0, time=1.0)
    assert "animations[0].samplers[0].output" in str(err.value) and "2 morph weights need 4" in str(err.value)


# ------------------------------------------------------ warnings: what is not rendered
def test_color_0_alpha_below_one_warns_once_per_file(tmp_path):
    """COLOR_0 is rendered (tests/test_gltf_appearance.py); only its alpha is not read,
    which warns once per file, and only when some alpha is below 1."""
    g = GltfBuilder()
    prims = [quad(g), quad(g)]
    for p in prims:
        p["attributes"]["COLOR_0"] = g.accessor(np.tile([1.0, 0.0, 0.0, 0.5], (4, 1)), "VEC4")
    path = save(g, prims, tmp_path / "c.glb")
    got = gltf_warnings(path)
    assert got == ["c.glb: COLOR_0 alpha below 1 is not read (vertex colours are opaque) "
                   "(meshes[0].primitives[0].attributes.COLOR_0, meshes[0].primitives[1].attributes.COLOR_0)"]
    g = GltfBuilder()
    prim = quad(g)
    prim["attributes"]["COLOR_0"] = g.accessor(np.tile([1.0, 0.0, 0.0, 1.0], (4, 1)), "VEC4")
    assert gltf_warnings(save(g, [prim], tmp_path / "opaque.glb")) == []              # negative control


def alpha_model(path, mode, factor_alpha, texture_alpha=None, cutoff=None):
    """A quad with alphaMode ``mode``, baseColorFactor alpha ``factor_alpha`` and, with
    ``texture_alpha`` (a 2x2 array of 8-bit codes), an RGBA base colour texture."""
    g = GltfBuilder()
    mat = {"pbrMetallicRoughness": {"baseColorFactor": [1, 1, 1, factor_alpha]}, "alphaMode": mode}
    if cutoff is not None:
        mat["alphaCutoff"] = cutoff
    if texture_alpha is not None:
        rgba = np.full((2, 2, 4), 200, np.uint8)
        rgba[..., 3] = texture_alpha
        g.texture(g.png_image(rgba))
        mat["pbrMetallicRoughness"]["baseColorTexture"] = {"index": 0}
    prim = quad(g)
    prim["material"] = 0
    return save(g, [prim], path, [mat])


def test_alpha_modes_decide_hidden_opaque_or_a_coverage_texture(tmp_path):
    """MASK: alpha = factor x texel alpha; every texel below the cutoff drops the
    primitive, every texel at or above it renders it opaque (no coverage texture), a
    texture that crosses the cutoff gets a coverage texture (rendered cut-outs:
    tests/test_gltf_appearance.py). BLEND gets one only when some alpha is below 1.
    None of these warns."""
    def load(name, *args, **kw):
        alpha_model(tmp_path / name, *args, **kw)
        geo, got = recorded(geometry, name, tmp_path)
        cutoffs = geo.materials[geo.materials[:, M_CUTOUT] >= 0, M_CUTOFF].tolist()
        return len(geo.tri_mat), cutoffs, got

    # texel alphas 0.4 x 255 = 102 (< 0.5 x 255) everywhere: hidden
    assert load("all_below.glb", "MASK", 1.0, [[102, 102], [102, 102]]) == (0, [], [])
    # factor 0.8 x texel 153/255 = 0.48 < 0.5: hidden; factor 1 x 0.6: shown, opaque
    assert load("product.glb", "MASK", 0.8, [[153, 153], [153, 153]]) == (0, [], [])
    assert load("above.glb", "MASK", 1.0, [[153, 153], [153, 153]]) == (2, [], [])
    assert load("cross.glb", "MASK", 1.0, [[0, 255], [255, 255]]) == (2, [0.5], [])
    assert load("cross_cut.glb", "MASK", 1.0, [[0, 255], [255, 255]], cutoff=0.25) == (2, [0.25], [])
    assert load("blend.glb", "BLEND", 0.5) == (2, [-1.0], [])
    assert load("blend_opaque.glb", "BLEND", 1.0) == (2, [], [])


# -------------------------------------------------------------------------- extensions
def test_extensions_only_used_warn_once_naming_them(tmp_path):
    g = GltfBuilder()
    used = ["KHR_materials_clearcoat", "KHR_lights_punctual", "EXT_meshopt_compression"]
    path = save(g, [quad(g)], tmp_path / "u.gltf", extra={"extensionsUsed": used})
    got = gltf_warnings(path)
    assert got == ["u.gltf: extensionsUsed: KHR_materials_clearcoat, EXT_meshopt_compression not "
                   "supported; ignored"]
    g = GltfBuilder()
    path = save(g, [quad(g)], tmp_path / "k.gltf", extra={"extensionsUsed": ["KHR_texture_transform"]})
    assert gltf_warnings(path) == []
