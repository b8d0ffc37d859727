"""Cloth in an animated scene: one simulation over the whole time range, cached on disk.

Each ``cloth`` object of an animated scene is simulated once, from scene time 0 (its
initial flat shape) to the animation's ``end``, with the step

    dt' = 1 / (fps n),   n = ceil(1 / (fps dt))

(``dt`` the object's step, an upper bound): the largest step no longer than ``dt`` that
divides the frame interval, so that frame times ``k / fps`` fall on steps and frame k
shows exactly the simulation's state after ``k n`` steps. Times between steps (motion
blur) blend the two states around them linearly; times before 0 show the initial shape,
times after the range the last state.

The particle positions after every step, ``(steps + 1, n, 3)`` float64, are stored in
``<cache>/cloth-<key>.npy``, ``key`` a SHA-256 of the simulation's parameters
(:func:`raytrace.scene.objects.particles.simulation_key` with ``dt'``), the step count
and the source of the ``particles`` library, so a later run (or another process on the
same machine) loads them instead of simulating. The cache folder is
``$RAYTRACE_CACHE_DIR/simulations``, else ``~/.cache/raytrace/simulations`` (a per-user
folder in the temporary directory when the home is not writable).
"""
import hashlib
import io
import math
import os
import pathlib
import tempfile

import numpy as np
from userio.outputs import write_bytes_atomic

import particles

from ..errors import SceneError
from ..scene.objects import particles as plugin

_SOURCE_HASH = None


def step_for(dt, fps):
    """-> (dt', steps per frame n): see the module docstring."""
    n = max(1, math.ceil(1.0 / (fps * dt) - 1e-9))
    return 1.0 / (fps * n), n


def step_count(end, dt):
    """Steps from time 0 that reach ``end`` (0 when ``end <= 0``)."""
    return max(0, math.ceil(end / dt - 1e-9))


def _particles_source_hash():
    global _SOURCE_HASH
    if _SOURCE_HASH is None:
        h = hashlib.sha256()
        root = pathlib.Path(particles.__file__).parent
        for path in sorted(root.rglob("*.py")):
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())
        _SOURCE_HASH = h.hexdigest()
    return _SOURCE_HASH


def cache_dir():
    """The folder of cached simulations (created; see the module docstring)."""
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    bases = [pathlib.Path(os.environ["RAYTRACE_CACHE_DIR"])] if os.environ.get("RAYTRACE_CACHE_DIR") \
        else [pathlib.Path.home() / ".cache" / "raytrace"]
    bases.append(pathlib.Path(tempfile.gettempdir()) / f"raytrace-cache-{user}")
    for base in bases:
        folder = base / "simulations"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(folder, os.W_OK | os.X_OK):
            return folder
    return None


def cache_key(obj, steps):
    """Hex key of a cloth simulation: its parameters (``obj`` with the step in ``dt``),
    the step count and the particles library's source."""
    text = f"{plugin.simulation_key(obj)}\n{steps}\n{_particles_source_hash()}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def simulate_positions(obj, steps, where):
    """Positions ``(steps + 1, n, 3)`` after 0 .. steps steps of ``obj["dt"]``."""
    try:
        net = plugin.cloth_network(obj)
        _, states = particles.simulate(net, obj.get("integrator", plugin.DEFAULT_INTEGRATOR),
                                       obj["dt"], steps, every=1)
    except particles.UnstableSimulationError as exc:
        raise SceneError(f"{where}.dt", exc.message) from None
    except particles.ParticlesError as exc:
        raise SceneError(where, str(exc)) from None
    return np.ascontiguousarray(states[:, :3 * net.n].reshape(len(states), net.n, 3))


def positions(obj, steps, where, folder=None, notice=None):
    """The cloth's positions over ``steps`` steps, from the disk cache or simulated (and
    then cached; ``notice(where, steps)`` is called first). ``obj`` carries the step in
    ``dt``. -> ((steps + 1, n, 3), came from the cache?)"""
    folder = cache_dir() if folder is None else pathlib.Path(folder)
    path = None if folder is None else folder / f"cloth-{cache_key(obj, steps)}.npy"
    if path is not None and path.is_file():
        try:
            q = np.load(path, allow_pickle=False)
            if q.ndim == 3 and q.shape[0] == steps + 1 and q.shape[2] == 3 and np.isfinite(q).all():
                return q, True
        except (OSError, ValueError):
            pass                                   # unreadable: simulate again and replace it
    if notice is not None:
        notice(where, steps)
    q = simulate_positions(obj, steps, where)
    if path is not None:
        buf = io.BytesIO()
        np.save(buf, q, allow_pickle=False)
        try:
            write_bytes_atomic(path, buf.getvalue())
        except OSError:
            pass                                   # a cache that cannot be written is no error
    return q, False
