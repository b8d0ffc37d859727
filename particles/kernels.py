"""Numba kernels for mass-spring networks (forces, collisions, implicit Euler).

Array conventions (all C-contiguous): ``q``, ``v`` particle positions and velocities
``(n, 3) float64`` (metres, m/s, y up); ``springs`` ``(s, 2) int64`` particle indices;
``rest``, ``ks``, ``cs`` ``(s,) float64`` rest length (m), stiffness (N/m) and damping
along the spring (N s/m); ``mass`` ``(n,) float64`` (kg); ``free`` ``(n,) bool`` (False =
pinned); ``gravity`` ``(3,)`` (m/s^2); ``drag`` viscous drag on every particle (N s/m);
``wind`` ``(3,)`` air velocity (m/s) and ``wind_coeff`` (N s/m^3) act on ``tris``
``(t, 3) int64`` through the linear aerodynamic force ``wind_coeff * area * (u . n) n``
with ``u`` the air velocity relative to the triangle.
"""
import math

import numpy as np
from numba import njit


@njit(cache=True)
def accumulate_forces(q, v, springs, rest, ks, cs, mass, gravity, drag, wind,
                      wind_coeff, tris, f):
    """Total force on every particle into ``f`` ``(n, 3)`` (newtons)."""
    n = q.shape[0]
    for i in range(n):
        for c in range(3):
            f[i, c] = mass[i] * gravity[c] - drag * v[i, c]
    for s in range(springs.shape[0]):
        i = springs[s, 0]
        j = springs[s, 1]
        dx = q[j, 0] - q[i, 0]
        dy = q[j, 1] - q[i, 1]
        dz = q[j, 2] - q[i, 2]
        length = math.sqrt(dx * dx + dy * dy + dz * dz)
        if length == 0.0:
            continue
        ux, uy, uz = dx / length, dy / length, dz / length
        rel = ((v[j, 0] - v[i, 0]) * ux + (v[j, 1] - v[i, 1]) * uy
               + (v[j, 2] - v[i, 2]) * uz)
        mag = ks[s] * (length - rest[s]) + cs[s] * rel
        f[i, 0] += mag * ux
        f[i, 1] += mag * uy
        f[i, 2] += mag * uz
        f[j, 0] -= mag * ux
        f[j, 1] -= mag * uy
        f[j, 2] -= mag * uz
    if wind_coeff != 0.0:
        for t in range(tris.shape[0]):
            a, b, c = tris[t, 0], tris[t, 1], tris[t, 2]
            e1x, e1y, e1z = q[b, 0] - q[a, 0], q[b, 1] - q[a, 1], q[b, 2] - q[a, 2]
            e2x, e2y, e2z = q[c, 0] - q[a, 0], q[c, 1] - q[a, 1], q[c, 2] - q[a, 2]
            nx = e1y * e2z - e1z * e2y
            ny = e1z * e2x - e1x * e2z
            nz = e1x * e2y - e1y * e2x
            twice_area = math.sqrt(nx * nx + ny * ny + nz * nz)
            if twice_area == 0.0:
                continue
            nx, ny, nz = nx / twice_area, ny / twice_area, nz / twice_area
            ux = wind[0] - (v[a, 0] + v[b, 0] + v[c, 0]) / 3.0
            uy = wind[1] - (v[a, 1] + v[b, 1] + v[c, 1]) / 3.0
            uz = wind[2] - (v[a, 2] + v[b, 2] + v[c, 2]) / 3.0
            mag = wind_coeff * 0.5 * twice_area * (ux * nx + uy * ny + uz * nz) / 3.0
            for p in (a, b, c):
                f[p, 0] += mag * nx
                f[p, 1] += mag * ny
                f[p, 2] += mag * nz


@njit(cache=True)
def derivative(q, v, springs, rest, ks, cs, mass, free, gravity, drag, wind,
               wind_coeff, tris, dq, dv):
    """``dq = v``, ``dv = f / m`` (zero for pinned particles), written into ``(n, 3)`` outputs."""
    accumulate_forces(q, v, springs, rest, ks, cs, mass, gravity, drag, wind,
                      wind_coeff, tris, dv)
    for i in range(q.shape[0]):
        if free[i]:
            inv = 1.0 / mass[i]
            for c in range(3):
                dq[i, c] = v[i, c]
                dv[i, c] *= inv
        else:
            for c in range(3):
                dq[i, c] = 0.0
                dv[i, c] = 0.0


