"""glTF 2.0 scenes (``.gltf`` with external or embedded buffers, ``.glb``) for the renderer.

:func:`load_gltf` reads one scene of a file into a :class:`GltfScene`: the meshes (each a
list of :class:`Primitive`, in the mesh's own space) and, separately, where the node
hierarchy places them (:class:`Placement`: mesh index + world matrix), so that a mesh
used by several nodes is read once; the materials mapped onto ours
(:class:`GltfMaterial`, table in ``docs/gltf.md``); the cameras and
``KHR_lights_punctual`` lights with their world matrices. :func:`direct_scene` wraps a
file into a scene dict (camera, lights, background, one ``gltf`` object) for
``load_scene("model.glb")``.

Conventions: glTF is right-handed, y up, metres, like our scenes; matrices are stored
column-major; quaternions ``[x, y, z, w]``; a node's local matrix is ``T R S``; texture
``(0, 0)`` is the image's top-left corner (ours too: no flip). Animation channels are
sampled with the skinning library's :class:`skinning.Channel` (LINEAR, STEP,
CUBICSPLINE); skinned meshes (every node with a mesh and a skin; one skin may deform
several meshes) are posed with :func:`skinning.load_gltf_scene`. Morph targets are
blended at load with the node's (animated) weights, before skinning on skinned meshes; the
base colour texture's TEXCOORD set and ``KHR_texture_transform`` are applied to the texture
coordinates. ``COLOR_0`` multiplies the base colour (its alpha is not read); ``alphaMode``
``MASK`` and ``BLEND`` give the material a coverage texture (base colour alpha times the
texture's alpha: ``raytrace.kernels.coverage``; BLEND as stochastic transparency).

What is read approximately or not at all (a ``COLOR_0`` alpha below 1, extensions only
used) gives one :class:`GltfWarning` per kind and file.

Every problem in the file raises :class:`~raytrace.errors.SceneError` naming the file and
the JSON path inside it (``model.glb: meshes[0].primitives[1].indices: ...``).
"""
import base64
import dataclasses
import math
import pathlib
import re
import warnings
from urllib.parse import unquote

import numpy as np

from userio import gltf_accessors as acc_io
from userio.limits import check_finite, check_memory
from userio.reads import note, recording
from userio.textio import decode_text, parse_json, read_text

from ..errors import SceneError
from ..textures import decode_image_bytes
from .validate import MAX_MAGNITUDE

SUFFIXES = (".gltf", ".glb")
# Extensions read (see docs/gltf.md). A file that marks another one required is refused.
SUPPORTED_EXTENSIONS = ("KHR_lights_punctual", "KHR_materials_emissive_strength", "KHR_materials_ior",
                        "KHR_materials_transmission", "KHR_materials_volume", "KHR_mesh_quantization",
                        "KHR_texture_transform")
_MODES = {0: "POINTS", 1: "LINES", 2: "LINE_LOOP", 3: "LINE_STRIP", 4: "TRIANGLES",
          5: "TRIANGLE_STRIP", 6: "TRIANGLE_FAN"}
MIN_ALPHA = 1e-3           # GGX alpha (= roughness^2) below this: a perfect mirror
METALLIC_THRESHOLD = 0.5   # metallic (factor x mean of texture) at or above: a conductor
TRANSMISSION_THRESHOLD = 0.5


class GltfWarning(UserWarning):
    """Something in a glTF file that is read approximately or not at all (one warning per
    kind of problem and file, starting with the file's name)."""


@dataclasses.dataclass
class Primitive:
    """One triangle primitive in its mesh's space: ``positions`` (n,3) float64,
    ``normals`` (n,3) or None (then flat), ``uvs`` (n,2) or None (TEXCOORD_n of the
    material's base-colour texture, else TEXCOORD_0, with its ``KHR_texture_transform``
    applied), ``faces`` (m,3) int64 counter-clockwise, ``material``
    index into :attr:`GltfScene.materials` (-1: none given), ``colors`` (n,3) linear RGB
    in [0, 1] (``COLOR_0``) or None."""
    positions: np.ndarray
    normals: object
    uvs: object
    faces: np.ndarray
    material: int
    colors: object = None


@dataclasses.dataclass
class Placement:
    """``mesh`` (index into :attr:`GltfScene.meshes`) placed by ``matrix`` (4,4), the
    world matrix of glTF node ``node``."""
    mesh: int
    matrix: np.ndarray
    node: int


@dataclasses.dataclass
class GltfMaterial:
    """A glTF material mapped onto ours: ``name`` (unique in the file), ``spec`` (a scene
    material dict, whose textures may hold decoded ``pixels``), ``emission`` (3,) linear
    radiance or None, ``hidden`` (alpha mode MASK with a base alpha below the cutoff:
    every fragment is discarded, so the primitives are left out)."""
    name: str
    spec: dict
    emission: object
    hidden: bool


@dataclasses.dataclass
class GltfScene:
    """What the renderer takes from one glTF scene (see the module docstring)."""
    path: pathlib.Path
    meshes: list            # list of lists of Primitive; morphed and posed skinned meshes
                            # are appended
    placements: list        # Placement
    materials: list         # GltfMaterial, index = glTF material index
    cameras: list           # (JSON path ``cameras[c]``, world (4,4), camera dict of the file)
    lights: list            # (JSON path ``extensions.KHR_lights_punctual.lights[k]``, world (4,4),
                            #  the light dict)

    def bounds(self):
        """World-space (lo (3,), hi (3,)) of every placed primitive, or None when empty."""
        lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
        for pl in self.placements:
            for prim in self.meshes[pl.mesh]:
                p = prim.positions @ pl.matrix[:3, :3].T + pl.matrix[:3, 3]
                if len(p):
                    lo, hi = np.minimum(lo, p.min(axis=0)), np.maximum(hi, p.max(axis=0))
        return (lo, hi) if np.isfinite(lo).all() else None

    def triangle_count(self):
        return sum(len(prim.faces) for pl in self.placements for prim in self.meshes[pl.mesh])


