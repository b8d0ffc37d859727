"""Cross-check the Whitted ray tracer against Mitsuba 3 (``scalar_rgb``).

- Depth and normal images of three scenes (spheres on a tilted plane, ellipsoids from
  rotated and non-uniformly scaled spheres, the flat-shaded bunny mesh) agree with
  Mitsuba's ``aov`` integrator on the same geometry and camera.
- A diffuse-only scene under a directional light (and under a point light) agrees with
  Mitsuba's ``direct`` integrator once ``irradiance = pi * I`` (see the mapping doc).
- Negative controls prove the checks have teeth: a mirrored image, a half-pixel camera
  shift, transforms applied in the wrong order, a horizontal fov and missing shadows
  all fail them.

Conventions and tolerances are explained in ``docs/mitsuba-mapping.md``. On failure the
images and a difference image are written to ``tests/output/<test name>/``.
"""
import copy
import functools
import math
import pathlib

import numpy as np
import pytest

mi = pytest.importorskip("mitsuba")

import raytrace  # noqa: E402
from mitsuba_scenes import (  # noqa: E402
    MappingError, mitsuba_scene_dict, ray_length_factor, render_channels, render_mitsuba_aovs,
    render_mitsuba_direct,
)

REPO = pathlib.Path(__file__).resolve().parents[1]
W, H = 96, 72

# Tolerances, on "interior" pixels (both renderers hit, and the 3x3 neighbourhood in
# Mitsuba's image shows one shape only, so no silhouette is within a pixel). Mitsuba
# works in float32 (eps 6e-8); measured agreement is ~1e-7 median / <= 4e-7 p99 relative
# depth and <= 3e-4 degrees p99 normal angle, so these leave a margin of ~100x and ~30x,
# while a half-pixel shift or a wrong transform is off by >= 1e-3 and by whole degrees.
DEPTH_REL_MEDIAN = 1e-5
DEPTH_REL_P99 = 1e-4
NORMAL_DEG_P99 = 0.01
# Direct lighting: relative radiance error on lit interior pixels (measured max 6e-6;
# float32 cosines), and the share of hit pixels whose lit/shadowed state differs
# (measured 0; any mismatch must touch a shadow edge).
RADIANCE_REL_MAX = 1e-3
SHADOW_MISMATCH_MAX = 0.005


# ---------------------------------------------------------------- scenes
def _unit(v):
    v = np.asarray(v, np.float64)
    return (v / np.linalg.norm(v)).tolist()


def spheres_scene():
    """Spheres (one inside a translated, uniformly scaled group) on a tilted plane."""
    return {
        "camera": {"center": [0.8, 4.5, 6.5], "look_at": [0, 0.6, 0], "up": [0, 1, 0], "fov": 40},
        "objects": [
            {"type": "plane", "normal": _unit([0.08, 1.0, 0.05]), "offset": -0.1},
            {"type": "sphere", "center": [-1.2, 0.7, 0.3], "radius": 0.7},
            {"type": "sphere", "center": [0.4, 1.2, -1.5], "radius": 1.2},
            {"type": "group", "transform": [{"translate": [1.0, 0.0, 1.0]}, {"scale": 1.5}],
             "children": [{"type": "sphere", "center": [0.1, 0.3, 0.2], "radius": 0.3}]},
        ],
    }


def ellipsoids_scene():
    """Ellipsoids: rotated, non-uniformly scaled and sheared spheres inside a rotated group."""
    return {
        "camera": {"center": [0.4, 0.3, 5.0], "look_at": [0, 0, 0], "up": [0, 1, 0], "fov": 35},
        "objects": [{
            "type": "group", "transform": [{"rotate_y": 25}],
            "children": [
                {"type": "sphere", "radius": 0.6,
                 "transform": [{"translate": [-0.8, 0.3, 0]}, {"rotate_z": 35},
                               {"scale": [1.8, 0.6, 0.9]}]},
                {"type": "sphere", "radius": 0.5,
                 "transform": [{"translate": [0.9, -0.4, 0.3]},
                               {"rotate": {"axis": [1, 1, 0], "angle": 50}},
                               {"scale": [0.5, 1.4, 0.8]}]},
                {"type": "sphere", "radius": 0.4, "center": [0.1, 0, 0],
                 "transform": [{"matrix": [[1, 0.6, 0, 0.7], [0, 1, 0, 0.8],
                                           [0.3, 0, 1, -0.5], [0, 0, 0, 1]]},
                               {"rotate_x": 20}]},
            ]}],
    }


