"""Scene dict -> flat structure-of-arrays geometry for the kernels.

Triangles (from ``triangle``, ``rectangle``, ``cube``, ``mesh`` and plug-in objects) are
moved to world space once; spheres keep a world-to-object affine map of a unit sphere
(rays go to object space, normals come back by the inverse transpose); planes are stored
in world space and tested outside the BVH because they are infinite.

Besides positions and normals every primitive carries texture coordinates (see
``docs/path-tracing.md``: triangles per corner, spheres and planes computed at the hit)
and an emitter index (row of ``emission``, -1 for none).

Files that bring their own materials (``gltf`` objects, OBJ meshes with MTL files) are
read first (:func:`file_assets`): their materials join the table as ``FILE#NAME`` (a
scene material of the same name replaces the file's), then their triangles are added
with one material row per primitive or part.
"""
import pathlib
from typing import NamedTuple

import numpy as np

from ..accel.build import float32_vertices
from ..errors import SceneError
from ..layout import (M_CUTOUT, M_TEX, MATERIAL_TYPES, Geometry, material_columns,
                      new_material_records)
from ..textures import TextureTable
from .gltf import load_gltf
from .media import MediumRows, build_media, check_unused_media, uses_media
from .meshio import read_mesh
from .plugins import plugin_object_types
from .transforms import check_invertible, compose, to_numpy

MIN_ALPHA = 1e-4     # GGX roughness floor (numerical safety net, documented)

# Mitsuba 3's `cube` mesh (positions, texture coordinates, faces), copied from
# mi.load_dict({"type": "cube"}) so that UVs and winding match it exactly.
_CUBE_V = np.array([
    [1, -1, -1], [1, -1, 1], [-1, -1, 1], [-1, -1, -1], [1, 1, -1], [-1, 1, -1], [-1, 1, 1], [1, 1, 1],
    [1, -1, -1], [1, 1, -1], [1, 1, 1], [1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1], [-1, -1, 1],
    [-1, -1, 1], [-1, 1, 1], [-1, 1, -1], [-1, -1, -1], [1, 1, -1], [1, -1, -1], [-1, -1, -1], [-1, 1, -1]],
    np.float64)
_CUBE_UV = np.tile(np.array([[0, 1], [1, 1], [1, 0], [0, 0]], np.float64), (6, 1))
_CUBE_F = np.array([[0, 1, 2], [3, 0, 2], [4, 5, 6], [7, 4, 6], [8, 9, 10], [11, 8, 10], [12, 13, 14],
                    [15, 12, 14], [16, 17, 18], [19, 16, 18], [20, 21, 22], [23, 20, 22]], np.int64)
_RECT_V = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], np.float64)
_RECT_F = np.array([[0, 1, 2], [0, 2, 3]], np.int64)
# texture coordinates of a triangle without any: (u, v) = barycentrics of v1 and v2
_BARY_UV = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])


def _colour_or_texture(value, textures, where):
    """-> (rgb (3,), texture row or -1); a texture's rgb is its average (a stand-in)."""
    if isinstance(value, dict):
        k = textures.add(value, where)
        return textures.average(k), k
    return np.asarray(value, np.float64), -1


def material_table(materials, textures=None):
    """Named materials -> (names, table): the (M, MATERIAL_WIDTH) float64 table of
    :data:`raytrace.layout.MATERIAL` records. Row 0 is the default grey used when none is
    given. ``textures`` (a :class:`raytrace.textures.TextureTable`) receives the materials'
    textures; it may be None when no material uses one."""
    names = ["<default>"] + list(materials)
    rec = new_material_records(len(names))
    rec["shininess"] = 1.0
    rec["ior"] = 1.5
    rec["texture"] = -1.0
    rec["cutout"] = -1.0
    rec[0]["diffuse"] = rec[0]["color"] = 0.8
    for row, name in enumerate(names[1:], 1):
        _fill_material(rec[row], materials[name], textures, f"materials.{name}")
    return names, material_columns(rec)