# ------------------------------------------------------------------------ the container
def read_document(path):
    """The file's JSON (dict) and the GLB binary chunk (bytes or None)."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise SceneError(None, "glTF file not found", file=path)
    try:
        with path.open("rb") as f:
            head = f.read(4)
    except OSError as exc:
        raise OSError(f"{path}: {exc.strerror or exc}") from None
    if head == b"glTF" or path.suffix.lower() == ".glb":
        doc, blob = _read_glb(path)
    else:
        doc, blob = _parse_json(read_text(path, "glTF file", SceneError), path), None
    if not isinstance(doc, dict):
        raise SceneError("(top level)", "a glTF file must hold a JSON object", file=path)
    return doc, blob


def _parse_json(text, path):
    return parse_json(text, path, SceneError)


def _read_glb(path):
    """Split a GLB file into its JSON and BIN chunks (checked by
    :func:`userio.gltf_accessors.split_glb`: magic, version, lengths, chunk order)."""
    def fail(where, message):
        raise SceneError(where, message, file=path)

    note(path)
    text, blob = acc_io.split_glb(path.read_bytes(), fail)
    return _parse_json(decode_text(text, path, SceneError), path), blob


# ------------------------------------------------------------------ typed JSON access
def _at(where, key):
    """JSON path of ``key`` inside the object at ``where``."""
    return key if where in (None, "", "(top level)") else f"{where}.{key}"


class _Doc:
    """The parsed JSON with typed getters whose errors name the file and JSON path.
    Numbers must be finite and at most MAX_MAGNITUDE in size, as in scene files."""

    def __init__(self, path, doc, blob):
        self.path = pathlib.Path(path)
        self.doc = doc
        self.blob = blob
        self._buffers = {}
        self._images = {}
        self.notes = {}         # warning text -> JSON paths it applies to (ordered)

    def warn(self, message, where=None):
        """Note a warning for :meth:`emit_warnings`: each text once per file, with the
        JSON paths it was noted for (``where``) listed after it."""
        places = self.notes.setdefault(message, [])
        if where is not None and where not in places:
            places.append(where)

    def emit_warnings(self):
        for message, places in self.notes.items():
            more = f" ({', '.join(places[:4])}{', ...' if len(places) > 4 else ''})" if places else ""
            warnings.warn(f"{self.path.name}: {message}{more}", GltfWarning, stacklevel=4)

    def fail(self, where, message):
        raise SceneError(where, message, file=self.path)

    def array(self, name, where=None, obj=None):
        obj = self.doc if obj is None else obj
        value = obj.get(name, [])
        if not isinstance(value, list):
            self.fail(where or name, f"must be an array, got {type(value).__name__}")
        return value

    def item(self, name, i, where):
        """``doc[name][i]`` (a dict); ``where`` names the reference (e.g. ``nodes[2].mesh``)."""
        items = self.array(name)
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(items):
            self.fail(where, f"refers to {name}[{i}], but the file has {len(items)}")
        if not isinstance(items[i], dict):
            self.fail(f"{name}[{i}]", "must be an object")
        return items[i]

    def dict_(self, obj, key, where):
        value = obj.get(key, {})
        if not isinstance(value, dict):
            self.fail(_at(where, key), "must be an object")
        return value

    def int_(self, obj, key, where, default=None, lo=0):
        if key not in obj:
            if default is None:
                self.fail(where, f"missing required key {key!r}")
            return default
        value = obj[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < lo:
            self.fail(_at(where, key), f"must be an integer >= {lo}, got {value!r}")
        return value

    def num(self, obj, key, where, default, lo=-MAX_MAGNITUDE, hi=MAX_MAGNITUDE):
        value = obj.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            self.fail(_at(where, key), f"must be a finite number, got {value!r}")
        if not lo <= value <= hi:
            self.fail(_at(where, key), f"must be in [{lo:g}, {hi:g}], got {value!r}")
        return float(value)

    def vec(self, obj, key, n, where, default, lo=-MAX_MAGNITUDE, hi=MAX_MAGNITUDE):
        value = obj.get(key, default)
        if (not isinstance(value, list) or len(value) != n
                or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in value)):
            self.fail(_at(where, key), f"must be an array of {n} numbers")
        a = np.asarray(value, np.float64)
        if not np.isfinite(a).all():
            self.fail(_at(where, key), f"must hold finite numbers, got {value}")
        if (a < lo).any() or (a > hi).any():
            self.fail(_at(where, key), f"values must be in [{lo:g}, {hi:g}], got {value}")
        return a

    def str_(self, obj, key, where, default=None, choices=None):
        value = obj.get(key, default)
        if not isinstance(value, str):
            self.fail(_at(where, key), f"must be a string, got {value!r}")
        if choices and value not in choices:
            self.fail(_at(where, key), f"must be one of {', '.join(choices)}, got {value!r}")
        return value

    # -------------------------------------------------------------- buffers, accessors
    def _uri_bytes(self, uri, where):
        """Bytes of a data URI (base64) or of a file relative to the glTF file."""
        if not isinstance(uri, str):
            self.fail(where, "must be a string")
        if uri.startswith("data:"):
            head, _, payload = uri.partition(",")
            if not head.endswith(";base64"):
                self.fail(where, "only base64 data URIs are supported")
            try:
                return base64.b64decode(payload, validate=True)
            except ValueError as exc:
                self.fail(where, f"bad base64 data ({exc})")
        p = self.path.parent / unquote(uri)
        if not p.is_file():
            self.fail(where, f"file not found: {p}")
        note(p)
        return p.read_bytes()

    def buffer(self, i, where):
        if i not in self._buffers:
            buf = self.item("buffers", i, where)
            bw = f"buffers[{i}]"
            length = self.int_(buf, "byteLength", bw, lo=1)
            if "uri" in buf:
                data = self._uri_bytes(buf["uri"], f"{bw}.uri")
            elif self.blob is not None and i == 0:
                data = self.blob
            else:
                self.fail(bw, "has no uri and there is no GLB binary chunk")
            if len(data) < length:
                self.fail(bw, f"has {len(data)} bytes, byteLength says {length} (truncated?)")
            self._buffers[i] = memoryview(data)[:length]
        return self._buffers[i]

    def view(self, k, where, reader=""):
        """(bytes of bufferView ``k``, its byteStride or 0); ``where`` names the reference."""
        return acc_io.view_bytes(self.array("bufferViews"), k, self.buffer, self.fail, where, reader)

    def accessor(self, i, where, row_name="element", usage=None):
        """Accessor ``i`` as a (count, ncomp) array: float64 for floats and normalised
        integers, int64 otherwise; floats must be finite. ``where`` names the reference;
        ``usage``: what it is used as (see :func:`userio.gltf_accessors.read_accessor`)."""
        acc = self.item("accessors", i, where)
        aw = f"accessors[{i}]"

        def memory(count, ncomp):
            check_memory(count * ncomp * 8, f"{aw} ({count} x {acc.get('type')})", where,
                         error=SceneError, file=self.path)

        got = acc_io.read_accessor(acc, i, self.array("bufferViews"), self.buffer, self.fail, usage, memory)
        arr = got.data
        if arr.dtype.kind == "f":
            out = arr.astype(np.float64)
            check_finite(out, f"{where} ({aw})", file=self.path, error=SceneError, row_name=row_name)
            return out
        if got.normalized:
            return np.maximum(arr.astype(np.float64) / np.iinfo(arr.dtype).max, -1.0)
        return arr.astype(np.int64)

    def image(self, i, where, srgb):
        """Decoded image ``i``: (H, W, 4) float32 (linear when ``srgb``)."""
        key = (i, srgb)
        if key not in self._images:
            img = self.item("images", i, where)
            iw = f"images[{i}]"
            if "uri" in img:
                uri = img["uri"]
                data = self._uri_bytes(uri, f"{iw}.uri")
                inline = str(uri).startswith("data:")
                name = f"{self.path}#{iw}" if inline else str(self.path.parent / unquote(uri))
            elif "bufferView" in img:
                view, _ = self.view(self.int_(img, "bufferView", iw), f"{iw}.bufferView", iw)
                data, name = bytes(view), f"{self.path}#{iw}"
            else:
                self.fail(iw, "has neither uri nor bufferView")
            if not data.startswith((b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff")):
                self.fail(iw, f"cannot read image {name}: not a PNG or JPEG image (its data starts "
                              f"with {bytes(data[:8])!r})")
            try:
                self._images[key] = decode_image_bytes(data, name, iw, srgb=srgb, file=self.path)
            except SceneError as exc:     # no in-memory stream's repr in the message
                self.fail(iw, re.sub(r"\s*<_io\.BytesIO object at 0x[0-9a-fA-F]+>", "", exc.message))
        return self._images[key]


# ------------------------------------------------------------------------------ meshes
def _faces(doc, prim, pw, n):
    """(m,3) int64 triangles of a primitive with ``n`` vertices."""
    mode = doc.int_(prim, "mode", pw, 4)
    if mode not in (4, 5, 6):
        doc.fail(f"{pw}.mode", f"mode {mode} ({_MODES.get(mode, 'unknown')}): only triangles "
                               "(TRIANGLES, TRIANGLE_STRIP, TRIANGLE_FAN) can be rendered")
    if "indices" in prim:
        k = doc.int_(prim, "indices", pw)
        idx = doc.accessor(k, f"{pw}.indices", usage="indices")[:, 0]
        acc_io.check_indices(idx, n, doc.fail, f"{pw}.indices", f"accessors[{k}]")
    else:
        idx = np.arange(n, dtype=np.int64)
    if mode == 4:
        if len(idx) % 3:
            doc.fail(f"{pw}.indices" if "indices" in prim else pw,
                     f"{len(idx)} vertices is not a multiple of 3 (TRIANGLES)")
        return idx.reshape(-1, 3)
    if len(idx) < 3:
        return np.zeros((0, 3), np.int64)
    k = np.arange(len(idx) - 2)
    if mode == 6:                                   # fan: (v_{k+1}, v_{k+2}, v_0)
        return np.stack([idx[k + 1], idx[k + 2], np.full_like(k, idx[0])], axis=1)
    odd = k % 2                                     # strip: (v_k, v_{k+1+k%2}, v_{k+2-k%2})
    return np.stack([idx[k], idx[k + 1 + odd], idx[k + 2 - odd]], axis=1)


def _attribute(doc, attrs, name, pw, n, ncomp, row_name, key="attributes"):
    """Attribute ``name`` of ``attrs`` (``pw.key``: an ``attributes`` object, or with key
    "" a morph target): (n, ncomp) float64."""
    aw = _at(pw, key) if key else pw
    k = doc.int_(attrs, name, aw)
    a = doc.accessor(k, f"{aw}.{name}", row_name, usage=name)
    if a.shape != (n, ncomp):
        doc.fail(f"{aw}.{name}", f"expected {n} x {ncomp} values (as POSITION), got "
                                              f"{a.shape[0]} x {a.shape[1]}")
    return a.astype(np.float64)


def morph_target_count(doc, m):
    """Number of morph targets of ``meshes[m]`` (those of its first primitive; the spec
    asks every primitive to have as many)."""
    mesh = doc.item("meshes", m, f"meshes[{m}]")
    prims = doc.array("primitives", f"meshes[{m}].primitives", mesh)
    if not prims or not isinstance(prims[0], dict):
        return 0
    return len(doc.array("targets", f"meshes[{m}].primitives[0].targets", prims[0]))


def morph_weights(doc, m, node, nw, animated, i):
    """Morph weights (n,) of ``meshes[m]`` placed by ``nodes[i]`` (``node``): the animated
    ``weights`` of the node, else its ``weights``, else the mesh's, else zeros; None when
    the mesh has no morph targets."""
    n = morph_target_count(doc, m)
    if n == 0:
        return None
    if (i, "weights") in animated:
        return animated[(i, "weights")]
    mesh = doc.doc["meshes"][m]
    for obj, where in ((node, nw), (mesh, f"meshes[{m}]")):
        if "weights" in obj:
            w = obj["weights"]
            if not isinstance(w, list):
                doc.fail(_at(where, "weights"), "must be an array of numbers")
            if len(w) != n:
                doc.fail(_at(where, "weights"), f"has {len(w)} weights, the mesh has {n} morph targets")
            return doc.vec(obj, "weights", n, where, None)
    return np.zeros(n)


def _morph(doc, prim, pw, n, weights, pos, nrm):
    """POSITION and NORMAL of a primitive with its morph ``targets`` blended by ``weights``
    (displacements added; normals renormalised)."""
    targets = doc.array("targets", f"{pw}.targets", prim)
    if weights is None or not targets:
        return pos, nrm
    if len(targets) != len(weights):
        doc.fail(f"{pw}.targets", f"has {len(targets)} morph targets, the weights {len(weights)}")
    pos, nrm = pos.copy(), None if nrm is None else nrm.copy()
    for t, (target, w) in enumerate(zip(targets, weights)):
        tw = f"{pw}.targets[{t}]"
        if not isinstance(target, dict):
            doc.fail(tw, "must be an object")
        if w == 0.0:
            continue
        if "POSITION" in target:
            pos += w * _attribute(doc, target, "POSITION", tw, n, 3, "vertex", "")
        if "NORMAL" in target and nrm is not None:
            nrm += w * _attribute(doc, target, "NORMAL", tw, n, 3, "normal", "")
    if nrm is not None:
        length = np.linalg.norm(nrm, axis=1, keepdims=True)
        nrm = np.where(length > 0, nrm / np.where(length > 0, length, 1.0), nrm)
    return pos, nrm


def _read_mesh(doc, m, uv_map, weights=None):
    """Primitives of ``meshes[m]``; ``uv_map(material)``: (the TEXCOORD set its base-colour
    texture reads or None, the (3,3) ``KHR_texture_transform`` matrix or None);
    ``weights``: morph target weights (None: the base shape)."""
    mesh = doc.item("meshes", m, f"meshes[{m}]")
    prims = doc.array("primitives", f"meshes[{m}].primitives", mesh)
    out = []
    for p, prim in enumerate(prims):
        pw = f"meshes[{m}].primitives[{p}]"
        if not isinstance(prim, dict):
            doc.fail(pw, "must be an object")
        attrs = doc.dict_(prim, "attributes", pw)
        if "POSITION" not in attrs:
            doc.fail(f"{pw}.attributes", "no POSITION")
        pos = doc.accessor(doc.int_(attrs, "POSITION", f"{pw}.attributes"), f"{pw}.attributes.POSITION",
                           "vertex", usage="POSITION")
        if pos.shape[1] != 3:
            doc.fail(f"{pw}.attributes.POSITION", "must be VEC3")
        n = len(pos)
        pos = pos.astype(np.float64)
        nrm = _attribute(doc, attrs, "NORMAL", pw, n, 3, "normal") if "NORMAL" in attrs else None
        pos, nrm = _morph(doc, prim, pw, n, weights, pos, nrm)
        colors = _vertex_colors(doc, attrs, pw, n) if "COLOR_0" in attrs else None
        mat = doc.int_(prim, "material", pw, -1)
        if mat >= 0:
            doc.item("materials", mat, f"{pw}.material")
        tc, transform = uv_map(mat)      # the set the base-colour texture uses, else set 0
        if tc is not None and f"TEXCOORD_{tc}" not in attrs:
            doc.warn("a base colour texture reads a TEXCOORD set the primitive lacks; TEXCOORD_0 "
                     "is used", f"{pw} (TEXCOORD_{tc})")
            tc = 0
        tc = 0 if tc is None else tc
        uvs = None
        if f"TEXCOORD_{tc}" in attrs:
            uvs = _attribute(doc, attrs, f"TEXCOORD_{tc}", pw, n, 2, "texture coordinate")
            if transform is not None:
                uvs = uvs @ transform[:2, :2].T + transform[:2, 2]
        out.append(Primitive(pos, nrm, uvs, _faces(doc, prim, pw, n), mat, colors))
    return out


def _vertex_colors(doc, attrs, pw, n):
    """``COLOR_0`` (VEC3 or VEC4; floats or normalised integers) -> (n, 3) linear RGB.
    Float values must lie in [0, 1] (the spec's range); the alpha of a VEC4 is not read."""
    aw = f"{_at(pw, 'attributes')}.COLOR_0"
    a = doc.accessor(doc.int_(attrs, "COLOR_0", _at(pw, "attributes")), aw, "colour", usage="COLOR_0")
    if len(a) != n:
        doc.fail(aw, f"expected {n} colours (as POSITION), got {len(a)}")
    if len(a) and (a.min() < 0.0 or a.max() > 1.0):
        doc.fail(aw, f"colour values must lie in [0, 1], got {a.min():g} .. {a.max():g}")
    if a.shape[1] == 4 and len(a) and a[:, 3].min() < 1.0:
        doc.warn("COLOR_0 alpha below 1 is not read (vertex colours are opaque)", aw)
    return np.ascontiguousarray(a[:, :3], np.float64)


# ------------------------------------------------------------------------- materials
def _texture_image(doc, info, where, srgb):
    """The decoded image of a textureInfo object -> ((H, W, 4) float32, images index)."""
    if not isinstance(info, dict):
        doc.fail(where, "must be an object")
    t = doc.int_(info, "index", where)
    tex = doc.item("textures", t, f"{where}.index")
    if "source" not in tex:
        doc.fail(f"textures[{t}]", "has no source image (only PNG/JPEG sources are supported)")
    src = doc.int_(tex, "source", f"textures[{t}]")
    return doc.image(src, f"textures[{t}].source", srgb), src


def _material(doc, k, names):
    """Map ``materials[k]`` onto one of our materials (docs/gltf.md has the table)."""
    mat = doc.item("materials", k, f"materials[{k}]")
    mw = f"materials[{k}]"
    name = mat.get("name") if isinstance(mat.get("name"), str) and mat.get("name") else f"material{k}"
    if name in names:
        name = f"{name}.{k}"
    pbr = doc.dict_(mat, "pbrMetallicRoughness", mw)
    pw = f"{mw}.pbrMetallicRoughness"
    base = doc.vec(pbr, "baseColorFactor", 4, pw, [1.0, 1.0, 1.0, 1.0], 0.0, 1.0)
    metallic = doc.num(pbr, "metallicFactor", pw, 1.0, 0.0, 1.0)
    rough = doc.num(pbr, "roughnessFactor", pw, 1.0, 0.0, 1.0)
    colour = [float(c) for c in base[:3]]
    alphas = np.array([base[3]])           # every alpha value of the surface
    coverage = np.full((1, 1), base[3], np.float32)          # (H, W) coverage image
    coverage_key = ("alpha", float(base[3]))
    if "baseColorTexture" in pbr:
        img, src = _texture_image(doc, pbr["baseColorTexture"], f"{pw}.baseColorTexture", srgb=True)
        alphas = base[3] * img[..., 3].ravel()
        coverage = np.float32(base[3]) * img[..., 3]
        coverage_key = (str(doc.path), f"images[{src}]", "alpha", float(base[3]))
        colour = {"type": "image", "pixels": img[..., :3], "tint": base[:3].tolist(),
                  "key": (str(doc.path), f"images[{src}]")}
    if "metallicRoughnessTexture" in pbr:
        img, _ = _texture_image(doc, pbr["metallicRoughnessTexture"], f"{pw}.metallicRoughnessTexture",
                                srgb=False)
        rough *= float(img[..., 1].mean())
        metallic *= float(img[..., 2].mean())
    ext = doc.dict_(mat, "extensions", mw)
    ew = f"{mw}.extensions"
    trans = doc.num(doc.dict_(ext, "KHR_materials_transmission", ew), "transmissionFactor",
                    f"{ew}.KHR_materials_transmission", 0.0, 0.0, 1.0)
    ior = doc.num(doc.dict_(ext, "KHR_materials_ior", ew), "ior", f"{ew}.KHR_materials_ior", 1.5, 0.0)
    if metallic >= METALLIC_THRESHOLD:
        alpha = rough * rough
        spec = ({"type": "conductor", "reflectance": colour} if alpha < MIN_ALPHA else
                {"type": "rough_conductor", "reflectance": colour, "alpha": alpha})
    elif trans >= TRANSMISSION_THRESHOLD:
        spec = {"type": "dielectric", "ior": ior if ior >= 1.0 else 1.5}
        volume = _volume(doc, doc.dict_(ext, "KHR_materials_volume", ew), f"{ew}.KHR_materials_volume")
        if volume is not None:
            spec["volume"] = volume
    else:
        spec = {"type": "diffuse", "albedo": colour}
    emission = doc.vec(mat, "emissiveFactor", 3, mw, [0.0, 0.0, 0.0], 0.0, 1.0)
    emission = emission * doc.num(doc.dict_(ext, "KHR_materials_emissive_strength", ew), "emissiveStrength",
                                  f"{ew}.KHR_materials_emissive_strength", 1.0, 0.0)
    if "emissiveTexture" in mat and emission.any():
        img, _ = _texture_image(doc, mat["emissiveTexture"], f"{mw}.emissiveTexture", srgb=True)
        emission = emission * img[..., :3].reshape(-1, 3).mean(axis=0)
    mode = doc.str_(mat, "alphaMode", mw, "OPAQUE", ("OPAQUE", "MASK", "BLEND"))
    cutoff = doc.num(mat, "alphaCutoff", mw, 0.5, 0.0)
    hidden = mode == "MASK" and bool((alphas < cutoff).all())
    if (mode == "MASK" and not hidden and (alphas < cutoff).any()) or (mode == "BLEND" and (alphas < 1.0).any()):
        spec["cutout"] = {"type": "image", "pixels": np.repeat(coverage[..., None], 3, axis=2),
                          "key": coverage_key, "cutoff": cutoff if mode == "MASK" else -1.0}
    return GltfMaterial(name, spec, emission if emission.any() else None, hidden)


def _volume(doc, vol, vw):
    """``KHR_materials_volume`` -> the absorbing medium inside a transmissive material
    (``raytrace.scene.media.gltf_volume``: sigma_a = -ln(attenuationColor) /
    attenuationDistance, no scattering), or None: thin-walled (``thicknessFactor`` 0,
    the default) or no attenuation (``attenuationDistance`` absent: infinite). The
    thickness itself is not used: the path through the mesh is (a path tracer has the
    geometry); ``thicknessTexture`` is ignored likewise."""
    thickness = doc.num(vol, "thicknessFactor", vw, 0.0, 0.0)
    colour = doc.vec(vol, "attenuationColor", 3, vw, [1.0, 1.0, 1.0], 0.0, 1.0)
    if "attenuationDistance" not in vol:
        return None
    distance = doc.num(vol, "attenuationDistance", vw, 1.0, 0.0)
    if not distance > 0.0:
        doc.fail(f"{vw}.attenuationDistance", f"must be > 0, got {distance!r}")
    if thickness == 0.0 or (colour >= 1.0).all():
        return None
    from .media import gltf_volume
    return gltf_volume(colour, distance)


def texture_transform(doc, info, where):
    """(TEXCOORD set, (3,3) UV matrix or None) of a textureInfo object: its ``texCoord``
    and its ``KHR_texture_transform`` (``offset``, ``rotation``, ``scale``; the
    extension's own ``texCoord`` overrides the info's). The matrix is the extension's
    ``T R S``: uv' = M (u, v, 1)."""
    if not isinstance(info, dict):
        doc.fail(where, "must be an object")
    tc = doc.int_(info, "texCoord", where, 0)
    ext = doc.dict_(doc.dict_(info, "extensions", where), "KHR_texture_transform", f"{where}.extensions")
    if not ext:
        return tc, None
    xw = f"{where}.extensions.KHR_texture_transform"
    ox, oy = doc.vec(ext, "offset", 2, xw, [0.0, 0.0])
    r = doc.num(ext, "rotation", xw, 0.0)
    sx, sy = doc.vec(ext, "scale", 2, xw, [1.0, 1.0])
    tc = doc.int_(ext, "texCoord", xw, tc)
    c, s = math.cos(r), math.sin(r)
    translate = np.array([[1.0, 0.0, ox], [0.0, 1.0, oy], [0.0, 0.0, 1.0]])
    rotate = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])
    return tc, translate @ rotate @ np.diag([sx, sy, 1.0])


