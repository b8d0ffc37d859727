"""Hostile glTF files, hand-made for each class of defect the glTF readers must refuse
(the renderer's ``raytrace/scene/gltf.py`` and the skinning library's
``skinning/gltf.py``, which share ``userio/gltf_accessors.py``):

1. accessors and buffer views against the glTF 2.0 specification (component types and
   types, allowed per use, count, byteStride, alignment, ranges, index values, sparse);
2. animation samplers (zero quaternions, key times that are not finite, negative or
   not increasing, non-finite outputs, output counts);
3. the GLB container (magic, version, total length, chunk lengths and order);
4. camera and light errors naming the JSON path where the bad value is;
5. images that are not PNG or JPEG data.

Each case runs the real command line (``raytrace.cli.main`` or ``skinning.cli.main``,
in-process) and asserts exit status 2, exactly one line on stderr naming the user's file
and the field, no traceback, and no output file. Valid variants (an interleaved buffer
with a legal stride, a sparse accessor) are checked to keep working.
"""
import base64
import json
import struct

import numpy as np
import pytest
from gltf_builder import FLOAT, UBYTE, UINT, USHORT, GltfBuilder, quad
from hostile import run_main
from test_skinning_gltf_multi import multi_skin

from raytrace import cli
from raytrace.scene.gltf import load_gltf
from skinning.cli import main as skinning_main

# accessors of the renderer's model (see rt_model)
POS, IDX, NRM, UV, TIMES, MOVE, TURN = range(7)
# buffer views: 0..3 as the accessors above, 4 the PNG, 5 times, 6 translations, 7 rotations
PNG_VIEW, TIMES_VIEW, MOVE_VIEW, TURN_VIEW = 4, 5, 6, 7


def rt_model(folder, edit=None, bin_edit=None, name="m.gltf"):
    """A textured quad (node 0, animated: translation and rotation), a camera (node 1)
    and a point light (node 2), written as ``name`` (.gltf with ``m.bin`` beside it, or
    .glb); ``edit(doc)`` changes the JSON, ``bin_edit(doc, data)`` the binary buffer."""
    folder.mkdir(parents=True, exist_ok=True)
    g = GltfBuilder()
    prim = quad(g)
    tex = g.texture(g.png_image(np.full((2, 2, 3), 128, np.uint8)))
    prim["material"] = 0
    g.doc["materials"] = [{"pbrMetallicRoughness": {"baseColorTexture": {"index": tex}, "metallicFactor": 0}}]
    g.doc["meshes"] = [{"primitives": [prim]}]
    times = g.accessor(np.array([0.0, 1.0]), "SCALAR", minmax=True)
    move = g.accessor(np.array([[0, 0, 0], [0, 1, 0]], float), "VEC3")
    s = np.sqrt(0.5)
    turn = g.accessor(np.array([[0, 0, 0, 1], [0, s, 0, s]], float), "VEC4")
    assert (times, move, turn) == (TIMES, MOVE, TURN)
    g.doc["animations"] = [{"name": "go", "samplers": [{"input": times, "output": move},
                                                       {"input": times, "output": turn}],
                            "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}},
                                         {"sampler": 1, "target": {"node": 0, "path": "rotation"}}]}]
    g.doc["cameras"] = [{"type": "perspective", "perspective": {"yfov": 0.8, "znear": 0.1}}]
    g.doc["extensionsUsed"] = ["KHR_lights_punctual"]
    g.doc["extensions"] = {"KHR_lights_punctual": {"lights": [{"type": "point", "intensity": 5.0}]}}
    g.doc["nodes"] = [{"mesh": 0}, {"camera": 0, "translation": [0, 0, 4]},
                      {"translation": [1, 2, 3], "extensions": {"KHR_lights_punctual": {"light": 0}}}]
    g.doc["scenes"] = [{"nodes": [0, 1, 2]}]
    if bin_edit is not None:
        bin_edit(g.doc, g.data)
    if edit is not None:
        edit(g.doc)
    if name.endswith(".glb"):
        return g.save(folder / name)
    return g.save(folder / name, external_bin=True)


def put(view, values, dtype, at=0):
    """A ``bin_edit`` writing ``values`` (as ``dtype``) into bufferView ``view`` at byte ``at``."""
    def run(doc, data):
        off = doc["bufferViews"][view]["byteOffset"] + at
        raw = np.asarray(values, dtype).tobytes()
        data[off:off + len(raw)] = raw
    return run


