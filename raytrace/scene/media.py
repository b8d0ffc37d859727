"""Participating media of a scene: checks, the media each surface separates, and the
:class:`~raytrace.layout.Media` record the kernels read.

Scene keys (``docs/media.md``):

- ``media``: name -> medium. ``{"type": "homogeneous", ...}`` with Mitsuba's
  ``albedo`` (default 0.75), ``sigma_t`` (default 1) and ``scale`` (default 1), or
  instead pbrt's ``sigma_a`` and ``sigma_s`` (times ``scale``); each a number or an RGB
  triple, in 1 / world unit. ``{"type": "heterogeneous", "sigma_t": GRID, ...}``: the
  extinction is ``scale`` times the grid's trilinear value in the box [-1, 1]^3 placed by
  the medium's ``transform`` (the box of a ``cube`` object with the same transform), zero
  outside; ``albedo`` a number, an RGB triple or a GRID over the same box. A GRID is
  ``{"type": "grid", "file": "smoke.vol"}`` (Mitsuba's format, or a ``.npy`` array
  (nz, ny, nx[, channels])) or ``{"type": "grid", "data": array}``. ``phase``:
  ``{"type": "isotropic"}`` (default) or ``{"type": "hg", "g": g}``, -1 < g < 1.
- ``medium`` (top level): the medium around everything, where the camera is;
  ``camera.medium`` puts the camera elsewhere.
- ``interior`` / ``exterior`` on objects (inherited by a group's children, like
  ``material``): the media behind and in front of the object's surfaces (their front
  side: the normal's). Without them a surface has nothing inside and the top-level
  ``medium`` outside. A ``"null"`` material is no surface at all, only the boundary of a
  medium (Mitsuba's ``null`` BSDF).

Each (material, interior, exterior) combination used in the scene is a row of the
material table of its own (:class:`MediumRows`): the kernels look the media up by
material row.
"""
import math

import numpy as np

from ..errors import SceneError
from ..layout import (G_ACHANNELS, G_ALBEDO, G_ANX, G_ANY, G_ANZ, G_BLOCK, G_CHANNELS, G_DENSITY,
                      G_MAJORANT, G_MX, G_MY, G_MZ, G_NX, G_NY, G_NZ, GRID_WIDTH, M_TYPE, MAT_NULL,
                      MEDIUM_GRID, MEDIUM_HOMOGENEOUS, Media)
from .transforms import check_invertible, compose, to_numpy
from .volgrid import grid_from_spec

MAJORANT_CELLS = 16          # majorant cells along a grid's longest side (at most)
DEFAULT_ALBEDO, DEFAULT_SIGMA_T = 0.75, 1.0     # Mitsuba's


# ------------------------------------------------------------------ checks of the scene
def _rgb(value):
    """A number or RGB triple -> (3,) float64."""
    return np.full(3, float(value)) if isinstance(value, (int, float)) else np.asarray(value, np.float64)


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def check_ranges(data):
    """Range checks with precise messages, run before the JSON Schema (whose ``oneOf``
    for "a number or an RGB triple" can only say that): every coefficient >= 0, albedos
    <= 1, ``g`` in (-1, 1). Ignores whatever the schema will refuse anyway."""
    media = data.get("media") if isinstance(data, dict) else None
    if not isinstance(media, dict):
        return
    for name, med in media.items():
        if not isinstance(med, dict):
            continue
        where = f"media.{name}"
        for key in ("sigma_a", "sigma_s", "sigma_t", "albedo", "scale"):
            value = med.get(key)
            values = [value] if _is_number(value) else value if isinstance(value, list) else []
            for i, v in enumerate(values):
                at = f"{where}.{key}" if _is_number(value) else f"{where}.{key}[{i}]"
                if not _is_number(v):
                    continue
                if v < 0:
                    raise SceneError(at, f"must be >= 0, got {v:g}")
                if key == "albedo" and v > 1:
                    raise SceneError(at, f"must be <= 1 (the share of extinction that scatters), got {v:g}")
        phase = med.get("phase")
        g = phase.get("g") if isinstance(phase, dict) else None
        if _is_number(g) and not -1.0 < g < 1.0:
            raise SceneError(f"{where}.phase.g", f"must be in (-1, 1) (exclusive), got {g:g}")


