"""``raytrace view``: the live preview in a browser (docs/live-preview.md).

    raytrace view SCENE [--port N] [--no-browser] [--size W H] [--spp N]
                  [--integrator whitted|path] [--save-dir DIR]

Prints the page's address on standard error once it is served, then one line per
notice (errors, reloads, compiling). The address ends in ``?token=...``: a secret made for
this run, without which the server answers nothing but the page itself (Jupyter's way:
other programs and other users on the machine, who can reach 127.0.0.1 too, cannot drive
the preview or read its images). The browser is given a file of the user's own that
redirects to the address (:func:`_redirect_file`), so that the token never appears on a
command line, which any user can read. Ctrl-C stops it at once, whatever its threads are
doing: exit status 130, the port released (:func:`_stop`). Bad options exit with 2
before anything is served; a scene that fails to load does not: the page shows its error
until the file is fixed.
"""
import errno
import os
import signal
import sys

from ..errors import SceneError

HELP = "a live preview in the browser that renders again when the scene or its assets change"


def add_parser(sub):
    """Add the ``view`` sub-command to ``sub`` (argparse sub-parsers)."""
    v = sub.add_parser(
        "view", help=HELP,
        description="Serve a live, progressive preview of SCENE on 127.0.0.1 and open it in a "
                    "browser; the printed address carries a secret token that every request but "
                    "the page itself must give, so only you can drive it. The picture refines pass "
                    "by pass and renders again within a second when the scene file or any file it "
                    "reads (meshes, textures, glTF, skeletons) changes. Drag to orbit, wheel to "
                    "dolly (the file's camera is never changed: 'copy camera' gives the JSON); "
                    "hover for pixel values and names.",
        epilog="Ctrl-C stops the preview (exit status 130).")
    v.add_argument("scene", help="scene file (.json, a course .txt, or a glTF .gltf/.glb)")
    v.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    v.add_argument("--no-browser", action="store_true", help="print the address, do not open a browser")
    v.add_argument("--size", nargs=2, type=int, metavar=("W", "H"),
                   help="image size in pixels (scene's image.width/height, else 400 400)")
    v.add_argument("--spp", type=int, help="samples per pixel to refine to (scene's, else 1)")
    v.add_argument("--integrator", choices=("whitted", "path"), help="override the scene's integrator")
    v.add_argument("--save-dir", default=".", metavar="DIR",
                   help="folder for the page's saved images (SCENE-view-NNN.png/.exr)")


def _redirect_file(url):
    """A page that sends the browser on to ``url``, in a new folder only the user can read
    -> its path. Opening it instead of ``url`` keeps the token off the browser's command
    line (``/proc/PID/cmdline`` is readable by every user)."""
    import html
    import pathlib
    import tempfile
    folder = pathlib.Path(tempfile.mkdtemp(prefix="raytrace-view-"))      # mode 0700
    page = folder / "open.html"
    target = html.escape(url, quote=True)
    fd = os.open(page, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(f'<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={target}">'
                f'<title>raytrace view</title><p><a href="{target}">raytrace view</a></p>\n')
    return page


def _remove_redirect(page):
    if page is not None:
        import shutil
        shutil.rmtree(page.parent, ignore_errors=True)


def _open_browser(url):
    """Open ``url`` in the user's browser where there is a screen (a terminal browser
    would take over the terminal the notices go to), through :func:`_redirect_file` ->
    that file's path (removed when the preview stops), or None."""
    import threading
    import webbrowser
    if sys.platform not in ("darwin", "win32") and not (os.environ.get("DISPLAY") or
                                                        os.environ.get("WAYLAND_DISPLAY")):
        print("raytrace view: no display found: open the address above in a browser", file=sys.stderr)
        return None
    page = _redirect_file(url)
    threading.Thread(target=webbrowser.open, args=(page.as_uri(),), daemon=True).start()
    return page


def run(args):
    """Body of ``raytrace view``: serves until Ctrl-C, which ends the process with status
    130 (:func:`_stop`)."""
    import pathlib

    from ..settings import check_overrides, option_errors
    overrides = {"spp": args.spp, "integrator": args.integrator}
    if args.size:
        overrides["width"], overrides["height"] = args.size
    with option_errors():
        check_overrides(overrides)
    if not 0 <= args.port <= 65535:
        raise SceneError("--port", f"must be within 0 .. 65535, got {args.port}")
    scene = pathlib.Path(args.scene)
    if not scene.is_file():
        raise SceneError(None, "not a regular file" if scene.exists() else "file not found", file=str(scene))
    save_dir = pathlib.Path(args.save_dir)
    if not save_dir.is_dir():
        raise SceneError("--save-dir", f"{save_dir} is not a folder")

    from .server import ViewServer
    from .session import Session
    try:
        server = ViewServer(args.port, save_dir)          # the port first: a taken one costs nothing
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise SceneError("--port", f"127.0.0.1:{args.port} is in use (--port 0 picks a free one)") from None
        if exc.errno == errno.EACCES:
            raise SceneError("--port", f"127.0.0.1:{args.port}: permission denied (ports below 1024 need "
                                       "root)") from None
        raise
    session = None
    server.redirect = None
    try:
        server.session = session = Session(scene, overrides, log=sys.stderr)
        print(f"raytrace view: {server.url} ({scene}; Ctrl-C to stop)", file=sys.stderr, flush=True)
        if not args.no_browser:
            server.redirect = _open_browser(server.url)
        server.serve_forever(poll_interval=0.25)
    except KeyboardInterrupt:
        _stop(server)
    finally:
        server.stopping.set()
        server.server_close()
        _remove_redirect(server.redirect)
        if session is not None:
            session.close()
    return 0


def _stop(server):
    """Ctrl-C: release the port, let a save that is being written finish (at most a
    second), say so and end the process with status 130 at once. The render thread may be
    inside a kernel call, which cannot be interrupted, and the kernels' row threads would
    hold a normal exit until the call ends: the process ends without waiting for them
    (every file it writes is complete or absent, see :mod:`raytrace.view.savefile`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)        # a second Ctrl-C changes nothing now
    server.stopping.set()
    server.server_close()
    _remove_redirect(getattr(server, "redirect", None))
    if server.saving.acquire(timeout=1.0):
        server.saving.release()
    print("raytrace view: stopped", file=sys.stderr, flush=True)
    sys.stdout.flush()
    os._exit(130)
