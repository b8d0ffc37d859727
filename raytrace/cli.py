"""Command line: ``raytrace render`` and ``raytrace convert``.

    raytrace render SCENE.json -o OUT.png [--size W H] [--spp N] [--seed S]
                    [--filter box|tent|gaussian] [--integrator whitted|path]
                    [--bounces N] [--shadows | --no-shadows] [--max-depth N] [--rr-depth N]
                    [--sampler sobol|independent]
                    [--depth FILE MIN MAX] [--normals FILE] [--encoding srgb|linear] [--quiet]
    raytrace convert SCENE.txt -o SCENE.json

Bad input prints one line ``raytrace: error: scene.json: objects[3].radius: must be > 0``
and exits with status 2; no output file is written unless the whole render succeeded.

Ctrl-C during a path-traced render stops after the current pass: the image of the passes
done is written (atomically, as always), a line on stderr says so, and the exit status
is 130 (the conventional status of an interrupted program; the image is complete but
has fewer samples than asked for). A second Ctrl-C, or Ctrl-C while loading or during a
Whitted render, stops at once and writes nothing (status 130).
"""
import argparse
import pathlib
import sys
import time

from .errors import SceneError
from .image import ENCODINGS, FORMATS


def _parser():
    p = argparse.ArgumentParser(prog="raytrace", description="Render JSON (or course .txt) scenes.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("render", help="render a scene to an image",
                       description="Render a scene. PNG output is sRGB-encoded unless "
                                   "--encoding linear; .pfm output is float, linear.",
                       epilog="Ctrl-C during a path-traced render stops after the current pass, "
                              "writes the image of the passes done and exits with status 130; "
                              "bad input exits with status 2.")
    r.add_argument("scene", help="scene file (.json, or a course .txt)")
    r.add_argument("-o", "--output", required=True, help="colour image (.png or .pfm)")
    r.add_argument("--size", nargs=2, type=int, metavar=("W", "H"), help="image size in pixels")
    r.add_argument("--spp", type=int, help="samples per pixel (jittered)")
    r.add_argument("--filter", choices=("box", "tent", "gaussian"), help="pixel reconstruction filter")
    r.add_argument("--integrator", choices=("whitted", "path"), help="override the scene's integrator")
    r.add_argument("--bounces", type=int, help="Whitted: maximum reflection/refraction depth")
    r.add_argument("--shadows", dest="shadows", action="store_true", default=None, help="cast shadow rays")
    r.add_argument("--no-shadows", dest="shadows", action="store_false", help="no shadow rays")
    r.add_argument("--max-depth", type=int, metavar="N",
                   help="path: longest path (1 = emitters only, 2 = direct light, -1 = unbounded)")
    r.add_argument("--rr-depth", type=int, metavar="N", help="path: depth at which Russian roulette starts")
    r.add_argument("--sampler", choices=("sobol", "independent"),
                   help="path: random numbers, Owen-scrambled Sobol points (default) or independent")
    r.add_argument("--seed", type=int, help="random seed (the image depends only on it)")
    r.add_argument("--depth", nargs=3, metavar=("FILE", "MIN", "MAX"),
                   help="also write the depth image (t - MIN) / (MAX - MIN)")
    r.add_argument("--normals", metavar="FILE", help="also write the normal image (N + 1) / 2")
    r.add_argument("--encoding", choices=ENCODINGS, default="srgb",
                   help="PNG encoding of the colour image: srgb (default) or linear (raw clamp)")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary")
    c = sub.add_parser("convert", help="convert a course .txt scene to JSON")
    c.add_argument("scene", help="course scene file (.txt)")
    c.add_argument("-o", "--output", required=True, help="JSON file to write")
    return p


def _check_output(path, flag):
    if pathlib.Path(path).suffix.lower() not in FORMATS:
        raise SceneError(None, f"{flag}: unsupported image format (use {' or '.join(FORMATS)})",
                         file=str(path))


def _render(args):
    import numpy as np

    from . import renderer as rmod
    from .image import depth_image, encode_image, atomic_write_bytes, normal_image
    from . import warmup
    from .scene.load import load_scene

    _check_output(args.output, "-o")
    depth_range = None
    if args.depth:
        _check_output(args.depth[0], "--depth")
        try:
            depth_range = float(args.depth[1]), float(args.depth[2])
        except ValueError:
            raise SceneError(None, "--depth MIN MAX must be numbers") from None
        if not depth_range[1] > depth_range[0]:
            raise SceneError(None, "--depth needs MAX > MIN")
    if args.normals:
        _check_output(args.normals, "--normals")
    t0 = time.perf_counter()
    compiling = warmup.start(warmup.integrator_of(args.scene, args.integrator))
    try:
        scene = load_scene(args.scene)
    finally:
        warmup.wait(compiling)
    overrides = {"spp": args.spp, "bounces": args.bounces, "shadows": args.shadows,
                 "seed": args.seed, "filter": args.filter, "integrator": args.integrator,
                 "max_depth": args.max_depth, "rr_depth": args.rr_depth, "sampler": args.sampler}
    if args.size:
        overrides["width"], overrides["height"] = args.size
    try:
        settings = rmod.resolve_settings(scene, overrides)
    except SceneError as exc:
        raise SceneError(f"--{exc.where.replace('_', '-')}", exc.message) from None
    show = not args.quiet and sys.stderr.isatty()
    try:
        image = rmod.render(scene, progress=show, **overrides)
    except rmod.RenderInterrupted as stop:
        if stop.image is None:
            raise KeyboardInterrupt from None
        atomic_write_bytes(args.output, encode_image(args.output, stop.image, args.encoding))
        print(f"raytrace: interrupted after {stop.spp_done} of {stop.spp_total} samples per pixel; "
              f"wrote {args.output} ({stop.spp_done} spp)", file=sys.stderr)
        return 130
    nonfinite = getattr(scene, "last_nonfinite", 0)
    if nonfinite:
        print(f"raytrace: warning: {nonfinite} samples were NaN or infinite and were dropped",
              file=sys.stderr)
    outputs = [(args.output, encode_image(args.output, image, args.encoding))]
    if args.depth or args.normals:
        t, n = rmod.render_aovs(scene, settings["width"], settings["height"])
        if args.depth:
            outputs.append((args.depth[0], encode_image(args.depth[0], depth_image(t, *depth_range), "linear")))
        if args.normals:
            outputs.append((args.normals, encode_image(args.normals, normal_image(n, np.isfinite(t)), "linear")))
    for path, data in outputs:
        atomic_write_bytes(path, data)
    if not args.quiet:
        print(f"wrote {', '.join(p for p, _ in outputs)} ({settings['width']}x{settings['height']}, "
              f"{settings['spp']} spp, {settings['integrator']}, {time.perf_counter() - t0:.2f} s)",
              file=sys.stderr)
    return 0


def _convert(args):
    from .scene.course import convert_file
    convert_file(args.scene, args.output)
    print(f"wrote {args.output}", file=sys.stderr)


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        if args.command == "render":
            return _render(args)
        _convert(args)
    except SceneError as exc:
        print(f"raytrace: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"raytrace: error: {exc.filename or ''}: {exc.strerror}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("raytrace: interrupted; nothing written", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
