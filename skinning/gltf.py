"""glTF 2.0 skins (``.gltf`` with embedded/external buffers, or ``.glb``) via pygltflib.

What is read: one skin (``skins[skin]``) and the first node that uses it with a mesh; its
primitives (TRIANGLES) are merged into one mesh with POSITION, optional NORMAL,
JOINTS_0/WEIGHTS_0 (and JOINTS_1/WEIGHTS_1); the skin's joints become the skeleton, in
an order where parents come first (JOINTS_n and inverse bind matrices are remapped to it);
every animation channel that targets a joint's translation, rotation or scale.

Conventions: glTF quaternions ``[x, y, z, w]`` become (w, x, y, z); matrices (node
``matrix``, ``inverseBindMatrices``) are stored column-major and read as such. Missing
inverse bind matrices are identities. Posed positions are world space,
``p' = sum_j w_j G_j IBM_j p`` with ``G_j`` the joint node's global transform; the mesh
node's own transform is ignored, as the glTF spec prescribes for skinned meshes.
Non-joint nodes between joints (or above the root) are fixed transforms (the skeleton's
``base``); channels that target them, and morph-target ``weights``, are ignored.
"""
import base64
import pathlib

import numpy as np

from .animation import Animation, Channel
from .errors import SkinningError, SkinningFileError
from .model import SkinnedMesh
from .rotations import IDENTITY_QUAT, matrix_to_quat, quat_from_xyzw
from .skeleton import Skeleton, local_matrices
from .weights import normalize_weights

COMPONENT_TYPES = {5120: np.int8, 5121: np.uint8, 5122: np.int16, 5123: np.uint16,
                   5125: np.uint32, 5126: np.float32}
NUM_COMPONENTS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}


class _Reader:
    def __init__(self, path):
        import pygltflib

        self.path = pathlib.Path(path)
        if not self.path.is_file():
            raise SkinningFileError(self.path, None, "file not found")
        try:
            self.gltf = pygltflib.GLTF2().load(str(self.path))
        except Exception as e:  # pygltflib raises assorted errors on malformed files
            raise SkinningFileError(self.path, None, f"cannot parse glTF ({e})") from None
        if self.gltf is None:
            raise SkinningFileError(self.path, None, "cannot parse glTF")
        self._buffers = {}

    def fail(self, where, message):
        raise SkinningFileError(self.path, where, message)

    def buffer(self, i):
        if i in self._buffers:
            return self._buffers[i]
        bufs = self.gltf.buffers or []
        if not 0 <= i < len(bufs):
            self.fail(f"buffers[{i}]", "no such buffer")
        uri = bufs[i].uri
        if uri is None:
            data = self.gltf.binary_blob()
            if data is None:
                self.fail(f"buffers[{i}]", "no uri and no GLB binary chunk")
        elif uri.startswith("data:"):
            head, _, payload = uri.partition(",")
            if not head.endswith(";base64"):
                self.fail(f"buffers[{i}].uri", "only base64 data URIs are supported")
            try:
                data = base64.b64decode(payload)
            except ValueError as e:
                self.fail(f"buffers[{i}].uri", f"bad base64 ({e})")
        else:
            from urllib.parse import unquote
            p = self.path.parent / unquote(uri)
            try:
                data = p.read_bytes()
            except OSError as e:
                self.fail(f"buffers[{i}].uri", f"cannot read {p} ({e.strerror or e})")
        if len(data) < (bufs[i].byteLength or 0):
            self.fail(f"buffers[{i}]", f"has {len(data)} bytes, byteLength says {bufs[i].byteLength}")
        self._buffers[i] = data
        return data

    def _view(self, bv_index, where, dtype, ncomp, count, offset):
        bvs = self.gltf.bufferViews or []
        if not 0 <= bv_index < len(bvs):
            self.fail(where, f"bufferView {bv_index} does not exist")
        bv = bvs[bv_index]
        data = self.buffer(bv.buffer)
        item = np.dtype(dtype).itemsize
        elem = item * ncomp
        stride = bv.byteStride or elem
        start = (bv.byteOffset or 0) + offset
        end = (bv.byteOffset or 0) + bv.byteLength
        if count and start + stride * (count - 1) + elem > min(end, len(data)):
            self.fail(where, "data runs past the end of its bufferView")
        arr = np.ndarray((count, ncomp), dtype=np.dtype(dtype).newbyteorder("<"),
                         buffer=data, offset=start, strides=(stride, item))
        return arr.copy()

    def accessor(self, i, where):
        """Accessor ``i`` as a (count, ncomp) array: float64 when float or normalised."""
        accs = self.gltf.accessors or []
        if i is None or not 0 <= i < len(accs):
            self.fail(where, f"accessor {i} does not exist")
        acc = accs[i]
        where = f"accessors[{i}]"
        if acc.componentType not in COMPONENT_TYPES:
            self.fail(where, f"unknown componentType {acc.componentType}")
        if acc.type not in NUM_COMPONENTS:
            self.fail(where, f"unknown type {acc.type!r}")
        dtype = COMPONENT_TYPES[acc.componentType]
        ncomp = NUM_COMPONENTS[acc.type]
        if acc.type in ("MAT2", "MAT3") and np.dtype(dtype).itemsize < 4:
            self.fail(where, f"{acc.type} of 1- or 2-byte components is not supported")
        if acc.bufferView is None:
            arr = np.zeros((acc.count, ncomp), dtype=dtype)
        else:
            arr = self._view(acc.bufferView, where, dtype, ncomp, acc.count, acc.byteOffset or 0)
        if acc.sparse is not None:
            sp = acc.sparse
            itype = COMPONENT_TYPES.get(sp.indices.componentType)
            if itype is None:
                self.fail(f"{where}.sparse.indices", "bad componentType")
            idx = self._view(sp.indices.bufferView, f"{where}.sparse.indices", itype, 1,
                             sp.count, sp.indices.byteOffset or 0)[:, 0].astype(np.int64)
            vals = self._view(sp.values.bufferView, f"{where}.sparse.values", dtype, ncomp,
                              sp.count, sp.values.byteOffset or 0)
            if idx.size and (idx.min() < 0 or idx.max() >= acc.count):
                self.fail(f"{where}.sparse.indices", "index out of range")
            arr = arr.copy()
            arr[idx] = vals
        if dtype == np.float32:
            return arr.astype(np.float64)
        if acc.normalized:
            info = np.iinfo(dtype)
            return np.maximum(arr.astype(np.float64) / info.max, -1.0)
        return arr


