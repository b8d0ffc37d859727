"""Which files a load read: every reader of a user's file calls :func:`note` with its
path just before it opens it; :func:`recording` collects those paths for the block it
wraps (a scene's ``files``, the files the live preview watches).

Records nest (a load inside a load notes into both) and belong to the running thread
or task (:mod:`contextvars`): two loads on two threads never see each other's files.
Outside :func:`recording`, :func:`note` does nothing.

A record may carry a ``guard(path)``: called before the file is opened, it returns None
(read it) or the exception to raise instead (the preview refuses FIFOs, devices and
files over a size, :mod:`raytrace.view.watch`). The first refusal is kept on the record
(``refused``), so that the caller can report it even when a reader swallowed it.
"""
import contextlib
import contextvars
import os
import pathlib

_RECORDS = contextvars.ContextVar("userio_reads", default=())


class Record:
    """The files noted while a :func:`recording` block ran: ``paths`` (absolute
    :class:`pathlib.Path`, in the order first noted), ``refused`` (the guard's first
    refusal, or None)."""

    def __init__(self, guard=None):
        self.guard = guard
        self.paths = []
        self._seen = set()
        self.refused = None

    def add(self, path):
        p = pathlib.Path(os.path.abspath(os.fspath(path)))
        if p not in self._seen:
            self._seen.add(p)
            self.paths.append(p)


@contextlib.contextmanager
def recording(guard=None):
    """Collect the paths :func:`note`\\ d inside the block -> the :class:`Record`."""
    record = Record(guard)
    token = _RECORDS.set(_RECORDS.get() + (record,))
    try:
        yield record
    finally:
        _RECORDS.reset(token)


def note(path):
    """A reader is about to open ``path`` for reading: add it to every open record, and
    raise the first guard's refusal, if any (a string path and a ``Path`` alike)."""
    for record in _RECORDS.get():
        record.add(path)
        if record.guard is not None:
            error = record.guard(path)
            if error is not None:
                if record.refused is None:
                    record.refused = error
                raise error
