"""Encodings and writers: sRGB curve, raw clamp, PFM, atomic writes."""
import numpy as np
import pytest

from raytrace.image import (depth_image, linear_to_srgb, normal_image, read_pfm, save_image,
                            srgb_to_linear, to_8bit)


def test_srgb_curve_known_values_and_round_trip():
    assert linear_to_srgb(np.array([0.0, 1.0]))== pytest.approx([0.0, 1.0])
    assert linear_to_srgb(0.0031308) == pytest.approx(12.92 * 0.0031308)
    assert linear_to_srgb(0.5) == pytest.approx(1.055 * 0.5 ** (1 / 2.4) - 0.055)
    x = np.linspace(0, 1, 1001)
    assert srgb_to_linear(linear_to_srgb(x)) == pytest.approx(x, abs=1e-12)


def test_8bit_encodings():
    img = np.array([[[0.5, 0.0, 2.0]]], np.float32)
    assert to_8bit(img, "srgb").tolist() == [[[188, 0, 255]]]     # 0.7354 * 255 = 187.5 -> 188
    assert to_8bit(img, "linear").tolist() == [[[128, 0, 255]]]   # the course's raw clamp
    assert to_8bit(np.array([[[np.nan, -1, np.inf]]]), "linear").tolist() == [[[0, 0, 255]]]
    with pytest.raises(ValueError):
        to_8bit(img, "gamma")


def test_pfm_round_trip_keeps_hdr_values(tmp_path):
    img = np.random.default_rng(0).uniform(0, 50, (5, 7, 3)).astype(np.float32)
    save_image(tmp_path / "x.pfm", img)
    assert np.array_equal(read_pfm(tmp_path / "x.pfm"), img)


def test_png_round_trip(tmp_path):
    import imageio.v3 as iio
    img = np.random.default_rng(1).uniform(0, 1, (4, 6, 3)).astype(np.float32)
    save_image(tmp_path / "x.png", img, encoding="linear")
    assert np.abs(iio.imread(tmp_path / "x.png") / 255.0 - img).max() <= 0.5 / 255 + 1e-7


def test_failed_write_leaves_nothing(tmp_path):
    with pytest.raises(ValueError):
        save_image(tmp_path / "x.jpg", np.zeros((2, 2, 3)))
    assert list(tmp_path.iterdir()) == []


def test_depth_and_normal_visualisations():
    t = np.array([[2.0, 4.0, 7.0, np.inf]])
    assert depth_image(t, 2.0, 6.0)[0, :, 0].tolist() == [0.0, 0.5, 1.0, 1.0]
    n = np.array([[[0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]])
    assert normal_image(n, np.array([[True, False]])).tolist() == [[[0.5, 0.5, 1.0], [0.0, 0.0, 0.0]]]