def _node_trs(node):
    """(translation (3,), rotation (4,) wxyz, scale (3,)) of a glTF node."""
    if node.matrix is not None:
        m = np.array(node.matrix, dtype=np.float64).reshape(4, 4).T   # column-major
        t = m[:3, 3].copy()
        a = m[:3, :3]
        s = np.linalg.norm(a, axis=0)
        if np.linalg.det(a) < 0:
            s[0] = -s[0]
        r = matrix_to_quat(a / np.where(s == 0, 1.0, s))
        return t, r, s
    t = np.array(node.translation if node.translation is not None else [0, 0, 0], float)
    r = (quat_from_xyzw(node.rotation) if node.rotation is not None else IDENTITY_QUAT.copy())
    s = np.array(node.scale if node.scale is not None else [1, 1, 1], float)
    return t, r, s


def _node_matrix(node):
    t, r, s = _node_trs(node)
    return local_matrices(t[None], r[None], s[None])[0]


def load_gltf(path, skin=0, normalize=False):
    """Load ``skins[skin]`` of a glTF file into a :class:`~skinning.model.SkinnedMesh`.

    normalize: rescale weight rows that do not sum to 1 (within 1e-3, or the rounding of
    normalised integer weights) instead of raising :class:`SkinningFileError`.
    """
    rd = _Reader(path)
    g = rd.gltf
    nodes = g.nodes or []
    skins = g.skins or []
    if not 0 <= skin < len(skins):
        rd.fail("skins", f"no skin {skin} (the file has {len(skins)})")
    sk = skins[skin]
    joint_nodes = list(sk.joints or [])
    if not joint_nodes:
        rd.fail(f"skins[{skin}].joints", "empty")
    if len(set(joint_nodes)) != len(joint_nodes) or any(not 0 <= n < len(nodes) for n in joint_nodes):
        rd.fail(f"skins[{skin}].joints", "joints must be distinct, existing nodes")

    parent_of = {}
    for i, nd in enumerate(nodes):
        for c in nd.children or []:
            parent_of[c] = i

    def chain(n):                   # ancestors of node n, nearest first
        out, seen = [], {n}
        while n in parent_of:
            n = parent_of[n]
            if n in seen:
                rd.fail("nodes", "the node hierarchy has a cycle")
            seen.add(n)
            out.append(n)
        return out

    joint_set = set(joint_nodes)
    depth = {n: len(chain(n)) for n in joint_nodes}
    order = sorted(range(len(joint_nodes)), key=lambda k: depth[joint_nodes[k]])  # parents first
    new_of_skin = np.empty(len(joint_nodes), dtype=np.int64)
    new_of_skin[order] = np.arange(len(order))
    node_to_new = {joint_nodes[k]: i for i, k in enumerate(order)}

    nj = len(order)
    parents = np.full(nj, -1, dtype=np.int64)
    base = np.tile(np.eye(4), (nj, 1, 1))
    trs = [_node_trs(nodes[joint_nodes[k]]) for k in order]
    names = []
    for i, k in enumerate(order):
        n = joint_nodes[k]
        m = np.eye(4)
        for a in chain(n):
            if a in joint_set:
                parents[i] = node_to_new[a]
                break
            m = _node_matrix(nodes[a]) @ m
        base[i] = m
        name = nodes[n].name or f"node{n}"
        names.append(name if name not in names else f"{name}_{n}")
    skeleton = Skeleton(names, parents, np.array([t for t, _, _ in trs]),
                        np.array([r for _, r, _ in trs]), np.array([s for _, _, s in trs]), base)

    if sk.inverseBindMatrices is None:
        ibm = np.tile(np.eye(4), (nj, 1, 1))
    else:
        raw = rd.accessor(sk.inverseBindMatrices, f"skins[{skin}].inverseBindMatrices")
        if raw.shape != (nj, 16):
            rd.fail(f"skins[{skin}].inverseBindMatrices",
                    f"expected {nj} MAT4, got {raw.shape[0]} x {raw.shape[1]}")
        ibm = raw.reshape(nj, 4, 4).transpose(0, 2, 1)[order]          # column-major

    mesh_node = next((i for i, nd in enumerate(nodes) if nd.skin == skin and nd.mesh is not None),
                     None)
    if mesh_node is None:
        rd.fail(f"skins[{skin}]", "no node uses this skin with a mesh")
    verts, faces, normals, joints, weights = _read_mesh(rd, nodes[mesh_node].mesh, new_of_skin,
                                                        normalize)
    animations = {}
    for a, anim in enumerate(g.animations or []):
        name = anim.name or f"animation{a}"
        animations[name if name not in animations else f"{name}_{a}"] = _read_animation(
            rd, a, anim, name, node_to_new)
    return SkinnedMesh(skeleton, verts, faces, joints, weights, ibm, normals, animations,
                       source=str(path))


