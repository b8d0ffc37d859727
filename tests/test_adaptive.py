"""Adaptive sampling and time budgets (raytrace.film.adaptive, raytrace.kernels.adaptive).

- the stopping rule: the Numba kernel against the NumPy statement of it, the judged
  sample counts in closed form, the 3x3 maximum against a brute-force one;
- determinism: the same image and sample counts on 1 and 2 threads, chunked calls equal
  to one pass at a time;
- bias: 10 seeds of adaptive renders against the stored 65536-spp Mitsuba references
  (the statistics of ``test_path_vs_mitsuba``), with the negative control that a rule
  keeping the samples it judged (the production shortcut) is caught;
- ``--time``: the image and the spp it reports, reproduced by ``--spp`` / ``--max-spp``;
- bad values: one line, exit 2.
"""
import json

import numba
import numpy as np
import pytest

import raytrace
from raytrace import cli
from raytrace.film import adaptive
from raytrace.image import read_pfm, read_rgb_image
from raytrace.kernels.adaptive import stop_converged
from test_path_vs_mitsuba import CORNELL_BOX, _scene, compare, load_reference, summary

SEEDS = range(100, 110)
Z = 4.0


def test_judged_counts_closed_form():
    counts = np.arange(0, 70)
    brute = np.array([sum((k // 4) % 4 == 3 for k in range(n)) for n in counts])
    assert adaptive.judged_count(counts).tolist() == brute.tolist()
    assert adaptive.judged_count(16) == 4 and adaptive.judged_count(14) == 2 and adaptive.judged_count(13) == 1
    assert [adaptive.pattern_spp(n) for n in (1, 2, 3, 16, 17, 1000)] == [1, 2, 4, 16, 32, 1024]


def test_neighbourhood_max_is_the_3x3_maximum():
    a = np.random.default_rng(1).random((7, 9))
    brute = np.array([[a[max(i - 1, 0):i + 2, max(j - 1, 0):j + 2].max() for j in range(9)] for i in range(7)])
    assert np.array_equal(adaptive.neighbourhood_max(a), brute)


@pytest.mark.parametrize("judged_only", [True, False])
def test_kernel_is_the_numpy_rule(judged_only, monkeypatch):
    rng = np.random.default_rng(7)
    h, w = 20, 24
    counts = rng.integers(8, 60, (h, w))
    k = adaptive.judged_count(counts) if judged_only else counts
    samples = [rng.gamma(0.5, 0.4, (int(k[i, j]), 3)) for i in range(h) for j in range(w)]
    half = np.zeros((h, w, 6))
    for idx, s in enumerate(samples):
        half[idx // w, idx % w, :3] = s.sum(0)
        half[idx // w, idx % w, 3:] = (s * s).sum(0)
    # by hand: judged mean and variance, floor = 2 x the image's mean of the means
    means = half[..., :3] / np.maximum(k, 1)[..., None]
    var = np.array([s.var(axis=0, ddof=1) if len(s) > 1 else np.zeros(3) for s in samples]).reshape(h, w, 3)
    floor = adaptive.FLOOR * means.mean()
    by_hand = (np.sqrt(var / counts[..., None]) / np.maximum(means, floor)).max(-1)
    by_hand[k < 2] = np.inf
    monkeypatch.setattr(adaptive, "JUDGED_ONLY", judged_only)
    if judged_only:
        assert np.allclose(adaptive.pixel_noise(half, counts), by_hand, rtol=1e-9)
    threshold = float(np.median(by_hand[np.isfinite(by_hand)]))
    active = np.ones((h, w), np.uint8)
    active[0, :5] = 0                                   # stopped pixels stay stopped
    noise = np.empty((h, w))
    left = stop_converged(half, counts, active, noise, threshold, adaptive.FLOOR, judged_only)
    assert np.allclose(noise, by_hand, rtol=1e-9)
    was_active = np.ones((h, w), bool)
    was_active[0, :5] = False
    expect = (adaptive.neighbourhood_max(by_hand) >= threshold) & was_active
    assert active.astype(bool).tolist() == expect.tolist()
    assert left == int(expect.sum()) and 0 < left < h * w - 5


def _cornell(size=32):
    scene = _scene("cornell_box")
    scene["image"].update(width=size, height=size)
    return raytrace.load_scene(scene, base_dir=CORNELL_BOX.parent)


def test_same_image_and_counts_on_one_and_two_threads():
    scene = _cornell()
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = raytrace.render(scene, noise_threshold=0.15, max_spp=128, aovs=["samples"])
        numba.set_num_threads(max(2, before))
        two = raytrace.render(scene, noise_threshold=0.15, max_spp=128, aovs=["samples"])
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(one, two) and np.array_equal(one.aovs["samples"], two.aovs["samples"])
    n = one.aovs["samples"]
    assert n.min() == 16 and n.max() == 128 and 16 < n.mean() < 128      # it adapted
    assert one.info.spp_mean == pytest.approx(n.mean()) and one.info.stopped_by in ("spp", "noise")
    other = raytrace.render(scene, noise_threshold=0.15, max_spp=128, seed=3)
    assert not np.array_equal(one, other)


def test_chunked_kernel_calls_make_the_sums_of_single_passes():
    from raytrace.kernels import path as pk
    from raytrace.renderer import environment, kernel_settings, resolve_settings, scene_lights, make_camera
    from raytrace.kernels.sampling import gaussian_inverse_cdf_table
    scene = _cornell(16)
    s = resolve_settings(scene, {"spp": 16})
    args = (scene.accel, scene.geometry, scene_lights(scene), environment(scene), make_camera(scene.data["camera"]),
            kernel_settings(s), gaussian_inverse_cdf_table())
    one, chunk = pk.new_buffers(16, 16), pk.new_buffers(16, 16)
    half1, half2 = np.zeros((16, 16, 6)), np.zeros((16, 16, 6))
    for k in range(16):
        pk.render_pass(one[0], one[1], one[2], k, *args, half=half1)
    pk.render_pass(chunk[0], chunk[1], chunk[2], 0, *args, half=half2, count=16)
    assert np.array_equal(one[0], chunk[0]) and np.array_equal(half1, half2) and chunk[2][0] == 16
    judged = np.zeros_like(half1)
    for k in range(12, 16):                              # the judged samples: block 12-15
        b = pk.new_buffers(16, 16)
        pk.render_pass(b[0], b[1], b[2], k, *args)
        judged += b[0]
    assert np.allclose(half1, judged, rtol=1e-12)


def _bias(name, monkeypatch, judged_only):
    monkeypatch.setattr(adaptive, "JUDGED_ONLY", judged_only)
    ref, ref_std = load_reference(name)
    scene = raytrace.load_scene(_scene(name), base_dir=CORNELL_BOX.parent)
    renders = [raytrace.render(scene, seed=s, noise_threshold=0.2, max_spp=256) for s in SEEDS]
    assert all(16 < r.info.spp_mean < 256 for r in renders)         # it adapted
    imgs = [np.asarray(r, np.float64) for r in renders]
    s = compare(np.mean(imgs[:5], axis=0), np.mean(imgs[5:], axis=0), ref, ref_std)
    z = s["mean_rel"] / s["mean_se"]
    worst = max(t["excess_z"] for t in s["scales"].values())
    return z, worst, summary(s)


@pytest.mark.parametrize("name", ["cornell_box", "glass_mirror"])
def test_adaptive_images_are_unbiased(name, monkeypatch):
    z, worst, text = _bias(name, monkeypatch, True)
    assert np.all(np.abs(z) <= Z) and worst <= Z, text


def test_a_rule_that_keeps_what_it_judged_is_caught(monkeypatch):
    """Negative control: the rule judging all the samples, all of which the image keeps,
    on the glass scene (measured: means 3 % dark, 20-46 standard errors)."""
    z, worst, text = _bias("glass_mirror", monkeypatch, False)
    assert np.any(np.abs(z) > Z) or worst > Z, text


# ---------------------------------------------------------------- the command line
def _scene_file(tmp_path, **integrator):
    scene = _scene("cornell_box")
    scene["image"].update(width=24, height=24)
    scene["integrator"].update(integrator)
    for m in scene.get("objects", []):
        if "file" in m:
            m["file"] = str((CORNELL_BOX.parent / m["file"]).resolve())
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(scene))
    return path


def test_time_budget_writes_an_image_that_spp_reproduces(tmp_path, capsys):
    path = _scene_file(tmp_path)
    out, again = tmp_path / "t.pfm", tmp_path / "again.pfm"
    assert cli.main(["render", str(path), "-o", str(out), "--time", "0.5"]) == 0
    line = capsys.readouterr().err
    spp = int(line.split(" spp in the time budget")[0].rsplit(" ", 1)[1])
    assert f"--spp {spp} gives this image" in line and spp >= 1
    assert cli.main(["render", str(path), "-o", str(again), "--spp", str(spp), "-q"]) == 0
    a, b = read_pfm(out), read_pfm(again)
    assert np.array_equal(a, b) and np.isfinite(a).all() and a.mean() > 0


def test_adaptive_time_budget_is_reproduced_by_max_spp(tmp_path):
    scene = _cornell(24)
    timed = raytrace.render(scene, noise_threshold=0.01, max_spp=65536, time_budget=0.3)
    assert timed.info.stopped_by == "time" and 16 <= timed.info.spp < 65536
    again = raytrace.render(scene, noise_threshold=0.01, max_spp=timed.info.spp)
    # the camera pattern of max_spp 65536 and of spp: both powers of two >= spp use Sobol points
    assert np.array_equal(timed, again)


@pytest.mark.parametrize("args, message", [
    (["--noise-threshold", "-1"], "--noise-threshold: must be >= 0"),
    (["--noise-threshold", "nan"], "--noise-threshold: must be a finite number"),
    (["--min-spp", "0", "--noise-threshold", "0.1"], "--min-spp: must be an integer >= 1"),
    (["--max-spp", "0", "--noise-threshold", "0.1"], "--max-spp: must be an integer >= 1"),
    (["--time", "0"], "--time: must be > 0"),
    (["--time", "inf"], "--time: must be a finite number"),
    (["--min-spp", "8"], "--min-spp: needs noise_threshold"),
    (["--max-spp", "8"], "--max-spp: needs noise_threshold"),
    (["--noise-threshold", "0.1", "--min-spp", "64", "--max-spp", "32"], "--min-spp: must be <= max_spp (32)"),
    (["--noise-threshold", "0.1", "--integrator", "whitted"], "--noise-threshold: adaptive sampling and time"),
    (["--time", "1", "--integrator", "whitted"], "--time: adaptive sampling and time"),
])
def test_bad_values_exit_2_with_one_line(tmp_path, capsys, args, message):
    path = _scene_file(tmp_path)
    out = tmp_path / "o.png"
    assert cli.main(["render", str(path), "-o", str(out), "-q"] + args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize("value", ["x", -0.5])
def test_a_bad_noise_threshold_in_the_scene_file(tmp_path, capsys, value):
    path = _scene_file(tmp_path, noise_threshold=value)
    assert cli.main(["render", str(path), "-o", str(tmp_path / "o.png"), "-q"]) == 2
    err = capsys.readouterr().err
    assert "noise_threshold" in err and str(path.name) in err


def test_samples_view_and_aov(tmp_path, capsys):
    path = _scene_file(tmp_path, noise_threshold=0.15, max_spp=64)
    out = tmp_path / "v.png"
    assert cli.main(["render", str(path), "-o", str(out), "--view", "samples"]) == 0
    err = capsys.readouterr().err
    assert "samples per pixel (adaptive, noise threshold 0.15)" in err
    view = read_rgb_image(out)
    assert view.shape[0] > 24 and view.shape[1] == 24          # the legend strip below
    from raytrace.views import render_view
    v = render_view(raytrace.load_scene(path), "samples")
    n = v.data["samples"]
    assert n.min() >= 16 and n.max() <= 64 and n.min() < n.max()
    again = render_view(raytrace.load_scene(path), "samples")
    assert np.array_equal(v.image, again.image)               # deterministic


def test_an_adaptive_exr_says_so_and_merge_refuses_it(tmp_path, capsys):
    pytest.importorskip("OpenEXR")
    path = _scene_file(tmp_path, noise_threshold=0.2, max_spp=32)
    a, b = tmp_path / "a.exr", tmp_path / "b.exr"
    for out, seed in ((a, "1"), (b, "2")):
        assert cli.main(["render", str(path), "-o", str(out), "--seed", seed, "-q"]) == 0
    assert cli.main(["merge", str(a), str(b), "-o", str(tmp_path / "m.exr")]) == 2
    err = capsys.readouterr().err
    assert "is an adaptive render" in err and "a.exr" in err
    assert not (tmp_path / "m.exr").exists()


def test_interrupted_adaptive_render_counts_the_samples_it_holds():
    """A second Ctrl-C ends the render after the kernel call it came in: the image is the
    mean of the samples the buffers hold (the same as a render capped at those passes)."""
    scene = _cornell(16)
    calls = []

    def stop_after_two(done, total):
        calls.append(done)
        if len(calls) == 2:
            raise KeyboardInterrupt
    with pytest.raises(raytrace.RenderInterrupted) as stop:
        raytrace.render(scene, noise_threshold=0.05, max_spp=64, callback=stop_after_two)
    part = stop.value.image
    capped = raytrace.render(scene, noise_threshold=0.05, max_spp=64)
    assert part is not None and part.info.spp == calls[1] < 64
    again = raytrace.render(scene, noise_threshold=0.05, max_spp=part.info.spp)
    assert np.array_equal(part, again) and not np.array_equal(part, capped)


def test_filtered_aovs_of_an_adaptive_render_use_its_camera_samples():
    """The first min_spp samples of the camera pattern (max_spp 48 -> 64 samples), not
    those of an spp-sample render (48: multi-jittered points, which differ)."""
    scene = _cornell(16)
    img = raytrace.render(scene, noise_threshold=0.2, max_spp=48, aovs=["albedo"])
    assert np.array_equal(img.aovs["albedo"], _first_passes_albedo(scene, 64, 16))
    assert not np.array_equal(img.aovs["albedo"], _first_passes_albedo(scene, 48, 16))   # it can fail


def _first_passes_albedo(scene, pattern_spp, passes):
    """The albedo AOV of the first ``passes`` samples of a ``pattern_spp``-sample render."""
    from raytrace import renderer
    from raytrace.layout import AOV_WIDTH, PATH_SAMPLING
    s = renderer.resolve_settings(scene, {"spp": pattern_spp})
    buf = np.zeros((s["height"], s["width"], AOV_WIDTH))
    for k in range(passes):
        renderer._aov_pass(scene, s, buf, k, PATH_SAMPLING)
    return renderer.finish_aovs(scene, s, ("albedo",), buf, passes, np.zeros(1, np.int64))["albedo"]