def _uv_map(doc, k):
    """(TEXCOORD set, UV matrix or None) of material ``k``'s base-colour texture, the one
    texture sampled per point (the metallic-roughness and emissive textures are averaged
    over their whole image, so their sets and transforms do not change the result);
    (None, None) without one."""
    if k < 0:
        return None, None
    mat = doc.item("materials", k, f"materials[{k}]")
    pbr = doc.dict_(mat, "pbrMetallicRoughness", f"materials[{k}]")
    if "baseColorTexture" not in pbr:
        return None, None
    return texture_transform(doc, pbr["baseColorTexture"], f"materials[{k}].pbrMetallicRoughness.baseColorTexture")


# ------------------------------------------------------------------ nodes, animation
def _node_trs(doc, node, nw):
    """(translation, rotation quaternion (w, x, y, z), scale) of a node without a matrix."""
    t = doc.vec(node, "translation", 3, nw, [0.0, 0.0, 0.0])
    x, y, z, w = doc.vec(node, "rotation", 4, nw, [0.0, 0.0, 0.0, 1.0])
    s = doc.vec(node, "scale", 3, nw, [1.0, 1.0, 1.0])
    return t, np.array([w, x, y, z]), s


def _local_matrix(doc, i, node, animated):
    """Local matrix of ``nodes[i]``: its ``matrix`` or ``T R S`` (animated values first)."""
    import skinning

    nw = f"nodes[{i}]"
    if "matrix" in node:
        return doc.vec(node, "matrix", 16, nw, None).reshape(4, 4).T        # column-major
    t, r, s = _node_trs(doc, node, nw)
    t = animated.get((i, "translation"), t)
    r = animated.get((i, "rotation"), r)
    s = animated.get((i, "scale"), s)
    norm = np.linalg.norm(r)
    if norm == 0.0:
        doc.fail(f"{nw}.rotation", "must be a unit quaternion, got a zero one")
    return skinning.local_matrices(t[None], (r / norm)[None], s[None])[0]


