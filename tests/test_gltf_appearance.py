"""glTF appearance rendered by both integrators: COLOR_0 vertex colours, alphaMode MASK
(per-texel cut-outs, camera and shadow rays), alphaMode BLEND (stochastic transparency),
and morph targets on a skinned mesh. Expected values are computed here: a diffuse quad
lit head-on by a path tracer's directional light of ``color`` c has radiance albedo x c
(the light's irradiance is pi c, the BRDF albedo / pi)."""
import math

import numpy as np
import pytest

import raytrace
from raytrace.scene.build import build_geometry
from raytrace.scene.validate import validate_scene

from gltf_builder import UBYTE, USHORT, GltfBuilder, quad

LIGHT = [0.9, 0.7, 0.5]


def save(g, prims, path, materials=None, node=None, extra=None):
    if materials is not None:
        g.doc["materials"] = materials
    g.doc["meshes"] = [{"primitives": prims}]
    g.doc["nodes"] = [{"mesh": 0, **(node or {})}]
    g.doc["scenes"] = [{"nodes": [0]}]
    g.doc.update(extra or {})
    return g.save(path)


def scene(file, kind="path", backdrop=None, lights=True, fov=30):
    """The glTF quad seen head-on filling the view (x, y in about +-0.8 at the centre
    row); ``backdrop``: radiance of an emitting rectangle behind it (path) or the
    background colour (Whitted)."""
    data = {"camera": {"center": [0, 0, 3], "look_at": [0, 0, 0], "fov": fov},
            "integrator": {"type": kind}, "materials": {},
            "objects": [{"type": "gltf", "file": str(file)}]}
    if lights:
        data["lights"] = [{"type": "directional", "direction": [0, 0, -1], "color": LIGHT}]
    if backdrop is not None and kind == "path":
        data["materials"]["black"] = {"type": "diffuse", "albedo": [0, 0, 0]}
        data["objects"].append({"type": "rectangle", "material": "black", "emission": backdrop,
                                "transform": [{"scale": 10}, {"translate": [0, 0, -2]}]})
    elif backdrop is not None:
        data["background"] = {"color": backdrop}
    return raytrace.load_scene(data, base_dir=file.parent)


# ---------------------------------------------------------------------------- COLOR_0
CORNERS = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], float)


def linear_colour(p):
    """Vertex colours that are a linear function of position (so any triangulation
    interpolates them exactly): (n, 3) in [0, 1] for x, y in [-1, 1]."""
    p = np.atleast_2d(p)
    return np.stack([0.5 + 0.4 * p[:, 0], 0.5 + 0.3 * p[:, 1], 0.6 - 0.2 * p[:, 0] + 0.1 * p[:, 1]], axis=1)


def coloured_quad(path, factor, kind="VEC3", ctype=5126):
    g = GltfBuilder()
    prim = quad(g)
    cols = linear_colour(CORNERS)
    if kind == "VEC4":
        cols = np.hstack([cols, np.ones((4, 1))])
    if ctype == 5126:
        prim["attributes"]["COLOR_0"] = g.accessor(cols, kind)
    else:
        top = np.iinfo(np.uint8 if ctype == UBYTE else np.uint16).max
        prim["attributes"]["COLOR_0"] = g.accessor(np.round(cols * top), kind, ctype, normalized=True)
    prim["material"] = 0
    mat = {"pbrMetallicRoughness": {"baseColorFactor": factor + [1.0], "metallicFactor": 0}}
    return save(g, [prim], path, [mat])


@pytest.mark.parametrize("kind,ctype", [("VEC3", 5126), ("VEC4", USHORT)])
def test_vertex_colours_times_base_colour_in_albedo_and_radiance(tmp_path, kind, ctype):
    """Albedo AOV = baseColorFactor x COLOR_0 interpolated at the hit point (read from the
    position AOV of the same samples); radiance = albedo x the light's colour."""
    factor = [0.9, 1.0, 0.5]
    path = coloured_quad(tmp_path / "c.glb", factor, kind, ctype)
    img = raytrace.render(scene(path), width=12, height=12, spp=4, aovs=["albedo", "position"])
    pos = img.aovs["position"].reshape(-1, 3).astype(np.float64)
    albedo = img.aovs["albedo"].reshape(-1, 3).astype(np.float64)
    expected = np.asarray(factor) * linear_colour(pos)
    tol = 1e-5 if ctype == 5126 else 2e-5 + 0.5 / 65535
    np.testing.assert_allclose(albedo, expected, atol=tol)
    np.testing.assert_allclose(np.asarray(img).reshape(-1, 3), albedo * LIGHT, rtol=1e-4, atol=1e-6)
    # the colour varies across the image: the left edge is redder than the right
    assert albedo[0, 0] < albedo[11, 0] - 0.1


