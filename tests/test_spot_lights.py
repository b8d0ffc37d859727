"""Spot lights in both integrators: Mitsuba's cone (``cutoff_angle``, ``beam_width``,
falloff linear in the angle) and glTF's (``inner_cone_angle``, ``outer_cone_angle``, the
KHR_lights_punctual spec's smooth falloff).

- Closed forms: a floor under a spot pointing straight down, every pixel against
  ``I falloff(theta) cos / (attenuation d^2)`` (Whitted, with the course's Phong highlight;
  the path tracer's direct light, exact for a delta light at one sample per pixel), each
  parameterization against its own curve and not the other's (nor the spec's curve
  without its square: "linear").
- Mitsuba: the ``spot`` emitter's ``sample_direction`` against our light samples point by
  point; the render comparison is ``spot`` in ``tests/test_path_vs_mitsuba.py``, and here
  our render with the wrong (smooth) falloff must fail against that reference.
- glTF spots load as spots; bad cones in a file or a scene are refused with one line.
"""
import json
import math
import warnings

import numpy as np
import pytest
from numba import njit

import raytrace
from light_scenes import spot_scene, wrong_falloff_spot_scene
from raytrace.errors import SceneError
from raytrace.kernels.emitters import sample_light
from raytrace.layout import CONE_LINEAR, CONE_SMOOTH
from raytrace.scene.lights import cone_falloff, spot_cone

H, ATT = 2.0, 0.5                      # the spot's height above the floor, its attenuation
COLOR = np.array([3.0, 2.0, 1.0])
KD, KS, SHININESS = np.array([0.6, 0.5, 0.4]), np.array([0.3, 0.3, 0.3]), 8.0
N = 48                                 # pixels per side; the view is 2 H wide (45 degrees off the axis)
CONES = {"mitsuba": {"cutoff_angle": 30.0, "beam_width": 12.0},
         "gltf": {"inner_cone_angle": 10.0, "outer_cone_angle": 35.0},
         "mitsuba default": {}}


def floor_scene(cone, integrator, specular=True):
    material = ({"diffuse": KD.tolist(), "specular": (KS if specular else 0 * KS).tolist(), "shininess": SHININESS}
                if integrator == "whitted" else {"type": "diffuse", "albedo": KD.tolist()})
    return {
        "camera": {"type": "orthographic", "center": [0, 1, 0], "direction": [0, -1, 0], "up": [0, 0, -1],
                   "height": 2 * H},
        "image": {"width": N, "height": N, "spp": 1},
        "integrator": {"type": integrator, **({"bounces": 0} if integrator == "whitted" else {"max_depth": 2})},
        "materials": {"m": material},
        "lights": [dict({"type": "spot", "position": [0, H, 0], "direction": [0, -1, 0], "color": COLOR.tolist(),
                         "attenuation": ATT}, **cone)],
        "objects": [{"type": "plane", "normal": [0, 1, 0], "material": "m"}],
    }


def expected_floor(cone_row, integrator):
    """The closed form at the pixel centres (row 0 at -z: the camera's up is -z)."""
    c = (np.arange(N) + 0.5) / N * 2 * H - H
    x, z = np.meshgrid(c, c)                       # columns along +x, rows along +z
    d2 = x * x + z * z + H * H
    cos = H / np.sqrt(d2)                          # N.L, the angle to the axis, and L.R
    irradiance = cone_falloff(cone_row, cos) * cos / (ATT * d2)
    out = irradiance[..., None] * KD
    if integrator == "whitted":
        out = out + (irradiance / cos * cos ** SHININESS)[..., None] * KS
    return out * COLOR


def smooth_without_square(cone_row, c):
    """The glTF spec's ramp without its square: the "linear" falloff."""
    return np.where(c > cone_row[1], np.clip(c * cone_row[3] + cone_row[4], 0, 1), 0.0)


def linear_in_angle(outer, inner, c):
    a = np.degrees(np.arccos(np.clip(c, -1, 1)))
    return np.clip((outer - a) / (outer - inner), 0, 1)


