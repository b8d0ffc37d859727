"""Curves and surfaces: Bézier, B-spline and Catmull-Rom curves, frames, surfaces of
revolution, sweeps and bicubic patches, with readers for the course's files.

Arrays in, arrays out: control points are (..., n, d) float64 (d = 2 or 3), meshes are
``Mesh(vertices (n, 3), faces (m, 3) int64 CCW, normals (n, 3) unit)``. y is up.
This package never imports ``raytrace``. See docs/curves.md.
"""
from userio.lazy import lazy_package as _lazy_package

from .errors import CurveFileError

# imported on first use (userio.lazy): `python -m curves --help` never imports Numba; each
# kernel module caches with Numba's own cache (its kernels are single-file: never stale)
_lazy_package(__name__, {
    "basis": (".basis", None),
    "bspline": (".bspline", None),
    "cubic": (".cubic", None),
    "frames": (".frames", None),
    "mesh": (".mesh", None),
    "patches": (".patches", None),
    "surfaces": (".surfaces", None),
    "basis_change": (".basis", "basis_change"),
    "basis_matrix": (".basis", "basis_matrix"),
    "BSplineCurve": (".curve", "BSplineCurve"),
    "Circle": (".curve", "Circle"),
    "Curve": (".curve", "Curve"),
    "Samples": (".curve", "Samples"),
    "curve_frames": (".frames", "curve_frames"),
    "read_patch_json": (".io_patches", "read_patch_json"),
    "read_patches": (".io_patches", "read_patches"),
    "write_patch_json": (".io_patches", "write_patch_json"),
    "read_spline": (".io_spline", "read_spline"),
    "read_swp": (".io_swp", "read_swp"),
    "Mesh": (".mesh", "Mesh"),
    "write_obj": (".mesh", "write_obj"),
    "generalized_cylinder": (".surfaces", "generalized_cylinder"),
    "revolve": (".surfaces", "revolve"),
    "surface_of_revolution": (".surfaces", "surface_of_revolution"),
    "sweep": (".surfaces", "sweep"),
})

__all__ = [
    "basis", "bspline", "cubic", "frames", "mesh", "patches", "surfaces",
    "basis_change", "basis_matrix", "BSplineCurve", "Circle", "Curve", "Samples",
    "CurveFileError", "curve_frames", "read_patch_json", "read_patches",
    "write_patch_json", "read_spline", "read_swp", "Mesh", "write_obj",
    "generalized_cylinder", "revolve", "surface_of_revolution", "sweep",
]
