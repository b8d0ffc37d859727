"""Triangles are held in float32 (the BVH's blocks, as in Mitsuba and Embree), and the
scene builder rounds the world vertices once so that shading and light sampling see
exactly the triangles the traversal tests."""
import numpy as np
import pytest

import raytrace
from raytrace.accel import build_accel
from raytrace.accel.build import ID_ROW, TRI_ROWS, BLOCK
from raytrace.scene import build as scene_build

SHIFT = 1000.1          # scene coordinates where float32's spacing is 6.1e-5


def lit_floor(shift, light_z):
    """A 2 x 2 floor at z = shift, a small downward-facing light above it, seen from the
    side; direct light only (max_depth 2)."""
    c = [shift, shift, shift]
    return {
        "camera": {"center": [shift, shift - 3.0, shift + 2.0], "look_at": c, "fov": 40},
        "image": {"width": 24, "height": 24, "spp": 32},
        "integrator": {"type": "path", "max_depth": 2},
        "background": {"color": [0, 0, 0]},
        "materials": {"white": {"type": "diffuse", "albedo": [0.8, 0.8, 0.8]}},
        "objects": [
            {"type": "rectangle", "material": "white", "transform": [{"translate": c}]},
            {"type": "rectangle", "material": "white", "emission": [20, 20, 20],
             "transform": [{"translate": [shift, shift, light_z]}, {"rotate_x": 180},
                           {"scale": [0.15, 0.15, 1.0]}]},
        ],
    }


def light_height():
    """A light height 0.3 above the shifted floor whose float32 value lies below it (so a
    light copy rounded on its own would sit in the way of shadow rays to the exact one)."""
    z = SHIFT + 0.3
    while not float(np.float32(z)) < z - 1e-5:
        z += 1.3e-5
    return z


def floor_mean(shift, light_z):
    img = raytrace.render(raytrace.load_scene(lit_floor(shift, light_z)))
    return float(np.asarray(img).mean())


def test_blocks_are_float32_with_int32_ids():
    rng = np.random.default_rng(0)
    v = rng.uniform(-1, 1, (50, 3, 3)) + 1000.1
    acc = build_accel(v[:, 0], v[:, 1], v[:, 2], np.zeros((0, 3, 4)), np.zeros((0, 3)),
                      np.zeros((0, 3)))
    assert acc.tris.dtype == np.float32 and acc.tris.shape[1:] == (TRI_ROWS, BLOCK)
    assert acc.tris[0].nbytes == 160
    ids = acc.tris_i[:, ID_ROW].ravel()
    assert sorted(ids[ids >= 0].tolist()) == list(range(50))
    # the blocks' vertices are the given ones rounded to float32, triangle by triangle
    lanes = acc.tris[:, :9].transpose(0, 2, 1).reshape(-1, 3, 3)[ids >= 0]
    np.testing.assert_array_equal(lanes, v[ids[ids >= 0]].astype(np.float32))


def test_scene_vertices_are_the_bvh_vertices():
    """The scene's vertices are float32 values already, so ``build_accel``'s rounding
    leaves them as they are: the blocks hold the very triangles shading sees."""
    scene = raytrace.load_scene(lit_floor(SHIFT, light_height()))
    geo = scene.geometry
    for v in (geo.tri_v0, geo.tri_v1, geo.tri_v2):
        assert v.dtype == np.float64
        np.testing.assert_array_equal(v, v.astype(np.float32).astype(np.float64))
    ids = scene.accel.tris_i[:, ID_ROW].ravel()
    lanes = scene.accel.tris[:, :9].transpose(0, 2, 1).reshape(-1, 3, 3)[ids >= 0]
    held = np.stack([geo.tri_v0, geo.tri_v1, geo.tri_v2], axis=1)[ids[ids >= 0]]
    np.testing.assert_array_equal(lanes.astype(np.float64), held)


@pytest.fixture(scope="module")
def reference_mean():
    return floor_mean(0.0, 0.3)


def test_lights_far_from_the_origin_are_not_shadowed_by_themselves(reference_mean):
    """The same lit floor near the origin and 1000 units away gives the same picture."""
    shifted = floor_mean(SHIFT, light_height())
    assert reference_mean > 0.05
    assert shifted == pytest.approx(reference_mean, rel=0.03)


def test_negative_control_unrounded_scene_vertices_shadow_their_own_light(reference_mean,
                                                                          monkeypatch):
    """With the scene's vertices left in float64, the light the shadow rays aim at is not
    the float32 one the BVH tests, which lies in their way: the floor goes dark."""
    monkeypatch.setattr(scene_build, "float32_vertices", lambda w: np.asarray(w, np.float64))
    shifted = floor_mean(SHIFT, light_height())
    assert shifted < 0.7 * reference_mean