def bunny_scene():
    """The shipped 5k-triangle bunny, flat shaded, rotated and non-uniformly scaled."""
    return {
        "camera": {"center": [1.5, 1.0, 4.0], "look_at": [0, 0.1, 0], "up": [0, 1, 0], "fov": 38},
        "objects": [{
            "type": "mesh", "file": "scenes/assets/bunny_5k.obj", "smooth": False,
            "transform": [{"translate": [0.1, 0, 0]}, {"rotate_y": 30}, {"rotate_x": -10},
                          {"scale": [1.0, 1.1, 0.9]}]}],
    }


AOV_SCENES = {"spheres_plane": spheres_scene, "ellipsoids": ellipsoids_scene,
              "bunny_mesh": bunny_scene}


def lit_scene(light):
    """Diffuse-only spheres, an ellipsoid and a plane; no ambient, black background."""
    scene = spheres_scene()
    scene["objects"][0]["normal"] = [0, 1, 0]
    scene["objects"][0]["offset"] = 0
    scene["objects"].append(
        {"type": "sphere", "radius": 0.5, "material": "blue",
         "transform": [{"translate": [1.8, 0.35, -0.6]}, {"rotate_y": 30},
                       {"scale": [1.6, 0.7, 0.8]}]})
    for obj, mat in zip(scene["objects"], ["floor", "red", "white", "blue", "blue"]):
        obj["material"] = mat
    scene["materials"] = {"floor": {"diffuse": [0.6, 0.55, 0.5]},
                          "red": {"diffuse": [0.8, 0.2, 0.15]},
                          "white": {"diffuse": [0.9, 0.9, 0.9]},
                          "blue": {"diffuse": [0.1, 0.3, 0.75]}}
    scene["integrator"] = {"type": "whitted", "bounces": 0, "shadows": True}
    scene["lights"] = [light]
    return scene


LIGHTS = {
    "directional": {"type": "directional", "direction": [-0.6, -1.0, -0.45],
                    "color": [0.9, 0.85, 0.7]},
    "point": {"type": "point", "position": [2.0, 3.5, 2.5], "color": [9.0, 8.0, 7.0],
              "attenuation": 0.8},
}


# ---------------------------------------------------------------- renders (cached)
@functools.cache
def our_aovs(name):
    scene = raytrace.load_scene(AOV_SCENES[name](), base_dir=REPO)
    return raytrace.render_aovs(scene, W, H)


@functools.cache
def mitsuba_aovs(name):
    return render_mitsuba_aovs(AOV_SCENES[name](), REPO, W, H)


# ---------------------------------------------------------------- comparison helpers
def uniform_3x3(labels):
    """(H, W) bool: the pixel and its 8 neighbours carry the same label (image borders
    count as the pixel's own label)."""
    p = np.pad(labels, 1, mode="edge")
    same = np.ones(labels.shape, bool)
    for dy in (0, 1, 2):
        for dx in (0, 1, 2):
            same &= p[dy:dy + labels.shape[0], dx:dx + labels.shape[1]] == labels
    return same


def angle_deg(a, b):
    """Angle between (..., 3) vectors in degrees, robust for tiny angles (atan2 of the
    cross and dot products; ``arccos`` of a float32-normalised dot loses 3e-4 rad)."""
    a = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    return np.degrees(np.arctan2(np.linalg.norm(np.cross(a, b), axis=-1), (a * b).sum(-1)))