def _objects(data):
    """(object, JSON path) of every object, prototypes and group children included."""
    stack = [(obj, f"objects[{i}]") for i, obj in reversed(list(enumerate(data.get("objects", []))))]
    stack += [(obj, f"prototypes.{n}") for n, obj in reversed(list(data.get("prototypes", {}).items()))]
    while stack:
        obj, where = stack.pop()
        yield obj, where
        if obj.get("type") == "group":
            stack += [(c, f"{where}.children[{i}]") for i, c in reversed(list(enumerate(obj.get("children", []))))]


def check_media(data):
    """What the schema cannot say: named media exist; a homogeneous medium uses one
    parameterisation (``sigma_a``/``sigma_s`` or ``albedo``/``sigma_t``); a grid spec has
    exactly one of ``file`` and ``data``."""
    media = data.get("media", {})
    known = ", ".join(sorted(media)) or "none defined"

    def named(name, where):
        if name not in media:
            raise SceneError(where, f"unknown medium {name!r} (media: {known})")

    if "medium" in data:
        named(data["medium"], "medium")
    if "medium" in data.get("camera", {}):
        named(data["camera"]["medium"], "camera.medium")
    for obj, where in _objects(data):
        for key in ("interior", "exterior"):
            if key in obj:
                named(obj[key], f"{where}.{key}")
    for name, med in media.items():
        where = f"media.{name}"
        if med["type"] == "homogeneous":
            pbrt = [k for k in ("sigma_a", "sigma_s") if k in med]
            mitsuba = [k for k in ("albedo", "sigma_t") if k in med]
            if pbrt and mitsuba:
                raise SceneError(f"{where}.{mitsuba[0]}", f"give either 'sigma_a' and 'sigma_s' or "
                                 f"'albedo' and 'sigma_t', not both kinds (here also {pbrt[0]!r})")
        grids = [("sigma_t", med.get("sigma_t"))] + [("albedo", med.get("albedo"))]
        for key, spec in grids:
            if isinstance(spec, dict) and ("file" in spec) == ("data" in spec):
                raise SceneError(f"{where}.{key}", "a grid needs exactly one of 'file' and 'data'")


# ------------------------------------------------------------------ surfaces and media
_UNSET = object()


class MediumRows:
    """The material rows of (material, interior, exterior) combinations.

    ``row_for(obj, mat, inherited)``: the row for an object whose material row is ``mat``
    and whose parent passed ``inherited`` (a row, maybe itself a combination): the
    object's own ``interior`` / ``exterior`` keys, else its parent's, on ``mat``'s base
    material. ``apply(row, mat)``: ``row`` (a file's material) with the media of ``mat``
    (the object's row). New rows copy their base row of the material table;
    :meth:`table` and :meth:`names` give the extended table and names."""

    def __init__(self, names, table):
        self.base_names = list(names)
        self.rows = [np.array(r) for r in table]
        self.names = list(names)
        self.base = {}                # row -> the material row it copies
        self.media = {}               # row -> (interior, exterior) names (or _UNSET)
        self._made = {}

    def _variant(self, base, interior, exterior):
        if interior is _UNSET and exterior is _UNSET:
            return base
        key = (base, None if interior is _UNSET else interior, None if exterior is _UNSET else exterior)
        if key not in self._made:
            row = len(self.rows)
            self.rows.append(self.rows[base].copy())
            parts = [f"{k} {v}" for k, v in (("interior", key[1]), ("exterior", key[2])) if v is not None]
            self.names.append(f"{self.base_names[base]} ({', '.join(parts)})")
            self.base[row] = base
            self.media[row] = (interior, exterior)
            self._made[key] = row
        return self._made[key]

    def row_for(self, obj, mat, inherited):
        if mat < 0:          # a prototype's part without a material: the instance's row, with its media
            return mat
        interior, exterior = self.media.get(inherited, (_UNSET, _UNSET))
        interior = obj.get("interior", interior)
        exterior = obj.get("exterior", exterior)
        return self._variant(self.base.get(mat, mat), interior, exterior)

    def apply(self, row, mat):
        interior, exterior = self.media.get(mat, (_UNSET, _UNSET))
        return self._variant(self.base.get(row, row), interior, exterior)

    def table(self):
        return np.ascontiguousarray(np.array(self.rows).reshape(len(self.rows), -1))

    def interfaces(self, world):
        """(interior names, exterior names) per row: the row's own, else the defaults (no
        interior, ``world`` outside)."""
        inner, outer = [], []
        for row in range(len(self.rows)):
            i, e = self.media.get(row, (_UNSET, _UNSET))
            inner.append(None if i is _UNSET else i)
            outer.append(world if e is _UNSET else e)
        return inner, outer


