"""The contract between the scene side and the kernels (raytrace.layout)."""
import numpy as np
import pytest

import raytrace
from raytrace import layout
from raytrace.accel import build
from raytrace.scene.build import material_table


def test_material_columns_follow_the_structured_dtype():
    names, table = material_table({"m": {"type": "rough_conductor", "reflectance": [0.9, 0.6, 0.2], "alpha": 0.3}})
    assert table.shape == (2, layout.MATERIAL_WIDTH)
    rec = table.view(layout.MATERIAL)[:, 0]                 # the same memory, by name
    assert rec["color"][1].tolist() == [0.9, 0.6, 0.2]
    assert table[1, layout.M_COLOR:layout.M_COLOR + 3].tolist() == [0.9, 0.6, 0.2]
    assert table[1, layout.M_TYPE] == layout.MAT_ROUGH_CONDUCTOR and table[1, layout.M_ALPHA] == 0.3
    assert table[1, layout.M_TEX] == -1
    offsets = sorted(layout.MATERIAL.fields[n][1] // 8 for n in layout.MATERIAL.names)
    assert offsets == [layout.M_DIFFUSE, layout.M_SPECULAR, layout.M_SHININESS, layout.M_REFLECT,
                       layout.M_TRANSMIT, layout.M_IOR, layout.M_TYPE, layout.M_COLOR, layout.M_TEX,
                       layout.M_ALPHA, layout.M_CUTOUT, layout.M_CUTOFF]
    assert table[1, layout.M_CUTOUT] == -1                  # opaque: no coverage texture


@pytest.mark.parametrize("kind", [layout.LEAF_KIND_TRI, layout.LEAF_KIND_SPH])
def test_leaf_encoding_round_trips(kind):
    for start in (0, 1, 12345, (1 << 27) - 1):
        for count in range(1, layout.LEAF_MAX_COUNT + 1):
            child = build.encode_leaf(start, count, kind)
            assert child < 0
            assert (build.leaf_kind(child), build.leaf_count(child), build.leaf_start(child)) == \
                (kind, count, start)
            assert (build.leaf_kind.py_func(child), build.leaf_start.py_func(child)) == (kind, start)


SCENE = {
    "camera": {"center": [0, 0, 4], "look_at": [0, 0, 0], "fov": 40},
    "lights": [{"type": "point", "position": [2, 3, 4], "color": [3, 3, 3]}],
    "materials": {"m": {"type": "diffuse", "albedo": [0.7, 0.7, 0.7]}},
    "objects": [{"type": "sphere", "radius": 1, "material": "m"}],
}


@pytest.mark.parametrize("integrator", ["whitted", "path"])
def test_seeds_are_exact_integers(integrator):
    """Seeds travel as integers: 2^53 and 2^53 + 1 are different seeds (a float64 would
    round them to the same number)."""
    scene = raytrace.load_scene(dict(SCENE, integrator={"type": integrator}))
    kw = dict(width=12, height=12, spp=4, filter="tent")
    a = raytrace.render(scene, seed=2 ** 53, **kw)
    b = raytrace.render(scene, seed=2 ** 53 + 1, **kw)
    c = raytrace.render(scene, seed=2 ** 53 + 1, **kw)
    assert np.array_equal(b, c)
    assert not np.array_equal(a, b)
    assert raytrace.render(scene, seed=layout.SEED_MAX, **kw).info.seed == layout.SEED_MAX


def test_seed_out_of_range_is_refused():
    scene = raytrace.load_scene(SCENE)
    with pytest.raises(raytrace.SceneError, match=r"seed: must be an integer <= 9223372036854775807"):
        raytrace.render(scene, seed=2 ** 63)
