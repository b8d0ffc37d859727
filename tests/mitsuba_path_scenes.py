"""Path-tracing scenes for the Mitsuba 3 cross-check, and their Mitsuba translation.

Two parts:

- Scene dicts (no Mitsuba needed): :func:`cornell_box_scene` (``scenes/cornell_box.json``,
  Mitsuba's ``mi.cornell_box()``) and :func:`glass_mirror_scene` (the same room with a
  mirror sphere and a glass sphere instead of the two boxes), at test size with a box
  filter. ``REFERENCE_SCENES`` names them for ``tests/reference/path/``.
- :func:`mitsuba_path_scene_dict`: our scene dict -> a ``mi.load_dict`` dict for
  Mitsuba's ``path`` integrator, and :func:`render_mitsuba` to render it. Mitsuba is
  imported lazily, so the scene dicts work without it.

Like ``tests/mitsuba_scenes.py`` (whose camera and transform helpers are reused), the
translation is written from the documented format (``docs/scene-format.md`` and the path
tracer's additions, written up in ``docs/path-vs-mitsuba.md``), never from ``raytrace``'s
code, so a bug in our loader cannot be copied into the reference:

- materials (opaque ones inside ``twosided``: ours reflect on both sides, Mitsuba's are
  black from the back): ``diffuse`` -> ``diffuse`` (``reflectance`` = albedo); ``conductor`` ->
  ``conductor`` with ``material: "none"`` (a perfect mirror) times ``specular_reflectance``;
  ``dielectric`` -> ``dielectric`` with ``int_ior`` = ior and ``ext_ior`` = 1 (Mitsuba's
  default outside medium is air, 1.000277, and its default glass is BK7, 1.5046);
  ``rough_conductor`` -> ``roughconductor`` (``ggx``, visible normals, ``material: "none"``)
  only for reflectance 1, where our Schlick Fresnel with F0 = 1 is exactly 1 as well;
  a course Phong material only when it is purely diffuse.
- ``emission`` -> an ``area`` emitter with that ``radiance`` (front side only in both).
- shapes: ``rectangle``, ``cube``, ``sphere`` (similarity transforms only: Mitsuba's
  sphere ignores non-uniform scale), flat ``mesh`` (``obj``), ``group``.
- ``background.color`` -> a ``constant`` emitter; point / directional lights with the
  course-unit factor pi (``docs/mitsuba-mapping.md``); ``background.envmap`` -> an
  ``envmap`` emitter reading the same file, ``scale`` as it is, ``to_world`` = our
  ``transform``; a ``spot`` with Mitsuba's cone (``cutoff_angle``, ``beam_width``) ->
  ``spot`` with ``intensity`` pi color / attenuation and ``to_world`` looking along its
  ``direction`` (``docs/mitsuba-mapping.md``).
- integrator ``path`` with the same ``max_depth`` and ``rr_depth``; pixel filter ``box``
  -> ``box``, ``tent`` -> ``tent`` (both radius 1 px), ``gaussian`` -> ``gaussian``
  with stddev 0.5 px (Mitsuba truncates at 2 px, we at 1.5 px).
"""
import copy
import hashlib
import json
import math
import pathlib

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
CORNELL_BOX = REPO / "scenes" / "cornell_box.json"
REFERENCE_DIR = REPO / "tests" / "reference" / "path"

TEST_SIZE = 64                  # pixels, square; references are stored at this size
FILTERS = {"box": {"type": "box"}, "tent": {"type": "tent"},
           "gaussian": {"type": "gaussian", "stddev": 0.5}}


# ---------------------------------------------------------------- our scenes
def cornell_box_scene(size=TEST_SIZE, pixel_filter="box"):
    """``scenes/cornell_box.json`` as a dict, resized to ``size`` x ``size`` with
    ``pixel_filter``. Paths in it are relative to ``scenes/``."""
    scene = json.loads(CORNELL_BOX.read_text())
    scene.pop("$schema", None)
    scene["image"].update(width=size, height=size, filter=pixel_filter)
    return scene


def glass_mirror_scene(size=TEST_SIZE, pixel_filter="box", glass_ior=1.5):
    """The Cornell box room and light with the two boxes replaced by a tinted mirror
    sphere (back left) and a glass sphere (front right), both resting on the floor."""
    scene = cornell_box_scene(size, pixel_filter)
    scene["objects"] = [o for o in scene["objects"] if o["type"] != "cube"]
    scene["materials"]["mirror"] = {"type": "conductor", "reflectance": [0.95, 0.8, 0.6]}
    scene["materials"]["glass"] = {"type": "dielectric", "ior": glass_ior}
    scene["objects"] += [
        {"type": "sphere", "name": "mirror-sphere", "center": [-0.42, -0.62, -0.35],
         "radius": 0.38, "material": "mirror"},
        {"type": "sphere", "name": "glass-sphere", "center": [0.4, -0.68, 0.32],
         "radius": 0.32, "material": "glass"},
    ]
    return scene


