"""Cloth: an ``nx x ny`` grid of particles with structural, shear and flex springs.

Particle ``(i, j)`` (``i`` across, ``j`` up the cloth) has index ``j * nx + i``. Layouts:

* ``"vertical"``: the grid spans the xy plane at ``z = center[2]``, ``j = ny - 1`` is the
  top edge; triangles face +z.
* ``"horizontal"``: the grid lies in the xz plane at ``y = center[1]``, ``j`` runs from
  +z (``j = 0``) to -z (``j = ny - 1``, the "top" edge for pinning); triangles face +y.

Springs: structural to the 4-neighbours, shear along both cell diagonals, flex (bending)
to the neighbours two apart. Rest lengths are the initial (flat) distances.
"""
import numpy as np

from . import limits
from .errors import ParticlesError
from .mesh import vertex_normals
from .springs import SpringNetwork, _vec3

PIN_MODES = ("none", "top_corners", "corners", "top_row")

#: Default cloth parameters (SI units); see docs/particles.md for their stable step sizes.
DEFAULTS = {
    "grid": (16, 16), "size": (1.0, 1.0), "mass": 0.5, "stiffness": 400.0,
    "shear_stiffness": 40.0, "flex_stiffness": 4.0, "damping": 0.05, "drag": 0.5,
}

#: Documented step sizes (s) for the default parameters on a 32 x 32 grid, about 2/3 of the
#: measured stability limits (either layout; euler 1.6e-4, symplectic_euler 8.4e-4,
#: midpoint and trapezoid 6.8e-4, rk4 1.6e-3; implicit_euler is stable at 0.2 and
#: beyond). The limits scale like 1 / (particles per side) at fixed size, mass and
#: stiffness.
DOCUMENTED_DT = {"euler": 1e-4, "symplectic_euler": 5e-4, "midpoint": 5e-4,
                 "trapezoid": 5e-4, "rk4": 1e-3, "implicit_euler": 0.02}


def grid_springs(nx, ny):
    """Spring index pairs of an ``nx x ny`` grid: ``(structural, shear, flex)``, each
    ``(s, 2) int64``."""
    idx = np.arange(nx * ny).reshape(ny, nx)       # idx[j, i]

    def pairs(a, b):
        return np.stack([a.ravel(), b.ravel()], axis=1)

    structural = np.concatenate([pairs(idx[:, :-1], idx[:, 1:]),
                                 pairs(idx[:-1, :], idx[1:, :])])
    shear = np.concatenate([pairs(idx[:-1, :-1], idx[1:, 1:]),
                            pairs(idx[:-1, 1:], idx[1:, :-1])])
    flex = np.concatenate([pairs(idx[:, :-2], idx[:, 2:]),
                           pairs(idx[:-2, :], idx[2:, :])])
    return structural.astype(np.int64), shear.astype(np.int64), flex.astype(np.int64)


def grid_triangles(nx, ny):
    """Two triangles per cell, diagonals alternating in a checkerboard, ``(2 (nx-1)(ny-1),
    3) int64``, counter-clockwise seen from the side the cloth faces (see module doc)."""
    j, i = np.meshgrid(np.arange(ny - 1), np.arange(nx - 1), indexing="ij")
    a = (j * nx + i).ravel()
    b, c, d = a + 1, a + nx + 1, a + nx
    even = ((i + j) % 2 == 0).ravel()
    t1 = np.where(even[:, None], np.stack([a, b, c], 1), np.stack([a, b, d], 1))
    t2 = np.where(even[:, None], np.stack([a, c, d], 1), np.stack([b, c, d], 1))
    return np.concatenate([t1, t2]).astype(np.int64)


def grid_positions(nx, ny, size, layout, center):
    """Flat initial positions ``(nx * ny, 3)`` for a layout (see module doc)."""
    w, h = size
    u = np.linspace(-0.5 * w, 0.5 * w, nx)
    s = np.linspace(-0.5 * h, 0.5 * h, ny)
    uu, ss = np.meshgrid(u, s)                         # [j, i]
    q = np.zeros((ny, nx, 3))
    q[..., 0] = uu
    if layout == "vertical":
        q[..., 1] = ss
    else:
        q[..., 2] = -ss
    return q.reshape(-1, 3) + np.asarray(center, dtype=np.float64)


def pinned_indices(nx, ny, pin):
    """Indices of pinned particles for a mode in :data:`PIN_MODES` or a list of ``[i, j]``."""
    top = (ny - 1) * nx
    if isinstance(pin, str):
        if pin == "none":
            return np.zeros(0, np.int64)
        if pin == "top_corners":
            return np.array([top, top + nx - 1])
        if pin == "corners":
            return np.array([0, nx - 1, top, top + nx - 1])
        if pin == "top_row":
            return top + np.arange(nx)
        raise ParticlesError("cloth", f"pin: unknown mode {pin!r}; choose from "
                             + ", ".join(PIN_MODES) + " or a list of [i, j]")
    if not isinstance(pin, (list, tuple)) or not all(
            isinstance(p, (list, tuple)) and len(p) == 2 for p in pin):
        raise ParticlesError("cloth", f"pin: expected a mode ({', '.join(PIN_MODES)}) or a "
                             f"list of [i, j], got {limits.short(pin)}")
    ij = np.array([[limits.count(v, "cloth", "pin", -2**62, 2**62) for v in p] for p in pin],
                  dtype=np.int64).reshape(-1, 2)
    bad = (ij[:, 0] < 0) | (ij[:, 0] >= nx) | (ij[:, 1] < 0) | (ij[:, 1] >= ny)
    if np.any(bad):
        raise ParticlesError("cloth", f"pin: [i, j] = {ij[np.argmax(bad)].tolist()} is "
                             f"outside the {nx} x {ny} grid")
    return ij[:, 1] * nx + ij[:, 0]


