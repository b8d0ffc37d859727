"""Checked reading of glTF 2.0 containers, buffer views, accessors and animation samplers,
shared by every glTF reader of the project (the renderer's and the skinning library's).

The readers keep their own JSON handling and error classes; they hand this module plain
values (dicts of the file's JSON) and a ``fail(where, message)`` callback that raises
their error (one line naming the file, the JSON path ``where`` and what is wrong).
What the glTF 2.0 specification states is checked here:

- GLB container (:func:`split_glb`): magic ``glTF``, version 2, total length equal to the
  file's size, chunk lengths inside the file, the JSON chunk first, the BIN chunk (if
  any) second;
- buffer views (:func:`view_bytes`): ``buffer`` exists, ``byteOffset + byteLength`` within
  the buffer's ``byteLength``, ``byteStride`` (when present) in 4..252 and a multiple of 4;
- accessors (:func:`read_accessor`): ``componentType`` and ``type`` known, ``count >= 1``,
  ``normalized`` only on 8- and 16-bit integers, ``byteOffset`` (alone and plus the
  view's) a multiple of the component size, ``byteStride`` at least one element and a
  multiple of the component size, ``byteOffset + stride * (count - 1) + element size``
  within the view; sparse accessors (indices of an unsigned type, strictly increasing and
  below ``count``; both views checked the same way, without ``byteStride``); the
  component type and type allowed for the way the accessor is used (``usage``: an
  attribute semantic, ``indices``, ``inverseBindMatrices``, an animation ``input`` or a
  ``translation`` / ``rotation`` / ``scale`` output);
- animation samplers (:func:`check_sampler`): finite key times, the first >= 0, strictly
  increasing; one output per key (three with CUBICSPLINE); finite outputs; rotation keys
  that are quaternions of non-zero length.
Messages name the accessor (``accessors[3]: byteStride 4 of bufferViews[1] is smaller
than one VEC3 of FLOAT (12 bytes)``), the buffer view or the sampler and key.
"""
import struct
from dataclasses import dataclass

import numpy as np

FLOAT, UNSIGNED_BYTE, UNSIGNED_SHORT, UNSIGNED_INT = 5126, 5121, 5123, 5125
BYTE, SHORT = 5120, 5122
COMPONENT_DTYPES = {BYTE: "i1", UNSIGNED_BYTE: "u1", SHORT: "<i2", UNSIGNED_SHORT: "<u2",
                    UNSIGNED_INT: "<u4", FLOAT: "<f4"}
COMPONENT_NAMES = {BYTE: "BYTE", UNSIGNED_BYTE: "UNSIGNED_BYTE", SHORT: "SHORT",
                   UNSIGNED_SHORT: "UNSIGNED_SHORT", UNSIGNED_INT: "UNSIGNED_INT", FLOAT: "FLOAT"}
NUM_COMPONENTS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
INDEX_TYPES = (UNSIGNED_BYTE, UNSIGNED_SHORT, UNSIGNED_INT)
MAX_INDEX = 2 ** 53

# usage -> (allowed types, allowed (componentType, normalized) pairs). Vertex attributes
# include the KHR_mesh_quantization types; custom (``_NAME``) attributes are not checked.
_NORM_INTS = [(c, True) for c in (BYTE, UNSIGNED_BYTE, SHORT, UNSIGNED_SHORT)]
_ANY_INTS = _NORM_INTS + [(c, False) for c in (BYTE, UNSIGNED_BYTE, SHORT, UNSIGNED_SHORT)]
_F = [(FLOAT, False)]
USAGES = {
    "POSITION": (("VEC3",), _F + _ANY_INTS),
    "NORMAL": (("VEC3",), _F + [(BYTE, True), (SHORT, True)]),
    "TANGENT": (("VEC4",), _F + [(BYTE, True), (SHORT, True)]),
    "TEXCOORD": (("VEC2",), _F + _ANY_INTS),
    "COLOR": (("VEC3", "VEC4"), _F + [(UNSIGNED_BYTE, True), (UNSIGNED_SHORT, True)]),
    "JOINTS": (("VEC4",), [(UNSIGNED_BYTE, False), (UNSIGNED_SHORT, False)]),
    "WEIGHTS": (("VEC4",), _F + [(UNSIGNED_BYTE, True), (UNSIGNED_SHORT, True)]),
    "indices": (("SCALAR",), [(c, False) for c in INDEX_TYPES]),
    "inverseBindMatrices": (("MAT4",), _F),
    "input": (("SCALAR",), _F),
    "translation": (("VEC3",), _F + _ANY_INTS),
    "rotation": (("VEC4",), _F + _NORM_INTS),
    "scale": (("VEC3",), _F + _ANY_INTS),
}


