"""The benchmark scenes of ``benchmarks/bench_path.py`` (``benchmarks/bench_scenes.py``):
the glass knot mesh, and the cube map -> lat-long conversion that gives Mitsuba our sky.

The Mitsuba checks (``scalar_rgb`` only) skip when Mitsuba is not installed. They compare
Mitsuba's ``envmap`` with our cube map directly (emitter lookups) and through renders of
a mirror sphere, each with a negative control (the lat-long image turned by 90 degrees
about the vertical, or mirrored, must not pass).
"""
import importlib
import pathlib
import sys

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "tests"))

bench_scenes = importlib.import_module("bench_scenes")


@pytest.fixture(scope="module")
def faces():
    from raytrace.cubemap import load_cube_map
    return load_cube_map(bench_scenes.SKY)


@pytest.fixture(scope="module")
def latlong(faces):
    return bench_scenes.cube_map_to_latlong(faces, 1024, 512)


def mitsuba_style_lookup(image, dirs):
    """Bilinear lookup of a lat-long image the way Mitsuba's ``envmap`` does it
    (``eval_spectrum`` in ``src/emitters/envmap.cpp``: an extra column repeats the first
    one, u shifted by half a texel, rows from pole to pole), written from that source."""
    h, w = image.shape[:2]
    padded = np.concatenate([image, image[:, :1]], axis=1)           # (h, w + 1)
    d = dirs / np.linalg.norm(dirs, axis=-1, keepdims=True)
    u = np.arctan2(d[..., 0], -d[..., 2]) / (2 * np.pi)
    v = np.arccos(np.clip(d[..., 1], -1, 1)) / np.pi
    u = u - 0.5 / w
    u -= np.floor(u)
    x, y = u * w, v * (h - 1)
    ix = np.minimum(x.astype(int), w - 1)
    iy = np.minimum(y.astype(int), h - 2)
    fx, fy = (x - ix)[..., None], (y - iy)[..., None]
    return ((1 - fy) * ((1 - fx) * padded[iy, ix] + fx * padded[iy, ix + 1])
            + fy * ((1 - fx) * padded[iy + 1, ix] + fx * padded[iy + 1, ix + 1]))


def random_directions(n, seed=3):
    d = np.random.default_rng(seed).normal(size=(n, 3))
    return d / np.linalg.norm(d, axis=1, keepdims=True)


# ---------------------------------------------------------------- the mesh
def test_knot_mesh_triangle_count_closed_and_deterministic():
    v, f = bench_scenes.torus_knot()
    assert f.shape == (70_000, 3) and v.shape == (35_000, 3)
    v2, f2 = bench_scenes.torus_knot()
    assert np.array_equal(v, v2) and np.array_equal(f, f2)
    assert bench_scenes.obj_text(v, f) == bench_scenes.obj_text(v2, f2)
    # closed and consistently wound: every directed edge once, its reverse once
    edges = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    keys = edges[:, 0].astype(np.int64) * len(v) + edges[:, 1]
    rev = edges[:, 1].astype(np.int64) * len(v) + edges[:, 0]
    assert len(np.unique(keys)) == len(keys)
    assert np.array_equal(np.sort(keys), np.sort(rev))
    # outward normals (positive enclosed volume, about the tube's pi r^2 L) ...
    centre = v.reshape(-1, bench_scenes.KNOT["sides"], 3).mean(axis=1)   # the centre line
    length = np.sum(np.linalg.norm(np.roll(centre, -1, axis=0) - centre, axis=1))
    vol = bench_scenes.signed_volume(v, f)
    assert 0.9 < vol / (np.pi * bench_scenes.KNOT["tube"] ** 2 * length) < 1.1
    # ... and the tube does not run into itself
    assert bench_scenes.centreline_clearance(**bench_scenes.KNOT) > 2.5 * bench_scenes.KNOT["tube"]
    # no degenerate triangles (they would be dropped by our loader, not by Mitsuba's)
    area = np.linalg.norm(np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]]), axis=1)
    assert area.min() > 1e-4


def test_knot_obj_is_written_once(tmp_path):
    p = bench_scenes.knot_obj(tmp_path)
    mtime = p.stat().st_mtime_ns
    assert bench_scenes.knot_obj(tmp_path) == p and p.stat().st_mtime_ns == mtime
    text = p.read_text()
    assert text.count("\nf ") == 70_000 and text.count("\nv ") == 35_000


