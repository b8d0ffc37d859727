"""Integrator error study: global error against step size, and energy drift.

:func:`convergence` runs every integrator over ``[0, T]`` with a range of step sizes and
measures the global error at ``T`` (max-norm of the state difference) against the
closed-form solution, or against ``scipy.integrate.solve_ivp`` (DOP853, tolerances 1e-13)
when there is none. :func:`fit_order` fits the slope of log(error) against log(h), the
measured order. ``rk45`` is adaptive: it is run at a range of tolerances and plotted at
its mean step size ``T / accepted steps``. :func:`energy_drift` records the relative
energy error ``|E(t) - E(0)| / |E(0)|`` over a long run.
"""
import json
import math

import numpy as np
from userio.outputs import write_bytes_atomic

from . import limits
from .errors import ParticlesError
from .integrators import INTEGRATORS, ORDERS, get_integrator, rk45_solve
from .simulate import check_step
from .springs import pendulum
from .systems import Circle, DampedSpring

#: Convergence problems: name -> (factory, end time T in seconds).
STUDY_SYSTEMS = {
    "circle": (lambda: Circle(), 5.0),
    "spring": (lambda: DampedSpring(k=4.0, m=1.0, c=0.4, x0=1.0, v0=0.0), 5.0),
    "pendulum": (lambda: pendulum(length=1.0, stiffness=50.0, mass=1.0, angle=60.0), 2.0),
}

#: Energy-drift problems (conservative: no damping, no drag): name -> factory.
ENERGY_SYSTEMS = {
    "circle": lambda: Circle(),
    "oscillator": lambda: DampedSpring(k=1.0, m=1.0, c=0.0, x0=1.0, v0=0.0),
    "pendulum": lambda: pendulum(length=1.0, stiffness=50.0, mass=1.0, angle=60.0),
}

DEFAULT_STEPS = tuple(int(round(8 * 2 ** (k / 2))) for k in range(0, 21))   # 8 .. 8192
DEFAULT_TOLS = tuple(10.0 ** -k for k in range(3, 13))


def study_system(name):
    """``(system, T)`` for a name in :data:`STUDY_SYSTEMS`."""
    try:
        factory, end = STUDY_SYSTEMS[name]
    except KeyError:
        raise ParticlesError("error study", f"unknown system {name!r}; choose from "
                             + ", ".join(STUDY_SYSTEMS)) from None
    return factory(), end


def energy_system(name):
    """A conservative system from :data:`ENERGY_SYSTEMS`."""
    try:
        return ENERGY_SYSTEMS[name]()
    except KeyError:
        raise ParticlesError("energy study", f"unknown system {name!r}; choose from "
                             + ", ".join(ENERGY_SYSTEMS)) from None


def reference_solution(system, end):
    """``(x(T), label)``: the closed form when the system has one, else DOP853.

    Raises :class:`ParticlesError` with an install hint when scipy is needed but missing.
    """
    exact = system.exact(end)
    if exact is not None:
        return exact, "analytic"
    try:
        from scipy.integrate import solve_ivp
    except ImportError:
        raise ParticlesError("error study", f"system {system.name!r} has no closed form and "
                             "the reference needs scipy (pip install scipy)") from None
    sol = solve_ivp(system, (0.0, end), system.initial_state(), method="DOP853",
                    rtol=1e-13, atol=1e-13)
    if not sol.success:
        raise ParticlesError("error study", f"scipy reference failed: {sol.message}")
    return sol.y[:, -1], "scipy solve_ivp DOP853 rtol=atol=1e-13"


def fixed_step_error(system, integrator, end, steps, x_ref):
    """Max-norm global error at ``T = end`` after ``steps`` equal steps."""
    step = get_integrator(integrator)
    h = end / steps
    x = system.initial_state()
    for k in range(steps):
        x = step(x, system, k * h, h)
        system.constrain(x)
    return float(np.max(np.abs(x - x_ref)))


def fit_order(h, err, lo=1e-11, hi=1e-2):
    """Least-squares slope of ``log(err)`` against ``log(h)`` over the points with
    ``lo <= err <= hi`` (the asymptotic range, above round-off). NaN if fewer than 3."""
    h, err = np.asarray(h, float), np.asarray(err, float)
    ok = (err >= lo) & (err <= hi) & np.isfinite(err)
    if ok.sum() < 3:
        return math.nan
    return float(np.polyfit(np.log(h[ok]), np.log(err[ok]), 1)[0])


def convergence(name, integrators=None, steps=DEFAULT_STEPS, tols=DEFAULT_TOLS):
    """Run the study for a system of :data:`STUDY_SYSTEMS`; returns a JSON-ready dict
    ``{"system", "T", "reference", "integrators": {name: {"h", "error", "order",
    "theory"[, "tol"]}}}``."""
    system, end = study_system(name)
    x_ref, label = reference_solution(system, end)
    scale = max(1.0, float(np.max(np.abs(x_ref))))
    out = {"system": name, "T": end, "reference": label, "integrators": {}}
    for integ in integrators or list(INTEGRATORS):
        get_integrator(integ)
        if integ == "rk45":
            hs, errs = [], []
            for tol in tols:
                x, stats = rk45_solve(system, system.initial_state(), 0.0, end,
                                      rtol=tol, atol=tol)
                hs.append(end / stats["accepted"])
                errs.append(float(np.max(np.abs(x - x_ref))))
            entry = {"tol": list(tols)}
        else:
            hs = [end / n for n in steps]
            errs = []
            for n in steps:
                try:
                    with np.errstate(all="ignore"):
                        e = fixed_step_error(system, integ, end, n, x_ref)
                except (FloatingPointError, OverflowError):
                    e = math.inf
                errs.append(e if math.isfinite(e) else math.inf)
            entry = {}
        entry.update({"h": hs, "error": errs,
                      "order": fit_order(hs, errs, 1e-11 * scale, 1e-2 * scale),
                      "theory": ORDERS[integ]})
        out["integrators"][integ] = entry
    return out


