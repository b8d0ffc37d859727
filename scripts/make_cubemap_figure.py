"""Draw docs/img/cubemap-faces.png: how the six images of a cube map lie in the world.

    python scripts/make_cubemap_figure.py [--out docs/img/cubemap-faces.png] [--size 128]

Writes a diagnostic cube map into a temporary folder (each face: its name, an arrow
along the image's +u axis, left to right, and one along +v, top to bottom, and a red
square in its top-left corner), then renders it with the real renderer
(``raytrace.render``, Whitted) from the cube's centre: one 90-degree view per face (1
sample per pixel, so pixel centres fall on texel centres), looking at the face's centre
with the camera's up towards the top of the face's image, and two wider views towards
corners of the cube, where three faces meet. The six face views are laid out as an
unfolded cube seen from inside, titled with the world axes that the image's +u and +v
point to (from ``raytrace.cubemap.face_xy_direction``). Because the tiles come out of
the lookup code, a face stored the wrong way round, or mirrored, would show as such in
the picture.
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
from raytrace.cubemap import FACES, face_xy_direction  # noqa: E402
from raytrace.image import save_image  # noqa: E402

# pastel base colour of each face, so that neighbours differ
TINT = {"left": (0.95, 0.80, 0.80), "right": (0.80, 0.92, 0.80), "up": (0.80, 0.87, 0.97),
        "down": (0.95, 0.92, 0.75), "front": (0.90, 0.82, 0.95), "back": (0.82, 0.94, 0.94)}
# where each face's render goes in the unfolded cube (row, column): the cross seen from
# inside, centred on `back` (the face a camera looking down -z sees)
CROSS = {"up": (0, 1), "left": (1, 0), "back": (1, 1), "right": (1, 2), "front": (1, 3), "down": (2, 1)}
# two wider views towards corners of the cube, where three faces meet
CORNERS = [(1, 1, -1), (-1, -1, 1)]


def axis_name(v):
    """(0, 0, -1) -> '-z' (v must point along one axis)."""
    v = np.asarray(v, float)
    k = int(np.argmax(np.abs(v)))
    assert np.allclose(np.delete(v, k), 0.0), v
    return ("+" if v[k] > 0 else "-") + "xyz"[k]


def face_axes(face):
    """-> (normal, image right (+u), image down (+v)) of face index ``face`` as world
    vectors, from the lookup's own inverse (x right, y up in [0, 1] on the face)."""
    d = lambda x, y: np.array(face_xy_direction(face, x, y))  # noqa: E731
    return d(0.5, 0.5), d(1.0, 0.5) - d(0.0, 0.5), d(0.5, 0.0) - d(0.5, 1.0)


def draw_face(path, name, size):
    """One diagnostic face image: its name, +u and +v arrows, a red top-left square."""
    dpi = 100
    fig = plt.figure(figsize=(size / dpi, size / dpi), dpi=dpi)
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(0, 1)
    ax.set_ylim(1, 0)                     # image convention: y grows downwards
    ax.axis("off")
    fig.patch.set_facecolor(TINT[name])
    ax.add_patch(plt.Rectangle((0, 0), 0.14, 0.14, color=(0.85, 0.1, 0.1)))
    arrow = dict(arrowstyle="-|>", lw=2.0, color="k", mutation_scale=14)
    ax.annotate("", xy=(0.92, 0.08), xytext=(0.2, 0.08), arrowprops=arrow)
    ax.annotate("", xy=(0.07, 0.92), xytext=(0.07, 0.2), arrowprops=arrow)
    ax.text(0.58, 0.17, "u", ha="center", va="top", fontsize=size / 11)
    ax.text(0.16, 0.6, "v", ha="left", va="center", fontsize=size / 11)
    ax.text(0.58, 0.56, name, ha="center", va="center", fontsize=size / 7, weight="bold")
    ax.add_patch(plt.Rectangle((0, 0), 1, 1, fill=False, lw=2, ec=(0.3, 0.3, 0.3)))
    fig.savefig(path, dpi=dpi, facecolor=fig.get_facecolor())
    plt.close(fig)


def render_view(folder, direction, up, fov, size, spp=1):
    """-> (size, size, 3) image (sRGB, floats in [0, 1]) of the cube map in ``folder``
    seen from the centre, rendered by ``raytrace.render`` and written as a PNG."""
    scene = raytrace.load_scene({
        "camera": {"center": [0, 0, 0], "direction": list(direction), "up": list(up), "fov": fov},
        "background": {"cube_map": str(folder)},
        "image": {"width": size, "height": size},
        "integrator": {"type": "whitted"},
    })
    png = folder / "render.png"
    save_image(png, raytrace.render(scene, spp=spp))
    return plt.imread(png)[..., :3]               # the sRGB PNG the renderer wrote


def render_face_views(folder, size):
    """-> {face name: render looking at the face's centre, up = the top of its image}."""
    out = {}
    for f, name in enumerate(FACES):
        normal, right, down = face_axes(f)
        out[name] = render_view(folder, normal.tolist(), (-down).tolist(), 90, size)
    return out


def make_figure(out, size=128):
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp)
        for name in FACES:
            draw_face(folder / f"{name}.png", name, size)
        views = render_face_views(folder, size)
        corners = [(d, render_view(folder, d, (0, 1, 0), 110, size, spp=4)) for d in CORNERS]
    fig, axes = plt.subplots(3, 4, figsize=(8.8, 6.9), dpi=90)
    for ax in axes.ravel():
        ax.axis("off")
    for f, name in enumerate(FACES):
        normal, right, down = face_axes(f)
        ax = axes[CROSS[name]]
        ax.imshow(views[name], interpolation="nearest")
        ax.set_title(f"{name}: faces {axis_name(normal)}\nimage right = {axis_name(right)}, "
                     f"down = {axis_name(down)}", fontsize=9)
    for (d, view), cell in zip(corners, [(2, 2), (2, 3)]):
        axes[cell].imshow(view, interpolation="nearest")
        axes[cell].set_title(f"towards ({d[0]:+d}, {d[1]:+d}, {d[2]:+d}), up +y,\n"
                             "fov 110: three faces meet", fontsize=9)
    axes[0, 3].text(0.0, 0.5, "Renders of a diagnostic cube map\nfrom the cube's centre\n"
                    "(raytrace.render, fov 90,\ncamera up = top of the image);\n"
                    "unfolded as seen from inside.\nRed square: the image's\ntop-left pixel.",
                    fontsize=9, va="center", transform=axes[0, 3].transAxes)
    fig.tight_layout()
    out = pathlib.Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(REPO / "docs" / "img" / "cubemap-faces.png"))
    ap.add_argument("--size", type=int, default=128, help="face and render size in pixels")
    args = ap.parse_args(argv)
    print(make_figure(args.out, args.size))


if __name__ == "__main__":
    main()
