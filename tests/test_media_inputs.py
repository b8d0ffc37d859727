"""Participating media as input: scene keys, grid files (.vol, .npy, arrays), which
medium each surface separates, glTF's KHR_materials_volume, hostile input (one line
naming the file and the field, status 2, nothing written), and what a scene without media
compiles (none of the media kernels).

Grids are checked against Mitsuba 3 where it is installed: our .vol files are its files,
and our trilinear lookup in a box placed by a transform is its ``gridvolume``'s.
"""
import json
import math
import os
import random
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import raytrace
from gltf_builder import GltfBuilder
from raytrace.errors import SceneError
from raytrace.scene.volgrid import MAX_VALUES, read_vol, write_vol
from test_hostile_raytrace import mutate_bytes, run_case

REPO = __import__("pathlib").Path(__file__).resolve().parents[1]


def _scene(**extra):
    scene = {
        "camera": {"center": [0, 0, 4], "look_at": [0, 0, 0], "fov": 30},
        "image": {"width": 4, "height": 4},
        "integrator": {"type": "path", "max_depth": 4},
        "background": {"color": [0.5, 0.5, 0.5]},
        "materials": {"boundary": {"type": "null"}},
        "media": {"smoke": {"type": "heterogeneous", "sigma_t": {"type": "grid", "file": "s.vol"},
                            "scale": 2.0, "albedo": 0.8}},
        "objects": [{"type": "cube", "material": "boundary", "interior": "smoke"}],
    }
    scene.update(extra)
    return scene


def _write(folder, scene, grid=None):
    folder.mkdir(parents=True, exist_ok=True)
    write_vol(folder / "s.vol", np.ones((3, 3, 3), np.float32) if grid is None else grid)
    (folder / "scene.json").write_text(json.dumps(scene))
    return folder


# ---------------------------------------------------------------- grids
def test_vol_files_are_mitsubas(tmp_path):
    """A grid written here reads back the same in Mitsuba, and one Mitsuba writes reads
    back the same here (3 channels; the (z, y, x, channel) order)."""
    mi = pytest.importorskip("mitsuba")
    mi.set_variant("scalar_rgb")
    grid = np.random.default_rng(1).random((4, 5, 6, 3)).astype(np.float32)
    write_vol(tmp_path / "ours.vol", grid)
    np.testing.assert_array_equal(np.array(mi.VolumeGrid(str(tmp_path / "ours.vol"))), grid)
    mi.VolumeGrid(grid).write(str(tmp_path / "theirs.vol"))
    np.testing.assert_array_equal(read_vol(tmp_path / "theirs.vol"), grid)


