"""Time integrators with one interface: ``step(x, f, t, h) -> x_new``.

``x`` is the state, a 1-D ``float64`` array ``(n,)``; ``f(t, x)`` returns ``dx/dt`` with
the same shape; ``t`` is the time of ``x`` and ``h > 0`` the step size (same time unit as
``f``). Every step function returns a new array and never modifies ``x``.

A derivative function may carry extra structure as attributes (the systems in
:mod:`particles.systems` and :mod:`particles.springs` do):

* ``f.split`` (int): the state is ``[q, p]`` with ``q = x[:split]``; used by symplectic
  Euler. Plain functions default to two equal halves.
* ``f.second_order`` (bool): ``dq/dt`` is exactly ``p`` (positions and velocities), so
  symplectic Euler needs one evaluation instead of two.
* ``f.implicit_step(x, t, h)``: a structured linearised backward-Euler step (the
  Baraff-Witkin conjugate-gradient solve of spring networks).
* ``f.jacobian(t, x)``: dense ``(n, n)`` Jacobian for small systems.

=====================  =====  ===========================================
name                   order  evaluations of ``f`` per step
=====================  =====  ===========================================
``euler``              1      1
``symplectic_euler``   1      1 (second-order systems) or 2
``midpoint``           2      2
``trapezoid``          2      2 (Heun's method)
``rk4``                4      4
``rk45``               5      6 per accepted sub-step (Dormand-Prince, adaptive)
``implicit_euler``     1      1 + a linear solve (linearised backward Euler)
=====================  =====  ===========================================
"""
import numpy as np

from .errors import ParticlesError


def euler(x, f, t, h):
    """Forward Euler: ``x + h f(t, x)``. First order, unstable for undamped oscillators."""
    return x + h * f(t, x)


def symplectic_euler(x, f, t, h):
    """Symplectic (semi-implicit) Euler for a partitioned state ``x = [q, p]``.

    ``p`` is advanced first with the derivative at ``(q, p)``, then ``q`` with the
    derivative at ``(q, p_new)``. For mechanical systems (``f.second_order``) that is
    ``v += h a(q, v); q += h v``. First order; keeps an undamped oscillator's energy
    bounded for ``h`` below the stability limit.
    """
    n = x.shape[0]
    split = getattr(f, "split", None)
    if split is None:
        if n % 2:
            raise ParticlesError("symplectic_euler",
                                 f"state of odd length {n} has no [q, p] halves; "
                                 "give the derivative function a 'split' attribute")
        split = n // 2
    d = f(t, x)
    out = x.copy()
    out[split:] += h * d[split:]
    if getattr(f, "second_order", False):
        out[:split] += h * out[split:]
    else:
        out[:split] += h * f(t, out)[:split]
    return out


def midpoint(x, f, t, h):
    """Explicit midpoint: ``x + h f(t + h/2, x + h/2 f(t, x))``. Second order."""
    k1 = f(t, x)
    return x + h * f(t + 0.5 * h, x + (0.5 * h) * k1)


def trapezoid(x, f, t, h):
    """Trapezoidal rule, explicit (Heun): average of the slopes at both ends. Second order."""
    k1 = f(t, x)
    k2 = f(t + h, x + h * k1)
    return x + (0.5 * h) * (k1 + k2)


def rk4(x, f, t, h):
    """Classic fourth-order Runge-Kutta."""
    k1 = f(t, x)
    k2 = f(t + 0.5 * h, x + (0.5 * h) * k1)
    k3 = f(t + 0.5 * h, x + (0.5 * h) * k2)
    k4 = f(t + h, x + h * k3)
    return x + (h / 6.0) * (k1 + 2.0 * (k2 + k3) + k4)


# Dormand-Prince 5(4) tableau (Hairer, Norsett & Wanner; the pair of MATLAB's ode45).
_DP_C = np.array([0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0])
_DP_A = (
    (),
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
)
_DP_B = np.array([35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0])
# error weights: fifth-order minus embedded fourth-order weights
_DP_E = _DP_B - np.array([5179 / 57600, 0.0, 7571 / 16695, 393 / 640,
                          -92097 / 339200, 187 / 2100, 1 / 40])


def _rms(v):
    return float(np.sqrt(np.mean(v * v)))


