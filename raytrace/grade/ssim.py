"""SSIM (Wang, Bovik, Sheikh and Simoncelli 2004) as scikit-image computes it with
``gaussian_weights=True, sigma=1.5, use_sample_covariance=False`` and an explicit
``data_range``: an 11-tap Gaussian window (truncated at 3.5 sigma, image borders
reflected), K1 = 0.01, K2 = 0.03, the SSIM map averaged without the 5-pixel border,
then over the channels.

Images smaller than 11 pixels on a side use the largest odd window that fits (3 at
least); below 3 pixels SSIM is undefined (None)."""
import numpy as np

SIGMA = 1.5
TRUNCATE = 3.5
K1, K2 = 0.01, 0.03


def _kernel(radius):
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    k = np.exp(-0.5 * (x / SIGMA) ** 2)
    return k / k.sum()


def _blur(img, k):
    """Separable filter of (H, W) ``img`` with 1-D kernel ``k``; borders reflected about
    the edge (scipy.ndimage's 'reflect': d c b a | a b c d)."""
    r = len(k) // 2
    out = img
    for axis in (0, 1):
        pad = [(0, 0), (0, 0)]
        pad[axis] = (r, r)
        p = np.pad(out, pad, mode="symmetric")
        n = out.shape[axis]
        acc = np.zeros_like(out)
        for i, w in enumerate(k):
            acc += w * (p[i:i + n] if axis == 0 else p[:, i:i + n])
        out = acc
    return out


def ssim(a, e, data_range):
    """Mean SSIM of (H, W, C) images ``a`` (actual) and ``e`` (expected) with the given
    ``data_range`` (the span of possible values: 1 for [0, 1] images). None when the
    image is smaller than 3 x 3."""
    a = np.asarray(a, np.float64)
    e = np.asarray(e, np.float64)
    h, w = a.shape[:2]
    radius = min(int(TRUNCATE * SIGMA + 0.5), (min(h, w) - 1) // 2)
    if radius < 1:
        return None
    k = _kernel(radius)
    c1, c2 = (K1 * data_range) ** 2, (K2 * data_range) ** 2
    values = []
    for c in range(a.shape[2]):
        x, y = a[..., c], e[..., c]
        mx, my = _blur(x, k), _blur(y, k)
        vx = _blur(x * x, k) - mx * mx
        vy = _blur(y * y, k) - my * my
        vxy = _blur(x * y, k) - mx * my
        s = ((2 * mx * my + c1) * (2 * vxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
        values.append(s[radius:h - radius, radius:w - radius].mean())
    return float(np.mean(values))
