"""FLIP, NVIDIA's perceptual difference metric (Andersson et al. 2020; HDR-FLIP 2021),
through the ``flip_evaluator`` package (the authors' own implementation).

LDR-FLIP takes sRGB-encoded values in [0, 1]; HDR-FLIP takes linear, non-negative
values and chooses its exposure range from the reference (from the test image when the
reference is all black: it has none). Both use the default viewing
condition of 67 pixels per degree. The mean of the error map is the FLIP value (0: no
visible difference, 1: the largest)."""
import numpy as np

from .errors import GradeError


def flip(actual, expected, kind):
    """-> (mean FLIP error, (H, W) float error map in [0, 1]). ``actual``, ``expected``:
    (H, W, 3) sRGB-encoded [0, 1] values for ``kind="ldr"``, linear values for
    ``"hdr"`` (negative values are clamped to 0)."""
    try:
        import flip_evaluator
    except ImportError:
        raise GradeError(None, "FLIP needs the flip-evaluator package (pip install flip-evaluator)") from None
    lo, hi = (0.0, 1.0) if kind == "ldr" else (0.0, None)
    ref = np.ascontiguousarray(np.clip(expected, lo, hi), np.float32)
    test = np.ascontiguousarray(np.clip(actual, lo, hi), np.float32)
    parameters = {}
    if kind == "hdr" and not (ref > 0).any():
        # HDR-FLIP takes its exposure range from the reference; an all-black one has none,
        # and flip_evaluator then ends the whole process ("Start exposure must be smaller
        # than stop exposure!", status 255). Black against black is no difference; else the
        # range comes from the test image (FLIP's own choice for it).
        if not (test > 0).any():
            return 0.0, np.zeros(ref.shape[:2])
        _, _, chosen = flip_evaluator.evaluate(test, test, "HDR", applyMagma=False)
        parameters = {k: chosen[k] for k in ("startExposure", "stopExposure", "numExposures")}
    error_map, mean, _ = flip_evaluator.evaluate(ref, test, kind.upper(), applyMagma=False, parameters=parameters)
    error_map = np.asarray(error_map, np.float64)
    if error_map.ndim == 3:
        error_map = error_map[..., 0]
    return float(mean), error_map