def _read_mesh(rd, mesh_index, new_of_skin, normalize):
    meshes = rd.gltf.meshes or []
    if not 0 <= mesh_index < len(meshes):
        rd.fail("meshes", f"mesh {mesh_index} does not exist")
    prims = meshes[mesh_index].primitives or []
    vs, fs, ns, js, ws, off = [], [], [], [], [], 0
    for p, prim in enumerate(prims):
        where = f"meshes[{mesh_index}].primitives[{p}]"
        if prim.mode not in (None, 4):
            rd.fail(f"{where}.mode", f"only TRIANGLES (4) is supported, got {prim.mode}")
        attrs = prim.attributes
        if attrs.POSITION is None:
            rd.fail(f"{where}.attributes", "no POSITION")
        v = rd.accessor(attrs.POSITION, f"{where}.attributes.POSITION")
        n = v.shape[0]
        if attrs.JOINTS_0 is None or attrs.WEIGHTS_0 is None:
            rd.fail(f"{where}.attributes", "a skinned primitive needs JOINTS_0 and WEIGHTS_0")
        jl, wl, tol = [], [], 1e-3
        for s in (0, 1):
            ja, wa = getattr(attrs, f"JOINTS_{s}", None), getattr(attrs, f"WEIGHTS_{s}", None)
            if ja is None:
                continue
            jj = rd.accessor(ja, f"{where}.attributes.JOINTS_{s}")
            ww = rd.accessor(wa, f"{where}.attributes.WEIGHTS_{s}")
            if jj.shape != (n, 4) or ww.shape != (n, 4):
                rd.fail(f"{where}.attributes.JOINTS_{s}", f"expected {n} VEC4, got {jj.shape}")
            acc = rd.gltf.accessors[wa]
            if acc.componentType != 5126:
                tol = max(tol, 8 * 0.5 / np.iinfo(COMPONENT_TYPES[acc.componentType]).max)
            jl.append(jj.astype(np.int64))
            wl.append(ww)
        jj, ww = np.hstack(jl), np.hstack(wl)
        if jj.size and (jj.min() < 0 or jj.max() >= new_of_skin.shape[0]):
            rd.fail(f"{where}.attributes.JOINTS_0",
                    f"joint index {int(jj.max())} but the skin has {new_of_skin.shape[0]} joints")
        try:
            ww = normalize_weights(ww, tol=tol, fix=normalize)
        except SkinningError as e:
            rd.fail(f"{where}.attributes.WEIGHTS_0", str(e).removeprefix("weights: "))
        jj = np.where(ww != 0.0, new_of_skin[jj], 0)
        if prim.indices is not None:
            f = rd.accessor(prim.indices, f"{where}.indices").astype(np.int64).ravel()
        else:
            f = np.arange(n, dtype=np.int64)
        if f.size % 3:
            rd.fail(f"{where}.indices", f"{f.size} indices is not a multiple of 3")
        if f.size and (f.min() < 0 or f.max() >= n):
            rd.fail(f"{where}.indices", "vertex index out of range")
        vs.append(v)
        fs.append(f.reshape(-1, 3) + off)
        ns.append(rd.accessor(attrs.NORMAL, f"{where}.attributes.NORMAL")
                  if attrs.NORMAL is not None else None)
        js.append(jj)
        ws.append(ww)
        off += n
    if not vs:
        rd.fail(f"meshes[{mesh_index}]", "no primitives")
    k = max(j.shape[1] for j in js)
    pad = lambda a: np.pad(a, ((0, 0), (0, k - a.shape[1])))  # noqa: E731
    normals = None
    if all(n is not None for n in ns):
        normals = np.vstack(ns)
        length = np.linalg.norm(normals, axis=1, keepdims=True)
        normals = normals / np.where(length == 0, 1.0, length)
    return (np.vstack(vs), np.vstack(fs), normals,
            np.vstack([pad(j) for j in js]), np.vstack([pad(w) for w in ws]))


