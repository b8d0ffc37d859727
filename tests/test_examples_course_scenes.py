"""The course-format ray-tracing scenes in examples/course/ (no ../shared needed).

They exercise the course importer (raytrace.scene.course) on files of our own: the
parsed values, nested transforms and world-space lights, paths relative to the .txt,
conversion to JSON and back, and renders checked against independent NumPy
computations (ray casting by hand, the course's shading model by hand).
"""
import json
import math
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import raytrace
from raytrace.scene.course import convert_file, parse_course_scene

REPO = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "course"
SPHERES = EXAMPLES / "spheres.txt"
PYRAMID = EXAMPLES / "pyramid.txt"


# ---------------------------------------------------------------- small helpers

def rot(axis, degrees):
    """4x4 rotation about x, y or z (right-handed, column vectors)."""
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    i, j = {"x": (1, 2), "y": (2, 0), "z": (0, 1)}[axis]
    m = np.eye(4)
    m[i, i], m[i, j], m[j, i], m[j, j] = c, -s, s, c
    return m


def translate(x, y, z):
    m = np.eye(4)
    m[:3, 3] = (x, y, z)
    return m


def scale(x, y, z):
    return np.diag([x, y, z, 1.0])


def apply(m, points):
    p = np.asarray(points, float)
    return p @ m[:3, :3].T + m[:3, 3]


def camera_rays(center, direction, up, fov, width, height):
    """Unit rays through pixel centres: fov vertical in degrees, row 0 at the top."""
    f = np.asarray(direction, float) / np.linalg.norm(direction)
    r = np.cross(f, up)
    r /= np.linalg.norm(r)
    u = np.cross(r, f)
    half = math.tan(math.radians(fov) / 2)
    y = (1 - 2 * (np.arange(height) + 0.5) / height) * half
    x = (2 * (np.arange(width) + 0.5) / width - 1) * half * width / height
    d = f + x[None, :, None] * r + y[:, None, None] * u
    return np.asarray(center, float), d / np.linalg.norm(d, axis=2, keepdims=True)


def ray_triangles(o, d, tris):
    """Nearest hit t (inf on a miss) and triangle index of rays d (..., 3) from o."""
    best = np.full(d.shape[:-1], np.inf)
    which = np.full(d.shape[:-1], -1)
    for k, (a, b, c) in enumerate(tris):
        e1, e2 = b - a, c - a
        p = np.cross(d, e2)
        det = p @ e1
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = 1.0 / det
            s = o - a
            u = (p @ s) * inv
            q = np.cross(s, e1)
            v = (d @ q) * inv
            t = (q @ e2) * inv
        hit = (np.abs(det) > 1e-12) & (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 1e-9) & (t < best)
        best = np.where(hit, t, best)
        which = np.where(hit, k, which)
    return best, which


def ray_ellipsoid(o, d, centre, axes):
    """Nearest t > 0 of rays o + t d (d (..., 3)) with an axis-aligned ellipsoid (inf on a miss)."""
    oc = (o - centre) / axes
    dd = d / axes
    a = np.sum(dd * dd, axis=-1)
    b = 2 * (dd @ oc)
    c = oc @ oc - 1
    disc = b * b - 4 * a * c
    with np.errstate(invalid="ignore"):
        root = np.sqrt(disc)
    t0, t1 = (-b - root) / (2 * a), (-b + root) / (2 * a)
    t = np.where(t0 > 1e-9, t0, np.where(t1 > 1e-9, t1, np.inf))
    return np.where(disc >= 0, t, np.inf)


def read_obj_triangles(path):
    v = [list(map(float, l.split()[1:4])) for l in path.read_text().splitlines() if l.startswith("v ")]
    f = [[int(x) - 1 for x in l.split()[1:4]] for l in path.read_text().splitlines() if l.startswith("f ")]
    return np.asarray(v)[np.asarray(f)]


# ---------------------------------------------------------------- parsing

