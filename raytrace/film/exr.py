"""OpenEXR files with named layers, through the ``OpenEXR`` package (the Academy
Software Foundation's own binding; wheels bundle the library).

A file holds layers: ``{"color": (H, W, 3), "albedo": (H, W, 3), "depth": (H, W), ...}``.
Channel names follow the common convention: the colour layer is ``R, G, B``; another
layer ``name`` is ``name.R/G/B`` (three channels), ``name.U/V`` (two) or ``name.V`` (one),
unless ``components`` names them (``{"normal": "XYZ", "depth": "Z"}``). Pixels are
float32 (``half=False``) or float16 (``half=True``; finite values beyond the half range
are clamped to +-65504, not turned into infinities); integer layers (uint32, e.g. object
ids) are stored as EXR ``UINT`` and read back exactly. Values stay linear (no encoding).

Metadata (``{"spp": 16, "seed": 3, ...}``) is stored as header attributes named
``raytrace:<key>`` (ints, floats and strings) and returned by :func:`read_exr`.
"""
import io
import os
import pathlib

import numpy as np

COLOR = "color"
_RGB = ("R", "G", "B")
_DEFAULT_COMPONENTS = {3: "RGB", 2: "UV", 1: "V"}
_PREFIX = "raytrace:"
HALF_MAX = 65504.0


def _openexr():
    try:
        import OpenEXR
    except ImportError:
        from ..errors import SceneError
        raise SceneError(None, "EXR files need the OpenEXR package (pip install OpenEXR)") from None
    return OpenEXR


def _channels(name, array, half, comps=None):
    a = np.asarray(array)
    if a.dtype.kind in "ui":
        data = np.ascontiguousarray(a, np.uint32)
    elif half:
        a = np.asarray(a, np.float32)
        data = np.where(np.isfinite(a), np.clip(a, -HALF_MAX, HALF_MAX), a).astype(np.float16)
    else:
        data = np.ascontiguousarray(a, np.float32)
    if data.ndim == 2:
        data = data[..., None]
    if data.ndim != 3 or data.shape[2] not in _DEFAULT_COMPONENTS:
        raise ValueError(f"EXR layer {name!r} must be (H, W) or (H, W, 1|2|3), got {data.shape}")
    comps = comps or _DEFAULT_COMPONENTS[data.shape[2]]
    if len(comps) != data.shape[2]:
        raise ValueError(f"EXR layer {name!r}: components {comps!r} for {data.shape[2]} channels")
    names = tuple(comps) if name == COLOR else tuple(f"{name}.{c}" for c in comps)
    return {n: np.ascontiguousarray(data[..., k]) for k, n in enumerate(names)}