def scene_for(folder, model="m.gltf"):
    """A scene file rendering ``model`` with its animation at 0.5 s."""
    scene = {"camera": {"center": [0, 0, 4], "look_at": [0, 0, 0], "fov": 45},
             "image": {"width": 8, "height": 6, "spp": 1},
             "lights": [{"type": "point", "position": [2, 3, 4], "color": [1, 1, 1]}],
             "objects": [{"type": "gltf", "file": model, "animation": 0, "time": 0.5}]}
    path = folder / "scene.json"
    path.write_text(json.dumps(scene))
    return path


def refused(capsys, argv, out, file, *fields, main=cli.main):
    """Run ``argv``; assert status 2, one line naming ``file`` and every one of ``fields``,
    no traceback and no ``out`` written. -> the line."""
    r = run_main(main, argv, capsys)
    err = r.err.strip()
    assert r.status == 2, f"status {r.status}: {r.err}{r.out}"
    assert "Traceback" not in r.err and "BytesIO" not in err and "internal error" not in err, err
    assert len(err.splitlines()) == 1, err
    assert str(file) in err, err
    for f in fields:
        assert f in err, f"{f!r} not in: {err}"
    assert not out.exists(), f"{out} was written"
    return err


def render_refused(capsys, tmp_path, path, *fields, via_scene=False):
    out = tmp_path / "out" / "image.png"
    target = scene_for(path.parent, path.name) if via_scene else path
    argv = ["render", target, "-o", out, "--size", "8", "6", "--spp", "1", "--quiet"]
    return refused(capsys, argv, out, path, *fields)


# ------------------------------------------------------------ 1. accessors and views
def _set_view(acc, **kw):
    return lambda d: d["bufferViews"][d["accessors"][acc]["bufferView"]].update(kw)


def _set_acc(acc, **kw):
    return lambda d: d["accessors"][acc].update(kw)


def _sparse_pos(indices=(1, 2), count=None, itype=UBYTE, stride=None, values_length=None):
    """A sparse block on POSITION (replacing vertices ``indices``) -> (edit, bin_edit)."""
    def bin_edit(doc, data):
        data += b"\0" * (-len(data) % 4)
        ind = np.asarray(indices).astype({UBYTE: "u1", USHORT: "<u2", UINT: "<u4", FLOAT: "<f4"}[itype]).tobytes()
        doc["bufferViews"].append({"buffer": 0, "byteOffset": len(data), "byteLength": len(ind)})
        if stride:
            doc["bufferViews"][-1]["byteStride"] = stride
        data += ind + b"\0" * (-len(ind) % 4)
        vals = np.full((len(indices), 3), 0.5, "<f4").tobytes()
        doc["bufferViews"].append({"buffer": 0, "byteOffset": len(data), "byteLength": values_length or len(vals)})
        data += vals
        n = len(doc["bufferViews"])
        doc["accessors"][POS]["sparse"] = {
            "count": len(indices) if count is None else count,
            "indices": {"bufferView": n - 2, "componentType": itype},
            "values": {"bufferView": n - 1}}
    return bin_edit


