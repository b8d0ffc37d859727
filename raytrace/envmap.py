"""Latitude-longitude environment maps: reading EXR, Radiance HDR and PNG images, and the
lookup by direction (Numba).

Layout (Mitsuba 3's ``envmap``, so that one file shows the same sky in both): a map of W
columns and H rows covers the sphere of directions in the map's own frame. A direction
d = (x, y, z) has

    u = atan2(x, -z) / (2 pi)   (wrapped into [0, 1)),   v = acos(y) / pi,

so the top row is straight up (+y), the bottom row straight down, the image's left edge
(u = 0) looks towards -z, u = 1/4 towards +x, the centre column (u = 1/2) towards +z and
u = 3/4 towards -x. Column c is centred at u = (c + 0.5) / W and the columns wrap around;
row r sits at v = r / (H - 1) (the first and last rows lie on the poles). The radiance is
the bilinear blend of the four texels around (u, v). Conversely the direction of (u, v)
is ``(sin(theta) sin(phi), cos(theta), -sin(theta) cos(phi))`` with phi = 2 pi u,
theta = pi v.

Files: ``.exr`` (linear float RGB, or one grey channel), ``.hdr`` (Radiance RGBE: flat or
run-length encoded scanlines; values ``m 2^(e - 136)``, as Mitsuba and OpenImageIO
decode them; an ``EXPOSURE`` line is ignored, as they do), ``.png`` / ``.jpg`` (8 or 16
bit, decoded from sRGB to linear). Every value must be finite and not negative; a map
has at least 2 x 3 texels (Mitsuba's minimum) and at most :data:`MAX_TEXELS` (2^25:
8192 x 4096), checked on the header before decoding.

Memory: reading a map and building its sampling tables
(``scene.emitters.build_environment``) takes at most :data:`BYTES_PER_TEXEL` bytes a
texel at its peak (the float32 texels, 12 bytes, and the tables, 32, stay for the
render), 1.5 GiB for a map at the limit; the decoders and the tables work a band of rows
at a time, so that no float64 copy of the whole image is made.
:func:`hdr_bytes` writes Radiance files (flat or run-length encoded).
"""
import math
import pathlib
import re

import numpy as np
from raytrace.jit import helper, kernel

from .errors import SceneError

INV_2PI = 0.5 / math.pi
INV_PI = 1.0 / math.pi
MIN_WIDTH, MIN_HEIGHT = 2, 3             # Mitsuba's envmap refuses smaller maps
MAX_TEXELS = 1 << 25                    # a lat-long map: 8192 x 4096, the largest common HDRI
BYTES_PER_TEXEL = 48                    # peak while read and tabled: texels (12), tables (32), the rest
BAND_VALUES = 1 << 20                   # values a decoder converts at a time
FORMATS = (".exr", ".hdr", ".png", ".jpg", ".jpeg")


# ----------------------------------------------------------------------- reading images
def read_environment_image(path, where, what="environment map", limit=None):
    """Read an environment image -> (H, W, 3) float32 linear radiance, every value finite
    and >= 0. ``where``: the scene field named in errors (SceneError). ``limit``: the
    most texels (default :data:`userio.limits.MAX_IMAGE_PIXELS`; a lat-long map's is
    :data:`MAX_TEXELS`), checked on the header before any pixel is decoded, with
    :data:`BYTES_PER_TEXEL` for each against the machine's memory."""
    from userio.limits import MAX_IMAGE_PIXELS
    limit = MAX_IMAGE_PIXELS if limit is None else limit
    path = pathlib.Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise SceneError(where, f"{what} {path}: unknown image format {path.suffix!r} "
                                f"(use {', '.join(FORMATS)})")
    from userio.files import check_regular_file
    from userio.reads import note
    note(path)
    check_regular_file(path, what, where, error=SceneError)
    if suffix == ".hdr":
        img = read_hdr(path, where, what, limit)
    elif suffix == ".exr":
        img = _read_exr_rgb(path, where, what, limit)
    else:
        from .image import read_rgb_image
        img = read_rgb_image(path, where, what, limit=limit, bytes_per_pixel=BYTES_PER_TEXEL)
    check_radiance(img, path, where, what)
    return np.ascontiguousarray(img, np.float32)


