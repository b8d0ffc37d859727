"""The scenes of ``benchmarks/bench_path.py``, for our renderer and for Mitsuba 3.

- ``cornell``: ``scenes/cornell_box.json`` (Mitsuba's ``mi.cornell_box()``), diffuse
  only, one area light.
- ``glass``: a glass torus knot (``dielectric``, ior 1.5, a closed tube of 70,000 flat
  triangles, generated here with numpy and written to ``benchmarks/output/`` as OBJ)
  standing on a rough metal slab (``rough_conductor``, reflectance 1, GGX alpha 0.15),
  lit only by the sky cube map ``scenes/assets/sky``; ``max_depth`` 16.
- ``smoke``: the Cornell box without its boxes, a smoke puff in the middle: a 64^3 grid
  (``tests/media_scenes.smoke_puff``, written to ``benchmarks/output/`` as a Mitsuba
  ``.vol``) in a ``null`` cube of its box, albedo 0.9, Henyey-Greenstein g 0.3;
  ``max_depth`` 8 (Mitsuba: ``volpath``).

Both at 256 x 256 with a box filter. Mitsuba gets the same scenes through
``tests/mitsuba_path_scenes.py``; the cube map becomes an ``envmap`` emitter holding a
latitude-longitude resampling of it (:func:`cube_map_to_latlong`, 2048 x 1024, cached
in ``benchmarks/output/``). Nothing here is committed but code: the mesh and the
lat-long image are rebuilt when missing.

Mitsuba 3's ``envmap`` (``src/emitters/envmap.cpp``): a world direction ``d`` (after the
inverse ``to_world``; identity here) has ``u = atan2(d.x, -d.z) / 2 pi`` (wrapped to
[0, 1)) and ``v = acos(d.y) / pi``; the bitmap (W x H) is looked up bilinearly with
column ``i`` centred at ``u = (i + 0.5) / W`` (it wraps around) and row ``j`` at
``v = j / (H - 1)`` (the first and last rows sit on the poles). So pixel (j, i) holds
our radiance in direction ``(sin t sin p, cos t, -sin t cos p)``, ``p = 2 pi (i + 0.5) / W``,
``t = pi j / (H - 1)``. ``tests/test_bench_scenes.py`` checks this against Mitsuba.
"""
import copy
import hashlib
import json
import pathlib
import sys

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "output"
SCENES_DIR = REPO / "scenes"
SKY = SCENES_DIR / "assets" / "sky"
SIZE = 256
SCENE_NAMES = ("cornell", "glass", "smoke")
LATLONG_SIZE = (2048, 1024)            # width, height

# the knot: a (2, 3) torus knot whose centre line lies on a torus of radii R and r
KNOT = {"p": 2, "q": 3, "R": 1.0, "r": 0.45, "tube": 0.25, "segments": 700, "sides": 50}


