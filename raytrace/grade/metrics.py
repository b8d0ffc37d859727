"""The numbers of one comparison.

All metrics are computed on *working values*: for an LDR comparison the sRGB-encoded
values in [0, 1] (code / 255 for 8-bit PNGs: what the viewer sees), for an HDR one the
linear values. With ``d = actual - expected`` per pixel and channel (N values):

| name | meaning | formula |
|---|---|---|
| ``rmse`` | root mean squared error | sqrt(mean(d^2)) |
| ``relmse`` | relative MSE (pbrt-v4's MRSE) | mean(d^2 / (abs(expected) + 0.01)^2) |
| ``psnr`` | peak signal-to-noise ratio, dB | 10 log10(peak^2 / mean(d^2)); peak 1 (LDR) or max(expected) (HDR); inf when equal |
| ``max`` | largest absolute difference | max(abs(d)) |
| ``mae`` | mean absolute difference | mean(abs(d)) |
| ``over`` | fraction of pixels over the threshold | pixels whose largest channel abs(d) > threshold, / pixels |
| ``block`` | largest mean difference over a block | max over 8 x 8 pixel blocks and channels of abs(mean of d in the block) |
| ``ssim`` | structural similarity (:mod:`.ssim`) | data range 1 (LDR) or max - min of expected (HDR) |
| ``flip`` | mean FLIP error (:mod:`.flip`) | LDR-FLIP or HDR-FLIP |

``psnr`` and ``ssim`` grow with similarity; the others shrink.

``block`` tells a systematic change from noise: sampling noise (another seed's
anti-aliasing jitter, Monte Carlo noise) has zero mean and averages out over a block's 64
pixels, while a changed shading term, light, normal or camera moves every pixel of the
region it touches the same way. Blocks are aligned at the top-left corner; those cut by
the right and bottom edges are averaged over the pixels they have.
"""
import math

import numpy as np

RELMSE_EPS = 0.01
DEFAULT_THRESHOLD = 8 / 255
HIGHER_IS_BETTER = ("psnr", "ssim")
BLOCK = 8             # pixels per side of the ``block`` metric's blocks
NAMES = ("rmse", "relmse", "psnr", "max", "mae", "over", "block", "ssim", "flip")
TITLES = {"rmse": "RMSE", "relmse": "relative MSE", "psnr": "PSNR (dB)", "max": "max |diff|",
          "mae": "mean |diff|", "over": "pixels over threshold", "block": "max block mean |diff|",
          "ssim": "SSIM", "flip": "FLIP"}


def error_metrics(d, expected, threshold=DEFAULT_THRESHOLD, peak=1.0):
    """The difference-based metrics of ``d = actual - expected`` ((H, W, 3) working
    values) -> dict with ``rmse``, ``relmse``, ``psnr``, ``max``, ``mae``, ``over``, ``block``."""
    d = np.asarray(d, np.float64)
    sq = d * d
    mse = float(sq.mean())
    absd = np.abs(d)
    pixel = absd.max(axis=2)
    return {
        "rmse": math.sqrt(mse),
        "relmse": float((sq / np.square(np.abs(expected) + RELMSE_EPS)).mean()),
        "psnr": math.inf if mse == 0 else 10.0 * math.log10(peak * peak / mse),
        "max": float(pixel.max()),
        "mae": float(absd.mean()),
        # 1e-12: a difference equal to the threshold (8/255 - 0/255) stays "not over"
        "over": float((pixel > threshold + 1e-12).mean()),
        "block": block_difference(d),
    }


def block_difference(d, size=BLOCK):
    """The largest absolute mean of ``d`` ((H, W, C)) over ``size`` x ``size`` blocks and
    channels (edge blocks averaged over the pixels they have)."""
    d = np.asarray(d, np.float64)
    h, w = d.shape[:2]
    rows = np.add.reduceat(d, np.arange(0, h, size), axis=0)
    sums = np.add.reduceat(rows, np.arange(0, w, size), axis=1)
    counts = np.outer(np.minimum(size, h - np.arange(0, h, size)), np.minimum(size, w - np.arange(0, w, size)))
    return float(np.abs(sums / counts[:, :, None]).max())


def pixel_difference(d):
    """(H, W) largest absolute channel difference of each pixel (the heat map's values)."""
    return np.abs(np.asarray(d, np.float64)).max(axis=2)
