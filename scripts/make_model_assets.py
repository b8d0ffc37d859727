"""Write the small model files the example scenes use (deterministic; rerun to regenerate):

- scenes/assets/gltf/still_life.gltf + .bin: a node hierarchy (TRS and matrix nodes, a mesh
  used by two nodes, a mesh with two primitives), six materials (textured diffuse, rough
  gold, mirror chrome, red, glass via KHR_materials_transmission/ior, an emissive lamp
  with KHR_materials_emissive_strength), a KHR_lights_punctual point light, a camera;
- scenes/assets/gltf/swing.glb: a pendulum whose arm rotates (LINEAR) and whose bob
  steps up the arm (STEP) in animation "swing";
- scenes/assets/mtl/shapes.obj + shapes.mtl: o-groups with Phong, mirror, glass,
  dissolve, textured (map_Kd -s) and emissive (Ke) MTL materials.

    python scripts/make_model_assets.py
"""
import math
import pathlib
import sys

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from gltf_builder import FLOAT, USHORT, GltfBuilder, box, quad  # noqa: E402


def quat_y(deg):
    """glTF quaternion [x, y, z, w] of a rotation by ``deg`` about +y."""
    h = math.radians(deg) / 2
    return [0.0, math.sin(h), 0.0, math.cos(h)]


def quat_x(deg):
    h = math.radians(deg) / 2
    return [math.sin(h), 0.0, 0.0, math.cos(h)]


def shifted_box(g, half, centre):
    """A box primitive of half size ``half`` centred at ``centre`` (mesh space)."""
    prim = box(g, half)
    acc = g.doc["accessors"][prim["attributes"]["POSITION"]]
    bv = g.doc["bufferViews"][acc["bufferView"]]
    p = np.frombuffer(bytes(g.data[bv["byteOffset"]:bv["byteOffset"] + bv["byteLength"]]), "<f4").reshape(-1, 3)
    prim["attributes"]["POSITION"] = g.accessor(p + np.asarray(centre, np.float32), "VEC3", minmax=True)
    return prim


def still_life(path):
    g = GltfBuilder()
    k = np.indices((8, 8)).sum(axis=0) % 2
    checker = np.where(k[..., None] == 1, [230, 230, 220], [60, 70, 90]).astype(np.uint8)
    tex = g.texture(g.png_image(np.kron(checker, np.ones((4, 4, 1), np.uint8))))
    g.doc["extensionsUsed"] = ["KHR_materials_transmission", "KHR_materials_ior",
                               "KHR_materials_emissive_strength", "KHR_lights_punctual"]
    g.doc["materials"] = [
        {"name": "Checker", "pbrMetallicRoughness": {"baseColorTexture": {"index": tex},
                                                     "baseColorFactor": [0.9, 0.9, 1.0, 1.0],
                                                     "metallicFactor": 0.0}},
        {"name": "Gold", "pbrMetallicRoughness": {"baseColorFactor": [1.0, 0.78, 0.34, 1.0],
                                                  "metallicFactor": 1.0, "roughnessFactor": 0.45}},
        {"name": "Chrome", "pbrMetallicRoughness": {"baseColorFactor": [0.95, 0.95, 0.95, 1.0],
                                                    "metallicFactor": 1.0, "roughnessFactor": 0.0}},
        {"name": "Red", "pbrMetallicRoughness": {"baseColorFactor": [0.7, 0.08, 0.06, 1.0],
                                                 "metallicFactor": 0.0, "roughnessFactor": 0.8}},
        {"name": "Glass", "pbrMetallicRoughness": {"metallicFactor": 0.0, "roughnessFactor": 0.0},
         "extensions": {"KHR_materials_transmission": {"transmissionFactor": 1.0},
                        "KHR_materials_ior": {"ior": 1.5}}},
        {"name": "Lamp", "pbrMetallicRoughness": {"baseColorFactor": [0.0, 0.0, 0.0, 1.0]},
         "emissiveFactor": [1.0, 0.9, 0.75],
         "extensions": {"KHR_materials_emissive_strength": {"emissiveStrength": 6.0}}},
    ]
    floor = quad(g, 2.5)
    floor["material"] = 0
    cube = box(g, 0.3)
    cube["material"] = 3
    gold = shifted_box(g, 0.25, [0.0, 0.25, 0.0])
    gold["material"] = 1
    chrome = shifted_box(g, 0.12, [0.0, 0.62, 0.0])
    chrome["material"] = 2
    glass = box(g, 0.22)
    glass["material"] = 4
    lamp = quad(g, 0.6, uv=False)
    lamp["material"] = 5
    g.doc["meshes"] = [{"name": "floor", "primitives": [floor]},
                       {"name": "cube", "primitives": [cube]},
                       {"name": "gold_and_chrome", "primitives": [gold, chrome]},
                       {"name": "glass", "primitives": [glass]},
                       {"name": "lamp", "primitives": [lamp]}]
    s = 0.8                                   # a matrix node: uniform scale 0.8, then a move
    g.doc["nodes"] = [
        {"name": "root", "children": [1, 2, 6, 7, 8]},
        {"name": "floor", "mesh": 0, "rotation": quat_x(-90)},
        {"name": "shelf", "rotation": quat_y(25), "translation": [0.0, 0.0, -0.2], "children": [3, 4, 5]},
        {"name": "red cube", "mesh": 1, "translation": [-0.85, 0.3, 0.0], "rotation": quat_y(15)},
        {"name": "red cube (small)", "mesh": 1,
         "matrix": [s * 0.5, 0, 0, 0, 0, s * 0.5, 0, 0, 0, 0, s * 0.5, 0, -0.35, 0.12, 0.55, 1]},
        {"name": "trophy", "mesh": 2, "translation": [0.1, 0.0, 0.1]},
        {"name": "glass", "mesh": 3, "translation": [0.9, 0.22, 0.35], "rotation": quat_y(-30)},
        {"name": "lamp", "mesh": 4, "translation": [0.0, 2.2, 0.0], "rotation": quat_x(90)},
        {"name": "camera", "camera": 0, "translation": [0.0, 1.6, 4.2], "rotation": quat_x(-18)},
        {"name": "bulb", "translation": [1.5, 2.5, 2.0], "extensions": {"KHR_lights_punctual": {"light": 0}}},
    ]
    g.doc["nodes"][0]["children"].append(9)
    g.doc["cameras"] = [{"type": "perspective", "perspective": {"yfov": math.radians(40), "aspectRatio": 1.5,
                                                                "znear": 0.05}}]
    g.doc["extensions"] = {"KHR_lights_punctual": {"lights": [
        {"type": "point", "color": [1.0, 0.95, 0.9], "intensity": 12.0}]}}
    g.doc["scenes"] = [{"nodes": [0]}]
    g.doc["scene"] = 0
    return g.save(path, external_bin=True)


