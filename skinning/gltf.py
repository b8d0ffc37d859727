"""glTF 2.0 skins (``.gltf`` with embedded/external buffers, or ``.glb``) via pygltflib.

What is read: skins and every node that uses a skin with a mesh (a *part*: a character
is often split into head, torso and legs meshes that share one skin). A part's
primitives (TRIANGLES) are merged into one mesh with POSITION, optional NORMAL,
JOINTS_0/WEIGHTS_0 (and JOINTS_1/WEIGHTS_1), remembering each primitive's range and
material; a skin's joints become the skeleton, in an order where parents come first
(JOINTS_n and inverse bind matrices are remapped to it); every animation channel that
targets a joint's translation, rotation or scale. :func:`load_gltf` gives one skin's
parts as one :class:`~skinning.model.SkinnedMesh`; :func:`load_gltf_scene` gives every
part separately (:class:`SkinnedScene`).

Conventions: glTF quaternions ``[x, y, z, w]`` become (w, x, y, z); matrices (node
``matrix``, ``inverseBindMatrices``) are stored column-major and read as such. Missing
inverse bind matrices are identities. Posed positions are world space,
``p' = sum_j w_j G_j IBM_j p`` with ``G_j`` the joint node's global transform; the mesh
node's own transform is ignored, as the glTF spec prescribes for skinned meshes.
Non-joint nodes between joints (or above the root) are fixed transforms (the skeleton's
``base``); channels that target them, and morph-target ``weights``, are ignored.
"""
import base64
import dataclasses
import errno
import pathlib
import warnings
from dataclasses import dataclass

import numpy as np
from userio import gltf_accessors as acc_io
from userio.limits import check_memory

from .animation import Animation, Channel
from userio.textio import decode_text

from .errors import (SkinningError, SkinningFileError, file_error, parse_json_text,
                     read_text_file)
from .model import SkinnedMesh
from .rotations import IDENTITY_QUAT, matrix_to_quat, quat_from_xyzw
from .skeleton import Skeleton, local_matrices
from .weights import normalize_weights

COMPONENT_TYPES = {5120: np.int8, 5121: np.uint8, 5122: np.int16, 5123: np.uint16,
                   5125: np.uint32, 5126: np.float32}
_BAD_NAME = {errno.ENOENT, errno.ENAMETOOLONG, errno.ENOTDIR, errno.EISDIR, errno.ELOOP,
             errno.EINVAL}
NUM_COMPONENTS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


