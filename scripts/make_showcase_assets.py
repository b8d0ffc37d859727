"""Write the assets of ``scenes/path_media.json`` (the README's sky, spot and medium):

    python scripts/make_showcase_assets.py

- ``scenes/assets/media/dusk_sky_256x128.hdr``: a procedural lat-long sky at dusk
  (Radiance RGBE, linear radiance): deep blue at the zenith, orange at the horizon, the
  glow of a sun just set (no disc: a small bright sun mirrored by the glass ball would
  light the ground by paths only BSDF sampling finds, fireflies), a dusky brown ground below;
- ``scenes/assets/media/smoke_puff_32.vol``: the smoke puff of the Mitsuba cross-check
  (``tests/media_scenes.smoke_puff``) on a 32^3 grid, Mitsuba's ``.vol`` format.

Both are small (about 100 KB each) and deterministic: running this again writes the
same bytes.
"""
import pathlib
import sys

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

OUT = REPO / "scenes" / "assets" / "media"
SKY_SIZE = (128, 256)                      # rows, columns
SUN = (4.0, 200.0)                         # the glow's centre: elevation, azimuth (degrees, of the map's u)


def dusk_sky(h=SKY_SIZE[0], w=SKY_SIZE[1]):
    """(h, w, 3) float32 linear radiance of the dusk sky, Mitsuba's envmap layout (row
    r at elevation 90 - 180 r / (h - 1) degrees, column c at azimuth 360 c / w)."""
    rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    elevation = 90.0 - 180.0 * (rows + 0.5) / h
    azimuth = 360.0 * (cols + 0.5) / w
    t = np.clip(elevation / 90.0, 0.0, 1.0)[..., None] ** 0.45
    sky = (1 - t) * np.array([1.6, 0.75, 0.35]) + t * np.array([0.10, 0.18, 0.55])
    # the angle to the sun, for its disc and glow
    e, a = np.radians(elevation), np.radians(azimuth)
    se, sa = np.radians(SUN[0]), np.radians(SUN[1])
    cos_gamma = np.sin(e) * np.sin(se) + np.cos(e) * np.cos(se) * np.cos(a - sa)
    glow = np.exp(-(1.0 - cos_gamma) * 8.0)[..., None] * np.array([2.5, 1.2, 0.45])
    img = np.where((elevation >= 0)[..., None], sky + glow, np.array([0.32, 0.24, 0.17]))
    return np.ascontiguousarray(img, np.float32)


def main():
    from media_scenes import smoke_puff
    from raytrace.envmap import hdr_bytes
    from raytrace.scene.volgrid import write_vol
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "dusk_sky_256x128.hdr").write_bytes(hdr_bytes(dusk_sky()))
    write_vol(OUT / "smoke_puff_32.vol", smoke_puff(32))
    for name in ("dusk_sky_256x128.hdr", "smoke_puff_32.vol"):
        print(f"wrote {(OUT / name).relative_to(REPO)} ({(OUT / name).stat().st_size} bytes)")


if __name__ == "__main__":
    main()