def _with_max_depth(scene, max_depth):
    scene = copy.deepcopy(scene)
    scene["integrator"]["max_depth"] = max_depth
    return scene


def _untinted_mirror(scene):
    scene = copy.deepcopy(scene)
    scene["materials"]["mirror"]["reflectance"] = [1.0, 1.0, 1.0]
    return scene


# name -> (scene builder, {name: builder of a deliberately wrong scene}). The negative
# controls are plausible bugs that change the picture by a few percent in places: an
# off-by-one path depth, the wrong index of refraction, a mirror that ignores its colour,
# a sky map turned by one texel column, a spot's cone one degree narrower.
REFERENCE_SCENES = {
    "cornell_box": (cornell_box_scene, {
        "cornell_box_max_depth_7": lambda: _with_max_depth(cornell_box_scene(), 7),
    }),
    "glass_mirror": (glass_mirror_scene, {
        "glass_mirror_ior_1.33": lambda: glass_mirror_scene(glass_ior=1.33),
        "glass_mirror_white_mirror": lambda: _untinted_mirror(glass_mirror_scene()),
    }),
}


def _light_scenes():
    """The sky and spot scenes of ``tests/light_scenes.py``, with their negative controls."""
    import light_scenes as ls
    return {
        "latlong_sky": (ls.sky_scene, {
            "latlong_sky_turned_one_column": lambda: ls.sky_scene(envmap=ls.SKY_SHIFTED_FILE),
        }),
        "spot": (ls.spot_scene, {
            "spot_cutoff_29": ls.narrow_spot_scene,
        }),
    }


REFERENCE_SCENES.update(_light_scenes())


def _media_scenes():
    """The participating-media scenes of ``tests/media_scenes.py`` (Mitsuba's ``volpath``)."""
    import media_scenes
    return media_scenes.MEDIA_SCENES


REFERENCE_SCENES.update(_media_scenes())


def _generated_files(scene):
    """The files of ``light_scenes.GENERATED`` (written by the tests) the scene reads."""
    from light_scenes import GENERATED
    import media_scenes
    env = scene.get("background", {}).get("envmap")
    return ([env] if env in GENERATED else []) + media_scenes.grid_files(scene)


def scene_dir(scene):
    """The folder a reference scene's relative paths are relative to: the generated
    files' folder (``light_scenes.generated_dir``) for a scene that reads one, else
    ``scenes/``."""
    import media_scenes
    if media_scenes.grid_files(scene):
        return media_scenes.generated_dir()
    if _generated_files(scene):
        from light_scenes import generated_dir
        return generated_dir()
    return CORNELL_BOX.parent


def scene_hash(scene):
    """Hash of a scene dict's canonical JSON (sorted keys), and of the bytes of the
    generated files it reads: which scene a reference shows."""
    h = hashlib.sha256(json.dumps(scene, sort_keys=True).encode())
    for name in _generated_files(scene):
        h.update((scene_dir(scene) / name).read_bytes())
    return h.hexdigest()[:16]


# ---------------------------------------------------------------- Mitsuba translation
class PathMappingError(ValueError):
    """Part of a scene that has no faithful Mitsuba counterpart in this mapping."""


def _rgb(c, where):
    if isinstance(c, dict):
        raise PathMappingError(f"{where}: textures are not mapped")
    return {"type": "rgb", "value": [float(x) for x in c]}