def _usage_rule(usage):
    if usage is None:
        return None
    if usage in USAGES:
        return USAGES[usage]
    base = usage.rsplit("_", 1)[0] if usage[-1:].isdigit() else usage
    return USAGES.get(base)


def _short(value, limit=40):
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _int(obj, key, where, fail, default=None, lo=0, hi=2 ** 53):
    """``obj[key]`` as an int in [lo, hi] (``default`` when absent; absent without a
    default: an error)."""
    value = obj.get(key)
    if value is None:
        if default is None:
            fail(where, f"missing required key {key!r}")
        return default
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
        rng = f">= {lo}" if hi == 2 ** 53 else f"in [{lo}, {hi}]"
        fail(f"{where}.{key}", f"must be an integer {rng}, got {_short(value)}")
    return int(value)


# ------------------------------------------------------------------------------ GLB
def split_glb(data, fail):
    """(JSON chunk bytes, BIN chunk bytes or None) of a GLB file's bytes, checked (see the
    module docstring); errors are ``fail("GLB header" or "GLB chunk N", message)``."""
    size = len(data)
    if size < 12:
        fail("GLB header", f"truncated GLB file ({size} bytes; the header needs 12)")
    magic, version, length = struct.unpack_from("<4sII", data)
    if magic != b"glTF":
        fail("GLB header", f"magic is {magic!r}, expected b'glTF' (not a binary glTF file)")
    if version != 2:
        fail("GLB header", f"version {version}; only glTF 2.0 (version 2) is supported")
    if length > size:
        fail("GLB header", f"truncated file: the header says {length} bytes, the file has {size}")
    if length < size:
        fail("GLB header", f"the header says {length} bytes, the file has {size} (junk after the end)")
    chunks, offset = [], 12
    while offset < length:
        n = len(chunks)
        if offset + 8 > length:
            fail(f"GLB chunk {n}", f"truncated chunk header ({length - offset} bytes left, 8 needed)")
        clen, ctype = struct.unpack_from("<I4s", data, offset)
        if offset + 8 + clen > length:
            fail(f"GLB chunk {n}", f"chunk length {clen} runs past the end of the file "
                                   f"({length - offset - 8} bytes left)")
        if n == 0 and ctype != b"JSON":
            fail("GLB chunk 0", f"chunk type is {ctype!r}, expected b'JSON' (the JSON chunk comes first)")
        if n >= 1 and ctype in (b"JSON", b"BIN\0") and not (n == 1 and ctype == b"BIN\0"):
            fail(f"GLB chunk {n}", f"chunk type {ctype!r} out of place (one JSON chunk first, "
                                   "at most one BIN chunk second)")
        chunks.append((ctype, data[offset + 8:offset + 8 + clen]))
        end = offset + 8 + clen
        offset = end + (-clen % 4 if end < length else 0)
    if not chunks:
        fail("GLB chunk 0", "missing: the file has no JSON chunk")
    blob = chunks[1][1] if len(chunks) > 1 and chunks[1][0] == b"BIN\0" else None
    return chunks[0][1], blob


