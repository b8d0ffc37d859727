"""Command line: ``python -m skinning {info,export,preview} ...``.

Load a character (the course triple or a glTF file), pose it (pose JSON, or an animation
at a time), then print facts, write the posed mesh / skeleton as OBJ, or draw a quick
shaded preview PNG with matplotlib. Errors and exit codes are ``userio.cli``'s: bad
input is one line ``skinning: error: FILE: where: ...`` and status 2, an I/O failure
status 1, Ctrl-C status 130. Options and the output path are checked before any work,
the output is written through a temporary file, and a result that is not finite is
refused, so a failed run changes no file.
"""
import io

import numpy as np
from userio import cli as ucli
from userio.errors import UserError
from userio.limits import check_int, check_number
from userio.outputs import Outputs

from .errors import SkinningError

# the readers import the Numba kernels (through the skeleton): they are imported after the
# arguments are parsed, so --help and argument errors stay light

MIN_SIZE, MAX_SIZE = 16, 4096
"""Side of the square preview image in pixels."""


def _add_model_args(p):
    src = p.add_argument_group("character (give --gltf, or --skel with --attach and --obj)")
    src.add_argument("--skel", help="course .skel file (joints: tx ty tz parent)")
    src.add_argument("--attach", help="course .attach file (weights of joints 1..J-1)")
    src.add_argument("--obj", help="course .obj bind mesh")
    src.add_argument("--gltf", help="glTF 2.0 file (.gltf or .glb) with a skin")
    src.add_argument("--normalize", action="store_true",
                     help="rescale weight rows that do not sum to 1 instead of failing")
    pose = p.add_argument_group("pose (default: the bind pose)")
    pose.add_argument("--pose", help="pose JSON file (joint name or index -> rotation)")
    pose.add_argument("--animation",
                      help="animation JSON file, or a glTF animation name or index")
    pose.add_argument("--time", type=float, default=0.0, help="animation time in seconds")
    pose.add_argument("--loop", action="store_true", help="wrap the time into the animation")


def _inputs(args):
    """The input files given, for messages about results that overflow."""
    files = [args.gltf, args.skel, args.attach, args.obj, args.pose]
    if args.animation and args.animation.lower().endswith(".json"):
        files.append(args.animation)
    return ", ".join(f for f in files if f)


def _check_options(args):
    check_number(args.time, "--time")
    for opt in ("joint_radius", "bone_radius"):
        value = getattr(args, opt, None)
        if value is not None:
            check_number(value, "--" + opt.replace("_", "-"), lo=0.0, lo_open=True)
    if args.command == "preview":
        check_number(args.yaw, "--yaw")
        check_number(args.alpha, "--alpha", lo=0.0, hi=1.0)
        check_int(args.size, "--size", MIN_SIZE, MAX_SIZE)


def _load(args):
    from .course import load_course
    from .gltf import load_gltf
    from .posefile import load_animation, load_pose
    if args.gltf:
        if args.skel or args.attach or args.obj:
            raise UserError("--gltf", "give either --gltf or --skel/--attach/--obj, not both")
        model = load_gltf(args.gltf, normalize=args.normalize)
    elif args.skel and args.attach and args.obj:
        model = load_course(args.skel, args.attach, args.obj, normalize=args.normalize)
    else:
        raise UserError(None, "need --gltf FILE, or all of --skel, --attach and --obj")
    pose = None
    if args.pose and args.animation:
        raise UserError("--pose", "give --pose or --animation, not both")
    if args.pose:
        pose = load_pose(args.pose, model.skeleton)
    elif args.animation:
        a = args.animation
        if a.lower().endswith(".json"):
            anim = load_animation(a, model.skeleton)
        else:
            anim = int(a) if a.isascii() and a.isdigit() and len(a) <= 18 else a
        try:
            pose = model.pose_at(anim, args.time, loop=args.loop)
        except SkinningError as e:
            raise UserError("--animation", e.message) from None
    return model, pose


def _finite(array, what, args, part=""):
    """Refuse a result with NaN or inf (finite inputs whose products overflow)."""
    bad = np.flatnonzero(~np.isfinite(np.asarray(array)).all(axis=-1))
    if bad.size:
        raise UserError(None, f"the {what} is not finite at vertex {bad[0]}{part}: numbers in "
                        f"{_inputs(args)} are too large")


def _skeleton_mesh(model, pose, args):
    """The posed skeleton as triangles, its joints checked first."""
    _finite(model.skeleton.world_matrices(pose)[:, :3, 3], "posed skeleton", args)
    v, f, n = model.skeleton_mesh(pose, args.joint_radius, args.bone_radius)
    _finite(v, "skeleton mesh", args)
    return v, f, n


def cmd_info(args):
    model, pose = _load(args)
    sk = model.skeleton
    world = sk.world_matrices(pose)
    _finite(world[:, :3, 3], "posed skeleton", args)
    nnz = (model.weights > 0).sum(axis=1)
    print(f"{model.source}: {sk.num_joints} joints, {model.num_vertices} vertices, "
          f"{model.faces.shape[0]} triangles, {nnz.max()} influences at most "
          f"({nnz.mean():.2f} on average)")
    for j in range(sk.num_joints):
        p = world[j, :3, 3]
        print(f"  {j:3d} {sk.names[j]:16s} parent {sk.parents[j]:3d}  "
              f"at ({p[0]: .4f}, {p[1]: .4f}, {p[2]: .4f})")
    for name, anim in model.animations.items():
        print(f"  animation {name!r}: {len(anim.channels)} channels, "
              f"{anim.start:g} .. {anim.end:g} s")


