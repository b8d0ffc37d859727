"""The probe of :mod:`raytrace.jit.late`: a row kernel whose helper calls a kernel, run
through its late twin. :func:`run` must return :data:`EXPECTED`: the twin's result, and
whether its code calls the kernel through a bound symbol."""
from typing import NamedTuple

import numpy as np

from .roles import helper, kernel, row_kernel


class Pair(NamedTuple):
    a: float
    b: float


@kernel
def leaf(values, k, p):
    return Pair(values[k] * p.a, p.b + 1.0)


@helper
def step(values, k, p):
    return leaf(values, k, p)


@row_kernel
def rows(values, out):
    p = Pair(1.0, 0.0)
    for k in range(values.shape[0]):
        p = step(values, k, p)
    out[0] = p.a
    out[1] = p.b


EXPECTED = ((3.0, 3.0), True)


def run():
    from . import late
    twin = late.variant(rows)
    out = np.zeros(2)
    twin(np.array([2.0, 3.0, 0.5]), out)
    libraries = [cres.library for cres in twin.overloads.values()]
    return (float(out[0]), float(out[1])), any(late.needed(lib) for lib in libraries)
