"""One scene, two renderers: our scene dict -> an equivalent Mitsuba 3 scene, rendered.

The mapping (written up in ``docs/mitsuba-mapping.md``) is built here from the documented
conventions of ``docs/scene-format.md``, *not* from ``raytrace``'s own code, so that a bug
in our transforms or camera cannot hide by being copied into the reference:

- camera: Mitsuba ``perspective`` sensor, ``fov_axis='y'``, ``to_world = look_at(...)``;
  one un-jittered ``stratified`` sample per pixel and a box filter = the pixel centre.
  Mitsuba's image is not mirrored relative to ours (checked with an asymmetric scene).
- transforms: the steps are chained with ``mi.ScalarTransform4f`` methods, which
  right-multiply (``T.translate(v) == T @ Translate(v)``), the same order as our format;
  ``rotate`` axes are normalised (Mitsuba assumes a unit axis).
- sphere with any affine transform: an ``instance`` of a unit ``sphere`` in a
  ``shapegroup`` (Mitsuba's own ``sphere`` ignores non-uniform scale).
- plane: a finite ``rectangle`` of half-size ``plane_size`` centred on the plane point
  nearest the origin (an infinite plane cannot be expressed; compare where both hit).
  The normal is normalised first, as our loader does: the plane is ``dot(n / |n|, p) =
  offset`` (the format doc's ``dot(normal, p) = offset`` only agrees for unit normals).
- mesh: the ``obj`` plugin with ``face_normals=True`` (our ``smooth: false``).
- depth: Mitsuba's ``depth`` AOV is the distance along the unit ray from the point where
  the ray crosses the near-clip plane, i.e. ``t - near_clip / cos(theta)``
  (``theta`` = angle to the optical axis); :func:`render_mitsuba_aovs` adds it back.
- light: a Lambert surface in Mitsuba reflects ``albedo / pi * E * cos``; ours reflects
  ``k_d * I * cos``. So ``reflectance = k_d`` and directional ``irradiance = pi * I``
  (point light ``intensity = pi * color / attenuation``).

Requires ``mitsuba`` (import this module only after ``pytest.importorskip("mitsuba")``).
"""
import math
import pathlib

import mitsuba as mi
import numpy as np

VARIANT = "scalar_rgb"      # set again by every entry point: other tests may switch it
mi.set_variant(VARIANT)

NEAR_CLIP = 1e-3          # world units; Mitsuba measures depth from this plane
FAR_CLIP = 1e4


class MappingError(ValueError):
    """Part of a scene that this cross-check mapping does not translate to Mitsuba."""


# ---------------------------------------------------------------- transforms and camera
def mi_transform(steps):
    """Our ``transform`` list -> ``mi.ScalarTransform4f``, steps chained left to right."""
    t = mi.ScalarTransform4f()
    for step in steps or ():
        (kind, value), = step.items()
        if kind == "translate":
            t = t.translate(value)
        elif kind in ("rotate_x", "rotate_y", "rotate_z"):
            axis = {"rotate_x": [1, 0, 0], "rotate_y": [0, 1, 0], "rotate_z": [0, 0, 1]}[kind]
            t = t.rotate(axis, value)
        elif kind == "rotate":
            axis = np.asarray(value["axis"], np.float64)      # Mitsuba expects a unit axis
            t = t.rotate((axis / np.linalg.norm(axis)).tolist(), value["angle"])
        elif kind == "scale":
            t = t.scale([value] * 3 if isinstance(value, (int, float)) else value)
        elif kind == "matrix":
            t = t @ mi.ScalarTransform4f(np.asarray(value, np.float64).tolist())
        else:
            raise MappingError(f"transform step {kind!r} has no Mitsuba mapping")
    return t


def camera_target(camera):
    """The point the camera looks at (``look_at``, or ``center + direction``)."""
    c = np.asarray(camera["center"], np.float64)
    if "look_at" in camera:
        return np.asarray(camera["look_at"], np.float64)
    return c + np.asarray(camera["direction"], np.float64)


def sensor_dict(camera, width, height, near_clip=NEAR_CLIP, principal_point_offset=(0.0, 0.0)):
    """Our perspective ``camera`` -> a Mitsuba sensor sampling exact pixel centres.

    ``principal_point_offset`` (x, y) in pixels shifts the image (for negative controls).
    """
    if camera.get("type", "perspective") != "perspective":
        raise MappingError("only perspective cameras are mapped")
    return {
        "type": "perspective",
        "fov_axis": "y",
        "fov": float(camera.get("fov", 45.0)),
        "near_clip": near_clip,
        "far_clip": FAR_CLIP,
        "principal_point_offset_x": principal_point_offset[0] / width,
        "principal_point_offset_y": principal_point_offset[1] / height,
        "to_world": mi.ScalarTransform4f().look_at(
            origin=list(map(float, camera["center"])),
            target=camera_target(camera).tolist(),
            up=list(map(float, camera.get("up", [0, 1, 0])))),
        "sampler": {"type": "stratified", "sample_count": 1, "jitter": False},
        "film": {"type": "hdrfilm", "width": width, "height": height,
                 "rfilter": {"type": "box"}, "pixel_format": "rgb"},
    }


