"""The wavefront probe (benchmarks/probe_wavefront.py) renders what the renderer renders:
its five shapes agree with each other pixel for pixel, and with the path tracer's
Cornell box to the renderer's noise, so the paths per second it reports are for the
same work."""
import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))
import probe_wavefront  # noqa: E402

import raytrace  # noqa: E402

SIZE, SPP = 32, 16


@pytest.fixture(scope="module")
def cornell():
    return probe_wavefront.cornell_arrays()


@pytest.fixture(scope="module")
def images(cornell):
    scene, arrays, cam = cornell
    return {name: probe_wavefront.render_shape(name, arrays, cam, scene.accel, SIZE, SIZE, SPP,
                                                batch=1000)
            for name in probe_wavefront.SHAPES}


def test_the_shapes_agree_pixel_for_pixel(images):
    ref = images["scalar"]
    assert ref.sum() > 0
    for name, img in images.items():
        np.testing.assert_allclose(img, ref, rtol=1e-12, atol=1e-12, err_msg=name)


def blocks(img, b=8):
    """Means over b x b pixel blocks of a (SIZE * SIZE,) image."""
    return img.reshape(SIZE // b, b, SIZE // b, b).mean(axis=(1, 3))


def test_the_probe_renders_the_renderers_cornell_box(cornell, images):
    """The probe's 16-spp image against the renderer's (Sobol, 256 spp) in 8 x 8 pixel
    blocks (1024 paths each: their noise, measured, is at most 6 %): every block within
    15 %. The same image mirrored (a negative control) is off by far more."""
    scene = cornell[0]
    ours = np.asarray(raytrace.render(scene, width=SIZE, height=SIZE, spp=256, sampler="sobol"),
                      np.float64).sum(axis=2)
    probe = (images["wavefront"] / SPP).reshape(SIZE, SIZE)
    assert probe.mean() == pytest.approx(ours.mean(), rel=0.02)
    rel = np.abs(blocks(probe.ravel()) - blocks(ours.ravel())) / blocks(ours.ravel())
    assert rel.max() < 0.15, rel
    mirrored = np.abs(blocks(probe[:, ::-1].ravel()) - blocks(ours.ravel())) / blocks(ours.ravel())
    assert mirrored.max() > 1.0


def test_negative_control_without_mis_the_probe_is_off(cornell, monkeypatch):
    """The probe's scalar shape recompiled with both strategies at full weight (light
    found by next-event estimation and by BSDF sampling counted twice): far brighter than
    the renderer, so the agreement above is not a given."""
    import numba
    scene, arrays, cam = cornell
    ours = np.asarray(raytrace.render(scene, width=SIZE, height=SIZE, spp=64, sampler="sobol"),
                      np.float64).sum(axis=2).mean()
    monkeypatch.setattr(probe_wavefront, "mis", numba.njit(lambda a, b: 1.0))
    jit = numba.njit(error_model="numpy")                        # as the probe's kernels
    monkeypatch.setattr(probe_wavefront, "shade", jit(probe_wavefront.shade.py_func))
    render = jit(probe_wavefront.render_scalar.py_func)           # compiled with both above
    out = np.zeros(SIZE * SIZE)
    render(arrays, cam, SIZE, SIZE, SPP, 8, 5, out, scene.accel, True)
    assert out.sum() / (SIZE * SIZE * SPP) > 1.1 * ours


def test_the_timed_driver_renders_the_wavefront_simd_image(cornell, images):
    """``timed_wavefront_simd`` (the stage table of ``--stages``) runs the same stages as
    ``wavefront_simd``: the same image, every stage timed, as many bounces as the paths
    had (at least one, at most max_depth 8 each)."""
    scene, arrays, cam = cornell
    out = np.zeros(SIZE * SIZE)
    seconds, bounces = probe_wavefront.timed_wavefront_simd(arrays, cam, SIZE, SIZE, SPP, 1000, out)
    np.testing.assert_array_equal(out, images["wavefront_simd"])
    assert set(seconds) == set(probe_wavefront.STAGES) and all(v >= 0.0 for v in seconds.values())
    n = SIZE * SIZE * SPP
    assert n < bounces <= 8 * n
