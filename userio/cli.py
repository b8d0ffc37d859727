"""The command-line plumbing of all four tools: one parser style, one error handler.

    parser = userio.cli.parser("raytrace", "Render scenes.")
    ...
    sys.exit(userio.cli.run("raytrace", main_body, args))

``run`` turns a :class:`~userio.errors.UserError` into ``prog: error: message`` and exit
status 2 (one line; an error whose ``multiline`` attribute is true, a kernel's compile
error, keeps its short block), an ``OSError`` into ``prog: error: FILE: reason`` and status 1, Ctrl-C into
status 130, always on one line and without a traceback. Argument errors from argparse
also exit with 2 (argparse's own convention). Any other exception is a bug: one line
``prog: internal error: ...`` and status 3 (``USERIO_TRACEBACK=1`` re-raises it).
"""
import argparse
import os
import sys

from .errors import (EXIT_BAD_INPUT, EXIT_HELP, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_IO, EXIT_OK,
                     UserError)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Shows ``(default: X)`` after every option that takes a value and has a real default
    (not None or False, which mean "not given"; a switch such as ``--no-shadows`` shows
    none: its default is what the switch is absent), keeps the line breaks of descriptions."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False or action.nargs == 0:
            return action.help
        return super()._get_help_string(action)


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        # argparse's usage block plus one line is its convention; keep the one line only
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def parser(prog, description, epilog=None):
    """An ArgumentParser that shows defaults and the exit codes in ``--help``."""
    text = EXIT_HELP if epilog is None else f"{epilog}\n\n{EXIT_HELP}"
    return _Parser(prog=prog, description=description, epilog=text, formatter_class=HelpFormatter)


def subparsers(p, **kw):
    """``p.add_subparsers`` whose sub-commands use the same formatter and error style."""
    sub = p.add_subparsers(parser_class=_Parser, **kw)
    add = sub.add_parser

    def add_parser(name, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        epilog = kwargs.get("epilog")
        kwargs["epilog"] = EXIT_HELP if epilog is None else f"{epilog}\n\n{EXIT_HELP}"
        return add(name, **kwargs)

    sub.add_parser = add_parser
    return sub


def os_error_line(exc):
    """``FILE: reason`` for an OSError, naming the user's file (never a temporary)."""
    name = getattr(exc, "user_path", None) or exc.filename
    reason = exc.strerror or str(exc)
    return f"{name}: {reason}" if name else reason


def one_line(text):
    """``text`` on one line: newlines and other control characters escaped (a file name
    may contain them)."""
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in str(text))


def error_text(exc):
    """The one line :func:`run` prints after ``prog: error:`` for bad input, a memory or an
    I/O failure; None for any other exception (a bug: :func:`bug_text`)."""
    if isinstance(exc, UserError):
        # a few lines by design (a kernel's compile error: the line, the code, what is wrong)
        return str(exc) if getattr(exc, "multiline", False) else one_line(exc)
    if isinstance(exc, MemoryError):
        return "out of memory (try a smaller size or count)"
    if isinstance(exc, OSError):
        return one_line(os_error_line(exc))
    return None


def bug_text(exc):
    """``Type: the first line of its message`` (at most 200 characters) of an exception
    that is a bug."""
    first = str(exc).splitlines()[0][:200] if str(exc) else ""
    return f"{type(exc).__name__}: {one_line(first)}"


class _Interrupts:
    """While in place (a ``with`` block in the main thread, where Ctrl-C is not ignored),
    SIGINT raises ``KeyboardInterrupt`` as Python's own handler does and is remembered in
    ``seen``: an error that a library made of the interrupt (NumPy's import turns it into
    an ``ImportError``: CPython's ``PyCapsule_Import`` replaces the exception) still ends
    as an interrupt."""

    def __init__(self):
        self.seen = False
        self._previous = None

    def _handler(self, signum, frame):
        self.seen = True
        raise KeyboardInterrupt

    def __enter__(self):
        import signal
        import threading
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._previous = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc):
        if self._previous is not None:
            import signal
            if signal.getsignal(signal.SIGINT) == self._handler:     # not replaced by the body meanwhile
                signal.signal(signal.SIGINT, self._previous)


def run(prog, body, *args, **kwargs):
    """Call ``body(*args, **kwargs)`` and map its outcome to an exit status.

    ``body`` returns an int status or None (0). Ctrl-C at any moment (a
    ``KeyboardInterrupt``, or whatever a library made of it) is status 130 and one line."""
    status = _outcome(prog, body, *args, **kwargs)
    if status == EXIT_INTERRUPTED:
        _forget_unhandled_interrupt()
    return status


def _forget_unhandled_interrupt():
    """Let ``python -m tool`` end with the status :func:`run` returns after a Ctrl-C.

    CPython marks a KeyboardInterrupt that ends a string ``exec``/``eval`` (dataclasses,
    namedtuples and Numba's templates run many while Numba is imported or compiles) as
    unhandled even when a caller catches it; under ``-m`` the interpreter then ends by
    SIGINT (status -2 to a parent process, 130 to a shell) instead of the status returned.
    A string evaluation clears that mark as it starts, so one that ends normally leaves
    it clear. ``tests/test_startup.py`` checks that an interrupt inside a string ``exec``
    still exits 130, and (control) that without this it does not."""
    exec("", {})   # noqa: S102 - an empty string evaluation: see the docstring


def _outcome(prog, body, *args, **kwargs):
    """:func:`run`'s exit status, before the interrupt mark is cleared."""
    interrupts = _Interrupts()
    try:
        with interrupts:
            status = body(*args, **kwargs)
    except KeyboardInterrupt:
        return _interrupted(prog)
    except (UserError, MemoryError, OSError) as exc:
        if interrupts.seen:
            return _interrupted(prog)
        print(f"{prog}: error: {error_text(exc)}", file=sys.stderr)
        return EXIT_IO if isinstance(exc, OSError) else EXIT_BAD_INPUT
    except Exception as exc:  # noqa: BLE001 - the last line of defence: a bug, said plainly
        if interrupts.seen:
            return _interrupted(prog)
        if os.environ.get("USERIO_TRACEBACK"):
            raise
        print(f"{prog}: internal error (a bug; USERIO_TRACEBACK=1 shows where): {bug_text(exc)}",
              file=sys.stderr)
        return EXIT_INTERNAL
    return EXIT_OK if status is None else int(status)


def _interrupted(prog):
    print(f"{prog}: interrupted; nothing written", file=sys.stderr)
    return EXIT_INTERRUPTED
