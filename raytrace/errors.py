"""The one exception type for bad user input.

A ``SceneError`` carries the file, the JSON path (or line number) and a message, and
prints as ``scene.json: objects[3].radius: must be > 0``. The CLI prints it and exits
with status 2, without a traceback.
"""


class SceneError(ValueError):
    """Bad input. ``where`` is a JSON path like ``objects[3].radius`` or ``line 12``."""

    def __init__(self, where, message, file=None):
        self.where = where
        self.message = message
        self.file = file
        super().__init__(str(self))

    def with_file(self, file):
        """Return the same error with ``file`` filled in (when it was not known yet)."""
        if self.file is None:
            self.file = str(file)
            self.args = (str(self),)
        return self

    def __str__(self):
        parts = [p for p in (self.file, self.where) if p]
        parts.append(self.message)
        return ": ".join(str(p) for p in parts)