def animation_index(doc, animation, where):
    """Index of ``animation`` (an index or a name) among the file's animations; ``where``
    is the scene object's key (errors name the scene file there)."""
    anims = doc.array("animations")
    names = [a.get("name") if isinstance(a, dict) else None for a in anims]
    if isinstance(animation, str):
        if animation not in names:
            known = ", ".join(repr(n) for n in names if n) or "none named"
            raise SceneError(where, f"{doc.path.name} has no animation named {animation!r} ({known})")
        return names.index(animation)
    if not 0 <= animation < len(anims):
        raise SceneError(where, f"animation {animation} out of range ({doc.path.name} has {len(anims)})")
    return animation


def sample_animation(doc, a, time, loop=False):
    """Node values of ``animations[a]`` at ``time`` s: {(node, path): value} for paths
    ``translation``, ``rotation``, ``scale`` (sampled by :class:`skinning.Channel`) and
    morph ``weights`` (by :func:`_sample_weights`)."""
    import skinning

    anim = doc.item("animations", a, f"animations[{a}]")
    aw = f"animations[{a}]"
    samplers = doc.array("samplers", f"{aw}.samplers", anim)
    channels, sampled, weights = [], [], {}
    for c, ch in enumerate(doc.array("channels", f"{aw}.channels", anim)):
        cw = f"{aw}.channels[{c}]"
        if not isinstance(ch, dict):
            doc.fail(cw, "must be an object")
        target = doc.dict_(ch, "target", cw)
        path = doc.str_(target, "path", f"{cw}.target")
        if path not in ("translation", "rotation", "scale", "weights") or "node" not in target:
            continue
        node = doc.int_(target, "node", f"{cw}.target")
        nd = doc.item("nodes", node, f"{cw}.target.node")
        if path == "weights":
            n = morph_target_count(doc, doc.int_(nd, "mesh", f"nodes[{node}]")) if "mesh" in nd else 0
            if n == 0:
                doc.warn("a weights channel animates a node without morph targets; ignored", cw)
                continue
        s = doc.int_(ch, "sampler", cw)
        if s >= len(samplers) or not isinstance(samplers[s], dict):
            doc.fail(f"{cw}.sampler", f"refers to samplers[{s}], but the animation has {len(samplers)}")
        smp, sw = samplers[s], f"{aw}.samplers[{s}]"
        interp = doc.str_(smp, "interpolation", sw, "LINEAR", ("LINEAR", "STEP", "CUBICSPLINE"))
        ia, oa = doc.int_(smp, "input", sw), doc.int_(smp, "output", sw)
        times = doc.accessor(ia, f"{sw}.input", "key time", usage="input")[:, 0]
        values = doc.accessor(oa, f"{sw}.output", "key value", usage=path).astype(np.float64)
        if path == "weights":
            weights[(node, path)] = _weights_sampler(doc, times, values, n, interp, sw, ia, oa)
            continue
        acc_io.check_sampler(times, values, path, interp, doc.fail, sw, f"accessors[{ia}]", f"accessors[{oa}]")
        if path == "rotation" and values.shape[1] == 4:
            values = values[:, [3, 0, 1, 2]]                         # (x, y, z, w) -> (w, x, y, z)
        if interp == "CUBICSPLINE" and values.shape[0] == 3 * len(times):
            values = values.reshape(len(times), 3, -1)
        try:
            channels.append(skinning.Channel(node, path, times, values, interp))
            sampled.append(sw)
        except skinning.SkinningError as exc:
            doc.fail(sw, str(exc).split(": ", 1)[-1])
    anim_obj = skinning.Animation(f"animations[{a}]", channels)
    spans = [(anim_obj.start, anim_obj.end)] if channels else []
    spans += [(w[0][0], w[0][-1]) for w in weights.values()]
    start, end = min([a for a, _ in spans], default=0.0), max([b for _, b in spans], default=0.0)
    t = float(time)
    if loop and end > start:
        t = start + (t - start) % (end - start)
    out = {key: _sample_weights(*w, t) for key, w in weights.items()}
    for c, ch in zip(sampled, channels):
        try:
            out[(ch.joint, ch.path)] = ch.sample(t)
        except ValueError as exc:      # e.g. cubic-spline tangents that cross a zero quaternion
            doc.fail(c, f"cannot sample at time {t:g}: {exc}")
    return out


