"""Input files that must be regular files: what a path is, looked at with ``os.stat``
before anything opens it.

A folder, a FIFO (opening one for reading blocks until someone writes to it), a device
(``/dev/zero`` never ends) or a socket is not a file to read: :func:`check_regular_file`
says which it is in one line, instead of "file not found" or a reader that hangs or
fills the memory. Links are followed: a link to ``/dev/zero`` is a character device, and
the message names the link's target.
"""
import os
import stat

from .errors import UserError

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def file_kind(path):
    """(os.stat_result or None, words): ``None, "missing"`` for a path that does not exist
    (or a broken link), ``st, None`` for a regular file, else ``st, "a folder"`` /
    ``"a FIFO"`` / ``"a character device"`` ... (``"a link to /dev/zero, a character
    device"`` for a link). Never opens the path."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None, "missing"
    except (NotADirectoryError, ValueError):       # a parent that is a file; a NUL in the name
        return None, "missing"
    if stat.S_ISREG(st.st_mode):
        return st, None
    kind = next((words for test, words in _KINDS if test(st.st_mode)), "not a regular file")
    if os.path.islink(path):
        kind = f"a link to {os.path.realpath(path)}, {kind}"
    return st, kind


def check_regular_file(path, what, where=None, error=UserError, file=None, missing=None):
    """``os.stat(path)`` of a regular file, else ``error(where, message, file=file)``:
    ``missing`` (default ``"{what} file not found: {path}"``) when nothing is there,
    ``"{what} {path} is a folder, not a file"`` or ``"{what} {path} is not a regular
    file (a FIFO)"`` otherwise. Other OS errors (permissions) are left to the reader."""
    try:
        st, kind = file_kind(path)
    except OSError:
        return None
    if st is None:
        raise error(where, missing or f"{what} file not found: {path}", file=file)
    if kind == "a folder":
        raise error(where, f"{what} {path} is a folder, not a file", file=file)
    if kind is not None:
        raise error(where, f"{what} {path} is not a regular file ({kind})", file=file)
    return st