def compare_aovs(ours, ref):
    """Metrics and a list of failed checks for our (t, n) against Mitsuba's (t, n, shape)."""
    t_o, n_o = ours
    t_m, n_m, shape = ref
    hit_o, hit_m = np.isfinite(t_o), np.isfinite(t_m)
    interior = uniform_3x3(shape)
    both = interior & hit_o & hit_m
    rel = np.abs(t_o[both] - t_m[both]) / t_m[both]
    ang = angle_deg(n_o[both], n_m[both])
    m = {"interior_hits": int(both.sum()),
         "hit_mismatch_interior": int(((hit_o != hit_m) & interior).sum()),
         "hit_mismatch_total": int((hit_o != hit_m).sum()),
         "depth_rel_median": float(np.median(rel)) if rel.size else math.inf,
         "depth_rel_p99": float(np.percentile(rel, 99)) if rel.size else math.inf,
         "normal_deg_p99": float(np.percentile(ang, 99)) if ang.size else math.inf}
    fails = []
    if m["interior_hits"] < 500:
        fails.append(f"only {m['interior_hits']} interior pixels to compare")
    if m["hit_mismatch_interior"]:
        fails.append(f"{m['hit_mismatch_interior']} pixels away from silhouettes hit in one "
                     "renderer only")
    if not m["depth_rel_median"] < DEPTH_REL_MEDIAN:
        fails.append(f"median relative depth error {m['depth_rel_median']:.3g} "
                     f">= {DEPTH_REL_MEDIAN}")
    if not m["depth_rel_p99"] < DEPTH_REL_P99:
        fails.append(f"99th percentile relative depth error {m['depth_rel_p99']:.3g} "
                     f">= {DEPTH_REL_P99}")
    if not m["normal_deg_p99"] < NORMAL_DEG_P99:
        fails.append(f"99th percentile normal angle {m['normal_deg_p99']:.3g} deg "
                     f">= {NORMAL_DEG_P99}")
    return m, fails


def _save(path, img):
    import imageio.v3 as iio
    img = np.repeat(np.repeat(np.clip(img, 0, 1), 4, 0), 4, 1)    # 4x, nearest
    iio.imwrite(path, (img * 255 + 0.5).astype(np.uint8))


def _grey(t, lo, hi):
    g = np.where(np.isfinite(t), (t - lo) / max(hi - lo, 1e-300), 0.0)
    return np.repeat(g[..., None], 3, axis=-1)


def write_aov_debug(out, ours, ref):
    """Depth (grey, common range), normals ((N+1)/2) of both and their differences."""
    t_o, n_o = ours
    t_m, n_m, _ = ref
    finite = np.concatenate([t_o[np.isfinite(t_o)], t_m[np.isfinite(t_m)]])
    lo, hi = (finite.min(), finite.max()) if finite.size else (0.0, 1.0)
    _save(out / "depth_ours.png", _grey(t_o, lo, hi))
    _save(out / "depth_mitsuba.png", _grey(t_m, lo, hi))
    both = np.isfinite(t_o) & np.isfinite(t_m)
    rel = np.zeros(t_o.shape)
    rel[both] = np.abs(t_o[both] - t_m[both]) / t_m[both]
    diff = np.stack([np.isfinite(t_o) & ~np.isfinite(t_m),             # red: only ours hits
                     np.clip(rel / DEPTH_REL_P99, 0, 1),                # green: depth error
                     ~np.isfinite(t_o) & np.isfinite(t_m)], -1)         # blue: only Mitsuba
    _save(out / "depth_diff.png", diff.astype(np.float64))
    _save(out / "normals_ours.png", (n_o + 1) / 2)
    _save(out / "normals_mitsuba.png", (n_m + 1) / 2)
    ang = np.zeros(t_o.shape)
    ang[both] = angle_deg(n_o[both], n_m[both])
    _save(out / "normals_diff.png", _grey(ang, 0.0, NORMAL_DEG_P99))


