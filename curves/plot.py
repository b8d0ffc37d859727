"""Matplotlib pictures of curves (control polygon, curve, tangents, frames) and
shaded previews of patches and swept surfaces.

Data is taken as y-up (the project's convention) and drawn with y vertical; pass
``up="z"`` for z-up data such as the course's ``teapot.spline``.
"""
import io
import pathlib

import numpy as np
from userio.outputs import write_bytes_atomic

from .errors import CurveFileError, about, line_error, shown
from .frames import as_3d
from .limits import (MAX_DPI, MAX_FRAMES, MAX_PREVIEW_TRIANGLES, MIN_DPI, check_samples,
                     check_steps, check_vertices)

COLORS = {"polygon": "0.6", "curve": "#1f4e9c", "T": "#2ca02c", "N": "#d62728",
          "B": "#1f77b4", "surface": np.array([0.85, 0.55, 0.3])}


def _figure(three_d):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = plt.figure(figsize=(7, 6))
    ax = fig.add_subplot(111, projection="3d" if three_d else None)
    return plt, fig, ax


def _to_view(p, up):
    """(m, 3) data coordinates -> matplotlib 3D coordinates (vertical = up axis)."""
    p = as_3d(p)
    if up == "y":
        return np.stack([p[:, 0], -p[:, 2], p[:, 1]], axis=1)
    return p


def _set_equal(ax, pts, three_d):
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    c = (lo + hi) / 2
    r = max(float(np.max(hi - lo)) / 2, 1e-9) * 1.05
    if three_d:
        ax.set_xlim(c[0] - r, c[0] + r)
        ax.set_ylim(c[1] - r, c[1] + r)
        ax.set_zlim(c[2] - r, c[2] + r)
        ax.set_box_aspect((1, 1, 1))
    else:
        ax.set_xlim(c[0] - r, c[0] + r)
        ax.set_ylim(c[1] - r, c[1] + r)
        ax.set_aspect("equal")


def is_planar_xy(points):
    """True for 2D points or 3D points with z == 0 everywhere."""
    p = np.asarray(points)
    return p.shape[1] == 2 or bool(np.all(p[:, 2] == 0))


def draw_curve(ax, curve, samples=32, frames=16, method="rmf", three_d=False, up="y",
               label=None):
    """Draw one curve object on ``ax``: control polygon, curve, and ``frames`` evenly
    spaced frames (2D: T green, N red; 3D: T, N, B). ``samples``: intervals per piece,
    or the curve's ``Samples`` already taken. Returns the drawn points (k, 2|3)."""
    s = samples if hasattr(samples, "tangents") else curve.sample(samples)
    T, N, B = s.frames(method)
    ctrl = getattr(curve, "ctrl", None)
    size = max(float(np.ptp(as_3d(s.points), axis=0).max()), 1e-9)
    arrow = 0.08 * size
    pick = np.unique(np.linspace(0, len(s.points) - 1, max(frames, 0)).round().astype(int)) \
        if frames else np.array([], int)
    drawn = []
    if three_d:
        P = _to_view(s.points, up)
        if ctrl is not None:
            C = _to_view(ctrl, up)
            ax.plot(*C.T, "--o", color=COLORS["polygon"], ms=3, lw=0.8)
            drawn.append(C)
        ax.plot(*P.T, color=COLORS["curve"], lw=2, label=label)
        for key, vec in (("T", T), ("N", N), ("B", B)):
            V = _to_view(vec[pick], up)
            Q = P[pick]
            for q, v in zip(Q, V):
                ax.plot(*np.stack([q, q + arrow * v]).T, color=COLORS[key], lw=1.2)
            drawn.append(Q + arrow * V)
        drawn.append(P)
    else:
        P = as_3d(s.points)[:, :2]
        if ctrl is not None:
            C = np.asarray(ctrl)[:, :2]
            ax.plot(*C.T, "--o", color=COLORS["polygon"], ms=3, lw=0.8)
            drawn.append(C)
        ax.plot(*P.T, color=COLORS["curve"], lw=2, label=label)
        for key, vec in (("T", T), ("N", N)):
            for q, v in zip(P[pick], vec[pick, :2]):
                ax.plot(*np.stack([q, q + arrow * v]).T, color=COLORS[key], lw=1.2)
            drawn.append(P[pick] + arrow * vec[pick, :2])
        drawn.append(P)
    return np.concatenate(drawn)


def draw_mesh(ax, mesh, up="y", color=None):
    """Draw a ``Mesh`` shaded by a head-light-ish Lambert term on a 3D ``ax``.
    Returns its vertices in view coordinates."""
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection
    V = _to_view(mesh.vertices, up)
    Nv = _to_view(mesh.normals, up)
    tri = V[mesh.faces]
    n = Nv[mesh.faces].mean(axis=1)
    n /= np.maximum(np.linalg.norm(n, axis=1), 1e-300)[:, None]
    elev, azim = np.radians(ax.elev), np.radians(ax.azim)
    eye = np.array([np.cos(elev) * np.cos(azim), np.cos(elev) * np.sin(azim), np.sin(elev)])
    light = eye + np.array([0.3, -0.3, 0.6])
    light /= np.linalg.norm(light)
    lam = np.abs(n @ light)                       # two-sided: inner sides stay visible
    base = COLORS["surface"] if color is None else np.asarray(color, float)
    rgb = np.clip(base[None, :] * (0.25 + 0.75 * lam[:, None]), 0, 1)
    ax.add_collection3d(Poly3DCollection(tri, facecolors=rgb, edgecolors="none"))
    return V


