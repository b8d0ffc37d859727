"""benchmarks/bench_path.py: a best round far below its renderer's other rounds is named
in the report (the headline takes best rounds, which assumes load only slows runs)."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_path  # noqa: E402


def test_a_round_twice_as_fast_as_the_others_is_flagged():
    # the glass rounds of the 2026-12-02 04:33 run
    times = {"ours/sobol": [0.32, 0.79, 0.78, 0.83, 0.75],
             "llvm_ad_rgb/multijitter": [0.63, 0.63, 0.51, 0.59, 0.61]}
    odd = bench_path.outlier_rounds(times)
    assert [(r, b) for r, b, _ in odd] == [("ours/sobol", 0.32)]
    assert odd[0][2] == pytest.approx(0.78)
    assert bench_path._median_ratio(times, "llvm_ad_rgb") == pytest.approx(0.78 / 0.61)


def test_ordinary_spread_is_not_flagged():
    # the Cornell box rounds of the same run (negative control), and two rounds only
    times = {"ours/sobol": [0.43, 0.43, 0.43, 0.44, 0.44],
             "llvm_ad_rgb/multijitter": [0.29, 0.30, 0.30, 0.29, 0.29],
             "scalar_rgb/independent": [0.5, 1.0]}
    assert bench_path.outlier_rounds(times) == []
