"""particles: physically-based simulation of particle systems (numpy in, numpy out).

Integrators with one interface ``step(x, f, t, h) -> x_new`` (:mod:`.integrators`),
systems with closed forms (:mod:`.systems`), mass-spring networks with Numba forces
(:mod:`.springs`, :mod:`.kernels`), cloth (:mod:`.cloth`), a runner that catches
blow-ups (:mod:`.simulate`) and an integrator error study (:mod:`.study`).
Never imports ``raytrace``. Conventions: SI units, y up, state vectors ``(n,) float64``.
"""
from userio.lazy import lazy_package as _lazy_package

from .errors import ParticlesError, UnstableSimulationError

# imported on first use (userio.lazy): `python -m particles --help` never imports Numba; each
# kernel module caches with Numba's own cache (its kernels are single-file: never stale)
_lazy_package(__name__, {
    "PIN_MODES": (".cloth", "PIN_MODES"),
    "cloth": (".cloth", "cloth"),
    "cloth_mesh": (".cloth", "cloth_mesh"),
    "grid_springs": (".cloth", "grid_springs"),
    "grid_triangles": (".cloth", "grid_triangles"),
    "ALIASES": (".integrators", "ALIASES"),
    "INTEGRATORS": (".integrators", "INTEGRATORS"),
    "ORDERS": (".integrators", "ORDERS"),
    "euler": (".integrators", "euler"),
    "get_integrator": (".integrators", "get_integrator"),
    "implicit_euler": (".integrators", "implicit_euler"),
    "midpoint": (".integrators", "midpoint"),
    "rk4": (".integrators", "rk4"),
    "rk45": (".integrators", "rk45"),
    "rk45_solve": (".integrators", "rk45_solve"),
    "symplectic_euler": (".integrators", "symplectic_euler"),
    "trapezoid": (".integrators", "trapezoid"),
    "vertex_normals": (".mesh", "vertex_normals"),
    "write_obj": (".mesh", "write_obj"),
    "is_stable": (".simulate", "is_stable"),
    "simulate": (".simulate", "simulate"),
    "stable_dt_limit": (".simulate", "stable_dt_limit"),
    "SpringNetwork": (".springs", "SpringNetwork"),
    "chain": (".springs", "chain"),
    "pendulum": (".springs", "pendulum"),
    "Circle": (".systems", "Circle"),
    "DampedSpring": (".systems", "DampedSpring"),
    "System": (".systems", "System"),
})

__all__ = [
    "ALIASES", "INTEGRATORS", "ORDERS", "PIN_MODES", "Circle", "DampedSpring",
    "ParticlesError", "SpringNetwork", "System", "UnstableSimulationError", "chain", "cloth",
    "cloth_mesh", "euler", "get_integrator", "grid_springs", "grid_triangles",
    "implicit_euler", "is_stable", "midpoint", "pendulum", "rk4", "rk45", "rk45_solve",
    "simulate", "stable_dt_limit", "symplectic_euler", "trapezoid", "vertex_normals",
    "write_obj",
]
