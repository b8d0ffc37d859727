"""Hostile input, third round: image headers that declare huge sizes (checked before any
pixel is decoded), PLY properties of the wrong kind, sample counts read from files,
``--highlight`` names, existing animation frames, emission on instances.

Every case runs ``raytrace.cli.main`` in-process and asserts exit status 2, one line on
stderr naming the user's file (or option) and the field, and no file written or changed.
"""
import json
import pathlib
import struct
import zlib

import imageio.v3 as iio
import numpy as np
import pytest

from hostile import check, run_main, snapshot
from raytrace import cli
from raytrace.film.exr import exr_bytes

PROG = "raytrace"
BIG = 12000


def refused(capsys, folder, argv, names, fields=(), label=""):
    """Run ``argv``; assert status 2, one line naming one of ``names`` and every one of
    ``fields``, nothing written."""
    before = snapshot(folder)
    result = run_main(cli.main, argv, capsys)
    after = snapshot(folder)
    assert result.status == 2, f"[{label}] status {result.status}: {result.err!r}"
    check(result, PROG, before=before, after=after, names=names, label=label)
    for field in fields:
        assert field in result.err, f"[{label}] {field!r} not in {result.err!r}"
    print(f"[{label}] {result.err.strip()}")
    return result.err


def _chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def huge_png(path, width=BIG, height=BIG):
    """A few hundred bytes of PNG whose IHDR declares ``width`` x ``height`` RGB pixels."""
    data = (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + _chunk(b"IDAT", zlib.compress(b"\0" * 64)) + _chunk(b"IEND", b""))
    pathlib.Path(path).write_bytes(data)
    return path


def huge_pfm(path):
    pathlib.Path(path).write_bytes(f"PF\n{BIG} {BIG}\n-1.0\n".encode() + b"\0" * 48)
    return path


def huge_exr(path, metadata=None):
    """A small EXR whose header's dataWindow is rewritten to declare BIG x BIG pixels."""
    data = bytearray(exr_bytes({"color": np.ones((2, 2, 3), np.float32)},
                               metadata=metadata or {"spp": 4, "seed": 1}))
    key = b"dataWindow\0box2i\0" + struct.pack("<i", 16)
    at = data.index(key) + len(key)
    data[at:at + 16] = struct.pack("<iiii", 0, 0, BIG - 1, BIG - 1)
    pathlib.Path(path).write_bytes(bytes(data))
    return path


@pytest.fixture
def no_decoding(monkeypatch):
    """Any pixel decoding fails the test: the size must be refused from the header."""
    import imageio.v3
    import PIL.ImageFile
    import png

    def boom(*args, **kwargs):
        raise AssertionError("pixels were decoded")

    monkeypatch.setattr(imageio.v3, "imread", boom)
    monkeypatch.setattr(PIL.ImageFile.ImageFile, "load", boom)
    monkeypatch.setattr(png.Reader, "asDirect", boom)


def small_png(path, w=4, h=3, value=128):
    iio.imwrite(path, np.full((h, w, 3), value, np.uint8))
    return path


# ------------------------------------------------------------------ A: declared image sizes
@pytest.mark.parametrize("which", ["actual", "expected"])
def test_compare_refuses_a_huge_png_before_decoding(tmp_path, capsys, no_decoding, which):
    import tracemalloc
    big = huge_png(tmp_path / "big.png")
    small = tmp_path / "small.npy"                  # read without an image decoder
    np.save(small, np.zeros((3, 4, 3)))
    argv = ["compare", big, small] if which == "actual" else ["compare", small, big]
    tracemalloc.start()
    try:
        err = refused(capsys, tmp_path, argv, ["big.png"], ["IHDR", f"{BIG} x {BIG}"], which)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50 * 1024 ** 2, peak
    assert "limit" in err


@pytest.mark.parametrize("maker, name, field", [(huge_pfm, "big.pfm", "header"),
                                                (huge_exr, "big.exr", "dataWindow")])
def test_compare_refuses_huge_float_images(tmp_path, capsys, maker, name, field):
    maker(tmp_path / name)
    np.save(tmp_path / "small.npy", np.zeros((3, 4, 3)))
    refused(capsys, tmp_path, ["compare", tmp_path / name, tmp_path / "small.npy"], [name],
            [field, f"{BIG} x {BIG}"], name)