@pytest.mark.parametrize("channels", [1, 3])
def test_grid_lookup_is_mitsubas_gridvolume(channels, tmp_path):
    """Our extinction at points of a grid medium placed by a rotation, a non-uniform scale
    and a translation equals Mitsuba's ``gridvolume`` (trilinear, clamped) times ``scale``
    with ``to_world = M translate(-1) scale(2)`` (docs/media.md), inside the box and at
    its faces; zero outside the box (Mitsuba's heterogeneous medium clips to it)."""
    mi = pytest.importorskip("mitsuba")
    mi.set_variant("scalar_rgb")
    from numba import njit

    from mitsuba_scenes import mi_transform
    from raytrace.kernels.media import grid_ray, grid_sigma

    rng = np.random.default_rng(channels)
    grid = rng.random((5, 6, 7, channels)).astype(np.float32)
    transform = [{"translate": [0.3, -0.2, 0.1]}, {"rotate": {"axis": [1, 2, 0.5], "angle": 40}},
                 {"scale": [0.8, 1.3, 0.6]}]
    med = {"type": "heterogeneous", "sigma_t": {"type": "grid", "data": grid}, "scale": 2.5,
           "transform": transform}
    scene = raytrace.load_scene(_scene(media={"smoke": med}, objects=[
        {"type": "cube", "material": "boundary", "interior": "smoke", "transform": transform}]))

    @njit
    def ours(media, points, out):
        for k in range(points.shape[0]):
            a = media.to_grid
            x, y, z = points[k, 0], points[k, 1], points[k, 2]
            gx = a[0, 0, 0] * x + a[0, 0, 1] * y + a[0, 0, 2] * z + a[0, 0, 3]
            gy = a[0, 1, 0] * x + a[0, 1, 1] * y + a[0, 1, 2] * z + a[0, 1, 3]
            gz = a[0, 2, 0] * x + a[0, 2, 1] * y + a[0, 2, 2] * z + a[0, 2, 3]
            t0, t1 = grid_ray(media, 0, x, y, z, 1.0, 0.0, 0.0, 1e-9)[:2]
            inside = t0 <= 0.0 < t1 or (t0 == 0.0 and t1 > 0.0)
            s = grid_sigma(media, 0, gx, gy, gz)
            out[k, 0], out[k, 1], out[k, 2], out[k, 3] = s[0], s[1], s[2], 1.0 if inside else 0.0

    m = to_matrix(transform)
    local = np.concatenate([rng.uniform(-1, 1, (300, 3)), rng.uniform(-1, 1, (60, 3)) * [1, 1, 0] + [0, 0, 1],
                            rng.uniform(-1.3, 1.3, (100, 3))])
    points = local @ m[:3, :3].T + m[:3, 3]
    out = np.empty((len(points), 4))
    ours(scene.media, points, out)
    vol = mi.load_dict({"type": "gridvolume", "grid": mi.VolumeGrid(grid),
                        "to_world": mi_transform(transform).translate([-1.0, -1.0, -1.0]).scale(2.0)})
    it = mi.Interaction3f()
    inside = np.all(np.abs(local) <= 1.0, axis=1)
    assert inside.sum() > 300 and (~inside).sum() > 40
    for k in np.flatnonzero(inside):
        it.p = mi.Point3f(*points[k])
        want = 2.5 * np.array(vol.eval(it), np.float64)
        np.testing.assert_allclose(out[k, :3], want, rtol=1e-5, atol=1e-6)
    inner = np.all(np.abs(local) < 1.0 - 1e-6, axis=1)
    np.testing.assert_array_equal(out[inner, 3], 1.0)
    np.testing.assert_array_equal(out[~inside, 3], 0.0)


def to_matrix(steps):
    from raytrace.scene.transforms import compose, to_numpy
    return to_numpy(compose(steps, "t"))


def test_grid_from_npy_and_arrays(tmp_path):
    """The same grid from a .vol file, a .npy file and an array (3-D or 4-D) gives the
    same medium."""
    grid = np.random.default_rng(2).random((3, 4, 5)).astype(np.float32)
    write_vol(tmp_path / "g.vol", grid)
    np.save(tmp_path / "g.npy", grid)
    voxels = []
    for spec in ({"type": "grid", "file": "g.vol"}, {"type": "grid", "file": "g.npy"},
                 {"type": "grid", "data": grid}, {"type": "grid", "data": grid[..., None].tolist()}):
        med = {"type": "heterogeneous", "sigma_t": spec}
        scene = raytrace.load_scene(_scene(media={"smoke": med}), base_dir=tmp_path)
        voxels.append(scene.media.voxels)
    for v in voxels[1:]:
        np.testing.assert_array_equal(v, voxels[0])
    np.testing.assert_array_equal(voxels[0], grid.ravel())


