"""Reading triangle meshes from files: OBJ (+ MTL materials), PLY, and STL/OFF via trimesh.

OBJ is read by our own parser (numpy for the numbers, clear ``file: line N: ...`` errors).
Polygons are split into triangle fans. Indices are 1-based; negative indices count back
from the end, as the OBJ format says. ``o`` / ``g`` groups are kept (each face knows its
group) and ``usemtl`` materials come from the ``mtllib`` files, read by :func:`read_mtl`
and mapped onto our Phong material (``docs/scene-format.md`` has the table).

PLY (ASCII and binary) is read with ``plyfile`` (a small, numpy-only, long-maintained
reader that gives every property by name, so normals and texture coordinates come
along); its errors become ``file: line N`` (ASCII) or ``element 'face' row N`` ones.
"""
import pathlib
import re
import warnings

import numpy as np

from userio.limits import check_finite
from userio.reads import note
from userio.textio import read_text

from ..errors import SceneError
from .validate import MAX_MAGNITUDE


# texture coordinates of a face without ``vt``: (u, v) = barycentrics of its 2nd and 3rd corner
_BARY_UV = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])


class Mesh:
    """A triangle mesh: ``vertices`` (n,3) float64, ``faces`` (m,3) int64 and optionally
    per-face-corner ``corner_normals`` (m,3,3) (None unless the file gives them for every
    corner) and texture coordinates ``corner_uvs`` (m,3,2) float64 (None when the file
    has none; faces without them get the barycentrics of their 2nd and 3rd corner). UVs have
    ``v`` flipped (``1 - v``): OBJ and PLY put ``v = 0`` at the bottom of an image, our
    (and Mitsuba's) image lookup at the top.

    Parts (OBJ): ``face_group`` (m,) int64 indexes ``group_names`` (``o`` / ``g``
    names, ``""`` before the first); ``face_material`` (m,) int64 indexes
    ``material_names`` (-1: no ``usemtl`` in effect); ``materials`` maps those names to
    :class:`MtlMaterial` (empty when the MTL files were not read)."""

    def __init__(self, vertices, faces, corner_normals=None, corner_uvs=None):
        self.vertices = vertices
        self.faces = faces
        self.corner_normals = corner_normals
        self.corner_uvs = corner_uvs
        self.face_group = np.zeros(len(faces), np.int64)
        self.group_names = [""]
        self.face_material = np.full(len(faces), -1, np.int64)
        self.material_names = []
        self.materials = {}

    def parts(self):
        """(group name, material name or None, face indices) for every run of faces that
        share group and material, in file order of first appearance."""
        key = self.face_group * (len(self.material_names) + 1) + self.face_material + 1
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        out = []
        for k in np.argsort(first):
            faces = np.flatnonzero(inverse == k)
            g, m = self.face_group[faces[0]], self.face_material[faces[0]]
            out.append((self.group_names[g], self.material_names[m] if m >= 0 else None, faces))
        return out


class MtlMaterial:
    """An MTL material mapped onto ours: ``spec`` (a scene material dict, Phong) and
    ``emission`` (``Ke``, (3,) or None)."""

    def __init__(self, spec, emission):
        self.spec = spec
        self.emission = emission


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


def read_obj(path, materials=True):
    """Read an OBJ file into a :class:`Mesh`. ``materials``: read the ``mtllib`` files
    for the ``usemtl`` names (else faces keep -1). Raises SceneError naming the file and line."""
    path = pathlib.Path(path)
    text = read_text(path, "mesh file", SceneError)
    v_rows, v_no, vn_rows, vn_no, vt_rows, vt_no, f_rows, f_no = [], [], [], [], [], [], [], []
    f_state = []                      # (group, material) in effect at each face line
    groups, mat_names, mtllibs = [""], [], []
    group, mat, first_use = 0, -1, {}
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("v "):
            v_rows.append(line)
            v_no.append(n)
        elif line.startswith("f "):
            f_rows.append(line)
            f_no.append(n)
            f_state.append((group, mat))
        elif line.startswith("vn "):
            vn_rows.append(line)
            vn_no.append(n)
        elif line.startswith("vt "):
            vt_rows.append(line)
            vt_no.append(n)
        elif line.startswith(("o ", "g ")) or line.strip() in ("o", "g"):
            name = line[1:].strip()
            if name not in groups:
                groups.append(name)
            group = groups.index(name)
        elif line.startswith("usemtl"):
            name = line[6:].strip()
            if name not in mat_names:
                mat_names.append(name)
                first_use[name] = n
            mat = mat_names.index(name)
        elif line.startswith("mtllib"):
            mtllibs.append((line[6:].strip(), n))
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

    faces, corner_n, corner_t, states = [], [], [], []
    for line, n, state in zip(f_rows, f_no, f_state):
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
            states.append(state)
    faces = np.asarray(faces, dtype=np.int64)
    cn = None
    if normals is not None:
        idx = np.asarray(corner_n, dtype=np.int64)
        if (idx >= 0).all():
            cn = normals[idx]
    ct = None
    if uvs is not None:
        idx = np.asarray(corner_t, dtype=np.int64)
        have = (idx >= 0).all(axis=1)
        ct = np.broadcast_to(_BARY_UV, (len(idx), 3, 2)).copy()   # faces without vt
        ct[have] = uvs[idx[have]]
        ct[have, :, 1] = 1.0 - ct[have, :, 1]
    mesh = Mesh(verts, faces, cn, ct)
    st = np.asarray(states, np.int64).reshape(-1, 2)
    mesh.face_group, mesh.group_names = st[:, 0].copy(), groups
    mesh.face_material, mesh.material_names = st[:, 1].copy(), mat_names
    if materials and mat_names:
        mesh.materials = _obj_materials(path, mtllibs, mat_names, first_use)
    return mesh