def test_compare_refuses_a_huge_npy_header(tmp_path, capsys):
    path = tmp_path / "big.npy"
    header = {"descr": "<f8", "fortran_order": False, "shape": (BIG, BIG, 3)}
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, header)
        f.write(b"\0" * 64)
    np.save(tmp_path / "small.npy", np.zeros((3, 4, 3)))
    refused(capsys, tmp_path, ["compare", path, tmp_path / "small.npy"], ["big.npy"], ["header"], "npy")


@pytest.mark.parametrize("expression", ["+".join(["1"] * 4500), "-" * 9000 + "2"], ids=["sum", "minus"])
def test_compare_refuses_npy_header_expressions_without_evaluating_them(tmp_path, capsys, expression):
    """A .npy whose header's shape is an expression (NumPy's literal_eval recursed into
    ``1+1+...`` or ran out of memory on 9,000 minus signs) is refused on its header, by
    the grid reader's strict parser. Control: the same file with a plain shape compares."""
    def npy(path, shape_text):
        head = "{'descr': '<f8', 'fortran_order': False, 'shape': (%s, 4, 3), }" % shape_text
        head += " " * (63 - (len(head) + 12) % 64) + "\n"
        path.write_bytes(b"\x93NUMPY\x02\x00" + len(head).to_bytes(4, "little") + head.encode("latin-1")
                         + np.zeros((3, 4, 3)).tobytes())
        return path
    np.save(tmp_path / "small.npy", np.zeros((3, 4, 3)))
    ok = npy(tmp_path / "plain.npy", "3")
    assert cli.main(["compare", str(ok), str(tmp_path / "small.npy")]) == 0
    capsys.readouterr()
    bad = npy(tmp_path / "expr.npy", expression)
    refused(capsys, tmp_path, ["compare", bad, tmp_path / "small.npy"], ["expr.npy"],
            ["header", "'shape' must be a tuple of at most 32 plain integers"], "npy expression")


def test_merge_refuses_a_huge_exr(tmp_path, capsys):
    huge_exr(tmp_path / "a.exr", {"spp": 4, "seed": 1})
    (tmp_path / "b.exr").write_bytes(exr_bytes({"color": np.ones((2, 2, 3), np.float32)},
                                               metadata={"spp": 4, "seed": 2}))
    refused(capsys, tmp_path, ["merge", tmp_path / "a.exr", tmp_path / "b.exr", "-o", tmp_path / "m.exr"],
            ["a.exr"], ["dataWindow"], "merge")


SCENE = {
    "camera": {"center": [0, 0, 4], "look_at": [0, 0, 0], "fov": 40},
    "image": {"width": 8, "height": 6, "spp": 1},
    "lights": [{"type": "point", "position": [2, 3, 4], "color": [1, 1, 1]}],
    "materials": {"red": {"diffuse": [1, 0, 0]}},
    "objects": [{"type": "sphere", "name": "ball", "radius": 0.5, "material": "red"}],
}


def write_scene(folder, scene):
    path = folder / "scene.json"
    path.write_text(json.dumps(scene))
    return path


def test_render_refuses_a_huge_texture_before_decoding(tmp_path, capsys, no_decoding):
    huge_png(tmp_path / "tex.png")
    scene = json.loads(json.dumps(SCENE))
    scene["materials"]["tex"] = {"type": "diffuse", "albedo": {"type": "image", "file": "tex.png"}}
    scene["objects"][0]["material"] = "tex"
    path = write_scene(tmp_path, scene)
    refused(capsys, tmp_path, ["render", path, "-o", tmp_path / "out.png", "--quiet"], ["tex.png"],
            ["materials.tex", f"{BIG} x {BIG}"], "texture")


# ------------------------------------------------------------------ B: PLY properties
PLY_HEAD = "ply\nformat ascii 1.0\nelement vertex 3\n{vertex}element face 1\n{face}end_header\n"
PLY_XYZ = "property float x\nproperty float y\nproperty float z\n"
PLY_FACE = "property list uchar int vertex_indices\n"


