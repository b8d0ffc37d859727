"""Import the MIT 6.837 / 6.4400 ray-tracing scene files (``a4/*.txt``) as our JSON scenes.

The course format is a tree of brace blocks::

    Camera { center 0 0 10  direction 0 0 -1  up 0 1 0  fov 30 }
    Background { color 0 0 0  ambient_light 0.1 0.1 0.1  cube_map tex/church }
    Materials { Material { diffuse 1 0 0  specular 1 1 1  shininess 20 } ... }
    Scene { Node { Transform { translate 0 5 5 }
                   Component<Material> { index 0 }
                   Component<Object> { type sphere  radius 1 }
                   Component<Light> { type point  color .9 .9 .9  attenuation 0.025 }
                   Node { ... } } ... }

Reading rules (see ``docs/scene-format.md`` for the target format):

- Braces may share a line with content; a keyword's values are the tokens that follow it
  on the same line, up to a brace or the next keyword of the same block, so
  ``Material { diffuse 0 1 0 specular 1 1 1 }`` works. Keywords are case-sensitive.
- Materials are named ``material0``, ``material1``, ... in file order; missing keys are
  left out (our defaults apply).
- ``Transform`` lines map one to one, in file order, to our steps ``translate``,
  ``rotate_x``/``rotate_y``/``rotate_z`` (degrees) and ``scale``. Both formats compose
  left to right (``M = M * step``), so the last line acts on the points first. A second
  ``Transform`` block in one node replaces the first (the course's rule).
- A node with an object and no child objects becomes that object, carrying the node's
  transform and material. A node with child objects becomes a ``group`` (``transform``,
  ``material``, ``children``) whose first child is the node's own object, if any, without
  a transform of its own. Nodes that hold no object anywhere below produce no object.
- Lights go to the top-level ``lights`` list in world space: the node's world matrix is
  ``parent_world @ local`` (4x4, column vectors). A point light sits at the node origin,
  ``position = (W @ [0, 0, 0, 1])[:3]``. A directional light's ``direction`` is mapped by
  the linear part, ``W[:3, :3] @ d``, and renormalised to unit length; without any
  transform above it (``W`` is the identity) the direction is kept exactly as written.
- Numbers stay exact: integer literals become ``int``, others ``float``.

Errors are :class:`raytrace.errors.SceneError` naming the file and the line, e.g.
``scene.txt: line 12: Material: 'diffuse' expects 3 numbers, got 2``.

Command line: ``python -m raytrace.scene.course SCENE.txt OUT.json``.
"""
import json
import math
import os
import pathlib
import re
import sys

import numpy as np

from userio.outputs import write_bytes_atomic
from userio.textio import read_text

from raytrace.errors import SceneError
from raytrace.scene.transforms import compose, to_numpy

__all__ = ["parse_course_scene", "convert_file", "main"]

# Keyword -> how its values read: an int n = n numbers, "int" = one integer, "word" = one
# token (a name or a path). These are the leaf blocks (no sub-blocks inside).
_LEAF_KEYS = {
    "Camera": {"center": 3, "direction": 3, "up": 3, "fov": 1},
    "Background": {"color": 3, "ambient_light": 3, "cube_map": "word"},
    "Material": {"diffuse": 3, "specular": 3, "shininess": 1},
    "Transform": {"translate": 3, "x_rotate": 1, "y_rotate": 1, "z_rotate": 1, "scale": 3},
    "Component<Material>": {"index": "int"},
    "Component<Object>": {"type": "word", "radius": 1, "normal": 3, "offset": 1,
                          "vertex0": 3, "vertex1": 3, "vertex2": 3, "obj_file": "word"},
    "Component<Light>": {"type": "word", "color": 3, "attenuation": 1, "direction": 3},
}
# Container blocks and the blocks allowed inside them ("" is the file's top level).
_CONTAINERS = {
    "": ("Camera", "Background", "Materials", "Scene"),
    "Materials": ("Material",),
    "Scene": ("Node",),
    "Node": ("Transform", "Component<Material>", "Component<Object>", "Component<Light>",
             "Node"),
}
# Per object / light type: required keys and optional keys (besides "type").
_OBJECT_TYPES = {
    "sphere": ((), ("radius",)),
    "plane": (("normal", "offset"), ()),
    "triangle": (("vertex0", "vertex1", "vertex2"), ()),
    "mesh": (("obj_file",), ()),
}
_LIGHT_TYPES = {
    "point": (("color",), ("attenuation",)),
    "directional": (("direction", "color"), ()),
}
_TRANSFORM_STEPS = {"translate": "translate", "x_rotate": "rotate_x", "y_rotate": "rotate_y",
                    "z_rotate": "rotate_z", "scale": "scale"}