def test_majorants_bound_the_grid():
    """Every majorant cell bounds the trilinear extinction anywhere inside it (the lookup
    mixes the voxels around a point, so a cell's bound must reach one voxel beyond it):
    checked at 20,000 points of a spiky grid, including the cells' faces; and the bound
    is not loose where the grid is empty."""
    from numba import njit

    from raytrace.kernels.media import grid_sigma
    from raytrace.layout import G_BLOCK, G_MAJORANT, G_MX, G_MY
    grid = (np.random.default_rng(4).random((20, 21, 22)) ** 8).astype(np.float32)
    grid[:, :, 11:] = 0.0
    scene = raytrace.load_scene(_scene(media={"smoke": {"type": "heterogeneous", "scale": 3.0,
                                                        "sigma_t": {"type": "grid", "data": grid}}}))

    @njit
    def check(media, points, out):
        row = media.grid
        b = row[0, G_BLOCK]
        for k in range(points.shape[0]):
            x, y, z = points[k, 0], points[k, 1], points[k, 2]
            s = grid_sigma(media, 0, x, y, z)
            cx, cy, cz = min(int(x // b), row[0, G_MX] - 1), min(int(y // b), row[0, G_MY] - 1), int(z // b)
            mu = media.majorant[row[0, G_MAJORANT] + (cz * row[0, G_MY] + cy) * row[0, G_MX] + cx]
            out[k, 0], out[k, 1] = max(s[0], max(s[1], s[2])), mu

    rng = np.random.default_rng(6)
    points = rng.uniform(0, 1, (20000, 3)) * [22, 21, 20]
    block = scene.media.grid[0, 14]
    points[:5000, 0] = np.round(points[:5000, 0] / block) * block          # on cell faces
    out = np.empty((len(points), 2))
    check(scene.media, points, out)
    assert (out[:, 0] <= out[:, 1] * (1 + 1e-12)).all()
    assert out[:, 1].max() == pytest.approx(3.0 * grid.max(), rel=1e-6)
    assert scene.media.majorant.min() == 0.0                    # empty cells: no tentative collisions


# ---------------------------------------------------------------- which media where
def test_interior_and_exterior_follow_groups_instances_and_files():
    """A group passes ``interior``/``exterior`` to its children (an object's own key
    wins); surfaces without them have nothing inside and the top-level medium outside;
    each combination is a material row of its own, named after its base."""
    scene = raytrace.load_scene({
        "camera": {"center": [0, 0, 5], "look_at": [0, 0, 0]},
        "integrator": {"type": "path"},
        "materials": {"glass": {"type": "dielectric", "ior": 1.3}},
        "media": {"fog": {"type": "homogeneous", "sigma_t": 0.1}, "ink": {"type": "homogeneous", "sigma_a": 2.0},
                  "tea": {"type": "homogeneous", "sigma_a": [0.1, 0.5, 1.0]}},
        "medium": "fog",
        "objects": [
            {"type": "group", "interior": "ink", "material": "glass", "children": [
                {"type": "sphere", "name": "a"},
                {"type": "sphere", "name": "b", "interior": "tea", "exterior": "ink"}]},
            {"type": "sphere", "name": "c", "material": "glass"},
        ]})
    media, names = scene.media, scene.material_names
    index = {"fog": 0, "ink": 1, "tea": 2}
    rows = scene.geometry.sph_mat
    got = [(names[r], media.mat_interior[r], media.mat_exterior[r]) for r in rows]
    assert got == [("glass (interior ink)", index["ink"], index["fog"]),
                   ("glass (interior tea, exterior ink)", index["tea"], index["ink"]),
                   ("glass", -1, index["fog"])]
    assert media.camera == index["fog"]
    np.testing.assert_array_equal(scene.geometry.materials[rows[0]], scene.geometry.materials[rows[2]])


def test_instances_take_their_media():
    """An instance's ``interior`` goes with its material to the prototype's parts that
    have none of their own (two instances: two media)."""
    scene = raytrace.load_scene({
        "camera": {"center": [0, 0, 5], "look_at": [0, 0, 0]},
        "integrator": {"type": "path"},
        "materials": {"glass": {"type": "dielectric"}},
        "media": {"ink": {"type": "homogeneous", "sigma_a": 2.0}, "tea": {"type": "homogeneous", "sigma_a": 0.5}},
        "prototypes": {"ball": {"type": "sphere"}},
        "objects": [{"type": "instance", "prototype": "ball", "material": "glass", "interior": "ink"},
                    {"type": "instance", "prototype": "ball", "material": "glass", "interior": "tea",
                     "transform": [{"translate": [2, 0, 0]}]}]})
    media = scene.media
    assert [media.mat_interior[r] for r in scene.geometry.inst_mat] == [0, 1]
    assert [scene.material_names[r] for r in scene.geometry.inst_mat] == ["glass (interior ink)",
                                                                         "glass (interior tea)"]


def test_scene_without_media_has_none():
    scene = raytrace.load_scene({"camera": {"center": [0, 0, 5], "look_at": [0, 0, 0]},
                                 "media": {"unused": {"type": "homogeneous"}},
                                 "objects": [{"type": "sphere"}]})
    assert scene.media is None
    assert scene.material_names == ["<default>"]


def test_homogeneous_parameterisations_agree():
    """``albedo``/``sigma_t``/``scale`` (Mitsuba's) and ``sigma_a``/``sigma_s`` (times
    ``scale``) describe the same medium."""
    a = {"type": "homogeneous", "albedo": [0.8, 0.5, 0.25], "sigma_t": [1.0, 2.0, 4.0], "scale": 3.0}
    b = {"type": "homogeneous", "sigma_a": [0.2, 1.0, 3.0], "sigma_s": [0.8, 1.0, 1.0], "scale": 3.0}
    out = []
    for med in (a, b):
        scene = raytrace.load_scene(_scene(media={"smoke": med}))
        out.append((scene.media.sigma_t[0], scene.media.albedo[0]))
    np.testing.assert_allclose(out[0][0], out[1][0])
    np.testing.assert_allclose(out[0][1], out[1][1])
    np.testing.assert_allclose(out[0][0], [3.0, 6.0, 12.0])


# ---------------------------------------------------------------- glTF KHR_materials_volume
def _gltf_cube(path, volume, extensions_required=False):
    g = GltfBuilder()
    v = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], np.float32)
    faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]], np.uint32)
    g.doc["meshes"] = [{"primitives": [{"attributes": {"POSITION": g.accessor(v, "VEC3", minmax=True)},
                                        "indices": g.accessor(faces.ravel(), "SCALAR", ctype=5125),
                                        "material": 0}]}]
    ext = {"KHR_materials_transmission": {"transmissionFactor": 1.0}, "KHR_materials_ior": {"ior": 1.0}}
    if volume is not None:
        ext["KHR_materials_volume"] = volume
    g.doc["materials"] = [{"name": "tinted", "pbrMetallicRoughness": {"metallicFactor": 0.0},
                           "extensions": ext}]
    g.doc["extensionsUsed"] = sorted(ext)
    if extensions_required:
        g.doc["extensionsRequired"] = ["KHR_materials_volume"]
    g.doc["nodes"] = [{"mesh": 0}]
    g.doc["scenes"] = [{"nodes": [0]}]
    g.save(path)


