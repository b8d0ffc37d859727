"""Texture coordinates (``vt``) of OBJ files, per face corner.

``raytrace/scene/meshio.py`` reads positions, faces and normals; this module adds the
``vt`` coordinates for textured meshes, splitting polygons into the same fans
(``0, k, k+1``) in the same face order, so row ``i`` here belongs to face ``i`` there.
``v`` is flipped (``1 - v``): OBJ puts ``v = 0`` at the bottom of an image, our (and
Mitsuba's) image lookup at the top.
"""
import pathlib

import numpy as np

from ..errors import SceneError


def read_obj_texcoords(path):
    """-> (F, 3, 2) float64 corner UVs in :func:`meshio.read_obj`'s face order, or None
    when the file has no ``vt`` lines or some face corner has no ``vt`` index."""
    path = pathlib.Path(path)
    text = path.read_text(errors="replace")
    vt, corners = [], []
    complete = True
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("vt "):
            parts = line.split()[1:3]
            try:
                vals = [float(x) for x in parts]
            except ValueError:
                raise SceneError(f"line {n}", f"texture coordinate is not a number: {line.strip()!r}",
                                 file=str(path)) from None
            if len(vals) < 2:
                vals = vals + [0.0] * (2 - len(vals))
            vt.append(vals)
        elif line.startswith("f "):
            idx = []
            for c in line.split()[1:]:
                parts = c.split("/")
                if len(parts) < 2 or not parts[1]:
                    complete = False
                    idx.append(0)
                    continue
                try:
                    i = int(parts[1])
                except ValueError:
                    raise SceneError(f"line {n}", f"bad texture index in {c!r}", file=str(path)) from None
                idx.append((i, n))
            for k in range(1, len(idx) - 1):
                corners.append((idx[0], idx[k], idx[k + 1]))
    if not vt or not complete:
        return None
    uv = np.asarray(vt, np.float64)
    count = len(uv)

    def resolve(entry):
        i, n = entry
        j = i + count + 1 if i < 0 else i
        if not 1 <= j <= count:
            raise SceneError(f"line {n}", f"face refers to texture coordinate {i}, but there are {count}",
                             file=str(path))
        return j - 1

    index = np.array([[resolve(e) for e in tri] for tri in corners], np.int64).reshape(-1, 3)
    out = uv[index]
    out[..., 1] = 1.0 - out[..., 1]
    return out
