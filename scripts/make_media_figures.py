"""Draw docs/img/media-gallery.png: participating media rendered by the renderer itself.

    python scripts/make_media_figures.py [--out docs/img/media-gallery.png] [--size 192] [--spp 256]

The scenes are the Mitsuba cross-check's (``tests/media_scenes.py``: Mitsuba's Cornell
box at another size), rendered with the path tracer (the volumetric path tracer, since
they hold media), plus the Whitted integrator's Beer-Lambert picture of the liquid and
the transmittance view of the smoke (``raytrace.views``): fog filling the box, a cube of
haze with Henyey-Greenstein g = +0.7 and -0.7, a smoke puff on a grid,
the tall box of glass holding a coloured liquid under both integrators (Whitted: one
point light beside the camera, no shadow rays: glass blocks them in the course's model), a chromatic
medium, and the smoke's transmittance along the camera rays. Pictures are sRGB-encoded,
clipped at 1.
"""
import argparse
import pathlib
import sys

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import raytrace  # noqa: E402
from raytrace.image import linear_to_srgb  # noqa: E402
from raytrace.views import render_view  # noqa: E402


def _load(scene):
    from mitsuba_path_scenes import scene_dir
    return raytrace.load_scene(scene, base_dir=scene_dir(scene))


def panels(size, spp):
    """[(title, (H, W, 3) display image)] of the gallery."""
    import media_scenes as ms

    def path(scene):
        scene["image"].update(width=size, height=size)
        return np.asarray(raytrace.render(_load(scene), spp=spp, seed=1))

    out = [("fog filling the box", path(ms.fog_cornell())),
           ("haze cube, g = +0.7", path(ms.hg_cube(0.7))),
           ("haze cube, g = -0.7", path(ms.hg_cube(-0.7))),
           ("smoke on a 32^3 grid", path(ms.smoke_grid()))]
    liquid = ms.glass_liquid()
    out.append(("liquid in glass", path(liquid)))
    whitted = dict(liquid, integrator={"type": "whitted", "bounces": 6, "shadows": False},
                   lights=[{"type": "point", "position": [0.25, 0.3, 2.6], "color": [0.8, 0.8, 0.8]}])
    whitted["image"] = dict(liquid["image"], width=size, height=size)
    out.append(("the same, Whitted (Beer-Lambert)", np.asarray(raytrace.render(_load(whitted), spp=4))))
    out.append(("chromatic medium", path(ms.chromatic())))
    smoke = ms.smoke_grid()
    smoke["image"].update(width=size, height=size)
    view = render_view(_load(smoke), "transmittance", width=size, height=size)
    out.append(("smoke: transmittance view", view.image))
    return [(t, img if t.endswith("view") else linear_to_srgb(np.clip(img, 0.0, 1.0))) for t, img in out]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=pathlib.Path, default=REPO / "docs" / "img" / "media-gallery.png")
    ap.add_argument("--size", type=int, default=192)
    ap.add_argument("--spp", type=int, default=256)
    args = ap.parse_args(argv)
    tiles = panels(args.size, args.spp)
    fig, axes = plt.subplots(2, 4, figsize=(4 * 2.3, 2 * 2.5), dpi=100)
    for ax, (title, img) in zip(axes.ravel(), tiles):
        ax.imshow(np.clip(img, 0.0, 1.0), interpolation="nearest")
        ax.set_title(title, fontsize=8)
        ax.axis("off")
    fig.tight_layout(pad=0.4)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
