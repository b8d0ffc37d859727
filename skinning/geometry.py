"""Triangle geometry for display: vertex normals, and the skeleton as spheres and cylinders.

All meshes are ``(vertices (V,3) float64, faces (F,3) int64, normals (V,3) float64)`` with
faces counter-clockwise seen from outside (outward normals by the right-hand rule).
"""
import numpy as np

from .errors import SkinningError
from .kernels import vertex_normals_kernel


def vertex_normals(vertices, faces):
    """Area-weighted unit vertex normals (N,3) of a triangle mesh.

    vertices (N,3) float64; faces (M,3) int, counter-clockwise from outside. Each face
    contributes its normal times its area; vertices on no face get ``(0, 0, 0)``.
    """
    v = np.ascontiguousarray(vertices, dtype=np.float64)
    f = np.ascontiguousarray(faces, dtype=np.int64)
    if v.ndim != 2 or v.shape[1] != 3 or f.ndim != 2 or f.shape[1] != 3:
        raise SkinningError(f"vertex_normals: need (N,3) vertices and (M,3) faces, "
                            f"got {v.shape} and {f.shape}")
    if f.size and (f.min() < 0 or f.max() >= v.shape[0]):
        raise SkinningError("vertex_normals: face index out of range")
    out = np.empty_like(v)
    vertex_normals_kernel(v, f, out)
    return out


def sphere_mesh(center, radius, slices=16, stacks=8):
    """UV sphere: ``2 + slices * (stacks - 1)`` vertices, exact outward normals."""
    center = np.asarray(center, dtype=np.float64)
    theta = np.pi * np.arange(1, stacks) / stacks              # polar angle from +y
    phi = 2.0 * np.pi * np.arange(slices) / slices
    st, ct = np.sin(theta)[:, None], np.cos(theta)[:, None]
    ring = np.stack([st * np.sin(phi), np.broadcast_to(ct, (stacks - 1, slices)),
                     st * np.cos(phi)], axis=-1).reshape(-1, 3)
    unit = np.vstack([[0.0, 1.0, 0.0], ring, [0.0, -1.0, 0.0]])
    faces = []
    top, bottom = 0, unit.shape[0] - 1
    idx = lambda r, s: 1 + r * slices + (s % slices)  # noqa: E731
    for s in range(slices):
        faces.append((top, idx(0, s), idx(0, s + 1)))
        faces.append((bottom, idx(stacks - 2, s + 1), idx(stacks - 2, s)))
        for r in range(stacks - 2):
            a, b = idx(r, s), idx(r, s + 1)
            c, d = idx(r + 1, s), idx(r + 1, s + 1)
            faces.append((a, c, d))
            faces.append((a, d, b))
    return center + radius * unit, np.array(faces, dtype=np.int64), unit.copy()


def cylinder_mesh(a, b, radius, slices=12):
    """Open cylinder (no caps) from point ``a`` to ``b``: ``2 * slices`` vertices."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    axis = b - a
    length = np.linalg.norm(axis)
    if length == 0.0:
        raise SkinningError("cylinder_mesh: the two ends coincide")
    d = axis / length
    helper = np.array([1.0, 0.0, 0.0]) if abs(d[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(d, helper)
    u /= np.linalg.norm(u)
    w = np.cross(d, u)                                           # (u, w, d) right-handed
    phi = 2.0 * np.pi * np.arange(slices) / slices
    radial = np.cos(phi)[:, None] * u + np.sin(phi)[:, None] * w
    verts = np.vstack([a + radius * radial, b + radius * radial])
    faces = []
    for s in range(slices):
        s1 = (s + 1) % slices
        faces.append((s, s1, slices + s1))
        faces.append((s, slices + s1, slices + s))
    return verts, np.array(faces, dtype=np.int64), np.vstack([radial, radial])


def merge_meshes(meshes):
    """Concatenate ``(V, F, N)`` meshes into one, offsetting face indices."""
    vs, fs, ns, off = [], [], [], 0
    for v, f, n in meshes:
        vs.append(v)
        fs.append(f + off)
        ns.append(n)
        off += v.shape[0]
    if not vs:
        return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64), np.zeros((0, 3))
    return np.vstack(vs), np.vstack(fs).astype(np.int64), np.vstack(ns)


def skeleton_mesh(joint_positions, parents, joint_radius=None, bone_radius=None,
                  slices=16, stacks=8):
    """The skeleton as the course draws it: a sphere per joint, a cylinder per bone.

    joint_positions (J,3) world positions (e.g. ``world[:, :3, 3]``); parents (J,) ints
    (-1 for roots). joint_radius defaults to 2% of the joints' bounding-box diagonal (0.05
    for a single joint), bone_radius to half of joint_radius. Bones shorter than
    1e-9 are skipped. Returns ``(vertices, faces, normals)``.
    """
    p = np.asarray(joint_positions, dtype=np.float64)
    parents = np.asarray(parents, dtype=np.int64)
    if p.ndim != 2 or p.shape[1] != 3 or parents.shape != (p.shape[0],):
        raise SkinningError(f"skeleton_mesh: need (J,3) positions and (J,) parents, "
                            f"got {p.shape} and {parents.shape}")
    if joint_radius is None:
        half = p.max(axis=0) / 2 - p.min(axis=0) / 2      # no overflow for finite positions
        scale = float(np.abs(half).max())
        diag = 2.0 * scale * float(np.linalg.norm(half / scale)) if scale > 0 else 0.0
        joint_radius = 0.02 * diag if diag > 0 else 0.05
    if bone_radius is None:
        bone_radius = 0.5 * joint_radius
    for name, r in (("joint_radius", joint_radius), ("bone_radius", bone_radius)):
        if not (np.isfinite(r) and r > 0):
            raise SkinningError(f"skeleton_mesh: {name} must be a finite number > 0, got {r}")
    parts = [sphere_mesh(c, joint_radius, slices, stacks) for c in p]
    for j, q in enumerate(parents):
        if q >= 0 and np.linalg.norm(p[j] - p[q]) > 1e-9:
            parts.append(cylinder_mesh(p[q], p[j], bone_radius, max(slices * 3 // 4, 3)))
    return merge_meshes(parts)
