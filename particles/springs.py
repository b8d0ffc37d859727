"""Mass-spring networks: particles joined by damped springs under gravity, drag and wind.

:class:`SpringNetwork` is a system (see :mod:`particles.systems`) whose state is the flat
``(6n,) float64`` vector ``[q.ravel(), v.ravel()]`` of ``n`` particle positions and
velocities (metres, m/s, y up). Forces are computed by the Numba kernels in
:mod:`particles.kernels` (no Python loop over springs). :func:`pendulum` and
:func:`chain` build the course's pendulum and particle chain; :func:`particles.cloth.cloth`
builds cloth.
"""
import math

import numpy as np

from . import kernels, limits
from .errors import ParticlesError
from .systems import System


def _floats(where, name, value):
    """``value`` as a float64 array; anything that is not numbers is a ParticlesError."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError, RecursionError):
        arr = None
    if arr is None or (isinstance(value, (list, tuple)) and any(isinstance(v, (bool, str))
                                                                for v in value)):
        raise ParticlesError(where, f"{name}: expected numbers, got {limits.short(value)}")
    return arr


def _vec3(where, name, value):
    arr = _floats(where, name, value)
    if arr.shape != (3,) or not np.all(np.isfinite(arr)):
        raise ParticlesError(where, f"{name}: must be 3 finite numbers, got {limits.short(value)}")
    return arr


def _per_item(where, name, value, count, allow_zero):
    arr = _floats(where, name, value)
    if arr.ndim == 0:
        arr = np.full(count, float(arr))
    if arr.shape != (count,):
        raise ParticlesError(where, f"{name}: expected one number or {count}, "
                             f"got shape {arr.shape}")
    bad = ~np.isfinite(arr) | ((arr < 0) if allow_zero else (arr <= 0))
    if np.any(bad):
        k = int(np.argmax(bad))
        raise ParticlesError(where, f"{name}[{k}]: must be a finite number "
                             f"{'>= 0' if allow_zero else '> 0'}, got {arr[k]}")
    return np.ascontiguousarray(arr)


class SpringNetwork(System):
    """Particles joined by damped linear springs.

    Parameters (all SI units):

    * ``positions`` ``(n, 3)``: initial positions; ``velocities`` ``(n, 3)`` (default 0).
    * ``springs`` ``(s, 2)`` int: particle index pairs; ``rest`` ``(s,)`` rest lengths
      (default: the initial lengths).
    * ``stiffness`` (N/m) and ``damping`` (N s/m, along the spring): one number or ``(s,)``.
    * ``mass`` (kg): one number or ``(n,)``.
    * ``pinned``: indices (or an ``(n,)`` bool mask) of particles that never move.
    * ``gravity`` ``(3,)`` m/s^2; ``drag`` viscous drag ``-drag * v`` on every particle.
    * ``triangles`` ``(t, 3)`` int, ``wind`` ``(3,)`` m/s and ``wind_coeff`` N s/m^3: the
      aerodynamic force ``wind_coeff * area * ((wind - v_tri) . n) n`` per triangle.
    * ``sphere``: ``(center (3,), radius, friction)``: a collider; after every step particles
      inside are projected onto its surface (:meth:`constrain`).
    * ``cg_tol``, ``cg_maxiter``: the implicit Euler conjugate-gradient solve.
    """

    name = "springs"
    second_order = True

    def __init__(self, positions, springs, *, stiffness, rest=None, damping=0.0,
                 mass=1.0, pinned=(), gravity=(0.0, -9.81, 0.0), drag=0.0,
                 velocities=None, triangles=None, wind=(0.0, 0.0, 0.0), wind_coeff=0.0,
                 sphere=None, cg_tol=1e-10, cg_maxiter=2000):
        where = "SpringNetwork"
        q = np.array(positions, dtype=np.float64)
        if q.ndim != 2 or q.shape[1] != 3 or q.shape[0] == 0 or not np.all(np.isfinite(q)):
            raise ParticlesError(where, f"positions: expected a finite (n, 3) array, "
                                 f"got shape {q.shape}")
        n = q.shape[0]
        v = np.zeros_like(q) if velocities is None else np.array(velocities, np.float64)
        if v.shape != q.shape or not np.all(np.isfinite(v)):
            raise ParticlesError(where, f"velocities: expected a finite {q.shape} array")
        sp = np.asarray(springs, dtype=np.int64).reshape(-1, 2) if len(springs) else \
            np.zeros((0, 2), np.int64)
        if sp.size and (sp.min() < 0 or sp.max() >= n):
            raise ParticlesError(where, f"springs: indices must be in [0, {n}), got "
                                 f"[{sp.min()}, {sp.max()}]")
        if np.any(sp[:, 0] == sp[:, 1]):
            raise ParticlesError(where, "springs: a spring joins a particle to itself")
        s = sp.shape[0]
        if rest is None:
            rest = np.linalg.norm(q[sp[:, 1]] - q[sp[:, 0]], axis=1)
        self.rest = _per_item(where, "rest", rest, s, allow_zero=True)
        self.stiffness = _per_item(where, "stiffness", stiffness, s, allow_zero=True)
        self.damping = _per_item(where, "damping", damping, s, allow_zero=True)
        self.mass = _per_item(where, "mass", mass, n, allow_zero=False)
        free = np.ones(n, dtype=np.bool_)
        pinned = np.asarray(pinned)
        if pinned.dtype == np.bool_ and pinned.shape == (n,):
            free = ~pinned
        elif pinned.size:
            idx = pinned.astype(np.int64).ravel()
            if idx.min() < 0 or idx.max() >= n:
                raise ParticlesError(where, f"pinned: indices must be in [0, {n})")
            free[idx] = False
        self.free = free
        self.gravity = _vec3(where, "gravity", gravity)
        self.drag = limits.number(drag, where, "drag", lo=0.0)
        self.wind = _vec3(where, "wind", wind)
        self.wind_coeff = limits.number(wind_coeff, where, "wind_coeff", lo=0.0)
        tri = np.zeros((0, 3), np.int64) if triangles is None else \
            np.ascontiguousarray(np.asarray(triangles, dtype=np.int64).reshape(-1, 3))
        if tri.size and (tri.min() < 0 or tri.max() >= n):
            raise ParticlesError(where, f"triangles: indices must be in [0, {n})")
        self.triangles = tri
        self.sphere = None
        if sphere is not None:
            if not isinstance(sphere, (list, tuple)) or len(sphere) != 3:
                raise ParticlesError(where, "sphere: expected (center, radius, friction), got "
                                     f"{limits.short(sphere)}")
            center, radius, friction = sphere
            center = _vec3(where, "sphere center", center)
            radius = limits.number(radius, where, "sphere radius", lo=0.0, lo_open=True)
            friction = limits.number(friction, where, "sphere friction", lo=0.0, hi=1.0)
            self.sphere = (center, radius, friction)
        self.springs = np.ascontiguousarray(sp)
        self.n = n
        self.split = 3 * n
        self.cg_tol = limits.number(cg_tol, where, "cg_tol", lo=0.0, lo_open=True)
        self.cg_maxiter = int(cg_maxiter)
        self.last_cg = (0, 0.0)
        self.warm_start = True
        self._dv = np.zeros((n, 3))
        v[~free] = 0.0
        self._x0 = np.concatenate([q.ravel(), v.ravel()])

    # -- state --------------------------------------------------------------------------
    def initial_state(self):
        """``(6n,)`` initial state ``[q, v]``."""
        return self._x0.copy()

    def unpack(self, x):
        """Views ``(q, v)``, each ``(n, 3)``, into a state vector (copies if not contiguous)."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        m = 3 * self.n
        return x[:m].reshape(self.n, 3), x[m:].reshape(self.n, 3)

    def pack(self, q, v):
        """State vector ``(6n,)`` from positions and velocities ``(n, 3)``."""
        return np.concatenate([np.ravel(q), np.ravel(v)]).astype(np.float64)

    def positions(self, x):
        """Positions ``(n, 3)`` (a copy)."""
        return self.unpack(x)[0].copy()

    # -- dynamics -----------------------------------------------------------------------
    def __call__(self, t, x):
        q, v = self.unpack(x)
        out = np.empty(6 * self.n)
        m = 3 * self.n
        kernels.derivative(q, v, self.springs, self.rest, self.stiffness, self.damping,
                           self.mass, self.free, self.gravity, self.drag, self.wind,
                           self.wind_coeff, self.triangles,
                           out[:m].reshape(self.n, 3), out[m:].reshape(self.n, 3))
        return out

    def forces(self, x):
        """Total force on every particle ``(n, 3)`` in newtons (pinned ones included)."""
        q, v = self.unpack(x)
        f = np.empty((self.n, 3))
        kernels.accumulate_forces(q, v, self.springs, self.rest, self.stiffness,
                                  self.damping, self.mass, self.gravity, self.drag,
                                  self.wind, self.wind_coeff, self.triangles, f)
        return f

    def implicit_step(self, x, t, h):
        """Linearised backward Euler (Baraff-Witkin, CG solve); used by ``implicit_euler``.

        With ``self.warm_start`` (default) CG starts from the previous step's velocity
        change, which changes the result only within ``cg_tol``. ``self.last_cg`` holds
        ``(iterations, relative residual)`` of the last solve.
        """
        q, v = self.unpack(x)
        out = np.empty(6 * self.n)
        m = 3 * self.n
        if not self.warm_start:
            self._dv[:] = 0.0
        self.last_cg = kernels.implicit_euler_step(
            q, v, self.springs, self.rest, self.stiffness, self.damping, self.mass,
            self.free, self.gravity, self.drag, self.wind, self.wind_coeff, self.triangles,
            float(h), self.cg_tol, self.cg_maxiter, self._dv,
            out[:m].reshape(self.n, 3), out[m:].reshape(self.n, 3))
        return out

    def constrain(self, x):
        """Sphere collision, in place on a contiguous state ``x``; returns contacts."""
        if self.sphere is None:
            return 0
        m = 3 * self.n
        center, radius, friction = self.sphere
        return kernels.collide_sphere(x[:m].reshape(self.n, 3), x[m:].reshape(self.n, 3),
                                      self.free, center, radius, friction)

    def energy(self, x):
        """Kinetic + spring + gravitational potential energy (joules; gravity's zero at
        the origin). Drag and spring damping make it decrease; wind can add energy."""
        q, v = self.unpack(x)
        kinetic = 0.5 * float(np.sum(self.mass[:, None] * v * v))
        if len(self.springs):
            length = np.linalg.norm(q[self.springs[:, 1]] - q[self.springs[:, 0]], axis=1)
            elastic = 0.5 * float(np.sum(self.stiffness * (length - self.rest) ** 2))
        else:
            elastic = 0.0
        potential = -float(np.sum(self.mass * (q @ self.gravity)))
        return kinetic + elastic + potential


