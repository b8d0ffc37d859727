"""Write the procedural sky cube map shipped in scenes/assets/sky/ (six sRGB PNGs).

    python scripts/make_sky_cubemap.py [--size 128]

A clear-sky gradient with a sun glow above a checkered ground, computed per texel from its
direction (raytrace.cubemap.face_directions), so the faces meet without seams.
"""
import argparse
import pathlib
import sys

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from raytrace.cubemap import FACES, face_directions  # noqa: E402
from raytrace.image import save_image  # noqa: E402

SUN = np.array([0.5, 0.45, -0.75]) / np.linalg.norm([0.5, 0.45, -0.75])


def sky_radiance(d):
    """Linear radiance for unit directions d (..., 3), y up."""
    y = d[..., 1:2]
    zenith, horizon = np.array([0.10, 0.25, 0.65]), np.array([0.75, 0.82, 0.95])
    sky = horizon + (zenith - horizon) * np.sqrt(np.clip(y, 0, 1))
    glow = np.clip(d @ SUN, 0, 1)[..., None]
    sky = sky + np.array([1.0, 0.8, 0.5]) * (glow ** 64 * 0.8 + glow ** 1024 * 4)
    # ground: checker on the plane y = -1 seen from the origin
    t = -1.0 / np.minimum(y, -1e-6)
    gx, gz = d[..., 0:1] * t, d[..., 2:3] * t
    check = (np.floor(gx + 0.5) + np.floor(gz + 0.5)) % 2     # cell edges off the cube edges
    ground = np.where(check > 0, 0.35, 0.18) * np.array([0.9, 0.8, 0.65])
    fade = np.exp(-0.02 * t)                       # distant ground fades to the horizon
    ground = ground * fade + horizon * 0.6 * (1 - fade)
    return np.where(y >= 0, sky, ground)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--out", default=str(REPO / "scenes" / "assets" / "sky"))
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    for i, name in enumerate(FACES):
        save_image(out / f"{name}.png", sky_radiance(face_directions(i, args.size)))
    print(f"wrote {len(FACES)} faces to {out}")


if __name__ == "__main__":
    main()