def _through_gltf(tmp_path, volume, integrator):
    _gltf_cube(tmp_path / "cube.gltf", volume, extensions_required=True)
    scene = {
        "camera": {"type": "orthographic", "center": [0, 0, 5], "direction": [0, 0, -1], "height": 1.0},
        "image": {"width": 4, "height": 4},
        "integrator": {"type": integrator} if integrator == "whitted" else {"type": "path", "max_depth": 8},
        "materials": {"black": {"type": "diffuse", "albedo": [0, 0, 0]}},
        "objects": [{"type": "rectangle", "material": "black", "emission": [1, 1, 1],
                     "transform": [{"translate": [0, 0, -3]}, {"scale": 4}]},
                    {"type": "gltf", "file": "cube.gltf"}]}
    loaded = raytrace.load_scene(scene, base_dir=tmp_path)
    return np.asarray(raytrace.render(loaded, spp=4), np.float64), loaded


@pytest.mark.parametrize("integrator", ["path", "whitted"])
def test_khr_materials_volume_absorbs(integrator, tmp_path):
    """A transmissive glTF cube (ior 1: no bending) with ``KHR_materials_volume``: what
    passes through its 2 units of thickness is attenuationColor^(2 / attenuationDistance)
    per channel; thin-walled (thicknessFactor 0) it absorbs nothing."""
    colour, distance = [0.8, 0.5, 0.2], 4.0
    vol = {"thicknessFactor": 1.0, "attenuationColor": colour, "attenuationDistance": distance}
    img, scene = _through_gltf(tmp_path, vol, integrator)
    assert scene.media is not None
    want = np.array(colour) ** (2.0 / distance)
    np.testing.assert_allclose(img, np.broadcast_to(want, img.shape), rtol=2e-3)
    thin, scene = _through_gltf(tmp_path, dict(vol, thicknessFactor=0.0), integrator)
    assert scene.media is None
    np.testing.assert_allclose(thin, 1.0, rtol=2e-3)


