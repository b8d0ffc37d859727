"""The cube-map face orientations documented in docs/scene-format.md ("Cube maps"),
checked against the lookup and against whole renders.

For each face: the world direction it faces, and the world directions of its image's
+u (left to right) and +v (top to bottom) axes, as the table in the docs states them.
"""
import imageio.v3 as iio
import numpy as np
import pytest

import raytrace
from raytrace.cubemap import FACES, cube_lookup, load_cube_map
from raytrace.image import read_rgb_image

# face -> (faces towards, image right = +u, image down = +v): the documented table
DOCUMENTED = {
    "left": ((-1, 0, 0), (0, 0, -1), (0, -1, 0)),
    "right": ((1, 0, 0), (0, 0, 1), (0, -1, 0)),
    "up": ((0, 1, 0), (1, 0, 0), (0, 0, -1)),
    "down": ((0, -1, 0), (1, 0, 0), (0, 0, 1)),
    "front": ((0, 0, 1), (-1, 0, 0), (0, -1, 0)),
    "back": ((0, 0, -1), (1, 0, 0), (0, -1, 0)),
}
# the course's own lookup: `back` mirrored left-right, `down` top-bottom (not copied)
COURSE = dict(DOCUMENTED, back=((0, 0, -1), (-1, 0, 0), (0, -1, 0)),
              down=((0, -1, 0), (1, 0, 0), (0, 0, -1)))
S = 8


def texel_direction(table, name, r, c, size=S):
    """World direction through the centre of texel (row r from the top, column c from
    the left) of face ``name`` under ``table``; the face sits at distance 1."""
    n, right, down = (np.array(v, float) for v in table[name])
    return n + right * ((2 * c + 1) / size - 1) + down * ((2 * r + 1) / size - 1)


def mismatches(faces, table):
    """Texels whose documented direction does not look up their own colour."""
    bad = 0
    for f, name in enumerate(FACES):
        for r in range(S):
            for c in range(S):
                got = cube_lookup(faces, *texel_direction(table, name, r, c))
                bad += not np.allclose(got, faces[f, r, c], atol=1e-6)
    return bad


@pytest.fixture(scope="module")
def faces():
    return np.random.default_rng(7).uniform(0, 1, (6, S, S, 3)).astype(np.float32)


def unmirrored(table):
    """Faces whose image, seen from inside, reads like a camera's view: image right =
    forward x image up (the camera's convention), forward = where the face faces."""
    return [name for name, (n, right, down) in table.items()
            if np.array_equal(np.cross(n, np.negative(down)), right)]


def test_no_face_is_mirrored_when_seen_from_inside():
    assert unmirrored(DOCUMENTED) == list(DOCUMENTED)
    assert sorted(set(DOCUMENTED) - set(unmirrored(COURSE))) == ["back", "down"]   # control


def test_documented_orientation_matches_the_lookup(faces):
    assert mismatches(faces, DOCUMENTED) == 0
    # each corner explicitly: towards the image's top-left region, the top-left texel
    for f, name in enumerate(FACES):
        n, right, down = (np.array(v, float) for v in DOCUMENTED[name])
        top_left = n - 0.9 * right - 0.9 * down        # inside the top-left texel (1/8 wide)
        assert cube_lookup(faces, *top_left) == pytest.approx(faces[f, 0, 0], abs=1e-6), name
        bottom_right = n + 0.9 * right + 0.9 * down
        assert cube_lookup(faces, *bottom_right) == pytest.approx(faces[f, -1, -1], abs=1e-6), name


def test_negative_control_the_courses_mirrored_faces_do_not_match(faces):
    # the back face mirrored left-right and the down face top-bottom: every texel of
    # those two faces lands elsewhere (S even: no texel is its own mirror image)
    assert mismatches(faces, COURSE) == 2 * S * S


def write_cube_map(folder):
    """Six PNG faces of random colours (each texel its own colour) -> the folder."""
    rng = np.random.default_rng(11)
    for name in FACES:
        iio.imwrite(folder / f"{name}.png", rng.integers(0, 256, (S, S, 3), dtype=np.uint8))
    return folder


def render_view(folder, direction, up):
    scene = raytrace.load_scene({
        "camera": {"center": [0, 0, 0], "direction": list(direction), "up": list(up), "fov": 90},
        "background": {"cube_map": str(folder)},
        "image": {"width": S, "height": S},
        "integrator": {"type": "whitted"},
    })
    return np.asarray(raytrace.render(scene, spp=1))


def test_a_render_from_the_centre_shows_each_face_image_upright(tmp_path):
    # A 90-degree camera at the centre, looking where the face faces with its up along
    # the image's -v, puts pixel centres on texel centres: the render is the face's
    # image, texel for texel, read from the file of that name.
    folder = write_cube_map(tmp_path)
    faces = load_cube_map(folder)
    for f, name in enumerate(FACES):
        n, right, down = DOCUMENTED[name]
        image = render_view(folder, n, [-x for x in down])
        decoded = read_rgb_image(folder / f"{name}.png")
        np.testing.assert_allclose(image, faces[f], atol=1e-6, err_msg=name)
        np.testing.assert_allclose(image[0, 0], decoded[0, 0], atol=1e-6, err_msg=name)
    # negative control: the camera turned upside down sees the image rotated by 180
    # degrees, which differs from it
    image = render_view(folder, DOCUMENTED["back"][0], (0, -1, 0))
    assert not np.allclose(image, faces[FACES.index("back")], atol=1e-3)
    np.testing.assert_allclose(image, faces[FACES.index("back")][::-1, ::-1], atol=1e-6)