def test_spheres_parses_to_these_values():
    s = parse_course_scene(SPHERES)
    assert s["camera"] == {"type": "perspective", "center": [0, 0.5, 8], "direction": [0, 0, -1],
                           "up": [0, 1, 0], "fov": 45}
    assert s["background"] == {"color": [0.1, 0.2, 0.3], "ambient": [0.1, 0.1, 0.1]}
    assert s["materials"] == {
        "material0": {"diffuse": [0.8, 0.1, 0.1], "specular": [0.5, 0.5, 0.5], "shininess": 10},
        "material1": {"diffuse": [0.1, 0.6, 0.2]},
        "material2": {"diffuse": [0.2, 0.3, 0.9], "specular": [0.3, 0.3, 0.3], "shininess": 40},
        "material3": {"diffuse": [0.8, 0.8, 0.8], "specular": [0.2, 0.2, 0.2], "shininess": 5},
    }
    assert s["lights"] == [
        {"type": "point", "position": [2.0, 4.5, 5.5], "color": [0.9, 0.9, 0.9], "attenuation": 0.04},
        {"type": "directional", "direction": [-1, -2, -2], "color": [0.3, 0.3, 0.3]}]
    plane, group = s["objects"]
    assert plane == {"type": "plane", "normal": [0, 1, 0], "offset": -1, "material": "material3"}
    # a node with its own object and child nodes becomes a group led by that object
    assert group == {
        "type": "group", "material": "material0", "transform": [{"translate": [0, 0.5, 0]}],
        "children": [
            {"type": "sphere", "radius": 1.5},
            {"type": "sphere", "radius": 0.6, "material": "material1",
             "transform": [{"translate": [-2, -1.2, 1]}, {"scale": [1, 0.5, 1]}]},
            {"type": "sphere", "radius": 0.7, "material": "material2",
             "transform": [{"translate": [2.2, -0.8, 0.8]}]}]}


def test_pyramid_parses_and_places_the_light_through_two_nodes():
    s = parse_course_scene(PYRAMID)
    assert s["camera"]["direction"] == [-0.6, -0.35, -0.75] and s["camera"]["fov"] == 42
    assert s["background"] == {"color": [0.5, 0.6, 0.8], "ambient": [0.15, 0.15, 0.15],
                               "cube_map": "../../scenes/assets/sky"}
    directional, point = s["lights"]
    assert directional == {"type": "directional", "direction": [-0.4, -1, -0.6], "color": [0.7, 0.7, 0.7]}
    # world = R_x(-90) T(0, 0, 6): the light at the child's origin goes to (0, 6, 0)
    np.testing.assert_allclose(point["position"], [0, 6, 0], atol=1e-12)
    np.testing.assert_allclose(point["position"], (rot("x", -90) @ translate(0, 0, 6))[:3, 3], atol=1e-12)
    assert point["attenuation"] == 0.2 and point["color"] == [4, 4, 4]
    plane, group = s["objects"]
    assert plane["type"] == "plane" and plane["material"] == "material1"
    assert group["transform"] == [{"rotate_y": 30}, {"scale": [1.5, 1.5, 1.5]}]
    assert [c["type"] for c in group["children"]] == ["mesh", "sphere", "triangle"]
    assert group["children"][0] == {"type": "mesh", "file": "models/pyramid.obj"}
    assert group["children"][2]["transform"] == [{"translate": [-1.6, 0, 0.6]}, {"rotate_z": 10},
                                                 {"rotate_x": -20}]
    assert group["children"][2]["vertices"] == [[-0.5, 0, 0], [0.5, 0, 0], [0, 1.2, 0]]


# ---------------------------------------------------------------- converting