def smooth_in_cosine(outer, inner, c):
    co, ci = math.cos(math.radians(outer)), math.cos(math.radians(inner))
    return np.clip((c - co) / (ci - co), 0, 1) ** 2


@pytest.mark.parametrize("integrator", ["whitted", "path"])
@pytest.mark.parametrize("name", sorted(CONES))
def test_floor_under_a_spot_matches_the_closed_form(name, integrator):
    scene = floor_scene(CONES[name], integrator)
    img = raytrace.render(raytrace.load_scene(scene)).astype(np.float64)
    _, row = spot_cone(scene["lights"][0])
    want = expected_floor(row, integrator)
    np.testing.assert_allclose(img, want, rtol=2e-5, atol=1e-7)
    lit = (want > 0).any(axis=2).mean()
    assert 0.05 < lit < 0.8                         # the cone's edge is in view
    # the other curves are told apart
    c = H / np.sqrt(((np.arange(N) + 0.5) / N * 2 * H - H)[None, :] ** 2
                    + ((np.arange(N) + 0.5) / N * 2 * H - H)[:, None] ** 2 + H * H)
    if row[0] == CONE_SMOOTH:
        wrong = [smooth_without_square(row, c), linear_in_angle(35.0, 10.0, c)]
    else:
        outer, inner = math.degrees(row[3]), CONES[name].get("beam_width", 15.0)
        wrong = [smooth_in_cosine(outer, inner, c)]
    for falloff in wrong:
        off = np.abs(falloff - cone_falloff(row, c))
        assert off.max() > 0.05, (name, off.max())


def test_the_falloff_curves():
    """The two documented curves at a few angles."""
    _, m = spot_cone({"type": "spot", "direction": [0, 0, 1], "cutoff_angle": 30, "beam_width": 10})
    assert m[0] == CONE_LINEAR
    cos = np.cos(np.radians([0, 10, 20, 25, 29.999, 30, 40]))
    np.testing.assert_allclose(cone_falloff(m, cos), [1, 1, 0.5, 0.25, 0.00005, 0, 0], atol=1e-9)
    _, g = spot_cone({"type": "spot", "direction": [0, 0, 1], "inner_cone_angle": 10, "outer_cone_angle": 30})
    assert g[0] == CONE_SMOOTH
    c10, c30 = math.cos(math.radians(10)), math.cos(math.radians(30))
    t = (math.cos(math.radians(20)) - c30) / (c10 - c30)
    np.testing.assert_allclose(cone_falloff(g, np.cos(np.radians([0, 10, 20, 30, 31]))), [1, 1, t * t, 0, 0],
                               atol=1e-12)
    # Mitsuba's defaults: cutoff 20, beam width 3/4 of it; a hard edge when they are equal
    _, d = spot_cone({"type": "spot", "direction": [0, 0, 1]})
    np.testing.assert_allclose([math.degrees(d[3]), math.degrees(math.acos(d[2]))], [20, 15])
    _, hard = spot_cone({"type": "spot", "direction": [0, 0, 1], "cutoff_angle": 25, "beam_width": 25})
    np.testing.assert_array_equal(cone_falloff(hard, np.cos(np.radians([0, 24.9, 25.1]))), [1, 1, 0])


@njit(cache=True)
def _spot_samples(lights, geo, env, points):
    out = np.zeros((points.shape[0], 7))
    for k in range(points.shape[0]):
        ls = sample_light(
            lights, geo, env, points[k, 0], points[k, 1], points[k, 2], 0.5, 0.5)
        ok, (wx, wy, wz), dist, (vr, vg, vb), pdf, delta = ls
        out[k] = 1.0 if ok else 0.0, wx, wy, wz, vr, vg, vb
    return out


