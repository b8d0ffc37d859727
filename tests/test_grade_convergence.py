"""``raytrace convergence``: the error of our path tracer against the converged Mitsuba
render of the Cornell box falls as spp^(-1/2) with independent samples (and faster with
the stratified Sobol sampler), measured through the command line."""
import csv
import json
import pathlib

import imageio.v3 as iio
import numpy as np
import pytest

from raytrace import cli
from raytrace.grade.convergence import fit_slope

REPO = pathlib.Path(__file__).resolve().parents[1]
REFERENCE = REPO / "tests" / "reference" / "path" / "cornell_box.npz"
SIZE = 32                       # the 64 x 64 reference averaged over 2 x 2 blocks (exact for a box filter)
SPP = "2,8,32,128,512"          # no perfect squares: the independent sampler then has no jittered grid


def test_fit_slope_is_exact_on_a_power_law():
    x = [1, 4, 16, 64]
    assert fit_slope(x, [3.0 * v ** -0.5 for v in x]) == pytest.approx(-0.5, abs=1e-12)
    assert np.isnan(fit_slope([1], [1.0]))


@pytest.fixture(scope="module")
def cornell(tmp_path_factory):
    if not REFERENCE.exists():
        pytest.skip(f"{REFERENCE} missing")
    d = tmp_path_factory.mktemp("conv")
    with np.load(REFERENCE) as f:
        mean = f["mean"].astype(np.float64)
    np.save(d / "ref.npy", mean.reshape(SIZE, 2, SIZE, 2, 3).mean(axis=(1, 3)))
    return d


def _run(cornell, sampler, seeds, spp=SPP):
    out = cornell / f"{sampler}"
    status = cli.main(["convergence", str(REPO / "scenes" / "cornell_box.json"), "--reference",
                       str(cornell / "ref.npy"), "--filter", "box", "--spp", spp, "--sampler", sampler,
                       "--seeds", str(seeds), "--time", "-o", str(out.with_suffix(".png")),
                       "--csv", str(out.with_suffix(".csv")), "--json", str(out.with_suffix(".json")), "-q"])
    assert status == 0
    return json.loads(out.with_suffix(".json").read_text())["series"][0], out


def test_independent_sampler_converges_at_minus_one_half(cornell):
    series, out = _run(cornell, "independent", seeds=4)
    assert series["spp"] == [2, 8, 32, 128, 512] and series["seeds"] == 4
    assert abs(series["slope_rmse_spp"] + 0.5) < 0.05, series
    assert abs(series["slope_relmse_spp"] + 1.0) < 0.1, series
    rows = list(csv.DictReader(out.with_suffix(".csv").open()))
    assert [int(r["spp"]) for r in rows] == series["spp"]
    assert [float(r["rmse"]) for r in rows] == pytest.approx(series["rmse"], rel=1e-6)
    plot = iio.imread(out.with_suffix(".png"))
    assert plot.shape[0] > 700 and plot.shape[1] > 1000          # 2 x 2 panels with --time


def test_sobol_is_steeper(cornell):
    series, _ = _run(cornell, "sobol", seeds=1, spp="2,8,32,128")
    assert series["slope_rmse_spp"] < -0.6, series


def test_bad_input(cornell, capsys):
    scene = str(REPO / "scenes" / "cornell_box.json")
    for argv, words in ((["--spp", "0,4"], "integers >= 1"), (["--sampler", "halton"], "sobol, independent"),
                        (["--seeds", "0"], "must be >= 1")):
        status = cli.main(["convergence", scene, "--reference", str(cornell / "ref.npy"), "-o",
                           str(cornell / "x.png"), *argv])
        err = capsys.readouterr().err
        assert status == 2 and words in err and len(err.strip().splitlines()) == 1, err
    status = cli.main(["convergence", scene, "--reference", str(cornell / "nope.exr"), "-o", str(cornell / "x.png")])
    assert status == 2 and "reference file not found" in capsys.readouterr().err
