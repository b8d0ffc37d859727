"""curves: .spline / .swp / patch JSON readers, OBJ export, CLI, plots, scene plug-in."""
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from conftest import shared_path

from curves import CurveFileError, mesh, read_patch_json, read_spline, read_swp
from curves.cli import main
from curves.io_spline import format_spline, parse_spline

REPO = pathlib.Path(__file__).resolve().parents[1]

COURSE = {"curve.spline": ("bezier", "curve", 4, 3), "polybezier.spline": ("bezier", "curve", 7, 3),
          "polybspline.spline": ("bspline", "curve", 6, 3),
          "artifact1.spline": ("bezier", "curve", 13, 2),
          "artifact3.spline": ("bezier", "patch", 64, 3), "teapot.spline": ("bezier", "patch", 512, 3)}


@pytest.mark.parametrize("name", sorted(COURSE))
def test_reads_every_course_spline(name):
    sf = read_spline(shared_path("course", "a1", name))
    basis, kind, n, d = COURSE[name]
    assert (sf.basis, sf.kind, sf.points.shape) == (basis, kind, (n, d))
    if kind == "patch":
        assert sf.patches.shape == (n // 16, 4, 4, 3)


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("text, message", [
    ("Bezier curve\n0 0 0\n1 0 0\n2 1 0\n3 1 0\n4 0 0\n",
     "line 6: 5 points: a Bezier curve needs 3n+1 points (4, 7, 10, ...)"),
    ("B-Spline curve\n0 0\n1 0\n2 x\n3 1\n", "line 4: 'x' is not a number"),
    ("Bezier patch\n" + "0 0 0\n" * 3 + "1 2\n", "line 5: expected 3 numbers, got 2"),
    ("Bezier curve\n0 0 0\n1 0\n", "line 3: expected 3 numbers, got 2"),
    ("Hermite curve\n0 0\n", "line 1: unknown header 'Hermite curve'"),
    ("Bezier patch\n" + "0 0 0\n" * 17, "line 18: 17 points: a patch file needs 16 points"),
    ("B-Spline curve\n0 0\n1 1\n2 0\n", "line 4: 3 points: a B-Spline curve needs at least 4"),
    ("# only a comment\n\n", "empty file: no header line"),
    ("Bezier curve\n0 0 nan\n", "line 2: coordinates must be finite"),
])
def test_bad_spline_files_name_file_and_line(tmp_path, text, message):
    p = write(tmp_path, "bad.spline", text)
    with pytest.raises(CurveFileError) as e:
        read_spline(p)
    assert str(e.value) == f"{p}: {message}" or str(e.value).startswith(f"{p}: {message}")
    assert isinstance(e.value, ValueError)


def test_spline_round_trip_and_comments(tmp_path):
    rng = np.random.default_rng(0)
    P = rng.normal(size=(7, 3))
    sf = parse_spline("# comment\n" + format_spline(P, "bspline"))
    np.testing.assert_array_equal(sf.points, P)
    assert sf.basis == "bspline" and list(sf.lines) == list(range(3, 10))
    with pytest.raises(CurveFileError, match="cannot read"):
        read_spline(tmp_path / "missing.spline")


SWP = """\
# a vase, a ring and a coil (grammar of the course's .swp files)
bsp2 prof 8 7
[ 0.3 0 ] [0.6 0.2] [ 0.7 0.6 ] [0.4 1.0] [ 0.35 1.3 ] [ 0.5 1.6 ] [0.55 1.7]
srev vase 24 prof
bez2 loop 6 7
[ 1.0 0.2 ] [ 1.2 0.4 ] [ 1.2 0.8 ] [ 1.0 1.0 ]
[ 0.8 0.8 ] [ 0.8 0.4 ] [ 1.0 0.2 ]
circ c 16 0.1
bsp3 coil 10 6
[ 1 0 0 ] [ 0 1 0.3 ] [ -1 0 0.6 ] [ 0 -1 0.9 ] [ 1 0 1.2 ] [ 0 1 1.5 ]
gcyl tube c coil
gcyl tube2 20 c coil
srev . 12 loop
"""


def test_swp_file_parses_and_builds_meshes(tmp_path):
    swp = read_swp(write(tmp_path, "demo.swp", SWP))
    assert [c.name for c in swp.curves] == ["prof", "loop", "c", "coil"]
    assert [(s.kind, s.name, s.steps) for s in swp.surfaces] == [
        ("srev", "vase", 24), ("gcyl", "tube", None), ("gcyl", "tube2", 20), ("srev", ".", 12)]
    assert swp.curves[3].curve.dim == 3 and swp.curves[0].steps == 8
    meshes = dict(swp.meshes())
    assert mesh.is_watertight(meshes["."].faces)          # closed Bézier profile
    vase = meshes["vase"]
    assert len(vase.vertices) == (4 * 8 + 1) * 24
    assert len(mesh.boundary_edges(vase.faces)) == 2 * 24  # open at top and bottom
    tube, tube2 = meshes["tube"], meshes["tube2"]
    assert len(tube.vertices) == 16 * (3 * 10 + 1) and len(tube2.vertices) == 16 * (3 * 20 + 1)
    for m in meshes.values():
        assert np.all(np.isfinite(m.normals))


@pytest.mark.parametrize("text, message", [
    ("bez2 a 4 5\n[0 0] [1 0] [1 1] [0 1] [0 2]\n",
     "line 1: bez2 'a' has 5 control points; a Bezier curve needs 3n+1"),
    ("bsp2 a 4 4\n[0 0] [1 0] [1 1 2] [0 1]\n", "line 2: control point 3: expected 2 numbers in [ ], got 3"),
    ("bsp2 a x 4\n", "line 1: STEPS: 'x' is not an integer"),
    ("bsp2 a 4 4\n[0 0] [1 0]\n[1 y] [0 1]\n", "line 3: control point 3: 'y' is not a number"),
    ("spline a 4 4\n", "line 1: unknown type 'spline'"),
    ("bsp2 a 4 4\n[0 0] [1 0] [1 1]\n", "line 2: unexpected end of file: expected '[' to start control point 4"),
    ("srev s 10 nothere\n", "line 1: PROFILE 'nothere' is not a curve defined earlier"),
    ("bsp3 a 4 4\n[0 0 0] [1 0 0] [1 1 0] [0 1 0]\nsrev s 10 a\n",
     "line 3: srev 's': PROFILE 'a' must be a 2D curve"),
    ("circ a 8 1\ncirc a 8 2\n", "line 2: name 'a' is already defined on line 1"),
    ("circ a 8 -1\n", "line 1: circ 'a': RADIUS must be > 0"),
    ("circ a 8 1\ngcyl g a\n", "line 2: unexpected end of file: expected SWEEP curve name"),
    ("bsp2 a 4 4\n0 0] [1 0] [1 1] [0 1]\n", "line 2: expected '[' to start control point 1, got '0'"),
])
def test_bad_swp_files_name_file_and_line(tmp_path, text, message):
    p = write(tmp_path, "bad.swp", text)
    with pytest.raises(CurveFileError) as e:
        read_swp(p)
    assert str(e.value).startswith(f"{p}: {message}"), str(e.value)


def test_patch_json_errors(tmp_path):
    p = write(tmp_path, "p.json", json.dumps({"patches": [[[0, 0, 0]] * 15]}))
    with pytest.raises(CurveFileError, match=r"p.json: patches\[0\]: expected 16 points"):
        read_patch_json(p)
    p = write(tmp_path, "q.json", "{\n  \"patches\": [,]\n}")
    with pytest.raises(CurveFileError, match="q.json: line 2: invalid JSON"):
        read_patch_json(p)
    p = write(tmp_path, "r.json", json.dumps({"basis": "nurbs", "patches": [[[0, 0, 0]] * 16]}))
    with pytest.raises(CurveFileError, match="basis: must be"):
        read_patch_json(p)


def test_obj_export_round_trip(tmp_path):
    from curves import Circle, surfaces
    s = Circle(0.5).sample(12)
    m = surfaces.revolve(s.points + [1.5, 0], s.tangents, 16)
    out = tmp_path / "torus.obj"
    mesh.write_obj(out, m, comment="torus")
    lines = out.read_text().splitlines()
    v = np.array([[float(x) for x in l.split()[1:]] for l in lines if l.startswith("v ")])
    vn = np.array([[float(x) for x in l.split()[1:]] for l in lines if l.startswith("vn ")])
    f = np.array([[int(c.split("//")[0]) - 1 for c in l.split()[1:]] for l in lines if l.startswith("f ")])
    np.testing.assert_allclose(v, m.vertices, atol=1e-8)
    np.testing.assert_allclose(vn, m.normals, atol=1e-6)
    np.testing.assert_array_equal(f, m.faces)


def image_is_drawn(path):
    import matplotlib.image as mpimg
    img = mpimg.imread(path)
    assert img.ndim == 3 and img.shape[0] > 200 and img.shape[1] > 200
    return float(np.std(img[..., :3]))


def test_cli_plot_curve_patch_and_swp(tmp_path, output_dir):
    swp = write(tmp_path, "demo.swp", SWP)
    curve = write(tmp_path, "c.spline", "B-Spline curve\n0 0\n1 1\n2 0\n3 1\n4 0\n")
    teapot = REPO / "scenes" / "assets" / "teapot_patches.json"
    for src, name in ((curve, "curve.png"), (teapot, "teapot.png"), (swp, "swp.png")):
        out = output_dir / name
        assert main(["plot", str(src), "-o", str(out), "--resolution", "4"]) == 0
        assert image_is_drawn(out) > 0.02


def test_cli_obj_and_info(tmp_path, capsys):
    out = tmp_path / "t.obj"
    teapot = REPO / "scenes" / "assets" / "teapot_patches.json"
    assert main(["obj", str(teapot), "-o", str(out), "--resolution", "3"]) == 0
    assert sum(1 for l in out.read_text().splitlines() if l.startswith("f ")) > 500
    assert main(["info", str(teapot)]) == 0
    assert "32 bezier patches" in capsys.readouterr().out


def test_cli_bad_input_exits_2_with_one_line(tmp_path, capsys):
    bad = write(tmp_path, "bad.spline", "Bezier curve\n0 0\n1 1\n")
    assert main(["plot", str(bad), "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"curves: error: {bad}: line 3: 2 points: a Bezier curve needs 3n+1 points (4, 7, 10, ...)"]
    assert main(["info", str(tmp_path / "nope.swp")]) == 2
    # through the real entry point: no traceback, status 2; --help works
    r = subprocess.run([sys.executable, "-m", "curves", "info", str(bad)], capture_output=True,
                       text=True, cwd=REPO)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "line 3" in r.stderr
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0


# --- the ray tracer plug-in (built directly, not through the renderer) ---------------

plugin = pytest.importorskip("raytrace.scene.objects.curves")


def validate(type_name, obj):
    import jsonschema
    spec = plugin.OBJECT_TYPES[type_name]
    schema = {"type": "object", "properties": spec["properties"], "required": spec["required"]}
    jsonschema.validate({k: v for k, v in obj.items() if k not in ("type", "material", "name")},
                        schema)


def test_plugin_teapot_scene_object():
    scene = json.loads((REPO / "scenes" / "teapot.json").read_text())
    obj = next(o for o in scene["objects"] if o["type"] == "bezier_patches")
    validate("bezier_patches", obj)
    small = dict(obj, resolution=4)
    V, F, N = plugin.OBJECT_TYPES["bezier_patches"]["build"](small, "objects[0]", REPO / "scenes")
    assert V.shape[1] == 3 and F.dtype == np.int64 and N.shape == V.shape
    assert len(mesh.boundary_edges(F)) == 16 * 4
    assert 0 <= V[:, 1].min() < 1e-12 and 3.1 < V[:, 1].max() < 3.2         # y-up, on the floor


def test_plugin_inline_patches_revolution_and_sweep(tmp_path):
    patch = [[i, 0.1 * (i + j) ** 1.5, j] for i in range(4) for j in range(4)]
    obj = {"type": "bezier_patches", "patches": [patch], "resolution": 3, "smooth": False}
    validate("bezier_patches", obj)
    V, F, N = plugin.build_patches(obj, "objects[1]", tmp_path)
    assert N is None and len(F) == 18
    rev = {"type": "surface_of_revolution", "steps": 12, "samples": 4,
           "profile": {"basis": "bspline", "closed": True,
                       "points": [[1, 0], [1.5, 0.2], [1.4, 0.6], [0.9, 0.5]]}}
    validate("surface_of_revolution", rev)
    V, F, N = plugin.build_revolution(rev, "objects[2]", tmp_path)
    assert mesh.is_watertight(F)
    sw = {"type": "sweep", "profile": {"circle": 0.1}, "path": {"degree": 2, "knots": [0, 0, 0, 0.5, 1, 1, 1],
                                                                 "points": [[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]]},
          "profile_samples": 8, "path_samples": 6, "frames": "course"}
    validate("sweep", sw)
    V, F, N = plugin.build_sweep(sw, "objects[3]", tmp_path)
    assert len(V) == 8 * 13 and np.all(np.isfinite(N))
    (tmp_path / "p.spline").write_text("Bezier curve\n0.5 0\n1 0.3\n1 0.7\n0.5 1\n")
    V, F, N = plugin.build_revolution({"profile": {"file": "p.spline"}, "steps": 8}, "objects[4]", tmp_path)
    assert len(V) == 17 * 8


def test_plugin_errors_name_the_field(tmp_path):
    from raytrace.errors import SceneError
    cases = [
        (plugin.build_patches, {"file": "missing.json"}, "objects[0].file: file not found"),
        (plugin.build_patches, {}, "objects[0]: give exactly one of 'patches' or 'file'"),
        (plugin.build_revolution, {"profile": {"basis": "bezier", "points": [[1, 0], [1, 1]]}},
         "objects[0].profile: bezier curve needs 3n+1"),
        (plugin.build_revolution, {"profile": {"points": [[1, 0, 1], [1, 1, 1], [2, 2, 0], [1, 3, 0]]}},
         "objects[0].profile: the profile must be a 2D curve"),
        (plugin.build_revolution, {"profile": {"circle": 1.0}}, "objects[0].profile: profile sample"),
        (plugin.build_sweep, {"profile": {"circle": 0.1}, "path": {"file": "bad.spline"}},
         "objects[0].path.file: "),
        (plugin.build_sweep, {"profile": {"circle": 0.1, "points": [[0, 0]]}, "path": {"circle": 1}},
         "objects[0].profile: give exactly one of"),
    ]
    (tmp_path / "bad.spline").write_text("Bezier curve\n0 0\n")
    for build, obj, message in cases:
        with pytest.raises(SceneError) as e:
            build(obj, "objects[0]", tmp_path)
        assert str(e.value).startswith(message), str(e.value)
    with pytest.raises(SceneError, match=r"bad.spline: line 2: 1 points"):
        plugin.build_sweep(cases[5][1], "objects[0]", tmp_path)