def uses_media(data, materials):
    """Whether a scene needs the volumetric path tracer: it names a medium somewhere
    (top level, camera, an object), a material of it (a file's) has a volume, or a
    material is ``null``."""
    if "medium" in data or "medium" in data.get("camera", {}):
        return True
    if any("interior" in o or "exterior" in o for o, _ in _objects(data)):
        return True
    return any(m.get("type") == "null" or "volume" in m for m in materials.values())


# ------------------------------------------------------------------ the Media record
def _homogeneous(med):
    """(sigma_t (3,), albedo (3,)) of a homogeneous medium."""
    scale = float(med.get("scale", 1.0))
    if "sigma_a" in med or "sigma_s" in med:
        sa = _rgb(med.get("sigma_a", 0.0)) * scale
        ss = _rgb(med.get("sigma_s", 0.0)) * scale
        st = sa + ss
        return st, np.divide(ss, st, out=np.zeros(3), where=st > 0)
    return _rgb(med.get("sigma_t", DEFAULT_SIGMA_T)) * scale, _rgb(med.get("albedo", DEFAULT_ALBEDO))


def _phase_g(med):
    phase = med.get("phase", {"type": "isotropic"})
    return float(phase.get("g", 0.0)) if phase.get("type") == "hg" else 0.0


def majorant_grid(sigma, block):
    """Per cell of ``block`` x ``block`` x ``block`` voxels, the largest extinction the
    trilinear lookup can give inside it: the maximum over the cell's voxels and their
    neighbours one voxel out (trilinear weights reach the two voxel centres around a
    point) -> (mz, my, mx) float64. ``sigma`` (nz, ny, nx) holds each voxel's largest
    extinction over the channels."""
    out = sigma.astype(np.float64)
    for axis in range(3):
        n = out.shape[axis]
        cells = -(-n // block)
        parts = []
        for k in range(cells):
            lo, hi = max(k * block - 1, 0), min((k + 1) * block + 1, n)
            parts.append(np.take(out, range(lo, hi), axis=axis).max(axis=axis, keepdims=True))
        out = np.concatenate(parts, axis=axis)
    return out


def _box_to_grid(matrix, shape):
    """World -> voxel space (3, 4): the box [-1, 1]^3 placed by ``matrix`` becomes
    [0, nx] x [0, ny] x [0, nz] (``shape`` = (nz, ny, nx))."""
    nz, ny, nx = shape
    d = np.diag([nx / 2.0, ny / 2.0, nz / 2.0, 1.0])
    d[:3, 3] = [nx / 2.0, ny / 2.0, nz / 2.0]
    return (d @ np.linalg.inv(matrix))[:3]


class _GridStore:
    def __init__(self):
        self.voxels, self.majorants = [], []
        self.nvox = self.nmaj = 0

    def add_voxels(self, grid):
        off = self.nvox
        self.voxels.append(np.ascontiguousarray(grid, np.float32).ravel())
        self.nvox += grid.size
        return off

    def add_majorant(self, maj):
        off = self.nmaj
        self.majorants.append(np.ascontiguousarray(maj, np.float64).ravel())
        self.nmaj += maj.size
        return off


def _grid_medium(med, where, base_dir, store):
    """(sigma_t multiplier (3,), albedo (3,), to_grid (3, 4), grid row) of a grid medium."""
    scale = float(med.get("scale", 1.0))
    density = grid_from_spec(med["sigma_t"], f"{where}.sigma_t", base_dir)
    nz, ny, nx, ch = density.shape
    row = np.full(GRID_WIDTH, -1, np.int64)
    row[G_DENSITY], row[G_NX], row[G_NY], row[G_NZ], row[G_CHANNELS] = store.add_voxels(density), nx, ny, nz, ch
    albedo = med.get("albedo", DEFAULT_ALBEDO)
    const_albedo = np.ones(3)
    if isinstance(albedo, dict):
        a = grid_from_spec(albedo, f"{where}.albedo", base_dir, albedo=True)
        row[G_ALBEDO] = store.add_voxels(a)
        row[G_ANZ], row[G_ANY], row[G_ANX], row[G_ACHANNELS] = a.shape
    else:
        const_albedo = _rgb(albedo)
    sigma = scale * density.max(axis=3)
    block = max(1, math.ceil(max(nx, ny, nz) / MAJORANT_CELLS))
    maj = majorant_grid(sigma, block)
    row[G_MAJORANT] = store.add_majorant(maj)
    row[G_MZ], row[G_MY], row[G_MX] = maj.shape
    row[G_BLOCK] = block
    m = to_numpy(compose(med.get("transform"), where))
    if med.get("transform"):
        if not np.isfinite(m).all():
            raise SceneError(f"{where}.transform", "the transform overflows (too large a scale)")
        check_invertible(m, f"{where}.transform")
    return np.full(3, scale), const_albedo, _box_to_grid(m, (nz, ny, nx)), row


def check_unused_media(data, base_dir):
    """Check the grid media of a scene that uses none (no surface, camera or world names
    them): their grid files are read and checked all the same, as an unused material's
    textures are, so that a missing or broken file is found when the scene is written,
    not when a surface first uses it."""
    for name, med in data.get("media", {}).items():
        if isinstance(med, dict) and med.get("type") != "homogeneous":
            _grid_medium(med, f"media.{name}", base_dir, _GridStore())


def build_media(data, base_dir, rows, materials):
    """The :class:`~raytrace.layout.Media` of a scene whose material table ``rows`` (a
    :class:`MediumRows`) extends; ``materials``: name -> spec of the table's named rows
    (a file's materials with a ``volume``: an absorbing interior, ``docs/gltf.md``).
    None when the scene needs no volumetric path tracer (:func:`uses_media`)."""
    if not uses_media(data, materials):
        check_unused_media(data, base_dir)
        return None
    specs = dict(data.get("media", {}))
    for name, spec in materials.items():           # glTF KHR_materials_volume
        if "volume" in spec:
            specs[f"{name} (volume)"] = spec["volume"]
    index = {name: k for k, name in enumerate(specs)}
    n = len(specs)
    kind = np.zeros(n, np.int64)
    sigma_t, albedo = np.zeros((n, 3)), np.zeros((n, 3))
    g = np.zeros(n)
    to_grid = np.zeros((n, 3, 4))
    to_grid[:, :, :3] = np.eye(3)
    grid = np.full((n, GRID_WIDTH), -1, np.int64)
    store = _GridStore()
    for name, med in specs.items():
        k, where = index[name], f"media.{name}"
        if med["type"] == "homogeneous":
            kind[k] = MEDIUM_HOMOGENEOUS
            sigma_t[k], albedo[k] = _homogeneous(med)
        else:
            kind[k] = MEDIUM_GRID
            sigma_t[k], albedo[k], to_grid[k], grid[k] = _grid_medium(med, where, base_dir, store)
        g[k] = _phase_g(med)
    world = data.get("medium")
    inner, outer = rows.interfaces(world)
    for row, base in enumerate(rows.names[:len(rows.base_names)]):
        spec = materials.get(base, {})
        if "volume" in spec and inner[row] is None:
            inner[row] = f"{base} (volume)"
    for row in range(len(rows.base_names), len(rows.rows)):   # combinations: their base's volume
        base = rows.base_names[rows.base[row]]
        if inner[row] is None and rows.media[row][0] is _UNSET and "volume" in materials.get(base, {}):
            inner[row] = f"{base} (volume)"
    table = rows.table()
    return Media(
        kind=kind, sigma_t=sigma_t, albedo=albedo, g=g, to_grid=np.ascontiguousarray(to_grid),
        grid=grid,
        voxels=np.concatenate(store.voxels) if store.voxels else np.zeros(1, np.float32),
        majorant=np.concatenate(store.majorants) if store.majorants else np.zeros(1),
        mat_interior=np.array([-1 if m is None else index[m] for m in inner], np.int64),
        mat_exterior=np.array([-1 if m is None else index[m] for m in outer], np.int64),
        camera=index.get(data.get("camera", {}).get("medium", world), -1),
        has_null=bool((table[:, M_TYPE] == MAT_NULL).any()),
    )


def gltf_volume(attenuation_color, attenuation_distance):
    """The homogeneous, purely absorbing medium of glTF's ``KHR_materials_volume``:
    ``sigma_a = -ln(attenuationColor) / attenuationDistance`` per channel (a colour of 0
    absorbs everything: a large finite coefficient), no scattering."""
    c = np.clip(np.asarray(attenuation_color, np.float64), 1e-12, 1.0)
    sa = -np.log(c) / float(attenuation_distance)
    return {"type": "homogeneous", "sigma_a": [float(x) for x in sa], "sigma_s": [0.0, 0.0, 0.0]}
