"""Debug views: pictures that settle arguments about a wrong image by painting its parts.

``render_view(scene, mode, ...)`` -> :class:`View` (an (H, W, 3) float32 picture in
display colours, and a one-line report). Modes:

- ``objects`` / ``materials``: false colour per object / material id (pixel centres; the
  same id always gets the same colour, the background is black);
- ``highlight``: the objects and materials whose name matches ``highlight`` (an object's
  ``name``, its JSON path such as ``objects[2]`` or a prefix of it, or a material name)
  painted flat magenta, everything else grey (shaded by the angle to the camera, so
  the shapes stay readable);
- ``cost``: the BVH traversal cost of each primary ray (nodes + triangles visited, through
  the pixel centre) as a heat map, with a legend strip below the image;
- ``normals``: the shading normals as ``(N + 1) / 2``;
- ``nan``: the colour image with every pixel that had a NaN or infinite sample painted
  magenta, and every pixel with a path cut at the media step cap painted cyan (magenta
  wins where both); the report says how many samples, in how many pixels, and where
  (pixel, object, material) the worst one is, and how many were cut (uniform renders
  only);
- ``samples``: the samples each pixel took (path tracer; adaptive sampling, see
  :mod:`raytrace.film.adaptive`, makes them differ) as a heat map from 0 to the most any
  pixel took, with a legend strip below the image;
- ``transmittance``: per pixel centre, the transmittance ``exp(-tau)`` (per RGB channel)
  of the participating media along the camera ray up to the first surface that is not a
  ``null`` boundary (white: clear, black: opaque); the report gives the optical depth tau
  (``docs/media.md``).

Views go through the same settings as renders (size, spp, integrator...); the pictures
are display colours: write them to PNG with ``encoding="linear"`` (the CLI does).
"""
import dataclasses

import numpy as np

from .accel.stats import cost_batch
from .camera import make_camera
from .errors import SceneError
from .kernels.aov import render_ids
from .kernels.camera_rays import centre_rays
from .renderer import render, render_aovs, resolve_settings
from .settings import check_highlight

MODES = ("objects", "materials", "highlight", "cost", "normals", "nan", "samples", "transmittance")
LOUD = np.array([1.0, 0.0, 1.0], np.float32)      # magenta
CUT = np.array([0.0, 1.0, 1.0], np.float32)       # cyan: the nan view's capped pixels
MISS = np.zeros(3, np.float32)


@dataclasses.dataclass
class View:
    """A debug picture ``image`` ((H, W, 3) float32 display colours) and its ``report``
    (one line, may be empty); ``data`` holds the numbers behind it (ids, costs, counts)."""
    image: np.ndarray
    report: str
    data: dict


def id_colours(ids):
    """(H, W, 3) float32: a fixed bright colour per id >= 0 (a hash of the id), black for -1."""
    ids = np.asarray(ids, np.int64)
    h = (ids.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)
    hue = (h % np.uint64(360)).astype(np.float64) / 360.0
    light = 0.45 + 0.2 * ((h >> np.uint64(9)) % np.uint64(3)).astype(np.float64) / 2.0
    rgb = _hsl(hue, 0.75, light)
    return np.where(ids[..., None] >= 0, rgb, 0.0).astype(np.float32)


def _hsl(h, s, lum):
    """HSL (arrays) -> RGB in [0, 1]."""
    c = (1.0 - np.abs(2.0 * lum - 1.0)) * s
    x = c * (1.0 - np.abs((h * 6.0) % 2.0 - 1.0))
    m = lum - c / 2.0
    k = (h * 6.0).astype(np.int64) % 6
    zero = np.zeros_like(h)
    table = [(c, x, zero), (x, c, zero), (zero, c, x), (zero, x, c), (x, zero, c), (c, zero, x)]
    rgb = np.zeros(h.shape + (3,))
    for i, (r, g, b) in enumerate(table):
        sel = k == i
        rgb[sel] = np.stack([r, g, b], -1)[sel]
    return rgb + m[..., None]


def matching_ids(names, pattern):
    """Indices of ``names`` equal to ``pattern``, naming it in parentheses, or starting
    with it followed by ``.``, ``[`` or a space (``objects[2]`` matches its children)."""
    out = []
    for k, name in enumerate(names):
        if name == pattern or name.endswith(f"({pattern})") or \
                any(name.startswith(pattern + c) for c in (".", "[", " ")):
            out.append(k)
    return out


def _ids(scene, s):
    """(object ids, material ids) through the pixel centres."""
    obj = np.empty((s["height"], s["width"]), np.int64)
    mat = np.empty_like(obj)
    render_ids(obj, mat, scene.accel, scene.geometry, make_camera(scene.data["camera"]))
    return obj, mat


def id_images(scene, **overrides):
    """(object ids, material ids) of ``scene`` through the pixel centres, (H, W) int64,
    -1 on the background (the ``objects`` / ``materials`` views' numbers, both at once)."""
    return _ids(scene, resolve_settings(scene, overrides))


