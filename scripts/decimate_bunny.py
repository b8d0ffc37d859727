"""Make scenes/assets/bunny_5k.obj from the Stanford bunny in ../shared/assets/bunny.obj.

    python scripts/decimate_bunny.py [--source PATH] [--faces 5000]

Quadric decimation by fast-simplification (reference extra). The output keeps the
original's coordinates (about [-1, 1]) and carries the Stanford attribution.
"""
import argparse
import pathlib
import sys

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from raytrace.scene.meshio import read_obj  # noqa: E402

HEADER = """# Stanford Bunny, decimated to {faces} triangles by scripts/decimate_bunny.py
# Source: Stanford 3D Scanning Repository, Stanford Computer Graphics Laboratory
# (copy from Debian's glmark2-data package); quadric decimation by fast-simplification.
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", default=str(REPO.parent / "shared" / "assets" / "bunny.obj"))
    ap.add_argument("--faces", type=int, default=5000)
    ap.add_argument("--out", default=str(REPO / "scenes" / "assets" / "bunny_5k.obj"))
    args = ap.parse_args()
    import fast_simplification

    mesh = read_obj(args.source)
    ratio = 1.0 - args.faces / len(mesh.faces)
    v, f = fast_simplification.simplify(mesh.vertices.astype(np.float32), mesh.faces.astype(np.int32),
                                        target_reduction=ratio)
    lines = [HEADER.format(faces=len(f))]
    lines += [f"v {x:.6f} {y:.6f} {z:.6f}\n" for x, y, z in v]
    lines += [f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in f]
    pathlib.Path(args.out).write_text("".join(lines))
    print(f"wrote {args.out}: {len(v)} vertices, {len(f)} faces")


if __name__ == "__main__":
    main()
