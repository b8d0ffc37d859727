"""Triangle-mesh helpers for cloth output: smooth normals and OBJ files."""
import numpy as np
from userio.outputs import write_bytes_atomic


def vertex_normals(vertices, faces):
    """Area-weighted vertex normals.

    ``vertices`` ``(n, 3) float64``, ``faces`` ``(m, 3) int64`` (counter-clockwise seen
    from the side the normals point to). Each vertex gets the normalised sum of the
    un-normalised cross products of its faces (length = twice the area). Returns
    ``(n, 3) float64`` unit vectors; a vertex that touches no face (or only degenerate
    faces) gets ``(0, 1, 0)``.
    """
    v = np.asarray(vertices, dtype=np.float64)
    f = np.asarray(faces, dtype=np.int64)
    fn = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    vn = np.zeros_like(v)
    for k in range(3):
        for c in range(3):
            vn[:, c] += np.bincount(f[:, k], weights=fn[:, c], minlength=len(v))
    length = np.linalg.norm(vn, axis=1)
    ok = length > 0
    vn[ok] /= length[ok, None]
    vn[~ok] = (0.0, 1.0, 0.0)
    return vn


def format_obj(vertices, faces, normals=None):
    """The text of a Wavefront OBJ (``v``, optional ``vn``, ``f`` with 1-based indices)."""
    v = np.asarray(vertices, dtype=np.float64)
    f = np.asarray(faces, dtype=np.int64) + 1
    lines = [f"# {len(v)} vertices, {len(f)} triangles (particles.mesh.write_obj)"]
    lines += [f"v {a:.9g} {b:.9g} {c:.9g}" for a, b, c in v]
    if normals is not None:
        lines += [f"vn {a:.6f} {b:.6f} {c:.6f}" for a, b, c in np.asarray(normals)]
        lines += [f"f {a}//{a} {b}//{b} {c}//{c}" for a, b, c in f]
    else:
        lines += [f"f {a} {b} {c}" for a, b, c in f]
    return "\n".join(lines) + "\n"


def write_obj(path, vertices, faces, normals=None):
    """Write a Wavefront OBJ (see :func:`format_obj`) through a temporary file and a
    rename: a failure leaves no half-written file."""
    write_bytes_atomic(path, format_obj(vertices, faces, normals).encode("utf-8"))
