"""Transforms: composition order, rays into object space, normals by the inverse transpose."""
import math

import numpy as np
import pytest

import raytrace
from raytrace.errors import SceneError
from raytrace.scene.transforms import compose, to_numpy


def rot_z(deg):
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])


def test_steps_compose_left_to_right_last_acts_first():
    steps = [{"translate": [1, 2, 3]}, {"rotate_z": 30}, {"scale": [2, 0.5, 1]}]
    expected = np.eye(4)
    expected[:3, 3] = [1, 2, 3]
    expected = expected @ rot_z(30) @ np.diag([2, 0.5, 1, 1])
    assert to_numpy(compose(steps, "t")) == pytest.approx(expected, abs=1e-15)
    m = [[1, 2, 0, 4], [0, 1, 0, 5], [0, 0, 3, 6], [0, 0, 0, 1]]
    assert to_numpy(compose([{"matrix": m}], "t")) == pytest.approx(np.array(m, float))
    axis = compose([{"rotate": {"axis": [0, 0, 2], "angle": 30}}], "t")
    assert to_numpy(axis) == pytest.approx(rot_z(30), abs=1e-15)


def ellipsoid_scene(steps, group_steps=()):
    return {
        "camera": {"type": "orthographic", "center": [0, 0, 10], "direction": [0, 0, -1], "height": 6},
        "image": {"width": 64, "height": 64},
        "objects": [{"type": "group", "transform": list(group_steps), "children": [
            {"type": "sphere", "radius": 1, "transform": steps}]}],
    }


@pytest.mark.parametrize("group_steps", [(), ({"translate": [0.3, -0.2, 0.5]}, {"rotate_x": 25})])
def test_ellipsoid_hits_and_normals(group_steps):
    steps = [{"rotate_z": 30}, {"scale": [2, 0.5, 1]}]
    scene = raytrace.load_scene(ellipsoid_scene(steps, group_steps))
    t, n = raytrace.render_aovs(scene)
    m = to_numpy(compose(list(group_steps), "g")) @ rot_z(30) @ np.diag([2, 0.5, 1, 1])
    minv = np.linalg.inv(m)
    h, w = t.shape
    ys, xs = np.nonzero(np.isfinite(t))
    assert len(ys) > 300                                   # the ellipsoid covers many pixels
    px = ((xs + 0.5) / w * 2 - 1) * 3
    py = (1 - (ys + 0.5) / h * 2) * 3
    p = np.stack([px, py, 10 - t[ys, xs], np.ones_like(px)], axis=1)
    q = p @ minv.T                                          # object-space hit points
    assert np.linalg.norm(q[:, :3], axis=1) == pytest.approx(1.0, abs=1e-9)
    normal = q[:, :3] @ minv[:3, :3]                       # (M^-T q), as row vectors
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    assert n[ys, xs] == pytest.approx(normal, abs=1e-9)
    # a ray through a pixel outside the analytic silhouette misses
    miss = ~np.isfinite(t)
    assert miss.sum() + len(ys) == h * w


def test_singular_transform_is_an_error():
    with pytest.raises(SceneError, match=r"objects\[0\]\.children\[0\]\.transform: .*singular"):
        raytrace.load_scene(ellipsoid_scene([{"scale": [1, 0, 1]}]))
