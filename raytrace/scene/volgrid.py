"""Grids of values for heterogeneous media: Mitsuba's ``.vol`` files and NumPy arrays.

A grid is an array of shape (nz, ny, nx, channels) float32, channels 1 or 3, indexed
``grid[z, y, x, c]``: the memory order of Mitsuba's ``.vol`` format (x fastest) and of
``mitsuba.VolumeGrid(array)``.

Mitsuba's ``.vol`` format (``src/volumes/grid.cpp``; little endian): bytes 0-2 ``VOL``,
byte 3 the version (3), an int32 encoding (1 = float32, the only one), int32 nx, ny, nz,
int32 channels, six float32 of a bounding box (xmin, ymin, zmin, xmax, ymax, zmax; Mitsuba
ignores it unless asked, and so do we: the medium's ``transform`` places the grid), then
nx ny nz channels float32 values, ``data[((z ny + y) nx + x) channels + c]``.

Everything read is checked before it is used, each problem one :class:`SceneError` naming
the file (or the scene's JSON path for an array given in code) and the field: the magic
bytes, version, encoding, resolution (each side 1 .. :data:`MAX_SIDE`, at most
:data:`MAX_VALUES` values in all, checked before the values are read), channels (1 or 3),
the file's length against its header, and the values (finite, >= 0; an albedo <= 1).
"""
import pathlib
import re
import struct

import numpy as np
from userio.files import check_regular_file
from userio.reads import note

from ..errors import SceneError

MAX_SIDE = 4096              # voxels along any axis
MAX_VALUES = 2 ** 26         # voxels x channels in one grid (256 MiB of float32)
HEADER_BYTES = 48
CHANNELS = (1, 3)


def _check_shape(shape, where, file):
    """(nz, ny, nx, channels) within the limits, else SceneError."""
    nz, ny, nx, ch = shape
    for name, n in (("nx", nx), ("ny", ny), ("nz", nz)):
        if not 1 <= n <= MAX_SIDE:
            raise SceneError(f"{where}{name}", f"resolution must be 1 .. {MAX_SIDE} voxels, got {n}", file=file)
    if ch not in CHANNELS:
        raise SceneError(f"{where}channels", f"must be 1 or 3, got {ch}", file=file)
    if nx * ny * nz * ch > MAX_VALUES:
        raise SceneError(f"{where}resolution", f"{nx} x {ny} x {nz} x {ch} channels = "
                         f"{nx * ny * nz * ch} values, more than the limit of {MAX_VALUES}", file=file)


def check_values(grid, where, file=None, albedo=False):
    """Every value of ``grid`` finite, >= 0 (and <= 1 for an ``albedo``), else
    SceneError naming the first bad voxel."""
    bad = ~np.isfinite(grid) | (grid < 0.0)
    if albedo:
        bad |= grid > 1.0
    if bad.any():
        z, y, x, c = np.unravel_index(int(np.argmax(bad)), grid.shape)
        v = float(grid[z, y, x, c])
        want = "in [0, 1]" if albedo else "finite and >= 0"
        raise SceneError(f"{where}voxel (x {x}, y {y}, z {z}, channel {c})",
                         f"must be {want}, got {v}", file=file)


def read_vol(path, albedo=False):
    """A Mitsuba ``.vol`` file -> (nz, ny, nx, channels) float32 grid (module docstring)."""
    path = pathlib.Path(path)
    note(path)
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(HEADER_BYTES)
            if len(head) < HEADER_BYTES:
                raise SceneError("header", f"file ends after {len(head)} bytes, before its "
                                 f"{HEADER_BYTES}-byte header does", file=path)
            if head[:3] != b"VOL":
                raise SceneError("header", f"not a Mitsuba .vol grid (starts with {head[:3]!r}, "
                                 f"not b'VOL')", file=path)
            if head[3] != 3:
                raise SceneError("version", f"must be 3, got {head[3]}", file=path)
            encoding, nx, ny, nz, ch = struct.unpack("<5i", head[4:24])
            if encoding != 1:
                raise SceneError("encoding", f"must be 1 (float32), got {encoding}", file=path)
            _check_shape((nz, ny, nx, ch), "", path)
            n = nx * ny * nz * ch
            if size != HEADER_BYTES + 4 * n:
                raise SceneError("data", f"the header's {nx} x {ny} x {nz} x {ch} float32 values need "
                                 f"{HEADER_BYTES + 4 * n} bytes, the file has {size}", file=path)
            data = np.fromfile(f, dtype="<f4", count=n)
    except OSError as exc:
        raise SceneError(None, f"cannot read grid: {exc.strerror or exc}", file=path) from None
    if data.size != n:
        raise SceneError("data", f"file ends after {data.size} of {n} values", file=path)
    grid = data.astype(np.float32).reshape(nz, ny, nx, ch)
    check_values(grid, "", path, albedo)
    return grid


