"""Hostile input for ``python -m skinning``: mutated .skel, .attach, .obj, pose and
animation JSON and glTF files, hostile option values, run in-process through
``skinning.cli.main``; the examples of the hostile-input issue as regression tests.
See tests/hostile.py for what is asserted. ``HOSTILE_CASES=5000`` runs longer."""
import base64
import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO, SHARED
from hostile import (Tally, cases, check, mutate_bytes, mutate_json, rng_for, run_main,
                     sentinel_outputs, snapshot)

import skinning as sk
from skinning.cli import main

FIG = REPO / "scenes" / "assets" / "skinning"


def tube(rings=5, sides=6, height=2.0, radius=0.2):
    """A closed-sided tube along +y: vertices (rings*sides, 3), faces, and weights on
    joints 1 and 2 blending linearly with the height."""
    v, f = [], []
    for r in range(rings):
        y = height * r / (rings - 1)
        for s in range(sides):
            a = 2 * np.pi * s / sides
            v.append((radius * np.cos(a), y, radius * np.sin(a)))
    for r in range(rings - 1):
        for s in range(sides):
            a, b = r * sides + s, r * sides + (s + 1) % sides
            c, d = a + sides, b + sides
            f += [(a, d, b), (a, c, d)]
    v = np.array(v)
    w2 = np.round(v[:, 1] / height, 4)
    return v, np.array(f), np.stack([1 - w2, w2], axis=1)


SKEL = "0 0 0 -1\n0 0.5 0 0\n0 1 0 1\n"
V, F, W = tube()
OBJ = "".join(f"v {x:.5f} {y:.5f} {z:.5f}\n" for x, y, z in V) + \
    "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in F)
ATTACH = "".join(f"{a:.4f} {b:.4f}\n" for a, b in W)
POSE = json.dumps({"units": "degrees", "rotations": {"1": [0, 0, 30],
                                                     "joint2": {"axis": [1, 0, 0], "angle": 20},
                                                     "0": {"wxyz": [1, 0, 0.1, 0]}},
                   "translations": {"0": [0, 0.1, 0]}, "scales": {"2": 1.1}}, indent=1)
ANIMATION = json.dumps({"units": "degrees", "interpolation": "linear", "keyframes": [
    {"time": 0, "rotations": {"1": [0, 0, 0]}, "translations": {"0": [0, 0, 0]}},
    {"time": 1, "rotations": {"1": [0, 0, 45], "2": {"xyzw": [0, 0, 0.2, 1]}}},
    {"time": 2, "rotations": {"1": [0, 0, 0]}, "scales": {"2": [1, 1.2, 1]}}]}, indent=1)


def gltf_text():
    """A small skinned glTF (two joints under a root node, the tube, one animation),
    buffers embedded as a base64 data URI."""
    nv = len(V)
    pos = V.astype("<f4")
    nrm = sk.vertex_normals(V, F).astype("<f4")
    joints = np.tile(np.array([0, 1, 0, 0], "<u2"), (nv, 1))
    weights = np.zeros((nv, 4), "<f4")
    weights[:, :2] = W / W.sum(axis=1, keepdims=True)
    idx = F.astype("<u2").ravel()
    ibm = np.stack([np.eye(4), np.eye(4)])
    ibm[0, 3, 1] = -0.5                   # column-major storage: translation in row 3
    ibm[1, 3, 1] = -1.5
    ibm = ibm.astype("<f4")
    times = np.array([0, 1, 2], "<f4")
    rots = np.array([[0, 0, 0, 1], [0, 0, 0.3826834, 0.9238795], [0, 0, 0, 1]], "<f4")
    chunks = [pos, nrm, joints, weights, idx, ibm, times, rots]
    blob, views, offset = b"", [], 0
    for c in chunks:
        data = c.tobytes()
        data += b"\0" * (-len(data) % 4)
        views.append({"buffer": 0, "byteOffset": offset, "byteLength": c.nbytes})
        blob += data
        offset += len(data)
    acc = [
        {"bufferView": 0, "componentType": 5126, "count": nv, "type": "VEC3"},
        {"bufferView": 1, "componentType": 5126, "count": nv, "type": "VEC3"},
        {"bufferView": 2, "componentType": 5123, "count": nv, "type": "VEC4"},
        {"bufferView": 3, "componentType": 5126, "count": nv, "type": "VEC4"},
        {"bufferView": 4, "componentType": 5123, "count": idx.size, "type": "SCALAR"},
        {"bufferView": 5, "componentType": 5126, "count": 2, "type": "MAT4"},
        {"bufferView": 6, "componentType": 5126, "count": 3, "type": "SCALAR"},
        {"bufferView": 7, "componentType": 5126, "count": 3, "type": "VEC4"},
    ]
    doc = {
        "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0, 1]}],
        "nodes": [{"name": "body", "mesh": 0, "skin": 0},
                  {"name": "root", "translation": [0, 0.5, 0], "children": [2]},
                  {"name": "upper", "rotation": [0, 0, 0, 1], "children": [3]},
                  {"name": "lower", "translation": [0, 1, 0], "scale": [1, 1, 1]}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "NORMAL": 1, "JOINTS_0": 2,
                                                   "WEIGHTS_0": 3}, "indices": 4}]}],
        "skins": [{"joints": [2, 3], "inverseBindMatrices": 5}],
        "animations": [{"name": "bend", "channels": [
            {"sampler": 0, "target": {"node": 3, "path": "rotation"}}],
            "samplers": [{"input": 6, "output": 7, "interpolation": "LINEAR"}]}],
        "accessors": acc, "bufferViews": views,
        "buffers": [{"byteLength": len(blob), "uri": "data:application/octet-stream;base64,"
                     + base64.b64encode(blob).decode()}],
    }
    return json.dumps(doc, indent=1)


