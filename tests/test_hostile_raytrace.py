"""Hostile input to ``raytrace``: generated malformed inputs for every reader the renderer
uses (scene JSON, course .txt, OBJ, textures, cube-map faces, the curves plug-in's
.spline files) and for every command-line option.

Every case runs the real command line (``raytrace.cli.main``, in-process, for speed) and
must end in one of two ways:
- accepted (status 0): the image (PFM, so that floats are checked) has only finite values;
- refused: status 2 (bad input) or 1 (I/O), exactly one line on stderr naming the user's
  file (or the option), no traceback, the output file that existed before unchanged and no
  file left behind.

The mutations come from fixed seeds: CI runs ``CASES`` per reader; set
``HOSTILE_CASES=2000`` for a longer run on demand. Hand-written cases cover each class of
problem the hostile-input issue names.
"""
import json
import os
import random
import struct
import subprocess
import sys
import zlib

import imageio.v3 as iio
import numpy as np
import pytest

from raytrace import cli
from raytrace.image import read_pfm

CASES = int(os.environ.get("HOSTILE_CASES", "40"))
SENTINEL = b"the previous output, which a failed run must not touch"

SCENE = {
    "camera": {"center": [0, 1, 4], "look_at": [0, 0, 0], "fov": 45},
    "image": {"width": 8, "height": 6, "spp": 1},
    "background": {"color": [0.1, 0.1, 0.1], "cube_map": "sky"},
    "materials": {"tex": {"type": "diffuse", "albedo": {"type": "image", "file": "tex.png"}},
                  "red": {"diffuse": [1, 0, 0], "specular": [0.5, 0.5, 0.5], "shininess": 20}},
    "lights": [{"type": "point", "position": [2, 3, 4], "color": [1, 1, 1]}],
    "objects": [
        {"type": "group", "transform": [{"translate": [0, 0.1, 0]}, {"rotate_y": 20}],
         "children": [{"type": "mesh", "file": "m.obj", "material": "tex"}]},
        {"type": "sphere", "radius": 0.5, "center": [1, 0, 0], "material": "red"},
        {"type": "sweep", "profile": {"circle": 0.05}, "path": {"file": "path.spline"},
         "material": "red"},
        {"type": "plane", "normal": [0, 1, 0], "offset": -1},
    ],
}
OBJ = """# a textured quad with normals
v -1 0 -1
v 1 0 -1
v 1 0 1
v -1 0 1
vt 0 0
vt 1 0
vt 1 1
vt 0 1
vn 0 1 0
f 1/1/1 2/2/1 3/3/1
f 1/1/1 3/3/1 4/4/1
"""
SPLINE = """Bezier curve
-1 0.5 0
-0.5 1 0
0.5 1 0
1 0.5 0
"""
COURSE = """Camera { center 0 0 10 direction 0 0 -1 up 0 1 0 fov 30 }
Background { color 0.1 0.1 0.1 ambient_light 0.1 0.1 0.1 }
Materials {
  Material { diffuse 1 0 0 specular 1 1 1 shininess 20 }
  Material { diffuse 0 1 0 }
}
Scene {
  Node {
    Transform { translate 0 1 0 y_rotate 30 scale 1 2 1 }
    Component<Material> { index 0 }
    Component<Object> { type sphere radius 1 }
    Node { Component<Material> { index 1 } Component<Object> { type mesh obj_file m.obj } }
  }
  Node { Component<Object> { type plane normal 0 1 0 offset -2 } }
  Node { Transform { translate 0 5 5 } Component<Light> { type point color 1 1 1 attenuation 0.01 } }
  Node { Component<Light> { type directional direction 0 -1 -1 color 0.5 0.5 0.5 } }
}
"""