def plot_file(path, out, samples=32, resolution=10, frames=16, method="rmf", up="y",
              dpi=120):
    """Read a ``.spline``, ``.swp`` or patch ``.json`` file and save a picture to ``out``
    (the format from its suffix, PNG when it has none; written through a temporary
    file, so a failure leaves no partial file).

    Curves: control polygon, curve, tangents and frames; patches and swept surfaces:
    a shaded preview (``resolution`` intervals per patch side). Returns ``out``.
    """
    fmt = pathlib.Path(out).suffix.lower().lstrip(".") or "png"
    write_bytes_atomic(out, render_file(path, samples, resolution, frames, method, up, dpi,
                                        fmt))
    return out


def render_file(path, samples=32, resolution=10, frames=16, method="rmf", up="y", dpi=120,
                fmt="png"):
    """The picture :func:`plot_file` draws, as bytes in format ``fmt``.

    Sizes are checked before any work (see :mod:`curves.limits`): ``samples`` and
    ``resolution`` at most ``MAX_STEPS``, ``frames`` at most ``MAX_FRAMES``, ``dpi`` in
    [``MIN_DPI``, ``MAX_DPI``], the samples and triangles within memory and
    ``MAX_PREVIEW_TRIANGLES``. Problems with the file's content are
    :class:`~curves.errors.CurveFileError` naming it.
    """
    from .io_patches import read_patches
    from .io_spline import read_spline
    from .io_swp import read_swp
    from .patches import tessellate

    samples = check_steps(samples, "samples")
    resolution = check_steps(resolution, "resolution")
    frames = check_steps(frames, "frames", lo=0, hi=MAX_FRAMES)
    dpi = check_steps(dpi, "dpi", lo=MIN_DPI, hi=MAX_DPI)
    path = pathlib.Path(path)
    suffix = path.suffix.lower()
    curves, meshes, title = [], [], path.name
    if suffix == ".swp":
        swp = read_swp(path)
        for c in swp.surfaces:
            _check_preview(swp.surface_vertices(c), path, c.line, f"{c.kind} {shown(c.name)}")
        meshes = [m for _, m in swp.meshes()]
        curves = [(f"{c.kind} {shown(c.name)}", c.curve, swp.sample(c), c.line)
                  for c in swp.curves]
    else:
        if suffix == ".json":
            patches, basis = read_patches(path)
        else:
            sf = read_spline(path)
            if sf.kind == "patch":
                patches, basis = sf.patches, sf.basis
            else:
                patches = None
                c = sf.curve()
                count = c.segments * samples + 1
                check_samples(count, f"a {sf.basis} curve with {count} samples",
                              line_error(path, None))
                with about(path, None, f"{sf.basis} curve"):
                    curves = [(f"{sf.basis} curve", c, c.sample(samples), None)]
        if patches is not None:
            _check_preview(len(patches) * (resolution + 1) ** 2, path, None, "patches")
            with about(path, None, "patches"):
                meshes = [tessellate(patches, resolution, basis)]
    three_d = bool(meshes) or any(not is_planar_xy(s.points) for _, _, s, _ in curves)
    plt, fig, ax = _figure(three_d)
    try:
        if three_d:
            ax.view_init(elev=20, azim=-60)
        drawn = []
        for m in meshes:
            drawn.append(draw_mesh(ax, m, up))
        for name, c, s, line in curves:
            with about(path, line, name):
                drawn.append(draw_curve(ax, c, s, frames if not meshes else 0, method, three_d,
                                        up, label=name))
        pts = np.concatenate([d if d.shape[1] == (3 if three_d else 2) else d[:, :2]
                              for d in drawn])
        if not np.all(np.isfinite(pts)) or not np.isfinite(np.ptp(pts, axis=0)).all():
            raise CurveFileError(path, None, "coordinates too large to draw")
        _set_equal(ax, pts, three_d)
        ax.set_title(title)
        if not three_d:
            ax.grid(True, lw=0.3)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=dpi)
        return buf.getvalue()
    finally:
        plt.close(fig)


def _check_preview(vertices, path, line, what):
    """Refuse a preview too large for memory or for matplotlib to draw in reasonable time."""
    check_vertices(vertices, f"{what} with {vertices} vertices", line_error(path, line))
    triangles = 2 * vertices
    if triangles > MAX_PREVIEW_TRIANGLES:
        raise CurveFileError(path, line, f"{what}: a preview of about {triangles} triangles is "
                             f"too large to draw (limit {MAX_PREVIEW_TRIANGLES}); lower "
                             "the resolution or the file's STEPS")
