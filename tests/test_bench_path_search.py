"""The spp search of ``benchmarks/bench_path.py`` (``spp_for_target``) on made-up error
curves: the renderer workers are replaced by a table of RMSE per spp, so the test checks
the search itself, not any renderer."""
import importlib
import math
import pathlib
import sys

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
bench_path = importlib.import_module("bench_path")


def search(monkeypatch, tmp_path, error_of, first_spp=8, target=0.024):
    """Runs the search with ``error_of(spp)`` as every seed's RMSE; -> (spp, rmse, asked)."""
    asked = []

    def fake_worker(scene_name, renderer, spps, llvm, seed=0, save=None, extra_env=None):
        rows = []
        for k, spp in enumerate(spps):
            path = tmp_path / f"img_{spp}_{k}.npy"
            np.save(path, np.array([spp], np.float64))
            rows.append({"spp": spp, "seconds": 0.1, "image": str(path)})
        asked.append(spps[0])
        return rows

    monkeypatch.setattr(bench_path, "run_worker", fake_worker)
    monkeypatch.setattr(bench_path, "OUT", tmp_path)
    monkeypatch.setattr(bench_path, "rmse", lambda image, ref, ref_var: error_of(int(image[0])))
    spp, err = bench_path.spp_for_target("cornell", "ours/sobol", target, None, 0.0, None, first_spp)
    return spp, err, asked


def test_a_smooth_curve_finds_the_first_spp_that_reaches_the_target(monkeypatch, tmp_path):
    spp, err, _ = search(monkeypatch, tmp_path, lambda n: 0.1 / math.sqrt(n))
    assert spp == math.ceil((0.1 / 0.024) ** 2) == 18 and err <= 0.024


def test_a_power_of_two_that_beats_the_counts_above_it_is_found(monkeypatch, tmp_path):
    # 16 reaches the target, 17 does not, 18 does: a search that assumes the error falls
    # with spp can stop at 18 without trying 16
    table = {16: 0.0239, 17: 0.0241}
    spp, err, asked = search(monkeypatch, tmp_path, lambda n: table.get(n, 0.1 / math.sqrt(n)),
                             first_spp=17)
    assert (spp, err) == (16, 0.0239)
    assert asked[-1] == 16
    # negative control: when 16 misses, the answer stays 18
    table[16] = 0.0245
    spp, err, _ = search(monkeypatch, tmp_path, lambda n: table.get(n, 0.1 / math.sqrt(n)),
                         first_spp=17)
    assert spp == 18