@njit(cache=True)
def collide_sphere(q, v, free, center, radius, friction):
    """Push free particles inside the sphere to its surface, in place.

    The inward normal velocity is removed and, for particles in contact, the tangential
    velocity is scaled by ``1 - friction``. Returns the number of particles in contact.
    """
    hits = 0
    for i in range(q.shape[0]):
        if not free[i]:
            continue
        dx, dy, dz = q[i, 0] - center[0], q[i, 1] - center[1], q[i, 2] - center[2]
        dist = math.sqrt(dx * dx + dy * dy + dz * dz)
        if dist >= radius:
            continue
        hits += 1
        if dist == 0.0:
            nx, ny, nz = 0.0, 1.0, 0.0
        else:
            nx, ny, nz = dx / dist, dy / dist, dz / dist
        q[i, 0] = center[0] + radius * nx
        q[i, 1] = center[1] + radius * ny
        q[i, 2] = center[2] + radius * nz
        vn = v[i, 0] * nx + v[i, 1] * ny + v[i, 2] * nz
        if vn < 0.0:
            v[i, 0] -= vn * nx
            v[i, 1] -= vn * ny
            v[i, 2] -= vn * nz
        for c in range(3):
            v[i, c] *= 1.0 - friction
    return hits


@njit(cache=True)
def spring_jacobians(q, springs, rest, ks):
    """Per-spring position Jacobian blocks ``K`` ``(s, 3, 3)``: the force on particle ``i``
    changes by ``K (dq_j - dq_i)``.

    ``K = k (u u^T + max(0, 1 - rest/L) (I - u u^T))``; the compressive part of the
    transverse term is dropped (Choi and Ko) so that ``K`` is positive semi-definite.
    """
    s_count = springs.shape[0]
    kmat = np.zeros((s_count, 3, 3))
    for s in range(s_count):
        i = springs[s, 0]
        j = springs[s, 1]
        d0 = q[j, 0] - q[i, 0]
        d1 = q[j, 1] - q[i, 1]
        d2 = q[j, 2] - q[i, 2]
        length = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        if length == 0.0:
            continue
        u = (d0 / length, d1 / length, d2 / length)
        transverse = max(0.0, 1.0 - rest[s] / length)
        for a in range(3):
            for b in range(3):
                uu = u[a] * u[b]
                eye = 1.0 if a == b else 0.0
                kmat[s, a, b] = ks[s] * (uu + transverse * (eye - uu))
    return kmat


@njit(cache=True)
def _apply_system(p, springs, blocks, diag_mass, free, out):
    """``out = A p`` for the implicit-Euler matrix ``A = diag(m + h drag) + sum over springs
    of (e_j - e_i)^T B_s (e_j - e_i)``; ``blocks`` ``(s, 6)`` holds the symmetric ``B_s`` as
    ``xx, xy, xz, yy, yz, zz``. Rows of pinned particles are zeroed."""
    n = p.shape[0]
    for i in range(n):
        m = diag_mass[i] if free[i] else 0.0
        out[i, 0] = m * p[i, 0]
        out[i, 1] = m * p[i, 1]
        out[i, 2] = m * p[i, 2]
    for s in range(springs.shape[0]):
        i = springs[s, 0]
        j = springs[s, 1]
        dx = p[j, 0] - p[i, 0]
        dy = p[j, 1] - p[i, 1]
        dz = p[j, 2] - p[i, 2]
        b = blocks[s]
        wx = b[0] * dx + b[1] * dy + b[2] * dz
        wy = b[1] * dx + b[3] * dy + b[4] * dz
        wz = b[2] * dx + b[4] * dy + b[5] * dz
        if free[i]:
            out[i, 0] -= wx
            out[i, 1] -= wy
            out[i, 2] -= wz
        if free[j]:
            out[j, 0] += wx
            out[j, 1] += wy
            out[j, 2] += wz


@njit(cache=True)
def _dot(a, b):
    acc = 0.0
    for i in range(a.shape[0]):
        acc += a[i, 0] * b[i, 0] + a[i, 1] * b[i, 1] + a[i, 2] * b[i, 2]
    return acc


