"""Meshes in PLY, STL and OFF (read through trimesh, the ``mesh`` extra; ``test`` installs
it) give the same geometry as the OBJ they were written from: the example pyramid
(examples/course/models/pyramid.obj) seen through a JSON scene, depth and normals per pixel.
"""
import json
import pathlib

import numpy as np
import pytest

import raytrace

trimesh = pytest.importorskip("trimesh")

REPO = pathlib.Path(__file__).resolve().parents[1]
PYRAMID = REPO / "examples" / "course" / "models" / "pyramid.obj"


def scene_with(mesh_file, folder):
    scene = {
        "camera": {"type": "perspective", "center": [2, 1.8, 2.8], "look_at": [0, 0.5, 0], "fov": 40},
        "image": {"width": 48, "height": 40},
        "materials": {"m": {"diffuse": [0.8, 0.8, 0.8]}},
        "lights": [{"type": "directional", "direction": [-1, -2, -1], "color": [1, 1, 1]}],
        "objects": [{"type": "mesh", "file": mesh_file, "smooth": False, "material": "m",
                     "transform": [{"rotate_y": 25}]}],
    }
    path = folder / f"scene_{pathlib.Path(mesh_file).suffix[1:]}.json"
    path.write_text(json.dumps(scene))
    return raytrace.load_scene(path)


@pytest.mark.parametrize("fmt", ["ply", "stl", "off"])
def test_mesh_format_matches_the_obj(tmp_path, fmt):
    v = np.array([[float(x) for x in l.split()[1:4]] for l in PYRAMID.read_text().splitlines()
                  if l.startswith("v ")])
    f = np.array([[int(x) - 1 for x in l.split()[1:4]] for l in PYRAMID.read_text().splitlines()
                  if l.startswith("f ")])
    out = tmp_path / f"pyramid.{fmt}"
    trimesh.Trimesh(v, f, process=False).export(out)
    t_obj, n_obj = raytrace.render_aovs(scene_with(str(PYRAMID), tmp_path))
    t_fmt, n_fmt = raytrace.render_aovs(scene_with(out.name, tmp_path))
    hit = np.isfinite(t_obj)
    assert 0.2 < hit.mean() < 0.9                        # the pyramid fills part of the view
    np.testing.assert_array_equal(np.isfinite(t_fmt), hit)
    tol = 1e-12 if fmt == "off" else 1e-6                # binary PLY and STL store float32
    np.testing.assert_allclose(t_fmt[hit], t_obj[hit], rtol=tol)
    np.testing.assert_allclose(n_fmt[hit], n_obj[hit], atol=10 * tol)
