"""Debug views: each paints what it claims, and changes when its input changes (a probe
that shows a "no change" would be trusted)."""
import json

import numpy as np
import pytest

import raytrace
from raytrace import cli, views
from raytrace.accel.stats import ray_cost
from raytrace.image import RenderedImage, RenderInfo

SCENE = {
    "camera": {"center": [0, 1.2, 5], "look_at": [0, 0.4, 0], "fov": 40},
    "lights": [{"type": "point", "position": [2, 4, 3], "color": [1, 1, 1]}],
    "materials": {"gold": {"diffuse": [0.9, 0.7, 0.2]}, "red": {"diffuse": [0.9, 0.1, 0.1]}},
    "objects": [{"type": "plane", "normal": [0, 1, 0], "name": "floor"},
                {"type": "sphere", "center": [-0.8, 0.5, 0], "radius": 0.5, "material": "gold", "name": "left"},
                {"type": "sphere", "center": [0.8, 0.5, 0], "radius": 0.5, "material": "red", "name": "right"},
                {"type": "group", "material": "gold", "children": [
                    {"type": "cube", "transform": [{"translate": [0, 1.4, -1]}, {"scale": 0.3}]}]}],
}


@pytest.fixture(scope="module")
def scene():
    return raytrace.load_scene(SCENE)


def test_object_view_gives_one_colour_per_object(scene):
    v = views.render_view(scene, "objects", width=80, height=60)
    ids = v.data["ids"]
    assert set(np.unique(ids)) == {-1, 0, 1, 2, 3}
    colours = {k: np.unique(v.image[ids == k].reshape(-1, 3), axis=0) for k in range(4)}
    assert all(len(c) == 1 for c in colours.values())                  # flat per object
    assert len({tuple(c[0]) for c in colours.values()}) == 4           # distinct objects, distinct colours
    assert (v.image[ids == -1] == 0).all()


def test_highlight_probe_moves_with_the_name(scene):
    """Highlighting another object moves the painted pixels onto that object."""
    kw = dict(width=80, height=60)
    ids = views.render_view(scene, "objects", **kw).data["ids"]
    left = views.render_view(scene, "highlight", highlight="left", **kw)
    right = views.render_view(scene, "highlight", highlight="right", **kw)
    gold = views.render_view(scene, "highlight", highlight="gold", **kw)
    assert np.array_equal(left.data["painted"], ids == 1)
    assert np.array_equal(right.data["painted"], ids == 2)
    assert np.array_equal(gold.data["painted"], (ids == 1) | (ids == 3))   # the material: sphere and cube
    assert (left.image[ids == 1] == views.LOUD).all() and not (left.image[ids == 2] == views.LOUD).all(axis=1).any()
    assert "objects[3]" in views.render_view(scene, "highlight", highlight="objects[3]", **kw).report
    with pytest.raises(raytrace.SceneError, match="--highlight: no object or material is named 'nope'"):
        views.render_view(scene, "highlight", highlight="nope", **kw)


def test_cost_counts_what_the_traversal_visits():
    one = raytrace.load_scene({"camera": SCENE["camera"],
                               "objects": [{"type": "triangle", "vertices": [[-1, 0, 0], [1, 0, 0], [0, 1, 0]]}]})
    # one leaf node with one block of one used lane: 1 node, 1 triangle
    assert ray_cost(one.accel, 0.0, 0.3, 5.0, 0.0, 0.0, -1.0) == (1, 1)
    assert ray_cost(one.accel, 0.0, 0.3, 5.0, 0.0, 0.0, 1.0) == (1, 0)   # misses the root's box
    # two instances of it, one in the ray's way: the top level's node, then the prototype's
    # (the world BVH is empty); the ray the other way tests the top node only
    tri = one.data["objects"][0]
    inst = raytrace.load_scene({"camera": SCENE["camera"], "prototypes": {"t": tri},
                                "objects": [{"type": "instance", "prototype": "t"},
                                            {"type": "instance", "prototype": "t",
                                             "transform": [{"translate": [5, 0, 0]}]}]})
    assert ray_cost(inst.accel, 0.0, 0.3, 5.0, 0.0, 0.0, -1.0) == (2, 1)
    assert ray_cost(inst.accel, 0.0, 0.3, 5.0, 0.0, 0.0, 1.0) == (1, 0)
    mesh = raytrace.load_scene(dict(SCENE, objects=[{"type": "mesh", "file": "bunny_5k.obj"}]),
                               base_dir=__import__("pathlib").Path(__file__).parents[1] / "scenes" / "assets")
    cheap = views.render_view(one, "cost", width=40, height=30).data
    dear = views.render_view(mesh, "cost", width=40, height=30).data
    # the probe: more geometry, dearer rays
    dear_cost, cheap_cost = dear["nodes"] + dear["primitives"], cheap["nodes"] + cheap["primitives"]
    assert dear_cost.mean() > 2 * cheap_cost.mean() and dear_cost.max() > 20 and cheap_cost.max() <= 2
    v = views.render_view(mesh, "cost", width=40, height=30)
    assert v.image.shape[0] > 30 and v.image.shape[1] == 40        # the legend strip below


def test_normals_view_is_the_course_normal_image(scene):
    v = views.render_view(scene, "normals", width=40, height=30)
    t, n = raytrace.render_aovs(scene, 40, 30)
    assert np.allclose(v.image[np.isfinite(t)], ((n + 1) / 2)[np.isfinite(t)], atol=1e-6)


def test_nan_view_marks_and_reports_the_pixels(scene, monkeypatch):
    img = RenderedImage(np.full((30, 40, 3), 0.5), RenderInfo("path", 40, 30, 8, 8, 0, 3, 0.1))
    img.aovs = {"samples": np.full((30, 40), 8, np.int32), "object_id": np.full((30, 40), 2, np.int32),
                "material_id": np.full((30, 40), 2, np.int32)}
    img.aovs["samples"][7, 11] = 5
    monkeypatch.setattr(views, "render", lambda *a, **k: img)
    v = views.render_view(scene, "nan", width=40, height=30)
    assert (v.image[7, 11] == views.LOUD).all() and (v.data["nonfinite"] > 0).sum() == 1
    assert v.report == ("3 NaN or infinite samples in 1 pixels; most at pixel (11, 7): 3 samples, "
                        "object objects[2] (right), material red")
    img.aovs["samples"][7, 11] = 8                                     # the probe: fixed, nothing marked
    assert not (views.render_view(scene, "nan", width=40, height=30).image == views.LOUD).all(axis=2).any()


def test_cli_writes_a_view(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SCENE))
    out = tmp_path / "v.png"
    assert cli.main(["render", str(path), "-o", str(out), "--highlight", "right", "--size", "40", "30"]) == 0
    err = capsys.readouterr().err
    assert "highlight 'right'" in err and out.exists()
    import imageio.v3 as iio
    assert (iio.imread(out)[..., :3] == [255, 0, 255]).all(axis=2).sum() > 20
