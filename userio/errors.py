"""Bad user input and the exit codes of every command-line tool in the project.

Exit status: 0 success; 1 an I/O failure (a file that exists could not be read or
written: permissions, a full disk); 2 bad input (a file's content, a missing input file,
a command-line option); 3 an internal error (a bug in the program: it says so in one
line; set USERIO_TRACEBACK=1 to see the traceback); 130 interrupted (Ctrl-C).
"""
EXIT_OK = 0
EXIT_IO = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130

EXIT_HELP = ("exit status: 0 success, 1 I/O failure (a file could not be read or written), "
             "2 bad input (a file's content or an option), 3 internal error (a bug), "
             "130 interrupted (Ctrl-C)")


class UserError(ValueError):
    """Bad input, printed as one line ``file: where: message`` (exit status 2).

    ``file``: the user's file (None when the problem is a command-line option or a value
    given in code); ``where``: a field inside it (a JSON path like ``objects[3].radius``,
    ``line 12``, ``accessor 4``) or an option name (``--spp``); ``message``: what is
    wrong, in words. Packages subclass it (``SceneError``, ``CurveFileError``...)."""

    def __init__(self, where, message, file=None):
        self.where = where
        self.message = message
        self.file = None if file is None else str(file)
        super().__init__(str(self))

    def with_file(self, file):
        """The same error with ``file`` filled in when it was not known yet."""
        if self.file is None and file is not None:
            self.file = str(file)
            self.args = (str(self),)
        return self

    def __str__(self):
        parts = [str(p) for p in (self.file, self.where) if p not in (None, "")]
        parts.append(str(self.message))
        return ": ".join(parts)
