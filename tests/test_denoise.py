"""Denoising: both denoisers lower the error of low-spp renders on the Cornell box and the
glass scene (measured against a longer render); the à-trous fallback runs without
pyoidn and keeps what its guides say are edges."""
import pathlib
import sys

import numpy as np
import pytest

import raytrace
from raytrace.cli import main
from raytrace.film import denoise as dn
from raytrace.film.atrous import atrous

REPO = pathlib.Path(__file__).resolve().parents[1]
SCENES = {"cornell_box": (64, 64), "path_glass": (80, 60)}
REF_SPP = 384
GUIDES = ["albedo", "normal", "depth"]


@pytest.fixture(scope="module")
def renders():
    """scene -> (4-spp render with guides and variance, reference image, reference variance)."""
    out = {}
    for name, (w, h) in SCENES.items():
        scene = raytrace.load_scene(REPO / "scenes" / f"{name}.json")
        noisy = raytrace.render(scene, width=w, height=h, spp=4, seed=1, aovs=GUIDES, variance=True)
        ref = raytrace.render(scene, width=w, height=h, spp=REF_SPP, seed=99, variance=True)
        out[name] = (noisy, np.asarray(ref, np.float64), np.asarray(ref.variance, np.float64))
    return out


def rmse(image, ref, ref_var, where=None):
    """RMSE against a noisy reference, its own noise removed in quadrature, over the
    pixels ``where`` (H, W) is True (all by default)."""
    sq = np.mean((np.asarray(image, np.float64) - ref) ** 2, axis=-1)
    var = ref_var.mean(axis=-1)
    if where is not None:
        sq, var = sq[where], var[where]
    return np.sqrt(max(sq.mean() - var.mean(), 0.0))


def away_from_lights(ref, radius=3):
    """Pixels farther than ``radius`` pixels (Chebyshev) from any pixel of the reference
    brighter than 1: the lights seen directly and their rims. At 4 spp those few pixels
    hold most of the error (95 % of it on the Cornell box, 48 of 4096 pixels): how much of
    a light a rim pixel covers is noise that the guides rightly mark as an edge, so no
    denoiser averages it away, and a measure over the whole image then reads that noise
    (it varied from 0.75 to 0.98 of the noisy error for the à-trous filter over seeds 1-4)."""
    bright = ref.max(axis=-1) > 1.0
    padded = np.pad(bright, radius)
    h, w = bright.shape
    near = np.zeros_like(bright)
    for dy in range(2 * radius + 1):
        for dx in range(2 * radius + 1):
            near |= padded[dy:dy + h, dx:dx + w]
    return ~near


METHODS = ["atrous", pytest.param("oidn", marks=pytest.mark.skipif(not dn.oidn_available(),
                                                                    reason="pyoidn not installed"))]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", list(SCENES))
def test_denoising_lowers_the_error_at_4_spp(renders, name, method):
    noisy, ref, ref_var = renders[name]
    away = away_from_lights(ref)
    assert away.mean() > 0.9
    before = rmse(noisy, ref, ref_var, away)
    after = rmse(raytrace.denoise(noisy, method), ref, ref_var, away)
    # the reference's own noise must be small against what is measured
    assert np.sqrt(ref_var.mean(axis=-1)[away].mean()) < 0.3 * before
    assert after < 0.75 * before, f"{name} {method}: RMSE {before:.4f} -> {after:.4f}"


def test_wrong_guides_are_caught(renders):
    """Negative control: the same filter fed normals shuffled across the image (edges
    everywhere) smooths far less, and the measure sees it."""
    noisy, ref, ref_var = renders["cornell_box"]
    a = noisy.aovs
    shuffled = np.random.default_rng(0).permutation(a["normal"].reshape(-1, 3)).reshape(a["normal"].shape)
    right = rmse(dn.denoise_arrays(noisy, a["albedo"], a["normal"], a["depth"], noisy.variance, "atrous"), ref, ref_var)
    wrong = rmse(dn.denoise_arrays(noisy, a["albedo"], shuffled, a["depth"], noisy.variance, "atrous"), ref, ref_var)
    assert wrong > 1.2 * right


def test_fallback_runs_without_pyoidn(renders, monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "pyoidn", None)          # import pyoidn fails
    assert not dn.oidn_available() and dn.resolve("auto") == "atrous" and dn.resolve(True) == "atrous"
    with pytest.raises(raytrace.SceneError, match="denoise: the oidn denoiser needs pyoidn"):
        dn.resolve("oidn")
    scene = raytrace.load_scene(REPO / "scenes" / "cornell_box.json")
    img = raytrace.render(scene, width=24, height=24, spp=2, denoise=True, aovs=["depth"])
    plain = raytrace.render(scene, width=24, height=24, spp=2, aovs=GUIDES, variance=True)
    assert np.array_equal(np.asarray(img), np.asarray(raytrace.denoise(plain, "atrous")))
    assert not np.array_equal(np.asarray(img), np.asarray(plain))
    assert set(img.aovs) == {"depth"} and img.variance is None        # what was asked for
    out = tmp_path / "d.exr"
    assert main(["render", str(REPO / "scenes" / "cornell_box.json"), "-o", str(out), "--size", "24", "24",
                 "--spp", "2", "--denoise", "-q"]) == 0
    layers, meta = raytrace.read_exr(out)
    assert meta["denoiser"] == "atrous" and {"color", "noisy", "variance"} <= set(layers)
    assert np.array_equal(layers["color"], np.asarray(img)) and np.array_equal(layers["noisy"], np.asarray(plain))
    assert main(["render", str(REPO / "scenes" / "cornell_box.json"), "-o", str(tmp_path / "e.png"),
                 "--denoise", "oidn", "-q"]) == 2
    assert "--denoise: the oidn denoiser needs pyoidn" in capsys.readouterr().err


def test_atrous_keeps_constants_and_guided_edges():
    rng = np.random.default_rng(3)
    h, w = 32, 40
    albedo = np.full((h, w, 3), 0.5)
    normal = np.zeros((h, w, 3))
    normal[:, : w // 2, 2] = 1.0                      # left half faces +z, right half +x
    normal[:, w // 2:, 0] = 1.0
    depth = np.full((h, w), 2.0)
    var = np.full((h, w, 3), 0.01)
    colour = np.where(np.arange(w)[None, :, None] < w // 2, 0.2, 0.8) * np.ones((h, w, 3))
    out = atrous(colour, albedo, normal, depth, var)
    assert np.allclose(out, colour, rtol=1e-6)        # each side constant, no bleeding across the crease
    noisy = colour + rng.normal(0.0, 0.1, colour.shape)
    out = atrous(noisy, albedo, normal, depth, var)
    assert np.abs(out - colour).std() < 0.35 * np.abs(noisy - colour).std()
    assert abs(out[:, w // 2 - 1].mean() - 0.2) < 0.03 and abs(out[:, w // 2].mean() - 0.8) < 0.03
    # no noise (variance 0): the colour weight stops the filter, the image is kept
    assert np.allclose(atrous(noisy, albedo, normal, depth, np.zeros_like(var)), noisy, rtol=1e-6)


def test_denoise_needs_its_guides():
    img = raytrace.render(raytrace.load_scene(REPO / "scenes" / "cornell_box.json"), width=8, height=8, spp=1)
    with pytest.raises(raytrace.SceneError, match="denoise: the image has no albedo or normal AOV"):
        raytrace.denoise(img)
    with pytest.raises(raytrace.SceneError, match="unknown denoiser 'nlm'"):
        dn.resolve("nlm")
