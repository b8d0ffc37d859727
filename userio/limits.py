"""Checks shared by scene values and command-line options: integer ranges, finite numbers
and the memory a request would take, refused with the estimate in the message."""
import math
import os

import numpy as np

from .errors import UserError


def _memory_limit():
    """Three quarters of the machine's physical memory (16 GiB when unknown): a single
    request above it would make the machine swap or the process die."""
    try:
        return int(0.75 * os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 16 * 1024 ** 3


# Refuse single requests (a render buffer, a simulation's states) above this many bytes.
MEMORY_LIMIT = _memory_limit()


def human_bytes(n):
    """``n`` bytes in words (``1.5 GiB``); any size, however large."""
    try:
        n = float(n)
    except OverflowError:
        return "more than 10^300 bytes"
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024.0
    return f"{n:.1f} TiB"


def check_int(value, name, lo=None, hi=None, error=UserError, file=None):
    """``value`` as an int in [lo, hi] (bool and non-integral floats are refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise error(name, f"must be an integer, got {value!r}", file=file)
    value = int(value)
    if lo is not None and value < lo:
        raise error(name, f"must be >= {lo}, got {value}", file=file)
    if hi is not None and value > hi:
        raise error(name, f"must be <= {hi}, got {value}", file=file)
    return value


def check_number(value, name, lo=None, hi=None, lo_open=False, error=UserError, file=None):
    """``value`` as a finite float in [lo, hi] (``lo_open``: > lo)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise error(name, f"must be a number, got {value!r}", file=file)
    try:
        value = float(value)
    except OverflowError:                # an integer beyond the float range
        raise error(name, "must be a finite number, got an integer with "
                    f"{len(str(abs(value)))} digits", file=file) from None
    if not math.isfinite(value):
        raise error(name, f"must be a finite number, got {value}", file=file)
    if lo is not None and (value <= lo if lo_open else value < lo):
        raise error(name, f"must be {'>' if lo_open else '>='} {lo}, got {value:g}", file=file)
    if hi is not None and value > hi:
        raise error(name, f"must be <= {hi}, got {value:g}", file=file)
    return value


def check_finite(array, where, file=None, error=UserError, row_name="row"):
    """Raise when ``array`` holds NaN or inf, naming the first bad row (0-based index
    into the first axis, reported with ``row_name``)."""
    a = np.asarray(array, np.float64)
    if a.size == 0 or np.isfinite(a).all():
        return
    bad = np.argwhere(~np.isfinite(a.reshape(len(a), -1)) if a.ndim > 1 else ~np.isfinite(a))[0][0]
    value = a.reshape(len(a), -1)[bad] if a.ndim > 1 else a[bad]
    raise error(where, f"non-finite number in {row_name} {bad}: {np.array2string(np.asarray(value))}",
                file=file)


def check_memory(nbytes, what, name=None, limit=None, error=UserError, file=None):
    """Refuse a request of ``nbytes`` over ``limit`` (default :data:`MEMORY_LIMIT`), with
    the estimate in the message."""
    limit = MEMORY_LIMIT if limit is None else limit
    if nbytes > limit:
        raise error(name, f"{what} would need about {human_bytes(nbytes)} of memory "
                    f"(limit {human_bytes(limit)})", file=file)


# Refuse input images (textures, references, frames, renders to merge) that declare more
# pixels than this: 2^26 = 8192 x 8192. The declared size (PNG IHDR, JPEG SOF, the EXR
# dataWindow, the PFM and .npy headers) is checked before any pixel is decoded, so that
# a small file cannot claim gigabytes.
MAX_IMAGE_PIXELS = 1 << 26


def check_image_size(width, height, what, name=None, bytes_per_pixel=24, error=UserError, file=None,
                     limit=None):
    """Refuse a declared image size before decoding: ``width`` x ``height`` must be
    positive and at most ``limit`` (default :data:`MAX_IMAGE_PIXELS`) pixels, and
    ``bytes_per_pixel`` for each pixel must fit :func:`check_memory`."""
    limit = MAX_IMAGE_PIXELS if limit is None else limit
    width, height = int(width), int(height)
    if width <= 0 or height <= 0:
        raise error(name, f"{what} declares a size of {width} x {height} pixels", file=file)
    if width * height > limit:
        raise error(name, f"{what} declares {width} x {height} pixels, more than the limit of {limit} "
                    f"pixels ({human_bytes(width * height * bytes_per_pixel)} of memory to read at "
                    f"{bytes_per_pixel} bytes a pixel)", file=file)
    check_memory(width * height * bytes_per_pixel, f"{what} ({width} x {height})", name, error=error,
                 file=file)