@pytest.mark.parametrize("label, vertex, face, rows, fields", [
    ("list x", "property list uchar float x\nproperty float y\nproperty float z\n", PLY_FACE,
     "1 0 0 0\n1 1 0 0\n1 0 1 0\n3 0 1 2\n", ["element 'vertex'", "property 'x'", "list"]),
    ("list z", "property float x\nproperty float y\nproperty list uchar float z\n", PLY_FACE,
     "0 0 1 0\n1 0 1 0\n0 1 1 0\n3 0 1 2\n", ["element 'vertex'", "property 'z'"]),
    ("list normal", PLY_XYZ + "property list uchar float nx\nproperty float ny\nproperty float nz\n",
     PLY_FACE, "0 0 0 1 1 0 0\n1 0 0 1 1 0 0\n0 1 0 1 1 0 0\n3 0 1 2\n", ["property 'nx'"]),
    ("missing z", "property float x\nproperty float y\n", PLY_FACE, "0 0\n1 0\n0 1\n3 0 1 2\n",
     ["element 'vertex'", "property z"]),
    ("float indices", PLY_XYZ, "property list uchar float vertex_indices\n",
     "0 0 0\n1 0 0\n0 1 0\n3 0 1.5 2\n", ["element 'face'", "property 'vertex_indices'", "integers"]),
    ("scalar indices", PLY_XYZ, "property int vertex_indices\n", "0 0 0\n1 0 0\n0 1 0\n1\n",
     ["element 'face'", "property 'vertex_indices'", "list"]),
    ("index out of range", PLY_XYZ, PLY_FACE, "0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n",
     ["element 'face' row 0", "[0, 1, 7]"]),
    ("short face", PLY_XYZ, PLY_FACE, "0 0 0\n1 0 0\n0 1 0\n2 0 1\n", ["got 2"]),
])
def test_ply_properties_of_the_wrong_kind(tmp_path, capsys, label, vertex, face, rows, fields):
    (tmp_path / "m.ply").write_text(PLY_HEAD.format(vertex=vertex, face=face) + rows)
    scene = json.loads(json.dumps(SCENE))
    scene["objects"].append({"type": "mesh", "file": "m.ply"})
    path = write_scene(tmp_path, scene)
    err = refused(capsys, tmp_path, ["render", path, "-o", tmp_path / "out.png", "--quiet"], ["m.ply"],
                  fields, label)
    assert "np." not in err and "int32" not in err and "int64" not in err, err


# ------------------------------------------------------------------ C: numbers read from files
def _noisy(tmp_path, name, spp):
    mean = np.full((4, 5, 3), 0.5)
    np.savez(tmp_path / name, mean=mean, std=np.full((4, 5, 3), 0.01), spp=spp)
    return tmp_path / name


@pytest.mark.parametrize("spp", [0, -5, 2.5, np.nan, 2 ** 50])
def test_ztest_refuses_bad_stored_sample_counts_npz(tmp_path, capsys, spp):
    ref = _noisy(tmp_path, "ref.npz", spp)
    np.save(tmp_path / "act.npy", np.full((4, 5, 3), 0.5))
    refused(capsys, tmp_path, ["compare", tmp_path / "act.npy", ref, "--ztest", "--actual-spp", "4"],
            ["ref.npz"], ["spp"], f"npz spp {spp}")


@pytest.mark.parametrize("spp", [0, -3, "many", 1.5])
def test_ztest_refuses_bad_stored_sample_counts_exr(tmp_path, capsys, spp):
    color = np.full((4, 5, 3), 0.5, np.float32)
    (tmp_path / "ref.exr").write_bytes(exr_bytes({"color": color, "variance": np.full_like(color, 1e-4)},
                                                 metadata={"spp": spp, "seed": 0}))
    np.save(tmp_path / "act.npy", np.full((4, 5, 3), 0.5))
    refused(capsys, tmp_path, ["compare", tmp_path / "act.npy", tmp_path / "ref.exr", "--ztest",
                               "--actual-spp", "4"], ["ref.exr"], ["raytrace:spp"], f"exr spp {spp}")


