"""What faces the user at the command line, shared by the four CLIs (``raytrace``,
``python -m curves``, ``python -m skinning``, ``python -m particles``).

It sits below all four packages and imports none of them, so the libraries stay
independent of ``raytrace``:

- :mod:`userio.errors`: :class:`UserError` (bad input: exit status 2) and the exit codes;
- :mod:`userio.cli`: an argparse parser that shows defaults and exit codes in ``--help``
  and :func:`run` that turns errors into one line and an exit status;
- :mod:`userio.textio`: reading text files (UTF-8, errors name the file);
- :mod:`userio.files`: what a path is (a folder, a FIFO, a device), looked at before it
  is opened, so that readers refuse it in one line instead of blocking;
- :mod:`userio.outputs`: writing every output of a run atomically, all or nothing;
- :mod:`userio.limits`: checks of counts, sizes and finiteness with messages that name
  the file and field.
"""
from .errors import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_IO, EXIT_OK, UserError

__all__ = ["UserError", "EXIT_OK", "EXIT_IO", "EXIT_BAD_INPUT", "EXIT_INTERRUPTED"]