GLTF = gltf_text()


def glb_bytes():
    """The same character as a binary glTF (.glb): JSON chunk plus BIN chunk."""
    import struct
    doc = json.loads(GLTF)
    blob = base64.b64decode(doc["buffers"][0]["uri"].split(",", 1)[1])
    doc["buffers"] = [{"byteLength": len(blob)}]
    text = json.dumps(doc).encode()
    text += b" " * (-len(text) % 4)
    blob += b"\0" * (-len(blob) % 4)
    body = struct.pack("<I4s", len(text), b"JSON") + text + struct.pack("<I4s", len(blob),
                                                                        b"BIN\0") + blob
    return struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body


def write_inputs(work):
    texts = {"m.skel": SKEL, "m.attach": ATTACH, "m.obj": OBJ, "pose.json": POSE,
             "anim.json": ANIMATION, "m.gltf": GLTF}
    for name, text in texts.items():
        (work / name).write_text(text)
    (work / "m.glb").write_bytes(glb_bytes())
    return {name: work / name for name in [*texts, "m.glb"]}


def course_args(p):
    return ["--skel", p["m.skel"], "--attach", p["m.attach"], "--obj", p["m.obj"]]


def seed_argv(seed, p, work, i):
    """The command run on a mutation of input ``seed`` (alternating info and export)."""
    export = ["export", "-o", work / "out.obj"] if i % 2 else ["info"]
    if seed in ("m.gltf", "m.glb"):
        extra = ["--animation", "0", "--time", "0.7"] if i % 3 else []
        return export + ["--gltf", p[seed]] + extra
    extra = []
    if seed == "pose.json":
        extra = ["--pose", p["pose.json"]]
    elif seed == "anim.json":
        extra = ["--animation", p["anim.json"], "--time", str(0.3 * (i % 8))]
    elif i % 4 == 3:
        extra = ["--skeleton"] if export[0] == "export" else []
    return export + course_args(p) + extra


SEEDS = {"m.skel": 60, "m.attach": 60, "m.obj": 70, "pose.json": 90, "anim.json": 80,
         "m.gltf": 150, "m.glb": 40}


@pytest.mark.parametrize("seed", list(SEEDS))
def test_mutated_files(seed, tmp_path, capsys):
    work = tmp_path / "work"
    work.mkdir()
    p = write_inputs(work)
    data = p[seed].read_bytes()
    rng = rng_for("skinning", seed)
    mutate = mutate_json if seed.endswith((".json", ".gltf")) else mutate_bytes
    tally = Tally(f"skinning {seed}")
    for i in range(cases(SEEDS[seed])):
        kind, bad = mutate(data, rng)
        p[seed].write_bytes(bad)
        sentinel_outputs(work, ["out.obj"])
        argv = seed_argv(seed, p, work, i)
        before = snapshot(work)
        r = run_main(main, argv, capsys)
        check(r, "skinning", before=before, after=snapshot(work), names=[p[seed]],
              outputs=[work / "out.obj"], label=f"{seed} case {i} ({kind}): {argv}")
        tally.add(r.status)
    tally.done()


