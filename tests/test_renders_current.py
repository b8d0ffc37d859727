"""The committed images in renders/ are what ``make renders`` produces from scenes/.

Every scene is loaded as ``scripts/render_all.py`` (the script ``make renders`` runs)
loads it and rendered at its own full settings, but only in BANDS bands of BAND_ROWS rows
spread over the image (``raytrace.animation.tiles.render_band``: a band is bit-identical
to the same rows of the whole render, tests/test_animation_farm.py checks that); those
rows are compared with the same rows of ``renders/<name>.png`` at the tolerance of
tests/test_regression.py (8-bit sRGB: mean |diff| <= 1 and at most 0.5% of the pixels off
by more than 8). A scene or code change that alters an image fails here until the images
are regenerated: run ``make renders`` and commit them (a change confined to rows between
the bands would pass; the bands cost about a sixth of full renders, which took about 4
CPU-minutes). A scene that needs ../shared is skipped when that data is absent. On
failure, actual, expected and a 4x amplified diff of the bands go to tests/output/.
"""
import importlib.util
import pathlib

import imageio.v3 as iio
import numpy as np
import pytest

import raytrace
from raytrace.image import to_8bit

REPO = pathlib.Path(__file__).resolve().parents[1]
MAX_MEAN_DIFF = 1.0        # mean |diff| over all pixels and channels, 8-bit values
MAX_FRACTION_OFF = 0.005   # share of pixels with some channel off by more than ...
OFF_BY = 8


def _render_all():
    spec = importlib.util.spec_from_file_location("render_all", REPO / "scripts" / "render_all.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


render_all = _render_all()
BANDS, BAND_ROWS = 6, 4


def band_rows(height):
    """Row ranges [(row0, row1), ...]: BANDS bands of BAND_ROWS rows, evenly spread."""
    starts = np.linspace(0, max(0, height - BAND_ROWS), BANDS).round().astype(int)
    return [(int(r), int(min(height, r + BAND_ROWS))) for r in sorted(set(starts))]


def render_bands(path):
    """(rows, the scene's image on those rows) as ``make renders`` would render it."""
    from raytrace.animation.tiles import render_band
    scene = raytrace.load_scene(path)
    height = raytrace.renderer.resolve_settings(scene, {})["height"]
    ranges = band_rows(height)
    rows = np.concatenate([np.arange(r0, r1) for r0, r1 in ranges])
    return rows, np.concatenate([render_band(scene, r0, r1)[0] for r0, r1 in ranges])
SCENES = sorted(render_all.SCENES.glob("*.json"))


def compare(actual, expected):
    """(mean |diff|, fraction of pixels off by more than OFF_BY) of two uint8 images."""
    diff = np.abs(actual.astype(int) - expected.astype(int))
    return diff.mean(), (diff.max(axis=2) > OFF_BY).mean(), diff


def test_tolerance_accepts_noise_and_rejects_a_changed_image():
    """The comparison itself: last-bit noise passes, a shifted region does not."""
    rng = np.random.default_rng(0)
    ref = rng.integers(0, 256, size=(100, 100, 3)).astype(np.uint8)
    noisy = np.clip(ref.astype(int) + rng.integers(-1, 2, size=ref.shape), 0, 255)
    mean, off, _ = compare(noisy, ref)
    assert mean <= MAX_MEAN_DIFF and off <= MAX_FRACTION_OFF
    changed = ref.copy()
    changed[40:50, 40:50] = 255 - changed[40:50, 40:50]   # 1% of the pixels inverted
    mean, off, _ = compare(changed, ref)
    assert off > MAX_FRACTION_OFF


def test_every_scene_has_a_render_and_every_render_a_scene():
    scenes = {p.stem for p in SCENES}
    images = {p.stem for p in render_all.RENDERS.glob("*.png")}
    assert scenes - images == set(), "scenes without an image in renders/ (run make renders)"
    assert images - scenes == set(), "images in renders/ without a scene in scenes/"


@pytest.mark.parametrize("path", SCENES, ids=lambda p: p.stem)
def test_committed_render_is_current(path, output_dir):
    try:
        rows, image = render_bands(path)
    except raytrace.SceneError as exc:
        if render_all.needs_absent_shared_data(exc):
            pytest.skip(f"{path.name} needs ../shared: {exc}")
        raise
    committed = render_all.RENDERS / f"{path.stem}.png"
    expected = iio.imread(committed)[..., :3]
    assert rows.max() < expected.shape[0], f"{committed} has the wrong size; run make renders"
    expected = expected[rows]
    actual = to_8bit(image)
    assert actual.shape == expected.shape, f"{committed} has the wrong size; run make renders"
    mean, off, diff = compare(actual, expected)
    if mean > MAX_MEAN_DIFF or off > MAX_FRACTION_OFF:
        iio.imwrite(output_dir / "actual.png", actual)
        iio.imwrite(output_dir / "expected.png", expected.astype(np.uint8))
        iio.imwrite(output_dir / "diff.png", np.clip(diff * 4, 0, 255).astype(np.uint8))
        pytest.fail(f"{committed.relative_to(REPO)} is stale: mean |diff| {mean:.2f}, "
                    f"{100 * off:.2f}% of pixels off by > {OFF_BY}; run make renders "
                    f"(images in {output_dir})")
