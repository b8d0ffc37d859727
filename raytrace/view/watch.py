"""Noticing when a file of a scene changes, and reading those files safely.

A scene is its file plus every asset the loader reads: meshes, their MTL files and
textures, glTF buffers and images, skeletons, environment maps, grids. The loader lists
them itself (:attr:`raytrace.scene.ready.RenderScene.files`: every reader notes the file
it opens, :mod:`userio.reads`); the preview watches that list. :func:`load_guarded`
loads with a guard on those reads: before each file is opened it is looked at (``stat``,
which never blocks), and a file that is not a regular one (a FIFO, a device such as
``/dev/zero``, a socket) or is larger than :data:`MAX_FILE_BYTES` is refused with one
line instead of being opened, so that loading never waits on a pipe or reads without
end.

:class:`Watcher` polls the files' ``(mtime_ns, size, inode)`` every ``interval`` seconds
(default 0.1 s): polling sees an editor's save-by-rename, needs no platform service, and
a scene has tens of files, not thousands, so the cost is a few ``stat`` calls.
"""
import os
import pathlib
import stat
import threading

from userio.reads import recording

MAX_FILE_BYTES = 1 << 30             # the largest file of a scene the preview reads (1 GiB)
_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def refusal(path):
    """The SceneError to raise instead of opening ``path`` (one line naming it), or None:
    it is not a regular file, or it is larger than :data:`MAX_FILE_BYTES`. A file that
    cannot be looked at is left to the reader."""
    from ..errors import SceneError
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    for test, kind in _KINDS:
        if test(st.st_mode):
            return SceneError(None, f"{kind}, not a regular file: the preview reads regular files only",
                              file=str(path))
    if st.st_size > MAX_FILE_BYTES:
        from userio.limits import human_bytes
        return SceneError(None, f"{human_bytes(st.st_size)}, more than the {human_bytes(MAX_FILE_BYTES)} the "
                                "preview reads from one file", file=str(path))
    return None


def load_guarded(load, source):
    """``load(source)`` with every file it reads guarded (:func:`refusal`) -> ``(the scene
    or None, the files to watch, the exception or None)``. The files are the scene's
    ``files``; after a failure, those read before it (so that a scene that fails to load
    is still watched). A refused file is the exception, whatever the reader made of it."""
    scene = error = None
    with recording(guard=refusal) as read:
        try:
            scene = load(source)
        except Exception as exc:  # noqa: BLE001 - handed back to the caller, which reports it
            error = exc
    if read.refused is not None:
        scene, error = None, read.refused
    files = list(scene.files) if scene is not None else read.paths
    return scene, files, error


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