def _obj_materials(path, mtllibs, names, first_use):
    """The MTL materials named by ``usemtl`` lines, from the file's ``mtllib`` files."""
    hint = " (or give the mesh object a 'material' to render it without the MTL file)"
    found = {}
    for rest, n in mtllibs:
        for name in _mtllib_names(path.parent, rest):
            p = path.parent / name
            if not p.is_file():
                raise SceneError(f"line {n}", f"mtllib {name!r}: file not found: {p}{hint}", file=str(path))
            for k, m in read_mtl(p).items():
                found.setdefault(k, m)
    for name in names:
        if name not in found:
            where = "no mtllib line names a material file" if not mtllibs else \
                f"no such material in {', '.join(r for r, _ in mtllibs)}"
            raise SceneError(f"line {first_use[name]}", f"usemtl {name!r}: {where}{hint}", file=str(path))
    return {k: found[k] for k in names}


def _mtllib_names(folder, rest):
    """File names on an ``mtllib`` line: one name with spaces when that file exists,
    else the whitespace-separated names."""
    if (folder / rest).is_file() or len(rest.split()) == 1:
        return [rest]
    return rest.split()


# ------------------------------------------------------------------------------- MTL
_MTL_COLOURS = ("Kd", "Ks", "Ke", "Tf")
# options of a map_* statement and how many numbers each takes (-o, -s, -t take 1 to 3)
_MAP_OPTIONS = {"-blendu": 1, "-blendv": 1, "-bm": 1, "-boost": 1, "-cc": 1, "-clamp": 1,
                "-imfchan": 1, "-mm": 2, "-texres": 1, "-type": 1, "-o": 3, "-s": 3, "-t": 3}
REFRACTION_ILLUM = (4, 6, 7, 9)          # the illumination models that refract
REFLECTION_ILLUM = (3, 4, 5, 6, 7)       # ... that trace a mirror ray weighted by Ks


def read_mtl(path):
    """Read an MTL file -> {name: :class:`MtlMaterial`} (mapping in docs/scene-format.md).
    Statements we have no use for (Ka, map_Bump, ...) are skipped."""
    path = pathlib.Path(path)
    text = read_text(path, "material file", SceneError)
    out, cur, name = {}, None, None

    def finish():
        if cur is not None:
            out[name] = _mtl_material(cur, path)

    for n, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        key = parts[0]
        if key == "newmtl":
            finish()
            name, cur = line.strip()[6:].strip(), {"line": n}
            continue
        if key not in _MTL_COLOURS + ("Ns", "Ni", "d", "Tr", "illum", "map_Kd"):
            continue
        if cur is None:
            raise SceneError(f"line {n}", f"{key!r} before any 'newmtl'", file=str(path))
        if key == "map_Kd":
            cur[key] = (_map_statement(line.strip()[6:].strip(), path, n), n)
        elif key in _MTL_COLOURS:
            cur[key] = (_mtl_numbers(parts, path, n, (1, 3)), n)
        else:
            cur[key] = (_mtl_numbers(parts, path, n, (1,))[0], n)
    finish()
    return out


