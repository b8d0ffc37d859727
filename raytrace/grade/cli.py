"""The grading sub-commands of ``raytrace``: ``compare``, ``regress``, ``convergence``.

    raytrace compare ACTUAL EXPECTED [--metric M[,M]] [--tolerance T[,T]] [--threshold V]
                     [--mode auto|ldr|hdr] [--alpha error|ignore|black|white]
                     [--diff OUT.png] [--flip-map OUT.png] [--no-flip] [--json]
                     [--ztest [--actual-variance F] [--expected-variance F] [--actual-spp N]
                      [--expected-spp N] [--variance-from auto|measured|reference]
                      [--ztest-alpha A] [--ztest-max-fraction F]
                      [--ztest-output DIR]]
    raytrace regress SCENES_DIR REFS_DIR [--update] [--report OUT_DIR] [--junit FILE]
                     [--only NAME ...] [--quiet]
    raytrace convergence SCENE --reference REF [--spp 1,4,16,64,256] [--sampler LIST]
                     [--integrator LIST] [--seeds N] [--time] -o PLOT.png [--csv F] [--json F]

Exit status of ``compare`` and ``regress``: 0 within tolerance (every scene passed), 1
over it (or a scene failed, or an I/O error), 2 bad input (a missing or unreadable
file, different sizes, a bad option) with one line on stderr.

``raytrace.cli`` registers them with :func:`add_commands`; each sub-parser carries its
body in ``args.grade_body``.
"""
import json
import pathlib
import sys

from userio.outputs import Outputs, check_output_path

from .errors import GradeError

PROG = "raytrace"


def add_commands(sub):
    """Add the grading sub-commands to ``sub`` (from ``userio.cli.subparsers``)."""
    _compare_parser(sub).set_defaults(grade_body=_compare)
    _regress_parser(sub).set_defaults(grade_body=_regress)
    _convergence_parser(sub).set_defaults(grade_body=_convergence)


# ----------------------------------------------------------------------------- compare
def _compare_parser(sub):
    c = sub.add_parser(
        "compare", help="compare an image with a reference (metrics, tolerance, diff image)",
        description="Compare ACTUAL with EXPECTED (the reference): RMSE, relative MSE, PSNR, max and "
                    "mean absolute difference, the fraction of pixels over a threshold, SSIM and FLIP. "
                    "PNGs (LDR) are compared as sRGB-encoded values in [0, 1], float images (.pfm, .exr, "
                    ".npy, .npz: HDR) as linear values; a float image compared with a PNG is first "
                    "rounded the way a PNG of it would be. See docs/grading.md.",
        epilog="exit status 0: within tolerance; 1: over it (or an I/O failure). Default tolerance: mae<=1/255,over<=0.02,block<=4/255 "
               "(the project's regression rule), or only the z-test with --ztest.")
    c.add_argument("actual", help="the image to grade (.png, .pfm, .exr, .npy, .npz)")
    c.add_argument("expected", help="the reference image")
    c.add_argument("--metric", help="metric(s) the --tolerance values apply to, comma-separated: rmse, "
                                    "relmse, psnr, max, mae, over, ssim, flip")
    c.add_argument("--tolerance", help="limit(s), comma-separated, for the --metric list, or named: "
                                       "'rmse<=0.01,ssim>=0.95' (fractions like 1/255 allowed; psnr and "
                                       "ssim are lower bounds)")
    c.add_argument("--threshold", help="per-pixel difference counted by 'over' (default 8/255)")
    c.add_argument("--mode", choices=("auto", "ldr", "hdr"), default="auto",
                   help="compare as LDR (sRGB-encoded) or HDR (linear) values")
    c.add_argument("--alpha", choices=("error", "ignore", "black", "white"), default="error",
                   help="transparent pixels: refuse the file, ignore alpha, or composite over black/white")
    c.add_argument("--diff", metavar="OUT.png", help="write a heat map of the per-pixel difference")
    c.add_argument("--diff-scale", metavar="V", help="difference shown at the top of the heat map "
                                                     "(default: the largest one)")
    c.add_argument("--flip-map", metavar="OUT.png", help="write FLIP's error map")
    c.add_argument("--no-flip", action="store_true", help="skip FLIP (large images: it takes a while)")
    c.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    z = c.add_argument_group("Monte Carlo z-test (float images with per-pixel variances)")
    z.add_argument("--ztest", action="store_true",
                   help="per-pixel two-sample z-test, Sidak-corrected; pass when few pixels are rejected")
    z.add_argument("--actual-variance", metavar="FILE", help="variance of each actual pixel's mean "
                                                             "(raytrace render --variance)")
    z.add_argument("--expected-variance", metavar="FILE", help="variance of each reference pixel's mean "
                                                               "(not needed for an npz with 'std')")
    z.add_argument("--actual-spp", type=int, metavar="N", help="samples per pixel of ACTUAL (to scale the "
                                                               "reference's variance when ACTUAL has none)")
    z.add_argument("--expected-spp", type=int, metavar="N", help="samples per pixel of EXPECTED")
    z.add_argument("--variance-from", choices=("auto", "measured", "reference"), default="auto",
                   help="actual's variance: its own (measured), or the reference's scaled by "
                        "expected-spp / actual-spp (better below a few hundred spp); auto: measured "
                        "when there is one")
    z.add_argument("--ztest-alpha", default="0.01", metavar="A",
                   help="family-wise significance level")
    z.add_argument("--ztest-max-fraction", default="0.0025", metavar="F",
                   help="largest fraction of rejected pixels that passes")
    z.add_argument("--ztest-output", metavar="DIR", help="write actual.exr, expected.exr, variance.exr, "
                                                         "pvalue.exr and rejected.png here")
    return c


