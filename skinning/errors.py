"""Errors for bad skinning input, and reading the user's text and JSON files.

Every problem with a user's file is a :class:`SkinningFileError`, a ``ValueError`` whose
message names the file and the line (or JSON field), e.g.::

    Model1.attach: line 12: expected 17 weights (joints 1..17), got 16

Both classes are :class:`userio.UserError`: the command line prints them on one line
and exits with status 2.
"""
import json
import pathlib

from userio.errors import UserError
from userio.textio import decode_text


class SkinningError(UserError):
    """Bad input to a skinning function (shapes, weights, unknown joints)."""

    def __init__(self, message, where=None, file=None):
        super().__init__(where, message, file=file)


class SkinningFileError(SkinningError):
    """Bad input file. ``path`` is the file, ``where`` is ``"line 3"`` or a JSON path."""

    def __init__(self, path, where, message):
        super().__init__(message, where, path)

    @property
    def path(self):
        """The user's file (str), or None for a value given in code."""
        return self.file


def file_error(where, message, file=None):
    """A :class:`SkinningFileError` built the way ``userio`` helpers build errors
    (``error(where, message, file=...)``)."""
    return SkinningFileError(file, where, message)


def read_text_file(path):
    """The text of ``path`` (UTF-8, a BOM is accepted).

    A missing file, a folder, a binary file or one in another encoding: a
    :class:`SkinningFileError` naming the file. Other OS errors (permissions) stay
    ``OSError`` (the command line exits with status 1)."""
    from userio.reads import note
    note(path)
    try:
        data = pathlib.Path(path).read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as e:
        raise SkinningFileError(path, None, f"cannot read file ({e.strerror or e})") from None
    except OSError as e:                  # an I/O failure: exit status 1, naming the file
        if e.filename is None:
            e.filename = str(path)
        raise
    return decode_text(data, path, file_error)


def parse_json_text(text, path):
    """``json.loads(text)``; every failure is one :class:`SkinningFileError` naming
    ``path`` (syntax errors with their line, nesting too deep, over-long integers)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise SkinningFileError(path, f"line {e.lineno}", f"invalid JSON: {e.msg}") from None
    except RecursionError:
        raise SkinningFileError(path, None, "invalid JSON: nested too deeply") from None
    except ValueError as e:           # e.g. an integer with more than 4300 digits
        raise SkinningFileError(path, None, f"invalid JSON: {str(e).split(';')[0]}") from None