def test_spot_samples_equal_mitsubas_spot_emitter():
    """At 4000 points around a tilted spot, Mitsuba's ``spot`` (``intensity`` pi color /
    attenuation, ``to_world`` looking along ``direction``) returns the same radiance term
    I falloff / d^2 as our light sample, to float32 rounding (points within 0.01 degrees
    of the cutoff or beam edge left out: there float32 decides)."""
    mi = pytest.importorskip("mitsuba")
    mi.set_variant("scalar_rgb")
    light = {"type": "spot", "position": [0.3, 1.5, -0.2], "direction": [0.4, -1.0, 0.3], "color": [1.0, 0.6, 0.3],
             "attenuation": 0.7, "cutoff_angle": 35.0, "beam_width": 20.0}
    scene = raytrace.load_scene({"camera": {"center": [0, 0, 5], "look_at": [0, 0, 0]},
                                 "integrator": {"type": "path"}, "lights": [light]})
    rng = np.random.default_rng(5)
    pts = rng.uniform([-3, -2, -3], [3, 1, 3], (4000, 3))
    ours = _spot_samples(scene.lights, scene.geometry, scene.environment, pts)
    pos, axis = np.array(light["position"]), np.array(light["direction"]) / np.linalg.norm(light["direction"])
    emitter = mi.load_dict({"type": "spot", "cutoff_angle": 35.0, "beam_width": 20.0,
                            "intensity": {"type": "rgb", "value": (np.pi * np.array(light["color"]) / 0.7).tolist()},
                            "to_world": mi.ScalarTransform4f().look_at(origin=pos.tolist(),
                                                                       target=(pos + axis).tolist(), up=[0, 1, 0])})
    it = mi.Interaction3f()
    theirs = np.zeros((len(pts), 3))
    for k, p in enumerate(pts):
        it.p = mi.Point3f(*p)
        _, spec = emitter.sample_direction(it, mi.Point2f(0.5, 0.5))
        theirs[k] = np.array(spec)
    angle = np.degrees(np.arccos(np.clip((pts - pos) @ axis / np.linalg.norm(pts - pos, axis=1), -1, 1)))
    keep = (np.abs(angle - 35.0) > 0.01) & (np.abs(angle - 20.0) > 0.01)
    assert 0.1 < (theirs[keep, 0] > 0).mean() < 0.9 and (angle < 20).sum() > 50
    # Mitsuba's falloff is computed in float32 (acos of a float32 cosine): 1e-5 of the
    # intensity I / d^2 without falloff
    unfallen = (np.pi * np.array(light["color"]) / 0.7) / ((pts - pos) ** 2).sum(axis=1)[:, None]
    assert np.all(np.abs(ours[keep, 4:7] - theirs[keep]) <= 1e-5 * unfallen[keep])
    np.testing.assert_array_equal(ours[:, 0] == 1, theirs[:, 0] > 0)


def test_a_spot_with_the_smooth_falloff_fails_against_mitsubas_spot():
    """The negative control of ``spot`` in tests/test_path_vs_mitsuba.py on our side: the
    same angles with glTF's smooth falloff must not pass against Mitsuba's (linear) spot."""
    from test_path_vs_mitsuba import SEEDS, SPP, compare, load_reference, mean_ok, rel_mse_ok, summary
    ref, ref_std = load_reference("spot")
    scene = raytrace.load_scene(wrong_falloff_spot_scene())
    a, b = (raytrace.render(scene, spp=SPP, seed=s).astype(np.float64) for s in SEEDS)
    s = compare(a, b, ref, ref_std)
    assert not mean_ok(s) and not rel_mse_ok(s), summary(s)


def test_spot_power_selects_by_the_cone():
    """Light selection by power: a spot's is its cone's solid angle times its intensity."""
    spot = {"type": "spot", "position": [0, 2, 0], "direction": [0, -1, 0], "color": [1, 1, 1],
            "cutoff_angle": 40}
    point = {"type": "point", "position": [0, 2, 0], "color": [1, 1, 1]}
    scene = raytrace.load_scene({"camera": {"center": [0, 0, 5], "look_at": [0, 0, 0]},
                                 "integrator": {"type": "path"}, "lights": [spot, point]})
    pmf = scene.lights.pmf
    ratio = 2 * math.pi * (1 - math.cos(math.radians(40))) / (4 * math.pi)
    assert pmf[0] / pmf[1] == pytest.approx(ratio, rel=1e-12)