@pytest.mark.parametrize("meta, field", [
    ({"spp": -4, "seed": 2}, "raytrace:spp"),
    ({"spp": 0, "seed": 2}, "raytrace:spp"),
    ({"spp": 4.5, "seed": 2}, "raytrace:spp"),
    ({"spp": 4, "seed": "x"}, "raytrace:seed"),
    ({"spp": 4, "seeds": "2,,3"}, "raytrace:seeds"),
    ({"spp": 4, "seed": 2, "seconds": float("nan")}, "raytrace:seconds"),
    ({"spp": 4, "seed": 2, "nonfinite": -1}, "raytrace:nonfinite"),
])
def test_merge_refuses_bad_header_numbers(tmp_path, capsys, meta, field):
    color = np.ones((2, 2, 3), np.float32)
    (tmp_path / "a.exr").write_bytes(exr_bytes({"color": color}, metadata={"spp": 4, "seed": 1}))
    (tmp_path / "b.exr").write_bytes(exr_bytes({"color": color}, metadata=meta))
    refused(capsys, tmp_path, ["merge", tmp_path / "a.exr", tmp_path / "b.exr", "-o", tmp_path / "m.exr"],
            ["b.exr"], [field], field)


@pytest.mark.parametrize("z, field", [({"spp": 0}, "ztest.spp"), ({"spp": -1}, "ztest.spp"),
                                      ({"spp": 1.5}, "ztest.spp"), ({"alpha": 0}, "ztest.alpha"),
                                      ({"alpha": 1.5}, "ztest.alpha"), ({"alpha": "x"}, "ztest.alpha"),
                                      ({"max_fraction": -0.1}, "ztest.max_fraction"),
                                      ({"max_fraction": 1}, "ztest.max_fraction")])
def test_sidecar_ztest_numbers_are_checked(tmp_path, z, field):
    from raytrace.grade.errors import GradeError
    from raytrace.grade.sidecar import read_sidecar
    path = tmp_path / "s.ref.json"
    path.write_text(json.dumps({"ztest": z}))
    with pytest.raises(GradeError) as info:
        read_sidecar(path)
    assert "s.ref.json" in str(info.value) and field in str(info.value)


# ------------------------------------------------------------------ D: --highlight names
def test_highlight_empty_name_is_refused(tmp_path, capsys):
    path = write_scene(tmp_path, SCENE)
    refused(capsys, tmp_path, ["render", path, "-o", tmp_path / "o.png", "--view", "highlight",
                               "--highlight", ""], ["--highlight"], ["--highlight"], "empty")


def test_highlight_empty_name_alone_is_refused(tmp_path, capsys):
    """``--highlight ""`` without ``--view``: refused, not the ordinary image written."""
    path = write_scene(tmp_path, SCENE)
    refused(capsys, tmp_path, ["render", path, "-o", tmp_path / "o.png", "--highlight", ""],
            ["--highlight"], ["--highlight"], "empty alone")


@pytest.mark.parametrize("name", ["", "  "])
def test_highlight_empty_name_is_refused_before_the_scene_loads(tmp_path, capsys, monkeypatch, name):
    """An empty name needs no scene: refused before loading (and before any kernel could
    compile on the way, whose notices would make the message more than one line).
    Control: a name that is not empty reaches the loader."""
    import raytrace.loading

    def no_load(*args, **kwargs):
        raise AssertionError("the scene was loaded")

    monkeypatch.setattr(raytrace.loading, "load_scene", no_load)
    path = write_scene(tmp_path, SCENE)
    refused(capsys, tmp_path, ["render", path, "-o", tmp_path / "o.png", "--view", "highlight",
                               "--highlight", name], ["--highlight"], ["--highlight"], "empty, unloaded")
    control = run_main(cli.main, ["render", path, "-o", tmp_path / "o.png", "--highlight", "ball"], capsys)
    assert "the scene was loaded" in control.err, control.err


def test_highlight_unknown_name_is_refused_before_the_id_render(tmp_path, capsys, monkeypatch):
    import raytrace.views

    def no_render(*args, **kwargs):
        raise AssertionError("the id render ran")

    monkeypatch.setattr(raytrace.views, "_ids", no_render)
    path = write_scene(tmp_path, SCENE)
    refused(capsys, tmp_path, ["render", path, "-o", tmp_path / "o.png", "--highlight", "nosuch"],
            ["--highlight"], ["nosuch", "ball"], "unknown")


