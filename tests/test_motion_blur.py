"""Motion blur (``animation.shutter``): a zero-length shutter is the still bit for bit; a
moving emissive edge is blurred into the closed-form ramp (each pixel's value is the
fraction of the shutter during which it is covered), within the bound that the stratified
pass times allow, and the still or a twice-as-long shutter fail the same check; a blurred
frame equals the average of many sub-frame stills (statistically); the image depends on
the seed only (not the thread count); tiles of a blurred frame are bit-identical to it;
bad shutters are one-line errors naming the file and the field (exit status 2, nothing
written)."""
import json
import math
import pathlib
import subprocess
import sys

import numba
import numpy as np
import pytest

import raytrace
from raytrace.animation import AnimatedScene
from raytrace.animation import motion_blur as mb
from raytrace.animation.farm import animate
from raytrace.animation.tiles import bands

REPO = pathlib.Path(__file__).resolve().parents[1]
RAYTRACE = pathlib.Path(sys.executable).parent / "raytrace"

# ------------------------------------------------------------------- closed form
# An orthographic camera looks down -z at a 3.2 x 2.4 window: 32 x 24 pixels of 0.1 x 0.1.
# The emissive rectangle covers x in [L, L + 10], y in [-5, 5] (every row); its left edge
# moves with a linear track, L(t) = SPEED t (t in seconds). The frame is at t = 0 (fps 1),
# so a shutter [a, b] (frames = seconds here) sweeps the edge over [SPEED a, SPEED b].
W, H, PIXEL, SPEED = 32, 24, 0.1, 1.6


def edge_scene(shutter=None, integrator="path"):
    anim = {"start": 0, "end": 1, "fps": 1,
            "objects": {"card": {"translate": {"keys": [[-2, [-2 * SPEED, 0, 0]], [2, [2 * SPEED, 0, 0]]]}}}}
    if shutter is not None:
        anim["shutter"] = shutter
    return {
        "camera": {"type": "orthographic", "center": [0, 0, 5], "direction": [0, 0, -1], "height": H * PIXEL},
        "image": {"width": W, "height": H, "filter": "box", "seed": 3},
        "integrator": {"type": integrator},
        "background": {"color": [0, 0, 0]},
        "materials": {"black": {"diffuse": [0, 0, 0], "specular": [0, 0, 0]}},
        "objects": [{"type": "rectangle", "name": "card", "material": "black", "emission": [1, 1, 1],
                     "transform": [{"translate": [5, 0, 0]}, {"scale": [5, 5, 1]}]}],
        "animation": anim,
    }


def ramp(shutter):
    """Fraction of the shutter [a, b] during which pixel column j is covered: the edge passes
    a point x at t = x / SPEED, and the point is covered until then (t <= x / SPEED). The
    ramp is linear across whole pixels here (its ends fall on pixel edges), so the pixel's
    mean over its area equals the value at its centre."""
    a, b = shutter
    x = -W * PIXEL / 2 + PIXEL * (np.arange(W) + 0.5)
    frac = np.clip((x / SPEED - a) / (b - a), 0.0, 1.0)
    return np.broadcast_to(frac, (H, W))


def bound(shutter, spp):
    """Largest error stratified pass times allow: a pass only errs (by at most 1) while the
    edge is inside the pixel during its 1/spp of the shutter; the edge crosses a pixel in
    spp / travel strata (travel: the sweep in pixels), +2 for the strata at either end."""
    travel = SPEED * (shutter[1] - shutter[0]) / PIXEL
    return (spp / travel + 2) / spp