def swing(path):
    """A pivot at (0, 2, 0) swinging about z; the arm is a thin box, the bob a cube that
    jumps up the arm at t = 1 s and back at t = 2 s (STEP)."""
    g = GltfBuilder()
    g.doc["materials"] = [
        {"name": "Steel", "pbrMetallicRoughness": {"baseColorFactor": [0.8, 0.8, 0.85, 1.0],
                                                   "metallicFactor": 1.0, "roughnessFactor": 0.3}},
        {"name": "Blue", "pbrMetallicRoughness": {"baseColorFactor": [0.1, 0.25, 0.8, 1.0],
                                                  "metallicFactor": 0.0}},
        {"name": "Floor", "pbrMetallicRoughness": {"baseColorFactor": [0.6, 0.6, 0.6, 1.0],
                                                   "metallicFactor": 0.0}},
    ]
    arm = box(g, 0.04)                        # a thin rod from the pivot down to y = -1.2:
    acc = g.doc["accessors"][arm["attributes"]["POSITION"]]      # stretched to y in [-0.6, 0]
    bv = g.doc["bufferViews"][acc["bufferView"]]
    p = np.frombuffer(bytes(g.data[bv["byteOffset"]:bv["byteOffset"] + bv["byteLength"]]), "<f4").reshape(-1, 3)
    arm["attributes"]["POSITION"] = g.accessor(p * [1.0, 7.5, 1.0] - [0.0, 0.3, 0.0], "VEC3", minmax=True)
    arm["material"] = 0                       # ... and by its node's scale to [-1.2, 0]
    bob = box(g, 0.15)
    bob["material"] = 1
    floor = quad(g, 2.0, uv=False)
    floor["material"] = 2
    g.doc["meshes"] = [{"name": "arm", "primitives": [arm]}, {"name": "bob", "primitives": [bob]},
                       {"name": "floor", "primitives": [floor]}]
    g.doc["nodes"] = [
        {"name": "pivot", "translation": [0.0, 2.0, 0.0], "children": [1, 2]},
        {"name": "arm", "mesh": 0, "scale": [1.0, 2.0, 1.0]},
        {"name": "bob", "mesh": 1, "translation": [0.0, -1.2, 0.0]},
        {"name": "floor", "mesh": 2, "rotation": quat_x(-90)},
    ]
    times = np.array([0.0, 1.0, 2.0])
    angles = [-40.0, 40.0, -40.0]
    rot = np.array([[0.0, 0.0, math.sin(math.radians(a) / 2), math.cos(math.radians(a) / 2)] for a in angles])
    steps = np.array([[0.0, -1.2, 0.0], [0.0, -0.85, 0.0], [0.0, -1.2, 0.0]])
    t_in = g.accessor(times, "SCALAR", FLOAT, minmax=True)
    g.doc["animations"] = [{"name": "swing", "samplers": [
        {"input": t_in, "output": g.accessor(rot, "VEC4"), "interpolation": "LINEAR"},
        {"input": t_in, "output": g.accessor(steps, "VEC3"), "interpolation": "STEP"}],
        "channels": [{"sampler": 0, "target": {"node": 0, "path": "rotation"}},
                     {"sampler": 1, "target": {"node": 2, "path": "translation"}}]}]
    g.doc["scenes"] = [{"nodes": [0, 3]}]
    return g.save(path)


