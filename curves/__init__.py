"""Curves and surfaces: Bézier, B-spline and Catmull-Rom curves, frames, surfaces of
revolution, sweeps and bicubic patches, with readers for the course's files.

Arrays in, arrays out: control points are (..., n, d) float64 (d = 2 or 3), meshes are
``Mesh(vertices (n, 3), faces (m, 3) int64 CCW, normals (n, 3) unit)``. y is up.
This package never imports ``raytrace``. See docs/curves.md.
"""
import pathlib as _pathlib

from userio.numba_cache import kernel_cache as _kernel_cache

# every kernel module first, inside the package's own content-keyed Numba cache folder
# (userio.numba_cache: an edit anywhere in the package never runs stale cached code)
with _kernel_cache("curves", _pathlib.Path(__file__).parent):
    from . import _kernels_bspline, _kernels_cubic, _kernels_frames, _kernels_mesh, _kernels_patch  # noqa: F401

from . import basis, bspline, cubic, frames, mesh, patches, surfaces
from .basis import basis_change, basis_matrix
from .curve import BSplineCurve, Circle, Curve, Samples
from .errors import CurveFileError
from .frames import curve_frames
from .io_patches import read_patch_json, read_patches, write_patch_json
from .io_spline import read_spline
from .io_swp import read_swp
from .mesh import Mesh, write_obj
from .surfaces import generalized_cylinder, revolve, surface_of_revolution, sweep

__all__ = [
    "basis", "bspline", "cubic", "frames", "mesh", "patches", "surfaces",
    "basis_change", "basis_matrix", "BSplineCurve", "Circle", "Curve", "Samples",
    "CurveFileError", "curve_frames", "read_patch_json", "read_patches",
    "write_patch_json", "read_spline", "read_swp", "Mesh", "write_obj",
    "generalized_cylinder", "revolve", "surface_of_revolution", "sweep",
]
