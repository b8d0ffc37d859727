"""Saving the preview's images under a new name: nothing is ever replaced.

:func:`write_new` writes the data to a temporary file of its own in the folder (created
exclusively, ``O_EXCL``), then gives it the first free name of a numbered pattern with a
hard link. ``link`` fails when the name exists, whatever it is (a file another program
has just created, a dangling symlink): the name is taken atomically, the next number is
tried, and no symlink is ever followed or replaced. The name appears only once the file
is complete. Where the file system has no hard links, the name is created exclusively
(``O_EXCL | O_NOFOLLOW``) and the data written into it.
"""
import errno
import os
import pathlib
import secrets

MAX_NUMBER = 999_999
_NO_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS}
_EXCLUSIVE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _fill(path, data):
    """Create ``path`` exclusively and write ``data`` to it (FileExistsError when it exists)."""
    fd = os.open(path, _EXCLUSIVE, 0o666)          # less the umask, as open() gives
    try:
        _write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(path)
        raise
    os.close(fd)


def write_new(folder, prefix, suffix, data):
    """Write ``data`` (bytes) to ``folder / f"{prefix}{k:03d}{suffix}"`` for the smallest
    k >= 1 whose name is free, never replacing anything (module docstring) -> the path."""
    folder = pathlib.Path(folder)
    tmp = folder / f".{prefix}{secrets.token_hex(8)}{suffix}.tmp"
    _fill(tmp, data)
    try:
        for k in range(1, MAX_NUMBER + 1):
            path = folder / f"{prefix}{k:03d}{suffix}"
            try:
                os.link(tmp, path, follow_symlinks=False)
                return path
            except FileExistsError:
                continue
            except OSError as exc:
                if exc.errno not in _NO_LINKS:
                    raise
            try:                                  # no hard links here: an exclusive create
                _fill(path, data)
                return path
            except FileExistsError:
                continue
        raise FileExistsError(errno.EEXIST, f"every number up to {MAX_NUMBER} is taken",
                              str(folder / f"{prefix}{MAX_NUMBER}{suffix}"))
    finally:
        os.unlink(tmp)
