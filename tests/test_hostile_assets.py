"""Hostile input to the model readers (glTF / GLB and their buffers, OBJ's MTL files, PLY):
mutated files rendered through the real command line, with the outcome rules of
``test_hostile_raytrace``: accepted with a finite image, or refused with status 1 or 2
and exactly one line naming the user's file, nothing written."""
import json
import random

import numpy as np
import pytest

from gltf_builder import GltfBuilder, box, quad
from test_hostile_raytrace import CASES, mutate_bytes, mutate_numbers, render_argv, run_case, warm  # noqa: F401

MTL = """newmtl red
Kd 0.8 0.1 0.1
Ks 0.5 0.5 0.5
Ns 30
illum 2
newmtl glass
Kd 0 0 0
Ks 1 1 1
Ni 1.5
d 0.3
illum 7
newmtl lamp
Ke 2 2 2
"""
OBJ = """mtllib m.mtl
v -1 0 -1
v 1 0 -1
v 1 0 1
v -1 0 1
v 0 1 0
o floor
usemtl red
f 1 4 3 2
o roof
usemtl glass
f 1 2 5
usemtl lamp
f 2 3 5
"""
PLY = """ply
format ascii 1.0
element vertex 4
property float x
property float y
property float z
property float nx
property float ny
property float nz
property float s
property float t
element face 2
property list uchar int vertex_indices
end_header
-1 0 -1 0 1 0 0 0
1 0 -1 0 1 0 1 0
1 0.5 1 0 1 0 1 1
-1 0.5 1 0 1 0 0 1
3 0 2 1
4 0 3 2 1
"""


def model(folder, name, external=False):
    g = GltfBuilder()
    rng = np.random.default_rng(1)
    tex = g.texture(g.png_image(rng.integers(0, 256, (4, 4, 3), dtype=np.uint8)))
    g.doc["materials"] = [{"name": "Tex", "pbrMetallicRoughness": {"baseColorTexture": {"index": tex},
                                                                   "metallicFactor": 0}},
                          {"name": "Gold", "pbrMetallicRoughness": {"baseColorFactor": [1, 0.8, 0.3, 1],
                                                                    "roughnessFactor": 0.3},
                           "emissiveFactor": [0.2, 0.1, 0]}]
    a, b = quad(g, 0.8), box(g, 0.3)
    a["material"], b["material"] = 0, 1
    t = g.accessor(np.array([0.0, 1.0]), "SCALAR", minmax=True)
    g.doc["meshes"] = [{"primitives": [a, b]}]
    g.doc["nodes"] = [{"mesh": 0, "children": [1]}, {"mesh": 0, "translation": [0.5, 0.5, 0], "scale": [0.5] * 3}]
    g.doc["animations"] = [{"samplers": [{"input": t, "output": g.accessor(np.array([[0, 0, 0], [0, 1, 0]], float),
                                                                         "VEC3")}],
                            "channels": [{"sampler": 0, "target": {"node": 1, "path": "translation"}}]}]
    g.doc["scenes"] = [{"nodes": [0]}]
    return g.save(folder / name, external_bin=external)


def write_inputs(folder):
    folder.mkdir(parents=True, exist_ok=True)
    model(folder, "m.glb")
    model(folder, "e.gltf", external=True)
    (folder / "m.obj").write_text(OBJ)
    (folder / "m.mtl").write_text(MTL)
    (folder / "m.ply").write_text(PLY)
    scene = {
        "camera": {"center": [0, 1.5, 4], "look_at": [0, 0, 0], "fov": 45},
        "image": {"width": 8, "height": 6, "spp": 1},
        "background": {"color": [0.2, 0.2, 0.2]},
        "lights": [{"type": "point", "position": [2, 3, 4], "color": [1, 1, 1]}],
        "objects": [
            {"type": "gltf", "file": "m.glb", "animation": 0, "time": 0.5, "transform": [{"translate": [-1, 0, 0]}]},
            {"type": "gltf", "file": "e.gltf", "transform": [{"translate": [1, 0, 0]}]},
            {"type": "mesh", "file": "m.obj", "transform": [{"translate": [0, -1, 0]}]},
            {"type": "mesh", "file": "m.ply", "transform": [{"translate": [0, -1.5, 0]}]},
        ],
    }
    (folder / "scene.json").write_text(json.dumps(scene, indent=1))
    return folder


READERS = {
    # name: (file mutated, scene rendered, mutation)
    "glb_bytes": ("m.glb", "scene.json", "bytes"),
    "glb_direct_bytes": ("m.glb", "m.glb", "bytes"),
    "gltf_json_bytes": ("e.gltf", "scene.json", "bytes"),
    "gltf_json_numbers": ("e.gltf", "e.gltf", "numbers"),
    "gltf_bin_bytes": ("e.bin", "scene.json", "bytes"),
    "mtl_bytes": ("m.mtl", "scene.json", "bytes"),
    "mtl_numbers": ("m.mtl", "scene.json", "numbers"),
    "obj_with_mtl_numbers": ("m.obj", "scene.json", "numbers"),
    "ply_ascii_numbers": ("m.ply", "scene.json", "numbers"),
    "ply_ascii_bytes": ("m.ply", "scene.json", "bytes"),
}


def test_the_inputs_render(tmp_path, capsys, warm):  # noqa: F811
    folder = write_inputs(tmp_path / "in")
    for scene in ("scene.json", "m.glb", "e.gltf"):
        out = tmp_path / "out" / "image.pfm"
        status, err = run_case(capsys, tmp_path, render_argv(folder, scene, out, "path", ["--size", "8", "6"]),
                               [scene], out, scene)
        assert status == 0, err


@pytest.mark.parametrize("reader", sorted(READERS))
def test_fuzz_model_reader(reader, tmp_path, capsys, warm):  # noqa: F811
    target, scene, how = READERS[reader]
    folder = write_inputs(tmp_path / "in")
    original = (folder / target).read_bytes()
    rng = random.Random(f"{reader}-{CASES}")
    statuses = []
    for case in range(CASES):
        if how == "bytes":
            data = mutate_bytes(original, rng)
        else:
            data = mutate_numbers(original.decode(), rng).encode()
        (folder / target).write_bytes(data)
        out = tmp_path / "out" / "image.pfm"
        integrator = rng.choice(["whitted", "path"])
        argv = render_argv(folder, scene, out, integrator, ["--size", "8", "6", "--spp", "1"])
        named = [target, scene] + (["e.gltf"] if target == "e.bin" else [])   # a buffer's errors name its .gltf
        status, _ = run_case(capsys, tmp_path, argv, named, out, f"{reader} case {case}: {data[:80]!r}")
        statuses.append(status)
    assert statuses.count(2) + statuses.count(1) > 0        # the mutations did provoke refusals