def test_vertex_colours_in_the_whitted_integrator(tmp_path):
    """Whitted: the Lambert term's k_d is the base colour times the vertex colour
    (directional light of colour c head-on: L = k_d c, no ambient, no specular)."""
    factor = [1.0, 0.8, 0.6]
    path = coloured_quad(tmp_path / "w.glb", factor)
    sc = scene(path, kind="whitted")
    img = np.asarray(raytrace.render(sc, width=9, height=9, spp=1)).astype(np.float64)
    aov = raytrace.render(sc, width=9, height=9, spp=1, aovs=["position"]).aovs["position"]
    expected = np.asarray(factor) * linear_colour(aov.reshape(-1, 3).astype(np.float64)) * LIGHT
    np.testing.assert_allclose(img.reshape(-1, 3), expected, rtol=1e-4, atol=1e-6)


def test_without_color_0_the_base_colour_alone(tmp_path):
    """Negative control: the same quad without COLOR_0 has the factor as its albedo."""
    g = GltfBuilder()
    prim = quad(g)
    prim["material"] = 0
    path = save(g, [prim], tmp_path / "plain.glb",
                [{"pbrMetallicRoughness": {"baseColorFactor": [0.3, 0.6, 0.9, 1], "metallicFactor": 0}}])
    img = raytrace.render(scene(path), width=6, height=6, spp=2, aovs=["albedo"])
    np.testing.assert_allclose(img.aovs["albedo"].reshape(-1, 3), np.tile([0.3, 0.6, 0.9], (36, 1)), atol=1e-6)


COLOR_PATH = "meshes[0].primitives[0].attributes.COLOR_0"


@pytest.mark.parametrize("values,kind,where,message", [
    (np.tile([1.5, 0.0, 0.0], (4, 1)), "VEC3", COLOR_PATH, "colour values must lie in [0, 1], got 0 .. 1.5"),
    (np.tile([0.5, -0.1, 0.0], (4, 1)), "VEC3", COLOR_PATH, "colour values must lie in [0, 1], got -0.1 .. 0.5"),
    (np.tile([0.5, 0.5, 0.5], (3, 1)), "VEC3", COLOR_PATH, "expected 4 colours (as POSITION), got 3"),
    (np.tile([0.5, 0.5], (4, 1)), "VEC2", "accessors[4].type", "VEC2 cannot be used as COLOR_0"),
])
def test_bad_vertex_colours_are_refused_with_their_path(tmp_path, values, kind, where, message):
    g = GltfBuilder()
    prim = quad(g)
    prim["attributes"]["COLOR_0"] = g.accessor(values, kind)
    path = save(g, [prim], tmp_path / "bad.glb")
    with pytest.raises(raytrace.SceneError) as err:
        raytrace.load_scene(path)
    assert f"{where}: {message}" in str(err.value)


# ------------------------------------------------------------------ alphaMode MASK
def masked_quad(path, mode, alpha_codes, factor_alpha=1.0, cutoff=None):
    """A black diffuse quad whose RGBA base colour texture has the alphas ``alpha_codes``
    (8-bit, 2x2: texel (row 0, column 0) is the quad's top-left quarter)."""
    g = GltfBuilder()
    rgba = np.zeros((2, 2, 4), np.uint8)
    rgba[..., 3] = alpha_codes
    g.texture(g.png_image(rgba))
    mat = {"pbrMetallicRoughness": {"baseColorFactor": [1, 1, 1, factor_alpha], "metallicFactor": 0,
                                    "baseColorTexture": {"index": 0}}, "alphaMode": mode}
    if cutoff is not None:
        mat["alphaCutoff"] = cutoff
    prim = quad(g)
    prim["material"] = 0
    return save(g, [prim], path, [mat])


def quarter_centres(img):
    """Mean of the 3x3 pixels at the centre of each quarter of a 16 x 16 image:
    (top-left, top-right, bottom-left, bottom-right), each (3,)."""
    a = np.asarray(img, np.float64)
    return [a[r - 1:r + 2, c - 1:c + 2].reshape(-1, 3).mean(axis=0) for r in (4, 12) for c in (4, 12)]