# ---------------------------------------------------------------- conventions
def test_mitsuba_depth_is_euclidean_from_near_plane_and_image_not_mirrored():
    """One-plane experiment: Mitsuba's depth AOV is the distance along the unit ray from
    the near-clip plane, ``t - near / cos(theta)`` (not z-depth), and its image is laid
    out like ours (+x right, +y up, row 0 at the top)."""
    near = 0.5
    cam = {"center": [0, 0, 5], "look_at": [0, 0, 0], "up": [0, 1, 0], "fov": 40}
    ball = np.array([1.2, 0.6, 1.0])
    scene = {"camera": cam,
             "objects": [{"type": "plane", "normal": [0, 0, 1], "offset": 0},
                         {"type": "sphere", "center": ball.tolist(), "radius": 0.15}]}
    d = mitsuba_scene_dict(scene, REPO, W, H, {"type": "aov", "aovs": "dd:depth,nn:sh_normal"},
                           near_clip=near)
    ch = render_channels(d)
    depth, nz = ch["dd.T"], ch["nn.Z"]
    inv_cos = ray_length_factor(cam, W, H)
    plane = nz > 1 - 1e-6
    assert plane.sum() > 0.9 * W * H
    # plane z=0 seen from z=5: Euclidean t = 5 / cos; z-depth would be the constant 5
    np.testing.assert_allclose(depth[plane], (5 * inv_cos - near * inv_cos)[plane], rtol=1e-6)
    assert np.ptp(depth[plane]) > 0.1          # clearly not a constant z-depth
    # the ball projects by the documented camera model to column x, row y
    half_h = math.tan(math.radians(20))
    rel = ball - np.array(cam["center"])
    x = (rel[0] / -rel[2] / (half_h * W / H) + 1) * W / 2
    y = (1 - rel[1] / -rel[2] / half_h) * H / 2
    rows, cols = np.nonzero(~plane & (depth > 0))
    assert rows.size > 10
    assert abs(cols.mean() + 0.5 - x) < 0.5 and abs(rows.mean() + 0.5 - y) < 0.5


# ---------------------------------------------------------------- depth and normals
@pytest.mark.parametrize("name", list(AOV_SCENES))
def test_depth_and_normals_match_mitsuba_aov(name, output_dir):
    ours, ref = our_aovs(name), mitsuba_aovs(name)
    metrics, fails = compare_aovs(ours, ref)
    if fails:
        write_aov_debug(output_dir, ours, ref)
    assert not fails, f"{name}: {'; '.join(fails)} (metrics {metrics}; images in {output_dir})"


def _reversed_steps(obj):
    obj = copy.deepcopy(obj)
    if "transform" in obj:
        obj["transform"] = obj["transform"][::-1]
    if obj["type"] == "group":
        obj["children"] = [_reversed_steps(c) for c in obj["children"]]
    return obj


def _control(kind):
    """A wrong Mitsuba reference for one of the AOV scenes -> (scene name, (t, n, shape))."""
    if kind == "mirrored_x":
        t, n, s = mitsuba_aovs("spheres_plane")
        return "spheres_plane", (t[:, ::-1], n[:, ::-1], s[:, ::-1])
    if kind == "half_pixel_shift":
        return "spheres_plane", render_mitsuba_aovs(spheres_scene(), REPO, W, H,
                                                    principal_point_offset=(0.5, 0.0))
    if kind == "half_pixel_shift_y":
        return "bunny_mesh", render_mitsuba_aovs(bunny_scene(), REPO, W, H,
                                                 principal_point_offset=(0.0, 0.5))
    if kind == "transform_steps_reversed":
        scene = ellipsoids_scene()
        scene["objects"] = [_reversed_steps(o) for o in scene["objects"]]
        return "ellipsoids", render_mitsuba_aovs(scene, REPO, W, H)
    if kind == "fov_horizontal":
        d_scene = spheres_scene()
        d_scene["camera"]["fov"] = math.degrees(
            2 * math.atan(math.tan(math.radians(40) / 2) * H / W))
        return "spheres_plane", render_mitsuba_aovs(d_scene, REPO, W, H)
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["mirrored_x", "half_pixel_shift", "half_pixel_shift_y",
                                  "transform_steps_reversed", "fov_horizontal"])
def test_aov_checks_reject_a_wrong_reference(kind):
    """The tolerances are tight enough that a flipped axis, a camera off by half a pixel,
    transform steps composed in the wrong order or a horizontal-for-vertical fov fail."""
    name, wrong = _control(kind)
    metrics, fails = compare_aovs(our_aovs(name), wrong)
    assert fails, f"{kind}: the comparison did not notice ({metrics})"


