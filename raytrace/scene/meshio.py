"""Reading triangle meshes from files.

OBJ is read by our own parser (fast path with numpy for the common all-triangle case,
clear ``file: line N: ...`` errors otherwise). PLY, STL, OFF and GLB go through trimesh.
Polygons are split into triangle fans. Indices are 1-based; negative indices count back
from the end, as the OBJ format says.
"""
import pathlib

import numpy as np

from userio.limits import check_finite
from userio.textio import read_text

from ..errors import SceneError


class Mesh:
    """A triangle mesh: ``vertices`` (n,3) float64, ``faces`` (m,3) int64 and optionally
    per-face-corner ``corner_normals`` (m,3,3) and texture coordinates ``corner_uvs``
    (m,3,2) float64 (None when the file does not give them for every corner). UVs have
    ``v`` flipped (``1 - v``): OBJ puts ``v = 0`` at the bottom of an image, our (and
    Mitsuba's) image lookup at the top."""

    def __init__(self, vertices, faces, corner_normals=None, corner_uvs=None):
        self.vertices = vertices
        self.faces = faces
        self.corner_normals = corner_normals
        self.corner_uvs = corner_uvs


def _floats(rows, path, lineno, what, count):
    """(n, count) float64 from ``v``/``vn``/``vt`` lines; every value finite."""
    try:
        arr = np.array([r.split()[1:count + 1] for r in rows], dtype=np.float64)
    except ValueError:
        arr = None
    if arr is None or arr.ndim != 2 or arr.shape[1] != count:
        for r, n in zip(rows, lineno):
            parts = r.split()[1:]
            try:
                vals = [float(x) for x in parts[:count]]
            except ValueError:
                raise SceneError(f"line {n}", f"{what} has a value that is not a number: {_clip(r)!r}",
                                 file=path) from None
            if len(vals) < count:
                raise SceneError(f"line {n}", f"{what} needs {count} numbers: {_clip(r)!r}", file=path)
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        k = int(np.argmax(bad))
        raise SceneError(f"line {lineno[k]}", f"{what} has a value that is not finite: {_clip(rows[k])!r}",
                         file=path)
    return arr


def _clip(line, n=60):
    line = line.strip()
    return line if len(line) <= n else line[:n] + "..."


def read_obj(path):
    """Read an OBJ file into a :class:`Mesh`. Raises SceneError naming the file and line."""
    path = pathlib.Path(path)
    text = read_text(path, "mesh file", SceneError)
    v_rows, v_no, vn_rows, vn_no, vt_rows, vt_no, f_rows, f_no = [], [], [], [], [], [], [], []
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("v "):
            v_rows.append(line)
            v_no.append(n)
        elif line.startswith("f "):
            f_rows.append(line)
            f_no.append(n)
        elif line.startswith("vn "):
            vn_rows.append(line)
            vn_no.append(n)
        elif line.startswith("vt "):
            vt_rows.append(line)
            vt_no.append(n)
    if not v_rows or not f_rows:
        raise SceneError(None, "mesh file has no vertices or no faces ('v' / 'f' lines)", file=str(path))
    verts = _floats(v_rows, str(path), v_no, "vertex", 3)
    normals = _floats(vn_rows, str(path), vn_no, "normal", 3) if vn_rows else None
    uvs = _floats(vt_rows, str(path), vt_no, "texture coordinate", 2) if vt_rows else None
    nv = len(verts)
    nn = 0 if normals is None else len(normals)
    nt = 0 if uvs is None else len(uvs)

    def resolve(idx, count, n, kind):
        try:
            i = int(idx)
        except ValueError:
            raise SceneError(f"line {n}", f"bad face index {idx!r}", file=str(path)) from None
        if i < 0:
            i += count + 1
        if not 1 <= i <= count:
            raise SceneError(f"line {n}", f"face refers to {kind} {idx}, but there are {count}",
                             file=str(path))
        return i - 1

    faces, corner_n, corner_t = [], [], []
    for line, n in zip(f_rows, f_no):
        corners = line.split()[1:]
        if len(corners) < 3:
            raise SceneError(f"line {n}", f"a face needs at least 3 vertices: {line.strip()!r}",
                             file=str(path))
        vi, ni, ti = [], [], []
        for c in corners:
            parts = c.split("/")
            vi.append(resolve(parts[0], nv, n, "vertex"))
            if uvs is not None and len(parts) >= 2 and parts[1]:
                ti.append(resolve(parts[1], nt, n, "texture coordinate"))
            if normals is not None and len(parts) >= 3 and parts[2]:
                ni.append(resolve(parts[2], nn, n, "normal"))
        has_n, has_t = len(ni) == len(vi), len(ti) == len(vi)
        for k in range(1, len(vi) - 1):
            faces.append((vi[0], vi[k], vi[k + 1]))
            corner_n.append((ni[0], ni[k], ni[k + 1]) if has_n else (-1, -1, -1))
            corner_t.append((ti[0], ti[k], ti[k + 1]) if has_t else (-1, -1, -1))
    faces = np.asarray(faces, dtype=np.int64)
    cn = None
    if normals is not None:
        idx = np.asarray(corner_n, dtype=np.int64)
        if (idx >= 0).all():
            cn = normals[idx]
    ct = None
    if uvs is not None:
        idx = np.asarray(corner_t, dtype=np.int64)
        if (idx >= 0).all():
            ct = uvs[idx]
            ct[..., 1] = 1.0 - ct[..., 1]
    return Mesh(verts, faces, cn, ct)


def read_mesh(path):
    """Read OBJ with :func:`read_obj`, other formats with trimesh (PLY, STL, OFF, GLB)."""
    path = pathlib.Path(path)
    if path.suffix.lower() == ".obj":
        return read_obj(path)
    try:
        import trimesh
    except ImportError:
        raise SceneError(None, f"reading {path.suffix} meshes needs trimesh (pip install trimesh)",
                         file=str(path)) from None
    try:
        tm = trimesh.load(str(path), force="mesh", process=False)
    except Exception as exc:  # trimesh raises many types for bad files
        raise SceneError(None, f"cannot read mesh: {exc}", file=str(path)) from None
    if len(tm.faces) == 0:
        raise SceneError(None, "mesh file has no faces", file=str(path))
    verts = np.asarray(tm.vertices, np.float64)
    check_finite(verts, None, file=str(path), error=SceneError, row_name="vertex")
    return Mesh(verts, np.asarray(tm.faces, np.int64), None)