class _Reader:
    def __init__(self, path):
        self.path = pathlib.Path(path)
        try:
            import pygltflib
        except ImportError:
            raise SkinningFileError(self.path, None, "reading glTF needs the pygltflib "
                                    "package, which is not installed") from None
        try:
            with warnings.catch_warnings():          # pygltflib warns about missing fields
                warnings.simplefilter("ignore")
                if self.path.suffix.lower() == ".glb" or self._head() == b"glTF":
                    self.gltf = self._load_glb(pygltflib)
                else:
                    text = read_text_file(self.path)
                    if not isinstance(parse_json_text(text, self.path), dict):
                        self.fail(None, "expected a JSON object at the top level")
                    self.gltf = pygltflib.GLTF2.from_json(text, infer_missing=True)
        except (SkinningFileError, OSError):
            raise
        except (Exception, RecursionError) as e:  # pygltflib raises assorted errors
            raise SkinningFileError(self.path, None,
                                    f"cannot parse glTF ({_one_line(e)})") from None
        if self.gltf is None:
            raise SkinningFileError(self.path, None, "cannot parse glTF")
        self._check_lists()
        self._buffers = {}

    def _check_lists(self):
        """Every entry of the lists this reader uses is an object (JSON ``null`` is not)."""
        g = self.gltf
        lists = [(name, getattr(g, name)) for name in
                 ("nodes", "skins", "meshes", "accessors", "bufferViews", "buffers", "animations")]
        for m, mesh in enumerate(g.meshes or []):
            if mesh is not None:
                lists.append((f"meshes[{m}].primitives", mesh.primitives))
        for a, anim in enumerate(g.animations or []):
            if anim is not None:
                lists += [(f"animations[{a}].channels", anim.channels),
                          (f"animations[{a}].samplers", anim.samplers)]
        for name, items in lists:
            if items is None:
                continue
            if not isinstance(items, list):
                self.fail(name, "expected a list")
            for k, item in enumerate(items):
                if item is None or isinstance(item, (int, float, str, list, dict)):
                    self.fail(f"{name}[{k}]", f"expected an object, got {_short(item)}")

    def _head(self):
        """The first 4 bytes of the file (b"" when it cannot be read: the text reader
        then says why)."""
        try:
            with self.path.open("rb") as f:
                return f.read(4)
        except (OSError, ValueError):
            return b""

    def _load_glb(self, pygltflib):
        from userio.reads import note
        note(self.path)
        try:
            data = self.path.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as e:
            raise SkinningFileError(self.path, None,
                                    f"cannot read file ({e.strerror or e})") from None
        except OSError as e:
            if e.filename is None:
                e.filename = str(self.path)
            raise
        text, blob = acc_io.split_glb(data, self.fail)   # header and chunks checked
        text = decode_text(text, self.path, file_error)
        if not isinstance(parse_json_text(text, self.path), dict):
            self.fail(None, "expected a JSON object at the top level")
        gltf = pygltflib.GLTF2.from_json(text, infer_missing=True)
        if gltf is not None and blob is not None:
            gltf.set_binary_blob(blob)
        return gltf

    def fail(self, where, message):
        raise SkinningFileError(self.path, where, message)

    def index(self, value, count, where, what):
        """``value`` as an index into a list of ``count`` items."""
        if not _is_int(value) or not 0 <= value < count:
            self.fail(where, f"{what} {_short(value)} does not exist (there are {count})")
        return int(value)

    def count(self, value, where, lo=0, hi=2 ** 48):
        """``value`` as an int in [lo, hi] (a count, offset or length)."""
        if value is None:
            return lo if lo > 0 else 0
        if not _is_int(value) or not lo <= value <= hi:
            self.fail(where, f"must be an integer in [{lo}, {hi}], got {_short(value)}")
        return int(value)

    def numbers(self, value, n, where):
        """``value`` as ``n`` finite numbers (float64)."""
        ok = isinstance(value, (list, tuple)) and len(value) == n and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        arr = np.array(value, dtype=np.float64) if ok else None
        if arr is None or not np.all(np.isfinite(arr)):
            self.fail(where, f"expected {n} finite numbers, got {_short(value)}")
        return arr

    def buffer(self, i, where="buffers"):
        bufs = self.gltf.buffers or []
        i = self.index(i, len(bufs), where, "buffer")
        if i in self._buffers:
            return self._buffers[i]
        uri = bufs[i].uri
        if uri is None:
            data = self.gltf.binary_blob()
            if data is None:
                self.fail(f"buffers[{i}]", "no uri and no GLB binary chunk")
        elif not isinstance(uri, str):
            self.fail(f"buffers[{i}].uri", f"expected a string, got {_short(uri)}")
        elif uri.startswith("data:"):
            head, _, payload = uri.partition(",")
            if not head.endswith(";base64"):
                self.fail(f"buffers[{i}].uri", "only base64 data URIs are supported")
            try:
                data = base64.b64decode(payload)
            except ValueError as e:
                self.fail(f"buffers[{i}].uri", f"bad base64 ({_one_line(e)})")
        else:
            from urllib.parse import unquote
            p = self.path.parent / unquote(uri)
            try:
                from userio.reads import note
                note(p)
                data = p.read_bytes()
            except ValueError:                # a NUL character in the name
                self.fail(f"buffers[{i}].uri", f"not a file name: {_short(uri)}")
            except OSError as e:
                if e.errno in _BAD_NAME:      # the file's content names no readable file
                    self.fail(f"buffers[{i}].uri", f"cannot read {_short(str(p), 120)} "
                              f"({e.strerror or e})")
                if e.filename is None:        # an I/O failure: exit status 1
                    e.filename = str(p)
                raise
        length = self.count(bufs[i].byteLength, f"buffers[{i}].byteLength")
        if len(data) < length:
            self.fail(f"buffers[{i}]", f"has {len(data)} bytes, byteLength says {length}")
        self._buffers[i] = memoryview(data)[:length]
        return self._buffers[i]

    def accessor(self, i, where, usage=None):
        """Accessor ``i`` as a (count, ncomp) array: float64 when float or normalised.

        Every field is checked against the glTF 2.0 specification
        (:func:`userio.gltf_accessors.read_accessor`; ``usage``: what the accessor is
        used as, e.g. ``"JOINTS_0"``). Float data must be finite (the error names the
        accessor and the element)."""
        accs = self.gltf.accessors or []
        i = self.index(i, len(accs), where, "accessor")
        awhere = f"accessors[{i}]"
        acc = _plain(accs[i])

        def memory(count, ncomp):
            # every accessor ends up as float64 (8 bytes per component), often copied twice
            check_memory(3 * count * ncomp * 8, f"{count} elements of {acc.get('type')}",
                         name=f"{awhere}.count", error=file_error, file=str(self.path))

        views = [_plain(bv) for bv in (self.gltf.bufferViews or [])]
        got = acc_io.read_accessor(acc, i, views, self.buffer, self.fail, usage, memory)
        arr = got.data
        if arr.dtype.kind == "f":
            out = arr.astype(np.float64)
            bad = ~np.isfinite(out)
            if bad.any():
                k = int(np.argwhere(bad)[0, 0])
                values = ", ".join(f"{x:g}" for x in out[k])
                self.fail(awhere, f"non-finite number in element {k} ({values}), used as {where}")
            return out
        if got.normalized:
            info = np.iinfo(arr.dtype)
            return np.maximum(arr.astype(np.float64) / info.max, -1.0)
        return arr


