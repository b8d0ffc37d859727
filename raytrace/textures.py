"""Textures on material colours: checkerboard and image textures, looked up by UV.

Conventions (Mitsuba 3's, so that scenes and textures carry over unchanged):

- ``(u, v)`` are first multiplied by the texture's ``scale = [su, sv]``.
- Image textures: ``(0, 0)`` is the **top-left** corner of the image, ``u`` runs along a
  row (left to right), ``v`` down the columns (top to bottom); one unit of ``u`` or ``v``
  spans the whole image and the image repeats outside [0, 1). Texel centres sit at
  ``(c + 0.5) / W``, ``(r + 0.5) / H``; lookups are bilinear with repeat wrap. 8- and
  16-bit PNG/JPEG are decoded from sRGB to linear RGB; grey images give grey, alpha is
  ignored. OBJ files store ``vt`` with ``v`` up, so the mesh reader flips them (``1 - v``),
  as Mitsuba does: a mesh textured in another tool looks the same here.
- Checkerboard: ``color0`` where ``frac(u) > 0.5`` equals ``frac(v) > 0.5``, else
  ``color1``: a 2 x 2 board per unit square of (scaled) UV.

Everything the kernels need is packed into two arrays: ``info`` (K, TEX_WIDTH) float64,
one row per texture, and ``texels`` (N, 3) float32 holding every image's linear texels,
row-major, one image after the other.
"""
import math
import pathlib

import numpy as np
from numba import njit

from .image import read_rgb_image

CHECKERBOARD, IMAGE = 0, 1
# columns of the info table
T_KIND, T_SU, T_SV, T_C0, T_C1, T_OFFSET, T_WIDTH, T_HEIGHT = 0, 1, 2, 3, 6, 9, 10, 11
TEX_WIDTH = 12


def load_texture_image(path, where):
    """Read an image file -> (H, W, 3) float32 linear RGB (decoded from sRGB)."""
    return read_rgb_image(path, where, "texture")


class TextureTable:
    """Collects the textures of a scene while materials are read; ``add`` returns the
    texture's row. Image files are read once each, relative to ``scene_dir``."""

    def __init__(self, scene_dir):
        self.scene_dir = pathlib.Path(scene_dir)
        self.rows = []
        self.images = []
        self._offset = 0
        self._by_file = {}

    def add(self, spec, where):
        row = np.zeros(TEX_WIDTH)
        su, sv = spec.get("scale", [1.0, 1.0])
        row[T_SU], row[T_SV] = su, sv
        if spec["type"] == "checkerboard":
            row[T_KIND] = CHECKERBOARD
            row[T_C0:T_C0 + 3] = spec.get("color0", [0.4, 0.4, 0.4])
            row[T_C1:T_C1 + 3] = spec.get("color1", [0.2, 0.2, 0.2])
        else:
            row[T_KIND] = IMAGE
            path = (self.scene_dir / spec["file"]).resolve()
            if path not in self._by_file:
                img = load_texture_image(path, f"{where}.file")
                self._by_file[path] = (self._offset, img.shape[1], img.shape[0])
                self.images.append(img.reshape(-1, 3))
                self._offset += img.shape[0] * img.shape[1]
            off, w, h = self._by_file[path]
            row[T_OFFSET], row[T_WIDTH], row[T_HEIGHT] = off, w, h
        self.rows.append(row)
        return len(self.rows) - 1

    def average(self, k):
        """Mean linear colour of texture ``k`` (3,) (what a constant stand-in would be)."""
        row = self.rows[k]
        if row[T_KIND] == CHECKERBOARD:
            return 0.5 * (row[T_C0:T_C0 + 3] + row[T_C1:T_C1 + 3])
        off, n = int(row[T_OFFSET]), int(row[T_WIDTH] * row[T_HEIGHT])
        return np.concatenate(self.images)[off:off + n].mean(axis=0).astype(np.float64)

    def arrays(self):
        """-> (info (K, TEX_WIDTH) float64, texels (N, 3) float32), both contiguous."""
        info = np.array(self.rows, np.float64).reshape(-1, TEX_WIDTH)
        texels = np.concatenate(self.images) if self.images else np.zeros((1, 3), np.float32)
        return np.ascontiguousarray(info), np.ascontiguousarray(texels, np.float32)


@njit(cache=True, inline="always")
def _wrap(i, n):
    i = i % n
    return i + n if i < 0 else i


@njit(cache=True)
def texture_rgb(info, texels, k, u, v):
    """Linear RGB of texture ``k`` at texture coordinates ``(u, v)`` -> (r, g, b)."""
    if not (math.isfinite(u) and math.isfinite(v)):
        u, v = 0.0, 0.0
    su = u * info[k, T_SU]
    sv = v * info[k, T_SV]
    if info[k, T_KIND] == CHECKERBOARD:
        mu = su - np.floor(su) > 0.5
        mv = sv - np.floor(sv) > 0.5
        c = T_C0 if mu == mv else T_C1
        return info[k, c], info[k, c + 1], info[k, c + 2]
    off = int(info[k, T_OFFSET])
    w = int(info[k, T_WIDTH])
    h = int(info[k, T_HEIGHT])
    fx = su * w - 0.5
    fy = sv * h - 0.5
    x0f = np.floor(fx)
    y0f = np.floor(fy)
    a = fx - x0f
    b = fy - y0f
    # reduce before converting (a float remainder is exact): huge coordinates must not
    # overflow the integer
    x0 = _wrap(int(x0f % w), w)
    y0 = _wrap(int(y0f % h), h)
    x1 = _wrap(x0 + 1, w)
    y1 = _wrap(y0 + 1, h)
    i00 = off + y0 * w + x0
    i01 = off + y0 * w + x1
    i10 = off + y1 * w + x0
    i11 = off + y1 * w + x1
    w00 = (1.0 - a) * (1.0 - b)
    w01 = a * (1.0 - b)
    w10 = (1.0 - a) * b
    w11 = a * b
    r = w00 * texels[i00, 0] + w01 * texels[i01, 0] + w10 * texels[i10, 0] + w11 * texels[i11, 0]
    g = w00 * texels[i00, 1] + w01 * texels[i01, 1] + w10 * texels[i10, 1] + w11 * texels[i11, 1]
    bl = w00 * texels[i00, 2] + w01 * texels[i01, 2] + w10 * texels[i10, 2] + w11 * texels[i11, 2]
    return r, g, bl
