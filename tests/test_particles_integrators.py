"""Integrators: convergence orders against closed forms, RK45 error control, energy."""
import math

import numpy as np
import pytest

import particles as P
from particles.study import fit_order

# step counts per integrator over T = 5 s: inside the asymptotic range, above round-off
STEP_COUNTS = {
    "euler": [1000, 2000, 4000, 8000],
    "symplectic_euler": [1000, 2000, 4000, 8000],
    "implicit_euler": [1000, 2000, 4000, 8000],
    "midpoint": [100, 200, 400, 800],
    "trapezoid": [100, 200, 400, 800],
    "rk4": [25, 50, 100, 200],
}
THEORY = {"euler": 1, "symplectic_euler": 1, "implicit_euler": 1, "midpoint": 2,
          "trapezoid": 2, "rk4": 4}


def global_error(system, name, end, steps):
    t, states = P.simulate(system, name, end / steps, steps, every=steps)
    assert t[-1] == pytest.approx(end)
    return np.max(np.abs(states[-1] - system.exact(end)))


@pytest.mark.parametrize("system", [P.Circle(), P.DampedSpring(k=4.0, c=0.4)],
                         ids=["circle", "damped_spring"])
@pytest.mark.parametrize("name", list(THEORY))
def test_measured_order_matches_theory(system, name):
    end = 5.0
    hs = [end / n for n in STEP_COUNTS[name]]
    errs = [global_error(system, name, end, n) for n in STEP_COUNTS[name]]
    order = fit_order(hs, errs, lo=0.0, hi=np.inf)
    assert abs(order - THEORY[name]) < 0.2, (name, order, errs)
    # the errors really shrink by 2^p per halving, not just on average
    ratios = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert np.all(np.abs(ratios - THEORY[name]) < 0.3), ratios


def test_circle_single_steps_closed_forms():
    x = np.array([1.0, 0.0])
    f, h = P.Circle(), 0.1
    np.testing.assert_allclose(P.euler(x, f, 0, h), [1.0, h])
    # symplectic Euler with split 1: y += h x, then x -= h y_new
    np.testing.assert_allclose(P.symplectic_euler(x, f, 0, h), [1 - h * h, h])
    np.testing.assert_allclose(P.midpoint(x, f, 0, h), [1 - h * h / 2, h])
    np.testing.assert_allclose(P.trapezoid(x, f, 0, h), [1 - h * h / 2, h])
    # RK4 on a linear system is the degree-4 Taylor polynomial of the rotation
    np.testing.assert_allclose(P.rk4(x, f, 0, h),
                               [1 - h**2 / 2 + h**4 / 24, h - h**3 / 6], rtol=1e-15)
    # backward Euler: (I - hJ)^-1 x; the radius shrinks by 1/sqrt(1 + h^2) per step
    np.testing.assert_allclose(P.implicit_euler(x, f, 0, h), np.array([1.0, h]) / (1 + h * h))


def test_implicit_euler_without_jacobian_uses_finite_differences():
    def f(t, x):
        return np.array([-x[1], x[0]])
    x = np.array([0.3, -0.4])
    np.testing.assert_allclose(P.implicit_euler(x, f, 0.0, 0.2),
                               P.implicit_euler(x, P.Circle(), 0.0, 0.2), rtol=1e-7)


def test_rk45_local_error_within_tolerance():
    system = P.Circle()
    for tol in (1e-4, 1e-7, 1e-10):
        trace = []
        x1, stats = P.rk45_solve(system, system.initial_state(), 0.0, 20.0, rtol=tol,
                                 atol=tol, trace=trace)
        points = [(0.0, system.initial_state())] + trace
        assert len(points) == stats["accepted"] + 1 and points[-1][0] == 20.0
        for (t0, xa), (t1, xb) in zip(points, points[1:]):
            exact = P.Circle(x0=xa).exact(t1 - t0)      # the flow from the step's start
            scale = tol + tol * np.maximum(np.abs(xa), np.abs(xb))
            assert np.sqrt(np.mean(((xb - exact) / scale) ** 2)) <= 1.0


def test_rk45_global_error_proportional_to_tolerance():
    for system in (P.Circle(), P.DampedSpring(k=4.0, c=0.4)):
        ratios, steps = [], []
        for tol in (1e-4, 1e-6, 1e-8, 1e-10):
            x, stats = P.rk45_solve(system, system.initial_state(), 0.0, 5.0, rtol=tol,
                                    atol=tol)
            ratios.append(np.max(np.abs(x - system.exact(5.0))) / tol)
            steps.append(stats["accepted"])
        assert max(ratios) < 5.0 and max(ratios) / min(ratios) < 2.0, ratios
        # fifth order: 100x tighter tolerance costs 100^(1/5) = 2.5x the steps
        growth = np.array(steps[1:]) / np.array(steps[:-1])
        assert np.all((growth > 2.0) & (growth < 3.2)), steps


