"""Command line: ``python -m curves plot|obj|info FILE ...``.

Errors and exit codes are ``userio.cli``'s: bad input (a file's content, an option) is
one line ``curves: error: FILE: line N: ...`` and status 2, an I/O failure status 1,
Ctrl-C status 130. Options are checked and the output path validated before any work;
the output is written through a temporary file, so a failed run changes no file.
"""
import pathlib

import numpy as np
from userio import cli as ucli
from userio.outputs import Outputs

from .errors import CurveFileError
from .limits import MAX_DPI, MAX_FRAMES, MAX_STEPS, MIN_DPI, check_steps, check_vertices

DESCRIPTION = """\
Curves and surfaces from the course's files (.spline, .swp) and patch JSON files.

  plot  draw a file to PNG: control polygon, curve, tangents and frames for curves;
        a shaded preview for patches and swept surfaces
  obj   export the surfaces of a file (patches, srev, gcyl) as a Wavefront OBJ mesh
  info  print what a file holds
"""


def build_parser():
    p = ucli.parser("python -m curves", DESCRIPTION)
    sub = ucli.subparsers(p, dest="command", required=True, metavar="COMMAND")

    pl = sub.add_parser("plot", help="draw a file to a PNG image",
                        description="Draw a .spline, .swp or patch .json file to a PNG image.")
    pl.add_argument("file", help=".spline, .swp or patch .json file")
    pl.add_argument("-o", "--output", required=True, help="PNG file to write (.png)")
    pl.add_argument("--samples", type=int, default=32,
                    help=f"intervals per curve segment, 1..{MAX_STEPS} (.swp files use "
                         "their STEPS)")
    pl.add_argument("--resolution", type=int, default=10,
                    help=f"intervals per patch side in previews, 1..{MAX_STEPS}")
    pl.add_argument("--frames", type=int, default=16,
                    help=f"number of frames drawn along each curve, 0..{MAX_FRAMES} "
                         "(0: none)")
    pl.add_argument("--method", choices=("rmf", "course"), default="rmf",
                    help="frame method: rotation-minimizing or the course recurrence")
    pl.add_argument("--up", choices=("y", "z"), default="y",
                    help="vertical axis of the data (the course teapot is z-up)")
    pl.add_argument("--dpi", type=int, default=120,
                    help=f"image resolution, {MIN_DPI}..{MAX_DPI} (the figure is 7 x 6 inches)")

    ob = sub.add_parser("obj", help="export surfaces as an OBJ mesh",
                        description="Export the surfaces of a file (patches, srev, gcyl) "
                                    "as one Wavefront OBJ mesh.")
    ob.add_argument("file", help=".spline patch file, .swp file or patch .json file")
    ob.add_argument("-o", "--output", required=True, help="OBJ file to write (.obj)")
    ob.add_argument("--resolution", type=int, default=16,
                    help=f"intervals per patch side, 1..{MAX_STEPS}")

    info = sub.add_parser("info", help="print what a file holds",
                          description="Print what a .spline, .swp or patch .json file holds.")
    info.add_argument("file", help=".spline, .swp or patch .json file")
    return p


def _load_meshes(path, resolution):
    from .errors import about, line_error
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
    n = len(patches) * (resolution + 1) ** 2
    check_vertices(n, f"{len(patches)} patches at --resolution {resolution}",
                   line_error(path, None))
    with about(path, None, "patches"):
        mesh = tessellate(patches, resolution, basis)
    if len(mesh.faces) == 0:
        raise CurveFileError(path, None, "the patches have no area (every patch collapses "
                             "to a point or a line)")
    return [(path.stem, mesh)]


def _merge(meshes):
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


def _plot(args, path):
    from .plot import render_file
    check_steps(args.samples, "--samples")
    check_steps(args.resolution, "--resolution")
    check_steps(args.frames, "--frames", lo=0, hi=MAX_FRAMES)
    check_steps(args.dpi, "--dpi", lo=MIN_DPI, hi=MAX_DPI)
    outs = Outputs()
    outs.add(args.output, "-o", (".png",))
    outs.set(args.output, render_file(path, args.samples, args.resolution, args.frames,
                                      args.method, args.up, args.dpi))
    outs.commit()
    print(f"wrote {args.output}")


def _obj(args, path):
    from .mesh import format_obj
    check_steps(args.resolution, "--resolution")
    outs = Outputs()
    outs.add(args.output, "-o", (".obj",))
    mesh = _merge(_load_meshes(path, args.resolution))
    if not (np.all(np.isfinite(mesh.vertices)) and np.all(np.isfinite(mesh.normals))):
        raise CurveFileError(path, None, "the surface is not finite (coordinates too large)")
    text = format_obj(mesh, comment=f"from {path.name} by python -m curves")
    outs.set(args.output, text.encode("utf-8"))
    outs.commit()
    print(f"wrote {args.output}: {len(mesh.vertices)} vertices, {len(mesh.faces)} triangles")


def _run(args):
    path = pathlib.Path(args.file)
    with np.errstate(all="ignore"):            # results are checked; no warnings on stderr
        if args.command == "plot":
            _plot(args, path)
        elif args.command == "obj":
            _obj(args, path)
        else:
            _info(path)


def main(argv=None):
    """Run the command line; returns the exit status (argparse exits itself on bad
    arguments, with status 2)."""
    args = build_parser().parse_args(argv)
    return ucli.run("curves", _run, args)
