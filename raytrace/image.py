"""Film output: colour encodings and atomic image writers.

Render results are (H, W, 3) float32 **linear** radiance, row 0 at the top.
- ``.png``: 8-bit. ``encoding="srgb"`` (default) applies the sRGB transfer curve after
  clamping to [0, 1]; ``encoding="linear"`` writes the clamped values as they are (the
  course's raw clamp).
- ``.pfm``: 32-bit float, linear, unclamped (HDR). Portable Float Map, little-endian,
  bottom row first as the format requires.
- ``.exr``: OpenEXR, 32-bit float, linear, with the render's ``info`` in the header
  (:mod:`raytrace.film.exr`).
Every file is written to a temporary name in the target folder and then renamed, so a
failed or interrupted write never leaves a partial file.
"""
import dataclasses
import io
import pathlib

import numpy as np
from userio.outputs import write_bytes_atomic

ENCODINGS = ("srgb", "linear")
FORMATS = (".png", ".pfm", ".exr")
FLOAT_FORMATS = (".pfm", ".exr")


@dataclasses.dataclass(frozen=True)
class RenderInfo:
    """How a rendered image was made."""
    integrator: str          # "whitted" or "path"
    width: int
    height: int
    spp: int                 # samples per pixel in the image (passes done, path tracer)
    spp_requested: int
    seed: int
    nonfinite: int           # samples that came out NaN or inf and were dropped (0 expected)
    seconds: float           # wall time of the render call, less compile_seconds
    compile_seconds: float = 0.0   # time spent compiling kernels during it (a first run)
    spp_mean: float = None   # mean samples per pixel (adaptive sampling: below spp); None: spp
    stopped_by: str = ""     # why a path-traced render ended: "spp", "noise", "time" (or "")
    capped: int = 0          # pixels with a path cut at the media step cap (layout.MAX_NULL_COLLISIONS)

    def __post_init__(self):
        if self.spp_mean is None:
            object.__setattr__(self, "spp_mean", float(self.spp))   # frozen dataclass


class RenderedImage(np.ndarray):
    """A rendered image: an ordinary (H, W, 3) float32 array of linear radiance with
    ``info`` (:class:`RenderInfo`) and, when asked for, ``variance`` ((H, W, 3), the
    variance of each pixel's mean) and ``aovs`` (name -> array, see
    :func:`raytrace.render`); ``capped``: for a path-traced scene with media, (H, W)
    int64 counts of the samples whose path reached the media step cap (they count as 0,
    ``info.capped`` is how many pixels have any), else None. Views keep them; arithmetic
    on the image gives plain arrays (the result is no longer the render)."""

    def __new__(cls, array, info):
        obj = np.asarray(array, np.float32).view(cls)
        obj.info = info
        obj.variance = None
        obj.aovs = {}
        obj.capped = None
        return obj

    def __array_finalize__(self, obj):
        self.info = getattr(obj, "info", None)
        self.variance = getattr(obj, "variance", None)
        self.aovs = getattr(obj, "aovs", {})
        self.capped = getattr(obj, "capped", None)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        out = np.asarray(array)
        if return_scalar and out.ndim == 0:
            return out[()]
        return out

    def _repr_png_(self):
        """Jupyter shows a render as this PNG: sRGB, at most PREVIEW_MAX pixels a side."""
        if self.ndim != 3 or self.shape[2] != 3 or 0 in self.shape:
            return None
        return preview_png(self)


PREVIEW_MAX = 1024     # longest side of a notebook preview, pixels