ACCESSOR_CASES = {
    # name: (edit, bin_edit, fields named)
    "stride_smaller_than_element": (_set_view(POS, byteStride=4), None,
                                    ["accessors[0]", "byteStride 4", "smaller than one VEC3 of FLOAT (12 bytes)"]),
    "stride_not_multiple_of_4": (_set_view(POS, byteStride=14), None, ["bufferViews[0].byteStride", "multiple of 4"]),
    "stride_too_large": (_set_view(POS, byteStride=256), None, ["bufferViews[0].byteStride", "[4, 252]"]),
    "unknown_component_type": (_set_acc(POS, componentType=5124), None, ["accessors[0].componentType", "5124"]),
    "position_unsigned_int": (_set_acc(POS, componentType=UINT), None,
                              ["accessors[0].componentType", "UNSIGNED_INT cannot be used as POSITION"]),
    "float_indices": (_set_acc(IDX, componentType=FLOAT, count=3), None,
                      ["accessors[1].componentType", "FLOAT cannot be used as indices"]),
    "unknown_type": (_set_acc(POS, type="VEC5"), None, ["accessors[0].type", "VEC5"]),
    "position_vec2": (_set_acc(POS, type="VEC2"), None, ["accessors[0].type", "VEC2 cannot be used as POSITION"]),
    "texcoord_vec3": (_set_acc(UV, type="VEC3", count=2), None, ["accessors[3].type", "TEXCOORD_0"]),
    "count_zero": (_set_acc(POS, count=0), None, ["accessors[0].count", ">= 1"]),
    "normalized_float": (_set_acc(NRM, normalized=True), None, ["accessors[2].normalized", "FLOAT"]),
    "misaligned_accessor_offset": (_set_acc(POS, byteOffset=2, count=3), None,
                                   ["accessors[0].byteOffset", "multiple of the component size 4"]),
    "misaligned_view_offset": (lambda d: d["bufferViews"][0].update(byteOffset=2, byteLength=40), None,
                               ["accessors[0]", "starts at byte 2", "bufferViews[0].byteOffset"]),
    "accessor_past_view": (_set_acc(POS, count=40), None, ["accessors[0]", "bufferViews[0]", "out of range"]),
    "offset_past_view": (_set_acc(POS, byteOffset=40), None, ["accessors[0]", "needs bytes up to 88"]),
    "view_past_buffer": (_set_view(NRM, byteLength=10 ** 6), None,
                         ["bufferViews[2]", "buffers[0]", "accessors[2]"]),
    "missing_view": (_set_acc(NRM, bufferView=99), None, ["accessors[2].bufferView", "bufferViews[99]"]),
    "index_past_vertices": (None, put(1, [0, 1, 7], "<u2"),
                            ["meshes[0].primitives[0].indices", "accessors[1]", "vertex index 7"]),
    "index_view_with_stride": (_set_view(IDX, byteStride=4), None, ["accessors[1]", "byteStride"]),
    "sparse_not_increasing": (None, _sparse_pos((2, 1)), ["accessors[0].sparse.indices", "strictly increase"]),
    "sparse_index_past_count": (None, _sparse_pos((1, 9)), ["accessors[0].sparse.indices", "out of range"]),
    "sparse_count_too_large": (None, _sparse_pos((0, 1, 2, 3, 0)), ["accessors[0].sparse.count"]),
    "sparse_float_indices": (None, _sparse_pos((1, 2), itype=FLOAT),
                             ["accessors[0].sparse.indices.componentType"]),
    "sparse_view_with_stride": (None, _sparse_pos((1, 2), stride=4), ["accessors[0].sparse.indices", "byteStride"]),
    "sparse_values_past_view": (None, _sparse_pos((1, 2), values_length=12),
                                ["accessors[0].sparse.values", "needs bytes up to 24"]),
}


@pytest.mark.parametrize("case", sorted(ACCESSOR_CASES))
def test_accessor_and_view_refused(case, tmp_path, capsys):
    edit, bin_edit, fields = ACCESSOR_CASES[case]
    path = rt_model(tmp_path / "in", edit, bin_edit)
    render_refused(capsys, tmp_path, path, *fields)


def test_stride_message_reads_as_documented(tmp_path, capsys):
    path = rt_model(tmp_path / "in", _set_view(POS, byteStride=4))
    err = render_refused(capsys, tmp_path, path)
    assert err.endswith("m.gltf: accessors[0]: byteStride 4 of bufferViews[0] is smaller than one VEC3 "
                        "of FLOAT (12 bytes)"), err


def test_interleaved_buffer_with_legal_stride_is_read(tmp_path):
    """POSITION and NORMAL interleaved in one view of stride 24: read exactly."""
    def interleave(doc, data):
        pos = np.frombuffer(bytes(data[0:48]), "<f4").reshape(4, 3)
        nrm_view = doc["bufferViews"][doc["accessors"][NRM]["bufferView"]]
        off = nrm_view["byteOffset"]
        nrm = np.frombuffer(bytes(data[off:off + 48]), "<f4").reshape(4, 3)
        data += b"\0" * (-len(data) % 4)
        start = len(data)
        data += np.hstack([pos, nrm]).astype("<f4").tobytes()
        doc["bufferViews"].append({"buffer": 0, "byteOffset": start, "byteLength": 96, "byteStride": 24})
        v = len(doc["bufferViews"]) - 1
        doc["accessors"][POS].update(bufferView=v, byteOffset=0)
        doc["accessors"][NRM].update(bufferView=v, byteOffset=12)
    gs = load_gltf(rt_model(tmp_path / "in", bin_edit=interleave))
    prim = gs.meshes[0][0]
    np.testing.assert_array_equal(prim.positions, [[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]])
    np.testing.assert_array_equal(prim.normals, np.tile([0, 0, 1], (4, 1)))