def _plain(obj):
    """A pygltflib object as the file's JSON dict (absent fields left out)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        obj = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items() if v is not None}
    return obj


def _one_line(exc):
    """The first line of an exception's text, at most 200 characters."""
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return text if len(text) <= 200 else text[:197] + "..."


def _short(value, limit=60):
    try:
        text = repr(value)
    except RecursionError:
        text = "a deeply nested value"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _node_trs(node, rd=None, where="node"):
    """(translation (3,), rotation (4,) wxyz, scale (3,)) of a glTF node; with a reader
    ``rd`` the values are checked (finite numbers, a non-zero rotation)."""
    if rd is None:
        def num(value, n, w):
            return np.array(value, dtype=np.float64)
    else:
        num = rd.numbers
    if node.matrix is not None:
        m = num(node.matrix, 16, f"{where}.matrix").reshape(4, 4).T   # column-major
        t = m[:3, 3].copy()
        a = m[:3, :3]
        s = np.linalg.norm(a, axis=0)
        if np.linalg.det(a) < 0:
            s[0] = -s[0]
        if not np.all(np.isfinite(s)):
            rd.fail(f"{where}.matrix", "entries too large")
        r = matrix_to_quat(a / np.where(s == 0, 1.0, s))
        return t, r, s
    t = num(node.translation if node.translation is not None else [0, 0, 0], 3,
            f"{where}.translation")
    if node.rotation is not None:
        q = num(node.rotation, 4, f"{where}.rotation")
        if rd is not None and not np.any(q):
            rd.fail(f"{where}.rotation", "quaternion must not be zero")
        r = quat_from_xyzw(q)
    else:
        r = IDENTITY_QUAT.copy()
    s = num(node.scale if node.scale is not None else [1, 1, 1], 3, f"{where}.scale")
    return t, r, s


def _node_matrix(node, rd=None, where="node"):
    t, r, s = _node_trs(node, rd, where)
    return local_matrices(t[None], r[None], s[None])[0]


def _parents(rd, nodes):
    """``parent_of`` (node -> parent node) from the nodes' ``children``, checked: indices
    exist, no node has two parents, no cycles (found without recursion)."""
    parent_of = {}
    for i, nd in enumerate(nodes):
        children = nd.children or []
        if not isinstance(children, list):
            rd.fail(f"nodes[{i}].children", "expected a list of node indices")
        for c in children:
            c = rd.index(c, len(nodes), f"nodes[{i}].children", "node")
            if c in parent_of or c == i:
                rd.fail(f"nodes[{i}].children", f"node {c} has more than one parent")
            parent_of[c] = i
    state = {}                                    # node -> 1 on the current walk, 2 done
    for start in range(len(nodes)):
        walk, n = [], start
        while n is not None and n not in state:
            state[n] = 1
            walk.append(n)
            n = parent_of.get(n)
        if n is not None and state[n] == 1:
            rd.fail("nodes", f"the node hierarchy has a cycle through node {n}")
        for m in walk:
            state[m] = 2
    return parent_of


