"""Spring networks: Numba forces against NumPy, Jacobians, equilibria, pins, colliders."""
import numpy as np
import pytest

import particles as P
from particles import kernels
from particles.reference_numpy import numpy_derivative


def perturbed(net, seed=0, dq=0.02, dv=0.3):
    rng = np.random.default_rng(seed)
    x = net.initial_state()
    m = 3 * net.n
    x[:m] += rng.normal(scale=dq, size=m)
    x[m:] += rng.normal(scale=dv, size=m)
    return x


def test_numba_derivative_matches_numpy_reference():
    net = P.cloth(grid=(7, 5), pin="top_corners", wind=(1.0, 0.5, 3.0), wind_coeff=0.8,
                  layout="horizontal", damping=0.2, drag=0.05)
    x = perturbed(net)
    got, ref = net(0.0, x), numpy_derivative(net, 0.0, x)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-9 * np.abs(ref).max())
    np.testing.assert_allclose(numpy_derivative(net, 0.0, x, scatter="bincount"), ref,
                               rtol=1e-12, atol=1e-9 * np.abs(ref).max())
    pinned = np.flatnonzero(~net.free)
    d = got.reshape(2, net.n, 3)
    assert np.all(d[:, pinned] == 0.0)


def test_two_particle_spring_force_closed_form():
    # particle 1 at distance 1.5 from particle 0, rest 1, k 10, moving apart at 2 m/s
    net = P.SpringNetwork([[0, 0, 0], [0, 1.5, 0]], [[0, 1]], rest=1.0, stiffness=10.0,
                          damping=0.5, mass=[1.0, 2.0], gravity=(0, 0, 0), drag=0.1,
                          velocities=[[0, 0, 0], [0, 2.0, 0]])
    f = net.forces(net.initial_state())
    # spring pulls 1 towards 0: 10 * 0.5 + 0.5 * 2 = 6 N; drag on particle 1: 0.2 N
    np.testing.assert_allclose(f, [[0, 6.0, 0], [0, -6.2, 0]], atol=1e-14)
    d = net(0.0, net.initial_state())
    np.testing.assert_allclose(d[3:6], [0, 2.0, 0])
    np.testing.assert_allclose(d[9:12], [0, -3.1, 0], atol=1e-14)