def test_sparse_accessor_is_read(tmp_path):
    gs = load_gltf(rt_model(tmp_path / "in", bin_edit=_sparse_pos((1, 3))))
    np.testing.assert_array_equal(gs.meshes[0][0].positions, [[-1, -1, 0], [0.5, 0.5, 0.5], [1, 1, 0],
                                                              [0.5, 0.5, 0.5]])


# ------------------------------------------------------------------ 2. animations
ANIMATION_CASES = {
    "zero_quaternion": (put(TURN_VIEW, [0, 0, 0, 0], "<f4", at=16),
                        ["animations[0].samplers[1].output", "rotation key 1", "accessors[6]"]),
    "nan_quaternion": (put(TURN_VIEW, [np.nan, 0, 0, 1], "<f4", at=16),
                       ["animations[0].samplers[1].output", "accessors[6]", "key value 1"]),
    "times_not_increasing": (put(TIMES_VIEW, [1.0, 1.0], "<f4"),
                             ["animations[0].samplers[0].input", "key time 1", "strictly increase"]),
    "times_decreasing": (put(TIMES_VIEW, [1.0, 0.5], "<f4"),
                         ["animations[0].samplers[0].input", "key time 1", "accessors[4]"]),
    "time_infinite": (put(TIMES_VIEW, [0.0, np.inf], "<f4"),
                      ["animations[0].samplers[0].input", "accessors[4]", "key time 1"]),
    "time_negative": (put(TIMES_VIEW, [-1.0, 1.0], "<f4"),
                      ["animations[0].samplers[0].input", "key time 0", "negative"]),
    "translation_nan": (put(MOVE_VIEW, [0, np.nan, 0], "<f4", at=12),
                        ["animations[0].samplers[0].output", "accessors[5]", "key value 1"]),
}


@pytest.mark.parametrize("case", sorted(ANIMATION_CASES))
def test_animation_sampler_refused(case, tmp_path, capsys):
    bin_edit, fields = ANIMATION_CASES[case]
    path = rt_model(tmp_path / "in", bin_edit=bin_edit)
    render_refused(capsys, tmp_path, path, *fields, via_scene=True)


def test_animation_output_count_refused(tmp_path, capsys):
    path = rt_model(tmp_path / "in", _set_acc(MOVE, count=1))
    render_refused(capsys, tmp_path, path, "animations[0].samplers[0].output", "accessors[5]", "need 2",
                   via_scene=True)


def test_animation_rotation_of_wrong_type_refused(tmp_path, capsys):
    path = rt_model(tmp_path / "in", lambda d: d["animations"][0]["samplers"][1].update(output=MOVE))
    render_refused(capsys, tmp_path, path, "accessors[5].type", "VEC3 cannot be used as rotation",
                   via_scene=True)


# ---------------------------------------------------------------------- 3. GLB container
def glb_edit(fn):
    def run(path):
        path.write_bytes(fn(bytearray(path.read_bytes())))
        return path
    return run


def _at(offset, fmt, value):
    def fn(data):
        struct.pack_into(fmt, data, offset, value)
        return data
    return fn


def _second_chunk_json(data):
    jlen = struct.unpack_from("<I", data, 12)[0]
    struct.pack_into("<4s", data, 20 + jlen + 4, b"JSON")
    return data


GLB_CASES = {
    "wrong_magic": (_at(0, "<4s", b"XXXX"), ["GLB header", "magic is b'XXXX', expected b'glTF'"]),
    "version_1": (_at(4, "<I", 1), ["GLB header", "version 1"]),
    "length_too_large": (lambda d: _at(8, "<I", len(d) + 100)(d), ["GLB header", "truncated file"]),
    "length_too_small": (lambda d: _at(8, "<I", len(d) - 4)(d), ["GLB header", "junk after the end"]),
    "trailing_junk": (lambda d: d + b"junk", ["GLB header", "junk after the end"]),
    "chunk_length_past_end": (_at(12, "<I", 10 ** 6), ["GLB chunk 0", "runs past the end"]),
    "first_chunk_not_json": (_at(16, "<4s", b"BIN\0"), ["GLB chunk 0", "expected b'JSON'"]),
    "second_chunk_json": (_second_chunk_json, ["GLB chunk 1", "out of place"]),
    "truncated_header": (lambda d: d[:10], ["GLB header", "truncated GLB file"]),
}


