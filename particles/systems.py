"""Small ODE systems with closed-form solutions: the course's circle and a damped spring.

A *system* is a derivative function ``f(t, x) -> dx/dt`` (1-D ``float64`` arrays) with a
few attributes the integrators and the runner use:

* ``initial_state()`` -> ``x0``; ``energy(x)`` -> float (the conserved or decaying
  quantity); ``exact(t)`` -> ``x(t)`` when a closed form exists (else ``None``);
* ``split`` / ``second_order`` (see :mod:`particles.integrators`);
* ``constrain(x)``: in-place projection after each step (colliders); a no-op here.
"""
import math

import numpy as np

from . import limits
from .errors import ParticlesError


def _positive(where, name, value, allow_zero=False):
    return limits.number(value, where, name, lo=0.0, lo_open=not allow_zero)


class System:
    """Base class: a derivative function with metadata (see the module docstring)."""

    name = "system"
    split = None
    second_order = False

    def __call__(self, t, x):
        raise NotImplementedError

    def initial_state(self):
        raise NotImplementedError

    def energy(self, x):
        raise NotImplementedError

    def exact(self, t):
        """Closed-form state at time ``t`` (from :meth:`initial_state` at t=0), or None."""
        return None

    def constrain(self, x):
        """Project ``x`` onto the constraints in place (colliders). Default: nothing."""


class Circle(System):
    """The course's simple system ``dx/dt = -y, dy/dt = x``: rotation about the origin.

    State ``(2,)`` = ``[x, y]``; the exact solution turns ``x0`` by ``t`` radians, so the
    radius (``energy = (x^2 + y^2) / 2``) is conserved. ``split = 1`` treats ``x`` as the
    coordinate and ``y`` as its conjugate momentum for symplectic Euler.
    """

    name = "circle"
    split = 1

    def __init__(self, x0=(1.0, 0.0)):
        if not isinstance(x0, (list, tuple, np.ndarray)) or len(x0) != 2:
            raise ParticlesError("circle", f"x0: must be 2 finite numbers, got {limits.short(x0)}")
        self.x0 = np.array([limits.number(v, "circle", "x0") for v in x0])

    def __call__(self, t, x):
        return np.array([-x[1], x[0]])

    def jacobian(self, t, x):
        return np.array([[0.0, -1.0], [1.0, 0.0]])

    def initial_state(self):
        return self.x0.copy()

    def energy(self, x):
        return 0.5 * float(x[0] * x[0] + x[1] * x[1])

    def exact(self, t):
        c, s = math.cos(t), math.sin(t)
        x, y = self.x0
        return np.array([c * x - s * y, s * x + c * y])


class DampedSpring(System):
    """One mass on a linear spring with a viscous damper: ``m x'' = -k x - c x'``.

    State ``(2,)`` = ``[x, v]`` (metres, m/s); ``k`` in N/m, ``m`` in kg, ``c`` in N s/m.
    ``c = 0`` is the harmonic oscillator. ``energy = m v^2 / 2 + k x^2 / 2`` (joules).
    :meth:`exact` covers the under-, critically and over-damped cases.
    """

    name = "spring"
    split = 1
    second_order = True

    def __init__(self, k=1.0, m=1.0, c=0.0, x0=1.0, v0=0.0):
        self.k = _positive("spring", "k", k)
        self.m = _positive("spring", "m", m)
        self.c = _positive("spring", "c", c, allow_zero=True)
        self.x0 = limits.number(x0, "spring", "x0")
        self.v0 = limits.number(v0, "spring", "v0")

    def __call__(self, t, x):
        return np.array([x[1], (-self.k * x[0] - self.c * x[1]) / self.m])

    def jacobian(self, t, x):
        return np.array([[0.0, 1.0], [-self.k / self.m, -self.c / self.m]])

    def initial_state(self):
        return np.array([self.x0, self.v0])

    def energy(self, x):
        x0, v = float(x[0]), float(x[1])
        return 0.5 * self.m * v * v + 0.5 * self.k * x0 * x0    # inf, not OverflowError

    def exact(self, t):
        g = self.c / (2.0 * self.m)
        w2 = self.k / self.m
        x0, v0 = self.x0, self.v0
        disc = g * g - w2
        e = math.exp(-g * t)
        if abs(disc) <= 1e-12 * w2:                       # critically damped
            b = v0 + g * x0
            return np.array([e * (x0 + b * t), e * (b - g * (x0 + b * t))])
        if disc < 0:                                      # under-damped
            wd = math.sqrt(-disc)
            a, b = x0, (v0 + g * x0) / wd
            c, s = math.cos(wd * t), math.sin(wd * t)
            return np.array([e * (a * c + b * s),
                             e * (-g * (a * c + b * s) + wd * (b * c - a * s))])
        r = math.sqrt(disc)                               # over-damped
        r1, r2 = -g + r, -g - r
        c1 = (v0 - r2 * x0) / (r1 - r2)
        c2 = x0 - c1
        e1, e2 = math.exp(r1 * t), math.exp(r2 * t)
        return np.array([c1 * e1 + c2 * e2, r1 * c1 * e1 + r2 * c2 * e2])