@pytest.mark.parametrize("volume, field", [
    ({"thicknessFactor": 1.0, "attenuationDistance": 0.0}, "attenuationDistance"),
    ({"thicknessFactor": 1.0, "attenuationDistance": -2.0}, "attenuationDistance"),
    ({"thicknessFactor": -1.0, "attenuationDistance": 1.0}, "thicknessFactor"),
    ({"thicknessFactor": 1.0, "attenuationColor": [1.5, 0, 0], "attenuationDistance": 1.0}, "attenuationColor"),
])
def test_khr_materials_volume_refuses_bad_values(volume, field, tmp_path):
    _gltf_cube(tmp_path / "cube.gltf", volume)
    with pytest.raises(SceneError) as exc:
        raytrace.load_scene(tmp_path / "cube.gltf")
    assert "cube.gltf" in str(exc.value) and f"KHR_materials_volume.{field}" in str(exc.value), str(exc.value)


# ---------------------------------------------------------------- hostile input
NAMED = [
    # (what, change to the scene dict or None, bytes of s.vol or None, words the line must name)
    ("negative sigma_t", lambda s: s["media"].update(fog={"type": "homogeneous", "sigma_t": [0.1, -0.2, 0.1]}),
     None, ["media.fog.sigma_t[1]", ">= 0"]),
    ("negative sigma_a", lambda s: s["media"].update(fog={"type": "homogeneous", "sigma_a": -1}),
     None, ["media.fog.sigma_a"]),
    ("albedo above 1", lambda s: s["media"]["smoke"].update(albedo=1.2), None, ["media.smoke.albedo", "<= 1"]),
    ("g of 1", lambda s: s["media"]["smoke"].update(phase={"type": "hg", "g": 1.0}), None,
     ["media.smoke.phase.g", "(-1, 1)"]),
    ("g below -1", lambda s: s["media"]["smoke"].update(phase={"type": "hg", "g": -1.5}), None,
     ["media.smoke.phase.g"]),
    ("unknown phase", lambda s: s["media"]["smoke"].update(phase={"type": "rayleigh"}), None,
     ["media.smoke.phase.type"]),
    ("unknown interior", lambda s: s["objects"][0].update(interior="smog"), None, ["objects[0].interior", "smog"]),
    ("unknown exterior", lambda s: s["objects"][0].update(exterior="smog"), None, ["objects[0].exterior"]),
    ("unknown world medium", lambda s: s.update(medium="smog"), None, ["medium", "smog"]),
    ("unknown camera medium", lambda s: s["camera"].update(medium="smog"), None, ["camera.medium"]),
    ("both parameterisations", lambda s: s["media"].update(fog={"type": "homogeneous", "sigma_a": 1, "sigma_t": 2}),
     None, ["media.fog.sigma_t"]),
    ("grid without a file", lambda s: s["media"]["smoke"].update(sigma_t={"type": "grid"}), None,
     ["media.smoke.sigma_t", "exactly one of"]),
    ("missing grid file", lambda s: s["media"]["smoke"].update(sigma_t={"type": "grid", "file": "no.vol"}), None,
     ["media.smoke.sigma_t.file", "not found"]),
    ("grid of another format", lambda s: s["media"]["smoke"].update(sigma_t={"type": "grid", "file": "scene.json"}),
     None, ["media.smoke.sigma_t.file"]),
    ("heterogeneous without sigma_t", lambda s: s["media"]["smoke"].pop("sigma_t"), None, ["sigma_t"]),
    ("unknown medium key", lambda s: s["media"]["smoke"].update(density=3), None, ["media.smoke", "density"]),
    ("singular grid transform", lambda s: s["media"]["smoke"].update(transform=[{"scale": [1, 0, 1]}]), None,
     ["media.smoke.transform"]),
    ("not a .vol file", None, b"PNG\x03" + bytes(60), ["s.vol", "not a Mitsuba .vol"]),
    ("vol version", None, b"VOL\x02" + bytes(60), ["s.vol", "version"]),
    ("vol encoding", None, b"VOL\x03" + np.array([2, 1, 1, 1, 1], "<i4").tobytes() + bytes(28), ["s.vol", "encoding"]),
    ("vol channels", None, b"VOL\x03" + np.array([1, 1, 1, 1, 2], "<i4").tobytes() + bytes(32), ["s.vol", "channels"]),
    ("vol zero size", None, b"VOL\x03" + np.array([1, 0, 1, 1, 1], "<i4").tobytes() + bytes(24), ["s.vol", "nx"]),
    ("vol oversize", None, b"VOL\x03" + np.array([1, 4096, 4096, 4096, 1], "<i4").tobytes() + bytes(24),
     ["s.vol", "resolution", str(MAX_VALUES)]),
    ("vol truncated", None, b"VOL\x03" + np.array([1, 2, 2, 2, 1], "<i4").tobytes() + bytes(24) + bytes(20),
     ["s.vol", "data", "bytes"]),
    ("vol header cut", None, b"VOL\x03" + bytes(10), ["s.vol", "header"]),
    ("vol NaN", None, "nan", ["s.vol", "voxel (x 1, y 0, z 0, channel 0)", "finite"]),
    ("vol negative", None, "negative", ["s.vol", "voxel", ">= 0"]),
]