# ---------------------------------------------------------------- direct lighting
def compare_direct(ours, ref, shape):
    """Metrics and failed checks for our Whitted image against Mitsuba's ``direct``."""
    hit = shape >= 0
    lit_o, lit_m = ours.max(-1) > 0, ref.max(-1) > 0
    label = np.where(hit, 2 * shape + lit_m, -1)       # shadow edges count as edges
    interior = uniform_3x3(label)
    mismatch = hit & (lit_o != lit_m)
    lit = interior & lit_o & lit_m
    rel = np.abs(ours[lit] - ref[lit]) / ref[lit]
    m = {"lit_interior": int(lit.sum()), "shadowed": int((hit & ~lit_m).sum()),
         "shadow_mismatch_fraction": float(mismatch.sum() / max(hit.sum(), 1)),
         "shadow_mismatch_interior": int((mismatch & interior).sum()),
         "radiance_rel_max": float(rel.max()) if rel.size else math.inf,
         "radiance_rel_median": float(np.median(rel)) if rel.size else math.inf}
    fails = []
    if m["lit_interior"] < 0.3 * W * H or m["shadowed"] < 0.03 * W * H:
        fails.append(f"scene too dull to test: {m['lit_interior']} lit, {m['shadowed']} shadowed")
    if not m["radiance_rel_max"] < RADIANCE_REL_MAX:
        fails.append(f"max relative radiance error {m['radiance_rel_max']:.3g} "
                     f">= {RADIANCE_REL_MAX}")
    if not m["shadow_mismatch_fraction"] < SHADOW_MISMATCH_MAX:
        fails.append(f"lit/shadowed state differs on {100 * m['shadow_mismatch_fraction']:.2f}% "
                     f"of hit pixels (limit {100 * SHADOW_MISMATCH_MAX}%)")
    if m["shadow_mismatch_interior"]:
        fails.append(f"{m['shadow_mismatch_interior']} lit/shadow mismatches away from "
                     "shadow edges")
    return m, fails


def write_direct_debug(out, ours, ref):
    scale = max(float(ref.max()), 1e-300)
    _save(out / "direct_ours.png", (ours / scale) ** (1 / 2.2))
    _save(out / "direct_mitsuba.png", (ref / scale) ** (1 / 2.2))
    rel = np.abs(ours - ref) / np.maximum(ref, 1e-6 * scale)
    _save(out / "direct_diff.png", np.clip(rel / RADIANCE_REL_MAX, 0, 1))


@functools.cache
def direct_images(light):
    scene = lit_scene(LIGHTS[light])
    ref = render_mitsuba_direct(scene, REPO, W, H)
    shape = render_mitsuba_aovs(scene, REPO, W, H)[2]
    ours = raytrace.render(raytrace.load_scene(scene, base_dir=REPO), width=W, height=H, spp=1)
    return scene, ours.astype(np.float64), ref, shape


@pytest.mark.parametrize("light", list(LIGHTS))
def test_diffuse_direct_lighting_matches_mitsuba_direct(light, output_dir):
    _, ours, ref, shape = direct_images(light)
    metrics, fails = compare_direct(ours, ref, shape)
    if fails:
        write_direct_debug(output_dir, ours, ref)
    assert not fails, f"{light}: {'; '.join(fails)} (metrics {metrics}; images in {output_dir})"


def test_direct_checks_reject_missing_shadows_or_wrong_light_units():
    scene, ours, ref, shape = direct_images("directional")
    unshadowed = raytrace.render(raytrace.load_scene(scene, base_dir=REPO), width=W, height=H,
                                 spp=1, shadows=False).astype(np.float64)
    _, fails = compare_direct(unshadowed, ref, shape)
    assert any("lit/shadow" in f for f in fails), fails
    _, fails = compare_direct(ours, ref / math.pi, shape)     # irradiance = I, not pi * I
    assert any("radiance" in f for f in fails), fails


def test_mapping_refuses_what_mitsuba_cannot_show_the_same_way():
    base = lit_scene(LIGHTS["directional"])
    shiny = copy.deepcopy(base)
    shiny["materials"]["red"]["specular"] = [0.5, 0.5, 0.5]
    ambient = copy.deepcopy(base)
    ambient["background"] = {"ambient": [0.1, 0.1, 0.1]}
    no_falloff = copy.deepcopy(base)
    no_falloff["lights"] = [{"type": "point", "position": [0, 5, 0], "color": [1, 1, 1]}]
    smooth = bunny_scene()
    smooth["objects"][0]["smooth"] = True
    for bad, words in [(shiny, "not purely diffuse"), (ambient, "ambient"),
                       (no_falloff, "fall-off"), (smooth, "flat meshes")]:
        with pytest.raises(MappingError, match=words):
            mitsuba_scene_dict(bad, REPO, W, H, {"type": "direct"}, with_bsdfs=True)