@pytest.mark.parametrize("case", sorted(GLB_CASES))
def test_glb_container_refused_by_the_renderer(case, tmp_path, capsys):
    fn, fields = GLB_CASES[case]
    path = glb_edit(fn)(rt_model(tmp_path / "in", name="m.glb"))
    render_refused(capsys, tmp_path, path, *fields)


def test_glb_that_is_json_text_is_refused_as_glb(tmp_path, capsys):
    path = tmp_path / "in" / "m.glb"
    rt_model(tmp_path / "in", name="m.gltf")
    path.write_bytes((tmp_path / "in" / "m.gltf").read_bytes())
    render_refused(capsys, tmp_path, path, "GLB header", "magic is b'{\\n \"'")


# ------------------------------------------------------------------ 4. cameras, lights
LIGHT = "extensions.KHR_lights_punctual.lights[0]"
PATH_CASES = {
    "light_intensity": (lambda d: d["extensions"]["KHR_lights_punctual"]["lights"][0].update(intensity=-1),
                        [f"{LIGHT}.intensity"]),
    "light_colour": (lambda d: d["extensions"]["KHR_lights_punctual"]["lights"][0].update(color=[1, 1]),
                     [f"{LIGHT}.color"]),
    "light_type": (lambda d: d["extensions"]["KHR_lights_punctual"]["lights"][0].update(type="area"),
                   [f"{LIGHT}.type"]),
    "camera_yfov": (lambda d: d["cameras"][0]["perspective"].update(yfov=4.0), ["cameras[0].perspective.yfov"]),
    "camera_type": (lambda d: d["cameras"][0].update(type="fisheye"), ["cameras[0].type"]),
    "camera_ortho": (lambda d: d["cameras"][0].update(type="orthographic", orthographic={"xmag": 0, "ymag": 1}),
                     ["cameras[0].orthographic"]),
}


@pytest.mark.parametrize("case", sorted(PATH_CASES))
def test_camera_and_light_errors_name_the_path_in_the_file(case, tmp_path, capsys):
    edit, fields = PATH_CASES[case]
    path = rt_model(tmp_path / "in", edit)
    err = render_refused(capsys, tmp_path, path, *fields)
    assert "nodes[" not in err, err


# ------------------------------------------------------------------------- 5. images
def _png_view(data_bytes):
    def bin_edit(doc, data):
        v = doc["bufferViews"][PNG_VIEW]
        data[v["byteOffset"]:v["byteOffset"] + v["byteLength"]] = data_bytes
        v["byteLength"] = len(data_bytes)
    return bin_edit


def _png_bytes():
    g = GltfBuilder()
    g.png_image(np.full((2, 2, 3), 128, np.uint8))
    return bytes(g.data)


IMAGE_CASES = {
    "garbage_in_view": (None, _png_view(b"this is not an image at all"), ["images[0]", "not a PNG or JPEG image"]),
    "garbage_data_uri": (lambda d: d.update(images=[{"uri": "data:image/png;base64,"
                                                     + base64.b64encode(b"\0\1\2garbage").decode()}]),
                         None, ["images[0]", "not a PNG or JPEG image"]),
    "truncated_png": (None, lambda doc, data: _png_view(_png_bytes()[:30])(doc, data), ["images[0]"]),
    "png_signature_then_junk": (None, _png_view(b"\x89PNG\r\n\x1a\n" + b"\xff" * 40), ["images[0]"]),
}


@pytest.mark.parametrize("case", sorted(IMAGE_CASES))
def test_garbage_image_names_the_image(case, tmp_path, capsys):
    edit, bin_edit, fields = IMAGE_CASES[case]
    path = rt_model(tmp_path / "in", edit, bin_edit)
    render_refused(capsys, tmp_path, path, *fields)


# ------------------------------------------------------------------ the skinning reader
def skin_model(folder, edit=None, name="m.gltf"):
    """The multi-skin character of test_skinning_gltf_multi; ``edit(doc, data)`` changes
    the JSON and the (embedded) buffer."""
    folder.mkdir(parents=True, exist_ok=True)
    path = multi_skin(folder / "m.gltf")
    doc = json.loads(path.read_text())
    uri = doc["buffers"][0]["uri"]
    head, _, payload = uri.partition(",")
    data = bytearray(base64.b64decode(payload))
    if edit is not None:
        edit(doc, data)
    doc["buffers"][0]["uri"] = head + "," + base64.b64encode(bytes(data)).decode()
    path.write_text(json.dumps(doc))
    if name.endswith(".glb"):
        g = GltfBuilder()
        g.doc, g.data = doc, data
        path.unlink()
        return g.save(folder / name)
    return path