@dataclass(frozen=True)
class PrimitiveRange:
    """Where one glTF primitive lies in its part's arrays: vertices
    ``first_vertex .. first_vertex + num_vertices - 1``, faces ``first_face ..
    first_face + num_faces - 1``; ``material`` is the glTF material index (-1: none)."""
    first_vertex: int
    num_vertices: int
    first_face: int
    num_faces: int
    material: int


@dataclass
class SkinnedPart:
    """One node of the file that draws a skinned mesh.

    node: glTF node index; name: the node's name (``node<i>`` when it has none); mesh:
    glTF mesh index; skin: glTF skin index; model: a :class:`~skinning.model.SkinnedMesh`
    of this node's mesh alone (its primitives merged, in order), whose skeleton, inverse
    bind matrices and animations are shared by every part of the same skin;
    primitives: one :class:`PrimitiveRange` per glTF primitive, in order.
    """
    node: int
    name: str
    mesh: int
    skin: int
    model: SkinnedMesh
    primitives: list


@dataclass
class SkinnedScene:
    """Every skinned mesh of a glTF file (:func:`load_gltf_scene`): ``parts``, one
    :class:`SkinnedPart` per node that uses a skin with a mesh (in node order), all
    posed together. Parts of one skin share one skeleton, so one pose per skin poses
    them all. Posed positions are world space, the nodes' own transforms ignored."""
    parts: list
    source: str = ""

    @property
    def skins(self):
        """The glTF skin indices used by the parts, ascending."""
        return sorted({p.skin for p in self.parts})

    @property
    def num_vertices(self):
        return sum(p.model.num_vertices for p in self.parts)

    @property
    def animations(self):
        """Names of the file's animations, in file order (indices are glTF's)."""
        return list(self.parts[0].model.animations) if self.parts else []

    def skeleton(self, skin):
        """The :class:`~skinning.skeleton.Skeleton` of glTF skin ``skin``."""
        return self._model_of(skin).skeleton

    def part(self, node):
        """The part of glTF node ``node`` (its index, or its name)."""
        for p in self.parts:
            if p.node == node if _is_int(node) else p.name == node:
                return p
        raise SkinningError(f"{self.source}: no skinned part for node {node!r} (parts: "
                            f"{', '.join(f'{p.node} {p.name!r}' for p in self.parts[:8])}"
                            f"{'...' if len(self.parts) > 8 else ''})")

    def _model_of(self, skin):
        for p in self.parts:
            if p.skin == skin and _is_int(skin):
                return p.model
        raise SkinningError(f"{self.source}: no part uses skin {skin!r} (skins: {self.skins})")

    def pose_at(self, animation, time, loop=False):
        """``{skin: Pose}`` of animation ``animation`` (a name or an index) at ``time``
        seconds. ``loop`` wraps the time into the span of the animation's joint channels
        over all skins, so that every skin stays in step."""
        models = {}
        for p in self.parts:
            models.setdefault(p.skin, p.model)
        if not models:
            return {}
        first = next(iter(models.values()))
        names = list(first.animations)
        if _is_int(animation):
            if not 0 <= animation < len(names):
                raise SkinningError(f"{self.source}: animation {animation} out of range "
                                    f"(there are {len(names)})")
            name = names[animation]
        elif isinstance(animation, str):
            if animation not in names:
                raise SkinningError(f"{self.source}: no animation named {animation!r} "
                                    f"(have {names})")
            name = animation
        else:
            raise SkinningError(f"{self.source}: an animation is a name or an index, "
                                f"got {_short(animation)}")
        anims = {s: m.animations[name] for s, m in models.items()}
        t = float(time)
        if not np.isfinite(t):
            raise SkinningError(f"animation {name!r}: time must be finite, got {time!r}")
        keyed = [a for a in anims.values() if a.channels]
        if loop and keyed:
            start, end = min(a.start for a in keyed), max(a.end for a in keyed)
            if end > start:
                t = start + (t - start) % (end - start)
        return {s: anims[s].sample(m.skeleton, t) for s, m in models.items()}

    def skin(self, poses=None, normals="transform"):
        """Posed meshes of every part, in ``parts`` order: what
        :meth:`SkinnedMesh.skin <skinning.model.SkinnedMesh.skin>` returns for each
        (``(vertices, normals)``, or just the vertices with ``normals=None``).
        poses: ``{skin: Pose}`` (from :meth:`pose_at`); a skin missing there is in its
        rest pose."""
        poses = poses or {}
        return [p.model.skin(poses.get(p.skin), normals=normals) for p in self.parts]

    def merged(self, skin=None):
        """One :class:`~skinning.model.SkinnedMesh` of every part of ``skin`` (default:
        the only skin used), vertices and faces concatenated in part order."""
        if skin is None:
            if len(self.skins) != 1:
                raise SkinningError(f"{self.source}: the parts use skins {self.skins}; "
                                    "say which to merge")
            skin = self.skins[0]
        parts = [p.model for p in self.parts if p.skin == skin and _is_int(skin)]
        if not parts:
            self._model_of(skin)                  # raises, naming the skins
        if len(parts) == 1:
            return parts[0]
        return merge_models(parts)