OBJ = """# shapes.obj: one object per o-group, materials from shapes.mtl
mtllib shapes.mtl
v -1 0 -1
v 1 0 -1
v 1 0 1
v -1 0 1
vt 0 0
vt 1 0
vt 1 1
vt 0 1
o floor
usemtl tiles
f 4/1 3/2 2/3 1/4
o red_cube
usemtl red_plastic
{cube}
o mirror
usemtl mirror
{mirror}
o glass
usemtl glass
{glass}
o veil
usemtl veil
{veil}
o lamp
usemtl lamp
{lamp}
"""

MTL = """# shapes.mtl (see docs/scene-format.md for how each statement is read)
newmtl tiles
Kd 0.9 0.9 0.9
illum 1
map_Kd -s 3 3 1 ../textures/tiles.png

newmtl red_plastic
Kd 0.7 0.1 0.08
Ks 0.5 0.5 0.5
Ns 60
illum 2

newmtl mirror
Kd 0.05 0.05 0.05
Ks 0.85 0.85 0.85
Ns 200
illum 3

newmtl glass
Kd 0 0 0
Ks 1 1 1
Ns 300
Ni 1.5
d 0.05
illum 7

newmtl veil
Kd 0.2 0.5 0.9
d 0.5
illum 1

newmtl lamp
Kd 0 0 0
Ke 4 3.6 3
illum 0
"""


def obj_box(lo, hi, vbase):
    """OBJ 'v' and 'f' lines of a box (quads, outward) after ``vbase`` earlier vertices."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    corners = [[(hi if (k >> a) & 1 else lo)[a] for a in range(3)] for k in range(8)]
    quads = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    lines = [f"v {x:g} {y:g} {z:g}" for x, y, z in corners]
    lines += ["f " + " ".join(str(vbase + i + 1) for i in q) for q in quads]
    return "\n".join(lines), vbase + 8


def shapes(folder):
    n = 4
    cube, n = obj_box([-0.9, 0.0, -0.3], [-0.3, 0.6, 0.3], n)
    mirror, n = obj_box([0.2, 0.0, -0.8], [0.9, 1.0, -0.7], n)
    glass, n = obj_box([0.1, 0.0, 0.2], [0.6, 0.5, 0.7], n)
    veil, n = obj_box([-0.5, 0.0, 0.5], [-0.1, 0.35, 0.55], n)
    lamp, n = obj_box([-0.4, 1.6, -0.4], [0.4, 1.62, 0.4], n)
    (folder / "shapes.obj").write_text(OBJ.format(cube=cube, mirror=mirror, glass=glass, veil=veil, lamp=lamp))
    (folder / "shapes.mtl").write_text(MTL)


def main():
    gltf_dir = REPO / "scenes" / "assets" / "gltf"
    mtl_dir = REPO / "scenes" / "assets" / "mtl"
    gltf_dir.mkdir(parents=True, exist_ok=True)
    mtl_dir.mkdir(parents=True, exist_ok=True)
    for p in (still_life(gltf_dir / "still_life.gltf"), swing(gltf_dir / "swing.glb")):
        print(f"wrote {p}")
    shapes(mtl_dir)
    print(f"wrote {mtl_dir / 'shapes.obj'}, {mtl_dir / 'shapes.mtl'}")


if __name__ == "__main__":
    main()
