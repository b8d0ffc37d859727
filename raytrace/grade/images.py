"""Reading the images a grader compares -> :class:`GradeImage`.

Two kinds of image, kept apart on purpose:

- **LDR** (``.png``): display-referred, sRGB-encoded integer codes (8 or 16 bits per
  channel). Kept as the integer codes (exact) plus the linear values they decode to.
  Grey and grey + alpha give grey RGB; palette PNGs are expanded (Pillow). 16-bit colour
  PNGs are read with ``pypng`` (Pillow would cut them to 8 bits).
- **HDR** (``.pfm``, ``.exr``, ``.npy``, ``.npz``): linear float radiance, any range.
  A ``.npz`` holds ``mean`` (or ``image``/``color``, or a single array) and, for the
  z-test, optionally ``variance`` or ``std`` (the standard error of each pixel's mean)
  and ``spp``; an EXR's ``raytrace:spp`` header (written by ``raytrace render``) and a
  ``variance`` layer are read too.

Alpha: an alpha channel that is opaque everywhere is dropped. With transparent pixels
the caller must choose (``alpha=``): ``"ignore"`` uses the stored colour, ``"black"``
and ``"white"`` composite over that background in linear light (PNG alpha is straight,
EXR alpha premultiplied). The default, ``"error"``, refuses such a file: a silently
guessed background would grade the wrong picture.

Every problem (missing, truncated or unreadable file, an unsupported layout, NaN or
infinite values) is a :class:`~raytrace.grade.errors.GradeError` naming the file.
"""
import dataclasses
import io
import pathlib
import struct

import numpy as np
from userio.limits import MAX_IMAGE_PIXELS, check_image_size, check_int

from ..image import linear_to_srgb, srgb_to_linear
from .errors import GradeError

LDR, HDR = "ldr", "hdr"
ALPHA_POLICIES = ("error", "ignore", "black", "white")
SUFFIXES = (".png", ".pfm", ".exr", ".npy", ".npz")
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# memory a pixel takes while it is read and compared (float64 copies of colour, codes,
# variance and the metrics' temporaries): the estimate checked before decoding
_BYTES_PER_PIXEL = 96


@dataclasses.dataclass(frozen=True, eq=False)
class GradeImage:
    """One image, ready to compare.

    ``linear``: (H, W, 3) float64 linear RGB. ``kind``: ``"ldr"`` or ``"hdr"``.
    ``bits`` and ``codes`` ((H, W, 3) int64, 0 .. 2^bits - 1): the stored integer
    values of an LDR image (None for HDR). ``variance``: (H, W, 3) variance of each
    pixel's mean, when the file carries one; ``spp``: samples per pixel, when known.
    ``notes``: how the file was interpreted (alpha dropped, ...)."""
    name: str
    linear: np.ndarray
    kind: str
    bits: int = None
    codes: np.ndarray = None
    variance: np.ndarray = None
    spp: int = None
    notes: tuple = ()

    @property
    def height(self):
        return self.linear.shape[0]

    @property
    def width(self):
        return self.linear.shape[1]


def ldr_codes(linear, bits):
    """Linear values -> the integer codes our PNG writer stores: clamp to [0, 1],
    sRGB-encode, round half up to ``bits`` bits (as :func:`raytrace.image.to_8bit`)."""
    top = float((1 << bits) - 1)
    return np.floor(linear_to_srgb(np.asarray(linear, np.float64)) * top + 0.5).astype(np.int64)


def from_codes(name, codes, bits, notes=()):
    """An LDR :class:`GradeImage` from integer codes (H, W, 3)."""
    codes = np.asarray(codes, np.int64)
    linear = srgb_to_linear(codes / float((1 << bits) - 1)).astype(np.float64)
    return GradeImage(name, linear, LDR, bits=bits, codes=codes, notes=tuple(notes))


def from_array(array, name="image", variance=None, spp=None):
    """A :class:`GradeImage` from an array: uint8 / uint16 (H, W, 3) or (H, W) are LDR
    codes; floats are linear HDR radiance (a render's ``variance`` and ``info.spp`` are
    kept)."""
    a = np.asarray(array)
    if a.ndim == 2:
        a = np.repeat(a[..., None], 3, axis=2)
    if a.ndim != 3 or a.shape[2] != 3 or 0 in a.shape:
        raise GradeError(None, f"{name}: expected an (H, W, 3) or (H, W) image, got shape {a.shape}")
    if a.dtype in (np.uint8, np.uint16):
        return from_codes(name, a, 8 if a.dtype == np.uint8 else 16)
    if a.dtype.kind != "f":
        raise GradeError(None, f"{name}: unsupported pixel type {a.dtype} (use uint8, uint16 or float)")
    if variance is None:
        variance = getattr(array, "variance", None)
    if spp is None:
        spp = getattr(getattr(array, "info", None), "spp", None)
    return _hdr(name, a, variance, spp)