def merge_models(models):
    """Concatenate :class:`~skinning.model.SkinnedMesh` es of one skeleton (the first's
    skeleton, inverse bind matrices, animations and source are kept)."""
    first = models[0]
    k = max(m.joints.shape[1] for m in models)
    pad = lambda a: np.pad(a, ((0, 0), (0, k - a.shape[1])))  # noqa: E731
    offsets = np.cumsum([0] + [m.num_vertices for m in models[:-1]])
    return SkinnedMesh(first.skeleton, np.vstack([m.vertices for m in models]),
                       np.vstack([m.faces + o for m, o in zip(models, offsets)]),
                       np.vstack([pad(m.joints) for m in models]),
                       np.vstack([pad(m.weights) for m in models]), first.inverse_bind,
                       np.vstack([m.normals for m in models]), first.animations,
                       source=first.source)


def load_gltf(path, skin=None, normalize=False, node=None):
    """Load ``skins[skin]`` of a glTF file into one :class:`~skinning.model.SkinnedMesh`.

    Every node that uses the skin with a mesh is part of it (a character split into
    several meshes is one model), in node order: vertices, faces and influences are
    concatenated. skin: the skin index (default 0, or ``node``'s skin); node: a node
    index or name to take only that node's mesh. For the parts one by one (and every
    skin of the file) use :func:`load_gltf_scene`.

    normalize: rescale weight rows that do not sum to 1 (within 1e-3, or the rounding of
    normalised integer weights) instead of raising :class:`SkinningFileError`.
    Every index, count and number in the file is checked; errors name the file and the
    JSON path (``accessors[3]``, ``nodes[2].rotation``). Deep node hierarchies are
    walked without recursion.
    """
    rd = _Reader(path)
    nodes = rd.gltf.nodes or []
    skins = rd.gltf.skins or []
    if node is not None:
        n = _find_node(rd, node)
        s = rd.index(nodes[n].skin, len(skins), f"nodes[{n}].skin", "skin")
        if skin is not None and skin != s:
            raise SkinningError(f"{rd.path}: node {node!r} uses skin {s}, not skin "
                                f"{_short(skin)}")
        mesh_nodes = [n]
    else:
        s = rd.index(0 if skin is None else skin, len(skins), "skins", "skin")
        mesh_nodes = [i for i, nd in enumerate(nodes)
                      if _is_int(nd.skin) and nd.skin == s and nd.mesh is not None]
        if not mesh_nodes:
            rd.fail(f"skins[{s}]", "no node uses this skin with a mesh")
    return _load_scene(rd, mesh_nodes, normalize).merged(s)