def _compare(args):
    from .compare import ZTestOptions, compare
    from .criteria import parse_criteria, parse_number
    from .metrics import DEFAULT_THRESHOLD

    outputs = Outputs(GradeError)
    if args.diff:
        outputs.add(args.diff, "--diff", (".png",), "image")
    if args.flip_map:
        if args.no_flip:
            raise GradeError("--flip-map", "cannot be used with --no-flip")
        outputs.add(args.flip_map, "--flip-map", (".png",), "image")
    zfiles = {}
    if args.ztest_output:
        if not args.ztest:
            raise GradeError("--ztest-output", "needs --ztest")
        zdir = pathlib.Path(args.ztest_output)
        if zdir.exists() and not zdir.is_dir():
            raise GradeError("--ztest-output", "is a file, not a folder", file=str(zdir))
        for name in ("actual.exr", "expected.exr", "variance.exr", "pvalue.exr", "rejected.png"):
            zfiles[name] = outputs.add(str(zdir / name), "--ztest-output", None, "image")
    inputs = {str(pathlib.Path(p).resolve()) for p in (args.actual, args.expected, args.actual_variance,
                                                       args.expected_variance) if p}
    for path, option in ((args.diff, "--diff"), (args.flip_map, "--flip-map"), *((p, "--ztest-output")
                                                                              for p in zfiles.values())):
        if path and str(pathlib.Path(path).resolve()) in inputs:
            raise GradeError(option, "is also an input file", file=str(path))
    if (any(v is not None for v in (args.actual_variance, args.expected_variance, args.actual_spp,
                                    args.expected_spp)) or args.variance_from != "auto") and not args.ztest:
        raise GradeError("--ztest", "variance and spp options need --ztest")
    criteria = None
    if args.tolerance is not None:
        criteria = parse_criteria(args.tolerance, args.metric)
    elif args.metric:
        raise GradeError("--metric", "needs --tolerance (a limit for each metric)")
    threshold = DEFAULT_THRESHOLD if args.threshold is None else parse_number(args.threshold, "--threshold")
    if threshold < 0:
        raise GradeError("--threshold", f"must be >= 0, got {threshold:g}")
    ztest = None
    if args.ztest:
        alpha = parse_number(args.ztest_alpha, "--ztest-alpha")
        frac = parse_number(args.ztest_max_fraction, "--ztest-max-fraction")
        if not 0 < alpha < 1:
            raise GradeError("--ztest-alpha", f"must be between 0 and 1, got {alpha:g}")
        if not 0 <= frac < 1:
            raise GradeError("--ztest-max-fraction", f"must be in [0, 1), got {frac:g}")
        for opt, n in (("--actual-spp", args.actual_spp), ("--expected-spp", args.expected_spp)):
            if n is not None and n < 1:
                raise GradeError(opt, f"must be >= 1, got {n}")
        ztest = ZTestOptions(alpha=alpha, max_fraction=frac, actual_variance=args.actual_variance,
                             expected_variance=args.expected_variance, actual_spp=args.actual_spp,
                             expected_spp=args.expected_spp, source=args.variance_from)
    result = compare(args.actual, args.expected, criteria=criteria, threshold=threshold, domain=args.mode,
                     alpha=args.alpha, flip=not args.no_flip, ztest=ztest)
    _set_compare_outputs(outputs, args, result, zfiles)
    written = outputs.commit()
    if args.json:
        data = result.to_json()
        data["written"] = written
        print(json.dumps(data, indent=2))
    else:
        print("\n".join(result.report_lines()))
        for path in written:
            print(f"wrote {path}", file=sys.stderr)
    return 0 if result.passed else 1


