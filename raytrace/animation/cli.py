"""``raytrace animate``: the frames of an animated scene, here or on a Dask cluster.

    raytrace animate SCENE.json -o OUT_DIR [--frames A:B[:STEP]] [--format png|pfm|exr]
                     [--gif OUT.gif] [--mp4 OUT.mp4] [--fps N] [--shutter OPEN CLOSE] [--force]
                     [--workers N] [--threads-per-worker T] [--scheduler tcp://HOST:PORT]
                     [--chunk N] [--tiles N]
                     [--size W H] [--spp N] [--seed S] [--filter ...] [--integrator ...] ...
                     [--encoding srgb|linear] [--quiet]

Exit status: 0 when every selected frame exists at the end; 1 when some failed (each is
listed with its error) or on an I/O failure; 2 for bad input; 130 on Ctrl-C (the frames
written so far stay, and the same command renders the rest).
"""
import sys

from ..errors import SceneError
from ..image import ENCODINGS

HELP = "render the frames of an animated scene (and a GIF or MP4), here or on a Dask cluster"


def add_parser(sub):
    """Add the ``animate`` sub-command to ``sub`` (argparse sub-parsers)."""
    a = sub.add_parser(
        "animate", help=HELP,
        description="Render the frames of an animated scene (a still is one frame) as "
                    "OUT_DIR/frame_0000.png, ... Frames that exist are skipped (--force renders "
                    "them again), so an interrupted run continues where it stopped. By default they "
                    "render here, and a local Dask cluster of one process per core starts only when "
                    "the first frames show that the rest would take over a minute (its start-up "
                    "costs seconds); --workers chooses; --scheduler uses an existing cluster.",
        epilog="Exit status 1 when some frames failed: each is listed with its error, the "
               "others are written. Ctrl-C keeps the frames written so far (status 130).")
    a.add_argument("scene", help="scene file (.json, a course .txt, or a glTF .gltf/.glb)")
    a.add_argument("-o", "--output", required=True, metavar="OUT_DIR", help="folder for the frames")
    a.add_argument("--frames", metavar="A:B[:STEP]",
                   help="frames to render: Python slice over 0 .. N-1 (B exclusive), or one frame A "
                        "(default all)")
    a.add_argument("--format", choices=("png", "pfm", "exr"), default="png", help="frame file format")
    a.add_argument("--gif", metavar="OUT.gif", help="also write a looping GIF of the selected frames")
    a.add_argument("--mp4", metavar="OUT.mp4", help="also write an H.264 MP4 of the selected frames")
    a.add_argument("--fps", type=float, help="frames per second (the animation's fps, else 24); videos "
                                             "play in real time")
    a.add_argument("--shutter", nargs=2, type=float, metavar=("OPEN", "CLOSE"),
                   help="motion blur: the shutter interval in frames relative to each frame's time, "
                        "within -1 .. 1 (replaces the scene's animation.shutter; 0 0: no blur)")
    a.add_argument("--force", action="store_true", help="render frames whose files exist")
    a.add_argument("--workers", type=int,
                   help="local Dask workers (processes); 1 renders in this process without Dask "
                        "(default: here, or one worker per core when the frames timed here show over "
                        "a minute of work left)")
    a.add_argument("--threads-per-worker", type=int, metavar="T",
                   help="Numba threads in each worker (default 1; here: all cores)")
    a.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="use this running Dask cluster")
    a.add_argument("--connect-timeout", type=float, default=10.0, metavar="SECONDS",
                   help="how long to wait for --scheduler to answer before giving up")
    a.add_argument("--chunk", type=int, metavar="N", help="frames per task (default up to 4)")
    a.add_argument("--tiles", type=int, default=1, metavar="N",
                   help="split each frame into N bands of rows, one task each (for big stills)")
    a.add_argument("--size", nargs=2, type=int, metavar=("W", "H"),
                   help="image size in pixels (scene's image.width/height, else 400 400)")
    a.add_argument("--spp", type=int, help="samples per pixel (scene's, else 1)")
    a.add_argument("--seed", type=int, help="random seed, the same for every frame (scene's, else 0)")
    a.add_argument("--filter", choices=("box", "tent", "gaussian"), help="pixel filter (scene's, else box)")
    a.add_argument("--integrator", choices=("whitted", "path"), help="override the scene's integrator")
    a.add_argument("--bounces", type=int, help="Whitted: maximum reflection/refraction depth (else 4)")
    a.add_argument("--shadows", dest="shadows", action="store_true", default=None, help="cast shadow rays")
    a.add_argument("--no-shadows", dest="shadows", action="store_false", default=None, help="no shadow rays")
    a.add_argument("--max-depth", type=int, metavar="N", help="path: longest path (-1 unbounded)")
    a.add_argument("--rr-depth", type=int, metavar="N", help="path: Russian roulette from this depth")
    a.add_argument("--sampler", choices=("sobol", "independent"), help="path: sample generator")
    a.add_argument("--encoding", choices=ENCODINGS, default="srgb", help="PNG encoding of the frames")
    a.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary")
    return a


