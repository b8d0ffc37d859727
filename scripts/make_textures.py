"""Write the procedural textures shipped in scenes/assets/textures/ (sRGB PNGs).

    python scripts/make_textures.py [--size 256]

``tiles.png``: 4 x 4 terracotta tiles with grout lines, a little colour variation per tile
and a fine grain, seamless when repeated (the texture wraps). Deterministic (fixed seed).
"""
import argparse
import pathlib
import sys

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from raytrace.image import save_image  # noqa: E402

OUT = REPO / "scenes" / "assets" / "textures"


def tiles(size, n=4, seed=1):
    """(size, size, 3) linear RGB: n x n tiles, grout 4% of a tile wide."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:size, 0:size] + 0.5
    tx, ty = x * n / size, y * n / size
    fx, fy = tx - np.floor(tx), ty - np.floor(ty)
    edge = np.minimum(np.minimum(fx, 1 - fx), np.minimum(fy, 1 - fy))
    grout = np.clip((0.04 - edge) / 0.015, 0, 1)[..., None]
    tile_id = (np.floor(ty).astype(int) % n) * n + (np.floor(tx).astype(int) % n)
    base = np.array([0.55, 0.22, 0.10])
    tint = base * rng.uniform(0.75, 1.2, (n * n, 1)) * rng.uniform(0.92, 1.08, (n * n, 3))
    color = tint[tile_id]
    # grain: a few periodic waves (so the texture stays seamless)
    grain = np.zeros((size, size))
    for _ in range(12):
        kx, ky = rng.integers(-24, 25, 2)
        grain += np.sin(2 * np.pi * (kx * x + ky * y) / size + rng.uniform(0, 2 * np.pi))
    color = color * (1 + 0.04 * grain / np.sqrt(12))[..., None]
    grout_color = np.array([0.45, 0.43, 0.40])
    return (color * (1 - grout) + grout_color * grout).astype(np.float32)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=256, help="texture size in pixels (default 256)")
    args = p.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    save_image(OUT / "tiles.png", tiles(args.size))
    print(f"wrote {OUT / 'tiles.png'}")


if __name__ == "__main__":
    main()