def _mtl_numbers(parts, path, n, counts):
    """The numbers after a statement's keyword (finite, non-negative), 1 or 3 of them."""
    vals = parts[1:]
    if vals and vals[0] in ("spectral", "xyz"):
        raise SceneError(f"line {n}", f"{parts[0]} {vals[0]} colours are not supported (give r g b)",
                         file=str(path))
    try:
        x = [float(v) for v in vals]
    except ValueError:
        raise SceneError(f"line {n}", f"{parts[0]} needs numbers: {_clip(' '.join(parts))!r}",
                         file=str(path)) from None
    if len(x) not in counts:
        want = " or ".join(map(str, counts))
        raise SceneError(f"line {n}", f"{parts[0]} needs {want} numbers, got {len(x)}", file=str(path))
    if not all(np.isfinite(x)) or min(x) < 0 or max(x) > MAX_MAGNITUDE:
        raise SceneError(f"line {n}", f"{parts[0]} needs numbers >= 0 and <= {MAX_MAGNITUDE:g}: "
                         f"{_clip(' '.join(parts))!r}", file=str(path))
    return x * 3 if counts == (1, 3) and len(x) == 1 else x


def _map_statement(rest, path, n):
    """``map_Kd [options] file`` -> (absolute Path of the file, named relative to the MTL's
    folder, and scale [su, sv])."""
    tokens, scale, k = rest.split(), [1.0, 1.0], 0
    while k < len(tokens) and tokens[k] in _MAP_OPTIONS:
        opt, k = tokens[k], k + 1
        args = []
        while (k < len(tokens) and len(args) < _MAP_OPTIONS[opt]
               and re.fullmatch(r"[-+.\deE]+|on|off|[rgbmlz]", tokens[k])):
            args.append(tokens[k])
            k += 1
        if opt == "-s" and args:
            try:
                s = [float(a) for a in args] + [1.0] * (2 - len(args))
            except ValueError:
                raise SceneError(f"line {n}", f"map_Kd -s needs numbers, got {args}",
                                 file=str(path)) from None
            if not (np.isfinite(s[:2]).all() and min(s[:2]) > 0):
                raise SceneError(f"line {n}", "map_Kd -s scale must be > 0", file=str(path))
            scale = s[:2]
    name = " ".join(tokens[k:])
    if not name:
        raise SceneError(f"line {n}", "map_Kd needs a file name", file=str(path))
    file = path.parent.resolve() / name
    if not file.is_file():
        raise SceneError(f"line {n}", f"map_Kd: texture file not found: {file}", file=str(path))
    return file, scale


def _mtl_material(m, path):
    """Statements of one ``newmtl`` -> :class:`MtlMaterial` (our Phong material)."""
    get = lambda key, default: m[key][0] if key in m else default  # noqa: E731
    kd = np.array(get("Kd", [0.8, 0.8, 0.8] if "map_Kd" not in m else [1.0, 1.0, 1.0]))
    ks = np.array(get("Ks", [0.0, 0.0, 0.0]))
    illum = get("illum", 2 if ks.any() else 1)
    if illum != int(illum) or not 0 <= illum <= 10:
        raise SceneError(f"line {m['illum'][1]}", f"illum must be an integer 0..10, got {illum:g}",
                         file=str(path))
    illum = int(illum)
    opacity = get("d", 1.0 - get("Tr", 0.0))
    if not 0.0 <= opacity <= 1.0:
        key = "d" if "d" in m else "Tr"
        raise SceneError(f"line {m[key][1]}", f"{key} must be in [0, 1], got {get(key, 0):g}", file=str(path))
    if illum < 2:
        ks = np.zeros(3)
    spec = {"type": "phong", "specular": (ks * opacity).tolist(), "shininess": float(get("Ns", 1.0)),
            "reflect": (ks if illum in REFLECTION_ILLUM else np.zeros(3)).tolist()}
    if opacity < 1.0:
        refracts = illum in REFRACTION_ILLUM
        spec["transmit"] = ((1.0 - opacity) * np.array(get("Tf", [1.0, 1.0, 1.0]) if refracts else 1.0)
                            * np.ones(3)).tolist()
        spec["ior"] = float(get("Ni", 1.5)) if refracts else 1.0
        if spec["ior"] <= 0.0:
            raise SceneError(f"line {m['Ni'][1]}", "Ni must be > 0", file=str(path))
    if "map_Kd" in m:
        file, scale = m["map_Kd"][0]
        spec["diffuse"] = {"type": "image", "file": str(file), "scale": scale}
        if not np.allclose(kd * opacity, 1.0):
            spec["diffuse"]["tint"] = (kd * opacity).tolist()
    else:
        spec["diffuse"] = (kd * opacity).tolist()
    ke = np.array(get("Ke", [0.0, 0.0, 0.0]))
    return MtlMaterial(spec, ke if ke.any() else None)