def write_inputs(folder):
    """The valid inputs every mutation starts from."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "scene.json").write_text(json.dumps(SCENE, indent=1))
    (folder / "m.obj").write_text(OBJ)
    (folder / "path.spline").write_text(SPLINE)
    (folder / "course.txt").write_text(COURSE)
    rng = np.random.default_rng(0)
    iio.imwrite(folder / "tex.png", rng.integers(0, 256, (4, 4, 3), dtype=np.uint8))
    (folder / "sky").mkdir(exist_ok=True)
    for name in ("left", "right", "up", "down", "front", "back"):
        iio.imwrite(folder / "sky" / f"{name}.png", rng.integers(0, 256, (4, 4, 3), dtype=np.uint8))
    return folder


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """Compile both integrators once, so that the cases themselves are quick."""
    folder = write_inputs(tmp_path_factory.mktemp("warm"))
    for integrator in ("whitted", "path"):
        status = cli.main(["render", str(folder / "scene.json"), "-o", str(folder / "o.pfm"), "--quiet",
                           "--integrator", integrator])
        assert status == 0
    return True


def files_under(folder):
    return {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


def run_case(capsys, folder, argv, named, out, label, result=None):
    """Run one command line; check the outcome rules of the module docstring. ``out``
    holds a sentinel before the run; ``result`` is the image an accepted run writes
    (default ``out``)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(SENTINEL)
    before = files_under(folder)
    try:
        status = cli.main(argv)
    except SystemExit as exc:             # argparse's own refusals
        status = exc.code
    err = capsys.readouterr().err
    assert "Traceback" not in err and "pip install" not in err, f"{label}: {err}"
    if status == 0:
        image = read_pfm(out if result is None else result)
        assert np.isfinite(image).all(), f"{label}: accepted, but the image has NaN or inf"
        return status, err
    assert status in (1, 2), f"{label}: status {status}: {err}"
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"{label}: {len(lines)} lines: {err}"
    assert lines[0].startswith("raytrace: error: ") or "usage" not in lines[0], f"{label}: {err}"
    assert any(n in lines[0] for n in named), f"{label}: the message names none of {named}: {err}"
    assert out.read_bytes() == SENTINEL, f"{label}: the previous output was changed"
    assert files_under(folder) == before, f"{label}: files were added or changed: {err}"
    return status, err


# ------------------------------------------------------------------------ byte mutations
def mutate_bytes(data, rng):
    """One of: truncation, byte flips, inserted junk, a binary header, Latin-1 text,
    a NUL byte, an empty file."""
    kind = rng.randrange(7)
    if kind == 0 and data:
        return data[:rng.randrange(len(data))]
    if kind == 1 and data:
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if kind == 2:
        pos = rng.randrange(len(data) + 1)
        return data[:pos] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))) + data[pos:]
    if kind == 3:
        return b"\x89PNG\r\n\x1a\n" + data
    if kind == 4:
        return data.replace(b"0", "\xe9".encode("latin-1"), 1)
    if kind == 5 and data:
        pos = rng.randrange(len(data))
        return data[:pos] + b"\0" + data[pos:]
    return b""


HOSTILE_NUMBERS = ["nan", "-nan", "inf", "-inf", "1e999", "-1e999", "1e308", "-1e308", "0", "-0",
                   "1e-320", "99999999999999999999999", "-1", "7", "0x10", "1,5", "", "NaN"]


def mutate_numbers(text, rng):
    """Replace a few numbers of a text file with hostile ones."""
    import re
    spans = [m.span() for m in re.finditer(r"-?\d+(\.\d+)?", text)]
    if not spans:
        return text
    for _ in range(rng.randint(1, 3)):
        a, b = rng.choice(spans)
        new = rng.choice(HOSTILE_NUMBERS)
        text = text[:a] + new + text[b:]
        spans = [m.span() for m in re.finditer(r"-?\d+(\.\d+)?", text)]
        if not spans:
            break
    return text


# ----------------------------------------------------------------------- JSON mutations
JSON_VALUES = [float("nan"), float("inf"), -float("inf"), 1e308, -1e308, 0, -1, 2 ** 63, -(2 ** 63),
               10 ** 30, 0.5, "x", "", [], {}, None, True, [1, 2], [0, 0, 0], [1e308] * 3,
               [float("nan")] * 3, {"type": "group", "children": []}]


def _leaves(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, path + (i,))
    yield path


def mutate_json(scene, rng):
    """Replace, delete or deepen one value of the scene."""
    data = json.loads(json.dumps(scene))
    paths = [p for p in _leaves(data) if p]
    path = rng.choice(paths)
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    kind = rng.randrange(4)
    if kind == 0 and isinstance(parent, dict):
        del parent[path[-1]]
    elif kind == 1:
        deep = 0
        for _ in range(rng.choice([10, 70, 200, 600])):
            deep = [deep]
        parent[path[-1]] = deep
    else:
        parent[path[-1]] = rng.choice(JSON_VALUES)
    return json.dumps(data, allow_nan=True)


