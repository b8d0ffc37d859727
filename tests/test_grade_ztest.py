"""The per-pixel z-test of ``raytrace compare --ztest`` (:mod:`raytrace.grade.ztest`).

Calibration first on synthetic Gaussian images with known variances (the formula and
the Sidak correction), then on renders of ``grade_scenes.ZTEST_SCENE`` (24 x 24, the
independent sampler) against the stored 8000-spp reference: independent renders at
other seeds pass and reject pixels at about the nominal rate; negative controls (the
image 2 % brighter, the sphere's index of refraction 1.33 instead of 1.5) fail; and
no RMSE threshold separates them, because the RMSE of an honest 15-spp render is larger
than that of the wrong 1000-spp renders.
"""
import json
import math
import pathlib

import numpy as np
import pytest

import raytrace
from grade_scenes import ZTEST_REFERENCE_SPP, ZTEST_SCENE, ZTEST_SIZE, with_ior
from raytrace import cli
from raytrace.film.exr import read_exr
from raytrace.grade import compare
from raytrace.grade.compare import ZTestOptions
from raytrace.grade.images import from_array
from raytrace.grade.ztest import erfc, sidak_level, z_critical, ztest
from raytrace.image import encode_image

REFERENCE = pathlib.Path(__file__).parent / "reference" / "grade" / "ztest_glass.npz"
HIGH, LOW = 1000, 15            # spp of the actual renders; neither a perfect square


def test_erfc_sidak_and_critical_value():
    x = np.linspace(-6, 9, 301)
    exact = np.array([math.erfc(v) for v in x])
    assert np.allclose(erfc(x), exact, rtol=2e-7, atol=0)
    assert z_critical(0.05) == pytest.approx(1.959964, abs=1e-6)
    level = sidak_level(0.01, 1728)
    assert (1 - level) ** 1728 == pytest.approx(0.99, rel=1e-12)
    assert math.erfc(z_critical(level) / math.sqrt(2)) == pytest.approx(level, rel=1e-9)


def test_calibrated_on_gaussian_images():
    """Exact Gaussian noise with known variances: p-values uniform, family-wise error
    rate at the chosen alpha; a 1-sigma bias is caught."""
    rng = np.random.default_rng(2024)
    n, shape = 400, (16, 16, 3)
    small_p, any_reject, biased_reject = 0, 0, 0
    for _ in range(n):
        truth = rng.random(shape) + 0.1
        va, vr = rng.uniform(1e-4, 4e-4, shape), rng.uniform(1e-5, 4e-5, shape)
        a = truth + rng.standard_normal(shape) * np.sqrt(va)
        r = truth + rng.standard_normal(shape) * np.sqrt(vr)
        res = ztest(a, va, r, vr, alpha=0.2, rel_floor=0.0)
        small_p += int((res.p < 0.05).sum())
        any_reject += res.rejected_pixels > 0
        biased = ztest(a + np.sqrt(va + vr), va, r, vr, alpha=0.2, rel_floor=0.0)
        biased_reject += int((biased.p < 0.05).sum())
    tests = n * 16 * 16 * 3
    assert abs(small_p / tests - 0.05) < 0.003            # binomial sd 0.0004
    assert 0.14 < any_reject / n < 0.26                   # alpha 0.2 family-wise (sd 0.02)
    assert biased_reject / tests > 0.15                   # a 1-sigma shift: ~17 % of the p < 0.05


@pytest.fixture(scope="module")
def reference():
    if not REFERENCE.exists():
        pytest.fail(f"{REFERENCE} is missing: run python scripts/make_ztest_reference.py")
    with np.load(REFERENCE) as f:
        if json.loads(str(f["scene"])) != ZTEST_SCENE:
            pytest.fail("ZTEST_SCENE changed: run python scripts/make_ztest_reference.py")
        assert int(f["spp"]) == ZTEST_REFERENCE_SPP
        return f["mean"].astype(np.float64), f["variance"].astype(np.float64)


def _render(scene, spp, seed):
    return raytrace.render(raytrace.load_scene(scene), width=ZTEST_SIZE, height=ZTEST_SIZE, spp=spp, seed=seed,
                           sampler="independent", variance=True)


@pytest.fixture(scope="module")
def renders():
    return {"a": _render(ZTEST_SCENE, HIGH, 0), "b": _render(ZTEST_SCENE, HIGH, 1),
            "ior": _render(with_ior(1.33), HIGH, 7), "low": _render(ZTEST_SCENE, LOW, 2),
            "ior_low": _render(with_ior(1.33), LOW, 8)}


def _z(image, reference, factor=1.0, source="measured"):
    """The z-test of a render (times ``factor``, its variance times factor^2) against the
    stored reference."""
    r, vr = reference
    actual = from_array(np.asarray(image, np.float64) * factor, "actual", variance=image.variance * factor ** 2,
                        spp=image.info.spp)
    opts = ZTestOptions(expected_variance=vr, expected_spp=ZTEST_REFERENCE_SPP, source=source)
    return compare(actual, r, criteria=(), flip=False, ztest=opts).ztest


