"""Renders in Jupyter notebooks.

A :class:`~raytrace.image.RenderedImage` shows itself (``_repr_png_``: sRGB, at most
1024 pixels a side). :func:`show` displays any image or AOV with a title and a size of
your choice:

    image = raytrace.render(scene, spp=16, aovs=["albedo", "depth"])
    image                                   # the last value of a cell is shown
    raytrace.show(image, max_size=256)
    raytrace.show(image.aovs["depth"])      # one channel: grey, scaled to its finite range
"""
import numpy as np

from .image import PREVIEW_MAX, preview_png


def displayable(image):
    """``image`` as a (H, W, 3) linear float image: three channels as they are (for a normal
    AOV pass ``(n + 1) / 2``); two (UV) with blue 0; one (depth, ids, sample counts) grey,
    scaled so that its finite values span [0, 1], non-finite values black."""
    a = np.asarray(image)
    if a.ndim == 3 and a.shape[2] == 3:
        return a.astype(np.float32)
    if a.ndim == 3 and a.shape[2] == 2:
        return np.concatenate([a, np.zeros_like(a[..., :1])], axis=2).astype(np.float32)
    if a.ndim != 2:
        raise ValueError(f"cannot show an array of shape {a.shape} (use (H, W), (H, W, 2) or (H, W, 3))")
    x = a.astype(np.float64)
    finite = np.isfinite(x)
    lo, hi = (x[finite].min(), x[finite].max()) if finite.any() else (0.0, 1.0)
    grey = np.where(finite, (x - lo) / (hi - lo if hi > lo else 1.0), 0.0)
    return np.repeat(grey[..., None], 3, axis=2).astype(np.float32)


def show(image, title=None, max_size=PREVIEW_MAX):
    """Display ``image`` (a render, a (H, W, 3) linear array, or an AOV, see
    :func:`displayable`) in a notebook, sRGB-encoded and shrunk to at most ``max_size``
    pixels a side; outside IPython it opens a matplotlib window."""
    rgb = displayable(image)
    try:
        from IPython import get_ipython
        from IPython.display import Image, Markdown, display
    except ImportError:
        get_ipython = None
    if get_ipython is not None and get_ipython() is not None:
        if title:
            display(Markdown(f"**{title}**"))
        display(Image(data=preview_png(rgb, max_size)))
        return
    import io

    import imageio.v3 as iio
    import matplotlib.pyplot as plt
    plt.figure()
    plt.imshow(iio.imread(io.BytesIO(preview_png(rgb, max_size))))
    plt.axis("off")
    if title:
        plt.title(title)
    plt.show()
