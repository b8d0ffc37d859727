"""The one exception type for bad curve input files."""


class CurveFileError(ValueError):
    """A course file (``.spline``, ``.swp``, patch JSON) that cannot be read.

    Prints as ``path/file.spline: line 3: expected 3 numbers, got 2``. ``path`` and
    ``line`` are kept as attributes (``line`` is 1-based, or None when the problem is
    with the file as a whole).
    """

    def __init__(self, path, line, message):
        self.path = str(path)
        self.line = line
        self.message = message
        where = f"line {line}: " if line is not None else ""
        super().__init__(f"{self.path}: {where}{message}")


def read_text_file(path):
    """The text of ``path``; CurveFileError (naming the file) when unreadable or binary."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError as e:
        raise CurveFileError(path, None, f"cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise CurveFileError(path, None, "not a text file") from None
