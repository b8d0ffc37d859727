"""AOVs from both integrators: values by construction and against the course AOVs
(render_aovs), and the same pixel filter as the colour."""
import numpy as np
import pytest

import raytrace
from raytrace.layout import AOVS

CAM = {"center": [0, 1.5, 4], "look_at": [0, 0.3, 0], "fov": 45}


def scene(integrator, **extra):
    s = {"camera": CAM, "integrator": {"type": integrator},
         "materials": {"plane": {"type": "diffuse", "albedo": [0.3, 0.5, 0.7]},
                       "ball": {"type": "diffuse", "albedo": [0.9, 0.1, 0.2]},
                       "mirror": {"type": "conductor", "reflectance": [1, 1, 1]},
                       "glass": {"type": "dielectric", "ior": 1.5}},
         "background": {"color": [0.2, 0.3, 0.4]},
         "lights": [{"type": "point", "position": [2, 4, 3], "color": [5, 5, 5]}],
         "objects": [{"type": "plane", "normal": [0, 1, 0], "material": "plane"},
                     {"type": "sphere", "center": [-0.8, 0.5, 0], "radius": 0.5, "material": "ball", "name": "red"},
                     {"type": "sphere", "center": [0.8, 0.5, 0], "radius": 0.5, "material": "mirror"}]}
    s.update(extra)
    return raytrace.load_scene(s)


@pytest.mark.parametrize("integrator", ["whitted", "path"])
def test_aov_values(integrator):
    sc = scene(integrator)
    w, h = 64, 48
    img = raytrace.render(sc, width=w, height=h, spp=1, aovs=AOVS)
    a = img.aovs
    assert set(a) == set(AOVS)
    t, n = raytrace.render_aovs(sc, w, h)
    hit = np.isfinite(t)
    # through pixel centres (one sample): depth and normals are the course AOVs' values
    assert np.array_equal(np.isfinite(a["depth"]), hit)
    assert np.abs(a["depth"][hit] - t[hit]).max() < 1e-5 * t[hit].max()
    plane = a["object_id"] == 0
    ball = a["object_id"] == 1
    mirror = a["object_id"] == 2
    assert plane.sum() > 500 and ball.sum() > 30 and mirror.sum() > 30 and (a["object_id"] == -1).sum() > 100
    assert np.abs(a["normal"][ball] - n[ball]).max() < 1e-6
    # ids are exact integers naming objects and materials
    assert a["object_id"].dtype == np.int32 and set(np.unique(a["object_id"])) == {-1, 0, 1, 2}
    assert sc.object_names[1] == "objects[1] (red)" and sc.material_names[a["material_id"][ball][0]] == "ball"
    # the albedo of a diffuse plane is its albedo; a miss gives the background
    assert np.abs(a["albedo"][plane] - [0.3, 0.5, 0.7]).max() < 1e-6
    assert np.abs(a["albedo"][a["object_id"] == -1] - [0.2, 0.3, 0.4]).max() < 1e-6
    # through the mirror the albedo is that of what it reflects (the plane, the sky)
    seen = a["albedo"][mirror]
    assert (np.abs(seen - [0.3, 0.5, 0.7]).max(axis=1) < 1e-6).sum() + \
        (np.abs(seen - [0.2, 0.3, 0.4]).max(axis=1) < 1e-6).sum() + \
        (np.abs(seen - [0.9, 0.1, 0.2]).max(axis=1) < 1e-6).sum() == mirror.sum()
    # position = eye + depth * direction lands on the plane y = 0 for plane pixels
    assert np.abs(a["position"][plane][:, 1]).max() < 1e-6
    assert a["uv"].shape == (h, w, 2) and (a["samples"] == 1).all()


@pytest.mark.parametrize("integrator", ["whitted", "path"])
def test_aovs_share_the_colours_pixel_filter(integrator):
    """A white sphere on black that shows exactly 1 where hit: its colour image equals its
    albedo AOV, silhouette pixels included (the same sub-pixel samples)."""
    s = {"camera": CAM, "integrator": {"type": integrator, **({"max_depth": 1} if integrator == "path" else {})},
         "background": {"ambient": [1, 1, 1]} if integrator == "whitted" else {},
         "materials": {"white": {"diffuse": [1, 1, 1]} if integrator == "whitted"
                       else {"type": "diffuse", "albedo": [1, 1, 1]}},
         "objects": [{"type": "sphere", "radius": 0.6, "center": [0, 0.3, 0], "material": "white",
                      **({"emission": [1, 1, 1]} if integrator == "path" else {})}]}
    sc = raytrace.load_scene(s)
    img = raytrace.render(sc, width=40, height=30, spp=9, filter="gaussian", aovs=["albedo", "samples"])
    colour, albedo = np.asarray(img), img.aovs["albedo"]
    edge = (colour[..., 0] > 0.05) & (colour[..., 0] < 0.95)
    assert edge.sum() > 20                           # partly covered pixels exist
    assert np.abs(colour - albedo).max() < 1e-6
    assert (img.aovs["samples"] == 9).all()


def test_unknown_aov_is_refused():
    with pytest.raises(raytrace.SceneError, match="aovs: unknown AOV 'colour'"):
        raytrace.render(scene("path"), width=4, height=4, aovs=["colour"])