def bsdf_dict(name, mat):
    """One of our materials -> a Mitsuba BSDF dict (see the module docstring). Opaque
    materials are wrapped in ``twosided``: ours reflect on both sides, Mitsuba's
    ``diffuse`` and conductors are black seen from the back."""
    kind = mat.get("type", "phong")
    if kind == "null":                # docs/media.md: no surface, a boundary between media
        return {"type": "null"}
    if kind == "dielectric":
        return {"type": "dielectric", "int_ior": float(mat.get("ior", 1.5)), "ext_ior": 1.0}
    if kind == "diffuse":
        inner = {"type": "diffuse", "reflectance": _rgb(mat["albedo"], name)}
    elif kind == "conductor":
        inner = {"type": "conductor", "material": "none",
                 "specular_reflectance": _rgb(mat["reflectance"], name)}
    elif kind == "rough_conductor":
        if [float(x) for x in mat["reflectance"]] != [1.0, 1.0, 1.0]:
            raise PathMappingError(f"{name}: Schlick Fresnel matches Mitsuba only for reflectance 1")
        inner = {"type": "roughconductor", "material": "none", "distribution": "ggx",
                 "sample_visible": True, "alpha": float(mat.get("alpha", 0.2))}
    elif kind == "phong":
        if any(any(x != 0 for x in mat.get(k, [0, 0, 0])) for k in ("specular", "reflect", "transmit")):
            raise PathMappingError(f"{name}: only purely diffuse Phong materials are mapped")
        inner = {"type": "diffuse", "reflectance": _rgb(mat.get("diffuse", [0, 0, 0]), name)}
    else:
        raise PathMappingError(f"{name}: material type {kind!r} is not mapped")
    return {"type": "twosided", "bsdf": inner}


def _shapes(scene, base_dir):
    from mitsuba_scenes import _is_similarity, mi_transform
    import mitsuba as mi

    materials = scene.get("materials", {})
    out = {}

    def visit(obj, parent, mat_name, media=(None, None)):
        t = parent @ mi_transform(obj.get("transform"))
        mat_name = obj.get("material", mat_name)
        media = (obj.get("interior", media[0]), obj.get("exterior", media[1]))
        kind = obj["type"]
        if kind == "group":
            for child in obj["children"]:
                visit(child, t, mat_name, media)
            return
        if kind in ("rectangle", "cube"):
            shape = {"type": kind, "to_world": t}
        elif kind == "sphere":
            t = t.translate([float(x) for x in obj.get("center", [0, 0, 0])]).scale(
                float(obj.get("radius", 1.0)))
            if not _is_similarity(np.array(t.matrix, np.float64)[:3, :3]):
                raise PathMappingError("spheres under non-uniform scale are not mapped")
            shape = {"type": "sphere", "to_world": t}
        elif kind == "mesh" and not obj.get("smooth", False):
            shape = {"type": "obj", "filename": str(pathlib.Path(base_dir) / obj["file"]),
                     "face_normals": True, "to_world": t}
        else:
            raise PathMappingError(f"object type {kind!r} is not mapped")
        if mat_name is None:
            shape["bsdf"] = bsdf_dict("default", {"diffuse": [0.8, 0.8, 0.8]})
        else:
            shape["bsdf"] = bsdf_dict(mat_name, materials[mat_name])
        if "emission" in obj:
            shape["emitter"] = {"type": "area", "radiance": _rgb(obj["emission"], "emission")}
        # media (docs/media.md): nothing inside by default, the scene's medium outside
        interior, exterior = media[0], media[1] if media[1] is not None else scene.get("medium")
        if interior is not None:
            shape["interior"] = {"type": "ref", "id": f"medium_{interior}"}
        if exterior is not None:
            shape["exterior"] = {"type": "ref", "id": f"medium_{exterior}"}
        out[f"shape_{len(out):03d}"] = shape

    for obj in scene.get("objects", []):
        visit(obj, mi.ScalarTransform4f(), None)
    return out


def uses_media(scene):
    """Whether a scene has participating media or null surfaces (docs/media.md)."""
    return ("medium" in scene or "medium" in scene["camera"] or
            any(m.get("type") == "null" for m in scene.get("materials", {}).values()) or
            any("interior" in o or "exterior" in o for o in _all_objects(scene.get("objects", []))))


def _all_objects(objects):
    for obj in objects:
        yield obj
        if obj.get("type") == "group":
            yield from _all_objects(obj["children"])


def _spectrum(value):
    """A number or an RGB triple -> a Mitsuba spectrum dict (``srgb`` with ``unbounded``:
    ``rgb`` refuses values above 1; in the RGB variants both are the plain triple)."""
    v = [float(value)] * 3 if isinstance(value, (int, float)) else [float(x) for x in value]
    return {"type": "srgb", "color": v, "unbounded": True}


def _grid_volume(spec, med, base_dir):
    """A grid spec (docs/media.md: ``file`` or ``data``) -> Mitsuba ``gridvolume``. Our box
    is [-1, 1]^3 placed by the medium's ``transform``; Mitsuba's grid fills [0, 1]^3 of its
    ``to_world``: to_world = M translate(-1, -1, -1) scale(2)."""
    from mitsuba_scenes import mi_transform
    import mitsuba as mi

    out = {"type": "gridvolume", "filter_type": "trilinear", "wrap_mode": "clamp",
           "to_world": mi_transform(med.get("transform")).translate([-1.0, -1.0, -1.0]).scale(2.0)}
    if "file" in spec:
        out["filename"] = str(pathlib.Path(base_dir) / spec["file"])
    else:
        data = np.asarray(spec["data"], np.float32)
        out["grid"] = mi.VolumeGrid(data if data.ndim == 4 else data[..., None])
    return out