def test_spring_jacobian_matches_finite_differences():
    rng = np.random.default_rng(3)
    q = rng.normal(size=(6, 3))
    springs = np.array([[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [0, 5], [1, 4]])
    rest = 0.5 * np.linalg.norm(q[springs[:, 1]] - q[springs[:, 0]], axis=1)  # stretched
    net = P.SpringNetwork(q, springs, rest=rest, stiffness=rng.uniform(1, 5, 7),
                          gravity=(0, 0, 0))
    kmat = kernels.spring_jacobians(q, net.springs, net.rest, net.stiffness)
    x = net.initial_state()
    eps = 1e-6
    for s, (i, j) in enumerate(springs):          # no two springs join the same pair
        for b in range(3):
            xp, xm = x.copy(), x.copy()
            xp[3 * j + b] += eps
            xm[3 * j + b] -= eps
            df = (net.forces(xp) - net.forces(xm)) / (2 * eps)
            # moving q_j changes the force on i by K_s e_b (only spring s joins them)
            np.testing.assert_allclose(df[i], kmat[s, :, b], rtol=1e-6, atol=1e-7)
    assert np.all(np.linalg.eigvalsh(kmat) >= -1e-12)   # positive semi-definite blocks


@pytest.mark.parametrize("damping,moving", [(0.0, True), (0.4, False)])
def test_implicit_step_solves_the_baraff_witkin_system(damping, moving):
    """Compare the CG step with a dense solve built from finite-difference Jacobians.

    (Baraff-Witkin drop the position derivative of the damping force, which vanishes when
    the particles are at rest; hence damping is tested at rest and v0 without damping.)
    """
    rng = np.random.default_rng(7)
    q = rng.normal(size=(5, 3))
    springs = np.array([[0, 1], [1, 2], [2, 3], [3, 4], [0, 2], [1, 3]])
    rest = 0.6 * np.linalg.norm(q[springs[:, 1]] - q[springs[:, 0]], axis=1)
    velocities = rng.normal(size=(5, 3)) if moving else None
    net = P.SpringNetwork(q, springs, rest=rest, stiffness=30.0, damping=damping, mass=0.2,
                          pinned=[0], drag=0.1, velocities=velocities, cg_tol=1e-14)
    x = net.initial_state()
    h, m = 0.05, 15
    f0 = net.forces(x)
    dfdq, dfdv = np.empty((15, 15)), np.empty((15, 15))
    for k in range(15):
        for jac, off in ((dfdq, 0), (dfdv, m)):
            e = 1e-6
            xp, xm = x.copy(), x.copy()
            xp[off + k] += e
            xm[off + k] -= e
            jac[:, k] = ((net.forces(xp) - net.forces(xm)) / (2 * e)).ravel()
    v0 = x[m:]
    a = np.diag(np.repeat(net.mass, 3)) - h * dfdv - h * h * dfdq
    b = h * (f0.ravel() + h * dfdq @ v0)
    free = np.repeat(net.free, 3)
    dv = np.zeros(m)
    dv[free] = np.linalg.solve(a[np.ix_(free, free)], b[free])
    got = P.implicit_euler(x, net, 0.0, h)
    np.testing.assert_allclose(got[m:], v0 + dv, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got[:m], x[:m] + h * (v0 + dv), rtol=1e-6, atol=1e-8)
    assert net.last_cg[1] <= 1e-13


@pytest.mark.parametrize("integrator,dt,steps", [("rk4", 0.005, 6000),
                                                  ("implicit_euler", 0.05, 400)])
def test_hanging_chain_settles_at_hooke_equilibrium(integrator, dt, steps):
    count, seg, k, m, g = 6, 0.2, 150.0, 0.1, 9.81
    net = P.chain(count=count, segment=seg, stiffness=k, mass=m, drag=1.0,
                  horizontal=False)
    _, states = P.simulate(net, integrator, dt, steps, every=steps)
    q = net.positions(states[-1])
    # spring i (from the top, 1-based) carries the weight of the count - i + 1 particles
    tension = (count - np.arange(count)) * m * g
    y = -np.cumsum(seg + tension / k)
    np.testing.assert_allclose(q[1:, 1], y, atol=1e-6)
    np.testing.assert_allclose(q[:, [0, 2]], 0.0, atol=1e-9)
    assert np.all(q[0] == 0.0)


def test_pendulum_conserves_energy_without_drag():
    net = P.pendulum(length=1.0, stiffness=80.0, angle=70.0)
    _, states = P.simulate(net, "rk4", 0.002, 2000, every=50)
    e = np.array([net.energy(x) for x in states])
    assert np.ptp(e) / abs(e[0]) < 1e-6
    # and it moved: the bob swung past the bottom
    assert states[:, 3].min() < -0.3 < 0.3 < states[:, 3].max()


def test_pendulum_convergence_against_scipy_dop853():
    pytest.importorskip("scipy")
    from particles.study import convergence
    steps = (64, 128, 256, 512, 1024)
    result = convergence("pendulum", ["euler", "trapezoid", "rk4", "implicit_euler"],
                         steps=steps)
    assert result["reference"].startswith("scipy")
    for name, r in result["integrators"].items():
        order = np.polyfit(np.log(r["h"][-3:]), np.log(r["error"][-3:]), 1)[0]
        assert abs(order - P.ORDERS[name]) < 0.2, (name, order)


def test_pinned_particles_never_move():
    for name in ("euler", "symplectic_euler", "midpoint", "trapezoid", "rk4",
                 "implicit_euler"):
        net = P.cloth(grid=(6, 6), pin="top_row", wind=(2, 0, 5), wind_coeff=1.0,
                      sphere=((0, -0.4, 0.1), 0.3))
        x0 = net.initial_state()
        pinned = np.flatnonzero(~net.free)
        dt = 0.02 if name == "implicit_euler" else 2e-4
        _, states = P.simulate(net, name, dt, 300, every=30)
        q = states[:, :3 * net.n].reshape(len(states), net.n, 3)
        assert np.array_equal(q[:, pinned], np.broadcast_to(
            x0[:3 * net.n].reshape(net.n, 3)[pinned], q[:, pinned].shape)), name
        assert np.abs(q[-1] - q[0]).max() > 1e-3      # the rest of the cloth moved


def test_sphere_collider_keeps_particles_outside_and_cloth_rests_on_top():
    net = P.cloth(grid=(12, 12), size=(1.0, 1.0), layout="horizontal", pin="none",
                  center=(0, 0.5, 0), sphere=((0, 0, 0), 0.3), sphere_margin=0.01,
                  friction=0.8, drag=0.02)
    _, states = P.simulate(net, "implicit_euler", 0.01, 150, every=150)
    q = net.positions(states[-1])
    r = np.linalg.norm(q, axis=1)
    assert r.min() >= 0.31 - 1e-12
    top = np.argmax(q[:, 1])
    assert q[top, 1] == pytest.approx(0.31, abs=0.01)
    assert q[:, 1].min() < 0.0                          # the edges hang down


def test_bad_network_parameters_are_named():
    with pytest.raises(P.ParticlesError, match=r"springs: indices must be in \[0, 2\)"):
        P.SpringNetwork(np.zeros((2, 3)), [[0, 2]], stiffness=1.0)
    with pytest.raises(P.ParticlesError, match=r"mass\[1\]: must be a finite number > 0"):
        P.SpringNetwork(np.zeros((2, 3)), [[0, 1]], stiffness=1.0, mass=[1.0, 0.0])
    with pytest.raises(P.ParticlesError, match="gravity: must be 3 finite numbers"):
        P.SpringNetwork(np.zeros((2, 3)), [[0, 1]], stiffness=1.0, gravity=(0, -9.8))
    with pytest.raises(P.ParticlesError, match="stiffness: expected one number or 1"):
        P.SpringNetwork(np.zeros((2, 3)), [[0, 1]], stiffness=[1.0, 2.0])
