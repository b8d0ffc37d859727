"""Renders in Jupyter notebooks.

A :class:`~raytrace.image.RenderedImage` shows itself (``_repr_png_``: sRGB, at most
1024 pixels a side). :func:`show` displays any image or AOV with a title and a size of
your choice:

    image = raytrace.render(scene, spp=16, aovs=["albedo", "depth"])
    image                                   # the last value of a cell is shown
    raytrace.show(image, max_size=256)
    raytrace.show(image.aovs["depth"])      # one channel: grey, scaled to its finite range

Outside a notebook :func:`show` opens a matplotlib window; where none can open (no
``$DISPLAY``: matplotlib's backend is then ``agg``) it writes the PNG to a temporary
file and says where.
"""
import os
import sys

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


# matplotlib's backends that draw to files only: no window can open
FILE_BACKENDS = ("agg", "cairo", "pdf", "pgf", "ps", "svg", "template")


def _notebook_display():
    """IPython's ``display`` when running in a notebook kernel (a terminal IPython has no
    kernel: it would print ``<IPython.core.display.Image object>``), else None."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        return None
    shell = get_ipython()
    return display if shell is not None and getattr(shell, "kernel", None) is not None else None


def _no_window_reason(backend):
    """Why matplotlib cannot open a window with ``backend`` (None when it can)."""
    if backend.lower() not in FILE_BACKENDS:
        return None
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return f"no $DISPLAY, matplotlib's backend is {backend!r}"
    return f"matplotlib's backend {backend!r} draws to files only"


def show(image, title=None, max_size=PREVIEW_MAX):
    """Display ``image`` (a render, a (H, W, 3) linear array, or an AOV, see
    :func:`displayable`) in a notebook, sRGB-encoded and shrunk to at most ``max_size``
    pixels a side; outside a notebook it opens a matplotlib window. Where no window can
    open (no ``$DISPLAY``, a non-interactive matplotlib backend) it writes that PNG to a
    temporary file, prints its path on stderr and returns it (None otherwise)."""
    rgb = displayable(image)
    png = preview_png(rgb, max_size)
    display = _notebook_display()
    if display is not None:
        from IPython.display import Image, Markdown
        if title:
            display(Markdown(f"**{title}**"))
        display(Image(data=png))
        return None
    import matplotlib
    reason = _no_window_reason(matplotlib.get_backend())
    if reason is not None:
        import tempfile
        fd, path = tempfile.mkstemp(prefix="raytrace-show-", suffix=".png")
        with os.fdopen(fd, "wb") as f:
            f.write(png)
        print(f"raytrace.show: no window can open here ({reason}); wrote "
              f"{f'{title!r} to ' if title else ''}{path} (to save an image yourself: "
              "raytrace.save_image('out.png', image))", file=sys.stderr)
        return path
    import io

    import imageio.v3 as iio
    import matplotlib.pyplot as plt
    plt.figure()
    plt.imshow(iio.imread(io.BytesIO(png)))
    plt.axis("off")
    if title:
        plt.title(title)
    plt.show()
    return None