def exr_bytes(layers, half=False, metadata=None, components=None):
    """The bytes of an EXR file holding ``layers`` (name -> array; see the module docs);
    ``components``: layer name -> its channels' suffixes (``"XYZ"``), else by shape."""
    OpenEXR = _openexr()
    shapes = {np.asarray(a).shape[:2] for a in layers.values()}
    if len(shapes) != 1:
        raise ValueError(f"EXR layers differ in size: {sorted(shapes)}")
    channels = {}
    for name, array in layers.items():
        channels.update(_channels(name, array, half, (components or {}).get(name)))
    header = {"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage}
    for key, value in (metadata or {}).items():
        if isinstance(value, (bool, np.bool_)):
            value = int(value)
        if isinstance(value, (np.integer, np.floating)):
            value = value.item()
        if isinstance(value, int) and not -2 ** 31 <= value < 2 ** 31:
            value = str(value)               # EXR int attributes are 32-bit
        header[_PREFIX + key] = value
    buf = io.BytesIO()
    with OpenEXR.File(header, channels) as f:
        f.write(buf)
    return buf.getvalue()


def read_exr(path, error=None, limit=None, bytes_per_pixel=None):
    """-> (layers: name -> array, metadata: dict). Channels ``R, G, B`` form ``"color"``,
    ``name.R/G/B`` or ``name.X/Y/Z`` form ``name`` (H, W, 3), ``name.U/V`` form ``name``
    (H, W, 2), single channels ``name`` (H, W). ``error(where, message, file=)`` builds the exception for an unreadable file
    (default :class:`raytrace.SceneError`). The path must be a regular file (looked at
    before it is opened: a FIFO would block, ``/dev/zero`` never ends); the header is
    read alone and checked (:func:`check_exr_size`: the size, full-resolution channels,
    the file's length) before the rest of the file is read; ``limit`` and
    ``bytes_per_pixel`` are its pixel limit and memory budget (defaults there)."""
    if error is None:
        from ..errors import SceneError as error
    from userio.files import file_kind
    OpenEXR = _openexr()
    path = pathlib.Path(path)
    try:
        st, kind = file_kind(path)
    except OSError:                         # a folder that cannot be searched: open says why
        st, kind = True, None
    if st is None:
        raise error(None, "file not found", file=str(path))
    if kind == "a folder":
        raise error(None, "is a folder, not an EXR file", file=str(path))
    if kind is not None:
        raise error(None, f"is not a regular file ({kind})", file=str(path))
    try:
        with open(path, "rb") as f:
            data = f.read(EXR_HEADER_MARGIN)       # the header (the whole of a small file)
            size = os.fstat(f.fileno()).st_size
    except FileNotFoundError:
        raise error(None, "file not found", file=str(path)) from None
    try:
        with OpenEXR.File(io.BytesIO(data), separate_channels=True, header_only=True) as f:
            header = dict(f.header())
    except Exception as exc:  # the binding raises RuntimeError / ValueError / OSError
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise error(None, f"cannot read EXR: {reason}", file=str(path)) from None
    check_exr_size(header, path, error, size=size, limit=limit, bytes_per_pixel=bytes_per_pixel)
    try:
        if size > len(data):
            data = path.read_bytes()
        with OpenEXR.File(io.BytesIO(data), separate_channels=True) as f:
            header = dict(f.header())
            channels = {name: np.array(ch.pixels) for name, ch in f.channels().items()}
    except FileNotFoundError:
        raise error(None, "file not found", file=str(path)) from None
    except Exception as exc:  # the binding raises RuntimeError / ValueError / OSError
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise error(None, f"cannot read EXR: {reason}", file=str(path)) from None
    return _group(channels), {k[len(_PREFIX):]: v for k, v in header.items() if k.startswith(_PREFIX)}


EXR_HEADER_MARGIN = 1 << 24          # bytes of header (attributes, a preview) an EXR may hold


def exr_max_bytes(width, height, channels):
    """The most bytes an EXR file of ``width`` x ``height`` pixels and ``channels``
    channels can take: :data:`EXR_HEADER_MARGIN` of header, then every pixel stored
    uncompressed (OpenEXR keeps a chunk uncompressed when compressing would not make it
    smaller) at 4 bytes a channel plus 32 bytes of offset table and chunk header (tiles
    of one pixel), times 4 for the levels of a mip- or rip-map."""
    return EXR_HEADER_MARGIN + 4 * width * height * (4 * channels + 32)


def check_exr_size(header, path, error, size=None, limit=None, bytes_per_pixel=None):
    """Refuse an EXR whose header declares more pixels than
    :data:`userio.limits.MAX_IMAGE_PIXELS` (or more memory than the machine has, for all
    its channels), a subsampled channel (``xSampling`` or ``ySampling`` other than 1),
    or (``size``: the file's length in bytes) a file longer than its pixels can take
    (:func:`exr_max_bytes`), before any pixel is decoded. ``limit``: the most pixels
    (default :data:`userio.limits.MAX_IMAGE_PIXELS`); ``bytes_per_pixel``: the memory
    budgeted for each (default 16 a channel)."""
    from userio.limits import check_image_size, human_bytes
    try:
        lo, hi = (np.asarray(v, np.int64).reshape(2) for v in header["dataWindow"])
    except (KeyError, TypeError, ValueError):
        raise error("dataWindow", "missing or malformed in the header", file=str(path)) from None
    width, height = int(hi[0] - lo[0] + 1), int(hi[1] - lo[1] + 1)
    channels = max(len(header.get("channels") or ()), 1)
    check_image_size(width, height, "the EXR", "dataWindow", error=error, file=str(path), limit=limit,
                     bytes_per_pixel=16 * channels if bytes_per_pixel is None else bytes_per_pixel)
    for ch in header.get("channels") or ():
        xs, ys = getattr(ch, "xSampling", 1), getattr(ch, "ySampling", 1)
        if xs != 1 or ys != 1:
            raise error("channels", f"channel {getattr(ch, 'name', '?')!r} is subsampled (xSampling {xs}, "
                        f"ySampling {ys}); only full-resolution channels can be read", file=str(path))
    most = exr_max_bytes(width, height, channels)
    if size is not None and size > most:
        raise error(None, f"the file has {human_bytes(size)} ({size} bytes), more than its header's "
                    f"{width} x {height} pixels of {channels} channels can take ({most} bytes at most)",
                    file=str(path))


def _group(channels):
    """Channel dict -> layer dict (see :func:`read_exr`)."""
    layers, groups = {}, {}
    for name, pixels in channels.items():
        layer, _, comp = name.rpartition(".")
        groups.setdefault(layer, {})[comp] = pixels
    for layer, comps in groups.items():
        key = layer or COLOR
        for triple in (("R", "G", "B"), ("X", "Y", "Z"), ("U", "V")):
            if all(c in comps for c in triple):
                layers[key] = np.stack([comps[c] for c in triple], axis=-1)
                comps = {c: v for c, v in comps.items() if c not in triple}
        for comp, pixels in comps.items():
            if key in layers or len(comps) > 1:
                layers[f"{key}.{comp}" if layer else comp] = pixels
            else:
                layers[key if comp == "V" or layer else comp] = pixels
    return layers