def medium_dict(med, base_dir):
    """One of our media (docs/media.md) -> a Mitsuba medium dict: ``sigma_a``/``sigma_s``
    become ``sigma_t = sigma_a + sigma_s``, ``albedo = sigma_s / sigma_t`` (both times
    ``scale``); Mitsuba's own ``albedo``/``sigma_t``/``scale`` pass through; ``hg`` and
    ``isotropic`` phase functions likewise."""
    phase = med.get("phase", {"type": "isotropic"})
    out = {"phase": {"type": "hg", "g": float(phase["g"])} if phase["type"] == "hg" else {"type": "isotropic"},
           "scale": float(med.get("scale", 1.0))}
    if med["type"] == "homogeneous":
        out["type"] = "homogeneous"
        if "sigma_a" in med or "sigma_s" in med:
            sa = np.broadcast_to(np.asarray(med.get("sigma_a", 0.0), np.float64), 3)
            ss = np.broadcast_to(np.asarray(med.get("sigma_s", 0.0), np.float64), 3)
            st = sa + ss
            out["sigma_t"] = _spectrum(st)
            out["albedo"] = _spectrum(np.divide(ss, st, out=np.zeros(3), where=st > 0))
        else:
            out["sigma_t"] = _spectrum(med.get("sigma_t", 1.0))
            out["albedo"] = _spectrum(med.get("albedo", 0.75))
        return out
    out["type"] = "heterogeneous"
    out["sigma_t"] = _grid_volume(med["sigma_t"], med, base_dir)
    albedo = med.get("albedo", 0.75)
    out["albedo"] = _grid_volume(albedo, med, base_dir) if isinstance(albedo, dict) else _spectrum(albedo)
    return out


def mitsuba_path_scene_dict(scene, base_dir, spp=16, variant="scalar_rgb"):
    """Our path-tracing scene dict -> ``mi.load_dict`` dict (``path`` integrator, the
    scene's image size and filter, an ``independent`` sampler with ``spp``). Sets the
    Mitsuba ``variant`` (the dict holds that variant's transforms)."""
    from mitsuba_scenes import camera_target      # its first import selects scalar_rgb
    import mitsuba as mi

    mi.set_variant(variant)
    integ = scene.get("integrator", {})
    if integ.get("type") != "path":
        raise PathMappingError("integrator must be 'path'")
    image = scene.get("image", {})
    cam = scene["camera"]
    if cam.get("type", "perspective") != "perspective":
        raise PathMappingError("only perspective cameras are mapped")
    sensor = {
        "type": "perspective", "fov_axis": "y", "fov": float(cam.get("fov", 45.0)),
        "near_clip": 1e-3, "far_clip": 1e4,
        "to_world": mi.ScalarTransform4f().look_at(
            origin=[float(x) for x in cam["center"]], target=camera_target(cam).tolist(),
            up=[float(x) for x in cam.get("up", [0, 1, 0])]),
        "sampler": {"type": "independent", "sample_count": int(spp)},
        "film": {"type": "hdrfilm", "width": int(image.get("width", 400)),
                 "height": int(image.get("height", 400)),
                 "rfilter": FILTERS[image.get("filter", "box")],
                 "pixel_format": "rgb", "component_format": "float32"},
    }
    out = {"type": "scene", "sensor": sensor,
           "integrator": {"type": "path", "max_depth": int(integ.get("max_depth", -1)),
                          "rr_depth": int(integ.get("rr_depth", 5)), "hide_emitters": False}}
    out.update(_shapes(scene, base_dir))
    if uses_media(scene):                    # participating media: Mitsuba's volpath
        out["integrator"]["type"] = "volpath"
        out["integrator"].pop("hide_emitters")
        for name, med in scene.get("media", {}).items():
            out[f"medium_{name}"] = medium_dict(med, base_dir)
        camera_medium = cam.get("medium", scene.get("medium"))
        if camera_medium is not None:
            sensor["medium"] = {"type": "ref", "id": f"medium_{camera_medium}"}
    bg = scene.get("background", {})
    if "cube_map" in bg or any(x != 0 for x in bg.get("ambient", [0, 0, 0])):
        raise PathMappingError("cube maps and ambient light are not mapped")
    if "envmap" in bg:
        from mitsuba_scenes import mi_transform
        out["environment"] = {"type": "envmap", "filename": str(pathlib.Path(base_dir) / bg["envmap"]),
                              "scale": float(bg.get("scale", 1.0)), "to_world": mi_transform(bg.get("transform"))}
    elif any(x != 0 for x in bg.get("color", [0, 0, 0])):
        out["environment"] = {"type": "constant", "radiance": _rgb(bg["color"], "background")}
    for i, light in enumerate(scene.get("lights", [])):
        colour = math.pi * np.asarray(light.get("color", [1, 1, 1]), np.float64)
        if light["type"] == "directional":
            out[f"light_{i}"] = {"type": "directional",
                                 "direction": [float(x) for x in light["direction"]],
                                 "irradiance": _rgb(colour, "light")}
        elif light["type"] == "spot":
            if "inner_cone_angle" in light or "outer_cone_angle" in light:
                raise PathMappingError("glTF's spot cone (smooth falloff) has no Mitsuba counterpart")
            pos = np.asarray(light["position"], np.float64)
            axis = np.asarray(light["direction"], np.float64)
            up = [0.0, 1.0, 0.0] if abs(axis[1]) < 0.9 * np.linalg.norm(axis) else [1.0, 0.0, 0.0]
            cutoff = float(light.get("cutoff_angle", 20.0))
            out[f"light_{i}"] = {"type": "spot", "cutoff_angle": cutoff,
                                 "beam_width": float(light.get("beam_width", 0.75 * cutoff)),
                                 "to_world": mi.ScalarTransform4f().look_at(
                                     origin=pos.tolist(), target=(pos + axis).tolist(), up=up),
                                 "intensity": _rgb(colour / float(light.get("attenuation", 1.0)), "light")}
        else:
            att = float(light.get("attenuation", 1.0))     # none: pi * I with 1/d^2
            out[f"light_{i}"] = {"type": "point",
                                 "position": [float(x) for x in light["position"]],
                                 "intensity": _rgb(colour / att, "light")}
    return out


