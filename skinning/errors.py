"""Errors for bad skinning input.

Every problem with a user's file is a :class:`SkinningFileError`, a ``ValueError`` whose
message names the file and the line (or JSON field), e.g.::

    Model1.attach: line 12: expected 17 weights (joints 1..17), got 16
"""


class SkinningError(ValueError):
    """Bad input to a skinning function (shapes, weights, unknown joints)."""


class SkinningFileError(SkinningError):
    """Bad input file. ``path`` is the file, ``where`` is ``"line 3"`` or a JSON path."""

    def __init__(self, path, where, message):
        self.path = None if path is None else str(path)
        self.where = where
        self.message = message
        super().__init__(str(self))

    def __str__(self):
        parts = [p for p in (self.path, self.where) if p]
        parts.append(self.message)
        return ": ".join(str(p) for p in parts)