def _fill_material(r, m, textures, where):
    """One material record ``r`` from the scene's material dict ``m``: the path tracer's
    fields and the Whitted integrator's Phong fields that stand in for them. A glTF
    material's ``cutout`` (an ``image`` texture spec with ``pixels`` holding the coverage
    and a ``cutoff``: >= 0 MASK, -1 BLEND) becomes the row's coverage texture."""
    kind = m.get("type", "phong")
    cutout = m.get("cutout")
    if cutout is not None:
        r["cutout"] = textures.add(cutout, f"{where}.cutout")
        r["cutoff"] = cutout["cutoff"]
    r["type"] = MATERIAL_TYPES[kind]
    if kind == "phong":
        spec = m.get("specular", [0.0, 0.0, 0.0])
        kd, tex = _colour_or_texture(m.get("diffuse", [0.0, 0.0, 0.0]), textures, f"{where}.diffuse")
        r["diffuse"], r["specular"] = kd, spec
        r["shininess"] = m.get("shininess", 1.0)
        r["reflect"] = m.get("reflect", spec)
        r["transmit"] = m.get("transmit", [0.0, 0.0, 0.0])
        r["ior"] = m.get("ior", 1.5)
        if "transmit" in m and "reflect" not in m:
            r["reflect"] = 1.0                      # Fresnel-weighted mirror ray
        r["color"], r["texture"] = kd, tex
    elif kind == "diffuse":
        c, tex = _colour_or_texture(m.get("albedo", [0.5, 0.5, 0.5]), textures, f"{where}.albedo")
        r["color"], r["texture"] = c, tex
        r["diffuse"] = c                            # Whitted: Lambert k_d
    elif kind in ("conductor", "rough_conductor"):
        c, tex = _colour_or_texture(m.get("reflectance", [1.0, 1.0, 1.0]), textures,
                                    f"{where}.reflectance")
        r["color"], r["texture"] = c, tex
        if kind == "conductor":
            r["reflect"] = c                        # Whitted: mirror ray
        else:
            alpha = max(float(m.get("alpha", 0.1)), MIN_ALPHA)
            r["alpha"] = alpha
            r["specular"] = c                       # Whitted: Phong highlight
            r["shininess"] = max(2.0 / (alpha * alpha) - 2.0, 1.0)
    elif kind == "null":                            # no surface: an index-matched boundary
        r["ior"] = 1.0                              # (docs/media.md)
        r["transmit"] = 1.0
    else:                                           # dielectric
        r["ior"] = m.get("ior", 1.5)
        r["reflect"] = 1.0                          # Whitted: Fresnel mirror ray
        r["transmit"] = 1.0                         # and refracted ray


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


def plane_axes(n):
    """The plane's own in-plane axes for a unit object-space normal ``n``: the images of
    +x and +y under the shortest rotation taking +z to ``n`` (a half turn about x when
    ``n = -z``). Texture coordinates on a plane are ``(t . p, b . p)`` in object space."""
    n = np.asarray(n, np.float64)
    if n[2] < -1.0 + 1e-12:
        return np.array([1.0, 0.0, 0.0]), np.array([0.0, -1.0, 0.0])
    k = np.array([-n[1], n[0], 0.0])                 # z x n
    kx = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    rot = np.eye(3) + kx + kx @ kx / (1.0 + n[2])
    return rot[:, 0], rot[:, 1]


def _round_sphere_radius(lin):
    """Radius of the world-space sphere made by the linear map ``lin`` of a unit sphere,
    or 0 when ``lin`` is not a rotation times a uniform scale (an ellipsoid)."""
    g = lin.T @ lin
    r2 = np.trace(g) / 3.0
    if r2 > 0.0 and np.abs(g - r2 * np.eye(3)).max() <= 1e-9 * r2:
        return float(np.sqrt(r2))
    return 0.0