def render_mitsuba(mi_dict, spp, seed=0):
    """Render a dict from :func:`mitsuba_path_scene_dict` in the current variant ->
    (H, W, 3) float64 linear RGB (the developed film: box filter = mean of samples)."""
    import mitsuba as mi

    scene = mi.load_dict(mi_dict)
    return np.array(mi.render(scene, spp=int(spp), seed=int(seed)), np.float64)[..., :3]


# ---------------------------------------------------------------- cube-map environments
def envmap_dict(latlong):
    """A Mitsuba ``envmap`` emitter dict from a lat-long image (H, W, 3), linear radiance.

    Mitsuba's convention (``src/emitters/envmap.cpp``): a direction d has
    ``u = atan2(d.x, -d.z) / 2 pi`` (wrapped) and ``v = acos(d.y) / pi``; column ``i`` is
    centred at ``u = (i + 0.5) / W`` and wraps, row ``j`` sits at ``v = j / (H - 1)``.
    A float32 bitmap is taken as linear (no sRGB decoding)."""
    import mitsuba as mi

    image = np.ascontiguousarray(latlong, np.float32)
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError("lat-long image must be (H, W, 3)")
    return {"type": "envmap", "bitmap": mi.Bitmap(image, pixel_format=mi.Bitmap.PixelFormat.RGB)}


def mitsuba_path_scene_dict_latlong(scene, base_dir, latlong, spp=16, variant="scalar_rgb"):
    """:func:`mitsuba_path_scene_dict` for a scene whose ``background`` is a
    ``cube_map``: the environment becomes an ``envmap`` emitter showing ``latlong``, that
    cube map resampled to Mitsuba's latitude-longitude layout (see :func:`envmap_dict`;
    ``benchmarks/bench_scenes.py`` makes it with our cube-map lookup, since the face
    orientations are defined by that lookup rather than by the format document)."""
    bg = scene.get("background", {})
    if "cube_map" not in bg:
        raise PathMappingError("background has no cube_map")
    if any(x != 0 for x in bg.get("ambient", [0, 0, 0])):
        raise PathMappingError("ambient light is not mapped")
    stripped = copy.deepcopy(scene)
    stripped["background"] = {}
    out = mitsuba_path_scene_dict(stripped, base_dir, spp=spp, variant=variant)
    out["environment"] = envmap_dict(latlong)
    return out
