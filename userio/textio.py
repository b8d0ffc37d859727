"""Reading the user's text files: UTF-8 (a BOM is accepted), errors that name the file.

A binary file (a PNG passed as a scene) or a file in another encoding gives a
:class:`~userio.errors.UserError` with the line and byte offset of the first bad byte,
never a ``UnicodeDecodeError`` traceback.
"""
import pathlib

from .errors import UserError


def parse_json(text, path, error=UserError):
    """``json.loads(text)`` with every failure as one ``error`` naming ``path``: syntax
    errors with line and column, nesting too deep for Python, integers too long."""
    import json
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}",
                    file=str(path)) from None
    except RecursionError:
        raise error(None, "invalid JSON: nested too deeply", file=str(path)) from None
    except ValueError as exc:                # e.g. an integer of more than 4300 digits
        raise error(None, f"invalid JSON: {str(exc).splitlines()[0]}", file=str(path)) from None


def read_json(path, what="file", error=UserError):
    """A UTF-8 JSON file parsed, every failure as one ``error`` naming the file."""
    return parse_json(read_text(path, what, error), path, error)


def read_text(path, what="file", error=UserError):
    """The text of ``path`` (str). ``error`` is the UserError subclass to raise.

    Missing file or a folder: bad input (``error``); other OS errors (permissions) are
    re-raised as OSError with the user's path so the CLI exits with status 1."""
    from .reads import note
    p = pathlib.Path(path)
    note(p)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise error(None, f"{what} not found", file=str(path)) from None
    except IsADirectoryError:
        raise error(None, f"is a folder, not a {what}", file=str(path)) from None
    return decode_text(data, path, error)


_MAGIC = (b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"%PDF", b"PK\x03\x04", b"\x7fELF", b"glTF")


def looks_binary(data):
    """True for data that is not text in any encoding: a NUL byte or many control
    characters early on, or the magic number of a common binary format."""
    head = data[:4096]
    if b"\0" in head or head.startswith(_MAGIC):
        return True
    control = sum(1 for b in head[:512] if b < 9 or 13 < b < 32)
    return control > 0.1 * max(1, len(head[:512]))


def decode_text(data, path, error=UserError):
    """Decode bytes read from ``path`` as UTF-8 (with or without a BOM)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        byte = f"byte 0x{data[exc.start]:02x} at offset {exc.start}"
        if looks_binary(data):
            raise error(None, f"a binary file, not text ({byte})", file=str(path)) from None
        raise error(f"line {line}", f"not UTF-8 text ({byte}); save it as UTF-8", file=str(path)) from None
    if "\0" in text:
        line = text.count("\n", 0, text.index("\0")) + 1
        raise error(f"line {line}", "a binary file (NUL byte), not text", file=str(path))
    return text
