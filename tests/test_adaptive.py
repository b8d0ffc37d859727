"""Adaptive sampling and time budgets (raytrace.film.adaptive).

- the plan: neighbour means and scores against brute force, the allocation's closed-form
  properties (powers of two, the smallest scale whose predicted error meets the
  threshold, the cap), a pixel's score blind to its own samples (and the negative
  control's not);
- unbiased by construction: an adaptive image is, pixel by pixel, the uniform render of
  the same seed at that pixel's count (a pixel's first n samples are the same in every
  power-of-two pattern), and the counts do not look at the pixel's own samples;
- determinism: the same image and sample counts on 1 and 2 threads, chunked kernel calls
  equal to one pass at a time;
- bias: 16 seeds of adaptive renders against the four stored 65536-spp Mitsuba
  references (the statistics of ``test_path_vs_mitsuba``), both samplers, two
  thresholds, with the negative control that a rule judging each pixel on its own
  samples is caught (``benchmarks/bench_adaptive.py --part bias``: six scenes, 16 seeds,
  the full matrix);
- ``--time``: the image and the spp it reports, reproduced by ``--spp`` / ``--max-spp``;
- bad values: one line, exit 2.
"""
import json
import math

import numba
import numpy as np
import pytest

import raytrace
from raytrace import cli
from raytrace.film import adaptive
from raytrace.image import read_pfm, read_rgb_image
from mitsuba_path_scenes import scene_dir
from test_path_vs_mitsuba import CORNELL_BOX, _scene, compare, load_reference, summary

SEEDS = range(100, 116)
Z = 4.0


def test_pattern_spp_is_the_power_of_two_above():
    assert [adaptive.pattern_spp(n) for n in (1, 2, 3, 16, 17, 1000)] == [1, 2, 4, 16, 32, 1024]


@pytest.mark.parametrize("shape", [(7, 9), (6, 5, 3), (1, 4), (1, 1)])
def test_neighbour_mean_is_the_mean_of_the_8_neighbours(shape):
    a = np.random.default_rng(1).random(shape)
    h, w = shape[:2]
    brute = np.zeros(shape)
    for i in range(h):
        for j in range(w):
            around = [a[x, y] for x in range(max(i - 1, 0), min(i + 2, h)) for y in range(max(j - 1, 0), min(j + 2, w))
                      if (x, y) != (i, j)]
            brute[i, j] = np.mean(around, axis=0) if around else 0.0
    assert np.allclose(adaptive.neighbour_mean(a), brute, rtol=1e-12, atol=0)


def _pilot(h=12, w=14, n=16, seed=7):
    """Sums of n gamma-distributed 'samples' per pixel and channel, and the samples."""
    rng = np.random.default_rng(seed)
    scale = rng.choice([0.01, 0.3, 3.0], size=(h, w, 1, 1))       # dark, mid and bright pixels
    x = rng.gamma(0.6, 1.0, (h, w, n, 3)) * scale
    return np.concatenate([x.sum(2), (x * x).sum(2)], axis=-1), x


@pytest.mark.parametrize("own", [False, True])
def test_scores_by_hand(own):
    accum, x = _pilot()
    m, v = x.mean(2), x.var(2, ddof=1)
    image_mean = m.mean()
    if not own:
        m, v = adaptive.neighbour_mean(m), adaptive.neighbour_mean(v)
    d = np.clip(m, adaptive.DARK * image_mean, adaptive.BRIGHT * image_mean)
    by_hand = np.sqrt((v / d ** 2).mean(-1))
    assert np.allclose(adaptive.pilot_scores(accum, 16, own=own), by_hand, rtol=1e-9)


