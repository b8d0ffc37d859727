"""Thin-lens camera: points on the plane in focus stay sharp, others blur into a disk
whose diameter is the circle-of-confusion formula's, in both integrators."""
import math

import numpy as np
import pytest

import raytrace

F, R, FOV, SIZE = 5.0, 0.25, 30.0, 64


def scene(z, radius, aperture=R):
    return {
        "camera": {"center": [0, 0, 0], "direction": [0, 0, -1], "fov": FOV,
                   "aperture": aperture, "focus_distance": F},
        "integrator": {"type": "whitted"},
        "objects": [{"type": "sphere", "center": [0, 0, -z], "radius": radius, "emission": [1, 1, 1]}],
    }


def coc_radius_px(z):
    """Circle of confusion of a point at depth z, as a radius in pixels: the lens
    diameter 2R times |z - f| / z, on the plane in focus, over the pixel size there."""
    pixel = 2.0 * F * math.tan(math.radians(FOV) / 2) / SIZE
    return R * abs(z - F) / z / pixel


def spot_radius(image, sphere_px):
    """Radius of the uniform disk with the image's second moment, after removing the
    pixel footprint (1/6 px^2) and the sphere's own image (a disk, r^2 / 2)."""
    w = np.asarray(image, np.float64).mean(axis=2)
    y, x = np.mgrid[:w.shape[0], :w.shape[1]] + 0.5
    total = w.sum()
    cx, cy = (w * x).sum() / total, (w * y).sum() / total
    m2 = (w * ((x - cx) ** 2 + (y - cy) ** 2)).sum() / total
    return math.sqrt(max(0.0, 2.0 * (m2 - 1.0 / 6.0 - sphere_px ** 2 / 2.0))), (cx, cy)


def sphere_px(z, radius):
    return radius / z / (2.0 * math.tan(math.radians(FOV) / 2) / SIZE)


@pytest.mark.parametrize("integrator", ["whitted", "path"])
def test_out_of_focus_point_blurs_by_the_circle_of_confusion(integrator):
    z, radius = 2.5, 0.01
    s = raytrace.load_scene(scene(z, radius))
    # the tiny sphere is seen through about 1/600 of the lens, so a pixel's 400 samples
    # hit it once or so: one render's spot centre scatters by about 0.2 px (standard
    # deviation over 8 seeds, 2026-12-06, in this tree and before its sample allocation
    # changed); the mean of four seeds' images (1600 samples a pixel) halves that
    img = np.mean([raytrace.render(s, width=SIZE, height=SIZE, spp=400, integrator=integrator, max_depth=1,
                                   seed=seed) for seed in range(4)], axis=0)
    r, (cx, cy) = spot_radius(img, sphere_px(z, radius))
    expected = coc_radius_px(z)                           # 5.97 px
    assert abs(r - expected) < 0.04 * expected, (r, expected)
    assert abs(cx - SIZE / 2) < 0.2 and abs(cy - SIZE / 2) < 0.2, (cx, cy)
    # negative control: the same point through a pinhole is a dot (its second moment is
    # that of the few pixels it covers)
    pin = raytrace.render(raytrace.load_scene(scene(z, radius, aperture=0.0)), width=SIZE, height=SIZE,
                          spp=400, integrator=integrator, max_depth=1)
    assert spot_radius(pin, sphere_px(z, radius))[0] < 0.7 and (np.asarray(pin).max(axis=2) > 0).sum() <= 4


@pytest.mark.parametrize("integrator", ["whitted", "path"])
def test_points_on_the_plane_in_focus_stay_sharp(integrator):
    z, radius = F, 0.02
    kw = dict(width=SIZE, height=SIZE, spp=400, integrator=integrator, max_depth=1)
    img = raytrace.render(raytrace.load_scene(scene(z, radius)), **kw)
    pin = raytrace.render(raytrace.load_scene(scene(z, radius, aperture=0.0)), **kw)
    lit = lambda im: set(zip(*np.nonzero(np.asarray(im).max(axis=2) > 0)))    # noqa: E731
    assert lit(img) == lit(pin) and len(lit(pin)) <= 4          # the same few pixels
    assert abs(spot_radius(img, sphere_px(z, radius))[0] - spot_radius(pin, sphere_px(z, radius))[0]) < 0.05
    far = 10.0                                            # behind the plane in focus: blurred
    img = raytrace.render(raytrace.load_scene(scene(far, 0.04)), width=SIZE, height=SIZE, spp=400,
                          integrator=integrator, max_depth=1)
    expected = coc_radius_px(far)
    assert abs(spot_radius(img, sphere_px(far, 0.04))[0] - expected) < 0.05 * expected


def test_pinhole_images_are_unchanged_by_a_zero_aperture():
    a = raytrace.render(raytrace.load_scene(scene(3.0, 0.5, aperture=0.0)), width=16, height=16, spp=4)
    base = scene(3.0, 0.5)
    del base["camera"]["aperture"], base["camera"]["focus_distance"]
    b = raytrace.render(raytrace.load_scene(base), width=16, height=16, spp=4)
    assert np.array_equal(a, b)


def test_lens_needs_a_focus_distance_with_a_direction():
    bad = scene(3.0, 0.5)
    del bad["camera"]["focus_distance"]
    with pytest.raises(raytrace.SceneError, match="camera.focus_distance: needed with 'aperture'"):
        raytrace.load_scene(bad)
    look = scene(3.0, 0.5)
    del look["camera"]["focus_distance"], look["camera"]["direction"]
    look["camera"]["look_at"] = [0, 0, -4]
    from raytrace.camera import make_camera
    assert make_camera(raytrace.load_scene(look).data["camera"]).focus_distance == 4.0