class _Builder:
    def __init__(self, scene_dir, material_rows, table):
        self.scene_dir = pathlib.Path(scene_dir)
        self.material_rows = material_rows
        self.table = table
        self.tris, self.tri_normals, self.tri_mats = [], [], []
        self.tri_uvs, self.tri_emits, self.tri_ngs = [], [], []
        self.tri_color_rows, self.corner_colors = [], []
        self.color_rows = 0          # rows of corner_colors so far
        self.spheres, self.sphere_mats, self.sphere_emits = [], [], []
        self.planes, self.plane_mats, self.plane_uvs = [], [], []
        self.emissions = []
        self.plugins = None
        self.instances = []          # (prototype name, world matrix, material row, where)
        self.prototype_defs = {}     # name -> object (the scene's "prototypes")
        self.uses = {}               # name -> how many instances show it
        self.object_names = []       # object id -> "JSON path" or "JSON path (name)"
        self.current_object = -1     # id given to the primitives being added
        self.in_prototype = False    # shared prototypes' primitives get no object id
        self.tri_objs, self.sphere_objs, self.plane_objs = [], [], []
        self.assets = {}             # JSON path of a gltf / mesh object -> what file_assets read
        self.media = None            # scene.media.MediumRows when the scene has media
        self.array_protos = {}       # name -> (glTF primitives, where): prototypes made by add_gltf

    def textured(self, mat):
        """Whether triangles of material row ``mat`` need texture coordinates (a colour or
        coverage texture; always for
        a prototype's "inherit" row -1: an instance may give it a textured material)."""
        if self.media is not None:
            mat = self.media.base.get(mat, mat)      # a material with its media: its base row
        return mat < 0 or self.table[mat, M_TEX] >= 0 or self.table[mat, M_CUTOUT] >= 0

    def counts(self):
        """(triangles, spheres) added so far."""
        return sum(len(t) for t in self.tris), len(self.spheres)

    def add_triangles(self, verts, faces, corner_normals, m, mat, where, strict=False,
                      corner_uv=None, emit=-1, corner_color=None):
        """Add a triangle mesh in object space; corner_normals (F,3,3) or None,
        corner_uv (F,3,2) or None (then (u, v) are the barycentrics of v1, v2),
        corner_color (F,3,3) linear RGB vertex colours or None."""
        lin, off = m[:3, :3], m[:3, 3]
        # world vertices as float32 values (as the BVH's blocks hold them, like Mitsuba and
        # Embree): rounded once here, shading, light sampling and the traversal see the very
        # same triangles (a shadow ray to a point sampled on a light cannot stop on the
        # light's own float32 copy)
        wv = float32_vertices(verts @ lin.T + off)
        if not np.isfinite(wv).all():
            raise SceneError(where, "vertices overflow in world space (too large a scale or coordinate)")
        tri = wv[faces]                                            # (F,3,3)
        fn = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        area2 = np.linalg.norm(fn, axis=1)
        scale = max(np.abs(tri).max(), 1e-300) ** 2 if len(tri) else 1.0
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
        # the geometric normal on the side the shading normals point to (the front side:
        # the side that emits)
        flip = np.einsum("ij,ij->i", face_n, cn.sum(axis=1)) < 0.0
        ng = np.where(flip[:, None], -face_n, face_n)
        uv = np.broadcast_to(_BARY_UV, (len(tri), 3, 2)) if corner_uv is None else corner_uv[good]
        self.tris.append(tri)
        self.tri_normals.append(cn)
        self.tri_mats.append(np.full(len(tri), mat, np.int64))
        self.tri_ngs.append(ng)
        self.tri_uvs.append(np.asarray(uv, np.float64))
        self.tri_emits.append(np.full(len(tri), emit, np.int64))
        self.tri_objs.append(np.full(len(tri), self.current_object, np.int64))
        if corner_color is None:
            self.tri_color_rows.append(np.full(len(tri), -1, np.int64))
        else:
            self.tri_color_rows.append(np.arange(self.color_rows, self.color_rows + len(tri), dtype=np.int64))
            self.corner_colors.append(np.asarray(corner_color[good], np.float64))
            self.color_rows += len(tri)

    def emitter(self, value):
        """Row of ``emission`` for an ``emission`` colour (or -1 for none / black)."""
        if value is None or not any(c > 0.0 for c in value):
            return -1
        self.emissions.append(np.asarray(value, np.float64))
        return len(self.emissions) - 1

    def new_object(self, where, obj):
        """A new object id for a leaf object (the ids of the object-id AOV and views)."""
        if self.in_prototype:
            return -1
        label = f"{where} ({obj['name']})" if obj.get("name") else where
        self.object_names.append(label)
        return len(self.object_names) - 1

    def visit(self, obj, where, parent, inherited_mat, inherited_emission):
        if obj["type"] not in ("group", "instance") or (obj["type"] == "instance" and
                                                         self.uses.get(obj["prototype"], 0) > 1):
            self.current_object = self.new_object(where, obj)
        local = to_numpy(compose(obj.get("transform"), where))
        m = parent @ local
        if obj.get("transform"):
            if not np.isfinite(m).all():
                raise SceneError(f"{where}.transform", "the transforms down to here overflow (too large a scale)")
            check_invertible(m, f"{where}.transform")
        mat = self.material_rows[obj["material"]] if "material" in obj else inherited_mat
        if self.media is not None:                 # interior / exterior: a row of their own
            mat = self.media.row_for(obj, mat, inherited_mat)
        emission = obj.get("emission", inherited_emission)
        kind = obj["type"]
        if kind == "group":
            for i, child in enumerate(obj["children"]):
                self.visit(child, f"{where}.children[{i}]", m, mat, emission)
            return
        if kind == "instance":
            name = obj["prototype"]
            if self.uses.get(name, 0) == 1:       # used once: placed in world space directly
                self.visit(self.prototype_defs[name], f"prototypes.{name}", m, mat, None)
            else:
                self.instances.append((name, m, 0 if mat < 0 else mat, where, self.current_object))
            return
        if kind == "plane":
            if emission is not None and any(c > 0.0 for c in emission):
                raise SceneError(f"{where}.emission" if "emission" in obj else where,
                                 "an infinite plane cannot emit (use a rectangle)")
            n = _unit(obj["normal"], f"{where}.normal")
            d = float(obj.get("offset", 0.0))
            p0 = m[:3, :3] @ (n * d) + m[:3, 3]
            inv_t = np.linalg.inv(m[:3, :3]).T
            nw = _unit(inv_t @ n, where)
            self.planes.append(np.concatenate([nw, [nw @ p0]]))
            self.plane_mats.append(mat)
            self.plane_objs.append(self.current_object)
            t_axis, b_axis = plane_axes(n)
            uv = np.zeros((2, 4))
            for row, axis in enumerate((t_axis, b_axis)):
                a = inv_t @ axis
                uv[row, :3], uv[row, 3] = a, -a @ m[:3, 3]
            self.plane_uvs.append(uv)
            return
        if kind == "gltf":
            self.add_gltf(self.assets[where], obj, m, mat, emission, where)
            return
        if kind == "mesh":
            mesh = self.assets.get(where) or _read_mesh_file(obj, where, self.scene_dir)
            self.add_mesh(mesh, obj, m, mat, emission, where)
            return
        emit = self.emitter(emission)
        if kind == "sphere":
            c = np.asarray(obj.get("center", [0, 0, 0]), np.float64)
            r = float(obj.get("radius", 1.0))
            o2w = m.copy()
            o2w[:3, :3] = m[:3, :3] * r
            o2w[:3, 3] = m[:3, :3] @ c + m[:3, 3]
            self.spheres.append(o2w)
            self.sphere_mats.append(mat)
            self.sphere_objs.append(self.current_object)
            self.sphere_emits.append(emit)
        elif kind == "triangle":
            v = np.asarray(obj["vertices"], np.float64)
            cn = None
            if "normals" in obj:
                cn = np.asarray(obj["normals"], np.float64)
                if (np.linalg.norm(cn, axis=1) == 0).any():
                    raise SceneError(f"{where}.normals", "normals must not be zero vectors")
                cn = cn[None]
            self.add_triangles(v, np.array([[0, 1, 2]]), cn, m, mat, f"{where}.vertices", strict=True,
                               emit=emit)
        elif kind == "rectangle":
            uv = ((_RECT_V[:, :2] + 1.0) * 0.5)[_RECT_F]
            self.add_triangles(_RECT_V, _RECT_F, None, m, mat, where, corner_uv=uv, emit=emit)
        elif kind == "cube":
            self.add_triangles(_CUBE_V, _CUBE_F, None, m, mat, where, corner_uv=_CUBE_UV[_CUBE_F], emit=emit)
        else:
            if self.plugins is None:
                self.plugins = plugin_object_types()
            verts, faces, normals = self.plugins[kind]["build"](obj, where, self.scene_dir)
            verts = np.asarray(verts, np.float64)
            faces = np.asarray(faces, np.int64)
            cn = None if normals is None else np.asarray(normals, np.float64)[faces]
            self.add_triangles(verts, faces, cn, m, mat, where, emit=emit)

    def prototypes(self, protos):
        """Build the prototypes that instances use, in object space, after the world
        objects; their primitives without a material of their own get row -1 (the
        instance's). Returns {name: (index, (t0, t1), (s0, s1))}."""
        used = []
        for name, *_ in self.instances:
            if name not in used:
                used.append(name)
        out = {}
        self.in_prototype, self.current_object = True, -1
        for k, name in enumerate(used):
            t0, s0 = self.counts()
            if name in self.array_protos:
                prims, where = self.array_protos[name]
                for prim, row, emit in prims:
                    self._add_primitive(prim, np.eye(4), row, emit, where)
            else:
                self.visit(protos[name], f"prototypes.{name}", np.eye(4), -1, None)
            t1, s1 = self.counts()
            out[name] = (k, (t0, t1), (s0, s1))
        return out

    def instance_table(self, built):
        """(w2o (I,3,4), lo, hi (I,3), material (I,), prototype (I,), object id (I,)) of the instances of
        non-empty prototypes. World boxes are exact: the prototype's distinct vertices
        and its spheres' ellipsoids, mapped by each instance's transform."""
        tri = np.concatenate(self.tris) if self.tris else np.zeros((0, 3, 3))
        sph = np.array(self.spheres).reshape(-1, 4, 4)
        shapes = {}
        rows = []
        for name, m, mat, where, obj_id in self.instances:
            k, (t0, t1), (s0, s1) = built[name]
            if name not in shapes:
                shapes[name] = (np.unique(tri[t0:t1].reshape(-1, 3), axis=0), sph[s0:s1])
            points, spheres = shapes[name]
            if len(points) == 0 and len(spheres) == 0:
                continue                        # an empty prototype shows nothing
            lo, hi = _world_box(points, spheres, m)
            rows.append((np.linalg.inv(m)[:3, :], lo, hi, mat, k, obj_id))
        n = len(rows)
        return (np.array([r[0] for r in rows]).reshape(n, 3, 4), np.array([r[1] for r in rows]).reshape(n, 3),
                np.array([r[2] for r in rows]).reshape(n, 3), np.array([r[3] for r in rows], np.int64),
                np.array([r[4] for r in rows], np.int64), np.array([r[5] for r in rows], np.int64))

    def add_mesh(self, mesh, obj, m, mat, emission, where):
        """A mesh file (:class:`raytrace.scene.meshio.Mesh`), one part per (OBJ group,
        material): the part's MTL material (faces without ``usemtl``, and every face when
        the object names its own ``material``: ``mat``) and its ``Ke`` emission (unless
        the scene gives one). Smooth normals (the file's, else area-weighted) are computed
        per group: separate objects of a file do not blend their normals."""
        file = obj["file"]
        smooth = obj.get("smooth", mesh.corner_normals is not None)
        group_normals = {}
        for group, name, faces in mesh.parts():
            mtl = mesh.materials.get(name)
            row = mat if mtl is None else self.material_rows[f"{file}#{name}"]
            if self.media is not None:
                row = self.media.apply(row, mat)
            ke = None if mtl is None else mtl.emission
            emit = self.emitter(emission if emission is not None else ke)
            cn = None
            if smooth and mesh.corner_normals is not None:
                cn = mesh.corner_normals[faces]
            elif smooth:
                if group not in group_normals:
                    gfaces = mesh.faces[mesh.face_group == mesh.face_group[faces[0]]]
                    group_normals[group] = vertex_normals(mesh.vertices, gfaces)
                cn = group_normals[group][mesh.faces[faces]]
            uv = mesh.corner_uvs[faces] if mesh.corner_uvs is not None and self.textured(row) else None
            self.add_triangles(mesh.vertices, mesh.faces[faces], cn, m, row, where, corner_uv=uv, emit=emit)

    def add_gltf(self, gs, obj, m, mat, emission, where):
        """A glTF scene (:class:`raytrace.scene.gltf.GltfScene`) under the object matrix
        ``m``: every placement of every mesh, one material row per primitive (the file's,
        or the object's own ``material`` for all; primitives without one inherit ``mat``),
        emission from the glTF material unless the scene gives one. A mesh placed by
        several nodes (and emitting nothing) becomes a prototype shown by instances: it
        is stored once."""
        rows = [self.material_rows[f"{obj['file']}#{gm.name}"] for gm in gs.materials]
        emits = {}
        placed = [pl for pl in gs.placements if _placeable(pl.matrix, m, where)]
        uses = {}
        for pl in placed:
            uses[pl.mesh] = uses.get(pl.mesh, 0) + 1
        for pl in placed:
            world = m @ pl.matrix
            prims = []
            for prim in gs.meshes[pl.mesh]:
                gm = gs.materials[prim.material] if prim.material >= 0 else None
                if gm is not None and gm.hidden:
                    continue
                row = mat if gm is None or "material" in obj else rows[prim.material]
                if self.media is not None:
                    row = self.media.apply(row, mat)
                if prim.material not in emits:
                    emits[prim.material] = self.emitter(
                        emission if emission is not None or gm is None else gm.emission)
                prims.append((prim, row, emits[prim.material]))
            if uses[pl.mesh] > 1 and all(e < 0 for _, _, e in prims):
                name = f"{where}#mesh{pl.mesh}"
                self.array_protos.setdefault(name, (prims, f"{where} (meshes[{pl.mesh}])"))
                self.instances.append((name, world, 0, f"{where} (nodes[{pl.node}])", self.current_object))
                continue
            for prim, row, emit in prims:
                self._add_primitive(prim, world, row, emit, f"{where} (nodes[{pl.node}])")

    def _add_primitive(self, prim, matrix, row, emit, where):
        """One glTF primitive's triangles under ``matrix``."""
        cn = None if prim.normals is None else prim.normals[prim.faces]
        uv = prim.uvs[prim.faces] if prim.uvs is not None and self.textured(row) else None
        col = None if prim.colors is None else prim.colors[prim.faces]
        self.add_triangles(prim.positions, prim.faces, cn, matrix, row, where, corner_uv=uv, emit=emit,
                           corner_color=col)

    def geometry(self, table, tex_info, tex_texels, world_counts, built, instance_table):
        def cat(parts, shape, dtype=np.float64):
            return np.ascontiguousarray(np.concatenate(parts) if parts else np.zeros(shape, dtype), dtype)
        tri = cat(self.tris, (0, 3, 3))
        o2w = np.array(self.spheres).reshape(-1, 4, 4)
        w2o = np.linalg.inv(o2w)[:, :3, :] if len(o2w) else np.zeros((0, 3, 4))
        # AABB of an ellipsoid M * unit sphere: centre +- row norms of the linear part
        ext = np.linalg.norm(o2w[:, :3, :3], axis=2) if len(o2w) else np.zeros((0, 3))
        ctr = o2w[:, :3, 3] if len(o2w) else np.zeros((0, 3))
        radius = np.array([_round_sphere_radius(a[:3, :3]) for a in o2w], np.float64)
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
            tri_ng=cat(self.tri_ngs, (0, 3)),
            tri_uv=cat(self.tri_uvs, (0, 3, 2)),
            tri_emit=cat(self.tri_emits, (0,), np.int64),
            sph_o2w=np.ascontiguousarray(o2w[:, :3, :]),
            sph_center=np.ascontiguousarray(ctr),
            sph_radius=radius,
            sph_emit=np.asarray(self.sphere_emits, np.int64),
            pl_uv=np.ascontiguousarray(np.array(self.plane_uvs).reshape(-1, 2, 4)),
            emission=np.ascontiguousarray(np.array(self.emissions, np.float64).reshape(-1, 3)),
            tex_info=tex_info, tex_texels=tex_texels,
            inst_w2o=np.ascontiguousarray(instance_table[0]), inst_lo=np.ascontiguousarray(instance_table[1]),
            inst_hi=np.ascontiguousarray(instance_table[2]), inst_mat=instance_table[3],
            inst_proto=instance_table[4], inst_obj=instance_table[5],
            tri_obj=cat(self.tri_objs, (0,), np.int64),
            sph_obj=np.asarray(self.sphere_objs, np.int64), pl_obj=np.asarray(self.plane_objs, np.int64),
            proto_tris=np.array([t for _, t, _ in sorted(built.values())], np.int64).reshape(-1, 2),
            proto_spheres=np.array([s for _, _, s in sorted(built.values())], np.int64).reshape(-1, 2),
            tri_color_row=cat(self.tri_color_rows, (0,), np.int64),
            corner_colors=cat(self.corner_colors, (0, 3, 3)),
            cutouts=int((table[:, M_CUTOUT] >= 0).sum()),
            world_tris=int(world_counts[0]), world_spheres=int(world_counts[1]),
        )


