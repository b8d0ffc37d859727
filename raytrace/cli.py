"""Command line: ``raytrace render``, ``convert``, ``merge``, ``animate`` and ``view``.

    raytrace render SCENE.json -o OUT.png [--size W H] [--spp N] [--seed S]
                    [--filter box|tent|gaussian] [--integrator whitted|path]
                    [--bounces N] [--shadows | --no-shadows] [--max-depth N] [--rr-depth N]
                    [--sampler sobol|independent]
                    [--depth FILE MIN MAX] [--normals FILE] [--encoding srgb|linear] [--quiet]
                    [--aov albedo,normal,...] [--aov-files] [--exr-half]
                    [--denoise [auto|oidn|atrous]] [--write-partial SECONDS]
    raytrace merge A.exr B.exr ... -o OUT.exr [--exr-half] [--denoise [METHOD]]
    raytrace convert SCENE.txt -o SCENE.json
    raytrace compare | regress | convergence ...   (grading: raytrace.grade.cli, docs/grading.md)
    raytrace animate SCENE.json -o OUT_DIR [...]   (raytrace.animation.cli)
    raytrace view SCENE.json [--port N] [...]      (live preview: raytrace.view.cli)

Bad input prints one line ``raytrace: error: scene.json: objects[3].radius: must be > 0``
and exits with status 2; an I/O failure exits with 1. Every output path is checked before
rendering, and no output file is written (or replaced) unless the whole render succeeded.

Ctrl-C during a path-traced render stops after the current pass: the image of the passes
done is written (atomically, as always), a line on stderr says so, and the exit status
is 130 (the conventional status of an interrupted program; the image is complete but
has fewer samples than asked for). A second Ctrl-C, or Ctrl-C while loading or during a
Whitted render, stops at once and writes nothing (status 130). A uniform path-traced
render checks for Ctrl-C between chunks of rows that each take well under a second (an
adaptive one between its passes).

A path-traced render of grid media whose paths reached the media step cap
(``raytrace.layout.MAX_NULL_COLLISIONS``: such a path ends with radiance 0) prints one
line ``raytrace: N pixels had paths cut at the media step cap (MAX_NULL_COLLISIONS)``.

AOV files, EXR layers, denoising, partial images and merging: docs/outputs.md
(raytrace.film).
"""
import sys
import time

from userio import cli as ucli

from .errors import SceneError       # light (userio.errors); the package has imported it already

PROG = "raytrace"
# Nothing else at the top: what a command needs (NumPy first of all) is imported inside
# main's userio.cli.run, so that Ctrl-C at any moment of the start exits 130 with one line.


# what the Whitted integrator leaves out of participating media (docs/media.md), said
# after each Whitted render of a scene with media
WHITTED_MEDIA_NOTE = ("the Whitted integrator only dims its rays through media (Beer-Lambert): it ignores "
                      "in-scattering, the phase function and media on shadow rays (docs/media.md); "
                      "the path integrator renders them")