def load_gltf_scene(path, normalize=False, nodes=None):
    """Every skinned mesh of a glTF file -> :class:`SkinnedScene`.

    nodes: the nodes to read (indices or names), each with a ``mesh`` and a ``skin``;
    default: every node that has both, in node order. Skins, meshes and animations are
    read and checked as by :func:`load_gltf` (``normalize`` likewise).
    """
    rd = _Reader(path)
    all_nodes = rd.gltf.nodes or []
    if nodes is None:
        chosen = [i for i, nd in enumerate(all_nodes)
                  if nd.mesh is not None and nd.skin is not None]
        if not chosen:
            rd.fail("nodes", "no node has both a mesh and a skin")
    else:
        chosen = []
        for n in nodes:
            n = _find_node(rd, n)
            if n not in chosen:
                chosen.append(n)
    return _load_scene(rd, chosen, normalize)


def _find_node(rd, node):
    """Index of ``node`` (an index or a name), which must have a mesh and a skin."""
    nodes = rd.gltf.nodes or []
    if isinstance(node, str):
        found = [i for i, nd in enumerate(nodes) if nd.name == node]
        skinned = [i for i in found if nodes[i].mesh is not None and nodes[i].skin is not None]
        if not found:
            raise SkinningError(f"{rd.path}: no node named {_short(node)}")
        if len(skinned) > 1:
            raise SkinningError(f"{rd.path}: nodes {skinned} are all named {_short(node)}; "
                                "give the node's index")
        n = (skinned or found)[0]
    elif _is_int(node):
        if not 0 <= node < len(nodes):
            raise SkinningError(f"{rd.path}: node {node} does not exist "
                                f"(there are {len(nodes)})")
        n = int(node)
    else:
        raise SkinningError(f"a node is an index or a name, got {_short(node)}")
    if nodes[n].mesh is None or nodes[n].skin is None:
        rd.fail(f"nodes[{n}]", "is not a skinned mesh (it needs a 'mesh' and a 'skin')")
    return n


def _load_scene(rd, mesh_nodes, normalize):
    """A :class:`SkinnedScene` of ``mesh_nodes`` (node indices with a mesh and a skin)."""
    g = rd.gltf
    nodes = g.nodes or []
    skins = g.skins or []
    parent_of = _parents(rd, nodes)
    rigs, meshes = {}, []
    for n in mesh_nodes:
        s = rd.index(nodes[n].skin, len(skins), f"nodes[{n}].skin", "skin")
        if s not in rigs:
            rigs[s] = _read_rig(rd, s, parent_of)
        meshes.append((n, s, _read_mesh(rd, nodes[n].mesh, rigs[s][2], normalize,
                                        f"nodes[{n}].mesh")))
    animations = {s: _read_animations(rd, rigs[s][3]) for s in rigs}
    parts = []
    for n, s, (verts, faces, normals, joints, weights, prims) in meshes:
        skeleton, ibm = rigs[s][:2]
        model = SkinnedMesh(skeleton, verts, faces, joints, weights, ibm, normals,
                            animations[s], source=str(rd.path))
        name = nodes[n].name if isinstance(nodes[n].name, str) and nodes[n].name else f"node{n}"
        parts.append(SkinnedPart(n, name, int(nodes[n].mesh), s, model, prims))
    return SkinnedScene(parts, source=str(rd.path))