# ------------------------------------------------------------------------ buffer views
def view_bytes(views, k, buffer, fail, where, reader=""):
    """(memoryview of ``bufferViews[k]``, its byteStride or 0). ``views``: the file's
    bufferViews (dicts); ``buffer(b, where)``: the bytes of ``buffers[b]`` cut to its
    byteLength (the reader checks the buffer itself); ``where``: the reference to the
    view (e.g. ``accessors[3].bufferView``); ``reader``: who reads it, for messages
    (e.g. ``accessors[3]``)."""
    if not isinstance(views, list):
        fail("bufferViews", "must be an array")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < len(views):
        fail(where, f"refers to bufferViews[{_short(k)}], but the file has {len(views)}")
    bv = views[k]
    bw = f"bufferViews[{k}]"
    if not isinstance(bv, dict):
        fail(bw, "must be an object")
    by = f" (read by {reader})" if reader else ""
    b = _int(bv, "buffer", bw, fail)
    data = buffer(b, f"{bw}.buffer")
    start = _int(bv, "byteOffset", bw, fail, 0)
    length = _int(bv, "byteLength", bw, fail, lo=1)
    if start + length > len(data):
        fail(bw, f"bytes {start}..{start + length} (byteOffset + byteLength) run past the end of "
                 f"buffers[{b}] ({len(data)} bytes){by}")
    stride = _int(bv, "byteStride", bw, fail, 0, lo=4, hi=252)
    if stride % 4:
        fail(f"{bw}.byteStride", f"{stride} is not a multiple of 4{by}")
    return memoryview(data)[start:start + length], stride


# --------------------------------------------------------------------------- accessors
@dataclass
class Accessor:
    """A read accessor: ``data`` (count, ncomp) array of the component type (little
    endian, native copy), ``component_type``, ``type``, ``normalized``."""
    data: np.ndarray
    component_type: int
    type: str
    normalized: bool


def describe(ctype, kind):
    return f"{kind} of {COMPONENT_NAMES.get(ctype, ctype)}"


def _strided(views, k, buffer, fail, aw, field, offset, count, dtype, ncomp, kind, ctype,
             strided=True):
    """(count, ncomp) array of ``dtype`` read from bufferViews[k] at ``offset``."""
    view, stride = view_bytes(views, k, buffer, fail, f"{field}.bufferView", aw)
    item = dtype.itemsize
    elem = item * ncomp
    if stride and not strided:
        fail(field, f"bufferViews[{k}] has a byteStride ({stride}), which sparse and index data "
                    "must not have")
    if offset % item:
        fail(f"{field}.byteOffset", f"{offset} is not a multiple of the component size {item} "
                                    f"({COMPONENT_NAMES[ctype]})")
    base = _int(views[k], "byteOffset", f"bufferViews[{k}]", fail, 0)
    if (base + offset) % item:
        fail(field, f"starts at byte {base + offset} of its buffer (bufferViews[{k}].byteOffset "
                    f"{base} + byteOffset {offset}), not a multiple of the component size {item}")
    if stride:
        if stride < elem:
            fail(field, f"byteStride {stride} of bufferViews[{k}] is smaller than one "
                        f"{describe(ctype, kind)} ({elem} bytes)")
        if stride % item:
            fail(field, f"byteStride {stride} of bufferViews[{k}] is not a multiple of the component "
                        f"size {item} ({COMPONENT_NAMES[ctype]})")
    step = stride or elem
    need = offset + step * (count - 1) + elem
    if need > len(view):
        fail(field, f"needs bytes up to {need} of bufferViews[{k}], which has {len(view)} (byteOffset "
                    f"{offset} + {count - 1} x stride {step} + one element of {elem}: accessor out of range)")
    arr = np.ndarray((count, ncomp), dtype=dtype, buffer=view, offset=offset, strides=(step, item))
    return arr.astype(dtype.newbyteorder("="), copy=True)