def _parser():
    # imported here, inside main's Ctrl-C handling; none of these imports Numba
    from .animation import cli as animate_cli
    from .grade import cli as grade_cli
    from .image import ENCODINGS
    from .view import cli as view_cli
    p = ucli.parser(PROG, "Render JSON (or course .txt) scenes; convert course scenes to JSON.")
    p.add_argument("--numba-errors", action="store_true",
                   help="when an (edited) kernel does not compile, print Numba's full message after "
                        "the short one (also: RAYTRACE_NUMBA_ERRORS=full)")
    sub = ucli.subparsers(p, dest="command", required=True, metavar="COMMAND")
    r = sub.add_parser("render", help="render a scene to an image",
                       description="Render a scene. PNG output is sRGB-encoded unless "
                                   "--encoding linear; .pfm output is float, linear. Options "
                                   "not given take the scene's values.",
                       epilog="Ctrl-C during a path-traced render stops after the current pass, "
                              "writes the image of the passes done and exits with status 130.")
    r.add_argument("scene", help="scene file (.json, a course .txt, or a glTF .gltf/.glb)")
    r.add_argument("-o", "--output", required=True, help="colour image (.png, .pfm or .exr)")
    r.add_argument("--size", nargs=2, type=int, metavar=("W", "H"),
                   help="image size in pixels (scene's image.width/height, else 400 400)")
    r.add_argument("--spp", type=int, help="samples per pixel, jittered (scene's, else 1)")
    r.add_argument("--filter", choices=("box", "tent", "gaussian"),
                   help="pixel reconstruction filter (scene's, else box)")
    r.add_argument("--integrator", choices=("whitted", "path"),
                   help="override the scene's integrator (default whitted)")
    r.add_argument("--bounces", type=int, help="Whitted: maximum reflection/refraction depth (else 4)")
    r.add_argument("--shadows", dest="shadows", action="store_true", default=None,
                   help="cast shadow rays (the default)")
    r.add_argument("--no-shadows", dest="shadows", action="store_false", default=None, help="no shadow rays")
    r.add_argument("--max-depth", type=int, metavar="N",
                   help="path: longest path (1 = emitters only, 2 = direct light, -1 = unbounded, "
                        "the default)")
    r.add_argument("--rr-depth", type=int, metavar="N",
                   help="path: depth at which Russian roulette starts (else 5)")
    r.add_argument("--sampler", choices=("sobol", "independent"),
                   help="path: Owen-scrambled Sobol points (the default) or independent numbers")
    r.add_argument("--seed", type=int, help="random seed, 0 .. 2^63-1; the image depends only on it "
                                            "(scene's, else 0)")
    r.add_argument("--depth", nargs=3, metavar=("FILE", "MIN", "MAX"),
                   help="also write the depth image (t - MIN) / (MAX - MIN)")
    r.add_argument("--normals", metavar="FILE", help="also write the normal image (N + 1) / 2")
    r.add_argument("--variance", metavar="FILE",
                   help="path: also write each pixel's variance of the mean (.pfm or .exr), from "
                        "the spread of the passes (for raytrace compare --ztest)")
    r.add_argument("--encoding", choices=ENCODINGS, default="srgb",
                   help="PNG encoding of the colour image: srgb or linear (raw clamp)")
    r.add_argument("--noise-threshold", type=float, metavar="T",
                   help="path: adaptive sampling; after --min-spp passes, only pixels whose relative "
                        "standard error is at least T take more samples, up to --max-spp "
                        "(docs/adaptive-sampling.md; e.g. 0.05)")
    r.add_argument("--min-spp", type=int, metavar="N",
                   help="path, adaptive: samples every pixel takes first (else 16, at most --max-spp)")
    r.add_argument("--max-spp", type=int, metavar="N",
                   help="path: the most samples a pixel takes with --noise-threshold (else the spp) "
                        "or --time (else 65536)")
    r.add_argument("--time", type=float, metavar="SECONDS",
                   help="path: render passes until SECONDS of rendering are spent (compiling not "
                        "counted); the spp reached is printed and stored in the image's header")
    r.add_argument("--view", choices=("objects", "materials", "highlight", "cost", "normals", "nan",
                                      "samples", "transmittance"),
                   help="write a debug view instead of the colour image: false colour per object or "
                        "material, one object/material highlighted (--highlight), BVH traversal cost "
                        "per ray, shading normals, NaN/inf samples in magenta, samples per pixel, "
                        "participating media's transmittance along camera rays (docs/debug-views.md)")
    r.add_argument("--highlight", metavar="NAME",
                   help="paint the object(s) or material(s) named NAME magenta, the rest grey "
                        "(an object's name, a JSON path like objects[2], or a material name)")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary")
    _film_options(r)
    _merge_parser(sub)
    animate_cli.add_parser(sub)
    view_cli.add_parser(sub)
    c = sub.add_parser("convert", help="convert a course .txt scene to JSON",
                       description="Convert an MIT 6.837 ray-tracing scene (.txt) to a JSON scene.")
    c.add_argument("scene", help="course scene file (.txt)")
    c.add_argument("-o", "--output", required=True, help="JSON file to write")
    grade_cli.add_commands(sub)
    return p