def _set_compare_outputs(outputs, args, result, zfiles):
    from . import heatmap
    from .criteria import parse_number
    if args.diff:
        scale = None if args.diff_scale is None else parse_number(args.diff_scale, "--diff-scale")
        if scale is not None and scale <= 0:
            raise GradeError("--diff-scale", f"must be > 0, got {scale:g}")
        rgb, _ = heatmap.diff_heatmap(result.diff, scale)
        outputs.set(args.diff, heatmap.png_bytes(rgb))
    if args.flip_map:
        outputs.set(args.flip_map, heatmap.png_bytes(heatmap.flip_map(result.flip_map)))
    if zfiles:
        from ..film.exr import exr_bytes
        z = result.ztest
        a, e = result.actual.linear, result.expected.linear
        rgb = heatmap.preview(result.actual).copy()
        rgb[z.rejected] = (255, 0, 0)
        for name, data in (("actual.exr", exr_bytes({"color": a})), ("expected.exr", exr_bytes({"color": e})),
                           ("variance.exr", exr_bytes({"color": z.variance})),
                           ("pvalue.exr", exr_bytes({"color": z.p})), ("rejected.png", heatmap.png_bytes(rgb))):
            outputs.set(zfiles[name], data)


# ----------------------------------------------------------------------------- regress
def _regress_parser(sub):
    r = sub.add_parser(
        "regress", help="render a folder of scenes and grade them against reference images",
        description="Render every scene of SCENES_DIR (*.json, course *.txt) at the size of its reference "
                    "REFS_DIR/NAME.png|.exr|.pfm, with the settings and tolerance of its sidecar "
                    "REFS_DIR/NAME.ref.json (see docs/grading.md), and compare.",
        epilog="exit status 0: every scene passed; 1: a scene failed, had no reference or could not be "
               "rendered (the report lists failures first).")
    r.add_argument("scenes", metavar="SCENES_DIR", help="folder of scene files")
    r.add_argument("refs", metavar="REFS_DIR", help="folder of reference images and sidecars")
    r.add_argument("--update", action="store_true",
                   help="rewrite the references (and sidecars) of failing and missing scenes from this "
                        "render; references made by another program are kept")
    r.add_argument("--report", metavar="OUT_DIR", help="write an HTML report (OUT_DIR/index.html)")
    r.add_argument("--junit", metavar="FILE", help="write a JUnit XML file for CI")
    r.add_argument("--only", nargs="+", metavar="NAME", help="run only these scenes (file names without "
                                                            "extension)")
    r.add_argument("-q", "--quiet", action="store_true", help="only the summary line")
    return r


def _kernels_cached():
    from ..jit import warmup
    try:
        return warmup.is_cached("whitted") and warmup.is_cached("path") and warmup.builder_cached()
    except Exception:  # noqa: BLE001 - only decides whether to print a notice
        return True


def _regress(args):
    from . import regress
    from .junit import write_junit
    if args.junit:
        check_output_path(args.junit, "--junit", (".xml",), GradeError, "JUnit file")
    if args.report:
        report = pathlib.Path(args.report)
        if report.exists() and not report.is_dir():
            raise GradeError("--report", "is a file, not a folder", file=str(report))
        check_output_path(report / "index.html", "--report", (".html",), GradeError, "report")
    if not _kernels_cached() and not args.quiet:
        print(f"{PROG}: compiling kernels on first use (a minute or two; cached afterwards)", file=sys.stderr)
    command = f"raytrace regress {args.scenes} {args.refs} --update"

    def log(case):
        if not args.quiet:
            print(f"{case.status.upper():8} {case.name}: {case.message} ({case.seconds:.1f} s)", flush=True)

    cases = regress.run(args.scenes, args.refs, update=args.update, only=args.only, command=command, log=log)
    if args.report:
        from .report_html import write_report
        index = write_report(cases, args.report)
        print(f"report: {index}", file=sys.stderr)
    if args.junit:
        write_junit(cases, args.junit, classname=f"regress.{pathlib.Path(args.scenes).name or 'scenes'}")
        print(f"junit: {args.junit}", file=sys.stderr)
    ok = all(c.ok for c in cases)
    print(f"regress: {regress.verdict(cases)}: {regress.summary(cases)}")
    return 0 if ok else 1