def write_vol(path, grid, bbox=(0.0, 0.0, 0.0, 1.0, 1.0, 1.0)):
    """Write ``grid`` ((nz, ny, nx) or (nz, ny, nx, channels)) as a Mitsuba ``.vol`` file
    (the format Mitsuba 3 reads, ``mitsuba.VolumeGrid.write`` writes)."""
    grid = np.asarray(grid, np.float32)
    if grid.ndim == 3:
        grid = grid[..., None]
    nz, ny, nx, ch = grid.shape
    head = b"VOL" + bytes([3]) + struct.pack("<5i", 1, nx, ny, nz, ch) + struct.pack("<6f", *bbox)
    path = pathlib.Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(head)
        f.write(np.ascontiguousarray(grid, "<f4").tobytes())
    tmp.replace(path)


def _numbers(nested, where, file):
    """Nested lists of numbers (a grid's ``data`` in a scene) -> float64 array. Strings,
    booleans and ``None`` are refused, as everywhere in the format (``np.asarray`` would
    parse ``"0.5"`` and take ``true`` for 1), naming the first such entry; so are ragged
    lists."""
    def refuse(message):
        return SceneError(where.rstrip(". "), message, file=file)

    def number(v):
        return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))

    try:
        raw = np.asarray(nested)
        values = np.array(nested, dtype=object)       # the entries as given, to look at their types
    except (TypeError, ValueError, RecursionError):
        raise refuse("must be a 3-D (or 4-D, with channels) array of numbers (nested lists of one "
                     "length at each depth)") from None
    if raw.dtype.kind in "iufO" and all(number(v) for v in values.ravel()):
        try:
            return values.astype(np.float64) if raw.dtype.kind == "O" else raw.astype(np.float64)
        except OverflowError:
            raise refuse("holds an integer too large for a floating-point number") from None
    if any(isinstance(v, (list, tuple)) for v in values.ravel()):
        raise refuse("must be a 3-D (or 4-D, with channels) array of numbers (nested lists of one "
                     "length at each depth)")
    index = next(i for i, v in enumerate(values.ravel()) if not number(v))
    value = values.ravel()[index]
    at = "".join(f"[{int(i)}]" for i in np.unravel_index(index, values.shape)) if values.ndim else ""
    raise refuse(f"must hold numbers, got {value!r} at {at or 'the top'}"
                 + (" (a string: write the number without quotes)" if isinstance(value, str) else ""))


def _as_grid(array, where, file):
    """An array-like (nz, ny, nx) or (nz, ny, nx, channels) -> float32 grid, shape checked."""
    if isinstance(array, np.ndarray) and array.dtype.kind not in "biuf":
        raise SceneError(where.rstrip(". "), f"must hold numbers, got dtype {array.dtype}", file=file)
    shape = np.shape(array) if isinstance(array, np.ndarray) else None
    if shape is None:
        array = _numbers(array, where, file)
        shape = array.shape
    if len(shape) == 3:
        shape = shape + (1,)
    if len(shape) != 4:
        raise SceneError(where.rstrip(". "), f"must be a 3-D array (nz, ny, nx) or 4-D (nz, ny, nx, "
                         f"channels), got shape {tuple(np.shape(array))}", file=file)
    _check_shape(shape, where, file)
    return np.asarray(array, np.float32).reshape(shape)


NPY_MAX_HEADER = 10000      # bytes: NumPy's own limit on the header it reads
_NPY_ENTRY = re.compile(r"""\s*(?P<key>'[A-Za-z_]{1,20}'|"[A-Za-z_]{1,20}")\s*:\s*(?P<value>'[^'\\\n]{0,64}'|"""
                        r""""[^"\\\n]{0,64}"|True|False|\([0-9 ,]{0,400}\))\s*(?:,|(?=\}))""")
_NPY_END = re.compile(r"\s*\}\s*")
_NPY_KEY = re.compile(r"""[\s,]*('[^'\n]{0,40}'|"[^"\n]{0,40}")\s*:""")
_NPY_WANT = {"descr": "a dtype string such as '<f4'", "fortran_order": "True or False",
             "shape": "a tuple of at most 32 plain integers"}


def _clip(text, n=40):
    """The start of ``text`` for a message: at most ``n`` characters, ``...`` after."""
    text = text.replace("\n", " ")
    return repr(text[:n] + ("..." if len(text) > n else ""))


