"""Scene dict -> flat structure-of-arrays geometry for the kernels.

Triangles (from ``triangle``, ``mesh`` and plug-in objects) are moved to world space once;
spheres keep a world-to-object affine map of a unit sphere (rays go to object space,
normals come back by the inverse transpose); planes are stored in world space and tested
outside the BVH because they are infinite.
"""
import pathlib
from typing import NamedTuple

import numpy as np

from ..errors import SceneError
from .meshio import read_mesh
from .plugins import plugin_object_types
from .transforms import check_invertible, compose, to_numpy

# material table columns
M_DIFFUSE, M_SPECULAR, M_SHININESS, M_REFLECT, M_TRANSMIT, M_IOR = 0, 3, 6, 7, 10, 13
MATERIAL_WIDTH = 14


class Geometry(NamedTuple):
    """Flat arrays describing the scene's shapes (all float64 unless noted)."""
    tri_v0: np.ndarray          # (T,3) world-space vertices
    tri_v1: np.ndarray
    tri_v2: np.ndarray
    tri_n: np.ndarray           # (T,3,3) world-space unit normal at each corner
    tri_mat: np.ndarray         # (T,) int64 material row
    sph_w2o: np.ndarray         # (S,3,4) world -> unit-sphere space
    sph_lo: np.ndarray          # (S,3) world AABB
    sph_hi: np.ndarray
    sph_mat: np.ndarray         # (S,) int64
    pl_n: np.ndarray            # (P,3) unit normals, world
    pl_d: np.ndarray            # (P,) offsets: dot(n, p) = d
    pl_mat: np.ndarray          # (P,) int64
    materials: np.ndarray       # (M, MATERIAL_WIDTH)


def material_table(materials):
    """Named materials -> (names, table). Row 0 is the default grey used when none is given."""
    names = ["<default>"] + list(materials)
    table = np.zeros((len(names), MATERIAL_WIDTH))
    table[0, M_DIFFUSE:M_DIFFUSE + 3] = 0.8
    table[0, M_SHININESS] = 1.0
    table[0, M_IOR] = 1.5
    for row, name in enumerate(names[1:], 1):
        m = materials[name]
        spec = m.get("specular", [0.0, 0.0, 0.0])
        table[row, M_DIFFUSE:M_DIFFUSE + 3] = m.get("diffuse", [0.0, 0.0, 0.0])
        table[row, M_SPECULAR:M_SPECULAR + 3] = spec
        table[row, M_SHININESS] = m.get("shininess", 1.0)
        table[row, M_REFLECT:M_REFLECT + 3] = m.get("reflect", spec)
        table[row, M_TRANSMIT:M_TRANSMIT + 3] = m.get("transmit", [0.0, 0.0, 0.0])
        table[row, M_IOR] = m.get("ior", 1.5)
        if "transmit" in m and "reflect" not in m:
            table[row, M_REFLECT:M_REFLECT + 3] = 1.0   # Fresnel-weighted mirror ray
    return names, table


def _unit(v, where, what="must not be a zero vector"):
    v = np.asarray(v, dtype=np.float64)
    n = np.linalg.norm(v)
    if n == 0.0 or not np.isfinite(n):
        raise SceneError(where, what)
    return v / n


def vertex_normals(vertices, faces):
    """Area-weighted vertex normals, (n,3) unit (zero where no face touches a vertex)."""
    v = vertices[faces]
    fn = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])     # length = 2 * area
    vn = np.zeros_like(vertices)
    for k in range(3):
        np.add.at(vn, faces[:, k], fn)
    length = np.linalg.norm(vn, axis=1, keepdims=True)
    return np.divide(vn, length, out=np.zeros_like(vn), where=length > 0)