def test_a_pixels_score_does_not_look_at_its_own_samples():
    """Changing a pixel's own samples (its variance, keeping its mean and so the image's)
    leaves its score alone with the neighbour rule, and changes it with the negative
    control's own-sample rule (so the check can fail)."""
    accum, _ = _pilot()
    changed = accum.copy()
    changed[5, 6, 3:] *= 4.0                         # a far larger spread, the same mean
    for own, same in ((False, True), (True, False)):
        a, b = adaptive.pilot_scores(accum, 16, own=own), adaptive.pilot_scores(changed, 16, own=own)
        assert bool(a[5, 6] == b[5, 6]) is same
    neighbours = adaptive.pilot_scores(changed, 16) != adaptive.pilot_scores(accum, 16)
    assert neighbours.sum() == 8 and neighbours[4:7, 5:8].sum() == 8   # its neighbours see it


def _predicted(scores, n):
    return math.sqrt(float((scores ** 2 / n).mean()))


@pytest.mark.parametrize("threshold", [2.0, 0.5, 0.2, 0.05])
def test_allocation_meets_the_threshold_with_the_smallest_scale(threshold):
    accum, _ = _pilot()
    scores = adaptive.pilot_scores(accum, 16)
    n, capped = adaptive.allocate(scores, threshold, 16, 1 << 20)
    assert not capped and n.min() >= 16 and ((n & (n - 1)) == 0).all()           # powers of two
    assert _predicted(scores, n) <= threshold
    # n_i = max(16, 2^round(log2(lam s_i^0.7))): recover log2(lam) from any uncapped pixel,
    # and a slightly smaller lam no longer meets the threshold
    free = n > 16
    if free.any():
        k = np.log2(n[free]) - adaptive.EXPONENT * np.log2(scores[free])
        lo, hi = (k - 0.5).max(), (k + 0.5).min()                                  # lam's range
        assert lo <= hi
        smaller = np.maximum(np.exp2(np.round(lo - 1e-3 + adaptive.EXPONENT * np.log2(scores))), 16)
        assert _predicted(scores, smaller) > threshold
    else:
        assert _predicted(scores, np.full_like(scores, 16.0)) <= threshold


def test_allocation_edge_cases_and_the_cap():
    accum, _ = _pilot()
    scores = adaptive.pilot_scores(accum, 16)
    full, capped = adaptive.allocate(scores, 0.05, 16, 1 << 20)
    cut, capped_cut = adaptive.allocate(scores, 0.05, 16, 64)
    assert not capped and capped_cut and np.array_equal(cut, np.minimum(full, 64))   # the cap only caps
    assert np.array_equal(adaptive.allocate(scores, 0.0, 16, 256)[0], np.full(scores.shape, 256))
    assert np.array_equal(adaptive.allocate(np.zeros((3, 4)), 0.1, 8, 256)[0], np.full((3, 4), 8))
    looser = adaptive.allocate(scores, 0.1, 16, 1 << 20)[0]
    assert (looser <= full).all() and looser.sum() < full.sum()                    # monotone in the threshold


def _cornell(size=32):
    scene = _scene("cornell_box")
    scene["image"].update(width=size, height=size)
    return raytrace.load_scene(scene, base_dir=CORNELL_BOX.parent)


def test_same_image_and_counts_on_one_and_two_threads():
    scene = _cornell()
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = raytrace.render(scene, noise_threshold=0.4, max_spp=128, aovs=["samples"])
        numba.set_num_threads(max(2, before))
        two = raytrace.render(scene, noise_threshold=0.4, max_spp=128, aovs=["samples"])
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(one, two) and np.array_equal(one.aovs["samples"], two.aovs["samples"])
    n = one.aovs["samples"]
    assert n.min() == 16 and n.max() == 128 and 16 < n.mean() < 128      # it adapted
    assert one.info.spp_mean == pytest.approx(n.mean()) and one.info.stopped_by in ("spp", "noise")
    other = raytrace.render(scene, noise_threshold=0.4, max_spp=128, seed=3)
    assert not np.array_equal(one, other)


