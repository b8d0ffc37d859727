"""Readers for the course's skinning files: ``.skel``, ``.attach``, ``.obj``.

- ``.skel``: one joint per line, ``tx ty tz parent``. The translation is relative to the
  parent (the root's is its world position); ``parent`` is -1 for the root and must be an
  earlier line. Joint j is named ``"joint<j>"``; poses may also use the plain index.
- ``.attach``: one line per mesh vertex with ``J - 1`` weights, for joints ``1 .. J-1``;
  the root (joint 0) implicitly has weight 0. Weights must be >= 0 and sum to 1 within
  1e-3 (the files keep 4 decimals); such rows are rescaled to exactly 1. Rows further
  off are an error unless ``normalize=True``.
- ``.obj``: ``v x y z`` and ``f a b c ...`` lines (1-based, negative = relative, ``a/t/n``
  accepted, polygons fan-triangulated); other statements are ignored.

Bind pose: every joint rotation is the identity, so ``B_j`` is the translation by the
accumulated offsets and ``B_j^-1`` its inverse. Errors name file and line, e.g.
``Model1.skel: line 4: parent 7 comes after this joint (joint 3)``.
"""
import pathlib

import numpy as np
from userio.outputs import write_bytes_atomic

from .errors import SkinningFileError, read_text_file
from .model import SkinnedMesh
from .rotations import IDENTITY_QUAT
from .skeleton import Skeleton
from .weights import SUM_TOLERANCE, dense_to_sparse, row_problem


def _lines(path):
    """(line number, stripped text) of the non-blank, non-comment lines of a text file."""
    text = read_text_file(path)
    for i, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if s and not s.startswith("#"):
            yield i, s


def _floats(path, lineno, tokens, what):
    try:
        vals = [float(t) for t in tokens]
    except ValueError:
        bad = next(t for t in tokens if not _is_float(t))
        raise SkinningFileError(path, f"line {lineno}",
                                f"{what}: {_shown(bad)} is not a number") from None
    if not all(np.isfinite(vals)):
        raise SkinningFileError(path, f"line {lineno}", f"{what}: numbers must be finite")
    return vals


def _shown(token, limit=40):
    """``repr(token)`` cut to about ``limit`` characters, for one-line messages."""
    return repr(token) if len(token) <= limit else repr(token[:limit]) + "..."


def _is_float(t):
    try:
        float(t)
        return True
    except ValueError:
        return False


def read_skel(path):
    """Read a ``.skel`` file into a :class:`~skinning.skeleton.Skeleton` (see module doc)."""
    offsets, parents = [], []
    for lineno, s in _lines(path):
        tok = s.split()
        j = len(parents)
        if len(tok) != 4:
            raise SkinningFileError(path, f"line {lineno}",
                                    f"expected 4 values 'tx ty tz parent', got {len(tok)}")
        offsets.append(_floats(path, lineno, tok[:3], "translation"))
        try:
            p = int(tok[3])
        except ValueError:
            raise SkinningFileError(path, f"line {lineno}",
                                    f"parent {_shown(tok[3])} is not an integer") from None
        if p < -1:
            raise SkinningFileError(path, f"line {lineno}", f"parent {p} must be >= -1")
        if p >= j:
            raise SkinningFileError(path, f"line {lineno}",
                                    f"parent {p} comes after this joint (joint {j}); "
                                    "parents must be listed before their children")
        parents.append(p)
    if not parents:
        raise SkinningFileError(path, None, "no joints")
    if parents[0] != -1:
        raise SkinningFileError(path, None, "the first joint must be the root (parent -1)")
    nj = len(parents)
    return Skeleton([f"joint{j}" for j in range(nj)], np.array(parents), np.array(offsets),
                    np.tile(IDENTITY_QUAT, (nj, 1)))


