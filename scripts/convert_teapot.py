"""Convert POV-Ray's teapot.inc (32 bicubic Bézier patches) to the project's patch JSON.

    python scripts/convert_teapot.py [TEAPOT_INC] [-o scenes/assets/teapot_patches.json]

TEAPOT_INC defaults to ../shared/assets/teapot.inc next to the repository.
What the conversion does (all exact, no rounding beyond reading the numbers):

- z-up -> y-up: every point (x, y, z) becomes (x, z, -y), a rotation by -90 degrees
  about x, so the teapot stands on y = 0 with its spout towards +x.
- Orientation: in the source every patch has S_u x S_v pointing into the teapot. Each
  4x4 grid is transposed (G[i, j] -> G[j, i]) so that S_u x S_v points outwards and
  meshes wind counter-clockwise seen from outside.
- One typo is corrected: the 12th patch (a lower body quarter, around line 119) has
  <2.0, 1.2, 0.45> where the other three quarters, Newell's data and the course's
  teapot.spline have 1.12. It is an interior control point (no seam depends on it).

The source is a POV-Ray sample file adapted by Alexander Enzmann, licensed CC BY 3.0;
the output keeps that attribution in its "attribution" and "license" fields.
"""
import argparse
import pathlib
import re
import sys

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from curves.io_patches import write_patch_json  # noqa: E402

DEFAULT_SOURCE = REPO.parent / "shared" / "assets" / "teapot.inc"
DEFAULT_OUTPUT = REPO / "scenes" / "assets" / "teapot_patches.json"
ATTRIBUTION = ("Utah teapot control points from the Persistence Of Vision raytracer "
               "sample file teapot.inc, adapted by Alexander Enzmann (POV-Ray). "
               "Converted by scripts/convert_teapot.py: rotated from z-up to y-up "
               "((x, y, z) -> (x, z, -y)), each patch grid transposed so normals "
               "point outwards, and one interior control point of patch 12 corrected "
               "from 1.2 to 1.12 (symmetry, as in Newell's data).")
LICENSE = ("Creative Commons Attribution 3.0 Unported (CC BY 3.0), "
           "https://creativecommons.org/licenses/by/3.0/")

_PATCH = re.compile(r"bicubic_patch\s*\{(.*?)\}", re.S)
_POINT = re.compile(r"<([^<>]*)>")


def parse_pov_patches(text, path="teapot.inc"):
    """All ``bicubic_patch`` blocks of POV-Ray text as (P, 4, 4, 3) float64 (z-up).

    Raises ValueError naming the file, line and patch when a block does not hold
    exactly 16 points of 3 numbers.
    """
    out = []
    for k, m in enumerate(_PATCH.finditer(text)):
        line = text.count("\n", 0, m.start()) + 1
        pts = []
        for p in _POINT.finditer(m.group(1)):
            fields = [f.strip() for f in p.group(1).split(",")]
            try:
                values = [float(f) for f in fields]
            except ValueError:
                pline = text.count("\n", 0, m.start(1) + p.start()) + 1
                raise ValueError(f"{path}: line {pline}: patch {k}: <{p.group(1)}> is not "
                                 "three numbers") from None
            if len(values) != 3:
                pline = text.count("\n", 0, m.start(1) + p.start()) + 1
                raise ValueError(f"{path}: line {pline}: patch {k}: expected 3 numbers, "
                                 f"got {len(values)}")
            pts.append(values)
        if len(pts) != 16:
            raise ValueError(f"{path}: line {line}: patch {k} has {len(pts)} points, "
                             "expected 16")
        out.append(pts)
    if not out:
        raise ValueError(f"{path}: no bicubic_patch blocks found")
    return np.array(out, dtype=np.float64).reshape(-1, 4, 4, 3)


# (patch, row, column, coordinate): wrong value -> right value, in teapot.inc's frame
TYPOS = {(11, 1, 2, 1): (1.2, 1.12)}


def fix_typos(patches):
    """Correct the known typo(s) listed in TYPOS (only where the wrong value is found)."""
    G = np.array(patches, dtype=np.float64)
    for (p, i, j, c), (wrong, right) in TYPOS.items():
        if p < len(G) and G[p, i, j, c] == wrong:
            G[p, i, j, c] = right
    return G


def to_y_up_outward(patches):
    """(P, 4, 4, 3) z-up, inward -> y-up, outward (see the module docstring)."""
    G = np.asarray(patches, dtype=np.float64)
    y_up = np.stack([G[..., 0], G[..., 2], 0.0 - G[..., 1]], axis=-1)
    return np.ascontiguousarray(np.swapaxes(y_up, 1, 2))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", nargs="?", default=str(DEFAULT_SOURCE),
                    help="POV-Ray teapot.inc (default: ../shared/assets/teapot.inc)")
    ap.add_argument("-o", "--output", default=str(DEFAULT_OUTPUT),
                    help="JSON file to write (default: scenes/assets/teapot_patches.json)")
    args = ap.parse_args(argv)
    try:
        text = pathlib.Path(args.source).read_text(encoding="utf-8")
        patches = to_y_up_outward(fix_typos(parse_pov_patches(text, args.source)))
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    write_patch_json(args.output, patches, "bezier", attribution=ATTRIBUTION,
                     license=LICENSE, source="POV-Ray teapot.inc (Alexander Enzmann)",
                     up="y", units="teapot.inc units: body radius 2, height 3.15")
    print(f"wrote {args.output}: {len(patches)} patches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