class Labels(NamedTuple):
    """Names for the ids of the id AOVs: ``objects[k]`` the JSON path (and ``name``) of
    object id k, ``materials[k]`` the name of material row k (row 0: ``<default>``)."""
    objects: list
    materials: list
    media: object = None      # the scene's raytrace.layout.Media, None without media (scene.media)


def _read_mesh_file(obj, where, scene_dir, materials=False):
    path = pathlib.Path(scene_dir) / obj["file"]
    if not path.is_file():
        raise SceneError(f"{where}.file", f"file not found: {path}")
    return read_mesh(path, materials=materials)


def _load_gltf_object(obj, where, scene_dir):
    path = pathlib.Path(scene_dir) / obj["file"]
    if not path.is_file():
        raise SceneError(f"{where}.file", f"file not found: {path}")
    try:
        return load_gltf(path, obj.get("scene"), obj.get("animation"), obj.get("time", 0.0),
                         obj.get("loop", False))
    except SceneError as exc:
        if exc.file is not None:             # a problem inside the glTF file: it names it
            raise
        raise SceneError(f"{where}.{exc.where}", exc.message) from None


def file_assets(objects, scene_dir, prototypes=None):
    """Read the files of ``gltf`` objects and of ``mesh`` objects without a ``material``
    of their own (for their MTL materials). -> (assets {JSON path: GltfScene or Mesh},
    materials {"FILE#NAME": material dict})."""
    assets, materials = {}, {}
    stack = [(obj, f"objects[{i}]") for i, obj in reversed(list(enumerate(objects)))]
    stack += [(obj, f"prototypes.{name}") for name, obj in reversed(list((prototypes or {}).items()))]
    while stack:
        obj, where = stack.pop()
        kind = obj["type"]
        if kind == "group":
            stack += [(c, f"{where}.children[{i}]") for i, c in reversed(list(enumerate(obj["children"])))]
        elif kind == "gltf":
            gs = assets[where] = _load_gltf_object(obj, where, scene_dir)
            for gm in gs.materials:
                materials.setdefault(f"{obj['file']}#{gm.name}", gm.spec)
        elif kind == "mesh" and "material" not in obj:
            mesh = assets[where] = _read_mesh_file(obj, where, scene_dir, materials=True)
            for name, mm in mesh.materials.items():
                materials.setdefault(f"{obj['file']}#{name}", mm.spec)
    return assets, materials