def _vol_bytes(kind):
    import io
    grid = np.ones((2, 2, 2), np.float32)
    grid[0, 0, 1] = np.nan if kind == "nan" else -0.5
    buf = io.BytesIO()
    buf.write(b"VOL\x03" + np.array([1, 2, 2, 2, 1], "<i4").tobytes() + np.zeros(6, "<f4").tobytes())
    buf.write(grid.astype("<f4").tobytes())
    return buf.getvalue()


@pytest.mark.parametrize("what", [case[0] for case in NAMED])
def test_named_problem(what, tmp_path, capsys):
    _, change, vol, words = next(case for case in NAMED if case[0] == what)
    scene = _scene()
    if change is not None:
        change(scene)
    folder = _write(tmp_path / "in", scene)
    if vol is not None:
        (folder / "s.vol").write_bytes(_vol_bytes(vol) if isinstance(vol, str) else vol)
    status, err = run_case(capsys, folder, ["render", str(folder / "scene.json"), "-o", str(tmp_path / "o.pfm"),
                                            "--quiet"], words, tmp_path / "o.pfm", what)
    assert status == 2, err
    for word in words:
        assert word in err, f"{what}: {word!r} not in {err}"


def test_nan_coefficient_from_python_is_refused():
    scene = _scene(media={"smoke": {"type": "homogeneous", "sigma_t": [0.1, float("nan"), 0.1]}})
    with pytest.raises(SceneError, match=r"media\.smoke\.sigma_t\[1\]: must be a finite number"):
        raytrace.load_scene(scene)


def test_oversize_npy_is_refused_before_reading(tmp_path):
    """A .npy header claiming 2^27 voxels is refused from its header (the file holds none)."""
    header = {"descr": "<f4", "fortran_order": False, "shape": (512, 512, 512)}
    with open(tmp_path / "big.npy", "wb") as f:
        np.lib.format.write_array_header_1_0(f, header)
    scene = _scene(media={"smoke": {"type": "heterogeneous", "sigma_t": {"type": "grid", "file": "big.npy"}}})
    with pytest.raises(SceneError, match="big.npy: resolution: .* more than the limit"):
        raytrace.load_scene(scene, base_dir=tmp_path)


def test_fuzzed_vol_files_render_or_are_refused(tmp_path, capsys):
    """Mutated .vol files: rendered with a finite image or refused in one line naming the
    file, status 2, nothing written."""
    folder = _write(tmp_path / "in", _scene(), np.random.default_rng(3).random((3, 4, 5)).astype(np.float32))
    original = (folder / "s.vol").read_bytes()
    rng = random.Random("vol")
    statuses = []
    for case in range(24):
        (folder / "s.vol").write_bytes(mutate_bytes(original, rng))
        status, _ = run_case(capsys, folder, ["render", str(folder / "scene.json"), "-o", str(tmp_path / "o.pfm"),
                                              "--quiet"], ["s.vol"], tmp_path / "o.pfm", f"case {case}")
        statuses.append(status)
    assert 2 in statuses


