"""A tiny glTF 2.0 writer for tests and scripts/make_gltf_assets.py: models with known
content, written as .gltf (embedded or external buffer) or .glb.

    g = GltfBuilder()
    pos = g.accessor(np.array(...), "VEC3")            # float32 by default
    g.doc["meshes"] = [{"primitives": [{"attributes": {"POSITION": pos}}]}]
    g.doc["nodes"] = [{"mesh": 0}]
    g.doc["scenes"] = [{"nodes": [0]}]
    g.save(tmp_path / "m.glb")
"""
import base64
import io
import json
import pathlib
import struct

import imageio.v3 as iio
import numpy as np

FLOAT, UBYTE, USHORT, UINT = 5126, 5121, 5123, 5125
_DTYPES = {5120: "i1", 5121: "u1", 5122: "<i2", 5123: "<u2", 5125: "<u4", 5126: "<f4"}


class GltfBuilder:
    """Collects binary data into one buffer; ``doc`` is the glTF JSON being written."""

    def __init__(self):
        self.doc = {"asset": {"version": "2.0", "generator": "raytrace tests"},
                    "buffers": [], "bufferViews": [], "accessors": []}
        self.data = bytearray()

    def view(self, raw, stride=None):
        """A bufferView holding ``raw`` bytes (4-byte aligned) -> its index."""
        self.data += b"\0" * (-len(self.data) % 4)
        bv = {"buffer": 0, "byteOffset": len(self.data), "byteLength": len(raw)}
        if stride:
            bv["byteStride"] = stride
        self.data += raw
        self.doc["bufferViews"].append(bv)
        return len(self.doc["bufferViews"]) - 1

    def accessor(self, values, kind, ctype=FLOAT, normalized=False, minmax=False):
        """An accessor of ``values`` ((count,) or (count, n)) -> its index."""
        arr = np.asarray(values).astype(_DTYPES[ctype])
        acc = {"bufferView": self.view(arr.tobytes()), "componentType": ctype,
               "count": int(arr.shape[0]), "type": kind}
        if normalized:
            acc["normalized"] = True
        if minmax:
            a = arr.reshape(len(arr), -1)
            acc["min"], acc["max"] = a.min(axis=0).tolist(), a.max(axis=0).tolist()
        self.doc["accessors"].append(acc)
        return len(self.doc["accessors"]) - 1

    def png_image(self, rgb8, embed="view"):
        """An image from a uint8 (H, W, 3|4) array: in a bufferView or a data URI."""
        buf = io.BytesIO()
        iio.imwrite(buf, np.asarray(rgb8, np.uint8), extension=".png")
        png = buf.getvalue()
        if embed == "view":
            img = {"bufferView": self.view(png), "mimeType": "image/png"}
        else:
            img = {"uri": "data:image/png;base64," + base64.b64encode(png).decode()}
        self.doc.setdefault("images", []).append(img)
        return len(self.doc["images"]) - 1

    def texture(self, image):
        self.doc.setdefault("textures", []).append({"source": image})
        return len(self.doc["textures"]) - 1

    def save(self, path, external_bin=False):
        """Write ``path``: .glb (BIN chunk), or .gltf with a data-URI buffer (or, with
        ``external_bin``, a ``NAME.bin`` file beside it)."""
        path = pathlib.Path(path)
        doc = json.loads(json.dumps(self.doc))
        data = bytes(self.data) + b"\0" * (-len(self.data) % 4)
        if path.suffix == ".glb":
            doc["buffers"] = [{"byteLength": len(data)}]
            js = json.dumps(doc).encode()
            js += b" " * (-len(js) % 4)
            body = struct.pack("<I4s", len(js), b"JSON") + js + struct.pack("<I4s", len(data), b"BIN\0") + data
            path.write_bytes(struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body)
        elif external_bin:
            (path.parent / (path.stem + ".bin")).write_bytes(data)
            doc["buffers"] = [{"uri": path.stem + ".bin", "byteLength": len(data)}]
            path.write_text(json.dumps(doc, indent=1))
        else:
            doc["buffers"] = [{"uri": "data:application/octet-stream;base64," + base64.b64encode(data).decode(),
                               "byteLength": len(data)}]
            path.write_text(json.dumps(doc, indent=1))
        return path


def quad(builder, size=1.0, uv=True, normal=True):
    """A square [-size, size]^2 in z = 0 facing +z (two triangles, indexed) -> primitive dict."""
    p = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], float) * size
    prim = {"attributes": {"POSITION": builder.accessor(p, "VEC3", minmax=True)},
            "indices": builder.accessor(np.array([0, 1, 2, 0, 2, 3]), "SCALAR", USHORT)}
    if normal:
        prim["attributes"]["NORMAL"] = builder.accessor(np.tile([0.0, 0.0, 1.0], (4, 1)), "VEC3")
    if uv:
        prim["attributes"]["TEXCOORD_0"] = builder.accessor(
            np.array([[0, 1], [1, 1], [1, 0], [0, 0]], float), "VEC2")
    return prim


def box(builder, half=1.0):
    """An axis-aligned cube [-half, half]^3, 24 vertices with outward normals -> primitive dict."""
    verts, normals, idx = [], [], []
    for axis in range(3):
        for sign in (1.0, -1.0):
            n = np.zeros(3)
            n[axis] = sign
            u, v = np.roll(np.eye(3), 2, axis=0)[axis], np.roll(np.eye(3), 1, axis=0)[axis]   # u x v = n
            if sign < 0:
                u = -u
            base = len(verts)
            for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                verts.append((n + a * u + b * v) * half)
                normals.append(n)
            idx += [base, base + 1, base + 2, base, base + 2, base + 3]
    return {"attributes": {"POSITION": builder.accessor(np.array(verts), "VEC3", minmax=True),
                           "NORMAL": builder.accessor(np.array(normals), "VEC3")},
            "indices": builder.accessor(np.array(idx), "SCALAR", USHORT)}