def build_geometry(data, scene_dir):
    """-> (:class:`Geometry`, :class:`Labels`). Flatten ``data["objects"]`` (a validated scene dict) into a :class:`Geometry`:
    world-space primitives first, then the prototypes that instances share (object
    space), and the instance table. A prototype shown by one instance only is placed in
    world space directly: it is stored once either way, and the world BVH is faster than
    going through an instance."""
    textures = TextureTable(scene_dir)
    assets, file_materials = file_assets(data.get("objects", []), scene_dir, data.get("prototypes", {}))
    materials = dict(data.get("materials", {}))
    for name, spec in file_materials.items():
        materials.setdefault(name, spec)         # a scene material of that name wins
    names, table = material_table(materials, textures)
    rows = {n: i for i, n in enumerate(names)}
    b = _Builder(scene_dir, rows, table)
    b.prototype_defs = data.get("prototypes", {})
    b.uses = _instance_counts(data.get("objects", []))
    b.assets = assets
    if uses_media(data, materials):
        b.media = MediumRows(names, table)
    for i, obj in enumerate(data.get("objects", [])):
        b.visit(obj, f"objects[{i}]", np.eye(4), 0, None)
    world_counts = b.counts()
    built = b.prototypes(data.get("prototypes", {}))
    instances = b.instance_table(built)
    tex_info, tex_texels = textures.arrays()
    media = None
    if b.media is not None:                       # the rows of materials with their media
        table, names = b.media.table(), b.media.names
        media = build_media(data, scene_dir, b.media, materials)
    else:
        check_unused_media(data, scene_dir)       # media nothing uses: their grid files are checked all the same
    return b.geometry(table, tex_info, tex_texels, world_counts, built, instances), \
        Labels(objects=list(b.object_names), materials=names, media=media)