@pytest.mark.parametrize("kind", ["path", "whitted"])
def test_mask_cuts_out_the_texels_below_the_cutoff(tmp_path, kind):
    """Texel alpha 0 in the top-left quarter, 1 elsewhere, cutoff 0.5: the backdrop shows
    through the top-left quarter only; the rest is the black quad."""
    back = [0.2, 0.5, 1.5]
    path = masked_quad(tmp_path / "m.glb", "MASK", [[0, 255], [255, 255]], cutoff=0.5)
    img = raytrace.render(scene(path, kind, backdrop=back, lights=False, fov=36), width=16, height=16, spp=2)
    tl, tr, bl, br = quarter_centres(img)
    np.testing.assert_allclose(tl, back, rtol=1e-5)
    for q in (tr, bl, br):
        np.testing.assert_allclose(q, 0.0, atol=1e-7)


def test_mask_cutoff_above_every_texel_alpha_of_a_crossing_texture(tmp_path):
    """Texel alphas 0.4 and 0.8 (codes 102, 204) with cutoff 0.6: only the 0.8 texel is
    kept; with cutoff 0.3 both are (the cut-off is compared, not rounded away)."""
    back = [1.0, 1.0, 1.0]
    codes = [[102, 204], [204, 204]]
    cut = raytrace.render(scene(masked_quad(tmp_path / "a.glb", "MASK", codes, cutoff=0.6), backdrop=back,
                                lights=False, fov=36), width=16, height=16, spp=2)
    keep = raytrace.render(scene(masked_quad(tmp_path / "b.glb", "MASK", codes, cutoff=0.3), backdrop=back,
                                 lights=False, fov=36), width=16, height=16, spp=2)
    np.testing.assert_allclose(quarter_centres(cut)[0], back, rtol=1e-5)
    np.testing.assert_allclose(quarter_centres(keep)[0], 0.0, atol=1e-7)


def test_mask_cut_out_casts_a_shadow_with_a_hole(tmp_path):
    """A masked quad (top-left quarter cut out) between a directional light and a white
    diffuse floor seen from the light's side: the floor behind the hole is lit (albedo x
    light colour), the rest is in the quad's shadow. The camera sees the floor through
    the hole only where the quad is cut (the quad itself is black)."""
    path = masked_quad(tmp_path / "s.glb", "MASK", [[0, 255], [255, 255]], cutoff=0.5)
    data = {"camera": {"center": [0, 0, 3], "look_at": [0, 0, 0], "fov": 36},
            "integrator": {"type": "path", "max_depth": 2},
            "materials": {"white": {"type": "diffuse", "albedo": [0.5, 0.5, 0.5]}},
            "lights": [{"type": "directional", "direction": [0, 0, -1], "color": LIGHT}],
            "objects": [{"type": "gltf", "file": str(path)},
                        {"type": "rectangle", "material": "white",
                         "transform": [{"scale": 10}, {"translate": [0, 0, -1]}]}]}
    img = raytrace.render(raytrace.load_scene(data, base_dir=tmp_path), width=16, height=16, spp=2)
    tl, tr, bl, br = quarter_centres(img)
    np.testing.assert_allclose(tl, 0.5 * np.asarray(LIGHT), rtol=1e-5)     # lit floor through the hole
    for q in (tr, bl, br):
        np.testing.assert_allclose(q, 0.0, atol=1e-7)


def test_mask_geometry_keeps_the_texture_coordinates_for_an_untextured_colour(tmp_path):
    """A cut-out needs texture coordinates even when the colour has no texture of its
    own: the material row has a coverage texture and the triangles keep their UVs."""
    path = masked_quad(tmp_path / "uv.glb", "MASK", [[0, 255], [255, 255]], cutoff=0.5)
    data = {"camera": {"center": [0, 0, 3], "look_at": [0, 0, 0]}, "materials": {},
            "objects": [{"type": "gltf", "file": str(path)}]}
    validate_scene(data)
    geo = build_geometry(data, tmp_path)[0]
    assert geo.cutouts == 1
    assert sorted(map(tuple, geo.tri_uv.reshape(-1, 2).tolist())) == sorted(
        map(tuple, np.array([[0, 1], [1, 1], [1, 0], [0, 1], [1, 0], [0, 0]], float).tolist()))


