"""Latitude-longitude environment maps (``raytrace/envmap.py``) and float cube maps.

- Files: our Radiance HDR writer and reader against two independent readers (OpenImageIO,
  Mitsuba's ``Bitmap``), flat and run-length encoded, and EXR maps.
- Orientation: the lookup against Mitsuba 3's ``envmap`` emitter evaluated direction by
  direction on the same file (identity, ``scale``, and ``to_world`` = our ``transform``),
  with a map turned by one column as a negative control; the render comparison is in
  ``tests/test_path_vs_mitsuba.py`` (``latlong_sky``).
- Sampling: the density integrates to 1 and to 4 pi in E[1/pdf]; sampled cells follow
  the cell probabilities (chi-square); sampled directions get the density MIS uses.
- Closed forms: a white furnace under a uniform map; a diffuse square under the
  procedural sky equals the quadrature of the lookup over its hemisphere; both
  integrators show the map as the background, texel for texel.
- Bad files: one line naming the file and the field, exit status 2.
"""
import math
import subprocess
import sys

import numpy as np
import pytest
from numba import njit

import raytrace
from light_scenes import SKY_FILE, generated_dir, sky_image
from raytrace.envmap import (cell_solid_angles, float_to_rgbe, hdr_bytes, latlong_directions, latlong_lookup,
                             read_hdr)
from raytrace.errors import SceneError
from raytrace.kernels.emitters import env_lookup, sample_light
from test_path_integrator import check_against, path_scene, seed_renders


@njit(cache=True)
def _lookups(env, dirs):
    """(n, 4): radiance and density of each direction."""
    out = np.zeros((dirs.shape[0], 4))
    for k in range(dirs.shape[0]):
        r, g, b, pdf = env_lookup(env, dirs[k, 0], dirs[k, 1], dirs[k, 2])
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = r, g, b, pdf
    return out


@njit(cache=True)
def _samples(lights, geo, env, n, seed):
    """(n, 6): ok, direction (3), pdf, delta of light samples from the origin."""
    np.random.seed(seed)
    out = np.zeros((n, 6))
    for k in range(n):
        ls = sample_light(
            lights, geo, env, 0.0, 0.0, 0.0, np.random.random(), np.random.random())
        ok, (wx, wy, wz), dist, (vr, vg, vb), pdf, delta = ls
        out[k, 0] = 1.0 if ok else 0.0
        out[k, 1], out[k, 2], out[k, 3], out[k, 4] = wx, wy, wz, pdf
        out[k, 5] = 1.0 if delta else 0.0
    return out


def unit_directions(n, seed=0):
    d = np.random.default_rng(seed).normal(size=(n, 3))
    return np.ascontiguousarray(d / np.linalg.norm(d, axis=1, keepdims=True))


def env_scene(background, base_dir, objects=()):
    scene = raytrace.load_scene({"camera": {"center": [0, 0, 5], "look_at": [0, 0, 0]},
                                 "integrator": {"type": "path"}, "background": background,
                                 "objects": list(objects)}, base_dir=base_dir)
    return scene, scene.environment


def write_map(folder, name, img):
    path = folder / name
    if name.endswith(".hdr"):
        path.write_bytes(hdr_bytes(img))
    else:
        from raytrace.film.exr import exr_bytes
        path.write_bytes(exr_bytes({"color": np.asarray(img, np.float32)}))
    return path