def _hdr(name, values, variance=None, spp=None, notes=()):
    linear = np.ascontiguousarray(values, np.float64)
    _check_finite(linear, name, "pixel")
    if variance is not None:
        variance = np.asarray(variance, np.float64)
        if variance.ndim == 2:
            variance = np.repeat(variance[..., None], 3, axis=2)
        if variance.shape != linear.shape:
            raise GradeError(None, f"variance has shape {variance.shape}, the image {linear.shape}", file=name)
        _check_finite(variance, name, "variance")
        if (variance < 0).any():
            raise GradeError(None, "variance has negative values", file=name)
    return GradeImage(name, linear, HDR, variance=variance, spp=None if spp is None else int(spp),
                      notes=tuple(notes))


def _check_finite(a, name, what):
    bad = ~np.isfinite(a)
    if bad.any():
        n = int(bad.any(axis=-1).sum()) if a.ndim == 3 else int(bad.sum())
        raise GradeError(None, f"{n} {what} value(s) are NaN or infinite", file=name)


def read_image(path, alpha="error", what="image"):
    """Read ``path`` (.png, .pfm, .exr, .npy or .npz) -> :class:`GradeImage`.
    ``alpha``: one of :data:`ALPHA_POLICIES` (see the module docs)."""
    if alpha not in ALPHA_POLICIES:
        raise ValueError(f"alpha must be one of {ALPHA_POLICIES}, got {alpha!r}")
    path = pathlib.Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise GradeError(None, f"unsupported {what} format {suffix or '(none)'!r} "
                               f"(use {', '.join(SUFFIXES)})", file=str(path))
    if not path.is_file():
        raise GradeError(None, f"{what} file not found" if not path.exists() else "is not a file",
                         file=str(path))
    data = path.read_bytes()
    reader = {".png": _read_png, ".pfm": _read_pfm, ".exr": _read_exr, ".npy": _read_npy,
              ".npz": _read_npz}[suffix]
    return reader(str(path), data, alpha)


# ---------------------------------------------------------------------------- PNG
def _png_header(name, data):
    """(width, height, bit depth, colour type) from the IHDR chunk."""
    if not data.startswith(_PNG_SIGNATURE):
        raise GradeError(None, "not a PNG file (bad signature)", file=name)
    if len(data) < 33 or data[12:16] != b"IHDR":
        raise GradeError(None, "cannot read PNG: truncated or missing header", file=name)
    width, height, bits, ctype = struct.unpack(">IIBB", data[16:26])
    if width == 0 or height == 0:
        raise GradeError(None, f"PNG has zero size ({width} x {height})", file=name)
    return width, height, bits, ctype


def _read_png(name, data, alpha):
    width, height, bits, ctype = _png_header(name, data)
    check_image_size(width, height, "the PNG", "IHDR", _BYTES_PER_PIXEL, GradeError, name)
    try:
        if bits == 16 and ctype in (2, 4, 6):          # colour or grey+alpha: Pillow cuts to 8 bits
            pixels = _decode_png16(data)
        else:
            import imageio.v3 as iio
            pixels = iio.imread(io.BytesIO(data), plugin="pillow")
    except Exception as exc:  # Pillow / pypng / zlib raise many types for broken files
        raise GradeError(None, f"cannot read PNG: {_reason(exc)}", file=name) from None
    if pixels.dtype == bool:                            # 1-bit: exactly black and white
        pixels = pixels.astype(np.uint8) * 255
    if pixels.dtype not in (np.uint8, np.uint16):
        raise GradeError(None, f"unsupported PNG pixel type {pixels.dtype}", file=name)
    depth = 16 if pixels.dtype == np.uint16 else 8
    if pixels.ndim == 2:
        pixels = pixels[..., None]
    if pixels.shape[:2] != (height, width) or pixels.shape[2] not in (1, 2, 3, 4):
        raise GradeError(None, f"cannot read PNG: unexpected decoded shape {pixels.shape}", file=name)
    channels = pixels.shape[2]
    color = pixels[..., :1].repeat(3, axis=2) if channels in (1, 2) else pixels[..., :3]
    codes = color.astype(np.int64)
    notes = []
    if channels in (2, 4):
        a = pixels[..., -1].astype(np.int64)
        top = (1 << depth) - 1
        clear = int((a < top).sum())
        if clear == 0:
            notes.append("opaque alpha channel dropped")
        elif alpha == "error":
            raise GradeError(None, f"{clear} pixel(s) are transparent (alpha < {top}); say how to treat "
                                   "them: alpha ignore, black or white (--alpha)", file=name)
        elif alpha == "ignore":
            notes.append(f"alpha ignored ({clear} transparent pixels keep their stored colour)")
        else:
            bg = 0.0 if alpha == "black" else 1.0
            w = (a / float(top))[..., None]
            lin = srgb_to_linear(codes / float(top)) * w + bg * (1.0 - w)
            codes = ldr_codes(lin, depth)
            notes.append(f"{clear} transparent pixels composited over {alpha}")
    return from_codes(name, codes, depth, notes)