def deep_groups(n):
    obj = {"type": "sphere"}
    for _ in range(n):
        obj = {"type": "group", "children": [obj]}
    return dict(SCENE, objects=[obj], background={})


# ----------------------------------------------------------------------------- images
def png_with_header(width, height, bit_depth=8, colour_type=2):
    """A PNG whose header claims ``width`` x ``height`` (its data is one empty row)."""
    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, colour_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0"))
            + chunk(b"IEND", b""))


def png_rgb16(array):
    """A 16-bit RGB PNG of (H, W, 3) uint16 ``array`` (imageio's writer has no such mode)."""
    h, w, _ = array.shape
    raw = b"".join(b"\0" + array[r].astype(">u2").tobytes() for r in range(h))
    return png_with_header(w, h, 16, 2).split(b"IDAT")[0][:-4] + _chunk(b"IDAT", zlib.compress(raw)) + \
        _chunk(b"IEND", b"")


def _chunk(tag, data):
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def odd_images(rng):
    """PNG files of every kind a user might pass: grey, grey+alpha, RGBA, 16-bit,
    non-square, a lying header, a truncated file."""
    yield "grey", lambda p: iio.imwrite(p, rng.integers(0, 256, (4, 4), dtype=np.uint8))
    yield "grey_alpha", lambda p: iio.imwrite(p, rng.integers(0, 256, (4, 4, 2), dtype=np.uint8))
    yield "rgba", lambda p: iio.imwrite(p, rng.integers(0, 256, (4, 4, 4), dtype=np.uint8))
    yield "16bit", lambda p: p.write_bytes(png_rgb16(rng.integers(0, 65536, (4, 4, 3), dtype=np.uint16)))
    yield "16bit_grey", lambda p: iio.imwrite(p, rng.integers(0, 65536, (4, 4), dtype=np.uint16))
    yield "non_square", lambda p: iio.imwrite(p, rng.integers(0, 256, (4, 6, 3), dtype=np.uint8))
    yield "huge_header", lambda p: p.write_bytes(png_with_header(100000, 100000))
    yield "bad_depth", lambda p: p.write_bytes(png_with_header(4, 4, bit_depth=7))


# ------------------------------------------------------------------------------ tests
def render_argv(folder, scene, out, integrator, extra=()):
    return ["render", str(folder / scene), "-o", str(out), "--quiet", "--integrator", integrator, *extra]


READERS = {
    # name: (file mutated, scene rendered, mutation)
    "scene_json_bytes": ("scene.json", "scene.json", "bytes"),
    "scene_json_values": ("scene.json", "scene.json", "json"),
    "course_txt_bytes": ("course.txt", "course.txt", "bytes"),
    "course_txt_numbers": ("course.txt", "course.txt", "numbers"),
    "obj_bytes": ("m.obj", "scene.json", "bytes"),
    "obj_numbers": ("m.obj", "course.txt", "numbers"),
    "spline_bytes": ("path.spline", "scene.json", "bytes"),
    "spline_numbers": ("path.spline", "scene.json", "numbers"),
    "texture_bytes": ("tex.png", "scene.json", "bytes"),
    "cube_face_bytes": ("sky/up.png", "scene.json", "bytes"),
}


@pytest.mark.parametrize("reader", sorted(READERS))
def test_fuzz_reader(reader, tmp_path, capsys, warm):
    target, scene, how = READERS[reader]
    folder = write_inputs(tmp_path / "in")
    original = (folder / target).read_bytes()
    rng = random.Random(f"{reader}-{CASES}")
    statuses = []
    for case in range(CASES):
        if how == "bytes":
            data = mutate_bytes(original, rng)
        elif how == "numbers":
            data = mutate_numbers(original.decode(), rng).encode()
        else:
            data = mutate_json(SCENE, rng).encode()
        (folder / target).write_bytes(data)
        out = tmp_path / "out" / "image.pfm"
        integrator = rng.choice(["whitted", "path"])
        status, _ = run_case(capsys, tmp_path, render_argv(folder, scene, out, integrator), [target.split("/")[-1],
                             scene, "sky"], out, f"{reader} case {case}: {data[:80]!r}")
        statuses.append(status)
    (folder / target).write_bytes(original)
    assert statuses.count(2) + statuses.count(1) > 0        # the mutations did provoke refusals


