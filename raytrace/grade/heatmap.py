"""Pictures of a comparison: difference heat maps, FLIP error maps and 8-bit previews,
as uint8 (H, W, 3) arrays or PNG bytes.

Heat maps use matplotlib's ``magma`` colour map (black: no difference, through purple
and orange to pale yellow: the top of the scale), the colour map FLIP's own tools use
for their error maps."""
import io

import numpy as np

from ..image import to_8bit


def _lut(name="magma"):
    from matplotlib import colormaps
    return (colormaps[name](np.linspace(0.0, 1.0, 256))[:, :3] * 255.0 + 0.5).astype(np.uint8)


def colorize(values, scale):
    """(H, W) values >= 0 -> (H, W, 3) uint8 through magma, ``scale`` mapped to the top."""
    v = np.asarray(values, np.float64) / (scale if scale > 0 else 1.0)
    index = np.clip(np.rint(v * 255.0), 0, 255).astype(np.intp)
    return _lut()[index]


def diff_scale(pixel_diff):
    """The heat map's top: the largest difference (1/255 when the images are equal)."""
    top = float(np.max(pixel_diff)) if np.size(pixel_diff) else 0.0
    return top if top > 0 else 1.0 / 255.0


def diff_heatmap(pixel_diff, scale=None):
    """(H, W) largest channel difference per pixel -> ((H, W, 3) uint8, scale used)."""
    scale = diff_scale(pixel_diff) if scale is None else float(scale)
    return colorize(pixel_diff, scale), scale


def flip_map(error_map):
    """FLIP's (H, W) error map in [0, 1] -> (H, W, 3) uint8 (magma, 1 at the top)."""
    return colorize(error_map, 1.0)


def preview(image):
    """A :class:`~raytrace.grade.images.GradeImage` as 8-bit sRGB for display: an LDR
    image's own codes (16-bit ones rounded to 8), an HDR one clamped and encoded like
    ``raytrace render``'s PNGs."""
    if image.codes is not None:
        if image.bits == 8:
            return image.codes.astype(np.uint8)
        return np.floor(image.codes * (255.0 / 65535.0) + 0.5).astype(np.uint8)
    return to_8bit(image.linear)


def png_bytes(rgb8):
    """PNG bytes of an (H, W, 3) uint8 image."""
    import imageio.v3 as iio
    buf = io.BytesIO()
    iio.imwrite(buf, np.ascontiguousarray(rgb8, np.uint8), extension=".png")
    return buf.getvalue()
