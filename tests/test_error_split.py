"""``benchmarks/error_split.py``: the near-emitter mask and the split of the squared
error, on made-up images with known errors (the renderers are not involved)."""
import importlib
import math
import pathlib
import sys

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
error_split = importlib.import_module("error_split")


def square_reference(h=32, w=40, top=10, left=12, size=5, level=13.0, floor=0.5):
    ref = np.full((h, w, 3), floor)
    ref[top:top + size, left:left + size] = level
    return ref


def test_mask_is_the_bright_square_grown_by_one_pixel():
    ref = square_reference()
    near = error_split.near_emitter_mask(ref, 2.0)
    expected = np.zeros(ref.shape[:2], bool)
    expected[9:16, 11:18] = True
    assert near.sum() == 7 * 7
    assert np.array_equal(near, expected)
    # at the border the neighbourhood is cut, not wrapped
    ref2 = square_reference(top=0, left=0, size=2)
    near2 = error_split.near_emitter_mask(ref2, 2.0)
    assert near2.sum() == 3 * 3 and near2[0, 0] and not near2[-1, -1]
    # nothing above the threshold: no pixel is near an emitter
    assert not error_split.near_emitter_mask(square_reference(level=1.5), 2.0).any()


def test_split_of_known_errors():
    ref = square_reference()
    near = error_split.near_emitter_mask(ref, 2.0)
    a, b = 0.3, 0.01                       # error added near the emitter, and elsewhere
    img = ref + np.where(near[..., None], a, b)
    img2 = ref - np.where(near[..., None], a, b)
    e = error_split.split_errors([img, img2], ref, 0.0, near)
    n_near, n = near.sum(), near.size
    assert math.isclose(e["mse_near"], a * a)
    assert math.isclose(e["mse_rest"], b * b)
    share = n_near * a * a / (n_near * a * a + (n - n_near) * b * b)
    assert math.isclose(e["share_near"], share)
    assert e["n_near"] == 49
    rmse = math.sqrt((n_near * a * a + (n - n_near) * b * b) / n)
    assert math.isclose(e["rmse"], rmse)
    # the reference's own noise comes off the RMSE in quadrature, not off the regions
    e2 = error_split.split_errors([img, img2], ref, 1e-3, near)
    assert math.isclose(e2["rmse"], math.sqrt(rmse * rmse - 1e-3))
    assert math.isclose(e2["mse_near"], a * a)
    # negative control: the same error everywhere gives the near region its pixel share
    flat = error_split.split_errors([ref + 0.1], ref, 0.0, near)
    assert math.isclose(flat["share_near"], n_near / n)
    assert math.isclose(flat["mse_near"], flat["mse_rest"])


def test_bad_arguments_exit_2(capsys):
    for argv in (["--spps", "x"], ["--spps", "0"], ["--renderers", "blender/x"], ["--seeds", "0"]):
        with pytest.raises(SystemExit) as info:
            error_split.main(argv)
        assert info.value.code == 2
        assert "error:" in capsys.readouterr().err


def test_measure_reads_and_removes_the_workers_images(monkeypatch, tmp_path):
    """``measure`` asks one worker for ``seeds`` images, splits their error and deletes
    them; the spp it reports is the one the worker used (Mitsuba rounds some up)."""
    ref = square_reference()
    near = error_split.near_emitter_mask(ref, 2.0)
    calls, paths = [], []

    def fake_worker(scene, renderer, spps, llvm, seed=0, save=None, extra_env=None):
        calls.append((scene, renderer, list(spps)))
        rows = []
        for k, spp in enumerate(spps):
            path = tmp_path / f"img_{k}.npy"
            np.save(path, (ref + (0.25 if k % 2 else -0.25)).astype(np.float32))   # exact in float32
            paths.append(path)
            rows.append({"spp": spp + 2, "seconds": 0.5 - 0.1 * k, "image": str(path)})
        return rows

    monkeypatch.setattr(error_split.bench_path, "run_worker", fake_worker)
    used, e, seconds = error_split.measure("cornell", "llvm_ad_rgb/multijitter", 18, 3, ref, 0.0,
                                           near, None)
    assert calls == [("cornell", "llvm_ad_rgb/multijitter", [18, 18, 18])]
    assert used == 20 and math.isclose(seconds, 0.3)
    assert e["mse_near"] == 0.0625 and e["mse_rest"] == 0.0625
    assert math.isclose(e["rmse"], 0.25)
    assert not any(p.exists() for p in paths)
