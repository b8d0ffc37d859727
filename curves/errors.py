"""The one exception type for bad curve input files, and reading those files as text."""
import contextlib
import json
import pathlib

from userio.errors import UserError
from userio.textio import decode_text


class CurveFileError(UserError):
    """A course file (``.spline``, ``.swp``, patch JSON) that cannot be read.

    Prints as ``path/file.spline: line 3: expected 3 numbers, got 2``. ``path`` and
    ``line`` are kept as attributes (``line`` is 1-based, or None when the problem is
    with the file as a whole). A :class:`userio.UserError`: the command line prints it
    on one line and exits with status 2.
    """

    def __init__(self, path, line, message):
        self.line = line
        super().__init__(None if line is None else f"line {line}", message, file=path)

    @property
    def path(self):
        """The user's file (str), or None."""
        return self.file


def shown(text, limit=40):
    """``repr(text)`` cut to about ``limit`` characters, for quoting the user's tokens."""
    text = str(text)
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


def curve_error(where, message, file=None):
    """A :class:`CurveFileError` built the way ``userio`` helpers build errors
    (``error(where, message, file=...)``): a ``where`` of ``"line N"`` becomes the line."""
    if isinstance(where, str) and where.startswith("line ") and where[5:].isdigit():
        return CurveFileError(file, int(where[5:]), message)
    return CurveFileError(file, None, message if where in (None, "") else f"{where}: {message}")


def line_error(path, line, field=None):
    """An error factory for ``userio.limits`` checks of a value read at ``line`` of
    ``path``; ``field`` (e.g. ``"STEPS"``) replaces the checker's own name."""
    def make(where, message, file=None):
        name = field or where
        return CurveFileError(path, line, message if name in (None, "") else f"{name}: {message}")
    return make


def read_text_file(path):
    """The text of ``path`` (UTF-8, a BOM is accepted).

    A missing file, a folder, a binary file or one in another encoding: a
    :class:`CurveFileError` naming the file (and the line of the first bad byte). Other
    OS errors (permissions) stay ``OSError`` (the command line exits with status 1).
    """
    from userio.reads import note
    note(path)
    try:
        data = pathlib.Path(path).read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as e:
        raise CurveFileError(path, None, f"cannot read: {e.strerror or e}") from None
    except OSError as e:                  # an I/O failure: exit status 1, naming the file
        if e.filename is None:
            e.filename = str(path)
        raise
    return decode_text(data, path, curve_error)


def parse_json_text(text, path):
    """``json.loads(text)`` with every failure as one :class:`CurveFileError` naming
    ``path``: syntax errors (with the line), nesting too deep for Python's parser,
    integers too long to convert."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise CurveFileError(path, e.lineno, f"invalid JSON: {e.msg}") from None
    except RecursionError:
        raise CurveFileError(path, None, "invalid JSON: nested too deeply") from None
    except ValueError as e:           # e.g. an integer with more than 4300 digits
        raise CurveFileError(path, None, f"invalid JSON: {str(e).split(';')[0]}") from None


@contextlib.contextmanager
def about(path, line, what):
    """Turn a ``ValueError`` raised by the geometry code (a curve that stops, a profile
    that crosses the axis) into a :class:`CurveFileError` naming ``path``, ``line`` and
    ``what`` (e.g. ``"srev 'vase'"``). Errors that already name a file pass through."""
    try:
        yield
    except UserError:
        raise
    except ValueError as e:
        raise CurveFileError(path, line, f"{what}: {e}" if what else str(e)) from None
