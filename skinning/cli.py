"""Command line: ``python -m skinning {info,export,preview} ...``.

Load a character (the course triple or a glTF file), pose it (pose JSON, or an animation
at a time), then print facts, write the posed mesh / skeleton as OBJ, or draw a quick
shaded preview PNG with matplotlib. Bad input: one line on stderr, exit status 2.
"""
import argparse
import sys

import numpy as np

from .course import load_course, write_obj
from .errors import SkinningError
from .gltf import load_gltf
from .posefile import load_animation, load_pose


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


def _load(args):
    if args.gltf:
        if args.skel or args.attach or args.obj:
            raise SkinningError("give either --gltf or --skel/--attach/--obj, not both")
        model = load_gltf(args.gltf, normalize=args.normalize)
    elif args.skel and args.attach and args.obj:
        model = load_course(args.skel, args.attach, args.obj, normalize=args.normalize)
    else:
        raise SkinningError("need --gltf FILE, or all of --skel, --attach and --obj")
    pose = None
    if args.pose and args.animation:
        raise SkinningError("give --pose or --animation, not both")
    if args.pose:
        pose = load_pose(args.pose, model.skeleton)
    elif args.animation:
        a = args.animation
        if a.endswith(".json"):
            anim = load_animation(a, model.skeleton)
        else:
            anim = int(a) if a.isdigit() else a
        pose = model.pose_at(anim, args.time, loop=args.loop)
    return model, pose


def cmd_info(args):
    model, pose = _load(args)
    sk = model.skeleton
    world = sk.world_matrices(pose)
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
    model, pose = _load(args)
    if args.skeleton:
        v, f, n = model.skeleton_mesh(pose, args.joint_radius, args.bone_radius)
    else:
        v, n = model.skin(pose)
        f = model.faces
    write_obj(args.output, v, f, n)
    print(f"wrote {args.output}: {v.shape[0]} vertices, {f.shape[0]} triangles")


def cmd_preview(args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import PolyCollection

    model, pose = _load(args)
    v, _ = model.skin(pose)
    f = model.faces
    sv, sf, _ = model.skeleton_mesh(pose, args.joint_radius, args.bone_radius)
    yaw = np.radians(args.yaw)
    rot = np.array([[np.cos(yaw), 0, np.sin(yaw)], [0, 1, 0], [-np.sin(yaw), 0, np.cos(yaw)]])
    fig, ax = plt.subplots(figsize=(args.size / 100, args.size / 100), dpi=100)
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
    c, r = (lo + hi) / 2, (hi - lo).max() / 2 * 1.05
    ax.set_xlim(c[0] - r, c[0] + r)
    ax.set_ylim(c[1] - r, c[1] + r)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.savefig(args.output, bbox_inches="tight")
    print(f"wrote {args.output}")


def build_parser():
    ap = argparse.ArgumentParser(prog="python -m skinning",
                                 description="Load, pose and export skinned characters "
                                             "(course .skel/.attach/.obj or glTF 2.0).")
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("info", help="print joints, counts and animations")
    _add_model_args(p)
    p.set_defaults(func=cmd_info)
    for name, func, helptext in (("export", cmd_export, "write the posed mesh as OBJ"),
                                 ("preview", cmd_preview, "draw a shaded preview PNG")):
        p = sub.add_parser(name, help=helptext)
        _add_model_args(p)
        p.add_argument("-o", "--output", required=True, help="output file")
        p.add_argument("--joint-radius", type=float, help="skeleton sphere radius")
        p.add_argument("--bone-radius", type=float, help="skeleton cylinder radius")
        if name == "export":
            p.add_argument("--skeleton", action="store_true",
                           help="write the skeleton (spheres and cylinders) instead")
        else:
            p.add_argument("--yaw", type=float, default=0.0,
                           help="turn the view about y by this many degrees")
            p.add_argument("--alpha", type=float, default=1.0,
                           help="mesh opacity (0 hides it, showing only the skeleton)")
            p.add_argument("--hide-skeleton", action="store_true",
                           help="draw only the mesh")
            p.add_argument("--size", type=int, default=600, help="image size in pixels")
        p.set_defaults(func=func)
    return ap


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except (SkinningError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0