def test_chunked_kernel_calls_make_the_sums_of_single_passes():
    from raytrace.kernels import path as pk
    from raytrace.kernels.sampling import gaussian_inverse_cdf_table
    from raytrace.renderer import kernel_settings, make_camera, resolve_settings
    scene = _cornell(16)
    s = resolve_settings(scene, {"spp": 16})
    args = (scene.accel, scene.geometry, scene.lights, scene.environment, make_camera(scene.data["camera"]),
            kernel_settings(s), gaussian_inverse_cdf_table())
    one, chunk = pk.new_buffers(16, 16), pk.new_buffers(16, 16)
    for k in range(16):
        pk.render_pass(one[0], one[1], one[2], k, *args)
    pk.render_pass(chunk[0], chunk[1], chunk[2], 0, *args, count=16)
    assert np.array_equal(one[0], chunk[0]) and chunk[2][0] == 16


def test_an_adaptive_image_is_the_uniform_render_of_each_pixels_count():
    """Pixel by pixel, an adaptive render equals the uniform render of the same seed at
    that pixel's sample count: a pixel's first n samples are the same in every
    power-of-two pattern, whatever the other pixels take. With the counts blind to the
    pixel's own samples (above) and every prefix of its samples unbiased
    (``test_sampling``), the image is unbiased. Both samplers; the independent one's
    256-sample pattern is the 16 x 16 jittered grid."""
    scene = _cornell(24)
    for sampler in ("sobol", "independent"):
        img = raytrace.render(scene, noise_threshold=0.4, max_spp=256, seed=4, sampler=sampler, aovs=["samples"])
        n = img.aovs["samples"]
        assert len(np.unique(n)) >= 3 and n.min() == 16                         # it adapted
        picked = np.zeros_like(np.asarray(img))
        for k in np.unique(n):
            uniform = np.asarray(raytrace.render(scene, spp=int(k), seed=4, sampler=sampler))
            if sampler == "independent" and k != 256:       # its uniform pattern of k samples differs:
                uniform = _first_passes_image(scene, 256, int(k), seed=4, sampler=sampler)   # k of 256's
            picked[n == k] = uniform[n == k]
        assert np.array_equal(picked, np.asarray(img)), sampler


def _first_passes_image(scene, pattern_spp, passes, seed, sampler):
    """The mean of the first ``passes`` samples of every pixel of a ``pattern_spp``-sample
    render (float32, as the renderer returns it)."""
    from raytrace.kernels import path as pk
    from raytrace.kernels.sampling import gaussian_inverse_cdf_table
    from raytrace.renderer import kernel_settings, make_camera, resolve_settings
    s = resolve_settings(scene, {"spp": pattern_spp, "seed": seed, "sampler": sampler})
    h, w = s["height"], s["width"]
    accum, nonfinite, counter = pk.new_buffers(h, w)
    pk.render_pass(accum, nonfinite, counter, 0, scene.accel, scene.geometry, scene.lights,
                   scene.environment, make_camera(scene.data["camera"]), kernel_settings(s),
                   gaussian_inverse_cdf_table(), count=passes)
    return pk.mean_and_variance(accum, passes)[0].astype(np.float32)


def _bias(name, sampler, threshold, monkeypatch, own):
    monkeypatch.setattr(adaptive, "OWN_SAMPLES", own)
    ref, ref_std = load_reference(name)
    scene = raytrace.load_scene(_scene(name), base_dir=scene_dir(_scene(name)))
    renders = [raytrace.render(scene, seed=s, noise_threshold=threshold, max_spp=256, sampler=sampler) for s in SEEDS]
    assert all(16 < r.info.spp_mean < 256 for r in renders)         # it adapted
    imgs = [np.asarray(r, np.float64) for r in renders]
    half = len(imgs) // 2
    s = compare(np.mean(imgs[:half], axis=0), np.mean(imgs[half:], axis=0), ref, ref_std)
    z = s["mean_rel"] / s["mean_se"]
    worst = max(t["excess_z"] for t in s["scales"].values())
    return z, worst, summary(s)