def cmd_export(args):
    from .course import format_obj
    outs = Outputs()
    outs.add(args.output, "-o", (".obj",))
    model, pose = _load(args)
    if args.skeleton:
        v, f, n = _skeleton_mesh(model, pose, args)
        what = "skeleton mesh"
    else:
        v, n = model.skin(pose)
        f = model.faces
        what = "posed mesh"
    _finite(v, what, args)
    _finite(n, what, args, " (its normal)")
    outs.set(args.output, format_obj(v, f, n).encode("utf-8"))
    outs.commit()
    print(f"wrote {args.output}: {v.shape[0]} vertices, {f.shape[0]} triangles")


def _draw(args, v, f, sv, sf):
    """The preview picture (PNG bytes): painter's algorithm, Lambert shading."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import PolyCollection

    yaw = np.radians(args.yaw)
    rot = np.array([[np.cos(yaw), 0, np.sin(yaw)], [0, 1, 0], [-np.sin(yaw), 0, np.cos(yaw)]])
    fig, ax = plt.subplots(figsize=(args.size / 100, args.size / 100), dpi=100)
    try:
        light = np.array([0.4, 0.6, 0.7]) / np.linalg.norm([0.4, 0.6, 0.7])
        for verts, faces, colour, alpha in ((v, f, np.array([0.85, 0.7, 0.55]), args.alpha),
                                            (sv, sf, np.array([0.2, 0.4, 0.9]),
                                             0.0 if args.hide_skeleton else 1.0)):
            if alpha == 0:
                continue
            p = verts @ rot.T
            tri = p[faces]
            normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
            normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-30)
            front = normal[:, 2] > 0                       # camera looks down -z
            order = np.argsort(tri[front, :, 2].mean(axis=1))
            shade = 0.25 + 0.75 * np.clip(normal[front] @ light, 0, 1)
            cols = np.clip(shade[:, None] * colour, 0, 1)[order]
            ax.add_collection(PolyCollection(tri[front][order][:, :, :2], facecolors=cols,
                                             edgecolors="none", alpha=alpha))
        allp = np.vstack([v, sv]) @ rot.T
        lo, hi = allp.min(axis=0), allp.max(axis=0)
        c, r = (lo + hi) / 2, max((hi - lo).max() / 2 * 1.05, 1e-9)
        ax.set_xlim(c[0] - r, c[0] + r)
        ax.set_ylim(c[1] - r, c[1] + r)
        ax.set_aspect("equal")
        ax.axis("off")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", bbox_inches="tight")
        return buf.getvalue()
    finally:
        plt.close(fig)


def cmd_preview(args):
    outs = Outputs()
    outs.add(args.output, "-o", (".png",))
    model, pose = _load(args)
    v, _ = model.skin(pose)
    _finite(v, "posed mesh", args)
    sv, sf, _ = _skeleton_mesh(model, pose, args)
    allp = np.vstack([v, sv])
    if not np.all(np.isfinite(allp.max(axis=0) - allp.min(axis=0))):
        raise UserError(None, f"the posed mesh is too large to draw: numbers in "
                        f"{_inputs(args)} are too large")
    outs.set(args.output, _draw(args, v, model.faces, sv, sf))
    outs.commit()
    print(f"wrote {args.output}")


def build_parser():
    ap = ucli.parser("python -m skinning",
                     "Load, pose and export skinned characters (course .skel/.attach/.obj "
                     "or glTF 2.0).")
    sub = ucli.subparsers(ap, dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("info", help="print joints, counts and animations",
                       description="Print the joints (posed world positions), counts and "
                                   "animations of a character.")
    _add_model_args(p)
    p.set_defaults(func=cmd_info)
    for name, func, helptext, suffix in (
            ("export", cmd_export, "write the posed mesh as OBJ", ".obj"),
            ("preview", cmd_preview, "draw a shaded preview PNG", ".png")):
        p = sub.add_parser(name, help=helptext,
                           description=helptext[0].upper() + helptext[1:] + ".")
        _add_model_args(p)
        p.add_argument("-o", "--output", required=True, help=f"output file ({suffix})")
        p.add_argument("--joint-radius", type=float,
                       help="skeleton sphere radius (when not given: 2%% of the skeleton's size)")
        p.add_argument("--bone-radius", type=float,
                       help="skeleton cylinder radius (when not given: half the joint radius)")
        if name == "export":
            p.add_argument("--skeleton", action="store_true",
                           help="write the skeleton (spheres and cylinders) instead")
        else:
            p.add_argument("--yaw", type=float, default=0.0,
                           help="turn the view about y by this many degrees")
            p.add_argument("--alpha", type=float, default=1.0,
                           help="mesh opacity in [0, 1] (0 hides it, showing only the skeleton)")
            p.add_argument("--hide-skeleton", action="store_true",
                           help="draw only the mesh")
            p.add_argument("--size", type=int, default=600,
                           help=f"image size in pixels, {MIN_SIZE}..{MAX_SIZE}")
        p.set_defaults(func=func)
    return ap


def _run(args):
    _check_options(args)
    with np.errstate(all="ignore"):            # results are checked; no warnings on stderr
        args.func(args)


def main(argv=None):
    """Run the command line; returns the exit status (argparse exits itself on bad
    arguments, with status 2)."""
    args = build_parser().parse_args(argv)
    return ucli.run("skinning", _run, args)