def energy_drift(name, integrators=None, dt=0.01, steps=100_000, samples=1000,
                 rk45_tol=1e-6):
    """Relative energy error over a long run of each integrator.

    Returns ``{"system", "dt", "steps", "integrators": {name: {"t", "rel_error"}}}`` with
    ``samples + 1`` points each. ``rk45`` runs adaptively at ``rk45_tol`` between the
    sample times instead of fixed steps.
    """
    system = energy_system(name)
    dt = check_step(dt, "energy study: dt")
    steps = limits.count(steps, "energy study", "steps", 1, limits.MAX_STEPS)
    samples = limits.count(samples, "energy study", "samples", 1, limits.MAX_STEPS)
    x0 = system.initial_state()
    e0 = system.energy(x0)
    every = max(1, steps // samples)
    out = {"system": name, "dt": dt, "steps": steps, "rk45_tol": rk45_tol,
           "integrators": {}}
    for integ in integrators or list(INTEGRATORS):
        step = get_integrator(integ)
        x = x0.copy()
        ts, rel = [0.0], [0.0]
        k = 0
        with np.errstate(all="ignore"):
            while k < steps:
                n = min(every, steps - k)
                if integ == "rk45":
                    x = rk45_solve(system, x, k * dt, (k + n) * dt, rtol=rk45_tol,
                                   atol=rk45_tol)[0]
                else:
                    for i in range(n):
                        x = step(x, system, (k + i) * dt, dt)
                k += n
                e = system.energy(x)
                ts.append(k * dt)
                rel.append(abs(e - e0) / abs(e0) if math.isfinite(e) else math.inf)
                if not math.isfinite(e):
                    break
        out["integrators"][integ] = {"t": ts, "rel_error": rel}
    return out


def _style(name):
    colors = {"euler": "C0", "symplectic_euler": "C1", "midpoint": "C2", "trapezoid": "C3",
              "rk4": "C4", "rk45": "C5", "implicit_euler": "C6"}
    markers = {"euler": "o", "symplectic_euler": "s", "midpoint": "^", "trapezoid": "v",
               "rk4": "D", "rk45": "*", "implicit_euler": "x"}
    return colors.get(name, "k"), markers.get(name, ".")


def plot_convergence(result, path):
    """Log-log plot of global error against step size, fitted orders in the legend.
    ``path``: a file name or a binary file object (PNG)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5), dpi=100)
    for name, r in result["integrators"].items():
        h = np.array(r["h"])
        e = np.array(r["error"], dtype=float)
        ok = np.isfinite(e) & (e > 0)
        color, marker = _style(name)
        order = r["order"]
        label = f"{name}: slope {order:.2f} (theory {r['theory']})" if math.isfinite(order) \
            else f"{name} (no asymptotic range)"
        ax.loglog(h[ok], e[ok], marker=marker, color=color, ms=4, lw=1, label=label)
    ax.set_xlabel("step size h (s)" + ("  [rk45: mean accepted step]" if "rk45" in
                                       result["integrators"] else ""))
    ax.set_ylabel("global error at T (max norm)")
    ax.set_title(f"{result['system']}: error at T = {result['T']:g} s "
                 f"(reference: {result['reference'].split(' rtol')[0]})", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.set_ylim(bottom=1e-15)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)


def plot_energy(result, path):
    """Semi-log plot of the relative energy error against time. ``path``: a file name
    or a binary file object (PNG)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5), dpi=100)
    for name, r in result["integrators"].items():
        t = np.array(r["t"][1:])
        e = np.array(r["rel_error"][1:], dtype=float)
        ok = np.isfinite(e) & (e > 0)
        color, _ = _style(name)
        label = name if name != "rk45" else f"rk45 (tol {result['rk45_tol']:g})"
        ax.semilogy(t[ok], e[ok], color=color, lw=1, label=label)
    ax.set_xlabel("time t (s)")
    ax.set_ylabel("relative energy error |E(t) - E(0)| / |E(0)|")
    ax.set_title(f"{result['system']}: energy drift, dt = {result['dt']:g}, "
                 f"{result['steps']:,} steps", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)


def json_text(result):
    """A study result as JSON text (infinities and NaN as the strings "inf" and "nan")."""
    def clean(v):
        if isinstance(v, float) and not math.isfinite(v):
            return str(v)
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        return v
    return json.dumps(clean(result), indent=1)


def write_json(result, path):
    """Write a study result as JSON (see :func:`json_text`) through a temporary file."""
    write_bytes_atomic(path, json_text(result).encode("utf-8"))