# ---------------------------------------------------------------- lat-long conversion
def test_latlong_directions_axes():
    w, h = 8, 5
    d = bench_scenes.latlong_directions(w, h)
    assert np.allclose(np.linalg.norm(d, axis=-1), 1)
    assert np.allclose(d[0, :], [0, 1, 0]) and np.allclose(d[-1, :], [0, -1, 0])
    phi = 2 * np.pi * (np.arange(w) + 0.5) / w
    assert np.allclose(d[2, :], np.stack([np.sin(phi), 0 * phi, -np.cos(phi)], -1))
    # u = 1/2: +z (our `front`), u = 1/4: +x (`right`), u = 0: -z (`back`)
    w, h = 4 * 101, 3
    d = bench_scenes.latlong_directions(w, h)
    i = lambda u: int(u * w - 0.5)          # column whose centre is nearest u   # noqa: E731
    assert np.allclose(d[1, i(0.5)], [0, 0, 1], atol=0.02)
    assert np.allclose(d[1, i(0.25)], [1, 0, 0], atol=0.02)
    assert np.allclose(d[1, i(0.75)], [-1, 0, 0], atol=0.02)


def test_latlong_matches_cube_map_lookup(faces, latlong):
    # pixel centres are our lookup itself
    dirs = bench_scenes.latlong_directions(*latlong.shape[1::-1])
    rows = [0, 100, 255, 256, 400, 511]
    assert np.allclose(latlong[rows], bench_scenes.cube_map_lookup(faces, dirs[rows]), atol=1e-6)
    # anywhere else: Mitsuba's bilinear lookup of it is our cube map up to resampling
    d = random_directions(4000)
    ours = bench_scenes.cube_map_lookup(faces, d)
    theirs = mitsuba_style_lookup(latlong, d)
    err = np.abs(theirs - ours)
    assert err.mean() < 0.002 * ours.mean()          # checker edges resample a little
    assert np.percentile(err, 99) < 0.02
    # the sky is up, the checkered ground down (gross orientation)
    up = bench_scenes.cube_map_lookup(faces, np.array([[0.0, 1.0, 0.0]]))[0]
    down = bench_scenes.cube_map_lookup(faces, np.array([[0.0, -1.0, 0.0]]))[0]
    assert up[2] > 2 * up[0] and down[0] > down[2]       # blue sky, brownish grey ground
    assert np.allclose(latlong[0].mean(axis=0), up, rtol=0.02)
    # negative controls: turned by 45 degrees about +y, or upside down, does not pass (the
    # sky is symmetric under 90-degree turns and mirroring: see the asymmetric map below)
    for wrong in (np.roll(latlong, latlong.shape[1] // 8, axis=1), latlong[::-1]):
        assert np.abs(mitsuba_style_lookup(wrong, d) - ours).mean() > 10 * err.mean()


def asymmetric_radiance(d):
    """A smooth radiance with no symmetry: any turn or mirror of the sphere changes it."""
    x, y, z = d[..., 0], d[..., 1], d[..., 2]
    return np.stack([0.45 + 0.4 * x, 0.45 + 0.35 * y + 0.1 * x * z, 0.45 + 0.35 * z + 0.1 * x * y], -1)


@pytest.fixture(scope="module")
def asym(tmp_path_factory):
    """(folder, faces, lat-long) of a cube map showing :func:`asymmetric_radiance`,
    written as PNG faces through our face layout (``raytrace.cubemap.face_directions``)."""
    import raytrace
    from raytrace.cubemap import FACES, face_directions, load_cube_map

    folder = tmp_path_factory.mktemp("cubemaps") / "asym"
    folder.mkdir()
    for k, name in enumerate(FACES):
        raytrace.save_image(folder / f"{name}.png", asymmetric_radiance(face_directions(k, 64)))
    faces = load_cube_map(folder)
    return folder, faces, bench_scenes.cube_map_to_latlong(faces, 512, 256)


def test_latlong_of_an_asymmetric_map(asym):
    _, faces, latlong = asym
    d = random_directions(2000, seed=4)
    ours = bench_scenes.cube_map_lookup(faces, d)
    assert np.abs(ours - asymmetric_radiance(d)).max() < 0.03      # 8-bit faces
    err = np.abs(mitsuba_style_lookup(latlong, d) - ours)
    assert err.max() < 0.01
    for wrong in WRONG(latlong):
        assert np.abs(mitsuba_style_lookup(wrong, d) - ours).mean() > 0.05


def WRONG(latlong):
    """Plausible orientation bugs: turned by 90 degrees, mirrored, upside down."""
    return (np.roll(latlong, latlong.shape[1] // 4, axis=1), latlong[:, ::-1], latlong[::-1])


# ---------------------------------------------------------------- against Mitsuba
@pytest.fixture(scope="module")
def mi():
    mi = pytest.importorskip("mitsuba")
    mi.set_variant("scalar_rgb")
    return mi


def _envmap_values(mi, image, dirs):
    import mitsuba_path_scenes as mps
    mi.set_variant("scalar_rgb")
    scene = mi.load_dict({"type": "scene", "env": mps.envmap_dict(image)})
    emitter = scene.emitters()[0]
    out = []
    for d in dirs:
        si = mi.SurfaceInteraction3f()
        si.wi = mi.Vector3f(*(-d))
        out.append(np.array(emitter.eval(si), np.float64)[:3])
    return np.array(out)


def test_mitsuba_envmap_is_our_cube_map(mi, faces, latlong, asym):
    d = random_directions(600, seed=5)
    ours = bench_scenes.cube_map_lookup(faces, d)
    err = np.abs(_envmap_values(mi, latlong, d) - ours)
    assert err.mean() < 0.002 * ours.mean()
    assert np.percentile(err, 99) < 0.02
    _, faces_a, latlong_a = asym
    ours = bench_scenes.cube_map_lookup(faces_a, d)
    assert np.abs(_envmap_values(mi, latlong_a, d) - ours).max() < 0.01
    for wrong in WRONG(latlong_a):
        assert np.abs(_envmap_values(mi, wrong, d) - ours).mean() > 0.05


def mirror_sphere_scene():
    return {
        "camera": {"center": [0.0, 0.4, 4.0], "look_at": [0.0, 0.0, 0.0], "fov": 50},
        "image": {"width": 48, "height": 48, "filter": "box"},
        "integrator": {"type": "path", "max_depth": 4, "rr_depth": 5},
        "background": {"cube_map": "assets/sky"},
        "materials": {"mirror": {"type": "conductor", "reflectance": [1.0, 1.0, 1.0]}},
        "objects": [{"type": "sphere", "center": [0, 0, 0], "radius": 1.2, "material": "mirror"}],
    }


def _both(scene, base, latlong, spp=32):
    import raytrace
    from mitsuba_path_scenes import mitsuba_path_scene_dict_latlong, render_mitsuba

    ours = raytrace.render(raytrace.load_scene(scene, base_dir=base), spp=spp, seed=1)

    def theirs(image):
        d = mitsuba_path_scene_dict_latlong(scene, base, image, spp=spp)
        return render_mitsuba(d, spp, seed=1)
    return ours.astype(np.float64), theirs


def _rel_diff(a, b):
    """Mean absolute difference per channel / b's channel mean."""
    return np.abs(a - b).reshape(-1, 3).mean(axis=0) / b.reshape(-1, 3).mean(axis=0)


def test_mitsuba_renders_our_sky(mi, latlong, asym, output_dir):
    """A mirror sphere in front of the environment (it shows nearly every direction),
    rendered by both: the images agree to within 2 % of the mean per channel, for the
    sky and for an asymmetric map; turned, mirrored or upside-down versions of the
    asymmetric map do not."""
    import raytrace

    def agree(name, scene, base, image):
        """Our render and Mitsuba's with ``image`` as its envmap, saved and compared."""
        ours, theirs = _both(scene, base, image)
        good = theirs(image)
        raytrace.save_image(output_dir / f"{name}_ours.png", ours)
        raytrace.save_image(output_dir / f"{name}_mitsuba.png", good)
        diff = _rel_diff(good, ours)
        assert np.all(diff < 0.02), diff
        return ours, theirs, good, diff

    scene = mirror_sphere_scene()
    ours, _, good, _ = agree("sky", scene, bench_scenes.SCENES_DIR, latlong)
    assert np.all(np.abs(good.reshape(-1, 3).mean(axis=0) / ours.reshape(-1, 3).mean(axis=0) - 1) < 0.01)

    folder, _, latlong_a = asym
    scene["background"]["cube_map"] = folder.name
    ours, theirs, _, diff = agree("asym", scene, folder.parent, latlong_a)
    for wrong in WRONG(latlong_a):
        bad = _rel_diff(theirs(wrong), ours)
        assert bad.max() > 0.1 and bad.max() > 5 * diff.max(), (bad, diff)