# ---------------------------------------------------------------- the mesh
def torus_knot(p=2, q=3, R=1.0, r=0.45, tube=0.25, segments=700, sides=50):
    """A closed tube of radius ``tube`` around the (p, q) torus knot
    ``((R + r cos qt) cos pt, (R + r cos qt) sin pt, r sin qt)``, t in [0, 2 pi), in the
    xy plane, centred on the origin -> (vertices (segments * sides, 3) float64,
    triangles (2 * segments * sides, 3) int64), counter-clockwise seen from outside
    (outward normals, as glass needs). Deterministic; no caps (the tube closes on itself).

    The tube's frame at each point is the direction from the torus' core circle to the
    centre line, made perpendicular to the tangent: periodic, so the tube closes
    without a twist."""
    t = 2 * np.pi * np.arange(segments) / segments
    cp, sp, cq, sq = np.cos(p * t), np.sin(p * t), np.cos(q * t), np.sin(q * t)
    c = np.stack([(R + r * cq) * cp, (R + r * cq) * sp, r * sq], axis=1)
    dc = np.stack([-r * q * sq * cp - (R + r * cq) * p * sp,
                   -r * q * sq * sp + (R + r * cq) * p * cp,
                   r * q * cq], axis=1)                                   # dc/dt
    tangent = dc / np.linalg.norm(dc, axis=1, keepdims=True)
    n = np.stack([r * cq * cp, r * cq * sp, r * sq], axis=1)              # core circle -> c
    n -= np.sum(n * tangent, axis=1, keepdims=True) * tangent
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    b = np.cross(tangent, n)
    a = 2 * np.pi * np.arange(sides) / sides
    ring = np.cos(a)[None, :, None] * n[:, None, :] + np.sin(a)[None, :, None] * b[:, None, :]
    vertices = (c[:, None, :] + tube * ring).reshape(-1, 3)
    i = np.arange(segments)[:, None]
    j = np.arange(sides)[None, :]
    v00 = i * sides + j
    v10 = ((i + 1) % segments) * sides + j
    v01 = i * sides + (j + 1) % sides
    v11 = ((i + 1) % segments) * sides + (j + 1) % sides
    # two triangles per quad; which way round faces outwards is settled by the volume
    tris = np.concatenate([np.stack([v00, v10, v11], -1).reshape(-1, 3),
                           np.stack([v00, v11, v01], -1).reshape(-1, 3)])
    if signed_volume(vertices, tris) < 0:
        tris = tris[:, ::-1]
    return vertices, np.ascontiguousarray(tris)


def signed_volume(vertices, tris):
    """Volume enclosed by a closed triangle mesh: positive when its normals
    (counter-clockwise winding) point outwards."""
    v0, v1, v2 = (vertices[tris[:, k]] for k in range(3))
    return float(np.sum(v0 * np.cross(v1, v2)) / 6.0)


def centreline_clearance(p=2, q=3, R=1.0, r=0.45, samples=2000, **_):
    """Smallest distance between two points of the knot's centre line whose parameters t
    are more than 2 pi / 8 apart: strands of the tube do not meet while its radius is
    below half of this."""
    t = 2 * np.pi * np.arange(samples) / samples
    c = np.stack([(R + r * np.cos(q * t)) * np.cos(p * t),
                  (R + r * np.cos(q * t)) * np.sin(p * t), r * np.sin(q * t)], axis=1)
    d = np.linalg.norm(c[:, None, :] - c[None, :, :], axis=-1)
    k = np.arange(samples)
    gap = np.abs(k[:, None] - k[None, :])
    gap = np.minimum(gap, samples - gap)
    return float(d[gap > samples // 8].min())


def obj_text(vertices, tris):
    """Wavefront OBJ text (``v`` with 9 significant digits, 1-based ``f``)."""
    lines = [f"# torus knot, {len(vertices)} vertices, {len(tris)} triangles (benchmarks/bench_scenes.py)"]
    lines += [f"v {x:.9g} {y:.9g} {z:.9g}" for x, y, z in vertices]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in tris]
    return "\n".join(lines) + "\n"


def knot_obj(out_dir=OUT, **knot):
    """Write the knot mesh (``KNOT`` updated with ``knot``) as OBJ into ``out_dir``, unless
    an identical file is there -> its path. The name carries a hash of the parameters."""
    params = dict(KNOT, **knot)
    tag = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:8]
    path = pathlib.Path(out_dir) / f"torus_knot_{2 * params['segments'] * params['sides']}_{tag}.obj"
    text = obj_text(*torus_knot(**params))
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return path


# ---------------------------------------------------------------- the scenes
def cornell_scene(size=SIZE):
    """(scene dict, base_dir): ``scenes/cornell_box.json`` at ``size``, box filter."""
    sys.path.insert(0, str(REPO / "tests"))
    from mitsuba_path_scenes import cornell_box_scene
    return cornell_box_scene(size, "box"), SCENES_DIR