def read_attach(path, num_joints, normalize=False, tol=SUM_TOLERANCE, skeleton_file=None):
    """Read a ``.attach`` file: dense weights (N, num_joints), column 0 (the root) all zero.

    Each row is checked (column count, numbers, >= 0, sum 1 within ``tol``) and rescaled to
    sum to exactly 1; ``normalize=True`` rescales rows whatever their (positive) sum.
    ``skeleton_file``: where ``num_joints`` came from, named when the column count is off.
    """
    want = num_joints - 1
    origin = "" if skeleton_file is None else \
        f" ({pathlib.Path(skeleton_file).name} has {num_joints} joints)"
    rows = []
    for lineno, s in _lines(path):
        tok = s.split()
        if len(tok) != want:
            raise SkinningFileError(path, f"line {lineno}",
                                    f"expected {want} weights (joints 1..{want}), got "
                                    f"{len(tok)}{origin}")
        w = np.array(_floats(path, lineno, tok, "weight"))
        problem = row_problem(w, tol=np.inf if normalize else tol)
        if problem is None and w.sum() <= 0.0:
            problem = "all weights are zero"
        if problem:
            raise SkinningFileError(path, f"line {lineno}", problem)
        rows.append(w / w.sum())
    if not rows:
        raise SkinningFileError(path, None, "no weights")
    dense = np.zeros((len(rows), num_joints))
    dense[:, 1:] = np.array(rows)
    return dense


def read_obj(path):
    """Read an OBJ: ``(vertices (N,3) float64, faces (M,3) int64)`` 0-based, fan-triangulated."""
    verts, faces = [], []
    for lineno, s in _lines(path):
        tok = s.split()
        if tok[0] == "v":
            if len(tok) not in (4, 5, 7):
                raise SkinningFileError(path, f"line {lineno}",
                                        f"vertex: expected 3 coordinates, got {len(tok) - 1}")
            verts.append(_floats(path, lineno, tok[1:4], "vertex"))
        elif tok[0] == "f":
            if len(tok) < 4:
                raise SkinningFileError(path, f"line {lineno}",
                                        f"face: expected at least 3 vertices, got {len(tok) - 1}")
            idx = []
            for t in tok[1:]:
                head = t.split("/")[0]
                try:
                    k = int(head)
                except ValueError:
                    raise SkinningFileError(path, f"line {lineno}",
                                            f"face: {_shown(t)} is not a vertex index") from None
                k = k - 1 if k > 0 else len(verts) + k
                if k < 0 or k >= len(verts) or head in ("0", "-0"):
                    raise SkinningFileError(path, f"line {lineno}",
                                            f"face: vertex {head} does not exist "
                                            f"({len(verts)} vertices so far)")
                idx.append(k)
            for a in range(1, len(idx) - 1):
                faces.append((idx[0], idx[a], idx[a + 1]))
    if not verts:
        raise SkinningFileError(path, None, "no vertices")
    return (np.array(verts, dtype=np.float64),
            np.array(faces, dtype=np.int64).reshape(-1, 3))


def load_course(skel, attach, obj, normalize=False, max_influences=None):
    """Load the course triple into a :class:`~skinning.model.SkinnedMesh`.

    skel, attach, obj: paths. normalize: rescale weight rows that do not sum to 1.
    max_influences: keep only the K largest weights per vertex (default: all non-zero).
    """
    skeleton = read_skel(skel)
    dense = read_attach(attach, skeleton.num_joints, normalize=normalize, skeleton_file=skel)
    vertices, faces = read_obj(obj)
    if dense.shape[0] != vertices.shape[0]:
        raise SkinningFileError(attach, None,
                                f"{dense.shape[0]} lines of weights but {pathlib.Path(obj).name} "
                                f"has {vertices.shape[0]} vertices")
    joints, weights = dense_to_sparse(dense, max_influences)
    inverse_bind = np.linalg.inv(skeleton.bind_matrices())
    return SkinnedMesh(skeleton, vertices, faces, joints, weights, inverse_bind,
                       source=str(skel))


def format_obj(vertices, faces, normals=None):
    """The text of a triangle mesh as OBJ (``v``, optional ``vn``, ``f a//a`` 1-based)."""
    v = np.asarray(vertices, dtype=np.float64)
    f = np.asarray(faces, dtype=np.int64) + 1
    parts = ["".join(f"v {a:.6f} {b:.6f} {c:.6f}\n" for a, b, c in v)]
    if normals is None:
        parts.append("".join(f"f {a} {b} {c}\n" for a, b, c in f))
    else:
        parts.append("".join(f"vn {a:.6f} {b:.6f} {c:.6f}\n" for a, b, c in normals))
        parts.append("".join(f"f {a}//{a} {b}//{b} {c}//{c}\n" for a, b, c in f))
    return "".join(parts)


def write_obj(path, vertices, faces, normals=None):
    """Write a triangle mesh as OBJ (see :func:`format_obj`) through a temporary file and
    a rename: a failure leaves no half-written file."""
    write_bytes_atomic(path, format_obj(vertices, faces, normals).encode("utf-8"))
