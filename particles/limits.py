"""Limits on what a run may ask for, one check for library arguments and options.

Counts go through :func:`count` (integers, or floats with an integral value, in a
range), sizes through :func:`memory`, which refuses a request whose estimate is above
``userio.limits.MEMORY_LIMIT`` and says the estimate. Errors are
:class:`~particles.errors.ParticlesError` ``where: name: message``.
"""
import math

import numpy as np
from userio.limits import check_memory, check_number

from .errors import ParticlesError

MAX_STEPS = 100_000_000
"""Most steps one run may take (about 25 minutes of rk4 on the circle)."""
MAX_GRID = 1024
"""Most particles along one side of a cloth (a million in all; building one takes
seconds, simulating it minutes per thousand steps)."""
PARTICLE_BYTES = 600
"""Memory per cloth particle: state, masses, about 12 springs with their rest lengths,
stiffnesses and damping, two triangles, the implicit solver's vectors."""
TOL_RANGE = (1e-13, 1.0)
"""rk45 tolerances: tighter ones take millions of sub-steps per step."""


def short(value, limit=60):
    """``repr(value)`` cut to ``limit`` characters, for one-line messages."""
    try:
        text = repr(value)
    except RecursionError:
        text = "a deeply nested value"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _factory(where):
    def make(name, message, file=None):
        return ParticlesError(where, f"{name}: {message}" if name else message, file)
    return make


def count(value, where, name, lo=0, hi=None):
    """``value`` as an int in [lo, hi]: integers and integral floats (``5.0``) only."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ParticlesError(where, f"{name}: must be an integer, got {short(value)}")
    if value < lo or (hi is not None and value > hi):
        bound = f">= {lo}" if value < lo else f"<= {hi}"
        raise ParticlesError(where, f"{name}: must be {bound}, got {value}")
    return int(value)


def number(value, where, name, lo=None, hi=None, lo_open=False):
    """``value`` as a finite float in [lo, hi] (``lo_open``: > lo)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ParticlesError(where, f"{name}: must be a number, got {short(value)}")
    try:
        float(value)
    except OverflowError:                      # an int beyond the float range
        raise ParticlesError(where, f"{name}: must be a finite number, "
                             f"got {short(value)}") from None
    return check_number(value, name, lo, hi, lo_open, error=_factory(where))


def memory(nbytes, where, what):
    """Refuse a request of ``nbytes`` over the limit, with the estimate in the message."""
    check_memory(nbytes, what, error=_factory(where))
