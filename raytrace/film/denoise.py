"""Denoising a path-traced render, guided by its albedo and normal AOVs.

Two denoisers:

- ``"oidn"``: Intel Open Image Denoise (its ``RT`` filter, HDR, quality ``high``, on the
  CPU) through the ``pyoidn`` binding, which bundles the library (about 170 MB: the
  optional extra ``pip install 'raytrace-toolkit[denoise]'``). It is fed the colour,
  albedo and normal; it prefilters the guides itself (they are anti-aliased averages,
  noisy behind glass).
- ``"atrous"``: the fallback that needs nothing extra, an edge-avoiding à-trous wavelet
  filter in Numba guided by normal, albedo, depth and the render's per-pixel variance
  (:mod:`raytrace.film.atrous`).

``"auto"`` is ``oidn`` when ``pyoidn`` imports, else ``atrous``.
"""
import numpy as np

from ..errors import SceneError

DENOISERS = ("auto", "oidn", "atrous")
GUIDES = ("albedo", "normal", "depth")      # the AOVs a denoiser reads


def oidn_available():
    """Whether Intel Open Image Denoise can be used (``pyoidn`` imports)."""
    try:
        import pyoidn  # noqa: F401
    except ImportError:
        return False
    return True


def resolve(method, where="denoise"):
    """``True`` / ``"auto"`` / ``"oidn"`` / ``"atrous"`` -> the denoiser that will run;
    SceneError at ``where`` for an unknown name or for ``oidn`` without ``pyoidn``."""
    if method is True:
        method = "auto"
    if method not in DENOISERS:
        raise SceneError(where, f"unknown denoiser {method!r} (use {', '.join(DENOISERS)})")
    if method == "auto":
        return "oidn" if oidn_available() else "atrous"
    if method == "oidn" and not oidn_available():
        raise SceneError(where, "the oidn denoiser needs pyoidn (pip install 'raytrace-toolkit[denoise]' "
                                "or pip install pyoidn); --denoise atrous needs nothing extra")
    return method


def _oidn(color, albedo, normal):
    import pyoidn
    c = np.ascontiguousarray(np.nan_to_num(color, nan=0.0, posinf=0.0, neginf=0.0), np.float32)
    a = np.ascontiguousarray(np.clip(albedo, 0.0, 1.0), np.float32)
    n = np.ascontiguousarray(np.clip(normal, -1.0, 1.0), np.float32)
    return np.asarray(pyoidn.denoise(np.maximum(c, 0.0), albedo=a, normal=n, hdr=True, quality="high"),
                      np.float32)


def denoise_arrays(color, albedo, normal, depth=None, variance=None, method="auto"):
    """Denoise ``color`` (H, W, 3, linear) with its guides -> (H, W, 3) float32.

    ``albedo``, ``normal``: (H, W, 3) AOVs; ``depth`` (H, W, inf on a miss) and
    ``variance`` ((H, W, 3), the variance of each pixel's mean) are used by ``atrous``
    (without ``variance`` it has no noise level to go by and refuses)."""
    method = resolve(method)
    color = np.asarray(color, np.float32)
    if method == "oidn":
        return _oidn(color, albedo, normal)
    from .atrous import atrous
    if variance is None:
        raise SceneError("denoise", "the atrous denoiser needs the render's variance "
                                    "(render with variance=True)")
    if depth is None:
        depth = np.ones(color.shape[:2])
    return atrous(color, albedo, normal, depth, variance)


def denoise(image, method="auto"):
    """A denoised copy of ``image`` (a :class:`~raytrace.image.RenderedImage` rendered with
    ``aovs`` including ``albedo`` and ``normal``, and for ``atrous`` also ``depth`` and
    ``variance=True``) with the same ``info``, ``variance`` and ``aovs``."""
    from ..image import RenderedImage
    aovs = getattr(image, "aovs", {}) or {}
    missing = [n for n in ("albedo", "normal") if n not in aovs]
    if missing:
        raise SceneError("denoise", f"the image has no {' or '.join(missing)} AOV "
                                    "(render with aovs=['albedo', 'normal', 'depth'])")
    out = denoise_arrays(image, aovs["albedo"], aovs["normal"], aovs.get("depth"),
                         getattr(image, "variance", None), method)
    result = RenderedImage(out, image.info)
    result.variance, result.aovs = image.variance, dict(aovs)
    return result
