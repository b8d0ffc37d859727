"""Command line: ``python -m curves plot|obj|info FILE ...``."""
import argparse
import pathlib
import sys

from .errors import CurveFileError

DESCRIPTION = """\
Curves and surfaces from the course's files (.spline, .swp) and patch JSON files.

  plot  draw a file to PNG: control polygon, curve, tangents and frames for curves;
        a shaded preview for patches and swept surfaces
  obj   export the surfaces of a file (patches, srev, gcyl) as a Wavefront OBJ mesh
  info  print what a file holds
"""


def _parser():
    p = argparse.ArgumentParser(prog="python -m curves", description=DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    pl = sub.add_parser("plot", help="draw a file to a PNG image")
    pl.add_argument("file", help=".spline, .swp or patch .json file")
    pl.add_argument("-o", "--output", required=True, help="PNG file to write")
    pl.add_argument("--samples", type=int, default=32,
                    help="intervals per curve segment (default 32; .swp files use their STEPS)")
    pl.add_argument("--resolution", type=int, default=10,
                    help="intervals per patch side in previews (default 10)")
    pl.add_argument("--frames", type=int, default=16,
                    help="number of frames drawn along each curve (default 16, 0: none)")
    pl.add_argument("--method", choices=("rmf", "course"), default="rmf",
                    help="frame method: rotation-minimizing (default) or the course recurrence")
    pl.add_argument("--up", choices=("y", "z"), default="y",
                    help="vertical axis of the data (default y; the course teapot is z-up)")
    pl.add_argument("--dpi", type=int, default=120, help="image resolution (default 120)")

    ob = sub.add_parser("obj", help="export surfaces as an OBJ mesh")
    ob.add_argument("file", help=".spline patch file, .swp file or patch .json file")
    ob.add_argument("-o", "--output", required=True, help="OBJ file to write")
    ob.add_argument("--resolution", type=int, default=16,
                    help="intervals per patch side (default 16)")

    info = sub.add_parser("info", help="print what a file holds")
    info.add_argument("file")
    return p


def _load_meshes(path, resolution):
    from .io_patches import read_patches
    from .io_swp import read_swp
    from .patches import tessellate
    suffix = path.suffix.lower()
    if suffix == ".swp":
        meshes = read_swp(path).meshes()
        if not meshes:
            raise CurveFileError(path, None, "defines no surfaces (srev or gcyl)")
        return meshes
    patches, basis = read_patches(path)
    return [(path.stem, tessellate(patches, resolution, basis))]


def _merge(meshes):
    import numpy as np
    from .mesh import Mesh
    V, F, N, off = [], [], [], 0
    for _, m in meshes:
        V.append(m.vertices)
        N.append(m.normals)
        F.append(m.faces + off)
        off += len(m.vertices)
    return Mesh(np.concatenate(V), np.concatenate(F), np.concatenate(N))


def _info(path):
    from .io_patches import read_patches
    from .io_spline import read_spline
    from .io_swp import read_swp
    suffix = path.suffix.lower()
    if suffix == ".swp":
        swp = read_swp(path)
        for c in swp.curves:
            print(f"curve {c.kind} {c.name}: steps {c.steps}, {c.curve.segments} segment(s)")
        for s in swp.surfaces:
            extra = f" along {s.sweep.name}" if s.sweep else ""
            print(f"surface {s.kind} {s.name}: profile {s.profile.name}{extra}")
    elif suffix == ".json":
        patches, basis = read_patches(path)
        print(f"{len(patches)} {basis} patches")
    else:
        sf = read_spline(path)
        if sf.kind == "patch":
            print(f"{len(sf.patches)} {sf.basis} patches")
        else:
            c = sf.curve()
            print(f"{sf.basis} curve: {len(sf.points)} control points in {c.dim}D, "
                  f"{c.segments} segment(s)")


def main(argv=None):
    args = _parser().parse_args(argv)
    path = pathlib.Path(args.file)
    try:
        if args.command == "plot":
            from .plot import plot_file
            plot_file(path, args.output, args.samples, args.resolution, args.frames,
                      args.method, args.up, args.dpi)
            print(f"wrote {args.output}")
        elif args.command == "obj":
            from .mesh import write_obj
            meshes = _load_meshes(path, args.resolution)
            mesh = _merge(meshes)
            write_obj(args.output, mesh, comment=f"from {path.name} by python -m curves")
            print(f"wrote {args.output}: {len(mesh.vertices)} vertices, "
                  f"{len(mesh.faces)} triangles")
        else:
            _info(path)
    except (CurveFileError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e.filename or path}: {e.strerror or e}", file=sys.stderr)
        return 2
    return 0