def read_npy_header(f, path):
    """The header of the ``.npy`` file open as ``f`` -> (shape, fortran order, dtype), ``f``
    left at the first value. Parsed strictly, never evaluated: a dict of ``'descr'`` (a
    dtype string), ``'fortran_order'`` (True or False) and ``'shape'`` (a tuple of plain
    integers), at most :data:`NPY_MAX_HEADER` bytes; anything else (an expression such as
    ``1+1+...``, which NumPy's ``literal_eval`` would recurse into) is refused as a
    SceneError naming the file and ``header``."""
    def refuse(message, field="header"):
        return SceneError(field, message, file=path)

    magic = f.read(8)
    if magic[:6] != b"\x93NUMPY":
        raise refuse(f"not a .npy file (starts with {magic[:6]!r}, not b'\\x93NUMPY')")
    if len(magic) < 8:
        raise refuse("the file ends inside the header")
    major = magic[6]
    if major not in (1, 2, 3):
        raise refuse(f"unknown .npy format version {major}.{magic[7]}")
    size = 2 if major == 1 else 4
    raw = f.read(size)
    length = int.from_bytes(raw, "little")
    if len(raw) < size:
        raise refuse("the file ends inside the header")
    if length > NPY_MAX_HEADER:
        raise refuse(f"{length} bytes long, more than the {NPY_MAX_HEADER} of a .npy array header")
    data = f.read(length)
    if len(data) < length:
        raise refuse(f"the file ends after {len(data)} of the header's {length} bytes")
    try:
        text = data.decode("utf-8" if major == 3 else "latin-1")
    except UnicodeDecodeError:
        raise refuse("not UTF-8 text") from None
    start = text.find("{")
    if start < 0 or text[:start].strip():
        raise refuse(f"is not a .npy array header (a dict of 'descr', 'fortran_order' and 'shape'): "
                     f"{_clip(text)}")
    entries, pos = {}, start + 1
    while not _NPY_END.fullmatch(text, pos):
        m = _NPY_ENTRY.match(text, pos)
        if m is None:
            key = _NPY_KEY.match(text, pos)
            name = key.group(1)[1:-1] if key else None
            rest = text[key.end():] if key else text[pos:]
            want = _NPY_WANT.get(name)
            if name is not None and want is None:
                raise refuse(f"unknown key {name!r} (a .npy array header holds 'descr', 'fortran_order' and "
                             "'shape')")
            if want is None:
                raise refuse(f"is not a .npy array header (a dict of 'descr', 'fortran_order' and 'shape'): "
                             f"{_clip(text[pos:])}")
            raise refuse(f"{name!r} must be {want}, got {_clip(rest.strip())} (the header is read as plain "
                         "values, never evaluated)")
        entries[m.group("key")[1:-1]] = m.group("value")
        pos = m.end()
    if sorted(entries) != ["descr", "fortran_order", "shape"]:
        raise refuse(f"must hold the keys 'descr', 'fortran_order' and 'shape', got {sorted(entries)}")
    items = [t.strip() for t in entries["shape"][1:-1].split(",")]
    if items and items[-1] == "" and len(items) > 1:
        items.pop()
    if items == [""]:
        items = []
    if len(items) > 32 or not all(t.isdigit() and len(t) <= 19 for t in items):
        raise refuse(f"must be a tuple of at most 32 plain integers, got {_clip(entries['shape'])}", "shape")
    try:
        dtype = np.dtype(entries["descr"][1:-1])
    except (TypeError, ValueError, SyntaxError):
        raise refuse(f"not a NumPy dtype: {entries['descr']}", "dtype") from None
    return tuple(int(t) for t in items), entries["fortran_order"] == "True", dtype


def read_npy(path, albedo=False):
    """A ``.npy`` file holding a (nz, ny, nx) or (nz, ny, nx, channels) array of numbers ->
    grid. The header's shape is checked before the values are read, and the file's
    length against it (:func:`read_npy_header`)."""
    path = pathlib.Path(path)
    note(path)
    try:
        with open(path, "rb") as f:
            shape, fortran, dtype = read_npy_header(f, path)
            offset = f.tell()
        size = path.stat().st_size
    except OSError as exc:
        raise SceneError("header", f"cannot read .npy grid: {exc.strerror or exc}", file=path) from None
    if dtype.kind not in "iuf" or dtype.hasobject:
        raise SceneError("dtype", f"must be numbers, got {dtype}", file=path)
    if len(shape) not in (3, 4):
        raise SceneError("shape", f"must be 3-D (nz, ny, nx) or 4-D (nz, ny, nx, channels), got "
                         f"{tuple(shape)}", file=path)
    _check_shape(tuple(shape) + ((1,) if len(shape) == 3 else ()), "", path)
    n = int(np.prod(shape))
    if size != offset + n * dtype.itemsize:
        raise SceneError("data", f"the header's shape {tuple(shape)} of {dtype} needs "
                         f"{offset + n * dtype.itemsize} bytes, the file has {size}", file=path)
    arr = np.fromfile(path, dtype=dtype, count=n, offset=offset)
    arr = arr.reshape(shape, order="F" if fortran else "C")
    grid = _as_grid(arr, "", path)
    check_values(grid, "", path, albedo)
    return grid


def grid_from_spec(spec, where, base_dir, albedo=False):
    """A grid spec of a scene (``{"type": "grid", "file": "smoke.vol" | "smoke.npy"}`` or
    ``{"type": "grid", "data": array}``) -> float32 grid (nz, ny, nx, channels)."""
    if "file" in spec:
        path = pathlib.Path(base_dir) / spec["file"]
        check_regular_file(path, "grid", f"{where}.file", error=SceneError, missing=f"file not found: {path}")
        suffix = path.suffix.lower()
        if suffix == ".vol":
            return read_vol(path, albedo)
        if suffix == ".npy":
            return read_npy(path, albedo)
        raise SceneError(f"{where}.file", f"a grid is a Mitsuba .vol or a NumPy .npy file, got {spec['file']!r}")
    grid = _as_grid(spec["data"], f"{where}.data.", None)
    check_values(grid, f"{where}.data.", None, albedo)
    return grid
