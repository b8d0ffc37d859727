"""Sizes that a file or a command-line option may ask for: one check for both.

A ``.swp`` file's STEPS and the options ``--samples`` / ``--resolution`` go through
:func:`check_steps`; the number of curve samples or mesh vertices they lead to goes
through :func:`check_samples` / :func:`check_vertices`, which refuse a request whose
memory estimate is over ``userio.limits.MEMORY_LIMIT`` and say the estimate.
``error`` is the error factory (``userio`` convention ``error(where, message,
file=...)``): a ``UserError`` for options, ``errors.line_error(path, line)`` for values
read from a file.
"""
from userio.errors import UserError
from userio.limits import check_int, check_memory

MAX_STEPS = 100_000
"""Largest number of intervals per curve piece, angular steps or patch side."""
MAX_FRAMES = 10_000
"""Largest number of frames drawn along one curve."""
SAMPLE_BYTES = 400
"""Memory per curve sample while sampling and drawing it (points, derivatives, frames)."""
VERTEX_BYTES = 200
"""Memory per mesh vertex: position, normal, two triangles and the welding scratch."""


def check_steps(value, name, lo=1, error=UserError, hi=MAX_STEPS):
    """``value`` as an int in [lo, hi]."""
    return check_int(value, name, lo, hi, error=error)


def check_samples(count, what, error=UserError, name=None):
    """Refuse ``count`` curve samples when they would not fit in memory."""
    check_memory(int(count) * SAMPLE_BYTES, what, name=name, error=error)


def check_vertices(count, what, error=UserError, name=None):
    """Refuse a mesh of ``count`` vertices when it would not fit in memory."""
    check_memory(int(count) * VERTEX_BYTES, what, name=name, error=error)
MIN_DPI, MAX_DPI = 20, 1200
"""Resolution of ``plot`` pictures (the figure is 7 x 6 inches: 8400 x 7200 pixels at most)."""
MAX_PREVIEW_TRIANGLES = 2_000_000
"""Largest shaded preview ``plot`` draws (matplotlib draws about 100k triangles a second)."""