def read_accessor(acc, i, views, buffer, fail, usage=None, memory=None):
    """Accessor ``accessors[i]`` (the dict ``acc``) -> :class:`Accessor`, every field
    checked against the glTF 2.0 specification (module docstring). ``views``,
    ``buffer``: as for :func:`view_bytes`; ``usage``: what the accessor is used as
    (``"POSITION"``, ``"TEXCOORD_0"``, ``"indices"``, ``"input"``, ``"rotation"``...;
    None: any); ``memory(count, ncomp)``: called before the data is allocated (a memory
    check of the reader)."""
    aw = f"accessors[{i}]"
    if not isinstance(acc, dict):
        fail(aw, "must be an object")
    ctype = acc.get("componentType")
    if ctype is None:
        fail(aw, "missing required key 'componentType'")
    if isinstance(ctype, bool) or ctype not in COMPONENT_DTYPES:
        fail(f"{aw}.componentType", f"unknown component type {_short(ctype)} (one of "
                                    f"{', '.join(f'{c} {n}' for c, n in COMPONENT_NAMES.items())})")
    kind = acc.get("type")
    if kind is None:
        fail(aw, "missing required key 'type'")
    if not isinstance(kind, str) or kind not in NUM_COMPONENTS:
        fail(f"{aw}.type", f"unknown type {_short(kind)} (one of {', '.join(NUM_COMPONENTS)})")
    count = _int(acc, "count", aw, fail, lo=1)
    normalized = acc.get("normalized", False)
    if not isinstance(normalized, bool):
        fail(f"{aw}.normalized", f"must be true or false, got {_short(normalized)}")
    if normalized and ctype in (FLOAT, UNSIGNED_INT):
        fail(f"{aw}.normalized", f"must not be true for {COMPONENT_NAMES[ctype]} components")
    dtype, ncomp = np.dtype(COMPONENT_DTYPES[ctype]), NUM_COMPONENTS[kind]
    if kind in ("MAT2", "MAT3") and dtype.itemsize < 4:
        fail(aw, f"{kind} of 1- or 2-byte components (padded columns) is not supported")
    rule = _usage_rule(usage)
    if rule is not None:
        kinds, pairs = rule
        if kind not in kinds:
            fail(f"{aw}.type", f"{kind} cannot be used as {usage} (expected {' or '.join(kinds)})")
        if (ctype, normalized) not in pairs:
            allowed = ", ".join(COMPONENT_NAMES[c] + (" normalized" if n else "") for c, n in pairs)
            what = COMPONENT_NAMES[ctype] + (" normalized" if normalized else "")
            fail(f"{aw}.componentType", f"{what} cannot be used as {usage} (allowed: {allowed})")
    if memory is not None:
        memory(count, ncomp)
    if acc.get("bufferView") is not None:
        offset = _int(acc, "byteOffset", aw, fail, 0)
        arr = _strided(views, acc["bufferView"], buffer, fail, aw, aw, offset, count, dtype, ncomp,
                       kind, ctype, strided=usage != "indices")
    else:
        if acc.get("byteOffset") not in (None, 0):
            fail(f"{aw}.byteOffset", "must not be given without a bufferView")
        arr = np.zeros((count, ncomp), dtype.newbyteorder("="))
    if acc.get("sparse") is not None:
        arr = _sparse(acc["sparse"], aw, arr, views, buffer, fail, dtype, ncomp, kind, ctype)
    return Accessor(arr, ctype, kind, normalized)


def _sparse(sp, aw, arr, views, buffer, fail, dtype, ncomp, kind, ctype):
    sw = f"{aw}.sparse"
    if not isinstance(sp, dict):
        fail(sw, "must be an object")
    n = _int(sp, "count", sw, fail, lo=1)
    if n > len(arr):
        fail(f"{sw}.count", f"{n} is more than the accessor's count {len(arr)}")
    ind, val = sp.get("indices"), sp.get("values")
    if not isinstance(ind, dict) or not isinstance(val, dict):
        fail(sw, "needs 'indices' and 'values' objects")
    iw, vw = f"{sw}.indices", f"{sw}.values"
    itype = ind.get("componentType")
    if isinstance(itype, bool) or itype not in INDEX_TYPES:
        fail(f"{iw}.componentType", f"must be UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT "
                                    f"(5121, 5123, 5125), got {_short(itype)}")
    if ind.get("bufferView") is None:
        fail(iw, "missing required key 'bufferView'")
    if val.get("bufferView") is None:
        fail(vw, "missing required key 'bufferView'")
    idx = _strided(views, ind["bufferView"], buffer, fail, aw, iw, _int(ind, "byteOffset", iw, fail, 0),
                   n, np.dtype(COMPONENT_DTYPES[itype]), 1, "SCALAR", itype, strided=False)[:, 0]
    idx = idx.astype(np.int64)
    steps = np.diff(idx)
    if (steps <= 0).any():
        k = int(np.argmax(steps <= 0)) + 1
        fail(iw, f"index {k} ({int(idx[k])}) is not greater than index {k - 1} ({int(idx[k - 1])}): "
                 "sparse indices must strictly increase")
    if idx[-1] >= len(arr):
        fail(iw, f"index {n - 1} is {int(idx[-1])}, out of range (the accessor's count is {len(arr)})")
    vals = _strided(views, val["bufferView"], buffer, fail, aw, vw, _int(val, "byteOffset", vw, fail, 0),
                    n, dtype, ncomp, kind, ctype, strided=False)
    arr = arr.copy()
    arr[idx] = vals
    return arr