# ------------------------------------------------------------------ alphaMode BLEND
def test_blend_is_stochastic_coverage_with_the_binomial_spread(tmp_path):
    """BLEND with a constant alpha a over an emitting backdrop B, the quad black: each
    camera sample sees B with probability 1 - a. Over the image the mean is (1 - a) B
    within 4 standard errors of the binomial; per pixel the spread across pixels is the
    binomial's (a chi-square check of the variance), not 0 (a fixed per-pixel decision)
    and not the all-or-nothing of a whole-image decision."""
    back = np.array([1.0, 1.0, 1.0])
    a, spp, n = 0.3, 32, 24
    path = masked_quad(tmp_path / "b.glb", "BLEND", [[255, 255], [255, 255]], factor_alpha=a)
    img = np.asarray(raytrace.render(scene(path, backdrop=back.tolist(), lights=False, fov=36),
                                     width=n, height=n, spp=spp, seed=3))[..., 0].astype(np.float64)
    p = 1.0 - a
    samples = n * n * spp
    assert abs(img.mean() - p) < 4.0 * math.sqrt(p * (1 - p) / samples)
    # per-pixel means: variance p (1 - p) / spp; the ratio of the sample variance to it is
    # chi-square(n^2 - 1) / (n^2 - 1): within +-30 % for 575 degrees of freedom (>5 sigma)
    ratio = img.var(ddof=1) / (p * (1 - p) / spp)
    assert 0.7 < ratio < 1.3, ratio
    # negative control: alpha 0.6 gives a different mean by many standard errors
    path6 = masked_quad(tmp_path / "b6.glb", "BLEND", [[255, 255], [255, 255]], factor_alpha=0.6)
    img6 = np.asarray(raytrace.render(scene(path6, backdrop=back.tolist(), lights=False, fov=36),
                                      width=n, height=n, spp=spp, seed=3))[..., 0]
    assert abs(img6.mean() - p) > 20.0 * math.sqrt(p * (1 - p) / samples)


def test_blend_is_a_function_of_the_seed(tmp_path):
    path = masked_quad(tmp_path / "d.glb", "BLEND", [[128, 255], [255, 64]])
    sc = scene(path, backdrop=[1, 1, 1], lights=False, fov=36)
    one = np.asarray(raytrace.render(sc, width=8, height=8, spp=4, seed=5))
    two = np.asarray(raytrace.render(sc, width=8, height=8, spp=4, seed=5))
    other = np.asarray(raytrace.render(sc, width=8, height=8, spp=4, seed=6))
    assert np.array_equal(one, two)
    assert not np.array_equal(one, other)


def test_opaque_mode_ignores_the_texture_alpha(tmp_path):
    """Negative control: alphaMode OPAQUE (the default) with the same zero-alpha texel
    renders the whole quad."""
    path = masked_quad(tmp_path / "o.glb", "OPAQUE", [[0, 255], [255, 255]])
    img = raytrace.render(scene(path, backdrop=[1, 1, 1], lights=False, fov=36), width=16, height=16, spp=2)
    np.testing.assert_allclose(np.asarray(img), 0.0, atol=1e-7)


# ------------------------------------------------------------ morph targets + skin
def skinned_morph(path, weight):
    """One quad skinned to one joint (identity inverse bind; the joint node translated by
    (1, 0, 0)) with a morph target that moves vertex 2 by (0, 0, 1), at ``weight``."""
    g = GltfBuilder()
    prim = quad(g)
    prim["attributes"]["JOINTS_0"] = g.accessor(np.zeros((4, 4)), "VEC4", USHORT)
    prim["attributes"]["WEIGHTS_0"] = g.accessor(np.tile([1.0, 0, 0, 0], (4, 1)), "VEC4")
    disp = np.zeros((4, 3))
    disp[2] = [0.0, 0.0, 1.0]
    prim["targets"] = [{"POSITION": g.accessor(disp, "VEC3", minmax=True)}]
    g.doc["meshes"] = [{"primitives": [prim], "weights": [weight]}]
    g.doc["nodes"] = [{"mesh": 0, "skin": 0}, {"translation": [1.0, 0.0, 0.0]}]
    g.doc["skins"] = [{"joints": [1], "inverseBindMatrices": g.accessor(np.eye(4).reshape(1, 16), "MAT4")}]
    g.doc["scenes"] = [{"nodes": [0, 1]}]
    return g.save(path)


@pytest.mark.parametrize("weight", [0.0, 0.5, 1.0])
def test_morph_targets_are_blended_before_skinning(tmp_path, weight):
    """Vertex 2 (1, 1, 0) moves to (1, 1, weight) by the morph target, then the joint's
    translation moves every vertex by (1, 0, 0): glTF's order, morph then skin."""
    path = skinned_morph(tmp_path / f"sm{weight}.glb", weight)
    data = {"camera": {"center": [0, 0, 5], "look_at": [0, 0, 0]}, "materials": {},
            "objects": [{"type": "gltf", "file": path.name}]}
    validate_scene(data)
    geo = build_geometry(data, tmp_path)[0]
    verts = {tuple(np.round(v, 6)) for v in np.concatenate([geo.tri_v0, geo.tri_v1, geo.tri_v2])}
    expected = {(0.0, -1.0, 0.0), (2.0, -1.0, 0.0), (2.0, 1.0, weight), (0.0, 1.0, 0.0)}
    assert verts == expected