def _decode_png16(data):
    import png
    w, h, rows, info = png.Reader(bytes=data).asDirect()
    planes = info["planes"]
    arr = np.vstack([np.asarray(r, np.uint16) for r in rows])
    return arr.reshape(h, w, planes)


def _reason(exc):
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text.rstrip(".:")[:160]


# ------------------------------------------------------------------- float formats
def _pfm_tokens(name, data):
    """The four header fields of a PFM file and the offset of its first pixel byte (the
    header ends with one whitespace byte after the scale)."""
    tokens, pos, end = [], 0, min(len(data), 256)
    while len(tokens) < 4:
        while pos < end and data[pos:pos + 1].isspace():
            pos += 1
        start = pos
        while pos < end and not data[pos:pos + 1].isspace():
            pos += 1
        if start == pos or pos >= len(data):
            raise GradeError(None, "cannot read PFM: truncated or malformed header", file=name)
        tokens.append(data[start:pos])
    return tokens, pos + 1


def _read_pfm(name, data, alpha):
    """PFM: ``PF`` (colour) or ``Pf`` (grey), ``W H``, scale (< 0: little-endian), rows
    bottom to top."""
    if data[:2] not in (b"PF", b"Pf"):
        raise GradeError(None, "not a PFM file (expected 'PF' or 'Pf')", file=name)
    (kind, w, h, s), start = _pfm_tokens(name, data)
    try:
        width, height, scale = int(w), int(h), float(s)
    except ValueError:
        raise GradeError(None, "PFM header: width, height and scale must be numbers", file=name) from None
    if kind not in (b"PF", b"Pf") or width <= 0 or height <= 0 or scale == 0 or not np.isfinite(scale):
        raise GradeError(None, f"PFM header: bad kind, size {width} x {height} or scale {scale}", file=name)
    check_image_size(width, height, "the PFM", "header", _BYTES_PER_PIXEL, GradeError, name)
    channels = 3 if kind == b"PF" else 1
    count = width * height * channels
    body = data[start:start + 4 * count]
    if len(body) < 4 * count:
        raise GradeError(None, f"PFM is truncated: {len(body)} of {4 * count} pixel bytes", file=name)
    arr = np.frombuffer(body, "<f4" if scale < 0 else ">f4").astype(np.float64)
    arr = arr.reshape(height, width, channels)[::-1]
    if channels == 1:
        arr = np.repeat(arr, 3, axis=2)
    return _hdr(name, arr)


def _read_exr(name, data, alpha):
    from ..film.exr import read_exr
    layers, meta = read_exr(name, error=GradeError)
    color = layers.get("color")
    if color is None:
        grey = [k for k, v in layers.items() if np.ndim(v) == 2 and k not in ("A", "variance")]
        if len(grey) != 1:
            raise GradeError(None, f"EXR has no R, G, B channels (layers: {', '.join(sorted(layers))})",
                             file=name)
        color = np.repeat(np.asarray(layers[grey[0]])[..., None], 3, axis=2)
    color = np.asarray(color, np.float64)
    notes = []
    if "A" in layers:
        a = np.asarray(layers["A"], np.float64)
        clear = int((a < 1.0).sum())
        if clear == 0:
            notes.append("opaque alpha channel dropped")
        elif alpha == "error":
            raise GradeError(None, f"{clear} pixel(s) are transparent (A < 1); say how to treat them: "
                                   "alpha ignore, black or white (--alpha)", file=name)
        elif alpha == "white":                         # EXR colour is premultiplied
            color = color + (1.0 - a)[..., None]
            notes.append(f"{clear} transparent pixels composited over white")
        else:
            notes.append(f"{clear} transparent pixels: stored (premultiplied) colour used")
    variance = layers.get("variance")
    spp = _stored_spp(meta.get("spp"), name, "raytrace:spp")
    return _hdr(name, color, variance, spp, notes)