def glass_scene(size=SIZE, out_dir=OUT):
    """(scene dict, base_dir): the glass knot on a rough metal slab under the sky."""
    mesh = knot_obj(out_dir)
    scene = {
        "camera": {"type": "perspective", "center": [0.0, 2.3, 6.4], "look_at": [0.0, 1.45, 0.0],
                   "fov": 36},
        "image": {"width": size, "height": size, "spp": 64, "filter": "box", "seed": 1},
        "integrator": {"type": "path", "max_depth": 16, "rr_depth": 5},
        "background": {"cube_map": "assets/sky"},
        "materials": {
            "glass": {"type": "dielectric", "ior": 1.5},
            "metal": {"type": "rough_conductor", "reflectance": [1.0, 1.0, 1.0], "alpha": 0.15},
        },
        "objects": [
            {"type": "rectangle", "name": "rough metal slab", "material": "metal",
             "transform": [{"rotate_x": -90}, {"scale": [5, 5, 1]}]},
            {"type": "mesh", "name": "glass torus knot", "file": str(mesh), "smooth": False,
             "material": "glass",
             "transform": [{"translate": [0.0, 1.62, 0.0]}, {"rotate_y": 25}, {"rotate_x": -10}]},
        ],
    }
    return scene, SCENES_DIR


SMOKE_BOX = [{"translate": [0.0, -0.3, 0.0]}, {"scale": [0.75, 0.68, 0.75]}]


def smoke_vol(out_dir=OUT, n=64):
    """The smoke puff (``tests/media_scenes.smoke_puff``, n^3) as a Mitsuba .vol file in
    ``out_dir`` (written when missing or different) -> its path."""
    sys.path.insert(0, str(REPO / "tests"))
    from media_scenes import smoke_puff
    from raytrace.scene.volgrid import write_vol
    path = pathlib.Path(out_dir) / f"smoke_puff_{n}.vol"
    grid = smoke_puff(n)
    if not path.exists() or path.stat().st_size != 48 + 4 * grid.size or \
            not np.array_equal(np.fromfile(path, "<f4", offset=48).reshape(grid.shape), grid):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_vol(path, grid)
    return path


def smoke_scene(size=SIZE, out_dir=OUT):
    """(scene dict, base_dir): smoke in the Cornell box."""
    scene, base = cornell_scene(size)
    scene["objects"] = [o for o in scene["objects"] if o["type"] != "cube"]
    scene["materials"]["boundary"] = {"type": "null"}
    scene["media"] = {"smoke": {"type": "heterogeneous", "sigma_t": {"type": "grid", "file": str(smoke_vol(out_dir))},
                                "scale": 8.0, "albedo": 0.9, "phase": {"type": "hg", "g": 0.3},
                                "transform": SMOKE_BOX}}
    scene["objects"].append({"type": "cube", "name": "smoke box", "material": "boundary", "interior": "smoke",
                             "transform": SMOKE_BOX})
    return scene, base


BUILDERS = {"cornell": cornell_scene, "glass": glass_scene, "smoke": smoke_scene}


def our_scene(name, size=SIZE):
    """(scene dict, base_dir) of benchmark scene ``name``."""
    return BUILDERS[name](size)


# ---------------------------------------------------------------- the environment
def latlong_directions(width, height):
    """(H, W, 3) unit directions of Mitsuba ``envmap`` pixels (see the module docstring)."""
    phi = 2 * np.pi * (np.arange(width) + 0.5) / width
    theta = np.pi * np.arange(height) / (height - 1)
    st, ct = np.sin(theta)[:, None], np.cos(theta)[:, None]
    return np.stack(np.broadcast_arrays(st * np.sin(phi)[None, :], ct,
                                        -st * np.cos(phi)[None, :]), axis=-1)


_LOOKUP = []