# ------------------------------------------------------------------------------- PLY
_PLY_UV_NAMES = (("s", "t"), ("u", "v"), ("texture_u", "texture_v"), ("texture_s", "texture_t"))
_PLY_SIZES = {"char": 1, "uchar": 1, "int8": 1, "uint8": 1, "i1": 1, "u1": 1, "b1": 1,
              "short": 2, "ushort": 2, "int16": 2, "uint16": 2, "i2": 2, "u2": 2,
              "int": 4, "uint": 4, "int32": 4, "uint32": 4, "float": 4, "float32": 4, "i4": 4, "u4": 4,
              "f4": 4, "double": 8, "float64": 8, "f8": 8}


def _ply_header(path, data):
    """(header lines, binary?) of a PLY file; refuses element counts the file cannot hold
    (before plyfile would allocate them)."""
    end = data.find(b"end_header")
    if not data.startswith(b"ply") or end < 0:
        raise SceneError(None, "not a PLY file (no 'ply' ... 'end_header' header)", file=str(path))
    head = data[:end]
    try:
        lines = head.decode("ascii").splitlines()
    except UnicodeDecodeError as exc:
        line = head.count(b"\n", 0, exc.start) + 1
        raise SceneError(f"line {line}", f"the PLY header must be ASCII (byte 0x{head[exc.start]:02x})",
                         file=str(path)) from None
    binary = any(ln.split()[:1] == ["format"] and "binary" in ln for ln in lines)
    body = len(data) - end - len("end_header") - 1
    need, per_row, elements = 0, 0, []
    for n, ln in enumerate(lines, 1):
        parts = ln.split()
        if parts[:1] == ["element"] and len(parts) == 3 and parts[2].isdigit():
            need += per_row * (elements[-1] if elements else 0)
            elements.append(int(parts[2]))
            per_row = 0
        elif parts[:1] == ["property"] and len(parts) >= 3:
            per_row += _PLY_SIZES.get(parts[2], 1) if binary else 2      # ASCII: a digit and a space
    need += per_row * (elements[-1] if elements else 0)
    if need > body:
        raise SceneError(None, f"truncated file: the header announces at least {need} bytes of data, "
                               f"the file has {body}", file=str(path))
    return lines, binary