def _weights_sampler(doc, times, values, n, interp, sw, ia, oa):
    """(times (K,), keys (K, n) or with CUBICSPLINE (K, 3, n) as in-tangent, value,
    out-tangent, interpolation) of a morph ``weights`` sampler for ``n`` targets."""
    k = len(times)
    want = k * n * (3 if interp == "CUBICSPLINE" else 1)
    if values.size != want:
        doc.fail(f"{sw}.output", f"accessors[{oa}] holds {values.size} values; {k} key times "
                                 f"({interp}) of {n} morph weights need {want}")
    acc_io.check_sampler(times, values.reshape(-1, n), "weights", interp, doc.fail, sw,
                         f"accessors[{ia}]", f"accessors[{oa}]")
    keys = values.reshape(k, 3, n) if interp == "CUBICSPLINE" else values.reshape(k, n)
    return times, keys, interp


def _sample_weights(times, keys, interp, t):
    """Morph weights at time ``t`` (glTF 2.0 appendix C: before the first key the first
    value, after the last the last)."""
    cubic = interp == "CUBICSPLINE"
    value = (lambda j: keys[j, 1]) if cubic else (lambda j: keys[j])
    if t <= times[0]:
        return value(0).copy()
    if t >= times[-1]:
        return value(len(times) - 1).copy()
    j = int(np.searchsorted(times, t, side="right")) - 1
    td = times[j + 1] - times[j]
    u = (t - times[j]) / td
    if interp == "STEP":
        return value(j).copy()
    if interp == "LINEAR":
        return (1.0 - u) * keys[j] + u * keys[j + 1]
    u2, u3 = u * u, u * u * u
    return ((2 * u3 - 3 * u2 + 1) * keys[j, 1] + td * (u3 - 2 * u2 + u) * keys[j, 2]
            + (-2 * u3 + 3 * u2) * keys[j + 1, 1] + td * (u3 - u2) * keys[j + 1, 0])


