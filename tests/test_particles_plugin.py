"""The ``cloth`` scene object (raytrace plug-in built on particles)."""
import json
import pathlib

import jsonschema
import numpy as np
import pytest

from raytrace.errors import SceneError
from raytrace.scene.objects import particles as gp

REPO = pathlib.Path(__file__).resolve().parents[1]


def small(**extra):
    obj = {"type": "cloth", "grid": [10, 10], "size": [1.0, 1.0], "layout": "horizontal",
           "center": [0, 0.6, 0], "pin": "none", "sphere": {"center": [0, 0, 0], "radius": 0.3},
           "integrator": "implicit_euler", "dt": 0.01, "T": 1.0}
    obj.update(extra)
    return obj


def test_properties_are_a_valid_schema():
    jsonschema.Draft202012Validator.check_schema({"type": "object",
                                                  "properties": gp.PROPERTIES})
    validator = jsonschema.Draft202012Validator({"type": "object",
                                                 "properties": gp.PROPERTIES,
                                                 "additionalProperties": False})
    obj = small()
    del obj["type"]
    validator.validate(obj)
    assert not validator.is_valid({"grid": [1, 4]})
    assert not validator.is_valid({"pin": "left"})
    assert not validator.is_valid({"integrator": "verlet"})


def test_build_drapes_cloth_over_sphere():
    v, f, n = gp.build_cloth(small(), "objects[0]", REPO / "scenes")
    assert v.shape == (100, 3) and f.shape == (162, 3) and n.shape == (100, 3)
    assert v.dtype == np.float64 and f.dtype == np.int64
    np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1.0)
    r = np.linalg.norm(v, axis=1)
    assert r.min() >= 0.303 - 1e-12                  # outside the collider (+1% margin)
    top = np.argmax(v[:, 1])
    assert r[top] == pytest.approx(0.303, abs=1e-3) and v[top, 1] > 0.28   # resting on it
    assert v[:, 1].min() < 0.0                                     # edges hang down
    # smooth normals agree with the CCW faces (outward = away from the sphere on top)
    fn = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    assert np.mean(np.sum(fn * n[f[:, 0]], axis=1) > 0) > 0.95
    assert n[top, 1] > 0.9


def test_flat_shading_and_cache_returns_copies():
    a = gp.build_cloth(small(smooth=False), "objects[1]", REPO)
    assert a[2] is None
    a[0][:] = 0.0                                                  # caller mutates its copy
    b = gp.build_cloth(small(smooth=False), "objects[1]", REPO)
    assert np.abs(b[0]).max() > 0.1


@pytest.mark.parametrize("extra,where,message", [
    ({"integrator": "rk4", "dt": 0.05}, "objects[2].dt", "blew up"),
    ({"pin": [[10, 0]]}, "objects[2].pin", "outside the 10 x 10 grid"),
    ({"T": 1000.0, "dt": 0.001}, "objects[2].T", "more than 100000"),
    ({"wind": [1, 0, 0]}, "objects[2].wind", "give wind_coeff > 0"),
])
def test_errors_name_the_field(extra, where, message):
    with pytest.raises(SceneError) as info:
        gp.build_cloth(small(**extra), "objects[2]", REPO)
    assert info.value.where == where and message in info.value.message


@pytest.mark.parametrize("path", sorted((REPO / "scenes").glob("cloth*.json")),
                         ids=lambda p: p.name)
def test_example_scenes_validate(path):
    from raytrace.scene.schema import build_schema
    scene = json.loads(path.read_text())
    jsonschema.Draft202012Validator(build_schema()).validate(scene)
    cloths = [o for o in scene["objects"] if o["type"] == "cloth"]
    spheres = [o for o in scene["objects"] if o["type"] == "sphere"]
    assert cloths
    for c in cloths:                       # a collider is also shown as a sphere object
        if "sphere" in c:
            assert any(s.get("center") == c["sphere"]["center"]
                       and s.get("radius") == c["sphere"]["radius"] for s in spheres)