class _Builder:
    def __init__(self, scene_dir, material_rows):
        self.scene_dir = pathlib.Path(scene_dir)
        self.material_rows = material_rows
        self.tris, self.tri_normals, self.tri_mats = [], [], []
        self.spheres, self.sphere_mats = [], []
        self.planes, self.plane_mats = [], []
        self.plugins = None

    def add_triangles(self, verts, faces, corner_normals, m, mat, where, strict=False):
        """Add a triangle mesh in object space; corner_normals (F,3,3) or None."""
        lin, off = m[:3, :3], m[:3, 3]
        wv = verts @ lin.T + off
        tri = wv[faces]                                            # (F,3,3)
        fn = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        area2 = np.linalg.norm(fn, axis=1)
        scale = max(np.abs(tri).max(), 1e-300) ** 2
        good = area2 > 1e-14 * scale
        if strict and not good.all():
            raise SceneError(where, "degenerate triangle (its vertices are collinear)")
        tri, fn, area2 = tri[good], fn[good], area2[good]
        face_n = fn / area2[:, None]
        if corner_normals is None:
            cn = np.repeat(face_n[:, None, :], 3, axis=1)
        else:
            nmat = np.linalg.inv(lin).T                              # inverse transpose
            cn = corner_normals[good] @ nmat.T
            length = np.linalg.norm(cn, axis=2, keepdims=True)
            bad = (length[..., 0] == 0).any(axis=1)
            cn = np.divide(cn, length, out=np.zeros_like(cn), where=length > 0)
            cn[bad] = face_n[bad, None, :]
        self.tris.append(tri)
        self.tri_normals.append(cn)
        self.tri_mats.append(np.full(len(tri), mat, np.int64))

    def visit(self, obj, where, parent, inherited_mat):
        local = to_numpy(compose(obj.get("transform"), where))
        m = parent @ local
        if obj.get("transform"):
            check_invertible(m, f"{where}.transform")
        mat = self.material_rows[obj["material"]] if "material" in obj else inherited_mat
        kind = obj["type"]
        if kind == "group":
            for i, child in enumerate(obj["children"]):
                self.visit(child, f"{where}.children[{i}]", m, mat)
        elif kind == "sphere":
            c = np.asarray(obj.get("center", [0, 0, 0]), np.float64)
            r = float(obj.get("radius", 1.0))
            o2w = m.copy()
            o2w[:3, :3] = m[:3, :3] * r
            o2w[:3, 3] = m[:3, :3] @ c + m[:3, 3]
            self.spheres.append(o2w)
            self.sphere_mats.append(mat)
        elif kind == "plane":
            n = _unit(obj["normal"], f"{where}.normal")
            d = float(obj.get("offset", 0.0))
            p0 = m[:3, :3] @ (n * d) + m[:3, 3]
            nw = np.linalg.inv(m[:3, :3]).T @ n
            nw = _unit(nw, where)
            self.planes.append(np.concatenate([nw, [nw @ p0]]))
            self.plane_mats.append(mat)
        elif kind == "triangle":
            v = np.asarray(obj["vertices"], np.float64)
            cn = None
            if "normals" in obj:
                cn = np.asarray(obj["normals"], np.float64)
                if (np.linalg.norm(cn, axis=1) == 0).any():
                    raise SceneError(f"{where}.normals", "normals must not be zero vectors")
                cn = cn[None]
            self.add_triangles(v, np.array([[0, 1, 2]]), cn, m, mat, f"{where}.vertices", strict=True)
        elif kind == "mesh":
            path = self.scene_dir / obj["file"]
            if not path.is_file():
                raise SceneError(f"{where}.file", f"file not found: {path}")
            mesh = read_mesh(path)
            cn = mesh.corner_normals
            smooth = obj.get("smooth", cn is not None)
            if not smooth:
                cn = None
            elif cn is None:
                cn = vertex_normals(mesh.vertices, mesh.faces)[mesh.faces]
            self.add_triangles(mesh.vertices, mesh.faces, cn, m, mat, where)
        else:
            if self.plugins is None:
                self.plugins = plugin_object_types()
            verts, faces, normals = self.plugins[kind]["build"](obj, where, self.scene_dir)
            verts = np.asarray(verts, np.float64)
            faces = np.asarray(faces, np.int64)
            cn = None if normals is None else np.asarray(normals, np.float64)[faces]
            self.add_triangles(verts, faces, cn, m, mat, where)

    def geometry(self, table):
        def cat(parts, shape, dtype=np.float64):
            return np.ascontiguousarray(np.concatenate(parts) if parts else np.zeros(shape, dtype), dtype)
        tri = cat(self.tris, (0, 3, 3))
        o2w = np.array(self.spheres).reshape(-1, 4, 4)
        w2o = np.linalg.inv(o2w)[:, :3, :] if len(o2w) else np.zeros((0, 3, 4))
        # AABB of an ellipsoid M * unit sphere: centre +- row norms of the linear part
        ext = np.linalg.norm(o2w[:, :3, :3], axis=2) if len(o2w) else np.zeros((0, 3))
        ctr = o2w[:, :3, 3] if len(o2w) else np.zeros((0, 3))
        planes = np.array(self.planes).reshape(-1, 4)
        return Geometry(
            tri_v0=np.ascontiguousarray(tri[:, 0]), tri_v1=np.ascontiguousarray(tri[:, 1]),
            tri_v2=np.ascontiguousarray(tri[:, 2]),
            tri_n=cat(self.tri_normals, (0, 3, 3)),
            tri_mat=cat(self.tri_mats, (0,), np.int64),
            sph_w2o=np.ascontiguousarray(w2o), sph_lo=np.ascontiguousarray(ctr - ext),
            sph_hi=np.ascontiguousarray(ctr + ext),
            sph_mat=np.asarray(self.sphere_mats, np.int64),
            pl_n=np.ascontiguousarray(planes[:, :3]), pl_d=np.ascontiguousarray(planes[:, 3]),
            pl_mat=np.asarray(self.plane_mats, np.int64),
            materials=np.ascontiguousarray(table),
        )


def build_geometry(data, scene_dir):
    """Flatten ``data["objects"]`` (a validated scene dict) into a :class:`Geometry`."""
    names, table = material_table(data.get("materials", {}))
    rows = {n: i for i, n in enumerate(names)}
    b = _Builder(scene_dir, rows)
    for i, obj in enumerate(data.get("objects", [])):
        b.visit(obj, f"objects[{i}]", np.eye(4), 0)
    return b.geometry(table)