def _facing_grey(scene, s):
    """Grey shading |N . V| through the pixel centres (0.15 .. 0.85), black on a miss."""
    t, n = render_aovs(scene, s["width"], s["height"])
    origins = np.empty(t.shape + (3,))
    dirs = np.empty(t.shape + (3,))
    centre_rays(make_camera(scene.data["camera"]), origins, dirs)
    facing = np.abs((n * dirs).sum(axis=2))
    return np.where(np.isfinite(t)[..., None], 0.15 + 0.7 * facing[..., None], 0.0).astype(np.float32)


def highlight_matches(scene, pattern):
    """(object ids, material ids) whose names match ``pattern``; SceneError at
    ``--highlight`` for an empty pattern or one that matches nothing (checked against the
    loaded scene's names before anything is rendered)."""
    check_highlight(pattern)
    objs = matching_ids(scene.object_names, pattern)
    mats = matching_ids(scene.material_names, pattern)
    if not objs and not mats:
        raise SceneError("--highlight", f"no object or material is named {pattern!r} "
                         f"(objects: {', '.join(scene.object_names[:8])}{', ...' if len(scene.object_names) > 8 else ''};"
                         f" materials: {', '.join(scene.material_names)})")
    return objs, mats


def highlight_view(scene, s, pattern):
    objs, mats = highlight_matches(scene, pattern)       # before the id render
    obj_ids, mat_ids = _ids(scene, s)
    painted = np.isin(obj_ids, objs) | np.isin(mat_ids, mats)
    image = np.where(painted[..., None], LOUD, _facing_grey(scene, s))
    return View(image.astype(np.float32), f"highlight {pattern!r}: {int(painted.sum())} pixels "
                f"({len(objs)} objects, {len(mats)} materials match)", {"painted": painted})


def cost_view(scene, s):
    """Heat map of nodes + primitives visited per primary ray, legend strip below."""
    h, w = s["height"], s["width"]
    origins = np.empty((h, w, 3))
    dirs = np.empty((h, w, 3))
    centre_rays(make_camera(scene.data["camera"]), origins, dirs)
    nodes = np.empty(h * w, np.int64)
    prims = np.empty(h * w, np.int64)
    cost_batch(scene.accel, origins.reshape(-1, 3), dirs.reshape(-1, 3), nodes, prims)
    cost = (nodes + prims).reshape(h, w)
    top = max(int(np.percentile(cost, 99.5)), 1)
    image = np.concatenate([_heat(cost / top), _legend(w, top)], axis=0)
    report = (f"traversal cost per primary ray (nodes + primitives): mean {cost.mean():.1f}, "
              f"max {cost.max()} at pixel ({int(np.argmax(cost) % w)}, {int(np.argmax(cost) // w)}); "
              f"mean nodes {nodes.mean():.1f}, primitives {prims.mean():.1f}")
    return View(image, report, {"nodes": nodes.reshape(h, w), "primitives": prims.reshape(h, w), "scale": top})


def _heat(x):
    """Values in [0, 1] (clipped) -> the 'inferno'-like ramp black, purple, orange, yellow."""
    stops = np.array([[0, 0, 0.02], [0.35, 0.05, 0.45], [0.85, 0.25, 0.1], [1.0, 0.75, 0.1], [1, 1, 0.8]])
    x = np.clip(np.asarray(x, np.float64), 0.0, 1.0) * (len(stops) - 1)
    i = np.minimum(x.astype(np.int64), len(stops) - 2)
    f = (x - i)[..., None]
    return ((1 - f) * stops[i] + f * stops[i + 1]).astype(np.float32)


