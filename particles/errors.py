"""Errors for bad particle-simulation input.

Every problem with user input is a :class:`ParticlesError`, a ``ValueError`` whose message
names the offending parameter, e.g.::

    simulate: dt: must be a finite number > 0, got -0.005

A simulation whose state stops being finite (an explicit integrator run above its stable
step size) raises :class:`UnstableSimulationError`, a subclass, naming the step and time.
"""


class ParticlesError(ValueError):
    """Bad input to a particles function. ``where`` is the function/parameter name."""

    def __init__(self, where, message):
        self.where = where
        self.message = message
        super().__init__(str(self))

    def __str__(self):
        parts = [p for p in (self.where, self.message) if p]
        return ": ".join(str(p) for p in parts)


class UnstableSimulationError(ParticlesError):
    """The state blew up (NaN, inf or absurdly large) during a simulation."""

    def __init__(self, where, message, step, t):
        self.step = step
        self.t = t
        super().__init__(where, message)
