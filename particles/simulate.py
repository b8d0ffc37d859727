"""Run a system forward in time with any integrator, catching blow-ups.

:func:`simulate` steps ``x_{k+1} = step(x_k, f, t_k, dt)``, applies the system's
constraints (colliders) after each step, records every ``every``-th state and raises
:class:`~particles.errors.UnstableSimulationError` as soon as the state is not finite or
exceeds ``limit`` in absolute value, instead of returning garbage.
"""
import math

import numpy as np

from . import limits
from .errors import ParticlesError, UnstableSimulationError
from .integrators import canonical_name, get_integrator


def check_step(dt, where="simulate: dt"):
    """``float(dt)`` or a :class:`ParticlesError` unless it is finite and > 0."""
    try:
        dt = float(dt)
    except (TypeError, ValueError):
        raise ParticlesError(where, f"must be a number, got {dt!r}") from None
    if not (math.isfinite(dt) and dt > 0):
        raise ParticlesError(where, f"must be a finite number > 0, got {dt}")
    return dt


def simulate(system, integrator="rk4", dt=0.005, steps=100, *, x0=None, t0=0.0, every=1,
             limit=1e8, **options):
    """Integrate ``system`` for ``steps`` steps of size ``dt``.

    ``system`` is a derivative function ``f(t, x)`` (a :class:`~particles.systems.System`
    or plain callable; then ``x0`` is required). ``integrator`` is a name from
    :data:`~particles.integrators.INTEGRATORS`; extra ``options`` go to the step function
    (``rtol``, ``atol`` for ``rk45``). Returns ``(t, states)``: times ``(k,)`` and states
    ``(k, n) float64`` at steps ``0, every, 2 every, ...`` and always the last step.
    """
    dt = check_step(dt)
    step = get_integrator(integrator)
    name = canonical_name(integrator)
    steps = limits.count(steps, "simulate", "steps", 0, limits.MAX_STEPS)
    every = limits.count(every, "simulate", "every", 1)
    t0 = limits.number(t0, "simulate", "t0")
    if x0 is None:
        if not hasattr(system, "initial_state"):
            raise ParticlesError("simulate", "x0: required for a plain derivative function")
        x0 = system.initial_state()
    x = np.array(x0, dtype=np.float64)
    if x.ndim != 1 or not np.all(np.isfinite(x)):
        raise ParticlesError("simulate", f"x0: must be a finite 1-D array, got shape {x.shape}")
    constrain = getattr(system, "constrain", None)
    count = steps // every + 1 + (1 if steps % every else 0)
    limits.memory(count * (x.shape[0] + 1) * 8, "simulate",
                  f"{count} recorded states of {x.shape[0]} numbers")
    times = np.empty(count)
    states = np.empty((count, x.shape[0]))
    times[0], states[0] = t0, x
    row = 1
    for k in range(1, steps + 1):
        t = t0 + (k - 1) * dt
        x = step(x, system, t, dt, **options)
        if constrain is not None:
            constrain(x)
        if not np.abs(x).max() < limit:            # also catches NaN
            what = "not finite" if not np.all(np.isfinite(x)) else f"above {limit:g}"
            raise UnstableSimulationError(
                "simulate", f"{getattr(system, 'name', 'system')} with {name} at dt={dt:g} "
                f"blew up at step {k} (t={t + dt:.6g}): the state is {what}; use a smaller "
                "dt or implicit_euler", step=k, t=t + dt)
        if k % every == 0 or k == steps:
            times[row], states[row] = t0 + k * dt, x
            row += 1
    return times[:row], states[:row]


def max_speed(system, states):
    """Largest particle speed (m/s) over recorded states of a spring network."""
    n = system.n
    v = states[:, 3 * n:].reshape(len(states), n, 3)
    return float(np.sqrt(np.max(np.sum(v * v, axis=2))))


def is_stable(system, integrator, dt, duration, speed_limit=100.0):
    """Does a spring network stay finite with all speeds below ``speed_limit`` (m/s) when
    simulated for ``duration`` seconds at step ``dt``?"""
    steps = max(1, int(round(duration / dt))) if duration / dt < 1e18 else math.inf
    if steps > limits.MAX_STEPS:
        raise ParticlesError("is_stable", f"duration / dt = {duration / dt:.3g} steps is more "
                             f"than {limits.MAX_STEPS}")
    try:
        _, states = simulate(system, integrator, dt, steps, every=max(1, steps // 200),
                             limit=1e6)
    except UnstableSimulationError:
        return False
    return max_speed(system, states) < speed_limit


def stable_dt_limit(system, integrator, duration, lo, hi, rel=0.03, speed_limit=100.0):
    """Bisect (in log dt) for the largest stable step in ``[lo, hi]`` (see :func:`is_stable`).

    Returns ``(dt_stable, dt_unstable)``, the bracket after bisection; ``lo`` must be
    stable. ``dt_unstable`` is ``inf`` when even ``hi`` is stable.
    """
    lo = check_step(lo, "stable_dt_limit: lo")
    hi = check_step(hi, "stable_dt_limit: hi")
    duration = limits.number(duration, "stable_dt_limit", "duration", lo=0.0, lo_open=True)
    if not hi > lo:
        raise ParticlesError("stable_dt_limit", f"hi ({hi:g}) must be greater than lo ({lo:g})")
    if not is_stable(system, integrator, lo, duration, speed_limit):
        raise ParticlesError("stable_dt_limit", f"{integrator} is unstable already at dt={lo}")
    if is_stable(system, integrator, hi, duration, speed_limit):
        return hi, math.inf
    while hi / lo > 1.0 + rel:
        mid = math.sqrt(lo * hi)
        if is_stable(system, integrator, mid, duration, speed_limit):
            lo = mid
        else:
            hi = mid
    return lo, hi