@pytest.mark.parametrize("integrator", ["path", "whitted"])
def test_a_moving_edge_blurs_into_the_closed_form_ramp(integrator):
    shutter, spp = [-0.5, 0.5], 64
    anim = AnimatedScene.load(edge_scene(shutter, integrator))
    image = np.asarray(raytrace.render_at(anim, 0.0, spp=spp))
    expected = ramp(shutter)
    tol = bound(shutter, spp)                      # 1/16 + 2/64 = 0.094 here
    assert np.all(image[..., 0] == image[..., 1]) and np.all(image[..., 0] == image[..., 2])
    error = np.abs(image[..., 0] - expected)
    print(f"{integrator}: max error {error.max():.4f}, mean {error.mean():.4f}, bound {tol:.4f}")
    assert error.max() <= tol
    assert np.all(image[:, :8] == 0.0) and np.all(image[:, 24:] == 1.0)   # outside the sweep: exact
    assert 0.2 < image[:, 8:24].mean() < 0.8 and len(np.unique(image[:, 8:24])) > 8   # a ramp, not an edge
    # negative controls: the still at the frame's time, and a shutter twice as long
    still = np.asarray(raytrace.render_at(anim, 0.0, shutter=(0, 0), spp=spp))
    assert np.abs(still[..., 0] - expected).max() > 2 * tol
    longer = np.asarray(raytrace.render_at(anim, 0.0, shutter=(-1, 1), spp=spp))
    assert np.abs(longer[..., 0] - expected).max() > 2 * tol
    assert np.abs(longer[..., 0] - ramp((-1, 1))).max() <= bound((-1, 1), spp)   # ... its own ramp


def test_pass_times_are_stratified_and_depend_on_the_seed_only():
    times = mb.pass_times(2.0, 3.0, 16, seed=7)
    strata = np.floor((times - 2.0) * 16).astype(int)
    assert sorted(strata) == list(range(16))                  # one time in each sixteenth
    assert list(strata) != list(range(16))                    # ... in a shuffled order
    assert np.array_equal(times, mb.pass_times(2.0, 3.0, 16, seed=7))
    assert not np.array_equal(times, mb.pass_times(2.0, 3.0, 16, seed=8))
    assert np.all(mb.pass_times(1.25, 1.25, 9, seed=7) == 1.25)


# --------------------------------------------------------- zero-length shutter, tiles
def moving_sphere(shutter=None):
    """A lit sphere moving across a floor under an area light (path tracer)."""
    anim = {"end": 1, "fps": 4,
            "objects": {"ball": {"translate": {"keys": [[0, [-1.5, 0, 0]], [1, [1.5, 0, 0]]]}}}}
    if shutter is not None:
        anim["shutter"] = shutter
    return {
        "camera": {"center": [0, 1.2, 4], "look_at": [0, 0.5, 0], "fov": 45},
        "image": {"width": 32, "height": 24, "spp": 8, "seed": 1},
        "integrator": {"type": "path", "max_depth": 3},
        "materials": {"white": {"diffuse": [0.7, 0.7, 0.7]}, "red": {"diffuse": [0.8, 0.2, 0.1]}},
        "objects": [{"type": "plane", "normal": [0, 1, 0], "material": "white"},
                    {"type": "sphere", "name": "ball", "center": [0, 0.5, 0], "radius": 0.5,
                     "material": "red"},
                    {"type": "rectangle", "emission": [6, 6, 6],
                     "transform": [{"translate": [0, 3, 0]}, {"rotate": {"axis": [1, 0, 0], "angle": 90}}]}],
        "animation": anim,
    }


def test_a_zero_length_shutter_is_the_still_bit_for_bit(tmp_path):
    anim = AnimatedScene.load(moving_sphere())
    t = anim.frame_time(2)
    still = np.asarray(raytrace.render(anim.scene_at(t)))
    # the blur's own passes (path tracer: the renderer's pass s at the pass's time)
    passes = np.asarray(mb.render_interval(anim, t, t))
    assert still.max() > 0.0 and np.array_equal(passes, still)
    # through render_at and raytrace.animate, with the shutter in the scene: a still frame
    assert np.array_equal(np.asarray(raytrace.render_at(AnimatedScene.load(moving_sphere([0.5, 0.5])),
                                                        t - 0.5 / anim.fps)), still)
    a = animate(moving_sphere(), tmp_path / "none", workers=1, frames="2", format="pfm")
    b = animate(moving_sphere([0, 0]), tmp_path / "zero", workers=1, frames="2", format="pfm")
    assert (a.paths[2].read_bytes() == b.paths[2].read_bytes())
    # negative control: a real shutter changes the frame
    c = animate(moving_sphere([0, 0.5]), tmp_path / "open", workers=1, frames="2", format="pfm")
    assert c.paths[2].read_bytes() != a.paths[2].read_bytes()