# ------------------------------------------------- AOVs, EXR, denoising, partial images, merge
def _film_options(r):
    from .film.denoise import DENOISERS
    from .layout import AOVS
    r.add_argument("--aov", metavar="LIST",
                   help=f"also write these AOVs, comma-separated ({', '.join(AOVS)}): layers of the "
                        "-o file when it is .exr, else files NAME.<aov>.exr (.pfm next to a .pfm)")
    r.add_argument("--aov-files", action="store_true",
                   help="one file per AOV even when -o is .exr")
    r.add_argument("--exr-half", action="store_true",
                   help="16-bit float EXR channels (ids and sample counts stay exact integers)")
    r.add_argument("--denoise", nargs="?", const="auto", choices=DENOISERS, metavar="METHOD",
                   help="path: denoise the colour with its albedo and normal: oidn (Intel Open Image "
                        "Denoise, needs pyoidn), atrous (built in) or auto (oidn if installed)")
    r.add_argument("--write-partial", type=float, metavar="SECONDS",
                   help="path: replace the -o file with the image so far every SECONDS seconds "
                        "(atomically; colour only, not denoised)")


def _merge_parser(sub):
    from .film.denoise import DENOISERS
    from .image import ENCODINGS
    m = sub.add_parser("merge", help="combine renders of one scene made with different seeds",
                       description="Merge EXR renders of the same scene and settings made with different "
                                   "seeds (raytrace render -o A.exr --seed 1, ...): the mean weighted by "
                                   "their samples per pixel, as one render with all the samples.")
    m.add_argument("inputs", nargs="+", metavar="RENDER", help="EXR files written by raytrace render")
    m.add_argument("-o", "--output", required=True,
                   help="merged image: .exr keeps the layers and the header (merge it again), "
                        ".png / .pfm only the colour")
    m.add_argument("--exr-half", action="store_true", help="16-bit float EXR channels")
    m.add_argument("--encoding", choices=ENCODINGS, default="srgb", help="PNG encoding")
    m.add_argument("--denoise", nargs="?", const="auto", choices=DENOISERS, metavar="METHOD",
                   help="denoise the merged colour (the inputs need albedo and normal layers; atrous "
                        "also depth and variance, which denoised renders carry)")


def _check_film_options(args, outputs):
    """Check --aov, --exr-half, --write-partial, --denoise before rendering and declare the AOV
    files -> (AOV names, {aov: file} plan, denoiser or None)."""
    from .film import aov_files
    from .film.denoise import resolve
    names = aov_files.parse_aov_list(args.aov) if args.aov is not None else ()
    if args.aov_files and not names:
        raise SceneError("--aov-files", "needs --aov")
    plan = aov_files.plan_outputs(outputs, args.output, names, args.aov_files)
    exr = any(str(p).lower().endswith(".exr") for p in [args.output, *plan.values()])
    if args.exr_half and not exr:
        raise SceneError("--exr-half", "no EXR file is written")
    if args.write_partial is not None and not 0 <= args.write_partial < float("inf"):
        raise SceneError("--write-partial", f"must be a number of seconds >= 0, got {args.write_partial}")
    return names, plan, resolve(args.denoise, "--denoise") if args.denoise else None


