"""Reader and writer for the course's ``.spline`` files.

Grammar (one item per line; blank lines and ``#`` comments are ignored, an extension
of the course format)::

    HEADER                    Bezier curve | B-Spline curve | Bezier patch | B-Spline patch
    x y [z]                   one control point per line, 2 or 3 numbers, the same
    ...                       count on every line (patches need 3)

Counts: a Bézier curve with n segments has 3n+1 points, a B-spline curve n+3 (n >= 1),
n patches 16n points (each patch row by row: point 4i+j is G[i, j]). Headers are
matched case-insensitively with any whitespace between the words.
"""
from dataclasses import dataclass

import numpy as np

from .errors import CurveFileError, read_text_file, shown

HEADERS = {
    ("bezier", "curve"): ("bezier", "curve"),
    ("b-spline", "curve"): ("bspline", "curve"),
    ("bspline", "curve"): ("bspline", "curve"),
    ("bezier", "patch"): ("bezier", "patch"),
    ("b-spline", "patch"): ("bspline", "patch"),
    ("bspline", "patch"): ("bspline", "patch"),
}


@dataclass(frozen=True, eq=False)
class SplineFile:
    """Contents of a ``.spline`` file.

    basis: 'bezier' or 'bspline'; kind: 'curve' or 'patch'; points: (n, 2|3) float64;
    lines: (n,) 1-based line number of each point; path: the file.
    """
    basis: str
    kind: str
    points: np.ndarray
    lines: np.ndarray
    path: str

    @property
    def patches(self):
        """(P, 4, 4, 3) control grids of a patch file."""
        if self.kind != "patch":
            raise ValueError(f"{self.path} holds a curve, not patches")
        return self.points.reshape(-1, 4, 4, 3)

    def curve(self):
        """The ``curves.Curve`` of a curve file."""
        from .curve import Curve
        if self.kind != "curve":
            raise ValueError(f"{self.path} holds patches, not a curve")
        return Curve(self.points, self.basis)


def _strip(line):
    return line.split("#", 1)[0].strip()


def parse_spline(text, path="<string>"):
    """Parse ``.spline`` text; errors name ``path`` and the line. Returns ``SplineFile``."""
    header = None
    pts, lines = [], []
    ncoord = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _strip(raw)
        if not line:
            continue
        if header is None:
            words = tuple(w.lower() for w in line.split())
            if words not in HEADERS:
                raise CurveFileError(path, number, f"unknown header {shown(line)}; expected "
                                     "'Bezier curve', 'B-Spline curve', 'Bezier patch' "
                                     "or 'B-Spline patch'")
            header = (HEADERS[words], number)
            continue
        fields = line.split()
        try:
            values = [float(f) for f in fields]
        except ValueError:
            bad = next(f for f in fields if not _is_float(f))
            raise CurveFileError(path, number, f"{shown(bad)} is not a number") from None
        if not all(np.isfinite(values)):
            raise CurveFileError(path, number, "coordinates must be finite")
        want = ncoord if ncoord is not None else (3 if header[0][1] == "patch" else None)
        if want is None and len(values) not in (2, 3):
            raise CurveFileError(path, number, f"expected 2 or 3 numbers, got {len(values)}")
        if want is not None and len(values) != want:
            raise CurveFileError(path, number, f"expected {want} numbers, got {len(values)}")
        ncoord = len(values)
        pts.append(values)
        lines.append(number)
    if header is None:
        raise CurveFileError(path, None, "empty file: no header line")
    (basis, kind), header_line = header
    n = len(pts)
    last = lines[-1] if lines else header_line
    if kind == "patch":
        if n == 0 or n % 16:
            raise CurveFileError(path, last, f"{n} points: a patch file needs 16 points "
                                 "per patch (16, 32, 48, ...)")
    elif basis == "bezier":
        if n < 4 or (n - 1) % 3:
            raise CurveFileError(path, last, f"{n} points: a Bezier curve needs 3n+1 "
                                 "points (4, 7, 10, ...)")
    elif n < 4:
        raise CurveFileError(path, last, f"{n} points: a B-Spline curve needs at least 4")
    return SplineFile(basis, kind, np.array(pts, dtype=np.float64).reshape(n, ncoord or 3),
                      np.array(lines, dtype=np.int64), str(path))


def _is_float(s):
    try:
        float(s)
        return True
    except ValueError:
        return False


def read_spline(path):
    """Read a ``.spline`` file. Raises ``CurveFileError`` naming the file and line."""
    return parse_spline(read_text_file(path), path)


def format_spline(points, basis="bezier", kind="curve"):
    """The text of a ``.spline`` file for ``points`` (n, 2|3) (patches: (P, 16|4x4, 3))."""
    name = {"bezier": "Bezier", "bspline": "B-Spline"}[basis]
    pts = np.asarray(points, dtype=np.float64).reshape(-1, np.shape(points)[-1])
    rows = [" ".join(f"{x:.17g}" for x in p) for p in pts]
    return "\n".join([f"{name} {kind}"] + rows) + "\n"