def skin_refused(capsys, tmp_path, path, *fields):
    out = tmp_path / "out" / "m.obj"
    out.parent.mkdir(exist_ok=True)
    argv = ["export", "-o", out, "--gltf", path, "--animation", "wave", "--time", "0.5"]
    return refused(capsys, argv, out, path, *fields, main=skinning_main)


# accessors of the skinned model's first primitive: 0 WEIGHTS_0, 1 POSITION, 2 JOINTS_0, 3 indices
def _skin_acc(doc, what):
    """Accessor index of the first primitive's attribute ``what``, or of the rotation
    sampler's output (``"turn"``) or the first sampler's input (``"times"``)."""
    if what == "turn":
        return doc["animations"][0]["samplers"][1]["output"]
    if what == "times":
        return doc["animations"][0]["samplers"][0]["input"]
    if what == "indices":
        return doc["meshes"][0]["primitives"][0]["indices"]
    return doc["meshes"][0]["primitives"][0]["attributes"][what]


def _skin_put(what, values, dtype, at=0):
    def edit(doc, data):
        acc = doc["accessors"][_skin_acc(doc, what)]
        off = doc["bufferViews"][acc["bufferView"]]["byteOffset"] + acc.get("byteOffset", 0) + at
        raw = np.asarray(values, dtype).tobytes()
        data[off:off + len(raw)] = raw
    return edit


def _skin_view(what, **kw):
    return lambda doc, data: doc["bufferViews"][doc["accessors"][_skin_acc(doc, what)]["bufferView"]].update(kw)


def _skin_acc_set(what, **kw):
    return lambda doc, data: doc["accessors"][_skin_acc(doc, what)].update(kw)


SKIN_CASES = {
    "stride_smaller_than_element": (_skin_view("POSITION", byteStride=4),
                                    ["accessors[1]", "byteStride 4", "smaller than one VEC3 of FLOAT"]),
    "joints_float": (_skin_acc_set("JOINTS_0", componentType=FLOAT),
                     ["accessors[2].componentType", "cannot be used as JOINTS_0"]),
    "weights_vec3": (_skin_acc_set("WEIGHTS_0", type="VEC3"), ["accessors[0].type", "WEIGHTS_0"]),
    "count_zero": (_skin_acc_set("POSITION", count=0), ["accessors[1].count"]),
    "misaligned_offset": (_skin_acc_set("POSITION", byteOffset=2, count=7), ["accessors[1].byteOffset"]),
    "accessor_past_view": (_skin_acc_set("POSITION", count=80), ["accessors[1]", "out of range"]),
    "index_past_vertices": (_skin_put("indices", [0, 1, 9], "<u2"), ["indices", "accessors[3]", "vertex index 9"]),
    "zero_quaternion": (lambda doc, data: _skin_put("turn", [0, 0, 0, 0], "<f4", at=16)(doc, data),
                        ["animations[0].samplers[1].output", "rotation key 1"]),
    "times_not_increasing": (_skin_put("times", [2.0, 2.0], "<f4"),
                             ["animations[0].samplers[0].input", "key time 1", "strictly increase"]),
    "time_nan": (_skin_put("times", [0.0, np.nan], "<f4"), ["animations[0].samplers[0].input", "element 1"]),
    "time_negative": (_skin_put("times", [-2.0, 2.0], "<f4"), ["animations[0].samplers[0].input", "negative"]),
}


@pytest.mark.parametrize("case", sorted(SKIN_CASES))
def test_skinning_reader_refuses(case, tmp_path, capsys):
    edit, fields = SKIN_CASES[case]
    path = skin_model(tmp_path / "in", edit)
    skin_refused(capsys, tmp_path, path, *fields)


@pytest.mark.parametrize("case", ["wrong_magic", "version_1", "length_too_large", "chunk_length_past_end",
                                  "first_chunk_not_json", "second_chunk_json", "truncated_header"])
def test_glb_container_refused_by_the_skinning_reader(case, tmp_path, capsys):
    fn, fields = GLB_CASES[case]
    path = glb_edit(fn)(skin_model(tmp_path / "in", name="m.glb"))
    skin_refused(capsys, tmp_path, path, *fields)


def test_skinning_glb_still_reads(tmp_path):
    import skinning
    sc = skinning.load_gltf_scene(skin_model(tmp_path / "in", name="m.glb"))
    assert len(sc.parts) == 4
