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

- In-memory images: an ``image`` texture may carry ``pixels`` ((H, W, 3) float linear RGB,
  already decoded) instead of ``file``, with an optional ``key`` under which equal images
  are stored once (the glTF reader's embedded images: GLB chunks, data URIs;
  :func:`decode_image_bytes` decodes PNG/JPEG bytes for it). ``tint`` (3 linear factors)
  multiplies an image (glTF's base colour factor, MTL's ``Kd`` with ``map_Kd``). Both
  keys are filled by the file readers, not written in scene files.

Everything the kernels need is packed into two arrays: ``info`` (K, TEX_WIDTH) float64,
one row per texture, and ``texels`` (N, 3) float32 holding every image's linear texels,
row-major, one image after the other.
"""
import math
import pathlib

import numpy as np
from raytrace.jit import helper, kernel

from userio.limits import check_memory

from .errors import SceneError
from .image import _short_reason, read_rgb_image, srgb_to_linear

CHECKERBOARD, IMAGE = 0, 1
# columns of the info table
T_KIND, T_SU, T_SV, T_C0, T_C1, T_OFFSET, T_WIDTH, T_HEIGHT = 0, 1, 2, 3, 6, 9, 10, 11
TEX_WIDTH = 12


def load_texture_image(path, where):
    """Read an image file -> (H, W, 3) float32 linear RGB (decoded from sRGB)."""
    return read_rgb_image(path, where, "texture")


def decode_image_bytes(data, name, where, srgb=True, error=SceneError, file=None):
    """PNG or JPEG bytes -> (H, W, 4) float32 RGBA in [0, 1] (grey repeated to RGB; alpha 1
    when the image has none). ``srgb``: decode the colour channels from sRGB to linear
    (colour images; glTF's metallic-roughness images are linear already). ``name`` names
    the image in errors (``model.glb#images[2]`` or a file path); errors are ``error(where,
    message, file=file)``."""
    import io

    import imageio.v3 as iio
    try:
        props = iio.improps(io.BytesIO(data), plugin="pillow")
    except Exception as exc:  # imageio raises many types for bad data
        raise error(where, f"cannot read image {name}: {_short_reason(exc)}", file=file) from None
    shape = tuple(props.shape)
    if len(shape) not in (2, 3) or (len(shape) == 3 and shape[2] not in (1, 2, 3, 4)) or 0 in shape[:2]:
        raise error(where, f"image {name} is not a 2-D grey or colour image (shape {shape})", file=file)
    check_memory(shape[0] * shape[1] * 4 * 8, f"image {name} ({shape[1]} x {shape[0]})", where,
                 error=error, file=file)
    try:
        img = iio.imread(io.BytesIO(data), plugin="pillow")
    except Exception as exc:
        raise error(where, f"cannot read image {name}: {_short_reason(exc)}", file=file) from None
    if img.dtype not in (np.uint8, np.uint16):
        raise error(where, f"image {name}: unsupported pixel type {img.dtype} (use 8- or 16-bit)", file=file)
    x = img.astype(np.float64) / np.iinfo(img.dtype).max
    if x.ndim == 2:
        x = x[..., None]
    if x.shape[2] in (1, 2):                        # grey (+ alpha)
        x = np.concatenate([np.repeat(x[..., :1], 3, axis=2), x[..., 1:]], axis=2)
    if x.shape[2] == 3:
        x = np.concatenate([x, np.ones(x.shape[:2] + (1,))], axis=2)
    if srgb:
        x[..., :3] = srgb_to_linear(x[..., :3])
    return np.ascontiguousarray(x, np.float32)


class TextureTable:
    """Collects the textures of a scene while materials are read; ``add`` returns the
    texture's row. Image files are read once each, relative to ``scene_dir``; in-memory
    images (``pixels``) once per ``key``."""

    def __init__(self, scene_dir):
        self.scene_dir = pathlib.Path(scene_dir)
        self.rows = []
        self.images = []
        self._offset = 0
        self._by_file = {}
        self._means = {}

    def _store(self, key, img):
        """Append image ``img`` (H, W, 3) under ``key`` (once) -> (offset, width, height)."""
        if key not in self._by_file:
            img = np.asarray(img, np.float32)
            self._by_file[key] = (self._offset, img.shape[1], img.shape[0])
            self._means[self._offset] = img.reshape(-1, 3).mean(axis=0, dtype=np.float64)
            self.images.append(np.ascontiguousarray(img.reshape(-1, 3)))
            self._offset += img.shape[0] * img.shape[1]
        return self._by_file[key]

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
            off, w, h = self._image(spec, where)
            row[T_OFFSET], row[T_WIDTH], row[T_HEIGHT] = off, w, h
        self.rows.append(row)
        return len(self.rows) - 1

    def _image(self, spec, where):
        """Store the image of an ``image`` spec (file or ``pixels``, times ``tint``) once."""
        if "pixels" in spec:
            key = ("pixels", spec.get("key", id(spec["pixels"])))
            load = lambda: np.asarray(spec["pixels"], np.float32)  # noqa: E731
        else:
            key = path = (self.scene_dir / spec["file"]).resolve()
            load = lambda: load_texture_image(path, f"{where}.file")  # noqa: E731
        tint = spec.get("tint")
        if tint is not None:
            key = (key, tuple(float(c) for c in tint))
        if key not in self._by_file:
            img = load()
            if img.ndim != 3 or img.shape[2] != 3 or 0 in img.shape:
                raise ValueError(f"{where}: an image texture must be (H, W, 3), got {img.shape}")
            self._store(key, img if tint is None else img * np.asarray(tint, np.float32))
        return self._by_file[key]

    def average(self, k):
        """Mean linear colour of texture ``k`` (3,) (what a constant stand-in would be)."""
        row = self.rows[k]
        if row[T_KIND] == CHECKERBOARD:
            return 0.5 * (row[T_C0:T_C0 + 3] + row[T_C1:T_C1 + 3])
        return self._means[int(row[T_OFFSET])].copy()

    def arrays(self):
        """-> (info (K, TEX_WIDTH) float64, texels (N, 3) float32), both contiguous."""
        info = np.array(self.rows, np.float64).reshape(-1, TEX_WIDTH)
        texels = np.concatenate(self.images) if self.images else np.zeros((1, 3), np.float32)
        return np.ascontiguousarray(info), np.ascontiguousarray(texels, np.float32)


@helper
def _wrap(i, n):
    i = i % n
    return i + n if i < 0 else i


@kernel
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