def ray_length_factor(camera, width, height):
    """(H, W) ``1 / cos(theta)`` of each pixel-centre ray, theta = angle to the view axis.

    Computed from the documented camera model (vertical fov, pixel centres, row 0 at the
    top): the ray direction with unit forward component is ``f + sx * r + sy * u``.
    """
    half_h = math.tan(math.radians(camera.get("fov", 45.0)) / 2)
    x = (2 * (np.arange(width) + 0.5) / width - 1) * half_h * width / height
    y = (1 - 2 * (np.arange(height) + 0.5) / height) * half_h
    return np.sqrt(1 + x[None, :] ** 2 + y[:, None] ** 2)


# ---------------------------------------------------------------- shapes and materials
def _is_similarity(lin):
    """True when ``lin`` (3x3) is a rotation times a uniform scale."""
    g = lin.T @ lin
    s = np.trace(g) / 3
    return np.allclose(g, s * np.eye(3), rtol=0, atol=1e-6 * s)


def _frame_to(normal):
    """4x4 rotation taking +z to the unit ``normal`` (columns t1, t2, n)."""
    n = np.asarray(normal, np.float64) / np.linalg.norm(normal)
    a = np.array([1.0, 0, 0]) if abs(n[0]) < 0.9 else np.array([0, 1.0, 0])
    t1 = np.cross(a, n)
    t1 /= np.linalg.norm(t1)
    t2 = np.cross(n, t1)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2] = t1, t2, n
    return mi.ScalarTransform4f(m.tolist())


class _ShapeBuilder:
    def __init__(self, materials, base_dir, plane_size, with_bsdfs):
        self.materials = materials
        self.base_dir = pathlib.Path(base_dir)
        self.plane_size = plane_size
        self.with_bsdfs = with_bsdfs
        self.shapes = {}
        self.groups = {}          # shape groups must be top-level entries

    def bsdf(self, mat_name):
        if mat_name is None:
            kd = [0.8, 0.8, 0.8]                # our default material
        else:
            m = self.materials[mat_name]
            if any(m.get(k, [0, 0, 0]) != [0, 0, 0] for k in ("specular", "reflect", "transmit")):
                raise MappingError(f"material {mat_name!r} is not purely diffuse")
            kd = m.get("diffuse", [0.0, 0.0, 0.0])
        return {"type": "diffuse", "reflectance": {"type": "rgb", "value": list(map(float, kd))}}

    def add(self, shape, mat_name, own_bsdf=True):
        if self.with_bsdfs and own_bsdf:
            shape["bsdf"] = self.bsdf(mat_name)
        self.shapes[f"shape_{len(self.shapes):03d}"] = shape

    def visit(self, obj, parent, mat_name):
        t = parent @ mi_transform(obj.get("transform"))
        mat_name = obj.get("material", mat_name)
        kind = obj["type"]
        if kind == "group":
            for child in obj["children"]:
                self.visit(child, t, mat_name)
        elif kind == "sphere":
            t = t.translate(list(map(float, obj.get("center", [0, 0, 0])))).scale(
                float(obj.get("radius", 1.0)))
            lin = np.array(t.matrix, np.float64)[:3, :3]
            if _is_similarity(lin):
                self.add({"type": "sphere", "to_world": t}, mat_name)
            else:
                # Mitsuba's sphere ignores non-uniform scale: instance a unit sphere
                unit = {"type": "sphere"}
                if self.with_bsdfs:
                    unit["bsdf"] = self.bsdf(mat_name)
                gid = f"unit_sphere_{len(self.groups):03d}"
                self.groups[gid] = {"type": "shapegroup", "sphere": unit}
                self.add({"type": "instance", "shapegroup": {"type": "ref", "id": gid},
                          "to_world": t}, mat_name, own_bsdf=False)  # the sphere carries it
        elif kind == "plane":
            n = np.asarray(obj["normal"], np.float64)
            n /= np.linalg.norm(n)
            p0 = n * float(obj.get("offset", 0.0))
            t = (t.translate(p0.tolist()) @ _frame_to(n)).scale(
                [self.plane_size, self.plane_size, 1.0])
            self.add({"type": "rectangle", "to_world": t}, mat_name)
        elif kind == "mesh":
            if obj.get("smooth", False):
                raise MappingError("only flat meshes (smooth: false) are mapped")
            self.add({"type": "obj", "filename": str(self.base_dir / obj["file"]),
                      "face_normals": True, "to_world": t}, mat_name)
        else:
            raise MappingError(f"object type {kind!r} has no Mitsuba mapping")