def _scalars(where, stiffness, mass, drag, damping, gravity):
    """The common parameters of :func:`pendulum` and :func:`chain`, checked under the
    factory's name."""
    return (limits.number(stiffness, where, "stiffness", lo=0.0),
            limits.number(mass, where, "mass", lo=0.0, lo_open=True),
            limits.number(drag, where, "drag", lo=0.0),
            limits.number(damping, where, "damping", lo=0.0),
            _vec3(where, "gravity", gravity))


def pendulum(length=1.0, stiffness=100.0, mass=1.0, angle=45.0, drag=0.0, damping=0.0,
             gravity=(0.0, -9.81, 0.0)):
    """The course's pendulum: a bob on a spring hanging from a pinned anchor at the origin.

    The bob starts at rest at distance ``length`` (the spring's rest length, m) from the
    anchor, ``angle`` degrees from straight down, swinging in the xy plane. Two particles:
    index 0 is the anchor (pinned), index 1 the bob of ``mass`` kg.
    """
    length = limits.number(length, "pendulum", "length", lo=0.0, lo_open=True)
    a = math.radians(limits.number(angle, "pendulum", "angle"))
    stiffness, mass, drag, damping, gravity = _scalars("pendulum", stiffness, mass, drag,
                                                       damping, gravity)
    q = np.array([[0.0, 0.0, 0.0], [length * math.sin(a), -length * math.cos(a), 0.0]])
    net = SpringNetwork(q, [[0, 1]], stiffness=stiffness, damping=damping, mass=mass,
                        pinned=[0], gravity=gravity, drag=drag)
    net.name = "pendulum"
    return net