def preview_png(image, max_size=PREVIEW_MAX, encoding="srgb"):
    """PNG bytes of a (H, W, 3) linear image for display: shrunk by an integer factor (box
    average of linear values) until no side exceeds ``max_size``, then encoded."""
    import imageio.v3 as iio      # here, not at the top: the CLI's --help stays light
    img = np.asarray(image, np.float32)
    k = max(1, min(-(-max(img.shape[:2]) // max_size), min(img.shape[:2])))   # ceil(side / max)
    if k > 1:
        h, w = img.shape[0] // k * k, img.shape[1] // k * k
        img = np.nan_to_num(img[:h, :w], nan=0.0).reshape(h // k, k, w // k, k, 3).mean(axis=(1, 3))
    buf = io.BytesIO()
    iio.imwrite(buf, to_8bit(img, encoding), extension=".png")
    return buf.getvalue()


def linear_to_srgb(x):
    """sRGB transfer function (IEC 61966-2-1) on values clamped to [0, 1]."""
    x = np.clip(x, 0.0, 1.0)
    return np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, 1 / 2.4) - 0.055)


def srgb_to_linear(x):
    """Inverse of :func:`linear_to_srgb` for values in [0, 1]."""
    x = np.asarray(x)
    return np.where(x <= 0.04045, x / 12.92, np.power((x + 0.055) / 1.055, 2.4))


def to_8bit(image, encoding="srgb"):
    """(H, W, 3) float linear -> (H, W, 3) uint8 with the chosen encoding."""
    if encoding not in ENCODINGS:
        raise ValueError(f"encoding must be one of {ENCODINGS}, got {encoding!r}")
    x = np.nan_to_num(np.asarray(image, np.float64), nan=0.0, posinf=1.0, neginf=0.0)
    x = linear_to_srgb(x) if encoding == "srgb" else np.clip(x, 0.0, 1.0)
    return (x * 255.0 + 0.5).astype(np.uint8)


def pfm_bytes(image):
    """Encode (H, W, 3) or (H, W) float as PFM bytes."""
    img = np.asarray(image, np.float32)
    color = img.ndim == 3
    h, w = img.shape[:2]
    header = f"{'PF' if color else 'Pf'}\n{w} {h}\n-1.0\n".encode("ascii")
    return header + np.ascontiguousarray(img[::-1]).astype("<f4").tobytes()


def read_pfm(path, error=None):
    """Read a PFM file written by :func:`pfm_bytes` (or any PFM) -> float32 array, row 0 on top.
    A malformed or truncated file, or one declaring more than
    :data:`userio.limits.MAX_IMAGE_PIXELS` pixels, raises ``error`` (default SceneError)
    naming ``path``."""
    from userio.limits import check_image_size

    from .errors import SceneError
    error = SceneError if error is None else error
    data = pathlib.Path(path).read_bytes()
    parts = data.split(b"\n", 3)
    try:
        kind, dims, scale, body = parts[0].strip(), parts[1].split(), float(parts[2]), parts[3]
        w, h = int(dims[0]), int(dims[1])
        if kind not in (b"PF", b"Pf") or len(dims) != 2 or not np.isfinite(scale) or scale == 0:
            raise ValueError
    except (ValueError, IndexError):
        raise error("header", "not a PFM file (expected 'PF' or 'Pf', width height, scale)",
                    file=str(path)) from None
    check_image_size(w, h, "the PFM", "header", bytes_per_pixel=24, error=error, file=str(path))
    ch = 3 if kind == b"PF" else 1
    if len(body) < 4 * w * h * ch:
        raise error(None, f"PFM is truncated: {len(body)} of {4 * w * h * ch} pixel bytes", file=str(path))
    arr = np.frombuffer(body, dtype="<f4" if scale < 0 else ">f4", count=w * h * ch)
    arr = arr.reshape((h, w, ch) if ch == 3 else (h, w))[::-1]
    return np.ascontiguousarray(arr.astype(np.float32))


def atomic_write_bytes(path, data):
    """Write ``data`` to ``path`` via a temporary file in the same folder and a rename
    (errors name ``path``, never the temporary)."""
    write_bytes_atomic(path, data)


def _short_reason(exc):
    """The first sentence of an image library's error (its root cause, without install
    advice)."""
    while exc.__cause__ is not None or (exc.__context__ is not None and "unknown error" in str(exc)):
        exc = exc.__cause__ or exc.__context__
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if text.startswith("Could not find a backend"):
        return "not an image file imageio can read (PNG or JPEG)"
    for cut in (" Based on the extension", " Please ", ". pip ", " (pip install"):
        text = text.split(cut)[0]
    return text.rstrip(".:")[:160]


def _is_bomb(exc):
    """Whether Pillow refused an image for its declared size (anywhere in the chain)."""
    import PIL.Image
    while exc is not None:
        if isinstance(exc, PIL.Image.DecompressionBombError):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def read_rgb_image(path, where=None, what="image", error=None, limit=None, bytes_per_pixel=None):
    """Read a PNG or JPEG file -> (H, W, 3) float32 linear RGB (decoded from sRGB).

    Grey images give grey RGB; grey + alpha and RGBA drop the alpha; 8- and 16-bit
    channels are scaled to [0, 1]. Anything else (a path that is not a regular file, an
    unreadable or truncated file, a float or 1-bit image, a zero-sized image, one too
    large for memory) is refused with one line naming ``path`` (``error``, default
    SceneError, at ``where``). ``limit``: the most pixels (default
    :data:`userio.limits.MAX_IMAGE_PIXELS`); ``bytes_per_pixel``: the memory budgeted for
    each pixel against the machine's (default :data:`READ_BYTES_PER_PIXEL`, what this
    function takes: the decoded image and the float32 result, converted a band of rows
    at a time through a table of the 256 or 65536 values)."""
    import warnings

    import imageio.v3 as iio      # here, not at the top: the CLI's --help stays light
    import PIL.Image
    from userio.files import check_regular_file
    from userio.limits import MAX_IMAGE_PIXELS, check_image_size

    from .errors import SceneError
    error = SceneError if error is None else error
    limit = MAX_IMAGE_PIXELS if limit is None else limit
    from userio.reads import note
    path = pathlib.Path(path)
    note(path)
    check_regular_file(path, what, where, error=error)
    try:
        with warnings.catch_warnings():     # the size is checked below, before decoding
            warnings.simplefilter("ignore", PIL.Image.DecompressionBombWarning)
            props = iio.improps(path, plugin="pillow")    # reads the header only
    except Exception as exc:  # imageio raises many types for bad files
        if _is_bomb(exc):
            raise error(where, f"{what} {path} declares more than {MAX_IMAGE_PIXELS} pixels, the limit "
                        "of an input image (too much memory to read)") from None
        raise error(where, f"cannot read {what} {path}: {_short_reason(exc)}") from None
    shape = tuple(props.shape)
    if len(shape) not in (2, 3) or (len(shape) == 3 and shape[2] not in (1, 2, 3, 4)) or 0 in shape[:2]:
        raise error(where, f"{what} {path} is not a 2-D grey or colour image (shape {shape})")
    check_image_size(shape[1], shape[0], f"{what} {path}", where, error=error, limit=limit,
                     bytes_per_pixel=READ_BYTES_PER_PIXEL if bytes_per_pixel is None else bytes_per_pixel)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PIL.Image.DecompressionBombWarning)
            img = iio.imread(path, plugin="pillow")
    except Exception as exc:
        raise error(where, f"cannot read {what} {path}: {_short_reason(exc)}") from None
    if img.dtype == np.uint8:
        lut = _srgb_table(8)
    elif img.dtype == np.uint16:
        lut = _srgb_table(16)
    else:
        raise error(where, f"{what} {path}: unsupported pixel type {img.dtype} (use 8- or 16-bit)")
    if img.ndim == 2:
        img = img[..., None]
    grey = img.shape[2] in (1, 2)                   # grey (+ alpha)
    out = np.empty(img.shape[:2] + (3,), np.float32)
    band = max(1, _BAND_VALUES // max(1, img.shape[1] * 3))
    for r in range(0, img.shape[0], band):         # the index arrays NumPy makes stay small
        if grey:
            out[r:r + band] = lut[img[r:r + band, :, :1]]
        else:
            out[r:r + band] = lut[img[r:r + band, :, :3]]
    return out


# The memory read_rgb_image takes for each pixel: the decoded image (Pillow's and
# NumPy's copy, 4 bytes each for 8-bit RGBA; 16-bit: twice that) and the float32 result.
READ_BYTES_PER_PIXEL = 32
_BAND_VALUES = 1 << 20          # values converted at a time (their index array: 8 MiB)
_srgb_tables = {}


def _srgb_table(bits):
    """float32 linear value of each 8- or 16-bit sRGB code: exactly what converting the
    codes to float64, dividing by 255 (65535) and :func:`srgb_to_linear` give."""
    if bits not in _srgb_tables:
        codes = np.arange(1 << bits, dtype=np.float64) / float((1 << bits) - 1)
        _srgb_tables[bits] = np.ascontiguousarray(srgb_to_linear(codes), np.float32)
    return _srgb_tables[bits]


def encode_image(path, image, encoding="srgb", metadata=None):
    """The bytes of ``image`` in the format given by ``path``'s extension: PNG (8-bit,
    ``encoding``), PFM or EXR (float32, linear; EXR with ``metadata`` in its header, by
    default the render's ``info``)."""
    import imageio.v3 as iio      # here, not at the top: the CLI's --help stays light
    suffix = pathlib.Path(path).suffix.lower()
    if suffix == ".pfm":
        return pfm_bytes(image)
    if suffix == ".exr":
        from .film.exr import exr_bytes
        info = getattr(image, "info", None)
        if metadata is None and info is not None:
            metadata = dataclasses.asdict(info)
        return exr_bytes({"color": np.asarray(image)}, metadata=metadata)
    if suffix == ".png":
        buf = io.BytesIO()
        iio.imwrite(buf, to_8bit(image, encoding), extension=".png")
        return buf.getvalue()
    raise ValueError(f"unsupported image format {suffix!r} (use .png, .pfm or .exr)")


def save_image(path, image, encoding="srgb"):
    """Write a (H, W, 3) float linear image to ``path`` (.png, .pfm or .exr), atomically."""
    atomic_write_bytes(path, encode_image(path, image, encoding))


def depth_image(t, tmin, tmax):
    """The course's depth visualisation ``(t - min) / (max - min)``, clamped, grey (H, W, 3).

    Pixels whose ray hit nothing count as infinitely far: white."""
    if not tmax > tmin:
        raise ValueError("depth range needs max > min")
    d = np.clip((t - tmin) / (tmax - tmin), 0.0, 1.0)
    d = np.where(np.isfinite(t), d, 1.0)
    return np.repeat(d[..., None], 3, axis=2).astype(np.float32)


def normal_image(n, hit):
    """The course's normal visualisation ``(N + 1) / 2``; misses are black."""
    return np.where(hit[..., None], (n + 1.0) * 0.5, 0.0).astype(np.float32)