def _read_rig(rd, skin, parent_of):
    """``(skeleton, inverse_bind (J,4,4), new_of_skin, node_to_new)`` of ``skins[skin]``:
    joints reordered parents first (``new_of_skin[k]``: new index of the skin's k-th
    joint; ``node_to_new``: joint node -> new index)."""
    nodes = rd.gltf.nodes or []
    sk = rd.gltf.skins[skin]
    joint_nodes = sk.joints or []
    if not isinstance(joint_nodes, list):
        rd.fail(f"skins[{skin}].joints", "expected a list of node indices")
    joint_nodes = list(joint_nodes)
    if not joint_nodes:
        rd.fail(f"skins[{skin}].joints", "empty")
    for n in joint_nodes:
        rd.index(n, len(nodes), f"skins[{skin}].joints", "node")
    if len(set(joint_nodes)) != len(joint_nodes):
        rd.fail(f"skins[{skin}].joints", "joints must be distinct, existing nodes")
    joint_set = set(joint_nodes)

    depth = {}                                    # node -> number of ancestors

    def depth_of(n):
        walk = []
        while n not in depth and n in parent_of:
            walk.append(n)
            n = parent_of[n]
        d = depth.setdefault(n, 0)
        for m in reversed(walk):
            d += 1
            depth[m] = d
        return depth[walk[0]] if walk else d

    order = sorted(range(len(joint_nodes)), key=lambda k: depth_of(joint_nodes[k]))  # parents first
    new_of_skin = np.empty(len(joint_nodes), dtype=np.int64)
    new_of_skin[order] = np.arange(len(order))
    node_to_new = {joint_nodes[k]: i for i, k in enumerate(order)}

    # nearest joint above each node and the product of the non-joint nodes in between,
    # shared between joints (memoised, no recursion)
    above = {}                                    # node -> (joint node or None, matrix)

    def joint_above(n):
        walk = []
        while n not in above:
            walk.append(n)
            p = parent_of.get(n)
            if p is None or p in joint_set:
                above[n] = (p, np.eye(4))
                walk.pop()
                break
            n = p
        for m in reversed(walk):
            p = parent_of[m]
            j, mat = above[p]
            above[m] = (j, mat @ _node_matrix(nodes[p], rd, f"nodes[{p}]"))
        return above[walk[0]] if walk else above[n]

    nj = len(order)
    parents = np.full(nj, -1, dtype=np.int64)
    base = np.tile(np.eye(4), (nj, 1, 1))
    trs = [_node_trs(nodes[joint_nodes[k]], rd, f"nodes[{joint_nodes[k]}]") for k in order]
    names, used = [], set()
    for i, k in enumerate(order):
        n = joint_nodes[k]
        j, m = joint_above(n)
        if j is not None:
            parents[i] = node_to_new[j]
        base[i] = m
        name = nodes[n].name if isinstance(nodes[n].name, str) and nodes[n].name else f"node{n}"
        name = name if name not in used else f"{name}_{n}"
        used.add(name)
        names.append(name)
    if not np.all(np.isfinite(base)):
        rd.fail("nodes", "the transforms above the joints overflow (values too large)")
    skeleton = Skeleton(names, parents, np.array([t for t, _, _ in trs]),
                        np.array([r for _, r, _ in trs]), np.array([s for _, _, s in trs]), base)

    if sk.inverseBindMatrices is None:
        ibm = np.tile(np.eye(4), (nj, 1, 1))
    else:
        raw = rd.accessor(sk.inverseBindMatrices, f"skins[{skin}].inverseBindMatrices",
                          "inverseBindMatrices")
        if raw.shape != (nj, 16):
            rd.fail(f"skins[{skin}].inverseBindMatrices",
                    f"expected {nj} MAT4, got {raw.shape[0]} x {raw.shape[1]}")
        ibm = raw.reshape(nj, 4, 4).transpose(0, 2, 1)[order]          # column-major
    return skeleton, np.ascontiguousarray(ibm), new_of_skin, node_to_new


def _read_animations(rd, node_to_new):
    """name -> :class:`Animation` of every animation of the file, on the joints of
    ``node_to_new`` (file order; unnamed ones are ``animation<i>``)."""
    animations = {}
    for a, anim in enumerate(rd.gltf.animations or []):
        name = anim.name if isinstance(anim.name, str) and anim.name else f"animation{a}"
        animations[name if name not in animations else f"{name}_{a}"] = _read_animation(
            rd, a, anim, name, node_to_new)
    return animations