@pytest.mark.parametrize("name", [n for n, _ in odd_images(random.Random(0))])
@pytest.mark.parametrize("where", ["tex.png", "sky/front.png"])
def test_image_inputs_of_unusual_formats(name, where, tmp_path, capsys, warm):
    """Grey+alpha cube faces once left 2 channels (read past the array in the Whitted
    kernel); non-square faces crashed the path tracer."""
    folder = write_inputs(tmp_path / "in")
    make = dict(odd_images(np.random.default_rng(1)))[name]
    if where.startswith("sky") and name != "non_square":
        for face in ("left", "right", "up", "down", "front", "back"):
            make(folder / "sky" / f"{face}.png")
    else:
        make(folder / where)
    out = tmp_path / "out" / "image.pfm"
    named = [where.split("/")[-1]] if not where.startswith("sky") else ["sky/"]
    for integrator in ("whitted", "path"):
        status, err = run_case(capsys, tmp_path, render_argv(folder, "scene.json", out, integrator),
                               named, out, f"{name} {where}")
        if name in ("grey", "grey_alpha", "rgba", "16bit", "16bit_grey") or (name == "non_square" and where == "tex.png"):
            assert status == 0, err
        else:
            assert status == 2 and ("not square" in err or "cannot read" in err or "memory" in err
                                    or "differ in size" in err), err


HAND_CASES = {
    # class 1: non-finite numbers in data files
    "obj_nan_vertex": ("m.obj", OBJ.replace("v 1 0 -1", "v 1 nan -1"), "scene.json", "line 3: vertex has a value"),
    "obj_inf_normal": ("m.obj", OBJ.replace("vn 0 1 0", "vn 0 inf 0"), "scene.json", "line 10: normal"),
    "course_nan": ("course.txt", COURSE.replace("radius 1", "radius nan"), "course.txt", "line 11"),
    "scene_nan": ("scene.json", json.dumps(SCENE).replace('"radius": 0.5', '"radius": NaN'), "scene.json",
                  "objects[1].radius: must be a finite number"),
    # class 3: not UTF-8
    "png_as_scene": ("scene.json", None, "scene.json", "a binary file, not text"),
    "latin1_scene": ("scene.json", json.dumps(SCENE).replace('"red"', '"r\u00e9d"'), "scene.json",
                     "not UTF-8 text"),
    "latin1_course": ("course.txt", "# caf\u00e9\n" + COURSE, "course.txt", "line 1: not UTF-8 text"),
    "binary_obj": ("m.obj", "\0\1\2" + OBJ, "scene.json", "binary"),
    # class 6: deep nesting
    "deep_json_array": ("scene.json", "[" * 100000 + "]" * 100000, "scene.json", "nested too deeply"),
    "deep_groups": ("scene.json", json.dumps(deep_groups(100)), "scene.json", "groups nested more than 64"),
    "deep_nodes": ("course.txt", COURSE.replace("Scene {", "Scene {" + " Node {" * 150) + "}" * 150,
                   "course.txt", "Nodes nested more than 64 deep"),
}


@pytest.mark.parametrize("case", sorted(HAND_CASES))
def test_named_problem(case, tmp_path, capsys, warm):
    target, text, scene, expected = HAND_CASES[case]
    folder = write_inputs(tmp_path / "in")
    if text is None:
        (folder / target).write_bytes((folder / "tex.png").read_bytes())
    else:
        (folder / target).write_bytes(text.encode("latin-1") if "latin1" in case else text.encode())
    out = tmp_path / "out" / "image.pfm"
    status, err = run_case(capsys, tmp_path, render_argv(folder, scene, out, "whitted"), [target], out, case)
    assert status == 2 and expected in err, err