def test_a_spot_casts_shadow_map_shadows_like_shadow_rays():
    scene = floor_scene(CONES["mitsuba"], "whitted", specular=False)
    scene["objects"].append({"type": "sphere", "center": [0.3, 0.6, 0.1], "radius": 0.3, "material": "m"})
    rays = raytrace.render(raytrace.load_scene(scene))
    scene["lights"][0].update(shadows="map", shadow_map={"resolution": 512, "bias": 0.005})
    mapped = raytrace.render(raytrace.load_scene(scene))
    shadowed = (rays.sum(axis=2) == 0) & (expected_floor(spot_cone(scene["lights"][0])[1], "whitted").sum(axis=2) > 0)
    assert shadowed.sum() > 20                                      # the sphere's shadow is in view
    differ = np.abs(mapped - rays).max(axis=2) > 1e-6
    assert differ.mean() < 0.02                                     # shadow edges only


# ------------------------------------------------------------------------ glTF
def test_gltf_spots_load_as_spots_and_render_as_the_same_json_spot(tmp_path):
    from test_hostile_gltf import rt_model

    pos = np.array([1.0, 2.0, 3.0])
    axis = -pos / np.linalg.norm(pos)                  # at the quad, at the origin

    def spot(doc):
        doc["extensions"]["KHR_lights_punctual"]["lights"][0] = {
            "type": "spot", "intensity": 4.0, "color": [1, 0.8, 0.6],
            "spot": {"innerConeAngle": 0.2, "outerConeAngle": 0.6}}
        # the light node's -z along ``axis``: a matrix whose third column is -axis
        z = -axis
        x = np.cross([0.0, 1.0, 0.0], z)
        x /= np.linalg.norm(x)
        m = np.eye(4)
        m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, np.cross(z, x), z, pos
        node = doc["nodes"][2]
        node.pop("translation")
        node["matrix"] = m.T.ravel().tolist()           # column-major

    path = rt_model(tmp_path, spot)
    from raytrace.scene.gltf import direct_scene
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # a spot is no longer approximated
        data = direct_scene(path)
    light, = data["lights"]
    assert light["type"] == "spot" and light["attenuation"] == math.pi
    np.testing.assert_allclose(light["direction"], axis, atol=1e-12)
    np.testing.assert_allclose(light["position"], pos, atol=1e-12)
    assert light["inner_cone_angle"] == pytest.approx(math.degrees(0.2))
    assert light["outer_cone_angle"] == pytest.approx(math.degrees(0.6))
    np.testing.assert_allclose(light["color"], [4, 3.2, 2.4])
    data["image"] = {"width": 16, "height": 12, "spp": 4}
    from_file = raytrace.render(raytrace.load_scene(data, base_dir=tmp_path))
    by_hand = dict(data, lights=[{"type": "spot", "position": pos.tolist(), "direction": (-pos).tolist(),
                                  "color": [4, 3.2, 2.4], "attenuation": math.pi,
                                  "inner_cone_angle": math.degrees(0.2), "outer_cone_angle": math.degrees(0.6)}])
    np.testing.assert_allclose(from_file, raytrace.render(raytrace.load_scene(by_hand, base_dir=tmp_path)),
                               rtol=1e-6, atol=1e-7)
    assert from_file.max() > 0


GLTF_SPOT = "extensions.KHR_lights_punctual.lights[0].spot"
GLTF_CASES = {
    "inner not below outer": ({"innerConeAngle": 0.6, "outerConeAngle": 0.6}, f"{GLTF_SPOT}.innerConeAngle"),
    "outer beyond pi/2": ({"outerConeAngle": 1.7}, f"{GLTF_SPOT}.outerConeAngle"),
    "outer zero": ({"outerConeAngle": 0.0}, f"{GLTF_SPOT}.outerConeAngle"),
    "negative inner": ({"innerConeAngle": -0.1}, f"{GLTF_SPOT}.innerConeAngle"),
    "inner not a number": ({"innerConeAngle": "wide"}, f"{GLTF_SPOT}.innerConeAngle"),
    "spot not an object": ([1, 2], GLTF_SPOT),
}