# ------------------------------------------------------------------ E: existing frames
ANIM = dict(SCENE, animation={"end": 1, "fps": 2,
                              "objects": {"ball": {"translate": {"keys": [[0, [-1, 0, 0]], [1, [1, 0, 0]]]}}}})


def _frames(tmp_path, writers):
    out = tmp_path / "frames"
    out.mkdir()
    for k, write in enumerate(writers):
        write(out / f"frame_{k:04d}.png")
    return out


@pytest.mark.parametrize("label, second, fields", [
    ("other size", lambda p: small_png(p, 6, 5), ["frame_0001.png", "6 x 5", "8 x 6"]),
    ("garbage", lambda p: p.write_bytes(b"not a png at all\n" * 3), ["frame_0001.png", "cannot read"]),
    ("truncated", lambda p: p.write_bytes(small_png(p, 8, 6).read_bytes()[:40]), ["frame_0001.png"]),
    ("huge", lambda p: huge_png(p), ["frame_0001.png", f"{BIG} x {BIG}"]),
])
@pytest.mark.parametrize("video", ["--gif", "--mp4"])
def test_animate_video_names_a_bad_existing_frame(tmp_path, capsys, label, second, fields, video):
    path = write_scene(tmp_path, ANIM)
    out = _frames(tmp_path, [lambda p: small_png(p, 8, 6), second, lambda p: small_png(p, 8, 6)])
    target = tmp_path / ("v.gif" if video == "--gif" else "v.mp4")
    err = refused(capsys, tmp_path, ["animate", path, "-o", out, video, target, "--workers", "1", "-q"],
                  ["frame_0001.png"], fields, f"{label} {video}")
    assert "pip install" not in err and "backend" not in err, err


# ------------------------------------------------------------------ G: emission on instances
def _instanced(emission_on):
    scene = json.loads(json.dumps(SCENE))
    scene["prototypes"] = {"thing": {"type": "sphere", "radius": 0.3}}
    inst = {"type": "instance", "prototype": "thing", "transform": [{"translate": [1, 0, 0]}]}
    if emission_on == "instance":
        inst["emission"] = [5, 5, 5]
        scene["objects"].append(inst)
    elif emission_on == "black":
        inst["emission"] = [0, 0, 0]
        scene["objects"].append(inst)
    else:
        scene["objects"].append({"type": "group", "emission": [2, 2, 2], "children": [inst]})
    return scene


@pytest.mark.parametrize("on, field", [("instance", "objects[1].emission"), ("black", "objects[1].emission"),
                                       ("group", "objects[1].children[0]")])
def test_emission_on_an_instance_is_refused(tmp_path, capsys, on, field):
    path = write_scene(tmp_path, _instanced(on))
    refused(capsys, tmp_path, ["render", path, "-o", tmp_path / "o.png", "--quiet"], ["scene.json"],
            [field, "instances"], on)


