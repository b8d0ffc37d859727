"""Make docs/img/shadow-maps.png: shadow rays against shadow maps with a good bias, no
bias (acne) and a large one (peter-panning), for docs/shadow-maps.md and the README.

    python scripts/shadow_map_images.py
"""
import copy
import pathlib
import sys

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import raytrace  # noqa: E402

SCENE = REPO / "scenes" / "shadow_map.json"
PANELS = [("shadow rays", None), ("shadow map 1024, bias 0.01", 0.01),
          ("no bias: acne", 0.0), ("bias 1.0: peter-panning", 1.0)]


def render(bias):
    data = raytrace.scene.load.read_json(SCENE)
    data = copy.deepcopy(data)
    for light in data["lights"]:
        if bias is None:
            light.pop("shadows", None)
            light.pop("shadow_map", None)
        else:
            light["shadow_map"] = dict(light.get("shadow_map", {}), bias=bias, pcf=0)
    return np.asarray(raytrace.render(raytrace.load_scene(data, base_dir=SCENE.parent), width=320, height=220))


def main():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(6.6, 4.9), dpi=100)
    FigureCanvasAgg(fig)
    for k, (title, bias) in enumerate(PANELS):
        ax = fig.add_subplot(2, 2, k + 1)
        img = raytrace.image.linear_to_srgb(render(bias))
        ax.imshow(img)
        ax.set_title(title, fontsize=9)
        ax.axis("off")
    fig.tight_layout(pad=0.4)
    out = REPO / "docs" / "img" / "shadow-maps.png"
    fig.savefig(out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