def _count(value, option, lo, hi):
    if value is not None and not lo <= value <= hi:
        raise SceneError(option, f"must be from {lo} to {hi}, got {value}")
    return value


def _check(args):
    _count(args.workers, "--workers", 1, 1024)
    _count(args.threads_per_worker, "--threads-per-worker", 1, 1024)
    _count(args.chunk, "--chunk", 1, 100_000)
    _count(args.tiles, "--tiles", 1, 4096)
    if not 0 < args.connect_timeout <= 3600:
        raise SceneError("--connect-timeout", f"must be a number of seconds in (0, 3600], got {args.connect_timeout:g}")
    if args.scheduler is not None and args.workers is not None:
        raise SceneError("--workers", "starts a local cluster; with --scheduler the cluster's own "
                                      "workers render")


def run(args):
    """Body of ``raytrace animate``; returns the exit status."""
    from ..cli import PROG
    from ..settings import option_errors
    from ..scene.animation import check_shutter
    from ..settings import check_overrides

    overrides = {"spp": args.spp, "bounces": args.bounces, "shadows": args.shadows, "seed": args.seed,
                 "filter": args.filter, "integrator": args.integrator, "max_depth": args.max_depth,
                 "rr_depth": args.rr_depth, "sampler": args.sampler}
    if args.size:
        overrides["width"], overrides["height"] = args.size
    with option_errors():
        check_overrides(overrides)
    _check(args)
    shutter = check_shutter(args.shutter, "--shutter") if args.shutter is not None else None
    # the options are fine: now the renderer and its kernels (Numba)
    from ..jit import warmup
    from .farm import animate, check_request
    from .scene_at import AnimatedScene
    anim = AnimatedScene.load(args.scene, fps=args.fps)
    if not args.quiet:
        anim.prepare(notice=lambda where, steps: print(
            f"{PROG}: simulating the cloth {where} over 0 .. {anim.end:g} s ({steps} steps; once, "
            "cached afterwards)",
            file=sys.stderr, flush=True))
    with option_errors():          # every option checked before anything compiles
        check_request(anim, args.frames, args.format, args.tiles, args.gif, args.mp4, overrides)
    kind, media = warmup.integrator_of(args.scene, args.integrator), warmup.uses_media(args.scene)
    if not warmup.is_cached(kind, media):
        with warmup.CompileNotice(not args.quiet):
            warmup.compile_here(kind, media=media)
    written = []
    show = not args.quiet and sys.stderr.isatty()
    try:
        with option_errors():
            summary = animate(anim, args.output, scheduler=args.scheduler, workers=args.workers,
                              connect_timeout=args.connect_timeout,
                              threads_per_worker=args.threads_per_worker, frames=args.frames,
                              tiles=args.tiles, chunk=args.chunk, force=args.force, format=args.format,
                              encoding=args.encoding, gif=args.gif, mp4=args.mp4, shutter=shutter,
                              progress=show, notice=None if args.quiet else lambda line: print(
                                  f"{PROG}: {line}", file=sys.stderr, flush=True),
                              callback=lambda k, path: written.append(k), **overrides)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; {len(written)} frames written to {args.output} (the same command "
              "renders the rest)", file=sys.stderr)
        return 130
    lines = summary.lines()
    if not args.quiet:
        print(f"{PROG}: {lines[0]} -> {args.output}", file=sys.stderr)
        for path in summary.videos:
            print(f"{PROG}: wrote {path}", file=sys.stderr)
    for line in lines[1:]:
        print(f"{PROG}: {line}", file=sys.stderr)
    if summary.nonfinite:
        print(f"{PROG}: warning: {summary.nonfinite} samples were NaN or infinite and were dropped",
              file=sys.stderr)
    if summary.failed and (args.gif or args.mp4):
        print(f"{PROG}: no video written: {len(summary.failed)} frames failed", file=sys.stderr)
    return 0 if summary.ok else 1