_INT_RE = re.compile(r"[+-]?\d+\Z")
_FLOAT_RE = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
_TOKEN_RE = re.compile(r"[{}]|[^\s{}]+")


# Nodes inside Nodes: deeper trees would exhaust Python's recursion here and in the JSON
# scene they become (which allows 64 nested groups).
MAX_NODE_NESTING = 64


class _Block:
    """A parsed ``Name { ... }`` block: ``entries`` holds ``_Entry`` or child ``_Block``."""

    def __init__(self, name, line):
        self.name = name
        self.line = line
        self.entries = []


class _Entry:
    """One ``keyword values...`` line inside a leaf block."""

    def __init__(self, key, value, line):
        self.key = key
        self.value = value
        self.line = line


class _Reader:
    """Recursive-descent reader over the file's tokens ``(text, line)``."""

    def __init__(self, text, file):
        self.file = file
        self.tokens = [(m.group(), n)
                       for n, line in enumerate(text.splitlines(), start=1)
                       for m in _TOKEN_RE.finditer(line)]
        self.pos = 0

    def error(self, line, message):
        return SceneError(f"line {line}" if line else None, message, file=self.file)

    def peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else (None, None)

    def read_file(self):
        """The top level: a list of blocks."""
        top = _Block("", 0)
        while self.pos < len(self.tokens):
            tok, line = self.tokens[self.pos]
            if tok == "}":
                raise self.error(line, "unmatched '}'")
            top.entries.append(self._read_sub_block("", 0))
        return top

    def _read_sub_block(self, parent, depth):
        """Read ``Name {`` ... ``}`` at the current token, inside container ``parent``,
        itself ``depth`` blocks deep."""
        name, line = self.tokens[self.pos]
        if depth > MAX_NODE_NESTING + 1:         # Scene, the Nodes, a component
            raise self.error(line, f"Nodes nested more than {MAX_NODE_NESTING} deep")
        where = f" in {parent}" if parent else ""
        if name == "{":
            raise self.error(line, f"unexpected '{{'{where}: expected a block name")
        if name not in _CONTAINERS[parent]:
            allowed = ", ".join(_CONTAINERS[parent])
            raise self.error(line, f"unknown block '{name}'{where} (expected one of: {allowed})")
        self.pos += 1
        if self.peek()[0] != "{":
            raise self.error(line, f"expected '{{' after '{name}'")
        self.pos += 1
        block = _Block(name, line)
        while True:
            tok = self.peek()[0]
            if tok is None:
                raise self.error(line, f"'{name}' block opened here is never closed "
                                       "(missing '}')")
            if tok == "}":
                self.pos += 1
                return block
            if name in _CONTAINERS:
                block.entries.append(self._read_sub_block(name, depth + 1))
            else:
                block.entries.append(self._read_entry(name))

    def _read_entry(self, block):
        """Read ``keyword values...`` inside leaf block ``block``."""
        keys = _LEAF_KEYS[block]
        key, line = self.tokens[self.pos]
        if key == "{":
            raise self.error(line, f"unexpected '{{' in {block}")
        if key not in keys:
            raise self.error(line, f"unknown keyword '{key}' in {block} "
                                   f"(expected one of: {', '.join(keys)})")
        self.pos += 1
        values = []
        while True:
            tok, tline = self.peek()
            if tok is None or tline != line or tok in ("{", "}") or tok in keys:
                break
            values.append(tok)
            self.pos += 1
        return _Entry(key, self._convert(block, key, keys[key], values, line), line)

    def _convert(self, block, key, kind, values, line):
        """Check the count and type of a keyword's values; return a scalar or a list."""
        want = 1 if isinstance(kind, str) else kind
        if len(values) != want:
            what = {"word": "value", "int": "integer"}.get(kind, "number")
            raise self.error(line, f"{block}: '{key}' expects {want} {what}"
                                   f"{'s' if want != 1 else ''}, got {len(values)}")
        if kind == "word":
            return values[0]
        if kind == "int":
            if not _INT_RE.match(values[0]):
                raise self.error(line, f"{block}: '{key}' expects an integer, "
                                       f"got '{values[0]}'")
            return int(values[0])
        numbers = []
        for v in values:
            if _INT_RE.match(v):
                numbers.append(int(v))
            elif _FLOAT_RE.match(v) and math.isfinite(float(v)):
                numbers.append(float(v))
            else:
                raise self.error(line, f"{block}: '{key}' expects numbers, got '{v}'")
        return numbers[0] if want == 1 else numbers