def test_mutated_figure_files(tmp_path, capsys):
    """Mutations of the repository's figure (course triple and walk animation)."""
    work = tmp_path / "work"
    work.mkdir()
    names = {"skel": "figure.skel", "attach": "figure.attach", "obj": "figure.obj",
             "anim": "figure_walk.json"}
    for n in names.values():
        (work / n).write_bytes((FIG / n).read_bytes())
    rng = rng_for("skinning", "figure")
    tally = Tally("skinning figure")
    for i in range(cases(16)):
        key = ["skel", "attach", "obj", "anim"][i % 4]
        target = work / names[key]
        original = (FIG / names[key]).read_bytes()
        kind, bad = (mutate_json if key == "anim" else mutate_bytes)(original, rng)
        target.write_bytes(bad)
        sentinel_outputs(work, ["out.obj"])
        argv = ["export", "-o", work / "out.obj", "--skel", work / names["skel"],
                "--attach", work / names["attach"], "--obj", work / names["obj"],
                "--animation", work / names["anim"], "--time", "0.6"]
        before = snapshot(work)
        r = run_main(main, argv, capsys)
        check(r, "skinning", before=before, after=snapshot(work), names=[target],
              outputs=[work / "out.obj"], label=f"figure case {i} ({key}, {kind})")
        tally.add(r.status)
        target.write_bytes(original)
    tally.done(need_accepted=False)


def test_mutated_shared_gltf(tmp_path, capsys):
    src = SHARED / "assets" / "simple_skin.gltf"
    if not src.exists():
        pytest.skip(f"{src} not present (../shared is optional)")
    work = tmp_path / "work"
    work.mkdir()
    target = work / "simple.gltf"
    rng = rng_for("skinning", "simple_skin")
    tally = Tally("skinning simple_skin.gltf")
    for i in range(cases(40)):
        kind, bad = mutate_json(src.read_bytes(), rng)
        target.write_bytes(bad)
        sentinel_outputs(work, ["out.obj"])
        argv = ["export", "-o", work / "out.obj", "--gltf", target, "--animation", "0",
                "--time", "1.5"]
        before = snapshot(work)
        r = run_main(main, argv, capsys)
        check(r, "skinning", before=before, after=snapshot(work), names=[target],
              outputs=[work / "out.obj"], label=f"simple_skin case {i} ({kind})")
        tally.add(r.status)
    tally.done()


# ------------------------------------------------------------------ options

def test_hostile_options(tmp_path, capsys):
    work = tmp_path / "work"
    work.mkdir()
    (work / "sub").mkdir()
    p = write_inputs(work)
    (work / "binary.json").write_bytes(b"\xff\xfe{\x00}")
    pools = {
        "--time": ["0", "0.5", "-1", "1e308", "nan", "inf", "-inf", "abc"],
        "--joint-radius": ["0.05", "0", "-1", "nan", "inf", "1e-300", "1e300", "x"],
        "--bone-radius": ["0.02", "0", "-0.5", "nan", "1e308"],
        "--yaw": ["0", "30", "nan", "inf", "1e308", "-720"],
        "--alpha": ["0", "0.5", "1", "2", "-0.1", "nan"],
        "--size": ["16", "64", "15", "100000", "0", "-5", "1e3", "9" * 30],
        "--animation": ["0", "1", "bend", "nope", "9" * 30, "-1", p["anim.json"],
                        work / "missing.json", work / "binary.json", work / "sub"],
        "-o": {"export": [work / "out.obj", work / "out.png", work / "out", work / "sub",
                          work / "new" / "out.obj", work / "m.obj" / "x.obj",
                          "/proc/hostile.obj"],
               "preview": [work / "out.png", work / "out.obj", work / "sub",
                           work / "new" / "out.png"]},
    }
    models = [course_args(p), ["--gltf", p["m.gltf"]], ["--gltf", p["m.gltf"]] + course_args(p),
              ["--skel", p["m.skel"]], ["--gltf", work / "missing.gltf"],
              ["--gltf", work / "binary.json"], ["--gltf", "/proc/self/mem"], []]
    rng = rng_for("skinning", "options")
    tally = Tally("skinning options")
    for i in range(cases(90)):
        command = rng.choice(["info", "export", "export", "export", "preview"])
        argv = [command] + rng.choice(models[:3] if rng.random() < 0.7 else models)
        allowed = {"info": ["--time", "--animation"],
                   "export": ["--time", "--animation", "--joint-radius", "--bone-radius"],
                   "preview": ["--time", "--animation", "--joint-radius", "--bone-radius",
                               "--yaw", "--alpha", "--size"]}[command]
        for opt in rng.sample(allowed, k=rng.randint(0, len(allowed))):
            argv += [opt, rng.choice(pools[opt])]
        if command != "info":
            argv += ["-o", rng.choice(pools["-o"][command])]
        if command == "preview" and "--size" not in argv:
            argv += ["--size", "32"]
        if command == "export" and rng.random() < 0.3:
            argv.append("--skeleton")
        if rng.random() < 0.1:
            argv += ["--pose", rng.choice([p["pose.json"], work / "binary.json"])]
        sentinel_outputs(work, ["out.obj", "out.png"])
        before = snapshot(work)
        r = run_main(main, argv, capsys)
        check(r, "skinning", before=before, after=snapshot(work),
              outputs=[work / "out.obj", work / "out.png", work / "new" / "out.obj",
                       work / "new" / "out.png"], label=f"options case {i}: {argv}")
        tally.add(r.status)
    tally.done()