def test_deep_groups_at_the_limit_render(tmp_path, capsys, warm):
    folder = write_inputs(tmp_path / "in")
    (folder / "scene.json").write_text(json.dumps(deep_groups(64)))
    out = tmp_path / "out" / "image.pfm"
    status, err = run_case(capsys, tmp_path, render_argv(folder, "scene.json", out, "path"), [], out, "64 groups")
    assert status == 0, err


# -------------------------------------------------------------------------- options
OPTION_VALUES = {
    "--size": [["8", "6"], ["0", "6"], ["200000", "200000"], ["16000", "16000"], ["-3", "4"], ["x", "4"],
               ["8"], ["1e3", "4"]],
    "--spp": [["4"], ["0"], ["-1"], ["9223372036854775807"], ["65537"], ["nan"], ["2.5"]],
    "--seed": [["3"], ["-1"], [str(2 ** 63)], [str(2 ** 63 - 1)], ["1e9"]],
    "--bounces": [["2"], ["-1"], ["1000000000000"], ["65"]],
    "--max-depth": [["3"], ["-2"], ["65537"], ["1000000000000"]],
    "--rr-depth": [["1"], ["0"], ["70000"]],
    "--filter": [["tent"], ["lanczos"]],
    "--sampler": [["independent"], ["halton"]],
    "--integrator": [["path"], ["bdpt"]],
    "--encoding": [["linear"], ["gamma"]],
    "--depth": [["DEPTH", "1", "5"], ["DEPTH", "5", "1"], ["DEPTH", "nan", "5"], ["DEPTH", "1", "inf"],
                ["DEPTH", "a", "b"], ["FOLDER", "1", "5"], ["INSIDE_FILE", "1", "5"]],
    "--normals": [["NORMALS"], ["FOLDER"], ["INSIDE_FILE"], ["SAME"], ["x.jpg"]],
    "-o": [["FOLDER"], ["INSIDE_FILE"], ["x.jpg"], ["noext"], ["MISSING_DIR"]],
}


def _option_paths(value, tmp_path, out):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    (tmp_path / "a_folder.png").mkdir(exist_ok=True)
    table = {"DEPTH": tmp_path / "out" / "depth.png", "NORMALS": tmp_path / "out" / "normals.png",
             "FOLDER": tmp_path / "a_folder.png", "INSIDE_FILE": blocker / "x.png", "SAME": out,
             "MISSING_DIR": tmp_path / "new" / "dir" / "x.pfm"}
    return [str(table.get(v, v)) for v in value]


@pytest.mark.parametrize("option", sorted(OPTION_VALUES))
def test_every_option_refuses_bad_values(option, tmp_path, capsys, warm):
    folder = write_inputs(tmp_path / "in")
    outcomes = []
    for value in OPTION_VALUES[option]:
        out = tmp_path / "out" / "image.pfm"
        args = _option_paths(value, tmp_path, out)
        result = None
        if option == "-o":
            argv = ["render", str(folder / "scene.json"), "-o", args[0], "--quiet"]
            out, result = tmp_path / "out" / "unused.pfm", args[0]
        else:
            argv = render_argv(folder, "scene.json", out, "path") + [option, *args]
        status, err = run_case(capsys, tmp_path, argv, [option, "invalid", args[0]], out, f"{option} {value}",
                               result)
        outcomes.append(status)
        for made in (tmp_path / "out" / "depth.png", tmp_path / "out" / "normals.png",
                     tmp_path / "new" / "dir" / "x.pfm"):
            if made.exists():
                assert status == 0
                made.unlink()
    assert 0 in outcomes or option == "-o"
    assert 2 in outcomes


def test_examples_from_the_issue_fail_cleanly_in_a_real_process(tmp_path):
    """The same rules for the installed entry point: no traceback from the interpreter."""
    folder = write_inputs(tmp_path / "in")
    (folder / "bin.json").write_bytes((folder / "tex.png").read_bytes())
    for argv in (["render", str(folder / "bin.json"), "-o", str(tmp_path / "o.png")],
                 ["render", str(folder / "scene.json"), "-o", str(tmp_path / "o.png"), "--size", "200000", "200000"],
                 ["convert", str(folder / "course.txt"), "-o", str(tmp_path)]):
        r = subprocess.run([sys.executable, "-m", "raytrace", *argv], capture_output=True, text=True)
        assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.count("\n") == 1, r.stderr
