"""Writing a run's output files all or nothing.

A command that writes several files (an image plus its depth and normal images, a
simulation plus its meshes) checks every output path *before* the long work starts,
then writes each file to a temporary name beside its target, and renames them into place
only when every one was written. A failure anywhere leaves every file that existed before
untouched and no temporary behind. Error messages name the user's path, never the
temporary one.

    outs = Outputs()
    outs.add("out.png", "-o")                  # checked now: folder exists, not a folder...
    outs.add("depth.png", "--depth")
    ... long work ...
    outs.set("out.png", png_bytes)
    outs.set("depth.png", depth_bytes)
    outs.commit()                              # all renamed, or none
"""
import os
import pathlib
import tempfile

from .errors import UserError


def output_mode():
    """The mode every output file gets: ``0666`` less the umask (what ``open`` would give;
    ``mkstemp`` makes temporaries ``0600``)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def check_output_path(path, option=None, suffixes=None, error=UserError, what="file"):
    """Raise ``error`` (bad input, exit 2) when ``path`` cannot be an output file: it is a
    folder, a folder on its way is a file, it or its folder is not writable, or its
    suffix is not one of ``suffixes`` (lower-case, with the dot). ``option`` names the
    flag (``-o``), ``what`` the kind of file in the message (``image``)."""
    p = pathlib.Path(path)
    if suffixes is not None and p.suffix.lower() not in suffixes:
        raise error(option, f"unsupported {what} format {p.suffix or '(none)'!r} "
                    f"(use {' or '.join(suffixes)})", file=str(path))
    if p.is_dir():
        raise error(option, "is a folder, not a file name", file=str(path))
    parent = p.parent
    # walk up to the first existing ancestor: it must be a folder (we create the rest)
    while not parent.exists():
        if parent == parent.parent:
            break
        parent = parent.parent
    if parent.exists() and not parent.is_dir():
        raise error(option, f"cannot create it: {parent} is a file, not a folder", file=str(path))
    if p.exists() and not os.access(p, os.W_OK):
        raise error(option, "exists and is not writable", file=str(path))
    if parent.exists() and not os.access(parent, os.W_OK | os.X_OK):
        raise error(option, f"folder {parent} is not writable", file=str(path))


class _Named(OSError):
    """An OSError that names the user's path (``user_path``) instead of a temporary."""


def _rename_error(exc, user_path):
    err = _Named(exc.errno, exc.strerror or str(exc))
    err.filename = str(user_path)
    err.user_path = str(user_path)
    return err


def write_bytes_atomic(path, data):
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename.
    Errors name ``path``."""
    staged = _stage(pathlib.Path(path), data)
    _commit_one(staged, pathlib.Path(path))


def _stage(path, data):
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _rename_error(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, output_mode())            # mkstemp makes 0600
    except BaseException as exc:
        _unlink(tmp)
        if isinstance(exc, OSError):
            raise _rename_error(exc, path) from None
        raise
    return tmp


def _commit_one(tmp, path):
    try:
        os.replace(tmp, path)
    except BaseException as exc:
        _unlink(tmp)
        if isinstance(exc, OSError):
            raise _rename_error(exc, path) from None
        raise


def _unlink(tmp):
    try:
        os.unlink(tmp)
    except OSError:
        pass


class Outputs:
    """The output files of one run (see the module docstring)."""

    def __init__(self, error=UserError):
        self._paths = []          # in the order added
        self._data = {}
        self._error = error

    def add(self, path, option=None, suffixes=None, what="file"):
        """Declare an output and check its path now (before any work)."""
        check_output_path(path, option, suffixes, self._error, what)
        key = os.path.abspath(path)
        for other in self._paths:
            if os.path.abspath(other[0]) == key:
                raise self._error(option, f"the same file is also given to {other[1]}", file=str(path))
        self._paths.append((str(path), option))
        return path

    def set(self, path, data):
        """The bytes of a declared output."""
        self._data[os.path.abspath(path)] = bytes(data)

    def commit(self):
        """Write every declared output that has data: all are staged to temporaries first,
        then renamed; on any failure nothing is renamed and the temporaries are removed."""
        staged = []
        try:
            for path, _ in self._paths:
                data = self._data.get(os.path.abspath(path))
                if data is not None:
                    staged.append((_stage(pathlib.Path(path), data), path))
        except BaseException:
            for tmp, _ in staged:
                _unlink(tmp)
            raise
        done = 0
        try:
            for tmp, path in staged:
                _commit_one(tmp, pathlib.Path(path))
                done += 1
        finally:
            for tmp, _ in staged[done + 1:]:
                _unlink(tmp)
        return [p for _, p in staged]
