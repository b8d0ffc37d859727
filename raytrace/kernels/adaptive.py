"""Adaptive sampling on the kernel side: nothing left but :func:`is_judged`.

The plan of an adaptive render (:mod:`raytrace.film.adaptive`) is made once, in NumPy,
from the pilot's sums, and the path kernel only needs to know which pixels take samples
(``kernels.path.path_rows``'s ``active``). :func:`is_judged` belongs to the previous
scheme (a second buffer of the samples a stopping rule judged); only
``kernels.volpath.volpath_rows``'s ``half`` buffer still calls it, which the renderer no
longer passes: remove both together.
"""
import raytrace._numba_setup  # noqa: F401  (Numba's cache folder, before any kernel here)
from numba import njit

from ..layout import JUDGED_BLOCK, JUDGED_EVERY


@njit(cache=True, inline="always")
def is_judged(k):
    """Whether sample ``k`` was one the previous stopping rule judged (``layout.JUDGED_BLOCK``)."""
    return (k // JUDGED_BLOCK) % JUDGED_EVERY == JUDGED_EVERY - 1