def _scene_roots(doc, scene):
    """Root node indices of the chosen scene (default: the file's ``scene``, else 0; a
    file without scenes shows every node that has no parent)."""
    scenes = doc.array("scenes")
    if scene is None:
        if not scenes:
            children = {c for n in doc.array("nodes") if isinstance(n, dict)
                        for c in n.get("children", []) if isinstance(c, int)}
            return [i for i in range(len(doc.array("nodes"))) if i not in children]
        scene = doc.int_(doc.doc, "scene", "(top level)", 0)
    elif not 0 <= scene < len(scenes):              # the scene object's key, not the file
        raise SceneError("scene", f"scene {scene} out of range ({doc.path.name} has {len(scenes)})")
    sc = doc.item("scenes", scene, "scene")
    roots = doc.array("nodes", f"scenes[{scene}].nodes", sc)
    for k, r in enumerate(roots):
        doc.item("nodes", r, f"scenes[{scene}].nodes[{k}]")
    return roots


def _walk(doc, roots, animated):
    """(node index, world matrix) of every node below ``roots``, parents first."""
    out, seen = [], set()
    stack = [(r, np.eye(4), f"scene node {r}") for r in reversed(roots)]
    while stack:
        i, parent, how = stack.pop()
        if i in seen:
            doc.fail(f"nodes[{i}]", f"is reached twice ({how}): the node hierarchy must be a tree "
                                    "(no cycles, one parent per node)")
        seen.add(i)
        node = doc.item("nodes", i, f"nodes[{i}]")
        world = parent @ _local_matrix(doc, i, node, animated)
        out.append((i, world))
        children = doc.array("children", f"nodes[{i}].children", node)
        for k, c in reversed(list(enumerate(children))):
            doc.item("nodes", c, f"nodes[{i}].children[{k}]")
            stack.append((c, world, f"as child of nodes[{i}]"))
    return out