def _film_render(rmod, scene, settings, args, names, denoiser, show, overrides):
    """Render with the AOVs, the partial-image writer and the denoiser -> (image, extra EXR
    layers, metadata, partial writer or None)."""
    from .film import aov_files
    from .film.denoise import GUIDES, denoise
    from .film.partial import PartialWriter
    if (denoiser or args.write_partial is not None) and settings["integrator"] != "path":
        raise SceneError("--denoise" if denoiser else "--write-partial",
                         "needs the path tracer (integrator 'path')")
    writer = None
    if args.write_partial is not None:
        writer = PartialWriter(args.output, lambda img: aov_files.encode_color(
            args.output, img, aov_files.render_metadata(img, scene, settings), args.exr_half, args.encoding), PROG)
    from .settings import option_errors
    aovs = tuple(dict.fromkeys(names + (GUIDES if denoiser else ())))
    try:
        with option_errors():
            image = rmod.render(scene, progress=show, variance=bool(args.variance or denoiser), aovs=aovs,
                                partial=writer, partial_seconds=args.write_partial or 0.0, **overrides)
    except KeyboardInterrupt as stop:
        stop.partial = writer
        raise
    extra = {}
    if denoiser:
        noisy, image = image, denoise(image, denoiser)
        image.aovs = {n: noisy.aovs[n] for n in names}
        extra = {"noisy": noisy, "variance": noisy.variance}
    return image, extra, aov_files.render_metadata(image, scene, settings, denoiser), writer


def _merge(args):
    from userio.outputs import Outputs

    from .film import aov_files
    from .image import FORMATS
    from .film.denoise import denoise_arrays, resolve
    from .film.merge import merge_renders
    outputs = Outputs(SceneError)
    outputs.add(args.output, "-o", FORMATS, "image")
    denoiser = resolve(args.denoise, "--denoise") if args.denoise else None
    if args.exr_half and not args.output.lower().endswith(".exr"):
        raise SceneError("--exr-half", "no EXR file is written")
    layers, meta = merge_renders(args.inputs)
    color = layers.pop("color")
    extra = {}
    if denoiser:
        missing = [n for n in ("albedo", "normal") + (("depth", "variance") if denoiser == "atrous" else ())
                   if n not in layers]
        if missing:
            raise SceneError("--denoise", f"the renders have no {', '.join(missing)} layers "
                                          "(render them with --aov albedo,normal,depth --denoise)")
        extra = {"noisy": color}
        color = denoise_arrays(color, layers["albedo"], layers["normal"], layers.get("depth"),
                               layers.get("variance"), denoiser)
        meta["denoiser"] = denoiser
    if "variance" in layers:
        extra["variance"] = layers.pop("variance")
    outputs.set(args.output, aov_files.encode_color(args.output, color, meta, args.exr_half, args.encoding,
                                                    layers, extra))
    outputs.commit()
    print(f"wrote {args.output} ({meta['spp']} spp from {len(args.inputs)} renders"
          f"{', denoised with ' + denoiser if denoiser else ''})", file=sys.stderr)


def _depth_range(args):
    try:
        lo, hi = float(args.depth[1]), float(args.depth[2])
    except ValueError:
        raise SceneError("--depth", "MIN and MAX must be numbers") from None
    if not (hi > lo and hi - lo < float("inf")):
        raise SceneError("--depth", "needs finite MIN < MAX")
    return lo, hi