@njit(cache=True)
def conjugate_gradient(springs, blocks, diag_mass, precond, free, rhs, tol, maxiter, x):
    """Jacobi-preconditioned CG for ``A x = rhs`` (see :func:`_apply_system`).

    ``x`` holds the initial guess (pinned rows are ignored and set to 0) and receives the
    solution. Stops when ``|r| <= tol |rhs|``. Returns ``(iterations, relative residual)``.
    """
    n = rhs.shape[0]
    for i in range(n):
        if not free[i]:
            x[i, 0] = x[i, 1] = x[i, 2] = 0.0
    r = np.empty((n, 3))
    z = np.empty((n, 3))
    p = np.empty((n, 3))
    ap = np.empty((n, 3))
    _apply_system(x, springs, blocks, diag_mass, free, ap)
    rr = 0.0
    for i in range(n):
        for c in range(3):
            r[i, c] = rhs[i, c] - ap[i, c]
            z[i, c] = r[i, c] / precond[i, c]
            p[i, c] = z[i, c]
            rr += r[i, c] * r[i, c]
    rz = _dot(r, z)
    bnorm = math.sqrt(_dot(rhs, rhs))
    if bnorm == 0.0:
        for i in range(n):
            x[i, 0] = x[i, 1] = x[i, 2] = 0.0
        return 0, 0.0
    rel = math.sqrt(rr) / bnorm
    it = 0
    while it < maxiter and rel > tol:
        _apply_system(p, springs, blocks, diag_mass, free, ap)
        pap = _dot(p, ap)
        if pap <= 0.0:
            break
        alpha = rz / pap
        rr = 0.0
        for i in range(n):
            for c in range(3):
                x[i, c] += alpha * p[i, c]
                r[i, c] -= alpha * ap[i, c]
                rr += r[i, c] * r[i, c]
        it += 1
        rel = math.sqrt(rr) / bnorm
        if rel <= tol:
            break
        rz_new = 0.0
        for i in range(n):
            for c in range(3):
                z[i, c] = r[i, c] / precond[i, c]
                rz_new += r[i, c] * z[i, c]
        beta = rz_new / rz
        rz = rz_new
        for i in range(n):
            for c in range(3):
                p[i, c] = z[i, c] + beta * p[i, c]
    return it, rel


@njit(cache=True)
def implicit_euler_step(q, v, springs, rest, ks, cs, mass, free, gravity, drag, wind,
                        wind_coeff, tris, h, tol, maxiter, dv, q_out, v_out):
    """One linearised backward-Euler step (Baraff and Witkin 1998) into ``q_out, v_out``.

    Solves ``(M - h df/dv - h^2 df/dq) dv = h (f0 + h df/dq v)`` for the velocity change by
    Jacobi-preconditioned conjugate gradients on the free particles (pinned particles are
    filtered out), then ``v_out = v + dv``, ``q_out = q + h v_out``. ``dv`` ``(n, 3)`` holds
    the initial guess for CG (e.g. the previous step's) and receives the solution. The
    position Jacobian
    is :func:`spring_jacobians`; the velocity Jacobian holds the spring dampers and drag;
    the wind force is explicit. Returns ``(cg_iterations, relative_residual)``.
    """
    n = q.shape[0]
    ns = springs.shape[0]
    rhs = np.empty((n, 3))
    accumulate_forces(q, v, springs, rest, ks, cs, mass, gravity, drag, wind,
                      wind_coeff, tris, rhs)
    for i in range(n):
        for c in range(3):
            rhs[i, c] *= h
    kmat = spring_jacobians(q, springs, rest, ks)
    blocks = np.empty((ns, 6))
    diag_mass = np.empty(n)
    precond = np.empty((n, 3))
    for i in range(n):
        diag_mass[i] = mass[i] + h * drag
        for c in range(3):
            precond[i, c] = diag_mass[i]
    h2 = h * h
    upper = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))
    for s in range(ns):
        i = springs[s, 0]
        j = springs[s, 1]
        d0 = q[j, 0] - q[i, 0]
        d1 = q[j, 1] - q[i, 1]
        d2 = q[j, 2] - q[i, 2]
        length = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        u = (0.0, 0.0, 0.0)
        if length > 0.0:
            u = (d0 / length, d1 / length, d2 / length)
        for e in range(6):
            a, b = upper[e]
            blocks[s, e] = h * cs[s] * u[a] * u[b] + h2 * kmat[s, a, b]
        for a in range(3):
            w = 0.0
            for b in range(3):
                w += kmat[s, a, b] * (v[j, b] - v[i, b])
            rhs[i, a] += h2 * w
            rhs[j, a] -= h2 * w
        for a, e in ((0, 0), (1, 3), (2, 5)):
            precond[i, a] += blocks[s, e]
            precond[j, a] += blocks[s, e]
    for i in range(n):
        if not free[i]:
            for c in range(3):
                rhs[i, c] = 0.0
    it, rel = conjugate_gradient(springs, blocks, diag_mass, precond, free, rhs, tol,
                                 maxiter, dv)
    for i in range(n):
        if free[i]:
            for c in range(3):
                v_out[i, c] = v[i, c] + dv[i, c]
                q_out[i, c] = q[i, c] + h * v_out[i, c]
        else:
            for c in range(3):
                v_out[i, c] = v[i, c]
                q_out[i, c] = q[i, c]
    return it, rel
