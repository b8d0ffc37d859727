"""A straightforward vectorised NumPy implementation of spring-network dynamics.

Independent of the Numba kernels; the tests check the kernels against it and the
benchmark measures the speed-up over it. Same model as :mod:`particles.kernels`.
"""
import numpy as np


def _scatter_add(f, idx, values, scatter):
    if scatter == "add.at":
        np.add.at(f, idx, values)
    else:                                   # "bincount": one weighted histogram per axis
        for c in range(3):
            f[:, c] += np.bincount(idx, weights=values[:, c], minlength=len(f))


def numpy_derivative(net, t, x, scatter="add.at"):
    """``dx/dt`` of a :class:`~particles.springs.SpringNetwork` state ``(6n,)``, in NumPy.

    ``scatter``: how per-spring forces are summed onto particles, ``"add.at"``
    (``np.add.at``, the straightforward way) or ``"bincount"`` (faster NumPy idiom).
    """
    n = net.n
    q = x[:3 * n].reshape(n, 3)
    v = x[3 * n:].reshape(n, 3)
    f = net.mass[:, None] * net.gravity[None, :] - net.drag * v
    i, j = net.springs[:, 0], net.springs[:, 1]
    d = q[j] - q[i]
    length = np.linalg.norm(d, axis=1)
    u = d / length[:, None]
    rel = np.sum((v[j] - v[i]) * u, axis=1)
    fs = (net.stiffness * (length - net.rest) + net.damping * rel)[:, None] * u
    _scatter_add(f, i, fs, scatter)
    _scatter_add(f, j, -fs, scatter)
    if net.wind_coeff != 0.0 and len(net.triangles):
        a, b, c = net.triangles.T
        cr = np.cross(q[b] - q[a], q[c] - q[a])
        twice_area = np.linalg.norm(cr, axis=1)
        nrm = cr / twice_area[:, None]
        rel_air = net.wind - (v[a] + v[b] + v[c]) / 3.0
        mag = net.wind_coeff * 0.5 * twice_area * np.sum(rel_air * nrm, axis=1) / 3.0
        ft = mag[:, None] * nrm
        for idx in (a, b, c):
            _scatter_add(f, idx, ft, scatter)
    acc = f / net.mass[:, None]
    dq = v.copy()
    dq[~net.free] = 0.0
    acc[~net.free] = 0.0
    return np.concatenate([dq.ravel(), acc.ravel()])


def numpy_rk4_step(net, x, t, h, scatter="add.at"):
    """Classic RK4 with :func:`numpy_derivative`."""
    k1 = numpy_derivative(net, t, x, scatter)
    k2 = numpy_derivative(net, t + h / 2, x + h / 2 * k1, scatter)
    k3 = numpy_derivative(net, t + h / 2, x + h / 2 * k2, scatter)
    k4 = numpy_derivative(net, t + h, x + h * k3, scatter)
    return x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
