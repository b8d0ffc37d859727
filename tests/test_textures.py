"""Textures (checkerboard, sRGB image) and the UVs of every shape, at known points."""
import math

import imageio.v3 as iio
import numpy as np
import pytest

import raytrace
from raytrace.errors import SceneError
from raytrace.kernels.intersect import scene_hit
from raytrace.kernels.surface import hit_uv
from raytrace.layout import MISS
from raytrace.textures import TextureTable, texture_rgb
from scene_helpers import one_pixel_scene


def srgb_decode(c8):
    """sRGB 8-bit code -> linear, written from IEC 61966-2-1."""
    c = c8 / 255.0
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def table_with(spec, base="."):
    t = TextureTable(base)
    k = t.add(spec, "materials.m.albedo")
    info, texels = t.arrays()
    return info, texels, k


def test_checkerboard_at_known_uvs():
    c0, c1 = [0.9, 0.1, 0.2], [0.05, 0.6, 0.3]
    info, texels, k = table_with({"type": "checkerboard", "color0": c0, "color1": c1, "scale": [2, 4]})
    # scaled (u', v') = (2u, 4v); color0 where frac(u') > .5 equals frac(v') > .5 (Mitsuba)
    cases = [((0.1, 0.05), c0), ((0.3, 0.05), c1), ((0.1, 0.2), c1), ((0.3, 0.2), c0),
             ((0.6, 0.05), c0), ((-0.1, 0.05), c1), ((0.1, -0.05), c1)]
    for (u, v), want in cases:
        assert texture_rgb(info, texels, k, u, v) == pytest.approx(want), (u, v)


@pytest.fixture
def image_texture(tmp_path):
    rng = np.random.default_rng(4)
    img = rng.integers(0, 256, (3, 4, 3), dtype=np.uint8)        # H = 3, W = 4
    iio.imwrite(tmp_path / "t.png", img)
    lin = np.vectorize(srgb_decode)(img.astype(float))
    info, texels, k = table_with({"type": "image", "file": "t.png"}, tmp_path)
    return info, texels, k, lin


def test_image_texture_texel_centres_decode_srgb(image_texture):
    info, texels, k, lin = image_texture
    for r in range(3):
        for c in range(4):
            got = texture_rgb(info, texels, k, (c + 0.5) / 4, (r + 0.5) / 3)   # v = 0 at the top row
            assert got == pytest.approx(lin[r, c], rel=1e-6, abs=1e-7)


def test_image_texture_is_bilinear_and_wraps(image_texture):
    info, texels, k, lin = image_texture
    # a quarter of the way from texel (0, 1) towards (1, 2) in both directions
    u, v = (1.5 + 0.25) / 4, (0.5 + 0.25) / 3
    want = (0.75 * 0.75 * lin[0, 1] + 0.25 * 0.75 * lin[0, 2] + 0.75 * 0.25 * lin[1, 1]
            + 0.25 * 0.25 * lin[1, 2])
    assert texture_rgb(info, texels, k, u, v) == pytest.approx(want, rel=1e-6)
    # u = 0 lies halfway between the last and the first column (repeat wrap); v = 1 + tiny
    # between the last and first row
    assert texture_rgb(info, texels, k, 0.0, 0.5 / 3) == pytest.approx(0.5 * (lin[0, 3] + lin[0, 0]), rel=1e-6)
    assert texture_rgb(info, texels, k, 0.5 / 4, 1.0) == pytest.approx(0.5 * (lin[2, 0] + lin[0, 0]), rel=1e-6)
    assert texture_rgb(info, texels, k, 3.125, -7.0 + 1.5 / 3) == \
        pytest.approx(texture_rgb(info, texels, k, 0.125, 1.5 / 3), rel=1e-9)
    assert all(math.isfinite(x) for x in texture_rgb(info, texels, k, 1e300, -1e300))


def test_image_texture_scale(image_texture, tmp_path):
    info, texels, k, lin = image_texture
    info2, texels2, k2 = table_with({"type": "image", "file": "t.png", "scale": [2, 3]}, tmp_path)
    assert texture_rgb(info2, texels2, k2, 0.1, 0.05) == pytest.approx(texture_rgb(info, texels, k, 0.2, 0.15))


def uv_at(scene_dict, origin, direction, base=None):
    scene = raytrace.load_scene(scene_dict, base_dir=base)
    o = np.asarray(origin, float)
    d = np.asarray(direction, float)
    d /= np.linalg.norm(d)
    hit = scene_hit(scene.accel, scene.geometry, *o, *d, 0.0, math.inf)
    assert hit.kind != MISS, "the ray must hit"
    p = o + hit.t * d
    return np.array(hit_uv(scene.geometry, hit, *p)), p


def single(obj):
    return {"camera": {"center": [0, 0, 9], "look_at": [0, 0, 0]}, "objects": [obj]}