def _lookup_all(faces, dirs):
    if not _LOOKUP:                       # compiled once per process (not cached on disk)
        from numba import njit
        from raytrace.cubemap import cube_rgb

        @njit
        def run(faces, dirs, out):
            for k in range(dirs.shape[0]):
                out[k, 0], out[k, 1], out[k, 2] = cube_rgb(faces, dirs[k, 0], dirs[k, 1], dirs[k, 2])
        _LOOKUP.append(run)
    flat = np.ascontiguousarray(dirs.reshape(-1, 3), np.float64)
    out = np.empty_like(flat)
    _LOOKUP[0](np.ascontiguousarray(faces, np.float32), flat, out)
    return out.reshape(dirs.shape)


def cube_map_lookup(faces, dirs):
    """Our cube map's radiance (..., 3) in directions ``dirs`` (..., 3), through
    ``raytrace.cubemap.cube_rgb`` (the lookup the path tracer uses)."""
    return _lookup_all(faces, np.asarray(dirs, np.float64))


def cube_map_to_latlong(faces, width=LATLONG_SIZE[0], height=LATLONG_SIZE[1]):
    """(6, S, S, 3) cube map faces (``raytrace.cubemap.load_cube_map``) -> (H, W, 3)
    float32 lat-long image for Mitsuba's ``envmap``: each pixel is our radiance in its
    direction (:func:`latlong_directions`)."""
    return cube_map_lookup(faces, latlong_directions(width, height)).astype(np.float32)


def sky_latlong(out_dir=OUT, folder=SKY, size=LATLONG_SIZE):
    """The lat-long image of cube map ``folder`` (float32 (H, W, 3)), cached as .npy in
    ``out_dir`` (keyed by a hash of the face files and the size)."""
    h = hashlib.sha256(repr(size).encode())
    for f in sorted(pathlib.Path(folder).glob("*.png")):
        h.update(f.name.encode() + f.read_bytes())
    path = pathlib.Path(out_dir) / f"latlong_{pathlib.Path(folder).name}_{size[0]}x{size[1]}_{h.hexdigest()[:8]}.npy"
    if path.exists():
        return np.load(path)
    from raytrace.cubemap import load_cube_map
    image = cube_map_to_latlong(load_cube_map(folder), *size)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, image)
    tmp.replace(path)
    return image


# ---------------------------------------------------------------- Mitsuba
def mitsuba_scene_dict(name, variant, size=SIZE, sampler="independent", latlong=None):
    """``mi.load_dict`` dict of benchmark scene ``name`` in Mitsuba ``variant`` (sets it),
    with ``sampler``. ``latlong``: the environment image (default :func:`sky_latlong`)."""
    sys.path.insert(0, str(REPO / "tests"))
    from mitsuba_path_scenes import mitsuba_path_scene_dict, mitsuba_path_scene_dict_latlong

    scene, base = our_scene(name, size)
    if "cube_map" in scene.get("background", {}):
        if latlong is None:
            latlong = sky_latlong()
        d = mitsuba_path_scene_dict_latlong(scene, base, latlong, variant=variant)
    else:
        d = mitsuba_path_scene_dict(scene, base, variant=variant)
    d["sensor"]["sampler"]["type"] = sampler
    return d


def scene_key(name, size=SIZE):
    """Hash of a benchmark scene's dict (the mesh by its content): which scene a cached
    reference shows."""
    scene, _ = our_scene(name, size)
    scene = copy.deepcopy(scene)
    for obj in scene.get("objects", []):
        if obj.get("type") == "mesh" and pathlib.Path(obj["file"]).is_absolute():
            obj["file"] = hashlib.sha256(pathlib.Path(obj["file"]).read_bytes()).hexdigest()[:16]
    for med in scene.get("media", {}).values():          # grids by their content
        spec = med.get("sigma_t")
        if isinstance(spec, dict) and pathlib.Path(spec.get("file", "")).is_absolute():
            spec["file"] = hashlib.sha256(pathlib.Path(spec["file"]).read_bytes()).hexdigest()[:16]
    return hashlib.sha256(json.dumps(scene, sort_keys=True).encode()).hexdigest()[:16]
