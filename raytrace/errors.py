"""The one exception type for bad user input in ``raytrace``.

A ``SceneError`` carries the file, the JSON path (or line number) and a message, and
prints as ``scene.json: objects[3].radius: must be > 0``. It is a
:class:`userio.UserError`: the CLI prints it on one line and exits with status 2,
without a traceback.
"""
from userio.errors import UserError


class SceneError(UserError):
    """Bad input. ``where`` is a JSON path like ``objects[3].radius`` or ``line 12``."""