def rk45_solve(f, x0, t0, t1, rtol=1e-6, atol=1e-9, max_steps=1_000_000, trace=None):
    """Adaptive Dormand-Prince 5(4) from ``t0`` to ``t1``.

    Each sub-step is accepted when the RMS of ``err_i / (atol + rtol * |x_i|)`` is at most
    1, where ``err`` is the difference between the fifth- and fourth-order solutions; the
    fifth-order solution is kept (local extrapolation), the next step size is
    ``0.9 * h * err^(-1/5)`` clipped to ``[0.2 h, 10 h]``.

    The tolerances bound the *local* error of each step; the global error at ``t1``
    accumulates (about 2-3x the tolerance over a few periods of an oscillator). Pass a list
    as ``trace`` to receive ``(t, x)`` after every accepted step.

    Returns ``(x1, stats)`` with ``stats = {"accepted", "rejected", "evaluations"}``.
    """
    if not (rtol > 0 and atol > 0):
        raise ParticlesError("rk45", f"rtol and atol must be > 0, got {rtol}, {atol}")
    x = np.array(x0, dtype=np.float64)
    t = float(t0)
    span = float(t1) - t
    stats = {"accepted": 0, "rejected": 0, "evaluations": 0}
    if span <= 0.0:
        return x, stats
    k = np.empty((7, x.shape[0]))
    k[0] = f(t, x)
    nfev = 1
    # initial step (Hairer's heuristic, as in scipy.integrate)
    scale = atol + rtol * np.abs(x)
    d0, d1 = _rms(x / scale), _rms(k[0] / scale)
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    h0 = min(h0, span)
    f1 = f(t + h0, x + h0 * k[0])
    nfev += 1
    d2 = _rms((f1 - k[0]) / scale) / h0
    h1 = max(1e-6, h0 * 1e-3) if max(d1, d2) <= 1e-15 else (0.01 / max(d1, d2)) ** 0.2
    h = min(100 * h0, h1, span)
    rejected_last = False
    while True:
        remaining = float(t1) - t
        if remaining <= 1e-14 * max(1.0, abs(t)):
            break
        if stats["accepted"] + stats["rejected"] >= max_steps:
            raise ParticlesError("rk45", f"more than {max_steps} steps between t={t0} and "
                                 f"t={t1}; the tolerance {rtol} may be too tight")
        last = h >= remaining
        if last:
            h = remaining
        for i in range(1, 6):
            xi = x.copy()
            for j, a in enumerate(_DP_A[i]):
                xi += (h * a) * k[j]
            k[i] = f(t + _DP_C[i] * h, xi)
        xn = x + h * (_DP_B[:6] @ k[:6])
        k[6] = f(t + h, xn)
        nfev += 6
        err = h * (_DP_E @ k)
        scale = atol + rtol * np.maximum(np.abs(x), np.abs(xn))
        en = _rms(err / scale)
        if not np.isfinite(en):
            en = np.inf
        if en <= 1.0:
            t = float(t1) if last else t + h
            x = xn
            k[0] = k[6]                     # first-same-as-last
            stats["accepted"] += 1
            if trace is not None:
                trace.append((t, x.copy()))
            factor = 10.0 if en == 0.0 else min(10.0, 0.9 * en ** -0.2)
            if rejected_last:
                factor = min(factor, 1.0)
            h *= max(factor, 0.2)
            rejected_last = False
        else:
            stats["rejected"] += 1
            h *= max(0.2, 0.9 * en ** -0.2)
            rejected_last = True
            if h < 1e-14 * max(1.0, abs(t)):
                raise ParticlesError("rk45", f"step size underflow at t={t}")
    stats["evaluations"] = nfev
    return x, stats


def rk45(x, f, t, h, rtol=1e-6, atol=1e-9):
    """Adaptive Dormand-Prince 5(4) over ``[t, t + h]`` (as many error-controlled sub-steps
    as the tolerances need). See :func:`rk45_solve`."""
    return rk45_solve(f, x, t, t + h, rtol=rtol, atol=atol)[0]


def _numeric_jacobian(f, t, x):
    n = x.shape[0]
    if n > 512:
        raise ParticlesError("implicit_euler", f"state has {n} entries; a system this large "
                             "needs an 'implicit_step' or 'jacobian' method")
    f0 = f(t, x)
    jac = np.empty((n, n))
    for i in range(n):
        e = 1e-7 * max(1.0, abs(x[i]))
        xp = x.copy()
        xp[i] += e
        jac[:, i] = (f(t, xp) - f0) / e
    return f0, jac


def implicit_euler(x, f, t, h):
    """Linearised backward Euler: ``x + h (I - h J)^-1 f(t, x)``, ``J = df/dx`` at ``x``.

    Spring networks provide ``f.implicit_step`` (Baraff-Witkin: a sparse symmetric system
    in the velocity change solved by matrix-free preconditioned conjugate gradients);
    small systems use ``f.jacobian`` or a finite-difference Jacobian and a dense solve.
    First order; stable at step sizes far beyond the explicit limits of stiff systems.
    """
    structured = getattr(f, "implicit_step", None)
    if structured is not None:
        return structured(x, t, h)
    jac_fn = getattr(f, "jacobian", None)
    if jac_fn is not None:
        f0, jac = f(t, x), jac_fn(t, x)
    else:
        f0, jac = _numeric_jacobian(f, t, x)
    a = np.eye(x.shape[0]) - h * jac
    return x + h * np.linalg.solve(a, f0)


INTEGRATORS = {
    "euler": euler,
    "symplectic_euler": symplectic_euler,
    "midpoint": midpoint,
    "trapezoid": trapezoid,
    "rk4": rk4,
    "rk45": rk45,
    "implicit_euler": implicit_euler,
}

#: Theoretical global order of each integrator (rk45: of its fifth-order solution).
ORDERS = {"euler": 1, "symplectic_euler": 1, "midpoint": 2, "trapezoid": 2, "rk4": 4,
          "rk45": 5, "implicit_euler": 1}

ALIASES = {"forward_euler": "euler", "semi_implicit_euler": "symplectic_euler",
           "trapezoidal": "trapezoid", "heun": "trapezoid", "backward_euler": "implicit_euler",
           "implicit": "implicit_euler", "dopri5": "rk45"}


def get_integrator(name):
    """Step function for an integrator name (or alias); :class:`ParticlesError` if unknown."""
    key = ALIASES.get(name, name)
    try:
        return INTEGRATORS[key]
    except KeyError:
        raise ParticlesError("integrator", f"unknown integrator {name!r}; choose from "
                             + ", ".join(INTEGRATORS)) from None


def canonical_name(name):
    """The integrator's canonical name (resolving aliases); raises like :func:`get_integrator`."""
    get_integrator(name)
    return ALIASES.get(name, name)