class _Converter:
    """Turns the parsed block tree into our JSON scene dict."""

    def __init__(self, reader):
        self.reader = reader
        self.lights = []
        self.material_refs = []  # (index, line) to check once all materials are known

    def error(self, line, message):
        return self.reader.error(line, message)

    def fields(self, block):
        """Leaf block entries as ``{key: (value, line)}``; a repeated keyword is an error."""
        out = {}
        for e in block.entries:
            if e.key in out:
                raise self.error(e.line, f"{block.name}: '{e.key}' given twice "
                                         f"(first on line {out[e.key][1]})")
            out[e.key] = (e.value, e.line)
        return out

    def convert(self, top):
        seen = {}
        for b in top.entries:
            if b.name in seen:
                raise self.error(b.line, f"second '{b.name}' block "
                                         f"(the first is on line {seen[b.name]})")
            seen[b.name] = b.line
        blocks = {b.name: b for b in top.entries}
        if "Camera" not in blocks:
            raise self.error(None, "no Camera block")
        scene = {"camera": self.camera(blocks["Camera"])}
        if "Background" in blocks:
            scene["background"] = self.background(blocks["Background"])
        materials = self.materials(blocks.get("Materials"))
        scene["materials"] = materials
        objects = []
        if "Scene" in blocks:
            for node in blocks["Scene"].entries:
                obj = self.node(node, np.eye(4))
                if obj is not None:
                    objects.append(obj)
        for index, line in self.material_refs:
            if not 0 <= index < len(materials):
                defined = (f"0..{len(materials) - 1}" if materials else "none defined")
                raise self.error(line, f"material index {index} out of range "
                                       f"(materials: {defined})")
        scene["lights"] = self.lights
        scene["objects"] = objects
        return scene

    def camera(self, block):
        f = self.fields(block)
        for key in ("center", "direction"):
            if key not in f:
                raise self.error(block.line, f"Camera: missing '{key}'")
        cam = {"type": "perspective"}
        for key in ("center", "direction", "up", "fov"):
            if key in f:
                cam[key] = f[key][0]
        return cam

    def background(self, block):
        f = self.fields(block)
        names = {"color": "color", "ambient_light": "ambient", "cube_map": "cube_map"}
        return {ours: f[key][0] for key, ours in names.items() if key in f}

    def materials(self, block):
        out = {}
        for i, mat in enumerate(block.entries if block is not None else ()):
            f = self.fields(mat)
            out[f"material{i}"] = {k: f[k][0] for k in ("diffuse", "specular", "shininess")
                                   if k in f}
        return out

    def typed(self, block, types, what):
        """Fields of a Component<Object>/<Light>, checked against its ``type``."""
        f = self.fields(block)
        if "type" not in f:
            raise self.error(block.line, f"{block.name} has no 'type'")
        kind, line = f["type"]
        if kind not in types:
            raise self.error(line, f"unknown {what} type '{kind}' "
                                   f"(expected one of: {', '.join(types)})")
        required, optional = types[kind]
        for key, (_, kline) in f.items():
            if key != "type" and key not in required and key not in optional:
                raise self.error(kline, f"'{key}' does not apply to a {kind} {what}")
        for key in required:
            if key not in f:
                raise self.error(block.line, f"{kind} {what} needs '{key}'")
        return kind, {k: v for k, (v, _) in f.items()}

    def node(self, node, parent_world):
        """Convert one Node (recursively); collect its lights; return an object or None."""
        transform, material, obj, light, children = None, None, None, None, []
        seen = {}
        for b in node.entries:
            if b.name == "Transform":
                transform = [{_TRANSFORM_STEPS[e.key]: e.value} for e in b.entries]
                continue
            if b.name == "Node":
                children.append(b)
                continue
            if b.name in seen:
                raise self.error(b.line, f"second {b.name} in one Node "
                                         f"(the first is on line {seen[b.name]})")
            seen[b.name] = b.line
            if b.name == "Component<Material>":
                f = self.fields(b)
                if "index" not in f:
                    raise self.error(b.line, "Component<Material> needs 'index'")
                index, line = f["index"]
                self.material_refs.append((index, line))
                material = f"material{index}"
            elif b.name == "Component<Object>":
                obj = self.object(b)
            else:
                light = b
        world = parent_world @ to_numpy(compose(transform or (), "Transform"))
        if light is not None:
            self.lights.append(self.light(light, world))
        kids = [o for o in (self.node(c, world) for c in children) if o is not None]
        if obj is None and not kids:
            return None
        if kids:
            if obj is not None:
                kids.insert(0, obj)
            out = {"type": "group"}
        else:
            out = obj
        if material is not None:
            out["material"] = material
        if transform:
            out["transform"] = transform
        if kids:
            out["children"] = kids
        return out

    def object(self, block):
        kind, f = self.typed(block, _OBJECT_TYPES, "object")
        if kind == "sphere":
            return {"type": "sphere", **({"radius": f["radius"]} if "radius" in f else {})}
        if kind == "plane":
            return {"type": "plane", "normal": f["normal"], "offset": f["offset"]}
        if kind == "triangle":
            return {"type": "triangle", "vertices": [f["vertex0"], f["vertex1"], f["vertex2"]]}
        return {"type": "mesh", "file": f["obj_file"]}

    def light(self, block, world):
        kind, f = self.typed(block, _LIGHT_TYPES, "light")
        if kind == "point":
            out = {"type": "point", "position": world[:3, 3].tolist(), "color": f["color"]}
            if "attenuation" in f:
                out["attenuation"] = f["attenuation"]
            return out
        direction = f["direction"]
        linear = world[:3, :3]
        if not np.array_equal(linear, np.eye(3)):
            d = linear @ np.asarray(direction, dtype=np.float64)
            n = float(np.linalg.norm(d))
            if not n > 0.0 or not math.isfinite(n):
                raise self.error(block.line, "directional light: the node transforms "
                                             "its direction to zero")
            direction = (d / n).tolist()
        return {"type": "directional", "direction": direction, "color": f["color"]}