# ------------------------------------------------------------------------ the scene
def check_extensions(doc):
    """Refuse a file whose ``extensionsRequired`` names an extension we do not read; note
    one warning naming those that are only in ``extensionsUsed`` (they are ignored)."""
    required = doc.array("extensionsRequired")
    for k, name in enumerate(required):
        if name not in SUPPORTED_EXTENSIONS:
            supported = ", ".join(SUPPORTED_EXTENSIONS)
            doc.fail(f"extensionsRequired[{k}]", f"the file requires extension {name!r}, which raytrace "
                                                 f"does not support (supported: {supported})")
    ignored = [name for name in doc.array("extensionsUsed")
               if isinstance(name, str) and name not in SUPPORTED_EXTENSIONS]
    if ignored:
        doc.warn(f"extensionsUsed: {', '.join(ignored)} not supported; ignored")
    asset = doc.dict_(doc.doc, "asset", "(top level)")
    version = asset.get("version")
    if not isinstance(version, str) or not version.startswith("2."):
        doc.fail("asset.version", f"glTF version {version!r}; only glTF 2.x files are supported")


def _skinned(doc, i, walk, state, anim, time, loop, morphed=None):
    """Posed (vertices, normals) of skinned node ``i`` in world space, through the skinning
    library. On the first call every node of ``walk`` (the scene's nodes) with a mesh and
    a skin is read at once (:func:`skinning.load_gltf_scene`: a skin may deform several
    meshes) and posed with one pose per skin; ``state`` keeps them for the later calls.
    ``morphed``: the node's mesh with its morph targets blended (primitives in order), which
    replaces the bind shape before skinning (the glTF order: morph, then skin)."""
    import skinning

    if "scene" not in state:
        nodes = []
        for k, _ in walk:
            nd = doc.doc["nodes"][k]
            if "mesh" in nd and "skin" in nd:
                doc.item("skins", doc.int_(nd, "skin", f"nodes[{k}]"), f"nodes[{k}].skin")
                nodes.append(k)
        try:
            sc = skinning.load_gltf_scene(doc.path, nodes=nodes)
            poses = {} if anim is None else sc.pose_at(anim, time, loop=loop)
        except skinning.SkinningFileError as exc:
            doc.fail(exc.where or "skins", exc.message)
        except skinning.SkinningError as exc:
            doc.fail(f"nodes[{i}].skin", str(exc))
        state.update(scene=sc, poses=poses)
    part = state["scene"].part(i)
    model = part.model
    try:
        if morphed is not None:
            v = np.vstack([p.positions for p in morphed])
            if v.shape != model.vertices.shape:
                doc.fail(f"nodes[{i}].mesh", f"the skinning library read {len(model.vertices)} vertices, "
                                             f"the renderer {len(v)}")
            nrm = None if any(p.normals is None for p in morphed) else np.vstack([p.normals for p in morphed])
            model = dataclasses.replace(model, vertices=v, normals=nrm)
        return model.skin(state["poses"].get(part.skin), normals="transform")
    except skinning.SkinningError as exc:
        doc.fail(f"nodes[{i}].skin", str(exc))


def load_gltf(path, scene=None, animation=None, time=0.0, loop=False):
    """Read ``scene`` (default: the file's) of a glTF file -> :class:`GltfScene`, with
    node TRS and morph weights animation ``animation`` (index or name; None: the nodes as authored) sampled
    at ``time`` seconds (``loop``: wrapped into the animation's time span). The last
    result is cached (keyed on the file's path, size and modification time), with the
    files it read, noted again on a hit (:mod:`userio.reads`: a scene's ``files``)."""
    path = pathlib.Path(path).resolve()
    try:
        st = path.stat()
        key = (str(path), st.st_size, st.st_mtime_ns, scene, animation, float(time), bool(loop))
    except OSError:
        key = None
    if key is not None and _cache.get("key") == key:
        for p in _cache["files"]:
            note(p)
        return _cache["scene"]
    with recording() as read:
        result = _load(path, scene, animation, time, loop)
    if key is not None:
        _cache.clear()
        _cache.update(key=key, scene=result, files=read.paths)
    return result


_cache = {}


def _load(path, scene, animation, time, loop):
    doc = _Doc(path, *read_document(path))
    check_extensions(doc)
    anim = None if animation is None else animation_index(doc, animation, "animation")
    animated = {} if anim is None else sample_animation(doc, anim, time, loop)
    materials, names = [], set()
    for k in range(len(doc.array("materials"))):
        materials.append(_material(doc, k, names))
        names.add(materials[-1].name)
    meshes, mesh_slot, placements, cameras, lights = [], {}, [], [], []
    skinned, posed = {}, {}
    punctual = doc.array("lights", "extensions.KHR_lights_punctual.lights",
                         doc.dict_(doc.dict_(doc.doc, "extensions", "(top level)"), "KHR_lights_punctual",
                                   "extensions"))
    walk = _walk(doc, _scene_roots(doc, scene), animated)
    for i, world in walk:
        node = doc.doc["nodes"][i]
        nw = f"nodes[{i}]"
        if "mesh" in node:
            m = doc.int_(node, "mesh", nw)
            doc.item("meshes", m, f"{nw}.mesh")
            weights = morph_weights(doc, m, node, nw, animated, i)
            slot = (m, None if weights is None else tuple(weights.tolist()))
            if slot not in mesh_slot:
                mesh_slot[slot] = len(meshes)
                meshes.append(_read_mesh(doc, m, lambda k: _uv_map(doc, k), weights))
            if "skin" in node:
                key = (m, doc.int_(node, "skin", nw), slot[1])
                if key not in posed:          # the node's transform is ignored: same result
                    morphed = None if weights is None or not weights.any() else meshes[mesh_slot[slot]]
                    v, n = _skinned(doc, i, walk, skinned, anim, time, loop, morphed)
                    posed[key] = len(meshes)
                    meshes.append(_split_posed(doc, m, meshes[mesh_slot[slot]], v, n))
                placements.append(Placement(posed[key], np.eye(4), i))
            else:
                placements.append(Placement(mesh_slot[slot], world, i))
        if "camera" in node:
            c = doc.int_(node, "camera", nw)
            cameras.append((f"cameras[{c}]", world, doc.item("cameras", c, f"{nw}.camera")))
        ext = doc.dict_(node, "extensions", nw)
        if "KHR_lights_punctual" in ext:
            lw = f"{nw}.extensions.KHR_lights_punctual"
            k = doc.int_(doc.dict_(ext, "KHR_lights_punctual", f"{nw}.extensions"), "light", lw)
            if k >= len(punctual) or not isinstance(punctual[k], dict):
                doc.fail(f"{lw}.light", f"refers to light {k}, but the file has {len(punctual)}")
            lights.append((f"extensions.KHR_lights_punctual.lights[{k}]", world, punctual[k]))
    doc.emit_warnings()
    return GltfScene(path, meshes, placements, materials, cameras, lights)


