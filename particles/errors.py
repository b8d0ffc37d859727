"""Errors for bad particle-simulation input.

Every problem with user input is a :class:`ParticlesError`, a ``ValueError`` whose message
names the offending parameter, e.g.::

    simulate: dt: must be a finite number > 0, got -0.005

A simulation whose state stops being finite (an explicit integrator run above its stable
step size) raises :class:`UnstableSimulationError`, a subclass, naming the step and time.
"""
from userio.errors import UserError


class ParticlesError(UserError):
    """Bad input to a particles function. ``where`` is the function/parameter name;
    ``file`` the user's file, when the value came from one (None otherwise). A
    :class:`userio.UserError`: the command line prints it on one line, exit status 2."""

    def __init__(self, where, message, file=None):
        super().__init__(where, message, file=file)


class UnstableSimulationError(ParticlesError):
    """The state blew up (NaN, inf or absurdly large) during a simulation."""

    def __init__(self, where, message, step, t):
        self.step = step
        self.t = t
        super().__init__(where, message)