# ------------------------------------------------------------------ the examples

@pytest.fixture
def inputs(tmp_path):
    return write_inputs(tmp_path)


def one_line(r):
    assert "Traceback" not in r.err and len(r.err.splitlines()) == 1, r.err
    return r.err


def test_nan_joint_radius_is_refused(inputs, tmp_path, capsys):
    out = tmp_path / "o.obj"
    r = run_main(main, ["export", *course_args(inputs), "--skeleton", "--joint-radius", "nan",
                        "-o", out], capsys)
    assert r.status == 2 and one_line(r) == \
        "skinning: error: --joint-radius: must be a finite number, got nan\n"
    assert not out.exists()
    with pytest.raises(sk.SkinningError, match="joint_radius must be a finite number > 0"):
        sk.skeleton_mesh(np.zeros((2, 3)), [-1, 0], float("nan"))


def test_overflowing_pose_is_refused_not_written(inputs, tmp_path, capsys):
    pose = tmp_path / "big.json"
    pose.write_text(json.dumps({"translations": {"0": [1e308, 1e308, 0]},
                                "scales": {"1": 1e300}}))
    out = tmp_path / "o.obj"
    r = run_main(main, ["export", *course_args(inputs), "--pose", pose, "-o", out], capsys)
    assert r.status == 2 and "the posed mesh is not finite at vertex" in one_line(r)
    assert str(pose) in r.err and not out.exists()


def test_gltf_nan_position_names_the_accessor(tmp_path, capsys):
    doc = json.loads(GLTF)
    blob = bytearray(base64.b64decode(doc["buffers"][0]["uri"].split(",")[1]))
    blob[12:16] = np.array([np.nan], "<f4").tobytes()          # vertex 1, x
    doc["buffers"][0]["uri"] = "data:application/octet-stream;base64," + \
        base64.b64encode(bytes(blob)).decode()
    p = tmp_path / "nan.gltf"
    p.write_text(json.dumps(doc))
    r = run_main(main, ["export", "--gltf", p, "-o", tmp_path / "o.obj"], capsys)
    assert r.status == 2
    assert one_line(r).startswith(f"skinning: error: {p}: accessors[0]: non-finite number in "
                                  "element 1 (nan, 0, 0.173205), used as "), r.err
    assert r.err.endswith("used as meshes[0].primitives[0].attributes.POSITION\n"), r.err
    assert not (tmp_path / "o.obj").exists()


def test_binary_pose_file_names_the_file(inputs, tmp_path, capsys):
    pose = tmp_path / "pose.bin.json"
    pose.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    r = run_main(main, ["info", *course_args(inputs), "--pose", pose], capsys)
    assert r.status == 2
    # the wording is userio.textio's; it names the file and the first bad byte
    assert one_line(r).startswith(f"skinning: error: {pose}: ") and "byte 0x89" in r.err


