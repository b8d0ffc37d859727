"""Where raytrace's compiled kernels live on disk: private folders, checked before use.

The cache holds pickles, and loading a pickle runs code, so a folder is used only when
nobody else can have put files in it:

- every folder this module makes is created with mode ``0700``;
- before anything is read from a folder, it and the folders above it up to the base are
  checked (``lstat``, links are not followed): a real directory, owned by this user,
  writable by nobody else; the base's parent must not let other users rename entries
  (not group/other-writable, unless sticky like ``/tmp``);
- a folder of ours found with a wider mode (one an older version made) is narrowed to
  ``0700``; one owned by someone else, a link, or a file where a folder should be is
  refused with the reason, and raytrace then keeps its kernels in memory only.

The base is ``$NUMBA_CACHE_DIR/raytrace-numba`` when that variable is set, else
``~/.cache/raytrace-numba``, else (an unwritable home) ``<tmp>/raytrace-numba-<uid>``.
Only raytrace's own kernels use it: Numba's configuration is never changed, so the
host program's ``@njit(cache=True)`` functions cache where they always did.
"""
import os
import pathlib
import stat
import tempfile

MODE = 0o700


class UnsafeFolder(OSError):
    """A folder that may not be trusted (its message says why)."""


def bases():
    """The candidate base folders, in order of preference."""
    env = os.environ.get("NUMBA_CACHE_DIR")
    uid = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    home = pathlib.Path(env) if env else pathlib.Path.home() / ".cache"
    return [home / "raytrace-numba", pathlib.Path(tempfile.gettempdir()) / f"raytrace-numba-{uid}"]


def check(folder):
    """Raise :class:`UnsafeFolder` unless ``folder`` is a real directory owned by this
    user and writable by nobody else (narrowing a wider mode of our own to ``0700``)."""
    try:
        info = os.lstat(folder)
    except OSError as exc:
        raise UnsafeFolder(f"{folder}: {exc.strerror}") from exc
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeFolder(f"{folder} is a symbolic link")
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeFolder(f"{folder} is not a folder")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise UnsafeFolder(f"{folder} belongs to user {info.st_uid}, not to this user ({os.getuid()})")
    if stat.S_IMODE(info.st_mode) != MODE:
        os.chmod(folder, MODE)
        if stat.S_IMODE(os.lstat(folder).st_mode) & 0o077:
            raise UnsafeFolder(f"{folder} is open to other users and cannot be made private")


def _check_parent(parent):
    """The base's parent: nobody else may rename entries in it (sticky or not shared)."""
    info = os.stat(parent)
    if stat.S_IMODE(info.st_mode) & 0o022 and not info.st_mode & stat.S_ISVTX:
        raise UnsafeFolder(f"{parent} is writable by other users (and not sticky)")


def private(folder):
    """Create ``folder`` (and missing parents) with mode ``0700``, then :func:`check` it;
    returns it as a Path."""
    folder = pathlib.Path(folder)
    try:
        os.mkdir(folder, MODE)
    except FileExistsError:
        pass
    except FileNotFoundError:
        private(folder.parent)
        return private(folder)
    check(folder)
    return folder


def open_base():
    """``(base folder, None)``: the first candidate of :func:`bases` that can be made
    private; ``(None, reason)`` when none can (the reasons joined)."""
    reasons = []
    for base in bases():
        try:
            base.parent.mkdir(parents=True, exist_ok=True)
            _check_parent(base.parent)
            return private(base), None
        except OSError as exc:
            reasons.append(str(exc) if isinstance(exc, UnsafeFolder) else f"{base}: {exc.strerror or exc}")
    return None, "; ".join(reasons)


def subfolder(base, *parts):
    """``base/parts...``, each level created private and checked (see :func:`private`)."""
    folder = pathlib.Path(base)
    for part in parts:
        folder = private(folder / part)
    return folder


def write_whole(path, data):
    """Write ``data`` (bytes) to ``path`` so that a reader sees all of it or nothing: a
    private temporary file in the same folder, then an atomic rename. A process killed
    mid-write leaves only a ``.tmp-`` file, which no reader opens."""
    path = pathlib.Path(path)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