def _rmse(image, reference):
    return float(np.sqrt(np.mean((np.asarray(image, np.float64) - reference[0]) ** 2)))


def test_independent_renders_pass_and_reject_at_the_nominal_rate(renders, reference):
    p = []
    # about half the decisions have no noise (sky seen directly or through the glass): their
    # 'variance' is float rounding (relative sd < 1e-6) and their p is 1; rates count the rest
    noisy = np.sqrt(reference[1]) > 1e-6 * np.abs(reference[0])
    for key in ("a", "b"):
        res = _z(renders[key], reference)
        assert res.passed and res.variance_source == "measured", res.summary()
        p.append(res.p[noisy])
    p = np.concatenate(p)
    # 2 x ~920 pixels x 3 channels (correlated): binomial sd about 0.005 and 0.0025
    assert 0.03 < np.mean(p < 0.05) < 0.07
    assert 0.003 < np.mean(p < 0.01) < 0.02


def test_two_percent_brighter_fails(renders, reference):
    for key in ("a", "b"):
        res = _z(renders[key], reference, factor=1.02)
        assert not res.passed and res.fraction > 0.2, res.summary()


def test_wrong_index_of_refraction_fails(renders, reference):
    res = _z(renders["ior"], reference)
    assert not res.passed and res.rejected_pixels >= 10, res.summary()
    low = _z(renders["ior_low"], reference, source="reference")
    assert not low.passed, low.summary()


def test_low_spp_passes_with_the_reference_variance(renders, reference):
    res = _z(renders["low"], reference, source="reference")
    assert res.passed and res.variance_source == f"reference's x {ZTEST_REFERENCE_SPP}/{LOW} spp", res.summary()


def test_rmse_cannot_tell_noise_from_errors(renders, reference):
    """An RMSE threshold that passes the honest 15-spp render passes the 2 %-brighter and
    the wrong-IOR renders at 1000 spp; the z-test judges all four correctly."""
    honest_low = _rmse(renders["low"], reference)
    brighter = _rmse(np.asarray(renders["a"]) * 1.02, reference)
    wrong_ior = _rmse(renders["ior"], reference)
    honest_high = _rmse(renders["a"], reference)
    assert honest_low > brighter and honest_low > wrong_ior and honest_high < brighter
    verdicts = [_z(renders["low"], reference, source="reference").passed,
                _z(renders["a"], reference).passed,
                _z(renders["a"], reference, factor=1.02).passed,
                _z(renders["ior"], reference).passed]
    assert verdicts == [True, True, False, False]


def test_cli_ztest_with_exr_files(renders, tmp_path, capsys):
    a = renders["a"]
    (tmp_path / "a.exr").write_bytes(encode_image(tmp_path / "a.exr", a))
    (tmp_path / "av.exr").write_bytes(encode_image(tmp_path / "av.exr", a.variance))
    bright = np.asarray(a) * 1.02
    (tmp_path / "b.exr").write_bytes(encode_image(tmp_path / "b.exr", bright))
    (tmp_path / "bv.exr").write_bytes(encode_image(tmp_path / "bv.exr", a.variance * 1.02 ** 2))
    ref = str(REFERENCE)
    assert cli.main(["compare", str(tmp_path / "a.exr"), ref, "--ztest", "--actual-variance",
                     str(tmp_path / "av.exr")]) == 0
    out = capsys.readouterr().out
    assert "z-test: 0 of 576 pixels rejected" in out and out.strip().endswith("z-test 0 % <= 0.25 %")
    # Mitsuba's way: the EXR header says 1000 spp, the npz 8000
    assert cli.main(["compare", str(tmp_path / "a.exr"), ref, "--ztest", "--variance-from", "reference"]) == 0
    assert "reference's x 8000/1000 spp" in capsys.readouterr().out
    status = cli.main(["compare", str(tmp_path / "b.exr"), ref, "--ztest", "--actual-variance",
                       str(tmp_path / "bv.exr"), "--ztest-output", str(tmp_path / "z"), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert status == 1 and not result["passed"] and result["ztest"]["rejected_pixels"] > 100
    p, _ = read_exr(tmp_path / "z" / "pvalue.exr")
    assert p["color"].shape == (24, 24, 3) and p["color"].min() < 1e-6
    for name in ("actual.exr", "expected.exr", "variance.exr", "rejected.png"):
        assert (tmp_path / "z" / name).is_file()
    # a z-test without the actual's variance or sample counts is bad input
    (tmp_path / "plain.pfm").write_bytes(encode_image(tmp_path / "plain.pfm", a))
    assert cli.main(["compare", str(tmp_path / "plain.pfm"), ref, "--ztest"]) == 2
    assert "--actual-variance" in capsys.readouterr().err