def read_ply(path):
    """Read a PLY file (ASCII or binary) into a :class:`Mesh`: ``vertex`` x, y, z and
    optionally nx, ny, nz and texture coordinates (s, t / u, v / texture_u, texture_v;
    ``v`` flipped as for OBJ), ``face`` vertex_indices (or vertex_index) lists split into
    fans. Other elements and properties (colours) are ignored."""
    import plyfile

    path = pathlib.Path(path)
    note(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SceneError(None, "mesh file not found", file=str(path)) from None
    lines, binary = _ply_header(path, data)
    try:
        with warnings.catch_warnings():         # numpy's "input contained no data" and such
            warnings.simplefilter("ignore")
            ply = plyfile.PlyData.read(path)
    except plyfile.PlyHeaderParseError as exc:
        raise SceneError(f"line {exc.line}" if exc.line else None, f"PLY header: {exc.message}",
                         file=str(path)) from None
    except plyfile.PlyElementParseError as exc:
        raise SceneError(_ply_row(lines, exc, binary), f"{exc.message}", file=str(path)) from None
    except Exception as exc:  # plyfile and numpy raise assorted errors on malformed data
        raise SceneError(None, f"cannot read PLY: {exc}", file=str(path)) from None
    names = [e.name for e in ply.elements]
    if "vertex" not in names or "face" not in names:
        raise SceneError(None, "a PLY mesh needs 'vertex' and 'face' elements", file=str(path))
    vx = ply["vertex"].data
    props = vx.dtype.names
    missing = [c for c in "xyz" if c not in props]
    if missing:
        raise SceneError("element 'vertex'", f"needs properties x, y, z (missing: property "
                         f"{', '.join(missing)})", file=str(path))
    kinds = {prop.name: prop for prop in ply["vertex"].properties}
    used = ["x", "y", "z", "nx", "ny", "nz"] + [n for pair in _PLY_UV_NAMES for n in pair]
    for name in used:
        if name in kinds:
            _ply_scalar(kinds[name], "vertex", path)
    verts = np.stack([vx[c].astype(np.float64) for c in "xyz"], axis=1)
    check_finite(verts, "element 'vertex'", file=str(path), error=SceneError, row_name="vertex")
    normals = None
    if all(c in props for c in ("nx", "ny", "nz")):
        normals = np.stack([vx[c].astype(np.float64) for c in ("nx", "ny", "nz")], axis=1)
        check_finite(normals, "element 'vertex' (nx, ny, nz)", file=str(path), error=SceneError,
                     row_name="vertex")
    uvs = None
    for u, v in _PLY_UV_NAMES:
        if u in props and v in props:
            uvs = np.stack([vx[u].astype(np.float64), 1.0 - vx[v].astype(np.float64)], axis=1)
            check_finite(uvs, f"element 'vertex' ({u}, {v})", file=str(path), error=SceneError,
                         row_name="vertex")
            break
    faces = _ply_faces(ply["face"].data, len(verts), path, ply["face"])
    mesh = Mesh(verts, faces, None if normals is None else normals[faces],
                None if uvs is None else uvs[faces])
    return mesh


def _ply_row(lines, exc, binary):
    """Where a plyfile element error is: ``line N`` in an ASCII file, else element and row."""
    if exc.element is None:
        return None
    if binary or exc.row is None:
        return f"element {exc.element.name!r}" + ("" if exc.row is None else f" row {exc.row}")
    line = len(lines) + 1                          # the end_header line
    for ln in lines:
        parts = ln.split()
        if parts[:1] == ["element"] and len(parts) == 3:
            if parts[1] == exc.element.name:
                break
            line += int(parts[2])
    return f"line {line + exc.row + 1}"


def _ply_scalar(prop, element, path):
    """Refuse a vertex property the reader uses (x, y, z, normals, uv) that is a list or
    not a number."""
    import plyfile
    where = f"element '{element}' property '{prop.name}'"
    if isinstance(prop, plyfile.PlyListProperty):
        raise SceneError(where, "must be a single number per vertex, not a list "
                         f"('property {prop.name}', not 'property list ... {prop.name}')", file=str(path))
    if np.dtype(prop.val_dtype).kind not in "iuf":
        raise SceneError(where, f"must be a number, got type {np.dtype(prop.val_dtype)}", file=str(path))


def _ply_faces(fdata, nv, path, element=None):
    """Face lists -> (m,3) int64 fans in file order, indices checked against ``nv``."""
    import plyfile
    key = next((k for k in ("vertex_indices", "vertex_index") if k in fdata.dtype.names), None)
    if key is None:
        raise SceneError("element 'face'", "needs a 'vertex_indices' (or 'vertex_index') list",
                         file=str(path))
    prop = None if element is None else next((q for q in element.properties if q.name == key), None)
    where = f"element 'face' property '{key}'"
    if prop is not None and not isinstance(prop, plyfile.PlyListProperty):
        raise SceneError(where, f"must be a list of vertex indices ('property list uchar int {key}')",
                         file=str(path))
    if prop is not None and np.dtype(prop.val_dtype).kind not in "iu":
        raise SceneError(where, f"vertex indices must be integers, got type {np.dtype(prop.val_dtype)}",
                         file=str(path))
    lists = fdata[key]
    sizes = np.fromiter((len(f) for f in lists), np.int64, len(lists))
    if (sizes < 3).any():
        k = int(np.argmax(sizes < 3))
        raise SceneError(f"element 'face' row {k}", f"a face needs at least 3 vertices, got {int(sizes[k])}",
                         file=str(path))
    first = np.concatenate([[0], np.cumsum(sizes - 2)[:-1]])      # first triangle of each face
    tris = np.empty((int((sizes - 2).sum()), 3), np.int64)
    for size in np.unique(sizes):
        rows = np.flatnonzero(sizes == size)
        poly = np.stack([np.asarray(lists[r], np.int64) for r in rows])
        bad = (poly < 0) | (poly >= nv)
        if bad.any():
            r = rows[np.argmax(bad.any(axis=1))]
            raise SceneError(f"element 'face' row {r}", f"vertex index out of range (there are {nv} "
                             f"vertices): {[int(i) for i in lists[r]]}", file=str(path))
        k = np.arange(1, size - 1)
        fan = np.stack([np.repeat(poly[:, :1], size - 2, axis=1), poly[:, k], poly[:, k + 1]], axis=2)
        tris[(first[rows][:, None] + k - 1).ravel()] = fan.reshape(-1, 3)
    return tris


def read_mesh(path, materials=True):
    """Read OBJ with :func:`read_obj` (``materials``: also its MTL files), PLY with
    :func:`read_ply`, other formats (STL, OFF) with trimesh when it is installed."""
    path = pathlib.Path(path)
    if path.suffix.lower() == ".obj":
        return read_obj(path, materials)
    if path.suffix.lower() == ".ply":
        return read_ply(path)
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
