"""Reader for the older course's ``.swp`` files (curves and swept surfaces).

Grammar accepted (tokens separated by whitespace; ``[`` and ``]`` may touch numbers;
``#`` starts a comment, an extension)::

    bez2|bez3|bsp2|bsp3 NAME STEPS N  [ x y ] ... (N points; 3 numbers each for *3)
    circ NAME STEPS RADIUS            counter-clockwise circle in the xy-plane
    srev NAME STEPS PROFILE           surface of revolution of a 2D curve about +y
    gcyl NAME [STEPS] PROFILE SWEEP   generalized cylinder: 2D PROFILE along SWEEP

NAME ``.`` is anonymous (cannot be referred to). Curve STEPS is the number of
intervals per cubic piece (per whole circle for ``circ``); ``srev`` STEPS the number
of angular intervals; the optional ``gcyl`` STEPS (a later variant of the format)
overrides the sweep curve's STEPS. Keywords are case-insensitive. A Bézier curve
needs 3n+1 points, a B-spline at least 4.
"""
import re
from dataclasses import dataclass, field

import numpy as np

from .curve import Circle, Curve
from .errors import CurveFileError, about, line_error, read_text_file, shown
from .limits import MAX_STEPS, check_samples, check_steps, check_vertices

CURVE_TYPES = {"bez2": ("bezier", 2), "bez3": ("bezier", 3),
               "bsp2": ("bspline", 2), "bsp3": ("bspline", 3)}
KEYWORDS = tuple(CURVE_TYPES) + ("circ", "srev", "gcyl")
_TOKEN = re.compile(r"\[|\]|[^\s\[\]]+")


@dataclass(frozen=True, eq=False)
class SwpCurve:
    """A curve statement: kind ('bez2', ..., 'circ'), name, curve object, steps, line."""
    kind: str
    name: str
    curve: object
    steps: int
    line: int

    @property
    def dim(self):
        return self.curve.dim


@dataclass(frozen=True, eq=False)
class SwpSurface:
    """A surface statement: kind ('srev' or 'gcyl'), name, the curves it uses, steps
    (angular intervals for srev, optional sweep override for gcyl), line."""
    kind: str
    name: str
    profile: SwpCurve
    sweep: SwpCurve = None
    steps: int = None
    line: int = 0


@dataclass(eq=False)
class SwpFile:
    """Everything a ``.swp`` file defines, in file order."""
    path: str
    curves: list = field(default_factory=list)
    surfaces: list = field(default_factory=list)

    def sample(self, c, steps=None):
        """``Samples`` of curve statement ``c`` with its STEPS (or ``steps``); a curve
        too large for memory or one that cannot be sampled is an error naming its line."""
        steps = c.steps if steps is None else steps
        count = c.curve.segments * steps + 1
        check_samples(count, f"{c.kind} {shown(c.name)} with {count} samples",
                      line_error(self.path, c.line))
        with about(self.path, c.line, f"{c.kind} {shown(c.name)}"):
            return c.curve.sample(steps)

    @staticmethod
    def surface_vertices(s):
        """Number of grid vertices of surface statement ``s`` before welding."""
        rows = s.profile.curve.segments * s.profile.steps + 1
        if s.kind == "srev":
            return rows * (s.steps + 1)
        return rows * (s.sweep.curve.segments * (s.steps or s.sweep.steps) + 1)

    def meshes(self):
        """[(name, Mesh)] for every surface, sampled with the file's STEPS. A surface too
        large for memory, or one that cannot be built (a profile that crosses the axis),
        is a :class:`CurveFileError` naming the surface's line."""
        from .surfaces import revolve, sweep
        out = []
        for s in self.surfaces:
            n = self.surface_vertices(s)
            check_vertices(n, f"{s.kind} {shown(s.name)} with {n} vertices",
                           line_error(self.path, s.line))
            ps = self.sample(s.profile)
            with about(self.path, s.line, f"{s.kind} {shown(s.name)}"):
                if s.kind == "srev":
                    mesh = revolve(ps.points, ps.tangents, s.steps)
                else:
                    cs = self.sample(s.sweep, s.steps or s.sweep.steps)
                    mesh = sweep(ps.points, ps.tangents, cs.points, cs.tangents, cs.d1, cs.d2)
            if len(mesh.faces) == 0:
                raise CurveFileError(self.path, s.line, f"{s.kind} {shown(s.name)}: the surface "
                                     "has no area (its curves collapse to a point)")
            out.append((s.name, mesh))
        return out