def _read_animation(rd, a, anim, name, node_to_new):
    channels = []
    for c, ch in enumerate(anim.channels or []):
        where = f"animations[{a}].channels[{c}]"
        node, path = ch.target.node, ch.target.path
        if node not in node_to_new or path not in ("translation", "rotation", "scale"):
            continue
        samplers = anim.samplers or []
        if not 0 <= ch.sampler < len(samplers):
            rd.fail(f"{where}.sampler", f"sampler {ch.sampler} does not exist")
        smp = samplers[ch.sampler]
        swhere = f"animations[{a}].samplers[{ch.sampler}]"
        times = rd.accessor(smp.input, f"{swhere}.input")[:, 0]
        values = rd.accessor(smp.output, f"{swhere}.output")
        interp = smp.interpolation or "LINEAR"
        k = times.shape[0]
        cubic = interp == "CUBICSPLINE"
        if values.shape[0] != (3 * k if cubic else k):
            rd.fail(f"{swhere}.output", f"{values.shape[0]} values for {k} key times")
        if path == "rotation":
            values = quat_from_xyzw(values)
        if cubic:
            values = values.reshape(k, 3, -1)
        try:
            channels.append(Channel(node_to_new[node], path, times, values, interp))
        except SkinningError as e:
            rd.fail(swhere, str(e))
    return Animation(name, channels)