def cloth_grid(grid):
    """``(nx, ny)`` from a cloth's ``grid`` parameter, checked: two integers in
    [2, ``limits.MAX_GRID``] whose cloth fits in memory."""
    if not isinstance(grid, (list, tuple)) or len(grid) != 2:
        raise ParticlesError("cloth", f"grid: expected two integers, got {limits.short(grid)}")
    nx, ny = (limits.count(g, "cloth", "grid", 0, limits.MAX_GRID) for g in grid)
    if nx < 2 or ny < 2:
        raise ParticlesError("cloth", f"grid: needs at least 2 x 2 particles, got {nx} x {ny}")
    limits.memory(nx * ny * limits.PARTICLE_BYTES, "cloth", f"grid: a {nx} x {ny} cloth")
    return nx, ny


def cloth(grid=DEFAULTS["grid"], size=DEFAULTS["size"], mass=DEFAULTS["mass"],
          stiffness=DEFAULTS["stiffness"], shear_stiffness=DEFAULTS["shear_stiffness"],
          flex_stiffness=DEFAULTS["flex_stiffness"], damping=DEFAULTS["damping"],
          drag=DEFAULTS["drag"], gravity=(0.0, -9.81, 0.0), pin="top_corners",
          layout="vertical", center=(0.0, 0.0, 0.0), wind=(0.0, 0.0, 0.0),
          wind_coeff=0.0, sphere=None, sphere_margin=0.01, friction=0.5, cg_tol=1e-4):
    """A cloth :class:`~particles.springs.SpringNetwork`.

    ``grid = (nx, ny)`` particles (>= 2 each) over ``size = (width, height)`` metres;
    ``mass`` kg in total, spread evenly; ``stiffness``, ``shear_stiffness``,
    ``flex_stiffness`` per spring (N/m); ``damping`` along every spring (N s/m); ``drag``
    per particle (N s/m); ``pin`` a mode of :data:`PIN_MODES` or ``[[i, j], ...]``;
    ``wind`` (m/s) with ``wind_coeff`` (N s/m^3) acts on the triangles; ``sphere =
    (center, radius)`` adds a collider whose contact surface is ``radius + sphere_margin``
    with tangential velocity damping ``friction``. ``cg_tol`` is the relative residual at
    which implicit Euler's conjugate-gradient solve stops.

    The result has extra attributes ``grid`` and ``faces`` (see :func:`grid_triangles`).
    """
    nx, ny = cloth_grid(grid)
    if not isinstance(size, (list, tuple)) or len(size) != 2:
        raise ParticlesError("cloth", f"size: expected two numbers > 0, got {limits.short(size)}")
    size = np.array([limits.number(v, "cloth", "size", lo=0.0, lo_open=True) for v in size])
    if layout not in ("vertical", "horizontal"):
        raise ParticlesError("cloth", f"layout: must be 'vertical' or 'horizontal', got "
                             f"{limits.short(layout)}")
    mass = limits.number(mass, "cloth", "mass", lo=0.0, lo_open=True)
    stiffness, shear_stiffness, flex_stiffness, damping, drag, wind_coeff, sphere_margin = (
        limits.number(v, "cloth", name, lo=0.0) for name, v in (
            ("stiffness", stiffness), ("shear_stiffness", shear_stiffness),
            ("flex_stiffness", flex_stiffness), ("damping", damping), ("drag", drag),
            ("wind_coeff", wind_coeff), ("sphere_margin", sphere_margin)))
    friction = limits.number(friction, "cloth", "friction", lo=0.0, hi=1.0)
    cg_tol = limits.number(cg_tol, "cloth", "cg_tol", lo=0.0, lo_open=True)
    center = _vec3("cloth", "center", center)
    if np.any(_vec3("cloth", "wind", wind) != 0) and not wind_coeff:
        raise ParticlesError("cloth", "wind: has no effect with wind_coeff = 0; give "
                             "wind_coeff > 0 (e.g. 0.5 N s/m^3)")
    structural, shear, flex = grid_springs(nx, ny)
    springs = np.concatenate([structural, shear, flex])
    k = np.concatenate([np.full(len(structural), float(stiffness)),
                        np.full(len(shear), float(shear_stiffness)),
                        np.full(len(flex), float(flex_stiffness))])
    collider = None
    if sphere is not None:
        if not isinstance(sphere, (list, tuple)) or len(sphere) != 2:
            raise ParticlesError("cloth", "sphere: expected [center, radius], got "
                                 f"{limits.short(sphere)}")
        s_center, s_radius = sphere
        s_radius = limits.number(s_radius, "cloth", "sphere radius", lo=0.0, lo_open=True)
        collider = (s_center, s_radius + sphere_margin, friction)
    faces = grid_triangles(nx, ny)
    net = SpringNetwork(grid_positions(nx, ny, size, layout, center), springs,
                        stiffness=k, damping=damping, mass=mass / (nx * ny),
                        pinned=pinned_indices(nx, ny, pin), gravity=gravity,
                        drag=float(drag) / (nx * ny),
                        triangles=faces, wind=wind, wind_coeff=wind_coeff,
                        sphere=collider, cg_tol=cg_tol)
    net.name = "cloth"
    net.grid = (nx, ny)
    net.faces = faces
    return net


def cloth_mesh(net, x):
    """``(vertices (n, 3), faces (m, 3) int64, normals (n, 3))`` of a cloth state: the
    particle positions, the grid triangles and area-weighted smooth vertex normals."""
    q = net.positions(x)
    return q, net.faces.copy(), vertex_normals(q, net.faces)