# ------------------------------------------------------------------------- convergence
def _convergence_parser(sub):
    v = sub.add_parser(
        "convergence", help="plot RMSE / relMSE against spp and time (log-log, fitted slopes)",
        description="Render SCENE at each spp of --spp (at the reference's size) and plot the error "
                    "against REF: RMSE and relative MSE against samples per pixel (and wall time with "
                    "--time), log-log, one line per integrator/sampler with its fitted slope.")
    v.add_argument("scene", help="scene file (.json or course .txt)")
    v.add_argument("--reference", required=True, metavar="REF",
                   help="reference image (.exr, .pfm, .npy, .npz; a .png works with 8-bit precision)")
    v.add_argument("--spp", default="1,4,16,64,256", help="comma-separated samples per pixel")
    v.add_argument("--sampler", default="sobol,independent", help="path tracer samplers, comma-separated")
    v.add_argument("--integrator", default="path", help="integrators, comma-separated (path, whitted)")
    v.add_argument("--seeds", type=int, default=1, help="renders per spp, averaged (seeds SEED, SEED+1...)")
    v.add_argument("--seed", type=int, default=0, help="first seed")
    v.add_argument("--filter", choices=("box", "tent", "gaussian"),
                   help="pixel filter (the reference's! Mitsuba references here use box)")
    v.add_argument("--max-depth", type=int, metavar="N", help="path: longest path")
    v.add_argument("--rr-depth", type=int, metavar="N", help="path: depth where Russian roulette starts")
    v.add_argument("--time", action="store_true", help="also plot against wall time")
    v.add_argument("-o", "--output", required=True, metavar="PLOT.png", help="the plot")
    v.add_argument("--csv", metavar="FILE", help="also write the numbers as CSV")
    v.add_argument("--json", metavar="FILE", help="also write the numbers and slopes as JSON")
    v.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    return v


def _int_list(text, option):
    try:
        values = sorted({int(s) for s in str(text).split(",") if s.strip()})
    except ValueError:
        raise GradeError(option, f"expected comma-separated integers, got {text!r}") from None
    if not values or values[0] < 1:
        raise GradeError(option, f"expected integers >= 1, got {text!r}")
    return values


def _name_list(text, option, allowed):
    names = [s.strip() for s in str(text).split(",") if s.strip()]
    bad = [n for n in names if n not in allowed]
    if not names or bad:
        raise GradeError(option, f"expected a comma-separated list of {', '.join(allowed)}, got {text!r}")
    return list(dict.fromkeys(names))


def _convergence(args):
    import raytrace

    from . import convergence as cv
    from .images import read_image
    outputs = Outputs(GradeError)
    outputs.add(args.output, "-o", (".png",), "plot")
    if args.csv:
        outputs.add(args.csv, "--csv", (".csv",), "CSV file")
    if args.json:
        outputs.add(args.json, "--json", (".json",), "JSON file")
    spp_list = _int_list(args.spp, "--spp")
    samplers = _name_list(args.sampler, "--sampler", ("sobol", "independent"))
    integrators = _name_list(args.integrator, "--integrator", ("path", "whitted"))
    if args.seeds < 1:
        raise GradeError("--seeds", f"must be >= 1, got {args.seeds}")
    reference = read_image(args.reference, what="reference")
    scene = raytrace.load_scene(args.scene)
    fixed = {"width": reference.width, "height": reference.height, "filter": args.filter,
             "max_depth": args.max_depth, "rr_depth": args.rr_depth}
    fixed = {k: v for k, v in fixed.items() if v is not None}
    log = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    series = []
    for integrator in integrators:
        for sampler in (samplers if integrator == "path" else ["-"]):
            opts = dict(fixed, integrator=integrator)
            if integrator == "path":
                opts["sampler"] = sampler
            raytrace.render(scene, spp=1, seed=args.seed, **dict(opts, width=4, height=4))   # compile first

            def render(spp, seed, opts=opts):
                return raytrace.render(scene, spp=spp, seed=seed, **opts)
            label = f"{integrator}/{sampler}" if integrator == "path" else integrator
            series.append(cv.measure(render, reference, spp_list, seeds=args.seeds, first_seed=args.seed,
                                     label=label, integrator=integrator, sampler=sampler, log=log))
    title = f"{pathlib.Path(args.scene).name} vs {pathlib.Path(args.reference).name} " \
            f"({reference.width} x {reference.height})"
    outputs.set(args.output, cv.plot_png(series, title, time_axis=args.time))
    if args.csv:
        outputs.set(args.csv, cv.csv_text(series).encode())
    if args.json:
        doc = {"scene": str(args.scene), "reference": str(args.reference), "width": reference.width,
               "height": reference.height, "settings": fixed, "series": [s.to_json() for s in series]}
        outputs.set(args.json, (json.dumps(doc, indent=2) + "\n").encode())
    written = outputs.commit()
    print("\n".join(cv.table_lines(series)))
    print(f"wrote {', '.join(written)}", file=sys.stderr)
    return 0