def _instance_counts(objects):
    """Prototype name -> number of instances of it among ``objects`` (groups included)."""
    counts, stack = {}, list(objects)
    while stack:
        obj = stack.pop()
        if obj.get("type") == "instance":
            counts[obj["prototype"]] = counts.get(obj["prototype"], 0) + 1
        stack += obj.get("children", []) if obj.get("type") == "group" else []
    return counts


def _placeable(node_matrix, m, where):
    """False for a glTF node hidden by a zero scale (common in animations); SceneError
    when the transforms down to it overflow."""
    world = m @ node_matrix
    if not np.isfinite(world).all():
        raise SceneError(where, "the transforms down to a glTF node overflow")
    lin = world[:3, :3]
    return abs(np.linalg.det(lin / max(np.abs(lin).max(), 1e-300))) >= 1e-12


def _world_box(points, spheres, m):
    """World AABB of a prototype's vertices ``points`` (n, 3) and sphere maps ``spheres``
    (k, 4, 4 object->prototype space) placed by the 4x4 matrix ``m``."""
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    if len(points):
        world = points @ m[:3, :3].T + m[:3, 3]
        lo, hi = world.min(axis=0), world.max(axis=0)
    for o2w in spheres:
        w = m @ o2w                              # unit sphere -> world
        ext = np.linalg.norm(w[:3, :3], axis=1)
        lo, hi = np.minimum(lo, w[:3, 3] - ext), np.maximum(hi, w[:3, 3] + ext)
    return lo, hi