def _stored_spp(value, name, field):
    """A sample count read from a file: None when absent, else a whole number from 1 to
    2^40 (GradeError naming the file and field otherwise: a zero or negative count would
    make the z-test's scaled variance meaningless)."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise GradeError(field, f"must be one number, got an array of shape {value.shape}", file=name)
        value = value.item()
    if isinstance(value, str) and value.strip().lstrip("+").isdigit():
        value = int(value)                    # counts beyond 32 bits are stored as text
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return check_int(value, field, 1, 2 ** 40, GradeError, name)


def _check_npy_header(name, stream, member=None):
    """Read a .npy header from ``stream`` (left where it was) and refuse a declared shape
    over the pixel limit before the array is read."""
    from ..errors import SceneError
    from ..scene.volgrid import read_npy_header      # parsed as plain values, never evaluated
    where = "header" if member is None else f"{member} header"
    pos = stream.tell()
    try:
        shape, _, dtype = read_npy_header(stream, name)
    except SceneError as exc:
        raise GradeError(where, f"cannot read .npy header: {exc.message}", file=name) from None
    stream.seek(pos)
    count = 1
    for n in shape:
        count *= int(n)
    if count * max(dtype.itemsize, 1) > MAX_IMAGE_PIXELS * 3 * 8 or count > 3 * MAX_IMAGE_PIXELS:
        raise GradeError(where, f"declares an array of shape {tuple(shape)}, more than the limit of "
                         f"{MAX_IMAGE_PIXELS} pixels", file=name)


def _read_npy(name, data, alpha):
    _check_npy_header(name, io.BytesIO(data))
    try:
        arr = np.load(io.BytesIO(data), allow_pickle=False)
    except Exception as exc:
        raise GradeError(None, f"cannot read .npy: {_reason(exc)}", file=name) from None
    return _float_array(name, arr)


def _read_npz(name, data, alpha):
    import zipfile
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            infos = [i for i in z.infolist() if i.filename.endswith(".npy")]
            for info in infos:
                with z.open(info) as member:
                    _check_npy_header(name, io.BytesIO(member.read(70000)), info.filename[:-4])
    except GradeError:
        raise
    except Exception as exc:
        raise GradeError(None, f"cannot read .npz: {_reason(exc)}", file=name) from None
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as f:
            arrays = {k: f[k] for k in f.files}
    except Exception as exc:
        raise GradeError(None, f"cannot read .npz: {_reason(exc)}", file=name) from None
    key = next((k for k in ("mean", "image", "color") if k in arrays), None)
    if key is None:
        images = [k for k, v in arrays.items() if v.ndim in (2, 3)]
        if len(images) != 1:
            raise GradeError(None, "npz: name the image array 'mean', 'image' or 'color' "
                                   f"(found {', '.join(sorted(arrays)) or 'nothing'})", file=name)
        key = images[0]
    variance = arrays.get("variance")
    if variance is None and "std" in arrays:
        variance = np.square(np.asarray(arrays["std"], np.float64))
    spp = _stored_spp(arrays.get("spp"), name, "spp")
    img = _float_array(name, arrays[key])
    return dataclasses.replace(_hdr(name, img.linear, variance, spp), notes=img.notes)


def _float_array(name, arr):
    if arr.dtype.kind not in "fiu" or arr.ndim not in (2, 3) or (arr.ndim == 3 and arr.shape[2] != 3) \
            or 0 in arr.shape:
        raise GradeError(None, f"expected an (H, W, 3) or (H, W) array of numbers, got {arr.dtype} "
                               f"{arr.shape}", file=name)
    arr = np.asarray(arr, np.float64)
    if arr.ndim == 2:
        arr = np.repeat(arr[..., None], 3, axis=2)
    return _hdr(name, arr)