def _render(args):
    from userio.outputs import Outputs

    from .image import FLOAT_FORMATS, FORMATS
    from .settings import check_highlight, check_overrides, option_errors

    overrides = {"spp": args.spp, "bounces": args.bounces, "shadows": args.shadows,
                 "seed": args.seed, "filter": args.filter, "integrator": args.integrator,
                 "max_depth": args.max_depth, "rr_depth": args.rr_depth, "sampler": args.sampler,
                 "noise_threshold": args.noise_threshold, "min_spp": args.min_spp, "max_spp": args.max_spp,
                 "time_budget": args.time}
    if args.size:
        overrides["width"], overrides["height"] = args.size
    with option_errors():
        check_overrides(overrides)
    outputs = Outputs(SceneError)
    outputs.add(args.output, "-o", FORMATS, "image")
    depth_range = None
    if args.depth:
        outputs.add(args.depth[0], "--depth", FORMATS, "image")
        depth_range = _depth_range(args)
    if args.normals:
        outputs.add(args.normals, "--normals", FORMATS, "image")
    if args.variance:
        outputs.add(args.variance, "--variance", FLOAT_FORMATS, "float image")
    aov_names, aov_plan, denoiser = _check_film_options(args, outputs)
    if args.highlight is not None:
        check_highlight(args.highlight)    # an empty name needs no scene (a name it lacks: after loading)
    # the options are fine: now the renderer and its kernels (Numba)
    from . import renderer as rmod
    from .jit import warmup
    from .image import depth_image, encode_image, normal_image
    from .loading import load_scene
    t0 = time.perf_counter()
    kind = warmup.integrator_of(args.scene, args.integrator)
    for option, value in (("--noise-threshold", args.noise_threshold), ("--time", args.time)):
        if value is not None and kind != "path" and (args.integrator or warmup.readable_json(args.scene)):
            raise SceneError(option, "adaptive sampling and time budgets need the path tracer "
                                     "(integrator 'path')")    # said before anything compiles
    media = warmup.uses_media(args.scene)
    cold = not (warmup.is_cached(kind, media) and warmup.builder_cached())
    # every phase that may compile says so (and times it): the warm-up, the render (e.g. a
    # scene with instances, AOVs), depth and normals, debug views
    roots = warmup.roots(kind, builder=True)       # what may compile (the notice says which and why)
    with warmup.notice_on_compile(not args.quiet, expect=cold, roots=roots) as compiling:
        timers = [compiling]
        with warmup.ahead(args.scene, kind, timer=compiling):
            scene = load_scene(args.scene)
    with option_errors():
        settings = rmod.resolve_settings(scene, overrides)
    if args.view or args.highlight is not None:
        return _write_view(args, scene, overrides, outputs, t0, timers)
    show = not args.quiet and sys.stderr.isatty()
    from .film.aov_files import encode_color, render_metadata, set_outputs
    try:
        with warmup.notice_on_compile(not args.quiet) as compiling:
            timers.append(compiling)
            image, extra, meta, writer = _film_render(rmod, scene, settings, args, aov_names, denoiser, show,
                                                      overrides)
    except rmod.RenderInterrupted as stop:
        if stop.image is None:
            raise KeyboardInterrupt from None
        outputs.set(args.output, encode_color(args.output, stop.image, render_metadata(stop.image, scene, settings),
                                              args.exr_half, args.encoding))
        if args.variance:
            outputs.set(args.variance, encode_image(args.variance, stop.image.variance))
        outputs.commit()
        print(f"{PROG}: interrupted after {stop.spp_done} of {stop.spp_total} samples per pixel; "
              f"wrote {args.output} ({stop.spp_done} spp)", file=sys.stderr)
        return 130
    except KeyboardInterrupt as stop:
        if getattr(stop, "partial", None) is None or not stop.partial.written:
            raise
        print(f"{PROG}: interrupted; {args.output} holds the partial image of {stop.partial.spp} spp",
              file=sys.stderr)
        return 130
    if image.info.nonfinite:
        print(f"{PROG}: warning: {image.info.nonfinite} samples were NaN or infinite and were dropped",
              file=sys.stderr)
    if image.info.capped:
        print(f"{PROG}: {image.info.capped} pixels had paths cut at the media step cap (MAX_NULL_COLLISIONS)",
              file=sys.stderr)
    if settings["integrator"] == "whitted" and getattr(scene, "media", None) is not None and not args.quiet:
        print(f"{PROG}: note: {WHITTED_MEDIA_NOTE}", file=sys.stderr)
    set_outputs(outputs, args.output, aov_plan, image, meta, args.exr_half, args.encoding, extra)
    if args.variance:
        outputs.set(args.variance, encode_image(args.variance, image.variance))
    if args.depth or args.normals:
        with warmup.notice_on_compile(not args.quiet) as compiling:
            timers.append(compiling)
            t, n = rmod.render_aovs(scene, settings["width"], settings["height"])
        if args.depth:
            outputs.set(args.depth[0], encode_image(args.depth[0], depth_image(t, *depth_range), "linear"))
        if args.normals:
            import numpy as np
            outputs.set(args.normals, encode_image(args.normals, normal_image(n, np.isfinite(t)), "linear"))
    written = outputs.commit()
    if not args.quiet:
        print(f"wrote {', '.join(written)} ({settings['width']}x{settings['height']}, "
              f"{_samples_summary(image.info, settings)}, {settings['integrator']}"
              f"{', denoised with ' + denoiser if denoiser else ''}, {_timing(t0, timers)})",
              file=sys.stderr)
    return 0