# ------------------------------------------------------------------ G: every schema field is used
# A non-default valid value for each optional property of the core object types; the
# plug-in types (bezier_patches, surface_of_revolution, sweep, skinned_mesh, cloth) and
# gltf's scene/animation/time/loop (which need an animated glTF file) are covered by their
# own tests.
VARIANTS = {
    "center": [0.5, 0.25, 0], "radius": 2.0, "offset": 1.5, "smooth": True,
    "normals": [[0, 0.6, 0.8], [0, 0, 1], [0.6, 0, 0.8]],
    "emission": [3, 3, 3], "material": "red", "name": "renamed", "transform": [{"translate": [0.5, 0, 0]}],
    "children": [{"type": "sphere", "radius": 0.25}, {"type": "cube"}],
    "interior": "fog", "exterior": "fog",          # the scene below defines the medium "fog"
}
BASES = {
    "sphere": {"type": "sphere"},
    "plane": {"type": "plane", "normal": [0, 1, 0]},
    "triangle": {"type": "triangle", "vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0]]},
    "rectangle": {"type": "rectangle"},
    "cube": {"type": "cube"},
    "mesh": {"type": "mesh", "file": "tri.obj"},
    "group": {"type": "group", "children": [{"type": "sphere", "radius": 0.5}]},
    "instance": {"type": "instance", "prototype": "thing"},
}
REFUSED = {("plane", "emission"), ("instance", "emission")}     # refused by name instead
# read elsewhere: a group's name is what animation tracks move (raytrace/scene/animation.py);
# the group itself gets no object id (its children are named by their JSON paths)
USED_ELSEWHERE = {("group", "name")}


def _schema_object_properties():
    schema = json.loads((pathlib.Path(cli.__file__).parent / "scene" / "scene.schema.json").read_text())
    out = {}
    for branch in schema["$defs"]["object"]["allOf"]:
        kind = branch["if"].get("properties", {}).get("type", {}).get("const")
        if kind in BASES:
            then = branch["then"]
            out[kind] = sorted(set(then.get("properties", {})) - set(then.get("required", [])) - {"type"})
    return out


def _fingerprint(scene):
    parts = [repr(scene.object_names), repr(scene.material_names)]
    for field in scene.geometry._fields:
        value = getattr(scene.geometry, field)
        for a in (value if isinstance(value, (tuple, list)) else [value]):
            a = np.asarray(a)
            parts.append(f"{field}{a.shape}{a.dtype}" + a.tobytes().hex())
    return "|".join(parts)


def test_every_object_property_in_the_schema_is_used_or_refused(tmp_path):
    import raytrace
    from raytrace.errors import SceneError
    (tmp_path / "tri.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0.5\nf 1 2 3\nf 2 4 3\n")
    props = _schema_object_properties()
    assert set(props) == set(BASES), props

    def load(obj):
        scene = json.loads(json.dumps(SCENE))
        scene["prototypes"] = {"thing": {"type": "group", "children": [
            {"type": "sphere", "radius": 0.3}, {"type": "cube", "material": "red"}]}}
        scene["objects"].append(obj)
        scene["objects"].append({"type": "instance", "prototype": "thing"})   # used twice: instanced
        scene["media"] = {"fog": {"type": "homogeneous", "sigma_t": 0.5}}      # for interior / exterior
        return raytrace.load_scene(scene, base_dir=tmp_path)

    unknown = [(k, p) for k, names in props.items() for p in names if p not in VARIANTS]
    assert not unknown, f"no test value for {unknown}"
    for kind, names in props.items():
        base = _fingerprint(load(BASES[kind]))
        for name in names:
            obj = dict(BASES[kind], **{name: VARIANTS[name]})
            if (kind, name) in USED_ELSEWHERE:
                continue
            if (kind, name) in REFUSED:
                with pytest.raises(SceneError, match="emission"):
                    load(obj)
                continue
            assert _fingerprint(load(obj)) != base, f"{kind}.{name} is accepted but changes nothing"


# ------------------------------------------------------------- F: an unreachable scheduler
def test_animate_connect_timeout_is_checked(tmp_path, capsys):
    path = write_scene(tmp_path, SCENE)
    for value in ("0", "-1", "nan", "4000"):
        refused(capsys, tmp_path, ["animate", path, "-o", tmp_path / "frames", "--scheduler",
                                   "tcp://127.0.0.1:1", "--connect-timeout", value],
                ["--connect-timeout"], ["--connect-timeout"], f"timeout {value}")


def test_animate_names_a_scheduler_where_nothing_listens(tmp_path, capsys):
    """A closed port on this machine: one line naming the address and the timeout, exit 1
    (the scheduler could not be reached, an I/O failure), no frame written."""
    import socket
    with socket.socket() as sock:            # a port that was free a moment ago, now closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    path = write_scene(tmp_path, SCENE)
    result = run_main(cli.main, ["animate", str(path), "-o", str(tmp_path / "frames"), "--scheduler", address,
                                 "--connect-timeout", "2", "-q"], capsys)
    assert result.status == 1, result.err
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and address in lines[0] and "within 2 s" in lines[0], result.err
    assert not list(tmp_path.glob("frames/frame_*"))