class _Tokens:
    def __init__(self, text, path):
        self.path = path
        self.items = []
        for number, raw in enumerate(text.splitlines(), start=1):
            for tok in _TOKEN.findall(raw.split("#", 1)[0]):
                self.items.append((tok, number))
        self.pos = 0

    def more(self):
        return self.pos < len(self.items)

    def peek(self):
        return self.items[self.pos] if self.more() else (None, self._last_line())

    def _last_line(self):
        return self.items[-1][1] if self.items else 1

    def next(self, what):
        if not self.more():
            raise CurveFileError(self.path, self._last_line(),
                                 f"unexpected end of file: expected {what}")
        tok = self.items[self.pos]
        self.pos += 1
        return tok

    def error(self, line, message):
        return CurveFileError(self.path, line, message)

    def integer(self, what, minimum, maximum=None):
        tok, line = self.next(what)
        try:
            value = int(tok)
        except ValueError:
            raise self.error(line, f"{what}: {shown(tok)} is not an integer") from None
        return check_steps(value, what, minimum, line_error(self.path, line), hi=maximum)

    def number(self, what):
        tok, line = self.next(what)
        try:
            value = float(tok)
        except ValueError:
            raise self.error(line, f"{what}: {shown(tok)} is not a number") from None
        if not np.isfinite(value):
            raise self.error(line, f"{what}: must be finite, got {tok}")
        return value

    def point(self, dim, index):
        tok, line = self.next(f"'[' to start control point {index + 1}")
        if tok != "[":
            raise self.error(line, f"expected '[' to start control point {index + 1}, "
                             f"got {shown(tok)}")
        values = []
        while True:
            tok, line = self.next("']'")
            if tok == "]":
                break
            try:
                values.append(float(tok))
            except ValueError:
                raise self.error(line, f"control point {index + 1}: {shown(tok)} is not a "
                                 "number") from None
        if len(values) != dim:
            raise self.error(line, f"control point {index + 1}: expected {dim} numbers "
                             f"in [ ], got {len(values)}")
        if not all(np.isfinite(values)):
            raise self.error(line, f"control point {index + 1}: coordinates must be finite")
        return values


def parse_swp(text, path="<string>"):
    """Parse ``.swp`` text. Returns ``SwpFile``; errors name ``path`` and the line."""
    tk = _Tokens(text, path)
    out = SwpFile(str(path))
    named = {}

    def define(name, line, obj):
        if name != ".":
            if name in named:
                raise tk.error(line, f"name {shown(name)} is already defined on line "
                               f"{named[name].line}")
            named[name] = obj

    def lookup(what):
        name, line = tk.next(f"{what} curve name")
        obj = named.get(name)
        if not isinstance(obj, SwpCurve):
            raise tk.error(line, f"{what} {shown(name)} is not a curve defined earlier")
        return obj, line

    while tk.more():
        word, line = tk.next("a statement")
        kind = word.lower()
        if kind not in KEYWORDS:
            raise tk.error(line, f"unknown type {shown(word)}; expected one of "
                           f"{', '.join(KEYWORDS)}")
        name, _ = tk.next("a name")
        if kind in CURVE_TYPES:
            basis, dim = CURVE_TYPES[kind]
            steps = tk.integer("STEPS", 1, MAX_STEPS)
            count = tk.integer("number of control points", 1)
            pts = np.array([tk.point(dim, i) for i in range(count)], dtype=np.float64)
            if basis == "bezier" and (count < 4 or (count - 1) % 3):
                raise tk.error(line, f"{kind} {shown(name)} has {count} control points; a "
                               "Bezier curve needs 3n+1 (4, 7, 10, ...)")
            if basis == "bspline" and count < 4:
                raise tk.error(line, f"{kind} {shown(name)} has {count} control points; a "
                               "B-spline curve needs at least 4")
            obj = SwpCurve(kind, name, Curve(pts, basis), steps, line)
            out.curves.append(obj)
        elif kind == "circ":
            steps = tk.integer("STEPS", 3, MAX_STEPS)
            radius = tk.number("RADIUS")
            if radius <= 0:
                raise tk.error(line, f"circ {shown(name)}: RADIUS must be > 0, got {radius}")
            obj = SwpCurve(kind, name, Circle(radius), steps, line)
            out.curves.append(obj)
        elif kind == "srev":
            steps = tk.integer("STEPS", 3, MAX_STEPS)
            profile, pline = lookup("PROFILE")
            if profile.dim != 2:
                raise tk.error(pline, f"srev {shown(name)}: PROFILE {shown(profile.name)} "
                               "must be a "
                               "2D curve")
            obj = SwpSurface(kind, name, profile, None, steps, line)
            out.surfaces.append(obj)
        else:  # gcyl NAME [STEPS] PROFILE SWEEP
            steps = None
            tok, tline = tk.peek()
            if tok is not None and re.fullmatch(r"[+-]?\d+", tok) and tok not in named:
                steps = tk.integer("STEPS", 1, MAX_STEPS)
            profile, pline = lookup("PROFILE")
            if profile.dim != 2:
                raise tk.error(pline, f"gcyl {shown(name)}: PROFILE {shown(profile.name)} "
                               "must be a "
                               "2D curve")
            sweep, _ = lookup("SWEEP")
            obj = SwpSurface(kind, name, profile, sweep, steps, line)
            out.surfaces.append(obj)
        define(name, line, obj)
    return out


def read_swp(path):
    """Read a ``.swp`` file. Raises ``CurveFileError`` naming the file and line."""
    return parse_swp(read_text_file(path), path)