def _samples_summary(info, settings):
    """``16 spp``; adaptive: ``adaptive 16-256 spp, mean 41.3``; a time budget also says
    how to get the same image without one."""
    if settings["noise_threshold"] is not None:
        text = f"adaptive {settings['min_spp']}-{info.spp} spp, mean {info.spp_mean:.1f}"
        if info.stopped_by == "time":
            text += f"; time budget reached: --max-spp {info.spp} gives this image"
        return text
    if settings["time_budget"] is not None:
        return f"{info.spp} spp in the time budget (--spp {info.spp} gives this image)"
    return f"{info.spp} spp"


def _write_view(args, scene, overrides, outputs, t0, timers):
    from .jit import warmup
    from .image import encode_image
    from .settings import option_errors
    from .views import render_view
    mode = args.view or "highlight"
    with option_errors(), warmup.notice_on_compile(not args.quiet) as compiling:
        timers.append(compiling)
        view = render_view(scene, mode, highlight=args.highlight, **overrides)
    outputs.set(args.output, encode_image(args.output, view.image, "linear"))
    written = outputs.commit()
    if not args.quiet:
        if view.report:
            print(f"{PROG}: {view.report}", file=sys.stderr)
        print(f"wrote {', '.join(written)} ({mode} view, {_timing(t0, timers)})", file=sys.stderr)
    return 0


def _timing(t0, timers):
    """The closing line's time since ``t0``: ``X s``, or with kernels compiled on the way
    (``timers``: the phases' ``warmup.CompileTimer`` objects) ``X s render, Y s compiling
    kernels``."""
    total = time.perf_counter() - t0
    if not any(t.compiled for t in timers):
        return f"{total:.2f} s"
    spent = sum(t.seconds for t in timers)
    return f"{max(0.0, total - spent):.2f} s render, {spent:.1f} s compiling kernels"


def _convert(args):
    from userio.outputs import check_output_path

    from .scene.course import convert_file
    check_output_path(args.output, "-o", (".json",), SceneError, "scene")
    convert_file(args.scene, args.output)
    print(f"wrote {args.output}", file=sys.stderr)


def _run(args):
    import numpy as np

    from .animation import cli as animate_cli
    from .view import cli as view_cli
    body = getattr(args, "grade_body", None) or \
        {"render": _render, "merge": _merge, "convert": _convert, "animate": animate_cli.run,
         "view": view_cli.run}[args.command]
    from .jit.errors import is_compile_error, kernel_error
    try:
        with np.errstate(all="ignore"):       # overflow is checked where it matters, not warned
            return body(args)
    except Exception as exc:
        if is_compile_error(exc):             # an edited kernel that does not compile: its line
            raise kernel_error(exc, full=args.numba_errors or None) from None
        raise


def main(argv=None):
    """Entry point of the ``raytrace`` command; returns the exit status.

    Everything heavy is imported inside :func:`userio.cli.run` (Ctrl-C at any moment, the
    imports included, exits 130 with one line), and only after the arguments are parsed:
    ``--help`` and argument errors never import Numba."""
    return ucli.run(PROG, lambda: _run(_parser().parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
