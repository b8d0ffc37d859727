"""Draw docs/img/envmap-orientation.png: how a latitude-longitude map lies in the world,
rendered by us and by Mitsuba 3 from the same file.

    python scripts/make_envmap_figure.py [--out docs/img/envmap-orientation.png] [--size 96]

Writes a diagnostic lat-long map (a Radiance ``.hdr``, 256 x 128 texels) into a temporary
folder: eight coloured sectors of longitude, the world axis each quarter of the image
looks towards written on it (``-z`` at the left edge, ``+x``, ``+z`` in the middle,
``-x``), ``+y`` over the top rows and ``-y`` over the bottom ones, and a red square in
its top-left corner. It then renders the file from the world's origin with 90-degree
cameras looking along -z, +x, +z, -x and +y: with our Whitted integrator
(``raytrace.render``, the map as the background) and with Mitsuba 3's ``envmap`` (the
``path`` integrator at depth 1: only the emitter), and a third row with
``"transform": [{"rotate_y": 90}]`` against Mitsuba's ``to_world`` rotated the same way.
Since every tile comes out of a renderer's own lookup, a map read mirrored or turned
would show as such. The map itself is drawn above, with its u and v axes.
"""
import argparse
import pathlib
import sys
import tempfile

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import raytrace  # noqa: E402
from raytrace.envmap import hdr_bytes, read_hdr  # noqa: E402

W, H = 256, 128
# views: (label, look direction, up)
VIEWS = [("towards -z", (0, 0, -1), (0, 1, 0)), ("towards +x", (1, 0, 0), (0, 1, 0)),
         ("towards +z", (0, 0, 1), (0, 1, 0)), ("towards -x", (-1, 0, 0), (0, 1, 0)),
         ("up (+y), top = -z", (0, 1, 0), (0, 0, -1))]
SECTORS = [(0.93, 0.55, 0.55), (0.95, 0.78, 0.5), (0.92, 0.92, 0.55), (0.6, 0.88, 0.6),
           (0.55, 0.85, 0.9), (0.6, 0.65, 0.95), (0.8, 0.6, 0.92), (0.9, 0.6, 0.78)]


def diagnostic_map():
    """(H, W, 3) float linear: the labelled map (drawn with matplotlib, then linear)."""
    dpi = 100
    fig = plt.figure(figsize=(W / dpi, H / dpi), dpi=dpi)
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(0, 1)
    ax.set_ylim(1, 0)
    ax.axis("off")
    for k, c in enumerate(SECTORS):
        ax.add_patch(plt.Rectangle((k / 8, 0), 1 / 8, 1, color=c))
    ax.add_patch(plt.Rectangle((0, 0.82), 1, 0.18, color=(0.45, 0.4, 0.35)))      # the ground rows
    ax.add_patch(plt.Rectangle((0, 0), 1, 0.12, color=(0.75, 0.85, 1.0)))         # the sky's top rows
    ax.axhline(0.5, color="k", lw=1)
    for u, name in ((0.0, "-z"), (0.25, "+x"), (0.5, "+z"), (0.75, "-x"), (1.0, "-z")):
        ax.axvline(u, color="k", lw=1, ls=":")
        ax.text(min(max(u, 0.04), 0.96), 0.42, name, ha="center", va="center", fontsize=17, weight="bold")
    ax.text(0.5, 0.06, "+y", ha="center", va="center", fontsize=11, weight="bold")
    ax.text(0.5, 0.92, "-y", ha="center", va="center", fontsize=11, weight="bold", color="w")
    ax.add_patch(plt.Rectangle((0, 0), 0.03, 0.06, color=(0.85, 0.05, 0.05)))
    fig.canvas.draw()
    rgb = np.asarray(fig.canvas.buffer_rgba())[..., :3].astype(np.float64) / 255.0
    plt.close(fig)
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def ours(folder, view, size, transform):
    label, d, up = view
    bg = {"envmap": "diag.hdr"}
    if transform:
        bg["transform"] = [{"rotate_y": 90}]
    scene = raytrace.load_scene({"camera": {"center": [0, 0, 0], "direction": list(d), "up": list(up), "fov": 90},
                                 "image": {"width": size, "height": size, "spp": 4}, "background": bg},
                                base_dir=folder)
    return np.asarray(raytrace.render(scene), np.float64)


def mitsuba(folder, view, size, transform):
    import mitsuba as mi
    mi.set_variant("scalar_rgb")
    label, d, up = view
    to_world = mi.ScalarTransform4f().rotate([0, 1, 0], 90) if transform else mi.ScalarTransform4f()
    scene = mi.load_dict({
        "type": "scene", "integrator": {"type": "path", "max_depth": 1},
        "sensor": {"type": "perspective", "fov": 90, "fov_axis": "y",
                   "to_world": mi.ScalarTransform4f().look_at(origin=[0, 0, 0], target=list(d), up=list(up)),
                   "sampler": {"type": "stratified", "sample_count": 4},
                   "film": {"type": "hdrfilm", "width": size, "height": size, "rfilter": {"type": "box"}}},
        "sky": {"type": "envmap", "filename": str(folder / "diag.hdr"), "to_world": to_world}})
    return np.array(mi.render(scene), np.float64)[..., :3]


def main(argv=None):
    p = argparse.ArgumentParser(prog="python scripts/make_envmap_figure.py", description=__doc__.split("\n")[0])
    p.add_argument("--out", type=pathlib.Path, default=REPO / "docs" / "img" / "envmap-orientation.png")
    p.add_argument("--size", type=int, default=96, help="pixels per view (default 96)")
    args = p.parse_args(argv)
    srgb = lambda x: np.clip(np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.clip(x, 0, None) ** (1 / 2.4) - 0.055),  # noqa: E731
                             0, 1)
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp)
        (folder / "diag.hdr").write_bytes(hdr_bytes(diagnostic_map()))
        stored = read_hdr(folder / "diag.hdr", "map")
        rows = [("ours", ours, False), ("Mitsuba 3\nenvmap", mitsuba, False),
                ("ours,\nrotate_y 90", ours, True), ("Mitsuba,\nto_world\nrotate y 90", mitsuba, True)]
        fig = plt.figure(figsize=(10, 12))
        top = fig.add_axes([0.08, 0.72, 0.84, 0.25])
        top.imshow(srgb(stored), extent=(0, 1, 1, 0), aspect="auto", interpolation="nearest")
        top.set_xlabel("u = atan2(x, -z) / 2 pi  (column c centred at (c + 0.5) / W)")
        top.set_ylabel("v = acos(y) / pi\n(row r at r / (H - 1))")
        top.set_title(f"the map file ({W} x {H}, Radiance .hdr): image column 0 on the left, row 0 on top")
        grid = fig.add_gridspec(len(rows), len(VIEWS), left=0.08, right=0.98, bottom=0.02, top=0.66,
                                hspace=0.25, wspace=0.05)
        for r, (name, render, transform) in enumerate(rows):
            for c, view in enumerate(VIEWS):
                ax = fig.add_subplot(grid[r, c])
                ax.imshow(srgb(render(folder, view, args.size, transform)), interpolation="nearest")
                ax.set_xticks([])
                ax.set_yticks([])
                if r == 0:
                    ax.set_title(view[0], fontsize=10)
                if c == 0:
                    ax.set_ylabel(name, fontsize=9)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(args.out, dpi=80)
        plt.close(fig)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