def check_radiance(img, path, where, what="environment map"):
    """Refuse NaN, infinite and negative values, naming the first such texel (a band of
    rows at a time)."""
    band = max(1, BAND_VALUES // max(1, img.shape[1] * img.shape[2]))
    for r0 in range(0, img.shape[0], band):
        part = img[r0:r0 + band]
        bad = ~np.isfinite(part) | (part < 0)
        if not bad.any():
            continue
        r, c, k = (int(x) for x in np.argwhere(bad)[0])
        r += r0
        value = float(img[r, c, k])
        kind = "not finite" if not math.isfinite(value) else "negative"
        raise SceneError(where, f"{what} {path}: texel (row {r}, column {c}) channel "
                                f"{'RGB'[k]} is {kind} ({value:g}); radiance must be finite and >= 0")


def _read_exr_rgb(path, where, what, limit=None):
    from .film.exr import read_exr

    def error(field, message, file=None):
        return SceneError(where, f"{what} {path}: {message}" + (f" ({field})" if field else ""))

    layers, _ = read_exr(path, error=error, limit=limit, bytes_per_pixel=BYTES_PER_TEXEL)
    if "color" in layers and np.ndim(layers["color"]) == 3:
        img = layers["color"]
    elif len(layers) == 1 and np.ndim(next(iter(layers.values()))) == 2:
        img = np.repeat(next(iter(layers.values()))[..., None], 3, axis=2)     # one grey channel
    else:
        raise SceneError(where, f"{what} {path}: needs R, G, B channels (or one grey channel); "
                                f"it has {', '.join(sorted(layers)) or 'none'}")
    return np.asarray(img, np.float32)


# ------------------------------------------------------------------- Radiance RGBE (.hdr)
_RESOLUTION = re.compile(rb"^([-+])Y (\d{1,9}) ([-+])X (\d{1,9})$")
_HEADER_MAX = 1 << 16          # bytes of header text before the resolution line
_ERRORS = {1: "truncated (the file ends inside the pixel data)",
           2: "bad run-length encoding (a run overflows its scanline)",
           3: "a run-length encoded scanline declares another width"}


def hdr_max_bytes(width, height):
    """The most bytes the pixels of a ``width`` x ``height`` Radiance image can take: a
    new-style run-length encoded scanline takes at most 4 + 8 W bytes (every byte a
    literal run of one), an old-style one at most 20 W (a repeat code of 0 before each of
    its pixels, four of them at most); a flat one 4 W."""
    return height * (4 + 20 * width)


def read_hdr(path, where, what="environment map", limit=None):
    """A Radiance ``.hdr`` (RGBE) file -> (H, W, 3) float32. The header is checked (and the
    size against the limits) before any pixel is decoded, and the file's length against
    the most the header's image can take (:func:`hdr_max_bytes`) before its pixels are
    read."""
    from userio.files import check_regular_file
    from userio.limits import check_image_size, human_bytes

    path = pathlib.Path(path)
    size = check_regular_file(path, what, where, error=SceneError).st_size
    with open(path, "rb") as f:
        data = f.read(_HEADER_MAX + 64)       # the header and the resolution line after it
        end = data.find(b"\n\n", 0, _HEADER_MAX)
    if not data.startswith((b"#?RADIANCE", b"#?RGBE")) or end < 0:
        raise SceneError(where, f"{what} {path}: not a Radiance HDR file (expected '#?RADIANCE' "
                                "and a header ending in an empty line)")
    for line in data[:end].split(b"\n")[1:]:
        if line.startswith(b"FORMAT=") and line.strip() != b"FORMAT=32-bit_rle_rgbe":
            raise SceneError(where, f"{what} {path}: pixel format {line[7:].decode('latin-1')!r} is not "
                                    "supported (only 32-bit_rle_rgbe)")
    nl = data.find(b"\n", end + 2)
    line = data[end + 2:nl if nl >= 0 else len(data)].strip()
    m = _RESOLUTION.match(line)
    if nl < 0 or m is None:
        raise SceneError(where, f"{what} {path}: resolution line {line[:40].decode('latin-1')!r} is not "
                                "'-Y H +X W' (or with +Y / -X: rows bottom-up, columns right to left)")
    height, width = int(m.group(2)), int(m.group(4))
    check_image_size(width, height, f"{what} {path}", where, bytes_per_pixel=BYTES_PER_TEXEL,
                     error=SceneError, limit=limit)
    most = nl + 1 + hdr_max_bytes(width, height)
    if size > most:
        raise SceneError(where, f"{what} {path}: the file has {human_bytes(size)} ({size} bytes), more than "
                                f"its header's {width} x {height} pixels can take ({most} bytes at most)")
    with open(path, "rb") as f:
        f.seek(nl + 1)
        pixels = f.read(most - nl - 1)
    rgbe = np.zeros((height, width, 4), np.uint8)
    code, row = _decode_rgbe(np.frombuffer(pixels, np.uint8), 0, width, height, rgbe)
    if code:
        raise SceneError(where, f"{what} {path}: scanline {row}: {_ERRORS[code]}")
    if m.group(1) == b"+":           # rows stored bottom-up
        rgbe = rgbe[::-1]
    if m.group(3) == b"-":           # columns stored right to left
        rgbe = rgbe[:, ::-1]
    out = np.empty((height, width, 3), np.float32)
    band = max(1, BAND_VALUES // width)
    for r in range(0, height, band):       # a band of rows at a time: no float64 copy of the image
        part = rgbe[r:r + band]
        e = part[..., 3].astype(np.int32)
        f = np.where(e > 0, np.ldexp(1.0, e - 136), 0.0).astype(np.float64)
        out[r:r + band] = part[..., :3] * f[..., None]
    return out


@kernel
def _decode_rgbe(buf, pos, width, height, out):
    """Decode ``height`` scanlines of RGBE pixels from ``buf[pos:]`` into ``out`` (H, W, 4)
    uint8 -> (error code (0: none, see _ERRORS), scanline). Scanlines are new-style
    run-length encoded (they start with 2, 2 and the width), flat, or old-style (a
    1, 1, 1, n pixel repeats the previous one n << shift times)."""
    n = buf.shape[0]
    for y in range(height):
        if (pos + 4 <= n and 8 <= width < 32768 and buf[pos] == 2 and buf[pos + 1] == 2
                and buf[pos + 2] < 128):
            if (int(buf[pos + 2]) << 8 | int(buf[pos + 3])) != width:
                return 3, y
            pos += 4
            for c in range(4):
                x = 0
                while x < width:
                    if pos >= n:
                        return 1, y
                    count = int(buf[pos])
                    pos += 1
                    if count > 128:
                        count -= 128
                        if count > width - x:
                            return 2, y
                        if pos >= n:
                            return 1, y
                        v = buf[pos]
                        pos += 1
                        for k in range(count):
                            out[y, x + k, c] = v
                    else:
                        if count == 0 or count > width - x:
                            return 2, y
                        if pos + count > n:
                            return 1, y
                        for k in range(count):
                            out[y, x + k, c] = buf[pos + k]
                        pos += count
                    x += count
            continue
        x = 0
        shift = 0
        while x < width:
            if pos + 4 > n:
                return 1, y
            if buf[pos] == 1 and buf[pos + 1] == 1 and buf[pos + 2] == 1:
                count = width + 1
                if shift <= 24:
                    count = np.int64(buf[pos + 3]) << np.int64(shift)
                if x == 0 or count > width - x:
                    return 2, y
                for k in range(count):
                    for c in range(4):
                        out[y, x + k, c] = out[y, x - 1, c]
                x += count
                shift += 8
            else:
                for c in range(4):
                    out[y, x, c] = buf[pos + c]
                x += 1
                shift = 0
            pos += 4
    return 0, height


def float_to_rgbe(img):
    """(H, W, 3) float linear (>= 0) -> (H, W, 4) uint8 RGBE (the largest channel keeps 8
    bits: mantissa ``floor(c 256 / 2^e)`` with 2^(e-1) <= max < 2^e)."""
    img = np.asarray(img, np.float64)
    mx = img.max(axis=2)
    mant, expo = np.frexp(mx)                    # mx = mant 2^expo, mant in [0.5, 1)
    out = np.zeros(img.shape[:2] + (4,), np.uint8)
    ok = mx >= 1e-38
    scale = np.where(ok, np.ldexp(256.0, -expo), 0.0)
    out[..., :3] = np.clip(np.floor(img * scale[..., None]), 0, 255).astype(np.uint8)
    out[..., 3] = np.where(ok, expo + 128, 0).astype(np.uint8)
    return out


def hdr_bytes(img, rle=True):
    """The bytes of a Radiance ``.hdr`` file holding (H, W, 3) float linear ``img``
    (``rle``: new-style run-length encoded scanlines when the width allows, else flat)."""
    rgbe = float_to_rgbe(img)
    h, w = rgbe.shape[:2]
    out = [b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n", f"-Y {h} +X {w}\n".encode()]
    if not (rle and 8 <= w < 32768):
        out.append(rgbe.tobytes())
        return b"".join(out)
    for y in range(h):
        out.append(bytes([2, 2, w >> 8, w & 255]))
        for c in range(4):
            out.append(_rle_channel(rgbe[y, :, c]))
    return b"".join(out)


def _rle_channel(a):
    """One channel of a scanline, run-length encoded (runs of 3+ equal bytes as runs)."""
    out = bytearray()
    i, n = 0, len(a)
    while i < n:
        j = i
        while j < n and j - i < 127 and a[j] == a[i]:
            j += 1
        if j - i >= 3:
            out += bytes([128 + j - i, int(a[i])])
            i = j
            continue
        k = i                                    # literal bytes up to the next run of 3
        while k < n and k - i < 128 and not (k + 2 < n and a[k] == a[k + 1] == a[k + 2]):
            k += 1
        out += bytes([k - i]) + bytes(a[i:k].tolist())
        i = k
    return bytes(out)


# ------------------------------------------------------------------------------- lookup
@helper
def latlong_rgb(texels, mx, my, mz):
    """Bilinear radiance of the lat-long map ``texels[0]`` (H, W, 3) in map direction m
    (need not be unit) -> (r, g, b, cell): ``cell`` = j W + i, the patch between columns
    i, i + 1 and rows j, j + 1 that holds m (see :func:`latlong_cell_direction`)."""
    h, w = texels.shape[1], texels.shape[2]
    u = math.atan2(mx, -mz) * INV_2PI
    v = math.atan2(math.sqrt(mx * mx + mz * mz), my) * INV_PI
    fu = u * w - 0.5
    fu -= math.floor(fu / w) * w                 # wrap into [0, w)
    fv = v * (h - 1)
    i = min(max(int(fu), 0), w - 1)
    j = min(max(int(fv), 0), h - 2)
    a = fu - i
    b = fv - j
    i1 = i + 1 if i + 1 < w else 0
    w00, w01, w10, w11 = (1.0 - a) * (1.0 - b), a * (1.0 - b), (1.0 - a) * b, a * b
    r = w00 * texels[0, j, i, 0] + w01 * texels[0, j, i1, 0] + w10 * texels[0, j + 1, i, 0] + \
        w11 * texels[0, j + 1, i1, 0]
    g = w00 * texels[0, j, i, 1] + w01 * texels[0, j, i1, 1] + w10 * texels[0, j + 1, i, 1] + \
        w11 * texels[0, j + 1, i1, 1]
    bb = w00 * texels[0, j, i, 2] + w01 * texels[0, j, i1, 2] + w10 * texels[0, j + 1, i, 2] + \
        w11 * texels[0, j + 1, i1, 2]
    return r, g, bb, j * w + i


@helper
def latlong_cell_direction(h, w, cell, u1, u2):
    """A map direction (unit) in cell ``cell`` of an H x W lat-long map, uniform in solid
    angle within it for uniform ``u1`` (along u) and ``u2`` (along cos theta). The cell
    spans u in [(i + 0.5) / W, (i + 1.5) / W] and theta in [pi j / (H - 1),
    pi (j + 1) / (H - 1)]; its solid angle is ``2 pi / W (cos theta_j - cos theta_j+1)``."""
    j = cell // w
    i = cell - j * w
    phi = 2.0 * math.pi * (i + 0.5 + u1) / w
    c0 = math.cos(math.pi * j / (h - 1))
    c1 = math.cos(math.pi * (j + 1) / (h - 1))
    cos_t = c0 + (c1 - c0) * u2
    sin_t = math.sqrt(max(0.0, 1.0 - cos_t * cos_t))
    return sin_t * math.sin(phi), cos_t, -sin_t * math.cos(phi)


def cell_solid_angles(h, w):
    """(H - 1,) solid angle of each row of cells of an H x W lat-long map (every cell of a
    row alike); they sum to 4 pi / W."""
    c = np.cos(np.pi * np.arange(h) / (h - 1))
    return 2.0 * np.pi / w * (c[:-1] - c[1:])


def latlong_lookup(img, d):
    """NumPy reference of the lookup: (..., 3) directions -> (..., 3) radiance of the
    (H, W, 3) map ``img`` (for tests and figures)."""
    img = np.asarray(img, np.float64)
    h, w = img.shape[:2]
    d = np.asarray(d, np.float64)
    x, y, z = d[..., 0], d[..., 1], d[..., 2]
    fu = (np.arctan2(x, -z) / (2 * np.pi)) * w - 0.5
    fu = np.mod(fu, w)
    fv = np.arctan2(np.hypot(x, z), y) / np.pi * (h - 1)
    i = np.clip(fu.astype(np.int64), 0, w - 1)
    j = np.clip(fv.astype(np.int64), 0, h - 2)
    a, b = (fu - i)[..., None], (fv - j)[..., None]
    i1 = (i + 1) % w
    return ((1 - a) * (1 - b) * img[j, i] + a * (1 - b) * img[j, i1] + (1 - a) * b * img[j + 1, i]
            + a * b * img[j + 1, i1])


def latlong_directions(h, w):
    """(H, W, 3) unit map directions of the texel centres (row r, column c) of an H x W map:
    ``latlong_lookup`` there returns that texel."""
    u = (np.arange(w) + 0.5) / w
    v = np.arange(h) / (h - 1)
    phi, theta = np.meshgrid(2 * np.pi * u, np.pi * v)
    return np.stack([np.sin(theta) * np.sin(phi), np.cos(theta), -np.sin(theta) * np.cos(phi)], -1)