def check_indices(indices, vertex_count, fail, where, accessor):
    """Vertex ``indices`` (int array) all below ``vertex_count`` (the POSITION count)."""
    if indices.size and (indices.min() < 0 or indices.max() >= vertex_count):
        bad = int(np.argmax((indices < 0) | (indices >= vertex_count)))
        fail(where, f"vertex index {int(indices.ravel()[bad])} out of range (index {bad} of {accessor}; "
                    f"POSITION has {vertex_count} vertices)")


# ------------------------------------------------------------------------- animations
def check_sampler(times, values, path, interpolation, fail, sw, input_acc, output_acc):
    """Check one animation sampler ``sw`` (``animations[a].samplers[s]``): ``times`` (K,)
    float64 key times of accessor ``input_acc`` (a name for messages, ``accessors[4]``),
    ``values`` (N, C) float64 outputs of ``output_acc`` for target ``path``
    (``translation``, ``rotation`` (x, y, z, w), ``scale``; others: shape only)."""
    times = np.asarray(times, np.float64).ravel()
    k = times.shape[0]
    bad = ~np.isfinite(times)
    if bad.any():
        j = int(np.argmax(bad))
        fail(f"{sw}.input", f"key time {j} is {times[j]} ({input_acc}): key times must be finite")
    if k and times[0] < 0.0:
        fail(f"{sw}.input", f"key time 0 is {times[0]:g} ({input_acc}): key times must not be negative")
    steps = np.diff(times)
    if (steps <= 0).any():
        j = int(np.argmax(steps <= 0)) + 1
        fail(f"{sw}.input", f"key time {j} ({times[j]:g}) is not after key time {j - 1} "
                            f"({times[j - 1]:g}) ({input_acc}): key times must strictly increase")
    size = {"translation": 3, "rotation": 4, "scale": 3}.get(path)
    cubic = interpolation == "CUBICSPLINE"
    want = 3 * k if cubic else k
    values = np.asarray(values, np.float64)
    if values.shape[0] != want or (size is not None and values.shape[1] != size):
        comps = f" of {size} components" if size else ""
        fail(f"{sw}.output", f"{output_acc} holds {values.shape[0]} values of {values.shape[1]} components; "
                             f"{k} key times ({interpolation}) need {want}{comps}")
    bad = ~np.isfinite(values).all(axis=1)
    if bad.any():
        j = int(np.argmax(bad))
        fail(f"{sw}.output", f"value {j} ({output_acc}) is not finite: "
                             f"{', '.join(f'{x:g}' for x in values[j])}")
    if path == "rotation":
        keys = values.reshape(k, 3, 4)[:, 1] if cubic else values
        scale = np.max(np.abs(keys), axis=1)
        with np.errstate(all="ignore"):
            norm = scale * np.linalg.norm(keys / np.where(scale == 0, 1.0, scale)[:, None], axis=1)
        bad = ~(norm > 1e-6) | ~np.isfinite(norm)
        if bad.any():
            j = int(np.argmax(bad))
            fail(f"{sw}.output", f"rotation key {j} ({output_acc}) is "
                                 f"[{', '.join(f'{x:g}' for x in keys[j])}], not a unit quaternion "
                                 "(its length is zero)")
    return times, values