# The four stored references, both samplers, two thresholds (about 40 and 100 samples per
# pixel on average, max_spp 256: for the independent sampler the 16 x 16 jittered grid, the
# pattern whose row-major order was biased), each scene and each sampler at both: a lean
# half of the full matrix, which ``benchmarks/bench_adaptive.py --part bias`` runs on six
# scenes.
BIAS_CASES = [("cornell_box", "sobol", 0.34), ("cornell_box", "independent", 0.22),
              ("glass_mirror", "sobol", 0.24), ("glass_mirror", "independent", 0.41),
              ("latlong_sky", "sobol", 0.22), ("latlong_sky", "independent", 0.14),
              ("spot", "sobol", 0.28), ("spot", "independent", 0.45)]


@pytest.mark.parametrize("name, sampler, threshold", BIAS_CASES)
def test_adaptive_images_are_unbiased(name, sampler, threshold, monkeypatch):
    z, worst, text = _bias(name, sampler, threshold, monkeypatch, False)
    assert np.all(np.abs(z) <= Z) and worst <= Z, text


def test_a_rule_that_looks_at_the_pixels_own_samples_is_caught(monkeypatch):
    """Negative control: each pixel's count from its own pilot samples, all of which the
    image keeps, on the glass scene (measured: channel means 1.9-3.8 % dark, 32-65
    standard errors; the neighbour rule on this scene: within 1.2)."""
    z, worst, text = _bias("glass_mirror", "sobol", 0.41, monkeypatch, True)
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
    path = _scene_file(tmp_path, noise_threshold=0.4, max_spp=64)
    out = tmp_path / "v.png"
    assert cli.main(["render", str(path), "-o", str(out), "--view", "samples"]) == 0
    err = capsys.readouterr().err
    assert "samples per pixel (adaptive, noise threshold 0.4)" in err
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
        raytrace.render(scene, noise_threshold=0.4, max_spp=128, callback=stop_after_two)
    part = stop.value.image
    capped = raytrace.render(scene, noise_threshold=0.4, max_spp=128)
    assert part is not None and part.info.spp == calls[1] < 128
    again = raytrace.render(scene, noise_threshold=0.4, max_spp=part.info.spp)
    assert np.array_equal(part, again) and not np.array_equal(part, capped)


def test_an_adaptive_pass_stopped_midway_counts_the_rows_it_finished(monkeypatch):
    """An adaptive pass is taken in chunks of rows too (Ctrl-C is seen between them):
    stopped after some rows of pass 1, those rows hold two samples and the others one,
    each pixel the mean of its own count (rows from the renders stopped after pass 1
    and after pass 0). Control: those two differ on the rows."""
    from raytrace import renderer
    from raytrace.kernels import path as pk
    scene = _cornell(16)
    monkeypatch.setattr(renderer, "BATCH_SECONDS", 1e-9)       # one row per call
    render_pass, finished = pk.render_pass, []

    def stop_in_pass_1(*args, rows=None, **kwargs):
        render_pass(*args, rows=rows, **kwargs)
        if args[3] == 1:
            finished.extend(rows.tolist())
            if len(finished) == 5:
                raise KeyboardInterrupt
    monkeypatch.setattr(pk, "render_pass", stop_in_pass_1)
    with pytest.raises(raytrace.RenderInterrupted) as stop:
        raytrace.render(scene, noise_threshold=0.4, max_spp=128)
    monkeypatch.setattr(pk, "render_pass", render_pass)
    part = np.asarray(stop.value.image)

    def stopped_after(passes):
        def callback(done, total):
            if done == passes:
                raise KeyboardInterrupt
        with pytest.raises(raytrace.RenderInterrupted) as after:
            raytrace.render(scene, noise_threshold=0.4, max_spp=128, callback=callback)
        return np.asarray(after.value.image)
    one, two = stopped_after(1), stopped_after(2)
    rest = np.setdiff1d(np.arange(part.shape[0]), finished)
    assert stop.value.spp_done == 1 and len(finished) == 5
    assert np.array_equal(part[finished], two[finished]) and np.array_equal(part[rest], one[rest])
    assert not np.array_equal(one[finished], two[finished])


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
