"""Patch collections as JSON (the converted teapot) and a loader for any patch file.

JSON layout::

    {"basis": "bezier",              # or "bspline"
     "up": "y",                      # informative
     "attribution": "...", "license": "...", "source": "...",   # optional text
     "patches": [[[x, y, z], ... 16 points, row by row], ...]}
"""
import json

import numpy as np
from userio.outputs import write_bytes_atomic

from .errors import CurveFileError, parse_json_text, read_text_file
from .io_spline import read_spline


def read_patch_json(path):
    """Read a patch JSON file. Returns (patches (P, 4, 4, 3) float64, basis, meta dict).

    Errors (``CurveFileError``) name the file and the JSON field, e.g. ``patches[3]``.
    """
    data = parse_json_text(read_text_file(path), path)
    if not isinstance(data, dict) or "patches" not in data:
        raise CurveFileError(path, None, "expected an object with a 'patches' list")
    basis = data.get("basis", "bezier")
    if basis not in ("bezier", "bspline"):
        raise CurveFileError(path, None, f"basis: must be 'bezier' or 'bspline', got {basis!r}")
    raw = data["patches"]
    if not isinstance(raw, list) or not raw:
        raise CurveFileError(path, None, "patches: must be a non-empty list")
    out = np.empty((len(raw), 16, 3))
    for k, patch in enumerate(raw):
        try:
            arr = np.array(patch)
        except (TypeError, ValueError, RecursionError):      # ragged or nested too deeply
            arr = None
        if arr is None or arr.dtype.kind not in "iuf":
            raise CurveFileError(path, None, f"patches[{k}]: not a list of numbers")
        arr = arr.astype(np.float64)
        if arr.shape not in ((16, 3), (4, 4, 3)):
            raise CurveFileError(path, None, f"patches[{k}]: expected 16 points [x, y, z], "
                                 f"got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise CurveFileError(path, None, f"patches[{k}]: coordinates must be finite")
        out[k] = arr.reshape(16, 3)
    meta = {k: v for k, v in data.items() if k != "patches"}
    return out.reshape(-1, 4, 4, 3), basis, meta


def write_patch_json(path, patches, basis="bezier", **meta):
    """Write patches (P, 4, 4, 3) or (P, 16, 3) as JSON, one patch per line, with the
    extra text fields in ``meta`` (attribution, license, source, ...) first."""
    P = np.asarray(patches, dtype=np.float64).reshape(-1, 16, 3)
    head = {**meta, "basis": basis}
    body = ",\n".join("  " + json.dumps([[float(x) for x in p] for p in patch])
                      for patch in P)
    text = json.dumps(head, indent=1)[:-2] + ',\n "patches": [\n' + body + "\n ]\n}\n"
    write_bytes_atomic(path, text.encode("utf-8"))


def read_patches(path):
    """Patches from a ``.json`` patch file or a ``.spline`` patch file.

    Returns (patches (P, 4, 4, 3) float64, basis).
    """
    if str(path).lower().endswith(".json"):
        patches, basis, _ = read_patch_json(path)
        return patches, basis
    sf = read_spline(path)
    if sf.kind != "patch":
        raise CurveFileError(path, 1, "holds a curve, not patches")
    return sf.patches, sf.basis
