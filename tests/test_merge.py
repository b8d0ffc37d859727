"""``raytrace merge``: the weighted mean of renders made with different seeds, with the
error of one render of all their samples; refusals of what cannot be merged."""
import pathlib

import numpy as np
import pytest

import raytrace
from raytrace.cli import main

REPO = pathlib.Path(__file__).resolve().parents[1]
CORNELL = str(REPO / "scenes" / "cornell_box.json")
# the independent sampler: renders with different seeds are independent estimates
SIZE = ["--size", "128", "128", "--sampler", "independent", "-q"]


def render(tmp_path, name, spp, seed, *extra):
    out = tmp_path / name
    assert main(["render", CORNELL, "-o", str(out), *SIZE, "--spp", str(spp), "--seed", str(seed), *extra]) == 0
    return out


def merge(*args):
    return main(["merge", *map(str, args)])


def test_merge_is_the_sample_weighted_mean(tmp_path):
    a = render(tmp_path, "a.exr", 2, 1, "--aov", "albedo,depth,object_id,samples")
    b = render(tmp_path, "b.exr", 6, 2, "--aov", "albedo,depth,object_id,samples")
    assert merge(a, b, "-o", tmp_path / "m.exr") == 0
    (la, ma), (lb, mb) = raytrace.read_exr(a), raytrace.read_exr(b)
    m, meta = raytrace.read_exr(tmp_path / "m.exr")
    want = (2 * la["color"].astype(np.float64) + 6 * lb["color"]) / 8
    assert np.allclose(m["color"], want, rtol=1e-6, atol=0)
    assert np.allclose(m["albedo"], (2 * la["albedo"].astype(np.float64) + 6 * lb["albedo"]) / 8, rtol=1e-6)
    assert np.array_equal(m["object_id"], la["object_id"]) and (m["samples"] == 8).all()
    assert meta["spp"] == 8 and meta["seeds"] == "1,2" and meta["merged_from"] == 2 and "seed" not in meta
    # merged files merge again; their seeds come along
    c = render(tmp_path, "c.exr", 2, 3, "--aov", "albedo,depth,object_id,samples")
    assert merge(tmp_path / "m.exr", c, "-o", tmp_path / "m2.exr") == 0
    assert raytrace.read_exr(tmp_path / "m2.exr")[1]["seeds"] == "1,2,3"


def test_two_n_spp_renders_merge_to_the_error_of_one_2n_spp_render(tmp_path):
    """E|X - Y|^2 = var X + var Y for independent renders X, Y of the same scene: with
    D another 2N-spp render, |merge(A, B) - D|^2 and |C - D|^2 (C 2N spp) agree; an N-spp
    render A gives 1.5 times as much (negative control). (n and 2n not squares: the
    independent sampler stratifies square counts.) Pixels within 2 of the lamp are left
    out, chosen by the object ids (through the pixel centres, not the noise): the
    coverage of its edge gives a few pixels a variance that would swamp the rest."""
    n = 3
    ids = "--aov", "object_id"
    a, b = render(tmp_path, "a.exr", n, 11, *ids), render(tmp_path, "b.exr", n, 12, *ids)
    c, d = render(tmp_path, "c.exr", 2 * n, 13, *ids), render(tmp_path, "d.exr", 2 * n, 14, *ids)
    assert merge(a, b, "-o", tmp_path / "m.exr") == 0
    layers = {k: raytrace.read_exr(tmp_path / f"{k}.exr") for k in "abcdm"}
    img = {k: v[0]["color"].astype(np.float64) for k, v in layers.items()}
    names = __import__("json").loads(layers["a"][1]["object_names"])
    lamp = layers["a"][0]["object_id"] == names.index("objects[0] (light)")
    near = np.zeros_like(lamp)
    for dy in range(-2, 3):
        for dx in range(-2, 3):
            near |= np.roll(np.roll(lamp, dy, 0), dx, 1)
    keep = ~near

    def mse(x, y):
        return np.mean((x - y)[keep] ** 2)
    base = mse(img["c"], img["d"])
    assert abs(mse(img["m"], img["d"]) / base - 1.0) < 0.1
    assert abs(mse(img["a"], img["d"]) / base - 1.5) < 0.15


def test_merge_refuses_what_cannot_be_merged(tmp_path, capsys):
    a = render(tmp_path, "a.exr", 1, 1)
    same_seed = render(tmp_path, "s.exr", 2, 1)
    other_size = tmp_path / "z.exr"
    assert main(["render", CORNELL, "-o", str(other_size), "--size", "8", "8", "--seed", "3", "-q"]) == 0
    other_filter = render(tmp_path, "f.exr", 1, 4, "--filter", "box")
    plain = tmp_path / "plain.exr"
    raytrace.save_image(plain, np.zeros((128, 128, 3), np.float32))
    cases = [((a,), "merge needs at least two renders"),
             ((a, same_seed), "s.exr: seed 1 was also used by"),
             ((a, other_size), "z.exr: is a render of width 8, "),
             ((a, other_filter), "f.exr: is a render of filter 'box'"),
             ((a, plain), "plain.exr: no raytrace:spp"),
             ((a, tmp_path / "missing.exr"), "missing.exr: file not found")]
    for inputs, message in cases:
        assert merge(*inputs, "-o", tmp_path / "out.exr") == 2, message
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1, err
        assert not (tmp_path / "out.exr").exists()


def test_merge_of_denoised_renders_merges_their_raw_colour(tmp_path):
    aovs = ["--aov", "albedo,normal,depth", "--denoise", "atrous"]
    a, b = render(tmp_path, "a.exr", 2, 1, *aovs), render(tmp_path, "b.exr", 2, 2, *aovs)
    assert merge(a, b, "-o", tmp_path / "m.exr", "--denoise", "atrous") == 0
    m, meta = raytrace.read_exr(tmp_path / "m.exr")
    la, lb = raytrace.read_exr(a)[0], raytrace.read_exr(b)[0]
    assert np.allclose(m["noisy"], (la["noisy"].astype(np.float64) + lb["noisy"]) / 2, rtol=1e-6)
    assert np.allclose(m["variance"], (la["variance"].astype(np.float64) + lb["variance"]) / 4, rtol=1e-6)
    assert meta["denoiser"] == "atrous" and not np.allclose(m["color"], m["noisy"])
    assert merge(a, b, "-o", tmp_path / "m.png") == 0          # colour only
    assert (tmp_path / "m.png").stat().st_size > 0


@pytest.mark.parametrize("flag", ["--denoise"])
def test_merge_denoise_needs_guides(tmp_path, capsys, flag):
    a, b = render(tmp_path, "a.exr", 1, 1), render(tmp_path, "b.exr", 1, 2)
    assert merge(a, b, "-o", tmp_path / "m.exr", flag, "atrous") == 2
    assert "--denoise: the renders have no albedo, normal, depth, variance layers" in capsys.readouterr().err