# ------------------------------------------------------------------------ files
@pytest.mark.parametrize("rle", [True, False])
def test_hdr_files_read_the_same_in_three_readers(tmp_path, rle):
    """Our RGBE writer's files decode to the same floats in our reader, OpenImageIO's
    and Mitsuba's; values are quantised down in steps of at most 2^-7 of the largest channel."""
    img = sky_image()
    img[3, 5] = [1e-3, 2e4, 0.0]           # a wide range in one texel
    path = tmp_path / "sky.hdr"
    path.write_bytes(hdr_bytes(img, rle=rle))
    ours = read_hdr(path, "background.envmap")
    peak = img.max(axis=2, keepdims=True)
    assert np.all(np.abs(ours - img) <= peak * 2.0 ** -7) and np.all(ours <= img)
    np.testing.assert_array_equal(float_to_rgbe(ours), float_to_rgbe(img))   # quantised once: stable
    oiio = pytest.importorskip("OpenImageIO")
    theirs = oiio.ImageInput.open(str(path)).read_image("float")
    np.testing.assert_array_equal(ours, theirs)
    mi = pytest.importorskip("mitsuba")
    mi.set_variant("scalar_rgb")
    np.testing.assert_array_equal(ours, np.array(mi.Bitmap(str(path))))


def test_hdr_orientation_lines_flip_rows_and_columns(tmp_path):
    img = np.arange(4 * 12 * 3, dtype=np.float32).reshape(4, 12, 3) + 1
    flat = float_to_rgbe(img)
    for line, want in ((b"-Y 4 +X 12", img), (b"+Y 4 +X 12", img[::-1]), (b"-Y 4 -X 12", img[:, ::-1])):
        path = tmp_path / "o.hdr"
        path.write_bytes(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\nEXPOSURE=2\n\n" + line + b"\n" + flat.tobytes())
        np.testing.assert_array_equal(read_hdr(path, "x"), read_hdr_values(want))


def read_hdr_values(img):
    """What an RGBE file of ``img`` decodes to."""
    rgbe = float_to_rgbe(img)
    e = rgbe[..., 3].astype(np.int32)
    return (rgbe[..., :3] * np.where(e > 0, np.ldexp(1.0, e - 136), 0.0)[..., None]).astype(np.float32)


def test_exr_and_png_maps_load_linear(tmp_path):
    img = sky_image()
    write_map(tmp_path, "sky.exr", img)
    _, env = env_scene({"envmap": "sky.exr"}, tmp_path)
    np.testing.assert_array_equal(env.texels[0], img)
    import imageio.v3 as iio
    iio.imwrite(tmp_path / "ldr.png", np.full((4, 8, 3), [255, 128, 0], np.uint8))
    _, env = env_scene({"envmap": "ldr.png"}, tmp_path)
    np.testing.assert_allclose(env.texels[0, 0, 0], [1.0, 0.2158605, 0.0], rtol=1e-6)   # sRGB 128 -> 0.2159


# --------------------------------------------------------------------- orientation
MI_CASES = [{}, {"scale": 2.5}, {"transform": [{"rotate_y": 30}, {"rotate_x": -20}]},
            {"transform": [{"rotate": {"axis": [1, 2, 0.5], "angle": 75}}], "scale": 0.5}]


@pytest.mark.parametrize("extra", MI_CASES)
def test_lookup_equals_mitsubas_envmap_on_the_same_file(extra):
    """Mitsuba's ``envmap`` (``filename`` the same file, ``scale``, ``to_world`` our
    ``transform``) evaluated in 2000 random directions and through the texel centres
    gives our radiance to float32 rounding; the map turned by one column does not."""
    mi = pytest.importorskip("mitsuba")
    from mitsuba_scenes import mi_transform
    mi.set_variant("scalar_rgb")
    folder = generated_dir()
    _, env = env_scene(dict({"envmap": SKY_FILE}, **extra), folder)
    emitter = mi.load_dict({"type": "envmap", "filename": str(folder / SKY_FILE),
                            "scale": float(extra.get("scale", 1.0)),
                            "to_world": mi_transform(extra.get("transform"))})
    rot = env.to_map.T                                       # map -> world
    # random directions and the texel centres (not the poles' rows: every column of such a
    # row is the same direction, where the longitude, hence the texel, is a matter of rounding)
    dirs = np.concatenate([unit_directions(2000), latlong_directions(32, 64)[1:-1].reshape(-1, 3) @ rot.T])
    theirs = np.zeros((len(dirs), 3))
    si = mi.SurfaceInteraction3f()
    for k, d in enumerate(dirs):
        si.wi = mi.Vector3f(*(-d))
        theirs[k] = np.array(emitter.eval(si))
    ours = _lookups(env, np.ascontiguousarray(dirs))[:, :3]
    scale = max(theirs.max(), 1e-30)
    assert np.abs(ours - theirs).max() <= 2e-5 * scale, np.abs(ours - theirs).max() / scale
    turned = env._replace(texels=np.ascontiguousarray(np.roll(env.texels, 1, axis=2)))
    wrong = _lookups(turned, np.ascontiguousarray(dirs))[:, :3]
    assert np.abs(wrong - theirs).max() > 0.01 * scale


def test_png_maps_are_srgb_decoded_as_in_mitsuba(tmp_path):
    """An 8-bit PNG sky: both decode sRGB to linear (and agree direction by direction)."""
    mi = pytest.importorskip("mitsuba")
    import imageio.v3 as iio
    mi.set_variant("scalar_rgb")
    rng = np.random.default_rng(2)
    iio.imwrite(tmp_path / "ldr.png", rng.integers(0, 256, (6, 10, 3), dtype=np.uint8))
    _, env = env_scene({"envmap": "ldr.png"}, tmp_path)
    emitter = mi.load_dict({"type": "envmap", "filename": str(tmp_path / "ldr.png")})
    dirs = unit_directions(500, 8)
    si = mi.SurfaceInteraction3f()
    theirs = []
    for d in dirs:
        si.wi = mi.Vector3f(*(-d))
        theirs.append(np.array(emitter.eval(si)))
    np.testing.assert_allclose(_lookups(env, dirs)[:, :3], theirs, rtol=2e-5, atol=1e-6)


def test_the_documented_axes():
    """The layout table of docs/scene-format.md: -z at the left edge, +x a quarter in,
    +z in the middle, -x at three quarters, +y the top row, -y the bottom row."""
    h, w = 5, 8
    img = np.zeros((h, w, 3), np.float32)
    img[..., 0] = np.arange(w)[None, :]          # red: the column
    img[..., 1] = np.arange(h)[:, None]          # green: the row
    for d, (col, row) in {(0, 0, -1): (-0.5, 2), (1, 0, 0): (1.5, 2), (0, 0, 1): (3.5, 2), (-1, 0, 0): (5.5, 2),
                          (0, 1, 0): (None, 0), (0, -1, 0): (None, 4)}.items():
        r, g, _ = latlong_lookup(img, np.array(d, np.float64))
        assert g == pytest.approx(row, abs=1e-12)
        if col is not None:                       # between columns: the bilinear blend (wrapping)
            want = col if col >= 0 else 0.5 * (w - 1)
            assert r == pytest.approx(want, abs=1e-12)


def test_kernel_lookup_equals_the_numpy_lookup_and_hits_texel_centres(tmp_path):
    img = sky_image()
    write_map(tmp_path, "m.exr", img)
    _, env = env_scene({"envmap": "m.exr"}, tmp_path)
    dirs = unit_directions(5000, 3)
    np.testing.assert_allclose(_lookups(env, dirs)[:, :3], latlong_lookup(img, dirs), rtol=1e-6, atol=1e-7)
    centres = np.ascontiguousarray(latlong_directions(*img.shape[:2]).reshape(-1, 3))
    np.testing.assert_allclose(_lookups(env, centres)[:, :3], img.reshape(-1, 3), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------------ sampling
@pytest.mark.parametrize("transform", [None, [{"rotate": {"axis": [1, 1, 0], "angle": 40}}]])
def test_latlong_sampling_density_integrates_to_one(transform):
    bg = {"envmap": SKY_FILE} if transform is None else {"envmap": SKY_FILE, "transform": transform}
    scene, env = env_scene(bg, generated_dir())
    lights = scene.lights
    n_mu, n_phi = 800, 1600
    mu = (np.arange(n_mu) + 0.5) / n_mu * 2 - 1
    phi = (np.arange(n_phi) + 0.5) / n_phi * 2 * math.pi
    MU, PHI = np.meshgrid(mu, phi, indexing="ij")
    S = np.sqrt(1 - MU * MU)
    dirs = np.ascontiguousarray(np.stack([S * np.cos(PHI), MU, S * np.sin(PHI)], -1).reshape(-1, 3))
    assert _lookups(env, dirs)[:, 3].sum() * 4 * math.pi / len(dirs) == pytest.approx(1.0, abs=2e-3)
    s = _samples(lights, scene.geometry, env, 200_000, 4)
    assert s[:, 0].all() and lights.pmf[lights.env_entry] == 1.0
    inv = 1.0 / s[:, 4]
    assert inv.mean() == pytest.approx(4 * math.pi, abs=4 * inv.std() / math.sqrt(len(inv)))
    # every sample carries the density a BSDF ray in its direction gets (MIS weights sum to 1)
    np.testing.assert_allclose(_lookups(env, np.ascontiguousarray(s[:, 1:4]))[:, 3], s[:, 4], rtol=1e-12)


def test_sampled_cells_follow_their_probabilities():
    """Chi-square test of 100,000 sampled directions, binned by lat-long cell, against the
    cell probabilities; a sampler that picked cells one column off fails it."""
    from scipy.stats import chi2
    scene, env = env_scene({"envmap": SKY_FILE}, generated_dir())
    s = _samples(scene.lights, scene.geometry, env, 100_000, 9)
    h, w = env.texels.shape[1:3]
    d = s[:, 1:4]
    fu = np.mod(np.arctan2(d[:, 0], -d[:, 2]) / (2 * np.pi) * w - 0.5, w)
    fv = np.arctan2(np.hypot(d[:, 0], d[:, 2]), d[:, 1]) / np.pi * (h - 1)
    cell = np.minimum(fv.astype(int), h - 2) * w + np.minimum(fu.astype(int), w - 1)
    counts = np.bincount(cell, minlength=len(env.pmf))

    def p_value(pmf):
        expected = pmf * len(cell)
        big = expected >= 5                     # pool the cells expected to hold fewer than 5
        stat = ((counts[big] - expected[big]) ** 2 / expected[big]).sum()
        rest_e, rest_c = expected[~big].sum(), counts[~big].sum()
        stat += (rest_c - rest_e) ** 2 / rest_e
        return chi2.sf(stat, big.sum())

    assert p_value(env.pmf) > 1e-3
    assert p_value(np.roll(env.pmf.reshape(h - 1, w), 1, axis=1).ravel()) < 1e-9


def test_cell_solid_angles_cover_the_sphere():
    for h, w in ((3, 2), (32, 64), (1024, 2048)):
        assert cell_solid_angles(h, w).sum() * w == pytest.approx(4 * math.pi, rel=1e-12)


# ---------------------------------------------------------------------- closed forms
def test_white_furnace_under_a_uniform_latlong_map(tmp_path):
    lin = np.array([0.7, 1.3, 2.1], np.float32)
    write_map(tmp_path, "u.exr", np.broadcast_to(lin, (6, 12, 3)))
    s = path_scene([{"type": "sphere", "radius": 1, "material": "m"}],
                   {"m": {"type": "diffuse", "albedo": [0.9, 0.9, 0.9]}},
                   {"envmap": "u.exr", "scale": 2.0, "transform": [{"rotate_z": 33}]},
                   camera={"center": [0, 0, 4], "look_at": [0, 0, 0], "fov": 16})
    check_against(seed_renders(s, base_dir=tmp_path), 0.9 * 2.0 * lin.astype(np.float64))


@pytest.mark.parametrize("transform", [None, [{"rotate_y": 70}, {"rotate_x": 25}]])
def test_diffuse_square_under_the_sky_matches_quadrature(transform):
    """L = rho / pi * int L_env(w) cos over the upper hemisphere, by quadrature of the
    documented lookup (the NumPy one) through the transform; the sun makes it a test of
    where the map's brightest texels are, and of their importance sampling."""
    from raytrace.scene.emitters import environment_rotation
    rho, scale = 0.8, 0.4
    rot = environment_rotation(transform)                       # map -> world
    n_mu, n_phi = 400, 1600
    mu = (np.arange(n_mu) + 0.5) / n_mu
    phi = (np.arange(n_phi) + 0.5) / n_phi * 2 * np.pi
    MU, PHI = np.meshgrid(mu, phi, indexing="ij")
    S = np.sqrt(1 - MU * MU)
    world = np.stack([S * np.cos(PHI), MU, S * np.sin(PHI)], -1)
    file_values = read_hdr(generated_dir() / SKY_FILE, "x")
    radiance = scale * latlong_lookup(file_values, world @ rot)       # to_map = rot^T: d_map = rot^T d
    expected = rho / np.pi * (radiance * MU[..., None]).sum(axis=(0, 1)) * (2 * np.pi / (n_mu * n_phi))
    bg = {"envmap": SKY_FILE, "scale": scale}
    if transform:
        bg["transform"] = transform
    s = path_scene([{"type": "rectangle", "material": "m", "transform": [{"rotate_x": -90}, {"scale": 0.01}]}],
                   {"m": {"type": "diffuse", "albedo": [rho] * 3}}, bg, max_depth=2, spp=256, size=4,
                   camera={"type": "orthographic", "center": [0, 1, 0], "direction": [0, -1, 0],
                           "up": [0, 0, -1], "height": 0.001})
    check_against(seed_renders(s, base_dir=generated_dir()), expected, mean_tol=0.01)


@pytest.mark.parametrize("integrator", ["whitted", "path"])
def test_both_integrators_show_the_map_as_the_background(integrator):
    """Through each pixel centre the image is the lookup of the camera ray (no objects):
    exact for Whitted, and for the path tracer at 1 spp (a camera ray that escapes)."""
    folder = generated_dir()
    cam = {"center": [0, 0, 0], "direction": [0.3, 0.2, -1], "fov": 100}
    bg = {"envmap": SKY_FILE, "scale": 0.7, "transform": [{"rotate_y": 100}]}
    scene = raytrace.load_scene({"camera": cam, "image": {"width": 24, "height": 16, "spp": 1},
                                 "integrator": {"type": integrator}, "background": bg}, base_dir=folder)
    img = raytrace.render(scene)
    from raytrace.camera import make_camera
    from raytrace.kernels.camera_rays import camera_ray
    c = make_camera(cam)
    dirs = np.array([camera_ray(c, 24, 16, j + 0.5, i + 0.5)[1] for i in range(16) for j in range(24)])
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    env = scene.environment
    np.testing.assert_allclose(img.reshape(-1, 3), _lookups(env, np.ascontiguousarray(dirs))[:, :3], rtol=1e-6,
                               atol=1e-7)


# ---------------------------------------------------------------------- float cube maps
FACES = ("left", "right", "up", "down", "front", "back")


def test_float_cube_maps_hold_their_values(tmp_path):
    values = {f: np.full((4, 4, 3), [k + 0.5, 10.0 * k, 1e3], np.float32) for k, f in enumerate(FACES)}
    for k, f in enumerate(FACES):
        write_map(tmp_path, f + (".exr" if k % 2 else ".hdr"), values[f])     # mixed formats
    _, env = env_scene({"cube_map": "."}, tmp_path)
    for k, f in enumerate(FACES):
        want = values[f] if k % 2 else read_hdr_values(values[f])
        np.testing.assert_array_equal(env.texels[k], want)
    # directions through face centres: +x right, -x left, +y up, ...
    axes = {"right": (1, 0, 0), "left": (-1, 0, 0), "up": (0, 1, 0), "down": (0, -1, 0), "front": (0, 0, 1),
            "back": (0, 0, -1)}
    got = _lookups(env, np.array([axes[f] for f in FACES], np.float64))[:, 0]
    np.testing.assert_allclose(got, [read_hdr_values(values[f])[0, 0, 0] if k % 2 == 0 else values[f][0, 0, 0]
                                     for k, f in enumerate(FACES)], rtol=1e-6)


def test_hdr_cube_map_white_furnace(tmp_path):
    lin = np.array([1.5, 3.0, 6.0], np.float32)          # above 1: an HDR cube map
    for f in FACES:
        write_map(tmp_path, f + ".exr", np.broadcast_to(lin, (4, 4, 3)))
    s = path_scene([{"type": "sphere", "radius": 1, "material": "m"}],
                   {"m": {"type": "diffuse", "albedo": [0.9, 0.9, 0.9]}}, {"cube_map": ".", "scale": 0.5},
                   camera={"center": [0, 0, 4], "look_at": [0, 0, 0], "fov": 16})
    check_against(seed_renders(s, base_dir=tmp_path), 0.9 * 0.5 * lin.astype(np.float64))


def test_a_cube_map_turns_with_its_transform(tmp_path):
    for k, f in enumerate(FACES):
        write_map(tmp_path, f + ".exr", np.full((2, 2, 3), k, np.float32))
    _, env = env_scene({"cube_map": ".", "transform": [{"rotate_y": 90}]}, tmp_path)
    # rotate_y 90 turns the map's +z (front, 4) to world +x, its +x (right, 1) to world -z
    got = _lookups(env, np.array([(1, 0, 0), (0, 0, -1), (0, 1, 0)], np.float64))[:, 0]
    np.testing.assert_array_equal(got, [4, 1, 2])


# ---------------------------------------------------------------------- bad input
def scene_file(tmp_path, background):
    import json
    path = tmp_path / "scene.json"
    path.write_text(json.dumps({"camera": {"center": [0, 0, 3], "look_at": [0, 0, 0]},
                                "image": {"width": 4, "height": 4}, "integrator": {"type": "path"},
                                "background": background}))
    return path


def hdr_with(tmp_path, name, data):
    (tmp_path / name).write_bytes(data)
    return name


def _bad_inputs(tmp_path):
    good = hdr_bytes(sky_image())
    body = good.index(b"\n-Y 32 +X 64\n") + len(b"\n-Y 32 +X 64\n")
    nan = np.ones((4, 4, 3), np.float32)
    nan[1, 2, 1] = np.nan
    neg = np.ones((4, 4, 3), np.float32)
    neg[3, 0, 2] = -1
    write_map(tmp_path, "nan.exr", nan)
    write_map(tmp_path, "neg.exr", neg)
    write_map(tmp_path, "tiny.exr", np.ones((2, 4, 3), np.float32))
    return {
        "truncated": ({"envmap": hdr_with(tmp_path, "t.hdr", good[:body + 300])}, "background.envmap",
                      "truncated"),
        "not hdr": ({"envmap": hdr_with(tmp_path, "x.hdr", b"P6\n1 1\n255\n\0\0\0")}, "background.envmap",
                    "not a Radiance HDR"),
        "huge": ({"envmap": hdr_with(tmp_path, "h.hdr", good[:body - 13] + b"\n-Y 90000 +X 90000\n" + good[body:])},
                 "background.envmap", "declares 90000 x 90000"),
        "resolution": ({"envmap": hdr_with(tmp_path, "r.hdr", good.replace(b"-Y 32 +X 64", b"+X 64 -Y 32"))},
                       "background.envmap", "resolution line"),
        "xyze": ({"envmap": hdr_with(tmp_path, "f.hdr", good.replace(b"32-bit_rle_rgbe", b"32-bit_rle_xyze"))},
                 "background.envmap", "xyze"),
        "run overflow": ({"envmap": hdr_with(tmp_path, "o.hdr", good[:body + 4] + bytes([255, 7]) * 40)},
                         "background.envmap", "run-length"),
        "nan": ({"envmap": "nan.exr"}, "background.envmap", "(row 1, column 2) channel G is not finite"),
        "negative": ({"envmap": "neg.exr"}, "background.envmap", "negative"),
        "tiny": ({"envmap": "tiny.exr"}, "background.envmap", "at least 2 x 3"),
        "missing": ({"envmap": "nope.hdr"}, "background.envmap", "not found"),
        "format": ({"envmap": hdr_with(tmp_path, "sky.tga", good)}, "background.envmap", "unknown image format"),
        "both maps": ({"envmap": "nan.exr", "cube_map": "."}, "background.envmap", "not both"),
        "scale alone": ({"color": [1, 1, 1], "scale": 2}, "background.scale", "applies to an environment map"),
        "mirror": ({"envmap": "neg.exr", "transform": [{"scale": [-1, 1, 1]}]}, "background.transform",
                   "must be a rotation"),
        "moved": ({"envmap": "neg.exr", "transform": [{"translate": [0, 1, 0]}]}, "background.transform",
                  "must be a rotation"),
        "negative scale": ({"envmap": "neg.exr", "scale": -1}, "background.scale", ">= 0"),
        "overflow": ({"envmap": hdr_with(tmp_path, "big.hdr", hdr_bytes(np.full((4, 4, 3), 1e38, np.float32))),
                      "scale": 1e6}, "background.scale", "overflows"),
    }


def test_bad_maps_are_refused_with_one_line(tmp_path, capsys):
    from raytrace import cli
    for label, (background, field, words) in _bad_inputs(tmp_path).items():
        path = scene_file(tmp_path, background)
        out = tmp_path / "out.png"
        status = cli.main(["render", str(path), "-o", str(out), "--quiet"])
        err = capsys.readouterr().err
        assert status == 2 and not out.exists(), (label, err)
        assert err.count("\n") == 1 and "Traceback" not in err, (label, err)
        assert f"scene.json: {field}: " in err and words in err, (label, err)


def test_a_bad_map_fails_cleanly_in_a_real_process(tmp_path):
    (tmp_path / "t.hdr").write_bytes(hdr_bytes(sky_image())[:500])
    r = subprocess.run([sys.executable, "-m", "raytrace", "render", str(scene_file(tmp_path, {"envmap": "t.hdr"})),
                        "-o", str(tmp_path / "o.png"), "--quiet"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "t.hdr" in r.stderr, r.stderr
    assert not (tmp_path / "o.png").exists()


def test_mutated_hdr_files_never_read_out_of_bounds(tmp_path):
    """The RLE decoder run as plain Python (where an index out of range raises) on 300
    mutated files: each decodes or is refused with a SceneError, never an IndexError."""
    import random
    from hostile import mutate_bytes
    from raytrace import envmap
    img = np.random.default_rng(1).random((5, 16, 3)).astype(np.float32) * 4
    img[:, 3:9] = 2.0                                        # runs, for the RLE branch
    good = hdr_bytes(img)
    rng = random.Random(20261204)
    jitted = envmap._decode_rgbe
    envmap._decode_rgbe = jitted.py_func
    try:
        for k in range(300):
            path = tmp_path / "m.hdr"
            path.write_bytes(mutate_bytes(good, rng)[1])
            try:
                out = read_hdr(path, "background.envmap")
            except SceneError as exc:
                assert "m.hdr" in str(exc), str(exc)
            else:
                assert np.isfinite(out).all() and (out >= 0).all()
    finally:
        envmap._decode_rgbe = jitted