def parse_course_scene(path):
    """Read a course ``.txt`` scene; return our JSON scene as a dict of plain Python values.

    ``obj_file`` / ``cube_map`` paths stay as written, i.e. relative to the ``.txt`` file's
    folder. Raises :class:`SceneError` (file and line) on bad input.
    """
    path = pathlib.Path(path)
    text = read_text(path, "scene file", SceneError)
    reader = _Reader(text, str(path))
    return _Converter(reader).convert(reader.read_file())


def _rebase(rel, src_dir, dst_dir):
    """A path relative to ``src_dir`` re-expressed relative to ``dst_dir`` (posix form)."""
    if os.path.isabs(rel):
        return rel
    target = os.path.abspath(os.path.join(src_dir, rel))
    try:
        return pathlib.Path(os.path.relpath(target, os.path.abspath(dst_dir))).as_posix()
    except ValueError:  # different drives on Windows: no relative path exists
        return pathlib.Path(target).as_posix()


def _rebase_objects(objects, src_dir, dst_dir):
    for obj in objects:
        if obj["type"] == "mesh":
            obj["file"] = _rebase(obj["file"], src_dir, dst_dir)
        elif obj["type"] == "group":
            _rebase_objects(obj["children"], src_dir, dst_dir)


_NUMBER_LIST_RE = re.compile(
    r"\[\n\s*(-?\d[\d.eE+-]*(?:,\n\s*-?\d[\d.eE+-]*)*)\n\s*\]")


_ONE_KEY_RE = re.compile(r'\{\n\s*("\w+": (?:\[[^\[\]\n]*\]|-?\d[\d.eE+-]*))\n\s*\}')


def _dumps(scene):
    """``json.dumps(indent=2)`` with number lists and one-key objects kept on one line."""
    text = json.dumps(scene, indent=2)
    # JSON strings never hold a raw newline, so these only touch real lists and objects.
    text = _NUMBER_LIST_RE.sub(lambda m: "[" + re.sub(r",\n\s*", ", ", m.group(1)) + "]",
                               text)
    return _ONE_KEY_RE.sub(r"{\1}", text) + "\n"


def convert_file(src_txt, dst_json):
    """Convert ``src_txt`` to a JSON file ``dst_json``; return the scene dict written.

    Paths inside are rewritten relative to ``dst_json``'s folder. The file is written
    atomically (a temporary file in the same folder, then ``os.replace``); on any error
    nothing is left behind and an existing ``dst_json`` is untouched.
    """
    src_txt, dst_json = pathlib.Path(src_txt), pathlib.Path(dst_json)
    scene = parse_course_scene(src_txt)
    src_dir, dst_dir = src_txt.parent, dst_json.parent
    if "cube_map" in scene.get("background", {}):
        scene["background"]["cube_map"] = _rebase(scene["background"]["cube_map"],
                                                  src_dir, dst_dir)
    _rebase_objects(scene["objects"], src_dir, dst_dir)
    text = _dumps(scene)
    write_bytes_atomic(dst_json, text.encode("utf-8"))
    return scene


def main(argv=None):
    """``python -m raytrace.scene.course SRC.txt DST.json``; returns the exit status."""
    from userio import cli as ucli
    parser = ucli.parser(
        "python -m raytrace.scene.course",
        "Convert an MIT 6.837 ray-tracing scene (.txt) to a raytrace JSON "
        "scene. Mesh and cube-map paths are rewritten relative to the output. "
        "(The same as `raytrace convert SRC -o DST`.)")
    parser.add_argument("src", help="course scene file, e.g. scene01_plane.txt")
    parser.add_argument("dst", help="JSON file to write (its folder is created if needed)")
    args = parser.parse_args(argv)

    def convert():
        convert_file(args.src, args.dst)

    return ucli.run("python -m raytrace.scene.course", convert)


if __name__ == "__main__":
    sys.exit(main())