def chain(count=5, segment=0.2, stiffness=200.0, mass=0.1, drag=0.05, damping=0.0,
          gravity=(0.0, -9.81, 0.0), horizontal=True):
    """The course's particle chain: ``count`` particles joined by springs to a pinned
    anchor at the origin (particle 0), each spring of rest length ``segment`` m.

    ``horizontal=True`` lays the chain along +x so it falls and swings; ``False`` hangs it
    straight down (along -y) at the springs' rest lengths.
    """
    count = limits.count(count, "chain", "count", 1, limits.MAX_GRID ** 2)
    segment = limits.number(segment, "chain", "segment", lo=0.0, lo_open=True)
    stiffness, mass, drag, damping, gravity = _scalars("chain", stiffness, mass, drag,
                                                       damping, gravity)
    if horizontal not in (True, False) or not isinstance(horizontal, (bool, int, np.bool_)):
        raise ParticlesError("chain", f"horizontal: must be true or false, got "
                             f"{limits.short(horizontal)}")
    q = np.zeros((count + 1, 3))
    axis = 0 if horizontal else 1
    q[:, axis] = np.arange(count + 1) * segment * (1.0 if horizontal else -1.0)
    springs = np.stack([np.arange(count), np.arange(1, count + 1)], axis=1)
    masses = np.full(count + 1, mass)
    net = SpringNetwork(q, springs, stiffness=stiffness, damping=damping, mass=masses,
                        pinned=[0], gravity=gravity, drag=drag)
    net.name = "chain"
    return net