@pytest.mark.parametrize("src", [SPHERES, PYRAMID], ids=lambda p: p.stem)
def test_convert_round_trip_renders_the_same(tmp_path, src):
    dst = tmp_path / "deeper" / f"{src.stem}.json"
    scene = convert_file(src, dst)
    assert json.loads(dst.read_text()) == scene
    from_txt = raytrace.load_scene(src)
    from_json = raytrace.load_scene(dst)
    assert from_json.data["lights"] == from_txt.data["lights"]
    a = raytrace.render(from_txt, width=40, height=30, spp=1)
    b = raytrace.render(from_json, width=40, height=30, spp=1)
    assert np.array_equal(a, b)


def test_converted_paths_point_at_the_same_files(tmp_path):
    dst = tmp_path / "elsewhere" / "pyramid.json"
    scene = convert_file(PYRAMID, dst)
    mesh = scene["objects"][1]["children"][0]["file"]
    assert not pathlib.Path(mesh).is_absolute()
    assert (dst.parent / mesh).resolve() == (EXAMPLES / "models" / "pyramid.obj").resolve()
    cube = (dst.parent / scene["background"]["cube_map"]).resolve()
    assert cube == (REPO / "scenes" / "assets" / "sky").resolve()


def test_cli_convert_and_render_with_depth_and_normals(tmp_path):
    out = tmp_path / "spheres.json"
    r = subprocess.run([sys.executable, "-m", "raytrace", "convert", str(SPHERES), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["lights"][0]["position"] == [2.0, 4.5, 5.5]
    files = [tmp_path / n for n in ("img.png", "depth.png", "normals.png")]
    r = subprocess.run([sys.executable, "-m", "raytrace", "render", str(SPHERES), "-o", str(files[0]),
                        "--size", "41", "41", "--spp", "1", "--depth", str(files[1]), "6", "12",
                        "--normals", str(files[2]), "--quiet"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    import imageio.v3 as iio
    depth, normals = iio.imread(files[1]), iio.imread(files[2])
    # centre pixel: t = 6.5 -> (6.5 - 6) / (12 - 6) = 1/12 of white; normal (0, 0, 1) -> (128, 128, 255)
    assert abs(int(np.atleast_3d(depth)[20, 20, 0]) - round(255 / 12)) <= 1
    assert np.abs(normals[20, 20, :3].astype(int) - [128, 128, 255]).max() <= 1


# ---------------------------------------------------------------- rendering, checked by hand

def shade(p, n, view, kd, ks, shininess, lights, ambient, blocked):
    """The course's model at point p: ambient k_d plus, per unblocked light,
    I (max(N.L, 0) k_d + max(L.R, 0)^s k_s), point lights I = color / (att d^2)."""
    c = ambient * kd
    r = view - 2 * (view @ n) * n
    for light, hidden in zip(lights, blocked):
        if light["type"] == "point":
            to = np.asarray(light["position"]) - p
            d2 = to @ to
            ldir, intensity = to / math.sqrt(d2), np.asarray(light["color"]) / (light["attenuation"] * d2)
        else:
            ldir = -np.asarray(light["direction"], float)
            ldir, intensity = ldir / np.linalg.norm(ldir), np.asarray(light["color"], float)
        nl = ldir @ n
        if hidden or nl <= 0:
            continue
        c = c + intensity * (nl * kd + max(ldir @ r, 0.0) ** shininess * ks)
    return c


def test_spheres_centre_pixel_by_hand():
    scene = raytrace.load_scene(SPHERES)
    t, n = raytrace.render_aovs(scene, width=101, height=101)
    # ray (0, 0.5, 8) -> (0, 0, -1) meets the red sphere (centre (0, 0.5, 0), r 1.5) at z = 1.5
    assert t[50, 50] == pytest.approx(6.5, abs=1e-9)
    assert n[50, 50] == pytest.approx([0, 0, 1], abs=1e-9)
    p, normal, view = np.array([0, 0.5, 1.5]), np.array([0, 0, 1.0]), np.array([0, 0, -1.0])
    lights = scene.data["lights"]
    kd, ks = np.array([0.8, 0.1, 0.1]), np.array([0.5, 0.5, 0.5])
    direct = shade(p, normal, view, kd, ks, 10, lights, np.array([0.1] * 3), [False, False])
    # the numbers written out: point light 6 away along (2, 4, 4)/6, N.L = L.R = 2/3,
    # I = 0.9 / (0.04 * 36); directional from (1, 2, 2)/3: N.L = L.R = 2/3, I = 0.3
    by_hand = (0.1 * kd + 0.9 / (0.04 * 36) * (2 / 3 * kd + (2 / 3) ** 10 * ks)
               + 0.3 * (2 / 3 * kd + (2 / 3) ** 10 * ks))
    np.testing.assert_allclose(direct, by_hand, rtol=1e-12)
    img0 = raytrace.render(scene, width=101, height=101, spp=1, bounces=0)
    np.testing.assert_allclose(img0[50, 50], direct, rtol=1e-5)
    # one bounce: the mirror ray (0, 0, 1) leaves the scene and adds k_s * background
    img1 = raytrace.render(scene, width=101, height=101, spp=1, bounces=1)
    np.testing.assert_allclose(img1[50, 50], direct + ks * [0.1, 0.2, 0.3], rtol=1e-5)


def segment_blocked(q, ldir, length, ellipsoids, margin):
    """Does q + s ldir, 0 < s < length, pass through an ellipsoid (centre, semi-axes)?
    Returns +1 blocked, 0 clear, -1 too close to call (within ``margin``)."""
    status = 0
    for centre, axes in ellipsoids:
        o, d = (q - centre) / axes, ldir / axes
        a, b, c = d @ d, 2 * (o @ d), o @ o - 1
        s = min(max(-b / (2 * a), 0.0), length)
        f = a * s * s + b * s + c          # smallest value of |x|^2 - 1 along the segment
        if f < -margin:
            return 1
        if f <= margin:
            status = -1
    return status


def test_spheres_floor_shading_and_shadows_by_hand():
    """Every floor pixel of a 64 x 64 render (direct light, shadows on), against the
    course's model evaluated here, with shadow rays cast against the three spheres."""
    scene = raytrace.load_scene(SPHERES)
    w = h = 64
    t, n = raytrace.render_aovs(scene, width=w, height=h)
    img = raytrace.render(scene, width=w, height=h, spp=1, bounces=0)
    origin, rays = camera_rays([0, 0.5, 8], [0, 0, -1], [0, 1, 0], 45, w, h)
    with np.errstate(divide="ignore"):
        t_floor = np.where(rays[..., 1] < 0, -1.5 / rays[..., 1], np.inf)
    # world-space spheres: group T(0, 0.5, 0); children T(-2,-1.2,1) S(1,0.5,1) r 0.6 and T(2.2,-0.8,0.8) r 0.7
    ellipsoids = [(np.array([0, 0.5, 0]), np.full(3, 1.5)),
                  (np.array([-2, -0.7, 1]), np.array([0.6, 0.3, 0.6])),
                  (np.array([2.2, -0.3, 0.8]), np.full(3, 0.7))]
    t_spheres = np.min([ray_ellipsoid(origin, rays, c, axes) for c, axes in ellipsoids], axis=0)
    floor = t_floor < t_spheres
    np.testing.assert_allclose(t[floor], t_floor[floor], rtol=1e-9)
    assert np.all(n[floor] == [0, 1, 0])
    lights = scene.data["lights"]
    kd, ks = np.array([0.8] * 3), np.array([0.2] * 3)
    checked = shadowed = 0
    for i, j in zip(*np.nonzero(floor)):
        q = origin + t_floor[i, j] * rays[i, j]
        blocked = []
        for light in lights:
            if light["type"] == "point":
                to = np.asarray(light["position"]) - q
                blocked.append(segment_blocked(q, to / np.linalg.norm(to), np.linalg.norm(to), ellipsoids, 0.05))
            else:
                ldir = -np.asarray(light["direction"], float)
                blocked.append(segment_blocked(q, ldir / np.linalg.norm(ldir), 1e3, ellipsoids, 0.05))
        if -1 in blocked:
            continue                                   # a shadow edge: too close to call
        want = shade(q, np.array([0, 1.0, 0]), rays[i, j], kd, ks, 5, lights, np.array([0.1] * 3),
                     [b == 1 for b in blocked])
        np.testing.assert_allclose(img[i, j], want, rtol=1e-4, err_msg=f"pixel {i, j}")
        checked += 1
        shadowed += any(b == 1 for b in blocked)
    assert checked > 900 and shadowed > 80, (checked, shadowed)


def test_pyramid_depth_and_normals_match_a_numpy_ray_caster():
    """Depth and normals of the whole image against rays cast here through the world-space
    geometry built by hand: group R_y(30) S(1.5) over the OBJ pyramid, a sphere and a
    triangle (T(-1.6, 0, 0.6) R_z(10) R_x(-20)), plus the floor; the triangles' world
    vertices rounded to float32, as the renderer holds them."""
    scene = raytrace.load_scene(PYRAMID)
    w, h = 80, 60
    t, n = raytrace.render_aovs(scene, width=w, height=h)
    origin, rays = camera_rays([5, 3.5, 6.5], [-0.6, -0.35, -0.75], [0, 1, 0], 42, w, h)
    group = rot("y", 30) @ scale(1.5, 1.5, 1.5)
    pyramid = read_obj_triangles(EXAMPLES / "models" / "pyramid.obj")
    assert pyramid.shape == (6, 3, 3)
    tri_local = np.array([[-0.5, 0, 0], [0.5, 0, 0], [0, 1.2, 0]])
    tris = [apply(group, tri) for tri in pyramid]
    tris.append(apply(group @ translate(-1.6, 0, 0.6) @ rot("z", 10) @ rot("x", -20), tri_local))
    # world-space vertices are held as float32 values (docs/scene-format.md)
    tris = [np.asarray(tri, np.float32).astype(np.float64) for tri in tris]
    t_tri, which = ray_triangles(origin, rays, tris)
    t_sph = ray_ellipsoid(origin, rays, apply(group, [[1.6, 0.4, 0]])[0], np.full(3, 0.6))
    with np.errstate(divide="ignore"):
        t_plane = np.where(rays[..., 1] < 0, -3.5 / rays[..., 1], np.inf)
    want = np.minimum(np.minimum(t_tri, t_sph), t_plane)
    close = np.isclose(t, want, rtol=1e-9) | (np.isinf(t) & np.isinf(want))
    assert close.mean() > 0.995, f"{(~close).sum()} pixels differ"    # edge pixels may flip
    on_pyramid = close & (t_tri <= want) & (which >= 0) & (which < 6)
    on_triangle = close & (t_tri <= want) & (which == 6)
    on_sphere = close & (t_sph <= want)
    assert on_pyramid.sum() > 300 and on_triangle.sum() > 50 and on_sphere.sum() > 50
    # flat faces (the OBJ has no normals): the outward face normal (faces are CCW)
    face_n = np.cross(np.array([b - a for a, b, c in tris]), np.array([c - a for a, b, c in tris]))
    face_n /= np.linalg.norm(face_n, axis=1, keepdims=True)
    got = n[on_pyramid]
    expected = face_n[which[on_pyramid]]
    np.testing.assert_allclose(got, expected, atol=1e-9)


def test_renders_are_finite_and_show_the_objects():
    for src, bg in ((SPHERES, [0.1, 0.2, 0.3]), (PYRAMID, None)):
        scene = raytrace.load_scene(src)
        image = raytrace.render(scene, width=48, height=36, spp=1)
        assert image.shape == (36, 48, 3) and np.isfinite(image).all() and (image >= 0).all()
        if bg is not None:
            assert (np.abs(image - bg).max(axis=2) > 0.05).mean() > 0.3