def mitsuba_scene_dict(scene, base_dir, width, height, integrator, plane_size=20.0,
                       with_bsdfs=False, **sensor_kw):
    """Our scene dict -> a ``mi.load_dict`` dict with the given ``integrator`` dict.

    Lights become ``directional`` / ``point`` emitters with our colours times pi (see the
    module docstring). The background must be black and the ambient term zero.
    """
    mi.set_variant(VARIANT)
    bg = scene.get("background", {})
    if any(bg.get(k, [0, 0, 0]) != [0, 0, 0] for k in ("color", "ambient")) or "cube_map" in bg:
        raise MappingError("background colour and ambient light must be zero")
    b = _ShapeBuilder(scene.get("materials", {}), base_dir, plane_size, with_bsdfs)
    for obj in scene.get("objects", []):
        b.visit(obj, mi.ScalarTransform4f(), None)
    out = {"type": "scene", "integrator": integrator,
           "sensor": sensor_dict(scene["camera"], width, height, **sensor_kw)}
    out.update(b.groups)
    out.update(b.shapes)
    for i, light in enumerate(scene.get("lights", [])):
        colour = np.asarray(light.get("color", [1.0, 1.0, 1.0]), np.float64)
        if light["type"] == "directional":
            irradiance = (math.pi * colour).tolist()
            out[f"light_{i}"] = {"type": "directional",
                                 "direction": list(map(float, light["direction"])),
                                 "irradiance": {"type": "rgb", "value": irradiance}}
        else:
            att = light.get("attenuation", 0.0)
            if att <= 0:
                raise MappingError("point lights without fall-off have no Mitsuba counterpart")
            intensity = (math.pi * colour / att).tolist()
            out[f"light_{i}"] = {"type": "point", "position": list(map(float, light["position"])),
                                 "intensity": {"type": "rgb", "value": intensity}}
    return out


# ---------------------------------------------------------------- rendering
def render_channels(mi_dict):
    """Render a ``mi.load_dict`` dict -> {channel name: (H, W) float64}, e.g. ``R``,
    ``dd.T``, ``nn.X``, ``si.I``, read from the developed film (all AOV channels)."""
    mi.set_variant(VARIANT)
    scene = mi.load_dict(mi_dict)
    mi.render(scene)
    bitmap = scene.sensors()[0].film().bitmap()
    img = np.array(bitmap, np.float64)
    return {bitmap.struct_()[k].name: img[..., k] for k in range(bitmap.channel_count())}


def render_mitsuba_aovs(scene, base_dir, width, height, **kw):
    """Mitsuba ``aov`` integrator in our conventions.

    Returns ``t`` (H, W) float64 distance from the eye along the unit ray (inf on a miss),
    ``normals`` (H, W, 3) world shading normal (zero on a miss) and ``shape`` (H, W)
    int64 Mitsuba shape index (-1 on a miss). Values are Mitsuba's float32 results.
    """
    integ = {"type": "aov", "aovs": "dd:depth,nn:sh_normal,si:shape_index"}
    d = mitsuba_scene_dict(scene, base_dir, width, height, integ, **kw)
    ch = render_channels(d)
    depth = ch["dd.T"]
    normals = np.stack([ch["nn.X"], ch["nn.Y"], ch["nn.Z"]], axis=-1)
    hit = depth > 0
    near = d["sensor"]["near_clip"]
    t = np.where(hit, depth + near * ray_length_factor(scene["camera"], width, height), np.inf)
    normals[~hit] = 0.0
    shape = np.where(hit, np.rint(ch["si.I"]), -1).astype(np.int64)
    return t, normals, shape


def render_mitsuba_direct(scene, base_dir, width, height, **kw):
    """Mitsuba ``direct`` integrator, one emitter sample and no BSDF sample per pixel
    centre (exact for delta lights) -> (H, W, 3) float64 linear RGB."""
    integ = {"type": "direct", "emitter_samples": 1, "bsdf_samples": 0}
    d = mitsuba_scene_dict(scene, base_dir, width, height, integ, with_bsdfs=True, **kw)
    ch = render_channels(d)
    return np.stack([ch["R"], ch["G"], ch["B"]], axis=-1)