@pytest.mark.parametrize("q", [(0.6, 0.0, 0.8), (0.0, 0.6, -0.8), (-0.48, -0.6, 0.64), (0.36, -0.48, -0.8)])
def test_sphere_uv_is_longitude_latitude_of_the_object_point(q):
    q = np.array(q)
    # the object is rotated: UVs belong to the object, not to world space
    obj = {"type": "sphere", "center": [0.5, 0, 0], "radius": 2,
           "transform": [{"translate": [1, 2, 3]}, {"rotate_x": 30}]}
    rot = np.array([[1, 0, 0], [0, math.cos(math.pi / 6), -math.sin(math.pi / 6)],
                    [0, math.sin(math.pi / 6), math.cos(math.pi / 6)]])
    world = np.array([1, 2, 3]) + rot @ (np.array([0.5, 0, 0]) + 2 * q)
    n = rot @ q
    uv, p = uv_at(single(obj), world + 5 * n, -n)
    np.testing.assert_allclose(p, world, atol=1e-9)
    want = ((math.atan2(q[1], q[0]) / (2 * math.pi)) % 1.0, math.acos(q[2]) / math.pi)
    np.testing.assert_allclose(uv, want, atol=1e-9)


def test_plane_uv_follows_its_own_axes():
    # normal +y: u along +x, v along -z (the shortest rotation from +z to +y), 1 per unit
    uv, _ = uv_at(single({"type": "plane", "normal": [0, 1, 0], "offset": 1}), [0.3, 5, -0.7], [0, -1, 0])
    np.testing.assert_allclose(uv, [0.3, 0.7], atol=1e-12)
    # moved and scaled with its transform
    obj = {"type": "plane", "normal": [0, 1, 0], "offset": 0,
           "transform": [{"translate": [2, 0, 0]}, {"scale": [0.5, 1, 0.5]}]}
    uv, _ = uv_at(single(obj), [2.3, 5, -0.7], [0, -1, 0])
    np.testing.assert_allclose(uv, [0.6, 1.4], atol=1e-12)
    # normal +z: the plane's axes are x and y
    uv, _ = uv_at(single({"type": "plane", "normal": [0, 0, 1], "offset": -1}), [0.25, -0.5, 5], [0, 0, -1])
    np.testing.assert_allclose(uv, [0.25, -0.5], atol=1e-12)


def test_rectangle_and_cube_uvs_match_mitsuba_layout():
    rect = {"type": "rectangle", "transform": [{"translate": [1, 0, 0]}, {"scale": 2}]}
    uv, _ = uv_at(single(rect), [1 + 2 * 0.4, 2 * -0.6, 5], [0, 0, -1])
    np.testing.assert_allclose(uv, [(0.4 + 1) / 2, (-0.6 + 1) / 2], atol=1e-12)
    # Mitsuba's cube: on +z, u = (y + 1) / 2, v = (x + 1) / 2; on +x, u = (y + 1) / 2, v = (1 - z) / 2
    uv, _ = uv_at(single({"type": "cube"}), [-0.5, 0.5, 5], [0, 0, -1])
    np.testing.assert_allclose(uv, [0.75, 0.25], atol=1e-12)
    uv, _ = uv_at(single({"type": "cube"}), [5, 0.2, -0.6], [-1, 0, 0])
    np.testing.assert_allclose(uv, [0.6, 0.8], atol=1e-12)


QUAD_OBJ = """v -1 -1 0
v 1 -1 0
v 1 1 0
v -1 1 0
vt 0 0
vt 1 0
vt 1 1
vt 0 1
f 1/1 2/2 3/3 4/4
"""


def test_mesh_uvs_come_from_vt_with_v_flipped(tmp_path):
    (tmp_path / "quad.obj").write_text(QUAD_OBJ)
    scene = single({"type": "mesh", "file": "quad.obj", "material": "tex"})
    scene["materials"] = {"tex": {"type": "diffuse", "albedo": {"type": "checkerboard"}}}
    for x, y in [(0.2, 0.4), (-0.7, -0.1), (0.9, -0.8)]:
        uv, _ = uv_at(scene, [x, y, 5], [0, 0, -1], base=tmp_path)
        np.testing.assert_allclose(uv, [(x + 1) / 2, 1 - (y + 1) / 2], atol=1e-12)


def test_mesh_without_vt_uses_barycentrics(tmp_path):
    (tmp_path / "tri.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    scene = single({"type": "mesh", "file": "tri.obj", "material": "tex"})
    scene["materials"] = {"tex": {"type": "diffuse", "albedo": {"type": "checkerboard"}}}
    uv, _ = uv_at(scene, [0.2, 0.3, 5], [0, 0, -1], base=tmp_path)
    np.testing.assert_allclose(uv, [0.2, 0.3], atol=1e-12)


def test_whitted_uses_a_textured_diffuse_colour(tmp_path):
    # ambient only: the pixel is ambient * texture value at the point the camera sees
    c0, c1 = [0.8, 0.2, 0.1], [0.1, 0.3, 0.9]
    tex = {"type": "checkerboard", "color0": c0, "color1": c1}
    for point, want in [((0.25, 0.25), c0), ((0.75, 0.25), c1)]:
        s = one_pixel_scene([{"type": "plane", "normal": [0, 0, 1], "material": "m"}],
                            {"m": {"diffuse": tex}}, background={"ambient": [0.5, 0.5, 0.5]},
                            center=(point[0], point[1], 5))
        img = raytrace.render(raytrace.load_scene(s))
        np.testing.assert_allclose(img[0, 0], 0.5 * np.array(want), rtol=1e-6)


def test_missing_texture_file_names_the_field(tmp_path):
    s = single({"type": "sphere", "material": "m"})
    s["materials"] = {"m": {"type": "diffuse", "albedo": {"type": "image", "file": "nope.png"}}}
    with pytest.raises(SceneError, match=r"materials\.m\.albedo\.file: texture file not found"):
        raytrace.load_scene(s, base_dir=tmp_path)