def test_preview_options_are_limited(inputs, tmp_path, capsys):
    out = tmp_path / "p.png"
    for option, value, message in (("--size", "100000", "--size: must be <= 4096, got 100000"),
                                   ("--alpha", "2", "--alpha: must be <= 1.0, got 2"),
                                   ("--yaw", "nan", "--yaw: must be a finite number, got nan"),
                                   ("--time", "inf", "--time: must be a finite number")):
        r = run_main(main, ["preview", *course_args(inputs), option, value, "-o", out], capsys)
        assert r.status == 2 and one_line(r).startswith(f"skinning: error: {message}"), r.err
    assert not out.exists()


def test_deeply_nested_pose_json_is_one_line(inputs, tmp_path, capsys):
    pose = tmp_path / "deep.json"
    pose.write_text('{"rotations": {"1": ' + "[" * 100_000 + "]" * 100_000 + "}}")
    r = run_main(main, ["info", *course_args(inputs), "--pose", pose], capsys)
    assert one_line(r) == f"skinning: error: {pose}: invalid JSON: nested too deeply\n"
    pose.write_text('{"rotations": {"1": [' + "9" * 400 + ", 0, 0]}}")
    r = run_main(main, ["info", *course_args(inputs), "--pose", pose], capsys)
    assert one_line(r).startswith(f"skinning: error: {pose}: rotations.1: expected 3 finite "
                                  "numbers, got [9999"), r.err


def chain_gltf(depth, cycle=False):
    """A glTF whose skin is a chain of ``depth`` joints (a deep node hierarchy)."""
    doc = json.loads(GLTF)
    first = len(doc["nodes"])
    doc["nodes"][3]["children"] = [first]
    for k in range(depth):
        node = {"name": f"j{k}", "translation": [0, 0.001, 0]}
        if k + 1 < depth:
            node["children"] = [first + k + 1]
        doc["nodes"].append(node)
    if cycle:
        doc["nodes"][-1]["children"] = [2]
    doc["skins"][0]["joints"] = [2, 3] + list(range(first, first + depth))
    del doc["skins"][0]["inverseBindMatrices"]
    return json.dumps(doc)


def test_deep_node_hierarchy_is_walked_without_recursion(tmp_path, capsys):
    p = tmp_path / "deep.gltf"
    depth = 5 * sys.getrecursionlimit()          # pygltflib's parsing costs 0.6 ms a node
    p.write_text(chain_gltf(depth))
    model = sk.load_gltf(p)
    assert model.skeleton.num_joints == depth + 2
    assert list(model.skeleton.parents[:4]) == [-1, 0, 1, 2]
    np.testing.assert_array_equal(model.skeleton.parents[2:], np.arange(1, depth + 1))
    world = model.skeleton.world_matrices()
    assert world[-1, 1, 3] == pytest.approx(0.5 + 1.0 + depth * 0.001)
    p.write_text(chain_gltf(50, cycle=True))
    r = run_main(main, ["info", "--gltf", p], capsys)
    assert r.status == 2 and one_line(r).startswith(f"skinning: error: {p}: nodes"), r.err


def test_failed_export_keeps_the_old_file(inputs, tmp_path, capsys):
    out = tmp_path / "o.obj"
    out.write_text("old\n")
    pose = tmp_path / "bad.json"
    pose.write_text('{"rotations": {"99": [0, 0, 1]}}')
    r = run_main(main, ["export", *course_args(inputs), "--pose", pose, "-o", out], capsys)
    assert r.status == 2 and out.read_text() == "old\n"
    assert str(pose) in one_line(r) and "unknown joint '99'" in r.err


def test_help_shows_defaults_and_exit_codes(capsys):
    with pytest.raises(SystemExit) as e:
        main(["preview", "--help"])
    assert e.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: 600)" in text and "(default: 1.0)" in text and "(default: 0.0)" in text
    assert "1 I/O failure" in text and "130 interrupted" in text


def test_module_entry_point(tmp_path):
    p = tmp_path / "bad.skel"
    p.write_text("0 0 0 -1\n0 nan 0 0\n")
    r = subprocess.run([sys.executable, "-m", "skinning", "info", "--skel", str(p),
                        "--attach", str(p), "--obj", str(p)], capture_output=True, text=True,
                       cwd=REPO)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == f"skinning: error: {p}: line 2: translation: numbers must be finite\n"