def test_zero_length_whitted_is_the_still():
    anim = AnimatedScene.load(dict(moving_sphere([0.5, 0.5]), integrator={"type": "whitted"},
                                   lights=[{"type": "point", "position": [1, 3, 2], "color": [9, 9, 9]}]))
    still = np.asarray(raytrace.render(anim.scene_at(0.25 + 0.5 / anim.fps), spp=4))
    assert np.array_equal(np.asarray(raytrace.render_at(anim, 0.25, spp=4)), still)


@pytest.mark.parametrize("integrator", ["path", "whitted"])
def test_tiles_of_a_blurred_frame_are_bit_identical_to_it(integrator):
    anim = AnimatedScene.load(dict(moving_sphere([-0.5, 0.5]), integrator={"type": integrator},
                                   lights=[{"type": "point", "position": [1, 3, 2], "color": [9, 9, 9]}]))
    whole = np.asarray(raytrace.render_at(anim, 0.5, spp=4))
    parts = [mb.render_band_at(anim, 0.5, r0, r1, spp=4)[0] for r0, r1 in bands(24, 3)]
    assert np.array_equal(np.concatenate(parts), whole)
    assert not np.array_equal(whole, np.asarray(raytrace.render_at(anim, 0.5, shutter=(0, 0), spp=4)))


def test_tiles_of_a_blurred_frame_with_media_are_bit_identical_to_it():
    """The whole blurred frame goes through the renderer's progressive loop (a scene with
    media: passes in chunks of rows), a tile pass by pass: the same sums."""
    data = dict(moving_sphere([-0.5, 0.5]), media={"fog": {"type": "homogeneous", "sigma_t": 0.3, "albedo": 0.8}},
                medium="fog")
    anim = AnimatedScene.load(data)
    assert anim.scene_at(0.5).media is not None
    whole = np.asarray(raytrace.render_at(anim, 0.5, spp=3))
    parts = [mb.render_band_at(anim, 0.5, r0, r1, spp=3)[0] for r0, r1 in bands(24, 2)]
    assert whole.max() > 0.0 and np.array_equal(np.concatenate(parts), whole)
    still = np.asarray(raytrace.render_at(anim, 0.5, shutter=(0, 0), spp=3))     # negative control
    assert not np.array_equal(whole, still)


