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
import struct

import numpy as np

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


def _as_grid(array, where, file):
    """An array-like (nz, ny, nx) or (nz, ny, nx, channels) -> float32 grid, shape checked."""
    if isinstance(array, np.ndarray) and array.dtype.kind not in "biuf":
        raise SceneError(where.rstrip(". "), f"must hold numbers, got dtype {array.dtype}", file=file)
    shape = np.shape(array) if isinstance(array, np.ndarray) else None
    if shape is None:
        try:
            array = np.asarray(array, np.float64)
        except (TypeError, ValueError):
            raise SceneError(where.rstrip(". "), "must be a 3-D (or 4-D, with channels) array of numbers",
                             file=file) from None
        shape = array.shape
    if len(shape) == 3:
        shape = shape + (1,)
    if len(shape) != 4:
        raise SceneError(where.rstrip(". "), f"must be a 3-D array (nz, ny, nx) or 4-D (nz, ny, nx, "
                         f"channels), got shape {tuple(np.shape(array))}", file=file)
    _check_shape(shape, where, file)
    return np.asarray(array, np.float32).reshape(shape)


def read_npy(path, albedo=False):
    """A ``.npy`` file holding a (nz, ny, nx) or (nz, ny, nx, channels) array of numbers ->
    grid. The header's shape is checked before the values are read, and the file's
    length against it."""
    path = pathlib.Path(path)
    try:
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                           else np.lib.format.read_array_header_2_0)
            shape, fortran, dtype = read_header(f)
            offset = f.tell()
        size = path.stat().st_size
    except (ValueError, OSError, EOFError, SyntaxError) as exc:
        raise SceneError("header", f"cannot read .npy grid: {str(exc).splitlines()[0][:200]}",
                         file=path) from None
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
        if not path.is_file():
            raise SceneError(f"{where}.file", f"file not found: {path}")
        suffix = path.suffix.lower()
        if suffix == ".vol":
            return read_vol(path, albedo)
        if suffix == ".npy":
            return read_npy(path, albedo)
        raise SceneError(f"{where}.file", f"a grid is a Mitsuba .vol or a NumPy .npy file, got {spec['file']!r}")
    grid = _as_grid(spec["data"], f"{where}.data.", None)
    check_values(grid, f"{where}.data.", None, albedo)
    return grid