def _read_mesh(rd, mesh_index, new_of_skin, normalize, where="mesh"):
    """``meshes[mesh_index]`` with its primitives merged: (vertices, faces, normals or
    None, joints (remapped to the skeleton's order), weights, [PrimitiveRange])."""
    meshes = rd.gltf.meshes or []
    mesh_index = rd.index(mesh_index, len(meshes), where, "mesh")
    prims = meshes[mesh_index].primitives or []
    vs, fs, ns, js, ws, ranges, off = [], [], [], [], [], [], 0
    for p, prim in enumerate(prims):
        where = f"meshes[{mesh_index}].primitives[{p}]"
        if prim.mode not in (None, 4) or isinstance(prim.mode, bool):
            rd.fail(f"{where}.mode", f"only TRIANGLES (4) is supported, got {_short(prim.mode)}")
        attrs = prim.attributes
        if getattr(attrs, "POSITION", None) is None:
            rd.fail(f"{where}.attributes", "no POSITION")
        v = rd.accessor(attrs.POSITION, f"{where}.attributes.POSITION", "POSITION")
        n = v.shape[0]
        if v.shape[1] != 3:
            rd.fail(f"{where}.attributes.POSITION", f"expected VEC3, got {v.shape[1]} components")
        if attrs.JOINTS_0 is None or attrs.WEIGHTS_0 is None:
            rd.fail(f"{where}.attributes", "a skinned primitive needs JOINTS_0 and WEIGHTS_0")
        jl, wl, tol = [], [], 1e-3
        for s in (0, 1):
            ja, wa = getattr(attrs, f"JOINTS_{s}", None), getattr(attrs, f"WEIGHTS_{s}", None)
            if ja is None and wa is None:
                continue
            if ja is None or wa is None:
                rd.fail(f"{where}.attributes", f"JOINTS_{s} and WEIGHTS_{s} come in pairs")
            jj = rd.accessor(ja, f"{where}.attributes.JOINTS_{s}", f"JOINTS_{s}")
            ww = rd.accessor(wa, f"{where}.attributes.WEIGHTS_{s}", f"WEIGHTS_{s}")
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
            f = rd.accessor(prim.indices, f"{where}.indices", "indices")
            f = f.astype(np.int64).ravel()
        else:
            f = np.arange(n, dtype=np.int64)
        if f.size % 3:
            rd.fail(f"{where}.indices", f"{f.size} indices is not a multiple of 3")
        acc_io.check_indices(f, n, rd.fail, f"{where}.indices",
                             f"accessors[{prim.indices}]" if prim.indices is not None else "the vertices")
        normal = None
        if attrs.NORMAL is not None:
            normal = rd.accessor(attrs.NORMAL, f"{where}.attributes.NORMAL", "NORMAL")
            if normal.shape != (n, 3):
                rd.fail(f"{where}.attributes.NORMAL", f"expected {n} VEC3, got {normal.shape}")
        material = -1
        if prim.material is not None:
            materials = rd.gltf.materials or []
            if not isinstance(materials, list):
                rd.fail("materials", "expected a list")
            material = rd.index(prim.material, len(materials), f"{where}.material", "material")
        ranges.append(PrimitiveRange(off, n, sum(len(x) for x in fs), f.size // 3, material))
        vs.append(v)
        fs.append(f.reshape(-1, 3) + off)
        ns.append(normal)
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
            np.vstack([pad(j) for j in js]), np.vstack([pad(w) for w in ws]), ranges)


def _read_animation(rd, a, anim, name, node_to_new):
    channels = []
    samplers = anim.samplers or []
    for c, ch in enumerate(anim.channels or []):
        where = f"animations[{a}].channels[{c}]"
        if ch.target is None:
            rd.fail(f"{where}.target", "missing")
        node, path = ch.target.node, ch.target.path
        if not _is_int(node) or node not in node_to_new or \
                path not in ("translation", "rotation", "scale"):
            continue
        s = rd.index(ch.sampler, len(samplers), f"{where}.sampler", "sampler")
        smp = samplers[s]
        swhere = f"animations[{a}].samplers[{s}]"
        interp = smp.interpolation or "LINEAR"
        if interp not in ("LINEAR", "STEP", "CUBICSPLINE"):
            rd.fail(f"{swhere}.interpolation", f"unknown interpolation {_short(interp)}")
        times = rd.accessor(smp.input, f"{swhere}.input", "input")[:, 0]
        values = rd.accessor(smp.output, f"{swhere}.output", path)
        acc_io.check_sampler(times, values, path, interp, rd.fail, swhere,
                             f"accessors[{smp.input}]", f"accessors[{smp.output}]")
        k = times.shape[0]
        cubic = interp == "CUBICSPLINE"
        if path == "rotation":
            values = quat_from_xyzw(values)
        if cubic:
            values = values.reshape(k, 3, -1)
        try:
            channels.append(Channel(node_to_new[node], path, times, values, interp))
        except SkinningError as e:
            rd.fail(swhere, e.message)
    return Animation(name, channels)