def test_rk45_matches_scipy_dormand_prince():
    scipy_integrate = pytest.importorskip("scipy.integrate")
    system = P.DampedSpring(k=100.0, c=0.0)
    for tol in (1e-4, 1e-8):
        x, stats = P.rk45_solve(system, system.initial_state(), 0.0, 10.0, rtol=tol,
                                atol=tol)
        ref = scipy_integrate.solve_ivp(system, (0.0, 10.0), system.initial_state(),
                                        method="RK45", rtol=tol, atol=tol)
        assert stats["accepted"] == len(ref.t) - 1
        np.testing.assert_allclose(x, ref.y[:, -1], rtol=1e-9, atol=1e-12)


def test_rk45_as_a_fixed_interval_step():
    system = P.Circle()
    x = P.rk45(system.initial_state(), system, 0.0, 1.0, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(x, system.exact(1.0), atol=1e-9)


def test_symplectic_euler_energy_bounded_forward_euler_grows():
    system = P.DampedSpring(k=1.0, m=1.0, c=0.0)       # harmonic oscillator
    h, steps = 0.01, 100_000
    e0 = system.energy(system.initial_state())
    for name in ("symplectic_euler", "euler"):
        _, states = P.simulate(system, name, h, steps, every=100)
        e = np.array([system.energy(x) for x in states]) / e0
        if name == "symplectic_euler":
            # bounded: the map conserves x^2 + v^2 - h x v = 1 exactly, so
            # E/E0 - 1 = h x v with |x v| <= 1 / (2 - h) on that ellipse
            assert np.max(np.abs(e - 1.0)) <= h / (2 - h) + 1e-9
            x, v = states[:, 0], states[:, 1]
            np.testing.assert_allclose(x * x + v * v - h * x * v, 1.0, rtol=1e-9)
        else:
            # forward Euler multiplies the energy by exactly 1 + h^2 every step
            n = np.arange(len(e)) * 100
            np.testing.assert_allclose(e, (1 + h * h) ** n, rtol=1e-8)
            assert e[-1] > 2e4


def test_unknown_integrator_and_bad_step_are_clear_errors():
    with pytest.raises(P.ParticlesError, match="unknown integrator 'verlet'; choose from"):
        P.get_integrator("verlet")
    with pytest.raises(P.ParticlesError, match="dt: must be a finite number > 0, got -0.1"):
        P.simulate(P.Circle(), "rk4", -0.1, 10)
    with pytest.raises(P.ParticlesError, match="dt"):
        P.simulate(P.Circle(), "rk4", float("nan"), 10)
    with pytest.raises(P.ParticlesError, match="steps"):
        P.simulate(P.Circle(), "rk4", 0.1, 2.5)
    assert P.get_integrator("heun") is P.trapezoid
    assert P.get_integrator("backward_euler") is P.implicit_euler


def test_symplectic_euler_needs_a_split_for_odd_states():
    with pytest.raises(P.ParticlesError, match="odd length 3"):
        P.symplectic_euler(np.zeros(3), lambda t, x: x, 0.0, 0.1)


def test_blow_up_raises_instead_of_returning_garbage():
    system = P.DampedSpring(k=1.0e4, c=0.0)             # omega = 100: euler explodes
    with pytest.raises(P.UnstableSimulationError, match="blew up at step") as info:
        P.simulate(system, "rk4", 0.1, 10_000)
    assert info.value.step < 200 and math.isfinite(info.value.t)


def test_simulate_records_every_kth_state_and_the_last():
    t, states = P.simulate(P.Circle(), "rk4", 0.1, 25, every=10)
    np.testing.assert_allclose(t, [0.0, 1.0, 2.0, 2.5])
    assert states.shape == (4, 2)
    # RK4 global error about T h^4 / 120 = 2e-6
    np.testing.assert_allclose(states[-1], P.Circle().exact(2.5), atol=1e-5)


@pytest.mark.parametrize("c", [0.0, 0.5, 4.0, 10.0],
                         ids=["undamped", "under", "critical", "over"])
def test_damped_spring_closed_form_in_every_regime(c):
    # k = 4, m = 1: critical damping at c = 2 sqrt(k m) = 4
    system = P.DampedSpring(k=4.0, m=1.0, c=c, x0=0.7, v0=-1.3)
    x, _ = P.rk45_solve(system, system.initial_state(), 0.0, 3.0, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(system.exact(3.0), x, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(system.exact(0.0), [0.7, -1.3], atol=1e-15)