@pytest.mark.parametrize("case", sorted(GLTF_CASES))
def test_bad_gltf_spots_are_refused_naming_the_path(case, tmp_path, capsys):
    from test_hostile_gltf import render_refused, rt_model
    value, field = GLTF_CASES[case]

    def edit(doc):
        doc["extensions"]["KHR_lights_punctual"]["lights"][0] = {"type": "spot", "spot": value}

    render_refused(capsys, tmp_path, rt_model(tmp_path / "in", edit), field)


# ------------------------------------------------------------------- scene files
SPOT = {"type": "spot", "position": [0, 2, 0], "direction": [0, -1, 0]}
SCENE_CASES = {
    "mixed cones": ({"cutoff_angle": 30, "outer_cone_angle": 40}, "lights[0].outer_cone_angle", "not both"),
    "beam wider than cutoff": ({"cutoff_angle": 20, "beam_width": 25}, "lights[0].beam_width", "at most cutoff_angle"),
    "default cutoff and a wide beam": ({"beam_width": 21}, "lights[0].beam_width", "at most cutoff_angle (20)"),
    "inner not below outer": ({"inner_cone_angle": 40, "outer_cone_angle": 40}, "lights[0].inner_cone_angle",
                              "less than outer_cone_angle"),
    "inner beyond the default outer": ({"inner_cone_angle": 50}, "lights[0].inner_cone_angle",
                                       "less than outer_cone_angle (45)"),
    "outer beyond 90": ({"outer_cone_angle": 95}, "lights[0].outer_cone_angle", "<= 90"),
    "cutoff beyond 180": ({"cutoff_angle": 190}, "lights[0].cutoff_angle", "<= 180"),
    "zero cutoff": ({"cutoff_angle": 0}, "lights[0].cutoff_angle", "> 0"),
    "zero direction": ({"direction": [0, 0, 0]}, "lights[0].direction", "zero vector"),
    "no direction": ({"direction": None}, "lights[0]", "missing required key 'direction'"),
    "unknown key": ({"spread": 3}, "lights[0]", "unknown key 'spread'"),
}


@pytest.mark.parametrize("case", sorted(SCENE_CASES))
def test_bad_spots_in_a_scene_are_refused(case, tmp_path, capsys):
    from raytrace import cli
    extra, field, words = SCENE_CASES[case]
    light = {k: v for k, v in dict(SPOT, **extra).items() if v is not None}
    path = tmp_path / "scene.json"
    path.write_text(json.dumps({"camera": {"center": [0, 0, 5], "look_at": [0, 0, 0]}, "lights": [light]}))
    out = tmp_path / "o.png"
    status = cli.main(["render", str(path), "-o", str(out), "--quiet", "--size", "4", "4"])
    err = capsys.readouterr().err
    assert status == 2 and not out.exists() and err.count("\n") == 1, err
    assert f"scene.json: {field}" in err and words in err, err


def test_spots_animate_by_position_and_direction():
    from raytrace.scene.validate import validate_scene
    scene = {"camera": {"center": [0, 0, 5], "look_at": [0, 0, 0]},
             "lights": [dict(SPOT, name="lamp")],
             "animation": {"end": 1, "lights": {"lamp": {"position": {"keys": [[0, [0, 2, 0]], [1, [1, 2, 0]]]},
                                                         "direction": {"keys": [[0, [0, -1, 0]], [1, [1, -1, 0]]]}}}}}
    validate_scene(scene)
    with pytest.raises(SceneError, match="a point light has a position, not a direction"):
        validate_scene(dict(scene, lights=[{"type": "point", "position": [0, 2, 0], "name": "lamp"}]))