# ---------------------------------------------------------------- compiling and threads
def test_scene_without_media_compiles_no_media_kernel():
    """Rendering a scene without media (the path tracer) compiles no function of
    ``kernels.media``: its entry points are constants for ``media=None``. Control: a render
    of a fog after them, in the same process, does compile them. (Kernels in memory only,
    so that each render compiles what it needs.)"""
    code = textwrap.dedent("""
        import sys
        import raytrace
        from numba.core.registry import CPUDispatcher
        scene = raytrace.load_scene({"camera": {"center": [0, 0, 4], "look_at": [0, 0, 0]},
                                     "lights": [{"type": "point", "position": [2, 2, 2]}],
                                     "objects": [{"type": "sphere"}]})
        raytrace.render(scene, width=4, height=4, integrator="path")
        import raytrace.kernels.media as km
        def compiled():
            return [n for n, f in vars(km).items()
                    if isinstance(f, CPUDispatcher) and f.py_func.__module__ == km.__name__ and f.signatures]
        print("-", compiled())
        fog = raytrace.load_scene({"camera": {"center": [0, 0, 4], "look_at": [0, 0, 0], "medium": "fog"},
                                   "media": {"fog": {"type": "homogeneous", "sigma_t": 0.1, "albedo": 0.5}},
                                   "lights": [{"type": "point", "position": [2, 2, 2]}],
                                   "objects": [{"type": "sphere"}]})
        raytrace.render(fog, width=4, height=4, integrator="path")
        print(len(compiled()))
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=900,
                         env=dict(os.environ, RAYTRACE_DISK_CACHE="0"))
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-2] == "- []", out.stdout
    assert int(out.stdout.strip().splitlines()[-1]) > 0, out.stdout


def test_image_depends_on_the_seed_only(tmp_path):
    """A grid medium and a chromatic fog (delta and ratio tracking, spectral MIS: numbers
    from a per-path counter): the same image on 1 and 2 threads, another with another seed."""
    import numba
    scene = _scene(image={"width": 12, "height": 12}, medium="fog",
                   lights=[{"type": "point", "position": [1.5, 2.0, 2.0], "color": [3, 3, 3]}])
    scene["media"]["fog"] = {"type": "homogeneous", "sigma_t": [0.05, 0.1, 0.2], "albedo": 0.9}
    scene["objects"][0]["exterior"] = "fog"
    folder = _write(tmp_path, scene, np.random.default_rng(5).random((4, 4, 4)).astype(np.float32))
    loaded = raytrace.load_scene(folder / "scene.json")
    before = numba.get_num_threads()
    try:
        images = []
        for threads in (1, 2):
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
            images.append(np.asarray(raytrace.render(loaded, spp=8, seed=4)))
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(images[0], images[1])
    other = np.asarray(raytrace.render(loaded, spp=8, seed=5))
    assert not np.array_equal(images[0], other)
    assert math.isfinite(float(images[0].sum()))


def test_transmittance_view_from_the_command_line(tmp_path, capsys):
    """``raytrace render --view transmittance`` writes exp(-tau) along the camera rays:
    a ray through the middle of a unit-density cube of scale 2 (its box [-1, 1]^3,
    optical depth 2 x 2 = 4) shows exp(-4) per channel; one that misses it shows 1; the
    report line names the optical depth."""
    from raytrace import cli
    from raytrace.image import read_pfm
    folder = _write(tmp_path / "in", _scene(image={"width": 9, "height": 9},
                                            camera={"center": [0, 0, 4], "look_at": [0, 0, 0], "fov": 60}))
    out = tmp_path / "t.pfm"
    assert cli.main(["render", str(folder / "scene.json"), "-o", str(out), "--view", "transmittance"]) == 0
    err = capsys.readouterr().err
    assert "optical depth" in err, err
    image = read_pfm(out)
    np.testing.assert_allclose(image[4, 4], math.exp(-4.0), rtol=2e-3)
    np.testing.assert_allclose(image[0, 0], 1.0, rtol=0, atol=1e-6)


def test_whitted_says_what_it_ignores(tmp_path, capsys):
    """A Whitted render of a scene with media ends with one note naming what the
    integrator leaves out; a scene without media, or --quiet, gets none."""
    from raytrace import cli
    folder = _write(tmp_path / "in", _scene(integrator={"type": "whitted", "bounces": 2}))
    plain = _write(tmp_path / "plain", _scene(integrator={"type": "whitted", "bounces": 2}, media={},
                                               materials={}, objects=[{"type": "sphere"}]))
    notes = []
    for scene, extra in ((folder, []), (folder, ["--quiet"]), (plain, [])):
        assert cli.main(["render", str(scene / "scene.json"), "-o", str(tmp_path / "w.pfm")] + extra) == 0
        notes.append([line for line in capsys.readouterr().err.splitlines() if "note:" in line])
    assert len(notes[0]) == 1 and "in-scattering" in notes[0][0] and "Beer-Lambert" in notes[0][0], notes
    assert notes[1] == [] and notes[2] == [], notes