def _split_posed(doc, m, prims, v, n):
    """The skinning library's posed vertices of mesh ``m`` (its primitives merged in
    order) split back into ``prims``."""
    if sum(len(p.positions) for p in prims) != len(v):
        doc.fail(f"meshes[{m}]", f"the skinning library read {len(v)} vertices, the renderer "
                                 f"{sum(len(p.positions) for p in prims)}")
    out, off = [], 0
    for p in prims:
        k = len(p.positions)
        out.append(Primitive(v[off:off + k], n[off:off + k], p.uvs, p.faces, p.material, p.colors))
        off += k
    return out


# ------------------------------------------------------------------ direct rendering
DEFAULT_IMAGE_HEIGHT = 400
DEFAULT_FOV = 40.0
# seen from the front (+z), a little right and above; glTF models face +z
DEFAULT_VIEW = np.array([0.45, 0.35, 1.0]) / np.linalg.norm([0.45, 0.35, 1.0])
DEFAULT_LIGHT = [-0.5, -1.0, -0.7]          # direction of travel: from the upper left front


def camera_dict(doc, world, cam, cw):
    """A file camera at ``world`` -> (our camera dict, aspect ratio or None). glTF cameras
    look along their local -z with +y up."""
    eye = world[:3, 3]
    fwd, up = -world[:3, 2], world[:3, 1]
    out = {"center": eye.tolist(), "direction": fwd.tolist(), "up": up.tolist()}
    kind = doc.str_(cam, "type", cw, choices=("perspective", "orthographic"))
    body = doc.dict_(cam, kind, cw)
    if kind == "perspective":
        yfov = doc.num(body, "yfov", f"{cw}.perspective", None)
        if not 0.0 < yfov < math.pi:
            doc.fail(f"{cw}.perspective.yfov", f"must be in (0, pi) radians, got {yfov}")
        out.update(type="perspective", fov=math.degrees(yfov))
        aspect = body.get("aspectRatio")
        if aspect is not None:
            aspect = doc.num(body, "aspectRatio", f"{cw}.perspective", None, 1e-3, 1e3)
    else:
        xmag = doc.num(body, "xmag", f"{cw}.orthographic", None)
        ymag = doc.num(body, "ymag", f"{cw}.orthographic", None)
        if xmag == 0.0 or ymag == 0.0:
            doc.fail(f"{cw}.orthographic", "xmag and ymag must not be zero")
        out.update(type="orthographic", height=2.0 * abs(ymag))
        aspect = abs(xmag / ymag)
    return out, aspect


def light_dict(doc, world, light, lw):
    """A KHR_lights_punctual light -> our light dict (units in docs/gltf.md)."""
    kind = doc.str_(light, "type", lw, choices=("point", "spot", "directional"))
    colour = doc.vec(light, "color", 3, lw, [1.0, 1.0, 1.0], 0.0)
    intensity = doc.num(light, "intensity", lw, 1.0, 0.0)
    if kind == "directional":
        d = -world[:3, 2]
        # irradiance E = intensity (lux as W/m^2): our directional light has irradiance pi * color
        return {"type": "directional", "direction": d.tolist(),
                "color": (colour * intensity / math.pi).tolist()}
    # point and spot: radiant intensity I = intensity (cd as W/sr); ours is
    # pi * color / attenuation W/sr, falling off as 1/d^2 under both integrators
    out = {"type": "point", "position": world[:3, 3].tolist(), "color": (colour * intensity).tolist(),
           "attenuation": math.pi}
    if kind == "spot":
        # the node's -z; the cone's angles in radians, the spec's smooth falloff
        sw = f"{lw}.spot"
        spot = doc.dict_(light, "spot", lw)
        outer = doc.num(spot, "outerConeAngle", sw, math.pi / 4, 0.0, math.pi / 2)
        inner = doc.num(spot, "innerConeAngle", sw, 0.0, 0.0, math.pi / 2)
        if not outer > 0.0:
            doc.fail(f"{sw}.outerConeAngle", f"must be > 0, got {outer!r}")
        if not inner < outer:
            doc.fail(f"{sw}.innerConeAngle", f"must be less than outerConeAngle ({outer:g}), got {inner!r}")
        d = -world[:3, 2]
        if not np.linalg.norm(d) > 1e-12:
            doc.fail(lw, "the node's transform collapses the spot light's -z axis")
        out.update(type="spot", direction=(d / np.linalg.norm(d)).tolist(),
                   inner_cone_angle=math.degrees(inner), outer_cone_angle=math.degrees(outer))
    return out


def direct_scene(path):
    """A scene dict that renders glTF file ``path`` on its own: the file's first camera
    (else one framing the scene), its lights (else a default light and a grey sky), the
    path tracer, and one ``gltf`` object. Paths in it are relative to the file's folder."""
    path = pathlib.Path(path)
    gs = load_gltf(path)
    doc = _Doc(path, {"asset": {}}, None)
    bounds = gs.bounds()
    if bounds is None:
        raise SceneError("scenes", "the scene has no meshes to render", file=path)
    height, aspect = DEFAULT_IMAGE_HEIGHT, 1.0
    if gs.cameras:
        cw, world, cam = gs.cameras[0]
        camera, file_aspect = camera_dict(doc, world, cam, cw)
        aspect = file_aspect or aspect
    else:
        camera = framing_camera(*bounds)
    lights = [light_dict(doc, world, light, lw) for lw, world, light in gs.lights]
    background = {}
    if not lights:
        lights = [{"type": "directional", "direction": DEFAULT_LIGHT, "color": [0.6, 0.6, 0.6]}]
        background = {"color": [0.45, 0.45, 0.45], "ambient": [0.3, 0.3, 0.3]}
    width = int(min(max(round(height * aspect), 1), 16384))
    return {
        "camera": camera,
        "image": {"width": width, "height": height, "spp": 16},
        "integrator": {"type": "path", "max_depth": 8},
        "background": background,
        "lights": lights,
        "objects": [{"type": "gltf", "file": path.name}],
    }


def framing_camera(lo, hi, fov=DEFAULT_FOV):
    """A perspective camera that sees the whole box [lo, hi] (its bounding sphere fits the
    vertical field of view), looking at its centre along -DEFAULT_VIEW."""
    centre = 0.5 * (lo + hi)
    radius = max(0.5 * float(np.linalg.norm(hi - lo)), 1e-6)
    dist = 1.05 * radius / math.sin(math.radians(fov) / 2)
    return {"center": (centre + dist * DEFAULT_VIEW).tolist(), "look_at": centre.tolist(),
            "up": [0.0, 1.0, 0.0], "fov": fov}