# ------------------------------------------------------------------ statistics
def test_a_blurred_frame_is_the_average_of_sub_frame_stills():
    """The blur (128 passes, one time each) against the mean of 16 stills at the midpoints
    of 16 equal parts of the shutter (8 samples each, 128 in all): two estimates of the
    same average over the shutter, so they differ by about their own noise. That noise is
    measured, not assumed: a second blur and a second average with other seeds give
    E[(blur - average)^2] = (E[(blur - blur')^2] + E[(average - average')^2]) / 2 (a
    still of 128 samples is no yardstick: its samples are stratified over the light and the
    pixel far better than 16 stills of 8). The still at the frame's time (negative control)
    differs from the blur by far more."""
    anim = AnimatedScene.load(moving_sphere([-1, 1]))        # the ball travels 3 diameters
    t0, t1 = mb.shutter_interval(anim, 0.5, (-1, 1))
    assert (t0, t1) == (0.25, 0.75)
    mids = t0 + (np.arange(16) + 0.5) / 16 * (t1 - t0)

    def blur(seed):
        return np.asarray(raytrace.render_at(anim, 0.5, spp=128, seed=seed), np.float64)

    def average(seed):
        return np.mean([np.asarray(raytrace.render(anim.scene_at(t), spp=8, seed=seed + k))
                        for k, t in enumerate(mids)], axis=0)

    def rms(a, b):
        return float(np.sqrt(np.mean((a - b) ** 2)))

    blurred, averaged = blur(11), average(12)
    d_noise = math.sqrt((rms(blurred, blur(31)) ** 2 + rms(averaged, average(32)) ** 2) / 2)
    still = np.asarray(raytrace.render(anim.scene_at(0.5), spp=128, seed=13), np.float64)
    d_avg, d_still = rms(blurred, averaged), rms(blurred, still)
    print(f"rms: blur vs sub-frame average {d_avg:.4f}, blur vs still {d_still:.4f}, "
          f"expected from the noise of both estimates {d_noise:.4f}")
    assert d_avg < 1.5 * d_noise
    assert d_still > 4.0 * d_noise


# -------------------------------------------------------------------- determinism
def test_the_blurred_image_depends_on_the_seed_only():
    anim = AnimatedScene.load(moving_sphere([0, 0.75]))
    before = numba.get_num_threads()
    images = []
    try:
        for threads in (1, 2):
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
            images.append(np.asarray(raytrace.render_at(anim, 0.25, spp=6, seed=4)))
    finally:
        numba.set_num_threads(before)
    assert images[0].max() > 0.0 and np.array_equal(images[0], images[1])
    assert not np.array_equal(images[0], np.asarray(raytrace.render_at(anim, 0.25, spp=6, seed=5)))


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize("shutter, where, message", [
    ([0.5, 0.2], "animation.shutter", "opens after it closes ([0.5, 0.2]): open must be <= close"),
    ([0, 1.5], "animation.shutter[1]", "must be <= 1"),
    ([-2, 0], "animation.shutter[0]", "must be >= -1"),
    ([0], "animation.shutter", "must have 2 items, got 1"),
    ("open", "animation.shutter", "must be an array"),
])
def test_bad_shutters_name_the_field(shutter, where, message):
    with pytest.raises(raytrace.SceneError) as info:
        raytrace.load_scene(edge_scene(shutter))
    assert info.value.where == where and message in info.value.message


def run_cli(*args):
    return subprocess.run([str(RAYTRACE), "animate", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("text, line", [
    ('[0.5, 0.25]', "animation.shutter: opens after it closes ([0.5, 0.25]): open must be <= close"),
    ('[0, 1e999]', "animation.shutter[1]: must be a finite number, got inf"),
    ('[0, 3]', "animation.shutter[1]: must be <= 1"),
])
def test_the_command_reports_a_bad_shutter_on_one_line(tmp_path, text, line):
    scene = tmp_path / "bad.json"
    scene.write_text(json.dumps(edge_scene([0, 0])).replace('"shutter": [0, 0]', f'"shutter": {text}'))
    out = tmp_path / "out"
    proc = run_cli(scene, "-o", out, "--workers", "1", "--quiet")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"raytrace: error: {scene}: {line}"]
    assert not out.exists()


def test_the_shutter_option_is_checked(tmp_path):
    scene = tmp_path / "ok.json"
    scene.write_text(json.dumps(edge_scene()))
    proc = run_cli(scene, "-o", tmp_path / "out", "--workers", "1", "--quiet", "--shutter", "0.5", "0")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "raytrace: error: --shutter: opens after it closes ([0.5, 0]): open must be <= close"]
    assert not (tmp_path / "out").exists()
    with pytest.raises(raytrace.SceneError, match="shutter.1.: must be within -1 .. 1"):
        animate(edge_scene(), tmp_path / "api", workers=1, shutter=(0, 2))
    assert not (tmp_path / "api").exists()
