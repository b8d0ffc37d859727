"""Cube maps: six face images in one folder, looked up by direction.

Faces follow the course's layout and names (``left right up down front back``); ``+z``
is ``front``, ``+y`` is ``up``, ``+x`` is ``right``. Each face is a PNG (8 or 16 bit,
decoded from sRGB to linear radiance: the course's LDR maps) or a float image, ``.exr``
or Radiance ``.hdr`` (linear radiance, read by ``raytrace.envmap``: finite, >= 0); a
folder may mix them, but a face may have only one file. Lookups are bilinear, clamped
at face edges.

The face orientations are the ones under which neighbouring faces meet without a seam
(checked on the course's church map by ``tests/test_cubemap.py``). The course's own
lookup mirrors the ``back`` face left-right and the ``down`` face top-bottom relative to
this, which shows as seams; we do not reproduce that.
"""
import pathlib

import numpy as np
from raytrace.jit import unit, kernel

from .errors import SceneError
from .image import read_rgb_image

FACES = ("left", "right", "up", "down", "front", "back")
LEFT, RIGHT, UP, DOWN, FRONT, BACK = range(6)


FACE_FORMATS = (".png", ".exr", ".hdr")


def load_cube_map(folder, where="background.cube_map"):
    """-> (6, S, S, 3) float32 linear, face order as in FACES. Faces must be square and
    of one size; a face is ``NAME.png`` (any grey or colour PNG, 8 or 16 bit, alpha
    ignored), ``NAME.exr`` or ``NAME.hdr`` (float, linear)."""
    from .envmap import read_environment_image

    folder = pathlib.Path(folder)
    if not folder.is_dir():
        raise SceneError(where, f"cube map folder not found: {folder}")
    faces = []
    for name in FACES:
        # exists(), not is_file(): a FIFO or a folder named like a face is found, and its
        # reader says what it is instead of "missing"
        found = [folder / f"{name}{ext}" for ext in FACE_FORMATS if (folder / f"{name}{ext}").exists()]
        if not found:
            raise SceneError(where, f"cube map face missing: {folder / name}.png (or .exr, .hdr)")
        if len(found) > 1:
            raise SceneError(where, f"cube map face {name} is ambiguous: {found[0].name} and {found[1].name} "
                                    f"in {folder}")
        p = found[0]
        if p.suffix == ".png":
            img = read_rgb_image(p, where, "cube map face")
        else:
            img = read_environment_image(p, where, "cube map face")
        if img.shape[0] != img.shape[1]:
            raise SceneError(where, f"cube map face {p} is not square ({img.shape[1]} x {img.shape[0]})")
        if faces and img.shape != faces[0][1].shape:
            raise SceneError(where, f"cube map faces differ in size: {p} is {img.shape[1]} x {img.shape[0]}, "
                                    f"{faces[0][0]} {faces[0][1].shape[1]} x {faces[0][1].shape[0]}")
        faces.append((p, img))
    return np.ascontiguousarray(np.stack([img for _, img in faces]), np.float32)


@unit     # LLVM inlines it: as a call it took 8 % of the glass knot render
def texel_rgb(faces, face, x, y):
    """Bilinear lookup -> (r, g, b); x, y in [0, 1] with y = 1 at the top edge of the image.

    Texel centres sit at (c + 0.5) / w, so a face is sampled symmetrically."""
    h, w = faces.shape[1], faces.shape[2]
    fx = x * w - 0.5
    fy = (1.0 - y) * h - 0.5
    ix = int(np.floor(fx))
    iy = int(np.floor(fy))
    a = fx - ix
    b = fy - iy
    r0 = 0.0
    r1 = 0.0
    r2 = 0.0
    for dy in range(2):
        yy = min(max(iy + dy, 0), h - 1)
        wy = b if dy == 1 else 1.0 - b
        for dx in range(2):
            xx = min(max(ix + dx, 0), w - 1)
            wgt = wy * (a if dx == 1 else 1.0 - a)
            r0 += wgt * faces[face, yy, xx, 0]
            r1 += wgt * faces[face, yy, xx, 1]
            r2 += wgt * faces[face, yy, xx, 2]
    return r0, r1, r2


@kernel
def cube_face_xy(dx, dy, dz):
    """Face index and position (x, y) in [0, 1]^2 on it (y = 1 at the top) of direction d."""
    ax, ay, az = abs(dx), abs(dy), abs(dz)
    if ax >= ay and ax >= az:
        if dx > 0:
            return RIGHT, (dz / dx + 1) * 0.5, (dy / dx + 1) * 0.5
        return LEFT, (dz / dx + 1) * 0.5, 1 - (dy / dx + 1) * 0.5
    if ay >= ax and ay >= az:
        if dy > 0:
            return UP, (dx / dy + 1) * 0.5, (dz / dy + 1) * 0.5
        return DOWN, 1 - (dx / dy + 1) * 0.5, (dz / dy + 1) * 0.5
    if dz > 0:
        return FRONT, 1 - (dx / dz + 1) * 0.5, (dy / dz + 1) * 0.5
    return BACK, 1 - (dx / dz + 1) * 0.5, 1 - (dy / dz + 1) * 0.5


@kernel
def face_xy_direction(face, x, y):
    """Inverse of :func:`cube_face_xy`: the (not normalised) direction through (x, y) of
    ``face``, with a = 2x - 1, b = 2y - 1 in [-1, 1] (the face sits at distance 1)."""
    a = 2.0 * x - 1.0
    b = 2.0 * y - 1.0
    if face == RIGHT:
        return 1.0, b, a
    if face == LEFT:
        return -1.0, b, -a
    if face == UP:
        return a, 1.0, b
    if face == DOWN:
        return a, -1.0, -b
    if face == FRONT:
        return -a, b, 1.0
    return a, b, -1.0


@unit     # (see texel_rgb)
def cube_rgb(faces, dx, dy, dz):
    """Radiance (r, g, b) seen in direction (dx, dy, dz) (need not be unit)."""
    face, x, y = cube_face_xy(dx, dy, dz)
    return texel_rgb(faces, face, x, y)


@kernel
def cube_lookup(faces, dx, dy, dz):
    """Radiance (3,) array seen in direction (dx, dy, dz) (need not be unit)."""
    r = np.empty(3)
    r[0], r[1], r[2] = cube_rgb(faces, dx, dy, dz)
    return r


def face_directions(face, size):
    """Unit directions through the texel centres of one face, (size, size, 3), row 0 on top.

    The inverse of :func:`cube_lookup`: looking up ``face_directions(f, n)[r, c]`` lands
    on texel ``(r, c)`` of face ``f``."""
    x = (np.arange(size) + 0.5) / size              # columns, left to right
    y = 1.0 - (np.arange(size) + 0.5) / size        # rows, top row is y near 1
    X, Y = np.meshgrid(x, y)
    a, b, one = 2 * X - 1, 2 * Y - 1, np.ones_like(X)
    d = {
        RIGHT: (one, b, a), LEFT: (-one, b, -a), UP: (a, one, b),
        DOWN: (a, -one, -b), FRONT: (-a, b, one), BACK: (a, b, -one),
    }[face]
    d = np.stack(d, axis=-1)
    return d / np.linalg.norm(d, axis=-1, keepdims=True)
