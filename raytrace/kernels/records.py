"""The records that cross function boundaries inside the kernels (Numba ``NamedTuple``s:
LLVM keeps their fields in registers, so a record costs what its loose values cost).

They never reach the Python side; what does is in :mod:`raytrace.layout`. A vector is a
3-tuple (x, y, z), a colour a 3-tuple (r, g, b), world space unless a field says
*local* (the shading frame's coordinates, z along the shading normal). Names as in
``docs/path-tracing.md`` and pbrt-v4 (``SampledLight``/``LightLiSample``,
``BSDFSample``, ``MediumInteraction``).
"""
from typing import NamedTuple


class PathSampler(NamedTuple):
    """Where a path is in its sequence of random numbers (:mod:`raytrace.kernels.sampler`):
    the numbers are a function of (seed, pixel, sample, dimension) only. ``dim`` is the
    next 2-D dimension group of the pixel's sample; ``stream`` counts the numbers drawn
    from the path's independent stream (delta and ratio tracking's further numbers); at
    ``sampler.STREAM_CAP`` the path reached the media step cap."""
    kind: int         # layout.INDEPENDENT or layout.SOBOL
    seed: int
    pixel: int
    sample: int
    dim: int
    stream: int


class LightSample(NamedTuple):
    """Next-event estimation's light sample from a point p: ``ok`` False for no sample
    (nothing faces p, a zero pdf); ``wi`` unit direction from p towards the light;
    ``dist`` to the light point (``inf``: a direction: environment, directional light);
    ``radiance`` arriving at p along -wi (unoccluded); ``pdf`` per unit solid angle,
    times the light's selection probability (a delta light: the probability alone)."""
    ok: bool
    wi: tuple
    dist: float
    radiance: tuple
    pdf: float
    delta: bool


class BSDFSample(NamedTuple):
    """A sampled continuation of a path at a surface: ``ok`` False when the sample failed
    or leaves through the wrong side of the true surface (the path ends); ``wo`` unit world
    direction; ``weight`` f cos / pdf; ``pdf`` per unit solid angle (inf-free: a delta
    lobe's is its selection probability); ``delta`` a specular lobe; ``eta`` the relative
    index crossed (1 for reflection); ``side`` > 0 when wo leaves on the arrival side of
    the true normal."""
    ok: bool
    wo: tuple
    weight: tuple
    pdf: float
    delta: bool
    eta: float
    side: float


class ShadingPoint(NamedTuple):
    """A surface hit seen from the ray that found it, on the side it arrives from
    (``kernels.path.arriving_side``): ``ok`` False when neither normal faces the ray;
    ``ng`` the true normal and ``frame`` (t, b, n) the shading frame, both on that side;
    ``wi`` the direction back along the ray, *local*; ``entering`` the ray came from the
    front side; ``mat`` material row, ``eta`` the relative index across the surface for
    this ray; ``emit`` emitter row or -1; ``front`` cos between -ray and the front
    normal (> 0: the emitting side is seen)."""
    ok: bool
    ng: tuple
    frame: tuple
    wi: tuple
    entering: bool
    mat: int
    eta: float
    emit: int
    front: float


class MediumEvent(NamedTuple):
    """A free flight through a medium up to the next surface at ``tmax``
    (``kernels.media``): ``scattered`` a real collision at distance ``t`` (else t = tmax,
    the surface is reached); ``beta`` the factors of the path throughput (hero channel's
    f / p); ``ratio`` the factors of the other channels' path densities relative to the
    hero's (spectral MIS)."""
    scattered: bool
    t: float
    beta: tuple
    ratio: tuple