def _legend(width, top):
    """A strip: the colour ramp from 0 to ``top`` with tick labels (drawn by matplotlib)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    height = 36
    fig = Figure(figsize=(width / 100, height / 100), dpi=100)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes([0.04, 0.55, 0.92, 0.4])
    ax.imshow(_heat(np.linspace(0, 1, 256))[None], aspect="auto", extent=(0, top, 0, 1))
    ax.set_yticks([])
    ax.tick_params(labelsize=6, length=2, pad=1)
    fig.patch.set_facecolor("white")
    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba())[:height, :width, :3]
    return (rgba / 255.0).astype(np.float32)


def normals_view(scene, s):
    t, n = render_aovs(scene, s["width"], s["height"])
    image = np.where(np.isfinite(t)[..., None], (n + 1.0) * 0.5, 0.0).astype(np.float32)
    return View(image, "", {"normals": n})


def samples_view(scene, s, overrides):
    """Heat map of the samples each pixel took (the ``samples`` AOV), legend strip below."""
    if s["integrator"] != "path":
        raise SceneError("view", "the samples view needs the path tracer (integrator 'path')")
    img = render(scene, aovs=["samples"], **overrides)
    n = img.aovs["samples"]
    top = max(int(n.max()), 1)
    image = np.concatenate([_heat(n / top), _legend(s["width"], top)], axis=0)
    how = (f"adaptive, noise threshold {s['noise_threshold']:g}" if s["noise_threshold"] is not None
           else "uniform")
    report = (f"samples per pixel ({how}): mean {n.mean():.1f}, min {int(n.min())}, max {int(n.max())}; "
              f"stopped by {img.info.stopped_by}")
    return View(image, report, {"samples": n, "image": np.asarray(img)})


def nan_view(scene, s, overrides):
    if s["noise_threshold"] is not None:
        raise SceneError("view", "the nan view needs a uniform render (no noise_threshold): "
                         "with adaptive sampling pixels take different numbers of samples")
    img = render(scene, aovs=["samples", "object_id", "material_id"], **overrides)
    bad = img.info.spp - img.aovs["samples"]
    cut = img.capped if img.capped is not None else np.zeros(bad.shape, np.int64)
    shown = np.clip(np.asarray(img), 0.0, 1.0) ** (1 / 2.2)
    image = np.where((cut > 0)[..., None], CUT, shown)
    image = np.where((bad > 0)[..., None], LOUD, image).astype(np.float32)
    if not bad.any():
        report = f"no NaN or infinite samples ({img.info.spp} spp, {bad.size} pixels)"
    else:
        y, x = np.unravel_index(int(np.argmax(bad)), bad.shape)
        o, m = int(img.aovs["object_id"][y, x]), int(img.aovs["material_id"][y, x])
        report = (f"{int(bad.sum())} NaN or infinite samples in {int((bad > 0).sum())} pixels; most at pixel "
                  f"({x}, {y}): {int(bad[y, x])} samples, object {scene.object_names[o] if o >= 0 else '-'}, "
                  f"material {scene.material_names[m] if m >= 0 else '-'}")
    if cut.any():
        report += (f"; {int(cut.sum())} samples in {int((cut > 0).sum())} pixels cut at the media step cap "
                   "(MAX_NULL_COLLISIONS, cyan)")
    return View(image, report, {"nonfinite": bad, "capped": cut})


def transmittance_view(scene, s):
    """Transmittance exp(-tau) of the media along each pixel-centre camera ray (through
    ``null`` boundaries, up to the first other surface): ``kernels.media.optical_depth_rows``."""
    h, w = s["height"], s["width"]
    if scene.media is None:
        return View(np.ones((h, w, 3), np.float32), "no participating media: transmittance 1 everywhere",
                    {"optical_depth": np.zeros((h, w, 3))})
    from .kernels.media import render_optical_depth
    out = np.zeros((h, w, 4))
    render_optical_depth(out, scene.accel, scene.geometry, make_camera(scene.data["camera"]), scene.media,
                         float(s["epsilon"]))
    tau = out[..., :3]
    finite = np.isfinite(tau).all(axis=2)
    shown = tau[finite]
    report = (f"optical depth along camera rays (R, G, B): mean "
              f"{', '.join(f'{x:.3g}' for x in shown.mean(axis=0)) if shown.size else '-'}, max "
              f"{', '.join(f'{x:.3g}' for x in shown.max(axis=0)) if shown.size else '-'}"
              f"{f'; {int((~finite).sum())} pixels infinite (a ray lost in an unbounded medium)' if (~finite).any() else ''}"
              f"; {int((out[..., 3] > 0).sum())} pixels look through null boundaries")
    return View(np.exp(-tau).astype(np.float32), report, {"optical_depth": tau, "crossings": out[..., 3]})


def render_view(scene, mode, highlight=None, **overrides):
    """The debug picture ``mode`` (see the module docstring) of ``scene``."""
    if mode not in MODES:
        raise SceneError("view", f"must be one of {', '.join(MODES)}, got {mode!r}")
    if (mode == "highlight") != (highlight is not None):
        raise SceneError("--highlight", "give a name with the 'highlight' view (and only with it)")
    s = resolve_settings(scene, overrides)
    if mode in ("objects", "materials"):
        obj, mat = _ids(scene, s)
        ids = obj if mode == "objects" else mat
        names = scene.object_names if mode == "objects" else scene.material_names
        shown = sorted(set(np.unique(ids).tolist()) - {-1})
        return View(id_colours(ids), f"{len(shown)} {mode}: " + ", ".join(names[k] for k in shown[:12])
                    + (", ..." if len(shown) > 12 else ""), {"ids": ids})
    if mode == "highlight":
        return highlight_view(scene, s, highlight)
    if mode == "cost":
        return cost_view(scene, s)
    if mode == "normals":
        return normals_view(scene, s)
    if mode == "samples":
        return samples_view(scene, s, overrides)
    if mode == "transmittance":
        return transmittance_view(scene, s)
    return nan_view(scene, s, overrides)
