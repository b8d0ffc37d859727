"""Which files a scene is made of, and noticing when one of them changes.

A scene is its file plus every asset the loader reads: meshes, their MTL files and
textures, glTF buffers and images, skeletons, cube maps. :func:`files_read` records the
files opened for reading while a function runs (Python's audit events, PEP 578: every
``open`` of the loader and the image and mesh libraries it calls goes through them). It
also guards them: before each such file is opened, it is looked at (``stat``, which never
blocks), and a file that is not a regular one (a FIFO, a device such as ``/dev/zero``, a
socket) or is larger than :data:`MAX_FILE_BYTES` is refused with one line instead of
being opened, so that loading never waits on a pipe or reads without end. It then
:func:`named_files` adds every string in the scene dict that names an existing file
relative to the scene's folder (for readers that open files outside Python, such as
OpenEXR's). Python's own modules, compiled kernels and caches are not assets.

:class:`Watcher` polls the files' ``(mtime_ns, size, inode)`` every ``interval`` seconds
(default 0.1 s): polling sees an editor's save-by-rename, needs no platform service, and
a scene has tens of files, not thousands, so the cost is a few ``stat`` calls.
"""
import os
import pathlib
import stat
import sys
import threading

# Files opened while loading that are never the user's assets: code, caches, compiled kernels.
_NOT_ASSETS = (".py", ".pyc", ".so", ".nbi", ".nbc", ".nbk", ".pth", ".typed")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
MAX_FILE_BYTES = 1 << 30             # the largest file of a scene the preview reads (1 GiB)
_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))

_recording = threading.local()       # .paths: the set being filled on this thread, or absent
_hook_lock = threading.Lock()
_hook_installed = []                 # [True] once the audit hook is in place (it cannot be removed)


def _audit(event, args):
    if event != "open":
        return
    paths = getattr(_recording, "paths", None)
    if paths is None:
        return
    path, mode, flags = args
    if isinstance(path, int) or path is None:
        return
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return
    if mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS:
        return
    name = os.fspath(path) if not isinstance(path, bytes) else os.fsdecode(path)
    paths.add(name)
    problem = _refusal(name)
    if problem is not None:
        from ..errors import SceneError
        error = SceneError(None, problem, file=name)
        if _recording.refused is None:
            _recording.refused = error
        raise error


def _refusal(name):
    """Why the file ``name`` is not to be opened (one line), or None: it is not a regular
    file, or it is larger than :data:`MAX_FILE_BYTES`. Code, Python's own files and
    ``os.devnull`` are let through; a file that cannot be looked at is left to ``open``."""
    if name == os.devnull or name.endswith(_NOT_ASSETS):
        return None
    absolute = pathlib.Path(os.path.abspath(name))
    if any(d == absolute or d in absolute.parents for d in _recording.system):
        return None
    try:
        st = os.stat(name)
    except (OSError, ValueError):
        return None
    for test, kind in _KINDS:
        if test(st.st_mode):
            return f"{kind}, not a regular file: the preview reads regular files only"
    if st.st_size > MAX_FILE_BYTES:
        from userio.limits import human_bytes
        return (f"{human_bytes(st.st_size)}, more than the {human_bytes(MAX_FILE_BYTES)} the preview "
                "reads from one file")
    return None


def _install_hook():
    with _hook_lock:
        if not _hook_installed:
            sys.addaudithook(_audit)
            _hook_installed.append(True)


def _system_dirs():
    """Folders whose files are never assets: the interpreter's (standard library,
    site-packages, the venv), the code folders of this project's packages and the
    kernel cache (``raytrace.jit.cache``: compiled kernels and their records)."""
    from ..jit import cache
    root = pathlib.Path(__file__).resolve().parents[2]
    dirs = {pathlib.Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    dirs.update(root / name for name in ("raytrace", "userio", "curves", "skinning", "particles"))
    if cache.store() is not None:
        dirs.add(cache.store().parent.resolve())
    return dirs


def _is_asset(path, system):
    if path.suffix.lower() in _NOT_ASSETS or any(part == "__pycache__" or part.endswith((".egg-info", ".dist-info"))
                                                  for part in path.parts):
        return False                    # code, and package metadata (plug-in entry points)
    if any(d == path or d in path.parents for d in system):
        return False
    return path.is_file()


def files_read(function, *args, **kwargs):
    """Call ``function(*args, **kwargs)`` and return ``(its result or None, the set of
    resolved paths of asset files this thread opened for reading meanwhile, the
    exception it raised or None)``. Files opened before an exception are returned too,
    so a scene that fails to load is still watched. A file refused by the guard (module
    docstring) is the exception, whatever the function made of it."""
    _install_hook()
    system = _system_dirs()
    _recording.system, _recording.refused, _recording.paths = system, None, set()
    result = error = None
    try:
        result = function(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - handed back to the caller, which reports it
        error = exc
    finally:
        opened, refused, _recording.paths = _recording.paths, _recording.refused, None
    if refused is not None:
        result, error = None, refused
    found = set()
    for p in opened:
        try:
            path = pathlib.Path(p).resolve()
        except (OSError, RuntimeError, ValueError):
            continue
        if _is_asset(path, system):
            found.add(path)
    return result, found, error


def named_files(data, base_dir):
    """Resolved paths of the existing files named by strings anywhere in the scene dict
    ``data`` (relative to ``base_dir``, or absolute), other than Python's and this
    project's own files (a ``$schema`` entry names the shipped schema)."""
    found = set()
    system = _system_dirs()
    stack = [data]
    base = pathlib.Path(base_dir)
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and 0 < len(item) < 4096 and ("." in item or "/" in item):
            try:
                path = (base / item).resolve()
                if _is_asset(path, system):
                    found.add(path)
            except (OSError, RuntimeError, ValueError):
                continue
    return found


def _stamp(path):
    try:
        st = os.stat(path)
    except OSError:
        return None                     # missing (an editor between delete and rename)
    return st.st_mtime_ns, st.st_size, st.st_ino


class Watcher:
    """Polls ``paths`` on a thread of its own and calls ``on_change(changed_paths)`` when
    any of them is modified, replaced, created or deleted. :meth:`watch` replaces the set
    (taking its current state as unchanged); :meth:`close` stops the thread."""

    def __init__(self, on_change, interval=0.1):
        self.on_change = on_change
        self.interval = interval
        self._lock = threading.Lock()
        self._stamps = {}
        self.polls = 0                  # polls made so far
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="raytrace-view-watch", daemon=True)
        self._thread.start()

    @property
    def paths(self):
        with self._lock:
            return sorted(self._stamps)

    def watch(self, paths, stamps=None):
        """Watch ``paths`` from now on. ``stamps`` (path -> stamp taken before the files
        were read) makes a change made while they were being read count as a change."""
        new = {pathlib.Path(p): (stamps or {}).get(pathlib.Path(p), _stamp(p)) for p in paths}
        with self._lock:
            self._stamps = new

    def _run(self):
        while not self._stop.wait(self.interval):
            with self._lock:
                current = dict(self._stamps)
            changed = [p for p, old in current.items() if _stamp(p) != old]
            self.polls += 1
            if not changed:
                continue
            with self._lock:
                for p in changed:
                    if p in self._stamps:
                        self._stamps[p] = _stamp(p)
            self.on_change(changed)

    def close(self):
        self._stop.set()
        self._thread.join(timeout=5)


def stamps(paths):
    """path -> its current stamp, for :meth:`Watcher.watch`'s ``stamps``."""
    return {pathlib.Path(p): _stamp(p) for p in paths}
