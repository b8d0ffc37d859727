"""particles: physically-based simulation of particle systems (numpy in, numpy out).

Integrators with one interface ``step(x, f, t, h) -> x_new`` (:mod:`.integrators`),
systems with closed forms (:mod:`.systems`), mass-spring networks with Numba forces
(:mod:`.springs`, :mod:`.kernels`), cloth (:mod:`.cloth`), a runner that catches
blow-ups (:mod:`.simulate`) and an integrator error study (:mod:`.study`).
Never imports ``raytrace``. Conventions: SI units, y up, state vectors ``(n,) float64``.
"""
import pathlib as _pathlib

from userio.numba_cache import kernel_cache as _kernel_cache

# every kernel module first, inside the package's own content-keyed Numba cache folder
# (userio.numba_cache: an edit anywhere in the package never runs stale cached code)
with _kernel_cache("particles", _pathlib.Path(__file__).parent):
    from . import kernels  # noqa: F401

from .cloth import PIN_MODES, cloth, cloth_mesh, grid_springs, grid_triangles
from .errors import ParticlesError, UnstableSimulationError
from .integrators import (ALIASES, INTEGRATORS, ORDERS, euler, get_integrator,
                          implicit_euler, midpoint, rk4, rk45, rk45_solve, symplectic_euler,
                          trapezoid)
from .mesh import vertex_normals, write_obj
from .simulate import is_stable, simulate, stable_dt_limit
from .springs import SpringNetwork, chain, pendulum
from .systems import Circle, DampedSpring, System

__all__ = [
    "ALIASES", "INTEGRATORS", "ORDERS", "PIN_MODES", "Circle", "DampedSpring",
    "ParticlesError", "SpringNetwork", "System", "UnstableSimulationError", "chain", "cloth",
    "cloth_mesh", "euler", "get_integrator", "grid_springs", "grid_triangles",
    "implicit_euler", "is_stable", "midpoint", "pendulum", "rk4", "rk45", "rk45_solve",
    "simulate", "stable_dt_limit", "symplectic_euler", "trapezoid", "vertex_normals",
    "write_obj",
]
